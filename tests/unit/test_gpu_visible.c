// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * GPUs named by identity (gpu_visible.c): on the DGX H100 fixture, each GPU
 * given a UUID and GPU1 two MIG instances as NVML would report them, every
 * spelling of a GPU selects the same ranks, MIG instances stand for their
 * parent, malformed and unknown names are refused, and a claim is checked
 * against a process's own list whatever the spelling of either.
 */
#include "fixture.h"
#include "gpu_ident.h"

static char *uuid_of(size_t g)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "GPU-%08zx-1111-2222-3333-44445555666%zu", g + 0xabc0, g);
	return strdup(buf);
}

/* dgx-h100 with UUIDs; GPU1 in MIG mode with instances gi 1 and 2. */
static struct aff_topo *identified(void)
{
	struct aff_topo *t = fx_load("dgx-h100");
	size_t g;

	for (g = 0; t && g < t->ngpu; g++) {
		struct aff_gident *id = calloc(1, sizeof(*id));

		assert_non_null(id);
		id->minor = (int)g;
		id->nvlinks = id->c2c = -1;
		id->mig = g == 1;
		id->uuid = uuid_of(g);
		if (g == 1) {
			id->migdev = calloc(2, sizeof(*id->migdev));
			assert_non_null(id->migdev);
			id->migdev[0] = (struct aff_gmig){ strdup("MIG-a0000000-0000-4000-8000-000000000001"), 1, 0 };
			id->migdev[1] = (struct aff_gmig){ strdup("MIG-a0000000-0000-4000-8000-000000000002"), 2, 0 };
			id->nmig = 2;
		}
		t->dev[t->gpus[g]].gident = id;
	}
	return t;
}

static void ranks(struct aff_topo *t, const char *visible, const char *expect)
{
	char got[256] = "", err[512] = "";
	int *gpu, *mig;
	size_t n, i;

	assert_int_equal(aff_visible_select(t, visible, &gpu, &mig, &n, err, sizeof(err)), 0);
	for (i = 0; i < n; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%d/%d", i ? " " : "",
			 gpu[i], mig[i]);
	free(gpu);
	free(mig);
	assert_string_equal(got, expect);
}

static void every_spelling_is_one_gpu(void **state)
{
	struct aff_topo *t = identified();
	char *u2 = uuid_of(2), prefix[16], upper[64];
	size_t i;

	(void)state;
	snprintf(prefix, sizeof(prefix), "%.12s", u2);
	for (i = 0; u2[i]; i++)
		upper[i] = (char)(u2[i] >= 'a' && u2[i] <= 'f' ? u2[i] - 32 : u2[i]);
	upper[i] = '\0';
	ranks(t, "2", "2/-1");
	ranks(t, "0000:52:00.0", "2/-1");
	ranks(t, "52:00.0", "2/-1");
	ranks(t, u2, "2/-1");
	ranks(t, prefix, "2/-1");
	ranks(t, upper, "2/-1");
	/* One GPU named three ways is one rank; ranks follow PCI order. */
	ranks(t, "7,2,0000:52:00.0,GPU-0000abc7", "2/-1 7/-1");
	ranks(t, NULL, "0/-1 1/-1 2/-1 3/-1 4/-1 5/-1 6/-1 7/-1");
	ranks(t, "all", "0/-1 1/-1 2/-1 3/-1 4/-1 5/-1 6/-1 7/-1");
	ranks(t, "none", "");
	ranks(t, "void", "");
	free(u2);
	aff_topo_unref(t);
}

static void mig_instances_stand_for_their_gpu(void **state)
{
	struct aff_topo *t = identified();
	char *u1 = uuid_of(1), legacy[128];

	(void)state;
	ranks(t, "MIG-a0000000-0000-4000-8000-000000000002", "1/1");
	ranks(t, "MIG-a0000000-0000-4000-8000-000000000002,3,MIG-a0000000-0000-4000-8000-000000000001",
	      "1/0 1/1 3/-1");
	snprintf(legacy, sizeof(legacy), "MIG-%s/2/0", u1);
	ranks(t, legacy, "1/1");
	free(u1);
	aff_topo_unref(t);
}

static void refused(struct aff_topo *t, const char *visible, const char *why)
{
	char err[512] = "";
	int *gpu = NULL, *mig = NULL;
	size_t n = 99;

	assert_int_equal(aff_visible_select(t, visible, &gpu, &mig, &n, err, sizeof(err)), -EINVAL);
	assert_null(gpu);
	assert_int_equal(n, 0);
	if (!strstr(err, why))
		fail_msg("visible \"%s\": \"%s\" does not say \"%s\"", visible, err, why);
}

static void unknown_and_malformed_are_refused(void **state)
{
	struct aff_topo *t = identified();
	struct aff_topo *bare = fx_load("dgx-h100");

	(void)state;
	refused(t, "8", "no GPU index 8: this node has 8 GPUs");
	refused(t, "GPU-0000abc", "is the start of 8 GPUs' UUIDs");
	refused(t, "GPU-ffffffff", "no GPU with UUID GPU-ffffffff on this node");
	refused(t, "MIG-ffffffff", "no MIG instance MIG-ffffffff");
	refused(t, "0000:99:00.0", "no GPU at PCI address 0000:99:00.0");
	refused(t, "mlx5_0", "is neither a GPU index below 8");
	refused(t, "1,,x", "\"x\" is neither");
	/* Without any identity, a UUID says why it cannot be found. */
	refused(bare, "GPU-abc", "its GPUs' UUIDs are unknown");
	aff_topo_unref(bare);
	aff_topo_unref(t);
}

static void claims_within_their_own(void **state)
{
	struct aff_topo *t = identified();
	char *u3 = uuid_of(3), own[256], err[512];

	(void)state;
	snprintf(own, sizeof(own), "0,1,%s", u3);
	assert_int_equal(aff_visible_within(t, "3", own, err, sizeof(err)), 1);
	assert_int_equal(aff_visible_within(t, "0000:61:00.0,0", own, err, sizeof(err)), 1);
	assert_int_equal(aff_visible_within(t, "MIG-a0000000-0000-4000-8000-000000000001", own,
					    err, sizeof(err)), 1);
	assert_int_equal(aff_visible_within(t, "2", own, err, sizeof(err)), 0);
	assert_int_equal(aff_visible_within(t, "3,4", own, err, sizeof(err)), 0);
	/* An instance of one's own does not give its whole GPU, nor its sibling. */
	assert_int_equal(aff_visible_within(t, "1", "MIG-a0000000-0000-4000-8000-000000000001",
					    err, sizeof(err)), 0);
	assert_int_equal(aff_visible_within(t, "MIG-a0000000-0000-4000-8000-000000000002",
					    "MIG-a0000000-0000-4000-8000-000000000001", err,
					    sizeof(err)), 0);
	assert_int_equal(aff_visible_within(t, "7", NULL, err, sizeof(err)), 1);
	assert_int_equal(aff_visible_within(t, "GPU-nope", own, err, sizeof(err)), -EINVAL);
	free(u3);
	aff_topo_unref(t);
}

/* The plan of a MIG claim: the parent's rails and locality, CPUs split. */
static void plans_by_identity(void **state)
{
	struct aff_plan_spec spec = { .flags = AFF_PLAN_ISOLATE_GPU };
	struct aff_topo *t = identified();
	struct aff_plan *p = NULL;
	char err[512] = "";
	const char *const *env;
	size_t i;
	bool mig = false, uuid = false, cuda = false;

	(void)state;
	spec.visible_gpus = "MIG-a0000000-0000-4000-8000-000000000002,MIG-a0000000-0000-4000-8000-000000000001";
	assert_int_equal(aff_plan_new(t, &spec, &p, err, sizeof(err)), 0);
	assert_int_equal(aff_plan_rank_count(p), 2);
	assert_string_equal(aff_plan_rank_gpu(p, 0), "0000:43:00.0");
	assert_string_equal(aff_plan_rank_gpu(p, 1), "0000:43:00.0");
	assert_string_equal(aff_plan_rank_nic(p, 0, 0), "mlx5_3");
	assert_string_not_equal(aff_plan_rank_cpus(p, 0), aff_plan_rank_cpus(p, 1));
	env = aff_plan_rank_env(p, 1);
	for (i = 0; env[i]; i++) {
		mig |= !strcmp(env[i], "RAILBIND_MIG_UUID=MIG-a0000000-0000-4000-8000-000000000002");
		cuda |= !strcmp(env[i], "CUDA_VISIBLE_DEVICES=MIG-a0000000-0000-4000-8000-000000000002");
		uuid |= !strncmp(env[i], "RAILBIND_GPU_UUID=GPU-0000abc1-", 31);
	}
	assert_true(mig && cuda && uuid);
	aff_plan_unref(p);
	aff_topo_unref(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_spelling_is_one_gpu),
		cmocka_unit_test(mig_instances_stand_for_their_gpu),
		cmocka_unit_test(unknown_and_malformed_are_refused),
		cmocka_unit_test(claims_within_their_own),
		cmocka_unit_test(plans_by_identity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
