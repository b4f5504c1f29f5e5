// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The node model -> NCCL topology XML (<system version="1">), the file NCCL
 * reads from NCCL_TOPO_FILE or /var/run/nvidia-topologyd/virtualTopology.xml.
 *
 * The shape is the one NCCL writes itself (src/graph/xml.cc): one <cpu> per
 * NUMA node, holding the PCIe switches as nested <pci> (the upstream port's
 * address; root and downstream ports are not listed, as NCCL skips them) and
 * the GPUs and NICs as <pci> leaves with a <gpu> or <nic><net/></nic>.
 *
 * Every attribute NCCL requires is written (src/graph/topo.cc reads them
 * with xmlGetAttrStr/xmlGetAttrInt, which fail on a missing one): on every
 * <pci> class, busid, link_speed and link_width, which NCCL fills only from
 * sysfs or NVML (src/graph/xml.cc, ncclTopoGetXmlFromSys) and so cannot on
 * a machine whose sysfs does not describe the device; a link the model does
 * not know is written as NCCL writes one it cannot read, link_speed="" and
 * link_width="0" (8 GT/s, and 0 read as x16); on every <cpu> numaid, on
 * every <gpu> and <net> dev. The rest NCCL fills from the running node (the
 * CPU's arch and vendor from cpuid, a GPU's sm and rank from NVML and the
 * job), so only what the model knows is written: a guessed value would
 * override the truth. From an NCCL source, what the model does not hold is
 * taken from that file again (out_nccl_source.c): the GPUs' sm, rank and gdr,
 * their <nvlink> and <c2c> elements, each net's name and port as NCCL wrote
 * them. The choices, each a fact the model does or does not hold:
 *  - numaid="-1" on a <cpu> for devices of unknown locality (sysfs
 *    numa_node -1), with the whole machine's CPUs as affinity, as NCCL
 *    itself writes it; a locality spanning several nodes is also -1, its
 *    affinity narrowed to those nodes' CPUs;
 *  - every NUMA node gets a <cpu>, even one without GPU or NIC, so that the
 *    file holds all of the node's CPUs (affinity "00000000" for CPU-less
 *    memory nodes);
 *  - a switch is written only where the model has one (an upstream port by
 *    its port type or NCCL's own rule, model_switches.c; an NCCL file's nested
 *    <pci>): a source without bridges gives devices right under their
 *    <cpu>, never an invented switch;
 *  - link_speed and link_width are the link's maxima (the smaller of the
 *    device's and its port's), as NCCL writes them, not the current state;
 *  - several root complexes of one NUMA node share its <cpu>: NCCL has no
 *    NODE class, their devices are PHB to each other (DESIGN.md);
 *  - a device below a switch goes where the switch is, in its <cpu>, even
 *    when its own sysfs numa_node differs (-1): NCCL places it so too, and
 *    the format has NUMA per <cpu> only, so that difference is lost;
 *  - sm and rank (NVML's and the job's) only as an NCCL source said them;
 *    gpu dev is the index among accelerators of the same vendor in PCI
 *    order (NVML's order); gdr where the source or the peer-memory support
 *    says it;
 *  - net: name, dev (the rail's index; NCCL renumbers it after its plugin),
 *    port, speed (Mb/s), guid, gdr when known; maxconn, coll and latency
 *    are the plugin's and are left to it, but for an NCCL source's own; a port known not to be ACTIVE is
 *    left out, as NCCL's own files leave it (its IB transport skips it);
 *  - a net's port in NCCL's form (src/transport/net_ib/init.cc: props->port
 *    = portNum + realPort): the verbs port plus the number of earlier nets,
 *    in PCI order, on the same PCI device (functions and, as
 *    NCCL_IB_MERGE_VFS=1 does, virtual functions merged: the same bus), so
 *    that NCCL reading the file matches what it discovers;
 *  - the host name, cores, SMT siblings, caches and netdev names have no
 *    place in the format and are lost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libxml/tree.h>

#include "out_nccl.h"

/* One <cpu> element: a NUMA node, or a locality without one (-1). */
struct xcpu {
	int numaid;
	hwloc_const_bitmap_t cpus;
	xmlNode *node;
};

struct xout {
	const struct aff_topo *t;
	bool *keep;		/* per dev: written (endpoint, or a switch above one) */
	int *xparent;		/* per dev: nearest written switch above, -1 */
	int *order;		/* written devs in PCI order */
	size_t norder;
	struct xcpu *cpu;
	size_t ncpu;
	int *loc_cpu;		/* per locality: index in cpu[] */
	struct aff_nccl_src src;	/* an NCCL source's own facts */
};

static int setf(xmlNode *n, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int setf(xmlNode *n, const char *name, const char *fmt, ...)
{
	char buf[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return aff_xml_loaded()->new_prop(n, (const xmlChar *)name,
					  (const xmlChar *)buf) ? 0 : -ENOMEM;
}

static int sets(xmlNode *n, const char *name, const char *value)
{
	return aff_xml_loaded()->new_prop(n, (const xmlChar *)name,
					  (const xmlChar *)value) ? 0 : -ENOMEM;
}

static xmlNode *child(xmlNode *parent, const char *name)
{
	return aff_xml_loaded()->new_child(parent, NULL, (const xmlChar *)name,
					   NULL);
}

/* "ffffffff,0000ffff": sysfs cpumap, 32-bit words, most significant first. */
static char *cpumask(hwloc_const_bitmap_t set)
{
	int last = hwloc_bitmap_iszero(set) ? 0 : hwloc_bitmap_last(set);
	int words = last / 32 + 1, w;
	char *s;

	if (last < 0)		/* infinite: not a real CPU set */
		return NULL;
	s = malloc((size_t)words * 9);
	if (!s)
		return NULL;
	for (w = words - 1; w >= 0; w--) {
		unsigned long v = hwloc_bitmap_to_ith_ulong(set, (unsigned)w / 2);

		if (sizeof(unsigned long) == 8)
			v = w % 2 ? v >> 32 : v & 0xffffffffu;
		else
			v = hwloc_bitmap_to_ith_ulong(set, (unsigned)w);
		sprintf(s + (size_t)(words - 1 - w) * 9, "%08lx%s", v, w ? "," : "");
	}
	return s;
}

/*
 * The link as NCCL writes it: the smaller of the device's and its parent
 * port's maximum speed and width (what the link can do, which an idle GPU's
 * current state hides); the current link where the maximum is unknown.
 */
static void link_of(const struct aff_topo *t, const struct aff_dev *d, double *speed,
		    int *width)
{
	const struct aff_dev *p = d->parent >= 0 ? &t->dev[d->parent] : NULL;

	*speed = d->link_speed_cap > 0 ? d->link_speed_cap : d->link_speed;
	*width = d->link_width_cap > 0 ? d->link_width_cap : d->link_width;
	if (!p || p->type != AFF_DEV_BRIDGE || d->link_speed_cap <= 0)
		return;
	if (p->link_speed_cap > 0 && p->link_speed_cap < *speed)
		*speed = p->link_speed_cap;
	if (p->link_width_cap > 0 && p->link_width_cap < *width)
		*width = p->link_width_cap;
}

static int pci_attrs(const struct xout *x, xmlNode *n, const struct aff_dev *d)
{
	int rc = sets(n, "busid", d->pci);
	double speed;
	int width;

	if (d->class_id >= 0)
		rc |= setf(n, "class", "0x%04x00", d->class_id);
	else if (d->type == AFF_DEV_BRIDGE)
		/* A switch known by its structure only: a PCI bridge all the same. */
		rc |= sets(n, "class", "0x060400");
	else
		/* Required; an endpoint written is an accelerator or a rail. */
		rc |= sets(n, "class", d->gpu >= 0 ? "0x030200" : "0x020000");
	if (d->vendor >= 0)
		rc |= setf(n, "vendor", "0x%04x", d->vendor);
	if (d->device >= 0)
		rc |= setf(n, "device", "0x%04x", d->device);
	/* NCCL tells Broadcom's two-level switches by their subsystem. */
	if (d->subvendor > 0 || d->subdevice > 0) {
		rc |= setf(n, "subsystem_vendor", "0x%04x", d->subvendor > 0 ? d->subvendor : 0);
		rc |= setf(n, "subsystem_device", "0x%04x", d->subdevice > 0 ? d->subdevice : 0);
	}
	link_of(x->t, d, &speed, &width);
	/* NCCL's own spelling, the key of its kvDictPciGen; unknown as NCCL
	 * writes a link it cannot read. Required: NCCL cannot fill them where
	 * sysfs does not describe the device. */
	if (speed == 2.5)
		rc |= sets(n, "link_speed", "2.5 GT/s PCIe");
	else if (speed > 0)
		rc |= setf(n, "link_speed", "%.1f GT/s PCIe", speed);
	else
		rc |= sets(n, "link_speed", "");
	rc |= setf(n, "link_width", "%d", width > 0 ? width : 0);
	return rc ? -ENOMEM : 0;
}

/* nvidia_peermem or dma-buf: GPUDirect RDMA works; none: it does not. */
static int gdr_known(const struct aff_topo *t)
{
	if (!t->peer_memory)
		return -1;
	return strcmp(t->peer_memory, "none") ? 1 : 0;
}

/* Every attribute of @from that @to does not have yet; -ENOMEM. */
static int copy_attrs(xmlNode *to, const xmlNode *from)
{
	const xmlAttr *a;
	int rc = 0;

	for (a = from->properties; a && !rc; a = a->next) {
		const xmlChar *v = a->children && a->children->content ? a->children->content :
				   (const xmlChar *)"";

		if (a->type == XML_ATTRIBUTE_NODE &&
		    !aff_xml_loaded()->has_prop(to, a->name))
			rc = aff_xml_loaded()->new_prop(to, a->name, v) ? 0 : -ENOMEM;
	}
	return rc;
}

/*
 * An NCCL source's <gpu> attributes (sm, rank, gdr, ...) and its <nvlink>
 * and <c2c> elements, which NCCL reads from the file and the model does not
 * hold; gdr from the peer-memory support where the source does not say.
 */
static int copy_gpu(const struct xout *x, xmlNode *g, const char *busid, int gdr)
{
	const xmlNode *src = aff_nccl_src_sub(aff_nccl_src_pci(&x->src, busid), "gpu"), *c;
	int rc = src ? copy_attrs(g, src) : 0;

	for (c = src ? src->children : NULL; c && !rc; c = c->next) {
		xmlNode *n;

		if (c->type != XML_ELEMENT_NODE)
			continue;
		n = child(g, (const char *)c->name);
		rc = n ? copy_attrs(n, c) : -ENOMEM;
	}
	if (!rc && gdr >= 0 && !aff_xml_loaded()->has_prop(g, (const xmlChar *)"gdr"))
		rc = setf(g, "gdr", "%d", gdr);
	return rc;
}

static int gpu_elem(const struct xout *x, xmlNode *pci, int dev)
{
	const struct aff_topo *t = x->t;
	const struct aff_dev *d = &t->dev[dev];
	xmlNode *g = child(pci, "gpu");
	int i, same = 0, gdr = d->gdr >= 0 ? d->gdr : gdr_known(t);

	if (!g)
		return -ENOMEM;
	for (i = 0; i < d->gpu; i++)
		if (t->dev[t->gpus[i]].vendor == d->vendor)
			same++;
	if (setf(g, "dev", "%d", same) < 0)
		return -ENOMEM;
	return copy_gpu(x, g, d->pci, gdr);
}

/*
 * NCCL's "real port" of rail @r: the nets before it, in PCI order (NCCL's,
 * NCCL_IB_DEVICE_PCI_ORDER=1), on the same PCI device, which NCCL tells by
 * the sysfs path with the function and, NCCL_IB_MERGE_VFS=1, the device
 * number zeroed: the same domain and bus (ncclIbGetPciPath, ncclIbGetRealPort).
 * Ports not ACTIVE are none of its nets.
 */
static int real_port(const struct aff_topo *t, size_t r)
{
	const char *pci = t->dev[t->rail[r].dev].pci;
	size_t k, slot = strlen(pci) > 8 ? 8 : 0;	/* "dddd:bb:" */
	int n = 0;

	for (k = 0; slot && k < r; k++) {
		const struct aff_rail *o = &t->rail[k];

		if (o->name && o->rdma && o->excl != AFF_EXCL_DOWN &&
		    !strncmp(t->dev[o->dev].pci, pci, slot))
			n++;
	}
	return n;
}

static int nic_elem(const struct xout *x, xmlNode *parent, int dev)
{
	const struct aff_topo *t = x->t;
	xmlNode *nic = NULL;
	int gdr = gdr_known(t), rc = 0;
	size_t r;

	for (r = 0; r < t->nrail && !rc; r++) {
		const struct aff_rail *rl = &t->rail[r];
		const xmlNode *src;
		xmlChar *srcname, *srcport;
		xmlNode *net;

		/* A rail known by its PCI address only: the <pci> says enough. A
		 * port not ACTIVE is no net of NCCL's (nor in the files it writes). */
		if (rl->dev != dev || !rl->name || rl->excl == AFF_EXCL_DOWN)
			continue;
		if (!nic && !(nic = child(parent, "nic")))
			return -ENOMEM;
		net = child(nic, "net");
		if (!net)
			return -ENOMEM;
		src = aff_nccl_src_net(&x->src, aff_nccl_src_pci(&x->src, t->dev[dev].pci),
				       rl->name);
		srcname = src ? aff_xml_loaded()->get_prop(src, (const xmlChar *)"name") : NULL;
		srcport = src ? aff_xml_loaded()->get_prop(src, (const xmlChar *)"port") : NULL;
		rc |= sets(net, "name", srcname ? (const char *)srcname : rl->name);
		rc |= setf(net, "dev", "%zu", r);
		if (rl->rate > 0)
			rc |= setf(net, "speed", "%.0f", rl->rate * 1000);
		if (srcport)
			rc |= sets(net, "port", (const char *)srcport);
		else if (rl->port > 0)
			rc |= setf(net, "port", "%d", rl->port + (rl->rdma ? real_port(t, r) : 0));
		aff_xml_loaded()->free(srcname);
		aff_xml_loaded()->free(srcport);
		/* Written only when known: the importer takes a GUID for RDMA. */
		if (rl->guid)
			rc |= setf(net, "guid", "0x%llx", rl->guid);
		if (rl->gdr >= 0)
			rc |= setf(net, "gdr", "%d", rl->gdr);
		else if (gdr >= 0)
			rc |= setf(net, "gdr", "%d", rl->rdma ? gdr : 0);
		/* The rest of what an NCCL source wrote (latency, maxconn, net, gin, ...). */
		if (src && !rc)
			rc = copy_attrs(net, src);
	}
	return rc ? -ENOMEM : 0;
}

static int emit(const struct xout *x, xmlNode *parent, int above, size_t cpu);

static int emit_dev(const struct xout *x, xmlNode *parent, int i, size_t cpu)
{
	const struct aff_dev *d = &x->t->dev[i];
	xmlNode *n;
	int rc;

	/* A NIC without an address (a VM's): its <nic> sits in the parent. */
	if (!d->pci[0])
		return d->type == AFF_DEV_ENDPOINT ? nic_elem(x, parent, i) : 0;
	n = child(parent, "pci");
	if (!n)
		return -ENOMEM;
	rc = pci_attrs(x, n, d);
	if (rc < 0)
		return rc;
	if (d->type != AFF_DEV_ENDPOINT)
		return emit(x, n, i, cpu);
	if (d->gpu >= 0)
		return gpu_elem(x, n, i);
	return nic_elem(x, n, i);
}

/* The written devices whose nearest written switch is @above, in PCI order. */
static int emit(const struct xout *x, xmlNode *parent, int above, size_t cpu)
{
	size_t k;
	int rc;

	for (k = 0; k < x->norder; k++) {
		int i = x->order[k], loc = x->t->dev[i].loc;

		if (x->xparent[i] != above)
			continue;
		/* The tree wins below a switch: NCCL has NUMA per <cpu> only. */
		if (above < 0 && (loc < 0 || (size_t)x->loc_cpu[loc] != cpu))
			continue;
		rc = emit_dev(x, parent, i, cpu);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int add_cpu(struct xout *x, int numaid, hwloc_const_bitmap_t cpus)
{
	size_t k;

	if (numaid >= 0)
		for (k = 0; k < x->ncpu; k++)
			if (x->cpu[k].numaid == numaid)
				return (int)k;
	x->cpu[x->ncpu].numaid = numaid;
	x->cpu[x->ncpu].cpus = cpus;
	return (int)x->ncpu++;
}

static int numa_cmp(const void *a, const void *b)
{
	const struct aff_numa *x = a, *y = b;

	return x->os_index < y->os_index ? -1 : x->os_index > y->os_index;
}

static int pci_order(const void *a, const void *b, void *arg)
{
	const struct aff_topo *t = arg;
	const struct aff_dev *x = &t->dev[*(const int *)a], *y = &t->dev[*(const int *)b];

	return strcmp(x->pci, y->pci);
}

/* What to write: accelerators, rails, the switches above them; the <cpu>s. */
static int plan_output(struct xout *x)
{
	const struct aff_topo *t = x->t;
	struct aff_numa *numa;
	size_t k;
	int i;

	x->keep = calloc(t->ndev + 1, sizeof(*x->keep));
	x->xparent = calloc(t->ndev + 1, sizeof(*x->xparent));
	x->order = calloc(t->ndev + 1, sizeof(*x->order));
	x->cpu = calloc(t->nnuma + t->nloc + 1, sizeof(*x->cpu));
	x->loc_cpu = calloc(t->nloc + 1, sizeof(*x->loc_cpu));
	numa = malloc((t->nnuma + 1) * sizeof(*numa));
	if (!x->keep || !x->xparent || !x->order || !x->cpu || !x->loc_cpu || !numa) {
		free(numa);
		return -ENOMEM;
	}
	for (k = 0; k < t->ngpu; k++)
		x->keep[t->gpus[k]] = true;
	for (k = 0; k < t->nrail; k++)
		if (t->rail[k].excl != AFF_EXCL_DOWN)
			x->keep[t->rail[k].dev] = true;
	/* The switches the model's classes count (model_switches.c), NCCL's <pci>. */
	for (k = 0; k < t->ndev; k++) {
		if (!x->keep[k] || t->dev[k].type != AFF_DEV_ENDPOINT)
			continue;
		for (i = t->dev[k].up; i >= 0; i = t->dev[i].up)
			x->keep[i] = true;
	}
	for (k = 0; k < t->ndev; k++) {
		x->xparent[k] = t->dev[k].up;
		if (x->keep[k])
			x->order[x->norder++] = (int)k;
	}
	qsort_r(x->order, x->norder, sizeof(*x->order), pci_order, (void *)t);

	/* Every NUMA node, in number order, then the localities without one. */
	memcpy(numa, t->numa, t->nnuma * sizeof(*numa));
	qsort(numa, t->nnuma, sizeof(*numa), numa_cmp);
	for (k = 0; k < t->nnuma; k++)
		add_cpu(x, (int)numa[k].os_index, numa[k].cpuset);
	free(numa);
	for (k = 0; k < t->nloc; k++) {
		const struct aff_locality *l = &t->loc[k];

		if (l->known && l->numa >= 0)
			x->loc_cpu[k] = add_cpu(x, l->numa, l->cpuset);
		else
			x->loc_cpu[k] = -1;
	}
	/* Unknown or multi-node localities: one numaid="-1" <cpu> each, and
	 * only where something is written. */
	for (k = 0; k < x->norder; k++) {
		int loc = t->dev[x->order[k]].loc;

		if (x->xparent[x->order[k]] < 0 && loc >= 0 && x->loc_cpu[loc] < 0)
			x->loc_cpu[loc] = add_cpu(x, -1, t->loc[loc].known ?
						  t->loc[loc].cpuset : t->all_cpus);
	}
	return 0;
}

static const char *nccl_arch(const char *uname_m)
{
	if (!strcmp(uname_m, "x86_64"))
		return "x86_64";
	if (!strcmp(uname_m, "aarch64") || !strcmp(uname_m, "arm64"))
		return "arm64";
	if (!strncmp(uname_m, "ppc64", 5))
		return "ppc64";
	return NULL;
}

/* An NCCL file's own CPU kind, as it said it. */
static int nccl_cpu_ids(const struct aff_topo *t, xmlNode *n)
{
	int rc = 0;

	if (t->cpu_arch)
		rc |= sets(n, "arch", t->cpu_arch);
	if (t->cpu_vendor)
		rc |= sets(n, "vendor", t->cpu_vendor);
	if (t->cpu_family >= 0)
		rc |= setf(n, "familyid", "%d", t->cpu_family);
	if (t->cpu_model >= 0)
		rc |= setf(n, "modelid", "%d", t->cpu_model);
	return rc ? -ENOMEM : 0;
}

/* arch, vendor, familyid, modelid from hwloc, when the source has them. */
static int cpu_ids(const struct aff_topo *t, xmlNode *n, int numaid)
{
	const char *arch, *v;
	hwloc_obj_t o = NULL;
	int rc = 0;

	if (!t->hw)
		return nccl_cpu_ids(t, n);
	v = hwloc_obj_get_info_by_name(hwloc_get_root_obj(t->hw), "Architecture");
	arch = v ? nccl_arch(v) : NULL;
	if (arch)
		rc |= sets(n, "arch", arch);
	if (numaid >= 0) {
		o = hwloc_get_numanode_obj_by_os_index(t->hw, (unsigned)numaid);
		while (o && o->type != HWLOC_OBJ_PACKAGE)
			o = o->parent;
	}
	if (!o)
		o = hwloc_get_obj_by_type(t->hw, HWLOC_OBJ_PACKAGE, 0);
	if (!o)
		return rc ? -ENOMEM : 0;
	if ((v = hwloc_obj_get_info_by_name(o, "CPUVendor")))
		rc |= sets(n, "vendor", v);
	if ((v = hwloc_obj_get_info_by_name(o, "CPUFamilyNumber")))
		rc |= sets(n, "familyid", v);
	if ((v = hwloc_obj_get_info_by_name(o, "CPUModelNumber")))
		rc |= sets(n, "modelid", v);
	return rc ? -ENOMEM : 0;
}

static int build(struct xout *x, xmlNode *sys)
{
	size_t k;
	int rc;

	for (k = 0; k < x->ncpu; k++) {
		xmlNode *n = child(sys, "cpu");
		char *mask;

		if (!n || setf(n, "numaid", "%d", x->cpu[k].numaid) < 0)
			return -ENOMEM;
		mask = cpumask(x->cpu[k].cpus);
		rc = mask ? sets(n, "affinity", mask) : 0;
		free(mask);
		if (rc < 0 || cpu_ids(x->t, n, x->cpu[k].numaid) < 0)
			return -ENOMEM;
		x->cpu[k].node = n;
	}
	for (k = 0; k < x->ncpu; k++) {
		rc = emit(x, x->cpu[k].node, -1, k);
		if (rc < 0)
			return rc;
	}
	return 0;
}

AFF_EXPORT int aff_topo_nccl_xml(const struct aff_topo *t, unsigned long flags,
				 char **out)
{
	const struct aff_xml *lx = aff_xml("nccl-topo", NULL, 0);
	struct xout x = { .t = t };
	xmlDoc *doc = NULL;
	xmlNode *sys = NULL;
	xmlBuffer *buf = NULL;
	int rc = -ENOMEM;

	*out = NULL;
	if (flags)
		return -EINVAL;
	if (!lx)
		return -ELIBACC;
	doc = lx->new_doc((const xmlChar *)"1.0");
	sys = doc ? lx->new_doc_node(doc, NULL, (const xmlChar *)"system", NULL) : NULL;
	buf = lx->buffer_create();
	if (doc && sys && buf && !sets(sys, "version", "1")) {
		lx->set_root(doc, sys);
		aff_nccl_src_open(t, lx, &x.src);
		rc = plan_output(&x);
		if (!rc)
			rc = build(&x, sys);
	}
	/* The element alone, no <?xml?> prolog: NCCL's own files have none. */
	if (!rc && lx->node_dump(buf, doc, sys, 0, 1) < 0)
		rc = -ENOMEM;
	if (!rc && asprintf(out, "%s\n", (const char *)lx->buffer_content(buf)) < 0) {
		*out = NULL;
		rc = -ENOMEM;
	}
	if (buf)
		lx->buffer_free(buf);
	if (doc)
		lx->free_doc(doc);
	aff_nccl_src_close(&x.src);
	free(x.keep);
	free(x.xparent);
	free(x.order);
	free(x.cpu);
	free(x.loc_cpu);
	return rc;
}

AFF_EXPORT int aff_topo_nccl_write(const struct aff_topo *t, const char *path,
				   char *err, size_t errlen)
{
	char *xml = NULL;
	int rc = aff_topo_nccl_xml(t, 0, &xml);

	if (rc < 0 || !xml)
		return aff_seterr(err, errlen, rc < 0 ? -rc : ENOMEM, "nccl-topo: %s: %s",
				  path, strerror(rc < 0 ? -rc : ENOMEM));
	rc = aff_write_atomic("nccl-topo", path, xml, strlen(xml), err, errlen);
	free(xml);
	return rc;
}
