// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * verify's checks (docs/VERIFY.md, "The checks"): each judges one process
 * (struct judged, filled by verify_judge.c) against where it belongs and adds
 * its findings, with their evidence and the commands that fix them; what it
 * cannot judge it says, per process. gpu-shared looks at all of them at once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "verify.h"

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

void aff_vj_check_gpu(struct aff_verify *v, struct judged *j)
{
	const struct aff_topo *t = v->topo;
	struct json_object *ev;
	char what[160];
	size_t i;

	if (j->ref_gpu < 0 || j->ref == REF_GPU || !j->ngpu)
		return;
	j->decided = true;
	if (aff_vj_has_gpu(j, j->ref_gpu))
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
	json_object_object_add(ev, "planned_gpu", json_object_new_string(aff_vj_gpu_pci(t, j->ref_gpu)));
	json_object_object_add(ev, "from", json_object_new_string(aff_vj_ref_names[j->ref]));
	{
		struct json_object *used = json_object_new_array();

		for (i = 0; i < j->ngpu; i++)
			json_object_array_add(used, json_object_new_string(aff_vj_gpu_pci(t, j->gpu[i])));
		json_object_object_add(ev, "gpus", used);
	}
	aff_vj_finding(j, "gpu-not-planned", AFF_SEV_FAIL, ev,
		    "give the rank its own GPU: CUDA_VISIBLE_DEVICES (or the framework's device) from `railbind plan`, or start it with `railbind run --isolate-gpu`",
		    "uses GPU %s, but %s names GPU %d (%s)", aff_vj_gpu_pci(t, j->gpu[0]), what,
		    j->ref_gpu, aff_vj_gpu_pci(t, j->ref_gpu));
}

/* The NUMA nodes of the GPUs it uses (else of its NICs); false if unknown. */
bool aff_vj_target_nodes(const struct aff_verify *v, const struct judged *j,
			 hwloc_bitmap_t nodes, const int *nic, size_t nnic)
{
	const struct aff_topo *t = v->topo;
	size_t i;

	hwloc_bitmap_zero(nodes);
	for (i = 0; i < j->ngpu; i++) {
		int n = aff_vj_gpu_numa(t, j->gpu[i]);

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

void aff_vj_check_cpus(struct aff_verify *v, struct judged *j, const struct planned *pl,
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
		aff_vj_unknown(j, "cpus", "%s", p->unreadable_why[1]);
		goto out;
	}
	hwloc_bitmap_and(allowed, allowed, t->all_cpus);
	if (hwloc_bitmap_iszero(allowed)) {
		a = aff_bitmap_list(p->allowed);
		aff_vj_unknown(j, "cpus", "its CPUs (%s) are none of the topology's: was the right topology given?",
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
		json_object_object_add(ev, "planned_cpus", aff_vj_cpulist(pl->cpus));
	/*
	 * Not narrowed at all: a failure where that lets it run off its GPU's
	 * node, a warning where only the plan would narrow it further (one
	 * node's cores shared with other ranks). A process that uses GPUs on
	 * every node it may run on (a monitor holding all GPUs) is not unbound.
	 */
	if (hwloc_bitmap_isincluded(avail, allowed) && !hwloc_bitmap_iszero(far)) {
		aff_vj_finding(j, "unbound", sev, ev, fix_cpus(fix, sizeof(fix), j, pl, tl),
			    "no CPU binding: it may run on all %d CPUs it can have (%s, NUMA nodes %s); %s on NUMA node %s",
			    hwloc_bitmap_weight(allowed), a, nl, subject, tl);
		goto out;
	}
	if (hwloc_bitmap_isincluded(avail, allowed) && pl->cpus &&
	    !hwloc_bitmap_isincluded(avail, pl->cpus)) {
		aff_vj_finding(j, "unbound", AFF_SEV_WARN, ev, fix_cpus(fix, sizeof(fix), j, pl, tl),
			    "no CPU binding: it may run on all %d CPUs it can have (%s), on its GPU's NUMA node but on other ranks' cores",
			    hwloc_bitmap_weight(allowed), a);
		goto out;
	}
	if (!hwloc_bitmap_iszero(far)) {
		json_object_object_add(ev, "far_cpus", json_object_new_string(fl));
		aff_vj_finding(j, "cpu-numa", sev, ev,
			    fix_cpus(fix, sizeof(fix), j, pl, tl),
			    "runs on CPUs %s (NUMA node %s); %s on NUMA node %s (its threads last ran on CPUs %s)",
			    a, nl, subject, tl, rl);
		goto out;
	}
	if (pl->cpus && !hwloc_bitmap_isincluded(allowed, pl->cpus)) {
		char *pc = aff_bitmap_list(pl->cpus);

		aff_vj_finding(j, "cpus-outside-plan", AFF_SEV_WARN, ev, fix_cpus(fix, sizeof(fix), j, pl, tl),
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

void aff_vj_check_memory(struct aff_verify *v, struct judged *j, hwloc_const_bitmap_t target,
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
		aff_vj_unknown(j, "memory", "%s", p->unreadable_why[2]);
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
	json_object_object_add(mem, "policy", aff_vj_str(p->task_policy));
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
		aff_vj_finding(j, "memory-far", sev, ev, fix,
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
		aff_vj_finding(j, "memory-policy", sev, ev,
			    "restart it with its GPU's node as the policy: `railbind run`, or numactl --preferred=N (N its GPU's node)",
			    "its memory policy %s keeps its memory off NUMA node %s; %s on NUMA node %s",
			    pol, tl, subject, tl);
	} else if (strstr(mode, "interleave") && !hwloc_bitmap_isincluded(pn, target)) {
		ev = json_object_new_object();
		json_object_object_add(ev, "policy", json_object_new_string(pol));
		json_object_object_add(ev, "target_numa", json_object_new_string(tl));
		aff_vj_finding(j, "memory-policy", AFF_SEV_WARN, ev,
			    "restart it preferring its GPU's node: `railbind run`, or numactl --preferred=N (N its GPU's node)",
			    "its memory policy %s spreads its memory over NUMA nodes beyond %s; %s on NUMA node %s",
			    pol, tl, subject, tl);
	}
out:
	hwloc_bitmap_free(pn);
	free(tl);
}


void aff_vj_check_nics(struct aff_verify *v, struct judged *j, const struct planned *pl,
		       const struct nic_use *use, size_t nuse)
{
	const struct aff_topo *t = v->topo;
	enum aff_path want = AFF_PATH_NONE, got = AFF_PATH_NONE, best;
	enum aff_sev sev = AFF_SEV_OK, s;
	struct json_object *ev, *srcs;
	char used[256] = "", rails[256] = "", fix[1024];
	size_t u, i, k, worst = nuse;

	if (!j->ngpu || !pl->nrails)
		return;
	for (i = 0; i < pl->nrails; i++) {
		best = aff_vj_best_path(t, j, pl->rails[i]);
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
			enum aff_path p = aff_vj_best_path(t, j, use[u].rail[i]);

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
		const struct aff_rank *rk = j->rank >= 0 ? &j->plan->rank[j->rank] : NULL;
		const char *ucx = NULL;
		char hca[512];

		aff_vj_node_hca(t, j->plan, hca, sizeof(hca));
		for (i = 0; rk && rk->env && rk->env[i] && !ucx; i++)
			if (!strncmp(rk->env[i], "UCX_NET_DEVICES=", 16))
				ucx = rk->env[i] + 16;
		snprintf(fix, sizeof(fix), *hca ?
			 "restart it with what `railbind plan` gives it (NCCL_IB_HCA=%s, the same on every rank of the node%s%s), or with `railbind run`" :
			 "restart it on its rail (%s`railbind plan` names it%s%s), or with `railbind run`",
			 hca, ucx ? "; UCX_NET_DEVICES=" : "", ucx ? ucx : "");
	}
	ev = json_object_new_object();
	json_object_object_add(ev, "used", srcs);
	json_object_object_add(ev, "path", aff_vj_str(aff_path_name(got)));
	json_object_object_add(ev, "planned_nics", json_object_new_string(rails));
	json_object_object_add(ev, "planned_path", aff_vj_str(aff_path_name(want)));
	aff_vj_finding(j, "nic-not-rail", sev, ev, fix,
		    "uses NIC %s (%s; a %s path to its GPU %s), not its rail %s (%s)", used,
		    use[worst].source, got == AFF_PATH_NONE ? "unknown" : aff_path_name(got),
		    aff_vj_gpu_pci(t, j->gpu[0]), rails,
		    want == AFF_PATH_NONE ? "unknown" : aff_path_name(want));
}

void aff_vj_check_peers(struct aff_verify *v, struct judged *j, const struct planned *pl)
{
	const struct aff_topo *t = v->topo;
	enum aff_path want = AFF_PATH_NONE;
	size_t i, k;

	if (!j->ngpu || !pl->nrails || !t->npeer)
		return;
	for (k = 0; k < pl->nrails; k++) {
		enum aff_path p = aff_vj_best_path(t, j, pl->rails[k]);

		if (p != AFF_PATH_NONE && (want == AFF_PATH_NONE || p < want))
			want = p;
	}
	for (i = 0; i < t->npeer; i++) {
		const struct aff_peer *pr = &t->peer[i];
		int g = aff_vj_gpu_by_pci(t, pr->gpu), r = aff_vj_rail(t, pr->nic, NULL);
		struct json_object *ev;
		enum aff_path got;

		if (pr->maps <= 0 || g < 0 || r < 0 || !aff_vj_has_gpu(j, g))
			continue;
		got = aff_topo_path(t, (size_t)g, (size_t)r);
		if (want == AFF_PATH_NONE || got <= want)
			continue;
		ev = json_object_new_object();
		json_object_object_add(ev, "nic", json_object_new_string(pr->nic));
		json_object_object_add(ev, "path", aff_vj_str(aff_path_name(got)));
		json_object_object_add(ev, "planned_path", aff_vj_str(aff_path_name(want)));
		json_object_object_add(ev, "maps", json_object_new_int64(pr->maps));
		json_object_object_add(ev, "bytes", json_object_new_int64(pr->bytes));
		aff_vj_finding(j, "peer-cross-path", AFF_SEV_WARN, ev,
			    "let the rank use its GPU's rail: NCCL_IB_HCA from `railbind plan`, or `railbind run`",
			    "railbind.ko saw NIC %s map its GPU %s's memory over a %s path (%ld mappings), its rail is %s",
			    pr->nic, pr->gpu, aff_path_name(got), pr->maps, aff_path_name(want));
	}
}


/*
 * gpu-shared: two processes that each use one GPU, the same one. Those whose
 * lease, RAILBIND_GPU or local rank names that GPU are where they belong;
 * the others are blamed. When none (or all) can be told apart, all are.
 */
void aff_vj_check_shared(struct aff_verify *v, struct judged *js, size_t n)
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
			json_object_object_add(ev, "gpu", json_object_new_string(aff_vj_gpu_pci(t, (int)g)));
			json_object_object_add(ev, "pids", others);
			aff_vj_finding(&js[i], "gpu-shared", AFF_SEV_FAIL, ev,
				    "give each rank its own GPU: CUDA_VISIBLE_DEVICES (or the framework's device) from `railbind plan`, or `railbind run --isolate-gpu`",
				    "shares GPU %s with process %s: two ranks on one GPU halve both",
				    aff_vj_gpu_pci(t, (int)g), list);
		}
	}
}
