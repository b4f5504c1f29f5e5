// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * CPU split. The generated fixtures number PUs as Linux does on x86: core
 * c's threads are c and c + (total cores); a NUMA node's cores are
 * consecutive. The checks read the hwloc objects of the fixture, not the
 * library's model, for cores, caches and NUMA nodes.
 */
#include "fixture.h"

/* Every core of set is whole: all its PUs or none. */
static void check_whole_cores(const struct aff_topo *t, hwloc_const_bitmap_t set)
{
	hwloc_obj_t core = NULL;

	while ((core = hwloc_get_next_obj_by_type(t->hw, HWLOC_OBJ_CORE, core)))
		if (hwloc_bitmap_intersects(core->cpuset, set))
			assert_true(hwloc_bitmap_isincluded(core->cpuset, set));
}

/* The cores of set are consecutive in the machine's core order. */
static void check_contiguous(const struct aff_topo *t, hwloc_const_bitmap_t set)
{
	hwloc_obj_t core = NULL;
	int state = 0;	/* 0 before, 1 inside, 2 after */

	while ((core = hwloc_get_next_obj_by_type(t->hw, HWLOC_OBJ_CORE, core))) {
		bool in = hwloc_bitmap_intersects(core->cpuset, set);

		if (in && state == 2)
			fail_msg("not contiguous at core %u", core->os_index);
		if (in)
			state = 1;
		else if (state == 1)
			state = 2;
	}
}

/* Each cache of this depth is either wholly in set or not in it. */
static void check_whole_caches(const struct aff_topo *t, hwloc_obj_type_t type,
			       hwloc_const_bitmap_t set)
{
	hwloc_obj_t c = NULL;
	int n = 0;

	while ((c = hwloc_get_next_obj_by_type(t->hw, type, c))) {
		if (hwloc_bitmap_intersects(c->cpuset, set))
			assert_true(hwloc_bitmap_isincluded(c->cpuset, set));
		n++;
	}
	assert_true(n > 0);
}

static hwloc_const_bitmap_t numa_cpus(const struct aff_topo *t, unsigned os)
{
	hwloc_obj_t n = hwloc_get_numanode_obj_by_os_index(t->hw, os);

	assert_non_null(n);
	return n->cpuset;
}

/*
 * The ranks' CPUs are disjoint, whole, contiguous, within allowed and
 * within their GPU's NUMA node, and together cover those nodes' allowed
 * CPUs. numa[r] is rank r's node from the fixture description.
 */
static void check_split(const struct aff_topo *t, const struct aff_plan *p,
			const int *numa, hwloc_const_bitmap_t allowed)
{
	hwloc_bitmap_t seen = hwloc_bitmap_alloc(), want = hwloc_bitmap_alloc();
	size_t r, n = aff_plan_rank_count(p);

	for (r = 0; r < n; r++) {
		hwloc_bitmap_t c = fx_cpus(aff_plan_rank_cpus(p, r));

		assert_false(hwloc_bitmap_iszero(c));
		assert_false(hwloc_bitmap_intersects(c, seen));
		hwloc_bitmap_or(seen, seen, c);
		check_whole_cores(t, c);
		check_contiguous(t, c);
		assert_true(hwloc_bitmap_isincluded(c, numa_cpus(t, (unsigned)numa[r])));
		if (allowed)
			assert_true(hwloc_bitmap_isincluded(c, allowed));
		hwloc_bitmap_or(want, want, numa_cpus(t, (unsigned)numa[r]));
		hwloc_bitmap_free(c);
	}
	if (allowed)
		hwloc_bitmap_and(want, want, allowed);
	assert_true(hwloc_bitmap_isequal(seen, want));
	hwloc_bitmap_free(seen);
	hwloc_bitmap_free(want);
}

static void test_dgx(void **state)
{
	static const int numa[8] = { 0, 0, 0, 0, 1, 1, 1, 1 };
	struct aff_topo *t = fx_load("dgx-h100");
	struct aff_plan *p = fx_plan(t, NULL);
	size_t r;

	(void)state;
	check_split(t, p, numa, NULL);
	/* 56 cores per node, 4 GPUs: 14 cores, 28 threads each. */
	for (r = 0; r < 8; r++) {
		hwloc_bitmap_t c = fx_cpus(aff_plan_rank_cpus(p, r));

		assert_int_equal(hwloc_bitmap_weight(c), 28);
		assert_string_equal(aff_plan_rank_mems(p, r), r < 4 ? "0" : "1");
		hwloc_bitmap_free(c);
	}
	aff_plan_unref(p);
	aff_topo_unref(t);
}

static void test_allowed(void **state)
{
	static const int numa[8] = { 0, 0, 0, 0, 1, 1, 1, 1 };
	/* Half of each node's cores, both threads. */
	const char *list = "0-27,112-139,56-83,168-195";
	struct aff_plan_spec spec = { .allowed_cpus = list };
	struct aff_topo *t = fx_load("dgx-h100");
	struct aff_plan *p = fx_plan(t, &spec);
	hwloc_bitmap_t allowed = fx_cpus(list);
	char err[256] = "";
	size_t r;

	(void)state;
	check_split(t, p, numa, allowed);
	for (r = 0; r < 8; r++) {
		hwloc_bitmap_t c = fx_cpus(aff_plan_rank_cpus(p, r));

		assert_int_equal(hwloc_bitmap_weight(c), 14);
		hwloc_bitmap_free(c);
	}
	aff_plan_unref(p);
	hwloc_bitmap_free(allowed);

	/* Nothing of the node allowed, or garbage: refused. */
	spec.allowed_cpus = "500-600";
	p = NULL;
	assert_int_equal(aff_plan_new(t, &spec, &p, err, sizeof(err)), -EINVAL);
	assert_null(p);
	spec.allowed_cpus = "zero";
	assert_int_equal(aff_plan_new(t, &spec, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "zero"));
	aff_topo_unref(t);
}

static void test_cache_domains(void **state)
{
	/* nested-switch: 2 GPUs per node, 4 L3s of 4 cores per node. */
	static const int nested[4] = { 0, 0, 1, 1 };
	static const int nps4[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	struct aff_topo *t = fx_load("nested-switch");
	struct aff_plan *p = fx_plan(t, NULL);
	size_t r;

	(void)state;
	check_split(t, p, nested, NULL);
	for (r = 0; r < 4; r++) {
		hwloc_bitmap_t c = fx_cpus(aff_plan_rank_cpus(p, r));

		check_whole_caches(t, HWLOC_OBJ_L3CACHE, c);
		assert_int_equal(hwloc_bitmap_weight(c), 16);
		hwloc_bitmap_free(c);
	}
	aff_plan_unref(p);
	aff_topo_unref(t);

	/* amd-nps4: one GPU per NUMA node gets the whole node, 2 L3s. */
	t = fx_load("amd-nps4");
	p = fx_plan(t, NULL);
	check_split(t, p, nps4, NULL);
	for (r = 0; r < 8; r++) {
		hwloc_bitmap_t c = fx_cpus(aff_plan_rank_cpus(p, r));
		char want[8];

		check_whole_caches(t, HWLOC_OBJ_L3CACHE, c);
		assert_true(hwloc_bitmap_isequal(c, numa_cpus(t, (unsigned)r)));
		snprintf(want, sizeof(want), "%zu", r);
		assert_string_equal(aff_plan_rank_mems(p, r), want);
		hwloc_bitmap_free(c);
	}
	aff_plan_unref(p);
	aff_topo_unref(t);
}

static void test_cache_split_inside(void **state)
{
	/* 4 GPUs of tie.topo on one node of 8 cores: 2 cores each, and with a
	 * cpuset of one core per GPU still disjoint and whole. */
	static const int numa[6] = { 0, 0, 0, 0, 1, 1 };
	struct aff_plan_spec spec = { .allowed_cpus = "0-3,16-19,8-15,24-31" };
	struct aff_topo *t = fx_load("tie");
	struct aff_plan *p = fx_plan(t, NULL);
	hwloc_bitmap_t allowed;
	size_t r;

	(void)state;
	check_split(t, p, numa, NULL);
	for (r = 0; r < 4; r++) {
		hwloc_bitmap_t c = fx_cpus(aff_plan_rank_cpus(p, r));

		assert_int_equal(hwloc_bitmap_weight(c), 4);
		hwloc_bitmap_free(c);
	}
	aff_plan_unref(p);
	p = fx_plan(t, &spec);
	allowed = fx_cpus(spec.allowed_cpus);
	check_split(t, p, numa, allowed);
	hwloc_bitmap_free(allowed);
	aff_plan_unref(p);
	aff_topo_unref(t);
}

static void test_grace_cpuless(void **state)
{
	static const int numa[4] = { 0, 0, 0, 0 };
	struct aff_topo *t = fx_load("grace");
	struct aff_plan *p = fx_plan(t, NULL);
	size_t r;

	(void)state;
	check_split(t, p, numa, NULL);
	for (r = 0; r < 4; r++) {
		hwloc_bitmap_t c = fx_cpus(aff_plan_rank_cpus(p, r));

		/* 72 cores, no SMT, 4 GPUs. */
		assert_int_equal(hwloc_bitmap_weight(c), 18);
		/* Memory on the CPU node, never on the GPU-memory nodes 1-4. */
		assert_string_equal(aff_plan_rank_mems(p, r), "0");
		hwloc_bitmap_free(c);
	}
	aff_plan_unref(p);
	aff_topo_unref(t);
}

static void test_unknown_numa(void **state)
{
	struct aff_topo *t = fx_load("unknown-numa");
	struct aff_plan *p = fx_plan(t, NULL);
	size_t r, w, found = 0;

	(void)state;
	for (r = 0; r < 4; r++) {
		hwloc_bitmap_t c = fx_cpus(aff_plan_rank_cpus(p, r));

		/* Not narrowed: every PU of the machine (16 cores x 2). */
		assert_int_equal(hwloc_bitmap_weight(c), 32);
		assert_true(hwloc_bitmap_isequal(c, hwloc_get_root_obj(t->hw)->cpuset));
		assert_null(aff_plan_rank_mems(p, r));
		assert_string_equal(fx_env(p, r, "RAILBIND_MEMS"), "");
		hwloc_bitmap_free(c);
	}
	for (w = 0; w < p->nwarn; w++)
		if (!strcmp(p->warn[w].id, "numa-unknown")) {
			found++;
			assert_non_null(strstr(p->warn[w].message, p->warn[w].subject));
		}
	assert_int_equal(found, 4);
	aff_plan_unref(p);
	aff_topo_unref(t);
}

static void test_split_direct(void **state)
{
	/* aff_split_cpus on two of the eight DGX GPUs of node 1: halves. */
	struct aff_topo *t = fx_load("dgx-h100");
	hwloc_bitmap_t out[2] = { hwloc_bitmap_alloc(), hwloc_bitmap_alloc() };
	int gpu[2] = { 5, 7 };

	(void)state;
	assert_int_equal(aff_split_cpus(t, gpu, 2, t->all_cpus, out), 0);
	assert_int_equal(hwloc_bitmap_weight(out[0]), 56);
	assert_int_equal(hwloc_bitmap_weight(out[1]), 56);
	assert_false(hwloc_bitmap_intersects(out[0], out[1]));
	assert_true(hwloc_bitmap_isincluded(out[0], numa_cpus(t, 1)));
	assert_true(hwloc_bitmap_isincluded(out[1], numa_cpus(t, 1)));
	hwloc_bitmap_free(out[0]);
	hwloc_bitmap_free(out[1]);
	aff_topo_unref(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dgx),
		cmocka_unit_test(test_allowed),
		cmocka_unit_test(test_cache_domains),
		cmocka_unit_test(test_cache_split_inside),
		cmocka_unit_test(test_grace_cpuless),
		cmocka_unit_test(test_unknown_numa),
		cmocka_unit_test(test_split_direct),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
