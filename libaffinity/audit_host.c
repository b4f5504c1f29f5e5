// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The host checks: peer-memory (can the NIC DMA into GPU memory at all),
 * iommu-translation (GPU/NIC DMA translated by the IOMMU) and peer-cross-path
 * (railbind.ko saw a NIC map a GPU's memory over a worse path than the
 * plan's pair: a rank used the wrong NIC).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "audit.h"

static bool has_rdma_rail(const struct aff_topo *t)
{
	size_t r;

	for (r = 0; r < t->nrail; r++)
		if (t->rail[r].rdma)
			return true;
	return false;
}

/*
 * An NCCL file says per net and per GPU whether NCCL found GPUDirect RDMA
 * (gdr=): 0 on every RDMA rail, or on every GPU, means NCCL stages all
 * traffic through host memory (src/graph/paths.cc); 1 somewhere means it
 * worked where the file was written. -1: the file does not say.
 */
static int nccl_gdr(const struct aff_topo *t)
{
	size_t r, g;
	int rails = -1, gpus = -1;

	for (r = 0; r < t->nrail; r++)
		if (t->rail[r].rdma && t->rail[r].gdr >= 0)
			rails = rails == 1 || t->rail[r].gdr ? 1 : 0;
	for (g = 0; g < t->ngpu; g++)
		if (t->dev[t->gpus[g]].gdr >= 0)
			gpus = gpus == 1 || t->dev[t->gpus[g]].gdr ? 1 : 0;
	if (rails == 0 || gpus == 0)
		return 0;
	return rails == 1 || gpus == 1 ? 1 : -1;
}

static int check_peer_memory(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	const char *pm = t->peer_memory;
	struct json_object *ev;

	if (!t->ngpu)
		return aff_audit_undecided(a, "peer-memory", "no GPU or accelerator");
	if (!has_rdma_rail(t))
		return aff_audit_undecided(a, "peer-memory",
					   "no RDMA rail NIC: GPUDirect RDMA is not in play");
	if (!pm && nccl_gdr(t) == 0)
		return aff_audit_add(a, "peer-memory", AFF_SEV_WARN, "node", NULL, NULL,
				     "modprobe nvidia_peermem (and add it to /etc/modules-load.d), or use a kernel >= 5.12 with dma-buf support, where the file was written",
				     "the NCCL topology says gdr=\"0\" for every RDMA rail or every GPU: NCCL stages every transfer through host memory (GPUDirect RDMA off)");
	if (!pm && nccl_gdr(t) == 1)
		return aff_audit_add(a, "peer-memory", AFF_SEV_OK, "node", NULL, NULL, NULL,
				     "GPUDirect RDMA: the NCCL topology says gdr=\"1\", NCCL found it working where the file was written");
	if (!pm)
		return aff_audit_undecided(a, "peer-memory",
					   "the source does not say which peer-memory support is loaded");
	ev = json_object_new_object();
	json_object_object_add(ev, "peer_memory", json_object_new_string(pm));
	if (!strcmp(pm, "nvidia_peermem"))
		return aff_audit_add(a, "peer-memory", AFF_SEV_OK, "node", NULL, ev, NULL,
				     "GPUDirect RDMA through the nvidia_peermem (nv_peer_mem) module");
	if (!strcmp(pm, "dmabuf"))
		return aff_audit_add(a, "peer-memory", AFF_SEV_OK, "node", NULL, ev, NULL,
				     "GPUDirect RDMA through dma-buf (kernel >= 5.12, ib_uverbs, a GPU driver exporting dma-buf)");
	return aff_audit_add(a, "peer-memory", AFF_SEV_WARN, "node", NULL, ev,
			     "modprobe nvidia_peermem (and add it to /etc/modules-load.d), or use a kernel >= 5.12 with NVIDIA's open kernel modules (r515+) or amdgpu for dma-buf",
			     "no peer-memory support (%s): NCCL cannot register GPU memory with the NICs and stages every transfer through host memory (GPUDirect RDMA off)",
			     pm);
}

static int iommu_one(struct aff_audit *a, int dev, const char *what, bool *any,
		     bool *unknown)
{
	const struct aff_dev *d = &a->topo->dev[dev];
	const char *devs[2] = { d->pci, NULL };
	struct json_object *ev;

	if (d->unreadable & AFF_UNREADABLE_IOMMU)
		*unknown = true;
	*any = true;
	if (!d->iommu_type || (strcmp(d->iommu_type, "DMA") && strcmp(d->iommu_type, "DMA-FQ")))
		return 0;
	ev = json_object_new_object();
	json_object_object_add(ev, "iommu_group_type", json_object_new_string(d->iommu_type));
	return aff_audit_add(a, "iommu-translation", AFF_SEV_WARN, d->pci, devs, ev,
			     "boot with iommu=pt (intel_iommu=on iommu=pt, or amd_iommu=pt) so GPUs and NICs get identity mappings, unless this node isolates devices for VMs",
			     "%s %s is in an IOMMU group of type %s: every RDMA and peer-to-peer access is translated (IOTLB misses cost bandwidth)",
			     what, d->pci, d->iommu_type);
}

static int check_iommu(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	bool any = false, unknown = false;
	size_t g, r;
	int rc = 0;

	if (!t->ngpu)
		return aff_audit_undecided(a, "iommu-translation", "no GPU or accelerator");
	if (!t->extras)
		return aff_audit_undecided(a, "iommu-translation",
					   "the source has no IOMMU group data (not a railbind snapshot)");
	for (g = 0; g < t->ngpu && !rc; g++)
		rc = iommu_one(a, t->gpus[g], "GPU", &any, &unknown);
	for (r = 0; r < t->nrail && !rc; r++)
		rc = iommu_one(a, t->rail[r].dev, "NIC", &any, &unknown);
	if (rc < 0)
		return rc;
	if (unknown)
		return aff_audit_undecided(a, "iommu-translation",
					   "the IOMMU group type of a GPU or NIC could not be read (kernel < 5.11?)");
	return 0;
}

/* A Data Direct PF's mappings travel through its DMA function (model_complex.c). */
static int dma_of_pf(const struct aff_topo *t, int dev)
{
	size_t r;

	for (r = 0; r < t->nrail; r++)
		if (t->rail[r].dev == dev)
			return aff_rail_path_dev(&t->rail[r]);
	return dev;
}

static int dev_by_pci(const struct aff_topo *t, const char *pci)
{
	size_t i;

	for (i = 0; *pci && i < t->ndev; i++)
		if (!strcmp(t->dev[i].pci, pci))
			return (int)i;
	return -1;
}

/* The class of the pair the plan gives GPU g, AFF_PATH_NONE without one. */
static enum aff_path planned_path(const struct aff_audit *a, int g)
{
	struct aff_audit_pair p;
	size_t k;

	for (k = 0; k < a->plan->nrank; k++)
		if (a->plan->rank[k].gpu == g && aff_audit_pair(a, k, &p) == 0 && p.nic >= 0)
			return p.path;
	return AFF_PATH_NONE;
}

static int check_cross(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	const char *view;
	size_t i;
	int rc = 0;

	if (!a->plan)
		return aff_audit_undecided(a, "peer-cross-path", "no GPU or accelerator");
	if (!t->kmod || !strcmp(t->kmod, "absent"))
		return aff_audit_undecided(a, "peer-cross-path",
					   "railbind.ko is not loaded: peer-memory mappings are not seen");
	view = t->hw ? hwloc_obj_get_info_by_name(hwloc_get_root_obj(t->hw), "RailbindPeerView") :
		       NULL;
	if (view && !strcmp(view, "restricted"))
		return aff_audit_undecided(a, "peer-cross-path",
					   "railbind.ko shows peer-memory mappings only to root (CAP_PERFMON or CAP_SYS_ADMIN)");
	for (i = 0; i < t->npeer && !rc; i++) {
		const struct aff_peer *pr = &t->peer[i];
		int gd = dev_by_pci(t, pr->gpu), nd = dev_by_pci(t, pr->nic);
		const char *devs[3] = { pr->gpu, pr->nic, NULL };
		enum aff_path got, want;
		struct json_object *ev;

		if (pr->maps <= 0 || gd < 0 || nd < 0 || t->dev[gd].gpu < 0)
			continue;
		got = aff_path_between(t, gd, dma_of_pf(t, nd), NULL);
		want = planned_path(a, t->dev[gd].gpu);
		if (want == AFF_PATH_NONE || got <= want)
			continue;
		ev = json_object_new_object();
		json_object_object_add(ev, "path", json_object_new_string(aff_path_name(got)));
		json_object_object_add(ev, "planned_path",
				       json_object_new_string(aff_path_name(want)));
		json_object_object_add(ev, "maps", json_object_new_int64(pr->maps));
		json_object_object_add(ev, "bytes", json_object_new_int64(pr->bytes));
		json_object_object_add(ev, "route", json_object_new_string(pr->route));
		rc = aff_audit_add(a, "peer-cross-path", AFF_SEV_WARN, pr->gpu, devs, ev,
				   "start ranks with `railbind run` (or set NCCL_IB_HCA from `railbind plan`) so each rank uses its GPU's own rail",
				   "NIC %s maps memory of GPU %s over a %s path (%ld mappings, %lld bytes) though the plan gives that GPU a %s rail: a rank used the wrong NIC",
				   pr->nic, pr->gpu, aff_path_name(got), pr->maps, pr->bytes,
				   aff_path_name(want));
	}
	return rc;
}

int aff_audit_host(struct aff_audit *a)
{
	int rc = check_peer_memory(a);

	if (!rc)
		rc = check_iommu(a);
	if (!rc)
		rc = check_cross(a);
	return rc;
}
