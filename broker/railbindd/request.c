// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One request line parsed into what the broker will do (docs/PROTOCOL.md),
 * with no client, socket or state involved: a pure function, so the fuzz
 * target (fuzz/fuzz_broker_request.c) and the unit test run exactly the
 * code the broker runs. Everything a reply echoes or a lease keeps is
 * checked here: one JSON object and nothing after it, valid UTF-8, no NUL
 * inside a string, fields of the right type within their limits.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "request.h"

static const char *const op_names[] = {
	[RQ_PLAN] = "plan", [RQ_TOPO] = "topo", [RQ_STATUS] = "status",
	[RQ_WATCH] = "watch", [RQ_AUDIT] = "audit", [RQ_RELOAD] = "reload",
	[RQ_VERIFY] = "verify",
};

const char *request_op_name(enum rq_op op)
{
	return op < RQ_NOPS ? op_names[op] : NULL;
}

/*
 * Strict UTF-8 (RFC 3629): json-c's JSON_TOKENER_VALIDATE_UTF8 lets
 * surrogates (ED A0 80) and lead bytes above F4 through, and a "\ud800"
 * escape decodes to a lone surrogate. Such a job name, echoed in every
 * status reply root asks for, would make strict readers (Python's json,
 * jq) refuse the whole reply.
 */
static bool utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0, k, len;
	unsigned long cp;

	while (i < n) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if (s[i] >= 0xc2 && s[i] <= 0xdf)
			len = 2;
		else if (s[i] >= 0xe0 && s[i] <= 0xef)
			len = 3;
		else if (s[i] >= 0xf0 && s[i] <= 0xf4)
			len = 4;
		else
			return false;
		if (n - i < len)
			return false;
		cp = s[i] & (0x7f >> len);
		for (k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

bool request_text_ok(const char *str, size_t n, size_t max)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, k, len;
	unsigned long cp;

	if (!n || n > max || !utf8_valid(s, n))
		return false;
	while (i < n) {
		len = s[i] < 0x80 ? 1 : s[i] < 0xe0 ? 2 : s[i] < 0xf0 ? 3 : 4;
		cp = len == 1 ? s[i] : s[i] & (0x7f >> len);
		for (k = 1; k < len; k++)
			cp = cp << 6 | (s[i + k] & 0x3f);
		if (unicode_invisible(cp))
			return false;
		i += len;
	}
	return true;
}

/* Four hex digits at @s (@n bytes left): their value, or -1. */
static long hex4(const char *s, size_t n)
{
	long v = 0;
	size_t i;

	if (n < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return -1;
		v = v << 4 | (isdigit((unsigned char)s[i]) ? s[i] - '0' :
			      (tolower((unsigned char)s[i]) - 'a' + 10));
	}
	return v;
}

/*
 * RFC 8259 where json-c 0.16's strict mode (JSON_TOKENER_STRICT) is not:
 * it still takes a single-quoted key ({'v':1}; single-quoted values it
 * refuses), NaN, Infinity and -Infinity, a number ending in its point
 * ("1.", "1.e5"), a raw control character inside a string, an escaped
 * surrogate that is not half of a pair (each one decoded to U+FFFD, so
 * "a\ud800b" and "a\udfffb" were one job), and a key named twice (json-c
 * keeps the last, other readers the first). NULL, or what is wrong;
 * *@keys: the keys of the top-level object, for the duplicate check once
 * json-c has parsed it. What json-c's strict mode refuses itself (comments,
 * trailing commas, single-quoted values, bare words) is left to it.
 */
static const char *strict_scan(const char *s, size_t n, size_t *keys)
{
	bool in_str = false, after_str = false;
	size_t i, depth = 0;
	long u, low;

	*keys = 0;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (in_str) {
			if (c < 0x20)
				return "a raw control character inside a string (JSON escapes it)";
			if (c == '"') {
				in_str = false;
				after_str = true;
			}
			if (c != '\\' || ++i >= n || s[i] != 'u')
				continue;
			u = hex4(s + i + 1, n - i - 1);
			if (u < 0)
				continue;	/* json-c refuses a bad escape */
			i += 4;
			if (u >= 0xdc00 && u <= 0xdfff)
				return "a lone surrogate escape (a low half without its high half)";
			if (u < 0xd800 || u > 0xdbff)
				continue;
			low = n - i > 2 && s[i + 1] == '\\' && s[i + 2] == 'u' ?
			      hex4(s + i + 3, n - i - 3) : -1;
			if (low < 0xdc00 || low > 0xdfff)
				return "a lone surrogate escape (a high half without its low half)";
			/*
			 * json-c 0.16 decodes a pair to U+FFFD when its
			 * character's low 16 bits look like a surrogate
			 * (U+1D800-U+1DFFF, U+2D800-U+2DFFF, ...), the same
			 * character as UTF-8 it keeps.
			 */
			if (((0x10000 + ((u - 0xd800) << 10) + (low - 0xdc00)) & 0xf800) == 0xd800)
				return "an escaped character json-c decodes to U+FFFD (send it as UTF-8)";
			i += 6;
			continue;
		}
		if (c == ':' && after_str && depth == 1)
			(*keys)++;
		if (c != ' ' && c != '\t' && c != '\r')
			after_str = false;
		switch (c) {
		case '"':
			in_str = true;
			break;
		case '{':
		case '[':
			depth++;
			break;
		case '}':
		case ']':
			depth -= depth > 0;
			break;
		case '\'':
			return "a single quote outside a string (JSON quotes with \")";
		case '/':
			return "a comment (JSON has none)";
		case 'N':
		case 'I':
			return "NaN or Infinity (not JSON numbers)";
		case '.':
			if (i + 1 >= n || !isdigit((unsigned char)s[i + 1]))
				return "a number ending in its decimal point";
			break;
		default:
			break;
		}
	}
	return NULL;
}

/* GPU indices, PCI addresses, GPU-/MIG- UUIDs, MIG-GPU-UUID/GI/CI: nothing else names a GPU. */
bool request_gpu_list_ok(const char *s, size_t n)
{
	size_t i;

	/* Empty is a claim too: CUDA_VISIBLE_DEVICES="" hides every GPU. */
	if (n > RQ_MAX_VISIBLE)
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr(",:.-_/", s[i]))
			return false;
	return true;
}

static int fail(const char **error, char *msg, size_t msglen, const char *name,
		const char *text)
{
	*error = name;
	snprintf(msg, msglen, "%s", text);
	return -1;
}

/*
 * A string field: absent (NULL, 0), or a string in strict UTF-8 without
 * NUL inside (a C string would cut it short: "a\u0000b" must not pass
 * for "a").
 */
static int str_field(struct json_object *req, const char *key, const char **out)
{
	struct json_object *v;

	*out = NULL;
	if (!json_object_object_get_ex(req, key, &v) || !v)
		return 0;
	if (!json_object_is_type(v, json_type_string) ||
	    strlen(json_object_get_string(v)) != (size_t)json_object_get_string_len(v) ||
	    !utf8_valid((const unsigned char *)json_object_get_string(v),
			(size_t)json_object_get_string_len(v)))
		return -1;
	*out = json_object_get_string(v);
	return 0;
}

static int plan_fields(struct request *rq, const char **error, char *msg, size_t msglen)
{
	struct json_object *v;
	const char *lease;

	if (json_object_object_get_ex(rq->doc, "rank", &v)) {
		if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0 ||
		    json_object_get_int64(v) > RQ_MAX_RANK)
			return fail(error, msg, msglen, "invalid",
				    "\"rank\" is a local rank: 0, 1, ...");
		rq->rank = (long)json_object_get_int64(v);
	}
	if (json_object_object_get_ex(rq->doc, "isolate_gpu", &v)) {
		/* get_boolean would take any non-empty string for true. */
		if (!json_object_is_type(v, json_type_boolean))
			return fail(error, msg, msglen, "invalid",
				    "\"isolate_gpu\" is true or false");
		rq->isolate = json_object_get_boolean(v);
	}
	if (str_field(rq->doc, "visible", &rq->visible) < 0 ||
	    (rq->visible && !request_gpu_list_ok(rq->visible, strlen(rq->visible))))
		return fail(error, msg, msglen, "invalid",
			    "\"visible\" is a list of GPU indices, PCI addresses or UUIDs like \"0,1\", at most 256 characters");
	if (str_field(rq->doc, "job", &rq->job) < 0 ||
	    (rq->job && !request_text_ok(rq->job, strlen(rq->job), RQ_MAX_JOB)) ||
	    str_field(rq->doc, "lease", &lease) < 0)
		goto bad_job;
	if (!lease || !strcmp(lease, "pid"))
		rq->lease = RQ_LEASE_PID;
	else if (!strcmp(lease, "conn"))
		rq->lease = RQ_LEASE_CONN;
	else if (!strcmp(lease, "none"))
		rq->lease = RQ_LEASE_NONE;
	else
		goto bad_job;
	return 0;
bad_job:
	return fail(error, msg, msglen, "invalid",
		    "\"job\" is 1 to 128 bytes of printable UTF-8 (no control, format or invisible character), \"lease\" one of pid, conn, none");
}

/* verify's "pids": 1 to RQ_MAX_PIDS process ids, integers 1..INT_MAX. */
static int verify_fields(struct request *rq, const char **error, char *msg, size_t msglen)
{
	size_t i, n;

	if (!json_object_object_get_ex(rq->doc, "pids", &rq->pids))
		return 0;
	n = json_object_is_type(rq->pids, json_type_array) ? json_object_array_length(rq->pids) : 0;
	for (i = 0; i < n; i++) {
		struct json_object *v = json_object_array_get_idx(rq->pids, i);

		if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) <= 0 ||
		    json_object_get_int64(v) > 0x7fffffff)
			n = 0;
	}
	if (!n || n > RQ_MAX_PIDS) {
		rq->pids = NULL;
		return fail(error, msg, msglen, "invalid",
			    "\"pids\" is an array of 1 to 4096 process ids");
	}
	return 0;
}

int request_parse(const char *line, size_t len, struct request *rq, const char **error,
		  char *msg, size_t msglen)
{
	struct json_tokener *tok;
	struct json_object *v;
	enum json_tokener_error jerr;
	const char *op, *lax;
	size_t end, keys;
	int i;

	memset(rq, 0, sizeof(*rq));
	rq->rank = -1;
	rq->op = RQ_NOPS;
	if (len > AFF_PROTO_MAX_REQUEST)
		return fail(error, msg, msglen, "too-large", "a request is at most 4096 bytes, one line");
	if (memchr(line, '\0', len))
		return fail(error, msg, msglen, "malformed", "a request holds no NUL byte");
	if (!utf8_valid((const unsigned char *)line, len))
		return fail(error, msg, msglen, "malformed", "a request is UTF-8 text");
	lax = strict_scan(line, len, &keys);
	if (lax) {
		snprintf(msg, msglen, "a request is one strict JSON object per line (RFC 8259): %s",
			 lax);
		*error = "malformed";
		return -1;
	}
	tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
	if (!tok)
		return fail(error, msg, msglen, "internal", "out of memory");
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	rq->doc = json_tokener_parse_ex(tok, line, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (jerr == json_tokener_continue)
		jerr = json_tokener_error_parse_eof;
	if (!rq->doc || jerr != json_tokener_success) {
		snprintf(msg, msglen, "a request is one JSON object per line: %s",
			 json_tokener_error_desc(jerr));
		*error = "malformed";
		request_fini(rq);
		return -1;
	}
	/* One object per line: what follows it may only be blank. */
	for (; end < len; end++)
		if (!strchr(" \t\r", line[end])) {
			request_fini(rq);
			return fail(error, msg, msglen, "malformed",
				    "a request is one JSON object per line: text after it");
		}
	if (!json_object_is_type(rq->doc, json_type_object)) {
		request_fini(rq);
		return fail(error, msg, msglen, "malformed", "a request is one JSON object per line");
	}
	if ((size_t)json_object_object_length(rq->doc) != keys) {
		request_fini(rq);
		return fail(error, msg, msglen, "malformed", "a request names each key once");
	}
	json_object_object_get_ex(rq->doc, "id", &rq->id);
	if (!json_object_object_get_ex(rq->doc, "v", &v) || !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) != AFF_PROTO_VERSION) {
		snprintf(msg, msglen, "this broker speaks protocol version %d: send \"v\":%d",
			 AFF_PROTO_VERSION, AFF_PROTO_VERSION);
		*error = "unsupported-version";
		return -1;
	}
	if (!json_object_object_get_ex(rq->doc, "op", &v) || str_field(rq->doc, "op", &op) < 0 ||
	    !op)
		return fail(error, msg, msglen, "malformed", "a request names its \"op\"");
	for (i = 0; i < RQ_NOPS; i++)
		if (!strcmp(op, op_names[i]))
			rq->op = (enum rq_op)i;
	if (rq->op == RQ_NOPS) {
		snprintf(msg, msglen,
			 "unknown op \"%.64s\"; ops: plan, topo, audit, status, watch, reload, verify", op);
		*error = "unknown-op";
		return -1;
	}
	if (rq->op == RQ_PLAN)
		return plan_fields(rq, error, msg, msglen);
	if (rq->op == RQ_VERIFY)
		return verify_fields(rq, error, msg, msglen);
	return 0;
}

void request_fini(struct request *rq)
{
	json_object_put(rq->doc);
	rq->doc = NULL;
	rq->id = NULL;
	rq->pids = NULL;
}
