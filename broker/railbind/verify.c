// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind verify: are the running ranks on the GPU, NIC, CPUs and memory
 * their plan or lease gave them. The library reads and judges
 * (libaffinity/verify*.c); this prints its railbind.verify/1 document as
 * text, JSON, Prometheus or NFD through the one output path (emit.c).
 * Exit codes are the audit's: 0 ok, 1 warnings, 2 a mis-bound rank, 3 nothing
 * could be judged, bad input, or a bad command line.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "railbind.h"

enum {
	OPT_PID = 0x200,
	OPT_NO_BROKER,
};

/* ---- text ---- */

static const char *first_gpu(struct json_object *p, char *buf, size_t len)
{
	struct json_object *g = rb_jget(p, "gpus");
	size_t n = g ? json_object_array_length(g) : 0;

	if (!n)
		return "-";
	if (n == 1)
		return rb_js(json_object_array_get_idx(g, 0), "pci");
	snprintf(buf, len, "%zu GPUs", n);
	return buf;
}

static const char *nics(struct json_object *p, char *buf, size_t len)
{
	struct json_object *a = rb_jget(p, "nics");
	size_t n = a ? json_object_array_length(a) : 0;

	if (!n)
		return "-";
	snprintf(buf, len, "%s%s", rb_js(json_object_array_get_idx(a, 0), "name"),
		 n > 1 ? "+" : "");
	return buf;
}

/* "0:96%,1:4%" of the anonymous memory, or "-". */
static const char *mem(struct json_object *p, char *buf, size_t len)
{
	struct json_object *kb = rb_jget(rb_jget(p, "memory"), "anon_kb");
	long long total = 0;
	size_t used = 0;

	buf[0] = '\0';
	if (!kb)
		return "-";
	json_object_object_foreach(kb, n0, v0) {
		(void)n0;
		total += json_object_get_int64(v0);
	}
	if (!total)
		return "none";
	json_object_object_foreach(kb, node, v) {
		used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s:%lld%%",
					 used ? "," : "", node,
					 json_object_get_int64(v) * 100 / total);
		if (used >= len)
			break;
	}
	return buf;
}

static void print_findings(FILE *f, struct json_object *procs, const char *sev,
			   const char *title, const char *color, bool tty, int details)
{
	size_t i, k, n = json_object_array_length(procs);
	bool head = false;

	for (i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(procs, i);
		struct json_object *fs = rb_jget(p, "findings");

		for (k = 0; fs && k < json_object_array_length(fs); k++) {
			struct json_object *c = json_object_array_get_idx(fs, k);
			const char *remedy = rb_jstr(c, "remedy");

			if (strcmp(rb_js(c, "severity"), sev))
				continue;
			if (!head) {
				fprintf(f, "\n%s%s%s\n", tty ? color : "", title, tty ? "\033[0m" : "");
				head = true;
			}
			fprintf(f, "  pid %s %s (rank %s): [%s] %s\n", rb_js(p, "pid"),
				rb_js(p, "comm"), rb_js(rb_jget(p, "rank"), "local_rank"),
				rb_js(c, "id"), rb_js(c, "message"));
			if (remedy)
				fprintf(f, "      fix: %s\n", remedy);
			if (details)
				fprintf(f, "      evidence: %s\n", json_object_to_json_string_ext(
					rb_jget(c, "evidence"), JSON_C_TO_STRING_PLAIN |
					JSON_C_TO_STRING_NOSLASHESCAPE));
		}
	}
}

static void print_unknown(FILE *f, struct json_object *procs)
{
	size_t i, k, n = json_object_array_length(procs);
	bool head = false;

	for (i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(procs, i);
		struct json_object *u = rb_jget(p, "unknown");

		for (k = 0; u && k < json_object_array_length(u); k++) {
			struct json_object *e = json_object_array_get_idx(u, k);

			if (!head) {
				fprintf(f, "\nNot decided:\n");
				head = true;
			}
			fprintf(f, "  pid %s %s: [%s] %s\n", rb_js(p, "pid"), rb_js(p, "comm"),
				rb_js(e, "what"), rb_js(e, "reason"));
		}
	}
}

static void print_text(FILE *f, struct json_object *doc, int details)
{
	struct json_object *procs = rb_jget(doc, "processes"), *counts = rb_jget(doc, "counts");
	struct json_object *leases = rb_jget(doc, "leases");
	bool tty = rb_color(f);
	const char *status = rb_js(doc, "status");
	size_t i, n = procs ? json_object_array_length(procs) : 0;

	fprintf(f, "railbind verify on %s (topology: %s): %zu process%s\nleases: %s (%s)\n",
		rb_js(doc, "host"), rb_js(doc, "source"), n, n == 1 ? "" : "es",
		rb_js(leases, "source"), rb_js(leases, "from"));
	if (strcmp(rb_js(counts, "skipped"), "0"))
		fprintf(f, "(%s processes of other users not readable: run as root to see all)\n",
			rb_js(counts, "skipped"));
	if (n)
		fprintf(f, "\n%-8s %-15s %-5s %-13s %-9s %-10s %-10s %-14s %s\n", "PID", "COMM",
			"RANK", "GPU", "NIC", "CPUS", "RAN", "MEM(NODE:%)", "STATUS");
	for (i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(procs, i);
		struct json_object *cpus = rb_jget(p, "cpus");
		char g[32], nc[80], m[128];

		fprintf(f, "%-8s %-15s %-5s %-13s %-9s %-10s %-10s %-14s %s\n", rb_js(p, "pid"),
			rb_js(p, "comm"), rb_js(rb_jget(p, "rank"), "local_rank"),
			first_gpu(p, g, sizeof(g)), nics(p, nc, sizeof(nc)),
			rb_js(cpus, "allowed"), rb_js(cpus, "ran"), mem(p, m, sizeof(m)),
			rb_js(p, "status"));
		if (details && rb_jstr(p, "cmdline"))
			fprintf(f, "         %s\n", rb_jstr(p, "cmdline"));
	}
	if (!n)
		fprintf(f, "\nNo process uses a GPU or an RDMA device%s.\n",
			strcmp(rb_js(doc, "scope"), "all") ? " among those given" : "");
	print_findings(f, procs, "fail", "Failures:", "\033[1;31m", tty, details);
	print_findings(f, procs, "warn", "Warnings:", "\033[1;33m", tty, details);
	print_unknown(f, procs);
	fprintf(f, "\nChecks:");
	json_object_object_foreach(rb_jget(doc, "summary"), id, v)
		fprintf(f, " %s=%s", id, json_object_get_string(v));
	fprintf(f, "\nStatus: %s%s%s\n",
		tty && strcmp(status, "ok") ? "\033[1m" : "", status, tty ? "\033[0m" : "");
}

/* ---- Prometheus ---- */

static void prom_proc_labels(FILE *f, struct json_object *p)
{
	struct json_object *rank = rb_jget(p, "rank"), *gpus = rb_jget(p, "gpus");
	char g[32];

	fprintf(f, "pid=\"%s\",comm=\"", rb_js(p, "pid"));
	rb_prom_label(f, rb_jstr(p, "comm"));
	fprintf(f, "\",job=\"");
	rb_prom_label(f, rb_jstr(rank, "job"));
	fprintf(f, "\",rank=\"");
	rb_prom_label(f, rb_jstr(rank, "local_rank"));
	fprintf(f, "\",gpu=\"");
	rb_prom_label(f, gpus && json_object_array_length(gpus) ? first_gpu(p, g, sizeof(g)) : "");
	fputc('"', f);
}

static void print_prom(FILE *f, struct json_object *doc)
{
	static const char *const sevs[] = { "ok", "warn", "fail", "unknown" };
	struct json_object *procs = rb_jget(doc, "processes"), *counts = rb_jget(doc, "counts");
	size_t i, k, n = procs ? json_object_array_length(procs) : 0;

	fprintf(f, "# HELP railbind_verify_status Verify status: 0 ok, 1 warn, 2 fail, 3 unknown.\n"
		"# TYPE railbind_verify_status gauge\n"
		"railbind_verify_status %d\n", rb_sev_value(rb_js(doc, "status")));
	fprintf(f, "# HELP railbind_verify_processes Processes that use a GPU or RDMA device, by status.\n"
		"# TYPE railbind_verify_processes gauge\n");
	for (k = 0; k < 4; k++)
		fprintf(f, "railbind_verify_processes{status=\"%s\"} %s\n", sevs[k],
			rb_js(counts, sevs[k]));
	fprintf(f, "# HELP railbind_verify_check_status Worst severity of each check over the processes: 0 ok, 1 warn, 2 fail, 3 not decided.\n"
		"# TYPE railbind_verify_check_status gauge\n");
	json_object_object_foreach(rb_jget(doc, "summary"), id, v)
		fprintf(f, "railbind_verify_check_status{check=\"%s\"} %d\n", id,
			rb_sev_value(json_object_get_string(v)));
	fprintf(f, "# HELP railbind_rank_status Each process: 0 where it belongs, 1 warn, 2 mis-bound, 3 not decided.\n"
		"# TYPE railbind_rank_status gauge\n");
	for (i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(procs, i);

		fprintf(f, "railbind_rank_status{");
		prom_proc_labels(f, p);
		fprintf(f, "} %d\n", rb_sev_value(rb_js(p, "status")));
	}
	fprintf(f, "# HELP railbind_rank_misbound One series per finding of a process: 1 warn, 2 fail (label check).\n"
		"# TYPE railbind_rank_misbound gauge\n");
	for (i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(procs, i);
		struct json_object *fs = rb_jget(p, "findings");

		for (k = 0; fs && k < json_object_array_length(fs); k++) {
			struct json_object *c = json_object_array_get_idx(fs, k);

			fprintf(f, "railbind_rank_misbound{");
			prom_proc_labels(f, p);
			fprintf(f, ",check=\"%s\",severity=\"%s\"} %d\n", rb_js(c, "id"),
				rb_js(c, "severity"), rb_sev_value(rb_js(c, "severity")));
		}
	}
}

/* ---- Node Feature Discovery ---- */

static void print_nfd(FILE *f, struct json_object *doc)
{
	struct json_object *counts = rb_jget(doc, "counts");
	long long misbound = json_object_get_int64(rb_jget(counts, "warn")) +
			     json_object_get_int64(rb_jget(counts, "fail"));

	/* Label values: [A-Za-z0-9._-]; every value printed here is one word. */
	fprintf(f, "railbind.verify.status=%s\n", rb_js(doc, "status"));
	fprintf(f, "railbind.verify.ranks=%lld\n",
		json_object_get_int64(rb_jget(counts, "ok")) + misbound);
	fprintf(f, "railbind.verify.misbound=%lld\n", misbound);
	json_object_object_foreach(rb_jget(doc, "summary"), id, v)
		fprintf(f, "railbind.verify.%s=%s\n", id, json_object_get_string(v));
}

/* ---- the command ---- */

/* "123" or "1,2,3" into pids; -EINVAL (said) on anything else. */
static int add_pids(const char *arg, pid_t **pids, size_t *n)
{
	const char *item = arg;

	for (;;) {
		size_t len = strcspn(item, ",");
		char num[16], *end;
		pid_t *np;
		long v = -1;

		if (len && len < sizeof(num) && isdigit((unsigned char)*item)) {
			memcpy(num, item, len);
			num[len] = '\0';
			errno = 0;
			v = strtol(num, &end, 10);
			if (*end || errno || v > INT_MAX)
				v = -1;
		}
		if (v <= 0) {
			rb_error("verify: \"%.*s\" in \"%s\" is not a process id (a positive decimal number)",
				 (int)len, item, arg);
			return -EINVAL;
		}
		np = realloc(*pids, (*n + 1) * sizeof(*np));
		if (!np)
			return -ENOMEM;
		*pids = np;
		(*pids)[(*n)++] = (pid_t)v;
		if (!item[len])
			return 0;
		item += len + 1;
	}
}

static const struct rb_opt opts[] = {
	{ 'a', no_argument, "all",
	  "  -a, --all          every process that holds a GPU or RDMA device (default)\n" },
	{ OPT_PID, required_argument, "pid",
	  "      --pid PID[,PID...]  only these processes (also as arguments)\n" },
	{ .val = 's',
	  .help = "  -s, --socket PATH  the broker to ask for leases (default: RAILBIND_SOCKET,\n"
		  "                     else run/railbind/railbind.sock under --root)\n" },
	{ OPT_NO_BROKER, no_argument, "no-broker",
	  "      --no-broker    do not ask the broker; read its lease file only\n" },
	RB_OPTS_COMMON,
	RB_OPTS_REPORT,
	{ 0 }
};

/* What the command line asks for besides the common options. */
struct request {
	struct aff_verify_spec spec;
	pid_t *pids;
	size_t npids;
	bool all;
};

static int own_opt(int c, const char *arg, void *data)
{
	struct request *rq = data;

	if (c == 'a') {
		rq->all = true;
		return 0;
	}
	if (c == OPT_PID)
		return add_pids(arg, &rq->pids, &rq->npids);
	rq->spec.flags |= AFF_VERIFY_NO_BROKER;
	return 0;
}

static int pid_args(int argc, char **argv, void *data)
{
	struct request *rq = data;
	int i, rc = 0;

	for (i = 0; rc == 0 && i < argc; i++)
		rc = add_pids(argv[i], &rq->pids, &rq->npids);
	if (!rc && rq->all && rq->npids) {
		rb_error("verify: --all and process ids exclude each other");
		rc = -EINVAL;
	}
	return rc;
}

static const struct rb_verb verb = {
	.name = "verify",
	.synopsis = "[OPTIONS] [PID...]",
	.about = "Check that the running processes that use a GPU or an RDMA device are on the\n"
		 "GPU, NIC, CPUs and memory their plan or their broker lease gives them.\n"
		 "As a user: your own processes; as root: all. Nothing is changed.\n"
		 "Exit: 0 ok, 1 warnings, 2 a mis-bound rank, 3 nothing judged (or bad input).\n",
	.family = RB_CHECK,
	.opts = opts,
	.opt = own_opt,
	.args = pid_args,
	.text = print_text,
	.prom = print_prom,
	.nfd = print_nfd,
};

int cmd_verify(int argc, char **argv)
{
	struct request rq = { .spec = { .uid = -1 } };
	struct rb_opts o = { 0 };
	struct aff_ctx *ctx = NULL;
	struct aff_topo *topo = NULL;
	struct aff_verify *v = NULL;
	char err[1024] = "", *text = NULL;
	int rc;

	rc = rb_getopt(&verb, argc, argv, &o, &rq);
	if (rc >= 0) {
		free(rq.pids);
		return rc;
	}
	rc = rb_topology(&verb, &o, &ctx, &topo);
	if (rc >= 0) {
		free(rq.pids);
		return rc;
	}
	rq.spec.socket = o.socket;
	if (!rq.npids)
		rq.spec.flags |= AFF_VERIFY_ALL;
	rq.spec.pids = rq.pids;
	rq.spec.npids = rq.npids;
	rc = aff_verify_run(topo, &rq.spec, &v, err, sizeof(err));
	if (rc < 0)
		rb_error("%s", *err ? err : strerror(-rc));
	aff_topo_unref(topo);
	free(rq.pids);
	if (rc < 0) {
		aff_ctx_unref(ctx);
		return RB_CHECK_UNKNOWN;
	}
	rc = aff_verify_json(v, 0, &text);
	rc = rb_emit(&verb, &o, rb_doc(rc, text), aff_verify_exit_code(v));
	aff_verify_unref(v);
	aff_ctx_unref(ctx);
	return rc;
}
