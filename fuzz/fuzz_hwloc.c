// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * aff_topo_load() on a file: the root-element sniffing, hwloc's XML import
 * (v1, v2, railbind snapshots), the Railbind* attributes, then the plan and
 * JSON. The input lives in a memfd and is loaded by its /proc/self/fd path,
 * so no disk is touched and the public entry point is the one fuzzed.
 *
 * The import runs as railbind's library runs it, in a child process: an
 * input hwloc 2.9.0 crashes on must come back as an error (hwloc's crash,
 * contained), and a crash of railbind's own code on whatever hwloc loads is
 * a finding.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

static int fd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static hwloc_topology_t anchor;
	struct aff_ctx *ctx;
	struct aff_topo *t = NULL;
	char path[64], err[256];

	/* hwloc's plugins loaded once, not for every input (railbind fleet does the same). */
	if (!anchor && hwloc_topology_init(&anchor) < 0)
		abort();
	if (fd < 0 && (fd = memfd_create("railbind-fuzz", MFD_CLOEXEC)) < 0)
		abort();
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ctx = fuzz_ctx();
	if (aff_topo_load(ctx, path, 0, &t, err, sizeof(err)) == 0) {
		fuzz_walk_topo(t);
		fuzz_plan(t, NULL);
		aff_topo_unref(t);
	}
	aff_ctx_unref(ctx);
	return 0;
}
