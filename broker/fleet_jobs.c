// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind fleet: reading many files on several cores. Loading a snapshot
 * through hwloc is nearly all of the cost, and libaffinity has no state
 * shared between files, so worker processes (fork, no threads: a context is
 * not thread-safe) each read every jobs-th file and send its record back as
 * one JSON line. The parent puts the records in file order, so the report
 * does not depend on the number of jobs.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <json-c/json.h>

#include "fleet.h"
#include "internal.h"
#include "railbind.h"

struct worker {
	pid_t pid;
	int fd;
	char *buf;	/* a line not yet complete */
	size_t len, cap;
};

static void __attribute__((noreturn)) work(struct aff_ctx *ctx, char *const *files,
					   size_t n, size_t first, size_t step, int fd)
{
	size_t i;

	for (i = first; i < n; i += step) {
		struct json_object *rec = fleet_node_read(ctx, files[i], i);
		const char *s = rec ? json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN) :
				NULL;

		/* A record that cannot be sent is missing; the parent says so. */
		if (!s || aff_write_all(fd, s, strlen(s)) < 0 || aff_write_all(fd, "\n", 1) < 0)
			_exit(1);
		json_object_put(rec);
	}
	_exit(0);
}

/* Take the complete lines out of w's buffer. */
static void take_lines(struct worker *w, struct json_object **out, size_t n)
{
	char *p = w->buf, *nl;

	while ((nl = memchr(p, '\n', w->len - (size_t)(p - w->buf)))) {
		struct json_object *rec, *iv;
		int64_t i;

		*nl = '\0';
		rec = json_tokener_parse(p);
		p = nl + 1;
		if (!rec || !json_object_object_get_ex(rec, "i", &iv) ||
		    (i = json_object_get_int64(iv)) < 0 || (size_t)i >= n || out[i]) {
			json_object_put(rec);
			continue;
		}
		out[i] = rec;
	}
	w->len -= (size_t)(p - w->buf);
	memmove(w->buf, p, w->len);
}

static int read_some(struct worker *w, struct json_object **out, size_t n)
{
	ssize_t r;

	if (w->cap - w->len < 65536) {
		char *b = realloc(w->buf, w->cap + 65536);

		if (!b)
			return -ENOMEM;
		w->buf = b;
		w->cap += 65536;
	}
	r = read(w->fd, w->buf + w->len, w->cap - w->len);
	if (r < 0)
		return errno == EINTR ? 1 : -errno;
	if (r == 0)
		return 0;
	w->len += (size_t)r;
	take_lines(w, out, n);
	return 1;
}

static int run_workers(struct aff_ctx *ctx, char *const *files, size_t n, int jobs,
		       struct json_object **out)
{
	struct worker *w = calloc((size_t)jobs, sizeof(*w));
	struct pollfd *pfd = calloc((size_t)jobs, sizeof(*pfd));
	int k, open_fds = 0, rc = 0;

	if (!w || !pfd) {
		free(w);
		free(pfd);
		return -ENOMEM;
	}
	fflush(NULL);
	for (k = 0; k < jobs; k++) {
		int p[2];

		w[k].fd = -1;
		if (pipe2(p, O_CLOEXEC) < 0) {
			rc = -errno;
			break;
		}
		w[k].pid = fork();
		if (w[k].pid < 0) {
			rc = -errno;
			close(p[0]);
			close(p[1]);
			break;
		}
		if (!w[k].pid) {
			close(p[0]);
			work(ctx, files, n, (size_t)k, (size_t)jobs, p[1]);
		}
		close(p[1]);
		w[k].fd = p[0];
		open_fds++;
	}
	while (open_fds > 0) {
		int m = 0;

		for (k = 0; k < jobs; k++)
			if (w[k].fd >= 0)
				pfd[m++] = (struct pollfd){ .fd = w[k].fd, .events = POLLIN };
		if (poll(pfd, (nfds_t)m, -1) < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		for (k = 0; k < jobs; k++) {
			int i, r;

			for (i = 0; i < m && pfd[i].fd != w[k].fd; i++)
				;
			if (w[k].fd < 0 || i == m || !pfd[i].revents)
				continue;
			r = read_some(&w[k], out, n);
			if (r <= 0) {
				close(w[k].fd);
				w[k].fd = -1;
				open_fds--;
				if (r < 0 && !rc)
					rc = r;
			}
		}
	}
	for (k = 0; k < jobs; k++) {
		if (w[k].fd >= 0)
			close(w[k].fd);
		if (w[k].pid > 0)
			while (waitpid(w[k].pid, NULL, 0) < 0 && errno == EINTR)
				;
		free(w[k].buf);
	}
	free(w);
	free(pfd);
	return rc;
}

/* The record of a file whose worker died before sending it. */
static struct json_object *died(const char *file, size_t i)
{
	struct json_object *rec = json_object_new_object();
	char msg[1100];

	if (!rec)
		return NULL;
	snprintf(msg, sizeof(msg), "%s: the process reading it died", file);
	json_object_object_add(rec, "i", json_object_new_int64((int64_t)i));
	json_object_object_add(rec, "file", json_object_new_string(file));
	json_object_object_add(rec, "error", json_object_new_string(msg));
	return rec;
}

int fleet_read_all(struct aff_ctx *ctx, char *const *files, size_t n, int jobs,
		   struct json_object **out)
{
	bool workers = false;
	size_t i;

	memset(out, 0, n * sizeof(*out));
	if (jobs > 1 && (size_t)jobs > n)
		jobs = (int)n;
	/* Workers that could not all be started: this process reads the rest. */
	if (jobs > 1)
		workers = run_workers(ctx, files, n, jobs, out) == 0;
	for (i = 0; i < n; i++) {
		if (!out[i])
			out[i] = workers ? died(files[i], i) : fleet_node_read(ctx, files[i], i);
		if (!out[i])
			return -ENOMEM;
	}
	return 0;
}
