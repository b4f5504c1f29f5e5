// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The broker's pure parsers: request lines (request.c), GPU claims and
 * environ blocks (claim.c), and the library's local rank parser. One test
 * per fuzz finding (fuzz/regress/broker_request, fuzz/regress/rank_env),
 * on the smallest input that showed it, and the protocol's own examples.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "client.h"
#include "model.h"
#include "railbindd.h"
#include "request.h"

/* Parse @line; the error name, or "" when it was accepted (then @rq is kept). */
static const char *parse(const char *line, struct request *rq)
{
	const char *error = NULL;
	char msg[512];

	if (request_parse(line, strlen(line), rq, &error, msg, sizeof(msg)) == 0)
		return "";
	assert_non_null(error);
	assert_true(msg[0] != '\0');
	return error;
}

static void expect_error(const char *line, const char *error)
{
	struct request rq;
	const char *got = parse(line, &rq);

	if (strcmp(got, error))
		print_error("%s: \"%s\", expected \"%s\"\n", line, got, error);
	assert_string_equal(got, error);
	request_fini(&rq);
}

/* @line is accepted, its job read as @job. */
static void expect_job(const char *line, const char *job)
{
	struct request rq;

	assert_string_equal(parse(line, &rq), "");
	assert_string_equal(rq.job, job);
	request_fini(&rq);
}

static void test_plan_fields(void **state)
{
	struct request rq;

	(void)state;
	assert_string_equal(parse("{\"v\":1,\"op\":\"plan\",\"rank\":3,\"job\":\"j1\","
				  "\"lease\":\"conn\",\"visible\":\"0,2\",\"isolate_gpu\":true,"
				  "\"id\":7} \r", &rq), "");
	assert_int_equal(rq.op, RQ_PLAN);
	assert_int_equal(rq.rank, 3);
	assert_string_equal(rq.job, "j1");
	assert_int_equal(rq.lease, RQ_LEASE_CONN);
	assert_string_equal(rq.visible, "0,2");
	assert_true(rq.isolate);
	assert_int_equal(json_object_get_int(rq.id), 7);
	request_fini(&rq);
	assert_string_equal(parse("{\"v\":1,\"op\":\"status\"}", &rq), "");
	assert_int_equal(rq.op, RQ_STATUS);
	assert_int_equal(rq.rank, -1);
	assert_null(rq.job);
	request_fini(&rq);
}

static void test_protocol_errors(void **state)
{
	struct request rq;

	(void)state;
	expect_error("this is not json", "malformed");
	expect_error("[1]", "malformed");
	expect_error("{\"op\":\"status\"}", "unsupported-version");
	expect_error("{\"v\":2,\"op\":\"status\"}", "unsupported-version");
	expect_error("{\"v\":1}", "malformed");
	expect_error("{\"v\":1,\"op\":7}", "malformed");
	expect_error("{\"v\":1,\"op\":\"frobnicate\"}", "unknown-op");
	expect_error("{\"v\":1,\"op\":\"plan\",\"rank\":\"one\"}", "invalid");
	expect_error("{\"v\":1,\"op\":\"plan\",\"rank\":-1}", "invalid");
	expect_error("{\"v\":1,\"op\":\"plan\",\"lease\":\"forever\"}", "invalid");
	expect_error("{\"v\":1,\"op\":\"plan\",\"job\":\"\"}", "invalid");
	/* The id of a refused object still comes back in its error reply. */
	assert_string_equal(parse("{\"v\":3,\"op\":\"status\",\"id\":\"x\"}", &rq),
			    "unsupported-version");
	assert_string_equal(json_object_get_string(rq.id), "x");
	request_fini(&rq);
}

/* Review of the old parser: what it let through and the broker then acted on. */
static void test_strict_framing(void **state)
{
	(void)state;
	/* json_tokener_parse() stopped after the first object: the rest was dropped. */
	expect_error("{\"v\":1,\"op\":\"status\"}{\"v\":1}", "malformed");
	expect_error("{\"v\":1,\"op\":\"status\"} x", "malformed");
	/* json_object_get_boolean() took any non-empty string for true. */
	expect_error("{\"v\":1,\"op\":\"plan\",\"isolate_gpu\":\"no\"}", "invalid");
	/* A NUL in a string cut it short: "plan\0x" was plan, "a\0b" was job "a". */
	expect_error("{\"v\":1,\"op\":\"plan\\u0000x\"}", "malformed");
	expect_error("{\"v\":1,\"op\":\"plan\",\"job\":\"a\\u0000b\"}", "invalid");
	expect_error("{\"v\":1,\"op\":\"plan\",\"rank\":65536}", "invalid");
	expect_error("{\"v\":1,\"op\":\"plan\",\"rank\":9223372036854775807}", "invalid");
}

/*
 * fuzz_broker_request (fuzz/regress/broker_request/job-surrogate) and
 * fuzz_rank_env (fuzz/regress/rank_env/job-lead-f5): json-c's UTF-8 check
 * passed a surrogate (ED A0 80) and a lead byte above F4 in a job name,
 * which every status reply then carried to strict readers.
 */
static void test_job_strict_utf8(void **state)
{

	(void)state;
	expect_error("{\"v\":1,\"op\":\"plan\",\"job\":\"a\xed\xa0\x80\"}", "malformed");
	expect_error("{\"v\":1,\"op\":\"plan\",\"job\":\"a\xf5\xba\xa9\xae\"}", "malformed");
	expect_error("{\"v\":1,\"op\":\"plan\",\"job\":\"a\xc0\x80\"}", "malformed");
	/* json-c decodes an escaped lone surrogate to U+FFFD: refused (issue 25). */
	expect_error("{\"v\":1,\"op\":\"plan\",\"job\":\"a\\ud800\"}", "malformed");
	/*
	 * json-c 0.16 decodes the pair of U+2D800 (CJK Extension F) to U+FFFD:
	 * refused, never a job of another name; as UTF-8 it is that job.
	 */
	expect_error("{\"v\":1,\"op\":\"plan\",\"job\":\"a\\ud876\\udc00\"}", "malformed");
	expect_error("{\"v\":1,\"op\":\"plan\",\"job\":\"a\\ud837\\ude00\"}", "malformed");
	expect_job("{\"v\":1,\"op\":\"plan\",\"job\":\"a\xf0\xad\xa0\x80\"}", "a\xf0\xad\xa0\x80");
	/* A pair is one character, whatever the case of its hex digits. */
	expect_job("{\"v\":1,\"op\":\"plan\",\"job\":\"a\\uD83D\\ude00\"}", "a\xf0\x9f\x98\x80");
	expect_job("{\"v\":1,\"op\":\"plan\",\"job\":\"\xc3\xa9t\xc3\xa9\\u00e9\"}",
		   "\xc3\xa9t\xc3\xa9\xc3\xa9");
}

/*
 * Issue 25: what json-c's lenient tokener took, and what its strict mode
 * (json-c 0.16) still takes, against docs/PROTOCOL.md's framing.
 */
static void test_strict_json(void **state)
{
	static const char *const lenient[] = {
		/* json-c's default mode */
		"{'v':1,'op':'status'}",
		"{\"v\":1,\"op\":'status'}",
		"{\"v\":1,\"op\":\"status\",}",
		"{\"v\":1,\"op\":\"verify\",\"pids\":[1,2,]}",
		"/* c */{\"v\":1,\"op\":\"status\"}",
		"{\"v\":1,\"op\":\"status\"}/* c */",
		"{\"v\":1,\"op\":\"status\"}// c",
		"{\"v\":1,/* c */\"op\":\"status\"}",
		/* strict mode still: a single-quoted key, NaN and Infinity, a
		 * bare decimal point, a raw tab, lone surrogates, a key twice */
		"{\"v\":1,'op':\"status\"}",
		"{\"v\":1,\"op\":\"status\",\"id\":NaN}",
		"{\"v\":1,\"op\":\"status\",\"id\":-Infinity}",
		"{\"v\":1,\"op\":\"status\",\"id\":1.}",
		"{\"v\":1,\"op\":\"status\",\"id\":1.e5}",
		"{\"v\":1,\"op\":\"plan\",\"job\":\"a\tb\"}",
		"{\"v\":1,\"op\":\"plan\",\"job\":\"a\\ud800b\"}",
		"{\"v\":1,\"op\":\"plan\",\"job\":\"a\\udfffb\"}",
		"{\"v\":1,\"op\":\"plan\",\"job\":\"a\\ud800\\u0041\"}",
		"{\"v\":1,\"op\":\"plan\",\"job\":\"a\\ude00\\ud83d\"}",
		"{\"v\":1,\"op\":\"plan\",\"job\":\"a\\ud800\"}",
		"{\"v\":1,\"op\":\"plan\",\"job\":\"x\",\"job\":\"y\"}",
		"{\"v\":1,\"op\":\"status\",\"op\":\"reload\"}",
		"\xef\xbb\xbf{\"v\":1,\"op\":\"status\"}",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(lenient) / sizeof(*lenient); i++)
		expect_error(lenient[i], "malformed");
	/* Strict JSON that looks like the above stays accepted. */
	expect_job("{\"v\":1,\"op\":\"plan\",\"job\":\"it's /* not */ a.b\","
		   "\"id\":[1.5e3,-0.25,{\"x\":1,\"x\":2}]}", "it's /* not */ a.b");
	expect_job("{\"v\":1,\"op\":\"plan\",\"job\":\"q\\\"'\\\\\",\"id\":\"NaN\"}", "q\"'\\");
}

/*
 * Issue 25: job names refused by Unicode class (tests/broker/test_unicode.py
 * checks every code point); the characters the hand-picked list let pass.
 */
static void test_invisible_job(void **state)
{
	static const char *const escaped[] = {
		"\\u061c", "\\u00ad", "\\u115f", "\\u180e", "\\ufff9", "\\uffff", "\\u200b",
		"\\u3164", "\\ufe0f", "\\ufdd0", "\\udb40\\udc01" /* U+E0001 LANGUAGE TAG */,
		"\\ud83f\\udffe" /* U+1FFFE */,
	};
	struct request rq;
	char line[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(escaped) / sizeof(*escaped); i++) {
		snprintf(line, sizeof(line), "{\"v\":1,\"op\":\"plan\",\"job\":\"def%sault\"}",
			 escaped[i]);
		expect_error(line, "invalid");
	}
	assert_false(request_text_ok("def\xe1\x85\x9f" "ault", 10, RQ_MAX_JOB));
	assert_false(unicode_invisible(0x10fffd - 2));
	assert_true(unicode_invisible(0x10ffff));
	/* Letters, marks, symbols and spaces of other scripts stay. */
	assert_string_equal(parse("{\"v\":1,\"op\":\"plan\",\"job\":\"\\u0645\\u0647\\u0645\\u0629 "
				  "e\\u0301 \\u65e5\\u672c \\ud83d\\ude80\"}", &rq), "");
	request_fini(&rq);
}

static void test_too_large_and_deep(void **state)
{
	char *big = malloc(AFF_PROTO_MAX_REQUEST + 2), deep[200];
	const char *error = NULL;
	struct request rq;
	char msg[256];
	size_t i;

	(void)state;
	assert_non_null(big);
	memset(big, ' ', AFF_PROTO_MAX_REQUEST + 1);
	assert_int_equal(request_parse(big, AFF_PROTO_MAX_REQUEST + 1, &rq, &error, msg,
				       sizeof(msg)), -1);
	assert_string_equal(error, "too-large");
	request_fini(&rq);
	free(big);
	for (i = 0; i < 80; i++)
		deep[i] = '[';
	deep[80] = '\0';
	expect_error(deep, "malformed");
}

static void test_local_rank(void **state)
{
	static const char *const bad[] = {
		"", " 5", "+5", "-0", "-1", "05", "5\n", "5 ", "0x5", "65536", "99999999999999999999",
	};
	long r = -1;
	size_t i;

	(void)state;
	assert_int_equal(aff_parse_local_rank("0", &r), 0);
	assert_int_equal(r, 0);
	assert_int_equal(aff_parse_local_rank("65535", &r), 0);
	assert_int_equal(r, 65535);
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		assert_true(aff_parse_local_rank(bad[i], &r) < 0);
}

static void test_claims(void **state)
{
	(void)state;
	assert_true(peer_claim_within("0", "0,2"));
	assert_true(peer_claim_within("2,0", "0,2"));
	assert_false(peer_claim_within("1", "0,2"));
	assert_false(peer_claim_within("0", ""));
	assert_false(peer_claim_within("0,", "1"));
	assert_false(peer_claim_within("00", "0"));
	assert_true(peer_claim_within("0000:1b:00.0", "0,0000:1b:00.0"));
}

/* Before: the first 64 KiB of environ only; a variable after them was missed. */
static void test_environ_large(void **state)
{
	static const char tail[] = "CUDA_VISIBLE_DEVICES=0,2";
	size_t big = 100000, len = big + sizeof(tail);
	char *env = malloc(len), *out = NULL;

	(void)state;
	assert_non_null(env);
	memcpy(env, "BIG=", 4);
	memset(env + 4, 'x', big - 5);
	env[big - 1] = '\0';
	memcpy(env + big, tail, sizeof(tail));
	assert_int_equal(peer_environ_visible(env, len, &out), 0);
	assert_string_equal(out, "0,2");
	free(out);
	/* The last entry without its NUL still counts, and only to its end. */
	assert_int_equal(peer_environ_visible(env, len - 1, &out), 0);
	assert_string_equal(out, "0,2");
	free(out);
	free(env);
	assert_int_equal(peer_environ_visible("ROCR_VISIBLE_DEVICES=1\0CUDA_VISIBLE_DEVICES=3",
					      46, &out), 0);
	assert_string_equal(out, "3");
	free(out);
	assert_int_equal(peer_environ_visible("ROCR_VISIBLE_DEVICES=1\0XCUDA_VISIBLE_DEVICES=3",
					      47, &out), 0);
	assert_string_equal(out, "1");
	free(out);
	assert_int_equal(peer_environ_visible("PATH=/bin", 9, &out), 0);
	assert_null(out);
}

/* Issue 15: what the broker logs or stores is printable and bounded. */
static void test_printable(void **state)
{
	static const char *const bad[] = {
		"a\nb", "a\rb", "\x1b[31m", "a\x7f", "a\xc2\x85" "b" /* NEL */,
		"a\xe2\x80\xa8" /* LINE SEPARATOR */, "rtl\xe2\x80\xae" /* RLO */,
		"a\xe2\x81\xa6" /* LRI */, "\xef\xbb\xbf" /* BOM */, "a\xed\xa0\x80",
	};
	char big[RQ_MAX_JOB + 2];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		assert_false(request_text_ok(bad[i], strlen(bad[i]), RQ_MAX_JOB));
	assert_true(request_text_ok("job-1 \xc3\xa9t\xc3\xa9 \xe6\x97\xa5", 15, RQ_MAX_JOB));
	assert_false(request_text_ok("a\0b", 3, RQ_MAX_JOB));
	assert_false(request_text_ok("", 0, RQ_MAX_JOB));
	memset(big, 'x', sizeof(big));
	assert_true(request_text_ok(big, RQ_MAX_JOB, RQ_MAX_JOB));
	assert_false(request_text_ok(big, RQ_MAX_JOB + 1, RQ_MAX_JOB));
	expect_error("{\"v\":1,\"op\":\"plan\",\"job\":\"a\\nforged\"}", "invalid");
	expect_error("{\"v\":1,\"op\":\"plan\",\"job\":\"\\u202e\"}", "invalid");
	/* GPU lists: indices, PCI addresses, UUIDs; empty hides every GPU. */
	assert_true(request_gpu_list_ok("0,1,0000:1b:00.0,GPU-8e5b_1", 27));
	assert_true(request_gpu_list_ok("MIG-GPU-8e5b/1/0", 16));
	assert_true(request_gpu_list_ok("", 0));
	assert_false(request_gpu_list_ok("0;rm -rf", 8));
	assert_false(request_gpu_list_ok("0\n1", 3));
	expect_error("{\"v\":1,\"op\":\"plan\",\"visible\":\"0 1\"}", "invalid");
}

/* The end of a test on a fake --root tree @dir with the GPUs of @topo. */
static void fake_root_done(const char *dir, struct aff_topo *topo, struct aff_ctx *ctx)
{
	char cmd[512];

	gpuown_fini();
	conf.root = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	aff_topo_unref(topo);
	aff_ctx_unref(ctx);
}

/* cgroup v1 devices.list: which GPUs (by their device numbers) a process may open. */
static void test_device_rules(void **state)
{
	char dir[] = "/tmp/railbind-devrules.XXXXXX", path[512];
	struct aff_ctx *ctx = aff_ctx_new(NULL);
	struct aff_topo *topo = NULL;
	struct gpuown_rules *r;
	unsigned char mask[8];
	char err[256];
	size_t i;
	FILE *f;

	(void)state;
	assert_null(gpuown_rules_parse("a *:* rwm\n"));	/* allows all: no authority */
	assert_non_null(mkdtemp(dir));
	assert_int_equal(aff_topo_load(ctx, BUILD "/fixtures/dgx-h100.xml", 0, &topo, err,
				       sizeof(err)), 0);
	assert_int_equal(topo->ngpu, 8);
	/* GPU 0 is NVIDIA minor 4; GPU 1 has render node 226:129; the others nothing. */
	snprintf(path, sizeof(path), "mkdir -p %s/proc/driver/nvidia/gpus/%s %s/sys/bus/pci/devices/%s/drm/renderD129",
		 dir, topo->dev[topo->gpus[0]].pci, dir, topo->dev[topo->gpus[1]].pci);
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "%s/proc/driver/nvidia/gpus/%s/information", dir,
		 topo->dev[topo->gpus[0]].pci);
	assert_non_null(f = fopen(path, "w"));
	fputs("Model: \t\t H100\nDevice Minor: \t 4\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/drm/renderD129/dev", dir,
		 topo->dev[topo->gpus[1]].pci);
	assert_non_null(f = fopen(path, "w"));
	fputs("226:129\n", f);
	fclose(f);
	conf.root = dir;
	gpuown_refresh(topo);
	/* A DRM node of an NVIDIA GPU gives no CUDA: GPU 0 only by 195:4. */
	r = gpuown_rules_parse("c 1:3 rwm\nc 195:4 rw\nc 226:* m\n");
	assert_non_null(r);
	assert_int_equal(gpuown_allowed(r, mask, 8), 1);
	assert_int_equal(mask[0], 1);
	assert_int_equal(mask[1], 0);	/* mknod only is no use */
	for (i = 2; i < 8; i++)
		assert_int_equal(mask[i], 0);
	gpuown_rules_free(r);
	r = gpuown_rules_parse("c 226:* rwm\n");
	assert_int_equal(gpuown_allowed(r, mask, 8), 1);
	assert_int_equal(mask[0], 0);
	assert_int_equal(mask[1], 1);
	assert_int_equal(gpuown_allowed(r, mask, 7), 0);	/* another topology */
	gpuown_rules_free(r);
	fake_root_done(dir, topo, ctx);
}

/* What decides a process's GPUs (gpuown_read, gpuown_decide), and the proof by descriptor. */
static void test_device_authority(void **state)
{
	char dir[] = "/tmp/railbind-devauth.XXXXXX", path[8192], why[256], err[256];
	struct aff_ctx *ctx = aff_ctx_new(NULL);
	struct gpuown_proof p = { 0 }, none = { 0 };
	struct aff_topo *topo = NULL;
	struct gpuown_rules *r;
	unsigned char mask[8];
	int self, fd;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(aff_topo_load(ctx, BUILD "/fixtures/dgx-h100.xml", 0, &topo, err,
				       sizeof(err)), 0);
	/* GPU 1's render node is 1:3, which /dev/null is: a device this test can open. */
	snprintf(path, sizeof(path), "mkdir -p %s/sys/bus/pci/devices/%s/drm/renderD129 %s/sys/fs/cgroup/devices/job",
		 dir, topo->dev[topo->gpus[1]].pci, dir);
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/drm/renderD129/dev", dir,
		 topo->dev[topo->gpus[1]].pci);
	assert_non_null(f = fopen(path, "w"));
	fputs("1:3\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/sys/fs/cgroup/devices/job/devices.list", dir);
	assert_non_null(f = fopen(path, "w"));
	fputs("c 1:3 rwm\n", f);
	fclose(f);
	conf.root = dir;
	gpuown_refresh(topo);

	/* Only an open character device counts, each once. */
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	gpuown_proof_add(&p, fd);
	gpuown_proof_add(&p, fd);
	close(fd);
	assert_int_equal(p.n, 1);
	fd = open("/dev/null", O_PATH | O_CLOEXEC);
	gpuown_proof_add(&none, fd);
	close(fd);
	fd = open(BUILD "/fixtures/dgx-h100.xml", O_RDONLY | O_CLOEXEC);
	gpuown_proof_add(&none, fd);
	close(fd);
	assert_int_equal(none.n, 0);

	self = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(self >= 0);
	/* A v1 devices list decides; the proof is not needed there. */
	r = gpuown_read(self, "5:devices:/job\n0::/\n");
	assert_int_equal(gpuown_decide(r, NULL, mask, 8, why, sizeof(why)), 1);
	assert_int_equal(mask[1], 1);
	assert_int_equal(mask[0], 0);
	gpuown_rules_free(r);
	/* Seen in that cgroup, now in the root one: refused. */
	r = gpuown_read(self, "5:devices:/\n0::/\n");
	assert_int_equal(gpuown_decide(r, &p, mask, 8, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "was in a devices cgroup"));
	gpuown_rules_free(r);
	/* Unreadable: the cgroup file, a devices list, a path too long. */
	r = gpuown_read(self, NULL);
	assert_int_equal(gpuown_decide(r, &p, mask, 8, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "cannot read"));
	gpuown_rules_free(r);
	r = gpuown_read(self, "5:devices:/gone\n");
	assert_int_equal(gpuown_decide(r, &p, mask, 8, why, sizeof(why)), -EPERM);
	gpuown_rules_free(r);
	memset(path, 'a', sizeof(path));
	memcpy(path, "5:devices:/", 11);
	path[sizeof(path) - 1] = '\0';
	r = gpuown_read(self, path);
	assert_int_equal(gpuown_decide(r, &p, mask, 8, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "longer"));
	gpuown_rules_free(r);
	/* No device program where its v2 cgroup is: a proof says nothing. */
	r = gpuown_read(self, "0::/railbind-no-such-cgroup\n");
	assert_int_equal(gpuown_decide(r, &p, mask, 8, why, sizeof(why)), 0);
	gpuown_rules_free(r);
	assert_int_equal(gpuown_decide(NULL, &p, mask, 8, why, sizeof(why)), -EPERM);
	close(self);

	fake_root_done(dir, topo, ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_fields),
		cmocka_unit_test(test_protocol_errors),
		cmocka_unit_test(test_strict_framing),
		cmocka_unit_test(test_job_strict_utf8),
		cmocka_unit_test(test_strict_json),
		cmocka_unit_test(test_invisible_job),
		cmocka_unit_test(test_too_large_and_deep),
		cmocka_unit_test(test_local_rank),
		cmocka_unit_test(test_claims),
		cmocka_unit_test(test_environ_large),
		cmocka_unit_test(test_printable),
		cmocka_unit_test(test_device_rules),
		cmocka_unit_test(test_device_authority),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
