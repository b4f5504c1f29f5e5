/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * verify - are the running ranks on the GPU, NIC, CPUs and memory their plan
 * or lease gave them (`railbind verify`, the broker's `verify` op). Private
 * to libaffinity and its in-tree users; the public entry is aff_verify_run()
 * in affinity.h. Functions return 0 or a negative errno.
 *
 * The parts, one file each:
 *	verify_dev.c	which device a process's open file is: the GPU behind an
 *			NVIDIA minor, a DRM render node or /dev/kfd, the RDMA
 *			device behind uverbsN (from /proc/driver/nvidia, /proc/devices
 *			and sysfs under the context's root)
 *	verify_proc.c	what one process really uses, read from /proc/PID
 *	verify_lease.c	the broker's leases (its status op, else its state file)
 *	verify_judge.c	each process: which GPUs and NICs it uses, where it belongs
 *	verify_checks.c	the verdicts: each process against its plan or lease
 *	verify_findings.c what the judge and the checks share: check ids,
 *			findings, the topology's view of a GPU or rail
 *	verify.c	the frame: which processes, the railbind.verify/1 document
 *
 * Identity of a process's open file (documented in docs/VERIFY.md):
 *  - a character device is told by its device number (st_rdev): the NVIDIA
 *    major of /proc/devices ("nvidia-frontend") with the "Device Minor" of
 *    /proc/driver/nvidia/gpus/<pci>/information, "nvidia-uvm"'s major, and
 *    the "dev" files of sysfs classes drm (renderD*), kfd and
 *    infiniband_verbs (uverbs*);
 *  - under an alternate root (tests, a recorded node) a regular file inside
 *    the root stands in for the device node of the same path: ROOT/dev/nvidia3
 *    is /dev/nvidia3, whose GPU the same tables name;
 *  - a character device no table claims falls back to its path.
 * /proc/PID itself is always this host's /proc: processes are never recorded.
 */
#ifndef AFF_VERIFY_H
#define AFF_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "audit.h"

struct json_object;
struct stat;

/* ---- verify_dev.c ---- */

enum aff_vdev_kind {
	AFF_VDEV_NV_GPU,	/* /dev/nvidiaN */
	AFF_VDEV_NV_CTL,	/* /dev/nvidiactl, /dev/nvidia-modeset */
	AFF_VDEV_NV_UVM,	/* /dev/nvidia-uvm: CUDA, GPU not named */
	AFF_VDEV_DRM,		/* /dev/dri/renderDN */
	AFF_VDEV_KFD,		/* /dev/kfd: ROCm, GPU not named */
	AFF_VDEV_UVERBS,	/* /dev/infiniband/uverbsN */
};

struct aff_vdev {
	enum aff_vdev_kind kind;
	dev_t rdev;		/* 0 when not known */
	char path[48];		/* "/dev/nvidia3", relative to the root */
	char pci[16];		/* GPU or NIC, "" when unknown */
	char name[64];		/* RDMA device ("mlx5_0"), "" otherwise */
	char uuid[64];		/* NVIDIA "GPU UUID", "" otherwise */
};

struct aff_vdevs {
	struct aff_vdev *v;
	size_t n;
	char *root;		/* NULL for the real root */
	size_t rootlen;
	unsigned nv_major;	/* 0: no NVIDIA driver */
	unsigned uvm_major;
};

/* The device table of the context's root; aff_vdevs_clear() frees it. */
int aff_vdevs_load(const struct aff_ctx *ctx, struct aff_vdevs *t);
void aff_vdevs_clear(struct aff_vdevs *t);
/*
 * The device an open file is: @target is its /proc/PID/fd link, @st the stat
 * of the file it points to. NULL when it is none of ours. A device of a known
 * kind but not in the tables (an NVIDIA minor without an information file) is
 * returned as a static entry with an empty pci.
 */
const struct aff_vdev *aff_vdevs_match(const struct aff_vdevs *t, const char *target,
				       const struct stat *st);

/* ---- verify_proc.c ---- */

/* Which parts of a process could not be read. */
enum {
	AFF_VP_NO_FDS = 1u << 0,
	AFF_VP_NO_TASKS = 1u << 1,
	AFF_VP_NO_NUMA_MAPS = 1u << 2,
	AFF_VP_NO_ENV = 1u << 3,
};

enum aff_vp_state {
	AFF_VP_OK,
	AFF_VP_GONE,		/* exited before or during the scan */
	AFF_VP_REUSED,		/* the pid now belongs to another process */
	AFF_VP_DENIED,		/* /proc/PID or its fds are not readable */
};

/* Anonymous memory resident on one NUMA node. */
struct aff_vmem {
	int node;
	unsigned long long kb;
};

/* A memory policy and the anonymous memory it covers. */
struct aff_vpol {
	char *policy;		/* numa_maps' spelling: "default", "bind:1", ... */
	unsigned long long kb;
};

/* The environment variables verify reads; NULL when unset. */
enum aff_venv {
	AFF_VENV_CUDA_VISIBLE, AFF_VENV_NVIDIA_VISIBLE, AFF_VENV_ROCR_VISIBLE,
	AFF_VENV_HIP_VISIBLE, AFF_VENV_NCCL_IB_HCA, AFF_VENV_UCX_NET_DEVICES,
	AFF_VENV_RB_GPU, AFF_VENV_RB_CPUS, AFF_VENV_RB_MEMS, AFF_VENV_RB_NICS,
	/* The traffic class and service level of its RDMA traffic (verify_roce.c). */
	AFF_VENV_NCCL_IB_TC, AFF_VENV_NCCL_IB_FIFO_TC, AFF_VENV_NCCL_IB_SL,
	AFF_VENV_UCX_IB_TC, AFF_VENV_UCX_IB_SL,
	AFF_VENV_RB_RANK, AFF_VENV_LOCAL_RANK, AFF_VENV_JOB,
	AFF_VENV_COUNT
};
extern const char *const aff_venv_names[AFF_VENV_COUNT];

struct aff_vproc {
	pid_t pid;
	enum aff_vp_state state;
	char reason[160];	/* why state is not OK, or what was unreadable */
	uid_t uid;
	unsigned long long start;	/* stat field 22, clock ticks after boot */
	char comm[32];
	char cmdline[160];
	const struct aff_vdev **held;	/* distinct devices, open-file order */
	char **held_path;		/* the link each was seen through */
	size_t nheld;
	hwloc_bitmap_t allowed;		/* union of the threads' affinity */
	hwloc_bitmap_t ran;		/* the CPU each thread ran on last */
	size_t nthreads;
	struct aff_vmem *mem;		/* anonymous memory per node */
	size_t nmem;
	struct aff_vpol *pol;		/* policies of anonymous memory, largest first */
	size_t npol;
	char *task_policy;		/* the policy of the stack (else heap) mapping */
	char *env[AFF_VENV_COUNT];
	const char *env_rank_var;	/* which launcher variable gave the rank */
	const char *env_job_var;
	char *cpuset;			/* cpuset.cpus.effective of its cgroup v2 */
	unsigned unreadable;		/* AFF_VP_NO_* */
	char unreadable_why[4][96];	/* per AFF_VP_NO_* bit, in bit order */
};

/* Between steps of aff_vproc_read(), for tests that race a process's exit. */
typedef void (*aff_vproc_hook)(pid_t pid, const char *step, void *data);

/*
 * Read process @pid. @all: a scan of every process (one that holds no device
 * is left half read). @uid: only a process of this user is read (another is
 * AFF_VP_DENIED); negative: any. Returns 0 (p->state says how it went) or
 * -ENOMEM.
 */
int aff_vproc_read(const struct aff_vdevs *t, pid_t pid, bool all, long uid,
		   aff_vproc_hook hook, void *hook_data, struct aff_vproc *p);
void aff_vproc_clear(struct aff_vproc *p);
/*
 * The parsers of aff_vproc_read() on text (fuzz/fuzz_verify.c): a stat line,
 * numa_maps (changed in place) and an environ block of @envlen bytes, into a
 * fresh @p (aff_vproc_clear() it). -ENOMEM only.
 */
int aff_vproc_parse(struct aff_vproc *p, const char *statline, char *numa_maps, const char *env,
		    size_t envlen);
/* Whether the process holds a GPU, a GPU driver's file or an RDMA device. */
bool aff_vproc_uses_devices(const struct aff_vproc *p);

/* ---- verify_lease.c ---- */

struct aff_vlease {
	pid_t pid;
	uid_t uid;
	long rank;
	unsigned long long start;	/* 0 when the source does not say */
	char *job;
	char *gpu;
	char *cpus;
};

struct aff_vleases {
	struct aff_vlease *l;
	size_t n;
	char source[16];	/* "broker", "file" or "none" */
	char reason[256];	/* where they came from, or why none */
};

/*
 * The broker's leases: @given (a railbind.leases/1 document: the broker's own
 * verify op), else its status op on @socket (NULL: --socket's default, under
 * the context's root when it has one), else <root>/run/railbind/leases.json.
 * @ask_broker false: the file only. Never fails for a missing source
 * (source "none", reason says why); -ENOMEM only.
 */
int aff_vleases_load(const struct aff_ctx *ctx, const char *socket, bool ask_broker,
		     int timeout_ms, const char *given, struct aff_vleases *out);
const struct aff_vlease *aff_vleases_find(const struct aff_vleases *ls, pid_t pid,
					  unsigned long long start);
void aff_vleases_clear(struct aff_vleases *ls);
/* A railbind.leases/1 document or a status reply's leases (fuzz target); -EINVAL. */
int aff_vleases_parse(const char *text, struct aff_vleases *ls);

/* ---- verify_judge.c ---- */

#define AFF_VERIFY_NCHECKS 11
extern const char *const aff_verify_check_ids[AFF_VERIFY_NCHECKS];

/* Below this much anonymous memory, where it sits says nothing yet. */
#define AFF_VERIFY_MEM_MIN_KB (16ull * 1024)

struct aff_verify;

/*
 * Judge every readable process of @v (their facts read, v->procs[]), adding
 * each one's railbind.verify/1 object to v->processes.
 */
int aff_verify_judge(struct aff_verify *v);
/*
 * NULL when @p is a process verify judges: it holds an NVIDIA device file, kfd,
 * a render node of one of the topology's accelerators, or an RDMA device and
 * is a rank (a lease, RAILBIND_*, a launcher's local rank). Else why not.
 */
const char *aff_verify_not_judged(const struct aff_verify *v, const struct aff_vproc *p);

/* ---- between verify_judge.c and verify_checks.c ---- */

/* Where the expected GPU came from. */
enum ref_src { REF_NONE, REF_GPU, REF_LOCAL_RANK, REF_ENV, REF_LEASE };

/* One process while it is judged. */
struct judged {
	struct aff_vproc *p;
	struct json_object *obj;
	struct json_object *findings;
	struct json_object *unknown;
	int gpu[64];			/* indices in topo->gpus */
	size_t ngpu;
	int ref_gpu;			/* -1 */
	enum ref_src ref;
	const struct aff_vlease *lease;
	const struct aff_plan *plan;	/* may be NULL */
	int rank;			/* index in plan->rank, -1 */
	enum aff_sev worst;
	bool decided;
	/* "=" and only its planned rails: the per-rank NCCL_IB_HCA an older railbind gave. */
	char own_hca[256];
};

/* The planned CPUs, mems and rails of the process (NULL/empty when unknown). */
struct planned {
	hwloc_bitmap_t cpus;		/* NULL: unknown */
	const char *cpus_from;
	const char *mems;
	int rails[32];
	size_t nrails;
};

/* One source of NIC use (open devices, NCCL_IB_HCA, UCX_NET_DEVICES). */
struct nic_use {
	const char *source;
	int rail[64];
	size_t n;
};

extern const char *const aff_vj_ref_names[];
struct json_object *aff_vj_str(const char *s);
/* A cpulist as a JSON string. */
struct json_object *aff_vj_cpulist(hwloc_const_bitmap_t set);
void aff_vj_finding(struct judged *j, const char *id, enum aff_sev sev,
		    struct json_object *evidence, const char *remedy, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
void aff_vj_unknown(struct judged *j, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int aff_vj_gpu_by_pci(const struct aff_topo *t, const char *pci);
int aff_vj_rail(const struct aff_topo *t, const char *pci, const char *name);
const char *aff_vj_gpu_pci(const struct aff_topo *t, int g);
int aff_vj_gpu_numa(const struct aff_topo *t, int g);
bool aff_vj_has_gpu(const struct judged *j, int g);
/* The best path class from the process's GPUs to rail @r. */
enum aff_path aff_vj_best_path(const struct aff_topo *t, const struct judged *j, int r);
/* The NUMA nodes of its GPUs (else of its NICs @nic); false if unknown. */
bool aff_vj_target_nodes(const struct aff_verify *v, const struct judged *j, hwloc_bitmap_t nodes,
			 const int *nic, size_t nnic);
void aff_vj_check_gpu(struct aff_verify *v, struct judged *j);
void aff_vj_check_cpus(struct aff_verify *v, struct judged *j, const struct planned *pl,
		       hwloc_const_bitmap_t target, const char *subject);
void aff_vj_check_memory(struct aff_verify *v, struct judged *j, hwloc_const_bitmap_t target,
			 const char *subject, struct json_object *obj);
void aff_vj_check_nics(struct aff_verify *v, struct judged *j, const struct planned *pl,
		       const struct nic_use *use, size_t nuse);
void aff_vj_check_peers(struct aff_verify *v, struct judged *j, const struct planned *pl);
/* roce-lossless: its traffic class on its RoCE rails (verify_roce.c). */
void aff_vj_check_roce(struct aff_verify *v, struct judged *j, const struct planned *pl,
		       const struct nic_use *use, size_t nuse);
void aff_vj_check_shared(struct aff_verify *v, struct judged *js, size_t n);
void aff_vj_check_hca(struct aff_verify *v, struct judged *js, size_t n);
/* Does NCCL_IB_HCA @filter let NCCL open verbs device @name, port @port (0: unknown)? */
bool aff_vj_nccl_hca_selects(const char *filter, const char *name, int port);
/*
 * The NCCL_IB_HCA every rank of the node gets from @plan (its ranks' own
 * when they all carry the same, else "=" and every planned rail port), ""
 * when the plan has no rail.
 */
void aff_vj_node_hca(const struct aff_topo *t, const struct aff_plan *plan, char *buf,
		     size_t len);

/* ---- verify.c ---- */

struct aff_verify {
	int refcount;
	struct aff_topo *topo;
	struct aff_vdevs devs;
	struct aff_vleases leases;
	struct aff_vproc *procs;
	size_t nproc;
	size_t skipped;			/* --all: processes not readable by the caller */
	bool all;
	/* Plans per allowed-CPU set (a job's cgroup cpuset), computed once each. */
	struct aff_vplan {
		char *allowed;		/* NULL: all CPUs of the node */
		struct aff_plan *plan;	/* NULL: could not plan (err) */
		char err[256];
	} *plans;
	size_t nplans;
	struct json_object *processes;	/* array */
	struct json_object *doc;
};

/*
 * aff_verify_run() with a hook between the steps of reading each process
 * (tests only; NULL in the public entry).
 */
int aff_verify_run_hooked(struct aff_topo *topo, const struct aff_verify_spec *spec,
			  aff_vproc_hook hook, void *hook_data, struct aff_verify **out,
			  char *err, size_t errlen);
/* A new reference to the railbind.verify/1 document (json_object_put() it). */
struct json_object *aff_verify_to_json(const struct aff_verify *v);
/*
 * The plan of the processes confined to @allowed (NULL: the node); NULL + why
 * (verify_judge.c).
 */
struct aff_plan *aff_verify_plan(struct aff_verify *v, const char *allowed,
				 const char **why);

#endif /* AFF_VERIFY_H */
