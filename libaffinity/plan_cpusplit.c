// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * CPUs for each GPU: the GPUs that share a locality (a NUMA node, or the
 * package hwloc hung their PCI tree from) share its allowed cores. Cores are
 * never split (SMT siblings stay together), each GPU's share is contiguous,
 * and cache domains (L3, else L2) stay whole where the counts allow: with
 * at least as many domains as GPUs each GPU gets whole domains, otherwise
 * each domain is split between the GPUs placed on it.
 */
#include <errno.h>
#include <stdlib.h>

#include "plan.h"

struct domain {
	size_t first, n;	/* slice of the locality's core list */
};

/* Give GPUs [0, k) the cores of domains [0, d) of one locality. */
static void split(const struct aff_topo *t, const int *cores,
		  const struct domain *dom, size_t d, size_t k,
		  hwloc_bitmap_t allowed, hwloc_bitmap_t *out)
{
	size_t g, i;

	for (g = 0; g < k; g++) {
		size_t lo, hi, first, count, m, pos, dn;

		if (d >= k) {
			lo = g * d / k;
			hi = (g + 1) * d / k;
			for (i = lo; i < hi; i++)
				for (m = 0; m < dom[i].n; m++)
					hwloc_bitmap_or(out[g], out[g],
							t->core[cores[dom[i].first + m]].pus);
		} else {
			lo = g * d / k;
			/* The GPUs placed on domain lo, and g's place among them. */
			first = (lo * k + d - 1) / d;
			count = ((lo + 1) * k + d - 1) / d - first;
			pos = g - first;
			dn = dom[lo].n;
			i = pos * dn / count;
			hi = (pos + 1) * dn / count;
			if (hi <= i)
				hi = i + 1;
			for (m = i; m < hi && m < dn; m++)
				hwloc_bitmap_or(out[g], out[g],
						t->core[cores[dom[lo].first + m]].pus);
		}
		hwloc_bitmap_and(out[g], out[g], allowed);
	}
}

static int split_locality(const struct aff_topo *t, int loc, const int *gpu,
			  size_t n, hwloc_const_bitmap_t allowed,
			  hwloc_bitmap_t *out)
{
	hwloc_bitmap_t mask = hwloc_bitmap_alloc();
	size_t *members = malloc((n + 1) * sizeof(*members));
	hwloc_bitmap_t *share = calloc(n + 1, sizeof(*share));
	int *cores = malloc((t->ncore + 1) * sizeof(*cores));
	struct domain *dom = calloc(t->ncore + 1, sizeof(*dom));
	size_t i, k = 0, nc = 0, d = 0;
	int rc = -ENOMEM;

	if (!mask || !members || !share || !cores || !dom)
		goto out;
	for (i = 0; i < n; i++)
		if (t->dev[t->gpus[gpu[i]]].loc == loc)
			members[k++] = i;
	hwloc_bitmap_and(mask, t->loc[loc].cpuset, allowed);
	/* The locality's allowed cores in order, cut into cache domains. */
	for (i = 0; i < t->ncore; i++) {
		if (!hwloc_bitmap_intersects(t->core[i].pus, mask))
			continue;
		if (!nc || t->core[i].cache < 0 ||
		    t->core[i].cache != t->core[cores[nc - 1]].cache)
			dom[d++].first = nc;
		dom[d - 1].n++;
		cores[nc++] = (int)i;
	}
	/* No cache information: the locality is one domain. */
	if (d == nc && nc && t->core[cores[0]].cache < 0) {
		d = 1;
		dom[0].first = 0;
		dom[0].n = nc;
	}
	for (i = 0; i < k; i++)
		if (!(share[i] = hwloc_bitmap_alloc()))
			goto out;
	rc = 0;
	if (!nc) {
		/* Nothing allowed near these GPUs: they may run anywhere. */
		for (i = 0; i < k; i++)
			hwloc_bitmap_copy(out[members[i]], allowed);
		goto out;
	}
	split(t, cores, dom, d, k, mask, share);
	for (i = 0; i < k; i++)
		hwloc_bitmap_copy(out[members[i]], share[i]);
out:
	for (i = 0; share && i < k; i++)
		hwloc_bitmap_free(share[i]);
	free(share);
	free(members);
	free(cores);
	free(dom);
	hwloc_bitmap_free(mask);
	return rc;
}

int aff_split_cpus(const struct aff_topo *t, const int *gpu, size_t n,
		   hwloc_const_bitmap_t allowed, hwloc_bitmap_t *out)
{
	char *done = calloc(t->nloc + 1, 1);
	size_t i;
	int rc = 0;

	if (!done)
		return -ENOMEM;
	for (i = 0; i < n && !rc; i++) {
		int loc = t->dev[t->gpus[gpu[i]]].loc;

		if (loc < 0 || !t->loc[loc].known) {
			hwloc_bitmap_copy(out[i], allowed);
			continue;
		}
		if (done[loc])
			continue;
		done[loc] = 1;
		rc = split_locality(t, loc, gpu, n, allowed, out);
	}
	free(done);
	return rc;
}
