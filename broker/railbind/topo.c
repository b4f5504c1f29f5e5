// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind topo: the GPU x NIC path matrix with CPU and NUMA affinity. The
 * text is printed from the same JSON document --json prints, so the two
 * cannot say different things.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "railbind.h"
#include "topo_matrix.h"

enum {
	OPT_SVG = 0x200,
	OPT_DRA,
};

struct topo_args {
	const char *svg;
	bool dra;
};

static const struct rb_opt opts[] = {
	RB_OPTS_COMMON,
	{ OPT_SVG, required_argument, "svg",
	  "      --svg FILE     draw the node into FILE (SVG): sockets, NUMA nodes, root\n"
	  "                     complexes, switches, GPUs, NICs, NVLink; each rank's\n"
	  "                     GPU and NIC in one colour, pairs the audit fails in red\n" },
	{ OPT_DRA, no_argument, "dra",
	  "      --dra          each GPU's and NIC's Kubernetes DRA attributes (pcieRoot,\n"
	  "                     numaNode, railbind.io/rail and complex) as a ResourceSlice\n"
	  "                     carries them (JSON, railbind.dra/1)\n" },
	{ 0 }
};

static int own_opt(int c, const char *arg, void *data)
{
	struct topo_args *a = data;

	if (c == OPT_DRA)
		a->dra = true;
	else
		a->svg = arg;
	return 0;
}

static const struct rb_verb verb = {
	.name = "topo",
	.synopsis = "[OPTIONS]",
	.about = "Show the path class between every two GPUs, every GPU and rail NIC and every\n"
		 "two rail NICs, each GPU's CPU and NUMA affinity, UUID and MIG instances, like\n"
		 "nvidia-smi topo -m (NVLink and XGMI from NVML and ROCm SMI where installed).\n",
	.family = RB_PLAIN,
	.opts = opts,
	.opt = own_opt,
	.text = rb_topo_text,
};

int cmd_topo(int argc, char **argv)
{
	/* The matrix wants what NVML and ROCm SMI know (no effect on a file). */
	struct rb_opts o = { .load_flags = AFF_LOAD_GPU_LIBS };
	struct topo_args args = { 0 };
	const char *svg;
	char err[1024] = "";
	struct aff_ctx *ctx = NULL;
	struct aff_topo *topo = NULL;
	char *text = NULL;
	int rc;

	rc = rb_getopt(&verb, argc, argv, &o, &args);
	if (rc >= 0)
		return rc;
	svg = args.svg;
	if (svg && args.dra) {
		rb_error("topo: --svg and --dra both write a document; give one");
		return RB_EXIT_USAGE;
	}
	/* The DRA document is JSON only. */
	if (args.dra) {
		o.json = true;
		o.fmt = RB_FMT_JSON;
	}
	rc = rb_topology(&verb, &o, &ctx, &topo);
	if (rc >= 0)
		return rc;
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
	rc = aff_topo_json(topo, args.dra ? AFF_JSON_DRA : 0, &text);
	rc = rb_emit(&verb, &o, rb_doc(rc, text), RB_EXIT_OK);
	aff_topo_unref(topo);
	aff_ctx_unref(ctx);
	return rc;
}
