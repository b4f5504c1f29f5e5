// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind run: bind this process to its rank's plan and exec the command.
 * No fork: the pid, its affinity, memory policy and lease pass to CMD.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "railbind.h"

enum {
	OPT_RANK = 0x200,
	OPT_ISOLATE,
	OPT_SOCKET,
	OPT_JOB,
	OPT_LOCAL,
	OPT_NO_BIND,
	OPT_FORCE,
	OPT_NO_LEASE,
	OPT_TIMEOUT,
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s run [OPTIONS] -- CMD [ARG...]\n"
		"Bind this process to its local rank's GPU, CPUs and memory node, set the\n"
		"environment its libraries read, and exec CMD. The plan comes from railbindd,\n"
		"or is computed here when no broker answers.\n\n"
		"  -r, --rank N       local rank N (default: LOCAL_RANK, SLURM_LOCALID,\n"
		"                     OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,\n"
		"                     PMI_LOCAL_RANK, PALS_LOCAL_RANKID)\n"
		"      --isolate-gpu  also set CUDA_VISIBLE_DEVICES/ROCR_VISIBLE_DEVICES\n"
		"      --job ID       the job the rank's lease belongs to (default:\n"
		"                     RAILBIND_JOB, SLURM_JOB_ID, TORCHELASTIC_RUN_ID, ...)\n"
		"  -s, --socket PATH  the broker's socket (default: RAILBIND_SOCKET, else\n"
		"                     /run/railbind/railbind.sock)\n"
		"      --local        do not ask the broker\n"
		"      --no-lease     do not take a lease on the rank\n"
		"      --timeout MS   wait MS milliseconds for the broker's answer before\n"
		"                     computing the plan here (default 1000)\n"
		"      --no-bind      set the environment only\n"
		"      --force        exec CMD even when the binding cannot be applied\n"
		"  -v, --verbose      print the binding on stderr, one line\n"
		"  -i, --input FILE   compute from FILE instead of the live node\n"
		"  -c, --config FILE  use FILE instead of /etc/railbind/railbind.conf\n"
		"      --root DIR     read /sys, /proc and /etc under DIR\n"
		"  -h, --help         this help\n", rb_prog);
}

/* A non-negative decimal: ranks and milliseconds. */
static int parse_rank(const char *s, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return !errno && *s && !*end && *out >= 0 ? 0 : -EINVAL;
}

static void print_binding(const struct aff_binding *b)
{
	const char *mems = aff_binding_mems(b), *why = aff_binding_fallback(b);

	fprintf(stderr, "%s: rank %ld gpu %s nics %s cpus %s mems %s (%s) source %s%s%s\n",
		rb_prog, aff_binding_rank(b), aff_binding_gpu(b),
		*aff_binding_nics(b) ? aff_binding_nics(b) : "-", aff_binding_cpus(b),
		mems ? mems : "unknown", aff_binding_mem_policy(b), aff_binding_source(b),
		why ? ": " : "", why ? why : "");
}

int cmd_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rank", required_argument, NULL, 'r' },
		{ "isolate-gpu", no_argument, NULL, OPT_ISOLATE },
		{ "job", required_argument, NULL, OPT_JOB },
		{ "socket", required_argument, NULL, 's' },
		{ "local", no_argument, NULL, OPT_LOCAL },
		{ "no-lease", no_argument, NULL, OPT_NO_LEASE },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "no-bind", no_argument, NULL, OPT_NO_BIND },
		{ "force", no_argument, NULL, OPT_FORCE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "input", required_argument, NULL, 'i' },
		{ "config", required_argument, NULL, 'c' },
		{ "root", required_argument, NULL, RB_OPT_ROOT },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct aff_bind_spec spec = { .rank = -1 };
	struct aff_binding *b = NULL;
	struct aff_ctx *ctx;
	bool verbose = false, force = false, bind = true;
	const char *config = NULL, *root = NULL;
	char err[1024] = "";
	long timeout;
	int c, rc;

	while ((c = getopt_long(argc, argv, "+hr:s:vi:c:", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (parse_rank(optarg, &spec.rank) < 0) {
				rb_error("run: --rank \"%s\": expected a local rank (0, 1, ...)", optarg);
				return RB_EXIT_USAGE;
			}
			break;
		case OPT_ISOLATE:
			spec.flags |= AFF_BIND_ISOLATE_GPU;
			break;
		case OPT_JOB:
			spec.job = optarg;
			break;
		case 's':
			spec.socket = optarg;
			break;
		case OPT_LOCAL:
			spec.flags |= AFF_BIND_LOCAL;
			break;
		case OPT_TIMEOUT:
			if (parse_rank(optarg, &timeout) < 0 || timeout < 1 || timeout > 3600000) {
				rb_error("run: --timeout \"%s\": expected milliseconds, 1 to 3600000",
					 optarg);
				return RB_EXIT_USAGE;
			}
			spec.timeout_ms = (int)timeout;
			break;
		case OPT_NO_LEASE:
			spec.flags |= AFF_BIND_NO_LEASE;
			break;
		case OPT_NO_BIND:
			bind = false;
			break;
		case OPT_FORCE:
			force = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'i':
			spec.input = optarg;
			break;
		case 'c':
			config = optarg;
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
	if (optind >= argc) {
		rb_error("run: no command to run; usage: %s run [OPTIONS] -- CMD [ARG...]", rb_prog);
		return RB_EXIT_USAGE;
	}
	ctx = aff_ctx_new(root);
	if (!ctx) {
		rb_error("run: cannot create a context: %s", strerror(errno));
		return RB_EXIT_FAIL;
	}
	rc = aff_ctx_load_config(ctx, config, err, sizeof(err));
	if (rc < 0) {
		rb_error("run: config: %s", err);
		aff_ctx_unref(ctx);
		return RB_EXIT_FAIL;
	}
	/* A file as the topology: hwloc's discovery plugins are of no use to it. */
	if (spec.input)
		rb_xml_plugins_only();
	rc = aff_binding_get(ctx, &spec, &b, err, sizeof(err));
	aff_ctx_unref(ctx);
	if (rc < 0) {
		rb_error("run: %s", *err ? err : strerror(-rc));
		return rc == -EINVAL ? RB_EXIT_USAGE : RB_EXIT_FAIL;
	}
	if (verbose)
		print_binding(b);
	rc = aff_binding_apply(b, bind ? 0 : AFF_APPLY_ENV);
	if (rc < 0 && force) {
		rb_error("run: warning: cannot bind rank %ld to cpus %s: %s; running unbound (--force)",
			 aff_binding_rank(b), aff_binding_cpus(b), strerror(-rc));
		rc = aff_binding_apply(b, AFF_APPLY_ENV);
	}
	if (rc < 0) {
		rb_error("run: cannot bind rank %ld to cpus %s mems %s: %s%s",
			 aff_binding_rank(b), aff_binding_cpus(b),
			 aff_binding_mems(b) ? aff_binding_mems(b) : "unknown",
			 rc == -EXDEV ? "this host does not have them" : strerror(-rc),
			 rc == -EXDEV ? " (--no-bind or --force to run anyway)" : "");
		aff_binding_unref(b);
		return RB_EXIT_FAIL;
	}
	aff_binding_unref(b);
	execvp(argv[optind], argv + optind);
	rb_error("run: cannot execute \"%s\": %s", argv[optind], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
