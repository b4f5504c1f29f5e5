// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The one option parser of railbind's commands: each command lists its
 * options once (struct rb_verb), and from that list come its getopt_long
 * tables, its --help and the handling of the options the commands share,
 * so that -i means one thing, is spelled one way and is explained in one
 * sentence everywhere.
 */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "railbind.h"

/* The options the commands share, with the help each shows unless it says its own. */
static const struct rb_opt common[] = {
	{ 'i', required_argument, "input",
	  "  -i, --input FILE   read FILE (hwloc XML, railbind snapshot, NCCL topology)\n"
	  "                     instead of the live node\n" },
	{ 'c', required_argument, "config",
	  "  -c, --config FILE  use FILE instead of /etc/railbind/railbind.conf\n" },
	{ RB_OPT_ROOT, required_argument, "root",
	  "      --root DIR     read /sys, /proc and /etc under DIR\n" },
	{ 'j', no_argument, "json", "  -j, --json         machine-readable JSON on stdout\n" },
	{ 'p', no_argument, "pretty", "  -p, --pretty       indent the JSON\n" },
	{ 'd', no_argument, "details", "  -d, --details      more detail in the text output\n" },
	{ 's', required_argument, "socket",
	  "  -s, --socket PATH  the broker's socket (default: RAILBIND_SOCKET, else\n"
	  "                     /run/railbind/railbind.sock)\n" },
	{ 'o', required_argument, "output",
	  "  -o, --output FILE  write to FILE (default: standard output)\n" },
	{ RB_OPT_PROM, no_argument, "prom",
	  "      --prom         Prometheus text format (node_exporter textfile collector)\n" },
	{ RB_OPT_PROM_FILE, required_argument, "prom-file",
	  "      --prom-file F  also write the Prometheus text to F, atomically\n" },
	{ RB_OPT_NFD, no_argument, "nfd",
	  "      --nfd          Node Feature Discovery feature file lines\n" },
	{ 'h', no_argument, "help", "  -h, --help         this help\n" },
	{ 0 }
};

static const struct rb_opt *common_opt(int val)
{
	const struct rb_opt *c;

	for (c = common; c->val; c++)
		if (c->val == val)
			return c;
	return NULL;
}

/* An entry of a command's list as it is used: a common one filled in. */
static struct rb_opt resolve(const struct rb_opt *e)
{
	const struct rb_opt *c = e->name ? NULL : common_opt(e->val);
	struct rb_opt r = *e;

	if (c) {
		r.name = c->name;
		r.has_arg = c->has_arg;
		if (!r.help)
			r.help = c->help;
	}
	return r;
}

int rb_usage_code(const struct rb_verb *v)
{
	return v->family == RB_CHECK ? RB_CHECK_USAGE : RB_EXIT_USAGE;
}

int rb_fail_code(const struct rb_verb *v)
{
	return v->family == RB_CHECK ? RB_CHECK_UNKNOWN : RB_EXIT_FAIL;
}

static void usage(const struct rb_verb *v, FILE *f)
{
	const struct rb_opt *e;

	fprintf(f, "Usage: %s %s %s\n%s\n", rb_prog, v->name, v->synopsis, v->about);
	for (e = v->opts; e->val; e++)
		fputs(resolve(e).help, f);
}

/* Whether it was one of the common options, now in @o. */
static bool take_common(int c, const char *arg, struct rb_opts *o)
{
	switch (c) {
	case 'i':
		o->input = arg;
		return true;
	case 'c':
		o->config = arg;
		return true;
	case RB_OPT_ROOT:
		o->root = arg;
		return true;
	case 'p':
		/* --pretty is JSON too. */
		o->pretty = true;
		/* fall through */
	case 'j':
		o->json = true;
		return true;
	case 'd':
		o->details++;
		return true;
	case 's':
		o->socket = arg;
		return true;
	case 'o':
		o->output = arg;
		return true;
	case RB_OPT_PROM:
		o->fmt = RB_FMT_PROM;
		o->nfmt++;
		return true;
	case RB_OPT_PROM_FILE:
		o->prom_file = arg;
		return true;
	case RB_OPT_NFD:
		o->fmt = RB_FMT_NFD;
		o->nfmt++;
		return true;
	}
	return false;
}

/* getopt_long's tables of @v: "+" (each command parses its own), then the letters. */
static struct option *tables(const struct rb_verb *v, char *shorts, size_t len)
{
	const struct rb_opt *e;
	struct option *lo;
	size_t n = 0, used = 1;

	for (e = v->opts; e->val; e++)
		n++;
	lo = calloc(n + 1, sizeof(*lo));
	if (!lo)
		return NULL;
	shorts[0] = '+';
	for (n = 0, e = v->opts; e->val; e++, n++) {
		struct rb_opt r = resolve(e);

		lo[n] = (struct option){ r.name, r.has_arg, NULL, r.val };
		if (r.val < 0x80 && isalnum(r.val) && used + 3 < len) {
			shorts[used++] = (char)r.val;
			if (r.has_arg == required_argument)
				shorts[used++] = ':';
		}
	}
	shorts[used] = '\0';
	return lo;
}

int rb_getopt(const struct rb_verb *v, int argc, char **argv, struct rb_opts *o, void *data)
{
	struct option *lo;
	char shorts[128];
	int c, rc = -1;

	lo = tables(v, shorts, sizeof(shorts));
	if (!lo) {
		rb_error("%s: out of memory", v->name);
		return rb_fail_code(v);
	}
	while (rc < 0 && (c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		if (c == 'h') {
			usage(v, stdout);
			rc = RB_EXIT_OK;
		} else if (c == '?') {
			usage(v, stderr);
			rc = rb_usage_code(v);
		} else if (!take_common(c, optarg, o) && v->opt && v->opt(c, optarg, data) < 0) {
			rc = rb_usage_code(v);
		}
	}
	free(lo);
	if (rc >= 0)
		return rc;
	if (!v->args && optind < argc) {
		rb_error("%s: unexpected argument \"%s\"", v->name, argv[optind]);
		return rb_usage_code(v);
	}
	if (v->args && v->args(argc - optind, argv + optind, data) < 0)
		return rb_usage_code(v);
	/* --json is a format too: one of --json, --prom, --nfd at most. */
	if (o->json) {
		o->fmt = RB_FMT_JSON;
		o->nfmt++;
	}
	if (o->nfmt > 1) {
		rb_error("%s: --json, --prom and --nfd exclude each other", v->name);
		return rb_usage_code(v);
	}
	return -1;
}
