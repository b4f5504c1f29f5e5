// SPDX-License-Identifier: LGPL-2.1-or-later
/* Building the node model: growth of its arrays, then classification. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acs_table.h"
#include "gpu_ident.h"
#include "fabric.h"
#include "model.h"
#include "model_complex.h"

/*
 * Grow arr (of *n elements of size sz) by one zeroed element. The capacity
 * is the next power of two, so that it doubles when n reaches one.
 */
static void *grow(void *arr, size_t *n, size_t sz)
{
	void *p = arr;

	if ((*n & (*n - 1)) == 0) {
		p = realloc(arr, (*n ? 2 * *n : 1) * sz);
		if (!p)
			return NULL;
	}
	memset((char *)p + *n * sz, 0, sz);
	(*n)++;
	return p;
}

/* Append a zeroed element to arr, or return -ENOMEM from the caller. */
#define GROW(arr, n) do {                                                   \
	void *p_ = grow((arr), &(n), sizeof(*(arr)));                       \
	if (!p_)                                                            \
		return -ENOMEM;                                             \
	(arr) = p_;                                                         \
} while (0)

struct aff_topo *aff_topo_alloc(struct aff_ctx *ctx, enum aff_src src,
				const char *source)
{
	struct aff_topo *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->refcount = 1;
	t->ctx = aff_ctx_ref(ctx);
	t->src = src;
	t->source = strdup(source ? source : "live");
	t->all_cpus = hwloc_bitmap_alloc();
	t->all_nodes = hwloc_bitmap_alloc();
	t->cpu_family = t->cpu_model = -1;
	if (!t->source || !t->all_cpus || !t->all_nodes) {
		aff_topo_unref(t);
		return NULL;
	}
	return t;
}

int aff_topo_add_dev(struct aff_topo *t, enum aff_devtype type, int parent)
{
	struct aff_dev *d;
	int i;

	GROW(t->dev, t->ndev);
	i = (int)t->ndev - 1;
	d = &t->dev[i];
	d->type = type;
	d->parent = parent;
	d->hostbridge = type == AFF_DEV_HOSTBRIDGE ? i :
			(parent >= 0 ? t->dev[parent].hostbridge : -1);
	d->loc = parent >= 0 ? t->dev[parent].loc : -1;
	d->vendor = d->device = d->class_id = -1;
	d->subvendor = d->subdevice = -1;
	d->up = d->nccl_up = -1;
	d->gpu = -1;
	d->gdr = -1;
	d->link_speed = d->link_speed_cap = 0;
	d->acs_ctl = -1;
	d->ats = d->mps = d->mrrs = d->relaxed = -1;
	d->bar1 = -1;
	d->numa_raw = INT_MIN;
	return i;
}

int aff_topo_add_loc(struct aff_topo *t, hwloc_const_bitmap_t cpuset,
		     hwloc_const_bitmap_t nodeset, int depth, hwloc_obj_t obj)
{
	struct aff_locality *l;
	size_t k;
	int i;

	for (k = 0; k < t->nloc; k++)
		if (hwloc_bitmap_isequal(t->loc[k].cpuset, cpuset) &&
		    hwloc_bitmap_isequal(t->loc[k].nodeset, nodeset))
			return (int)k;
	GROW(t->loc, t->nloc);
	i = (int)t->nloc - 1;
	l = &t->loc[i];
	l->cpuset = hwloc_bitmap_dup(cpuset);
	l->nodeset = hwloc_bitmap_dup(nodeset);
	if (!l->cpuset || !l->nodeset)
		return -ENOMEM;
	l->depth = depth;
	l->obj = obj;
	l->mems = hwloc_bitmap_dup(nodeset);
	if (!l->mems)
		return -ENOMEM;
	/*
	 * Memory goes to the nodes with CPUs: the CPU-less ones hwloc hangs
	 * beside them (CXL, GPU memory on Grace) are not this locality's DRAM.
	 */
	for (k = 0; k < t->nnuma; k++)
		if (hwloc_bitmap_iszero(t->numa[k].cpuset))
			hwloc_bitmap_clr(l->mems, t->numa[k].os_index);
	if (hwloc_bitmap_iszero(l->mems))
		hwloc_bitmap_copy(l->mems, nodeset);
	l->numa = hwloc_bitmap_weight(l->mems) == 1 ?
		  hwloc_bitmap_first(l->mems) : -1;
	return i;
}

int aff_topo_add_rail(struct aff_topo *t, int dev, const char *name, int port,
		      bool rdma)
{
	int i;

	GROW(t->rail, t->nrail);
	i = (int)t->nrail - 1;
	t->rail[i].dev = dev;
	t->rail[i].port = port;
	t->rail[i].rdma = rdma;
	t->rail[i].gdr = -1;
	t->rail[i].via = -1;
	if (name && !(t->rail[i].name = strdup(name)))
		return -ENOMEM;
	return i;
}

const char *aff_rail_hca(const struct aff_rail *r, int *port)
{
	*port = r->hca_port > 0 ? r->hca_port : r->port;
	return r->hca ? r->hca : r->name;
}

bool aff_is_verbs_name(const char *name)
{
	/* rdma-core's providers and the kernel's ib_device names. */
	static const char *const prefix[] = {
		"mlx4_", "mlx5_", "bnxt_re", "irdma", "i40iw", "efa_", "erdma_",
		"hfi1_", "qedr", "mana_", "ionic_", "hns_", "rxe", "siw", "cxgb4_",
		"ocrdma", "vmw_pvrdma", "rdma", "cxi",
	};
	size_t i;

	for (i = 0; name && i < sizeof(prefix) / sizeof(prefix[0]); i++)
		if (!strncmp(name, prefix[i], strlen(prefix[i])))
			return true;
	return false;
}

int aff_topo_add_numa(struct aff_topo *t, unsigned os_index,
		      hwloc_const_bitmap_t cpuset)
{
	int i;

	GROW(t->numa, t->nnuma);
	i = (int)t->nnuma - 1;
	t->numa[i].os_index = os_index;
	t->numa[i].cpuset = hwloc_bitmap_dup(cpuset);
	if (!t->numa[i].cpuset)
		return -ENOMEM;
	hwloc_bitmap_set(t->all_nodes, os_index);
	hwloc_bitmap_or(t->all_cpus, t->all_cpus, cpuset);
	return i;
}

int aff_topo_add_core(struct aff_topo *t, hwloc_const_bitmap_t pus, int cache)
{
	int i;

	GROW(t->core, t->ncore);
	i = (int)t->ncore - 1;
	t->core[i].pus = hwloc_bitmap_dup(pus);
	t->core[i].cache = cache;
	return t->core[i].pus ? i : -ENOMEM;
}

int aff_topo_set_cpu(struct aff_topo *t, const char *arch, const char *vendor,
		     int family, int model)
{
	if ((arch && !(t->cpu_arch = strdup(arch))) ||
	    (vendor && !(t->cpu_vendor = strdup(vendor))))
		return -ENOMEM;
	t->cpu_family = family;
	t->cpu_model = model;
	return 0;
}

int aff_dev_set_pci(struct aff_dev *d, const char *busid)
{
	unsigned dom = 0, bus, dev, fn;
	char tail;

	if (sscanf(busid, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) != 4 &&
	    (dom = 0, sscanf(busid, "%x:%x.%x%c", &bus, &dev, &fn, &tail) != 3))
		return -EINVAL;
	if (dom > 0xffff || bus > 0xff || dev > 0x1f || fn > 7)
		return -EINVAL;
	d->domain = dom;
	d->bus = bus;
	d->devno = dev;
	d->func = fn;
	snprintf(d->pci, sizeof(d->pci), "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	return 0;
}

static int pci_cmp(const struct aff_dev *a, const struct aff_dev *b)
{
	if (a->domain != b->domain)
		return a->domain < b->domain ? -1 : 1;
	if (a->bus != b->bus)
		return a->bus < b->bus ? -1 : 1;
	if (a->devno != b->devno)
		return a->devno < b->devno ? -1 : 1;
	if (a->func != b->func)
		return a->func < b->func ? -1 : 1;
	return 0;
}

/* qsort has no context argument: the model being sorted, one at a time. */
static _Thread_local const struct aff_topo *sort_topo;

static int gpu_order(const void *a, const void *b)
{
	const int *x = a, *y = b;

	return pci_cmp(&sort_topo->dev[*x], &sort_topo->dev[*y]);
}

static int rail_order(const void *a, const void *b)
{
	const struct aff_rail *x = a, *y = b;
	int c = pci_cmp(&sort_topo->dev[x->dev], &sort_topo->dev[y->dev]);

	if (c)
		return c;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

static void rail_clear(struct aff_rail *r)
{
	free(r->name);
	free(r->hca);
	free(r->port_state);
	aff_fabric_port_free(r->fab);
}

/* HPE Cray Cassini (Slingshot) shows as a plain network device in hwloc but
 * is RDMA capable through libfabric's cxi provider. */
static bool rdma_vendor(int vendor)
{
	return vendor == 0x17db;
}

/* Remember a rail exclude-nic takes out, so that the plan can name it. */
static int drop(struct aff_topo *t, const struct aff_rail *r)
{
	struct aff_dropped *d;

	GROW(t->dropped, t->ndropped);
	d = &t->dropped[t->ndropped - 1];
	snprintf(d->pci, sizeof(d->pci), "%s", t->dev[r->dev].pci);
	if (r->name && !(d->name = strdup(r->name)))
		return -ENOMEM;
	return 0;
}

static int select_rails(struct aff_topo *t)
{
	const struct aff_config *conf = &t->ctx->conf;
	size_t i, k = 0;
	int rc = 0;

	for (i = 0; i < t->nrail; i++) {
		struct aff_rail *r = &t->rail[i];
		const struct aff_dev *d = &t->dev[r->dev];
		bool keep = r->rdma || r->listed || rdma_vendor(d->vendor) ||
			    conf->ethernet_rails;

		if (aff_nic_listed(conf->include_nic, conf->ninclude, r->name,
				   d->pci) ||
		    aff_nic_listed(conf->include_nic, conf->ninclude,
				   d->netdev, NULL)) {
			keep = true;
			r->included = true;
		} else if (aff_nic_listed(conf->exclude_nic, conf->nexclude,
					  r->name, d->pci)) {
			keep = false;
			if (!rc)
				rc = drop(t, r);
		}
		if (!keep) {
			rail_clear(r);
			continue;
		}
		t->rail[k++] = *r;
	}
	t->nrail = k;
	return rc;
}

int aff_topo_finish(struct aff_topo *t, char *err, size_t errlen)
{
	size_t i;
	int rc;

	t->gpus = calloc(t->ndev ? t->ndev : 1, sizeof(*t->gpus));
	if (!t->gpus)
		return -ENOMEM;
	for (i = 0; i < t->ndev; i++)
		if (t->dev[i].type == AFF_DEV_ENDPOINT &&
		    aff_is_accelerator(&t->ctx->conf, &t->dev[i]))
			t->gpus[t->ngpu++] = (int)i;
	sort_topo = t;
	qsort(t->gpus, t->ngpu, sizeof(*t->gpus), gpu_order);
	/*
	 * One accelerator listed twice (an NCCL file can) would give two ranks
	 * the same GPU: refuse the input. Other devices may share an address
	 * in hwloc's own synthetic files, and no rank is given those.
	 */
	for (i = 1; i < t->ngpu; i++)
		if (!pci_cmp(&t->dev[t->gpus[i - 1]], &t->dev[t->gpus[i]])) {
			sort_topo = NULL;
			return aff_seterr(err, errlen, EINVAL,
					  "%s: two devices at PCI address %s",
					  t->source, t->dev[t->gpus[i]].pci);
		}
	for (i = 0; i < t->ngpu; i++)
		t->dev[t->gpus[i]].gpu = (int)i;
	rc = select_rails(t);
	/* qsort(NULL, 0, ...) is undefined: a node may have no rail at all. */
	if (t->nrail)
		qsort(t->rail, t->nrail, sizeof(*t->rail), rail_order);
	sort_topo = NULL;
	if (!rc)
		rc = aff_find_switches(t);
	if (!rc)
		aff_complex_match(t);
	if (rc < 0)
		return aff_seterr(err, errlen, -rc, "%s: %s", t->source, strerror(-rc));
	t->intercpu_bw = aff_intercpu_bw(t->cpu_arch, t->cpu_vendor, t->cpu_family,
					 t->cpu_model);
	aff_mark_excluded(t);
	return 0;
}

static void topo_free(struct aff_topo *t)
{
	size_t i;

	for (i = 0; i < t->ndev; i++) {
		free(t->dev[i].iommu_type);
		free(t->dev[i].vpd_uuid);
		free(t->dev[i].netdev);
		aff_gident_free(t->dev[i].gident);
	}
	for (i = 0; i < t->nrail; i++)
		rail_clear(&t->rail[i]);
	for (i = 0; i < t->ndropped; i++)
		free(t->dropped[i].name);
	free(t->dropped);
	for (i = 0; i < t->nloc; i++) {
		hwloc_bitmap_free(t->loc[i].mems);
		hwloc_bitmap_free(t->loc[i].cpuset);
		hwloc_bitmap_free(t->loc[i].nodeset);
	}
	for (i = 0; i < t->nnuma; i++)
		hwloc_bitmap_free(t->numa[i].cpuset);
	for (i = 0; i < t->ncore; i++)
		hwloc_bitmap_free(t->core[i].pus);
	free(t->dev);
	free(t->rail);
	free(t->loc);
	free(t->numa);
	free(t->core);
	free(t->gpus);
	free(t->source);
	free(t->host);
	free(t->peer_memory);
	free(t->kmod);
	free(t->kernel);
	free(t->gpu_driver);
	free(t->kernel_target);
	free(t->cpu_arch);
	free(t->cpu_vendor);
	free(t->peer);
	free(t->nvml);
	free(t->rocm_smi);
	hwloc_bitmap_free(t->all_cpus);
	hwloc_bitmap_free(t->all_nodes);
	if (t->hw)
		hwloc_topology_destroy(t->hw);
	aff_ctx_unref(t->ctx);
	free(t);
}

AFF_EXPORT struct aff_topo *aff_topo_ref(struct aff_topo *t)
{
	if (t)
		t->refcount++;
	return t;
}

AFF_EXPORT struct aff_topo *aff_topo_unref(struct aff_topo *t)
{
	if (!t || --t->refcount > 0)
		return NULL;
	topo_free(t);
	return NULL;
}

AFF_EXPORT size_t aff_topo_gpu_count(const struct aff_topo *t)
{
	return t->ngpu;
}

AFF_EXPORT int aff_topo_set_kernel(struct aff_topo *t, const char *release)
{
	char *k = NULL;
	int maj, min, pat;

	if (release && aff_kernel_version(release, &maj, &min, &pat) < 0)
		return -EINVAL;
	if (release && !(k = strdup(release)))
		return -ENOMEM;
	free(t->kernel_target);
	t->kernel_target = k;
	return 0;
}

AFF_EXPORT const char *aff_topo_host(const struct aff_topo *t)
{
	return t->host;
}

AFF_EXPORT size_t aff_topo_nic_count(const struct aff_topo *t)
{
	return t->nrail;
}

AFF_EXPORT const char *aff_topo_gpu_pci(const struct aff_topo *t, size_t i)
{
	return i < t->ngpu ? t->dev[t->gpus[i]].pci : NULL;
}

AFF_EXPORT const char *aff_topo_nic_name(const struct aff_topo *t, size_t i)
{
	if (i >= t->nrail)
		return NULL;
	return t->rail[i].name ? t->rail[i].name : t->dev[t->rail[i].dev].pci;
}

AFF_EXPORT enum aff_path aff_topo_path(const struct aff_topo *t, size_t gpu,
				       size_t nic)
{
	if (gpu >= t->ngpu || nic >= t->nrail)
		return AFF_PATH_NONE;
	return aff_path_between(t, t->gpus[gpu], aff_rail_path_dev(&t->rail[nic]), NULL);
}
