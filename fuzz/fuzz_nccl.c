// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * NCCL topology XML import, in memory (aff_load_nccl_mem), then everything
 * a loaded topology goes through: classification, paths, the plan and the
 * JSON documents; and its export as NCCL XML, which reads the source file
 * again for what the model does not hold (out_nccl_source.c): the input is
 * also written to a file of that name for it. Then the facts railbind fleet
 * compares (its rails too).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aff_ctx *ctx = fuzz_ctx();
	char path[] = "/tmp/railbind-fuzz-nccl.XXXXXX", err[256], *out = NULL;
	int fd = mkstemp(path);
	struct aff_topo *t = aff_topo_alloc(ctx, AFF_SRC_NCCL, fd >= 0 ? path : "fuzz.xml");

	if (!t)
		abort();
	if (fd >= 0 && (write(fd, data, size) != (ssize_t)size || close(fd)))
		abort();
	if (aff_load_nccl_mem(t, (const char *)data, size, fd >= 0 ? path : "fuzz.xml", err,
			      sizeof(err)) == 0) {
		fuzz_walk_topo(t);
		fuzz_plan(t, NULL);
		if (aff_topo_nccl_xml(t, 0, &out) == 0)
			free(out);
		out = NULL;
		if (aff_topo_facts_json(t, 0, &out) == 0)
			free(out);
	}
	if (fd >= 0)
		unlink(path);
	aff_topo_unref(t);
	aff_ctx_unref(ctx);
	return 0;
}
