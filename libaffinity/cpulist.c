// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * CPU sets as text: the Linux cpulist users write and railbind prints
 * ("0-13,112-125"), and the hex mask of sysfs cpumap files and NCCL's
 * <cpu affinity> ("ffffffff,0000ffff"). Apart from the model and the
 * sources so that both, and the plan and verify, use one parser.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/*
 * "ffffffff,00000000,0000ffff": 32-bit words, most significant first, as
 * /sys/devices/system/node/nodeN/cpumap writes them.
 */
int aff_parse_cpumask(const char *s, hwloc_bitmap_t set)
{
	size_t words = 1, w;
	const char *p;

	hwloc_bitmap_zero(set);
	if (!*s)
		return -EINVAL;
	for (p = s; *p; p++)
		if (*p == ',')
			words++;
	if (words > 4096)
		return -EINVAL;
	for (w = 0, p = s; w < words; w++) {
		unsigned long v = 0;
		int digits = 0, bit;

		while (*p && *p != ',') {
			int c = tolower((unsigned char)*p);

			if (!isxdigit(c) || ++digits > 8)
				return -EINVAL;
			v = v * 16 + (unsigned long)(isdigit(c) ? c - '0' : c - 'a' + 10);
			p++;
		}
		if (!digits)
			return -EINVAL;
		if (*p)
			p++;
		for (bit = 0; bit < 32; bit++)
			if (v & (1ul << bit))
				hwloc_bitmap_set(set, (unsigned)((words - 1 - w) * 32 + bit));
	}
	return 0;
}

static int cpu_number(const char **p, unsigned *out)
{
	unsigned long v = 0;
	const char *s = *p;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		v = v * 10 + (unsigned long)(*s - '0');
		if (v >= AFF_MAX_CPU)
			return -EINVAL;
	}
	*p = s;
	*out = (unsigned)v;
	return 0;
}

int aff_cpulist_walk(const char *s, int (*range)(unsigned lo, unsigned hi, void *data),
		     void *data)
{
	for (;;) {
		unsigned lo, hi;
		int rc;

		if (cpu_number(&s, &lo) < 0)
			return -EINVAL;
		hi = lo;
		if (*s == '-') {
			s++;
			if (cpu_number(&s, &hi) < 0 || hi < lo)
				return -EINVAL;
		}
		rc = range(lo, hi, data);
		if (rc < 0)
			return rc;
		if (!*s)
			return 0;
		if (*s++ != ',')
			return -EINVAL;
	}
}

static int set_range(unsigned lo, unsigned hi, void *set)
{
	return hwloc_bitmap_set_range(set, lo, (int)hi) < 0 ? -ENOMEM : 0;
}

int aff_parse_cpulist(const char *s, hwloc_bitmap_t set)
{
	hwloc_bitmap_zero(set);
	return aff_cpulist_walk(s, set_range, set);
}

char *aff_bitmap_list(hwloc_const_bitmap_t set)
{
	char *s = NULL;

	if (hwloc_bitmap_iszero(set))
		return strdup("");
	if (hwloc_bitmap_list_asprintf(&s, set) < 0)
		return NULL;
	return s;
}
