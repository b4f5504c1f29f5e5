// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind slurm-gres: Slurm gres.conf lines for this node (or --input FILE),
 * written by the library (aff_topo_gres_conf) so that the audit's slurm-gres
 * check compares a node's file with the same lines. The output is the file
 * itself, so there is no --json.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "railbind.h"

enum {
	OPT_NUMA = 0x200,
	OPT_L3,
	OPT_NICS,
};

static const struct rb_opt opts[] = {
	{ OPT_NUMA, no_argument, "numa",
	  "      --numa         Cores= per NUMA node (SlurmdParameters=numa_node_as_socket)\n" },
	{ OPT_L3, no_argument, "l3",
	  "      --l3           Cores= per L3 cache (SlurmdParameters=l3cache_as_socket)\n" },
	{ OPT_NICS, no_argument, "nics",
	  "      --nics         the rail NICs too, as gres \"nic\" (File=/dev/infiniband/uverbsN)\n" },
	{ .val = 'i' },
	{ .val = 'c' },
	{ .val = RB_OPT_ROOT },
	{ .val = 'h' },
	{ 0 }
};

static int own_opt(int c, const char *arg, void *data)
{
	unsigned long *flags = data;

	(void)arg;
	*flags |= c == OPT_NUMA ? AFF_GRES_NUMA : c == OPT_L3 ? AFF_GRES_L3 : AFF_GRES_NICS;
	if ((*flags & AFF_GRES_NUMA) && (*flags & AFF_GRES_L3)) {
		rb_error("slurm-gres: --numa and --l3 exclude each other");
		return -1;
	}
	return 0;
}

static const struct rb_verb verb = {
	.name = "slurm-gres",
	.synopsis = "[--numa | --l3] [--nics] [-i FILE] [-c FILE] [--root DIR]",
	.about = "Print Slurm gres.conf lines for this node: one Name=gpu line per GPU in PCI\n"
		 "order with File=/dev/nvidiaN, Cores= and, where NVML answers, Links=. Cores=\n"
		 "are logical core indices (hwloc's Core L#, not OS CPU numbers), every core of\n"
		 "each socket a GPU's CPUs touch: Slurm co-allocates GRES with whole sockets\n"
		 "(NUMA nodes, L3 caches with --numa, --l3 and the SlurmdParameters named).\n",
	.family = RB_PLAIN,
	.opts = opts,
	.opt = own_opt,
};

int cmd_slurm_gres(int argc, char **argv)
{
	struct rb_opts o = { .load_flags = AFF_LOAD_GPU_LIBS };
	unsigned long flags = 0;
	struct aff_ctx *ctx = NULL;
	struct aff_topo *topo = NULL;
	char err[1024] = "", *text = NULL;
	int rc;

	rc = rb_getopt(&verb, argc, argv, &o, &flags);
	if (rc >= 0)
		return rc;
	rc = rb_topology(&verb, &o, &ctx, &topo);
	if (rc >= 0)
		return rc;
	rc = aff_topo_gres_conf(topo, flags, &text, err, sizeof(err));
	if (rc < 0)
		rb_error("slurm-gres: %s", *err ? err : strerror(-rc));
	else if (fputs(text, stdout) == EOF || fflush(stdout)) {
		rb_error("slurm-gres: standard output: %s", strerror(errno));
		rc = -1;
	}
	free(text);
	aff_topo_unref(topo);
	aff_ctx_unref(ctx);
	return rc < 0 ? RB_EXIT_FAIL : RB_EXIT_OK;
}
