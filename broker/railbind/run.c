// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind run: bind this process to its rank's plan and exec the command.
 * No fork: the pid, its affinity, memory policy and lease pass to CMD.
 */
#include <errno.h>
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
	OPT_NO_PROOF,
	OPT_TIMEOUT,
};

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

static const struct rb_opt opts[] = {
	{ 'r', required_argument, "rank",
	  "  -r, --rank N       local rank N (default: LOCAL_RANK, SLURM_LOCALID,\n"
	  "                     OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,\n"
	  "                     PMI_LOCAL_RANK, PALS_LOCAL_RANKID)\n" },
	{ OPT_ISOLATE, no_argument, "isolate-gpu",
	  "      --isolate-gpu  also set CUDA_VISIBLE_DEVICES/ROCR_VISIBLE_DEVICES\n" },
	{ OPT_JOB, required_argument, "job",
	  "      --job ID       the job the rank's lease belongs to (default:\n"
	  "                     RAILBIND_JOB, SLURM_JOB_ID, TORCHELASTIC_RUN_ID, ...)\n" },
	{ .val = 's' },
	{ OPT_LOCAL, no_argument, "local", "      --local        do not ask the broker\n" },
	{ OPT_NO_LEASE, no_argument, "no-lease",
	  "      --no-lease     do not take a lease on the rank\n" },
	{ OPT_NO_PROOF, no_argument, "no-device-proof",
	  "      --no-device-proof\n"
	  "                     do not pass the broker the GPU nodes this process\n"
	  "                     can open (its proof of GPUs under cgroup v2)\n" },
	{ OPT_TIMEOUT, required_argument, "timeout",
	  "      --timeout MS   wait MS milliseconds for the broker's answer before\n"
	  "                     computing the plan here (default 1000)\n" },
	{ OPT_NO_BIND, no_argument, "no-bind", "      --no-bind      set the environment only\n" },
	{ OPT_FORCE, no_argument, "force",
	  "      --force        exec CMD even when the binding cannot be applied\n" },
	{ 'v', no_argument, "verbose", "  -v, --verbose      print the binding on stderr, one line\n" },
	{ .val = 'i', .help = "  -i, --input FILE   compute from FILE instead of the live node\n" },
	{ .val = 'c' },
	{ .val = RB_OPT_ROOT },
	{ .val = 'h' },
	{ 0 }
};

/* What the command line asks for besides the common options. */
struct request {
	struct aff_bind_spec spec;
	char **cmd;
	bool verbose, force, bind;
};

static int own_opt(int c, const char *arg, void *data)
{
	struct request *rq = data;
	long timeout;

	switch (c) {
	case 'r':
		if (parse_rank(arg, &rq->spec.rank) < 0) {
			rb_error("run: --rank \"%s\": expected a local rank (0, 1, ...)", arg);
			return -EINVAL;
		}
		break;
	case OPT_ISOLATE:
		rq->spec.flags |= AFF_BIND_ISOLATE_GPU;
		break;
	case OPT_JOB:
		rq->spec.job = arg;
		break;
	case OPT_LOCAL:
		rq->spec.flags |= AFF_BIND_LOCAL;
		break;
	case OPT_TIMEOUT:
		if (parse_rank(arg, &timeout) < 0 || timeout < 1 || timeout > 3600000) {
			rb_error("run: --timeout \"%s\": expected milliseconds, 1 to 3600000", arg);
			return -EINVAL;
		}
		rq->spec.timeout_ms = (int)timeout;
		break;
	case OPT_NO_LEASE:
		rq->spec.flags |= AFF_BIND_NO_LEASE;
		break;
	case OPT_NO_PROOF:
		rq->spec.flags |= AFF_BIND_NO_DEVICE_PROOF;
		break;
	case OPT_NO_BIND:
		rq->bind = false;
		break;
	case OPT_FORCE:
		rq->force = true;
		break;
	case 'v':
		rq->verbose = true;
		break;
	}
	return 0;
}

/* CMD [ARG...], after the options (and "--"). */
static int command(int argc, char **argv, void *data)
{
	if (!argc) {
		rb_error("run: no command to run; usage: %s run [OPTIONS] -- CMD [ARG...]", rb_prog);
		return -EINVAL;
	}
	((struct request *)data)->cmd = argv;
	return 0;
}

static const struct rb_verb verb = {
	.name = "run",
	.synopsis = "[OPTIONS] -- CMD [ARG...]",
	.about = "Bind this process to its local rank's GPU, CPUs and memory node, set the\n"
		 "environment its libraries read, and exec CMD. The plan comes from railbindd,\n"
		 "or is computed here when no broker answers.\n",
	.family = RB_PLAIN,
	.opts = opts,
	.opt = own_opt,
	.args = command,
};

int cmd_run(int argc, char **argv)
{
	struct request rq = { .spec = { .rank = -1 }, .bind = true };
	struct rb_opts o = { 0 };
	struct aff_binding *b = NULL;
	struct aff_ctx *ctx;
	char err[1024] = "";
	int rc;

	rc = rb_getopt(&verb, argc, argv, &o, &rq);
	if (rc >= 0)
		return rc;
	rq.spec.input = o.input;
	rq.spec.socket = o.socket;
	ctx = aff_ctx_new(o.root);
	if (!ctx) {
		rb_error("run: cannot create a context: %s", strerror(errno));
		return RB_EXIT_FAIL;
	}
	rc = aff_ctx_load_config(ctx, o.config, err, sizeof(err));
	if (rc < 0) {
		rb_error("run: config: %s", err);
		aff_ctx_unref(ctx);
		return RB_EXIT_FAIL;
	}
	/* A file as the topology: hwloc's discovery plugins are of no use to it. */
	if (rq.spec.input)
		rb_xml_plugins_only();
	rc = aff_binding_get(ctx, &rq.spec, &b, err, sizeof(err));
	aff_ctx_unref(ctx);
	if (rc < 0) {
		rb_error("run: %s", *err ? err : strerror(-rc));
		return rc == -EINVAL ? RB_EXIT_USAGE : RB_EXIT_FAIL;
	}
	if (rq.verbose)
		print_binding(b);
	rc = aff_binding_apply(b, rq.bind ? 0 : AFF_APPLY_ENV);
	if (rc < 0 && rq.force) {
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
	execvp(rq.cmd[0], rq.cmd);
	rc = errno;
	rb_error("run: cannot execute \"%s\": %s", rq.cmd[0], strerror(rc));
	return rc == ENOENT ? RB_EXIT_NOTFOUND : RB_EXIT_NOEXEC;
}
