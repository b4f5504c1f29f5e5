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

#include <stdbool.h>
#include <stddef.h>
#include <stdarg.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* API version: major << 16 | minor. A major change breaks callers. */
#define AFF_API_VERSION 0x00010007u
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
 * The file is read as aff_topo_load() reads one (a regular file only,
 * without blocking), of at most 1 MiB. Since: 1.0
 */
int aff_ctx_load_config(struct aff_ctx *ctx, const char *path, char *err,
			size_t errlen);

/* Flags of aff_topo_load(). */
enum aff_load_flags {
	/* Reject an input that loads but has no accelerator. */
	AFF_LOAD_REQUIRE_GPU = 1ul << 0,
	/*
	 * Import hwloc XML in this process, not in a child: for a caller that
	 * itself runs in a process it can afford to lose (railbind's commands,
	 * railbind fleet's readers), to save the fork. Since: 1.3
	 */
	AFF_LOAD_NO_FORK = 1ul << 1,
	/*
	 * The live node: also ask the GPU vendors' libraries (NVML, ROCm SMI,
	 * dlopen()ed where installed) for NVLink/XGMI, MIG, C2C, partition
	 * modes and the driver's own GPU x GPU path classes. Starting them
	 * costs a driver start (up to seconds without persistence mode); UUIDs
	 * and device minors come from the drivers' files without it. No effect
	 * on a file or an alternate root.
	 * Since: 1.4
	 */
	AFF_LOAD_GPU_LIBS = 1ul << 2,
	/*
	 * The live node: also read each NIC's pluggable module (temperature,
	 * optical power and bias per lane, the module's own thresholds) through
	 * ethtool, for the audit's transceiver check. Needs CAP_NET_ADMIN
	 * (without it each NIC records why it could not be read); costs a few
	 * I2C reads per module. `railbind audit` and `railbind snapshot` ask.
	 * Also each Ethernet NIC's DCB state (PFC, APP table, ETS,
	 * pause counters read twice, 1 s apart, where a NIC has DCB; ECN where
	 * the driver exposes it) through DCB netlink, which needs no privilege,
	 * for the audit's roce-lossless and pause-storm checks.
	 * No effect on a file. Since: 1.7
	 * With AFF_LOAD_GPU_LIBS or this flag the live node (real root only)
	 * also asks libibverbs, dlopen()ed where rdma-core is installed, for
	 * each rail port's active and max MTU (RailbindVerbs says whether it
	 * could). Since: 1.8
	 */
	AFF_LOAD_OPTICS = 1ul << 3,
};

/**
 * aff_topo_load - build the node model.
 * @input: NULL for the live node, else a file: hwloc XML (v1 or v2, a
 *         railbind snapshot included) or an NCCL topology XML.
 * @out: receives the topology (reference count 1).
 * @err, @errlen: one line naming the file and what was wrong.
 *
 * What any file can do to the caller (since 1.3): nothing but fail with
 * one line in @err. The file is read only if it is a regular file (a FIFO,
 * a device such as /dev/zero, a socket or a directory is refused without
 * blocking), of at most max-input-size bytes (railbind.conf(5), default
 * 64 MiB: -EFBIG), and read once. hwloc's XML import, which crashes on
 * some malformed files (hwloc 2.9.0, either XML importer), runs in a child
 * process: the caller adopts the imported topology from shared memory (no
 * second parse) and turns a crash of the child, its memory limit (256 MiB
 * plus 32 times the file), its CPU limit (60 s plus 1 s per MiB) or a hang
 * (twice that, in wall time) into -EINVAL and one line. The child is
 * forked from the calling thread and only runs hwloc and libxml2 before
 * _exit(); with SIGCHLD ignored, the line cannot name its signal. This
 * holds in-process for the SPANK plugin and railbindd, which call it so.
 * NCCL topology XML is parsed by libxml2 in the caller's process. With
 * AFF_LOAD_NO_FORK the hwloc import runs in the caller's process too, and
 * a crashing file crashes it: railbind's commands pass it from a child
 * process of their own, whose crash they report.
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
	/*
	 * aff_topo_json(): railbind.dra/1 instead, each GPU and NIC with its
	 * Kubernetes DRA attributes as a ResourceSlice carries them. Since: 1.6
	 */
	AFF_JSON_DRA = 1ul << 1,
};

/** aff_topo_json - the railbind.topo/1 document, malloc()ed into @out. */
int aff_topo_json(const struct aff_topo *topo, unsigned long flags, char **out);

/* Flags of aff_plan_new(). */
enum aff_plan_flags {
	/* Also set CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES per rank. */
	AFF_PLAN_ISOLATE_GPU = 1ul << 0,
	/* Memory policy bind instead of preferred. */
	AFF_PLAN_MEM_BIND = 1ul << 1,
	/*
	 * NCCL_IB_HCA entries as <hca>:<port>:<rail>, rail k the node's k-th
	 * rail in PCI order: NCCL 2.30 and later read it as the NIC's rail
	 * membership; older NCCL ignores it.
	 */
	AFF_PLAN_NCCL_RAIL_IDS = 1ul << 2,
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

/**
 * aff_topo_nccl_xml - NCCL's topology XML (<system version="1">, what
 * NCCL_TOPO_FILE reads) of @topo, malloc()ed into @out. Only what the model
 * knows is written; NCCL fills the rest from the live node. @flags: 0.
 * Since: 1.2
 */
int aff_topo_nccl_xml(const struct aff_topo *topo, unsigned long flags,
		      char **out);
/**
 * aff_topo_nccl_write - the same into @path, whole or not at all (a
 * temporary file renamed over it, mode 0644); "-" is stdout.
 * @err, @errlen: one line naming the file and the step that failed.
 * Since: 1.2
 */
int aff_topo_nccl_write(const struct aff_topo *topo, const char *path,
			char *err, size_t errlen);

/*
 * The broker client (since 1.1). A binding is one local rank's plan: from
 * railbindd when one answers on the socket, else computed in-process by the
 * same code (aff_topo_load() + aff_plan_new()) and handed over as the same
 * JSON text, so both paths give an identical result.
 */
struct aff_binding;

/* Flags of aff_binding_get(). */
enum aff_bind_flags {
	/* Also set CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES. */
	AFF_BIND_ISOLATE_GPU = 1ul << 0,
	/* Do not ask the broker; compute in-process. */
	AFF_BIND_LOCAL = 1ul << 1,
	/* Fail (-ECONNREFUSED, -ETIMEDOUT, -EAGAIN for a broker that says it
	 * is overloaded, ...) when no broker answers. Without it, both are
	 * answered by computing the plan in-process. */
	AFF_BIND_BROKER_ONLY = 1ul << 2,
	/* Ask for the plan only; take no lease on the rank. */
	AFF_BIND_NO_LEASE = 1ul << 3,
	/* Pass the broker no GPU node: by default those this
	 * process can open go with the request, the broker's proof of its
	 * GPUs under a cgroup v2 device filter (docs/PROTOCOL.md). */
	AFF_BIND_NO_DEVICE_PROOF = 1ul << 4,
};

struct aff_bind_spec {
	unsigned long flags;
	/* Local rank; negative: from the environment (aff_local_rank()). */
	long rank;
	/* Job the lease belongs to; NULL: $RAILBIND_JOB, $SLURM_JOB_ID,
	 * $TORCHELASTIC_RUN_ID, $PMIX_NAMESPACE, else "default". */
	const char *job;
	/* Broker socket; NULL: $RAILBIND_SOCKET, else /run/railbind/railbind.sock. */
	const char *socket;
	/* In-process fallback: topology file (NULL: the live node). */
	const char *input;
	/* CUDA_VISIBLE_DEVICES-style claim; NULL: the process's own
	 * $CUDA_VISIBLE_DEVICES or $ROCR_VISIBLE_DEVICES. The broker checks it
	 * against what the process may use and never widens it. */
	const char *visible_gpus;
	/* Broker reply timeout in milliseconds; 0: 1000. */
	int timeout_ms;
};

/**
 * aff_local_rank - the local rank the launcher gave this process: LOCAL_RANK,
 * SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,
 * PMI_LOCAL_RANK, PALS_LOCAL_RANKID, first set wins.
 * @from: receives the variable's name (static string); may be NULL.
 * Returns -ENOENT when none is set, -EINVAL when the value is not a number.
 * Since: 1.1
 */
int aff_local_rank(long *out, const char **from);

/**
 * aff_binding_get - rank @spec->rank's binding, from the broker or in-process.
 * Errors: ERANGE no such rank, EBUSY the rank is leased to a live process of
 * the same job, EPERM a claim outside what the process may use, ENODEV no
 * accelerator.
 * Since: 1.1
 */
int aff_binding_get(struct aff_ctx *ctx, const struct aff_bind_spec *spec,
		    struct aff_binding **out, char *err, size_t errlen);
struct aff_binding *aff_binding_ref(struct aff_binding *b);
struct aff_binding *aff_binding_unref(struct aff_binding *b);

/** aff_binding_source - "broker" or "local". */
const char *aff_binding_source(const struct aff_binding *b);
/** aff_binding_fallback - why no broker answered (NULL from the broker). */
const char *aff_binding_fallback(const struct aff_binding *b);
long aff_binding_rank(const struct aff_binding *b);
/** aff_binding_generation - the broker's plan generation; 0 when local. */
unsigned long long aff_binding_generation(const struct aff_binding *b);
const char *aff_binding_gpu(const struct aff_binding *b);
const char *aff_binding_cpus(const struct aff_binding *b);
/** aff_binding_mems - NUMA node list, or NULL when the locality is unknown. */
const char *aff_binding_mems(const struct aff_binding *b);
/** aff_binding_mem_policy - "preferred" or "bind". */
const char *aff_binding_mem_policy(const struct aff_binding *b);
/** aff_binding_nics - rail names, primary first, comma separated ("" none). */
const char *aff_binding_nics(const struct aff_binding *b);
/** aff_binding_env - NAME=VALUE strings, NULL-terminated, owned by @b. */
const char *const *aff_binding_env(const struct aff_binding *b);
/** aff_binding_json - the rank's object of railbind.plan/1, malloc()ed. */
int aff_binding_json(const struct aff_binding *b, unsigned long flags,
		     char **out);

/* Flags of aff_binding_apply(); 0 means all three. */
enum aff_apply_flags {
	AFF_APPLY_CPUS = 1ul << 0,	/* affinity of every thread */
	AFF_APPLY_MEMS = 1ul << 1,	/* memory policy (kept across exec) */
	AFF_APPLY_ENV = 1ul << 2,	/* setenv() of the rank's environment */
};

/**
 * aff_binding_apply - bind the calling process: CPU affinity of all its
 * threads, its memory policy (preferred or bind, per the plan), and its
 * environment. -EXDEV when this host cannot enforce the binding (CPUs or
 * nodes it does not have). Not thread-safe against threads being created.
 * Since: 1.1
 */
int aff_binding_apply(const struct aff_binding *b, unsigned long flags);

/**
 * aff_binding_exec - aff_binding_apply(), then execvp(@argv[0], @argv).
 * Returns only on failure (negative errno).
 * Since: 1.1
 */
int aff_binding_exec(const struct aff_binding *b, unsigned long flags,
		     char *const argv[]);

/*
 * Verify (since 1.5): are the running processes that use a GPU or an RDMA
 * device where their plan or their broker lease put them? Read-only: it reads
 * /proc/PID of each process (the caller's own, or every one as root), the
 * devices they hold, their CPU affinity, memory policy and placement, their
 * environment where readable, and the broker's leases, then judges each
 * against the plan of @topo. The document is railbind.verify/1
 * (docs/VERIFY.md).
 */
struct aff_verify;

/* Flags of aff_verify_run(). */
enum aff_verify_flags {
	/* Every process the caller may read; else only spec->pids. */
	AFF_VERIFY_ALL = 1ul << 0,
	/* Do not ask railbindd for its leases (its state file is still read). */
	AFF_VERIFY_NO_BROKER = 1ul << 1,
};

struct aff_verify_spec {
	unsigned long flags;
	/* The processes to judge without AFF_VERIFY_ALL. */
	const pid_t *pids;
	size_t npids;
	/* Broker socket; NULL: $RAILBIND_SOCKET, else run/railbind/railbind.sock
	 * under the context's root. */
	const char *socket;
	/* Broker reply timeout in milliseconds; 0: 500. */
	int timeout_ms;
	/* Only processes of this user; negative: whoever the caller may read
	 * (the broker's verify op passes its client's uid). */
	long uid;
	/* A railbind.leases/1 document to take the leases from instead of
	 * asking the broker (the broker's own verify op); NULL: ask. */
	const char *leases;
};

/**
 * aff_verify_run - judge the running ranks against the plan of @topo.
 * A process that exits, is replaced (pid reused) or cannot be read is
 * reported as unknown, never an error. Errors: ENOMEM, EINVAL (bad spec).
 * Since: 1.5
 */
int aff_verify_run(struct aff_topo *topo, const struct aff_verify_spec *spec,
		   struct aff_verify **out, char *err, size_t errlen);
struct aff_verify *aff_verify_ref(struct aff_verify *v);
struct aff_verify *aff_verify_unref(struct aff_verify *v);
/** aff_verify_json - the railbind.verify/1 document, malloc()ed into @out. */
int aff_verify_json(const struct aff_verify *v, unsigned long flags, char **out);
/**
 * aff_verify_exit_code - 0 every judged process is where it belongs, 1
 * warnings, 2 a mis-bound process, 3 nothing could be judged (Nagios/NHC).
 */
int aff_verify_exit_code(const struct aff_verify *v);


/*
 * What railbind's own programs use (since 1.6): the CLI, railbindd, the
 * SPANK plugin and the benchmarks are built against this header alone.
 */

/* The context's configuration (railbind.conf(5)). */

/**
 * aff_ctx_input_limit - max-input-size: the most bytes any input file may
 * have (default AFF_INPUT_LIMIT). Since: 1.6
 */
#define AFF_INPUT_LIMIT ((size_t)64 << 20)
size_t aff_ctx_input_limit(const struct aff_ctx *ctx);
/**
 * aff_ctx_nccl_topo_file - nccl-topo-file: where railbindd keeps NCCL's
 * topology XML of the node; NULL when unset (or @ctx is NULL). Owned by
 * @ctx. Since: 1.6
 */
const char *aff_ctx_nccl_topo_file(const struct aff_ctx *ctx);

/* gpu-sharing: whether railbindd leases one GPU to two users' jobs. */
enum aff_gpu_sharing {
	/* Refuse only where a devices cgroup makes the refusal real. */
	AFF_GPU_SHARING_AUTO,
	AFF_GPU_SHARING_YES,
	AFF_GPU_SHARING_NO,
};
/** aff_ctx_gpu_sharing - gpu-sharing; AUTO for a NULL @ctx. Since: 1.6 */
enum aff_gpu_sharing aff_ctx_gpu_sharing(const struct aff_ctx *ctx);
/**
 * aff_kmod_generation - railbind.ko's topology generation, read from its
 * misc device's sysfs attribute under @root (NULL: /).
 *
 * Returns: 0 with *@gen set; -EINVAL when the module is loaded but the
 * attribute does not read as a number; another -errno (-ENOENT: the module
 * is not loaded) when the attribute cannot be opened.
 * Since: 1.6
 */
int aff_kmod_generation(const char *root, unsigned long long *gen);
/**
 * aff_ctx_health_interval - health-interval: seconds between railbindd's
 * samples of the link and port counters, 0 for none (default 10).
 * Since: 1.6
 */
unsigned long aff_ctx_health_interval(const struct aff_ctx *ctx);

/* Files, read and written as every railbind input and output is. */

/**
 * aff_read_file - read a whole file: a regular file only (a FIFO, device,
 * socket or directory is refused, never opened for blocking I/O), at most
 * @limit bytes (0: AFF_INPUT_LIMIT), read once into *@out (malloc()ed,
 * NUL-terminated, *@len bytes before the NUL). Errors: -ENOENT and the like
 * from open, -EISDIR a directory, -EINVAL not a regular file, -EFBIG over
 * the limit; @err gets one line naming the file.
 * Since: 1.6
 */
int aff_read_file(const char *path, size_t limit, char **out, size_t *len,
		  char *err, size_t errlen);
/**
 * aff_read_state_file - aff_read_file() for a file another process keeps
 * (railbindd's leases, its counters): the same rules, and a symbolic link
 * in its place is refused (-ELOOP), not followed. Since: 1.6
 */
int aff_read_state_file(const char *path, size_t limit, char **out,
			size_t *len, char *err, size_t errlen);
/**
 * aff_write_atomic - write @buf to @path whole or not at all: a temporary
 * file beside it, fsync, rename, fsync of the directory; mode 0644. "-" is
 * stdout. @what starts the message in @err. Since: 1.6
 */
int aff_write_atomic(const char *what, const char *path, const char *buf,
		     size_t len, char *err, size_t errlen);
/**
 * aff_write_all - write() all of @buf to @fd, through EINTR and short
 * writes: 0 or -errno. Since: 1.6
 */
int aff_write_all(int fd, const char *buf, size_t len);
/**
 * aff_child_limits - in a process about to read an input of @len bytes that
 * it may die of: soft limits on its address space and CPU time (what
 * aff_topo_load() gives its own import child), and the default action for
 * the signals of a crash, so that its parent can report it. Call again
 * before each input. Since: 1.6
 */
void aff_child_limits(size_t len);

/**
 * aff_topo_load_buffer - aff_topo_load() of a file already read (with
 * aff_read_file()): @name names it in messages. Since: 1.6
 */
int aff_topo_load_buffer(struct aff_ctx *ctx, const char *name,
			 const char *buf, size_t len, unsigned long flags,
			 struct aff_topo **out, char *err, size_t errlen);
/** aff_topo_host - the node's host name, or NULL when unknown. Since: 1.6 */
const char *aff_topo_host(const struct aff_topo *topo);
/**
 * aff_topo_set_kernel - the kernel release the audit's remedies are for
 * (acs-redirect's pci=config_acs=), instead of the one the source recorded
 * (RailbindKernel). @release: "6.12.9" and the like, copied; NULL: back to
 * the source's. -EINVAL when it does not start with MAJOR.MINOR, -ENOMEM.
 * Since: 1.7
 */
int aff_topo_set_kernel(struct aff_topo *topo, const char *release);
/**
 * aff_topo_gpu_minor - the device minor of GPU @i (/dev/nvidiaN) as NVML or
 * a snapshot gave it, or -1 when unknown. Since: 1.6
 */
int aff_topo_gpu_minor(const struct aff_topo *topo, size_t i);
/**
 * aff_topo_facts_json - what only the model of a topology knows, for
 * comparing nodes (railbind fleet), malloc()ed into @out:
 *	{ "links":   { "GPU|NIC|port PCI": "16.0 GT/s x16 (capable of ...)" },
 *	  "acs":     { "GPU|NIC|port PCI": "0x001d" | "unreadable" },
 *	  "machine": { "NUMA nodes", "cores", "peer memory", "railbind.ko" } }
 * every value a string. Since: 1.6
 */
int aff_topo_facts_json(const struct aff_topo *topo, unsigned long flags,
			char **out);
/* aff_topo_gres_conf()'s @flags: the unit Slurm co-allocates cores per, NICs. */
#define AFF_GRES_NUMA (1ul << 0)	/* SlurmdParameters=numa_node_as_socket */
#define AFF_GRES_L3 (1ul << 1)		/* SlurmdParameters=l3cache_as_socket */
#define AFF_GRES_NICS (1ul << 2)	/* the rails too, as gres "nic" */
/**
 * aff_topo_gres_conf - Slurm gres.conf lines for @topo, malloc()ed into @out:
 * one Name=gpu line per GPU in PCI order with File=, Cores= (logical core
 * indices, whole sockets, or NUMA nodes or L3 caches per @flags) and Links=
 * (NVLinks, where NVML answered); Name=nic lines with AFF_GRES_NICS.
 * -ENODEV no GPU (and no NICs asked), -EINVAL bad @flags, -ENOMEM.
 * Since: 1.6
 */
int aff_topo_gres_conf(const struct aff_topo *topo, unsigned long flags,
		       char **out, char *err, size_t errlen);
/**
 * aff_topo_svg_write - draw @topo as SVG into @path (whole or not at all;
 * "-" is stdout): sockets, NUMA nodes, root complexes, switches, GPUs and
 * NICs, NVLink where known, each rank of the default plan in one colour,
 * pairs the audit fails in red. Since: 1.6
 */
int aff_topo_svg_write(struct aff_topo *topo, const char *path, char *err,
		       size_t errlen);
/**
 * aff_snapshot_live - the live node under @ctx's root, with what the GPU
 * libraries know, as hwloc XML plus railbind's Railbind* attributes into
 * @path (whole or not at all; "-" is stdout): what aff_topo_load() reads
 * back anywhere as it reads the live node. @note (may be NULL) gets one
 * line on what could not be read ("" when all was). Since: 1.6
 */
int aff_snapshot_live(struct aff_ctx *ctx, const char *path, char *note,
		      size_t notelen, char *err, size_t errlen);

/* Visible-GPU lists (CUDA_VISIBLE_DEVICES and its kin). */

/**
 * aff_visible_needs_libs - whether resolving @visible may need the GPU
 * libraries (it names UUIDs): load with AFF_LOAD_GPU_LIBS. Since: 1.6
 */
bool aff_visible_needs_libs(const char *visible);
/**
 * aff_visible_select - the GPUs a visible-GPU list gives, in PCI order (then
 * MIG order): NULL or "all" for all GPUs; "none", "void" or "" for none.
 * Items are indices, PCI addresses, GPU UUIDs or unique prefixes, MIG UUIDs
 * or MIG-GPU-UUID/GI/CI. *@gpu gets GPU indices, *@mig the MIG instance of
 * each in its GPU or -1 (both malloc()ed, *@n entries, at least one slot).
 * -EINVAL for an item that names no GPU of @topo, is malformed or is an
 * ambiguous prefix, said in @err; -ENOMEM.
 * Since: 1.6
 */
int aff_visible_select(const struct aff_topo *topo, const char *visible,
		       int **gpu, int **mig, size_t *n, char *err,
		       size_t errlen);
/**
 * aff_visible_within - whether every GPU (or MIG instance) @claim names is
 * one @own names, in any spelling: 1 yes, 0 no, or the -errno of a list
 * that does not resolve. A whole GPU in @own holds its MIG instances; NULL
 * @own holds everything. Since: 1.6
 */
int aff_visible_within(const struct aff_topo *topo, const char *claim,
		       const char *own, char *err, size_t errlen);
/**
 * aff_visible_name - one spelling of what aff_visible_select() gave: the
 * GPU's index, else the MIG instance's UUID, else MIG-GPU-UUID/GI/CI.
 * Since: 1.6
 */
void aff_visible_name(const struct aff_topo *topo, int gpu, int mig,
		      char *buf, size_t len);

/*
 * The audit (since 1.6): the NUMA/PCIe checks of railbind audit on a
 * topology and a plan. The document is railbind.audit/1 (DESIGN.md).
 */
struct aff_audit;

/* Severities of the audit and of verify, worst last. */
enum aff_sev {
	AFF_SEV_OK = 0,
	AFF_SEV_WARN = 1,
	AFF_SEV_FAIL = 2,
	AFF_SEV_UNKNOWN = 3,	/* not decided */
};
/** aff_sev_name - "ok", "warn", "fail", "unknown". Since: 1.6 */
const char *aff_sev_name(enum aff_sev s);
/** aff_sev_from_name - the inverse; AFF_SEV_UNKNOWN for any other text. */
enum aff_sev aff_sev_from_name(const char *s);

/**
 * aff_audit_run - run every check on @topo. @plan: the plan to judge (its
 * primary rails are the pairs); NULL: the default plan, computed here (none
 * when the node has no accelerator: the GPU checks are then undecided).
 * @flags: 0. -ENOMEM, or an error of aff_plan_new() other than -ENODEV.
 * Since: 1.6
 */
int aff_audit_run(struct aff_topo *topo, struct aff_plan *plan,
		  unsigned long flags, struct aff_audit **out, char *err,
		  size_t errlen);
struct aff_audit *aff_audit_ref(struct aff_audit *a);
struct aff_audit *aff_audit_unref(struct aff_audit *a);
/** aff_audit_json - the railbind.audit/1 document, malloc()ed into @out. */
int aff_audit_json(const struct aff_audit *a, unsigned long flags, char **out);
/**
 * aff_audit_exit_code - 0 ok, 1 warnings, 2 failures, 3 nothing could be
 * decided (Nagios/NHC).
 */
int aff_audit_exit_code(const struct aff_audit *a);

/*
 * Link, AER and RDMA port counters over time (since 1.6): railbindd samples
 * sysfs and keeps the counts in railbind.counters/1, which discovery reads
 * back for the audit's link-flapping, pcie-errors and port-flapping checks.
 */
struct aff_health;

/** aff_health_new - empty counters into *@out; free with aff_health_free(). */
int aff_health_new(struct aff_health **out);
void aff_health_free(struct aff_health *h);
/**
 * aff_health_sample - add one sample of ${@root}/sys to @h; *@changed is set
 * when a count moved. 0 or -ENOMEM. Since: 1.6
 */
int aff_health_sample(const char *root, struct aff_health *h, bool *changed);
/** aff_health_save - @h as railbind.counters/1 into @path, whole or not at all. */
int aff_health_save(const struct aff_health *h, const char *path, char *err,
		    size_t errlen);
/**
 * aff_health_load - read @path into @h: -ENOENT absent, -EINVAL not a
 * counters file, -ESTALE counted in another boot than ${@root}'s. Since: 1.6
 */
int aff_health_load(const char *path, const char *root, struct aff_health *h);

#ifdef __cplusplus
}
#endif
#endif
