// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Rail assignment, the per-rank environment and the railbind.plan/1
 * document. Expected rails come from the fixture descriptions: which NICs
 * sit on which GPU's switch.
 */
#include <json-c/json.h>

#include <ftw.h>
#include <sys/stat.h>

#include "fixture.h"

static size_t rank_of(const struct aff_plan *p, const char *pci)
{
	char full[32];
	size_t r;

	snprintf(full, sizeof(full), "0000:%s", pci);
	for (r = 0; r < aff_plan_rank_count(p); r++)
		if (!strcmp(aff_plan_rank_gpu(p, r), full))
			return r;
	fail_msg("no rank on GPU %s", full);
	return 0;
}

static bool rank_has_nic(const struct aff_plan *p, size_t r, const char *nic)
{
	size_t i;

	for (i = 0; i < aff_plan_rank_nic_count(p, r); i++)
		if (!strcmp(aff_plan_rank_nic(p, r, i), nic))
			return true;
	return false;
}

static void test_p4d_shared(void **state)
{
	/* p4d.topo: bus 10, 20, 90, a0 each hold two GPUs and one EFA. */
	static const struct {
		const char *gpu, *nic;
	} want[] = {
		{ "10:1c.0", "rdmap16s27" },  { "10:1d.0", "rdmap16s27" },
		{ "20:1c.0", "rdmap32s27" },  { "20:1d.0", "rdmap32s27" },
		{ "90:1c.0", "rdmap144s27" }, { "90:1d.0", "rdmap144s27" },
		{ "a0:1c.0", "rdmap160s27" }, { "a0:1d.0", "rdmap160s27" },
	};
	struct aff_topo *t = fx_load("p4d");
	struct aff_plan *p = fx_plan(t, NULL);
	size_t i, r;

	(void)state;
	assert_int_equal(aff_plan_rank_count(p), 8);
	for (i = 0; i < 8; i++) {
		r = rank_of(p, want[i].gpu);
		/* Ranks follow PCI order. */
		assert_int_equal(r, i);
		assert_int_equal(aff_plan_rank_nic_count(p, r), 1);
		assert_string_equal(aff_plan_rank_nic(p, r, 0), want[i].nic);
	}
	aff_plan_unref(p);
	aff_topo_unref(t);
}

static void test_p5_four_nics(void **state)
{
	/* p5.topo: each switch's GPU bus and its first EFA's rdmap number. */
	static const struct {
		const char *gpu;
		int first;
	} sw[] = { { "53:00.0", 79 },  { "64:00.0", 96 },  { "75:00.0", 113 },
		   { "86:00.0", 130 }, { "97:00.0", 147 }, { "a8:00.0", 164 },
		   { "b9:00.0", 181 }, { "ca:00.0", 198 } };
	struct aff_topo *t = fx_load("p5");
	struct aff_plan *p = fx_plan(t, NULL);
	char name[32];
	size_t i, r;
	int k;

	(void)state;
	for (i = 0; i < 8; i++) {
		r = rank_of(p, sw[i].gpu);
		assert_int_equal(aff_plan_rank_nic_count(p, r), 4);
		for (k = 0; k < 4; k++) {
			snprintf(name, sizeof(name), "rdmap%ds0", sw[i].first + k);
			assert_true(rank_has_nic(p, r, name));
		}
		/* The primary is the switch's first NIC in bus order. */
		snprintf(name, sizeof(name), "rdmap%ds0", sw[i].first);
		assert_string_equal(aff_plan_rank_nic(p, r, 0), name);
	}
	aff_plan_unref(p);
	aff_topo_unref(t);
}

/* dgx-h100.topo: each GPU and the compute NIC on its own switch. */
static const struct {
	const char *gpu, *nic, *pci;
} dgx[] = {
	{ "1b:00.0", "mlx5_0", "0000:18:00.0" }, { "43:00.0", "mlx5_3", "0000:40:00.0" },
	{ "52:00.0", "mlx5_4", "0000:4f:00.0" }, { "61:00.0", "mlx5_5", "0000:5e:00.0" },
	{ "9d:00.0", "mlx5_6", "0000:9a:00.0" }, { "c3:00.0", "mlx5_9", "0000:c0:00.0" },
	{ "d1:00.0", "mlx5_10", "0000:ce:00.0" }, { "df:00.0", "mlx5_11", "0000:dc:00.0" },
};

static void test_dgx_own_switch(void **state)
{
	struct aff_topo *t = fx_load("dgx-h100");
	struct aff_plan *p = fx_plan(t, NULL);
	size_t i, r;

	(void)state;
	/* Not mlx5_<rank>: names skip the storage NICs. */
	for (i = 0; i < 8; i++) {
		r = rank_of(p, dgx[i].gpu);
		assert_int_equal(r, i);
		assert_int_equal(aff_plan_rank_nic_count(p, r), 1);
		assert_string_equal(aff_plan_rank_nic(p, r, 0), dgx[i].nic);
		assert_null(aff_plan_rank_nic(p, r, 1));
	}
	assert_int_equal(p->nwarn, 0);
	aff_plan_unref(p);
	aff_topo_unref(t);
}

static void test_tie_even(void **state)
{
	struct aff_topo *t = fx_load("tie");
	struct aff_plan *p = fx_plan(t, NULL);
	int primary[2] = { 0, 0 };
	size_t r;

	(void)state;
	/* NUMA 0: four GPUs on two NICs, two each as primary. */
	for (r = 0; r < 4; r++) {
		const char *nic = aff_plan_rank_nic(p, r, 0);

		assert_non_null(nic);
		assert_true(!strcmp(nic, "mlx5_0") || !strcmp(nic, "mlx5_1"));
		primary[nic[5] - '0']++;
	}
	assert_int_equal(primary[0], 2);
	assert_int_equal(primary[1], 2);
	/* NUMA 1: two GPUs on four NICs, two each, none shared. */
	assert_int_equal(aff_plan_rank_nic_count(p, 4), 2);
	assert_int_equal(aff_plan_rank_nic_count(p, 5), 2);
	for (r = 0; r < 2; r++) {
		const char *nic = aff_plan_rank_nic(p, 4, r);

		assert_true(nic[5] >= '2' && nic[5] <= '5');
		assert_false(rank_has_nic(p, 5, nic));
	}
	aff_plan_unref(p);
	aff_topo_unref(t);
}

static void test_nested_tie_break(void **state)
{
	/* nested-switch.topo: GPU0 (PIX) and GPU1 (PXB) both want mlx5_0;
	 * GPU1 has nothing better, so it shares it. */
	struct aff_topo *t = fx_load("nested-switch");
	struct aff_plan *p = fx_plan(t, NULL);

	(void)state;
	assert_string_equal(aff_plan_rank_nic(p, 0, 0), "mlx5_0");
	assert_string_equal(aff_plan_rank_nic(p, 1, 0), "mlx5_0");
	assert_string_equal(aff_plan_rank_nic(p, 2, 0), "mlx5_1");
	assert_string_equal(aff_plan_rank_nic(p, 3, 0), "mlx5_2");
	aff_plan_unref(p);
	aff_topo_unref(t);
}

static void test_no_nic(void **state)
{
	struct aff_topo *t = fx_load("gpu-only");
	struct aff_plan *p = fx_plan(t, NULL);
	size_t r;

	(void)state;
	assert_int_equal(aff_topo_nic_count(t), 0);
	assert_int_equal(aff_plan_rank_count(p), 2);
	for (r = 0; r < 2; r++) {
		assert_int_equal(aff_plan_rank_nic_count(p, r), 0);
		assert_null(aff_plan_rank_nic(p, r, 0));
		assert_null(fx_env(p, r, "NCCL_IB_HCA"));
		assert_null(fx_env(p, r, "UCX_NET_DEVICES"));
		assert_string_equal(fx_env(p, r, "CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
	}
	aff_plan_unref(p);
	aff_topo_unref(t);
}

static void test_assign_direct(void **state)
{
	/* A subset of GPUs: each still gets only its own switch's NIC. */
	struct aff_topo *t = fx_load("dgx-h100");
	struct aff_rail_set out[2];
	int gpu[2] = { 1, 6 };
	size_t i;

	(void)state;
	assert_int_equal(aff_assign_rails(t, gpu, 2, out), 0);
	assert_int_equal(out[0].n, 1);
	assert_int_equal(out[1].n, 1);
	assert_string_equal(t->rail[out[0].rail[0]].name, dgx[1].nic);
	assert_string_equal(t->rail[out[1].rail[0]].name, dgx[6].nic);
	for (i = 0; i < 2; i++)
		free(out[i].rail);
	aff_topo_unref(t);
}

static void test_env(void **state)
{
	struct aff_plan_spec spec = { .flags = AFF_PLAN_ISOLATE_GPU };
	struct aff_topo *t = fx_load("dgx-h100");
	struct aff_plan *p = fx_plan(t, NULL), *iso;
	/* The node's eight compute rails on every rank, not the storage pair. */
	const char *node = "=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1";
	char want[64];
	size_t r, n;

	(void)state;
	for (r = 0; r < 8; r++) {
		assert_string_equal(fx_env(p, r, "NCCL_IB_HCA"), node);
		/* No subnet prefix known: the node's list, one rail a transfer. */
		assert_string_equal(fx_env(p, r, "UCX_NET_DEVICES"), node + 1);
		assert_string_equal(fx_env(p, r, "UCX_MAX_RNDV_RAILS"), "1");
		assert_null(fx_env(p, r, "NCCL_SOCKET_IFNAME"));
		assert_string_equal(fx_env(p, r, "RAILBIND_NICS"), dgx[r].nic);
		assert_string_equal(fx_env(p, r, "CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
		assert_null(fx_env(p, r, "CUDA_VISIBLE_DEVICES"));
		assert_null(fx_env(p, r, "ROCR_VISIBLE_DEVICES"));
		assert_string_equal(fx_env(p, r, "RAILBIND_GPU"), aff_plan_rank_gpu(p, r));
		assert_string_equal(fx_env(p, r, "RAILBIND_CPUS"), aff_plan_rank_cpus(p, r));
	}
	iso = fx_plan(t, &spec);
	for (r = 0; r < 8; r++) {
		snprintf(want, sizeof(want), "%zu", r);
		assert_string_equal(fx_env(iso, r, "CUDA_VISIBLE_DEVICES"), want);
	}
	aff_plan_unref(iso);
	aff_plan_unref(p);
	aff_topo_unref(t);

	/*
	 * p5: its 32 EFA ports in NCCL_IB_HCA (NCCL's limit, exactly), the
	 * rank's own four in RAILBIND_NICS, primary first; AMD: ROCR_...
	 */
	t = fx_load("p5");
	p = fx_plan(t, NULL);
	assert_non_null(strstr(fx_env(p, 0, "NCCL_IB_HCA"), "=rdmap79s0:1,rdmap80s0:1,"));
	assert_non_null(strstr(fx_env(p, 0, "NCCL_IB_HCA"), ",rdmap201s0:1"));
	assert_string_equal(fx_env(p, 7, "NCCL_IB_HCA"), fx_env(p, 0, "NCCL_IB_HCA"));
	for (r = 0, n = 0; fx_env(p, 0, "NCCL_IB_HCA")[r]; r++)
		n += fx_env(p, 0, "NCCL_IB_HCA")[r] == ',';
	assert_int_equal(n + 1, 32);
	assert_int_equal(p->nwarn, 0);
	assert_string_equal(fx_env(p, 0, "RAILBIND_NICS"),
			    "rdmap79s0,rdmap80s0,rdmap81s0,rdmap82s0");
	aff_plan_unref(p);
	aff_topo_unref(t);
	t = fx_load("amd-nps4");
	iso = fx_plan(t, &spec);
	assert_string_equal(fx_env(iso, 3, "ROCR_VISIBLE_DEVICES"), "3");
	assert_null(fx_env(iso, 3, "CUDA_VISIBLE_DEVICES"));
	aff_plan_unref(iso);
	aff_topo_unref(t);
}

static void test_visible(void **state)
{
	/* By index and by PCI address; ranks still in PCI order. */
	struct aff_plan_spec spec = { .visible_gpus = "0000:df:00.0,2" };
	struct aff_topo *t = fx_load("dgx-h100");
	struct aff_plan *p = fx_plan(t, &spec);
	char err[512] = "";

	(void)state;
	assert_int_equal(aff_plan_rank_count(p), 2);
	assert_string_equal(aff_plan_rank_gpu(p, 0), "0000:52:00.0");
	assert_string_equal(aff_plan_rank_gpu(p, 1), "0000:df:00.0");
	assert_string_equal(aff_plan_rank_nic(p, 1, 0), "mlx5_11");
	aff_plan_unref(p);
	spec.visible_gpus = "8";
	p = NULL;
	assert_int_equal(aff_plan_new(t, &spec, &p, err, sizeof(err)), -EINVAL);
	assert_null(p);
	assert_non_null(strstr(err, "\"8\""));
	aff_topo_unref(t);
}

static void test_plan_json(void **state)
{
	struct aff_topo *t = fx_load("dgx-h100");
	struct aff_plan *p = fx_plan(t, NULL);
	json_object *o, *ranks, *rk, *gpu, *nics, *nic, *env;
	char *s = NULL;
	size_t r;

	(void)state;
	assert_int_equal(aff_plan_json(p, 0, &s), 0);
	o = json_tokener_parse(s);
	assert_non_null(o);
	assert_string_equal(json_object_get_string(fx_json(o, "schema")), "railbind.plan/1");
	assert_string_equal(json_object_get_string(fx_json(o, "host")), "dgx-h100");
	assert_true(json_object_is_type(fx_json(o, "warnings"), json_type_array));
	ranks = fx_json(o, "ranks");
	assert_int_equal(json_object_array_length(ranks), 8);
	for (r = 0; r < 8; r++) {
		rk = json_object_array_get_idx(ranks, r);
		assert_int_equal(json_object_get_int(fx_json(rk, "local_rank")), r);
		gpu = fx_json(rk, "gpu");
		assert_string_equal(json_object_get_string(fx_json(gpu, "pci")),
				    aff_plan_rank_gpu(p, r));
		assert_int_equal(json_object_get_int(fx_json(gpu, "index")), r);
		assert_int_equal(json_object_get_int(fx_json(gpu, "numa")), r / 4);
		nics = fx_json(rk, "nics");
		assert_int_equal(json_object_array_length(nics), 1);
		nic = json_object_array_get_idx(nics, 0);
		assert_string_equal(json_object_get_string(fx_json(nic, "name")), dgx[r].nic);
		assert_string_equal(json_object_get_string(fx_json(nic, "pci")), dgx[r].pci);
		assert_string_equal(json_object_get_string(fx_json(nic, "path")), "PIX");
		assert_int_equal(json_object_get_int(fx_json(nic, "port")), 1);
		assert_true(json_object_is_type(fx_json(nic, "netdev"), json_type_string));
		assert_string_equal(json_object_get_string(fx_json(rk, "cpus")),
				    aff_plan_rank_cpus(p, r));
		assert_string_equal(json_object_get_string(fx_json(rk, "mems")),
				    r < 4 ? "0" : "1");
		env = fx_json(rk, "env");
		assert_true(json_object_is_type(env, json_type_object));
		assert_string_equal(json_object_get_string(fx_json(env, "NCCL_IB_HCA")),
				    fx_env(p, r, "NCCL_IB_HCA"));
	}
	json_object_put(o);
	free(s);
	aff_plan_unref(p);
	aff_topo_unref(t);
}

/*
 * UCX_NET_DEVICES is the rank's own rail only where every rail is on one
 * configured IB subnet prefix (UCX's reachability test, ib_iface.c); the
 * default fe80:: proves nothing, and one rail elsewhere makes it the node's.
 */
static void test_ucx_subnet(void **state)
{
	struct aff_topo *t = fx_load("dgx-h100");
	struct aff_plan *p;
	size_t i;

	(void)state;
	for (i = 0; i < t->nrail; i++)
		t->rail[i].subnet = 0xfec0000000000001ull;
	p = fx_plan(t, NULL);
	assert_string_equal(fx_env(p, 1, "UCX_NET_DEVICES"), "mlx5_3:1");
	assert_null(fx_env(p, 1, "UCX_MAX_RNDV_RAILS"));
	assert_string_equal(fx_env(p, 1, "NCCL_IB_HCA"), fx_env(p, 0, "NCCL_IB_HCA"));
	aff_plan_unref(p);
	t->rail[fx_rail(t, "mlx5_9")].subnet = 0xfec0000000000002ull;
	p = fx_plan(t, NULL);
	assert_string_equal(fx_env(p, 1, "UCX_MAX_RNDV_RAILS"), "1");
	assert_non_null(strstr(fx_env(p, 1, "UCX_NET_DEVICES"), "mlx5_0:1,mlx5_3:1,"));
	aff_plan_unref(p);
	for (i = 0; i < t->nrail; i++)
		t->rail[i].subnet = 0xfe80000000000000ull;
	p = fx_plan(t, NULL);
	assert_string_equal(fx_env(p, 1, "UCX_MAX_RNDV_RAILS"), "1");
	aff_plan_unref(p);
	aff_topo_unref(t);
}

static void mkdirs(const char *root, const char *rel)
{
	char path[4096], *s;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (s = path + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/*
 * A pod that exposes only some rails' uverbs devices: the plan lists what
 * the process can open and warns, the variables stay the node's.
 */
static void test_uverbs_hidden(void **state)
{
	struct aff_topo *t = fx_load("dgx-h100");
	struct aff_plan *p;
	char root[256], dir[300], path[512];
	const char *rails[] = { "mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6",
				"mlx5_9", "mlx5_10", "mlx5_11" };
	size_t i;

	(void)state;
	fx_mkdtemp(root, sizeof(root));
	mkdirs(root, "dev/infiniband");
	snprintf(dir, sizeof(dir), "%s/dev/infiniband", root);
	for (i = 0; i < 8; i++) {
		char rel[128];

		snprintf(rel, sizeof(rel), "sys/class/infiniband/%s/device/infiniband_verbs/uverbs%zu",
			 rails[i], i);
		mkdirs(root, rel);
		/* Every device but mlx5_3's (uverbs1) is in the pod. */
		if (i != 1) {
			snprintf(rel, sizeof(rel), "uverbs%zu", i);
			fx_write(dir, rel, "", path, sizeof(path));
		}
	}
	free(t->ctx->root);
	t->ctx->root = strdup(root);
	t->src = AFF_SRC_LIVE;
	p = fx_plan(t, NULL);
	assert_int_equal(p->nuverbs, 8);
	for (i = 0; i < 8; i++) {
		assert_string_equal(p->uverbs[i].hca, rails[i]);
		assert_int_equal(p->uverbs[i].openable, i != 1);
	}
	assert_int_equal(p->nwarn, 1);
	assert_string_equal(p->warn[0].id, "rails-hidden");
	assert_non_null(strstr(p->warn[0].message, "7 of the node's 8"));
	assert_non_null(strstr(p->warn[0].message, "mlx5_3 uverbs1"));
	assert_non_null(strstr(fx_env(p, 0, "NCCL_IB_HCA"), "mlx5_3:1"));
	aff_plan_unref(p);
	t->src = AFF_SRC_HWLOC;
	p = fx_plan(t, NULL);
	assert_null(p->uverbs);
	assert_int_equal(p->nwarn, 0);
	aff_plan_unref(p);
	aff_topo_unref(t);
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_p4d_shared),
		cmocka_unit_test(test_p5_four_nics),
		cmocka_unit_test(test_dgx_own_switch),
		cmocka_unit_test(test_tie_even),
		cmocka_unit_test(test_nested_tie_break),
		cmocka_unit_test(test_no_nic),
		cmocka_unit_test(test_assign_direct),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_visible),
		cmocka_unit_test(test_plan_json),
		cmocka_unit_test(test_ucx_subnet),
		cmocka_unit_test(test_uverbs_hidden),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
