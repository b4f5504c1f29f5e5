// SPDX-License-Identifier: GPL-2.0-or-later
/* railbind fleet: the text report, printed from the railbind.fleet/1 document. */
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>

#include "fleet.h"
#include "railbind.h"

/* Node names and differences listed per group without --details. */
#define NAMES_SHOWN 20
#define DIFFS_SHOWN 12

static long jint(struct json_object *o, const char *key)
{
	return (long)json_object_get_int64(rb_jget(o, key));
}

static const char *or(const char *s, const char *dflt)
{
	return s ? s : dflt;
}

static void print_aspects(FILE *f, struct json_object *aspects)
{
	fprintf(f, "\nShared by most nodes:\n");
	json_object_object_foreach(aspects, name, a) {
		long have = jint(a, "nodes"), maj = jint(a, "majority");

		fprintf(f, "  %-8s %ld of %ld nodes%s\n", name, maj, have,
			2 * maj <= have ? " (no majority: the most common value is the reference)" :
			"");
	}
}

static void print_group(FILE *f, struct json_object *g, size_t num, int details)
{
	struct json_object *names = rb_jget(g, "nodes"), *diffs = rb_jget(g, "differences");
	struct json_object *aspects = rb_jget(g, "aspects");
	size_t i, n = json_object_array_length(names), nd = json_object_array_length(diffs);

	fprintf(f, "\nGroup %zu: %zu node%s differ%s in", num, n, n == 1 ? "" : "s",
		n == 1 ? "s" : "");
	for (i = 0; i < json_object_array_length(aspects); i++)
		fprintf(f, "%s %s", i ? "," : "",
			json_object_get_string(json_object_array_get_idx(aspects, i)));
	fprintf(f, "\n  nodes:");
	for (i = 0; i < n && (details || i < NAMES_SHOWN); i++)
		fprintf(f, "%s %s", i ? "," : "",
			json_object_get_string(json_object_array_get_idx(names, i)));
	if (i < n)
		fprintf(f, " and %zu more (--details lists them)", n - i);
	fputc('\n', f);
	for (i = 0; i < nd && (details || i < DIFFS_SHOWN); i++) {
		struct json_object *d = json_object_array_get_idx(diffs, i);

		fprintf(f, "  %-8s %s: %s; majority: %s\n", or(rb_jstr(d, "aspect"), "?"),
			or(rb_jstr(d, "subject"), "?"), or(rb_jstr(d, "value"), "absent"),
			or(rb_jstr(d, "majority"), "absent"));
		if (rb_jstr(d, "consequence"))
			fprintf(f, "           %s\n", rb_jstr(d, "consequence"));
	}
	if (i < nd)
		fprintf(f, "  and %zu more differences (--details lists them)\n", nd - i);
}

void fleet_print_text(FILE *f, struct json_object *doc, int details)
{
	struct json_object *groups = rb_jget(doc, "groups"), *bad = rb_jget(doc, "unreadable");
	size_t i, ng = json_object_array_length(groups), nb = json_object_array_length(bad);

	fprintf(f, "railbind fleet: %ld files, %ld nodes read, %ld agree with the majority, %ld outlier%s in %zu group%s, %zu unreadable\n",
		jint(doc, "files"), jint(doc, "nodes"), jint(doc, "agree"), jint(doc, "outliers"),
		jint(doc, "outliers") == 1 ? "" : "s", ng, ng == 1 ? "" : "s", nb);
	if (jint(doc, "nodes"))
		print_aspects(f, rb_jget(doc, "aspects"));
	for (i = 0; i < ng; i++)
		print_group(f, json_object_array_get_idx(groups, i), i + 1, details);
	if (nb)
		fprintf(f, "\nUnreadable:\n");
	for (i = 0; i < nb; i++)
		fprintf(f, "  %s\n", or(rb_jstr(json_object_array_get_idx(bad, i), "error"), "?"));
	fprintf(f, "\nStatus: %s\n", or(rb_jstr(doc, "status"), "unknown"));
}
