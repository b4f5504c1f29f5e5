/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the railbind SPANK plugin was asked to do: its plugstack.conf
 * arguments and the user's srun --railbind=... value. No Slurm header here,
 * so the parser is tested without Slurm (tests/slurm/test_spank_opts.c).
 */
#ifndef RAILBIND_SPANK_OPTS_H
#define RAILBIND_SPANK_OPTS_H

#include <stdbool.h>
#include <stddef.h>

/* Where a binding may come from (plugstack.conf "broker="). */
enum rb_spank_broker {
	RB_SPANK_BROKER_AUTO,	/* the broker, else computed in the task */
	RB_SPANK_BROKER_ONLY,	/* the broker or nothing */
	RB_SPANK_BROKER_OFF,	/* never ask the broker */
};

struct rb_spank_mode {
	bool off;		/* leave the task alone */
	bool verbose;		/* one line per task on the task's stderr */
	bool isolate;		/* also set CUDA_VISIBLE_DEVICES / ROCR_... */
	bool required;		/* a binding that fails fails the task */
};

struct rb_spank_conf {
	struct rb_spank_mode mode;	/* plugstack.conf defaults, then --railbind */
	const char *input;	/* topology file for the in-task plan; NULL: live node */
	const char *socket;	/* broker socket; NULL: library default */
	const char *config;	/* railbind.conf; NULL: the default one */
	enum rb_spank_broker broker;
	int timeout_ms;		/* broker reply timeout; 0: the library's */
};

/*
 * rb_spank_parse_args - read the plugstack.conf arguments @argv[0..argc)
 * into @c (which the caller zeroed). Strings point into @argv, which Slurm
 * keeps for the plugin's life. On a bad argument: -EINVAL and one line in
 * @err.
 */
int rb_spank_parse_args(struct rb_spank_conf *c, int argc, char **argv,
			char *err, size_t errlen);

/*
 * rb_spank_parse_mode - apply a --railbind value ("on", "off", "verbose",
 * "isolate", "required", comma separated; NULL or "" mean "on") to @m.
 * "off" turns the plugin off for the step and cannot be combined. The
 * value overrides the plugstack.conf defaults except "required", which it
 * can only add. -EINVAL and one line in @err on a bad value; @m unchanged.
 */
int rb_spank_parse_mode(struct rb_spank_mode *m, const char *value, char *err,
			size_t errlen);

/*
 * rb_spank_claim - the GPUs Slurm gave the task, from its environment:
 * @get(name, data) returns a variable's value or NULL. SLURM_STEP_GPUS,
 * SLURM_JOB_GPUS, CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES,
 * GPU_DEVICE_ORDINAL: the first set and non-empty. @from receives the
 * variable's name. NULL when Slurm gave none (no claim: every GPU).
 */
const char *rb_spank_claim(const char *(*get)(const char *name, void *data),
			   void *data, const char **from);

#endif
