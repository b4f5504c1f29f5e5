// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The broker's request parser, request_parse() (broker/railbindd/request.c),
 * on any bytes: an exact-size buffer (no NUL after it), over-long lines,
 * invalid UTF-8, deep nesting. Besides memory safety: an accepted request
 * has a known op, version 1, a rank within 0..RQ_MAX_RANK (or none), a job
 * of 1 to 128 bytes of printable UTF-8 (no control, separator or bidi
 * character: logs and status show it), a GPU claim of at most 256 GPU-name
 * characters, strings without NUL and in strict UTF-8 (the reply and the
 * lease file echo them), strict JSON (no single quote or comment outside a
 * string, no lone surrogate turned U+FFFD); a refused one names a protocol
 * error; and
 * an accepted request, printed by json-c and parsed again, means the same.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz.h"
#include "fuzz_utf8.h"
#include "request.h"

static const char *const known_errors[] = {
	"malformed", "unsupported-version", "unknown-op", "invalid", "too-large", NULL,
};

static bool str_ok(const char *s, size_t maxlen)
{
	return strlen(s) <= maxlen && fuzz_utf8_valid((const unsigned char *)s, strlen(s));
}

/* Whether byte @c occurs outside every JSON string of @data. */
static bool outside_strings(const uint8_t *data, size_t size, uint8_t c)
{
	bool in = false;
	size_t i;

	for (i = 0; i < size; i++) {
		if (in && data[i] == '\\')
			i++;
		else if (data[i] == '"')
			in = !in;
		else if (!in && data[i] == c)
			return true;
	}
	return false;
}

/* Whether @data spells U+FFFD as an escape (any case of its hex digits). */
static bool has_fffd_escape(const uint8_t *data, size_t size)
{
	size_t i;

	for (i = 0; i + 6 <= size; i++)
		if (data[i] == '\\' && data[i + 1] == 'u' && !strncasecmp((const char *)data + i + 2,
									   "fffd", 4))
			return true;
	return false;
}

static void check_accepted(const struct request *rq, const uint8_t *data, size_t size)
{
	struct json_object *v;

	FUZZ_CHECK(size <= AFF_PROTO_MAX_REQUEST);
	FUZZ_CHECK(rq->doc && json_object_is_type(rq->doc, json_type_object));
	FUZZ_CHECK(json_object_object_get_ex(rq->doc, "v", &v) &&
		   json_object_get_int64(v) == AFF_PROTO_VERSION);
	FUZZ_CHECK(rq->op < RQ_NOPS);
	FUZZ_CHECK(json_object_object_get_ex(rq->doc, "op", &v) &&
		   !strcmp(json_object_get_string(v), request_op_name(rq->op)));
	FUZZ_CHECK(rq->rank >= -1 && rq->rank <= RQ_MAX_RANK);
	FUZZ_CHECK(rq->lease == RQ_LEASE_PID || rq->lease == RQ_LEASE_CONN ||
		   rq->lease == RQ_LEASE_NONE);
	if (rq->op != RQ_PLAN)
		FUZZ_CHECK(rq->rank == -1 && !rq->job && !rq->visible);
	if (rq->rank >= 0)
		FUZZ_CHECK(json_object_object_get_ex(rq->doc, "rank", &v) &&
			   json_object_get_int64(v) == rq->rank);
	if (rq->job)
		FUZZ_CHECK(*rq->job && str_ok(rq->job, RQ_MAX_JOB) &&
			   fuzz_text_printable((const unsigned char *)rq->job, strlen(rq->job)));
	if (rq->visible)
		FUZZ_CHECK(str_ok(rq->visible, RQ_MAX_VISIBLE) &&
			   strspn(rq->visible, "0123456789,:._/-abcdefghijklmnopqrstuvwxyz"
					       "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == strlen(rq->visible));
	/* verify's pids: 1..RQ_MAX_PIDS process ids, each 1..INT_MAX; none elsewhere. */
	if (rq->op != RQ_VERIFY)
		FUZZ_CHECK(!rq->pids);
	if (rq->pids) {
		size_t i, n = json_object_array_length(rq->pids);

		FUZZ_CHECK(json_object_is_type(rq->pids, json_type_array) && n >= 1 &&
			   n <= RQ_MAX_PIDS);
		for (i = 0; i < n; i++) {
			v = json_object_array_get_idx(rq->pids, i);
			FUZZ_CHECK(json_object_is_type(v, json_type_int) &&
				   json_object_get_int64(v) >= 1 &&
				   json_object_get_int64(v) <= 0x7fffffff);
		}
	}
	/* Every byte of the line was looked at: none of it is a NUL. */
	FUZZ_CHECK(!memchr(data, '\0', size));
	/* Strict JSON (issue 25): no single quote or comment outside a string
	 * got through; json-c's U+FFFD for a lone surrogate never reaches a
	 * job unless the line itself wrote one. */
	if (rq->job && strstr(rq->job, "\xef\xbf\xbd"))
		FUZZ_CHECK(memmem(data, size, "\xef\xbf\xbd", 3) || has_fffd_escape(data, size));
	FUZZ_CHECK(!outside_strings(data, size, '\'') && !outside_strings(data, size, '/'));
}

/* The request as json-c prints it parses again to the same request. */
static void check_reprint(const struct request *rq)
{
	const char *s = json_object_to_json_string_ext(rq->doc, JSON_C_TO_STRING_PLAIN);
	const char *error = NULL;
	struct request again;
	char msg[512];

	if (strlen(s) > AFF_PROTO_MAX_REQUEST)
		return;
	FUZZ_CHECK(request_parse(s, strlen(s), &again, &error, msg, sizeof(msg)) == 0);
	FUZZ_CHECK(again.op == rq->op && again.rank == rq->rank && again.lease == rq->lease &&
		   again.isolate == rq->isolate);
	FUZZ_CHECK(!again.job == !rq->job && (!rq->job || !strcmp(again.job, rq->job)));
	FUZZ_CHECK(!again.visible == !rq->visible &&
		   (!rq->visible || !strcmp(again.visible, rq->visible)));
	request_fini(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Exactly @size bytes: a read past the line is ASan's to catch. */
	char *line = malloc(size ? size : 1), msg[512];
	const char *error = NULL;
	struct request rq;
	size_t i;

	if (!line)
		abort();
	memcpy(line, data, size);
	msg[0] = '\0';
	if (request_parse(line, size, &rq, &error, msg, sizeof(msg)) == 0) {
		check_accepted(&rq, data, size);
		check_reprint(&rq);
	} else {
		FUZZ_CHECK(error && *msg);
		for (i = 0; known_errors[i] && strcmp(known_errors[i], error); i++)
			;
		FUZZ_CHECK(known_errors[i] != NULL);
		/* Only an object can carry the id its error reply echoes. */
		if (rq.id)
			FUZZ_CHECK(rq.doc && json_object_is_type(rq.doc, json_type_object));
		if (size > AFF_PROTO_MAX_REQUEST)
			FUZZ_CHECK(!strcmp(error, "too-large"));
	}
	request_fini(&rq);
	free(line);
	return 0;
}
