// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A rank's environment as the library and the broker read it. The input is
 * RANK \n CLAIM \n OWN \n JOB \n ENVIRON (the last part binary, entries
 * separated by NUL as in /proc/PID/environ). Checked:
 *  - aff_parse_local_rank(): an accepted rank is 0..AFF_MAX_LOCAL_RANK and
 *    prints back as the very text it came from; canonical decimals in range
 *    are all accepted;
 *  - peer_claim_within(): an accepted claim never widens: each of its GPUs
 *    (index or PCI address, by the plan's own reading) is one of OWN's;
 *  - peer_environ_visible(): the value of the first CUDA_VISIBLE_DEVICES
 *    entry, else ROCR_VISIBLE_DEVICES, exactly, or none;
 *  - a job id sent in a plan request comes back from request_parse() byte
 *    for byte, or is refused (empty, too long, not printable UTF-8).
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "fuzz_utf8.h"
#include "railbindd.h"
#include "request.h"

/* The next '\n'-ended part of [*p, end), as a C string (NUL cuts it, as getenv would). */
static char *part(const uint8_t **p, const uint8_t *end)
{
	const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));
	size_t n = nl ? (size_t)(nl - *p) : (size_t)(end - *p);
	char *s = fuzz_strdup(*p, n);

	*p += n + (nl != NULL);
	return s;
}

static void check_rank(const char *s)
{
	char back[32];
	size_t i, n = strlen(s);
	bool canonical = n > 0 && n <= 5 && (s[0] != '0' || n == 1);
	long r = -1;

	for (i = 0; i < n; i++)
		canonical = canonical && isdigit((unsigned char)s[i]);
	if (canonical && atol(s) > AFF_MAX_LOCAL_RANK)
		canonical = false;
	if (aff_parse_local_rank(s, &r) == 0) {
		FUZZ_CHECK(r >= 0 && r <= AFF_MAX_LOCAL_RANK);
		snprintf(back, sizeof(back), "%ld", r);
		FUZZ_CHECK(!strcmp(back, s));
		FUZZ_CHECK(canonical);
	} else {
		FUZZ_CHECK(!canonical);
	}
}

/* Whether @own lists the item of @n bytes at @item, written exactly so. */
static bool own_has(const char *own, const char *item, size_t n)
{
	const char *p = own;

	while (*p) {
		size_t m = strcspn(p, ",");

		if (m == n && !memcmp(p, item, n))
			return true;
		p += m + (p[m] == ',');
	}
	return false;
}

static void check_claim(const char *claim, const char *own)
{
	const char *p = claim;

	if (!peer_claim_within(claim, own))
		return;
	/* Every non-empty item of the claim is one of the process's own. */
	while (*p) {
		size_t n = strcspn(p, ",");

		if (n)
			FUZZ_CHECK(own_has(own, p, n));
		p += n + (p[n] == ',');
	}
}

static void check_environ(const char *env, size_t len)
{
	static const char *const names[] = { "CUDA_VISIBLE_DEVICES=", "ROCR_VISIBLE_DEVICES=" };
	const char *want = NULL;
	size_t want_len = 0, i, off;
	char *got = NULL;

	for (i = 0; i < 2 && !want; i++) {
		size_t k = strlen(names[i]);

		for (off = 0; off < len && !want;) {
			size_t n = strnlen(env + off, len - off);

			if (n >= k && !strncmp(env + off, names[i], k)) {
				want = env + off + k;
				want_len = n - k;
			}
			off += n + 1;
		}
	}
	FUZZ_CHECK(peer_environ_visible(env, len, &got) == 0);
	FUZZ_CHECK(!want == !got);
	if (got)
		FUZZ_CHECK(strlen(got) == want_len && !memcmp(got, want, want_len));
	free(got);
}

static void check_job(const char *job)
{
	struct json_object *req = json_object_new_object();
	const char *s, *error = NULL;
	struct request rq;
	char msg[256];

	json_object_object_add(req, "v", json_object_new_int(AFF_PROTO_VERSION));
	json_object_object_add(req, "op", json_object_new_string("plan"));
	json_object_object_add(req, "job", json_object_new_string(job));
	s = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
	if (request_parse(s, strlen(s), &rq, &error, msg, sizeof(msg)) == 0) {
		FUZZ_CHECK(rq.job && !strcmp(rq.job, job));
		FUZZ_CHECK(*job && strlen(job) <= RQ_MAX_JOB);
		FUZZ_CHECK(fuzz_text_printable((const unsigned char *)job, strlen(job)));
	} else {
		FUZZ_CHECK(!strcmp(error, "invalid") || !strcmp(error, "malformed") ||
			   !strcmp(error, "too-large"));
		/* Refused only for a reason: empty, too long, not printable UTF-8. */
		FUZZ_CHECK(!*job || strlen(job) > RQ_MAX_JOB || strlen(s) > AFF_PROTO_MAX_REQUEST ||
			   !fuzz_text_printable((const unsigned char *)job, strlen(job)));
	}
	request_fini(&rq);
	json_object_put(req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	char *rank = part(&p, end), *claim = part(&p, end), *own = part(&p, end);
	char *job = part(&p, end);
	size_t envlen = (size_t)(end - p);
	/* Exactly the bytes /proc would give: a read past them is ASan's. */
	char *env = malloc(envlen ? envlen : 1);

	if (!env)
		abort();
	memcpy(env, p, envlen);
	check_rank(rank);
	check_claim(claim, own);
	check_environ(env, envlen);
	check_job(job);
	free(env);
	free(job);
	free(own);
	free(claim);
	free(rank);
	return 0;
}
