/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * railbind nccl-check's judge: what a log says NCCL and nccl-tests did
 * (nccllog.h), against the plan, the rails and the PCIe paths of the node
 * the job ran on. The document is railbind.nccl-check/1, the audit's model
 * (railbind.audit/1: status, checks with id/severity/subject/message/remedy/
 * devices/evidence, undecided, summary) plus "ranks" and "tests":
 *
 *	{ "schema": "railbind.nccl-check/1", "host", "source", "status",
 *	  "checks": [...], "undecided": [ { "id", "reason" } ], "summary": {...},
 *	  "ranks": [ { "host", "pid", "gpu", "rank", "nranks", "comms", "net",
 *	               "nics", "gdr", "channels", "pxn_channels", "planned_nic",
 *	               "planned_path" } ],
 *	  "tests": [ { "file", "line", "collective", "nodes", "size", "busbw",
 *	               "bound", "ratio", "expected", "algo", "bottleneck",
 *	               "wrong" } ],
 *	  "input": { "lines", "nccl_lines", "long_lines", "unattributed_channels" } }
 */
#ifndef RAILBIND_NCCLLOG_JUDGE_H
#define RAILBIND_NCCLLOG_JUDGE_H

#include <stdint.h>

#include "nccllog.h"

struct json_object;

#define NL_NCHECKS 6
extern const char *const nl_check_ids[NL_NCHECKS];

struct nl_judge_spec {
	double expect;		/* the fraction of the bound busbw should reach */
	const char *algo;	/* the run's NCCL_ALGO when the log does not say; NULL */
	uint64_t min_size;	/* the smallest "large" message judged */
};
/* railbind's defaults: 0.8 of the bound, from messages of 256 MiB. */
#define NL_EXPECT_DEFAULT 0.8
#define NL_MIN_SIZE_DEFAULT ((uint64_t)256 << 20)

/*
 * The railbind.nccl-check/1 document of @log against @plan (a railbind.plan/1
 * document, NULL when the node has no accelerator), @topo (railbind.topo/1)
 * and @facts (aff_topo_facts_json()'s, may be NULL). NULL without memory.
 */
struct json_object *nl_judge(const struct nl_log *log, struct json_object *plan,
			     struct json_object *topo, struct json_object *facts,
			     const struct nl_judge_spec *spec);

#endif
