// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * verify against processes that change under it, at chosen steps of the
 * read (aff_verify_run_hooked's hook): a rank killed and reaped after its
 * files were read, one that becomes a zombie, one whose pid is taken by a
 * new process before the read ends (in a pid namespace of its own, where
 * ns_last_pid picks the next pid: root only, else skipped), and a spec that
 * asks for one user's processes only. Each must come out as a clear
 * "unknown" for that process, never a crash and never the new process's
 * facts under the old pid.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "verify.h"

#ifndef BUILD
#define BUILD "build"
#endif

static char root[] = "/tmp/railbind-race.XXXXXX";
static char standin[256];

static void put(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void mkdirs(const char *rel)
{
	char path[512], *p;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	for (p = path + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	mkdir(path, 0755);
}

/* A rank holding GPU 04:00.0's stand-in; returns once it has opened it. */
static pid_t start_rank(void)
{
	int p[2];
	char c;
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		int fd = open(standin, O_RDONLY);

		close(p[0]);
		if (fd < 0 || write(p[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1)
		pid = -1;
	close(p[0]);
	return pid;
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(root))
		return -1;
	mkdirs("/dev");
	mkdirs("/proc/driver/nvidia/gpus/0000:04:00.0");
	put("/dev/nvidia0", "");
	put("/proc/driver/nvidia/gpus/0000:04:00.0/information",
	    "Bus Location: \t 0000:04:00.0\nDevice Minor: \t 0\n");
	snprintf(standin, sizeof(standin), "%s/dev/nvidia0", root);
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	(void)state;
	return nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Load two-node under the stand-in root and verify @pid with @hook. */
static struct json_object *verify(pid_t pid, long uid, aff_vproc_hook hook, void *data,
				  int *code)
{
	struct aff_verify_spec spec = { .flags = AFF_VERIFY_NO_BROKER, .uid = uid };
	struct aff_ctx *ctx = aff_ctx_new(root);
	struct aff_topo *topo = NULL;
	struct aff_verify *v = NULL;
	struct json_object *doc = NULL, *procs;
	char err[512] = "";

	spec.pids = &pid;
	spec.npids = 1;
	if (!ctx || aff_topo_load(ctx, BUILD "/verify/two-node.xml", 0, &topo, err,
				  sizeof(err)) < 0 ||
	    aff_verify_run_hooked(topo, &spec, hook, data, &v, err, sizeof(err)) < 0) {
		fprintf(stderr, "race: %s\n", err);
		goto out;
	}
	doc = aff_verify_to_json(v);
	*code = aff_verify_exit_code(v);
	if (!json_object_object_get_ex(doc, "processes", &procs) ||
	    json_object_array_length(procs) != 1) {
		json_object_put(doc);
		doc = NULL;
	}
out:
	aff_verify_unref(v);
	aff_topo_unref(topo);
	aff_ctx_unref(ctx);
	return doc;
}

static const char *proc_str(struct json_object *doc, const char *key)
{
	struct json_object *procs, *v;

	json_object_object_get_ex(doc, "processes", &procs);
	if (!json_object_object_get_ex(json_object_array_get_idx(procs, 0), key, &v) || !v)
		return "";
	return json_object_get_string(v);
}

static const char *reason(struct json_object *doc)
{
	struct json_object *procs, *u, *r;

	json_object_object_get_ex(doc, "processes", &procs);
	if (!json_object_object_get_ex(json_object_array_get_idx(procs, 0), "unknown", &u) ||
	    !json_object_object_get_ex(json_object_array_get_idx(u, 0), "reason", &r))
		return "";
	return json_object_get_string(r);
}

struct victim {
	pid_t pid;
	const char *step;
	bool reap;
	bool hit;
};

static void kill_at(pid_t pid, const char *step, void *data)
{
	struct victim *v = data;
	siginfo_t si;

	if (pid != v->pid || strcmp(step, v->step))
		return;
	v->hit = true;
	kill(pid, SIGKILL);
	if (v->reap)
		waitpid(pid, NULL, 0);
	else	/* a zombie: dead, not yet reaped */
		waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT);
}

/* Baseline: the same rank, left alone, is read and judged. */
static void test_alive(void **state)
{
	pid_t pid = start_rank();
	struct json_object *doc;
	int code = -1;

	(void)state;
	assert_true(pid > 0);
	doc = verify(pid, -1, NULL, NULL, &code);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_non_null(doc);
	assert_string_not_equal(proc_str(doc, "status"), "unknown");
	assert_string_equal(proc_str(doc, "comm"), "verify-race");
	assert_int_not_equal(code, 3);
	json_object_put(doc);
}

static void exits_at(const char *step, bool reap)
{
	struct victim v = { .step = step, .reap = reap };
	struct json_object *doc;
	int code = -1;

	v.pid = start_rank();
	assert_true(v.pid > 0);
	doc = verify(v.pid, -1, kill_at, &v, &code);
	if (!reap)
		waitpid(v.pid, NULL, 0);
	assert_true(v.hit);
	assert_non_null(doc);
	assert_string_equal(proc_str(doc, "status"), "unknown");
	assert_string_equal(proc_str(doc, "state"), "exited");
	assert_non_null(strstr(reason(doc), "exited during the scan"));
	assert_int_equal(code, 3);
	json_object_put(doc);
}

static void test_exits_after_fds(void **state)
{
	(void)state;
	exits_at("fds", true);
}

static void test_exits_after_tasks(void **state)
{
	(void)state;
	exits_at("tasks", true);
}

static void test_zombie(void **state)
{
	(void)state;
	exits_at("end", false);
}

static void test_other_user(void **state)
{
	pid_t pid = start_rank();
	struct json_object *doc;
	int code = -1;

	(void)state;
	assert_true(pid > 0);
	doc = verify(pid, (long)getuid() + 1, NULL, NULL, &code);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_non_null(doc);
	assert_string_equal(proc_str(doc, "state"), "unreadable");
	assert_non_null(strstr(reason(doc), "is another user's"));
	assert_int_equal(code, 3);
	json_object_put(doc);
}

/* ---- pid reuse, inside a pid namespace of its own ---- */

__attribute__((format(printf, 1, 2)))
static int ns_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("race: pid reuse: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return 1;
}

struct reuse {
	pid_t victim;
	pid_t successor;
};

static void replace(pid_t pid, const char *step, void *data)
{
	struct reuse *r = data;
	char last[32];
	int fd;

	if (pid != r->victim || strcmp(step, "fds"))
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* Start times count clock ticks: let one pass, so the two differ. */
	usleep(50000);
	fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
	snprintf(last, sizeof(last), "%d", (int)pid - 1);
	if (fd < 0 || write(fd, last, strlen(last)) < 0) {
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	r->successor = start_rank();
}

/* Runs as pid 1 of a new pid namespace, with its own /proc. */
static int reuse_in_namespace(void)
{
	struct reuse r = { 0 };
	struct json_object *doc;
	int code = -1, rc = 0;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return ns_fail("mounting a new /proc: %s", strerror(errno));
	r.victim = start_rank();
	if (r.victim <= 0)
		return ns_fail("no victim");
	doc = verify(r.victim, -1, replace, &r, &code);
	if (r.successor != r.victim)
		rc = ns_fail("the successor got pid %d, not %d", (int)r.successor, (int)r.victim);
	else if (!doc)
		rc = ns_fail("no document");
	else if (strcmp(proc_str(doc, "state"), "pid-reused") || code != 3 ||
		 !strstr(reason(doc), "now belongs to another process"))
		rc = ns_fail("state %s, exit %d, reason %s", proc_str(doc, "state"), code,
			      reason(doc));
	json_object_put(doc);
	if (r.successor > 0) {
		kill(r.successor, SIGKILL);
		waitpid(r.successor, NULL, 0);
	}
	return rc;
}

static void test_pid_reused(void **state)
{
	pid_t c;
	int st;

	(void)state;
	if (geteuid() != 0) {
		fprintf(stderr, "race: pid reuse needs root (a pid namespace and ns_last_pid); skipped\n");
		skip();
	}
	c = fork();
	if (c == 0) {
		pid_t g;

		if (unshare(CLONE_NEWPID | CLONE_NEWNS) < 0)
			_exit(77);
		g = fork();
		if (g == 0)
			_exit(reuse_in_namespace());
		if (g < 0 || waitpid(g, &st, 0) < 0 || !WIFEXITED(st))
			_exit(1);
		_exit(WEXITSTATUS(st));
	}
	assert_true(c > 0);
	assert_int_equal(waitpid(c, &st, 0), c);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77) {
		fprintf(stderr, "race: no pid namespace here (%s); pid reuse skipped\n",
			"unshare refused");
		skip();
	}
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alive),
		cmocka_unit_test(test_exits_after_fds),
		cmocka_unit_test(test_exits_after_tasks),
		cmocka_unit_test(test_zombie),
		cmocka_unit_test(test_other_user),
		cmocka_unit_test(test_pid_reused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
