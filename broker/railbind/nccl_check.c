// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind nccl-check FILE...: did the job get what the node can give? NCCL's
 * NCCL_DEBUG=INFO log and nccl-tests' output (nccllog_*.c), judged against
 * the plan, the rails and the PCIe paths of the node (--input, or the live
 * one). Every output is printed from the one railbind.nccl-check/1 document;
 * exit codes are the audit's: 0 ok, 1 warnings, 2 failures, 3 could not
 * decide (or unreadable input, or a bad command line).
 *
 * Each file is read in one pass, a line at a time: memory grows with the
 * ranks and tables seen, not with the log (tens of MB of hundreds of ranks).
 * A file must be a regular file ("-" is standard input, which may be a pipe):
 * a FIFO or a device named as a file is refused without blocking.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>

#include "nccllog_judge.h"
#include "railbind.h"

#define OPT_EXPECT 0x200
#define OPT_ALGO 0x201

static const struct rb_opt opts[] = {
	{ OPT_EXPECT, required_argument, "expect",
	  "      --expect F     the fraction of the rails' bound busbw must reach (default 0.8)\n" },
	{ OPT_ALGO, required_argument, "algo",
	  "      --algo NAME    the run's NCCL_ALGO when the log does not say (default:\n"
	  "                     $NCCL_ALGO); judged are Ring and Tree runs only\n" },
	RB_OPTS_COMMON,
	RB_OPTS_REPORT,
	{ 0 }
};

struct request {
	struct nl_judge_spec spec;
	char **files;
	int nfiles;
};

static int own_opt(int c, const char *arg, void *data)
{
	struct request *rq = data;
	char *end;

	if (c == OPT_ALGO) {
		rq->spec.algo = arg;
		return 0;
	}
	rq->spec.expect = strtod(arg, &end);
	if (*end || end == arg || !(rq->spec.expect > 0 && rq->spec.expect <= 1)) {
		rb_error("nccl-check: --expect %s: expected a fraction, more than 0 and at most 1", arg);
		return -EINVAL;
	}
	return 0;
}

static int file_args(int argc, char **argv, void *data)
{
	struct request *rq = data;
	int i;

	if (argc < 1) {
		rb_error("nccl-check: expected at least one FILE (a log, nccl-tests output, or - for standard input)");
		return -EINVAL;
	}
	/* Every command stops at its first argument (run's "-- CMD" needs it). */
	for (i = 0; i < argc; i++)
		if (argv[i][0] == '-' && argv[i][1]) {
			rb_error("nccl-check: %s after a FILE: options go before the files", argv[i]);
			return -EINVAL;
		}
	rq->files = argv;
	rq->nfiles = argc;
	return 0;
}

/* ---- reading ---- */

/* @path opened for reading: a regular file, or standard input for "-". */
static int open_input(const char *path)
{
	struct stat st;
	int fd, flags;

	if (!strcmp(path, "-"))
		return STDIN_FILENO;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		rb_error("nccl-check: %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rb_error("nccl-check: %s: %s", path, S_ISDIR(st.st_mode) ? "is a directory" :
			 "not a regular file (a FIFO, device or socket is not read)");
		close(fd);
		return -1;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	return fd;
}

/* A -J document: what starts with '{' is read whole, up to @limit bytes. */
static int read_json(struct nl_log *log, const char *name, int fd, char *buf, size_t have,
		     size_t limit)
{
	size_t cap = have + 65536, len = have;
	char *text = malloc(cap);
	ssize_t n;
	int rc;

	if (!text)
		return -ENOMEM;
	memcpy(text, buf, have);
	for (;;) {
		if (len + 65536 > cap) {
			char *more;

			if (cap > limit) {
				free(text);
				rb_error("nccl-check: %s: a JSON document over %zu bytes (max-input-size)",
					 name, limit);
				return -EFBIG;
			}
			more = realloc(text, cap * 2);
			if (!more) {
				free(text);
				return -ENOMEM;
			}
			text = more;
			cap *= 2;
		}
		n = read(fd, text + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	if (n < 0) {
		rc = -errno;
		free(text);
		rb_error("nccl-check: %s: %s", name, strerror(-rc));
		return rc;
	}
	text[len] = '\0';
	rc = nl_feed_json(log, name, text, len);
	free(text);
	return rc;
}

/* Every line of @fd, in chunks: a line longer than the buffer is skipped whole. */
static int read_lines(struct nl_log *log, const char *name, int fd, size_t limit)
{
	static char buf[NL_LINE_MAX + 65536];
	size_t have = 0, start;
	bool skipping = false, first = true;
	long lineno = 0;
	ssize_t n;
	int rc = 0;

	for (;;) {
		n = read(fd, buf + have, sizeof(buf) - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rb_error("nccl-check: %s: %s", name, strerror(errno));
			return -errno;
		}
		have += (size_t)n;
		if (first && have) {
			size_t i = 0;

			while (i < have && strchr(" \t\r\n", buf[i]) && buf[i])
				i++;
			first = false;
			if (i < have && buf[i] == '{')
				return read_json(log, name, fd, buf, have, limit);
		}
		start = 0;
		for (;;) {
			char *nl = memchr(buf + start, '\n', have - start);

			if (!nl)
				break;
			lineno++;
			if (!skipping)
				rc = nl_feed_line(log, name, lineno, buf + start, (size_t)(nl - buf) - start);
			else
				log->long_lines++;
			skipping = false;
			if (rc < 0)
				return rc;
			start = (size_t)(nl - buf) + 1;
		}
		if (n == 0) {
			/* The last line, without its newline. */
			if (start < have && !skipping)
				rc = nl_feed_line(log, name, ++lineno, buf + start, have - start);
			return rc;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
		if (have >= NL_LINE_MAX) {
			/* Longer than any line read: skip to its end. */
			skipping = true;
			have = 0;
		}
	}
}

static int read_inputs(struct nl_log *log, const struct request *rq, size_t limit)
{
	int i, fd, rc = 0;

	for (i = 0; rc == 0 && i < rq->nfiles; i++) {
		const char *name = strcmp(rq->files[i], "-") ? rq->files[i] : "(stdin)";

		fd = open_input(rq->files[i]);
		if (fd < 0)
			return -EINVAL;
		rc = read_lines(log, name, fd, limit);
		if (fd != STDIN_FILENO)
			close(fd);
	}
	if (rc == -ENOMEM)
		rb_error("nccl-check: out of memory");
	return rc < 0 ? rc : nl_finish(log);
}

/* ---- text ---- */

static void print_text(FILE *f, struct json_object *doc, int details)
{
	struct json_object *ranks = rb_jget(doc, "ranks"), *tests = rb_jget(doc, "tests");
	struct json_object *und = rb_jget(doc, "undecided"), *in = rb_jget(doc, "input");
	bool tty = rb_color(f);
	size_t i, k;

	fprintf(f, "railbind nccl-check: %s lines (%s of NCCL) against %s (%s)\n",
		rb_js(in, "lines"), rb_js(in, "nccl_lines"), rb_js(doc, "host"), rb_js(doc, "source"));
	if (json_object_array_length(ranks))
		fprintf(f, "\n  %-16s %-8s %-9s %-13s %-5s %-6s %s\n", "host", "pid", "rank", "GPU",
			"GDR", "plan", "NICs used");
	for (i = 0; i < json_object_array_length(ranks) && (details || i < 64); i++) {
		struct json_object *r = json_object_array_get_idx(ranks, i), *nics = rb_jget(r, "nics");
		char rank[32];

		snprintf(rank, sizeof(rank), "%s/%s", rb_js(r, "rank"), rb_js(r, "nranks"));
		fprintf(f, "  %-16s %-8s %-9s %-13s %-5s %-6s", rb_js(r, "host"), rb_js(r, "pid"), rank,
			rb_js(r, "gpu"), rb_js(r, "gdr"), rb_js(r, "planned_nic"));
		for (k = 0; k < json_object_array_length(nics); k++)
			fprintf(f, "%s%s", k ? "," : " ",
				json_object_get_string(json_object_array_get_idx(nics, k)));
		fprintf(f, "\n");
	}
	if (i < json_object_array_length(ranks))
		fprintf(f, "  ... %zu more (-d lists all)\n", json_object_array_length(ranks) - i);
	for (i = 0; i < json_object_array_length(tests); i++) {
		struct json_object *t = json_object_array_get_idx(tests, i);

		fprintf(f, "%s  %s:%s %s: busbw %s GB/s at %s B, bound %s GB/s, ratio %s\n",
			i ? "" : "\n", rb_js(t, "file"), rb_js(t, "line"), rb_js(t, "collective"),
			rb_js(t, "busbw"), rb_js(t, "size"), rb_js(t, "bound"), rb_js(t, "ratio"));
	}
	rb_print_findings(f, rb_jget(doc, "checks"), "fail", "Failures:", "\033[1;31m", tty);
	rb_print_findings(f, rb_jget(doc, "checks"), "warn", "Warnings:", "\033[1;33m", tty);
	rb_print_findings(f, rb_jget(doc, "checks"), "ok", "Information:", "\033[1m", tty);
	if (json_object_array_length(und))
		fprintf(f, "\nNot decided:\n");
	for (i = 0; i < json_object_array_length(und); i++) {
		struct json_object *u = json_object_array_get_idx(und, i);

		fprintf(f, "  [%s] %s\n", rb_js(u, "id"), rb_js(u, "reason"));
	}
	fprintf(f, "\nChecks:");
	json_object_object_foreach(rb_jget(doc, "summary"), id, v)
		fprintf(f, " %s=%s", id, json_object_get_string(v));
	fprintf(f, "\nStatus: %s\n", rb_js(doc, "status"));
}

/* ---- Prometheus, NFD ---- */

static void print_prom(FILE *f, struct json_object *doc)
{
	struct json_object *tests = rb_jget(doc, "tests");
	size_t i;

	fprintf(f, "# HELP railbind_nccl_check_status nccl-check status: 0 ok, 1 warn, 2 fail, 3 unknown.\n"
		"# TYPE railbind_nccl_check_status gauge\n"
		"railbind_nccl_check_status %d\n", rb_sev_value(rb_js(doc, "status")));
	rb_prom_findings(f, doc, "railbind_nccl_check_findings");
	fprintf(f, "# HELP railbind_nccl_busbw_ratio Large-message busbw of an nccl-tests run over the bound of the node's rails and PCIe paths.\n"
		"# TYPE railbind_nccl_busbw_ratio gauge\n");
	for (i = 0; i < json_object_array_length(tests); i++) {
		struct json_object *t = json_object_array_get_idx(tests, i);

		if (!rb_jstr(t, "ratio"))
			continue;
		fprintf(f, "railbind_nccl_busbw_ratio{collective=\"");
		rb_prom_label(f, rb_jstr(t, "collective"));
		fprintf(f, "\",file=\"");
		rb_prom_label(f, rb_jstr(t, "file"));
		fprintf(f, "\",line=\"%s\",algo=\"", rb_js(t, "line"));
		rb_prom_label(f, rb_jstr(t, "algo"));
		fprintf(f, "\"} %s\n", rb_js(t, "ratio"));
	}
}

static void print_nfd(FILE *f, struct json_object *doc)
{
	fprintf(f, "railbind.nccl.status=%s\n", rb_js(doc, "status"));
	json_object_object_foreach(rb_jget(doc, "summary"), id, v)
		fprintf(f, "railbind.%s=%s\n", id, json_object_get_string(v));
}

static const struct rb_verb verb = {
	.name = "nccl-check",
	.synopsis = "[OPTIONS] FILE...",
	.about = "Judge what NCCL did (an NCCL_DEBUG=INFO log) and what nccl-tests measured\n"
		 "(its tables, or its -J JSON) against the node's plan, rails and PCIe paths:\n"
		 "each rank's NIC and GPUDirect RDMA, the rail set across nodes, large-message\n"
		 "busbw against the rails' bound, #wrong. FILE - is standard input.\n"
		 "Exit: 0 ok, 1 warnings, 2 failures, 3 could not decide (or bad input).\n",
	.family = RB_CHECK,
	.opts = opts,
	.opt = own_opt,
	.args = file_args,
	.text = print_text,
	.prom = print_prom,
	.nfd = print_nfd,
};

/* The plan, topology and facts documents of @topo; plan NULL without accelerators. */
static int node_docs(struct aff_topo *topo, struct json_object **plan, struct json_object **tj,
		     struct json_object **facts)
{
	struct aff_plan *p = NULL;
	char err[1024] = "", *text = NULL;
	int rc;

	rc = aff_topo_json(topo, 0, &text);
	*tj = rb_doc(rc, text);
	rc = aff_topo_facts_json(topo, 0, &text);
	*facts = rb_doc(rc, text);
	*plan = NULL;
	rc = aff_plan_new(topo, NULL, &p, err, sizeof(err));
	if (rc == -ENODEV)
		return *tj ? 0 : -ENOMEM;
	if (rc < 0) {
		rb_error("nccl-check: %s", *err ? err : strerror(-rc));
		return rc;
	}
	rc = aff_plan_json(p, 0, &text);
	*plan = rb_doc(rc, text);
	aff_plan_unref(p);
	return *plan && *tj ? 0 : -ENOMEM;
}

int cmd_nccl_check(int argc, char **argv)
{
	struct request rq = { .spec = { .expect = NL_EXPECT_DEFAULT,
					.min_size = NL_MIN_SIZE_DEFAULT } };
	struct json_object *plan = NULL, *tj = NULL, *facts = NULL, *doc = NULL;
	struct rb_opts o = { 0 };
	struct aff_ctx *ctx = NULL;
	struct aff_topo *topo = NULL;
	struct nl_log *log = NULL;
	int rc;

	rc = rb_getopt(&verb, argc, argv, &o, &rq);
	if (rc >= 0)
		return rc;
	if (!rq.spec.algo)
		rq.spec.algo = getenv("NCCL_ALGO");
	rc = rb_topology(&verb, &o, &ctx, &topo);
	if (rc >= 0)
		return rc;
	rc = node_docs(topo, &plan, &tj, &facts);
	log = rc < 0 ? NULL : nl_new();
	if (!rc && !log)
		rc = -ENOMEM;
	if (!rc)
		rc = read_inputs(log, &rq, aff_ctx_input_limit(ctx));
	if (!rc) {
		doc = nl_judge(log, plan, tj, facts, &rq.spec);
		rc = doc ? 0 : -ENOMEM;
	}
	nl_free(log);
	json_object_put(plan);
	json_object_put(tj);
	json_object_put(facts);
	aff_topo_unref(topo);
	if (rc < 0) {
		aff_ctx_unref(ctx);
		return RB_CHECK_UNKNOWN;
	}
	rc = rb_emit(&verb, &o, json_object_get(doc), rb_sev_value(rb_jstr(doc, "status")));
	json_object_put(doc);
	aff_ctx_unref(ctx);
	return rc;
}
