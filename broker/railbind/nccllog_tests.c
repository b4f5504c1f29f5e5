// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nccl-tests' output (its src/util.cu, 2.13 to 2.19): before each table
 * "# Collective test starting: NAME" (2.17+), "#  Rank N Group G Pid P on
 * HOST device D [...]" per rank, then a header naming the columns,
 *
 *   #       size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong
 *
 * out-of-place before in-place ("root" since 2.11, "error" before "#wrong",
 * "cputime" with -C, i_min i_max i_p99 i_cv% after each with per-iteration
 * timing), rows of numbers (#wrong "N/A" with -c 0), and the footer
 * "# Out of bounds values : N OK|FAILED", "# Avg bus bandwidth : X". The
 * columns are found by their names in the header, so added ones are skipped.
 * -J writes the same as one JSON document (nl_feed_json).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "nccllog.h"

/* The columns read, by their index in log->col. */
enum { C_SIZE, C_BUSBW_OOP, C_WRONG_OOP, C_BUSBW_IP, C_WRONG_IP, C_NCOLS };

#define MAX_TOKENS 64

static size_t tokens(char *s, char **tok)
{
	size_t n = 0;
	char *save = NULL, *t;

	for (t = strtok_r(s, " \t\r\n", &save); t && n < MAX_TOKENS;
	     t = strtok_r(NULL, " \t\r\n", &save))
		tok[n++] = t;
	return n;
}

static struct nl_test *new_test(struct nl_log *log, const char *file, long line)
{
	struct nl_test *more, *t;

	if (log->ntest >= (size_t)NL_MAX_NOTES * 16)
		return NULL;
	more = realloc(log->test, (log->ntest + 1) * sizeof(*more));
	if (!more) {
		log->oom = true;
		return NULL;
	}
	log->test = more;
	t = &more[log->ntest];
	memset(t, 0, sizeof(*t));
	t->file = file;
	t->line = line;
	t->avg_busbw = -1;
	t->wrong = -1;
	t->oob = -1;
	snprintf(t->name, sizeof(t->name), "%s", log->pre_name);
	t->nranks = log->pre_nranks;
	t->nhosts = log->pre_nhosts;
	log->cur_test = (long)log->ntest++;
	return t;
}

/* The header's columns: false when it is not a table's header. */
static bool header(struct nl_log *log, char **tok, size_t n)
{
	int bus = 0, wrong = 0;
	size_t i;

	for (i = 0; i < C_NCOLS; i++)
		log->col[i] = -1;
	/* tok[0] is "#": a row's column i is the header's token i + 1. */
	for (i = 1; i < n; i++) {
		int at = (int)i - 1;

		if (!strcmp(tok[i], "size"))
			log->col[C_SIZE] = at;
		else if (!strcmp(tok[i], "busbw") && bus < 2)
			log->col[bus++ ? C_BUSBW_IP : C_BUSBW_OOP] = at;
		else if ((!strcmp(tok[i], "#wrong") || !strcmp(tok[i], "error")) && wrong < 2)
			log->col[wrong++ ? C_WRONG_IP : C_WRONG_OOP] = at;
	}
	log->ncol = (int)n - 1;
	return log->col[C_SIZE] == 0 && log->col[C_BUSBW_OOP] > 0;
}

static void row(struct nl_log *log, struct nl_test *t, const char *file, long lineno,
		char **tok, size_t n)
{
	char *end;
	unsigned long long size;
	double bw = 0;
	int k;

	if (!n || (int)n <= log->col[C_BUSBW_OOP] || (log->col[C_BUSBW_IP] > 0 &&
						(int)n <= log->col[C_BUSBW_IP])) {
		nl_note(log, file, lineno,
			"expected %d columns as the table's header at line %ld says (size count type redop root time algbw busbw #wrong ...), got %zu",
			log->ncol, t->line, n);
		return;
	}
	size = strtoull(tok[0], &end, 10);
	if (*end) {
		nl_note(log, file, lineno, "expected a size in bytes, got \"%.32s\"", tok[0]);
		return;
	}
	for (k = C_BUSBW_OOP; k <= C_BUSBW_IP; k += C_BUSBW_IP - C_BUSBW_OOP) {
		double v;

		if (log->col[k] < 0)
			continue;
		v = strtod(tok[log->col[k]], &end);
		if (*end || v < 0) {
			nl_note(log, file, lineno, "expected a busbw in GB/s, got \"%.32s\"",
				tok[log->col[k]]);
			return;
		}
		if (v > bw)
			bw = v;
	}
	for (k = C_WRONG_OOP; k <= C_WRONG_IP; k += C_WRONG_IP - C_WRONG_OOP) {
		double w;

		if (log->col[k] < 0 || (int)n <= log->col[k] || !strcmp(tok[log->col[k]], "N/A"))
			continue;
		w = strtod(tok[log->col[k]], &end);
		if (*end) {
			nl_note(log, file, lineno, "expected #wrong as a number or N/A, got \"%.32s\"",
				tok[log->col[k]]);
			return;
		}
		if (t->wrong < 0)
			t->wrong = 0;
		if (w > 0) {
			t->wrong += w > 1e15 ? (long)1e15 : (long)w;
			if (!t->wrong_line)
				t->wrong_line = lineno;
		}
	}
	t->rows++;
	if (size >= t->max_size) {
		t->busbw = size > t->max_size ? bw : (bw > t->busbw ? bw : t->busbw);
		t->max_size = size;
	}
}

/* "#  Rank  3 Group  0 Pid 4711 on host-a device  3 [...]": one more rank and maybe host. */
static int rank_line(struct nl_log *log, const char *s)
{
	char host[256];
	int v;

	if (sscanf(s, "# Rank %*d Group %*d Pid %*d on %255s device", host) != 1)
		return 0;
	log->pre_nranks++;
	v = nl_map_get(&log->hosts, host);
	if (v == log->prelude)
		return 0;
	log->pre_nhosts++;
	return nl_map_put(&log->hosts, host, log->prelude);
}

int nl_tests_line(struct nl_log *log, const char *file, long lineno, const char *s)
{
	struct nl_test *t = log->cur_test >= 0 ? &log->test[log->cur_test] : NULL;
	char buf[NL_LINE_MAX], *tok[MAX_TOKENS];
	long v;
	double bw;
	size_t n;

	if (*s == '#') {
		if (sscanf(s, "# Collective test starting: %47s", log->pre_name) == 1)
			return 0;
		if (!strncmp(s, "# nThread ", 10)) {
			/* A new run: its ranks follow. */
			log->prelude++;
			log->pre_nranks = log->pre_nhosts = 0;
			return 0;
		}
		if (!strncmp(s, "#  Rank ", 8) || !strncmp(s, "# Rank ", 7))
			return rank_line(log, s);
		if (t && sscanf(s, "# Out of bounds values : %ld", &v) == 1) {
			t->oob = v;
			return 0;
		}
		if (t && sscanf(s, "# Avg bus bandwidth : %lf", &bw) == 1) {
			t->avg_busbw = bw;
			t->complete = true;
			log->cur_test = -1;
			return 0;
		}
		if (!strstr(s, "size") || !strstr(s, "busbw"))
			return 0;
		snprintf(buf, sizeof(buf), "%s", s);
		n = tokens(buf, tok);
		if (n && !strcmp(tok[0], "#") && header(log, tok, n)) {
			if (t && !t->complete)
				nl_note(log, t->file, t->line,
					"an nccl-tests table without its footer: expected \"# Avg bus bandwidth : N\" before the next table at line %ld",
					lineno);
			if (!new_test(log, file, lineno))
				return log->oom ? -ENOMEM : 0;
		}
		return 0;
	}
	if (!t || !isdigit((unsigned char)*s))
		return 0;
	snprintf(buf, sizeof(buf), "%s", s);
	n = tokens(buf, tok);
	row(log, t, file, lineno, tok, n);
	return 0;
}

/* ---- nccl-tests -J ---- */

static struct json_object *member(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v))
		return v;
	/* Some keys sit one level down (in "config", ...). */
	if (json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, k, sub) {
			(void)k;
			if (json_object_is_type(sub, json_type_object) &&
			    json_object_object_get_ex(sub, key, &v))
				return v;
		}
	}
	return NULL;
}

static void json_place(struct nl_test *t, struct json_object *res, double *bw)
{
	struct json_object *v;

	if (!json_object_is_type(res, json_type_object))
		return;
	if (json_object_object_get_ex(res, "bus_bw", &v) && json_object_get_double(v) > *bw)
		*bw = json_object_get_double(v);
	if (json_object_object_get_ex(res, "nwrong", &v) && v) {
		double w = json_object_get_double(v);

		if (t->wrong < 0)
			t->wrong = 0;
		if (w > 0) {
			t->wrong += w > 1e15 ? (long)1e15 : (long)w;
			if (!t->wrong_line)
				t->wrong_line = 1;
		}
	}
}

static void json_meta(struct nl_log *log, struct nl_test *t, struct json_object *doc)
{
	struct json_object *args = member(doc, "args"), *env = member(doc, "env");
	struct json_object *devs = member(doc, "devices"), *v;
	size_t i;

	if (json_object_is_type(args, json_type_array) && json_object_array_length(args)) {
		const char *a0 = json_object_get_string(json_object_array_get_idx(args, 0));
		const char *base = a0 ? strrchr(a0, '/') : NULL;

		snprintf(t->name, sizeof(t->name), "%s", base ? base + 1 : a0 ? a0 : "");
	}
	for (i = 0; json_object_is_type(env, json_type_array) && i < json_object_array_length(env);
	     i++) {
		const char *e = json_object_get_string(json_object_array_get_idx(env, i));

		if (e && !strncmp(e, "NCCL_ALGO=", 10))
			snprintf(t->algo, sizeof(t->algo), "%s", e + 10);
	}
	log->prelude++;
	for (i = 0; json_object_is_type(devs, json_type_array) && i < json_object_array_length(devs);
	     i++) {
		struct json_object *d = json_object_array_get_idx(devs, i);
		const char *host;

		t->nranks++;
		if (!json_object_object_get_ex(d, "hostname", &v) || !(host = json_object_get_string(v)))
			continue;
		if (nl_map_get(&log->hosts, host) != log->prelude) {
			t->nhosts++;
			if (nl_map_put(&log->hosts, host, log->prelude) < 0)
				log->oom = true;
		}
	}
}

int nl_feed_json(struct nl_log *log, const char *file, const char *text, size_t len)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *doc, *results, *v;
	struct nl_test *t;
	const char *name = nl_file(log, file);
	size_t i;

	if (!tok || !name) {
		json_tokener_free(tok);
		return -ENOMEM;
	}
	doc = json_tokener_parse_ex(tok, text, (int)(len > 0x7fffffff ? 0x7fffffff : len));
	if (!doc) {
		nl_note(log, name, 1, "expected an nccl-tests -J JSON document: %s",
			json_tokener_error_desc(json_tokener_get_error(tok)));
		json_tokener_free(tok);
		return 0;
	}
	json_tokener_free(tok);
	results = member(doc, "results");
	if (!json_object_is_type(results, json_type_array)) {
		nl_note(log, name, 1, "expected an nccl-tests -J document: no \"results\" list");
		json_object_put(doc);
		return 0;
	}
	log->pre_name[0] = '\0';
	log->pre_nranks = log->pre_nhosts = 0;
	t = new_test(log, name, 1);
	if (!t) {
		json_object_put(doc);
		return log->oom ? -ENOMEM : 0;
	}
	log->cur_test = -1;
	json_meta(log, t, doc);
	for (i = 0; i < json_object_array_length(results); i++) {
		struct json_object *r = json_object_array_get_idx(results, i);
		uint64_t size;
		double bw = 0;

		if (!json_object_object_get_ex(r, "size", &v))
			continue;
		size = (uint64_t)json_object_get_int64(v);
		if (json_object_object_get_ex(r, "out_of_place", &v))
			json_place(t, v, &bw);
		if (json_object_object_get_ex(r, "in_place", &v))
			json_place(t, v, &bw);
		t->rows++;
		if (size > t->max_size || (size == t->max_size && bw > t->busbw)) {
			t->max_size = size;
			t->busbw = bw;
		}
	}
	v = member(doc, "out_of_bounds");
	if (v && json_object_object_get_ex(v, "count", &v))
		t->oob = json_object_get_int64(v);
	v = member(doc, "average_bus_bandwidth");
	if (v && json_object_object_get_ex(v, "bandwidth", &v)) {
		t->avg_busbw = json_object_get_double(v);
		t->complete = true;
	}
	if (!t->complete)
		nl_note(log, name, 1, "expected \"average_bus_bandwidth\" in the -J document (run cut short)");
	json_object_put(doc);
	return log->oom ? -ENOMEM : 0;
}
