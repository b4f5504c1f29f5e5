/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A request line as the broker acts on it (request.c): pure, so that the
 * fuzz target and the unit test run the broker's own parser.
 */
#ifndef RAILBINDD_REQUEST_H
#define RAILBINDD_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "client.h"

#define RQ_MAX_JOB 128
/* A GPU claim: a CUDA_VISIBLE_DEVICES-style list. */
#define RQ_MAX_VISIBLE 256
/* Far beyond any node's GPU count; keeps a rank within an int everywhere. */
#define RQ_MAX_RANK AFF_MAX_LOCAL_RANK

enum rq_op { RQ_PLAN, RQ_TOPO, RQ_STATUS, RQ_WATCH, RQ_AUDIT, RQ_RELOAD, RQ_VERIFY, RQ_NOPS };
/* verify: at most this many pids in one request. */
#define RQ_MAX_PIDS 4096
enum rq_lease { RQ_LEASE_PID, RQ_LEASE_CONN, RQ_LEASE_NONE };

struct request {
	struct json_object *doc;	/* owned; NULL when the line was not JSON */
	struct json_object *id;		/* the request's "id" (in doc), or NULL */
	enum rq_op op;
	/* plan only: */
	long rank;			/* -1: the whole plan */
	const char *job;		/* NULL: the default job */
	enum rq_lease lease;
	const char *visible;		/* NULL: the process's own */
	bool isolate;
	/* verify only: */
	struct json_object *pids;	/* an array of pids (in doc), NULL: all */
};

/*
 * Parse @len bytes of @line (no newline, no NUL needed after it). 0: @rq
 * is a valid request. -1: @error is the reply's error name, @msg its
 * message; @rq->id is set when the line was an object that had one.
 * Either way request_fini() releases @rq.
 */
int request_parse(const char *line, size_t len, struct request *rq, const char **error,
		  char *msg, size_t msglen);
void request_fini(struct request *rq);
const char *request_op_name(enum rq_op op);
/*
 * Whether @n bytes at @s are 1..@max bytes of strict UTF-8 with nothing a
 * log or terminal would act on or hide (unicode_invisible()): the rule for
 * every client string the broker logs or stores.
 */
bool request_text_ok(const char *s, size_t n, size_t max);
/*
 * unicode.c: whether code point @cp is one a job name may not hold (Cc, Cf,
 * Zl, Zp, Default_Ignorable_Code_Point, noncharacters) in Unicode
 * RQ_UNICODE_VERSION, the version its table was written from.
 */
#define RQ_UNICODE_VERSION "14.0.0"
bool unicode_invisible(unsigned long cp);
/* Whether @s (@n bytes) is a GPU list: [A-Za-z0-9,:._/-], at most RQ_MAX_VISIBLE. */
bool request_gpu_list_ok(const char *s, size_t n);

#endif
