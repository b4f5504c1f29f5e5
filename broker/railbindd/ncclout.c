// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind.conf's nccl-topo-file: the broker keeps NCCL's topology XML of the
 * node there, written whole (temporary file, rename) on start and whenever
 * the plan's generation changes, so NCCL never reads half a file nor a stale
 * one. Off unless the config names a file.
 */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "affinity.h"
#include "log.h"
#include "railbindd.h"

static char *written;	/* the path last written, to notice a new one */

void ncclout_update(struct aff_ctx *ctx, const struct aff_topo *topo, bool changed)
{
	const char *path = aff_ctx_nccl_topo_file(ctx);
	char err[1024] = "", *dir;

	if (!path || !topo || (!changed && written && !strcmp(written, path)))
		return;
	/* NCCL's default place, /var/run/nvidia-topologyd, exists only where
	 * nvidia-topologyd runs: make the last level. */
	dir = strdup(path);
	if (dir && mkdir(dirname(dir), 0755) < 0 && errno != EEXIST)
		rbd_log(LOG_WARNING, "nccl-topo-file: creating the directory of %s: %s",
			path, strerror(errno));
	free(dir);
	if (aff_topo_nccl_write(topo, path, err, sizeof(err)) < 0) {
		rbd_log(LOG_ERR, "%s", err);
		return;
	}
	rbd_log(LOG_INFO, "NCCL topology written to %s", path);
	free(written);
	written = strdup(path);
}

void ncclout_fini(void)
{
	free(written);
	written = NULL;
}
