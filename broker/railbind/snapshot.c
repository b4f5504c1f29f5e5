// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind snapshot: the live node as hwloc XML with railbind's Railbind*
 * info attributes, so that any hwloc tool still reads it and railbind reads
 * it back (--input) exactly as it reads the live node.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "railbind.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s snapshot [-o FILE] [--root DIR]\n"
		"Write this node's topology as hwloc XML plus railbind's attributes (link\n"
		"speed and width, ACS control, raw NUMA node, IOMMU group type, RDMA port state\n"
		"and rate, peer-memory support). The file is written whole or not at all.\n\n"
		"  -o, --output FILE  write to FILE (default: standard output)\n"
		"      --root DIR     read /sys and /proc under DIR (a recorded node)\n"
		"  -h, --help         this help\n", rb_prog);
}

int cmd_snapshot(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "root", required_argument, NULL, RB_OPT_ROOT },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *out = "-", *root = NULL;
	char err[1024] = "", note[256] = "";
	struct aff_ctx *ctx;
	int c, rc;

	while ((c = getopt_long(argc, argv, "+ho:", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case RB_OPT_ROOT:
			root = optarg;
			break;
		case 'h':
			usage(stdout);
			return RB_EXIT_OK;
		default:
			usage(stderr);
			return RB_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		rb_error("snapshot: unexpected argument \"%s\"", argv[optind]);
		return RB_EXIT_USAGE;
	}
	ctx = aff_ctx_new(root);
	rc = ctx ? aff_snapshot_live(ctx, out, note, sizeof(note), err, sizeof(err)) : -errno;
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
