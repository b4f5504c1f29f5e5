/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared by the libFuzzer targets: a quiet context (a fuzzer feeding
 * garbage would otherwise flood stderr with the library's errors), and the
 * checks every plan must pass whatever the input: no rank is handed a CPU
 * outside the allowed set, and every getter answers within bounds.
 */
#ifndef RAILBIND_FUZZ_H
#define RAILBIND_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A finding the sanitizers cannot see: report it and let libFuzzer save the input. */
#define FUZZ_CHECK(cond)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "%s:%d: invariant failed: %s\n",     \
				__FILE__, __LINE__, #cond);                  \
			abort();                                             \
		}                                                            \
	} while (0)

__attribute__((format(printf, 6, 0)))
static inline void fuzz_quiet(void *data, int priority, const char *file,
			      int line, const char *fn, const char *format,
			      va_list args)
{
	char buf[1024];

	(void)data;
	(void)priority;
	(void)file;
	(void)line;
	(void)fn;
	/* Format anyway: the format arguments must be valid, whatever is dropped. */
	vsnprintf(buf, sizeof(buf), format, args);
}

static inline struct aff_ctx *fuzz_ctx(void)
{
	struct aff_ctx *ctx = aff_ctx_new(NULL);

	if (!ctx)
		abort();
	aff_set_log_fn(ctx, fuzz_quiet, NULL);
	aff_set_log_priority(ctx, LOG_DEBUG);
	return ctx;
}

/* A NUL-terminated copy of the input (the parsers under test read C strings). */
static inline char *fuzz_strdup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Every getter of a loaded topology, and its JSON document. */
static inline void fuzz_walk_topo(const struct aff_topo *t)
{
	size_t g, n, ng = aff_topo_gpu_count(t), nn = aff_topo_nic_count(t);
	char *json = NULL;

	for (g = 0; g < ng; g++) {
		FUZZ_CHECK(aff_topo_gpu_pci(t, g) != NULL);
		for (n = 0; n < nn; n++)
			FUZZ_CHECK(aff_path_name(aff_topo_path(t, g, n)) != NULL);
	}
	for (n = 0; n < nn; n++)
		FUZZ_CHECK(aff_topo_nic_name(t, n) != NULL);
	if (aff_topo_json(t, 0, &json) == 0)
		FUZZ_CHECK(json && *json == '{');
	free(json);
}

/*
 * Plan with spec and check it: each rank's CPUs are a non-empty part of the
 * allowed set (all the node's CPUs when the spec names none; the plan leaves
 * them unknown, NULL, only when that set is empty), each rank has a distinct
 * GPU, and the JSON document is produced.
 */
static inline void fuzz_plan(struct aff_topo *t, const struct aff_plan_spec *spec)
{
	hwloc_bitmap_t allowed = hwloc_bitmap_alloc(), got = hwloc_bitmap_alloc();
	struct aff_plan *p = NULL;
	char err[256], *json = NULL;
	size_t r, q;

	if (!allowed || !got)
		abort();
	if (aff_plan_new(t, spec, &p, err, sizeof(err)) < 0)
		goto out;
	if (spec && spec->allowed_cpus) {
		FUZZ_CHECK(aff_parse_cpulist(spec->allowed_cpus, allowed) == 0);
		hwloc_bitmap_and(allowed, allowed, t->all_cpus);
	} else {
		hwloc_bitmap_copy(allowed, t->all_cpus);
	}
	FUZZ_CHECK(aff_plan_rank_count(p) <= aff_topo_gpu_count(t));
	for (r = 0; r < aff_plan_rank_count(p); r++) {
		const char *cpus = aff_plan_rank_cpus(p, r);
		const char *const *env = aff_plan_rank_env(p, r);

		/* No CPUs (NULL) only when none is allowed: a file naming no CPU. */
		if (!cpus) {
			FUZZ_CHECK(hwloc_bitmap_iszero(allowed));
		} else {
			FUZZ_CHECK(aff_parse_cpulist(cpus, got) == 0);
			FUZZ_CHECK(!hwloc_bitmap_iszero(got));
			FUZZ_CHECK(hwloc_bitmap_isincluded(got, allowed));
		}
		FUZZ_CHECK(aff_plan_rank_gpu(p, r) != NULL);
		for (q = 0; q < r; q++)
			FUZZ_CHECK(strcmp(aff_plan_rank_gpu(p, q),
					  aff_plan_rank_gpu(p, r)) != 0);
		for (q = 0; q < aff_plan_rank_nic_count(p, r); q++)
			FUZZ_CHECK(aff_plan_rank_nic(p, r, q) != NULL);
		/* A rail left out (port down, slow) is never planned. */
		for (q = 0; q < p->rank[r].rails.n; q++)
			FUZZ_CHECK(t->rail[p->rank[r].rails.rail[q]].excl == AFF_EXCL_NONE);
		FUZZ_CHECK(env != NULL);
		for (; *env; env++)
			FUZZ_CHECK(strchr(*env, '=') != NULL);
	}
	FUZZ_CHECK(aff_plan_rank_cpus(p, r) == NULL);
	FUZZ_CHECK(aff_plan_json(p, AFF_JSON_PRETTY, &json) == 0);
	free(json);
	aff_plan_unref(p);
out:
	hwloc_bitmap_free(allowed);
	hwloc_bitmap_free(got);
}

#endif
