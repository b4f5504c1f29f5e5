// SPDX-License-Identifier: GPL-2.0-or-later
/* Helpers shared by railbind's subcommands. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <json-c/json.h>

#include "client.h"
#include "railbind.h"

const char *rb_prog = "railbind";

void rb_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", rb_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int rb_ctx(const struct rb_opts *o, struct aff_ctx **ctx)
{
	char err[1024] = "";
	int rc;

	*ctx = aff_ctx_new(o->root);
	if (!*ctx) {
		rb_error("cannot create a context: %s", strerror(errno));
		return -errno;
	}
	rc = aff_ctx_load_config(*ctx, o->config, err, sizeof(err));
	if (rc < 0)
		rb_error("config: %s", *err ? err : strerror(-rc));
	return rc;
}

/* Set in the child of rb_contain(): the load need not fork again. */
static bool contained;

/*
 * A crash of the child: say why in one line. The file again, through the
 * library's own containment (hwloc's import in a child), names what was
 * wrong with it; if it loads, the crash was railbind's own.
 */
static void explain_crash(const struct rb_opts *o, const char *cmd, int sig)
{
	struct aff_ctx *ctx = NULL;
	struct aff_topo *t = NULL;
	char err[1024] = "";
	int rc;

	/* The config's errors were the child's to say; it is needed for the size limit. */
	ctx = aff_ctx_new(o->root);
	if (ctx)
		aff_ctx_load_config(ctx, o->config, NULL, 0);
	rc = ctx ? aff_topo_load(ctx, o->input, 0, &t, err, sizeof(err)) : -ENOMEM;
	if (rc < 0 && *err)
		rb_error("%s", err);
	else
		rb_error("%s: crashed (signal %d, %s) on %s", cmd, sig, strsignal(sig), o->input);
	aff_topo_unref(t);
	aff_ctx_unref(ctx);
}

/*
 * The child's stderr, held back until it has ended: a crash (hwloc's failed
 * assert prints a line of its own) must leave only the one line saying what
 * was wrong. A child that says more than fits is passed on as it speaks.
 */
static void hold_stderr(int fd, char *held, size_t cap, size_t *len)
{
	ssize_t n;

	*len = 0;
	for (;;) {
		if (*len == cap) {
			if (aff_write_all(STDERR_FILENO, held, *len) < 0)
				cap = 0;
			*len = 0;
		}
		n = read(fd, held + *len, cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		*len += (size_t)n;
	}
}

/* The signals a crash (or the child's limits: CPU, memory) ends a process with. */
static bool crashed(int sig)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTRAP,
				    SIGXCPU, SIGKILL };
	size_t i;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sig == sigs[i])
			return true;
	return false;
}

void rb_xml_plugins_only(void)
{
	static const char skip[] = "hwloc_pci,hwloc_opencl,hwloc_gl,hwloc_cuda,hwloc_nvml,"
				   "hwloc_rsmi,hwloc_levelzero";
	const char *old = getenv("HWLOC_PLUGINS_BLACKLIST");
	char *both = NULL;

	if (!old || !*old) {
		setenv("HWLOC_PLUGINS_BLACKLIST", skip, 1);
	} else if (asprintf(&both, "%s,%s", old, skip) >= 0) {
		setenv("HWLOC_PLUGINS_BLACKLIST", both, 1);
		free(both);
	}
}

/*
 * With --input, run the rest of the command in a child process, so that no
 * file can take it down: returns -1 in the child (and where no child can be
 * started), and in the parent the exit status to end with: the child's, or
 * @fail after a crash, said in one line (what was wrong with the file).
 */
static int rb_contain(const struct rb_opts *o, const char *cmd, int fail)
{
	static char held[65536];
	pid_t pid, parent = getpid();
	struct stat st;
	int p[2], status;
	size_t len;

	if (!o->input || pipe2(p, O_CLOEXEC) < 0)
		return -1;
	/* Nothing buffered may be written twice. */
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (!pid) {
		close(p[0]);
		/* Not left running if the parent is killed. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent ||
		    dup2(p[1], STDERR_FILENO) < 0)
			_exit(fail);
		close(p[1]);
		aff_child_limits(stat(o->input, &st) == 0 ? (size_t)st.st_size : 0);
		rb_xml_plugins_only();
		contained = true;
		return -1;
	}
	close(p[1]);
	hold_stderr(p[0], held, sizeof(held), &len);
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			rb_error("%s: waiting for the process reading %s: %s", cmd, o->input,
				 strerror(errno));
			return fail;
		}
	if (WIFEXITED(status)) {
		if (aff_write_all(STDERR_FILENO, held, len) < 0)
			return fail;
		return WEXITSTATUS(status);
	}
	if (!crashed(WTERMSIG(status))) {
		/* A closed pipe, an interrupt: this process ends the same way. */
		if (aff_write_all(STDERR_FILENO, held, len) == 0) {
			signal(WTERMSIG(status), SIG_DFL);
			raise(WTERMSIG(status));
		}
		return fail;
	}
	explain_crash(o, cmd, WTERMSIG(status));
	return fail;
}

int rb_topology(const struct rb_verb *v, const struct rb_opts *o, struct aff_ctx **ctx,
		struct aff_topo **topo)
{
	char err[1024] = "";
	int rc;

	*ctx = NULL;
	*topo = NULL;
	/* With --input, in a child: no file can take the command down. */
	rc = rb_contain(o, v->name, rb_fail_code(v));
	if (rc >= 0)
		return rc;
	rc = rb_ctx(o, ctx);
	if (rc >= 0) {
		rc = aff_topo_load(*ctx, o->input,
				   o->load_flags | (contained ? AFF_LOAD_NO_FORK : 0), topo, err,
				   sizeof(err));
		if (rc < 0)
			rb_error("%s", *err ? err : strerror(-rc));
	}
	if (rc < 0) {
		aff_ctx_unref(*ctx);
		*ctx = NULL;
		return rb_fail_code(v);
	}
	return -1;
}

const char *rb_jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return NULL;
	return json_object_get_string(v);
}

struct json_object *rb_doc(int rc, char *text)
{
	struct json_object *doc = rc < 0 ? NULL : json_tokener_parse(text);

	free(text);
	return doc;
}

struct json_object *rb_jget(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (o)
		json_object_object_get_ex(o, key, &v);
	return v;
}

bool rb_color(FILE *f)
{
	const char *nc = getenv("NO_COLOR");

	return isatty(fileno(f)) && !(nc && *nc);
}
