// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The output path of the reports that judge a node (audit, verify): one JSON
 * document, printed as text for people, as the document itself (--json), as
 * Prometheus text (--prom, and --prom-file for node_exporter's textfile
 * collector) or as Node Feature Discovery lines (--nfd). Each command gives
 * its printers; everything else (option parsing, rendering into memory so
 * nothing half-written reaches stdout, the atomic --prom-file) is here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "railbind.h"

bool rb_report_opt(int c, const char *arg, struct rb_report_opts *r)
{
	switch (c) {
	case RB_OPT_PROM:
		r->fmt = RB_FMT_PROM;
		r->nfmt++;
		return true;
	case RB_OPT_PROM_FILE:
		r->prom_file = arg;
		return true;
	case RB_OPT_NFD:
		r->fmt = RB_FMT_NFD;
		r->nfmt++;
		return true;
	}
	return false;
}

int rb_report_check(struct rb_report_opts *r, const struct rb_opts *o, const char *cmd)
{
	if (o->json) {
		r->fmt = RB_FMT_JSON;
		r->nfmt++;
	}
	if (r->nfmt > 1) {
		rb_error("%s: --json, --prom and --nfd exclude each other", cmd);
		return -EINVAL;
	}
	return 0;
}

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

static char *render(const struct rb_report *rep, struct json_object *doc, enum rb_fmt fmt,
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
		rep->prom(f, doc);
	else if (fmt == RB_FMT_NFD)
		rep->nfd(f, doc);
	else
		rep->text(f, doc, details);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

int rb_report_emit(const struct rb_report *rep, struct json_object *doc, int code,
		   const struct rb_report_opts *r, bool pretty, int details)
{
	char *out = render(rep, doc, r->fmt, pretty, details), *prom = NULL;
	char err[1024] = "";
	int rc;

	if (r->prom_file)
		prom = render(rep, doc, RB_FMT_PROM, false, 0);
	if (!out || (r->prom_file && !prom)) {
		rb_error("%s: %s", rep->cmd, strerror(ENOMEM));
		code = RB_EXIT_UNKNOWN;
	} else if (r->prom_file &&
		   /* Into a temporary file beside it, then renamed: node_exporter never
		    * reads half. "-" is a file of that name, as it always was. */
		   (rc = aff_write_atomic(rep->cmd, strcmp(r->prom_file, "-") ? r->prom_file : "./-",
					  prom, strlen(prom), err,
					  sizeof(err))) < 0) {
		rb_error("%s", *err ? err : strerror(-rc));
		code = RB_EXIT_UNKNOWN;
	} else if (fputs(out, stdout) < 0 || fflush(stdout)) {
		code = RB_EXIT_UNKNOWN;
	}
	free(out);
	free(prom);
	return code;
}
