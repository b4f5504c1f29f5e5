// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * NCCL topology XML import, in memory (aff_load_nccl_mem), then everything
 * a loaded topology goes through: classification, paths, the plan and the
 * JSON documents.
 */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aff_ctx *ctx = fuzz_ctx();
	struct aff_topo *t = aff_topo_alloc(ctx, AFF_SRC_NCCL, "fuzz.xml");
	char err[256];

	if (!t)
		abort();
	if (aff_load_nccl_mem(t, (const char *)data, size, "fuzz.xml", err,
			      sizeof(err)) == 0) {
		fuzz_walk_topo(t);
		fuzz_plan(t, NULL);
	}
	aff_topo_unref(t);
	aff_ctx_unref(ctx);
	return 0;
}
