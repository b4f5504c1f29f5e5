// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind nccl-topo: this node (or --input FILE) as NCCL's topology XML, the
 * file NCCL reads from NCCL_TOPO_FILE. The output is the document itself, so
 * there is no --json.
 */
#include <stdio.h>
#include <string.h>

#include "railbind.h"

static const struct rb_opt opts[] = {
	{ .val = 'o',
	  .help = "  -o, --output FILE  write to FILE (default, or \"-\": standard output)\n" },
	{ .val = 'i' },
	{ .val = 'c' },
	{ .val = RB_OPT_ROOT },
	{ .val = 'h' },
	{ 0 }
};

static const struct rb_verb verb = {
	.name = "nccl-topo",
	.synopsis = "[-o FILE] [-i FILE] [-c FILE] [--root DIR]",
	.about = "Write NCCL's topology XML (<system version=\"1\">) for this node: NUMA nodes,\n"
		 "PCIe switches, GPUs and rail NICs, for NCCL_TOPO_FILE. Only what railbind\n"
		 "knows is written; NCCL fills the rest from the node it runs on. The file is\n"
		 "written whole or not at all.\n",
	.family = RB_PLAIN,
	.opts = opts,
};

int cmd_nccl_topo(int argc, char **argv)
{
	struct rb_opts o = { .output = "-" };
	struct aff_ctx *ctx = NULL;
	struct aff_topo *topo = NULL;
	char err[1024] = "";
	int rc;

	rc = rb_getopt(&verb, argc, argv, &o, NULL);
	if (rc >= 0)
		return rc;
	if (!*o.output) {
		rb_error("nccl-topo: empty output file name");
		return RB_EXIT_USAGE;
	}
	rc = rb_topology(&verb, &o, &ctx, &topo);
	if (rc >= 0)
		return rc;
	rc = aff_topo_nccl_write(topo, o.output, err, sizeof(err));
	if (rc < 0)
		rb_error("%s", *err ? err : strerror(-rc));
	aff_topo_unref(topo);
	aff_ctx_unref(ctx);
	return rc < 0 ? RB_EXIT_FAIL : RB_EXIT_OK;
}
