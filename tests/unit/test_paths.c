// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * GPU-NIC path classes, derived from where the fixture descriptions put
 * each device, and the railbind.topo/1 document that carries them.
 */
#include <json-c/json.h>

#include "fixture.h"

static void expect_path(const struct aff_topo *t, const char *gpu,
			const char *nic, enum aff_path want)
{
	enum aff_path got = aff_topo_path(t, fx_gpu(t, gpu), fx_rail(t, nic));

	if (got != want)
		fail_msg("%s - %s: %s, expected %s", gpu, nic,
			 aff_path_name(got) ? aff_path_name(got) : "?",
			 aff_path_name(want));
}

static void test_path_names(void **state)
{
	enum aff_path p;

	(void)state;
	assert_string_equal(aff_path_name(AFF_PATH_PIX), "PIX");
	assert_string_equal(aff_path_name(AFF_PATH_SYS), "SYS");
	assert_null(aff_path_name(AFF_PATH_NONE));
	assert_null(aff_path_name((enum aff_path)42));
	assert_int_equal(aff_path_from_name("NODE", &p), 0);
	assert_int_equal(p, AFF_PATH_NODE);
	assert_int_equal(aff_path_from_name("node", &p), -EINVAL);
	assert_int_equal(aff_path_from_name(NULL, &p), -EINVAL);
}

static void test_nested_switch(void **state)
{
	struct aff_topo *t = fx_load("nested-switch");

	(void)state;
	/* Same sub-switch. */
	expect_path(t, "07:00.0", "mlx5_0", AFF_PATH_PIX);
	expect_path(t, "87:00.0", "mlx5_1", AFF_PATH_PIX);
	expect_path(t, "90:00.0", "mlx5_2", AFF_PATH_PIX);
	/* Sibling sub-switches under one top switch. */
	expect_path(t, "0f:00.0", "mlx5_0", AFF_PATH_PXB);
	expect_path(t, "87:00.0", "mlx5_2", AFF_PATH_PXB);
	expect_path(t, "90:00.0", "mlx5_1", AFF_PATH_PXB);
	/* Other package. */
	expect_path(t, "07:00.0", "mlx5_1", AFF_PATH_SYS);
	expect_path(t, "90:00.0", "mlx5_0", AFF_PATH_SYS);
	aff_topo_unref(t);
}

static void test_small_phb(void **state)
{
	struct aff_topo *t = fx_load("small");

	(void)state;
	expect_path(t, "02:00.0", "mlx5_0", AFF_PATH_PHB);
	expect_path(t, "03:00.0", "mlx5_0", AFF_PATH_PHB);
	aff_topo_unref(t);
}

static void test_two_rc_node(void **state)
{
	struct aff_topo *t = fx_load("two-rc-node");

	(void)state;
	expect_path(t, "17:00.0", "mlx5_0", AFF_PATH_NODE);
	aff_topo_unref(t);
}

/* dgx-h100.topo: each GPU, the compute NIC on its switch, its package. */
static const struct {
	const char *gpu, *nic;
	int pkg;
} dgx[] = {
	{ "1b:00.0", "mlx5_0", 0 },  { "43:00.0", "mlx5_3", 0 },
	{ "52:00.0", "mlx5_4", 0 },  { "61:00.0", "mlx5_5", 0 },
	{ "9d:00.0", "mlx5_6", 1 },  { "c3:00.0", "mlx5_9", 1 },
	{ "d1:00.0", "mlx5_10", 1 }, { "df:00.0", "mlx5_11", 1 },
};

static void test_dgx_matrix(void **state)
{
	static const struct {
		const char *nic;
		int pkg;
	} storage[] = { { "mlx5_1", 0 }, { "mlx5_2", 0 }, { "mlx5_7", 1 },
			{ "mlx5_8", 1 } };
	struct aff_topo *t = fx_load("dgx-h100");
	size_t g, n;

	(void)state;
	for (g = 0; g < 8; g++) {
		for (n = 0; n < 8; n++)
			expect_path(t, dgx[g].gpu, dgx[n].nic,
				    g == n ? AFF_PATH_PIX :
				    dgx[g].pkg == dgx[n].pkg ? AFF_PATH_NODE :
							       AFF_PATH_SYS);
		for (n = 0; n < 4; n++)
			expect_path(t, dgx[g].gpu, storage[n].nic,
				    dgx[g].pkg == storage[n].pkg ?
				    AFF_PATH_NODE : AFF_PATH_SYS);
	}
	/* Out of range. */
	assert_int_equal(aff_topo_path(t, 8, 0), AFF_PATH_NONE);
	assert_int_equal(aff_topo_path(t, 0, 12), AFF_PATH_NONE);
	aff_topo_unref(t);
}

static void test_unknown_numa(void **state)
{
	struct aff_topo *t = fx_load("unknown-numa");

	(void)state;
	/* Inside a switch the locality does not matter. */
	expect_path(t, "04:00.0", "mlx5_0", AFF_PATH_PIX);
	expect_path(t, "85:00.0", "mlx5_1", AFF_PATH_PIX);
	/*
	 * Across root complexes both have the whole machine as locality: the
	 * same CPU affinity, but nothing proves one NUMA node (DESIGN.md:
	 * NODE needs one and the same single node), so SYS. NCCL puts every
	 * numa_node -1 device under one CPU: PHB.
	 */
	expect_path(t, "04:00.0", "mlx5_1", AFF_PATH_SYS);
	expect_path(t, "84:00.0", "mlx5_0", AFF_PATH_SYS);
	assert_int_equal(aff_nccl_path_between(t, t->gpus[fx_gpu(t, "04:00.0")],
					       t->rail[fx_rail(t, "mlx5_1")].dev), AFF_PATH_PHB);
	aff_topo_unref(t);
}

/* Two root complexes on NUMA 0, one on NUMA 1, as NCCL writes them. */
static const char nccl_xml[] =
	"<system version=\"1\">\n"
	"  <cpu numaid=\"0\" affinity=\"0000ffff\" arch=\"x86_64\">\n"
	"    <pci busid=\"0000:01:00.0\" class=\"0x060400\">\n"
	"      <pci busid=\"0000:03:00.0\" class=\"0x030200\" vendor=\"0x10de\"><gpu dev=\"0\"/></pci>\n"
	"    </pci>\n"
	"    <pci busid=\"0000:11:00.0\" class=\"0x060400\">\n"
	"      <pci busid=\"0000:13:00.0\" class=\"0x020700\" vendor=\"0x15b3\">\n"
	"        <nic><net name=\"mlx5_0\" port=\"1\" guid=\"0x1\"/></nic>\n"
	"      </pci>\n"
	"    </pci>\n"
	"  </cpu>\n"
	"  <cpu numaid=\"1\" affinity=\"ffff0000\" arch=\"x86_64\">\n"
	"    <pci busid=\"0000:81:00.0\" class=\"0x060400\">\n"
	"      <pci busid=\"0000:83:00.0\" class=\"0x020700\" vendor=\"0x15b3\">\n"
	"        <nic><net name=\"mlx5_1\" port=\"1\" guid=\"0x2\"/></nic>\n"
	"      </pci>\n"
	"    </pci>\n"
	"  </cpu>\n"
	"</system>\n";

static void test_nccl_no_node(void **state)
{
	struct aff_topo *t = NULL;
	char dir[256], path[512], err[512] = "";
	size_t g, n;

	(void)state;
	fx_mkdtemp(dir, sizeof(dir));
	fx_write(dir, "nccl.xml", nccl_xml, path, sizeof(path));
	assert_int_equal(fx_load_file(path, &t, err, sizeof(err)), 0);
	/* NCCL has no NODE: one <cpu> is one root complex (PHB), two are SYS. */
	expect_path(t, "03:00.0", "mlx5_0", AFF_PATH_PHB);
	expect_path(t, "03:00.0", "mlx5_1", AFF_PATH_SYS);
	for (g = 0; g < aff_topo_gpu_count(t); g++)
		for (n = 0; n < aff_topo_nic_count(t); n++)
			assert_int_not_equal(aff_topo_path(t, g, n), AFF_PATH_NODE);
	aff_topo_unref(t);
	fx_rmdir(dir);
}

static json_object *get(json_object *o, const char *key, json_type type)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("no \"%s\"", key);
	if (!json_object_is_type(v, type))
		fail_msg("\"%s\" has type %s", key, json_type_to_name(json_object_get_type(v)));
	return v;
}

static void test_topo_json(void **state)
{
	struct aff_topo *t = fx_load("dgx-h100");
	json_object *o, *gpus, *nics, *paths, *g, *n, *row;
	char *s = NULL;
	size_t i, j;

	(void)state;
	assert_int_equal(aff_topo_json(t, AFF_JSON_PRETTY, &s), 0);
	o = json_tokener_parse(s);
	assert_non_null(o);
	assert_string_equal(json_object_get_string(get(o, "schema", json_type_string)),
			    "railbind.topo/1");
	gpus = get(o, "gpus", json_type_array);
	nics = get(o, "nics", json_type_array);
	paths = get(o, "paths", json_type_array);
	assert_int_equal(json_object_array_length(gpus), 8);
	assert_int_equal(json_object_array_length(nics), 12);
	assert_int_equal(json_object_array_length(paths), 8);
	for (i = 0; i < 8; i++) {
		g = json_object_array_get_idx(gpus, i);
		assert_string_equal(json_object_get_string(get(g, "pci", json_type_string)),
				    aff_topo_gpu_pci(t, i));
		assert_int_equal(json_object_get_int(get(g, "index", json_type_int)), i);
		/* GPUs 0-3 on package 0's NUMA node, 4-7 on node 1. */
		assert_int_equal(json_object_get_int(get(g, "numa", json_type_int)), i / 4);
		get(g, "cpus", json_type_string);
		row = json_object_array_get_idx(paths, i);
		assert_int_equal(json_object_array_length(row), 12);
		for (j = 0; j < 12; j++)
			assert_string_equal(json_object_get_string(json_object_array_get_idx(row, j)),
					    aff_path_name(aff_topo_path(t, i, j)));
	}
	for (j = 0; j < 12; j++) {
		n = json_object_array_get_idx(nics, j);
		assert_string_equal(json_object_get_string(get(n, "name", json_type_string)),
				    aff_topo_nic_name(t, j));
		get(n, "pci", json_type_string);
		get(n, "netdev", json_type_string);
		get(n, "numa", json_type_int);
		assert_true(json_object_get_boolean(get(n, "rdma", json_type_boolean)));
	}
	json_object_put(o);
	free(s);
	aff_topo_unref(t);
}

static void test_topo_json_unknown_numa(void **state)
{
	struct aff_topo *t = fx_load("unknown-numa");
	json_object *o, *gpus, *g, *v = NULL;
	char *s = NULL;

	(void)state;
	assert_int_equal(aff_topo_json(t, 0, &s), 0);
	o = json_tokener_parse(s);
	assert_non_null(o);
	gpus = get(o, "gpus", json_type_array);
	g = json_object_array_get_idx(gpus, 0);
	/* Present, and null. */
	assert_true(json_object_object_get_ex(g, "numa", &v));
	assert_null(v);
	json_object_put(o);
	free(s);
	aff_topo_unref(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_names),
		cmocka_unit_test(test_nested_switch),
		cmocka_unit_test(test_small_phb),
		cmocka_unit_test(test_two_rc_node),
		cmocka_unit_test(test_dgx_matrix),
		cmocka_unit_test(test_unknown_numa),
		cmocka_unit_test(test_nccl_no_node),
		cmocka_unit_test(test_topo_json),
		cmocka_unit_test(test_topo_json_unknown_numa),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
