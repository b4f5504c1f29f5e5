// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * NCCL topology XML (<system version="1">, as NCCL_TOPO_FILE and the cloud
 * vendors write it) -> node model. Each <cpu> is a NUMA node and stands for
 * its root complex; each <pci> with children is a PCIe switch, already
 * collapsed; <gpu> and <nic>/<net> say what an endpoint is. The file knows
 * no cores, threads or caches: each CPU of a <cpu affinity> mask is a core.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "xml_lazy.h"

struct nccl_load {
	const struct aff_xml *x;
	struct aff_topo *t;
	const char *path;
	char *err;
	size_t errlen;
};

static bool is(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE &&
	       !strcmp((const char *)n->name, name);
}

/* Attribute value or NULL (also when out of memory); the caller frees it. */
static char *attr(const struct nccl_load *l, const xmlNode *n,
		  const char *name)
{
	xmlChar *v = l->x->get_prop(n, (const xmlChar *)name);
	char *copy = v ? strdup((const char *)v) : NULL;

	l->x->free(v);
	return copy;
}

static int bad(struct nccl_load *l, const xmlNode *n, const char *what)
{
	return aff_seterr(l->err, l->errlen, EINVAL, "%s:%ld: %s", l->path,
			  l->x->line_no(n), what);
}

static int parse_hexattr(const struct nccl_load *l, const xmlNode *n,
			 const char *name, int *out)
{
	char *s = attr(l, n, name), *end;
	long v;

	*out = -1;
	if (!s)
		return 0;
	v = strtol(s, &end, 16);
	if (*s && !*end && v >= 0 && v <= 0xffffff)
		*out = (int)v;
	free(s);
	return *out < 0 ? -EINVAL : 0;
}

/*
 * The verbs name and port of an NCCL net, which NCCL_IB_HCA is matched
 * against (src/transport/net_ib/init.cc): NCCL names a ConnectX-8 Data
 * Direct path "<dev>_dma", and writes a port as the verbs port plus its
 * "real port", the count of the devices before it in its (PCI) order that
 * share its PCI device, functions and (NCCL_IB_MERGE_VFS=1, the default)
 * virtual functions merged: the RDMA nets read before it whose PCI address
 * shares its domain and bus (NCCL's PCI path with the device number and
 * function zeroed; ncclIbGetPciPath) (whether the file writes them in
 * one <pci> or one each, as railbind nccl-topo does for a hwloc source). The
 * second function of a dual-port card (port="2") is verbs port 1, a single
 * function's second port (port="3") is verbs port 2.
 * A file whose ports were never so raised (older NCCL, hand-written) keeps
 * what it says where taking the index off would leave no port.
 */
static int set_hca(struct aff_rail *r, const char *name, int before)
{
	size_t len = strlen(name);

	if (len > 4 && !strcmp(name + len - 4, "_dma") &&
	    !(r->hca = strndup(name, len - 4)))
		return -ENOMEM;
	if (r->port > before)
		r->hca_port = r->port - before;
	return 0;
}

/*
 * A verbs device has a real node GUID (an EUI-64, vendor bits set); NCCL's
 * socket transport and the OFI plugin write the device index instead.
 * GPUDirect support (gdr="1") is RDMA whatever the GUID: AWS's EFA is
 * numbered so. A hand-trimmed file may carry neither: a net named as an
 * RDMA driver names its devices (mlx5_bond_0) is one, on whatever function.
 */
static bool net_is_rdma(unsigned long long guid, const char *gdr, const char *name)
{
	return guid > 0xffffffffull || (gdr && atoi(gdr) == 1) ||
	       aff_is_verbs_name(name);
}

/* The RDMA rails before @r on @r's PCI device as NCCL merges them ("dddd:bb:"). */
static int rails_before(const struct aff_topo *t, int r)
{
	const char *pci = t->dev[t->rail[r].dev].pci;
	int k, n = 0;

	for (k = 0; k < r; k++)
		if (t->rail[k].rdma && !strncmp(t->dev[t->rail[k].dev].pci, pci, 8))
			n++;
	return n;
}

static int add_nets(struct nccl_load *l, const xmlNode *nic, int dev)
{
	const xmlNode *c;

	for (c = nic->children; c; c = c->next) {
		char *name, *port, *guid, *speed, *gdr;
		unsigned long long g;
		bool rdma;
		int r, portno;

		if (!is(c, "net"))
			continue;
		name = attr(l, c, "name");
		if (!name || !*name) {
			free(name);
			return bad(l, c, "<net> without a name attribute");
		}
		port = attr(l, c, "port");
		portno = port ? atoi(port) : 0;
		guid = attr(l, c, "guid");
		g = guid ? strtoull(guid, NULL, 0) : 0;
		gdr = attr(l, c, "gdr");
		speed = attr(l, c, "speed");
		rdma = net_is_rdma(g, gdr, name);
		r = aff_topo_add_rail(l->t, dev, name, portno, rdma);
		if (r >= 0 && rdma && set_hca(&l->t->rail[r], name, rails_before(l->t, r)) < 0)
			r = -ENOMEM;
		free(name);
		free(port);
		free(guid);
		if (r >= 0) {
			l->t->rail[r].guid = g;
			l->t->rail[r].gdr = gdr ? atoi(gdr) != 0 : -1;
			/* Mb/s; NCCL reads 0 or -1 as "not said". */
			if (speed && strtod(speed, NULL) > 0)
				l->t->rail[r].rate = strtod(speed, NULL) / 1000;
		}
		free(speed);
		free(gdr);
		if (r < 0)
			return r;
		l->t->rail[r].listed = true;
	}
	return 0;
}

static int walk_pci(struct nccl_load *l, const xmlNode *n, int parent);

static int walk_children(struct nccl_load *l, const xmlNode *n, int dev)
{
	const xmlNode *c;
	int rc;

	for (c = n->children; c; c = c->next) {
		if (is(c, "pci")) {
			rc = walk_pci(l, c, dev);
		} else if (is(c, "nic") && l->t->dev[dev].type != AFF_DEV_ENDPOINT) {
			/* A NIC with no PCI address (a VM's synthetic one). */
			int e = aff_topo_add_dev(l->t, AFF_DEV_ENDPOINT, dev);

			if (e < 0)
				return e;
			l->t->dev[e].class_id = 0x0200;
			l->t->dev[e].has_net = true;
			rc = add_nets(l, c, e);
		} else if (is(c, "nic")) {
			l->t->dev[dev].has_net = true;
			rc = add_nets(l, c, dev);
		} else if (is(c, "gpu")) {
			char *gdr = attr(l, c, "gdr");

			l->t->dev[dev].has_gpu_osdev = true;
			if (gdr)
				l->t->dev[dev].gdr = atoi(gdr) != 0;
			free(gdr);
			rc = 0;
		} else {
			rc = 0;
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

static bool has_child_pci(const xmlNode *n)
{
	const xmlNode *c;

	for (c = n->children; c; c = c->next)
		if (is(c, "pci"))
			return true;
	return false;
}

static int walk_pci(struct nccl_load *l, const xmlNode *n, int parent)
{
	struct aff_dev *d;
	char *busid, *s;
	int i, cls, rc;
	bool bridge;

	if (parse_hexattr(l, n, "class", &cls) < 0)
		return bad(l, n, "<pci class> is not a hex PCI class such as 0x030200");
	bridge = has_child_pci(n) || (cls >= 0 && cls >> 8 == 0x0604);
	i = aff_topo_add_dev(l->t, bridge ? AFF_DEV_BRIDGE : AFF_DEV_ENDPOINT,
			     parent);
	if (i < 0)
		return i;
	d = &l->t->dev[i];
	d->class_id = cls >= 0 ? cls >> 8 : -1;
	busid = attr(l, n, "busid");
	if (!busid || aff_dev_set_pci(d, busid) < 0) {
		free(busid);
		return bad(l, n, "<pci busid> is not a PCI address such as 0000:07:00.0");
	}
	free(busid);
	if (parse_hexattr(l, n, "vendor", &d->vendor) < 0 ||
	    parse_hexattr(l, n, "device", &d->device) < 0 ||
	    parse_hexattr(l, n, "subsystem_vendor", &d->subvendor) < 0 ||
	    parse_hexattr(l, n, "subsystem_device", &d->subdevice) < 0)
		return bad(l, n, "<pci vendor/device/subsystem_vendor/subsystem_device> is not a hex id such as 0x10de");
	s = attr(l, n, "link_speed");
	if (s)
		d->link_speed = strtod(s, NULL);
	free(s);
	s = attr(l, n, "link_width");
	if (s)
		d->link_width = atoi(s);
	free(s);
	rc = walk_children(l, n, i);
	/* A NIC NCCL was given without its <net> (AWS's EFA files): a rail
	 * known by its PCI address only. */
	d = &l->t->dev[i];
	if (!rc && !bridge && d->class_id >> 8 == 0x02 && !d->has_net) {
		rc = aff_topo_add_rail(l->t, i, NULL, 0, true);
		if (rc >= 0) {
			l->t->rail[rc].listed = true;
			rc = 0;
		}
	}
	return rc;
}

/*
 * The file has no cores. When every node's CPUs are a set S of the lower
 * half plus S shifted by half the CPUs, this is Linux's x86 numbering of
 * two hardware threads per core (cpu i and i + n/2 are siblings): keep them
 * together. Otherwise each CPU is taken for a core.
 */
static bool smt2_layout(const struct aff_topo *t, int half)
{
	size_t k;
	int i;

	if (half <= 0 || hwloc_bitmap_weight(t->all_cpus) != 2 * half ||
	    hwloc_bitmap_last(t->all_cpus) != 2 * half - 1)
		return false;
	for (k = 0; k < t->nnuma; k++) {
		hwloc_const_bitmap_t set = t->numa[k].cpuset;

		for (i = hwloc_bitmap_first(set); i >= 0;
		     i = hwloc_bitmap_next(set, i))
			if (!hwloc_bitmap_isset(set, (unsigned)(i < half ?
							       i + half : i - half)))
				return false;
	}
	return true;
}

static int add_cores(struct aff_topo *t)
{
	hwloc_bitmap_t pu = hwloc_bitmap_alloc();
	int half = hwloc_bitmap_weight(t->all_cpus) / 2, i, rc = 0;
	bool smt = smt2_layout(t, half);

	if (!pu)
		return -ENOMEM;
	hwloc_bitmap_foreach_begin(i, t->all_cpus) {
		if (smt && i >= half)
			break;
		hwloc_bitmap_only(pu, (unsigned)i);
		if (smt)
			hwloc_bitmap_set(pu, (unsigned)(i + half));
		rc = aff_topo_add_core(t, pu, -1);
		if (rc < 0)
			break;
	}
	hwloc_bitmap_foreach_end();
	hwloc_bitmap_free(pu);
	return rc < 0 ? rc : 0;
}

/*
 * numaid="-1": NCCL's word for devices whose sysfs numa_node is -1. Their
 * locality is the NUMA nodes the affinity covers (all CPUs when absent);
 * the whole of a multi-node machine is an unknown locality, as in hwloc.
 * Read after the numbered <cpu>s, which define the nodes.
 */
static int unknown_numa(struct nccl_load *l, hwloc_bitmap_t cpus,
			hwloc_bitmap_t nodes, bool has_affinity, bool *known)
{
	size_t k;

	if (!has_affinity)
		hwloc_bitmap_copy(cpus, l->t->all_cpus);
	for (k = 0; k < l->t->nnuma; k++)
		if (hwloc_bitmap_intersects(l->t->numa[k].cpuset, cpus))
			hwloc_bitmap_set(nodes, l->t->numa[k].os_index);
	if (hwloc_bitmap_iszero(nodes))
		hwloc_bitmap_copy(nodes, l->t->all_nodes);
	*known = l->t->nnuma <= 1 || !hwloc_bitmap_isequal(nodes, l->t->all_nodes);
	return 0;
}

/* The CPU kind, which sets what NCCL assumes between two <cpu>s. */
static int cpu_kind(const struct nccl_load *l, const xmlNode *n)
{
	char *arch = attr(l, n, "arch"), *vendor = attr(l, n, "vendor");
	char *family = attr(l, n, "familyid"), *model = attr(l, n, "modelid");
	int rc = aff_topo_set_cpu(l->t, arch, vendor, family ? atoi(family) : -1,
				  model ? atoi(model) : -1);

	free(arch);
	free(vendor);
	free(family);
	free(model);
	return rc;
}

static int walk_cpu(struct nccl_load *l, const xmlNode *n)
{
	hwloc_bitmap_t cpus = hwloc_bitmap_alloc(), nodes = hwloc_bitmap_alloc();
	char *numaid = attr(l, n, "numaid"), *aff = attr(l, n, "affinity"), *end;
	long id = numaid ? strtol(numaid, &end, 10) : -2;
	int rc = 0, hb, loc;
	bool known = true;

	if (!cpus || !nodes) {
		rc = -ENOMEM;
		goto out;
	}
	if (!numaid || *end || id < -1 || id > 65535) {
		rc = bad(l, n, "<cpu numaid> is not a NUMA node number");
		goto out;
	}
	if (aff && aff_parse_cpumask(aff, cpus) < 0) {
		rc = bad(l, n, "<cpu affinity> is not a CPU mask such as ffffffff,0000ffff");
		goto out;
	}
	if (id < 0) {
		rc = unknown_numa(l, cpus, nodes, aff, &known);
	} else {
		hwloc_bitmap_set(nodes, (unsigned)id);
		rc = aff_topo_add_numa(l->t, (unsigned)id, cpus);
	}
	if (rc < 0)
		goto out;
	loc = aff_topo_add_loc(l->t, cpus, nodes, 1, NULL);
	hb = aff_topo_add_dev(l->t, AFF_DEV_HOSTBRIDGE, -1);
	rc = loc < 0 ? loc : hb;
	if (rc < 0)
		goto out;
	l->t->loc[loc].known = known;
	l->t->dev[hb].loc = loc;
	rc = l->t->cpu_arch || l->t->cpu_vendor ? 0 : cpu_kind(l, n);
	if (!rc)
		rc = walk_children(l, n, hb);
out:
	free(numaid);
	free(aff);
	hwloc_bitmap_free(cpus);
	hwloc_bitmap_free(nodes);
	return rc;
}

static bool numa_unknown(const struct nccl_load *l, const xmlNode *n)
{
	char *id = attr(l, n, "numaid");
	bool minus1 = id && !strcmp(id, "-1");

	free(id);
	return minus1;
}

#define NCCL_XML_OPTIONS (XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING)

/* Takes the document (may be NULL: libxml2 refused the text) and frees it. */
static int load_doc(const struct aff_xml *x, struct aff_topo *t, xmlDoc *doc,
		    const char *path, char *err, size_t errlen)
{
	struct nccl_load l = { x, t, path, err, errlen };
	const xmlNode *root, *c;
	char *first_host = NULL;
	int rc = 0, other_hosts = 0, pass;

	if (!doc) {
		const xmlError *e = x->last_error();
		const char *msg = e && e->message ? e->message : "unreadable";
		int len = (int)strcspn(msg, "\n");

		return aff_seterr(err, errlen, EINVAL, "%s:%d: malformed XML: %.*s",
				  path, e ? e->line : 0, len, msg);
	}
	root = x->root(doc);
	if (!root || !is(root, "system")) {
		rc = aff_seterr(err, errlen, EINVAL,
				"%s: root element is not <system>", path);
		goto out;
	}
	for (pass = 0; pass < 2; pass++) {
		for (c = root->children; c && !rc; c = c->next) {
			char *hash;

			if (!is(c, "cpu") || numa_unknown(&l, c) != (pass == 1))
				continue;
			/*
			 * NCCL merges several hosts' topologies into one file (GB200
			 * and GB300 trays), telling them apart by host_hash. A plan is
			 * for one node: the first host's.
			 */
			hash = attr(&l, c, "host_hash");
			if (hash && !first_host && !(first_host = strdup(hash))) {
				free(hash);
				rc = aff_seterr(err, errlen, ENOMEM, "%s: out of memory",
						path);
				break;
			}
			if (hash && strcmp(hash, first_host)) {
				if (!other_hosts++ && !pass)
					aff_info(t->ctx, "%s: several hosts (host_hash); planning for the first, %s\n",
						 path, first_host);
				free(hash);
				continue;
			}
			free(hash);
			rc = walk_cpu(&l, c);
		}
	}
	free(first_host);
	if (!rc && !t->nnuma)
		rc = aff_seterr(err, errlen, EINVAL,
				"%s: no <cpu> element with a NUMA node number: not an NCCL topology",
				path);
	if (!rc)
		rc = add_cores(t);
out:
	x->free_doc(doc);
	if (rc < 0)
		return rc;
	return aff_topo_finish(t, err, errlen);
}

int aff_load_nccl_mem(struct aff_topo *t, const char *buf, size_t len,
		      const char *name, char *err, size_t errlen)
{
	const struct aff_xml *x = aff_xml(name, err, errlen);
	xmlDoc *doc = NULL;

	if (!x)
		return -ELIBACC;
	if (aff_xml_check_encoding(buf, len, name, err, errlen) < 0)
		return -EINVAL;
	x->reset_last_error();
	/* libxml2 takes an int length; a longer text is no topology. */
	if (len <= 64u << 20)
		doc = x->read_memory(buf, (int)len, name, NULL,
				     NCCL_XML_OPTIONS);
	return load_doc(x, t, doc, name, err, errlen);
}
