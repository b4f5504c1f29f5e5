// SPDX-License-Identifier: GPL-2.0-or-later
/* The railbind SPANK plugin's arguments and its --railbind option. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spank_opts.h"

#define MODE_WORDS "on, off, verbose, isolate, required"

/* One word of a mode list into @m; false if it is not one. */
static bool mode_word(struct rb_spank_mode *m, const char *w, size_t len)
{
	if (len == 2 && !strncmp(w, "on", len))
		m->off = false;
	else if (len == 3 && !strncmp(w, "off", len))
		m->off = true;
	else if (len == 7 && !strncmp(w, "verbose", len))
		m->verbose = true;
	else if (len == 7 && !strncmp(w, "isolate", len))
		m->isolate = true;
	else if (len == 8 && !strncmp(w, "required", len))
		m->required = true;
	else
		return false;
	return true;
}

/* @value's words into a fresh mode @out (on, nothing else set). */
static int parse_words(const char *what, const char *value, struct rb_spank_mode *out,
		       char *err, size_t errlen)
{
	struct rb_spank_mode m = { 0 };
	const char *w = value ? value : "";
	int words = 0;

	while (*w) {
		size_t len = strcspn(w, ",");

		if (!len || !mode_word(&m, w, len)) {
			snprintf(err, errlen, "%s=\"%s\": \"%.*s\" is not one of %s", what,
				 value, (int)len, w, MODE_WORDS);
			return -EINVAL;
		}
		words++;
		w += len;
		if (*w == ',' && !*++w) {
			snprintf(err, errlen, "%s=\"%s\": a trailing comma", what, value);
			return -EINVAL;
		}
	}
	/* "off,verbose" means nothing sensible: say so rather than guess. */
	if (m.off && words > 1) {
		snprintf(err, errlen, "%s=\"%s\": off cannot be combined with other words",
			 what, value);
		return -EINVAL;
	}
	*out = m;
	return 0;
}

int rb_spank_parse_mode(struct rb_spank_mode *m, const char *value, char *err,
			size_t errlen)
{
	struct rb_spank_mode v;
	bool required = m->required;
	int rc = parse_words("--railbind", value, &v, err, errlen);

	if (rc < 0)
		return rc;
	*m = v;
	/* The site's "required" stays: a user may ask for more, not less. */
	m->required = v.required || required;
	return 0;
}

static const char *arg_value(const char *arg, const char *key)
{
	size_t len = strlen(key);

	return !strncmp(arg, key, len) && arg[len] == '=' ? arg + len + 1 : NULL;
}

int rb_spank_parse_args(struct rb_spank_conf *c, int argc, char **argv,
			char *err, size_t errlen)
{
	int i;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i], *v;

		if (!strcmp(a, "required")) {
			c->mode.required = true;
		} else if ((v = arg_value(a, "default"))) {
			bool required = c->mode.required;

			if (parse_words("default", v, &c->mode, err, errlen) < 0)
				return -EINVAL;
			c->mode.required = c->mode.required || required;
		} else if ((v = arg_value(a, "input")) && *v) {
			c->input = v;
		} else if ((v = arg_value(a, "socket")) && *v) {
			c->socket = v;
		} else if ((v = arg_value(a, "config")) && *v) {
			c->config = v;
		} else if ((v = arg_value(a, "broker"))) {
			if (!strcmp(v, "auto"))
				c->broker = RB_SPANK_BROKER_AUTO;
			else if (!strcmp(v, "only"))
				c->broker = RB_SPANK_BROKER_ONLY;
			else if (!strcmp(v, "off"))
				c->broker = RB_SPANK_BROKER_OFF;
			else
				goto bad;
		} else if ((v = arg_value(a, "timeout"))) {
			char *end;
			long ms;

			errno = 0;
			ms = strtol(v, &end, 10);
			if (errno || !*v || *end || ms < 1 || ms > 60000) {
				snprintf(err, errlen,
					 "timeout=\"%s\": expected milliseconds, 1 to 60000", v);
				return -EINVAL;
			}
			c->timeout_ms = (int)ms;
		} else {
			goto bad;
		}
		continue;
bad:
		snprintf(err, errlen,
			 "plugstack.conf argument \"%s\": expected required, default=MODES, input=FILE, socket=PATH, config=FILE, broker=auto|only|off or timeout=MS",
			 a);
		return -EINVAL;
	}
	return 0;
}

const char *rb_spank_claim(const char *(*get)(const char *name, void *data),
			   void *data, const char **from)
{
	/* Slurm's own lists first: they hold the node's GPU indices, which
	 * ConstrainDevices does not renumber the way it does CUDA's. */
	static const char *const vars[] = {
		"SLURM_STEP_GPUS", "SLURM_JOB_GPUS", "CUDA_VISIBLE_DEVICES",
		"ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", NULL,
	};
	const char *const *v;

	for (v = vars; *v; v++) {
		const char *s = get(*v, data);

		if (s && *s) {
			if (from)
				*from = *v;
			return s;
		}
	}
	return NULL;
}
