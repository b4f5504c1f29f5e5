// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * NCCL topology XML input: small files written here by the test, loaded
 * through aff_topo_load(), and the cpumap mask parser.
 */
#include "fixture.h"

struct tmp {
	char dir[256];
	char path[512];
};

static int setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	fx_mkdtemp(t->dir, sizeof(t->dir));
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	struct tmp *t = *state;

	fx_rmdir(t->dir);
	free(t);
	return 0;
}

static struct aff_topo *load_text(struct tmp *tmp, const char *xml)
{
	struct aff_topo *t = NULL;
	char err[1024] = "";

	fx_write(tmp->dir, "topo.xml", xml, tmp->path, sizeof(tmp->path));
	if (fx_load_file(tmp->path, &t, err, sizeof(err)))
		fail_msg("%s", err);
	return t;
}

/* Expect a refusal naming the file and LINE ("FILE:LINE: ..." when line). */
static void expect_error(struct tmp *tmp, const char *xml, int line,
			 const char *what)
{
	struct aff_topo *t = NULL;
	char err[1024] = "", want[600];

	fx_write(tmp->dir, "bad.xml", xml, tmp->path, sizeof(tmp->path));
	assert_int_equal(fx_load_file(tmp->path, &t, err, sizeof(err)), -EINVAL);
	assert_null(t);
	if (line > 0)
		snprintf(want, sizeof(want), "%s:%d: ", tmp->path, line);
	else
		snprintf(want, sizeof(want), "%s", tmp->path);
	if (strncmp(err, want, strlen(want)))
		fail_msg("\"%s\" does not start with \"%s\"", err, want);
	if (!strstr(err, what))
		fail_msg("\"%s\" does not mention \"%s\"", err, what);
	assert_null(strchr(err, '\n'));
}

#define GPU(bus) "<pci busid=\"0000:" bus ".0\" class=\"0x030200\" vendor=\"0x10de\"><gpu dev=\"0\"/></pci>\n"

static void test_switch_nesting(void **state)
{
	struct aff_topo *t = load_text(*state,
		"<system version=\"1\">\n"
		" <cpu numaid=\"0\" affinity=\"000000ff\" arch=\"x86_64\">\n"
		"  <pci busid=\"0000:01:00.0\" class=\"0x060400\">\n"
		"   <pci busid=\"0000:02:00.0\" class=\"0x060400\">\n"
		"    " GPU("03:00")
		"    <pci busid=\"0000:04:00.0\" class=\"0x020700\" vendor=\"0x15b3\">\n"
		"     <nic><net name=\"mlx5_0\" port=\"1\" guid=\"0xabc\"/></nic></pci>\n"
		"   </pci>\n"
		"   <pci busid=\"0000:05:00.0\" class=\"0x060400\">\n"
		"    " GPU("06:00")
		"   </pci>\n"
		"  </pci>\n"
		" </cpu>\n"
		"</system>\n");

	assert_int_equal(aff_topo_gpu_count(t), 2);
	assert_int_equal(aff_topo_nic_count(t), 1);
	assert_int_equal(aff_topo_path(t, fx_gpu(t, "03:00.0"), 0), AFF_PATH_PIX);
	assert_int_equal(aff_topo_path(t, fx_gpu(t, "06:00.0"), 0), AFF_PATH_PXB);
	aff_topo_unref(t);
}

static void test_nets(void **state)
{
	struct aff_topo *t = load_text(*state,
		"<system version=\"1\">\n"
		" <cpu numaid=\"0\" affinity=\"0000ffff\">\n"
		"  <pci busid=\"0000:01:00.0\" class=\"0x060400\">\n"
		"   " GPU("02:00")
		"   <pci busid=\"0000:03:00.0\" class=\"0x020700\">\n"
		"    <nic>\n"
		"     <net name=\"mlx5_0\" port=\"1\" guid=\"0x98039b0300a1b2c3\" speed=\"200000\"/>\n"
		"     <net name=\"mlx5_0\" port=\"2\" guid=\"0x98039b0300a1b2c3\"/>\n"
		"    </nic>\n"
		"   </pci>\n"
		"   <pci busid=\"0000:04:00.0\" class=\"0x020000\">\n"
		"    <nic><net name=\"eth0\" port=\"0\"/></nic>\n"
		"   </pci>\n"
		"  </pci>\n"
		" </cpu>\n"
		"</system>\n");
	size_t i, rdma = 0, ports = 0;

	/* Two ports of one HCA, and a socket net NCCL was told to use. */
	assert_int_equal(aff_topo_nic_count(t), 3);
	for (i = 0; i < t->nrail; i++) {
		assert_true(t->rail[i].listed);
		if (t->rail[i].rdma) {
			rdma++;
			assert_string_equal(t->rail[i].name, "mlx5_0");
			ports |= 1u << t->rail[i].port;
			/* speed is Mb/s; the port without one stays unknown. */
			assert_true(t->rail[i].rate == (t->rail[i].port == 1 ? 200 : 0));
		} else {
			assert_string_equal(t->rail[i].name, "eth0");
		}
	}
	assert_int_equal(rdma, 2);
	assert_int_equal(ports, 6);
	aff_topo_unref(t);
}

static void test_net_kinds(void **state)
{
	/*
	 * What NCCL's own writers put in guid: a verbs device's node GUID, the
	 * device index for a socket net (a docker veth here) and for AWS's OFI
	 * plugin, whose EFA says gdr="1".
	 */
	struct aff_topo *t = load_text(*state,
		"<system version=\"1\">\n"
		" <cpu numaid=\"0\" affinity=\"0000ffff\">\n"
		"  <pci busid=\"0000:01:00.0\" class=\"0x060400\">\n"
		"   " GPU("02:00")
		"   <pci busid=\"0000:03:00.0\" class=\"0x020000\">\n"
		"    <nic><net name=\"rdmap3s0\" dev=\"0\" guid=\"0\" gdr=\"1\"/></nic>\n"
		"   </pci>\n"
		"   <pci busid=\"0000:04:00.0\" class=\"0x020700\">\n"
		"    <nic><net name=\"mlx5_2\" dev=\"2\" guid=\"0x98039b0300a1b2c3\" gdr=\"0\"/></nic>\n"
		"   </pci>\n"
		"  </pci>\n"
		"  <nic><net name=\"veth608058c\" dev=\"1\" speed=\"10000\" guid=\"0x1\" gdr=\"0\"/></nic>\n"
		" </cpu>\n"
		"</system>\n");

	assert_int_equal(aff_topo_nic_count(t), 3);
	assert_true(t->rail[fx_rail(t, "rdmap3s0")].rdma);
	assert_true(t->rail[fx_rail(t, "mlx5_2")].rdma);
	assert_false(t->rail[fx_rail(t, "veth608058c")].rdma);
	assert_true(t->rail[fx_rail(t, "veth608058c")].rate == 10);
	aff_topo_unref(t);
}

static void test_nic_without_net(void **state)
{
	/* AWS's EFA files: a network-class <pci> with no <nic>/<net>. */
	struct aff_topo *t = load_text(*state,
		"<system version=\"1\">\n"
		" <cpu numaid=\"0\" affinity=\"0000ffff\">\n"
		"  <pci busid=\"ffff:ff:01.0\" class=\"0x060400\">\n"
		"   " GPU("10:1c")
		"   <pci busid=\"0000:10:1b.0\" class=\"0x020000\" vendor=\"0x1d0f\" device=\"0xefa0\"/>\n"
		"  </pci>\n"
		" </cpu>\n"
		"</system>\n");

	assert_int_equal(aff_topo_nic_count(t), 1);
	assert_string_equal(aff_topo_nic_name(t, 0), "0000:10:1b.0");
	assert_null(t->rail[0].name);
	assert_int_equal(aff_topo_path(t, 0, 0), AFF_PATH_PIX);
	aff_topo_unref(t);
}

static void test_multi_host(void **state)
{
	struct aff_topo *t = load_text(*state,
		"<system version=\"1\">\n"
		" <cpu host_hash=\"0xaaaa\" numaid=\"0\" affinity=\"0000ffff\">\n"
		"  " GPU("01:00")
		" </cpu>\n"
		" <cpu host_hash=\"0xbbbb\" numaid=\"0\" affinity=\"0000ffff\">\n"
		"  " GPU("02:00")
		"  " GPU("03:00")
		" </cpu>\n"
		" <cpu host_hash=\"0xaaaa\" numaid=\"1\" affinity=\"ffff0000\">\n"
		"  " GPU("81:00")
		" </cpu>\n"
		"</system>\n");

	/* Only the first host's two GPUs and two NUMA nodes. */
	assert_int_equal(aff_topo_gpu_count(t), 2);
	assert_string_equal(aff_topo_gpu_pci(t, 0), "0000:01:00.0");
	assert_string_equal(aff_topo_gpu_pci(t, 1), "0000:81:00.0");
	assert_int_equal(t->nnuma, 2);
	/* 0-31 with node sets {0-15} and {16-31}: not SMT pairs i, i+16. */
	assert_int_equal(hwloc_bitmap_weight(t->all_cpus), 32);
	aff_topo_unref(t);
}

static void test_smt_layout(void **state)
{
	/* Node 0: 0-7,16-23; node 1: 8-15,24-31 - Linux's x86 SMT2 order. */
	struct aff_topo *t = load_text(*state,
		"<system version=\"1\">\n"
		" <cpu numaid=\"0\" affinity=\"00ff00ff\">" GPU("01:00") "</cpu>\n"
		" <cpu numaid=\"1\" affinity=\"ff00ff00\">" GPU("81:00") "</cpu>\n"
		"</system>\n");
	size_t i;

	assert_int_equal(t->ncore, 16);
	for (i = 0; i < t->ncore; i++) {
		int first = hwloc_bitmap_first(t->core[i].pus);

		assert_int_equal(hwloc_bitmap_weight(t->core[i].pus), 2);
		assert_true(hwloc_bitmap_isset(t->core[i].pus, (unsigned)first + 16));
	}
	aff_topo_unref(t);
}

/*
 * numaid="-1" (how NCCL, and railbind nccl-topo, write devices of unknown
 * NUMA node): read after the numbered <cpu>s, whatever their order in the
 * file; with an affinity covering the whole two-node machine the locality
 * is unknown, with one node's CPUs it is that node.
 */
static void test_unknown_numaid(void **state)
{
	struct aff_topo *t = load_text(*state,
		"<system version=\"1\">\n"
		" <cpu numaid=\"-1\" affinity=\"0000ffff\">\n"
		"  " GPU("41:00")
		" </cpu>\n"
		" <cpu numaid=\"0\" affinity=\"000000ff\">\n"
		"  " GPU("01:00")
		" </cpu>\n"
		" <cpu numaid=\"1\" affinity=\"0000ff00\">\n"
		"  <pci busid=\"0000:81:00.0\" class=\"0x020700\" vendor=\"0x15b3\">\n"
		"   <nic><net name=\"mlx5_0\" port=\"1\" guid=\"0x2\"/></nic></pci>\n"
		" </cpu>\n"
		" <cpu numaid=\"-1\" affinity=\"0000ff00\">\n"
		"  " GPU("c1:00")
		" </cpu>\n"
		"</system>\n");
	const struct aff_locality *loc;
	size_t i, seen = 0;

	assert_int_equal(t->nnuma, 2);
	assert_int_equal(aff_topo_gpu_count(t), 3);
	for (i = 0; i < t->ndev; i++) {
		if (!t->dev[i].has_gpu_osdev)
			continue;
		loc = &t->loc[t->dev[i].loc];
		seen++;
		if (strstr(t->dev[i].pci, "41:00")) {
			assert_false(loc->known);
		} else if (strstr(t->dev[i].pci, "c1:00")) {
			assert_true(loc->known);
			assert_int_equal(loc->numa, 1);
		} else {
			assert_true(loc->known);
			assert_int_equal(loc->numa, 0);
		}
	}
	assert_int_equal(seen, 3);
	/* The rail's GUID is kept (the export writes it back). */
	assert_int_equal(t->nrail, 1);
	assert_int_equal(t->rail[0].guid, 2);
	aff_topo_unref(t);
}

static void test_bad(void **state)
{
	struct tmp *tmp = *state;

	expect_error(tmp, "<system version=\"1\">\n<cpu numaid=\"0\" affinity=\"ff\">\n"
		     "<pci busid=\"zz\" class=\"0x030200\"/>\n</cpu></system>\n", 3, "busid");
	expect_error(tmp, "<system version=\"1\">\n\n<cpu affinity=\"ff\"/>\n</system>\n",
		     3, "numaid");
	expect_error(tmp, "<system version=\"1\">\n<cpu numaid=\"0\" affinity=\"xyz\"/>\n</system>\n",
		     2, "affinity");
	expect_error(tmp, "<system version=\"1\">\n<cpu numaid=\"0\" affinity=\"ff\">\n"
		     "<pci busid=\"0000:01:00.0\" class=\"bridge\"/>\n</cpu></system>\n", 3, "class");
	expect_error(tmp, "<system version=\"1\">\n<cpu numaid=\"0\" affinity=\"ff\">\n"
		     "<pci busid=\"0000:01:00.0\" class=\"0x020000\" vendor=\"mellanox\"/>\n"
		     "</cpu></system>\n", 3, "vendor");
	expect_error(tmp, "<system version=\"1\">\n<cpu numaid=\"0\" affinity=\"ff\">\n"
		     "<pci busid=\"0000:01:00.0\" class=\"0x020000\">\n"
		     "<nic><net port=\"1\"/></nic></pci>\n</cpu></system>\n", 4, "name");
	expect_error(tmp, "<system version=\"1\">\n</system>\n", 0, "no <cpu>");
	expect_error(tmp, "<system version=\"1\">\n<cpu numaid=\"0\">\n</system>\n", 0,
		     "malformed XML");
}

static void test_require_gpu(void **state)
{
	struct tmp *tmp = *state;
	struct aff_ctx *ctx = fx_ctx(NULL);
	struct aff_topo *t = NULL;
	char err[1024] = "";

	fx_write(tmp->dir, "nogpu.xml",
		 "<system version=\"1\"><cpu numaid=\"0\" affinity=\"ff\">"
		 "<pci busid=\"0000:01:00.0\" class=\"0x020000\"/></cpu></system>\n",
		 tmp->path, sizeof(tmp->path));
	assert_int_equal(aff_topo_load(ctx, tmp->path, AFF_LOAD_REQUIRE_GPU, &t, err,
				       sizeof(err)), -ENODEV);
	assert_null(t);
	assert_non_null(strstr(err, tmp->path));
	/* Without the flag it loads, but a plan has nothing to do. */
	assert_int_equal(aff_topo_load(ctx, tmp->path, 0, &t, err, sizeof(err)), 0);
	{
		struct aff_plan *p = NULL;

		assert_int_equal(aff_plan_new(t, NULL, &p, err, sizeof(err)), -ENODEV);
		assert_null(p);
	}
	aff_topo_unref(t);
	aff_ctx_unref(ctx);
}

static void expect_mask(const char *s, const char *list)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc(), want = fx_cpus(list);

	assert_int_equal(aff_parse_cpumask(s, set), 0);
	if (!hwloc_bitmap_isequal(set, want))
		fail_msg("mask %s is not %s", s, list);
	hwloc_bitmap_free(set);
	hwloc_bitmap_free(want);
}

static void test_cpumask(void **state)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();

	(void)state;
	expect_mask("1", "0");
	expect_mask("ffffffff,0000ffff", "0-15,32-63");
	expect_mask("00000001,00000000", "32");
	expect_mask("000000ff,ffff0000,00ffffff", "0-23,48-71");
	expect_mask("F0", "4-7");
	expect_mask("0", "");
	assert_int_equal(aff_parse_cpumask("", set), -EINVAL);
	assert_int_equal(aff_parse_cpumask("xyz", set), -EINVAL);
	assert_int_equal(aff_parse_cpumask("123456789", set), -EINVAL);
	assert_int_equal(aff_parse_cpumask("ff,,ff", set), -EINVAL);
	assert_int_equal(aff_parse_cpumask("ff,", set), -EINVAL);
	assert_int_equal(aff_parse_cpumask("0x1", set), -EINVAL);
	hwloc_bitmap_free(set);
}

/* A GPU and a Mellanox function with the nets given, each on its own CPU. */
#define NODE(bus, nets) \
	" <cpu numaid=\"" bus "\" affinity=\"0000000" bus "\" arch=\"x86_64\">\n" \
	"  <pci busid=\"0000:" bus "0:00.0\" class=\"0x060400\">\n" \
	"   " GPU(bus "1:00") \
	"   <pci busid=\"0000:" bus "2:00.0\" class=\"0x020700\" vendor=\"0x15b3\">\n" \
	"    <nic>" nets "</nic></pci>\n" \
	"  </pci>\n" \
	" </cpu>\n"

static void expect_hca(const struct aff_topo *t, const char *name,
		       const char *verbs, int port)
{
	const struct aff_rail *r = &t->rail[fx_rail(t, name)];
	int got;

	assert_true(r->rdma);
	assert_string_equal(aff_rail_hca(r, &got), verbs);
	assert_int_equal(got, port);
}

/*
 * NCCL's spelling undone (src/transport/net_ib/init.cc): a port is the
 * verbs port plus the count of earlier devices of its PCI device, a Data
 * Direct device is <dev>_dma; a net with neither GUID nor gdr, named as a
 * verbs device, is RDMA. NCCL_IB_HCA names the verbs ports, the same on
 * every rank, and NCCL_SOCKET_IFNAME no RDMA device.
 */
static void test_verbs_names(void **state)
{
	struct aff_topo *t = load_text(*state,
		"<system version=\"1\">\n"
		/* Two functions of a dual-port card, NCCL's XML: 1, 2. */
		NODE("1", "<net name=\"mlx5_0\" dev=\"0\" port=\"1\" guid=\"0x9a70500003ae6d94\"/>"
			  "<net name=\"mlx5_1\" dev=\"1\" port=\"2\" guid=\"0x9a70500003ae6d94\"/>")
		/* One function, both ports: 1, then 2 + 1. */
		NODE("2", "<net name=\"mlx5_2\" dev=\"2\" port=\"1\" guid=\"0x9a70500003ae6d95\"/>"
			  "<net name=\"mlx5_2\" dev=\"3\" port=\"3\" guid=\"0x9a70500003ae6d95\"/>")
		/* Data Direct, and a hand-trimmed bond with no guid. */
		NODE("3", "<net name=\"rdma_vf_rail1_dma\" dev=\"4\" port=\"1\" guid=\"0x7e9cf00003499ee8\" gdr=\"1\"/>")
		NODE("4", "<net name=\"mlx5_bond_0\" dev=\"5\"/>")
		/* Written by an NCCL that never added the index: kept. */
		NODE("5", "<net name=\"mlx5_7\" port=\"1\" guid=\"0x9a70500003ae6d96\"/>"
			  "<net name=\"mlx5_8\" port=\"1\" guid=\"0x9a70500003ae6d96\"/>")
		"</system>\n");
	struct aff_plan *p;
	size_t r;

	expect_hca(t, "mlx5_0", "mlx5_0", 1);
	expect_hca(t, "mlx5_1", "mlx5_1", 1);
	expect_hca(t, "rdma_vf_rail1_dma", "rdma_vf_rail1", 1);
	expect_hca(t, "mlx5_bond_0", "mlx5_bond_0", 0);
	expect_hca(t, "mlx5_7", "mlx5_7", 1);
	expect_hca(t, "mlx5_8", "mlx5_8", 1);
	/* The source's own spelling stays (railbind nccl-topo writes it back). */
	assert_int_equal(t->rail[fx_rail(t, "mlx5_1")].port, 2);
	assert_string_equal(t->rail[fx_rail(t, "rdma_vf_rail1_dma")].name, "rdma_vf_rail1_dma");
	for (r = 0; r < t->nrail; r++)
		if (t->rail[r].port == 3)
			assert_int_equal(t->rail[r].hca_port, 2);
	p = fx_plan(t, NULL);
	assert_int_equal(aff_plan_rank_count(p), 5);
	for (r = 0; r < 5; r++) {
		assert_string_equal(fx_env(p, r, "NCCL_IB_HCA"),
				    "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_2:2,rdma_vf_rail1:1,mlx5_bond_0,mlx5_7:1,mlx5_8:1");
		assert_null(fx_env(p, r, "NCCL_SOCKET_IFNAME"));
	}
	assert_string_equal(fx_env(p, 3, "RAILBIND_NICS"), "mlx5_bond_0");
	aff_plan_unref(p);
	aff_topo_unref(t);
}

/*
 * A virtual NIC (no PCI device) NCCL would take on its own: the plan keeps
 * the PCI NIC and leaves the virtual one out of NCCL_IB_HCA, which is how
 * NCCL is kept off it, and the note says so.
 */
static void test_virtual_left_out(void **state)
{
	struct aff_topo *t = load_text(*state,
		"<system version=\"1\">\n"
		" <cpu numaid=\"0\" affinity=\"000000ff\" arch=\"x86_64\">\n"
		"  <nic><net name=\"mlx5_9\" port=\"1\" speed=\"400000\" guid=\"0x9a70500003ae6d99\"/></nic>\n"
		"  <pci busid=\"0000:01:00.0\" class=\"0x060400\">\n"
		"   " GPU("02:00")
		"   <pci busid=\"0000:03:00.0\" class=\"0x020700\" vendor=\"0x15b3\" link_speed=\"16.0 GT/s PCIe\" link_width=\"16\">\n"
		"    <nic><net name=\"mlx5_0\" port=\"1\" speed=\"200000\" guid=\"0x9a70500003ae6d94\"/></nic></pci>\n"
		"  </pci>\n"
		" </cpu>\n"
		"</system>\n");
	struct aff_plan *p = fx_plan(t, NULL);

	assert_string_equal(aff_plan_rank_nic(p, 0, 0), "mlx5_0");
	assert_string_equal(fx_env(p, 0, "NCCL_IB_HCA"), "=mlx5_0:1");
	assert_non_null(p->rank[0].nccl_note);
	assert_non_null(strstr(p->rank[0].nccl_note, "NCCL_IB_HCA leaves mlx5_9 out"));
	aff_plan_unref(p);
	aff_topo_unref(t);
}

/* gdr="0" (GPUDirect RDMA off): NCCL stages through the CPU, PHB not PIX. */
static void test_gdr_off(void **state)
{
	struct aff_topo *t = load_text(*state,
		"<system version=\"1\">\n"
		NODE("1", "<net name=\"mlx5_0\" port=\"1\" guid=\"0x9a70500003ae6d94\" gdr=\"0\"/>")
		NODE("2", "<net name=\"mlx5_1\" port=\"1\" guid=\"0x9a70500003ae6d95\" gdr=\"1\"/>")
		"</system>\n");
	size_t r0 = fx_rail(t, "mlx5_0"), r1 = fx_rail(t, "mlx5_1");

	assert_int_equal(aff_nccl_path_between(t, t->gpus[0], t->rail[r0].dev), AFF_PATH_PIX);
	assert_int_equal(aff_nccl_rail_path(t, t->gpus[0], (int)r0), AFF_PATH_PHB);
	assert_int_equal(aff_nccl_rail_path(t, t->gpus[1], (int)r1), AFF_PATH_PIX);
	aff_topo_unref(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_switch_nesting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_net_kinds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nic_without_net, setup, teardown),
		cmocka_unit_test_setup_teardown(test_multi_host, setup, teardown),
		cmocka_unit_test_setup_teardown(test_smt_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unknown_numaid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad, setup, teardown),
		cmocka_unit_test_setup_teardown(test_require_gpu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verbs_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_virtual_left_out, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gdr_off, setup, teardown),
		cmocka_unit_test(test_cpumask),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
