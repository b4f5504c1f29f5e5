// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind topo: the GPU x NIC path matrix with CPU and NUMA affinity. The
 * text is printed from the same JSON document --json prints, so the two
 * cannot say different things.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "railbind.h"
#include "topo_matrix.h"

enum {
	OPT_SVG = 0x200,
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s topo [OPTIONS]\n"
		"Show the path class between every two GPUs, every GPU and rail NIC and every\n"
		"two rail NICs, each GPU's CPU and NUMA affinity, UUID and MIG instances, like\n"
		"nvidia-smi topo -m (NVLink and XGMI from NVML and ROCm SMI where installed).\n\n"
		RB_COMMON_HELP
		"      --svg FILE     draw the node into FILE (SVG): sockets, NUMA nodes, root\n"
		"                     complexes, switches, GPUs, NICs, NVLink; each rank's\n"
		"                     GPU and NIC in one colour, pairs the audit fails in red\n",
		rb_prog);
}

int cmd_topo(int argc, char **argv)
{
	static const struct option longopts[] = {
		RB_COMMON_LONG,
		{ "svg", required_argument, NULL, OPT_SVG },
		{ 0 }
	};
	/* The matrix wants what NVML and ROCm SMI know (no effect on a file). */
	struct rb_opts o = { .load_flags = AFF_LOAD_GPU_LIBS };
	const char *svg = NULL;
	char err[1024] = "";
	struct aff_ctx *ctx = NULL;
	struct aff_topo *topo = NULL;
	struct json_object *doc;
	char *text = NULL;
	int c, rc;

	while ((c = getopt_long(argc, argv, "+h" RB_COMMON_SHORT, longopts,
				NULL)) != -1) {
		if (rb_common_opt(c, optarg, &o))
			continue;
		if (c == OPT_SVG) {
			svg = optarg;
			continue;
		}
		if (c == 'h') {
			usage(stdout);
			return RB_EXIT_OK;
		}
		usage(stderr);
		return RB_EXIT_USAGE;
	}
	if (optind < argc) {
		rb_error("topo: unexpected argument \"%s\"", argv[optind]);
		return RB_EXIT_USAGE;
	}
	/* With --input, in a child: no file can take the command down. */
	rc = rb_contain(&o, "topo", RB_EXIT_FAIL);
	if (rc >= 0)
		return rc;
	rc = rb_load(&o, &ctx, &topo);
	if (rc < 0) {
		aff_ctx_unref(ctx);
		return RB_EXIT_FAIL;
	}
	if (svg && o.json) {
		rb_error("topo: --svg and --json both write a document; give one");
		aff_topo_unref(topo);
		aff_ctx_unref(ctx);
		return RB_EXIT_USAGE;
	}
	if (svg) {
		rc = aff_topo_svg_write(topo, svg, err, sizeof(err));
		if (rc < 0)
			rb_error("topo: %s", *err ? err : strerror(-rc));
		aff_topo_unref(topo);
		aff_ctx_unref(ctx);
		return rc < 0 ? RB_EXIT_FAIL : RB_EXIT_OK;
	}
	rc = aff_topo_json(topo, 0, &text);
	doc = rb_doc(rc, text);
	rc = rb_emit(doc, &o, rb_topo_text);
	aff_topo_unref(topo);
	aff_ctx_unref(ctx);
	return rc;
}
