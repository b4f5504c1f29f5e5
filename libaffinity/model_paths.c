// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Path classes between two PCI devices, as nvidia-smi topo -m names them
 * (path), and as NCCL computes them (nccl_path: no NODE, its own switches).
 * A switch is counted once; which bridges are switches is model_switches.c's.
 */
#include <errno.h>
#include <limits.h>
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
 * PIX when a and b hang from the same switch, PXB when their chains of
 * switches (up: PCIe tree; nccl: NCCL's) meet, else -1 (the root complex).
 */
static enum aff_path switch_class(const struct aff_topo *t, int a, int b, bool nccl)
{
	int x, y;

	x = nccl ? t->dev[a].nccl_up : t->dev[a].up;
	y = nccl ? t->dev[b].nccl_up : t->dev[b].up;
	if (x >= 0 && x == y)
		return AFF_PATH_PIX;
	for (; x >= 0; x = nccl ? t->dev[x].nccl_up : t->dev[x].up)
		for (y = nccl ? t->dev[b].nccl_up : t->dev[b].up; y >= 0;
		     y = nccl ? t->dev[y].nccl_up : t->dev[y].up)
			if (x == y)
				return AFF_PATH_PXB;
	return AFF_PATH_NONE;
}

/* The one NUMA node a device's locality is, -1 when unknown or several. */
static int single_node(const struct aff_topo *t, const struct aff_dev *d)
{
	if (d->loc < 0 || !t->loc[d->loc].known)
		return -1;
	return t->loc[d->loc].numa;
}

/*
 * Path class between devices a and b; *dist gets a tie-break distance
 * among pairs of one class: bridges crossed, then CPU-side hops.
 */
enum aff_path aff_path_between(const struct aff_topo *t, int a, int b,
			       int *dist)
{
	const struct aff_dev *da = &t->dev[a], *db = &t->dev[b];
	int x, y, da_depth, db_depth, hops = 0, na, nb;
	enum aff_path sw;

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
	if (x == y && x >= 0) {
		if (dist)
			*dist = hops;
		sw = switch_class(t, a, b, false);
		return sw != AFF_PATH_NONE ? sw : AFF_PATH_PHB;
	}
	if (dist)
		*dist = hops + 100 * cpu_distance(t, da->loc, db->loc);
	/*
	 * NODE needs both devices on one and the same NUMA node: an unknown
	 * locality (numa_node -1) or one spanning several nodes proves nothing,
	 * so the path across the host bridges is SYS. NCCL's topology files
	 * have no root complex below a NUMA node, hence no NODE either.
	 */
	na = single_node(t, da);
	nb = single_node(t, db);
	if (t->src != AFF_SRC_NCCL && na >= 0 && na == nb)
		return AFF_PATH_NODE;
	return AFF_PATH_SYS;
}

/*
 * The CPU node NCCL puts a device under: the raw sysfs numa_node (-1
 * included, which NCCL groups as one node) of the top of its chain, the node
 * NCCL hangs from the CPU, else what that one's locality says; a locality
 * spanning several nodes stands for itself.
 */
static int nccl_cpu(const struct aff_topo *t, int dev)
{
	const struct aff_dev *d;

	while (t->dev[dev].nccl_up >= 0)
		dev = t->dev[dev].nccl_up;
	d = &t->dev[dev];
	if (d->numa_raw != INT_MIN)
		return d->numa_raw;
	if (d->loc >= 0 && t->loc[d->loc].known && t->loc[d->loc].numa >= 0)
		return t->loc[d->loc].numa;
	if (d->loc >= 0 && t->loc[d->loc].known)
		return -2 - d->loc;
	return -1;
}

enum aff_path aff_nccl_path_between(const struct aff_topo *t, int a, int b)
{
	const struct aff_dev *da = &t->dev[a], *db = &t->dev[b];
	enum aff_path sw;

	if (da->hostbridge >= 0 && da->hostbridge == db->hostbridge) {
		sw = switch_class(t, a, b, true);
		return sw != AFF_PATH_NONE ? sw : AFF_PATH_PHB;
	}
	if (t->src == AFF_SRC_NCCL)
		return AFF_PATH_SYS;
	/* NCCL has one CPU node per NUMA node, every root complex below it. */
	return nccl_cpu(t, a) == nccl_cpu(t, b) ? AFF_PATH_PHB : AFF_PATH_SYS;
}

/*
 * src/graph/paths.cc: a GPU-NIC path better than PHB where ncclTopoCheckGdr
 * says no (the NIC's or the GPU's gdrSupport 0: no peer-memory support, as
 * an NCCL file's gdr="0" or the node's RailbindPeerMemory "none" says) is
 * diverted through the CPU local to the GPU, both ways.
 */
enum aff_path aff_nccl_rail_path(const struct aff_topo *t, int gdev, int rail)
{
	enum aff_path p = aff_nccl_path_between(t, gdev, aff_rail_path_dev(&t->rail[rail]));
	bool no_gdr = t->rail[rail].gdr == 0 || t->dev[gdev].gdr == 0 ||
		      (t->rail[rail].rdma && t->peer_memory && !strcmp(t->peer_memory, "none"));

	if (p != AFF_PATH_NONE && p < AFF_PATH_PHB && no_gdr)
		return AFF_PATH_PHB;
	return p;
}
