// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The ACS table's arithmetic (what differs, what config_acs= makes of a
 * value) and the kernel gates of the pci=config_acs= remedy.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "acs_table.h"

static void differs_and_apply(void **state)
{
	char bits[8], names[48];

	(void)state;
	/* The kernel's default SV|RR|CR|UF against the DMA function's port: RR. */
	assert_int_equal(aff_acs_differs(0x1d, "xx110x1"), 0x04);
	assert_int_equal(aff_acs_apply(0x1d, "xx110x1"), 0x19);
	/* Against the GPU's port: CR; the root port: SV. */
	assert_int_equal(aff_acs_differs(0x1d, "xx101x1"), 0x08);
	assert_int_equal(aff_acs_differs(0x1d, "xx111x0"), 0x01);
	/* 'x' leaves TB, EC, DT alone either way. */
	assert_int_equal(aff_acs_differs(0x62, "xx000x0"), 0);
	assert_int_equal(aff_acs_apply(0x7f, "xx000x0"), 0x62);
	/* Direct Translated P2P on for a virtualised inline NIC. */
	assert_int_equal(aff_acs_differs(0x1d, "1x111x1"), 0x40);
	/* Classic: any redirect (RR, CR, EC) is a difference. */
	assert_int_equal(aff_acs_differs(0x20, "x0x00xx"), 0x20);
	assert_int_equal(aff_acs_differs(0x51, "x0x00xx"), 0);
	aff_acs_bits(0x1d, bits);
	assert_string_equal(bits, "0011101");
	aff_acs_bit_names(0x4c, names, sizeof(names));
	assert_string_equal(names, "DT CR RR");
	assert_string_equal(aff_acs_kernel_default(true), "xx101x1");
	assert_string_equal(aff_acs_kernel_default(false), "xx111x1");
	assert_string_equal(aff_acs_rule(AFF_ACS_DMA_DSP_DMA)->want, "xx110x1");
	assert_string_equal(aff_acs_rule(AFF_ACS_NROLES)->id, "none");
}

static void kernel_gates(void **state)
{
	int maj, min, pat;

	(void)state;
	assert_int_equal(aff_kernel_version("6.12.9+deb13-amd64", &maj, &min, &pat), 0);
	assert_int_equal(maj * 10000 + min * 100 + pat, 61209);
	assert_int_equal(aff_kernel_version("6.1", &maj, &min, &pat), 0);
	assert_int_equal(pat, 0);
	assert_int_equal(aff_kernel_version("banana", &maj, &min, &pat), -EINVAL);
	assert_int_equal(aff_kernel_version("6", &maj, &min, &pat), -EINVAL);
	assert_int_equal(aff_kernel_version(NULL, &maj, &min, &pat), -EINVAL);
	assert_int_equal(aff_kernel_version("999999999.1", &maj, &min, &pat), -EINVAL);

	assert_int_equal(aff_acs_kernel_check(NULL, 2), AFF_ACS_KERNEL_UNKNOWN);
	assert_int_equal(aff_acs_kernel_check("6.10.14", 1), AFF_ACS_KERNEL_TOO_OLD);
	assert_int_equal(aff_acs_kernel_check("6.11.0", 1), AFF_ACS_KERNEL_OK);
	assert_int_equal(aff_acs_kernel_check("6.11.0", 2), AFF_ACS_KERNEL_ONE_ONLY);
	assert_int_equal(aff_acs_kernel_check("6.12.0", 3), AFF_ACS_KERNEL_OK);
	assert_int_equal(aff_acs_kernel_check("6.14.11", 3), AFF_ACS_KERNEL_ONE_ONLY);
	assert_int_equal(aff_acs_kernel_check("6.15", 3), AFF_ACS_KERNEL_OK);
	assert_int_equal(aff_acs_kernel_check("7.0.1", 3), AFF_ACS_KERNEL_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(differs_and_apply),
		cmocka_unit_test(kernel_gates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
