/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * railbindd, the per-node broker: what its modules offer each other. Each
 * module (file) has an init/fini pair and a prefix: sched_ (the loop),
 * ctl_ (the socket and its clients), ops_ (requests), serve_ (the topology
 * and plan cache), lease_ (who holds which rank), state_ (leases in /run),
 * peer_ (a client's identity and limits), udevmon_ (hotplug), conf_.
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
	int max_clients;
	size_t max_output;	/* a client that does not read is dropped */
};
extern struct conf conf;
int conf_parse(int argc, char **argv);	/* <0: exit non-zero, 1: exit 0 */
/* Whether a client's own CPU set narrows its plan (on for the live node). */
bool conf_apply_limits(void);

/* main.c */
void rbd_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rbd_quit(void);	/* SIGTERM's path: drain, save, exit */
void rbd_reload(const char *why);

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
int ctl_init(void);
void ctl_fini(void);
void ctl_stop_listening(void);
/* Close every client once its pending output is written. */
void ctl_drain(void);
bool ctl_drained(void);
void ctl_send(struct client *c, struct json_object *reply);
void ctl_send_error(struct client *c, struct json_object *id, const char *error,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void ctl_set_watching(struct client *c);
void ctl_broadcast_watch(struct json_object *event);
uid_t ctl_uid(const struct client *c);
pid_t ctl_pid(const struct client *c);
size_t ctl_count(void);
/*
 * The peer's allowed CPUs and own CUDA_VISIBLE_DEVICES, read from /proc at
 * its first request and kept for the connection: a process that changes
 * its affinity asks again on a new connection (the library always does).
 */
const char *ctl_peer_cpus(struct client *c);
int ctl_peer_visible(struct client *c, const char **out);

/* ops.c: one request line of a client (@len bytes, without its newline). */
void ops_request(struct client *c, const char *line, size_t len);

/* ncclout.c: railbind.conf's nccl-topo-file, rewritten when @changed or new. */
struct aff_ctx;
struct aff_topo;
void ncclout_update(struct aff_ctx *ctx, const struct aff_topo *topo, bool changed);
void ncclout_fini(void);

/* serve.c: the node's topology and its plans, one per client limit. */
int serve_init(void);
void serve_fini(void);
/* Re-read config and topology; bump the generation when the plan changed. */
int serve_refresh(const char *why);
unsigned long long serve_generation(void);
double serve_plan_age(void);
const char *serve_source(void);
/* Rank @rank's object (text) under these limits; or an error name and message. */
int serve_rank(const char *allowed, const char *visible, bool isolate, long rank,
	       const char **text, const char **error, char *msg, size_t msglen);
int serve_plan(const char *allowed, const char *visible, bool isolate,
	       const char **text, const char **error, char *msg, size_t msglen);
const char *serve_topo(const char **error, char *msg, size_t msglen);
/* The railbind.audit/1 text and the audit's exit code (0-3), or NULL. */
const char *serve_audit(int *code, const char **error, char *msg, size_t msglen);
long serve_rank_count(void);

/* peer.c: who a client is and what it may use, read from /proc, not asked. */
int peer_cred(int fd, uid_t *uid, gid_t *gid, pid_t *pid);
/* The CPUs the process may run on (affinity within its cpuset), malloc()ed. */
char *peer_allowed_cpus(pid_t pid);
/* The process's own CUDA_VISIBLE_DEVICES (else ROCR_...), malloc()ed or NULL. */
int peer_visible_gpus(pid_t pid, char **out);
/* claim.c: the pure parts, fuzzed (fuzz/fuzz_rank_env.c). */
/* Whether every entry of @claim is one of @own's. */
bool peer_claim_within(const char *claim, const char *own);
/* The same from an environ block (NUL-separated, @len bytes): CUDA first. */
int peer_environ_visible(const char *env, size_t len, char **out);
/* Start time of @pid in clock ticks since boot (stat field 22), 0 if gone. */
unsigned long long peer_start_time(pid_t pid);

/* lease.c */
int lease_init(void);
void lease_fini(void);
/* Give (uid, job, rank) to @pid; -EBUSY with the holder's pid in *holder. */
int lease_take(uid_t uid, pid_t pid, unsigned long long start, const char *job,
	       long rank, const char *gpu, const char *cpus, struct client *conn,
	       pid_t *holder);
void lease_release_conn(struct client *conn);
struct json_object *lease_list(uid_t viewer);
size_t lease_count(void);
/* For state.c: every pid-held lease, and taking one back after a restart. */
struct json_object *lease_dump(void);
int lease_restore(struct json_object *saved);
/* state.c: the leases survive a restart in <state-dir>/leases.json. */
int state_save(void);
int state_load(void);

/* udevmon.c */
int udevmon_init(void);
void udevmon_fini(void);

#endif
