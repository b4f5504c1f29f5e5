// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind snapshot: the live node as hwloc XML with railbind's Railbind*
 * info attributes, so that any hwloc tool still reads it and railbind reads
 * it back (--input) exactly as it reads the live node.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "railbind.h"

static const struct rb_opt opts[] = {
	{ .val = 'o' },
	{ .val = RB_OPT_ROOT,
	  .help = "      --root DIR     read /sys and /proc under DIR (a recorded node)\n" },
	{ .val = 'h' },
	{ 0 }
};

static const struct rb_verb verb = {
	.name = "snapshot",
	.synopsis = "[-o FILE] [--root DIR]",
	.about = "Write this node's topology as hwloc XML plus railbind's attributes (link\n"
		 "speed and width, ACS control, raw NUMA node, IOMMU group type, RDMA port state\n"
		 "and rate, peer-memory support). The file is written whole or not at all.\n",
	.family = RB_PLAIN,
	.opts = opts,
};

int cmd_snapshot(int argc, char **argv)
{
	struct rb_opts o = { .output = "-" };
	char err[1024] = "", note[256] = "";
	struct aff_ctx *ctx;
	int rc;

	rc = rb_getopt(&verb, argc, argv, &o, NULL);
	if (rc >= 0)
		return rc;
	ctx = aff_ctx_new(o.root);
	rc = ctx ? aff_snapshot_live(ctx, o.output, note, sizeof(note), err, sizeof(err)) : -errno;
	aff_ctx_unref(ctx);
	if (rc < 0) {
		/* The message names the step: discovery or the writer. */
		rb_error("%s", *err ? err : strerror(-rc));
		return RB_EXIT_FAIL;
	}
	if (note[0])
		fprintf(stderr, "%s: snapshot: %s\n", rb_prog, note);
	return RB_EXIT_OK;
}
