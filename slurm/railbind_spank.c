// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind.so, the Slurm SPANK plugin: binds each task of a step to its
 * local rank's plan (GPU, CPUs, memory node, rails) in the task itself,
 * after fork and before exec, and sets the rank's environment through
 * spank_setenv(). The plan comes from libaffinity's client (railbindd, or
 * the same plan computed in the task), exactly as `railbind run` gets it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <slurm/spank.h>

#include "affinity.h"
#include "spank_opts.h"

/* The loader reads these symbols: keep them visible under -fvisibility=hidden. */
#pragma GCC visibility push(default)
SPANK_PLUGIN(railbind, 1);
#pragma GCC visibility pop

#define RB_SPANK_EXPORT __attribute__((visibility("default")))

/* Set once in slurm_spank_init, then by the option; each task inherits it. */
static struct rb_spank_conf conf;

static int opt_railbind(int val, const char *optarg, int remote);

static struct spank_option options[] = {
	{ "railbind", "[MODE,...]",
	  "bind each task to its GPU, rails, CPUs and memory node (railbind-spank(8)): on, off, verbose, isolate, required",
	  2, 0, opt_railbind },
	SPANK_OPTIONS_TABLE_END
};

static int opt_railbind(int val, const char *optarg, int remote)
{
	char err[256];

	(void)val;
	(void)remote;
	if (rb_spank_parse_mode(&conf.mode, optarg, err, sizeof(err)) < 0) {
		slurm_error("railbind: %s", err);
		return -1;
	}
	return 0;
}

/* libaffinity's messages into Slurm's log, at the matching level. */
static void log_to_slurm(void *data, int priority, const char *file, int line,
			 const char *fn, const char *format, va_list args)
{
	char msg[1024];

	(void)data;
	(void)file;
	(void)line;
	(void)fn;
	vsnprintf(msg, sizeof(msg), format, args);
	if (priority <= LOG_ERR)
		slurm_error("railbind: %s", msg);
	else if (priority <= LOG_NOTICE)
		slurm_info("railbind: %s", msg);
	else if (priority == LOG_INFO)
		slurm_verbose("railbind: %s", msg);
	else
		slurm_debug("railbind: %s", msg);
}

RB_SPANK_EXPORT int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();
	char err[512];

	/* Options exist where a user gives them (srun, sbatch, salloc) and
	 * where they arrive (slurmstepd); slurmd and prolog have no task. */
	if (ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE && ctx != S_CTX_ALLOCATOR)
		return 0;
	memset(&conf, 0, sizeof(conf));
	if (rb_spank_parse_args(&conf, ac, av, err, sizeof(err)) < 0) {
		/* Slurm goes on without an "optional" plugin whose init
		 * failed, calling its task_init all the same: half a
		 * configuration must not bind, so the plugin turns off. */
		memset(&conf, 0, sizeof(conf));
		conf.mode.off = true;
		slurm_error("railbind: %s; railbind binds no task", err);
		return -1;
	}
	if (spank_option_register(sp, options) != ESPANK_SUCCESS) {
		slurm_error("railbind: cannot register the --railbind option");
		return -1;
	}
	return 0;
}

struct task_env {
	spank_t sp;
	char buf[4096];
};

static const char *task_getenv(const char *name, void *data)
{
	struct task_env *e = data;

	if (spank_getenv(e->sp, name, e->buf, sizeof(e->buf)) != ESPANK_SUCCESS)
		return NULL;
	return e->buf;
}

/* The rank's variables into the task's environment, overwriting. */
static int set_env(spank_t sp, const struct aff_binding *b, char *err, size_t errlen)
{
	const char *const *env;

	for (env = aff_binding_env(b); *env; env++) {
		const char *eq = strchr(*env, '=');
		char name[128];
		spank_err_t rc;

		if (!eq || (size_t)(eq - *env) >= sizeof(name))
			continue;
		memcpy(name, *env, (size_t)(eq - *env));
		name[eq - *env] = '\0';
		rc = spank_setenv(sp, name, eq + 1, 1);
		if (rc != ESPANK_SUCCESS) {
			snprintf(err, errlen, "cannot set %s: %s", name, spank_strerror(rc));
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * The binding of local task @task: asked, applied to this process (it is
 * the task: the affinity and memory policy survive exec), and its
 * environment set. 0, or a negative errno with the reason in @err.
 */
static int bind_task(spank_t sp, int task, uint32_t job, struct aff_binding **out,
		     char *err, size_t errlen)
{
	struct aff_bind_spec spec = { .rank = task };
	struct task_env e = { .sp = sp };
	struct aff_ctx *ctx;
	const char *claim;
	char jobid[32], *visible = NULL;
	int rc;

	snprintf(jobid, sizeof(jobid), "%u", job);
	spec.job = jobid;
	spec.socket = conf.socket;
	spec.input = conf.input;
	spec.timeout_ms = conf.timeout_ms;
	if (conf.mode.isolate)
		spec.flags |= AFF_BIND_ISOLATE_GPU;
	if (conf.broker == RB_SPANK_BROKER_OFF)
		spec.flags |= AFF_BIND_LOCAL;
	else if (conf.broker == RB_SPANK_BROKER_ONLY)
		spec.flags |= AFF_BIND_BROKER_ONLY;
	/* Slurm's GPU allocation is the claim: the plan never leaves it. */
	claim = rb_spank_claim(task_getenv, &e, NULL);
	if (claim) {
		visible = strdup(claim);
		if (!visible)
			return -ENOMEM;
	}
	spec.visible_gpus = visible;
	ctx = aff_ctx_new(NULL);
	if (!ctx) {
		rc = -errno;
		snprintf(err, errlen, "cannot create a context: %s", strerror(errno));
		free(visible);
		return rc;
	}
	aff_set_log_fn(ctx, log_to_slurm, NULL);
	rc = aff_ctx_load_config(ctx, conf.config, err, errlen);
	if (!rc)
		rc = aff_binding_get(ctx, &spec, out, err, errlen);
	aff_ctx_unref(ctx);
	free(visible);
	if (rc < 0)
		return rc;
	rc = aff_binding_apply(*out, AFF_APPLY_CPUS | AFF_APPLY_MEMS);
	if (rc < 0) {
		snprintf(err, errlen, "cannot bind to cpus %s mems %s: %s", aff_binding_cpus(*out),
			 aff_binding_mems(*out) ? aff_binding_mems(*out) : "unknown",
			 rc == -EXDEV ? "this host does not have them" : strerror(-rc));
		return rc;
	}
	return set_env(sp, *out, err, errlen);
}

/*
 * The verbose line: the task's stderr is the job's, so it reaches srun (or
 * the output file) next to the task's own output, and not slurmd's log.
 */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
}

RB_SPANK_EXPORT int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	struct aff_binding *b = NULL;
	uint32_t job = 0, ntask = 0;
	char err[1024] = "";
	int task = -1, rc;

	(void)ac;
	(void)av;
	if (!spank_remote(sp) || conf.mode.off)
		return 0;
	if (spank_get_item(sp, S_TASK_ID, &task) != ESPANK_SUCCESS || task < 0) {
		snprintf(err, sizeof(err), "no local task id from Slurm");
		rc = -EINVAL;
	} else {
		spank_get_item(sp, S_JOB_ID, &job);
		spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &ntask);
		rc = bind_task(sp, task, job, &b, err, sizeof(err));
	}
	if (!rc) {
		if (conf.mode.verbose) {
			const char *mems = aff_binding_mems(b), *why = aff_binding_fallback(b);

			say("railbind: task %d of %u: rank %ld gpu %s nics %s cpus %s mems %s (%s) source %s%s%s\n",
			    task, ntask, aff_binding_rank(b), aff_binding_gpu(b),
			    *aff_binding_nics(b) ? aff_binding_nics(b) : "-", aff_binding_cpus(b),
			    mems ? mems : "unknown", aff_binding_mem_policy(b),
			    aff_binding_source(b), why ? ": " : "", why ? why : "");
		}
		aff_binding_unref(b);
		return 0;
	}
	aff_binding_unref(b);
	/* A node without accelerators has nothing to bind: not worth a
	 * warning on every task of every CPU job, unless asked. */
	if (rc == -ENODEV && !conf.mode.required && !conf.mode.verbose)
		return 0;
	if (conf.mode.required) {
		slurm_error("railbind: task %d of job %u: %s; the task fails (railbind required)",
			    task, job, err);
		/* Slurm ignores a failed task_init of a plugin listed "optional"
		 * in plugstack.conf: end the task here, before exec, as
		 * slurmstepd does when the plugin stack fails. */
		_exit(1);
	}
	/* At error level without the "error:" prefix: the one level that
	 * reaches the user's srun as well as slurmd's log. */
	slurm_spank_log("railbind: warning: task %d of job %u: %s; running unbound", task, job,
			err);
	return 0;
}
