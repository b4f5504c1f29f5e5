// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The broker's pure parsers: request lines (request.c), GPU claims and
 * environ blocks (claim.c), and the library's local rank parser. One test
 * per fuzz finding (fuzz/regress/broker_request, fuzz/regress/rank_env),
 * on the smallest input that showed it, and the protocol's own examples.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "client.h"
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

	assert_string_equal(parse(line, &rq), error);
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
	struct request rq;

	(void)state;
	expect_error("{\"v\":1,\"op\":\"plan\",\"job\":\"a\xed\xa0\x80\"}", "malformed");
	expect_error("{\"v\":1,\"op\":\"plan\",\"job\":\"a\xf5\xba\xa9\xae\"}", "malformed");
	expect_error("{\"v\":1,\"op\":\"plan\",\"job\":\"a\xc0\x80\"}", "malformed");
	/* json-c decodes an escaped lone surrogate to U+FFFD: valid, kept. */
	assert_string_equal(parse("{\"v\":1,\"op\":\"plan\",\"job\":\"a\\ud800\"}", &rq), "");
	assert_string_equal(rq.job, "a\xef\xbf\xbd");
	request_fini(&rq);
	assert_string_equal(parse("{\"v\":1,\"op\":\"plan\",\"job\":\"\xc3\xa9t\xc3\xa9\\u00e9\"}",
				  &rq), "");
	assert_string_equal(rq.job, "\xc3\xa9t\xc3\xa9\xc3\xa9");
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_fields),
		cmocka_unit_test(test_protocol_errors),
		cmocka_unit_test(test_strict_framing),
		cmocka_unit_test(test_job_strict_utf8),
		cmocka_unit_test(test_too_large_and_deep),
		cmocka_unit_test(test_local_rank),
		cmocka_unit_test(test_claims),
		cmocka_unit_test(test_environ_large),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
