/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Private to libaffinity: the context, logging and the site configuration. */
#ifndef RAILBIND_INTERNAL_H
#define RAILBIND_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <syslog.h>

#include "affinity.h"

#define AFF_EXPORT __attribute__((visibility("default")))

/* An extra accelerator match from the config: vendor, and device or -1. */
struct aff_idmatch {
	int vendor;
	int device;
};

/* gpu-sharing: enum aff_gpu_sharing (affinity.h). */

/*
 * The audit's health limits (railbind.conf: pcie-correctable-per-minute,
 * pcie-nonfatal, pcie-fatal, link-flapping, port-flapping,
 * pause-frames-per-second; a limit of 0 turns
 * its finding off) and how often railbindd samples the links
 * (health-interval, seconds; 0: it does not). aff_config_health_limit() gives
 * the default when unset.
 */
enum aff_health_limit {
	AFF_LIMIT_PCIE_COR_PER_MIN, AFF_LIMIT_PCIE_NONFATAL, AFF_LIMIT_PCIE_FATAL,
	AFF_LIMIT_LINK_FLAPPING, AFF_LIMIT_PORT_FLAPPING, AFF_LIMIT_HEALTH_INTERVAL,
	AFF_LIMIT_PAUSE_PER_SEC,
	/* rail-errors, rail-discards: the audit's rail-errors (audit_fabric.c). */
	AFF_LIMIT_RAIL_ERRORS, AFF_LIMIT_RAIL_DISCARDS,
	/* transceiver-temp-rise-per-hour: the transceiver check's trend (audit_optics.c). */
	AFF_LIMIT_XCVR_TEMP_RISE, AFF_LIMIT_N
};

struct aff_config {
	struct aff_idmatch *accel;
	size_t naccel;
	char **exclude_nic;	/* names or PCI addresses */
	size_t nexclude;
	char **include_nic;	/* names or PCI addresses made rails */
	size_t ninclude;
	bool ethernet_rails;
	bool slow_rails;	/* NICs much slower than the fastest rail are rails too */
	bool mem_bind;
	char *nccl_topo_file;	/* railbindd keeps NCCL's topology XML there */
	char *slurm_gres_conf;	/* the node's gres.conf, for the audit's slurm-gres */
	int gpu_sharing;	/* enum aff_gpu_sharing: one GPU, several users' leases */
	unsigned long health_limit[AFF_LIMIT_N];
	unsigned health_set;	/* bit per limit given in the file */
	size_t max_input_size;	/* bytes; 0: AFF_INPUT_LIMIT */
	/* The fabric's lossless RoCE: roce-priority (0-7), roce-trust (audit_roce.c). */
	bool roce_priority_set;
	unsigned roce_priority;
	enum { AFF_TRUST_UNSET, AFF_TRUST_DSCP, AFF_TRUST_PCP } roce_trust;
	/* nccl-version: the jobs' NCCL as 21803 for 2.18.3 (NCCL_VERSION_CODE); 0 unknown. */
	unsigned nccl_version;
};

struct aff_ctx {
	int refcount;
	char *root;
	aff_log_fn log_fn;
	void *log_data;
	int log_priority;
	struct aff_config conf;
};

void aff_log(const struct aff_ctx *ctx, int priority, const char *file,
	     int line, const char *fn, const char *format, ...)
	__attribute__((format(printf, 6, 7)));

#define aff_log_cond(ctx, prio, ...)                                        \
	do {                                                                \
		if ((ctx) && aff_get_log_priority(ctx) >= (prio))           \
			aff_log(ctx, prio, __FILE__, __LINE__, __func__,    \
				__VA_ARGS__);                               \
	} while (0)
#define aff_err(ctx, ...) aff_log_cond(ctx, LOG_ERR, __VA_ARGS__)
#define aff_warn(ctx, ...) aff_log_cond(ctx, LOG_WARNING, __VA_ARGS__)
#define aff_info(ctx, ...) aff_log_cond(ctx, LOG_INFO, __VA_ARGS__)
#define aff_dbg(ctx, ...) aff_log_cond(ctx, LOG_DEBUG, __VA_ARGS__)

/* snprintf into err (may be NULL); always returns -errnum. */
int aff_seterr(char *err, size_t errlen, int errnum, const char *format, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * aff_hwloc_require - load libhwloc now (hwloc_lazy.c: it is not linked, so
 * that a rank the broker plans for never loads it). 0, or -ELIBACC with err
 * naming @what, the input that needed it. An hwloc call made without it
 * ends the process as the dynamic linker would, exit 127.
 */
int aff_hwloc_require(const char *what, char *err, size_t errlen);

/* aff_write_all, aff_write_atomic, aff_read_file, aff_read_state_file: affinity.h. */
/* A small text file, trailing blanks cut, without blocking (fileio.c). */
int aff_read_text(const char *path, char *buf, size_t len, bool nofollow);
/* Up to @len bytes from @fd, or to its end: the count, or -errno (fileio.c). */
ssize_t aff_read_upto(int fd, void *buf, size_t len);

/*
 * The GPU nodes (/dev/nvidiaN, /dev/dri/renderD*) this process can open,
 * at most @max, into @fds (client_proof.c): none where a cgroup v1 devices
 * list says it already. aff_gpu_proof_close() closes them.
 */
size_t aff_gpu_proof_open(int *fds, size_t max);
void aff_gpu_proof_close(const int *fds, size_t n);
struct json_object;
/* aff_broker_call() with @nfds descriptors sent with the request's first bytes. */
int aff_broker_call_fds(const char *path, const char *request, const int *fds, size_t nfds,
			int timeout_ms, struct json_object **reply);

/*
 * aff_child_limits - in a process about to read an input of @len bytes that
 * it may die of (child_limits.c): soft limits on its address space (what is
 * mapped now, plus AFF_CHILD_MEM_BASE, plus AFF_CHILD_MEM_PER_BYTE times
 * @len) and on its CPU time (what it used, plus AFF_CHILD_CPU_SECONDS), and
 * the default action for the signals of a crash (the parent reports it).
 * Call again before each input: soft limits go up as well as down.
 */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AFF_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(AFF_ASAN)
#define AFF_CHILD_MEM_BASE (1ull << 30)	/* ASan's quarantine keeps 256 MiB freed */
#else
#define AFF_CHILD_MEM_BASE (256ull << 20)
#endif
#define AFF_CHILD_MEM_PER_BYTE 32ull
#define AFF_CHILD_CPU_SECONDS(len) (60ull + (unsigned long long)((len) >> 20))

void aff_config_clear(struct aff_config *conf);
unsigned long aff_config_health_limit(const struct aff_config *conf, enum aff_health_limit l);
/* The railbind.conf key of limit @l. */
const char *aff_config_health_key(enum aff_health_limit l);
int aff_config_parse(struct aff_config *conf, const char *path,
		     const char *text, char *err, size_t errlen);

/* Path of ${root}/rel in buf; rel starts with '/'. */
const char *aff_ctx_path(const struct aff_ctx *ctx, const char *rel,
			 char *buf, size_t len);

#endif
