// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * verify, one process at a time: what it uses and where it belongs, then the
 * checks of verify_checks.c, and its railbind.verify/1 object.
 *
 * Which GPU: the GPU device files it holds (/dev/nvidiaN, a render node),
 * narrowed by CUDA_VISIBLE_DEVICES (ROCR_/HIP_VISIBLE_DEVICES for AMD) when it
 * holds more than one or only the driver's shared files (nvidia-uvm, kfd):
 * CUDA opens every device it can see. Indices count the GPUs of that vendor in
 * PCI order (what railbind's plans set with CUDA_DEVICE_ORDER=PCI_BUS_ID),
 * within NVIDIA_VISIBLE_DEVICES in a container.
 *
 * Where it belongs, first found wins: its broker lease (GPU and CPUs the
 * broker gave it), the RAILBIND_* variables `railbind run` and the Slurm
 * plugin set, its launcher's local rank (LOCAL_RANK, SLURM_LOCALID, ...) as
 * the plan's rank when no *_VISIBLE_DEVICES narrows the GPUs (torchrun's rule:
 * device = local rank), else the plan's rank of the GPU it uses. The plan is
 * computed within the process's cgroup cpuset, as the broker would.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "verify.h"

static bool vendor_is(const struct aff_topo *t, int g, int vendor)
{
	int v = t->dev[t->gpus[g]].vendor;

	return v < 0 || v == vendor;
}

/* The plan of the processes confined to @allowed, computed once per cpuset. */
struct aff_plan *aff_verify_plan(struct aff_verify *v, const char *allowed, const char **why)
{
	struct aff_plan_spec spec = { 0 };
	struct aff_vplan *vp;
	char *all = NULL;
	size_t i;
	int rc;

	for (i = 0; i < v->nplans; i++)
		if ((!allowed && !v->plans[i].allowed) ||
		    (allowed && v->plans[i].allowed && !strcmp(allowed, v->plans[i].allowed))) {
			*why = v->plans[i].err;
			return v->plans[i].plan;
		}
	vp = realloc(v->plans, (v->nplans + 1) * sizeof(*vp));
	if (!vp) {
		*why = "out of memory";
		return NULL;
	}
	v->plans = vp;
	vp = &v->plans[v->nplans];
	memset(vp, 0, sizeof(*vp));
	vp->allowed = allowed ? strdup(allowed) : NULL;
	if (allowed && !vp->allowed) {
		*why = "out of memory";
		return NULL;
	}
	v->nplans++;
	/* The whole node, never the caller's own affinity (aff_plan_new's default). */
	spec.allowed_cpus = allowed ? allowed : (all = aff_bitmap_list(v->topo->all_cpus));
	if (!allowed && all && !*all)
		spec.allowed_cpus = NULL;	/* a source without CPUs */
	if (!v->topo->ngpu)
		snprintf(vp->err, sizeof(vp->err), "%s has no GPU or accelerator",
			 v->topo->source);
	else if ((rc = aff_plan_new(v->topo, &spec, &vp->plan, vp->err, sizeof(vp->err))) < 0 &&
		 !vp->err[0])
		snprintf(vp->err, sizeof(vp->err), "%s", strerror(-rc));
	free(all);
	*why = vp->err;
	return vp->plan;
}

/* ---- which GPU ---- */

/*
 * The GPUs a *_VISIBLE_DEVICES value names, among the vendor's GPUs in PCI
 * order (@base narrows them: NVIDIA_VISIBLE_DEVICES). Entries are indices,
 * GPU UUIDs (from the driver's information files) or PCI addresses; like
 * CUDA, the list ends at the first entry that names nothing. Sets bits in @out.
 */
static void visible_gpus(const struct aff_verify *v, const char *list, int vendor,
			 const char *base, hwloc_bitmap_t out)
{
	const struct aff_topo *t = v->topo;
	int order[256];
	size_t n = 0, i;
	char *copy, *item, *save = NULL;

	if (base && *base && strcmp(base, "all")) {
		hwloc_bitmap_t b = hwloc_bitmap_alloc();

		if (b) {
			visible_gpus(v, base, vendor, NULL, b);
			for (i = 0; i < t->ngpu && n < 256; i++)
				if (hwloc_bitmap_isset(b, (unsigned)i))
					order[n++] = (int)i;
			hwloc_bitmap_free(b);
		}
	} else {
		for (i = 0; i < t->ngpu && n < 256; i++)
			if (vendor_is(t, (int)i, vendor))
				order[n++] = (int)i;
	}
	copy = strdup(list);
	for (item = copy ? strtok_r(copy, ",", &save) : NULL; item;
	     item = strtok_r(NULL, ",", &save)) {
		char *end;
		long k = strtol(item, &end, 10);
		int g = -1;

		while (*item == ' ')
			item++;
		if (end != item && !*end) {
			g = k >= 0 && (size_t)k < n ? order[k] : -1;
		} else {
			for (i = 0; i < v->devs.n && g < 0; i++)
				if (v->devs.v[i].uuid[0] && !strcmp(v->devs.v[i].uuid, item))
					g = aff_vj_gpu_by_pci(t, v->devs.v[i].pci);
			if (g < 0)
				g = aff_vj_gpu_by_pci(t, item);
		}
		if (g < 0)
			break;
		hwloc_bitmap_set(out, (unsigned)g);
	}
	free(copy);
}

static void find_gpus(const struct aff_verify *v, struct judged *j, struct json_object *arr)
{
	const struct aff_topo *t = v->topo;
	const struct aff_vproc *p = j->p;
	hwloc_bitmap_t fd = hwloc_bitmap_alloc(), env = hwloc_bitmap_alloc();
	bool nv = false, amd = false;
	const char *envvar = NULL;
	size_t i;
	int g;

	if (!fd || !env)
		goto out;
	for (i = 0; i < p->nheld; i++) {
		const struct aff_vdev *d = p->held[i];

		if (d->kind == AFF_VDEV_NV_GPU || d->kind == AFF_VDEV_NV_UVM)
			nv = true;
		if (d->kind == AFF_VDEV_DRM || d->kind == AFF_VDEV_KFD)
			amd = true;
		if (d->kind != AFF_VDEV_NV_GPU && d->kind != AFF_VDEV_DRM)
			continue;
		g = aff_vj_gpu_by_pci(t, d->pci);
		if (g >= 0)
			hwloc_bitmap_set(fd, (unsigned)g);
		else if (d->kind == AFF_VDEV_NV_GPU)
			aff_vj_unknown(j, "gpu", d->pci[0] ?
				    "holds %s, GPU %s, which the topology does not have" :
				    "holds %s%s, an NVIDIA minor /proc/driver/nvidia does not name",
				    p->held_path[i], d->pci);
	}
	if (nv && p->env[AFF_VENV_CUDA_VISIBLE]) {
		envvar = "CUDA_VISIBLE_DEVICES";
		visible_gpus(v, p->env[AFF_VENV_CUDA_VISIBLE], 0x10de,
			     p->env[AFF_VENV_NVIDIA_VISIBLE], env);
	} else if (amd && (p->env[AFF_VENV_ROCR_VISIBLE] || p->env[AFF_VENV_HIP_VISIBLE])) {
		envvar = p->env[AFF_VENV_ROCR_VISIBLE] ? "ROCR_VISIBLE_DEVICES" :
							  "HIP_VISIBLE_DEVICES";
		visible_gpus(v, p->env[AFF_VENV_ROCR_VISIBLE] ? p->env[AFF_VENV_ROCR_VISIBLE] :
			     p->env[AFF_VENV_HIP_VISIBLE], 0x1002, NULL, env);
	}
	/* The files say what it holds; the variable which of those it uses. */
	if (hwloc_bitmap_iszero(env) || (!hwloc_bitmap_iszero(fd) &&
					  !hwloc_bitmap_intersects(fd, env)))
		envvar = NULL;
	else if (hwloc_bitmap_iszero(fd))
		hwloc_bitmap_copy(fd, env);
	else
		hwloc_bitmap_and(fd, fd, env);
	hwloc_bitmap_foreach_begin(g, fd) {
		struct json_object *o = json_object_new_object(), *via = json_object_new_array();
		int numa = aff_vj_gpu_numa(t, g);

		if (j->ngpu >= sizeof(j->gpu) / sizeof(j->gpu[0]))
			break;
		j->gpu[j->ngpu++] = g;
		for (i = 0; i < p->nheld; i++)
			if (p->held[i]->pci[0] && !strcmp(p->held[i]->pci, aff_vj_gpu_pci(t, g)))
				json_object_array_add(via, json_object_new_string(p->held_path[i]));
		if (envvar)
			json_object_array_add(via, json_object_new_string(envvar));
		json_object_object_add(o, "pci", json_object_new_string(aff_vj_gpu_pci(t, g)));
		json_object_object_add(o, "index", json_object_new_int(g));
		json_object_object_add(o, "numa", numa >= 0 ? json_object_new_int(numa) : NULL);
		json_object_object_add(o, "via", via);
		json_object_array_add(arr, o);
	}
	hwloc_bitmap_foreach_end();
out:
	hwloc_bitmap_free(fd);
	hwloc_bitmap_free(env);
}

/* ---- where it belongs ---- */

static int parse_rank(const char *s)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	v = strtol(s, &end, 10);
	return *end || v < 0 || v > 65535 ? -1 : (int)v;
}

static int plan_rank_of_gpu(const struct aff_plan *plan, int g)
{
	size_t k;

	for (k = 0; plan && k < plan->nrank; k++)
		if (plan->rank[k].gpu == g)
			return (int)k;
	return -1;
}

static void find_reference(struct aff_verify *v, struct judged *j)
{
	const struct aff_topo *t = v->topo;
	const struct aff_vproc *p = j->p;
	const char *why = NULL;
	int lr;

	j->ref_gpu = -1;
	j->rank = -1;
	j->lease = aff_vleases_find(&v->leases, p->pid, p->start);
	j->plan = aff_verify_plan(v, p->cpuset, &why);
	if (!j->plan)
		j->plan = aff_verify_plan(v, NULL, &why);
	if (!j->plan)
		aff_vj_unknown(j, "plan", "no plan to judge against: %s", why ? why : "unknown");
	if (j->lease && j->lease->gpu && (j->ref_gpu = aff_vj_gpu_by_pci(t, j->lease->gpu)) >= 0) {
		j->ref = REF_LEASE;
	} else if (p->env[AFF_VENV_RB_GPU] &&
		   (j->ref_gpu = aff_vj_gpu_by_pci(t, p->env[AFF_VENV_RB_GPU])) >= 0) {
		j->ref = REF_ENV;
	} else if ((lr = parse_rank(p->env[AFF_VENV_LOCAL_RANK])) >= 0 && j->plan &&
		   (size_t)lr < j->plan->nrank && !p->env[AFF_VENV_CUDA_VISIBLE] &&
		   !p->env[AFF_VENV_ROCR_VISIBLE] && !p->env[AFF_VENV_HIP_VISIBLE]) {
		j->ref_gpu = j->plan->rank[lr].gpu;
		j->ref = REF_LOCAL_RANK;
	} else if (j->ngpu == 1) {
		j->ref_gpu = j->gpu[0];
		j->ref = REF_GPU;
	}
	j->rank = j->ref_gpu >= 0 ? plan_rank_of_gpu(j->plan, j->ref_gpu) : -1;
}

static void find_planned(const struct aff_verify *v, const struct judged *j,
			 struct planned *pl, struct json_object *obj)
{
	const struct aff_topo *t = v->topo;
	const struct aff_vproc *p = j->p;
	const struct aff_rank *rk = j->rank >= 0 ? &j->plan->rank[j->rank] : NULL;
	struct json_object *o, *nics;
	const char *cpus = NULL;
	size_t i;

	memset(pl, 0, sizeof(*pl));
	if (j->lease && j->lease->cpus) {
		cpus = j->lease->cpus;
		pl->cpus_from = "lease";
	} else if (p->env[AFF_VENV_RB_CPUS] && *p->env[AFF_VENV_RB_CPUS]) {
		cpus = p->env[AFF_VENV_RB_CPUS];
		pl->cpus_from = "railbind-env";
	} else if (rk && rk->cpus_str) {
		cpus = rk->cpus_str;
		pl->cpus_from = "plan";
	}
	if (cpus) {
		pl->cpus = hwloc_bitmap_alloc();
		if (pl->cpus && aff_parse_cpulist(cpus, pl->cpus) < 0) {
			hwloc_bitmap_free(pl->cpus);
			pl->cpus = NULL;
		}
	}
	pl->mems = p->env[AFF_VENV_RB_MEMS] && *p->env[AFF_VENV_RB_MEMS] ?
		   p->env[AFF_VENV_RB_MEMS] : rk ? rk->mems_str : NULL;
	if (p->env[AFF_VENV_RB_NICS] && *p->env[AFF_VENV_RB_NICS]) {
		char *copy = strdup(p->env[AFF_VENV_RB_NICS]), *item, *save = NULL;

		for (item = copy ? strtok_r(copy, ",", &save) : NULL; item && pl->nrails < 32;
		     item = strtok_r(NULL, ",", &save)) {
			int r = aff_vj_rail(t, item, item);

			if (r >= 0)
				pl->rails[pl->nrails++] = r;
		}
		free(copy);
	}
	if (!pl->nrails && rk)
		for (i = 0; i < rk->rails.n && pl->nrails < 32; i++)
			pl->rails[pl->nrails++] = rk->rails.rail[i];
	if (j->ref_gpu < 0 && !pl->cpus) {
		json_object_object_add(obj, "planned", NULL);
		return;
	}
	o = json_object_new_object();
	nics = json_object_new_array();
	json_object_object_add(o, "from", aff_vj_str(aff_vj_ref_names[j->ref]));
	json_object_object_add(o, "gpu", j->ref_gpu >= 0 ?
			       json_object_new_string(aff_vj_gpu_pci(t, j->ref_gpu)) : NULL);
	json_object_object_add(o, "local_rank", j->rank >= 0 ? json_object_new_int(j->rank) : NULL);
	for (i = 0; i < pl->nrails; i++)
		json_object_array_add(nics, json_object_new_string(
			aff_audit_rail_name(t, pl->rails[i])));
	json_object_object_add(o, "nics", nics);
	json_object_object_add(o, "cpus", pl->cpus ? aff_vj_cpulist(pl->cpus) : NULL);
	json_object_object_add(o, "cpus_from", aff_vj_str(pl->cpus_from));
	json_object_object_add(o, "mems", aff_vj_str(pl->mems));
	json_object_object_add(obj, "planned", o);
}

/*
 * NCCL_IB_HCA as NCCL reads it (src/transport/net_ib/init.cc, ncclIbInitDevices;
 * src/misc/utils.cc, parseStringList and matchIfList): a leading '^' excludes,
 * then a leading '=' matches names exactly, else each entry is a prefix
 * ("mlx5_1" also takes mlx5_10..mlx5_19). Entries are split at ',', each
 * "name[:port[:rail[:plane]]]"; one with an empty name is dropped, only the
 * first 32 are read (MAX_IB_DEVS), an absent or empty port matches any port.
 * An empty list matches every device, so "^" alone excludes them all. @port
 * is the verbs port; 0 (unknown) matches any entry's port.
 */
bool aff_vj_nccl_hca_selects(const char *filter, const char *name, int port)
{
	bool not = false, exact = false, hit = false;
	char *copy, *item, *save = NULL;
	int entries = 0;

	if (*filter == '^') {
		not = true;
		filter++;
	}
	if (*filter == '=') {
		exact = true;
		filter++;
	}
	copy = strdup(filter);
	if (!copy)
		return false;
	for (item = strtok_r(copy, ",", &save); item && entries < 32;
	     item = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(item, ':');
		int want = -1;

		if (colon) {
			char *next = strchr(colon + 1, ':');

			*colon = '\0';
			if (next)
				*next = '\0';
			if (colon[1])
				want = atoi(colon + 1);
		}
		if (!*item)
			continue;
		entries++;
		if (!hit)
			hit = (exact ? !strcmp(name, item) : !strncmp(name, item, strlen(item))) &&
			      (want == -1 || port <= 0 || want == port);
	}
	free(copy);
	if (!entries)
		hit = true;
	return hit != not;
}

/* UCX_NET_DEVICES: "all", or devices as dev:port, names matched exactly. */
static bool ucx_selects(const char *list, const char *name)
{
	char *copy, *item, *save = NULL;
	bool hit = false;

	if (!strcmp(list, "all"))
		return true;
	copy = strdup(list);
	for (item = copy ? strtok_r(copy, ",", &save) : NULL; item && !hit;
	     item = strtok_r(NULL, ",", &save)) {
		size_t n = strcspn(item, ":");

		hit = strlen(name) == n && !strncmp(item, name, n);
	}
	free(copy);
	return hit;
}

/* "=" and its planned rails' ports: the per-rank NCCL_IB_HCA an older railbind gave. */
static void own_hca(const struct aff_topo *t, const struct planned *pl, char *buf, size_t len)
{
	size_t i;

	*buf = '\0';
	for (i = 0; i < pl->nrails; i++) {
		const struct aff_rail *r = &t->rail[pl->rails[i]];

		if (r->name)
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s:%d", *buf ? "," : "=",
				 r->name, r->port > 0 ? r->port : 1);
	}
}

/* ---- one process ---- */

const char *aff_verify_not_judged(const struct aff_verify *v, const struct aff_vproc *p)
{
	const struct aff_topo *t = v->topo;
	bool rdma = false, drm = false, gpu = false, rank, narrowed;
	size_t i, k, held = 0;

	for (i = 0; i < p->nheld; i++) {
		const struct aff_vdev *d = p->held[i];
		int g = -1;

		if (d->kind == AFF_VDEV_NV_GPU || d->kind == AFF_VDEV_DRM)
			g = aff_vj_gpu_by_pci(t, d->pci);
		if (d->kind == AFF_VDEV_NV_GPU || d->kind == AFF_VDEV_NV_UVM ||
		    d->kind == AFF_VDEV_KFD || g >= 0)
			gpu = true;
		drm |= d->kind == AFF_VDEV_DRM && g < 0;
		rdma |= d->kind == AFF_VDEV_UVERBS;
		/* Distinct GPUs: a GPU may be held through several files. */
		for (k = 0; g >= 0 && k < i; k++)
			if ((p->held[k]->kind == AFF_VDEV_NV_GPU || p->held[k]->kind == AFF_VDEV_DRM) &&
			    !strcmp(p->held[k]->pci, d->pci))
				g = -1;
		held += g >= 0;
	}
	rank = aff_vleases_find(&v->leases, p->pid, p->start) || p->env[AFF_VENV_RB_GPU] ||
	       p->env[AFF_VENV_RB_RANK] || p->env[AFF_VENV_LOCAL_RANK];
	narrowed = p->env[AFF_VENV_CUDA_VISIBLE] || p->env[AFF_VENV_ROCR_VISIBLE] ||
		   p->env[AFF_VENV_HIP_VISIBLE];
	if (gpu && !rank && !narrowed && t->ngpu > 1 && held >= t->ngpu)
		return "holds every GPU of the node and is no rank (no lease, no RAILBIND_* or launcher local rank, no *_VISIBLE_DEVICES): a node service such as nvidia-persistenced or DCGM, not judged";
	if (gpu || (rdma && rank))
		return NULL;
	if (rdma)
		return "uses RDMA devices but no GPU, and is no rank (no lease, no RAILBIND_* or launcher local rank): an RDMA service, not judged";
	if (drm)
		return "holds render nodes of devices that are no accelerator of the topology (a display), not judged";
	return "holds no GPU or RDMA device: nothing to verify";
}

static void add_nic_use(struct nic_use *u, int r)
{
	size_t i;

	for (i = 0; i < u->n; i++)
		if (u->rail[i] == r)
			return;
	if (u->n < sizeof(u->rail) / sizeof(u->rail[0]))
		u->rail[u->n++] = r;
}

/*
 * Of the rails NCCL_IB_HCA lets NCCL open, the ones it would give the GPU:
 * those at the best path class from it (NCCL's topology search ranks a GPU's
 * NICs by path, src/graph/search.cc). A rank given the node's rails uses its
 * own; one given another GPU's rail alone uses that one.
 */
static void nccl_picks(const struct aff_topo *t, const struct judged *j, struct nic_use *u)
{
	enum aff_path best = AFF_PATH_NONE;
	size_t i, k = 0;

	if (!j->ngpu || !u->n)
		return;
	for (i = 0; i < u->n; i++) {
		enum aff_path p = aff_vj_best_path(t, j, u->rail[i]);

		if (p != AFF_PATH_NONE && (best == AFF_PATH_NONE || p < best))
			best = p;
	}
	if (best == AFF_PATH_NONE)
		return;
	for (i = 0; i < u->n; i++)
		if (aff_vj_best_path(t, j, u->rail[i]) == best)
			u->rail[k++] = u->rail[i];
	u->n = k;
}

static void find_nics(const struct aff_verify *v, struct judged *j, struct nic_use *use,
		      struct json_object *arr)
{
	const struct aff_topo *t = v->topo;
	const struct aff_vproc *p = j->p;
	size_t i;

	use[0].source = "open devices";
	use[1].source = "NCCL_IB_HCA";
	use[2].source = "UCX_NET_DEVICES";
	for (i = 0; i < p->nheld; i++) {
		const struct aff_vdev *d = p->held[i];
		struct json_object *o;
		int r, numa;

		if (d->kind != AFF_VDEV_UVERBS)
			continue;
		r = aff_vj_rail(t, d->pci, d->name);
		if (r < 0) {
			aff_vj_unknown(j, "nic", "holds %s (%s), which is no rail NIC of the topology",
				    p->held_path[i], d->name[0] ? d->name : d->pci[0] ? d->pci : "unknown device");
			continue;
		}
		add_nic_use(&use[0], r);
		numa = aff_audit_dev_numa(t, t->rail[r].dev);
		o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(aff_audit_rail_name(t, r)));
		json_object_object_add(o, "pci", json_object_new_string(t->dev[t->rail[r].dev].pci));
		json_object_object_add(o, "numa", numa >= 0 ? json_object_new_int(numa) : NULL);
		json_object_object_add(o, "path", j->ngpu ?
				       aff_vj_str(aff_path_name(aff_vj_best_path(t, j, r))) : NULL);
		json_object_object_add(o, "via", json_object_new_string(p->held_path[i]));
		json_object_array_add(arr, o);
	}
	for (i = 0; i < t->nrail; i++) {
		const struct aff_rail *r = &t->rail[i];

		if (!r->name || !r->rdma)
			continue;
		/* NCCL opens only ACTIVE ports; UCX does not look at the state. */
		if (p->env[AFF_VENV_NCCL_IB_HCA] && (!r->port_state || !strcmp(r->port_state, "ACTIVE")) && *p->env[AFF_VENV_NCCL_IB_HCA] &&
		    aff_vj_nccl_hca_selects(p->env[AFF_VENV_NCCL_IB_HCA], r->name, r->port))
			add_nic_use(&use[1], (int)i);
		if (p->env[AFF_VENV_UCX_NET_DEVICES] && *p->env[AFF_VENV_UCX_NET_DEVICES] &&
		    ucx_selects(p->env[AFF_VENV_UCX_NET_DEVICES], r->name))
			add_nic_use(&use[2], (int)i);
	}
	nccl_picks(t, j, &use[1]);
	/* Selecting every rail says nothing about which one it uses. */
	if (use[2].n == t->nrail)
		use[2].n = 0;
	if (use[1].n == t->nrail)
		use[1].n = 0;
}

static struct json_object *env_json(const struct aff_vproc *p)
{
	struct json_object *o;
	size_t i;

	if (p->unreadable & AFF_VP_NO_ENV)
		return NULL;
	o = json_object_new_object();
	for (i = 0; i < AFF_VENV_COUNT; i++) {
		const char *name = aff_venv_names[i];

		if (i == AFF_VENV_LOCAL_RANK)
			name = p->env_rank_var;
		else if (i == AFF_VENV_JOB)
			name = p->env_job_var;
		if (p->env[i] && name)
			json_object_object_add(o, name, json_object_new_string(p->env[i]));
	}
	return o;
}

static struct json_object *lease_json(const struct aff_vlease *l)
{
	struct json_object *o;

	if (!l)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "job", json_object_new_string(l->job));
	json_object_object_add(o, "rank", json_object_new_int64(l->rank));
	json_object_object_add(o, "gpu", aff_vj_str(l->gpu));
	json_object_object_add(o, "cpus", aff_vj_str(l->cpus));
	return o;
}

static int judge_one(struct aff_verify *v, struct judged *j)
{
	const struct aff_topo *t = v->topo;
	struct aff_vproc *p = j->p;
	struct json_object *o = j->obj, *gpus = json_object_new_array();
	struct json_object *nics = json_object_new_array(), *cpus = json_object_new_object();
	hwloc_bitmap_t target = hwloc_bitmap_alloc();
	struct nic_use use[3] = { 0 };
	struct planned pl = { 0 };
	char subject[160];

	if (!gpus || !nics || !cpus || !target) {
		json_object_put(gpus);
		json_object_put(nics);
		json_object_put(cpus);
		hwloc_bitmap_free(target);
		return -ENOMEM;
	}
	find_gpus(v, j, gpus);
	find_nics(v, j, use, nics);
	find_reference(v, j);
	json_object_object_add(o, "gpus", gpus);
	json_object_object_add(o, "nics", nics);
	json_object_object_add(cpus, "allowed", aff_vj_cpulist(p->allowed));
	json_object_object_add(cpus, "ran", aff_vj_cpulist(p->ran));
	json_object_object_add(cpus, "threads", json_object_new_int((int)p->nthreads));
	json_object_object_add(cpus, "cpuset", aff_vj_str(p->cpuset));
	json_object_object_add(o, "cpus", cpus);
	json_object_object_add(o, "env", env_json(p));
	if (p->unreadable & AFF_VP_NO_ENV)
		aff_vj_unknown(j, "env", "%s", p->unreadable_why[3]);
	json_object_object_add(o, "lease", lease_json(j->lease));
	find_planned(v, j, &pl, o);
	own_hca(t, &pl, j->own_hca, sizeof(j->own_hca));
	if (j->ngpu == 1)
		snprintf(subject, sizeof(subject), "its GPU %s is", aff_vj_gpu_pci(t, j->gpu[0]));
	else if (j->ngpu)
		snprintf(subject, sizeof(subject), "its %zu GPUs are", j->ngpu);
	else
		snprintf(subject, sizeof(subject), "its NIC%s %s", use[0].n > 1 ? "s are" : " is",
			 use[0].n ? aff_audit_rail_name(t, use[0].rail[0]) : "?");
	if (!j->ngpu && !use[0].n)
		aff_vj_unknown(j, "gpu", "holds %s, but which GPU it uses is not known (no GPU device file, no *_VISIBLE_DEVICES)",
			    p->nheld ? p->held_path[0] : "no GPU or RDMA device");
	aff_vj_check_gpu(v, j);
	if (aff_vj_target_nodes(v, j, target, use[0].rail, use[0].n)) {
		aff_vj_check_cpus(v, j, &pl, target, subject);
		aff_vj_check_memory(v, j, target, subject, o);
	} else {
		if (j->ngpu || use[0].n)
			aff_vj_unknown(j, "locality", "the NUMA node of its %s is not known (sysfs numa_node -1): CPUs and memory cannot be judged",
				    j->ngpu ? "GPU" : "NIC");
		json_object_object_add(o, "memory", NULL);
	}
	aff_vj_check_nics(v, j, &pl, use, 3);
	aff_vj_check_peers(v, j, &pl);
	aff_vj_check_roce(v, j, &pl, use, 3);
	hwloc_bitmap_free(pl.cpus);
	hwloc_bitmap_free(target);
	return 0;
}

static void finish(struct judged *j)
{
	const struct aff_vproc *p = j->p;
	enum aff_sev status = j->decided ? j->worst : AFF_SEV_UNKNOWN;
	struct json_object *rank = json_object_new_object();
	int lr = parse_rank(p->env[AFF_VENV_RB_RANK]);

	if (j->lease)
		lr = (int)j->lease->rank;
	else if (lr < 0)
		lr = parse_rank(p->env[AFF_VENV_LOCAL_RANK]);
	json_object_object_add(rank, "local_rank", lr >= 0 ? json_object_new_int(lr) : NULL);
	json_object_object_add(rank, "job", j->lease ? json_object_new_string(j->lease->job) :
			       aff_vj_str(p->env[AFF_VENV_JOB]));
	json_object_object_add(j->obj, "rank", rank);
	json_object_object_add(j->obj, "status", json_object_new_string(aff_sev_name(status)));
	json_object_object_add(j->obj, "findings", j->findings);
	json_object_object_add(j->obj, "unknown", j->unknown);
}

static struct json_object *proc_head(const struct aff_vproc *p)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "pid", json_object_new_int(p->pid));
	json_object_object_add(o, "start", json_object_new_int64((int64_t)p->start));
	json_object_object_add(o, "uid", json_object_new_int64((int64_t)p->uid));
	json_object_object_add(o, "comm", aff_vj_str(p->comm[0] ? p->comm : NULL));
	json_object_object_add(o, "cmdline", aff_vj_str(p->cmdline[0] ? p->cmdline : NULL));
	return o;
}

/* A process that could not be read: status unknown, the reason. */
static struct json_object *unreadable_json(const struct aff_vproc *p)
{
	struct json_object *o = proc_head(p), *u = json_object_new_array(), *e;

	e = json_object_new_object();
	json_object_object_add(e, "what", json_object_new_string("process"));
	json_object_object_add(e, "reason", json_object_new_string(p->reason));
	json_object_array_add(u, e);
	json_object_object_add(o, "status", json_object_new_string("unknown"));
	json_object_object_add(o, "state", json_object_new_string(
		p->state == AFF_VP_GONE ? "exited" : p->state == AFF_VP_REUSED ? "pid-reused" :
		p->state == AFF_VP_DENIED ? "unreadable" : "not-judged"));
	json_object_object_add(o, "findings", json_object_new_array());
	json_object_object_add(o, "unknown", u);
	return o;
}

int aff_verify_judge(struct aff_verify *v)
{
	struct judged *js = calloc(v->nproc + 1, sizeof(*js));
	struct json_object **objs = calloc(v->nproc + 1, sizeof(*objs));
	size_t i, n = 0;
	int rc = 0;

	if (!js || !objs) {
		free(js);
		free(objs);
		return -ENOMEM;
	}
	for (i = 0; i < v->nproc && !rc; i++) {
		struct aff_vproc *p = &v->procs[i];
		struct judged *j;

		const char *why = p->state == AFF_VP_OK ? aff_verify_not_judged(v, p) : NULL;

		if (p->state != AFF_VP_OK || why) {
			if (why)
				snprintf(p->reason, sizeof(p->reason), "process %d %s", (int)p->pid, why);
			objs[i] = unreadable_json(p);
			continue;
		}
		j = &js[n++];
		j->p = p;
		j->obj = objs[i] = proc_head(p);
		j->findings = json_object_new_array();
		j->unknown = json_object_new_array();
		if (!j->obj || !j->findings || !j->unknown)
			rc = -ENOMEM;
		else
			rc = judge_one(v, j);
	}
	if (!rc) {
		aff_vj_check_shared(v, js, n);
		aff_vj_check_hca(v, js, n);
	}
	for (i = 0; i < n; i++) {
		if (!rc) {
			finish(&js[i]);
		} else {
			json_object_put(js[i].findings);
			json_object_put(js[i].unknown);
		}
	}
	for (i = 0; i < v->nproc; i++) {
		if (!rc && objs[i])
			json_object_array_add(v->processes, objs[i]);
		else
			json_object_put(objs[i]);
	}
	free(objs);
	free(js);
	return rc;
}
