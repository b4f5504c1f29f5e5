// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind nccl-topo: this node (or --input FILE) as NCCL's topology XML, the
 * file NCCL reads from NCCL_TOPO_FILE. The output is the document itself, so
 * there is no --json.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "railbind.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s nccl-topo [-o FILE] [-i FILE] [-c FILE] [--root DIR]\n"
		"Write NCCL's topology XML (<system version=\"1\">) for this node: NUMA nodes,\n"
		"PCIe switches, GPUs and rail NICs, for NCCL_TOPO_FILE. Only what railbind\n"
		"knows is written; NCCL fills the rest from the node it runs on. The file is\n"
		"written whole or not at all.\n\n"
		"  -o, --output FILE  write to FILE (default, or \"-\": standard output)\n"
		"  -i, --input FILE   read FILE (hwloc XML, railbind snapshot, NCCL topology)\n"
		"                     instead of the live node\n"
		"  -c, --config FILE  use FILE instead of /etc/railbind/railbind.conf\n"
		"      --root DIR     read /sys, /proc and /etc under DIR\n"
		"  -h, --help         this help\n", rb_prog);
}

int cmd_nccl_topo(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "input", required_argument, NULL, 'i' },
		{ "config", required_argument, NULL, 'c' },
		{ "root", required_argument, NULL, RB_OPT_ROOT },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct rb_opts o = { 0 };
	struct aff_ctx *ctx = NULL;
	struct aff_topo *topo = NULL;
	const char *out = "-";
	char err[1024] = "";
	int c, rc;

	while ((c = getopt_long(argc, argv, "+ho:i:c:", longopts, NULL)) != -1) {
		if (c == 'o') {
			out = optarg;
			continue;
		}
		if (c != 'h' && rb_common_opt(c, optarg, &o))
			continue;
		if (c == 'h') {
			usage(stdout);
			return RB_EXIT_OK;
		}
		usage(stderr);
		return RB_EXIT_USAGE;
	}
	if (optind < argc) {
		rb_error("nccl-topo: unexpected argument \"%s\"", argv[optind]);
		return RB_EXIT_USAGE;
	}
	if (!*out) {
		rb_error("nccl-topo: empty output file name");
		return RB_EXIT_USAGE;
	}
	/* With --input, in a child: no file can take the command down. */
	rc = rb_contain(&o, "nccl-topo", RB_EXIT_FAIL);
	if (rc >= 0)
		return rc;
	rc = rb_load(&o, &ctx, &topo);
	if (rc < 0) {
		aff_ctx_unref(ctx);
		return RB_EXIT_FAIL;
	}
	rc = aff_topo_nccl_write(topo, out, err, sizeof(err));
	if (rc < 0)
		rb_error("%s", *err ? err : strerror(-rc));
	aff_topo_unref(topo);
	aff_ctx_unref(ctx);
	return rc < 0 ? RB_EXIT_FAIL : RB_EXIT_OK;
}
