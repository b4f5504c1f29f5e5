// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which devices are accelerators and which NICs are rails, per the fixture
 * descriptions in tests/fixtures/ and the site configuration.
 */
#include "fixture.h"

/* dgx-h100.topo: the eight H100s, in the order their buses sort. */
static const char *const dgx_gpus[] = {
	"0000:1b:00.0", "0000:43:00.0", "0000:52:00.0", "0000:61:00.0",
	"0000:9d:00.0", "0000:c3:00.0", "0000:d1:00.0", "0000:df:00.0",
};

static void test_dgx_accelerators(void **state)
{
	struct aff_topo *t = fx_load("dgx-h100");
	size_t i;

	(void)state;
	/* The ASPEED BMC VGA at 03:00.0 is a display, not an accelerator. */
	assert_int_equal(aff_topo_gpu_count(t), 8);
	for (i = 0; i < 8; i++)
		assert_string_equal(aff_topo_gpu_pci(t, i), dgx_gpus[i]);
	assert_null(aff_topo_gpu_pci(t, 8));
	aff_topo_unref(t);
}

static void test_dgx_rails(void **state)
{
	struct aff_topo *t = fx_load("dgx-h100");
	char name[16];
	size_t i;

	(void)state;
	/* mlx5_0..11 (compute and storage); the X710 is Ethernet only. */
	assert_int_equal(aff_topo_nic_count(t), 12);
	for (i = 0; i < 12; i++) {
		snprintf(name, sizeof(name), "mlx5_%zu", i);
		assert_true(fx_has_rail(t, name));
	}
	assert_false(fx_has_rail(t, "enp180s0f0"));
	for (i = 0; i < aff_topo_nic_count(t); i++)
		assert_true(t->rail[i].rdma);
	aff_topo_unref(t);
}

static void test_ethernet_rails(void **state)
{
	struct aff_topo *t = fx_load_conf("dgx-h100", "ethernet-rails = yes\n");
	size_t r;

	(void)state;
	assert_int_equal(aff_topo_nic_count(t), 13);
	r = fx_rail(t, "enp180s0f0");
	assert_false(t->rail[r].rdma);
	assert_string_equal(t->dev[t->rail[r].dev].pci, "0000:b4:00.0");
	aff_topo_unref(t);
}

static void test_exclude_nic(void **state)
{
	/* By name, and by PCI address (aa:00.0 is mlx5_7). */
	struct aff_topo *t = fx_load_conf("dgx-h100",
		"exclude-nic = mlx5_1, mlx5_2\nexclude-nic = 0000:aa:00.0\n");

	(void)state;
	assert_int_equal(aff_topo_nic_count(t), 9);
	assert_false(fx_has_rail(t, "mlx5_1"));
	assert_false(fx_has_rail(t, "mlx5_2"));
	assert_false(fx_has_rail(t, "mlx5_7"));
	assert_true(fx_has_rail(t, "mlx5_8"));
	assert_true(fx_has_rail(t, "mlx5_0"));
	aff_topo_unref(t);
}

static void test_include_nic(void **state)
{
	/* The X710 by its interface name; include wins over exclude. */
	struct aff_topo *t = fx_load_conf("dgx-h100",
		"include-nic = enp180s0f0\nexclude-nic = mlx5_3\ninclude-nic = mlx5_3\n");

	(void)state;
	assert_int_equal(aff_topo_nic_count(t), 13);
	assert_true(fx_has_rail(t, "enp180s0f0"));
	assert_true(fx_has_rail(t, "mlx5_3"));
	aff_topo_unref(t);
}

static void test_accelerator_config(void **state)
{
	/* A site may declare any vendor:device an accelerator, even one the
	 * built-in rules reject (here the ASPEED display). */
	struct aff_topo *t = fx_load_conf("dgx-h100", "accelerator = 1a03:2000\n");

	(void)state;
	assert_int_equal(aff_topo_gpu_count(t), 9);
	assert_string_equal(aff_topo_gpu_pci(t, 0), "0000:03:00.0");
	assert_string_equal(aff_topo_gpu_pci(t, 1), dgx_gpus[0]);
	aff_topo_unref(t);

	/* A device id that matches nothing changes nothing. */
	t = fx_load_conf("dgx-h100", "accelerator = 1a03:2001\n");
	assert_int_equal(aff_topo_gpu_count(t), 8);
	aff_topo_unref(t);
}

static void check_pci_order(const char *name, size_t ngpu)
{
	struct aff_topo *t = fx_load(name);
	size_t i;

	assert_int_equal(aff_topo_gpu_count(t), ngpu);
	/* "dddd:bb:dd.f" in lower-case hex sorts as its numbers do. */
	for (i = 1; i < ngpu; i++)
		assert_true(strcmp(aff_topo_gpu_pci(t, i - 1),
				   aff_topo_gpu_pci(t, i)) < 0);
	aff_topo_unref(t);
}

static void test_pci_order(void **state)
{
	(void)state;
	check_pci_order("p4d", 8);
	check_pci_order("p5", 8);
	check_pci_order("nested-switch", 4);
	check_pci_order("unknown-numa", 4);
	check_pci_order("small", 2);
	check_pci_order("two-rc-node", 1);
	/* AMD Instinct, class 0380 (display controller, other). */
	check_pci_order("amd-nps4", 8);
}

static void test_grace_domains(void **state)
{
	struct aff_topo *t = fx_load("grace");

	(void)state;
	/* PCI order is domain first. */
	assert_int_equal(aff_topo_gpu_count(t), 4);
	assert_string_equal(aff_topo_gpu_pci(t, 0), "0000:03:00.0");
	assert_string_equal(aff_topo_gpu_pci(t, 1), "0002:03:00.0");
	assert_string_equal(aff_topo_gpu_pci(t, 2), "0008:03:00.0");
	assert_string_equal(aff_topo_gpu_pci(t, 3), "0009:03:00.0");
	aff_topo_unref(t);
}

static void test_efa_rails(void **state)
{
	/* EFA is class 0200 (Ethernet) but has an RDMA device: a rail. */
	struct aff_topo *t = fx_load("p4d");

	(void)state;
	assert_int_equal(aff_topo_nic_count(t), 4);
	assert_true(fx_has_rail(t, "rdmap16s27"));
	assert_true(fx_has_rail(t, "rdmap160s27"));
	aff_topo_unref(t);
	t = fx_load("p5");
	assert_int_equal(aff_topo_nic_count(t), 32);
	aff_topo_unref(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dgx_accelerators),
		cmocka_unit_test(test_dgx_rails),
		cmocka_unit_test(test_ethernet_rails),
		cmocka_unit_test(test_exclude_nic),
		cmocka_unit_test(test_include_nic),
		cmocka_unit_test(test_accelerator_config),
		cmocka_unit_test(test_pci_order),
		cmocka_unit_test(test_grace_domains),
		cmocka_unit_test(test_efa_rails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
