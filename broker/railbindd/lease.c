// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Leases: which process holds which local rank of which job. A lease ends
 * when its process exits (a pidfd in the loop turns readable) or, for a
 * connection lease, when the connection closes. Pid leases outlive the
 * broker through state.c.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>

#include "railbindd.h"

struct lease {
	uid_t uid;
	pid_t pid;
	unsigned long long start;
	char *job;
	long rank;
	char *gpu;
	char *cpus;
	int pidfd;
	struct client *conn;	/* NULL: held until the process exits */
	struct lease *next;
};

static struct lease *leases;
static size_t nleases;

int lease_init(void)
{
	return 0;
}

static void lease_free(struct lease *l)
{
	if (l->pidfd >= 0) {
		sched_del_fd(l->pidfd);
		close(l->pidfd);
	}
	free(l->job);
	free(l->gpu);
	free(l->cpus);
	free(l);
}

static void unlink_lease(struct lease *l)
{
	struct lease **p;

	for (p = &leases; *p; p = &(*p)->next)
		if (*p == l) {
			*p = l->next;
			nleases--;
			return;
		}
}

static void process_exited(int fd, uint32_t events, void *arg)
{
	struct lease *l = arg;

	(void)fd;
	(void)events;
	rbd_log(LOG_INFO, "pid %d exited: job %s rank %ld is free", (int)l->pid, l->job, l->rank);
	unlink_lease(l);
	lease_free(l);
	state_save();
}

static bool alive(const struct lease *l)
{
	return pidfd_send_signal(l->pidfd, 0, NULL, 0) == 0 || errno == EPERM;
}

static int add(uid_t uid, pid_t pid, unsigned long long start, const char *job,
	       long rank, const char *gpu, const char *cpus, struct client *conn)
{
	struct lease *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->pidfd = pidfd_open(pid, 0);
	if (l->pidfd < 0) {
		int err = errno;

		free(l);
		return -err;	/* ESRCH: it is gone already */
	}
	l->uid = uid;
	l->pid = pid;
	l->start = start;
	l->rank = rank;
	l->conn = conn;
	l->job = strdup(job);
	l->gpu = gpu ? strdup(gpu) : NULL;
	l->cpus = cpus ? strdup(cpus) : NULL;
	if (!l->job || sched_add_fd(l->pidfd, EPOLLIN, process_exited, l) < 0) {
		lease_free(l);
		return -ENOMEM;
	}
	l->next = leases;
	leases = l;
	nleases++;
	return 0;
}

int lease_take(uid_t uid, pid_t pid, unsigned long long start, const char *job,
	       long rank, const char *gpu, const char *cpus, struct client *conn,
	       pid_t *holder)
{
	struct lease *l, *next;
	int rc;

	for (l = leases; l; l = next) {
		next = l->next;
		if (l->uid != uid || l->rank != rank || strcmp(l->job, job))
			continue;
		if (l->pid == pid) {
			if (!conn)
				l->conn = NULL;	/* a pid lease outlives the connection */
			return 0;
		}
		if (alive(l)) {
			*holder = l->pid;
			return -EBUSY;
		}
		unlink_lease(l);
		lease_free(l);
	}
	rc = add(uid, pid, start, job, rank, gpu, cpus, conn);
	if (!rc) {
		rbd_log(LOG_INFO, "pid %d uid %u holds job %s rank %ld", (int)pid,
			(unsigned)uid, job, rank);
		if (!conn)
			state_save();
	}
	return rc;
}

void lease_release_conn(struct client *conn)
{
	struct lease *l, *next;

	for (l = leases; l; l = next) {
		next = l->next;
		if (l->conn == conn) {
			unlink_lease(l);
			lease_free(l);
		}
	}
}

static struct json_object *one(const struct lease *l, bool with_start)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "job", json_object_new_string(l->job));
	json_object_object_add(o, "rank", json_object_new_int64(l->rank));
	json_object_object_add(o, "pid", json_object_new_int(l->pid));
	json_object_object_add(o, "uid", json_object_new_int64(l->uid));
	json_object_object_add(o, "gpu", l->gpu ? json_object_new_string(l->gpu) : NULL);
	json_object_object_add(o, "cpus", l->cpus ? json_object_new_string(l->cpus) : NULL);
	json_object_object_add(o, "until", json_object_new_string(l->conn ? "close" : "exit"));
	if (with_start)
		json_object_object_add(o, "start", json_object_new_int64((int64_t)l->start));
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
		if (viewer == 0 || viewer == l->uid)
			json_object_array_add(a, one(l, false));
	json_object_array_sort(a, by_job_rank);
	return a;
}

size_t lease_count(void)
{
	return nleases;
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

int lease_restore(struct json_object *s)
{
	struct json_object *v;
	const char *job, *gpu = NULL, *cpus = NULL;
	unsigned long long start;
	long rank;
	pid_t pid;
	uid_t uid;

	if (!json_object_object_get_ex(s, "job", &v) || !(job = json_object_get_string(v)))
		return -EINVAL;
	if (!json_object_object_get_ex(s, "rank", &v))
		return -EINVAL;
	rank = (long)json_object_get_int64(v);
	if (!json_object_object_get_ex(s, "pid", &v) || (pid = json_object_get_int(v)) <= 0)
		return -EINVAL;
	if (!json_object_object_get_ex(s, "uid", &v))
		return -EINVAL;
	uid = (uid_t)json_object_get_int64(v);
	if (!json_object_object_get_ex(s, "start", &v))
		return -EINVAL;
	start = (unsigned long long)json_object_get_int64(v);
	if (json_object_object_get_ex(s, "gpu", &v) && v)
		gpu = json_object_get_string(v);
	if (json_object_object_get_ex(s, "cpus", &v) && v)
		cpus = json_object_get_string(v);
	/* The same pid with another start time is another process. */
	if (peer_start_time(pid) != start)
		return -ESRCH;
	return add(uid, pid, start, job, rank, gpu, cpus, NULL);
}

void lease_fini(void)
{
	while (leases) {
		struct lease *l = leases;

		leases = l->next;
		lease_free(l);
	}
	nleases = 0;
}
