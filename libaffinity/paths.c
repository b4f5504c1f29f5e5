// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Path classes between two PCI devices, as nvidia-smi topo -m names them.
 * A switch is counted once: the loaders mark its upstream port is_switch
 * (hwloc: every second PCI-to-PCI bridge below the host bridge, NCCL's own
 * rule; NCCL XML: every <pci> bridge already is one).
 */
#include <errno.h>
#include <string.h>

#include "model.h"

static const char *const path_names[] = {
	[AFF_PATH_NONE] = NULL,
	[AFF_PATH_NV] = "NV",
	[AFF_PATH_PIX] = "PIX",
	[AFF_PATH_PXB] = "PXB",
	[AFF_PATH_PHB] = "PHB",
	[AFF_PATH_NODE] = "NODE",
	[AFF_PATH_SYS] = "SYS",
};

AFF_EXPORT const char *aff_path_name(enum aff_path path)
{
	if ((unsigned)path >= sizeof(path_names) / sizeof(path_names[0]))
		return NULL;
	return path_names[path];
}

AFF_EXPORT int aff_path_from_name(const char *name, enum aff_path *out)
{
	size_t i;

	for (i = 1; i < sizeof(path_names) / sizeof(path_names[0]); i++)
		if (name && !strcmp(name, path_names[i])) {
			*out = (enum aff_path)i;
			return 0;
		}
	return -EINVAL;
}

/* The deepest switch above device i, or -1. */
static int lowest_switch(const struct aff_topo *t, int i)
{
	for (i = t->dev[i].parent; i >= 0; i = t->dev[i].parent)
		if (t->dev[i].is_switch)
			return i;
	return -1;
}

static int depth_of(const struct aff_topo *t, int i)
{
	int d = 0;

	for (i = t->dev[i].parent; i >= 0; i = t->dev[i].parent)
		d++;
	return d;
}

/* Hops from the two localities up to their common CPU-side ancestor. */
static int cpu_distance(const struct aff_topo *t, int la, int lb)
{
	hwloc_obj_t a, b, c;

	if (la == lb)
		return 0;
	if (la < 0 || lb < 0 || !t->loc[la].obj || !t->loc[lb].obj)
		return 8;
	a = t->loc[la].obj;
	b = t->loc[lb].obj;
	c = hwloc_get_common_ancestor_obj(t->hw, a, b);
	if (!c)
		return 8;
	return (a->depth - c->depth) + (b->depth - c->depth);
}

/*
 * Path class between devices a and b; *dist gets a tie-break distance
 * among pairs of one class: bridges crossed, then CPU-side hops.
 */
enum aff_path aff_path_between(const struct aff_topo *t, int a, int b,
			       int *dist)
{
	const struct aff_dev *da = &t->dev[a], *db = &t->dev[b];
	int x, y, da_depth, db_depth, common = -1, hops = 0;

	da_depth = depth_of(t, a);
	db_depth = depth_of(t, b);
	x = a;
	y = b;
	/* Climb to equal depth, then together, to the common ancestor. */
	while (da_depth > db_depth) {
		x = t->dev[x].parent;
		da_depth--;
		hops++;
	}
	while (db_depth > da_depth) {
		y = t->dev[y].parent;
		db_depth--;
		hops++;
	}
	while (x != y && x >= 0 && y >= 0) {
		x = t->dev[x].parent;
		y = t->dev[y].parent;
		hops += 2;
	}
	if (x == y && x >= 0)
		common = x;

	if (common >= 0 && t->dev[common].type != AFF_DEV_HOSTBRIDGE) {
		int sa = lowest_switch(t, a), sb = lowest_switch(t, b), s;

		if (dist)
			*dist = hops;
		if (sa >= 0 && sa == sb)
			return AFF_PATH_PIX;
		/* Is there a switch at or above the common bridge? */
		for (s = common; s >= 0; s = t->dev[s].parent)
			if (t->dev[s].is_switch)
				return AFF_PATH_PXB;
		return AFF_PATH_PHB;
	}
	if (common >= 0) {
		if (dist)
			*dist = hops;
		return AFF_PATH_PHB;
	}
	if (dist)
		*dist = hops + 100 * cpu_distance(t, da->loc, db->loc);
	/* NCCL's topology files have no root complex below a NUMA node. */
	if (t->src != AFF_SRC_NCCL && da->loc >= 0 && db->loc >= 0 &&
	    hwloc_bitmap_isequal(t->loc[da->loc].mems, t->loc[db->loc].mems))
		return AFF_PATH_NODE;
	return AFF_PATH_SYS;
}
