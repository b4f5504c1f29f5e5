// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * How railbind reads a file (aff_read_file, readfile.c) and hands hwloc XML
 * to hwloc (import_hwloc.c): regular files only and never blocking, within
 * max-input-size, read once; the import in a child gives the same topology
 * as one in this process. A read that blocked would hang the test: alarm()
 * turns that into a failure.
 */
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>

#include "fixture.h"

struct files {
	char dir[256];
	char regular[512], fifo[512], dir_path[512], link[512], empty[512];
};

static int setup(void **state)
{
	struct files *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	fx_mkdtemp(f->dir, sizeof(f->dir));
	fx_write(f->dir, "regular.txt", "0123456789", f->regular, sizeof(f->regular));
	fx_write(f->dir, "empty.xml", "", f->empty, sizeof(f->empty));
	snprintf(f->fifo, sizeof(f->fifo), "%s/fifo.xml", f->dir);
	assert_int_equal(mkfifo(f->fifo, 0600), 0);
	snprintf(f->dir_path, sizeof(f->dir_path), "%s/sub.xml", f->dir);
	assert_int_equal(mkdir(f->dir_path, 0700), 0);
	snprintf(f->link, sizeof(f->link), "%s/fifo-link.xml", f->dir);
	assert_int_equal(symlink(f->fifo, f->link), 0);
	*state = f;
	alarm(30);
	return 0;
}

static int teardown(void **state)
{
	struct files *f = *state;

	alarm(0);
	unlink(f->link);
	rmdir(f->dir_path);
	unlink(f->fifo);
	fx_rmdir(f->dir);
	free(f);
	return 0;
}

/* Refused with @err naming the file and @what, nothing handed back. */
static void assert_refused(const char *path, size_t limit, int want, const char *what)
{
	char err[512] = "", *buf = (char *)1;
	size_t len = 7;
	int rc = aff_read_file(path, limit, &buf, &len, err, sizeof(err));

	if (rc != want || buf || len || strncmp(err, path, strlen(path)) || !strstr(err, what))
		fail_msg("%s: rc %d (want %d), err \"%s\" (want \"%s\")", path, rc, want, err, what);
}

static void test_regular_file(void **state)
{
	struct files *f = *state;
	char err[256], *buf = NULL;
	size_t len = 0;

	assert_int_equal(aff_read_file(f->regular, 0, &buf, &len, err, sizeof(err)), 0);
	assert_int_equal(len, 10);
	assert_memory_equal(buf, "0123456789", 11);
	free(buf);
	/* An empty file reads as empty: what it means is the caller's to say. */
	assert_int_equal(aff_read_file(f->empty, 0, &buf, &len, err, sizeof(err)), 0);
	assert_int_equal(len, 0);
	assert_int_equal(buf[0], '\0');
	free(buf);
	/* /proc files say they are empty and are not: read to the end. */
	assert_int_equal(aff_read_file("/proc/self/status", 0, &buf, &len, err, sizeof(err)), 0);
	assert_true(len > 0 && strstr(buf, "Pid:"));
	free(buf);
}

static void test_not_regular(void **state)
{
	struct files *f = *state;

	assert_refused(f->fifo, 0, -EINVAL, ": a FIFO, expected a regular file");
	assert_refused(f->link, 0, -EINVAL, ": a FIFO, expected a regular file");
	assert_refused("/dev/zero", 0, -EINVAL, ": a character device, expected a regular file");
	assert_refused(f->dir_path, 0, -EISDIR, ": a directory, expected a regular file");
	assert_refused(f->dir, 0, -EISDIR, ": a directory");
	assert_refused("/nonexistent/topo.xml", 0, -ENOENT, ": No such file or directory");
}

/* Small attribute files: never blocks on a FIFO, a link refused on request. */
static void test_read_text(void **state)
{
	struct files *f = *state;
	char buf[8];

	assert_int_equal(aff_read_text(f->regular, buf, sizeof(buf), false), 0);
	assert_string_equal(buf, "0123456");
	/* A FIFO without a writer: empty at once (the alarm of setup catches a hang). */
	assert_int_equal(aff_read_text(f->fifo, buf, sizeof(buf), false), 0);
	assert_string_equal(buf, "");
	assert_int_equal(aff_read_text(f->link, buf, sizeof(buf), true), -ELOOP);
	assert_string_equal(buf, "");
	assert_int_equal(aff_read_text("/nonexistent/attr", buf, sizeof(buf), false), -ENOENT);
	assert_int_equal(aff_read_text("/proc/sys/kernel/ostype", buf, sizeof(buf), false), 0);
	assert_string_equal(buf, "Linux");
}

static void test_size_limit(void **state)
{
	struct files *f = *state;
	char err[256], *buf = NULL;
	size_t len = 0;

	assert_refused(f->regular, 9, -EFBIG, ": larger than 9 bytes (max-input-size in railbind.conf)");
	assert_int_equal(aff_read_file(f->regular, 10, &buf, &len, err, sizeof(err)), 0);
	assert_int_equal(len, 10);
	free(buf);
	/* A file that says it is small and is not (a /proc file) stops at the limit too. */
	assert_refused("/proc/self/maps", 16, -EFBIG, ": larger than 16 bytes");
}

static void test_config_key(void **state)
{
	static const char *const bad[] = {
		"0", "100K", "1023K", "2G", "1025M", "-1M", "1MB", "M", "", " 1M x",
		"99999999999999999999G", "18446744073709551616",
	};
	struct aff_config conf = { 0 };
	char text[128], err[256];
	size_t i;

	(void)state;
	assert_int_equal(aff_config_parse(&conf, "t.conf", "max-input-size = 64M\n", err,
					  sizeof(err)), 0);
	assert_int_equal(conf.max_input_size, 64u << 20);
	assert_int_equal(aff_config_parse(&conf, "t.conf", "max-input-size = 1g\n", err,
					  sizeof(err)), 0);
	assert_int_equal(conf.max_input_size, 1u << 30);
	assert_int_equal(aff_config_parse(&conf, "t.conf", "max-input-size = 1048576\n", err,
					  sizeof(err)), 0);
	assert_int_equal(conf.max_input_size, 1u << 20);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "max-input-size = %s\n", bad[i]);
		err[0] = '\0';
		if (aff_config_parse(&conf, "t.conf", text, err, sizeof(err)) != -EINVAL ||
		    !strstr(err, "t.conf:1: expected max-input-size = bytes"))
			fail_msg("\"%s\" accepted (%s)", bad[i], err);
		/* A refused text leaves the config as it was. */
		assert_int_equal(conf.max_input_size, 1u << 20);
	}
	aff_config_clear(&conf);
}

/* The config's limit is the one aff_topo_load() applies. */
static void test_topo_limit(void **state)
{
	struct aff_ctx *ctx = fx_ctx("max-input-size = 1M\n");
	struct aff_topo *t = NULL;
	char path[4096], big[512], err[512] = "", *text;
	struct files *f = *state;
	FILE *out;

	fx_path("small", path, sizeof(path));
	if (access(path, R_OK)) {
		aff_ctx_unref(ctx);
		skip();
	}
	snprintf(big, sizeof(big), "%s/big.xml", f->dir);
	out = fopen(big, "w");
	assert_non_null(out);
	/* One byte over. */
	text = calloc(1, (1u << 20) + 2);
	assert_non_null(text);
	memset(text, ' ', (1u << 20) + 1);
	assert_int_equal(fputs(text, out) >= 0, 1);
	free(text);
	assert_int_equal(fclose(out), 0);
	assert_int_equal(aff_topo_load(ctx, big, 0, &t, err, sizeof(err)), -EFBIG);
	assert_null(t);
	assert_non_null(strstr(err, "big.xml: larger than 1048576 bytes"));
	assert_int_equal(aff_topo_load(ctx, f->fifo, 0, &t, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "fifo.xml: a FIFO"));
	unlink(big);
	aff_ctx_unref(ctx);
}

/*
 * The topology adopted from the import child plans exactly as one imported
 * in this process (AFF_LOAD_NO_FORK): same topo and plan documents.
 */
static void test_contained_same_result(void **state)
{
	static const char *const names[] = { "dgx-h100", "amd-nps4", "p5", "unknown-numa" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct aff_ctx *ctx = fx_ctx(NULL);
		struct aff_topo *t[2] = { NULL, NULL };
		char path[4096], err[512], *json[2][2] = { { NULL } };
		int k;

		fx_path(names[i], path, sizeof(path));
		if (access(path, R_OK)) {
			aff_ctx_unref(ctx);
			skip();
		}
		for (k = 0; k < 2; k++) {
			struct aff_plan *p = NULL;

			if (aff_topo_load(ctx, path, k ? AFF_LOAD_NO_FORK : 0, &t[k], err,
					  sizeof(err)))
				fail_msg("%s: %s", path, err);
			assert_int_equal(aff_topo_json(t[k], 0, &json[k][0]), 0);
			assert_int_equal(aff_plan_new(t[k], NULL, &p, err, sizeof(err)), 0);
			assert_int_equal(aff_plan_json(p, 0, &json[k][1]), 0);
			aff_plan_unref(p);
		}
		assert_string_equal(json[0][0], json[1][0]);
		assert_string_equal(json[0][1], json[1][1]);
		for (k = 0; k < 2; k++) {
			free(json[k][0]);
			free(json[k][1]);
			aff_topo_unref(t[k]);
		}
		aff_ctx_unref(ctx);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regular_file),
		cmocka_unit_test(test_not_regular),
		cmocka_unit_test(test_read_text),
		cmocka_unit_test(test_size_limit),
		cmocka_unit_test(test_config_key),
		cmocka_unit_test(test_topo_limit),
		cmocka_unit_test(test_contained_same_result),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
