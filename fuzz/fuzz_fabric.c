// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The rail port parsers (libaffinity/fabric_parse.c) on any text: the
 * first byte picks the parser, the rest is the file's or attribute's
 * content. What parses round-trips: a GID, a GID attribute and a counter
 * attribute written back read the same; states and LIDs stay in range.
 */
#include <stdlib.h>
#include <string.h>

#include "fabric.h"
#include "fuzz.h"

static void gid_info(const char *s)
{
	struct aff_gid g, back;
	char addr[40], line[128];

	if (aff_fabric_parse_gid_info(s, &g) < 0)
		return;
	aff_fabric_format_gid(g.raw, addr, sizeof(addr));
	snprintf(line, sizeof(line), "%u %s %s %s", g.index, aff_gid_type_name(g.type), addr,
		 g.netdev[0] ? g.netdev : "-");
	FUZZ_CHECK(aff_fabric_parse_gid_info(line, &back) == 0);
	FUZZ_CHECK(back.index == g.index && back.type == g.type &&
		   !memcmp(back.raw, g.raw, 16) && !strcmp(back.netdev, g.netdev));
}

static void counter_info(const char *s)
{
	struct aff_port_counter c, back;
	char line[96];

	if (aff_fabric_parse_counter_info(s, &c) < 0)
		return;
	FUZZ_CHECK(c.bits == 64 || c.value < 1ull << c.bits);
	snprintf(line, sizeof(line), "%s %llu %u", c.name, c.value, c.bits);
	FUZZ_CHECK(aff_fabric_parse_counter_info(line, &back) == 0);
	FUZZ_CHECK(back.value == c.value && back.bits == c.bits && !strcmp(back.name, c.name));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char raw[16], back[16];
	char *s, name[32], w[8], sp[16], addr[40], v4[16];
	unsigned long long v;
	enum aff_gid_type t;
	int num;
	long lid;

	if (!size || size > 4096)
		return 0;
	s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 8) {
	case 0:
		if (aff_fabric_parse_state(s, &num, name, sizeof(name)) == 0)
			FUZZ_CHECK(num >= 0 && num <= 255 && name[0] && strlen(name) < sizeof(name));
		break;
	case 1:
		if (aff_fabric_parse_lid(s, &lid) == 0)
			FUZZ_CHECK(lid >= 0 && lid <= 0xffff);
		break;
	case 2:
		if (aff_fabric_parse_rate_mode(s, w, sizeof(w), sp, sizeof(sp)) == 0)
			FUZZ_CHECK(w[0] && sp[0]);
		break;
	case 3:
		if (aff_fabric_parse_gid(s, raw) == 0) {
			aff_fabric_format_gid(raw, addr, sizeof(addr));
			FUZZ_CHECK(aff_fabric_parse_gid(addr, back) == 0 && !memcmp(raw, back, 16));
			if (aff_gid_is_ipv4(raw, v4, sizeof(v4)))
				FUZZ_CHECK(aff_gid_has_address(raw) && strlen(v4) >= 7);
		}
		break;
	case 4:
		if (aff_fabric_parse_gid_type(s, size & 1, &t) == 0)
			FUZZ_CHECK(t == AFF_GID_IB || t == AFF_GID_ROCE_V1 || t == AFF_GID_ROCE_V2);
		break;
	case 5:
		if (aff_fabric_parse_count(s, &v) == 0) {
			num = v < 1u << 20 ? aff_roce_mtu_of_netdev((int)v) : 0;
			FUZZ_CHECK(num == 0 || (num >= 256 && num <= 4096 && !(num & (num - 1))));
		}
		break;
	case 6:
		gid_info(s);
		break;
	default:
		counter_info(s);
		break;
	}
	free(s);
	return 0;
}
