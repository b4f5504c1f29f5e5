// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * aff_parse_cpumask(): the sysfs cpumap format of <cpu affinity>. Besides
 * memory safety, an accepted mask must set exactly as many CPUs as its hex
 * digits have bits, and the highest one where its word says.
 */
#include "fuzz.h"

static int bits(int c)
{
	int v = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;

	return __builtin_popcount((unsigned)v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	char *s = fuzz_strdup(data, size);
	int want = 0;
	size_t i;

	if (!set)
		abort();
	if (aff_parse_cpumask(s, set) == 0) {
		for (i = 0; s[i]; i++)
			if (s[i] != ',')
				want += bits((unsigned char)s[i]);
		FUZZ_CHECK(hwloc_bitmap_weight(set) == want);
	}
	hwloc_bitmap_free(set);
	free(s);
	return 0;
}
