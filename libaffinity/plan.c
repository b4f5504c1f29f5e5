// SPDX-License-Identifier: LGPL-2.1-or-later
/* The per-rank plan: GPU, rails, CPUs, memory and environment. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_ident.h"
#include "plan.h"

static int allowed_set(const struct aff_topo *t, const char *cpus,
		       hwloc_bitmap_t set, char *err, size_t errlen)
{
	if (cpus) {
		if (aff_parse_cpulist(cpus, set) < 0)
			return aff_seterr(err, errlen, EINVAL,
					  "allowed CPUs \"%s\": expected a CPU list such as 0-13,112-125",
					  cpus);
	} else if (t->src == AFF_SRC_LIVE) {
		if (hwloc_get_cpubind(t->hw, set, HWLOC_CPUBIND_PROCESS) < 0)
			hwloc_bitmap_copy(set, t->all_cpus);
	} else {
		hwloc_bitmap_copy(set, t->all_cpus);
	}
	hwloc_bitmap_and(set, set, t->all_cpus);
	/* A file that names no CPU at all: CPUs stay unknown, not an error. */
	if (hwloc_bitmap_iszero(set) && !hwloc_bitmap_iszero(t->all_cpus))
		return aff_seterr(err, errlen, EINVAL,
				  "allowed CPUs \"%s\": none of them is on this node",
				  cpus ? cpus : "(process affinity)");
	return 0;
}

static int warn_gpu(struct aff_plan *p, const struct aff_rank *rk)
{
	const struct aff_topo *t = p->topo;
	const struct aff_dev *g = &t->dev[t->gpus[rk->gpu]];
	char msg[512];
	int rc = 0;

	if (g->loc < 0 || !t->loc[g->loc].known) {
		snprintf(msg, sizeof(msg),
			 "GPU %d (%s) has no known NUMA node (sysfs numa_node -1): its CPUs and memory are not narrowed; enable NUMA/SRAT proximity domains for PCIe in the BIOS, or correct the platform's ACPI _PXM",
			 rk->gpu, g->pci);
		rc = aff_plan_warn(p, "numa-unknown", g->pci, msg);
	}
	if (!rc && !rk->rails.n && t->nrail) {
		snprintf(msg, sizeof(msg), "GPU %d (%s) got no rail NIC",
			 rk->gpu, g->pci);
		rc = aff_plan_warn(p, "no-rail", g->pci, msg);
	}
	return rc;
}

static int fill_rank(struct aff_plan *p, size_t k, struct aff_rank *rk)
{
	const struct aff_topo *t = p->topo;
	const struct aff_dev *g = &t->dev[t->gpus[rk->gpu]];
	size_t i;

	if (g->loc >= 0 && t->loc[g->loc].known) {
		rk->mems = hwloc_bitmap_dup(t->loc[g->loc].mems);
		if (!rk->mems || !(rk->mems_str = aff_bitmap_list(rk->mems)))
			return -ENOMEM;
	}
	if (!hwloc_bitmap_iszero(rk->cpus) &&
	    !(rk->cpus_str = aff_bitmap_list(rk->cpus)))
		return -ENOMEM;
	rk->nic_names = calloc(rk->rails.n + 1, sizeof(*rk->nic_names));
	if (!rk->nic_names)
		return -ENOMEM;
	for (i = 0; i < rk->rails.n; i++) {
		const struct aff_rail *r = &t->rail[rk->rails.rail[i]];

		rk->nic_names[i] = r->name ? r->name : t->dev[r->dev].pci;
	}
	return aff_plan_rank_env_build(p, k, rk);
}

static void plan_free(struct aff_plan *p)
{
	size_t i, j;

	for (i = 0; i < p->nrank; i++) {
		struct aff_rank *rk = &p->rank[i];

		free(rk->rails.rail);
		hwloc_bitmap_free(rk->cpus);
		hwloc_bitmap_free(rk->mems);
		free(rk->cpus_str);
		free(rk->mems_str);
		for (j = 0; rk->env && rk->env[j]; j++)
			free(rk->env[j]);
		free(rk->env);
		free(rk->nic_names);
		free(rk->lost.rail);
		free(rk->nccl.rail);
		free(rk->nccl_note);
	}
	for (i = 0; i < p->nexcl; i++) {
		free(p->excl[i].name);
		free(p->excl[i].message);
	}
	free(p->excl);
	for (i = 0; i < p->nwarn; i++) {
		free(p->warn[i].id);
		free(p->warn[i].subject);
		free(p->warn[i].message);
	}
	free(p->warn);
	free(p->rank);
	free(p->nccl_ib_hca);
	free(p->socket_ifname);
	free(p->ucx_node);
	free(p->node_rail);
	free(p->uverbs);
	aff_topo_unref(p->topo);
	free(p);
}

static int plan_compute(struct aff_plan *p, const struct aff_plan_spec *spec,
			char *err, size_t errlen)
{
	struct aff_topo *t = p->topo;
	hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
	hwloc_bitmap_t *cpus = NULL;
	struct aff_rail_set *rails = NULL;
	int *gpu = NULL, *mig = NULL;
	size_t i, n = 0;
	int rc = -ENOMEM;

	if (!allowed)
		goto out;
	/* One rank per GPU named, or per MIG instance named (on its parent GPU). */
	rc = aff_visible_select(t, spec->visible_gpus, &gpu, &mig, &n, err, errlen);
	if (!rc && !n)
		rc = aff_seterr(err, errlen, ENODEV,
				"%s: no accelerator to plan for", t->source);
	if (!rc)
		rc = allowed_set(t, spec->allowed_cpus, allowed, err, errlen);
	if (rc)
		goto out;
	rc = -ENOMEM;
	cpus = calloc(n + 1, sizeof(*cpus));
	rails = calloc(n + 1, sizeof(*rails));
	/* n >= 1 here (no GPU is -ENODEV above), which the analyzer does not follow. */
	p->rank = calloc(n, sizeof(*p->rank)); // NOLINT(clang-analyzer-optin.portability.UnixAPI)
	if (!cpus || !rails || !p->rank)
		goto out;
	for (i = 0; i < n; i++)
		if (!(cpus[i] = hwloc_bitmap_alloc()))
			goto out;
	rc = aff_plan_node_env(p);
	if (!rc)
		rc = aff_plan_gid_env(p);
	if (!rc)
		rc = aff_plan_uverbs(p);
	if (!rc)
		rc = aff_assign_rails(t, gpu, n, rails);
	if (!rc)
		rc = aff_split_cpus(t, gpu, n, allowed, cpus);
	for (i = 0; i < n && !rc; i++) {
		struct aff_rank *rk = &p->rank[i];

		rk->gpu = gpu[i];
		rk->mig = mig[i];
		rk->rails = rails[i];
		rails[i].rail = NULL;
		rk->cpus = cpus[i];
		cpus[i] = NULL;
		p->nrank++;
		rc = fill_rank(p, i, rk);
		if (!rc)
			rc = warn_gpu(p, rk);
	}
	if (!rc)
		rc = aff_plan_judge(p);
out:
	for (i = 0; i < n; i++) {
		hwloc_bitmap_free(cpus ? cpus[i] : NULL);
		free(rails ? rails[i].rail : NULL);
	}
	free(cpus);
	free(rails);
	free(gpu);
	free(mig);
	hwloc_bitmap_free(allowed);
	if (rc == -ENOMEM)
		aff_seterr(err, errlen, ENOMEM, "%s: out of memory", t->source);
	return rc;
}

AFF_EXPORT int aff_plan_new(struct aff_topo *topo,
			    const struct aff_plan_spec *spec,
			    struct aff_plan **out, char *err, size_t errlen)
{
	static const struct aff_plan_spec defaults;
	struct aff_plan *p;
	int rc;

	*out = NULL;
	if (!spec)
		spec = &defaults;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->refcount = 1;
	p->topo = aff_topo_ref(topo);
	p->flags = spec->flags;
	if (topo->ctx->conf.mem_bind)
		p->flags |= AFF_PLAN_MEM_BIND;
	rc = plan_compute(p, spec, err, errlen);
	if (rc < 0) {
		plan_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

AFF_EXPORT struct aff_plan *aff_plan_ref(struct aff_plan *p)
{
	if (p)
		p->refcount++;
	return p;
}

AFF_EXPORT struct aff_plan *aff_plan_unref(struct aff_plan *p)
{
	if (p && --p->refcount <= 0)
		plan_free(p);
	return NULL;
}

AFF_EXPORT size_t aff_plan_rank_count(const struct aff_plan *p)
{
	return p->nrank;
}

AFF_EXPORT const char *aff_plan_rank_cpus(const struct aff_plan *p, size_t r)
{
	return r < p->nrank ? p->rank[r].cpus_str : NULL;
}

AFF_EXPORT const char *aff_plan_rank_mems(const struct aff_plan *p, size_t r)
{
	return r < p->nrank ? p->rank[r].mems_str : NULL;
}

AFF_EXPORT const char *aff_plan_rank_gpu(const struct aff_plan *p, size_t r)
{
	return r < p->nrank ? p->topo->dev[p->topo->gpus[p->rank[r].gpu]].pci :
			      NULL;
}

AFF_EXPORT size_t aff_plan_rank_nic_count(const struct aff_plan *p, size_t r)
{
	return r < p->nrank ? p->rank[r].rails.n : 0;
}

AFF_EXPORT const char *aff_plan_rank_nic(const struct aff_plan *p, size_t r,
					 size_t i)
{
	if (r >= p->nrank || i >= p->rank[r].rails.n)
		return NULL;
	return p->rank[r].nic_names[i];
}

AFF_EXPORT const char *const *aff_plan_rank_env(const struct aff_plan *p,
						size_t r)
{
	return r < p->nrank ? (const char *const *)p->rank[r].env : NULL;
}
