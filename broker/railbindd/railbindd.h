/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * railbindd, the per-node broker: what its modules offer each other. Each
 * module (file) has an init/fini pair and a prefix: sched_ (the loop),
 * ctl_ (the socket and its clients), ops_ (requests), serve_ (the topology
 * and plan cache), lease_ (who holds which rank), state_ (leases in /run),
 * peer_ (a client's identity and limits), share_ (what each user holds),
 * gpuown_ (GPUs a devices cgroup gives), udevmon_ (hotplug), conf_.
 * Every module logs through rbd_log() (log.h), which depends on none of
 * them; main.c calls the modules and no module calls main.c.
 */
#ifndef RAILBINDD_H
#define RAILBINDD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <syslog.h>
#include <sys/types.h>
#include <json-c/json.h>

/* conf.c: the command line; reloadable parts are re-read on SIGHUP. */
enum conf_limits { CONF_LIMITS_AUTO, CONF_LIMITS_ON, CONF_LIMITS_OFF };
struct conf {
	const char *socket;
	const char *input;	/* NULL: the live node */
	const char *config;	/* NULL: the default railbind.conf */
	const char *state_dir;
	const char *root;
	bool foreground;
	int debug;
	enum conf_limits limits;
	int request_timeout_ms;	/* a started request must end within this */
	int idle_timeout_ms;	/* a silent connection is closed after this */
	int reply_timeout_ms;	/* replies no one takes for this: closed */
	int max_clients;
	int max_user_clients;	/* connections of one uid */
	int max_user_watchers;
	int max_user_leases;
	int max_leases;		/* of all users */
	int max_watched;	/* processes watched through a pidfd */
	int miss_rate;		/* plan-cache misses a second, per connection */
	int max_user_rate;	/* requests a second of one uid (not root) */
	size_t max_output;	/* a client that does not read is dropped */
	size_t max_user_queued;	/* unread reply bytes of one uid */
	size_t memory_budget;	/* unread reply bytes of all */
	bool no_peer_pidfd;	/* act as on a kernel without SO_PEERPIDFD */
};
extern struct conf conf;
int conf_parse(int argc, char **argv);	/* <0: exit non-zero, 1: exit 0 */
/* Whether a client's own CPU set narrows its plan (on for the live node). */
bool conf_apply_limits(void);

/* sched.c: one epoll loop owning every fd and timer. */
typedef void (*sched_fd_fn)(int fd, uint32_t events, void *arg);
typedef void (*sched_timer_fn)(void *arg);
int sched_init(void);
void sched_fini(void);
int sched_add_fd(int fd, uint32_t events, sched_fd_fn fn, void *arg);
int sched_mod_fd(int fd, uint32_t events);
void sched_del_fd(int fd);
/* A one-shot timer; returns its id (never 0). */
unsigned int sched_add_timer(int ms, sched_timer_fn fn, void *arg);
void sched_del_timer(unsigned int id);
long long sched_now_ms(void);
int sched_loop(void);
void sched_stop(void);

/* ctl.c: the Unix socket, framing, limits. */
struct client;
struct peer_info;
struct gpuown_proof;
int ctl_init(void);
void ctl_fini(void);
void ctl_stop_listening(void);
/* Close every client once its pending output is written. */
void ctl_drain(void);
bool ctl_drained(void);
void ctl_send(struct client *c, struct json_object *reply);
void ctl_send_error(struct client *c, struct json_object *id, const char *error,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* -EUSERS: the user has --max-user-watchers already. */
int ctl_set_watching(struct client *c);
void ctl_broadcast_watch(struct json_object *event);
/* The identity pinned at accept (peer.c): uid, pid, start time (0 until known). */
uid_t ctl_uid(const struct client *c);
pid_t ctl_pid(const struct client *c);
unsigned long long ctl_start(const struct client *c);
size_t ctl_count(void);
/*
 * The peer's allowed CPUs and device rules, read
 * from its /proc at its first request and kept for the connection (a
 * process that changes its affinity asks again on a new connection; the
 * library always does). -ESRCH: the process that connected is gone.
 */
int ctl_peer_info(struct client *c, const struct peer_info **out);
/* The peer's own GPU variable (peerenv_visible()), charged to its user. */
int ctl_peer_visible(struct client *c, const char **out);
/* A pidfd of the process that connected, checked alive; -ESRCH if gone. */
int ctl_peer_pidfd(struct client *c);
/* The GPU device nodes the client passed (SCM_RIGHTS) as proof it may use them. */
const struct gpuown_proof *ctl_proof(const struct client *c);
/* Whether this client may have one more plan computed (a cache miss). */
bool ctl_charge_miss(struct client *c);
/* Whether @c's user may have a verify op now (one a second, root too): charged. */
bool ctl_charge_verify(struct client *c);

/* ops.c: one request line of a client (@len bytes, without its newline). */
void ops_request(struct client *c, const char *line, size_t len);
/* A success reply to request @id: v, id, ok, generation (new reference). */
struct json_object *ops_reply(struct json_object *id);

/* ncclout.c: railbind.conf's nccl-topo-file, rewritten when @changed or new. */
struct aff_ctx;
struct aff_topo;
void ncclout_update(struct aff_ctx *ctx, const struct aff_topo *topo, bool changed);
void ncclout_fini(void);

/* serve.c: the node's topology and its plans, one per client limit. */
int serve_init(void);
void serve_fini(void);
/* Re-read config and topology; bump the generation when the plan changed.
 * A topology or config that cannot be read leaves the last good one. */
int serve_refresh(const char *why);
/* The same, told to systemd (RELOADING=1, then READY=1): SIGHUP, the reload op. */
void serve_reload(const char *why);
struct json_object *serve_refresh_status(void);
unsigned long long serve_generation(void);
double serve_plan_age(void);
const char *serve_source(void);
size_t serve_gpu_count(void);
/* railbind.conf's gpu-sharing (lease.c says what each means). */
enum rbd_sharing {
	RBD_SHARING_AUTO,
	RBD_SHARING_YES,
	RBD_SHARING_NO,
};
enum rbd_sharing serve_gpu_sharing(void);
/*
 * A GPU claim (@claim: CUDA_VISIBLE_DEVICES-style, NULL: none) as the set
 * of GPUs (and MIG instances) it names, in one spelling ("0,3", a MIG UUID,
 * "none"): the cache key and the planner's input. @auth (NULL: none) marks the GPUs a devices cgroup lets the
 * process open; indices then count within them, as CUDA's do. @from_env:
 * the claim is the process's environment, never echoed in @msg. *@out is
 * NULL when nothing narrows the plan.
 */
int serve_visible(const char *claim, bool from_env, const unsigned char *auth,
		  char **out, const char **error, char *msg, size_t msglen);
/*
 * Whether every GPU @claim names is one @own names, whatever the spelling
 * (index, PCI address, UUID, MIG instance): 1, 0, or -errno with @msg.
 */
int serve_visible_within(const char *claim, const char *own, const unsigned char *auth,
			 char *msg, size_t msglen);
/* Asked before a plan is computed for a client (a cache miss): may it? */
typedef bool (*serve_charge_fn)(void *arg);
/*
 * What the plan gives one rank: its facts, for the broker's own decisions
 * (a lease is of its GPU and CPUs), and its object of railbind.plan/1 as
 * the reply carries it, serialised once from the same plan. Owned by the
 * plan cache: valid until the next serve_*() call.
 */
struct serve_rank {
	long rank;
	const char *gpu;	/* PCI address */
	const char *cpus;	/* Linux cpulist; NULL when unknown */
	const char *mems;	/* NUMA nodes; NULL when unknown */
	const char **nics;	/* rails, primary first; NULL-terminated */
	size_t nnics;
	const char *const *env;	/* NAME=VALUE, NULL-terminated */
	char *json;		/* its object of railbind.plan/1 */
};
/* Rank @rank's facts under these limits; or an error name and message. */
int serve_rank(const char *allowed, const char *visible, bool isolate, long rank,
	       serve_charge_fn charge, void *arg,
	       const struct serve_rank **facts, const char **error, char *msg, size_t msglen);
int serve_plan(const char *allowed, const char *visible, bool isolate,
	       serve_charge_fn charge, void *arg,
	       const char **text, const char **error, char *msg, size_t msglen);
const char *serve_topo(const char **error, char *msg, size_t msglen);
/* The railbind.audit/1 text and the audit's exit code (0-3), or NULL. */
const char *serve_audit(int *code, const char **error, char *msg, size_t msglen);
long serve_rank_count(void);
/* The topology served now (for the verify op), or NULL. */
struct aff_topo *serve_topology(void);

/* gpuown.c: the GPUs a cgroup v1 devices controller lets a process open. */
struct gpuown_rules;
struct aff_topo;
void gpuown_refresh(const struct aff_topo *topo);
void gpuown_fini(void);
/* A devices.list text; NULL when it restricts nothing (or out of memory). */
struct gpuown_rules *gpuown_rules_parse(const char *list);
void gpuown_rules_free(struct gpuown_rules *r);
/* 1 and @mask[i] for each of the @n GPUs, or 0: no authority here. */
int gpuown_allowed(const struct gpuown_rules *r, unsigned char *mask, size_t n);
/*
 * What the devices cgroup says of the process under @dirfd (/proc/<pid>),
 * @cg its cgroup file as read just before (NULL: unreadable). Never NULL
 * but out of memory; a process the broker cannot judge is marked refused.
 */
struct gpuown_rules *gpuown_read(int dirfd, const char *cg);
/* Descriptors a client may pass as proof of its GPUs (docs/PROTOCOL.md). */
#define GPUOWN_MAX_PROOF 64
struct gpuown_proof {
	size_t n;
	bool cut;	/* descriptors were lost (MSG_CTRUNC): no proof */
	dev_t rdev[GPUOWN_MAX_PROOF];
};
/* Take @fd's device as proof if it is an open character device; never closes @fd. */
void gpuown_proof_add(struct gpuown_proof *p, int fd);
/*
 * The GPUs the node gives a process: by its cgroup v1 devices list (@r),
 * else, where a cgroup v2 device filter applies to it, by the GPU nodes it
 * proved it holds open (@p, NULL: none). 1 and @mask[i] for each of the @n
 * GPUs; 0 where nothing on the node says (its claim is trusted); -EPERM
 * and @why where the broker cannot tell and must not guess.
 */
int gpuown_decide(const struct gpuown_rules *r, const struct gpuown_proof *p,
		  unsigned char *mask, size_t n, char *why, size_t whylen);

/* peer.c: who a client is and what it may use, read from /proc, not asked. */
struct peer_id {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	unsigned long long start;	/* start time; 0 until read */
	bool pidfd;	/* the kernel keeps the process (SO_PEERPIDFD) */
	bool gone;	/* the process that connected has exited */
};
struct peer_info {
	char *cpus;		/* allowed CPUs (affinity within cpuset), or NULL */
	struct gpuown_rules *devices;	/* its devices cgroup, NULL: none */
};
/* At accept: SO_PEERCRED, and the process pinned (see peer.c). */
int peer_pin(int sockfd, struct peer_id *id);
/* /proc/<pid> of that very process (O_DIRECTORY fd), or -ESRCH. */
int peer_open(int sockfd, struct peer_id *id);
/* A pidfd of that very process, or -ESRCH. */
int peer_pidfd(int sockfd, const struct peer_id *id);
/* A pidfd of (@pid, @start), or -ESRCH when that process is gone. */
int peer_pidfd_open(pid_t pid, unsigned long long start);
bool peer_alive(pid_t pid, unsigned long long start);
/* What the process under @dirfd may use; peer_info_clear() frees it. */
int peer_read_info(int dirfd, bool want_cpus, struct peer_info *pi);
void peer_info_clear(struct peer_info *pi);
/* claim.c: the pure parts, fuzzed (fuzz/fuzz_rank_env.c). */
/* Whether every entry of @claim is one of @own's. */
bool peer_claim_within(const char *claim, const char *own);
/* The same from an environ block (NUL-separated, @len bytes): CUDA first. */
int peer_environ_visible(const char *env, size_t len, char **out);
/* @name's value ("NAME=") in such a block: 1 and *@out, 0 (none), -ENOMEM. */
int peer_environ_get(const char *env, size_t len, const char *name, char **out);
/*
 * peerenv.c: the own CUDA_VISIBLE_DEVICES (else ROCR_VISIBLE_DEVICES) of
 * the process (@pid, @start) under @dirfd, read for a claim only, bounded,
 * kept per process, charged to @s. 0 and *@out (NULL: neither is set; valid
 * until the next call), -E2BIG (not within what the broker reads), -EAGAIN
 * (@s is over its budget), or -errno.
 */
struct share;
int peerenv_visible(int dirfd, pid_t pid, unsigned long long start, struct share *s,
		    const char **out);
void peerenv_fini(void);
/*
 * The path of @controller's cgroup in a /proc/<pid>/cgroup text, "" for
 * the cgroup v2 line; malloc()ed, NULL when there is none.
 */
char *peer_cgroup_path(const char *cg, const char *controller);
/* Start time of @pid in clock ticks since boot (stat field 22), 0 if gone. */
unsigned long long peer_start_time(pid_t pid);

/* share.c: what each uid holds of the broker. */
struct share_bucket {
	double tokens;
	long long at;
};
struct share {
	uid_t uid;
	unsigned int conns, watchers, leases;
	size_t queued;		/* reply bytes its clients have not read */
	struct share_bucket misses;	/* plan-cache misses */
	struct share_bucket requests;	/* requests read */
	struct share_bucket verifies;	/* verify ops (a /proc scan each) */
	struct share_bucket environ;	/* bytes of environment read (peerenv.c) */
	struct share *next;
};
struct share *share_get(uid_t uid);	/* NULL: out of memory */
struct share *share_find(uid_t uid);	/* NULL: holds nothing */
void share_release(struct share *s);	/* forget it once it holds nothing */
void share_gc(void);			/* and those kept a while for their rates */
void share_conn(struct share *s, int delta);
void share_queued(struct share *s, long long delta);
size_t share_total_queued(void);
bool share_over_budget(const struct share *s);
struct share *share_heaviest(void);
bool share_bucket_has(struct share_bucket *b, double rate, double burst);
bool share_bucket_take(struct share_bucket *b, double rate, double burst);
/* Whether @s may have one more request read now; share_asked() counts it. */
bool share_may_ask(struct share *s);
void share_asked(struct share *s);
struct json_object *share_list(uid_t viewer);
void share_fini(void);

/* lease.c */
int lease_init(void);
void lease_fini(void);
/*
 * Give (uid, @job, @rank) to the process that connected as @c, until it
 * exits (or, @until_close, until @c closes); *@shared: granted beside
 * another user's lease of @gpu. Else an error name ("busy", "overloaded",
 * "permission") and message, and a negative errno.
 */
int lease_take(struct client *c, bool until_close, const char *job, long rank,
	       const char *gpu, const char *cpus, bool backed, bool *shared,
	       const char **error, char *msg, size_t msglen);
void lease_release_conn(struct client *conn);
struct json_object *lease_list(uid_t viewer);
size_t lease_count(void);
size_t lease_watched(void);
/* For state.c: every pid-held lease, and taking one back after a restart. */
struct json_object *lease_dump(void);
int lease_restore(struct json_object *saved);
/* state.c: the leases survive a restart in <state-dir>/leases.json. */
void state_dirty(void);		/* written at the end of this loop turn */
int state_flush(void);		/* written now, if anything changed */
int state_load(void);

/* verifyop.c: the verify op, railbind verify for a client's processes. */
struct request;
void verifyop_request(struct client *c, const struct request *rq);

/* counters.c: link and port counters where railbind.ko keeps none. */
int counters_init(void);
void counters_fini(void);
/* Sample now (a hotplug) as well as every health-interval seconds. */
void counters_sample(void);

/* udevmon.c */
int udevmon_init(void);
void udevmon_fini(void);

#endif
