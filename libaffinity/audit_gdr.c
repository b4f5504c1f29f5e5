// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * gdr-readiness: what else, besides ACS, decides whether NCCL gets
 * GPUDirect RDMA ("no GDRDMA" in its log) and at what speed, on each
 * GPU-NIC pair of the plan: a peer-memory route (nvidia_peermem, or dma-buf
 * as NCCL's dma-buf support test needs it: Linux >= 5.12 and NVIDIA's open
 * kernel modules), IOMMU translation (and ATS on the NIC when translated),
 * PCIe Max Payload and Max Read Request along the path, Relaxed Ordering on
 * the NIC, and the GPU's BAR1 window. Each finding carries its evidence and
 * a one-line remedy; each device is judged once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "acs_table.h"
#include "audit.h"

#define MAX_BRIDGES 64
/* NCCL's buffers (several hundred MiB on a node of 8 ranks) go through it too. */
#define BAR1_MIN (1LL << 30)
#define GDR "gdr-readiness"

struct gdr {
	struct aff_audit *a;
	bool *seen;		/* per device: judged */
	bool any;		/* some fact was known */
};

static struct json_object *jstr(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static bool translated(const struct aff_dev *d)
{
	return d->iommu_type && (!strcmp(d->iommu_type, "DMA") || !strcmp(d->iommu_type, "DMA-FQ"));
}

/* dma-buf as NCCL finds it: the kernel's import (5.12) and an exporting GPU driver. */
static int dmabuf_ready(const struct aff_topo *t)
{
	int maj, min, pat;

	if (aff_kernel_version(t->kernel, &maj, &min, &pat) < 0 || !t->gpu_driver)
		return -1;
	return (maj > 5 || (maj == 5 && min >= 12)) && !strcmp(t->gpu_driver, "open");
}

static int peer_route(struct gdr *g)
{
	const struct aff_topo *t = g->a->topo;
	struct json_object *ev;
	int dmabuf = dmabuf_ready(t);

	if (!t->peer_memory)
		return 0;
	g->any = true;
	if (strcmp(t->peer_memory, "none") || dmabuf == 1)
		return 0;
	ev = json_object_new_object();
	json_object_object_add(ev, "peer_memory", jstr(t->peer_memory));
	json_object_object_add(ev, "kernel", jstr(t->kernel));
	json_object_object_add(ev, "gpu_driver", jstr(t->gpu_driver));
	return aff_audit_add(g->a, GDR, AFF_SEV_WARN, "node", NULL, ev,
			     "modprobe nvidia_peermem (and list it in /etc/modules-load.d/), or run NVIDIA's open kernel modules on Linux >= 5.12 for dma-buf",
			     "no peer-memory route: nvidia_peermem is not loaded and dma-buf is not usable (kernel %s, GPU driver %s): NCCL reports no GDRDMA and stages through host memory",
			     t->kernel ? t->kernel : "unknown", t->gpu_driver ? t->gpu_driver : "unknown");
}

static int iommu(struct gdr *g, int dev, int nic)
{
	const struct aff_dev *d = &g->a->topo->dev[dev], *n = &g->a->topo->dev[nic];
	const char *devs[2] = { d->pci, NULL };
	struct json_object *ev;

	if (d->iommu_type)
		g->any = true;
	if (!translated(d))
		return 0;
	ev = json_object_new_object();
	json_object_object_add(ev, "iommu_group_type", jstr(d->iommu_type));
	if (n->ats >= 0)
		json_object_object_add(ev, "nic_ats", json_object_new_boolean(n->ats == 1));
	return aff_audit_add(g->a, GDR, AFF_SEV_WARN, d->pci, devs, ev,
			     n->ats == 0 ?
			     "boot with iommu=pt (passthrough) unless the node isolates devices for VMs; translated, the NIC needs ATS (enable it in the NIC firmware) so peer traffic is not translated at the root complex" :
			     "boot with iommu=pt (passthrough) unless the node isolates devices for VMs",
			     "%s's DMA is translated by the IOMMU (group type %s)%s: every GPUDirect RDMA access costs an IOTLB lookup",
			     d->pci, d->iommu_type,
			     n->ats == 0 ? " and its NIC has no ATS" : "");
}

static int read_request(struct gdr *g, int dev)
{
	const struct aff_dev *d = &g->a->topo->dev[dev];
	const char *devs[2] = { d->pci, NULL };
	struct json_object *ev;

	if (d->mrrs < 0)
		return 0;
	g->any = true;
	if (d->mrrs > 128)
		return 0;
	ev = json_object_new_object();
	json_object_object_add(ev, "mrrs", json_object_new_int(d->mrrs));
	json_object_object_add(ev, "mps", d->mps >= 0 ? json_object_new_int(d->mps) : NULL);
	return aff_audit_add(g->a, GDR, AFF_SEV_WARN, d->pci, devs, ev,
			     "raise Max Read Request to 4096 bytes in the BIOS or NIC firmware, or now: setpci -s BDF CAP_EXP+8.w=5000:7000 (lost on reboot)",
			     "%s's PCIe Max Read Request is %d bytes: each read of GPU memory is cut into %d-byte requests, which caps RDMA bandwidth",
			     d->pci, d->mrrs, d->mrrs);
}

/* Max Payload differing along a pair's path: the larger end is cut down. */
static int payload(struct gdr *g, int gpu, int nic)
{
	const struct aff_topo *t = g->a->topo;
	int br[MAX_BRIDGES + 2], lo = -1, hi = -1;
	size_t n = aff_audit_path_bridges(t, gpu, nic, br, MAX_BRIDGES), i;
	const char *devs[3];
	struct json_object *ev;

	br[n++] = gpu;
	br[n++] = nic;
	for (i = 0; i < n; i++) {
		int m = t->dev[br[i]].mps;

		if (m < 0)
			continue;
		g->any = true;
		if (lo < 0 || m < t->dev[lo].mps)
			lo = br[i];
		if (hi < 0 || m > t->dev[hi].mps)
			hi = br[i];
	}
	if (lo < 0 || t->dev[lo].mps == t->dev[hi].mps)
		return 0;
	devs[0] = t->dev[lo].pci;
	devs[1] = t->dev[hi].pci;
	devs[2] = NULL;
	ev = json_object_new_object();
	json_object_object_add(ev, "min_mps", json_object_new_int(t->dev[lo].mps));
	json_object_object_add(ev, "max_mps", json_object_new_int(t->dev[hi].mps));
	json_object_object_add(ev, "gpu", jstr(t->dev[gpu].pci));
	json_object_object_add(ev, "nic", jstr(t->dev[nic].pci));
	return aff_audit_add(g->a, GDR, AFF_SEV_WARN, t->dev[lo].pci, devs, ev,
			     "boot with pci=pcie_bus_perf (or set one Max Payload on the path in the BIOS) so every link of the path carries the largest payload its ends share",
			     "PCIe Max Payload differs on the path between GPU %s and NIC %s: %d bytes on %s, %d on %s",
			     t->dev[gpu].pci, t->dev[nic].pci, t->dev[lo].mps, t->dev[lo].pci,
			     t->dev[hi].mps, t->dev[hi].pci);
}

static int relaxed(struct gdr *g, int nic)
{
	const struct aff_dev *d = &g->a->topo->dev[nic];
	const char *devs[2] = { d->pci, NULL };
	struct json_object *ev;

	if (d->relaxed < 0)
		return 0;
	g->any = true;
	if (d->relaxed)
		return 0;
	ev = json_object_new_object();
	json_object_object_add(ev, "relaxed_ordering", json_object_new_boolean(false));
	return aff_audit_add(g->a, GDR, AFF_SEV_WARN, d->pci, devs, ev,
			     "enable Relaxed Ordering on the NIC: setpci -s BDF CAP_EXP+8.w=0010:0010 (lost on reboot), and on ConnectX mlxconfig -d BDF set PCI_WR_ORDERING=1",
			     "NIC %s has PCIe Relaxed Ordering off: its writes into GPU memory are strictly ordered, which costs bandwidth on many root complexes (Grace, AMD)",
			     d->pci);
}

static int bar1(struct gdr *g, int gpu)
{
	const struct aff_dev *d = &g->a->topo->dev[gpu];
	const char *devs[2] = { d->pci, NULL };
	struct json_object *ev;

	if (d->bar1 < 0)
		return 0;
	g->any = true;
	if (d->bar1 >= BAR1_MIN)
		return 0;
	ev = json_object_new_object();
	json_object_object_add(ev, "bar1_bytes", json_object_new_int64(d->bar1));
	return aff_audit_add(g->a, GDR, AFF_SEV_WARN, d->pci, devs, ev,
			     "enable Above 4G Decoding and Resizable BAR in the BIOS (nvidia-smi -q -d MEMORY shows BAR1 Memory Usage)",
			     "GPU %s has a BAR1 of %lld MiB: GPUDirect RDMA maps GPU memory for the NIC through this window, and NCCL's buffers alone can exhaust it",
			     d->pci, d->bar1 >> 20);
}

static int once(struct gdr *g, int dev)
{
	if (g->seen[dev])
		return 0;
	g->seen[dev] = true;
	return 1;
}

/* The items of one pair: each device once (a NIC shared by two GPUs, ...). */
static int pair(struct gdr *g, int gpu, int nic)
{
	int rc = 0;

	if (once(g, gpu)) {
		rc = iommu(g, gpu, nic);
		if (!rc)
			rc = read_request(g, gpu);
		if (!rc)
			rc = bar1(g, gpu);
	}
	if (!rc && once(g, nic)) {
		rc = iommu(g, nic, nic);
		if (!rc)
			rc = read_request(g, nic);
		if (!rc)
			rc = relaxed(g, nic);
	}
	if (!rc)
		rc = payload(g, gpu, nic);
	return rc;
}

int aff_audit_gdr(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	struct gdr g = { .a = a };
	size_t k, r;
	int rc;

	if (!a->plan)
		return aff_audit_undecided(a, GDR, "no GPU or accelerator");
	if (!t->nrail)
		return aff_audit_undecided(a, GDR, "no rail NIC");
	if (!t->extras)
		return aff_audit_undecided(a, GDR,
					   "the source has no PCIe settings (not a railbind snapshot)");
	g.seen = calloc(t->ndev + 1, sizeof(*g.seen));
	if (!g.seen)
		return -ENOMEM;
	rc = peer_route(&g);
	for (k = 0; k < a->plan->nrank && !rc; k++) {
		const struct aff_rank *rk = &a->plan->rank[k];

		for (r = 0; r < rk->rails.n && !rc; r++) {
			const struct aff_rail *rl = &t->rail[rk->rails.rail[r]];

			if (rl->rdma)
				rc = pair(&g, t->gpus[rk->gpu], rl->dev);
		}
	}
	free(g.seen);
	if (rc < 0)
		return rc;
	if (!g.any)
		return aff_audit_undecided(a, GDR,
					   "the source says nothing of peer memory, IOMMU, PCIe payload, Relaxed Ordering or BAR1");
	return 0;
}
