// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Leases: which process holds which local rank of which job. A lease ends
 * when its process exits or, for a connection lease, when the connection
 * closes. Pid leases outlive the broker through state.c.
 *
 * A process is known by its pid and start time (two processes never share
 * both), never by the pid alone. Its exit is seen through one pidfd per
 * process, not per lease, and only while the broker watches fewer than
 * --max-watched processes; the others are checked once a second by their
 * start time. So a process holding thousands of leases costs one
 * descriptor, and a thousand processes cannot take the descriptors the
 * broker needs to accept clients. Each user holds at most
 * --max-user-leases. Whether one GPU may be leased to two users' jobs is
 * gpu_check()'s: the devices cgroup, where there is one, is the node's word
 * on who owns a GPU.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>

#include "log.h"
#include "railbindd.h"
#include "request.h"

#define PROC_BUCKETS 1024
#define SWEEP_MS 1000

struct proc {
	pid_t pid;
	unsigned long long start;
	int pidfd;		/* -1: checked by the sweep */
	unsigned int nleases;
	struct proc *next;
};

struct lease {
	struct share *share;
	struct proc *proc;
	char *job;
	long rank;
	char *gpu;
	char *cpus;
	bool backed;		/* the devices cgroup gives this process the GPU */
	struct client *conn;	/* NULL: held until the process exits */
	struct lease *prev, *next;
};

static struct lease *leases;
static size_t nleases;
static struct proc *procs[PROC_BUCKETS];
static size_t nwatched, nunwatched;
static unsigned int sweep_timer;

static struct proc **proc_slot(pid_t pid)
{
	struct proc **p = &procs[(unsigned int)pid % PROC_BUCKETS];

	while (*p && (*p)->pid != pid)
		p = &(*p)->next;
	return p;
}

static void proc_unwatch(struct proc *pr)
{
	if (pr->pidfd >= 0) {
		sched_del_fd(pr->pidfd);
		close(pr->pidfd);
		pr->pidfd = -1;
		nwatched--;
	} else {
		nunwatched--;
	}
}

/* Drop @pr once no lease names it. */
static void proc_put(struct proc *pr)
{
	struct proc **p;

	if (pr->nleases)
		return;
	p = proc_slot(pr->pid);
	if (*p == pr)
		*p = pr->next;
	proc_unwatch(pr);
	free(pr);
}

static void lease_free(struct lease *l)
{
	if (l->prev)
		l->prev->next = l->next;
	else
		leases = l->next;
	if (l->next)
		l->next->prev = l->prev;
	nleases--;
	l->share->leases--;
	share_release(l->share);
	l->proc->nleases--;
	proc_put(l->proc);
	free(l->job);
	free(l->gpu);
	free(l->cpus);
	free(l);
}

/* Every lease of @pr ends: its process is gone. */
static void proc_exited(struct proc *pr)
{
	struct lease *l, *next;
	bool saved = false;

	pr->nleases++;	/* keep @pr until the loop is done with it */
	for (l = leases; l; l = next) {
		next = l->next;
		if (l->proc != pr)
			continue;
		rbd_log_user(l->share->uid, LOG_INFO, "pid %d exited: job %s rank %ld is free",
			     (int)pr->pid, l->job, l->rank);
		saved = saved || !l->conn;
		lease_free(l);
	}
	pr->nleases--;
	proc_put(pr);
	if (saved)
		state_dirty();
}

static void pidfd_ready(int fd, uint32_t events, void *arg)
{
	(void)fd;
	(void)events;
	proc_exited(arg);
}

static bool proc_alive(const struct proc *pr)
{
	if (pr->pidfd >= 0)
		return pidfd_send_signal(pr->pidfd, 0, NULL, 0) == 0 || errno == EPERM;
	return peer_alive(pr->pid, pr->start);
}

/* The processes beyond the pidfd budget: gone when their start time is. */
static void sweep(void *arg)
{
	struct proc *pr, *next;
	size_t i;

	(void)arg;
	sweep_timer = 0;
	for (i = 0; i < PROC_BUCKETS && nunwatched; i++)
		for (pr = procs[i]; pr; pr = next) {
			next = pr->next;
			if (pr->pidfd < 0 && !peer_alive(pr->pid, pr->start))
				proc_exited(pr);
		}
	if (nunwatched)
		sweep_timer = sched_add_timer(SWEEP_MS, sweep, NULL);
}

/*
 * The process (@pid, @start), watched through @pidfd (taken over; -1 for
 * none) while the budget lasts. A process known under @pid with another
 * start time is gone, and its leases with it.
 */
static struct proc *proc_get(pid_t pid, unsigned long long start, int pidfd)
{
	struct proc *pr = *proc_slot(pid);

	if (pr && pr->start != start) {
		proc_exited(pr);
		pr = NULL;
	}
	if (pr) {
		if (pidfd >= 0)
			close(pidfd);
		return pr;
	}
	pr = calloc(1, sizeof(*pr));
	if (!pr) {
		if (pidfd >= 0)
			close(pidfd);
		return NULL;
	}
	pr->pid = pid;
	pr->start = start;
	pr->pidfd = -1;
	if (pidfd >= 0 && nwatched < (size_t)conf.max_watched &&
	    sched_add_fd(pidfd, EPOLLIN, pidfd_ready, pr) == 0) {
		pr->pidfd = pidfd;
		nwatched++;
	} else {
		if (pidfd >= 0)
			close(pidfd);
		nunwatched++;
		if (!sweep_timer)
			sweep_timer = sched_add_timer(SWEEP_MS, sweep, NULL);
	}
	pr->next = procs[(unsigned int)pid % PROC_BUCKETS];
	procs[(unsigned int)pid % PROC_BUCKETS] = pr;
	return pr;
}

int lease_init(void)
{
	return 0;
}

static int add(struct proc *pr, uid_t uid, const char *job, long rank, const char *gpu,
	       const char *cpus, bool backed, struct client *conn)
{
	struct lease *l = calloc(1, sizeof(*l));

	if (l) {
		l->share = share_get(uid);
		l->job = strdup(job);
		l->gpu = gpu ? strdup(gpu) : NULL;
		l->cpus = cpus ? strdup(cpus) : NULL;
	}
	if (!l || !l->share || !l->job || (gpu && !l->gpu) || (cpus && !l->cpus)) {
		if (l) {
			share_release(l->share);
			free(l->job);
			free(l->gpu);
			free(l->cpus);
		}
		free(l);
		return -ENOMEM;
	}
	l->proc = pr;
	l->rank = rank;
	l->backed = backed;
	l->conn = conn;
	pr->nleases++;
	l->share->leases++;
	l->next = leases;
	if (leases)
		leases->prev = l;
	leases = l;
	nleases++;
	return 0;
}

static int refuse(const char **error, const char *name, char *msg, size_t msglen,
		  int rc, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int refuse(const char **error, const char *name, char *msg, size_t msglen,
		  int rc, const char *fmt, ...)
{
	va_list ap;

	*error = name;
	va_start(ap, fmt);
	vsnprintf(msg, msglen, fmt, ap);
	va_end(ap);
	return rc;
}

/*
 * Whether a new lease may have its GPU beside other users' leases of it.
 * Where the devices cgroup decides (@backed: it gives the asker the GPU), a
 * holder it does not back yields, and one it backs too shares by the node's
 * word. An asker it does not back is refused a GPU the cgroup gives another
 * user's holder. Where nothing assigns GPUs (neither backed), refusing would
 * let whoever asks first lock every other user out, and protect nothing:
 * any user may open any GPU there. So that is granted and said (*shared),
 * unless gpu-sharing = no asks for first come, first served.
 */
static int gpu_check(uid_t uid, const char *gpu, bool backed, bool *shared,
		     const char **error, char *msg, size_t msglen)
{
	enum rbd_sharing policy = serve_gpu_sharing();
	struct lease *l, *next;

	*shared = false;
	if (!gpu || policy == RBD_SHARING_YES)
		return 0;
	for (l = leases; l; l = l->next) {
		if (l->share->uid == uid || !l->gpu || strcmp(l->gpu, gpu) || !proc_alive(l->proc))
			continue;
		if (backed && !l->backed)
			continue;
		if (!backed && l->backed)
			return refuse(error, "busy", msg, msglen, -EBUSY,
				      "GPU %s is another user's by the devices cgroup", gpu);
		if (!backed && policy == RBD_SHARING_NO)
			return refuse(error, "busy", msg, msglen, -EBUSY,
				      "GPU %s is leased to another user's job (railbind.conf gpu-sharing = no)",
				      gpu);
		*shared = true;
	}
	for (l = leases; backed && l; l = next) {
		next = l->next;
		if (l->share->uid == uid || l->backed || !l->gpu || strcmp(l->gpu, gpu))
			continue;
		rbd_log(LOG_WARNING, "uid %u's lease of job %s rank %ld (pid %d) ends: its GPU %s is uid %u's by the devices cgroup",
			(unsigned)l->share->uid, l->job, l->rank, (int)l->proc->pid, gpu,
			(unsigned)uid);
		if (!l->conn)
			state_dirty();
		lease_free(l);
	}
	return 0;
}

int lease_take(struct client *c, bool until_close, const char *job, long rank,
	       const char *gpu, const char *cpus, bool backed, bool *shared,
	       const char **error, char *msg, size_t msglen)
{
	uid_t uid = ctl_uid(c);
	pid_t pid = ctl_pid(c);
	unsigned long long start = ctl_start(c);
	struct share *s = share_find(uid);
	struct lease *l, *next;
	struct proc *pr;
	int rc, pfd;

	*shared = false;
	for (l = leases; l; l = next) {
		next = l->next;
		if (l->share->uid != uid || l->rank != rank || strcmp(l->job, job))
			continue;
		if (l->proc->pid == pid && l->proc->start == start) {
			if (!until_close)
				l->conn = NULL;	/* a pid lease outlives the connection */
			return 0;
		}
		if (proc_alive(l->proc))
			return refuse(error, "busy", msg, msglen, -EBUSY,
				      "job %s rank %ld is held by pid %d", job, rank,
				      (int)l->proc->pid);
		if (!l->conn)
			state_dirty();
		lease_free(l);
	}
	if (s && s->leases >= (unsigned int)conf.max_user_leases)
		return refuse(error, "overloaded", msg, msglen, -EUSERS,
			      "uid %u holds %u leases, the most one user may (--max-user-leases)",
			      (unsigned)uid, s->leases);
	if (nleases >= (size_t)conf.max_leases)
		return refuse(error, "overloaded", msg, msglen, -EUSERS,
			      "the broker holds %zu leases, the most it keeps (--max-leases)",
			      nleases);
	rc = gpu_check(uid, gpu, backed, shared, error, msg, msglen);
	if (rc < 0)
		return rc;
	pr = *proc_slot(pid);
	if (pr && pr->start == start) {
		pfd = -1;
	} else {
		pfd = nwatched < (size_t)conf.max_watched ? ctl_peer_pidfd(c) : -1;
		if (pfd == -ESRCH)
			return refuse(error, "permission", msg, msglen, -ESRCH,
				      "the process that connected (pid %d) has exited", (int)pid);
	}
	pr = proc_get(pid, start, pfd);
	if (!pr)
		return refuse(error, "internal", msg, msglen, -ENOMEM, "out of memory");
	rc = add(pr, uid, job, rank, gpu, cpus, backed, until_close ? c : NULL);
	if (rc < 0) {
		proc_put(pr);
		return refuse(error, "internal", msg, msglen, rc, "out of memory");
	}
	if (*shared)
		rbd_log_user(uid, LOG_NOTICE, "pid %d uid %u holds job %s rank %ld on GPU %s, which another user's job holds too (nothing on this node assigns GPUs)",
			     (int)pid, (unsigned)uid, job, rank, gpu);
	else
		rbd_log_user(uid, LOG_INFO, "pid %d uid %u holds job %s rank %ld", (int)pid,
			     (unsigned)uid, job, rank);
	if (!until_close)
		state_dirty();
	return 0;
}

void lease_release_conn(struct client *conn)
{
	struct lease *l, *next;

	for (l = leases; l; l = next) {
		next = l->next;
		if (l->conn == conn)
			lease_free(l);
	}
}

static struct json_object *one(const struct lease *l, bool with_start)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "job", json_object_new_string(l->job));
	json_object_object_add(o, "rank", json_object_new_int64(l->rank));
	json_object_object_add(o, "pid", json_object_new_int(l->proc->pid));
	json_object_object_add(o, "uid", json_object_new_int64(l->share->uid));
	json_object_object_add(o, "gpu", l->gpu ? json_object_new_string(l->gpu) : NULL);
	json_object_object_add(o, "cpus", l->cpus ? json_object_new_string(l->cpus) : NULL);
	json_object_object_add(o, "until", json_object_new_string(l->conn ? "close" : "exit"));
	json_object_object_add(o, "gpu_owner", json_object_new_string(l->backed ?
							      "devices-cgroup" : "claim"));
	if (with_start)
		json_object_object_add(o, "start", json_object_new_int64((int64_t)l->proc->start));
	return o;
}

/* Root sees every lease, a user their own; sorted by job then rank. */
static int by_job_rank(const void *a, const void *b)
{
	struct json_object *x = *(struct json_object *const *)a;
	struct json_object *y = *(struct json_object *const *)b;
	int c = strcmp(json_object_get_string(json_object_object_get(x, "job")),
		       json_object_get_string(json_object_object_get(y, "job")));

	if (c)
		return c;
	return json_object_get_int(json_object_object_get(x, "rank")) -
	       json_object_get_int(json_object_object_get(y, "rank"));
}

struct json_object *lease_list(uid_t viewer)
{
	struct json_object *a = json_object_new_array();
	struct lease *l;

	for (l = leases; l; l = l->next)
		if (viewer == 0 || viewer == l->share->uid)
			json_object_array_add(a, one(l, false));
	json_object_array_sort(a, by_job_rank);
	return a;
}

size_t lease_count(void)
{
	return nleases;
}

size_t lease_watched(void)
{
	return nwatched;
}

struct json_object *lease_dump(void)
{
	struct json_object *a = json_object_new_array();
	struct lease *l;

	for (l = leases; l; l = l->next)
		if (!l->conn)
			json_object_array_add(a, one(l, true));
	return a;
}

/* A field of a saved lease: an integer within [min, max]. */
static bool int_field(struct json_object *s, const char *key, int64_t min, int64_t max,
		      int64_t *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(s, key, &v) || !json_object_is_type(v, json_type_int))
		return false;
	errno = 0;
	*out = json_object_get_int64(v);
	return !errno && *out >= min && *out <= max;
}

/* A string field of a saved lease: absent or null (NULL), or text @ok accepts. */
static bool str_field(struct json_object *s, const char *key, bool cpulist, const char **out)
{
	struct json_object *v;
	const char *str;
	size_t n;

	*out = NULL;
	if (!json_object_object_get_ex(s, key, &v) || !v)
		return true;
	if (!json_object_is_type(v, json_type_string))
		return false;
	str = json_object_get_string(v);
	n = (size_t)json_object_get_string_len(v);
	if (strlen(str) != n)
		return false;
	*out = str;
	if (cpulist)
		return n && n <= 4096 && strspn(str, "0123456789,-") == n;
	return request_gpu_list_ok(str, n) && n;
}

/*
 * A lease saved by an earlier broker, checked as a request would be (the
 * file is the broker's own, but a status reply must never carry a string
 * no client could have sent), and taken back only when its process still
 * runs: the same pid with another start time is another process.
 */
int lease_restore(struct json_object *s)
{
	struct json_object *v;
	const char *job, *gpu, *cpus;
	int64_t rank, pid, uid, start;
	struct share *sh;
	struct proc *pr;
	int pfd, rc;

	if (!json_object_is_type(s, json_type_object) ||
	    !json_object_object_get_ex(s, "job", &v) || !json_object_is_type(v, json_type_string))
		return -EINVAL;
	job = json_object_get_string(v);
	if (strlen(job) != (size_t)json_object_get_string_len(v) ||
	    !request_text_ok(job, strlen(job), RQ_MAX_JOB) ||
	    !int_field(s, "rank", 0, RQ_MAX_RANK, &rank) ||
	    !int_field(s, "pid", 1, INT32_MAX, &pid) ||
	    !int_field(s, "uid", 0, (int64_t)UINT32_MAX - 1, &uid) ||
	    !int_field(s, "start", 1, INT64_MAX, &start) ||
	    !str_field(s, "gpu", false, &gpu) || !str_field(s, "cpus", true, &cpus))
		return -EINVAL;
	sh = share_find((uid_t)uid);
	if ((sh && sh->leases >= (unsigned int)conf.max_user_leases) ||
	    nleases >= (size_t)conf.max_leases)
		return -EUSERS;
	pr = *proc_slot((pid_t)pid);
	if (pr && pr->start == (unsigned long long)start) {
		pfd = -1;
	} else {
		pfd = nwatched < (size_t)conf.max_watched ?
		      peer_pidfd_open((pid_t)pid, (unsigned long long)start) : -1;
		if (pfd == -ESRCH || (pfd < 0 && !peer_alive((pid_t)pid, (unsigned long long)start)))
			return -ESRCH;
	}
	pr = proc_get((pid_t)pid, (unsigned long long)start, pfd);
	if (!pr)
		return -ENOMEM;
	json_object_object_get_ex(s, "gpu_owner", &v);
	rc = add(pr, (uid_t)uid, job, (long)rank, gpu, cpus,
		 v && !strcmp(json_object_get_string(v), "devices-cgroup"), NULL);
	if (rc < 0)
		proc_put(pr);
	return rc;
}

void lease_fini(void)
{
	while (leases)
		lease_free(leases);
	if (sweep_timer)
		sched_del_timer(sweep_timer);
	sweep_timer = 0;
}
