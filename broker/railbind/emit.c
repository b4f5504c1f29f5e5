// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The one output path of railbind's commands: one JSON document, printed as
 * text for people, as the document itself (--json), as Prometheus text
 * (--prom, and --prom-file for node_exporter's textfile collector) or as
 * Node Feature Discovery lines (--nfd). Each command gives its printers
 * (struct rb_verb); everything else (rendering into memory so nothing
 * half-written reaches stdout, the atomic --prom-file) is here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "railbind.h"

const char *rb_js(struct json_object *o, const char *key)
{
	const char *s = o ? rb_jstr(o, key) : NULL;

	return s ? s : "-";
}

int rb_sev_value(const char *s)
{
	return (int)aff_sev_from_name(s);
}

void rb_prom_label(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n') {
			fputs("\\n", f);
			continue;
		}
		fputc(*s, f);
	}
}

void rb_print_findings(FILE *f, struct json_object *checks, const char *sev,
			const char *title, const char *color, bool tty)
{
	size_t i, n = json_object_array_length(checks);
	bool head = false;

	for (i = 0; i < n; i++) {
		struct json_object *c = json_object_array_get_idx(checks, i);
		const char *remedy = rb_jstr(c, "remedy");

		if (strcmp(rb_js(c, "severity"), sev) || (!strcmp(rb_js(c, "subject"), "node") &&
		    !strcmp(rb_js(c, "message"), "nothing found")))
			continue;
		if (!head) {
			fprintf(f, "\n%s%s%s\n", tty ? color : "", title, tty ? "\033[0m" : "");
			head = true;
		}
		fprintf(f, "  [%s] %s\n", rb_js(c, "id"), rb_js(c, "message"));
		if (remedy)
			fprintf(f, "      fix: %s\n", remedy);
	}
}

void rb_prom_findings(FILE *f, struct json_object *doc, const char *metric)
{
	static const char *const sevs[] = { "warn", "fail" };
	struct json_object *checks = rb_jget(doc, "checks");
	size_t i, s;

	fprintf(f, "# HELP %s Findings of each check by severity.\n# TYPE %s gauge\n", metric,
		metric);
	json_object_object_foreach(rb_jget(doc, "summary"), cid, cv) {
		(void)cv;
		for (s = 0; s < 2; s++) {
			int count = 0;

			for (i = 0; i < json_object_array_length(checks); i++) {
				struct json_object *c = json_object_array_get_idx(checks, i);

				if (!strcmp(rb_js(c, "id"), cid) && !strcmp(rb_js(c, "severity"), sevs[s]))
					count++;
			}
			fprintf(f, "%s{check=\"%s\",severity=\"%s\"} %d\n", metric, cid, sevs[s],
				count);
		}
	}
}

/* @doc in @fmt, in memory; NULL when out of memory. */
static char *render(const struct rb_verb *v, struct json_object *doc, enum rb_fmt fmt,
		    bool pretty, int details)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (fmt == RB_FMT_JSON) {
		const char *s = json_object_to_json_string_ext(doc, pretty ?
			JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE :
			JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
		size_t n = strlen(s);

		buf = malloc(n + 2);
		if (buf) {
			memcpy(buf, s, n);
			memcpy(buf + n, "\n", 2);
		}
		return buf;
	}
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	if (fmt == RB_FMT_PROM)
		v->prom(f, doc);
	else if (fmt == RB_FMT_NFD)
		v->nfd(f, doc);
	else
		v->text(f, doc, details);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

int rb_emit(const struct rb_verb *v, const struct rb_opts *o, struct json_object *doc,
	    int code)
{
	char *out = doc ? render(v, doc, o->fmt, o->pretty, o->details) : NULL, *prom = NULL;
	char err[1024] = "";
	int rc;

	if (doc && o->prom_file)
		prom = render(v, doc, RB_FMT_PROM, false, 0);
	json_object_put(doc);
	if (!out || (o->prom_file && !prom)) {
		rb_error("%s: %s", v->name, strerror(ENOMEM));
		code = rb_fail_code(v);
	} else if (o->prom_file &&
		   /* Into a temporary file beside it, then renamed: node_exporter never
		    * reads half. "-" is a file of that name, as it always was. */
		   (rc = aff_write_atomic(v->name, strcmp(o->prom_file, "-") ? o->prom_file : "./-",
					  prom, strlen(prom), err,
					  sizeof(err))) < 0) {
		rb_error("%s", *err ? err : strerror(-rc));
		code = rb_fail_code(v);
	} else if (fputs(out, stdout) < 0 || fflush(stdout)) {
		rb_error("%s: cannot write the output: %s", v->name, strerror(errno));
		code = rb_fail_code(v);
	}
	free(out);
	free(prom);
	return code;
}
