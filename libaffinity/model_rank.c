// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Which NICs are rails, and how a GPU's NICs rank.
 *
 * A rail is left out when its port is known and not ACTIVE (NCCL's IB
 * transport skips such ports, src/transport/net_ib/init.cc), or when it is
 * much slower than the fastest rail (a management port beside the compute
 * rails) unless railbind.conf says slow-rails = yes or names it in
 * include-nic. The plan and the audit read this one mark.
 *
 * A GPU's NICs rank, best first, by: a PCI NIC before one without a PCI
 * device (a VM's virtual interface); the bandwidth NCCL gives the pair
 * (model_bandwidth.c); the class NCCL computes; the class of the PCIe tree (which
 * tells a root complex's own NIC from its neighbour's, NCCL's PHB both). The
 * first two criteria are NCCL's own order (ncclTopoGetLocal), the NIC-less
 * virtual interfaces excepted: NCCL may prefer one, railbind keeps the PCI
 * NIC and says so.
 *
 * Every pair of a large node is not looked at: a GPU's own root complex is
 * searched first, and the rest of the node only when something there could
 * still rank as well (a rail elsewhere is never nearer than PHB, but may be
 * faster).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

static bool port_down(const struct aff_rail *r)
{
	return r->port_state && strcmp(r->port_state, "ACTIVE");
}

/* BlueField-2 and -3 (15b3:a2d6, a2dc): DPUs, whose port serves the host. */
static bool is_dpu(const struct aff_dev *d)
{
	return d->vendor == 0x15b3 && (d->device == 0xa2d6 || d->device == 0xa2dc);
}

/*
 * A DPU carries the node's north-south traffic (storage, the front-end
 * network): beside RDMA rails of other NICs it is no rail unless include-nic
 * names it; on a node whose only rails are DPUs it stays one.
 */
static void mark_north_south(struct aff_topo *t)
{
	bool other = false;
	size_t i;

	for (i = 0; i < t->nrail; i++)
		other = other || (!t->rail[i].excl && t->rail[i].rdma &&
				  !is_dpu(&t->dev[t->rail[i].dev]));
	for (i = 0; other && i < t->nrail; i++) {
		struct aff_rail *r = &t->rail[i];

		if (!r->excl && !r->included && is_dpu(&t->dev[r->dev]))
			r->excl = AFF_EXCL_NORTH_SOUTH;
	}
}

void aff_mark_excluded(struct aff_topo *t)
{
	double fastest = 0;
	size_t i;

	for (i = 0; i < t->nrail; i++) {
		struct aff_rail *r = &t->rail[i];

		r->excl = port_down(r) ? AFF_EXCL_DOWN : AFF_EXCL_NONE;
		/* A virtual interface's speed is whatever its driver says. */
		if (!r->excl && r->rate > fastest && t->dev[r->dev].pci[0])
			fastest = r->rate;
	}
	mark_north_south(t);
	if (t->ctx->conf.slow_rails)
		return;
	/* Under a quarter of the fastest: 25 GbE beside 200 Gb/s and faster. */
	for (i = 0; i < t->nrail; i++) {
		struct aff_rail *r = &t->rail[i];

		if (!r->excl && !r->included && r->rate > 0 && r->rate * 4 < fastest)
			r->excl = AFF_EXCL_SLOW;
	}
}

const char *aff_excl_name(enum aff_excl e)
{
	switch (e) {
	case AFF_EXCL_DOWN:
		return "port-down";
	case AFF_EXCL_SLOW:
		return "slow";
	case AFF_EXCL_NORTH_SOUTH:
		return "north-south";
	default:
		return NULL;
	}
}

static bool in_mode(const struct aff_rail *r, enum aff_rank_mode mode)
{
	switch (mode) {
	case AFF_RANK_PLAN:
		return r->excl == AFF_EXCL_NONE;
	case AFF_RANK_NCCL:
		return r->excl != AFF_EXCL_DOWN;
	default:
		return true;
	}
}

/* Bandwidths equal but for rounding: 0. */
static int bw_cmp(double a, double b)
{
	if (a == b || fabs(a - b) <= 1e-9 * aff_fmax(fabs(a), fabs(b)))
		return 0;
	return a > b ? -1 : 1;
}

int aff_key_cmp(const struct aff_key *a, const struct aff_key *b,
		enum aff_rank_mode mode)
{
	int c;

	if (mode != AFF_RANK_NCCL && a->virt != b->virt)
		return a->virt ? 1 : -1;
	c = bw_cmp(a->bw, b->bw);
	if (c)
		return c;
	if (a->nccl != b->nccl)
		return a->nccl < b->nccl ? -1 : 1;
	if (mode != AFF_RANK_NCCL && a->path != b->path)
		return a->path < b->path ? -1 : 1;
	return 0;
}

void aff_pair_key(const struct aff_topo *t, int gdev, int rail, struct aff_key *k,
		  int *dist)
{
	int nic = t->rail[rail].dev;

	k->virt = !t->dev[nic].pci[0];
	k->bw = aff_pair_bw(t, gdev, rail);
	k->nccl = aff_nccl_rail_path(t, gdev, rail);
	k->path = aff_path_between(t, gdev, aff_rail_path_dev(&t->rail[rail]), dist);
}

static int key_hostbridge(const struct aff_topo *t, size_t r)
{
	return t->dev[t->rail[r].dev].hostbridge;
}

/* Rails bucketed by a key (host bridge or locality), counting sort. */
static int bucket(struct aff_buckets *b, const struct aff_topo *t, size_t nkeys,
		  int (*key)(const struct aff_topo *, size_t))
{
	size_t i;

	b->start = calloc(nkeys + 2, sizeof(*b->start));
	b->rail = calloc(t->nrail + 1, sizeof(*b->rail));
	if (!b->start || !b->rail)
		return -ENOMEM;
	for (i = 0; i < t->nrail; i++) {
		int k = key(t, i);

		if (k >= 0)
			b->start[k + 1]++;
	}
	for (i = 0; i < nkeys; i++)
		b->start[i + 1] += b->start[i];
	b->start[nkeys + 1] = b->start[nkeys];
	for (i = 0; i < t->nrail; i++) {
		int k = key(t, i);

		/* start[k] is the next free slot; restored below. */
		if (k >= 0)
			b->rail[b->start[k]++] = (int)i;
	}
	for (i = nkeys; i > 0; i--)
		b->start[i] = b->start[i - 1];
	b->start[0] = 0;
	return 0;
}

int aff_ranker_init(struct aff_ranker *rk, const struct aff_topo *t)
{
	size_t i;
	int m, rc;

	memset(rk, 0, sizeof(*rk));
	rk->t = t;
	rk->all = malloc((t->nrail + 1) * sizeof(*rk->all));
	if (!rk->all)
		return -ENOMEM;
	for (i = 0; i < t->nrail; i++) {
		double cap = aff_fmin(aff_rail_bw(t, (int)i), aff_link_bw(t, t->rail[i].dev));

		rk->all[i] = (int)i;
		for (m = 0; m < AFF_RANK_MODES; m++)
			if (in_mode(&t->rail[i], (enum aff_rank_mode)m) &&
			    cap > rk->max_cap[m])
				rk->max_cap[m] = cap;
	}
	rc = bucket(&rk->by_hb, t, t->ndev, key_hostbridge);
	if (rc)
		aff_ranker_fini(rk);
	return rc;
}

void aff_ranker_fini(struct aff_ranker *rk)
{
	free(rk->all);
	free(rk->by_hb.start);
	free(rk->by_hb.rail);
	memset(rk, 0, sizeof(*rk));
}

/* Keep in out[] the rails of rails[0..n) that rank best; *nout of them. */
static void best_of(const struct aff_ranker *rk, int gdev, const int *rails, size_t n,
		    enum aff_rank_mode mode, struct aff_cand *out, size_t *nout)
{
	const struct aff_topo *t = rk->t;
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		struct aff_cand c = { .rail = rails[i] };
		int cmp;

		/* rails[0..n) is filled by every caller (all[] holds each rail);
		 * the analyzer loses t->nrail between the fill and this call. */
		// NOLINTNEXTLINE(clang-analyzer-core.uninitialized.ArraySubscript)
		if (!in_mode(&t->rail[c.rail], mode))
			continue;
		aff_pair_key(t, gdev, c.rail, &c.key, &c.dist);
		cmp = k ? aff_key_cmp(&c.key, &out[0].key, mode) : -1;
		if (cmp < 0)
			k = 0;
		if (cmp <= 0)
			out[k++] = c;
	}
	*nout = k;
}

/*
 * Whether no rail off the GPU's root complex can rank with the best found
 * on it: none is faster than the GPU's link and the fastest rail allow, and
 * none is nearer than PHB in NCCL's class or NODE in the tree's.
 */
static bool settled(const struct aff_ranker *rk, int gdev, const struct aff_cand *best,
		    size_t n, enum aff_rank_mode mode)
{
	double ub = aff_fmin(aff_link_bw(rk->t, gdev), rk->max_cap[mode]);
	int c;

	if (!n || (mode != AFF_RANK_NCCL && best->key.virt))
		return false;
	c = bw_cmp(best->key.bw, ub);
	if (c < 0)
		return true;
	if (c > 0)
		return false;
	if (mode == AFF_RANK_NCCL)
		return best->key.nccl < AFF_PATH_PHB;
	return best->key.path <= AFF_PATH_PHB;
}

/* The best of rails[0..n) into a fresh *out, shrunk to what it holds. */
static int search(const struct aff_ranker *rk, int gdev, const int *rails, size_t n,
		  enum aff_rank_mode mode, struct aff_cand **out, size_t *nout)
{
	struct aff_cand *c = malloc((n ? n : 1) * sizeof(*c)), *p;

	free(*out);
	*out = c;
	*nout = 0;
	if (!c)
		return -ENOMEM;
	best_of(rk, gdev, rails, n, mode, c, nout);
	p = realloc(c, (*nout ? *nout : 1) * sizeof(*c));
	if (p)
		*out = p;
	return 0;
}

int aff_rank_best(const struct aff_ranker *rk, int gdev, enum aff_rank_mode mode,
		  struct aff_cand **out, size_t *n)
{
	const struct aff_topo *t = rk->t;
	const struct aff_buckets *hb = &rk->by_hb;
	int h = t->dev[gdev].hostbridge, rc;

	*out = NULL;
	*n = 0;
	if (h >= 0 && hb->start[h + 1] > hb->start[h]) {
		rc = search(rk, gdev, hb->rail + hb->start[h],
			    (size_t)(hb->start[h + 1] - hb->start[h]), mode, out, n);
		if (rc || settled(rk, gdev, *out, *n, mode))
			return rc;
	}
	return search(rk, gdev, rk->all, t->nrail, mode, out, n);
}
