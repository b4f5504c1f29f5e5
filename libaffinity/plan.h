/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Private to libaffinity: the plan and its two algorithms. */
#ifndef RAILBIND_PLAN_H
#define RAILBIND_PLAN_H

#include "model.h"

struct aff_rail_set {
	int *rail;		/* indices in topo->rail, primary first */
	size_t n;
};

struct aff_warning {
	char *id;
	char *subject;
	char *message;
};

struct aff_rank {
	int gpu;		/* index in topo->gpus */
	int mig;		/* the GPU's MIG instance (gpu_ident.h), -1 the whole GPU */
	struct aff_rail_set rails;
	hwloc_bitmap_t cpus;
	hwloc_bitmap_t mems;	/* NULL when the GPU's locality is unknown */
	char *cpus_str;
	char *mems_str;
	char **env;		/* NULL-terminated */
	char **nic_names;	/* per rail: name, else PCI address */
};

struct aff_plan {
	int refcount;
	struct aff_topo *topo;
	unsigned long flags;
	struct aff_rank *rank;
	size_t nrank;
	struct aff_warning *warn;
	size_t nwarn;
};

/*
 * Give each of the n GPUs (indices in topo->gpus) its rails: the rails at
 * its best path class, spread evenly by a min-cost assignment, then the
 * rails nobody got handed to the GPUs that can reach them at that class.
 * out[] has n entries, filled here (free each .rail).
 */
int aff_assign_rails(const struct aff_topo *t, const int *gpu, size_t n,
		     struct aff_rail_set *out);

/*
 * Split the allowed CPUs between the n GPUs: the GPUs sharing a locality
 * share its cores, evenly, contiguously, whole cores, cache domains kept
 * whole where the counts allow. GPUs of unknown locality get all allowed
 * CPUs. out[] has n bitmaps allocated by the caller.
 */
int aff_split_cpus(const struct aff_topo *t, const int *gpu, size_t n,
		   hwloc_const_bitmap_t allowed, hwloc_bitmap_t *out);

#endif
