// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * planbench: the planner alone, without process start-up or XML parsing,
 * against hwloc loading the same file, in one process. Public API only; it
 * links libaffinity.a so that it measures this tree, not an installed copy.
 *
 *   planbench [-t SECONDS] [-m MIN] [-M MAX] FILE
 *
 * Each round times, in turn: hwloc_topology_load of FILE set up as
 * railbind sets it up (I/O kept), the whole aff_topo_load in this process
 * (AFF_LOAD_NO_FORK, as railbind's commands load in a child of their own:
 * that load plus the model), aff_plan_new on one loaded model, and
 * aff_plan_json. Rounds interleave the four so a busy machine slows each
 * alike. Rounds run until SECONDS (default 1) are spent, at least MIN (3),
 * at most MAX (1001). Then as many rounds of aff_topo_load as the library
 * runs it for its in-process callers, hwloc's import in a child process:
 * apart, since every fork makes the heap copy-on-write, and the faults
 * would land on whatever runs next.
 *
 * Output, one line, medians in seconds:
 *   rounds=R gpus=G nics=N hwloc=.. load=.. plan=.. json=.. contained=..
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <hwloc.h>

#include "affinity.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int hwloc_once(const char *file)
{
	hwloc_topology_t hw;
	int rc = -1;

	if (hwloc_topology_init(&hw) < 0)
		return -1;
	hwloc_topology_set_io_types_filter(hw, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (hwloc_topology_set_xml(hw, file) == 0 && hwloc_topology_load(hw) == 0)
		rc = 0;
	hwloc_topology_destroy(hw);
	return rc;
}

static int load_once(struct aff_ctx *ctx, const char *file, unsigned long flags,
		     char *err, size_t errlen)
{
	struct aff_topo *t;
	int rc = aff_topo_load(ctx, file, flags, &t, err, errlen);

	aff_topo_unref(t);
	return rc;
}

static int plan_once(struct aff_topo *t, struct aff_plan **p, char *err,
		     size_t errlen)
{
	return aff_plan_new(t, NULL, p, err, errlen);
}

static int json_once(const struct aff_plan *p)
{
	char *s = NULL;
	int rc = aff_plan_json(p, 0, &s);

	free(s);
	return rc;
}

int main(int argc, char **argv)
{
	double budget = 1.0, t0, t;
	int min = 3, max = 1001, n, opt, rc = 1;
	double *v[5] = { NULL };
	struct aff_topo *topo = NULL;
	struct aff_ctx *ctx;
	const char *file;
	char err[1024] = "";

	while ((opt = getopt(argc, argv, "t:m:M:")) != -1) {
		switch (opt) {
		case 't':
			budget = atof(optarg);
			break;
		case 'm':
			min = atoi(optarg);
			break;
		case 'M':
			max = atoi(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1 || min < 1 || max < min)
		goto usage;
	file = argv[optind];

	ctx = aff_ctx_new(NULL);
	if (!ctx) {
		perror("planbench: aff_ctx_new");
		return 1;
	}
	if (aff_topo_load(ctx, file, AFF_LOAD_REQUIRE_GPU | AFF_LOAD_NO_FORK, &topo, err,
			  sizeof(err)) < 0) {
		fprintf(stderr, "planbench: %s\n", err);
		goto out;
	}
	for (int i = 0; i < 5; i++) {
		v[i] = calloc((size_t)max, sizeof(double));
		if (!v[i])
			goto out;
	}
	t0 = now();
	for (n = 0; n < max && (n < min || now() - t0 < budget); n++) {
		struct aff_plan *p = NULL;

		t = now();
		if (hwloc_once(file) < 0) {
			fprintf(stderr, "planbench: hwloc cannot load %s\n", file);
			goto out;
		}
		v[0][n] = now() - t;
		t = now();
		if (load_once(ctx, file, AFF_LOAD_NO_FORK, err, sizeof(err)) < 0) {
			fprintf(stderr, "planbench: %s\n", err);
			goto out;
		}
		v[1][n] = now() - t;
		t = now();
		if (plan_once(topo, &p, err, sizeof(err)) < 0) {
			fprintf(stderr, "planbench: %s\n", err);
			goto out;
		}
		v[2][n] = now() - t;
		t = now();
		if (json_once(p) < 0) {
			aff_plan_unref(p);
			fprintf(stderr, "planbench: JSON output failed\n");
			goto out;
		}
		v[3][n] = now() - t;
		aff_plan_unref(p);
	}
	for (int i = 0; i < n; i++) {
		t = now();
		if (load_once(ctx, file, 0, err, sizeof(err)) < 0) {
			fprintf(stderr, "planbench: %s\n", err);
			goto out;
		}
		v[4][i] = now() - t;
	}
	printf("rounds=%d gpus=%zu nics=%zu hwloc=%.6f load=%.6f plan=%.6f json=%.6f contained=%.6f\n",
	       n, aff_topo_gpu_count(topo), aff_topo_nic_count(topo),
	       median(v[0], n), median(v[1], n), median(v[2], n), median(v[3], n),
	       median(v[4], n));
	rc = 0;
out:
	for (int i = 0; i < 5; i++)
		free(v[i]);
	aff_topo_unref(topo);
	aff_ctx_unref(ctx);
	return rc;
usage:
	fputs("usage: planbench [-t SECONDS] [-m MIN] [-M MAX] FILE\n", stderr);
	return 2;
}
