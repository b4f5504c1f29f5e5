// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hwloc's XML import, where a crash cannot take the caller down.
 *
 * hwloc 2.9.0 dies (SIGSEGV, a failed assert) on some malformed files,
 * whichever XML importer it uses: its built-in minimal one even accepts text
 * that is not XML at all. Guarding those crashes one file at a time cannot
 * end (fuzz_hwloc found thirteen in five minutes), so the import runs in a
 * child process. The child parses the buffer and duplicates the topology
 * into a shared memory file at an address this process keeps free (hwloc's
 * shmem.h); this process then adopts it, without parsing it again. Whatever
 * the child dies of, runs out of or hangs in becomes one line of error.
 *
 * The child of a process with threads (slurmstepd loading the SPANK plugin)
 * only calls hwloc and libxml2, whose plugins the parent has loaded before
 * fork(), and ends with _exit().
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hwloc.h>
#include <hwloc/shmem.h>

#include "model.h"
#include "xml_lazy.h"

#define RESULT_MAGIC 0x52424931u	/* "RBI1" */

/* What the child leaves at the start of the shared file. */
struct result {
	uint32_t magic;
	int32_t error;		/* 0: the topology follows, else an errno */
	void *addr;		/* where it was written, for hwloc_shmem_topology_adopt */
	uint64_t len;
	char msg[512];		/* with error: the line to report */
};

struct job {
	const char *name;
	const char *buf;
	size_t len;
	hwloc_topology_t hw;	/* initialised by the parent, loaded by the child */
	int fd;			/* the shared file: the result, then the topology */
	size_t page;
	void *reserve;		/* address range kept free for the topology */
	size_t reserve_len;
	void (*fn)(struct job *j, struct result *r);
	pid_t pid;		/* a child done but not reaped yet */
};

static void say(struct result *r, int error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(struct result *r, int error, const char *fmt, ...)
{
	va_list ap;

	r->error = error;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
}

/* Why hwloc refused the text: a line number when libxml2 finds it malformed. */
static void explain(struct job *j, struct result *r)
{
	const struct aff_xml *x = aff_xml(j->name, r->msg, sizeof(r->msg));
	xmlDoc *doc;
	const xmlError *e;
	const char *msg;

	if (!x) {
		r->error = ELIBACC;
		return;
	}
	x->reset_last_error();
	doc = x->read_memory(j->buf, (int)j->len, j->name, NULL,
			     XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
			     XML_PARSE_HUGE);
	if (doc) {
		x->free_doc(doc);
		say(r, EINVAL, "%s: well-formed XML, but hwloc rejected it as a topology (a missing or inconsistent object, cpuset or attribute)",
		    j->name);
		return;
	}
	e = x->last_error();
	msg = e && e->message ? e->message : "unreadable";
	say(r, EINVAL, "%s:%d: malformed XML: %.*s", j->name, e ? e->line : 0,
	    (int)strcspn(msg, "\n"), msg);
}

static void import_child(struct job *j, struct result *r)
{
	size_t len;
	void *addr;

	/* hwloc parses the buffer as it is set (libxml2 importer) or at load. */
	if (hwloc_topology_set_xmlbuffer(j->hw, j->buf, (int)j->len) < 0 ||
	    hwloc_topology_load(j->hw) < 0) {
		explain(j, r);
		return;
	}
	if (hwloc_shmem_topology_get_length(j->hw, &len, 0) < 0) {
		say(r, errno, "%s: sizing the imported topology: %s", j->name, strerror(errno));
		return;
	}
	addr = j->reserve;
	if (len > j->reserve_len) {
		/* Free here is free in the parent, which maps nothing meanwhile. */
		addr = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			    -1, 0);
		if (addr == MAP_FAILED) {
			say(r, errno, "%s: no room for the imported topology: %s", j->name,
			    strerror(errno));
			return;
		}
		munmap(addr, len);
	}
	if (hwloc_shmem_topology_write(j->hw, j->fd, j->page, addr, len, 0) < 0) {
		say(r, errno, "%s: handing over the imported topology: %s", j->name,
		    strerror(errno));
		return;
	}
	r->addr = addr;
	r->len = len;
}

/*
 * The same import, handing back hwloc's own XML export of what it loaded,
 * after the result (at j->page), for export_import().
 */
static void export_child(struct job *j, struct result *r)
{
	char *xml = NULL;
	int xlen = 0;

	if (hwloc_topology_set_xmlbuffer(j->hw, j->buf, (int)j->len) < 0 ||
	    hwloc_topology_load(j->hw) < 0) {
		explain(j, r);
		return;
	}
	if (hwloc_topology_export_xmlbuffer(j->hw, &xml, &xlen, 0) < 0 || xlen <= 0) {
		say(r, errno ? errno : EINVAL, "%s: exporting the imported topology: %s",
		    j->name, strerror(errno ? errno : EINVAL));
		return;
	}
	if (pwrite(j->fd, xml, (size_t)xlen, (off_t)j->page) != (ssize_t)xlen)
		say(r, errno ? errno : EIO, "%s: handing over the imported topology: %s",
		    j->name, strerror(errno ? errno : EIO));
	else
		r->len = (uint64_t)xlen;
	hwloc_free_xmlbuffer(j->hw, xml);
}

static void __attribute__((noreturn)) child(struct job *j, int logfd, int done)
{
	struct result r = { .magic = RESULT_MAGIC };

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* hwloc and the sanitizers talk on stderr: into the log, not the terminal. */
	dup2(logfd, STDERR_FILENO);
	dup2(logfd, STDOUT_FILENO);
	aff_child_limits(j->len);
	if (j->reserve)
		munmap(j->reserve, j->reserve_len);
	j->fn(j, &r);
	if (pwrite(j->fd, &r, sizeof(r), 0) != (ssize_t)sizeof(r))
		_exit(2);
	/* Done: the parent goes on while this process is torn down. */
	if (write(done, "", 1) != 1)
		_exit(3);
	_exit(0);
}

/*
 * The child ends within this (it is killed then): its CPU limit, plus as
 * much again for a loaded machine.
 */
static int timeout_ms(size_t len)
{
	return (int)AFF_CHILD_CPU_SECONDS(len) * 2000;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * Until the child has said it is done (a byte on the pipe) or has gone (the
 * pipe's write end closes with it), or the time is up.
 */
static bool wait_done(int rfd, int ms)
{
	long long end = now_ms() + ms;
	char c;

	for (;;) {
		struct pollfd p = { .fd = rfd, .events = POLLIN };
		long long left = end - now_ms();
		int n;

		if (left <= 0)
			return false;
		n = poll(&p, 1, (int)left);
		if (n < 0 && errno != EINTR)
			return false;
		if (n > 0 && read(rfd, &c, 1) >= 0)
			return true;
	}
}

/* What the child said on stderr, for whoever debugs (RAILBIND_LOG=debug). */
static void log_child(const struct aff_ctx *ctx, const char *name, int logfd)
{
	char text[2048];
	ssize_t n = pread(logfd, text, sizeof(text) - 1, 0);

	if (n > 0) {
		text[n] = '\0';
		aff_dbg(ctx, "%s: hwloc's import said: %s\n", name, text);
	}
}

static void reap(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
}

/*
 * Run j->fn in a child and wait until it is done. 0 with *r filled in by the
 * child, which is still to be reaped (j->pid); else -errno with r->msg
 * saying how the child ended (r->error 0 then).
 */
static int run(const struct aff_ctx *ctx, struct job *j, struct result *r)
{
	int p[2], logfd, status = 0, rc = 0;
	bool done;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	j->pid = 0;
	logfd = memfd_create("railbind-import-log", MFD_CLOEXEC);
	if (logfd < 0)
		goto fail;
	if (pipe2(p, O_CLOEXEC) < 0) {
		close(logfd);
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		close(logfd);
		goto fail;
	}
	if (!pid) {
		close(p[0]);
		child(j, logfd, p[1]);
	}
	close(p[1]);
	done = wait_done(p[0], timeout_ms(j->len));
	close(p[0]);
	log_child(ctx, j->name, logfd);
	close(logfd);
	if (done && pread(j->fd, r, sizeof(*r), 0) == (ssize_t)sizeof(*r) &&
	    r->magic == RESULT_MAGIC) {
		/* Reaped once the topology is adopted, while it is torn down. */
		j->pid = pid;
		return 0;
	}
	if (!done)
		kill(pid, SIGKILL);
	reap(pid, &status);
	memset(r, 0, sizeof(*r));
	if (!done) {
		snprintf(r->msg, sizeof(r->msg), "took longer than %d s", timeout_ms(j->len) / 1000);
		return -ETIMEDOUT;
	}
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
		/* Killed: most likely out of memory (RLIMIT_AS, the OOM killer). */
		snprintf(r->msg, sizeof(r->msg), "was killed (SIGKILL, out of memory?)");
	else if (WIFSIGNALED(status))
		snprintf(r->msg, sizeof(r->msg), "crashed (signal %d, %s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(r->msg, sizeof(r->msg), "ended without a result (status %d)",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return -ECHILD;

fail:
	rc = -errno;
	snprintf(r->msg, sizeof(r->msg), "cannot start the process that imports it: %s",
		 strerror(errno));
	return rc;
}

static size_t round_up(size_t v, size_t to)
{
	return (v + to - 1) / to * to;
}

static int hwloc_init(hwloc_topology_t *hw, const char *name, char *err, size_t errlen)
{
	if (hwloc_topology_init(hw) < 0)
		return aff_seterr(err, errlen, errno, "%s: hwloc_topology_init: %s", name,
				  strerror(errno));
	hwloc_topology_set_io_types_filter(*hw, HWLOC_TYPE_FILTER_KEEP_ALL);
	return 0;
}

/* The import in this process, for a caller that runs in one it can lose. */
static int import_here(struct job *j, hwloc_topology_t *out, char *err, size_t errlen)
{
	struct result r = { .error = EINVAL };
	int rc = hwloc_init(&j->hw, j->name, err, errlen);

	if (rc < 0)
		return rc;
	if (hwloc_topology_set_xmlbuffer(j->hw, j->buf, (int)j->len) < 0 ||
	    hwloc_topology_load(j->hw) < 0) {
		hwloc_topology_destroy(j->hw);
		explain(j, &r);
		return aff_seterr(err, errlen, r.error, "%s", r.msg);
	}
	*out = j->hw;
	return 0;
}

/*
 * Where hwloc's shared-memory handover cannot land at the address the child
 * chose (under valgrind, which places every mapping itself): the child
 * imports the file and hands back hwloc's XML export of it, which this
 * process imports. That is hwloc's own output, not the untrusted file, and
 * is parsed a second time: the slower way, taken only when the first fails.
 */
static int export_import(const struct aff_ctx *ctx, struct job *j, hwloc_topology_t *out,
			 char *err, size_t errlen)
{
	struct result r;
	char *xml = NULL;
	int rc;

	j->fd = memfd_create("railbind-export", MFD_CLOEXEC);
	if (j->fd < 0)
		return aff_seterr(err, errlen, errno, "%s: memfd_create: %s", j->name,
				  strerror(errno));
	j->reserve = NULL;
	j->reserve_len = 0;
	rc = hwloc_init(&j->hw, j->name, err, errlen);
	if (rc < 0) {
		close(j->fd);
		return rc;
	}
	j->fn = export_child;
	rc = run(ctx, j, &r);
	if (j->pid)
		reap(j->pid, NULL);
	hwloc_topology_destroy(j->hw);
	j->hw = NULL;
	if (!rc && !r.error && r.len < INT32_MAX && (xml = malloc(r.len + 1)) &&
	    pread(j->fd, xml, r.len, (off_t)j->page) != (ssize_t)r.len)
		rc = -(errno ? errno : EIO);
	close(j->fd);
	if (rc < 0 || r.error || !xml) {
		free(xml);
		if (rc < 0)
			return aff_seterr(err, errlen, -rc, "%s: hwloc's XML import %s", j->name,
					  r.msg);
		if (r.error)
			return aff_seterr(err, errlen, r.error, "%s", r.msg);
		return aff_seterr(err, errlen, ENOMEM, "%s: out of memory", j->name);
	}
	xml[r.len] = '\0';
	j->buf = xml;
	j->len = r.len;
	rc = import_here(j, out, err, errlen);
	free(xml);
	return rc;
}

int aff_hwloc_import(const struct aff_ctx *ctx, const char *name, const char *buf,
		     size_t len, unsigned long flags, hwloc_topology_t *out, char *err,
		     size_t errlen)
{
	struct job j = { .name = name, .buf = buf, .len = len, .fd = -1 };
	struct result r;
	int rc, tries;

	*out = NULL;
	if (len > INT32_MAX)
		return aff_seterr(err, errlen, EFBIG, "%s: too large for hwloc", name);
	if (flags & AFF_LOAD_NO_FORK)
		return import_here(&j, out, err, errlen);
	j.page = (size_t)sysconf(_SC_PAGESIZE);
	/* hwloc's objects take a few times the XML's size; a larger one is placed by the child. */
	j.reserve_len = round_up(16 * len + (16u << 20), j.page);
	for (tries = 0; tries < 3; tries++) {
		j.fd = memfd_create("railbind-topology", MFD_CLOEXEC);
		if (j.fd < 0)
			return aff_seterr(err, errlen, errno, "%s: memfd_create: %s", name,
					  strerror(errno));
		j.reserve = mmap(NULL, j.reserve_len, PROT_NONE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (j.reserve == MAP_FAILED) {
			rc = aff_seterr(err, errlen, errno, "%s: reserving memory: %s", name,
					strerror(errno));
			close(j.fd);
			return rc;
		}
		/* Plugins load here, once, not in every child. */
		rc = hwloc_init(&j.hw, name, err, errlen);
		if (rc < 0) {
			munmap(j.reserve, j.reserve_len);
			close(j.fd);
			return rc;
		}
		j.fn = import_child;
		rc = run(ctx, &j, &r);
		munmap(j.reserve, j.reserve_len);
		if (!rc && !r.error &&
		    hwloc_shmem_topology_adopt(out, j.fd, j.page, r.addr, r.len, 0) < 0) {
			rc = -errno;
			snprintf(r.msg, sizeof(r.msg), "adopting the imported topology: %s",
				 strerror(errno));
		}
		if (j.pid)
			reap(j.pid, NULL);
		hwloc_topology_destroy(j.hw);
		close(j.fd);
		/* EBUSY: another thread mapped something there meanwhile. */
		if (rc != -EBUSY)
			break;
	}
	if ((!rc && r.error == EBUSY) || rc == -EBUSY)
		return export_import(ctx, &j, out, err, errlen);
	if (!rc && r.error)
		return aff_seterr(err, errlen, r.error, "%s", r.msg);
	if (rc == -ECHILD || rc == -ETIMEDOUT) {
		char how[600];

		snprintf(how, sizeof(how), "hwloc's XML import %s", r.msg);
		/* The file, explained by libxml2, contained the same way. */
		j.fn = explain;
		j.hw = NULL;
		j.fd = memfd_create("railbind-explain", MFD_CLOEXEC);
		j.reserve = NULL;
		j.reserve_len = 0;
		rc = j.fd >= 0 ? run(ctx, &j, &r) : -errno;
		if (j.pid)
			reap(j.pid, NULL);
		if (!rc && r.error && strstr(r.msg, "malformed XML")) {
			close(j.fd);
			return aff_seterr(err, errlen, EINVAL, "%.500s; %s", r.msg, how);
		}
		if (j.fd >= 0)
			close(j.fd);
		return aff_seterr(err, errlen, EINVAL, "%s: not a topology hwloc can read: %s",
				  name, how);
	}
	if (rc < 0)
		return aff_seterr(err, errlen, -rc, "%s: %s", name, r.msg);
	return 0;
}
