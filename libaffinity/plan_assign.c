// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Rails for each GPU. A GPU may only get the rails that rank best for it
 * (model_rank.c: a PCI NIC, NCCL's bandwidth, NCCL's class, the tree's class). The
 * GPUs and their candidate rails fall into independent groups (connected
 * components: in practice one per switch or socket); in each, a min-cost
 * flow gives every GPU one primary rail with the load spread evenly (a
 * rail's k-th GPU costs k times more than its first), then the fewest
 * bridges, then the same order on both sides (the n-th GPU of a switch gets
 * its n-th NIC). Rails left with no GPU go to the GPUs that rank them best
 * too, fewest rails first: four NICs on one GPU's switch (AWS p5)
 * all end up with that GPU.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

/* Beyond this many GPU x rail pairs a group is assigned greedily. */
#define FLOW_MAX_PAIRS 200000

#define COST_LOAD ((int64_t)1 << 40)
#define COST_DIST ((int64_t)1 << 20)

struct gpu_cands {
	struct aff_cand *c;
	size_t n;
};

/* Union-find over GPUs [0, n) and rails [n, n + nrail). */
static int uf_find(int *p, int x)
{
	while (p[x] != x) {
		p[x] = p[p[x]];
		x = p[x];
	}
	return x;
}

struct edge {
	int to, next, cap;
	int64_t cost;
};

struct flow {
	struct edge *e;
	int ne;
	int *first;
};

static void add_edge(struct flow *f, int u, int v, int64_t cost)
{
	f->e[f->ne] = (struct edge){ v, f->first[u], 1, cost };
	f->first[u] = f->ne++;
	f->e[f->ne] = (struct edge){ u, f->first[v], 0, -cost };
	f->first[v] = f->ne++;
}

/* One shortest augmenting path (SPFA, residual costs may be negative). */
static int augment(struct flow *f, int nodes, int src, int sink)
{
	int64_t *dist = malloc((size_t)nodes * sizeof(*dist));
	int *via = malloc((size_t)nodes * sizeof(*via));
	int *queue = malloc((size_t)nodes * sizeof(*queue));
	char *inq = calloc((size_t)nodes, 1);
	int head = 0, count = 0, v, rc = -ENOMEM;

	if (!dist || !via || !queue || !inq)
		goto out;
	for (v = 0; v < nodes; v++) {
		dist[v] = INT64_MAX;
		via[v] = -1;
	}
	dist[src] = 0;
	queue[0] = src;
	count = 1;
	inq[src] = 1;
	while (count) {
		int u = queue[head], i;

		head = (head + 1) % nodes;
		count--;
		inq[u] = 0;
		for (i = f->first[u]; i >= 0; i = f->e[i].next) {
			struct edge *e = &f->e[i];

			if (!e->cap || dist[u] + e->cost >= dist[e->to])
				continue;
			dist[e->to] = dist[u] + e->cost;
			via[e->to] = i;
			if (!inq[e->to]) {
				queue[(head + count) % nodes] = e->to;
				count++;
				inq[e->to] = 1;
			}
		}
	}
	rc = -ENOSPC;
	if (via[sink] < 0)
		goto out;
	for (v = sink; v != src; v = f->e[via[v] ^ 1].to) {
		f->e[via[v]].cap--;
		f->e[via[v] ^ 1].cap++;
	}
	rc = 0;
out:
	free(dist);
	free(via);
	free(queue);
	free(inq);
	return rc;
}

/*
 * Primary rails of the GPUs in gs[0..s) (indices into cands) among the
 * rails rs[0..r) (indices into t->rail). primary[] is indexed like cands.
 */
static int solve_flow(const struct gpu_cands *cands, const int *gs, int s,
		      const int *rs, int r, const int *rail_pos, int *primary)
{
	int nodes = s + r + 2, src = s + r, sink = s + r + 1, i, k, rc = 0;
	size_t pairs = 0;
	struct flow f;

	for (i = 0; i < s; i++)
		pairs += cands[gs[i]].n;
	f.e = malloc((pairs + (size_t)s + (size_t)r * (size_t)s) * 2 *
		     sizeof(*f.e));
	f.first = malloc((size_t)nodes * sizeof(*f.first));
	if (!f.e || !f.first) {
		rc = -ENOMEM;
		goto out;
	}
	f.ne = 0;
	memset(f.first, -1, (size_t)nodes * sizeof(*f.first));
	for (i = 0; i < s; i++) {
		const struct gpu_cands *gc = &cands[gs[i]];
		size_t c;

		add_edge(&f, src, i, 0);
		for (c = 0; c < gc->n; c++) {
			int j = rail_pos[gc->c[c].rail];
			int64_t order = (int64_t)i * r - (int64_t)j * s;

			add_edge(&f, i, s + j, gc->c[c].dist * COST_DIST +
				 (order < 0 ? -order : order));
		}
	}
	/* Convex load cost: the k-th GPU on a rail costs k units. */
	for (i = 0; i < r; i++)
		for (k = 1; k <= s; k++)
			add_edge(&f, s + i, sink, k * COST_LOAD);
	for (i = 0; i < s && !rc; i++)
		rc = augment(&f, nodes, src, sink);
	for (i = 0; i < s && !rc; i++) {
		int e;

		primary[gs[i]] = -1;
		for (e = f.first[i]; e >= 0; e = f.e[e].next)
			if (f.e[e].to >= s && f.e[e].to < s + r && !f.e[e].cap &&
			    !(e & 1))
				primary[gs[i]] = rs[f.e[e].to - s];
	}
out:
	free(f.e);
	free(f.first);
	return rc;
}

/* Too large for the flow: each GPU in turn takes its least loaded rail. */
static void solve_greedy(const struct gpu_cands *cands, const int *gs, int s,
			 int *load, int *primary)
{
	int i;

	for (i = 0; i < s; i++) {
		const struct gpu_cands *gc = &cands[gs[i]];
		size_t c, best = 0;

		for (c = 1; c < gc->n; c++) {
			const struct aff_cand *x = &gc->c[c], *b = &gc->c[best];

			if (load[x->rail] < load[b->rail] ||
			    (load[x->rail] == load[b->rail] && x->dist < b->dist))
				best = c;
		}
		primary[gs[i]] = gc->c[best].rail;
		load[gc->c[best].rail]++;
	}
}

static int cand_dist(const struct gpu_cands *gc, int rail)
{
	size_t c;

	for (c = 0; c < gc->n; c++)
		if (gc->c[c].rail == rail)
			return gc->c[c].dist;
	return -1;
}

int aff_rail_set_push(struct aff_rail_set *s, int rail)
{
	int *p = realloc(s->rail, (s->n + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	s->rail = p;
	s->rail[s->n++] = rail;
	return 0;
}

/* Hand each unused rail to the GPU that reaches it with the fewest rails. */
static int give_spares(const struct aff_topo *t, const struct gpu_cands *cands,
		       size_t n, const int *load, struct aff_rail_set *out)
{
	int *start = calloc(t->nrail + 2, sizeof(int));
	int *who = NULL, *dist = NULL;
	size_t r, g, c, total = 0;
	int rc = -ENOMEM;

	/* Who ranks each rail best: rail -> GPUs (CSR). */
	for (g = 0; start && g < n; g++)
		for (c = 0; c < cands[g].n; c++, total++)
			start[cands[g].c[c].rail + 2]++;
	who = malloc((total + 1) * sizeof(int));
	dist = malloc((total + 1) * sizeof(int));
	if (!start || !who || !dist)
		goto out;
	for (r = 0; r < t->nrail; r++)
		start[r + 2] += start[r + 1];
	for (g = 0; g < n; g++)
		for (c = 0; c < cands[g].n; c++) {
			int k = start[cands[g].c[c].rail + 1]++;

			who[k] = (int)g;
			dist[k] = cands[g].c[c].dist;
		}
	for (r = 0; r < t->nrail; r++) {
		int best = -1, bd = 0, k;

		if (load[r])
			continue;
		for (k = start[r]; k < start[r + 1]; k++) {
			int gg = who[k];

			if (best < 0 || out[gg].n < out[best].n ||
			    (out[gg].n == out[best].n && dist[k] < bd)) {
				best = gg;
				bd = dist[k];
			}
		}
		if (best >= 0 && aff_rail_set_push(&out[best], (int)r) < 0)
			goto out;
	}
	rc = 0;
out:
	free(start);
	free(who);
	free(dist);
	return rc;
}

/* Secondaries in distance order after the primary. */
static void order_rails(const struct gpu_cands *gc, struct aff_rail_set *s)
{
	size_t i, j;

	for (i = 2; i < s->n; i++)
		for (j = i; j > 1 && cand_dist(gc, s->rail[j]) <
				     cand_dist(gc, s->rail[j - 1]); j--) {
			int tmp = s->rail[j];

			s->rail[j] = s->rail[j - 1];
			s->rail[j - 1] = tmp;
		}
}

struct groups {
	int *parent;		/* union-find, n + nrail */
	int *gs, *rs;		/* GPUs, rails sorted by group */
	int *gstart, *rstart;	/* group k's slice in gs, rs */
	int *rail_pos;		/* rail -> position in its group */
	int *load;		/* GPUs per rail */
	int *primary;		/* per GPU */
};

/* Counting sort of items [0, count) by group (root id < ngroups). */
static void by_group(int *parent, size_t base, size_t count, size_t ngroups,
		     int *start, int *sorted)
{
	size_t i;

	memset(start, 0, (ngroups + 2) * sizeof(*start));
	for (i = 0; i < count; i++)
		start[uf_find(parent, (int)(base + i)) + 2]++;
	for (i = 0; i < ngroups; i++)
		start[i + 2] += start[i + 1];
	for (i = 0; i < count; i++)
		sorted[start[uf_find(parent, (int)(base + i)) + 1]++] = (int)i;
}

static int solve_groups(const struct aff_topo *t, const struct gpu_cands *cands,
			size_t n, struct groups *w)
{
	size_t i, c, g, ngroups = n + t->nrail;
	int rc = 0;

	/* The caller sized w for n + nrail items; a sum that wrapped is no node. */
	if (ngroups < n)
		return -EOVERFLOW;
	for (i = 0; i < ngroups; i++)
		w->parent[i] = (int)i;
	for (g = 0; g < n; g++)
		for (c = 0; c < cands[g].n; c++) {
			int a = uf_find(w->parent, (int)g);
			int b = uf_find(w->parent, (int)n + cands[g].c[c].rail);

			w->parent[a] = b;
		}
	by_group(w->parent, 0, n, ngroups, w->gstart, w->gs);
	by_group(w->parent, n, t->nrail, ngroups, w->rstart, w->rs);
	for (g = 0; g < ngroups && !rc; g++) {
		int *gs = w->gs + w->gstart[g], *rs = w->rs + w->rstart[g];
		int s = w->gstart[g + 1] - w->gstart[g];
		int r = w->rstart[g + 1] - w->rstart[g], k;
		size_t pairs = 0;

		if (!s || !r)
			continue;
		for (k = 0; k < s; k++)
			pairs += cands[gs[k]].n;
		for (k = 0; k < r; k++)
			w->rail_pos[rs[k]] = k;
		if (pairs + (size_t)s * (size_t)r > FLOW_MAX_PAIRS) {
			solve_greedy(cands, gs, s, w->load, w->primary);
			continue;
		}
		rc = solve_flow(cands, gs, s, rs, r, w->rail_pos, w->primary);
		for (k = 0; k < s && !rc; k++)
			w->load[w->primary[gs[k]]]++;
	}
	return rc;
}

int aff_assign_rails(const struct aff_topo *t, const int *gpu, size_t n,
		     struct aff_rail_set *out)
{
	struct aff_ranker rk = { 0 };
	struct gpu_cands *cands = calloc(n ? n : 1, sizeof(*cands));
	struct groups w = { 0 };
	size_t i, total = n + t->nrail + 1;
	int rc;

	memset(out, 0, n * sizeof(*out));
	w.parent = malloc(total * sizeof(int));
	w.gs = malloc(total * sizeof(int));
	w.rs = malloc(total * sizeof(int));
	w.gstart = malloc((total + 2) * sizeof(int));
	w.rstart = malloc((total + 2) * sizeof(int));
	w.rail_pos = malloc(total * sizeof(int));
	w.load = calloc(total, sizeof(int));
	w.primary = malloc(total * sizeof(int));
	rc = -ENOMEM;
	if (!cands || !w.parent || !w.gs || !w.rs || !w.gstart ||
	    !w.rstart || !w.rail_pos ||
	    !w.load || !w.primary)
		goto out;
	rc = aff_ranker_init(&rk, t);
	for (i = 0; i < n && !rc; i++) {
		rc = aff_rank_best(&rk, t->gpus[gpu[i]], AFF_RANK_PLAN, &cands[i].c,
				   &cands[i].n);
		w.primary[i] = -1;
	}
	if (!rc)
		rc = solve_groups(t, cands, n, &w);
	for (i = 0; i < n && !rc; i++)
		if (cands[i].n)
			rc = aff_rail_set_push(&out[i], w.primary[i]);
	if (!rc)
		rc = give_spares(t, cands, n, w.load, out);
	for (i = 0; i < n && !rc; i++)
		order_rails(&cands[i], &out[i]);
out:
	for (i = 0; cands && i < n; i++)
		free(cands[i].c);
	free(cands);
	aff_ranker_fini(&rk);
	free(w.parent);
	free(w.gs);
	free(w.rs);
	free(w.gstart);
	free(w.rstart);
	free(w.rail_pos);
	free(w.load);
	free(w.primary);
	if (rc)
		for (i = 0; i < n; i++) {
			free(out[i].rail);
			out[i].rail = NULL;
			out[i].n = 0;
		}
	return rc;
}
