// SPDX-License-Identifier: GPL-2.0-or-later
/* railbind.conf(5): good files, bad lines with FILE:LINE, file handling. */
#include "fixture.h"

static void test_good(void **state)
{
	struct aff_config c = { 0 };
	char err[256] = "";
	const char *text =
		"# site config\n"
		"\n"
		"accelerator = 1da3:1020, 1e52 , 1fc9:*\n"
		"exclude-nic = mlx5_1,mlx5_2   # storage\n"
		"exclude-nic = 0000:aa:00.0\n"
		"include-nic=enp180s0f0\n"
		"   ethernet-rails = yes\n"
		"slow-rails = true\n"
		"memory-policy = bind\n";

	(void)state;
	assert_int_equal(aff_config_parse(&c, "site.conf", text, err, sizeof(err)), 0);
	assert_int_equal(c.naccel, 3);
	assert_int_equal(c.accel[0].vendor, 0x1da3);
	assert_int_equal(c.accel[0].device, 0x1020);
	assert_int_equal(c.accel[1].vendor, 0x1e52);
	assert_int_equal(c.accel[1].device, -1);
	assert_int_equal(c.accel[2].device, -1);
	assert_int_equal(c.nexclude, 3);
	assert_string_equal(c.exclude_nic[0], "mlx5_1");
	assert_string_equal(c.exclude_nic[1], "mlx5_2");
	assert_string_equal(c.exclude_nic[2], "0000:aa:00.0");
	assert_int_equal(c.ninclude, 1);
	assert_string_equal(c.include_nic[0], "enp180s0f0");
	assert_true(c.ethernet_rails);
	assert_true(c.slow_rails);
	assert_true(c.mem_bind);
	/* A second file replaces the first. */
	assert_int_equal(aff_config_parse(&c, "b.conf", "ethernet-rails = no\n", err,
					  sizeof(err)), 0);
	assert_int_equal(c.naccel, 0);
	assert_false(c.ethernet_rails);
	assert_false(c.slow_rails);
	assert_false(c.mem_bind);
	aff_config_clear(&c);
	/* Empty text is a valid, empty config. */
	assert_int_equal(aff_config_parse(&c, "e.conf", "", err, sizeof(err)), 0);
	assert_int_equal(c.gpu_sharing, AFF_GPU_SHARING_AUTO);
	aff_config_clear(&c);
	assert_int_equal(aff_config_parse(&c, "g.conf", "gpu-sharing = no\n", err, sizeof(err)), 0);
	assert_int_equal(c.gpu_sharing, AFF_GPU_SHARING_NO);
	assert_int_equal(aff_config_parse(&c, "g.conf", "gpu-sharing = yes\n", err, sizeof(err)), 0);
	assert_int_equal(c.gpu_sharing, AFF_GPU_SHARING_YES);
	assert_int_equal(aff_config_parse(&c, "g.conf", "gpu-sharing = auto\n", err, sizeof(err)), 0);
	assert_int_equal(c.gpu_sharing, AFF_GPU_SHARING_AUTO);
	aff_config_clear(&c);
}

static void expect_bad(const char *text, unsigned line, const char *what)
{
	struct aff_config c = { 0 };
	char err[512] = "", want[64];

	assert_int_equal(aff_config_parse(&c, "x.conf", "memory-policy = bind\n", err,
					  sizeof(err)), 0);
	assert_int_equal(aff_config_parse(&c, "/etc/r.conf", text, err, sizeof(err)),
			 -EINVAL);
	snprintf(want, sizeof(want), "/etc/r.conf:%u: expected ", line);
	if (strncmp(err, want, strlen(want)))
		fail_msg("\"%s\" does not start with \"%s\"", err, want);
	if (!strstr(err, what))
		fail_msg("\"%s\" does not mention \"%s\"", err, what);
	/* A bad file leaves the previous config as it was. */
	assert_true(c.mem_bind);
	aff_config_clear(&c);
}

static void test_bad(void **state)
{
	(void)state;
	expect_bad("no equals sign\n", 1, "key = value");
	expect_bad("# c\n\nethernet-rails = maybe\n", 3, "yes|no");
	expect_bad("\n\n\n\nfoo = bar\n", 5, "one of");
	expect_bad("accelerator = nvidia\n", 1, "VENDOR");
	expect_bad("accelerator = 10de:123456\n", 1, "VENDOR");
	expect_bad("accelerator = 10de:\n", 1, "VENDOR");
	expect_bad("exclude-nic = mlx5_0,,mlx5_1\n", 1, "comma-separated");
	expect_bad("include-nic =\n", 1, "comma-separated");
	expect_bad("memory-policy = interleave\n", 1, "preferred|bind");
	expect_bad("gpu-sharing = sometimes\n", 1, "auto|yes|no");
	expect_bad("slow-rails = 25\n", 1, "slow-rails = yes|no");
	/* The error is on the first bad line, not a later one. */
	expect_bad("ethernet-rails = yes\nx\ny\n", 2, "key = value");
}

static void test_files(void **state)
{
	struct aff_ctx *ctx = fx_ctx(NULL), *rooted;
	char dir[256], path[1024], sub[512], want[1100], err[4096] = "";

	(void)state;
	fx_mkdtemp(dir, sizeof(dir));
	/* An explicit path must exist. */
	snprintf(path, sizeof(path), "%s/missing.conf", dir);
	assert_int_equal(aff_ctx_load_config(ctx, path, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, path));
	/* The default one may be absent. */
	rooted = aff_ctx_new(dir);
	assert_non_null(rooted);
	assert_int_equal(aff_ctx_load_config(rooted, NULL, err, sizeof(err)), 0);
	/* A root's /etc/railbind/railbind.conf is read. */
	snprintf(sub, sizeof(sub), "%s/etc", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	snprintf(sub, sizeof(sub), "%s/etc/railbind", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	fx_write(sub, "railbind.conf", "ethernet-rails = yes\n", path, sizeof(path));
	assert_int_equal(aff_ctx_load_config(rooted, NULL, err, sizeof(err)), 0);
	assert_true(rooted->conf.ethernet_rails);
	/* Bad line through the file API: the file's name in the message. */
	fx_write(dir, "bad.conf", "ethernet-rails = yes\nbogus\n", path, sizeof(path));
	assert_int_equal(aff_ctx_load_config(ctx, path, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: expected ", path);
	assert_int_equal(strncmp(err, want, strlen(want)), 0);
	/* Binary data is refused. */
	snprintf(path, sizeof(path), "%s/bin.conf", dir);
	{
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fwrite("a = \0b\n", 1, 7, f);
		fclose(f);
	}
	assert_int_equal(aff_ctx_load_config(ctx, path, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "binary"));
	aff_ctx_unref(rooted);
	aff_ctx_unref(ctx);
	snprintf(sub, sizeof(sub), "%s/etc/railbind", dir);
	fx_rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/etc", dir);
	rmdir(sub);
	fx_rmdir(dir);
}

/* The audit's health limits: defaults, values, 0 for off, bad values. */
static void test_health_limits(void **state)
{
	struct aff_config c = { 0 };
	char err[512] = "";

	(void)state;
	assert_int_equal(aff_config_health_limit(&c, AFF_LIMIT_PCIE_COR_PER_MIN), 8);
	assert_int_equal(aff_config_health_limit(&c, AFF_LIMIT_PCIE_NONFATAL), 1);
	assert_int_equal(aff_config_health_limit(&c, AFF_LIMIT_PCIE_FATAL), 1);
	assert_int_equal(aff_config_health_limit(&c, AFF_LIMIT_LINK_FLAPPING), 2);
	assert_int_equal(aff_config_health_limit(&c, AFF_LIMIT_PORT_FLAPPING), 1);
	assert_int_equal(aff_config_parse(&c, "h.conf",
					  "link-flapping = 5\npcie-nonfatal = 0\nport-flapping=3\n",
					  err, sizeof(err)), 0);
	assert_int_equal(aff_config_health_limit(&c, AFF_LIMIT_LINK_FLAPPING), 5);
	assert_int_equal(aff_config_health_limit(&c, AFF_LIMIT_PCIE_NONFATAL), 0);
	assert_int_equal(aff_config_health_limit(&c, AFF_LIMIT_PORT_FLAPPING), 3);
	assert_int_equal(aff_config_health_limit(&c, AFF_LIMIT_PCIE_FATAL), 1);
	assert_string_equal(aff_config_health_key(AFF_LIMIT_PCIE_COR_PER_MIN),
			    "pcie-correctable-per-minute");
	aff_config_clear(&c);
	expect_bad("link-flapping = -1\n", 1, "a whole number");
	expect_bad("\npcie-fatal = 2x\n", 2, "a whole number");
	expect_bad("port-flapping =\n", 1, "a whole number");
	expect_bad("pcie-correctable-per-minute = 1000001\n", 1, "1000000");
	expect_bad("link-flaping = 2\n", 1, "link-flapping");
	assert_int_equal(aff_config_health_limit(&c, AFF_LIMIT_HEALTH_INTERVAL), 10);
	assert_int_equal(aff_config_parse(&c, "h.conf", "health-interval = 0\n", err, sizeof(err)), 0);
	assert_int_equal(aff_config_health_limit(&c, AFF_LIMIT_HEALTH_INTERVAL), 0);
	aff_config_clear(&c);
	expect_bad("health-interval = 86401\n", 1, "seconds");
}

/* The fabric's lossless RoCE: roce-priority, roce-trust, pause-frames-per-second. */
static void test_roce_keys(void **state)
{
	struct aff_config c = { 0 };
	char err[512] = "";

	(void)state;
	assert_false(c.roce_priority_set);
	assert_int_equal(c.roce_trust, AFF_TRUST_UNSET);
	assert_int_equal(aff_config_health_limit(&c, AFF_LIMIT_PAUSE_PER_SEC), 1000);
	assert_int_equal(aff_config_parse(&c, "r.conf",
					  "roce-priority = 3\nroce-trust = pcp\npause-frames-per-second = 0\n",
					  err, sizeof(err)), 0);
	assert_true(c.roce_priority_set);
	assert_int_equal(c.roce_priority, 3);
	assert_int_equal(c.roce_trust, AFF_TRUST_PCP);
	assert_int_equal(aff_config_health_limit(&c, AFF_LIMIT_PAUSE_PER_SEC), 0);
	assert_int_equal(aff_config_parse(&c, "r.conf", "roce-priority = 0\nroce-trust = dscp\n",
					  err, sizeof(err)), 0);
	assert_true(c.roce_priority_set);
	assert_int_equal(c.roce_priority, 0);
	assert_int_equal(c.roce_trust, AFF_TRUST_DSCP);
	aff_config_clear(&c);
	expect_bad("roce-priority = 8\n", 1, "0 to 7");
	expect_bad("\nroce-priority = 33\n", 2, "0 to 7");
	expect_bad("roce-priority =\n", 1, "0 to 7");
	expect_bad("roce-trust = DSCP\n", 1, "dscp|pcp");
	expect_bad("pause-frames-per-second = many\n", 1, "a whole number");
}

static void test_mem_bind_plan(void **state)
{
	struct aff_topo *t = fx_load_conf("small", "memory-policy = bind\n");
	struct aff_plan *p = fx_plan(t, NULL);

	(void)state;
	assert_true(p->flags & AFF_PLAN_MEM_BIND);
	aff_plan_unref(p);
	aff_topo_unref(t);
	t = fx_load("small");
	p = fx_plan(t, NULL);
	assert_false(p->flags & AFF_PLAN_MEM_BIND);
	aff_plan_unref(p);
	aff_topo_unref(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_mem_bind_plan),
		cmocka_unit_test(test_health_limits),
		cmocka_unit_test(test_roce_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
