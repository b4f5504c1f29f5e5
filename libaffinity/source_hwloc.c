// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hwloc topology (live, XML v1/v2, railbind snapshot) -> node model. The
 * Railbind* info attributes are read here whatever their origin: a snapshot
 * carries them, the live discovery adds them before this runs.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"
#include "acs_table.h"
#include "gpu_ident.h"
#include "model.h"
#include "optics_info.h"

static const char *info(hwloc_obj_t o, const char *name)
{
	return hwloc_obj_get_info_by_name(o, name);
}

static int info_int(hwloc_obj_t o, const char *name, int dflt)
{
	const char *s = info(o, name);
	char *end;
	long v;

	if (!s || !*s)
		return dflt;
	v = strtol(s, &end, 0);
	if (*end || v < INT_MIN || v > INT_MAX)
		return dflt;
	return (int)v;
}

/* A byte count (RailbindBAR1), -1 when absent or not a number. */
static long long info_ll(hwloc_obj_t o, const char *name)
{
	const char *s = info(o, name);
	char *end;
	long long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtoll(s, &end, 0);
	return *end || errno || v < 0 ? -1 : v;
}

static double info_double(hwloc_obj_t o, const char *name)
{
	const char *s = info(o, name);
	char *end;
	double v;

	if (!s || !*s)
		return 0;
	v = strtod(s, &end);
	return *end || v < 0 ? 0 : v;
}

static int dup_info(char **dst, hwloc_obj_t o, const char *name)
{
	const char *s = info(o, name);

	if (!s)
		return 0;
	*dst = strdup(s);
	return *dst ? 0 : -ENOMEM;
}

static int count_cpu_nodes(const struct aff_topo *t)
{
	size_t i;
	int k = 0;

	for (i = 0; i < t->nnuma; i++)
		if (!hwloc_bitmap_iszero(t->numa[i].cpuset))
			k++;
	return k;
}

/* The locality of an I/O object; unknown collapses to the whole machine. */
static int io_locality(struct aff_topo *t, hwloc_obj_t o, int numa_raw)
{
	hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t->hw, o);
	hwloc_obj_t root = hwloc_get_root_obj(t->hw);
	bool multi = count_cpu_nodes(t) > 1;
	int i;

	if (!anc || (multi && numa_raw == -1))
		anc = root;
	i = aff_topo_add_loc(t, anc->cpuset, anc->nodeset, anc->depth, anc);
	if (i >= 0)
		t->loc[i].known = !(multi && anc == root) &&
				  !hwloc_bitmap_iszero(anc->nodeset);
	return i;
}

static const char *const port_states[] = {
	"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
};

/* hwloc's NodeGUID "0002:c903:0031:7e90" as a number; 0 when absent. */
static unsigned long long guid_of(const char *s)
{
	unsigned long long v = 0;
	int digits = 0;

	for (; s && *s; s++) {
		if (*s == ':')
			continue;
		if (!isxdigit((unsigned char)*s) || ++digits > 16)
			return 0;
		v = v << 4 | (unsigned long long)(isdigit((unsigned char)*s) ?
			*s - '0' : (tolower((unsigned char)*s) - 'a' + 10));
	}
	return v;
}

/*
 * The subnet prefix of a GID hwloc reports ("fe80:0000:0000:0000:248a:..."):
 * its first four groups, 0 for anything else.
 */
static unsigned long long gid_prefix(const char *s)
{
	char head[20];

	if (!s || strlen(s) != 39 || s[19] != ':')
		return 0;
	memcpy(head, s, 19);
	head[19] = '\0';
	return guid_of(head);
}

/* N of an info "PortNState" or "RailbindPortNState", else 0. */
static int state_port(const char *name)
{
	const char *s = name;
	char *end;
	long n;

	if (!strncmp(s, "Railbind", 8))
		s += 8;
	if (strncmp(s, "Port", 4) || !isdigit((unsigned char)s[4]))
		return 0;
	n = strtol(s + 4, &end, 10);
	return strcmp(end, "State") || n < 1 || n > 255 ? 0 : (int)n;
}

static int add_port(struct aff_topo *t, int dev, hwloc_obj_t os, const char *name, int port)
{
	char key[64], why[120];
	int r, state;

	r = aff_topo_add_rail(t, dev, name, port, true);
	if (r < 0)
		return r;
	t->rail[r].guid = guid_of(info(os, "NodeGUID"));
	snprintf(key, sizeof(key), "RailbindPort%dState", port);
	if (info(os, key)) {
		if (dup_info(&t->rail[r].port_state, os, key) < 0)
			return -ENOMEM;
	} else {
		snprintf(key, sizeof(key), "Port%dState", port);
		state = info_int(os, key, -1);
		if (state >= 0 && state < (int)(sizeof(port_states) /
						sizeof(port_states[0])) &&
		    !(t->rail[r].port_state = strdup(port_states[state])))
			return -ENOMEM;
	}
	snprintf(key, sizeof(key), "RailbindPort%dRate", port);
	t->rail[r].rate = info_double(os, key);
	snprintf(key, sizeof(key), "Port%dGID0", port);
	t->rail[r].subnet = gid_prefix(info(os, key));
	state = aff_fabric_port_load(os, (unsigned)port, &t->rail[r].fab, why, sizeof(why));
	if (state == -EINVAL)
		snprintf(t->bad_info, sizeof(t->bad_info), "%s on %s", why, name);
	return state < 0 ? state : r;
}

/*
 * One rail per port hwloc (PortNState) or discovery (RailbindPortNState)
 * reports, each with its own state and rate: NCCL uses the ports of a
 * multi-port device one by one. A device reporting none is one port 1.
 */
static int add_openfabrics(struct aff_topo *t, int dev, hwloc_obj_t os, const char *name)
{
	unsigned char seen[256] = { 0 };
	unsigned i;
	int port, any = 0, r;

	for (i = 0; i < os->infos_count; i++)
		if ((port = state_port(os->infos[i].name)))
			seen[port] = 1;
	for (port = 1; port < 256; port++) {
		if (!seen[port])
			continue;
		any = 1;
		r = add_port(t, dev, os, name, port);
		if (r < 0)
			return r;
	}
	return any ? 0 : add_port(t, dev, os, name, 1);
}

/* A compute OS device: not a bare DRM card, which any display has. */
static bool compute_osdev(hwloc_obj_t os)
{
	if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC)
		return true;
	return os->attr->osdev.type == HWLOC_OBJ_OSDEV_GPU && os->name &&
	       (!strncmp(os->name, "nvml", 4) || !strncmp(os->name, "rsmi", 4));
}

static int add_pcidev(struct aff_topo *t, hwloc_obj_t o, int parent)
{
	struct hwloc_pcidev_attr_s *pa = &o->attr->pcidev;
	hwloc_obj_t os;
	struct aff_dev *d;
	int i, net = -1;
	bool rdma = false;

	i = aff_topo_add_dev(t, AFF_DEV_ENDPOINT, parent);
	if (i < 0)
		return i;
	d = &t->dev[i];
	d->domain = pa->domain;
	d->bus = pa->bus;
	d->devno = pa->dev;
	d->func = pa->func;
	snprintf(d->pci, sizeof(d->pci), "%04x:%02x:%02x.%x", pa->domain,
		 pa->bus, pa->dev, pa->func);
	d->vendor = pa->vendor_id;
	d->device = pa->device_id;
	d->subvendor = pa->subvendor_id;
	d->subdevice = pa->subdevice_id;
	d->class_id = pa->class_id;
	for (os = o->io_first_child; os; os = os->next_sibling) {
		if (os->type != HWLOC_OBJ_OS_DEVICE)
			continue;
		if (compute_osdev(os))
			t->dev[i].has_gpu_osdev = true;
		if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && net < 0 &&
		    os->name) {
			net = 0;
			t->dev[i].has_net = true;
			if (!(t->dev[i].netdev = strdup(os->name)))
				return -ENOMEM;
		}
		if (os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS ||
		    (os->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK &&
		     aff_is_verbs_name(info(os, AFF_INFO_RDMA_DEVICE)))) {
			int rc = add_openfabrics(t, i, os, os->attr->osdev.type ==
						 HWLOC_OBJ_OSDEV_OPENFABRICS ? os->name :
						 info(os, AFF_INFO_RDMA_DEVICE));

			if (rc < 0)
				return rc;
			rdma = true;
		}
	}
	/*
	 * A network device with no verbs device: a candidate Ethernet rail
	 * (kept only when the config says ethernet-rails or names it). One with
	 * no driver bound yet has no interface, but it is where it is on PCIe:
	 * the audit judges the hardware layout, so it stays a candidate too.
	 */
	if (!rdma && (pa->class_id >> 8) == 0x02 &&
	    aff_topo_add_rail(t, i, t->dev[i].netdev, 0, false) < 0)
		return -ENOMEM;
	return i;
}

/* RailbindUnreadable="acs,link": what discovery could not read there. */
static unsigned unreadable_of(hwloc_obj_t o)
{
	static const struct {
		const char *word;
		unsigned bit;
	} words[] = {
		{ "acs", AFF_UNREADABLE_ACS },
		{ "link", AFF_UNREADABLE_LINK },
		{ "numa", AFF_UNREADABLE_NUMA },
		{ "iommu", AFF_UNREADABLE_IOMMU },
		{ "vpd", AFF_UNREADABLE_VPD },
	};
	const char *s = info(o, "RailbindUnreadable");
	unsigned bits = 0;
	size_t k, n;

	while (s && *s) {
		n = strcspn(s, ",");
		for (k = 0; k < sizeof(words) / sizeof(words[0]); k++)
			if (strlen(words[k].word) == n && !strncmp(s, words[k].word, n))
				bits |= words[k].bit;
		s += n;
		if (*s)
			s++;
	}
	return bits;
}

/*
 * A Railbind* value that is present but malformed is bad input, refused with
 * its name and object, never read as "unknown": the audit would otherwise
 * pass a snapshot someone edited wrongly.
 */
static bool bad_value(hwloc_obj_t o, const char *name, double lo, double hi, bool hex,
		      bool integer)
{
	const char *s = info(o, name);
	char *end;
	double v;

	if (!s)
		return false;
	if (hex && strncmp(s, "0x", 2))
		return true;
	errno = 0;
	v = integer || hex ? (double)strtol(s, &end, 0) : strtod(s, &end);
	return !*s || *end || errno || v < lo || v > hi;
}

static int check_infos(struct aff_topo *t, const struct aff_dev *d, hwloc_obj_t o)
{
	static const struct {
		const char *name, *want;
		double lo, hi;
		bool hex, integer;
	} rules[] = {
		{ "RailbindLinkSpeed", "GT/s (e.g. 16.0)", 0, 256, false, false },
		{ "RailbindLinkSpeedCap", "GT/s (e.g. 16.0)", 0, 256, false, false },
		{ "RailbindLinkWidth", "lanes (0-64)", 0, 64, false, true },
		{ "RailbindLinkWidthCap", "lanes (0-64)", 0, 64, false, true },
		{ "RailbindACSCtl", "a 16-bit hex register (e.g. 0x001d)", 0, 0xffff, true, true },
		{ "RailbindNumaNode", "a NUMA node number or -1", -1, INT_MAX, false, true },
		/* Device Control's encodings: 128 << 0..5 bytes (the two reserved ones too). */
		{ "RailbindMPS", "bytes (128-16384)", 128, 16384, false, true },
		{ "RailbindMRRS", "bytes (128-16384)", 128, 16384, false, true },
		{ "RailbindRelaxedOrdering", "0 or 1", 0, 1, false, true },
		{ "RailbindATS", "0 or 1", 0, 1, false, true },
		{ "RailbindBAR1", "a size in bytes", 1, 1125899906842624.0, false, true },
	};
	const char *iommu = info(o, "RailbindIOMMUGroupType");
	const char *ptype = info(o, "RailbindPortType");
	enum aff_port_type pt;
	struct aff_optics xcvr;
	const char *why;
	char buf[160];
	size_t k;

	for (k = 0; k < sizeof(rules) / sizeof(rules[0]); k++)
		if (bad_value(o, rules[k].name, rules[k].lo, rules[k].hi, rules[k].hex,
			      rules[k].integer)) {
			snprintf(t->bad_info, sizeof(t->bad_info), "%s=\"%.24s\" on %s, expected %s",
				 rules[k].name, info(o, rules[k].name), d->pci, rules[k].want);
			return -EINVAL;
		}
	if (iommu && (!*iommu || strpbrk(iommu, " \t\n"))) {
		snprintf(t->bad_info, sizeof(t->bad_info),
			 "RailbindIOMMUGroupType=\"%.24s\" on %s, expected one word (identity, DMA, ...)",
			 iommu, d->pci);
		return -EINVAL;
	}
	if (ptype && aff_port_type_from_name(ptype, &pt) < 0) {
		snprintf(t->bad_info, sizeof(t->bad_info),
			 "RailbindPortType=\"%.24s\" on %s, expected root, upstream, downstream, endpoint, legacy, rciep or bridge",
			 ptype, d->pci);
		return -EINVAL;
	}
	/* The transceiver's RailbindXcvr* (optics_info.c). */
	if (aff_optics_info_read(o, &xcvr, &why, buf, sizeof(buf)) == -EINVAL) {
		snprintf(t->bad_info, sizeof(t->bad_info), "%s on %s", why, d->pci);
		return -EINVAL;
	}
	return 0;
}

static int fill_pci_infos(struct aff_topo *t, int i, hwloc_obj_t o)
{
	struct aff_dev *d = &t->dev[i];

	if (check_infos(t, d, o) < 0)
		return -EINVAL;
	int numa_raw = info_int(o, "RailbindNumaNode", INT_MIN);

	d->numa_raw = numa_raw;
	d->link_speed = info_double(o, "RailbindLinkSpeed");
	d->link_speed_cap = info_double(o, "RailbindLinkSpeedCap");
	d->link_width = info_int(o, "RailbindLinkWidth", 0);
	d->link_width_cap = info_int(o, "RailbindLinkWidthCap", 0);
	d->acs_ctl = info_int(o, "RailbindACSCtl", -1);
	d->ats = info_int(o, "RailbindATS", -1);
	d->mps = info_int(o, "RailbindMPS", -1);
	d->mrrs = info_int(o, "RailbindMRRS", -1);
	d->relaxed = info_int(o, "RailbindRelaxedOrdering", -1);
	d->bar1 = info_ll(o, "RailbindBAR1");
	if (aff_port_type_from_name(info(o, "RailbindPortType"), &d->port_type) < 0)
		d->port_type = AFF_PORT_UNKNOWN;
	d->unreadable = unreadable_of(o);
	if (dup_info(&d->iommu_type, o, "RailbindIOMMUGroupType") < 0 ||
	    dup_info(&d->vpd_uuid, o, "RailbindVPDUUID") < 0)
		return -ENOMEM;
	d->loc = io_locality(t, o, numa_raw);
	return d->loc < 0 ? d->loc : 0;
}

static int walk_io(struct aff_topo *t, hwloc_obj_t o, int parent)
{
	hwloc_obj_t c;
	int i = parent, rc;

	if (o->type == HWLOC_OBJ_BRIDGE) {
		bool host = o->attr->bridge.upstream_type ==
			    HWLOC_OBJ_BRIDGE_HOST;

		i = aff_topo_add_dev(t, host ? AFF_DEV_HOSTBRIDGE :
					       AFF_DEV_BRIDGE, parent);
		if (i < 0)
			return i;
		if (!host) {
			struct hwloc_pcidev_attr_s *pa =
				&o->attr->bridge.upstream.pci;
			struct aff_dev *d = &t->dev[i];

			d->domain = pa->domain;
			d->bus = pa->bus;
			d->devno = pa->dev;
			d->func = pa->func;
			snprintf(d->pci, sizeof(d->pci), "%04x:%02x:%02x.%x",
				 pa->domain, pa->bus, pa->dev, pa->func);
			d->vendor = pa->vendor_id;
			d->device = pa->device_id;
			d->subvendor = pa->subvendor_id;
			d->subdevice = pa->subdevice_id;
			d->class_id = pa->class_id;
		}
		rc = fill_pci_infos(t, i, o);
		if (rc < 0)
			return rc;
	} else if (o->type == HWLOC_OBJ_PCI_DEVICE) {
		i = add_pcidev(t, o, parent);
		if (i < 0)
			return i;
		rc = fill_pci_infos(t, i, o);
		if (!rc)
			rc = aff_gident_load(t, i, o);
		if (rc < 0)
			return rc;
	} else {
		return 0;
	}
	for (c = o->io_first_child; c; c = c->next_sibling) {
		rc = walk_io(t, c, i);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Every non-I/O object, depth first, with its I/O children. */
static int walk_normal(struct aff_topo *t, hwloc_obj_t o)
{
	hwloc_obj_t c;
	int rc;

	for (c = o->io_first_child; c; c = c->next_sibling) {
		rc = walk_io(t, c, -1);
		if (rc < 0)
			return rc;
	}
	for (c = o->first_child; c; c = c->next_sibling) {
		rc = walk_normal(t, c);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int cache_domain(hwloc_topology_t hw, hwloc_obj_t core)
{
	hwloc_obj_t c;

	c = hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_L3CACHE, core);
	if (!c)
		c = hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_L2CACHE, core);
	return c ? (int)c->logical_index : -1;
}

/* The normal object a NUMA node hangs from (past any memory-side cache). */
static hwloc_obj_t memory_parent(hwloc_obj_t node)
{
	hwloc_obj_t p = node->parent;

	while (p && p->type == HWLOC_OBJ_MEMCACHE)
		p = p->parent;
	return p;
}

/*
 * hwloc gives a NUMA node its parent's cpuset, CPU-less or not. A node has
 * CPUs when it is the nearest memory of some PU: the first ancestor of the
 * PU that memory hangs from is its parent. CXL memory and Grace's GPU
 * memory hang higher up (or say GPUMemory) and are nobody's nearest.
 */
static bool node_has_cpus(hwloc_topology_t hw, hwloc_obj_t node)
{
	hwloc_obj_t parent = memory_parent(node), pu = NULL, a;
	const char *sub = node->subtype;

	if (sub && !strcmp(sub, "GPUMemory"))
		return false;
	while ((pu = hwloc_get_next_obj_inside_cpuset_by_type(hw, node->cpuset,
							      HWLOC_OBJ_PU, pu)))
		for (a = pu->parent; a; a = a->parent)
			if (a->memory_arity > 0) {
				if (a == parent)
					return true;
				break;
			}
	return false;
}

static int load_cpus(struct aff_topo *t)
{
	hwloc_topology_t hw = t->hw;
	hwloc_obj_type_t unit = HWLOC_OBJ_CORE;
	hwloc_bitmap_t none = hwloc_bitmap_alloc();
	hwloc_obj_t o = NULL;
	int rc = 0;

	if (!none)
		return -ENOMEM;
	while ((o = hwloc_get_next_obj_by_type(hw, HWLOC_OBJ_NUMANODE, o))) {
		rc = aff_topo_add_numa(t, o->os_index, node_has_cpus(hw, o) ?
				       o->cpuset : none);
		if (rc < 0)
			break;
	}
	hwloc_bitmap_free(none);
	if (rc < 0)
		return rc;
	/* Some exports have PUs but no cores: each PU is then a core. */
	if (hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_CORE) <= 0)
		unit = HWLOC_OBJ_PU;
	while ((o = hwloc_get_next_obj_by_type(hw, unit, o))) {
		if (!o->cpuset || hwloc_bitmap_iszero(o->cpuset))
			continue;
		rc = aff_topo_add_core(t, o->cpuset, cache_domain(hw, o));
		if (rc < 0)
			return rc;
	}
	/* A machine without NUMA objects: one node holding every CPU. */
	if (!t->nnuma) {
		o = hwloc_get_root_obj(hw);
		rc = aff_topo_add_numa(t, 0, o->cpuset);
		if (rc < 0)
			return rc;
	}
	hwloc_bitmap_copy(t->all_cpus, hwloc_get_root_obj(hw)->cpuset);
	o = hwloc_get_obj_by_type(hw, HWLOC_OBJ_PACKAGE, 0);
	return aff_topo_set_cpu(t, info(hwloc_get_root_obj(hw), "Architecture"),
				o ? info(o, "CPUVendor") : NULL,
				o ? info_int(o, "CPUFamilyNumber", -1) : -1,
				o ? info_int(o, "CPUModelNumber", -1) : -1);
}

/* "gpu=A nic=B route=R maps=N bytes=N" (the module's peer record keys). */
static void parse_peer(const char *s, struct aff_peer *p)
{
	char key[16], val[32];
	int n;

	memset(p, 0, sizeof(*p));
	while (sscanf(s, " %15[a-z_]=%31s%n", key, val, &n) == 2) {
		s += n;
		if (!strcmp(key, "gpu") && strcmp(val, "-"))
			snprintf(p->gpu, sizeof(p->gpu), "%.15s", val);
		else if (!strcmp(key, "nic"))
			snprintf(p->nic, sizeof(p->nic), "%.15s", val);
		else if (!strcmp(key, "route"))
			snprintf(p->route, sizeof(p->route), "%.15s", val);
		else if (!strcmp(key, "maps"))
			p->maps = strtol(val, NULL, 10);
		else if (!strcmp(key, "bytes"))
			p->bytes = strtoll(val, NULL, 10);
	}
}

static int load_peers(struct aff_topo *t, hwloc_obj_t root)
{
	unsigned i, n = 0;

	for (i = 0; i < root->infos_count; i++)
		if (!strcmp(root->infos[i].name, "RailbindPeer"))
			n++;
	if (!n)
		return 0;
	t->peer = calloc(n, sizeof(*t->peer));
	if (!t->peer)
		return -ENOMEM;
	for (i = 0; i < root->infos_count; i++)
		if (!strcmp(root->infos[i].name, "RailbindPeer") && root->infos[i].value)
			parse_peer(root->infos[i].value, &t->peer[t->npeer++]);
	return 0;
}

int aff_load_hwloc(struct aff_topo *t, hwloc_topology_t hw, char *err,
		   size_t errlen)
{
	hwloc_obj_t root = hwloc_get_root_obj(hw);
	const char *host, *pm;
	int rc, kmaj, kmin, kpat;

	t->hw = hw;
	rc = load_cpus(t);
	if (!rc)
		rc = walk_normal(t, root);
	if (rc < 0 && t->bad_info[0])
		return aff_seterr(err, errlen, -rc, "%s: %s", t->source, t->bad_info);
	if (rc < 0)
		return aff_seterr(err, errlen, -rc, "%s: %s", t->source,
				  strerror(-rc));
	pm = info(root, "RailbindPeerMemory");
	if (pm && strcmp(pm, "nvidia_peermem") && strcmp(pm, "dmabuf") && strcmp(pm, "none"))
		return aff_seterr(err, errlen, EINVAL,
				  "%s: RailbindPeerMemory=\"%.24s\", expected nvidia_peermem, dmabuf or none",
				  t->source, pm);
	pm = info(root, "RailbindGPUDriver");
	if (pm && strcmp(pm, "open") && strcmp(pm, "proprietary") && strcmp(pm, "absent"))
		return aff_seterr(err, errlen, EINVAL,
				  "%s: RailbindGPUDriver=\"%.24s\", expected open, proprietary or absent",
				  t->source, pm);
	pm = info(root, "RailbindKernel");
	if (pm && aff_kernel_version(pm, &kmaj, &kmin, &kpat) < 0)
		return aff_seterr(err, errlen, EINVAL,
				  "%s: RailbindKernel=\"%.24s\", expected a kernel release (6.12.9...)",
				  t->source, pm);
	host = info(root, "RailbindHostname");
	if (!host)
		host = info(root, "HostName");
	if (host && !(t->host = strdup(host)))
		return -ENOMEM;
	if (dup_info(&t->peer_memory, root, "RailbindPeerMemory") < 0 ||
	    dup_info(&t->kmod, root, "RailbindKmod") < 0 ||
	    dup_info(&t->kernel, root, "RailbindKernel") < 0 ||
	    dup_info(&t->gpu_driver, root, "RailbindGPUDriver") < 0 || load_peers(t, root) < 0 ||
	    aff_gident_load_machine(t, root) < 0)
		return -ENOMEM;
	/* A railbind snapshot, the live node annotated, or an rbgen fixture. */
	t->extras = info(root, "RailbindSnapshotVersion") || t->peer_memory || t->kmod;
	return aff_topo_finish(t, err, errlen);
}
