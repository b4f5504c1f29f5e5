// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind audit: the NUMA/PCIe checks of the node or a snapshot. Every
 * output (text, --json, --prom, --nfd) is printed from the one
 * railbind.audit/1 document, so they cannot say different things. Exit
 * codes follow Nagios/NHC: 0 ok, 1 warnings, 2 failures, 3 could not decide
 * (also for an unreadable input or a bad command line, so a typo in a
 * health check never drains a node).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "audit.h"
#include "railbind.h"

enum {
	OPT_PROM = 0x200,
	OPT_PROM_FILE,
	OPT_NFD,
};

enum out_fmt { OUT_TEXT, OUT_JSON, OUT_PROM, OUT_NFD };

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s audit [OPTIONS]\n"
		"Check the node's (or a snapshot's) NUMA/PCIe layout: GPU-NIC path classes,\n"
		"NUMA nodes, ACS redirect, downtrained links, peer memory, IOMMU, RDMA ports.\n"
		"Exit: 0 ok, 1 warnings, 2 failures, 3 could not decide (or bad input).\n\n"
		RB_COMMON_HELP
		"      --prom         Prometheus text format (node_exporter textfile collector)\n"
		"      --prom-file F  also write the Prometheus text to F, atomically\n"
		"      --nfd          Node Feature Discovery feature file lines\n",
		rb_prog);
}

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !v)
		return NULL;
	return json_object_get_string(v);
}

/* For printing: never NULL. */
static const char *js(struct json_object *o, const char *key)
{
	const char *s = jstr(o, key);

	return s ? s : "-";
}

/* ---- text ---- */

static void print_matrix(FILE *f, struct json_object *topo)
{
	struct json_object *gpus = rb_jget(topo, "gpus"), *nics = rb_jget(topo, "nics");
	struct json_object *paths = rb_jget(topo, "paths");
	size_t g, n, ng = json_object_array_length(gpus), nn = json_object_array_length(nics);

	fprintf(f, "%-7s", "");
	for (n = 0; n < nn; n++)
		fprintf(f, " NIC%-3zu", n);
	fprintf(f, " %s\n", "NUMA");
	for (g = 0; g < ng; g++) {
		struct json_object *row = json_object_array_get_idx(paths, g);
		const char *numa = jstr(json_object_array_get_idx(gpus, g), "numa");

		fprintf(f, "GPU%-4zu", g);
		for (n = 0; n < nn; n++)
			fprintf(f, " %-6s", json_object_get_string(json_object_array_get_idx(row, n)));
		fprintf(f, " %s\n", numa ? numa : "unknown");
	}
	if (!ng)
		fprintf(f, "(no GPU or accelerator)\n");
	for (g = 0; g < ng; g++)
		fprintf(f, "  GPU%zu: %s\n", g, js(json_object_array_get_idx(gpus, g), "pci"));
	for (n = 0; n < nn; n++) {
		struct json_object *nj = json_object_array_get_idx(nics, n);
		const char *name = jstr(nj, "name"), *pci = jstr(nj, "pci");

		fprintf(f, "  NIC%zu: %-10s %s\n", n, name ? name : js(nj, "netdev"),
			pci ? pci : "");
	}
}

static void print_group(FILE *f, struct json_object *checks, const char *sev,
			const char *title, const char *color, bool tty)
{
	size_t i, n = json_object_array_length(checks);
	bool head = false;

	for (i = 0; i < n; i++) {
		struct json_object *c = json_object_array_get_idx(checks, i);
		const char *remedy = jstr(c, "remedy");

		if (strcmp(js(c, "severity"), sev) || (!strcmp(js(c, "subject"), "node") &&
		    !strcmp(js(c, "message"), "nothing found")))
			continue;
		if (!head) {
			fprintf(f, "\n%s%s%s\n", tty ? color : "", title, tty ? "\033[0m" : "");
			head = true;
		}
		fprintf(f, "  [%s] %s\n", js(c, "id"), js(c, "message"));
		if (remedy)
			fprintf(f, "      fix: %s\n", remedy);
	}
}

static void print_text(FILE *f, struct json_object *doc)
{
	struct json_object *checks = rb_jget(doc, "checks"), *und = rb_jget(doc, "undecided");
	struct json_object *sum = rb_jget(doc, "summary");
	bool tty = rb_color(f);
	const char *status = js(doc, "status");
	size_t i;

	fprintf(f, "railbind audit of %s (%s)\n\n", js(doc, "host"), js(doc, "source"));
	print_matrix(f, rb_jget(doc, "topo"));
	print_group(f, checks, "fail", "Failures:", "\033[1;31m", tty);
	print_group(f, checks, "warn", "Warnings:", "\033[1;33m", tty);
	print_group(f, checks, "ok", "Information:", "\033[1m", tty);
	if (json_object_array_length(und)) {
		fprintf(f, "\nNot decided:\n");
		for (i = 0; i < json_object_array_length(und); i++) {
			struct json_object *u = json_object_array_get_idx(und, i);

			fprintf(f, "  [%s] %s\n", js(u, "id"), js(u, "reason"));
		}
	}
	fprintf(f, "\nChecks:");
	json_object_object_foreach(sum, id, v)
		fprintf(f, " %s=%s", id, json_object_get_string(v));
	fprintf(f, "\nStatus: %s%s%s\n",
		tty && strcmp(status, "ok") ? "\033[1m" : "", status, tty ? "\033[0m" : "");
}

/* ---- Prometheus ---- */

/* A label value: backslash, double quote and newline escaped. */
static void prom_label(FILE *f, const char *s)
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

static int sev_value(const char *s)
{
	return !strcmp(s, "ok") ? 0 : !strcmp(s, "warn") ? 1 : !strcmp(s, "fail") ? 2 : 3;
}

static void print_prom(FILE *f, struct json_object *doc)
{
	struct json_object *pairs = rb_jget(doc, "pairs"), *checks = rb_jget(doc, "checks");
	size_t i, n;

	fprintf(f, "# HELP railbind_audit_status Audit status: 0 ok, 1 warn, 2 fail, 3 unknown.\n"
		"# TYPE railbind_audit_status gauge\n"
		"railbind_audit_status %d\n", sev_value(js(doc, "status")));
	fprintf(f, "# HELP railbind_audit_check_status Worst severity of each check: 0 ok, 1 warn, 2 fail, 3 not decided.\n"
		"# TYPE railbind_audit_check_status gauge\n");
	json_object_object_foreach(rb_jget(doc, "summary"), id, v)
		fprintf(f, "railbind_audit_check_status{check=\"%s\"} %d\n", id,
			sev_value(json_object_get_string(v)));
	fprintf(f, "# HELP railbind_audit_findings Findings of each check by severity.\n"
		"# TYPE railbind_audit_findings gauge\n");
	json_object_object_foreach(rb_jget(doc, "summary"), cid, cv) {
		static const char *const sevs[] = { "warn", "fail" };
		size_t s;

		(void)cv;
		for (s = 0; s < 2; s++) {
			int count = 0;

			for (i = 0; i < json_object_array_length(checks); i++) {
				struct json_object *c = json_object_array_get_idx(checks, i);

				if (!strcmp(js(c, "id"), cid) && !strcmp(js(c, "severity"), sevs[s]))
					count++;
			}
			fprintf(f, "railbind_audit_findings{check=\"%s\",severity=\"%s\"} %d\n",
				cid, sevs[s], count);
		}
	}
	fprintf(f, "# HELP railbind_gpu_nic_path Path class of each GPU-NIC pair: 1 PIX, 2 PXB, 3 PHB, 4 NODE, 5 SYS (label class); planned=1 for each rank's primary rail.\n"
		"# TYPE railbind_gpu_nic_path gauge\n");
	n = json_object_array_length(pairs);
	for (i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(pairs, i);
		enum aff_path path = AFF_PATH_NONE;
		const char *cls = jstr(p, "path");

		if (!cls || aff_path_from_name(cls, &path) < 0)
			continue;
		fprintf(f, "railbind_gpu_nic_path{gpu=\"");
		prom_label(f, jstr(p, "gpu"));
		fprintf(f, "\",nic=\"");
		prom_label(f, jstr(p, "nic"));
		fprintf(f, "\",nic_pci=\"");
		prom_label(f, jstr(p, "nic_pci"));
		fprintf(f, "\",class=\"%s\",planned=\"%d\"} %d\n", cls,
			json_object_get_boolean(rb_jget(p, "planned")), (int)path - AFF_PATH_NV);
	}
}

/* ---- Node Feature Discovery ---- */

static void print_nfd(FILE *f, struct json_object *doc)
{
	/* Label values: [A-Za-z0-9._-], so every value printed here is one word. */
	fprintf(f, "railbind.audit.status=%s\n", js(doc, "status"));
	json_object_object_foreach(rb_jget(doc, "summary"), id, v)
		fprintf(f, "railbind.audit.%s=%s\n", id, json_object_get_string(v));
}

/* ---- writing ---- */

static char *render(struct json_object *doc, enum out_fmt fmt, bool pretty)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (fmt == OUT_JSON) {
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
	if (fmt == OUT_PROM)
		print_prom(f, doc);
	else if (fmt == OUT_NFD)
		print_nfd(f, doc);
	else
		print_text(f, doc);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

int cmd_audit(int argc, char **argv)
{
	static const struct option longopts[] = {
		RB_COMMON_LONG,
		{ "prom", no_argument, NULL, OPT_PROM },
		{ "prom-file", required_argument, NULL, OPT_PROM_FILE },
		{ "nfd", no_argument, NULL, OPT_NFD },
		{ 0 }
	};
	struct rb_opts o = { 0 };
	enum out_fmt fmt = OUT_TEXT;
	const char *prom_file = NULL;
	struct aff_ctx *ctx = NULL;
	struct aff_topo *topo = NULL;
	struct aff_audit *a = NULL;
	struct json_object *doc;
	char err[1024] = "", *out, *prom = NULL;
	int c, rc, nfmt = 0;

	while ((c = getopt_long(argc, argv, "+h" RB_COMMON_SHORT, longopts, NULL)) != -1) {
		if (rb_common_opt(c, optarg, &o))
			continue;
		switch (c) {
		case OPT_PROM:
			fmt = OUT_PROM;
			nfmt++;
			break;
		case OPT_PROM_FILE:
			prom_file = optarg;
			break;
		case OPT_NFD:
			fmt = OUT_NFD;
			nfmt++;
			break;
		case 'h':
			usage(stdout);
			return RB_EXIT_OK;
		default:
			usage(stderr);
			return RB_EXIT_UNKNOWN;
		}
	}
	if (o.json) {
		fmt = OUT_JSON;
		nfmt++;
	}
	if (optind < argc) {
		rb_error("audit: unexpected argument \"%s\"", argv[optind]);
		return RB_EXIT_UNKNOWN;
	}
	if (nfmt > 1) {
		rb_error("audit: --json, --prom and --nfd exclude each other");
		return RB_EXIT_UNKNOWN;
	}
	/* With --input, in a child: no file can take the command down. */
	rc = rb_contain(&o, "audit", RB_EXIT_UNKNOWN);
	if (rc >= 0)
		return rc;
	rc = rb_load(&o, &ctx, &topo);
	if (rc >= 0) {
		rc = aff_audit_run(topo, NULL, 0, &a, err, sizeof(err));
		if (rc < 0)
			rb_error("%s", *err ? err : strerror(-rc));
	}
	aff_topo_unref(topo);
	if (rc < 0) {
		aff_ctx_unref(ctx);
		return RB_EXIT_UNKNOWN;
	}
	doc = aff_audit_to_json(a);
	rc = aff_audit_exit_code(a);
	out = render(doc, fmt, o.pretty);
	if (prom_file)
		prom = render(doc, OUT_PROM, false);
	if (!out || (prom_file && !prom)) {
		rb_error("audit: %s", strerror(ENOMEM));
		rc = RB_EXIT_UNKNOWN;
	} else if (prom_file &&
		   /* Into a temporary file beside it, then renamed: node_exporter never
		    * reads half. "-" is a file of that name, as it always was. */
		   aff_write_atomic("audit", strcmp(prom_file, "-") ? prom_file : "./-", prom,
				    strlen(prom), err, sizeof(err)) < 0) {
		rb_error("%s", err);
		rc = RB_EXIT_UNKNOWN;
	} else if (fputs(out, stdout) < 0 || fflush(stdout)) {
		rc = RB_EXIT_UNKNOWN;
	}
	free(out);
	free(prom);
	json_object_put(doc);
	aff_audit_free(a);
	aff_ctx_unref(ctx);
	return rc;
}
