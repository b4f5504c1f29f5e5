// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * verify's verdicts: each process that uses a GPU or an RDMA device, against
 * where its plan or its lease puts it.
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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "verify.h"

const char *const aff_verify_check_ids[AFF_VERIFY_NCHECKS] = {
	"gpu-not-planned", "gpu-shared", "unbound", "cpu-numa", "cpus-outside-plan",
	"memory-far", "memory-policy", "nic-not-rail", "peer-cross-path",
};

/* Where the expected GPU came from. */
enum ref_src { REF_NONE, REF_GPU, REF_LOCAL_RANK, REF_ENV, REF_LEASE };
static const char *const ref_names[] = { NULL, "gpu", "local-rank", "railbind-env", "lease" };

/* One process while it is judged. */
struct judged {
	struct aff_vproc *p;
	struct json_object *obj;
	struct json_object *findings;
	struct json_object *unknown;
	int gpu[64];			/* indices in topo->gpus */
	size_t ngpu;
	int ref_gpu;			/* -1 */
	enum ref_src ref;
	const struct aff_vlease *lease;
	const struct aff_plan *plan;	/* may be NULL */
	int rank;			/* index in plan->rank, -1 */
	enum aff_sev worst;
	bool decided;
};

static struct json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static struct json_object *bitmap_json(hwloc_const_bitmap_t set)
{
	char *s = aff_bitmap_list(set);
	struct json_object *o = s ? json_object_new_string(s) : NULL;

	free(s);
	return o;
}

static void add_finding(struct judged *j, const char *id, enum aff_sev sev,
			struct json_object *evidence, const char *remedy, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static void add_finding(struct judged *j, const char *id, enum aff_sev sev,
			struct json_object *evidence, const char *remedy, const char *fmt, ...)
{
	struct json_object *f = json_object_new_object();
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(f, "id", json_object_new_string(id));
	json_object_object_add(f, "severity", json_object_new_string(aff_sev_name(sev)));
	json_object_object_add(f, "message", json_object_new_string(msg));
	json_object_object_add(f, "remedy", str_or_null(remedy));
	json_object_object_add(f, "evidence", evidence ? evidence : json_object_new_object());
	json_object_array_add(j->findings, f);
	if (sev > j->worst)
		j->worst = sev;
	j->decided = true;
}

static void add_unknown(struct judged *j, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add_unknown(struct judged *j, const char *what, const char *fmt, ...)
{
	struct json_object *u = json_object_new_object();
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(u, "what", json_object_new_string(what));
	json_object_object_add(u, "reason", json_object_new_string(msg));
	json_object_array_add(j->unknown, u);
}

/* ---- the topology's view ---- */

static int gpu_by_pci(const struct aff_topo *t, const char *pci)
{
	size_t i;

	for (i = 0; *pci && i < t->ngpu; i++)
		if (!strcmp(t->dev[t->gpus[i]].pci, pci))
			return (int)i;
	return -1;
}

static int rail_by_dev(const struct aff_topo *t, const char *pci, const char *name)
{
	size_t i;

	for (i = 0; i < t->nrail; i++)
		if ((*pci && !strcmp(t->dev[t->rail[i].dev].pci, pci)) ||
		    (name && *name && t->rail[i].name && !strcmp(t->rail[i].name, name)))
			return (int)i;
	return -1;
}

static const char *gpu_pci(const struct aff_topo *t, int g)
{
	return t->dev[t->gpus[g]].pci;
}

static int gpu_numa(const struct aff_topo *t, int g)
{
	return aff_audit_dev_numa(t, t->gpus[g]);
}

/* The CPUs of NUMA node @node in the topology (a new bitmap, empty if none). */
static void node_cpus(const struct aff_topo *t, int node, hwloc_bitmap_t out)
{
	size_t i;

	for (i = 0; i < t->nnuma; i++)
		if ((int)t->numa[i].os_index == node)
			hwloc_bitmap_or(out, out, t->numa[i].cpuset);
}

/* The NUMA nodes the CPUs of @set belong to. */
static void cpus_nodes(const struct aff_topo *t, hwloc_const_bitmap_t set, hwloc_bitmap_t out)
{
	size_t i;

	hwloc_bitmap_zero(out);
	for (i = 0; i < t->nnuma; i++)
		if (hwloc_bitmap_intersects(set, t->numa[i].cpuset))
			hwloc_bitmap_set(out, t->numa[i].os_index);
}

static bool vendor_is(const struct aff_topo *t, int g, int vendor)
{
	int v = t->dev[t->gpus[g]].vendor;

	return v < 0 || v == vendor;
}

/* ---- which GPU ---- */

static bool has_gpu(const struct judged *j, int g)
{
	size_t i;

	for (i = 0; i < j->ngpu; i++)
		if (j->gpu[i] == g)
			return true;
	return false;
}

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
					g = gpu_by_pci(t, v->devs.v[i].pci);
			if (g < 0)
				g = gpu_by_pci(t, item);
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
		g = gpu_by_pci(t, d->pci);
		if (g >= 0)
			hwloc_bitmap_set(fd, (unsigned)g);
		else if (d->kind == AFF_VDEV_NV_GPU)
			add_unknown(j, "gpu", d->pci[0] ?
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
		int numa = gpu_numa(t, g);

		if (j->ngpu >= sizeof(j->gpu) / sizeof(j->gpu[0]))
			break;
		j->gpu[j->ngpu++] = g;
		for (i = 0; i < p->nheld; i++)
			if (p->held[i]->pci[0] && !strcmp(p->held[i]->pci, gpu_pci(t, g)))
				json_object_array_add(via, json_object_new_string(p->held_path[i]));
		if (envvar)
			json_object_array_add(via, json_object_new_string(envvar));
		json_object_object_add(o, "pci", json_object_new_string(gpu_pci(t, g)));
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
		add_unknown(j, "plan", "no plan to judge against: %s", why ? why : "unknown");
	if (j->lease && j->lease->gpu && (j->ref_gpu = gpu_by_pci(t, j->lease->gpu)) >= 0) {
		j->ref = REF_LEASE;
	} else if (p->env[AFF_VENV_RB_GPU] &&
		   (j->ref_gpu = gpu_by_pci(t, p->env[AFF_VENV_RB_GPU])) >= 0) {
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

/* The planned CPUs, mems and rails of the process (NULL/empty when unknown). */
struct planned {
	hwloc_bitmap_t cpus;		/* NULL: unknown */
	const char *cpus_from;
	const char *mems;
	int rails[32];
	size_t nrails;
};

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
			int r = rail_by_dev(t, item, item);

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
	json_object_object_add(o, "from", str_or_null(ref_names[j->ref]));
	json_object_object_add(o, "gpu", j->ref_gpu >= 0 ?
			       json_object_new_string(gpu_pci(t, j->ref_gpu)) : NULL);
	json_object_object_add(o, "local_rank", j->rank >= 0 ? json_object_new_int(j->rank) : NULL);
	for (i = 0; i < pl->nrails; i++)
		json_object_array_add(nics, json_object_new_string(
			aff_audit_rail_name(t, pl->rails[i])));
	json_object_object_add(o, "nics", nics);
	json_object_object_add(o, "cpus", pl->cpus ? bitmap_json(pl->cpus) : NULL);
	json_object_object_add(o, "cpus_from", str_or_null(pl->cpus_from));
	json_object_object_add(o, "mems", str_or_null(pl->mems));
	json_object_object_add(obj, "planned", o);
}

/* ---- the checks ---- */

static void check_gpu(struct aff_verify *v, struct judged *j)
{
	const struct aff_topo *t = v->topo;
	struct json_object *ev;
	char what[160];
	size_t i;

	if (j->ref_gpu < 0 || j->ref == REF_GPU || !j->ngpu)
		return;
	j->decided = true;
	if (has_gpu(j, j->ref_gpu))
		return;
	if (j->ref == REF_LEASE)
		snprintf(what, sizeof(what), "its lease (job %s, rank %ld)", j->lease->job,
			 j->lease->rank);
	else if (j->ref == REF_ENV)
		snprintf(what, sizeof(what), "RAILBIND_GPU");
	else
		snprintf(what, sizeof(what), "its local rank (%s=%s)", j->p->env_rank_var,
			 j->p->env[AFF_VENV_LOCAL_RANK]);
	ev = json_object_new_object();
	json_object_object_add(ev, "planned_gpu", json_object_new_string(gpu_pci(t, j->ref_gpu)));
	json_object_object_add(ev, "from", json_object_new_string(ref_names[j->ref]));
	{
		struct json_object *used = json_object_new_array();

		for (i = 0; i < j->ngpu; i++)
			json_object_array_add(used, json_object_new_string(gpu_pci(t, j->gpu[i])));
		json_object_object_add(ev, "gpus", used);
	}
	add_finding(j, "gpu-not-planned", AFF_SEV_FAIL, ev,
		    "give the rank its own GPU: CUDA_VISIBLE_DEVICES (or the framework's device) from `railbind plan`, or start it with `railbind run --isolate-gpu`",
		    "uses GPU %s, but %s names GPU %d (%s)", gpu_pci(t, j->gpu[0]), what,
		    j->ref_gpu, gpu_pci(t, j->ref_gpu));
}

/* The NUMA nodes of the GPUs it uses (else of its NICs); false if unknown. */
static bool target_nodes(const struct aff_verify *v, const struct judged *j,
			 hwloc_bitmap_t nodes, const int *nic, size_t nnic)
{
	const struct aff_topo *t = v->topo;
	size_t i;

	hwloc_bitmap_zero(nodes);
	for (i = 0; i < j->ngpu; i++) {
		int n = gpu_numa(t, j->gpu[i]);

		if (n < 0)
			return false;
		hwloc_bitmap_set(nodes, (unsigned)n);
	}
	for (i = 0; !j->ngpu && i < nnic; i++) {
		int n = aff_audit_dev_numa(t, t->rail[nic[i]].dev);

		if (n < 0)
			return false;
		hwloc_bitmap_set(nodes, (unsigned)n);
	}
	return !hwloc_bitmap_iszero(nodes);
}

/* The commands that move it where it belongs, with its own numbers. */
static const char *fix_cpus(char *buf, size_t len, const struct judged *j,
			    const struct planned *pl, const char *nodes)
{
	char *cpus = pl->cpus ? aff_bitmap_list(pl->cpus) : NULL;
	int pid = (int)j->p->pid;

	if (cpus && *cpus)
		snprintf(buf, len, "rebind all its threads now: taskset -a -p -c %s %d; start it with `railbind run` (or taskset -c %s) next time",
			 cpus, pid, cpus);
	else
		snprintf(buf, len, "bind it to NUMA node %s: start it with `railbind run` or numactl --cpunodebind=%s --preferred=%s",
			 nodes, nodes, nodes);
	free(cpus);
	return buf;
}

static void check_cpus(struct aff_verify *v, struct judged *j, const struct planned *pl,
		       hwloc_const_bitmap_t target, const char *subject)
{
	const struct aff_topo *t = v->topo;
	const struct aff_vproc *p = j->p;
	hwloc_bitmap_t allowed = hwloc_bitmap_dup(p->allowed), avail = hwloc_bitmap_alloc();
	hwloc_bitmap_t tcpus = hwloc_bitmap_alloc(), nodes = hwloc_bitmap_alloc();
	hwloc_bitmap_t far = hwloc_bitmap_alloc();
	char *a = NULL, *nl = NULL, *tl = NULL, *fl = NULL, *rl = NULL, fix[512];
	/* What runs far from its GPU fails; far from the NIC of a CPU-only rank, warns. */
	enum aff_sev sev = j->ngpu ? AFF_SEV_FAIL : AFF_SEV_WARN;
	struct json_object *ev;
	int n;

	if (!allowed || !avail || !tcpus || !nodes || !far)
		goto out;
	if (p->unreadable & AFF_VP_NO_TASKS) {
		add_unknown(j, "cpus", "%s", p->unreadable_why[1]);
		goto out;
	}
	hwloc_bitmap_and(allowed, allowed, t->all_cpus);
	if (hwloc_bitmap_iszero(allowed)) {
		a = aff_bitmap_list(p->allowed);
		add_unknown(j, "cpus", "its CPUs (%s) are none of the topology's: was the right topology given?",
			    a ? a : "?");
		goto out;
	}
	hwloc_bitmap_copy(avail, t->all_cpus);
	if (p->cpuset) {
		hwloc_bitmap_t cs = hwloc_bitmap_alloc();

		if (cs && aff_parse_cpulist(p->cpuset, cs) == 0 && hwloc_bitmap_intersects(cs, avail))
			hwloc_bitmap_and(avail, avail, cs);
		hwloc_bitmap_free(cs);
	}
	hwloc_bitmap_foreach_begin(n, target)
		node_cpus(t, n, tcpus);
	hwloc_bitmap_foreach_end();
	cpus_nodes(t, allowed, nodes);
	hwloc_bitmap_andnot(far, allowed, tcpus);
	a = aff_bitmap_list(allowed);
	nl = aff_bitmap_list(nodes);
	tl = aff_bitmap_list(target);
	fl = aff_bitmap_list(far);
	rl = aff_bitmap_list(p->ran);
	if (!a || !nl || !tl || !fl || !rl)
		goto out;
	j->decided = true;
	ev = json_object_new_object();
	json_object_object_add(ev, "cpus", json_object_new_string(a));
	json_object_object_add(ev, "cpus_numa", json_object_new_string(nl));
	json_object_object_add(ev, "target_numa", json_object_new_string(tl));
	json_object_object_add(ev, "ran", json_object_new_string(rl));
	if (pl->cpus)
		json_object_object_add(ev, "planned_cpus", bitmap_json(pl->cpus));
	/*
	 * Not narrowed at all: a failure where that lets it run off its GPU's
	 * node, a warning where only the plan would narrow it further (one
	 * node's cores shared with other ranks). A process that uses GPUs on
	 * every node it may run on (a monitor holding all GPUs) is not unbound.
	 */
	if (hwloc_bitmap_isincluded(avail, allowed) && !hwloc_bitmap_iszero(far)) {
		add_finding(j, "unbound", sev, ev, fix_cpus(fix, sizeof(fix), j, pl, tl),
			    "no CPU binding: it may run on all %d CPUs it can have (%s, NUMA nodes %s); %s on NUMA node %s",
			    hwloc_bitmap_weight(allowed), a, nl, subject, tl);
		goto out;
	}
	if (hwloc_bitmap_isincluded(avail, allowed) && pl->cpus &&
	    !hwloc_bitmap_isincluded(avail, pl->cpus)) {
		add_finding(j, "unbound", AFF_SEV_WARN, ev, fix_cpus(fix, sizeof(fix), j, pl, tl),
			    "no CPU binding: it may run on all %d CPUs it can have (%s), on its GPU's NUMA node but on other ranks' cores",
			    hwloc_bitmap_weight(allowed), a);
		goto out;
	}
	if (!hwloc_bitmap_iszero(far)) {
		json_object_object_add(ev, "far_cpus", json_object_new_string(fl));
		add_finding(j, "cpu-numa", sev, ev,
			    fix_cpus(fix, sizeof(fix), j, pl, tl),
			    "runs on CPUs %s (NUMA node %s); %s on NUMA node %s (its threads last ran on CPUs %s)",
			    a, nl, subject, tl, rl);
		goto out;
	}
	if (pl->cpus && !hwloc_bitmap_isincluded(allowed, pl->cpus)) {
		char *pc = aff_bitmap_list(pl->cpus);

		add_finding(j, "cpus-outside-plan", AFF_SEV_WARN, ev, fix_cpus(fix, sizeof(fix), j, pl, tl),
			    "runs on CPUs %s, its %s gives it %s: the right NUMA node, but other ranks' cores",
			    a, !strcmp(pl->cpus_from, "lease") ? "lease" : "plan", pc ? pc : "?");
		free(pc);
		goto out;
	}
	json_object_put(ev);
out:
	free(a);
	free(nl);
	free(tl);
	free(fl);
	free(rl);
	hwloc_bitmap_free(allowed);
	hwloc_bitmap_free(avail);
	hwloc_bitmap_free(tcpus);
	hwloc_bitmap_free(nodes);
	hwloc_bitmap_free(far);
}

/* "bind=static:0-1" -> mode "bind", nodes {0,1}; false when it names no nodes. */
static bool policy_nodes(const char *pol, char *mode, size_t mlen, hwloc_bitmap_t nodes)
{
	const char *colon = strchr(pol, ':');
	size_t n = strcspn(pol, "=:");

	snprintf(mode, mlen, "%.*s", (int)n, pol);
	hwloc_bitmap_zero(nodes);
	return colon && aff_parse_cpulist(colon + 1, nodes) == 0 && !hwloc_bitmap_iszero(nodes);
}

static void check_memory(struct aff_verify *v, struct judged *j, hwloc_const_bitmap_t target,
			 const char *subject, struct json_object *obj)
{
	const struct aff_vproc *p = j->p;
	unsigned long long total = 0, far = 0;
	struct json_object *mem, *kb, *pols, *ev;
	hwloc_bitmap_t pn = hwloc_bitmap_alloc();
	char *tl = aff_bitmap_list(target), mode[32];
	enum aff_sev sev = j->ngpu ? AFF_SEV_FAIL : AFF_SEV_WARN;
	const char *pol;
	size_t i;

	(void)v;
	if (p->unreadable & AFF_VP_NO_NUMA_MAPS) {
		add_unknown(j, "memory", "%s", p->unreadable_why[2]);
		json_object_object_add(obj, "memory", NULL);
		goto out;
	}
	mem = json_object_new_object();
	kb = json_object_new_object();
	pols = json_object_new_object();
	for (i = 0; i < p->nmem; i++) {
		char key[16];

		snprintf(key, sizeof(key), "%d", p->mem[i].node);
		json_object_object_add(kb, key, json_object_new_int64((int64_t)p->mem[i].kb));
		total += p->mem[i].kb;
		if (!hwloc_bitmap_isset(target, (unsigned)p->mem[i].node))
			far += p->mem[i].kb;
	}
	for (i = 0; i < p->npol; i++)
		json_object_object_add(pols, p->pol[i].policy,
				       json_object_new_int64((int64_t)p->pol[i].kb));
	json_object_object_add(mem, "policy", str_or_null(p->task_policy));
	json_object_object_add(mem, "policies_kb", pols);
	json_object_object_add(mem, "anon_kb", kb);
	json_object_object_add(mem, "far_pct", total ?
			       json_object_new_int((int)(far * 100 / total)) : NULL);
	json_object_object_add(obj, "memory", mem);
	if (!pn || !tl)
		goto out;
	j->decided = true;
	if (total >= AFF_VERIFY_MEM_MIN_KB && far * 2 > total) {
		char far_nodes[128] = "", fix[512];

		for (i = 0; i < p->nmem; i++)
			if (!hwloc_bitmap_isset(target, (unsigned)p->mem[i].node))
				snprintf(far_nodes + strlen(far_nodes), sizeof(far_nodes) - strlen(far_nodes),
					 "%s%d", *far_nodes ? "," : "", p->mem[i].node);
		snprintf(fix, sizeof(fix), "move what is there: migratepages %d %s %s; bind its CPUs to node %s before it allocates (memory follows the first touch): `railbind run`, or numactl --cpunodebind=%s --preferred=%s",
			 (int)p->pid, far_nodes, tl, tl, tl, tl);
		ev = json_object_new_object();
		json_object_object_add(ev, "anon_kb", json_object_get(kb));
		json_object_object_add(ev, "far_kb", json_object_new_int64((int64_t)far));
		json_object_object_add(ev, "target_numa", json_object_new_string(tl));
		add_finding(j, "memory-far", sev, ev, fix,
			    "%llu%% of its %llu MiB of anonymous memory is on NUMA nodes other than %s; %s on NUMA node %s",
			    far * 100 / total, total / 1024, tl, subject, tl);
	}
	pol = p->task_policy ? p->task_policy : p->npol ? p->pol[0].policy : NULL;
	if (!pol || !policy_nodes(pol, mode, sizeof(mode), pn))
		goto out;
	if ((!strcmp(mode, "bind") || !strncmp(mode, "prefer", 6)) &&
	    !hwloc_bitmap_intersects(pn, target)) {
		ev = json_object_new_object();
		json_object_object_add(ev, "policy", json_object_new_string(pol));
		json_object_object_add(ev, "target_numa", json_object_new_string(tl));
		add_finding(j, "memory-policy", sev, ev,
			    "restart it with its GPU's node as the policy: `railbind run`, or numactl --preferred=N (N its GPU's node)",
			    "its memory policy %s keeps its memory off NUMA node %s; %s on NUMA node %s",
			    pol, tl, subject, tl);
	} else if (strstr(mode, "interleave") && !hwloc_bitmap_isincluded(pn, target)) {
		ev = json_object_new_object();
		json_object_object_add(ev, "policy", json_object_new_string(pol));
		json_object_object_add(ev, "target_numa", json_object_new_string(tl));
		add_finding(j, "memory-policy", AFF_SEV_WARN, ev,
			    "restart it preferring its GPU's node: `railbind run`, or numactl --preferred=N (N its GPU's node)",
			    "its memory policy %s spreads its memory over NUMA nodes beyond %s; %s on NUMA node %s",
			    pol, tl, subject, tl);
	}
out:
	hwloc_bitmap_free(pn);
	free(tl);
}

/* NCCL_IB_HCA's filter (NCCL's matchIfList): '^' excludes, '=' exact, else prefix. */
static bool nccl_hca_selects(const char *filter, const char *name, int port)
{
	bool not = false, exact = false, hit = false;
	char *copy, *item, *save = NULL;

	if (*filter == '^') {
		not = true;
		filter++;
	}
	if (*filter == '=') {
		exact = true;
		filter++;
	}
	copy = strdup(filter);
	for (item = copy ? strtok_r(copy, ",", &save) : NULL; item && !hit;
	     item = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(item, ':');
		int want = -1;

		if (colon) {
			*colon = '\0';
			if (colon[1])
				want = atoi(colon + 1);
		}
		if (!*item)
			continue;
		hit = (exact ? !strcmp(name, item) : !strncmp(name, item, strlen(item))) &&
		      (want < 0 || port <= 0 || want == port);
	}
	free(copy);
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

/* The best path class from the process's GPUs to rail @r. */
static enum aff_path best_path(const struct aff_topo *t, const struct judged *j, int r)
{
	enum aff_path best = AFF_PATH_NONE, p;
	size_t i;

	for (i = 0; i < j->ngpu; i++) {
		p = aff_topo_path(t, (size_t)j->gpu[i], (size_t)r);
		if (p != AFF_PATH_NONE && (best == AFF_PATH_NONE || p < best))
			best = p;
	}
	return best;
}

/* One source of NIC use (open devices, NCCL_IB_HCA, UCX_NET_DEVICES). */
struct nic_use {
	const char *source;
	int rail[64];
	size_t n;
};

static void check_nics(struct aff_verify *v, struct judged *j, const struct planned *pl,
		       const struct nic_use *use, size_t nuse)
{
	const struct aff_topo *t = v->topo;
	enum aff_path want = AFF_PATH_NONE, got = AFF_PATH_NONE, best;
	enum aff_sev sev = AFF_SEV_OK, s;
	struct json_object *ev, *srcs;
	char used[256] = "", rails[256] = "", fix[640];
	size_t u, i, k, worst = nuse;

	if (!j->ngpu || !pl->nrails)
		return;
	for (i = 0; i < pl->nrails; i++) {
		best = best_path(t, j, pl->rails[i]);
		if (best != AFF_PATH_NONE && (want == AFF_PATH_NONE || best < want))
			want = best;
		snprintf(rails + strlen(rails), sizeof(rails) - strlen(rails), "%s%s",
			 i ? "," : "", aff_audit_rail_name(t, pl->rails[i]));
	}
	srcs = json_object_new_object();
	for (u = 0; u < nuse; u++) {
		struct json_object *names;
		bool rail = false;

		if (!use[u].n)
			continue;
		j->decided = true;
		names = json_object_new_array();
		best = AFF_PATH_NONE;
		for (i = 0; i < use[u].n; i++) {
			enum aff_path p = best_path(t, j, use[u].rail[i]);

			json_object_array_add(names, json_object_new_string(
				aff_audit_rail_name(t, use[u].rail[i])));
			for (k = 0; k < pl->nrails; k++)
				if (pl->rails[k] == use[u].rail[i])
					rail = true;
			if (p != AFF_PATH_NONE && (best == AFF_PATH_NONE || p < best))
				best = p;
		}
		json_object_object_add(srcs, use[u].source, names);
		if (rail)
			continue;
		/* Another GPU's rail at the same class shares that rail: a warning. */
		s = best > want ? AFF_SEV_FAIL : AFF_SEV_WARN;
		if (worst == nuse || s > sev) {
			sev = s;
			worst = u;
			got = best;
		}
	}
	if (worst == nuse) {
		json_object_put(srcs);
		return;
	}
	for (i = 0; i < use[worst].n; i++)
		snprintf(used + strlen(used), sizeof(used) - strlen(used), "%s%s", i ? "," : "",
			 aff_audit_rail_name(t, use[worst].rail[i]));
	{
		char hca[256] = "";

		for (i = 0; i < pl->nrails; i++) {
			const struct aff_rail *r = &t->rail[pl->rails[i]];

			if (r->name)
				snprintf(hca + strlen(hca), sizeof(hca) - strlen(hca), "%s%s:%d",
					 *hca ? "," : "", r->name, r->port > 0 ? r->port : 1);
		}
		snprintf(fix, sizeof(fix), *hca ?
			 "restart it on its rail: NCCL_IB_HCA==%s UCX_NET_DEVICES=%s (what `railbind plan` gives it), or with `railbind run`" :
			 "restart it on its rail (%s`railbind plan` names it), or with `railbind run`",
			 hca, hca);
	}
	ev = json_object_new_object();
	json_object_object_add(ev, "used", srcs);
	json_object_object_add(ev, "path", str_or_null(aff_path_name(got)));
	json_object_object_add(ev, "planned_nics", json_object_new_string(rails));
	json_object_object_add(ev, "planned_path", str_or_null(aff_path_name(want)));
	add_finding(j, "nic-not-rail", sev, ev, fix,
		    "uses NIC %s (%s; a %s path to its GPU %s), not its rail %s (%s)", used,
		    use[worst].source, got == AFF_PATH_NONE ? "unknown" : aff_path_name(got),
		    gpu_pci(t, j->gpu[0]), rails,
		    want == AFF_PATH_NONE ? "unknown" : aff_path_name(want));
}

static void check_peers(struct aff_verify *v, struct judged *j, const struct planned *pl)
{
	const struct aff_topo *t = v->topo;
	enum aff_path want = AFF_PATH_NONE;
	size_t i, k;

	if (!j->ngpu || !pl->nrails || !t->npeer)
		return;
	for (k = 0; k < pl->nrails; k++) {
		enum aff_path p = best_path(t, j, pl->rails[k]);

		if (p != AFF_PATH_NONE && (want == AFF_PATH_NONE || p < want))
			want = p;
	}
	for (i = 0; i < t->npeer; i++) {
		const struct aff_peer *pr = &t->peer[i];
		int g = gpu_by_pci(t, pr->gpu), r = rail_by_dev(t, pr->nic, NULL);
		struct json_object *ev;
		enum aff_path got;

		if (pr->maps <= 0 || g < 0 || r < 0 || !has_gpu(j, g))
			continue;
		got = aff_topo_path(t, (size_t)g, (size_t)r);
		if (want == AFF_PATH_NONE || got <= want)
			continue;
		ev = json_object_new_object();
		json_object_object_add(ev, "nic", json_object_new_string(pr->nic));
		json_object_object_add(ev, "path", str_or_null(aff_path_name(got)));
		json_object_object_add(ev, "planned_path", str_or_null(aff_path_name(want)));
		json_object_object_add(ev, "maps", json_object_new_int64(pr->maps));
		json_object_object_add(ev, "bytes", json_object_new_int64(pr->bytes));
		add_finding(j, "peer-cross-path", AFF_SEV_WARN, ev,
			    "let the rank use its GPU's rail: NCCL_IB_HCA from `railbind plan`, or `railbind run`",
			    "railbind.ko saw NIC %s map its GPU %s's memory over a %s path (%ld mappings), its rail is %s",
			    pr->nic, pr->gpu, aff_path_name(got), pr->maps, aff_path_name(want));
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
			g = gpu_by_pci(t, d->pci);
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
		r = rail_by_dev(t, d->pci, d->name);
		if (r < 0) {
			add_unknown(j, "nic", "holds %s (%s), which is no rail NIC of the topology",
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
				       str_or_null(aff_path_name(best_path(t, j, r))) : NULL);
		json_object_object_add(o, "via", json_object_new_string(p->held_path[i]));
		json_object_array_add(arr, o);
	}
	for (i = 0; i < t->nrail; i++) {
		const struct aff_rail *r = &t->rail[i];

		if (!r->name || !r->rdma)
			continue;
		if (p->env[AFF_VENV_NCCL_IB_HCA] && *p->env[AFF_VENV_NCCL_IB_HCA] &&
		    nccl_hca_selects(p->env[AFF_VENV_NCCL_IB_HCA], r->name, r->port))
			add_nic_use(&use[1], (int)i);
		if (p->env[AFF_VENV_UCX_NET_DEVICES] && *p->env[AFF_VENV_UCX_NET_DEVICES] &&
		    ucx_selects(p->env[AFF_VENV_UCX_NET_DEVICES], r->name))
			add_nic_use(&use[2], (int)i);
	}
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
	json_object_object_add(o, "gpu", str_or_null(l->gpu));
	json_object_object_add(o, "cpus", str_or_null(l->cpus));
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
	json_object_object_add(cpus, "allowed", bitmap_json(p->allowed));
	json_object_object_add(cpus, "ran", bitmap_json(p->ran));
	json_object_object_add(cpus, "threads", json_object_new_int((int)p->nthreads));
	json_object_object_add(cpus, "cpuset", str_or_null(p->cpuset));
	json_object_object_add(o, "cpus", cpus);
	json_object_object_add(o, "env", env_json(p));
	if (p->unreadable & AFF_VP_NO_ENV)
		add_unknown(j, "env", "%s", p->unreadable_why[3]);
	json_object_object_add(o, "lease", lease_json(j->lease));
	find_planned(v, j, &pl, o);
	if (j->ngpu == 1)
		snprintf(subject, sizeof(subject), "its GPU %s is", gpu_pci(t, j->gpu[0]));
	else if (j->ngpu)
		snprintf(subject, sizeof(subject), "its %zu GPUs are", j->ngpu);
	else
		snprintf(subject, sizeof(subject), "its NIC%s %s", use[0].n > 1 ? "s are" : " is",
			 use[0].n ? aff_audit_rail_name(t, use[0].rail[0]) : "?");
	if (!j->ngpu && !use[0].n)
		add_unknown(j, "gpu", "holds %s, but which GPU it uses is not known (no GPU device file, no *_VISIBLE_DEVICES)",
			    p->nheld ? p->held_path[0] : "no GPU or RDMA device");
	check_gpu(v, j);
	if (target_nodes(v, j, target, use[0].rail, use[0].n)) {
		check_cpus(v, j, &pl, target, subject);
		check_memory(v, j, target, subject, o);
	} else {
		if (j->ngpu || use[0].n)
			add_unknown(j, "locality", "the NUMA node of its %s is not known (sysfs numa_node -1): CPUs and memory cannot be judged",
				    j->ngpu ? "GPU" : "NIC");
		json_object_object_add(o, "memory", NULL);
	}
	check_nics(v, j, &pl, use, 3);
	check_peers(v, j, &pl);
	hwloc_bitmap_free(pl.cpus);
	hwloc_bitmap_free(target);
	return 0;
}

/*
 * gpu-shared: two processes that each use one GPU, the same one. Those whose
 * lease, RAILBIND_GPU or local rank names that GPU are where they belong;
 * the others are blamed. When none (or all) can be told apart, all are.
 */
static void check_shared(struct aff_verify *v, struct judged *js, size_t n)
{
	const struct aff_topo *t = v->topo;
	size_t g, i, k;

	for (g = 0; g < t->ngpu; g++) {
		size_t users = 0, rightful = 0;

		for (i = 0; i < n; i++)
			if (js[i].ngpu == 1 && js[i].gpu[0] == (int)g) {
				users++;
				if (js[i].ref > REF_GPU && js[i].ref_gpu == (int)g)
					rightful++;
			}
		if (users < 2)
			continue;
		for (i = 0; i < n; i++) {
			struct json_object *ev, *others;
			char list[256] = "";
			bool rightful_here = js[i].ref > REF_GPU && js[i].ref_gpu == (int)g;

			if (js[i].ngpu != 1 || js[i].gpu[0] != (int)g)
				continue;
			if (rightful && rightful < users && rightful_here)
				continue;
			others = json_object_new_array();
			for (k = 0; k < n; k++)
				if (k != i && js[k].ngpu == 1 && js[k].gpu[0] == (int)g) {
					json_object_array_add(others, json_object_new_int(js[k].p->pid));
					snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%d",
						 *list ? "," : "", (int)js[k].p->pid);
				}
			ev = json_object_new_object();
			json_object_object_add(ev, "gpu", json_object_new_string(gpu_pci(t, (int)g)));
			json_object_object_add(ev, "pids", others);
			add_finding(&js[i], "gpu-shared", AFF_SEV_FAIL, ev,
				    "give each rank its own GPU: CUDA_VISIBLE_DEVICES (or the framework's device) from `railbind plan`, or `railbind run --isolate-gpu`",
				    "shares GPU %s with process %s: two ranks on one GPU halve both",
				    gpu_pci(t, (int)g), list);
		}
	}
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
			       str_or_null(p->env[AFF_VENV_JOB]));
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
	json_object_object_add(o, "comm", str_or_null(p->comm[0] ? p->comm : NULL));
	json_object_object_add(o, "cmdline", str_or_null(p->cmdline[0] ? p->cmdline : NULL));
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
	if (!rc)
		check_shared(v, js, n);
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
