// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nccl-hca-mismatch: ranks of one job on one node whose NCCL_IB_HCA differ.
 * NCCL builds its rings and trees from one view of the node that every rank
 * must share, and picks each GPU's NIC itself; a rank given another list
 * sees other devices (NVIDIA/nccl#1478: "You should not set NCCL_IB_HCA
 * differently on each rank"). The node-mates are the processes judged in the
 * same run that belong to the same job (its lease, else RAILBIND_JOB,
 * SLURM_JOB_ID, ...; processes of no known job are one job). Blamed: those
 * whose list is not the one `railbind plan` gives every rank, all of them
 * when none has it. A list naming only the rank's own planned rails is the
 * per-rank form an older railbind gave, and is named as the cause.
 */
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>

#include "verify.h"

static const char *rank_env(const struct aff_rank *rk, const char *name)
{
	size_t n = strlen(name), i;

	for (i = 0; rk->env && rk->env[i]; i++)
		if (!strncmp(rk->env[i], name, n) && rk->env[i][n] == '=')
			return rk->env[i] + n + 1;
	return NULL;
}

void aff_vj_node_hca(const struct aff_topo *t, const struct aff_plan *plan, char *buf,
		     size_t len)
{
	const char *first = plan && plan->nrank ? rank_env(&plan->rank[0], "NCCL_IB_HCA") : NULL;
	size_t i, k, r;
	bool same = first != NULL;

	*buf = '\0';
	for (k = 1; plan && same && k < plan->nrank; k++) {
		const char *v = rank_env(&plan->rank[k], "NCCL_IB_HCA");

		same = v && !strcmp(v, first);
	}
	if (same) {
		snprintf(buf, len, "%s", first);
		return;
	}
	/* A plan that still gives each rank its own rails: their union, in rail order. */
	for (r = 0; plan && r < t->nrail; r++) {
		bool used = false;

		for (k = 0; k < plan->nrank && !used; k++)
			for (i = 0; i < plan->rank[k].rails.n && !used; i++)
				used = plan->rank[k].rails.rail[i] == (int)r;
		if (used && t->rail[r].name)
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s:%d", *buf ? "," : "=",
				 t->rail[r].name, t->rail[r].port > 0 ? t->rail[r].port : 1);
	}
}

static const char *job_of(const struct judged *j)
{
	return j->lease ? j->lease->job : j->p->env[AFF_VENV_JOB];
}

static bool same_job(const struct judged *a, const struct judged *b)
{
	const char *x = job_of(a), *y = job_of(b);

	return (!x && !y) || (x && y && !strcmp(x, y));
}

/* Its NCCL_IB_HCA as compared: NULL when it has none to compare (no GPU, unreadable). */
static const char *hca_of(const struct judged *j, bool *set)
{
	const char *v = j->p->env[AFF_VENV_NCCL_IB_HCA];

	*set = v != NULL;
	if (j->p->unreadable & AFF_VP_NO_ENV)
		return NULL;
	if (!v && !j->ngpu)
		return NULL;	/* no GPU and no list: not an NCCL rank */
	return v ? v : "";
}

static void blame(struct judged *js, size_t n, size_t i, const char *node_wide)
{
	struct judged *j = &js[i];
	struct json_object *ev = json_object_new_object(), *mates = json_object_new_array();
	char list[384] = "", fix[1536];
	const char *mine, *other;
	bool set, oset, old;
	size_t k;

	mine = hca_of(j, &set);
	for (k = 0; k < n; k++) {
		struct json_object *m;

		if (k == i || !same_job(j, &js[k]) || !(other = hca_of(&js[k], &oset)) ||
		    !strcmp(other, mine))
			continue;
		m = json_object_new_object();
		json_object_object_add(m, "pid", json_object_new_int(js[k].p->pid));
		json_object_object_add(m, "NCCL_IB_HCA", oset ? json_object_new_string(other) : NULL);
		json_object_array_add(mates, m);
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%sprocess %d: %s",
			 *list ? "; " : "", (int)js[k].p->pid, oset ? other : "unset");
	}
	old = set && j->own_hca[0] && !strcmp(mine, j->own_hca) && strcmp(mine, node_wide);
	json_object_object_add(ev, "NCCL_IB_HCA", set ? json_object_new_string(mine) : NULL);
	json_object_object_add(ev, "node_wide", *node_wide ? json_object_new_string(node_wide) : NULL);
	json_object_object_add(ev, "mates", mates);
	json_object_object_add(ev, "cause", old ? json_object_new_string("per-rank-railbind") : NULL);
	if (*node_wide)
		snprintf(fix, sizeof(fix), "give every rank of the node the same NCCL_IB_HCA=%s (`railbind plan`'s, the same on every rank): restart the job with a current railbind (`railbind run`, railbindd, the SPANK plugin) or set it in the job's environment; NCCL picks each GPU's NIC itself",
			 node_wide);
	else
		snprintf(fix, sizeof(fix), "give every rank of the node the same NCCL_IB_HCA (or none): NCCL picks each GPU's NIC itself");
	aff_vj_finding(j, "nccl-hca-mismatch", AFF_SEV_FAIL, ev, fix,
		    "its NCCL_IB_HCA (%s) differs from its node-mates' (%s): NCCL needs one view of the node on every rank and breaks its rings on different lists%s",
		    set ? mine : "unset", list,
		    old ? "; it names only the rank's own rail, the per-rank form an older railbind gave each rank" : "");
}

void aff_vj_check_hca(struct aff_verify *v, struct judged *js, size_t n)
{
	char node_wide[1024];
	size_t i, k;

	for (i = 0; i < n; i++) {
		const char *mine, *other, *first = NULL;
		bool set, oset, differ = false, rightful_any = false, rightful_all = true;

		if (!(mine = hca_of(&js[i], &set)))
			continue;
		aff_vj_node_hca(v->topo, js[i].plan, node_wide, sizeof(node_wide));
		/* The job's values: do they differ, and does any (every) rank carry the node's? */
		for (k = 0; k < n; k++) {
			bool right;

			if (!same_job(&js[i], &js[k]) || !(other = hca_of(&js[k], &oset)))
				continue;
			if (!first)
				first = other;
			differ |= strcmp(first, other) != 0;
			right = oset && *node_wide && !strcmp(other, node_wide);
			rightful_any |= right;
			rightful_all &= right;
		}
		if (!differ)
			continue;
		if (rightful_any && !rightful_all && set && !strcmp(mine, node_wide))
			continue;
		blame(js, n, i, node_wide);
	}
}
