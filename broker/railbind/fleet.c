// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind fleet DIR|FILES...: what differs across many nodes' snapshots
 * (railbind snapshot -o F) or audits (railbind audit --json). This file
 * takes the command line and the list of files; fleet_node.c reads a node,
 * fleet_jobs.c reads many on several cores, fleet_compare.c finds the
 * majority and groups the outliers, fleet_print.c prints the text. Exit
 * codes follow the audit's (Nagios/NHC): 0 every node agrees, 1 outliers,
 * 2 files that could not be read, 3 nothing to compare or a bad command line.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <hwloc.h>
#include <json-c/json.h>

#include "fleet.h"
#include "railbind.h"

enum { OPT_JOBS = 'J' };

/* Below this many files one process is as fast as several (bench/fleet.sh). */
#define FILES_PER_JOB 64
#define MAX_JOBS 64

struct list {
	char **v;
	size_t n, cap;
};

static int push(struct list *l, char *s)
{
	if (!s)
		return -ENOMEM;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		char **v = realloc(l->v, cap * sizeof(*v));

		if (!v) {
			free(s);
			return -ENOMEM;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = s;
	return 0;
}

/* A file a node wrote, not a half-written one (snapshot_write.c: F.tmp.XXXXXX). */
static int wanted(const struct dirent *d)
{
	return d->d_name[0] != '.' && !strstr(d->d_name, ".tmp.");
}

static int add_dir(struct list *l, const char *dir)
{
	struct dirent **ents;
	int i, n = scandir(dir, &ents, wanted, versionsort), rc = 0;
	size_t before = l->n;

	if (n < 0) {
		rb_error("fleet: %s: %s", dir, strerror(errno));
		return -errno;
	}
	for (i = 0; i < n; i++) {
		char *path = NULL;
		struct stat st;

		if (!rc && asprintf(&path, "%s/%s", dir, ents[i]->d_name) < 0)
			rc = -ENOMEM;
		/* Subdirectories are not nodes; a broken link is reported as unreadable. */
		if (!rc && !stat(path, &st) && S_ISDIR(st.st_mode))
			free(path);
		else if (!rc)
			rc = push(l, path);
		free(ents[i]);
	}
	free(ents);
	if (!rc && l->n == before)
		rb_error("fleet: %s: no snapshot or audit file in it", dir);
	return rc;
}

static int collect(struct list *l, char **args, int n)
{
	int i, rc = 0;

	for (i = 0; i < n && !rc; i++) {
		struct stat st;

		if (!stat(args[i], &st) && S_ISDIR(st.st_mode))
			rc = add_dir(l, args[i]);
		else
			rc = push(l, strdup(args[i]));
	}
	return rc;
}

static int default_jobs(size_t files)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t jobs = files / FILES_PER_JOB;

	if (cpus < 1)
		cpus = 1;
	if (jobs > (size_t)cpus)
		jobs = (size_t)cpus;
	if (jobs > MAX_JOBS)
		jobs = MAX_JOBS;
	return jobs ? (int)jobs : 1;
}

static int parse_jobs(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > MAX_JOBS)
		return -1;
	return (int)v;
}

static const struct rb_opt opts[] = {
	{ .val = 'c' },
	{ OPT_JOBS, required_argument, "jobs",
	  "  -J, --jobs N       read with N processes (default: one per CPU, up to 64)\n" },
	{ .val = 'j', .help = "  -j, --json         railbind.fleet/1 JSON on stdout\n" },
	{ .val = 'p' },
	{ .val = 'd', .help = "  -d, --details      list every node of a group\n" },
	{ .val = 'h' },
	{ 0 }
};

/* What the command line asks for besides the common options. */
struct request {
	char **args;	/* DIR|FILE... */
	int nargs;
	int jobs;	/* 0: default_jobs() */
};

static int own_opt(int c, const char *arg, void *data)
{
	struct request *rq = data;

	(void)c;	/* -J, its only one */
	rq->jobs = parse_jobs(arg);
	if (rq->jobs > 0)
		return 0;
	rb_error("fleet: --jobs expects a number from 1 to %d, got \"%s\"", MAX_JOBS, arg);
	return -EINVAL;
}

static int inputs(int argc, char **argv, void *data)
{
	struct request *rq = data;

	if (!argc) {
		rb_error("fleet: expected a directory or files of snapshots or audits");
		return -EINVAL;
	}
	rq->args = argv;
	rq->nargs = argc;
	return 0;
}

static const struct rb_verb verb = {
	.name = "fleet",
	.synopsis = "[OPTIONS] DIR|FILE...",
	.about = "Compare many nodes' snapshots (railbind snapshot -o F) or audits (railbind\n"
		 "audit --json): report the nodes whose devices, GPU-NIC path classes, NUMA\n"
		 "layout, links, ACS or check results differ from the majority, grouped.\n"
		 "A DIR stands for its files (not hidden, not *.tmp.*, not in subdirectories).\n"
		 "Exit: 0 all nodes agree, 1 outliers, 2 unreadable files, 3 nothing to compare.\n",
	.family = RB_CHECK,
	.opts = opts,
	.opt = own_opt,
	.args = inputs,
	.text = fleet_print_text,
};

int cmd_fleet(int argc, char **argv)
{
	struct request rq = { 0 };
	struct rb_opts o = { 0 };
	struct json_object **rec = NULL, *doc;
	struct list files = { 0 };
	struct aff_ctx *ctx = NULL;
	hwloc_topology_t anchor = NULL;
	int rc;
	size_t i;

	rc = rb_getopt(&verb, argc, argv, &o, &rq);
	if (rc >= 0)
		return rc;
	if (rb_ctx(&o, &ctx) < 0) {
		aff_ctx_unref(ctx);
		return RB_CHECK_UNKNOWN;
	}
	/*
	 * hwloc dlopen()s its plugins when the first topology is created and
	 * closes them with the last: one topology held open for the whole run
	 * saves that on every file (a third of the time per node, bench/fleet.sh).
	 */
	rb_xml_plugins_only();
	if (hwloc_topology_init(&anchor) < 0)
		anchor = NULL;
	rc = collect(&files, rq.args, rq.nargs);
	if (!rc && files.n && !(rec = calloc(files.n, sizeof(*rec))))
		rc = -ENOMEM;
	if (!rc && files.n)
		rc = fleet_read_all(ctx, files.v, files.n, rq.jobs ? rq.jobs : default_jobs(files.n),
				    rec);
	if (rc < 0)
		goto out;
	doc = fleet_compare(rec, files.n);
	if (!doc) {
		rc = -ENOMEM;
		goto out;
	}
	rc = rb_emit(&verb, &o, doc, fleet_exit_code(doc));
out:
	/* The other errors were said where they happened. */
	if (rc == -ENOMEM)
		rb_error("fleet: %s", strerror(-rc));
	for (i = 0; i < files.n; i++) {
		free(files.v[i]);
		if (rec)
			json_object_put(rec[i]);
	}
	free(files.v);
	free(rec);
	if (anchor)
		hwloc_topology_destroy(anchor);
	aff_ctx_unref(ctx);
	return rc < 0 ? RB_CHECK_UNKNOWN : rc;
}
