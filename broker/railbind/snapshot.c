// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind snapshot: the live node as hwloc XML with railbind's Railbind*
 * info attributes, so that any hwloc tool still reads it and railbind reads
 * it back (--input) exactly as it reads the live node.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "discover.h"
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
	struct aff_discover_report rep;
	const char *out = "-", *root = NULL;
	hwloc_topology_t hw;
	char err[1024] = "";
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
	rc = aff_discover_live(root, &hw, &rep, err, sizeof(err));
	/* A snapshot keeps what NVML and ROCm SMI say, for topo --input anywhere. */
	if (!rc && (rc = aff_discover_gpu_libs(hw, root, &rep)) < 0)
		hwloc_topology_destroy(hw);
	if (rc < 0) {
		rb_error("snapshot: %s", *err ? err : strerror(-rc));
		return RB_EXIT_FAIL;
	}
	rc = aff_snapshot_write(hw, out, err, sizeof(err));
	hwloc_topology_destroy(hw);
	if (rc < 0) {
		/* The writer's message already names the operation. */
		rb_error("%s", *err ? err : strerror(-rc));
		return RB_EXIT_FAIL;
	}
	if (rep.note[0])
		fprintf(stderr, "%s: snapshot: %s\n", rb_prog, rep.note);
	return RB_EXIT_OK;
}
