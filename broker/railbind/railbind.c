// SPDX-License-Identifier: GPL-2.0-or-later
/* railbind: the command line. Dispatch on the exact subcommand name. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "railbind.h"

#ifndef RAILBIND_VERSION
#define RAILBIND_VERSION "0.1.0"
#endif

static const struct rb_cmd commands[] = {
	{ "topo", cmd_topo, "GPU x NIC path matrix with CPU and NUMA affinity" },
	{ "plan", cmd_plan, "the plan of every local rank" },
	{ "audit", cmd_audit, "check the NUMA/PCIe layout (exit 0 ok, 1 warn, 2 fail, 3 unknown)" },
	{ "snapshot", cmd_snapshot, "this node as hwloc XML with railbind's attributes" },
	{ "run", cmd_run, "bind this process to its rank's plan and exec a command" },
	{ "fleet", cmd_fleet, "what differs across many nodes' snapshots or audits" },
	{ "nccl-topo", cmd_nccl_topo, "NCCL's topology XML of this node, for NCCL_TOPO_FILE" },
	{ "status", cmd_status, "the broker, the module, the plan's generation, leases" },
	{ "verify", cmd_verify, "are the running ranks where their plan put them (exit like audit)" },
	{ "nccl-check", cmd_nccl_check, "judge an NCCL log and nccl-tests results against the rails" },
	{ "slurm-gres", cmd_slurm_gres, "Slurm gres.conf lines: GPUs with File=, Cores= (whole sockets), Links=" },
	{ NULL, NULL, NULL },
};

static void usage(FILE *f)
{
	const struct rb_cmd *c;

	fprintf(f, "Usage: %s [-h|--help] [-V|--version] COMMAND [OPTIONS]\n"
		"Place each training rank on its GPU, its rail NIC and its NUMA node.\n\n"
		"Commands:\n", rb_prog);
	for (c = commands; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->help);
	fprintf(f, "\nRun '%s COMMAND --help' for a command's options.\n", rb_prog);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	const struct rb_cmd *cmd;
	int c;

	if (AFF_API_MAJOR(aff_get_api_version()) != AFF_API_MAJOR(AFF_API_VERSION)) {
		rb_error("libaffinity API %#x does not match the %#x this program was built for",
			 aff_get_api_version(), AFF_API_VERSION);
		return RB_EXIT_FAIL;
	}
	while ((c = getopt_long(argc, argv, "+hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return RB_EXIT_OK;
		case 'V':
			printf("railbind %s\n", RAILBIND_VERSION);
			return RB_EXIT_OK;
		default:
			usage(stderr);
			return RB_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return RB_EXIT_USAGE;
	}
	for (cmd = commands; cmd->name; cmd++)
		if (!strcmp(cmd->name, argv[optind])) {
			argc -= optind;
			argv += optind;
			optind = 0;	/* glibc: start a fresh scan */
			return cmd->fn(argc, argv);
		}
	rb_error("unknown command \"%s\"; see '%s --help'", argv[optind], rb_prog);
	return RB_EXIT_USAGE;
}
