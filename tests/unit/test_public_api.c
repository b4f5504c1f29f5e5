// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What LIBAFFINITY_1.6 promises its callers, through affinity.h alone (the
 * header the programs are built against): the audit as an object with its
 * document and exit code, the topology facts railbind fleet compares, the
 * visible-GPU spellings, the configuration getters, the file rules, the
 * counters' lifecycle. Expected values come from the fixtures' descriptions
 * (tests/fixtures/NAME.topo), not from the library.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "affinity.h"

#ifndef BUILD
#define BUILD "build"
#endif

static struct aff_topo *load(struct aff_ctx *ctx, const char *name)
{
	char path[512], err[512] = "";
	struct aff_topo *t = NULL;

	snprintf(path, sizeof(path), "%s/fixtures/%s.xml", BUILD, name);
	if (aff_topo_load(ctx, path, 0, &t, err, sizeof(err)) < 0)
		fail_msg("%s: %s", path, err);
	return t;
}

static struct json_object *member(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("no \"%s\"", key);
	return v;
}

static void test_version(void **state)
{
	(void)state;
	assert_int_equal(aff_get_api_version(), AFF_API_VERSION);
	assert_true(AFF_API_VERSION >= 0x00010006u);
}

/* audit-acs.topo: ACS redirect on switch A's downstream ports, the only fault. */
static void test_audit(void **state)
{
	struct aff_ctx *ctx = aff_ctx_new(NULL);
	struct aff_topo *t = load(ctx, "audit-acs");
	struct aff_audit *a = NULL;
	struct json_object *doc, *checks;
	char err[512] = "", *text = NULL;
	bool acs_failed = false;
	size_t i;

	(void)state;
	assert_int_equal(aff_audit_run(t, NULL, 0, &a, err, sizeof(err)), 0);
	assert_ptr_equal(aff_audit_ref(a), a);
	assert_null(aff_audit_unref(a));
	assert_int_equal(aff_audit_json(a, 0, &text), 0);
	doc = json_tokener_parse(text);
	assert_non_null(doc);
	assert_string_equal(json_object_get_string(member(doc, "schema")), "railbind.audit/1");
	assert_string_equal(json_object_get_string(member(doc, "status")), "fail");
	assert_int_equal(aff_audit_exit_code(a), 2);
	assert_int_equal(aff_sev_from_name("fail"), AFF_SEV_FAIL);
	assert_string_equal(aff_sev_name(AFF_SEV_WARN), "warn");
	assert_int_equal(aff_sev_from_name("bogus"), AFF_SEV_UNKNOWN);
	checks = member(doc, "checks");
	for (i = 0; i < json_object_array_length(checks); i++) {
		struct json_object *c = json_object_array_get_idx(checks, i);

		if (!strcmp(json_object_get_string(member(c, "id")), "acs-redirect") &&
		    !strcmp(json_object_get_string(member(c, "severity")), "fail"))
			acs_failed = true;
	}
	assert_true(acs_failed);
	json_object_put(doc);
	free(text);
	assert_null(aff_audit_unref(a));
	aff_topo_unref(t);
	aff_ctx_unref(ctx);
}

/* The documents can be asked for more than once: the object keeps its own. */
static void test_json_twice(void **state)
{
	struct aff_ctx *ctx = aff_ctx_new(NULL);
	struct aff_topo *t = load(ctx, "audit-acs");
	pid_t self = getpid();
	struct aff_verify_spec spec = { .flags = AFF_VERIFY_NO_BROKER, .pids = &self, .npids = 1,
					.uid = -1 };
	struct aff_verify *v = NULL;
	struct aff_audit *a = NULL;
	char err[512] = "", *one = NULL, *two = NULL;
	struct json_object *doc;

	(void)state;
	assert_int_equal(aff_verify_run(t, &spec, &v, err, sizeof(err)), 0);
	assert_int_equal(aff_verify_json(v, 0, &one), 0);
	assert_int_equal(aff_verify_json(v, 0, &two), 0);
	assert_string_equal(one, two);
	doc = json_tokener_parse(two);
	assert_non_null(doc);
	assert_string_equal(json_object_get_string(member(doc, "schema")), "railbind.verify/1");
	assert_int_equal(aff_verify_exit_code(v),
			 aff_sev_from_name(json_object_get_string(member(doc, "status"))));
	json_object_put(doc);
	free(one);
	free(two);
	aff_verify_unref(v);
	assert_int_equal(aff_audit_run(t, NULL, 0, &a, err, sizeof(err)), 0);
	assert_int_equal(aff_audit_json(a, AFF_JSON_PRETTY, &one), 0);
	assert_int_equal(aff_audit_json(a, AFF_JSON_PRETTY, &two), 0);
	assert_string_equal(one, two);
	assert_int_equal(aff_audit_exit_code(a), 2);
	free(one);
	free(two);
	aff_audit_unref(a);
	aff_topo_unref(t);
	aff_ctx_unref(ctx);
}

static void test_facts(void **state)
{
	struct aff_ctx *ctx = aff_ctx_new(NULL);
	struct aff_topo *t = load(ctx, "audit-acs");
	struct json_object *doc, *links, *acs, *m;
	char *text = NULL, key[64];
	size_t g;

	(void)state;
	assert_string_equal(aff_topo_host(t), "audit-acs");
	assert_int_equal(aff_topo_facts_json(t, 0, &text), 0);
	doc = json_tokener_parse(text);
	assert_non_null(doc);
	links = member(doc, "links");
	acs = member(doc, "acs");
	m = member(doc, "machine");
	/* Each GPU's link is a fact (rbgen gives every link a speed and width). */
	assert_int_equal(aff_topo_gpu_count(t), 4);
	for (g = 0; g < aff_topo_gpu_count(t); g++) {
		snprintf(key, sizeof(key), "GPU %s", aff_topo_gpu_pci(t, g));
		assert_non_null(strstr(json_object_get_string(member(links, key)), "GT/s x"));
	}
	/* Switch A's two downstream ports, and no other, control ACS. */
	assert_int_equal(json_object_object_length(acs), 2);
	json_object_object_foreach(acs, port, value) {
		assert_int_equal(strncmp(port, "port ", 5), 0);
		assert_string_equal(json_object_get_string(value), "0x001d");
	}
	/* 2 packages x 1 NUMA node x 4 cores. */
	assert_string_equal(json_object_get_string(member(m, "cores")), "8");
	assert_int_equal(strncmp(json_object_get_string(member(m, "NUMA nodes")), "0: ", 3), 0);
	assert_non_null(strstr(json_object_get_string(member(m, "NUMA nodes")), "; 1: "));
	assert_string_equal(json_object_get_string(member(m, "peer memory")), "nvidia_peermem");
	assert_string_equal(json_object_get_string(member(m, "railbind.ko")), "0.1.0");
	json_object_put(doc);
	free(text);
	/* A fixture without NVML answers has no device minor. */
	assert_int_equal(aff_topo_gpu_minor(t, 0), -1);
	aff_topo_unref(t);
	aff_ctx_unref(ctx);
}

static void test_visible(void **state)
{
	struct aff_ctx *ctx = aff_ctx_new(NULL);
	struct aff_topo *t = load(ctx, "audit-acs");
	char err[256] = "", name[64];
	int *gpu = NULL, *mig = NULL;
	size_t n = 0;

	(void)state;
	/* Any spelling, in PCI order. */
	assert_int_equal(aff_visible_select(t, "0000:84:00.0,1", &gpu, &mig, &n, err,
					    sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(gpu[0], 1);
	assert_int_equal(gpu[1], 2);
	assert_int_equal(mig[0], -1);
	aff_visible_name(t, gpu[1], mig[1], name, sizeof(name));
	assert_string_equal(name, "2");
	free(gpu);
	free(mig);
	assert_int_equal(aff_visible_select(t, "1,7", &gpu, &mig, &n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "\"1,7\""));
	assert_null(gpu);
	assert_int_equal(aff_visible_within(t, "1", "0,1", err, sizeof(err)), 1);
	assert_int_equal(aff_visible_within(t, "2", "0,1", err, sizeof(err)), 0);
	assert_true(aff_visible_needs_libs("0,GPU-1234"));
	assert_false(aff_visible_needs_libs("0,1"));
	aff_topo_unref(t);
	aff_ctx_unref(ctx);
}

static void test_config(void **state)
{
	char dir[] = "/tmp/rb-api-XXXXXX", path[64], err[256] = "";
	struct aff_ctx *ctx = aff_ctx_new(NULL);
	FILE *f;

	(void)state;
	assert_null(aff_ctx_nccl_topo_file(ctx));
	assert_int_equal(aff_ctx_gpu_sharing(ctx), AFF_GPU_SHARING_AUTO);
	assert_int_equal(aff_ctx_gpu_sharing(NULL), AFF_GPU_SHARING_AUTO);
	assert_int_equal(aff_ctx_health_interval(ctx), 10);
	assert_int_equal(aff_ctx_input_limit(ctx), AFF_INPUT_LIMIT);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/railbind.conf", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("nccl-topo-file = /var/run/nvidia-topologyd/virtualTopology.xml\n"
	      "gpu-sharing = no\nhealth-interval = 5\nmax-input-size = 1048576\n", f);
	fclose(f);
	assert_int_equal(aff_ctx_load_config(ctx, path, err, sizeof(err)), 0);
	assert_string_equal(aff_ctx_nccl_topo_file(ctx),
			    "/var/run/nvidia-topologyd/virtualTopology.xml");
	assert_int_equal(aff_ctx_gpu_sharing(ctx), AFF_GPU_SHARING_NO);
	assert_int_equal(aff_ctx_health_interval(ctx), 5);
	assert_int_equal(aff_ctx_input_limit(ctx), 1048576);
	unlink(path);
	rmdir(dir);
	aff_ctx_unref(ctx);
}

static void test_files(void **state)
{
	char dir[] = "/tmp/rb-api-XXXXXX", file[64], fifo[64], link[64], err[256] = "";
	char *buf = NULL;
	size_t len = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/f", dir);
	snprintf(fifo, sizeof(fifo), "%s/p", dir);
	snprintf(link, sizeof(link), "%s/l", dir);
	assert_int_equal(aff_write_atomic("test", file, "hello\n", 6, err, sizeof(err)), 0);
	assert_int_equal(aff_read_file(file, 0, &buf, &len, err, sizeof(err)), 0);
	assert_int_equal(len, 6);
	assert_string_equal(buf, "hello\n");
	free(buf);
	assert_int_equal(aff_read_file(file, 5, &buf, &len, err, sizeof(err)), -EFBIG);
	assert_null(buf);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(aff_read_file(fifo, 0, &buf, &len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, fifo));
	assert_int_equal(aff_read_file(dir, 0, &buf, &len, err, sizeof(err)), -EISDIR);
	assert_int_equal(symlink(file, link), 0);
	assert_int_equal(aff_read_file(link, 0, &buf, &len, err, sizeof(err)), 0);
	free(buf);
	assert_int_equal(aff_read_state_file(link, 0, &buf, &len, err, sizeof(err)), -ELOOP);
	unlink(link);
	unlink(fifo);
	unlink(file);
	rmdir(dir);
}

/* railbind.ko's generation under a --root tree: absent, a number, not one. */
static void test_kmod_generation(void **state)
{
	char dir[] = "/tmp/rb-api-XXXXXX", path[128], err[256] = "";
	unsigned long long gen = 99;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(aff_kmod_generation(dir, &gen), -ENOENT);
	snprintf(path, sizeof(path), "%s/sys", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/sys/class", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/sys/class/misc", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/sys/class/misc/railbind", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/sys/class/misc/railbind/generation", dir);
	assert_int_equal(aff_write_atomic("test", path, "42\n", 3, err, sizeof(err)), 0);
	assert_int_equal(aff_kmod_generation(dir, &gen), 0);
	assert_int_equal(gen, 42);
	assert_int_equal(aff_write_atomic("test", path, "x\n", 2, err, sizeof(err)), 0);
	assert_int_equal(aff_kmod_generation(dir, &gen), -EINVAL);
	/* A FIFO planted there: not a number, at once (the alarm catches a hang). */
	unlink(path);
	assert_int_equal(mkfifo(path, 0644), 0);
	alarm(5);
	assert_int_equal(aff_kmod_generation(dir, &gen), -EINVAL);
	alarm(0);
	unlink(path);
	for (int i = 0; i < 4; i++) {
		*strrchr(path, '/') = '\0';
		assert_int_equal(rmdir(path), 0);
	}
	rmdir(dir);
}

static void test_health(void **state)
{
	struct aff_health *h = NULL;
	char err[256] = "";

	(void)state;
	assert_int_equal(aff_health_new(&h), 0);
	assert_non_null(h);
	assert_int_equal(aff_health_load("/nonexistent/counters.json", NULL, h), -ENOENT);
	assert_int_equal(aff_health_save(h, "/nonexistent/dir/counters.json", err, sizeof(err)),
			 -ENOENT);
	aff_health_free(h);
	aff_health_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_audit),
		cmocka_unit_test(test_json_twice),
		cmocka_unit_test(test_facts),
		cmocka_unit_test(test_visible),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_health),
		cmocka_unit_test(test_kmod_generation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
