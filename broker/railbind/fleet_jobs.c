// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind fleet: reading many files in worker processes, at any number of
 * jobs (one included). Loading a snapshot through hwloc is nearly all of
 * the cost, and libaffinity has no state shared between files, so workers
 * (fork, no threads: a context is not thread-safe) each read every
 * jobs-th file and send its record back as one JSON line. The parent puts
 * the records in file order, so the report does not depend on the number
 * of jobs.
 *
 * Workers are also what keeps one bad file from taking the report down:
 * hwloc 2.9.0 crashes on some malformed files. A worker imports in its own
 * process (AFF_LOAD_NO_FORK, no fork per file), under the limits of
 * aff_child_limits(); when one dies, the file it was reading (the next of
 * its share, records come in order) is read again alone by a careful
 * worker, where the library contains hwloc's import itself and says what
 * was wrong with the file, and a new worker goes on with the rest.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <json-c/json.h>

#include "fleet.h"
#include "railbind.h"

struct worker {
	pid_t pid;
	int fd;
	int logfd;		/* its stderr, passed on unless it crashed */
	size_t next, step;	/* the next file of its share it will send, and the stride */
	bool careful;		/* reads one file, hwloc's import contained by the library */
	char *buf;		/* a line not yet complete */
	size_t len, cap;
};

struct pool {
	struct aff_ctx *ctx;
	char *const *files;
	size_t n;
	struct json_object **out;
	struct worker *w;
	size_t nw, cap;
};

static void __attribute__((noreturn)) work(struct aff_ctx *ctx, char *const *files,
					   size_t n, size_t first, size_t step, bool careful,
					   int fd)
{
	unsigned long flags = careful ? 0 : AFF_LOAD_NO_FORK;
	size_t i;

	for (i = first; i < n; i += step) {
		struct json_object *rec;
		const char *s;
		struct stat st;

		aff_child_limits(stat(files[i], &st) == 0 ? (size_t)st.st_size : 0);
		rec = fleet_node_read(ctx, files[i], i, flags);
		s = rec ? json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN) : NULL;
		/* A record that cannot be sent is missing; the parent says so. */
		if (!s || aff_write_all(fd, s, strlen(s)) < 0 || aff_write_all(fd, "\n", 1) < 0)
			_exit(1);
		json_object_put(rec);
	}
	_exit(0);
}

/* Start a worker on files first, first + step, ...; -errno if it cannot be. */
static int start(struct pool *p, size_t first, size_t step, bool careful)
{
	pid_t parent = getpid();
	struct worker *w;
	int fds[2];

	if (p->nw == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 8;

		w = realloc(p->w, cap * sizeof(*w));
		if (!w)
			return -ENOMEM;
		p->w = w;
		p->cap = cap;
	}
	w = &p->w[p->nw];
	*w = (struct worker){ .fd = -1, .next = first, .step = step, .careful = careful };
	/* hwloc's failed asserts print a line: held back, and dropped if the worker dies. */
	w->logfd = memfd_create("railbind-fleet-log", MFD_CLOEXEC);
	if (w->logfd < 0)
		return -errno;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		close(w->logfd);
		return -errno;
	}
	fflush(NULL);
	w->pid = fork();
	if (w->pid < 0) {
		close(fds[0]);
		close(fds[1]);
		close(w->logfd);
		return -errno;
	}
	if (!w->pid) {
		close(fds[0]);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent ||
		    dup2(w->logfd, STDERR_FILENO) < 0)
			_exit(1);
		work(p->ctx, p->files, p->n, first, step, careful, fds[1]);
	}
	close(fds[1]);
	w->fd = fds[0];
	p->nw++;
	return 0;
}

/* What a worker that ended well said on stderr, passed on. */
static void pass_log(int logfd)
{
	char buf[65536];
	off_t off = 0;
	ssize_t r;

	while ((r = pread(logfd, buf, sizeof(buf), off)) > 0) {
		if (aff_write_all(STDERR_FILENO, buf, (size_t)r) < 0)
			return;
		off += r;
	}
}

/* Take the complete lines out of w's buffer. */
static void take_lines(struct pool *p, struct worker *w)
{
	char *s = w->buf, *nl;

	while ((nl = memchr(s, '\n', w->len - (size_t)(s - w->buf)))) {
		struct json_object *rec, *iv;
		int64_t i;

		*nl = '\0';
		rec = json_tokener_parse(s);
		s = nl + 1;
		if (!rec || !json_object_object_get_ex(rec, "i", &iv) ||
		    (i = json_object_get_int64(iv)) < 0 || (size_t)i >= p->n || p->out[i]) {
			json_object_put(rec);
			continue;
		}
		p->out[i] = rec;
		w->next = (size_t)i + w->step;
	}
	w->len -= (size_t)(s - w->buf);
	memmove(w->buf, s, w->len);
}

static int read_some(struct pool *p, struct worker *w)
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
	take_lines(p, w);
	return 1;
}

/* The record of a file whose careful reader died too. */
static struct json_object *died(const char *file, size_t i, int status)
{
	struct json_object *rec = json_object_new_object();
	char msg[1200];

	if (!rec)
		return NULL;
	if (WIFSIGNALED(status))
		snprintf(msg, sizeof(msg), "%s: the process reading it died (signal %d, %s)", file,
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(msg, sizeof(msg), "%s: the process reading it ended without its record (status %d)",
			 file, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	json_object_object_add(rec, "i", json_object_new_int64((int64_t)i));
	json_object_object_add(rec, "file", json_object_new_string(file));
	json_object_object_add(rec, "error", json_object_new_string(msg));
	return rec;
}

/*
 * Worker k has ended (its pipe closed). If its share is not done, the file
 * it was on goes to a careful worker (or, from a careful one, is recorded
 * as having killed it) and a new worker takes the rest.
 */
static int ended(struct pool *p, size_t k)
{
	struct worker w = p->w[k];
	int status = 0;

	close(w.fd);
	free(w.buf);
	p->w[k] = p->w[--p->nw];
	while (waitpid(w.pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status))
		pass_log(w.logfd);
	close(w.logfd);
	if (w.next >= p->n)
		return 0;
	if (w.careful) {
		p->out[w.next] = died(p->files[w.next], w.next, status);
		return p->out[w.next] ? 0 : -ENOMEM;
	}
	if (w.next + w.step < p->n) {
		int rc = start(p, w.next + w.step, w.step, false);

		if (rc < 0)
			return rc;
	}
	return start(p, w.next, p->n, true);
}

static int run_workers(struct pool *p, int jobs)
{
	struct pollfd *pfd = NULL;
	int k, rc = 0;
	size_t i, m;

	for (k = 0; k < jobs && !rc; k++)
		rc = start(p, (size_t)k, (size_t)jobs, false);
	while (p->nw > 0 && !rc) {
		struct pollfd *np = realloc(pfd, p->nw * sizeof(*pfd));

		if (!np) {
			rc = -ENOMEM;
			break;
		}
		pfd = np;
		m = p->nw;
		for (i = 0; i < m; i++)
			pfd[i] = (struct pollfd){ .fd = p->w[i].fd, .events = POLLIN };
		if (poll(pfd, (nfds_t)m, -1) < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		/*
		 * Backwards: ended() fills the slot it frees with the last worker,
		 * one already seen (or started just now), and adds new ones last.
		 */
		for (i = m; i-- > 0 && !rc;) {
			int r;

			if (!pfd[i].revents)
				continue;
			r = read_some(p, &p->w[i]);
			if (r < 0)
				rc = r;
			else if (r == 0)
				rc = ended(p, i);
		}
	}
	for (i = 0; i < p->nw; i++) {
		close(p->w[i].fd);
		close(p->w[i].logfd);
		kill(p->w[i].pid, SIGKILL);
		while (waitpid(p->w[i].pid, NULL, 0) < 0 && errno == EINTR)
			;
		free(p->w[i].buf);
	}
	free(p->w);
	free(pfd);
	return rc;
}

int fleet_read_all(struct aff_ctx *ctx, char *const *files, size_t n, int jobs,
		   struct json_object **out)
{
	struct pool p = { .ctx = ctx, .files = files, .n = n, .out = out };
	size_t i;

	memset(out, 0, n * sizeof(*out));
	if (jobs < 1)
		jobs = 1;
	if ((size_t)jobs > n)
		jobs = (int)n;
	/* Workers that could not be started: this process reads the rest, each import in a child. */
	if (n)
		run_workers(&p, jobs);
	for (i = 0; i < n; i++) {
		if (!out[i])
			out[i] = fleet_node_read(ctx, files[i], i, 0);
		if (!out[i])
			return -ENOMEM;
	}
	return 0;
}
