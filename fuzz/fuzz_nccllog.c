// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind nccl-check's reader (broker/railbind/nccllog_*.c, compiled in) and
 * judge on any text: an NCCL_DEBUG=INFO log, nccl-tests output, or a -J
 * document (input starting with '{'), fed a line at a time as the command
 * feeds it, then judged against a plan of two GPUs. Checked whatever the
 * input: every GPU belongs to a process read; a channel line is counted once,
 * with or without GPUDirect; a NET device name fits its slot; every note
 * names a line that was read; a table's busbw is not negative; the judge's
 * status is one of the audit's and every check is in its summary.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "fuzz.h"
#include "nccllog_judge.h"

/* The plan and topology documents of a node with two GPUs, each with its rail. */
static const char plan_text[] =
	"{\"schema\":\"railbind.plan/1\",\"ranks\":["
	"{\"local_rank\":0,\"gpu\":{\"pci\":\"0000:04:00.0\"},\"nics\":[{\"pci\":\"0000:05:00.0\","
	"\"name\":\"mlx5_0\",\"port\":1,\"path\":\"PIX\",\"bandwidth\":24}]},"
	"{\"local_rank\":1,\"gpu\":{\"pci\":\"0000:14:00.0\"},\"nics\":[{\"pci\":\"0000:15:00.0\","
	"\"name\":\"mlx5_1\",\"port\":1,\"path\":\"SYS\",\"bandwidth\":12.5}]}]}";
static const char topo_text[] =
	"{\"schema\":\"railbind.topo/1\",\"host\":\"fuzz\",\"source\":\"fuzz\",\"nics\":["
	"{\"pci\":\"0000:05:00.0\",\"name\":\"mlx5_0\",\"port\":1,\"rate\":400},"
	"{\"pci\":\"0000:15:00.0\",\"name\":\"mlx5_1\",\"port\":1,\"rate\":200}]}";

static void check_log(const struct nl_log *log, long lines)
{
	size_t i;
	int d;

	for (i = 0; i < log->ngpu; i++) {
		const struct nl_use *u = &log->gpu[i].use;

		FUZZ_CHECK(log->gpu[i].proc >= 0 && (size_t)log->gpu[i].proc < log->nproc);
		FUZZ_CHECK(u->gdr_lines + u->host_lines == u->channels);
		FUZZ_CHECK(u->pxn_lines <= u->channels);
	}
	for (i = 0; i < log->nproc; i++) {
		FUZZ_CHECK(log->proc[i].ndev >= -1 && log->proc[i].ndev <= NL_MAX_DEVS);
		for (d = 0; d < NL_MAX_DEVS; d++)
			FUZZ_CHECK(!log->proc[i].dev[d] || (strlen(log->proc[i].dev[d]) < 40 &&
							      d < log->proc[i].ndev));
	}
	for (i = 0; i < log->nnote; i++)
		FUZZ_CHECK(log->note[i].line >= 1 && log->note[i].line <= (lines > 1 ? lines : 1));
	for (i = 0; i < log->ntest; i++)
		FUZZ_CHECK(log->test[i].busbw >= 0 && log->test[i].line >= 1);
	FUZZ_CHECK(log->cur_test < (long)log->ntest);
}

static void check_judge(const struct nl_log *log)
{
	static const struct nl_judge_spec spec = { .expect = NL_EXPECT_DEFAULT, .min_size = 1024,
						   .algo = "Ring" };
	struct json_object *plan = json_tokener_parse(plan_text);
	struct json_object *topo = json_tokener_parse(topo_text), *doc, *sum, *st;
	size_t k;

	FUZZ_CHECK(plan && topo);
	doc = nl_judge(log, plan, topo, NULL, &spec);
	FUZZ_CHECK(doc);
	FUZZ_CHECK(json_object_object_get_ex(doc, "status", &st));
	FUZZ_CHECK(!strcmp(json_object_get_string(st), "ok") || !strcmp(json_object_get_string(st), "warn") ||
		   !strcmp(json_object_get_string(st), "fail") ||
		   !strcmp(json_object_get_string(st), "unknown"));
	FUZZ_CHECK(json_object_object_get_ex(doc, "summary", &sum));
	for (k = 0; k < NL_NCHECKS; k++)
		FUZZ_CHECK(json_object_object_get_ex(sum, nl_check_ids[k], NULL));
	FUZZ_CHECK(json_object_to_json_string(doc) != NULL);
	json_object_put(doc);
	json_object_put(plan);
	json_object_put(topo);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nl_log *log = nl_new();
	const char *p = (const char *)data, *end = p + size;
	long lines = 0;

	FUZZ_CHECK(log);
	if (size && *p == '{') {
		FUZZ_CHECK(nl_feed_json(log, "fuzz", p, size) == 0);
		lines = 1;
	} else {
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

			FUZZ_CHECK(nl_feed_line(log, "fuzz", ++lines, p, len) == 0);
			p += len + 1;
		}
	}
	FUZZ_CHECK(nl_finish(log) == 0);
	check_log(log, lines);
	check_judge(log);
	nl_free(log);
	return 0;
}
