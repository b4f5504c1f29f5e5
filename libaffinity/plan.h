/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Private to libaffinity: the plan and its two algorithms. */
#ifndef RAILBIND_PLAN_H
#define RAILBIND_PLAN_H

#include "model.h"

struct aff_rail_set {
	int *rail;		/* indices in topo->rail, primary first */
	size_t n;
};

/* model_rank.c: how a GPU's NICs rank (see there). */
enum aff_rank_mode {
	AFF_RANK_PLAN,		/* the rails the plan may use */
	AFF_RANK_HW,		/* every rail, left out or not */
	AFF_RANK_NCCL,		/* what NCCL sees (no down port), in its order */
	AFF_RANK_MODES,
};

struct aff_key {
	bool virt;		/* the NIC has no PCI device */
	double bw;		/* GB/s, NCCL's figure for the pair */
	enum aff_path nccl;	/* NCCL's class */
	enum aff_path path;	/* the PCIe tree's class */
};

struct aff_cand {
	int rail;
	int dist;		/* bridges and CPU hops, the last tie-break */
	struct aff_key key;
};

struct aff_buckets {
	int *start;		/* nkeys + 1 */
	int *rail;
};

struct aff_ranker {
	const struct aff_topo *t;
	struct aff_buckets by_hb;	/* rails by host bridge */
	int *all;			/* every rail */
	double max_cap[AFF_RANK_MODES];	/* the fastest rail (its port and link) */
};

int aff_ranker_init(struct aff_ranker *rk, const struct aff_topo *t);
void aff_ranker_fini(struct aff_ranker *rk);
/*
 * The rails (of mode) that rank best for the GPU at dev index gdev, all tied:
 * *out (free it) gets *n of them, none when the mode has no rail.
 */
int aff_rank_best(const struct aff_ranker *rk, int gdev, enum aff_rank_mode mode,
		  struct aff_cand **out, size_t *n);
void aff_pair_key(const struct aff_topo *t, int gdev, int rail, struct aff_key *k,
		  int *dist);
/* <0 when a ranks before b, 0 tied, >0 after, in mode's order. */
int aff_key_cmp(const struct aff_key *a, const struct aff_key *b,
		enum aff_rank_mode mode);
/* "port-down", "slow"; NULL for AFF_EXCL_NONE. */
const char *aff_excl_name(enum aff_excl e);

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
	/* plan_judge.c */
	struct aff_rail_set lost;	/* left-out rails ranking above the primary */
	struct aff_rail_set nccl;	/* what NCCL ranks best on its own */
	char *nccl_note;		/* why the primary is not among them, or NULL */
};

/* A NIC the plan leaves out: one per rail port, and exclude-nic's. */
struct aff_excluded {
	char *name;		/* RDMA device, interface or PCI address */
	char pci[16];
	int port;		/* 0 when unknown */
	const char *reason;	/* "port-down", "slow", "config" */
	char *message;
};

/* plan_uverbs.c: a rail's verbs device and whether this process can open it. */
struct aff_uverbs {
	char hca[64];
	char dev[32];		/* "uverbs3", "" when sysfs names none */
	bool openable;
};

struct aff_plan {
	int refcount;
	struct aff_topo *topo;
	unsigned long flags;
	struct aff_rank *rank;
	size_t nrank;
	struct aff_warning *warn;
	size_t nwarn;
	struct aff_excluded *excl;
	size_t nexcl;
	/* plan_env.c: the node's, the same in every rank's environment */
	char *nccl_ib_hca;	/* "=mlx5_0:1,...", NULL: no RDMA rail */
	char *socket_ifname;	/* "=eth2,...", NULL: no Ethernet rail */
	char *ucx_node;		/* "mlx5_0:1,...", NULL: no RDMA rail */
	int ucx_rails;		/* entries of ucx_node */
	bool ucx_per_rank;	/* every rail reaches every peer: the rank's own */
	bool *node_rail;	/* per topo rail: some GPU of the node is planned on it */
	char nccl_gid_index[12];	/* plan_gid.c: NCCL_IB_GID_INDEX's value, "" not set */
	struct aff_uverbs *uverbs;	/* live node only, else NULL */
	size_t nuverbs;
};

/*
 * plan_env.c: the node-wide values (before the ranks), then each rank's
 * environment (after its rails, CPUs and memory).
 */
int aff_plan_node_env(struct aff_plan *p);
int aff_plan_rank_env_build(const struct aff_plan *p, size_t k, struct aff_rank *rk);
/*
 * plan_uverbs.c: on a live node, which of the node's rail devices this
 * process can open (uverbs), and a warning when not all.
 */
int aff_plan_uverbs(struct aff_plan *p);
/* plan_gid.c: NCCL_IB_GID_INDEX, or the warning why not (after aff_plan_node_env). */
int aff_plan_gid_env(struct aff_plan *p);
/* NCCL_IB_HCA or NCCL_SOCKET_IFNAME names the rail (topo->rail index). */
bool aff_plan_env_lists(const struct aff_plan *p, int rail);

/* plan_judge.c: one more warning of the plan (plan.c's own, and the judge's). */
int aff_plan_warn(struct aff_plan *p, const char *id, const char *subject,
		  const char *message);
/*
 * plan_judge.c: after the rails are assigned, what the plan leaves out and
 * where it parts from NCCL's own choice: each rank's lost, nccl and
 * nccl_note, the plan's excl, and a warning for a GPU whose nearest NIC is
 * left out.
 */
int aff_plan_judge(struct aff_plan *p);
/* "mlx5_0", else the netdev, else the PCI address. */
const char *aff_rail_label(const struct aff_topo *t, int rail);

/*
 * Give each of the n GPUs (indices in topo->gpus) its rails: the rails that
 * rank best for it (model_rank.c), spread evenly by a min-cost assignment, then
 * the rails nobody got handed to the GPUs that rank them best too.
 * out[] has n entries, filled here (free each .rail).
 */
int aff_assign_rails(const struct aff_topo *t, const int *gpu, size_t n,
		     struct aff_rail_set *out);
/* Append a rail to a set: 0 or -ENOMEM. */
int aff_rail_set_push(struct aff_rail_set *s, int rail);

/*
 * Split the allowed CPUs between the n GPUs: the GPUs sharing a locality
 * share its cores, evenly, contiguously, whole cores, cache domains kept
 * whole where the counts allow. GPUs of unknown locality get all allowed
 * CPUs. out[] has n bitmaps allocated by the caller.
 */
int aff_split_cpus(const struct aff_topo *t, const int *gpu, size_t n,
		   hwloc_const_bitmap_t allowed, hwloc_bitmap_t *out);

#endif
