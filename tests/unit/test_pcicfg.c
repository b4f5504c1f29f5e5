// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Config-space walker on synthetic buffers. Each buffer is heap-allocated with its
 * exact length so ASan/valgrind flag any read past the end.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pcicfg.h"

static uint8_t *cfg_new(size_t len)
{
	uint8_t *cfg = calloc(1, len);

	assert_non_null(cfg);
	return cfg;
}

static void put32(uint8_t *cfg, size_t pos, uint32_t v)
{
	cfg[pos] = v & 0xff;
	cfg[pos + 1] = (v >> 8) & 0xff;
	cfg[pos + 2] = (v >> 16) & 0xff;
	cfg[pos + 3] = (v >> 24) & 0xff;
}

static void put16(uint8_t *cfg, size_t pos, uint16_t v)
{
	cfg[pos] = v & 0xff;
	cfg[pos + 1] = v >> 8;
}

/* Extended capability header: id, version 1, next pointer. */
static void put_hdr(uint8_t *cfg, size_t pos, uint16_t id, uint16_t next)
{
	put32(cfg, pos, (uint32_t)id | 1u << 16 | (uint32_t)next << 20);
}

static void acs_at_end_of_chain(void **state)
{
	uint8_t *cfg = cfg_new(4096);
	uint16_t cap = 0, ctl = 0;

	(void)state;
	put_hdr(cfg, 0x100, 0x0001, 0x148);	/* AER */
	put_hdr(cfg, 0x148, 0x000b, 0x300);	/* vendor specific */
	put_hdr(cfg, 0x300, 0x0019, 0xff0);	/* secondary PCIe */
	put_hdr(cfg, 0xff0, 0x000d, 0);		/* ACS, last */
	put16(cfg, 0xff4, 0x005f);
	put16(cfg, 0xff6, 0x001d);

	assert_int_equal(aff_pcicfg_find_ext_cap(cfg, 4096, 0x000d), 0xff0);
	assert_int_equal(aff_pcicfg_find_ext_cap(cfg, 4096, 0x0001), 0x100);
	assert_int_equal(aff_pcicfg_find_ext_cap(cfg, 4096, 0x0019), 0x300);
	assert_int_equal(aff_pcicfg_read_acs(cfg, 4096, &cap, &ctl), 0);
	assert_int_equal(cap, 0x005f);
	assert_int_equal(ctl, 0x001d);
	/* NULL out pointers are allowed */
	assert_int_equal(aff_pcicfg_read_acs(cfg, 4096, NULL, NULL), 0);
	free(cfg);
}

static void acs_first(void **state)
{
	uint8_t *cfg = cfg_new(4096);
	uint16_t ctl = 0;

	(void)state;
	put_hdr(cfg, 0x100, 0x000d, 0x200);
	put16(cfg, 0x106, 0x0000);
	put_hdr(cfg, 0x200, 0x0001, 0);
	assert_int_equal(aff_pcicfg_read_acs(cfg, 4096, NULL, &ctl), 0);
	assert_int_equal(ctl, 0);
	free(cfg);
}

static void acs_absent(void **state)
{
	uint8_t *cfg = cfg_new(4096);
	uint16_t ctl = 0xabcd;

	(void)state;
	put_hdr(cfg, 0x100, 0x0001, 0x140);
	put_hdr(cfg, 0x140, 0x0010, 0);
	assert_int_equal(aff_pcicfg_read_acs(cfg, 4096, NULL, &ctl), -ENOENT);
	assert_int_equal(ctl, 0xabcd);
	free(cfg);
}

static void no_ext_caps(void **state)
{
	uint8_t *cfg = cfg_new(4096);

	(void)state;
	assert_int_equal(aff_pcicfg_find_ext_cap(cfg, 4096, 0x000d), -ENOENT);
	free(cfg);
}

static void all_ones_is_io_error(void **state)
{
	uint8_t *cfg = cfg_new(4096);

	(void)state;
	memset(cfg, 0xff, 4096);
	assert_int_equal(aff_pcicfg_find_ext_cap(cfg, 4096, 0x000d), -EIO);
	free(cfg);
}

static void loop_in_chain(void **state)
{
	uint8_t *cfg = cfg_new(4096);

	(void)state;
	put_hdr(cfg, 0x100, 0x0001, 0x200);
	put_hdr(cfg, 0x200, 0x0002, 0x300);
	put_hdr(cfg, 0x300, 0x0003, 0x200);	/* back to 0x200 */
	assert_int_equal(aff_pcicfg_find_ext_cap(cfg, 4096, 0x000d), -ENOENT);
	/* caps before the loop are still found */
	assert_int_equal(aff_pcicfg_find_ext_cap(cfg, 4096, 0x0003), 0x300);
	free(cfg);
}

static void self_loop(void **state)
{
	uint8_t *cfg = cfg_new(4096);

	(void)state;
	put_hdr(cfg, 0x100, 0x0001, 0x100);
	assert_int_equal(aff_pcicfg_find_ext_cap(cfg, 4096, 0x000d), -ENOENT);
	free(cfg);
}

static void truncated_64(void **state)
{
	uint8_t *cfg = cfg_new(64);

	(void)state;
	assert_int_equal(aff_pcicfg_find_ext_cap(cfg, 64, 0x000d), -ENODATA);
	assert_int_equal(aff_pcicfg_read_acs(cfg, 64, NULL, NULL), -ENODATA);
	free(cfg);
}

static void truncated_conventional(void **state)
{
	uint8_t *cfg = cfg_new(256);

	(void)state;
	assert_int_equal(aff_pcicfg_find_ext_cap(cfg, 256, 0x000d), -ENODATA);
	free(cfg);
}

static void truncated_mid_chain(void **state)
{
	uint8_t *cfg = cfg_new(0x180);

	(void)state;
	put_hdr(cfg, 0x100, 0x0001, 0x200);	/* next lies beyond the buffer */
	assert_int_equal(aff_pcicfg_find_ext_cap(cfg, 0x180, 0x000d), -ENODATA);
	free(cfg);
}

static void acs_registers_truncated(void **state)
{
	uint8_t *cfg = cfg_new(0x106);	/* header readable, control register not */

	(void)state;
	put_hdr(cfg, 0x100, 0x000d, 0);
	assert_int_equal(aff_pcicfg_find_ext_cap(cfg, 0x106, 0x000d), 0x100);
	assert_int_equal(aff_pcicfg_read_acs(cfg, 0x106, NULL, NULL), -ENODATA);
	free(cfg);
}

static void bogus_next_pointers(void **state)
{
	uint8_t *cfg = cfg_new(4096);
	uint16_t ctl = 0;

	(void)state;
	/* backwards into conventional space ends the walk */
	put_hdr(cfg, 0x100, 0x0001, 0x040);
	assert_int_equal(aff_pcicfg_find_ext_cap(cfg, 4096, 0x000d), -ENOENT);

	/* unaligned next pointer: reserved low bits are masked, as the spec says */
	memset(cfg, 0, 4096);
	put_hdr(cfg, 0x100, 0x0001, 0x203);
	put_hdr(cfg, 0x200, 0x000d, 0);
	put16(cfg, 0x206, 0x0011);
	assert_int_equal(aff_pcicfg_read_acs(cfg, 4096, NULL, &ctl), 0);
	assert_int_equal(ctl, 0x0011);

	/* ACS header in the last dword: its registers would be outside the space */
	memset(cfg, 0, 4096);
	put_hdr(cfg, 0x100, 0x0001, 0xffc);
	put_hdr(cfg, 0xffc, 0x000d, 0);
	assert_int_equal(aff_pcicfg_find_ext_cap(cfg, 4096, 0x000d), 0xffc);
	assert_int_equal(aff_pcicfg_read_acs(cfg, 4096, NULL, NULL), -ENOENT);
	free(cfg);
}

static void oversized_buffer_is_clamped(void **state)
{
	uint8_t *cfg = cfg_new(8192);

	(void)state;
	put_hdr(cfg, 0x100, 0x0001, 0xffc);
	put_hdr(cfg, 0xffc, 0x0002, 0);
	assert_int_equal(aff_pcicfg_find_ext_cap(cfg, 8192, 0x000d), -ENOENT);
	free(cfg);
}

static void null_buffer(void **state)
{
	(void)state;
	assert_int_equal(aff_pcicfg_find_ext_cap(NULL, 4096, 0x000d), -EINVAL);
	assert_int_equal(aff_pcicfg_read_acs(NULL, 4096, NULL, NULL), -EINVAL);
}

/* Deterministic pseudo-random chains: must never crash or read out of bounds. */
static void random_chains(void **state)
{
	uint32_t seed = 12345;
	int round;

	(void)state;
	for (round = 0; round < 2000; round++) {
		size_t len = 64 + (seed % (4096 - 64 + 1));
		uint8_t *cfg = cfg_new(len);
		size_t i;
		int r;

		for (i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			cfg[i] = (uint8_t)(seed >> 16);
		}
		r = aff_pcicfg_find_ext_cap(cfg, len, 0x000d);
		assert_true(r == -ENOENT || r == -ENODATA || r == -EIO ||
			    (r >= 0x100 && (size_t)r + 4 <= len));
		r = aff_pcicfg_read_acs(cfg, len, NULL, NULL);
		assert_true(r == 0 || r == -ENOENT || r == -ENODATA || r == -EIO);
		free(cfg);
	}
}

/* A conventional header whose capability list holds PCIe type @type at 0x60. */
static uint8_t *with_pcie_cap(size_t len, int type, bool bridge)
{
	uint8_t *cfg = cfg_new(256);
	uint8_t *out;

	put32(cfg, 0, 0x80861234);
	put16(cfg, 0x06, 0x0010);		/* status: capability list */
	cfg[0x0e] = bridge ? 0x01 : 0x00;
	cfg[0x34] = 0x40;
	cfg[0x40] = 0x01;			/* power management */
	cfg[0x41] = 0x61;			/* reserved low bits set: 0x60 */
	cfg[0x60] = 0x10;			/* PCI Express */
	cfg[0x61] = 0x00;
	put16(cfg, 0x62, (uint16_t)(0x0002 | type << 4));
	out = cfg_new(len);
	memcpy(out, cfg, len);
	free(cfg);
	return out;
}

static void port_types(void **state)
{
	static const int types[] = { 0x0, 0x1, 0x4, 0x5, 0x6, 0x7, 0x8, 0x9, 0xa };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		uint8_t *cfg = with_pcie_cap(256, types[i], types[i] >= 4 && types[i] <= 8);

		assert_int_equal(aff_pcicfg_port_type(cfg, 256), types[i]);
		assert_int_equal(aff_pcicfg_is_bridge(cfg, 256), types[i] >= 4 && types[i] <= 8);
		free(cfg);
	}
}

/* Device Control: MPS 256 (1 << 5), MRRS 4096 (5 << 12), Relaxed Ordering on. */
static void device_control(void **state)
{
	uint8_t *cfg = with_pcie_cap(256, AFF_PCI_EXP_ENDPOINT, false), *cut;
	int dc;

	(void)state;
	put16(cfg, 0x68, 0x5030);
	dc = aff_pcicfg_devctl(cfg, 256);
	assert_int_equal(dc, 0x5030);
	assert_int_equal(AFF_PCI_EXP_DEVCTL_PAYLOAD((unsigned)dc), 256);
	assert_int_equal(AFF_PCI_EXP_DEVCTL_READRQ((unsigned)dc), 4096);
	assert_true(dc & AFF_PCI_EXP_DEVCTL_RELAX);
	/* Cut just before the register: unknown, not zero. */
	cut = cfg_new(0x69);
	memcpy(cut, cfg, 0x69);
	assert_int_equal(aff_pcicfg_devctl(cut, 0x69), -ENODATA);
	free(cut);
	free(cfg);
	cfg = cfg_new(256);
	assert_int_equal(aff_pcicfg_devctl(cfg, 256), -ENOENT);
	free(cfg);
}

static void port_type_limits(void **state)
{
	uint8_t *cfg;

	(void)state;
	/* What an unprivileged reader gets: the pointer, not the list. */
	cfg = with_pcie_cap(64, AFF_PCI_EXP_UPSTREAM, true);
	assert_int_equal(aff_pcicfg_port_type(cfg, 64), -ENODATA);
	assert_int_equal(aff_pcicfg_is_bridge(cfg, 64), 1);
	free(cfg);
	/* Cut inside the PCIe capability itself. */
	cfg = with_pcie_cap(0x62, AFF_PCI_EXP_UPSTREAM, true);
	assert_int_equal(aff_pcicfg_port_type(cfg, 0x62), -ENODATA);
	free(cfg);
	assert_int_equal(aff_pcicfg_is_bridge(NULL, 0), -EINVAL);
	assert_int_equal(aff_pcicfg_port_type(NULL, 256), -EINVAL);
	cfg = cfg_new(4);
	assert_int_equal(aff_pcicfg_is_bridge(cfg, 4), -ENODATA);
	free(cfg);

	/* No capability list: conventional PCI. */
	cfg = with_pcie_cap(256, AFF_PCI_EXP_UPSTREAM, true);
	put16(cfg, 0x06, 0);
	assert_int_equal(aff_pcicfg_port_type(cfg, 256), -ENOENT);
	/* A list without the PCIe capability, then one looping on itself. */
	put16(cfg, 0x06, 0x0010);
	cfg[0x41] = 0x00;
	assert_int_equal(aff_pcicfg_port_type(cfg, 256), -ENOENT);
	cfg[0x41] = 0x40;
	assert_int_equal(aff_pcicfg_port_type(cfg, 256), -ENOENT);
	/* A pointer into the header is the end of the list. */
	cfg[0x41] = 0x3c;
	assert_int_equal(aff_pcicfg_port_type(cfg, 256), -ENOENT);
	/* Device gone. */
	memset(cfg, 0xff, 256);
	assert_int_equal(aff_pcicfg_port_type(cfg, 256), -EIO);
	free(cfg);
}

/* Random lists: never a read past the buffer, never a loop. */
static void port_type_random(void **state)
{
	unsigned seed = 12;
	int round;

	(void)state;
	for (round = 0; round < 2000; round++) {
		size_t len = 48 + (size_t)(rand_r(&seed) % 260), k;
		uint8_t *cfg = cfg_new(len);
		int r;

		for (k = 0; k < len; k++)
			cfg[k] = (uint8_t)rand_r(&seed);
		r = aff_pcicfg_port_type(cfg, len);
		assert_true(r == -ENOENT || r == -ENODATA || r == -EIO || (r >= 0 && r <= 15));
		free(cfg);
	}
}

/* An ID string, VPD-R with PN, V3 and RV, the end tag: as a ConnectX-8 has it. */
static size_t vpd_build(uint8_t *b, const char *v3)
{
	static const char id[] = "ConnectX-8";
	size_t n = 0, r, vl = strlen(v3);

	b[n++] = 0x82;
	put16(b, n, sizeof(id) - 1);
	n += 2;
	memcpy(b + n, id, sizeof(id) - 1);
	n += sizeof(id) - 1;
	b[n++] = 0x90;
	r = n;
	n += 2;
	memcpy(b + n, "PN\x03" "abc", 6);
	n += 6;
	b[n++] = 'V';
	b[n++] = '3';
	b[n++] = (uint8_t)(vl + 2);
	memcpy(b + n, v3, vl);
	n += vl;
	b[n++] = ' ';
	b[n++] = 0;
	memcpy(b + n, "RV\x01\x00", 4);
	n += 4;
	put16(b, r, (uint16_t)(n - r - 2));
	b[n++] = 0x78;
	return n;
}

static void vpd_v3(void **state)
{
	uint8_t b[256];
	char out[64];
	size_t n = vpd_build(b, "0123abcd-0000-1111-2222-333344445555"), k;
	uint8_t *exact = cfg_new(n);

	(void)state;
	memcpy(exact, b, n);
	assert_int_equal(aff_pcicfg_vpd_keyword(exact, n, "V3", out, sizeof(out)), 0);
	assert_string_equal(out, "0123abcd-0000-1111-2222-333344445555");
	assert_int_equal(aff_pcicfg_vpd_keyword(exact, n, "PN", out, sizeof(out)), 0);
	assert_string_equal(out, "abc");
	assert_int_equal(aff_pcicfg_vpd_keyword(exact, n, "V9", out, sizeof(out)), -ENOENT);
	assert_int_equal(aff_pcicfg_vpd_keyword(exact, n, "V3", out, 8), -ERANGE);
	/* Every truncation parses to an error, never past the buffer. */
	for (k = 0; k < n - 1; k++) {
		int r = aff_pcicfg_vpd_keyword(exact, k, "V3", out, sizeof(out));

		assert_true(r == -EINVAL || r == -ENOENT || r == 0);
		assert_true(r != 0 || k > 30);
	}
	/* A VPD-R length past the data. */
	exact[14] = 0xff;
	assert_int_equal(aff_pcicfg_vpd_keyword(exact, n, "V3", out, sizeof(out)), -EINVAL);
	assert_int_equal(aff_pcicfg_vpd_keyword(NULL, n, "V3", out, sizeof(out)), -EINVAL);
	free(exact);
	/* The end tag before any VPD-R; all ones (an unreadable device). */
	b[0] = 0x78;
	assert_int_equal(aff_pcicfg_vpd_keyword(b, n, "V3", out, sizeof(out)), -EINVAL);
	memset(b, 0xff, sizeof(b));
	assert_int_equal(aff_pcicfg_vpd_keyword(b, sizeof(b), "V3", out, sizeof(out)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(acs_at_end_of_chain),
		cmocka_unit_test(acs_first),
		cmocka_unit_test(acs_absent),
		cmocka_unit_test(no_ext_caps),
		cmocka_unit_test(all_ones_is_io_error),
		cmocka_unit_test(loop_in_chain),
		cmocka_unit_test(self_loop),
		cmocka_unit_test(truncated_64),
		cmocka_unit_test(truncated_conventional),
		cmocka_unit_test(truncated_mid_chain),
		cmocka_unit_test(acs_registers_truncated),
		cmocka_unit_test(bogus_next_pointers),
		cmocka_unit_test(oversized_buffer_is_clamped),
		cmocka_unit_test(null_buffer),
		cmocka_unit_test(random_chains),
		cmocka_unit_test(port_types),
		cmocka_unit_test(port_type_limits),
		cmocka_unit_test(device_control),
		cmocka_unit_test(port_type_random),
		cmocka_unit_test(vpd_v3),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
