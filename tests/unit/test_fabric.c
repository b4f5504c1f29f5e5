// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The rail port parsers (fabric_parse.c) on the text sysfs gives and on
 * what it does not: states with blanks, LIDs, GIDs (zero, IPv4-mapped,
 * link-local), GID types on each link layer, the RoCE MTU a netdev MTU
 * gives (the MTUs seen on Soft-RoCE: 1500/2200/4200/9000 give
 * 1024/2048/4096/4096), the attribute values read back, nccl-version.
 */
#include "fixture.h"
#include "fabric.h"
#include "internal.h"

static void test_states(void **state)
{
	char name[32];
	int n;

	(void)state;
	assert_int_equal(aff_fabric_parse_state("4: ACTIVE", &n, name, sizeof(name)), 0);
	assert_int_equal(n, 4);
	assert_string_equal(name, "ACTIVE");
	assert_int_equal(aff_fabric_parse_state("7: Phy Test", &n, name, sizeof(name)), 0);
	assert_string_equal(name, "Phy Test");
	assert_int_equal(aff_fabric_parse_state("5:LinkUp", &n, name, sizeof(name)), -EINVAL);
	assert_int_equal(aff_fabric_parse_state("5: ", &n, name, sizeof(name)), -EINVAL);
	assert_int_equal(aff_fabric_parse_state("999: X", &n, name, sizeof(name)), -EINVAL);
	assert_int_equal(aff_fabric_parse_state("ACTIVE", &n, name, sizeof(name)), -EINVAL);
}

static void test_lids_rates(void **state)
{
	char w[8], s[16];
	long lid;

	(void)state;
	assert_int_equal(aff_fabric_parse_lid("0x1a", &lid), 0);
	assert_int_equal(lid, 26);
	assert_int_equal(aff_fabric_parse_lid("0x0", &lid), 0);
	assert_int_equal(lid, 0);
	assert_int_equal(aff_fabric_parse_lid("26", &lid), -EINVAL);
	assert_int_equal(aff_fabric_parse_lid("0x10000", &lid), -EINVAL);
	assert_int_equal(aff_fabric_parse_rate_mode("400 Gb/sec (4X NDR)", w, sizeof(w), s,
						    sizeof(s)), 0);
	assert_string_equal(w, "4X");
	assert_string_equal(s, "NDR");
	assert_int_equal(aff_fabric_parse_rate_mode("25 Gb/sec (1X EDR", w, sizeof(w), s,
						    sizeof(s)), -EINVAL);
}

static void test_gids(void **state)
{
	unsigned char raw[16];
	enum aff_gid_type t;
	char v4[16], back[40];

	(void)state;
	assert_int_equal(aff_fabric_parse_gid("0000:0000:0000:0000:0000:ffff:c0a8:0102", raw), 0);
	assert_true(aff_gid_is_ipv4(raw, v4, sizeof(v4)));
	assert_string_equal(v4, "192.168.1.2");
	assert_true(aff_gid_has_address(raw));
	aff_fabric_format_gid(raw, back, sizeof(back));
	assert_string_equal(back, "0000:0000:0000:0000:0000:ffff:c0a8:0102");
	assert_int_equal(aff_fabric_parse_gid("fe80:0000:0000:0000:5054:00ff:fe12:3456", raw), 0);
	assert_false(aff_gid_has_address(raw));
	assert_int_equal(aff_fabric_parse_gid("0000:0000:0000:0000:0000:0000:0000:0000", raw), 0);
	assert_true(aff_gid_is_zero(raw));
	assert_false(aff_gid_has_address(raw));
	assert_int_equal(aff_fabric_parse_gid("fe80::1", raw), -EINVAL);
	assert_int_equal(aff_fabric_parse_gid("fe80:0000:0000:0000:5054:00ff:fe12:345g", raw),
			 -EINVAL);
	assert_int_equal(aff_fabric_parse_gid("fe80-0000:0000:0000:5054:00ff:fe12:3456", raw),
			 -EINVAL);
	assert_int_equal(aff_fabric_parse_gid_type("IB/RoCE v1", false, &t), 0);
	assert_int_equal(t, AFF_GID_IB);
	assert_int_equal(aff_fabric_parse_gid_type("IB/RoCE v1", true, &t), 0);
	assert_int_equal(t, AFF_GID_ROCE_V1);
	assert_int_equal(aff_fabric_parse_gid_type("RoCE v2", true, &t), 0);
	assert_int_equal(t, AFF_GID_ROCE_V2);
	assert_int_equal(aff_fabric_parse_gid_type("RoCE v3", true, &t), -EINVAL);
}

static void test_mtus(void **state)
{
	(void)state;
	assert_int_equal(aff_roce_mtu_of_netdev(1500), 1024);
	assert_int_equal(aff_roce_mtu_of_netdev(2200), 2048);
	assert_int_equal(aff_roce_mtu_of_netdev(4200), 4096);
	assert_int_equal(aff_roce_mtu_of_netdev(9000), 4096);
	assert_int_equal(aff_roce_mtu_of_netdev(300), 0);
	assert_int_equal(aff_ib_mtu_bytes(5), 4096);
	assert_int_equal(aff_ib_mtu_bytes(1), 256);
	assert_int_equal(aff_ib_mtu_bytes(6), 0);
}

static void test_attributes(void **state)
{
	struct aff_port_counter c;
	struct aff_gid g;

	(void)state;
	assert_int_equal(aff_fabric_parse_gid_info("3 RoCEv2 0000:0000:0000:0000:0000:ffff:0a00:0001 eth0",
						   &g), 0);
	assert_int_equal(g.index, 3);
	assert_int_equal(g.type, AFF_GID_ROCE_V2);
	assert_string_equal(g.netdev, "eth0");
	assert_int_equal(aff_fabric_parse_gid_info("0 IB fe80:0000:0000:0000:0002:c903:0031:7e91 -",
						   &g), 0);
	assert_string_equal(g.netdev, "");
	assert_int_equal(aff_fabric_parse_gid_info("3 RoCEv2 ::ffff:10.0.0.1 eth0", &g), -EINVAL);
	assert_int_equal(aff_fabric_parse_gid_info("3 RoCEv2 0000:0000:0000:0000:0000:ffff:0a00:0001 eth0 x",
						   &g), -EINVAL);
	assert_int_equal(aff_fabric_parse_counter_info("symbol_error 65535 16", &c), 0);
	assert_int_equal(c.value, 65535);
	assert_int_equal(c.bits, 16);
	/* Past a counter's width: the kernel never writes that. */
	assert_int_equal(aff_fabric_parse_counter_info("link_downed 256 8", &c), -EINVAL);
	assert_int_equal(aff_fabric_parse_counter_info("link_downed 300 64", &c), 0);
	assert_int_equal(aff_fabric_parse_counter_info("x 1 7", &c), -EINVAL);
}

static void test_nccl_version(void **state)
{
	struct aff_config c = { 0 };
	char err[256] = "";

	(void)state;
	assert_int_equal(aff_config_parse(&c, "a.conf", "nccl-version = 2.18.3\n", err,
					  sizeof(err)), 0);
	assert_int_equal(c.nccl_version, 21803);
	assert_int_equal(aff_config_parse(&c, "a.conf", "nccl-version = 2.21\n", err,
					  sizeof(err)), 0);
	assert_int_equal(c.nccl_version, 22100);
	assert_int_equal(aff_config_parse(&c, "b.conf", "\nnccl-version = 2.21.\n", err,
					  sizeof(err)), -EINVAL);
	assert_string_equal(err, "b.conf:2: expected nccl-version = MAJOR.MINOR[.PATCH], e.g. 2.21.5");
	aff_config_clear(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_lids_rates),
		cmocka_unit_test(test_gids),
		cmocka_unit_test(test_mtus),
		cmocka_unit_test(test_attributes),
		cmocka_unit_test(test_nccl_version),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
