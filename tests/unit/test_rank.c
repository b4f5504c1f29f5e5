// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which switch a device hangs from, which NICs are rails, how a GPU's NICs
 * rank, and what the plan says about the ones it leaves out, on the fixtures
 * that model each case (tests/fixtures: vm-switch, rail-down, slow-near,
 * dual-port, bcm-switch, numa-unknown-cross). What each expects
 * is what its description says of the machine, and NCCL's rules for it.
 */
#include <math.h>
#include <json-c/json.h>

#include "fixture.h"

static enum aff_path path(const struct aff_topo *t, const char *gpu, const char *nic)
{
	return aff_topo_path(t, fx_gpu(t, gpu), fx_rail(t, nic));
}

static enum aff_path nccl_path(const struct aff_topo *t, const char *gpu, const char *nic)
{
	return aff_nccl_path_between(t, t->gpus[fx_gpu(t, gpu)],
				     t->rail[fx_rail(t, nic)].dev);
}

static void expect(enum aff_path got, enum aff_path want, const char *what)
{
	if (got != want)
		fail_msg("%s: %s, expected %s", what, aff_path_name(got) ? aff_path_name(got) : "?",
			 aff_path_name(want));
}

/* The fixture's XML without its RailbindPortType: plain hwloc, NCCL's rule. */
static struct aff_topo *load_untyped(const char *name, char *dir, size_t len)
{
	char src[4096], path[4096], line[4096], err[1024] = "";
	struct aff_topo *t = NULL;
	FILE *in, *out;

	fx_path(name, src, sizeof(src));
	in = fopen(src, "r");
	if (!in) {
		print_message("SKIP: %s missing; run `make fixtures` first\n", src);
		skip();
	}
	fx_mkdtemp(dir, len);
	snprintf(path, sizeof(path), "%s/untyped.xml", dir);
	out = fopen(path, "w");
	assert_non_null(out);
	while (fgets(line, sizeof(line), in))
		if (!strstr(line, "RailbindPortType"))
			fputs(line, out);
	fclose(in);
	assert_int_equal(fclose(out), 0);
	assert_int_equal(fx_load_file(path, &t, err, sizeof(err)), 0);
	return t;
}

/* The topology exported as NCCL's XML and read back. */
static struct aff_topo *load_via_nccl(const struct aff_topo *t, char *dir, size_t len)
{
	char path[4096], err[1024] = "", *xml = NULL;
	struct aff_topo *back = NULL;

	assert_int_equal(aff_topo_nccl_xml(t, 0, &xml), 0);
	fx_mkdtemp(dir, len);
	fx_write(dir, "nccl.xml", xml, path, sizeof(path));
	free(xml);
	assert_int_equal(fx_load_file(path, &back, err, sizeof(err)), 0);
	return back;
}

/*
 * The rail of t that is rail r of topology from: same PCI address, verbs
 * port (an NCCL file writes NCCL's), name.
 */
static int rail_at(const struct aff_topo *t, const struct aff_topo *from,
		   const struct aff_rail *r)
{
	const char *pci = from->dev[r->dev].pci;
	int want, port;
	size_t i;

	aff_rail_hca(r, &want);
	for (i = 0; i < t->nrail; i++)
		if (!strcmp(t->dev[t->rail[i].dev].pci, pci) &&
		    (aff_rail_hca(&t->rail[i], &port), port == want) &&
		    !strcmp(t->rail[i].name ? t->rail[i].name : "", r->name ? r->name : ""))
			return (int)i;
	return -1;
}

/*
 * Both loaders, and hwloc XML with or without port types, give the same
 * classes: the tree's (NCCL's format has no NODE, and one numaid -1 <cpu>
 * for every device of unknown locality) and NCCL's.
 */
static void same_classes(const struct aff_topo *a, const struct aff_topo *b, bool nccl_format,
			 const char *what)
{
	size_t g, r;

	assert_int_equal(aff_topo_gpu_count(a), aff_topo_gpu_count(b));
	for (g = 0; g < aff_topo_gpu_count(a); g++) {
		assert_string_equal(aff_topo_gpu_pci(a, g), aff_topo_gpu_pci(b, g));
		for (r = 0; r < a->nrail; r++) {
			int s = rail_at(b, a, &a->rail[r]);
			enum aff_path pa, pb, na, nb;

			if (s < 0 && a->rail[r].excl == AFF_EXCL_DOWN)
				continue;
			if (s < 0)
				fail_msg("%s: rail %s lost", what, aff_topo_nic_name(a, r));
			pa = aff_topo_path(a, g, r);
			pb = aff_topo_path(b, g, (size_t)s);
			na = aff_nccl_path_between(a, a->gpus[g], a->rail[r].dev);
			nb = aff_nccl_path_between(b, b->gpus[g], b->rail[s].dev);
			if (nccl_format && pa >= AFF_PATH_PHB)
				pa = na;
			if (pa != pb || na != nb)
				fail_msg("%s: GPU %s - %s: %s/%s here, %s/%s there", what,
					 aff_topo_gpu_pci(a, g), aff_topo_nic_name(a, r),
					 aff_path_name(pa), aff_path_name(na), aff_path_name(pb),
					 aff_path_name(nb));
		}
	}
}

static void check_loaders_agree(const char *name)
{
	struct aff_topo *t = fx_load(name), *u, *n;
	char d1[256], d2[256];

	u = load_untyped(name, d1, sizeof(d1));
	same_classes(t, u, false, "without port types");
	n = load_via_nccl(t, d2, sizeof(d2));
	same_classes(t, n, true, "through NCCL's XML");
	aff_topo_unref(n);
	aff_topo_unref(u);
	aff_topo_unref(t);
	fx_rmdir(d1);
	fx_rmdir(d2);
}

static void test_vm_switch(void **state)
{
	struct aff_topo *t = fx_load("vm-switch");
	struct aff_plan *p;

	(void)state;
	/* Chain of 2 (upstream, downstream) right off the host bridge. */
	expect(path(t, "02:00.0", "mlx5_0"), AFF_PATH_PIX, "02 - mlx5_0");
	expect(nccl_path(t, "02:00.0", "mlx5_0"), AFF_PATH_PIX, "NCCL 02 - mlx5_0");
	/* Chain of 4: the same inner switch, then through the outer one. */
	expect(path(t, "13:00.0", "mlx5_1"), AFF_PATH_PIX, "13 - mlx5_1");
	expect(path(t, "1a:00.0", "mlx5_1"), AFF_PATH_PXB, "1a - mlx5_1");
	expect(nccl_path(t, "1a:00.0", "mlx5_1"), AFF_PATH_PXB, "NCCL 1a - mlx5_1");
	/* Two root complexes of NUMA 0: NODE, which NCCL calls PHB. */
	expect(path(t, "02:00.0", "mlx5_1"), AFF_PATH_NODE, "02 - mlx5_1");
	expect(nccl_path(t, "02:00.0", "mlx5_1"), AFF_PATH_PHB, "NCCL 02 - mlx5_1");
	/* A switch is its upstream port, counted once. */
	assert_true(t->dev[t->rail[fx_rail(t, "mlx5_0")].dev].up >= 0);
	assert_int_equal(t->dev[t->dev[t->rail[fx_rail(t, "mlx5_0")].dev].up].port_type,
			 AFF_PORT_UPSTREAM);
	p = fx_plan(t, NULL);
	assert_string_equal(aff_plan_rank_nic(p, 0, 0), "mlx5_0");
	assert_string_equal(aff_plan_rank_nic(p, 1, 0), "mlx5_1");
	assert_string_equal(aff_plan_rank_nic(p, 2, 0), "mlx5_1");
	aff_plan_unref(p);
	aff_topo_unref(t);
	check_loaders_agree("vm-switch");
}

static void test_rail_down(void **state)
{
	struct aff_topo *t = fx_load("rail-down");
	struct aff_plan *p = fx_plan(t, NULL);
	size_t i, down = 0;

	(void)state;
	/* Both ports of mlx4_0 are rails of their own, one left out. */
	assert_int_equal(aff_topo_nic_count(t), 4);
	for (i = 0; i < t->nrail; i++)
		if (t->rail[i].excl == AFF_EXCL_DOWN)
			down++;
	assert_int_equal(down, 2);
	/* GPU 0: its switch's mlx5_0 is down; the nearest live port. */
	assert_string_equal(aff_plan_rank_nic(p, 0, 0), "mlx4_0");
	assert_int_equal(t->rail[p->rank[0].rails.rail[0]].port, 2);
	/* Every rank: the node's live rail ports, never a down one. */
	assert_string_equal(fx_env(p, 0, "NCCL_IB_HCA"), "=mlx4_0:2,mlx5_2:1");
	assert_string_equal(fx_env(p, 0, "RAILBIND_NICS"), "mlx4_0");
	assert_int_equal(p->rank[0].lost.n, 1);
	assert_string_equal(aff_topo_nic_name(t, (size_t)p->rank[0].lost.rail[0]), "mlx5_0");
	/* GPU 1: port 2 of its own card, never the down port 1. */
	assert_string_equal(fx_env(p, 1, "NCCL_IB_HCA"), "=mlx4_0:2,mlx5_2:1");
	assert_string_equal(fx_env(p, 1, "UCX_NET_DEVICES"), "mlx4_0:2,mlx5_2:1");
	assert_string_equal(fx_env(p, 1, "RAILBIND_NICS"), "mlx4_0");
	assert_int_equal(p->rank[1].lost.n, 0);
	assert_string_equal(fx_env(p, 2, "NCCL_IB_HCA"), "=mlx4_0:2,mlx5_2:1");
	assert_string_equal(fx_env(p, 2, "RAILBIND_NICS"), "mlx5_2");
	/* One warning, for GPU 0, with the fix; each left-out port named once. */
	assert_int_equal(p->nwarn, 1);
	assert_string_equal(p->warn[0].id, "nic-port-down");
	assert_string_equal(p->warn[0].subject, "0000:04:00.0");
	assert_non_null(strstr(p->warn[0].message, "mlx5_0"));
	assert_non_null(strstr(p->warn[0].message, "ibstat"));
	assert_int_equal(p->nexcl, 2);
	for (i = 0; i < p->nexcl; i++) {
		assert_string_equal(p->excl[i].reason, "port-down");
		assert_int_equal(p->excl[i].port, 1);
	}
	assert_true(!strcmp(p->excl[0].name, "mlx5_0") || !strcmp(p->excl[1].name, "mlx5_0"));
	assert_true(!strcmp(p->excl[0].name, "mlx4_0") || !strcmp(p->excl[1].name, "mlx4_0"));
	/* NCCL never sees a down port: its pick is the plan's, no note. */
	for (i = 0; i < p->nrank; i++)
		assert_null(p->rank[i].nccl_note);
	aff_plan_unref(p);
	aff_topo_unref(t);
}

static void test_slow_near(void **state)
{
	struct aff_topo *t = fx_load("slow-near");
	struct aff_plan *p = fx_plan(t, NULL);
	int g1 = t->gpus[fx_gpu(t, "84:00.0")];

	(void)state;
	/* NCCL's figures: Gen4 x16 is 24 GB/s, Broadwell sockets 6 GB/s. */
	assert_true(fabs(t->intercpu_bw - 6) < 1e-9);
	assert_true(fabs(aff_pair_bw(t, t->gpus[0], (int)fx_rail(t, "mlx5_1")) - 24) < 1e-9);
	assert_true(fabs(aff_pair_bw(t, t->gpus[0], (int)fx_rail(t, "mlx5_0")) - 3.125) < 1e-9);
	assert_true(fabs(aff_pair_bw(t, g1, (int)fx_rail(t, "mlx5_2")) - 6.25) < 1e-9);
	assert_true(fabs(aff_pair_bw(t, g1, (int)fx_rail(t, "mlx5_1")) - 6) < 1e-9);
	/* The 25 and 50 Gb/s ports are under a quarter of 400: left out. */
	assert_int_equal(t->rail[fx_rail(t, "mlx5_0")].excl, AFF_EXCL_SLOW);
	assert_int_equal(t->rail[fx_rail(t, "mlx5_2")].excl, AFF_EXCL_SLOW);
	assert_int_equal(t->rail[fx_rail(t, "mlx5_1")].excl, AFF_EXCL_NONE);
	/* GPU 0: the 400 Gb/s rail one hop farther, NCCL's pick too. */
	assert_string_equal(aff_plan_rank_nic(p, 0, 0), "mlx5_1");
	assert_int_equal(aff_topo_path(t, 0, fx_rail(t, "mlx5_1")), AFF_PATH_PXB);
	assert_int_equal(p->rank[0].lost.n, 0);
	assert_null(p->rank[0].nccl_note);
	/* GPU 1: NCCL would take the 50 Gb/s NIC beside it; the plan says why not. */
	assert_string_equal(aff_plan_rank_nic(p, 1, 0), "mlx5_1");
	assert_int_equal(p->rank[1].nccl.n, 1);
	assert_string_equal(aff_topo_nic_name(t, (size_t)p->rank[1].nccl.rail[0]), "mlx5_2");
	assert_non_null(p->rank[1].nccl_note);
	assert_non_null(strstr(p->rank[1].nccl_note, "slow-rails"));
	assert_int_equal(p->nwarn, 1);
	assert_string_equal(p->warn[0].id, "slow-rail");
	assert_int_equal(p->nexcl, 2);
	aff_plan_unref(p);
	aff_topo_unref(t);

	/* slow-rails = yes: the 50 Gb/s NIC is a rail and wins for GPU 1 only. */
	t = fx_load_conf("slow-near", "slow-rails = yes\n");
	p = fx_plan(t, NULL);
	assert_string_equal(aff_plan_rank_nic(p, 0, 0), "mlx5_1");
	assert_string_equal(aff_plan_rank_nic(p, 1, 0), "mlx5_2");
	assert_int_equal(p->nexcl, 0);
	assert_int_equal(p->nwarn, 0);
	assert_null(p->rank[1].nccl_note);
	aff_plan_unref(p);
	aff_topo_unref(t);

	/* include-nic admits one slow NIC by name, the other stays out. */
	t = fx_load_conf("slow-near", "include-nic = mlx5_2\n");
	assert_int_equal(t->rail[fx_rail(t, "mlx5_2")].excl, AFF_EXCL_NONE);
	assert_int_equal(t->rail[fx_rail(t, "mlx5_0")].excl, AFF_EXCL_SLOW);
	aff_topo_unref(t);
}

static void test_dual_port(void **state)
{
	struct aff_topo *t = fx_load("dual-port");
	struct aff_plan *p = fx_plan(t, NULL);

	(void)state;
	/* The 200 Gb/s port, not the first function or the first port. */
	assert_string_equal(aff_plan_rank_nic(p, 0, 0), "mlx5_1");
	/* The ports the plan uses, the same on both ranks; mlx5_0 no GPU gets. */
	assert_string_equal(fx_env(p, 0, "NCCL_IB_HCA"), "=mlx5_1:1,mlx4_0:2");
	assert_string_equal(aff_plan_rank_nic(p, 1, 0), "mlx4_0");
	assert_string_equal(fx_env(p, 1, "NCCL_IB_HCA"), "=mlx5_1:1,mlx4_0:2");
	/* 100 is not under a quarter of 200: rails still, ranked below. */
	assert_int_equal(p->nexcl, 0);
	assert_int_equal(t->rail[fx_rail(t, "mlx5_0")].excl, AFF_EXCL_NONE);
	assert_null(p->rank[0].nccl_note);
	assert_null(p->rank[1].nccl_note);
	aff_plan_unref(p);
	aff_topo_unref(t);
	check_loaders_agree("dual-port");
}

static void test_bcm_switch(void **state)
{
	struct aff_topo *t = fx_load("bcm-switch");

	(void)state;
	/* The tree: two switch levels either way. */
	expect(path(t, "0f:00.0", "mlx5_0"), AFF_PATH_PXB, "0f - mlx5_0");
	expect(path(t, "8f:00.0", "mlx5_1"), AFF_PATH_PXB, "8f - mlx5_1");
	/* NCCL merges the Broadcom second level into the first, not the other. */
	expect(nccl_path(t, "0f:00.0", "mlx5_0"), AFF_PATH_PIX, "NCCL 0f - mlx5_0");
	expect(nccl_path(t, "8f:00.0", "mlx5_1"), AFF_PATH_PXB, "NCCL 8f - mlx5_1");
	aff_topo_unref(t);
	check_loaders_agree("bcm-switch");
}

static void test_numa_unknown_cross(void **state)
{
	struct aff_topo *t = fx_load("numa-unknown-cross");
	struct aff_plan *p = fx_plan(t, NULL);

	(void)state;
	/* Nothing proves one NUMA node: SYS, never NODE. */
	expect(path(t, "04:00.0", "mlx5_0"), AFF_PATH_SYS, "04 - mlx5_0");
	expect(path(t, "04:00.0", "mlx5_1"), AFF_PATH_SYS, "04 - mlx5_1");
	/* NCCL groups numa_node -1 under one CPU: PHB to mlx5_0 only. */
	expect(nccl_path(t, "04:00.0", "mlx5_0"), AFF_PATH_PHB, "NCCL 04 - mlx5_0");
	expect(nccl_path(t, "04:00.0", "mlx5_1"), AFF_PATH_SYS, "NCCL 04 - mlx5_1");
	assert_string_equal(aff_plan_rank_nic(p, 0, 0), "mlx5_0");
	assert_null(aff_plan_rank_mems(p, 0));
	aff_plan_unref(p);
	aff_topo_unref(t);
}

/* The fixtures of before keep their pairs: a snapshot's types, NCCL's rule. */
static void test_loaders_agree(void **state)
{
	static const char *const names[] = {
		"dgx-h100", "nested-switch", "p4d", "p5", "tie", "small", "two-rc-node",
		"amd-nps4", "rail-down", "slow-near",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		check_loaders_agree(names[i]);
}

static void test_plan_json(void **state)
{
	struct aff_topo *t = fx_load("rail-down");
	struct aff_plan *p = fx_plan(t, NULL);
	json_object *o, *r0, *n0, *ex;
	char *s = NULL;

	(void)state;
	assert_int_equal(aff_plan_json(p, 0, &s), 0);
	o = json_tokener_parse(s);
	assert_non_null(o);
	r0 = json_object_array_get_idx(fx_json(o, "ranks"), 0);
	n0 = json_object_array_get_idx(fx_json(r0, "nics"), 0);
	assert_string_equal(json_object_get_string(fx_json(n0, "path")), "NODE");
	assert_string_equal(json_object_get_string(fx_json(n0, "nccl_path")), "PHB");
	assert_int_equal(json_object_get_int(fx_json(n0, "port")), 2);
	assert_int_equal(json_object_get_int(fx_json(n0, "bandwidth")), 24);
	assert_null(fx_json(fx_json(r0, "nccl"), "note"));
	ex = fx_json(o, "excluded");
	assert_int_equal(json_object_array_length(ex), 2);
	assert_string_equal(json_object_get_string(fx_json(json_object_array_get_idx(ex, 0),
						       "reason")), "port-down");
	json_object_put(o);
	free(s);
	aff_plan_unref(p);
	aff_topo_unref(t);

	/* exclude-nic: out of the model, named in the plan's list. */
	t = fx_load_conf("dual-port", "exclude-nic = mlx5_0\n");
	p = fx_plan(t, NULL);
	assert_string_equal(aff_plan_rank_nic(p, 0, 0), "mlx5_1");
	assert_int_equal(p->nexcl, 1);
	assert_string_equal(p->excl[0].name, "mlx5_0");
	assert_string_equal(p->excl[0].reason, "config");
	assert_string_equal(p->excl[0].pci, "0000:05:00.0");
	aff_plan_unref(p);
	aff_topo_unref(t);
}

static void test_topo_json(void **state)
{
	struct aff_topo *t = fx_load("bcm-switch");
	json_object *o, *nics;
	char *s = NULL;

	(void)state;
	assert_int_equal(aff_topo_json(t, 0, &s), 0);
	o = json_tokener_parse(s);
	assert_non_null(o);
	assert_string_equal(json_object_get_string(json_object_array_get_idx(
		json_object_array_get_idx(fx_json(o, "paths"), 0), 0)), "PXB");
	assert_string_equal(json_object_get_string(json_object_array_get_idx(
		json_object_array_get_idx(fx_json(o, "nccl_paths"), 0), 0)), "PIX");
	nics = fx_json(o, "nics");
	assert_string_equal(json_object_get_string(fx_json(json_object_array_get_idx(nics, 0),
						      "port_state")), "ACTIVE");
	assert_int_equal(json_object_get_int(fx_json(json_object_array_get_idx(nics, 0), "rate")),
			 400);
	assert_null(fx_json(json_object_array_get_idx(nics, 0), "excluded"));
	json_object_put(o);
	free(s);
	aff_topo_unref(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vm_switch),
		cmocka_unit_test(test_rail_down),
		cmocka_unit_test(test_slow_near),
		cmocka_unit_test(test_dual_port),
		cmocka_unit_test(test_bcm_switch),
		cmocka_unit_test(test_numa_unknown_cross),
		cmocka_unit_test(test_loaders_agree),
		cmocka_unit_test(test_plan_json),
		cmocka_unit_test(test_topo_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
