// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * aff_gres_parse(): a node's Slurm gres.conf, as the audit's slurm-gres check
 * reads it. Besides memory safety: an accepted file never holds more devices
 * than the limit, every device's file name has no blank in it (tokens are
 * split on blanks), and a device's cores are a finite set.
 */
#include "fuzz.h"
#include "gres.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aff_gres_file *g = calloc(1, sizeof(*g));
	char *s = fuzz_strdup(data, size);

	if (!g)
		abort();
	if (aff_gres_parse(g, s, "fuzzhost") == 0) {
		FUZZ_CHECK(g->ndev <= AFF_GRES_MAX_DEVS);
		for (size_t i = 0; i < g->ndev; i++) {
			FUZZ_CHECK(!strpbrk(g->dev[i].file, " \t\r\n"));
			FUZZ_CHECK(!g->dev[i].cores || hwloc_bitmap_weight(g->dev[i].cores) >= 0);
		}
	}
	FUZZ_CHECK(memchr(g->why, '\0', sizeof(g->why)));
	aff_gres_file_free(g);
	free(s);
	return 0;
}
