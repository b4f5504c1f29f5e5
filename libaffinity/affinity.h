/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libaffinity - GPU/NIC/NUMA affinity for multi-GPU, multi-NIC nodes.
 *
 * Conventions, for every function below unless its comment says otherwise:
 *  - functions return int: 0 on success, a negative errno on failure, and
 *    hand results back through out-parameters;
 *  - only aff_ctx_new() returns a pointer (NULL with errno set on failure);
 *  - strings returned by getters are owned by the object they came from and
 *    live as long as it does; strings returned through `char **` are
 *    malloc()ed and owned by the caller;
 *  - errno meanings: ENOENT no such input, EINVAL malformed input or
 *    argument, ENODEV no accelerator, ERANGE no such rank, ENOSYS unsupported,
 *    EXDEV a binding that cannot be enforced.
 *
 * Thread safety: none inside one context. Use one context per thread, or
 * lock around it; distinct contexts never share state.
 */
#ifndef RAILBIND_AFFINITY_H
#define RAILBIND_AFFINITY_H

#include <stddef.h>
#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

/* API version: major << 16 | minor. A major change breaks callers. */
#define AFF_API_VERSION 0x00010000u
#define AFF_API_MAJOR(v) ((v) >> 16)

/**
 * aff_get_api_version - the API version of the library actually loaded.
 * Tools compare its major with AFF_API_VERSION's at start-up. Since: 1.0
 */
unsigned int aff_get_api_version(void);

struct aff_ctx;
struct aff_topo;
struct aff_plan;

/**
 * aff_ctx_new - create a context.
 * @root: alternate filesystem root for /sys, /proc and the config file
 *        (NULL or "/" for the real one).
 * Returns a context with a reference count of 1, or NULL with errno set.
 * Since: 1.0
 */
struct aff_ctx *aff_ctx_new(const char *root);
struct aff_ctx *aff_ctx_ref(struct aff_ctx *ctx);
/** aff_ctx_unref - drop a reference; frees at zero. NULL is a no-op. */
struct aff_ctx *aff_ctx_unref(struct aff_ctx *ctx);

typedef void (*aff_log_fn)(void *data, int priority, const char *file,
			   int line, const char *fn, const char *format,
			   va_list args);
/**
 * aff_set_log_fn - replace the log sink (default: stderr).
 * The library never prints except through this function. Messages above
 * the priority set by aff_set_log_priority() (syslog levels, default
 * LOG_ERR, or $RAILBIND_LOG) are dropped. Since: 1.0
 */
void aff_set_log_fn(struct aff_ctx *ctx, aff_log_fn fn, void *data);
void aff_set_log_priority(struct aff_ctx *ctx, int priority);
int aff_get_log_priority(const struct aff_ctx *ctx);

/**
 * aff_ctx_load_config - read a railbind.conf(5) file.
 * @path: the file; NULL means ${root}/etc/railbind/railbind.conf, whose
 *        absence is not an error (an explicit path must exist).
 * @err, @errlen: receives "FILE:LINE: what was expected" on -EINVAL.
 * Since: 1.0
 */
int aff_ctx_load_config(struct aff_ctx *ctx, const char *path, char *err,
			size_t errlen);

/* Flags of aff_topo_load(). */
enum aff_load_flags {
	/* Reject an input that loads but has no accelerator. */
	AFF_LOAD_REQUIRE_GPU = 1ul << 0,
};

/**
 * aff_topo_load - build the node model.
 * @input: NULL for the live node, else a file: hwloc XML (v1 or v2, a
 *         railbind snapshot included) or an NCCL topology XML.
 * @out: receives the topology (reference count 1).
 * @err, @errlen: one line naming the file and what was wrong.
 * Since: 1.0
 */
int aff_topo_load(struct aff_ctx *ctx, const char *input, unsigned long flags,
		  struct aff_topo **out, char *err, size_t errlen);
struct aff_topo *aff_topo_ref(struct aff_topo *topo);
struct aff_topo *aff_topo_unref(struct aff_topo *topo);

/* Path classes, best first. NV is reserved for NVLink (from NVML). */
enum aff_path {
	AFF_PATH_NONE = 0,
	AFF_PATH_NV,
	AFF_PATH_PIX,
	AFF_PATH_PXB,
	AFF_PATH_PHB,
	AFF_PATH_NODE,
	AFF_PATH_SYS,
};
/** aff_path_name - "PIX", ... ; NULL for an unknown value. */
const char *aff_path_name(enum aff_path path);
/** aff_path_from_name - inverse of aff_path_name(); -EINVAL if unknown. */
int aff_path_from_name(const char *name, enum aff_path *out);

size_t aff_topo_gpu_count(const struct aff_topo *topo);
size_t aff_topo_nic_count(const struct aff_topo *topo);
/** aff_topo_gpu_pci - PCI address "dddd:bb:dd.f" of GPU @i (PCI order). */
const char *aff_topo_gpu_pci(const struct aff_topo *topo, size_t i);
/** aff_topo_nic_name - RDMA device name of rail @i, or its PCI address. */
const char *aff_topo_nic_name(const struct aff_topo *topo, size_t i);
/** aff_topo_path - path class between GPU @gpu and rail NIC @nic. */
enum aff_path aff_topo_path(const struct aff_topo *topo, size_t gpu, size_t nic);

/* Flags of the JSON writers. */
enum aff_json_flags {
	AFF_JSON_PRETTY = 1ul << 0,
};

/** aff_topo_json - the railbind.topo/1 document, malloc()ed into @out. */
int aff_topo_json(const struct aff_topo *topo, unsigned long flags, char **out);

/* Flags of aff_plan_new(). */
enum aff_plan_flags {
	/* Also set CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES per rank. */
	AFF_PLAN_ISOLATE_GPU = 1ul << 0,
	/* Memory policy bind instead of preferred. */
	AFF_PLAN_MEM_BIND = 1ul << 1,
};

struct aff_plan_spec {
	unsigned long flags;
	/* Linux cpulist of the CPUs the ranks may use; NULL: all of the node
	 * (live node: the calling process's affinity). */
	const char *allowed_cpus;
	/* CUDA_VISIBLE_DEVICES-style claim (indices or PCI addresses, comma
	 * separated) narrowing the GPUs; NULL: all. */
	const char *visible_gpus;
};

/**
 * aff_plan_new - compute the plan for every local rank.
 * @spec: may be NULL (defaults).
 * Returns -ENODEV when the node has no accelerator.
 * Since: 1.0
 */
int aff_plan_new(struct aff_topo *topo, const struct aff_plan_spec *spec,
		 struct aff_plan **out, char *err, size_t errlen);
struct aff_plan *aff_plan_ref(struct aff_plan *plan);
struct aff_plan *aff_plan_unref(struct aff_plan *plan);

size_t aff_plan_rank_count(const struct aff_plan *plan);
/** aff_plan_rank_cpus - Linux cpulist of rank @rank's CPUs. */
const char *aff_plan_rank_cpus(const struct aff_plan *plan, size_t rank);
/** aff_plan_rank_mems - cpulist-style NUMA nodes, or NULL when unknown. */
const char *aff_plan_rank_mems(const struct aff_plan *plan, size_t rank);
/** aff_plan_rank_gpu - PCI address of rank @rank's GPU. */
const char *aff_plan_rank_gpu(const struct aff_plan *plan, size_t rank);
/** aff_plan_rank_nic_count/aff_plan_rank_nic - rank's rails, primary first. */
size_t aff_plan_rank_nic_count(const struct aff_plan *plan, size_t rank);
const char *aff_plan_rank_nic(const struct aff_plan *plan, size_t rank, size_t i);
/**
 * aff_plan_rank_env - the environment of rank @rank, as NAME=VALUE strings
 * in a NULL-terminated array owned by the plan.
 */
const char *const *aff_plan_rank_env(const struct aff_plan *plan, size_t rank);

/** aff_plan_json - the railbind.plan/1 document, malloc()ed into @out. */
int aff_plan_json(const struct aff_plan *plan, unsigned long flags, char **out);

#ifdef __cplusplus
}
#endif
#endif
