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
#include <getopt.h>
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

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s fleet [OPTIONS] DIR|FILE...\n"
		"Compare many nodes' snapshots (railbind snapshot -o F) or audits (railbind\n"
		"audit --json): report the nodes whose devices, GPU-NIC path classes, NUMA\n"
		"layout, links, ACS or check results differ from the majority, grouped.\n"
		"A DIR stands for its files (not hidden, not *.tmp.*, not in subdirectories).\n"
		"Exit: 0 all nodes agree, 1 outliers, 2 unreadable files, 3 nothing to compare.\n\n"
		"  -c, --config FILE  use FILE instead of /etc/railbind/railbind.conf\n"
		"  -J, --jobs N       read with N processes (default: one per CPU, up to 64)\n"
		"  -j, --json         railbind.fleet/1 JSON on stdout\n"
		"  -p, --pretty       indent the JSON\n"
		"  -d, --details      list every node of a group\n"
		"  -h, --help         this help\n", rb_prog);
}

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

int cmd_fleet(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "jobs", required_argument, NULL, OPT_JOBS },
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "details", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct rb_opts o = { 0 };
	struct json_object **rec = NULL, *doc;
	struct list files = { 0 };
	struct aff_ctx *ctx = NULL;
	hwloc_topology_t anchor = NULL;
	int c, rc, jobs = 0;
	size_t i;

	while ((c = getopt_long(argc, argv, "+hc:J:jpd", longopts, NULL)) != -1) {
		if (c != 'h' && c != OPT_JOBS && rb_common_opt(c, optarg, &o))
			continue;
		switch (c) {
		case OPT_JOBS:
			jobs = parse_jobs(optarg);
			if (jobs > 0)
				break;
			rb_error("fleet: --jobs expects a number from 1 to %d, got \"%s\"",
				 MAX_JOBS, optarg);
			return RB_EXIT_UNKNOWN;
		case 'h':
			usage(stdout);
			return RB_EXIT_OK;
		default:
			usage(stderr);
			return RB_EXIT_UNKNOWN;
		}
	}
	if (optind >= argc) {
		rb_error("fleet: expected a directory or files of snapshots or audits");
		return RB_EXIT_UNKNOWN;
	}
	if (rb_ctx(&o, &ctx) < 0) {
		aff_ctx_unref(ctx);
		return RB_EXIT_UNKNOWN;
	}
	/*
	 * hwloc dlopen()s its plugins when the first topology is created and
	 * closes them with the last: one topology held open for the whole run
	 * saves that on every file (a third of the time per node, bench/fleet.sh).
	 */
	rb_xml_plugins_only();
	if (hwloc_topology_init(&anchor) < 0)
		anchor = NULL;
	rc = collect(&files, argv + optind, argc - optind);
	if (!rc && files.n && !(rec = calloc(files.n, sizeof(*rec))))
		rc = -ENOMEM;
	if (!rc && files.n)
		rc = fleet_read_all(ctx, files.v, files.n, jobs ? jobs : default_jobs(files.n),
				    rec);
	if (rc < 0)
		goto out;
	doc = fleet_compare(rec, files.n);
	if (!doc) {
		rc = -ENOMEM;
		goto out;
	}
	c = fleet_exit_code(doc);
	rc = rb_emit(doc, &o, fleet_print_text) == RB_EXIT_OK ? c : -EIO;
out:
	/* The other errors were said where they happened. */
	if (rc == -ENOMEM || rc == -EIO)
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
	return rc < 0 ? RB_EXIT_UNKNOWN : rc;
}
