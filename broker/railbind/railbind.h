/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The railbind command: what its subcommands share. */
#ifndef RAILBIND_CLI_H
#define RAILBIND_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "affinity.h"

/*
 * Exit codes scripts rely on (railbind(1)), one set per family of commands,
 * so that a value never means two things.
 *
 * The plain commands (topo, plan, snapshot, run, status, nccl-topo):
 */
enum rb_exit {
	RB_EXIT_OK = 0,
	RB_EXIT_FAIL = 1,	/* an error, said on stderr */
	RB_EXIT_USAGE = 2,	/* bad command line */
	RB_EXIT_NOEXEC = 126,	/* run: CMD cannot be executed (the shell's code) */
	RB_EXIT_NOTFOUND = 127,	/* run: no such CMD (the shell's code) */
};

/*
 * The commands that judge (audit, verify, fleet), as Nagios and NHC read
 * them. A bad command line is "could not decide", so that a typo in a
 * health check never drains a node.
 */
enum rb_check_exit {
	RB_CHECK_OK = 0,
	RB_CHECK_WARN = 1,
	RB_CHECK_FAIL = 2,
	RB_CHECK_UNKNOWN = 3,
	RB_CHECK_USAGE = RB_CHECK_UNKNOWN,
};

enum rb_family { RB_PLAIN, RB_CHECK };

/* The output formats; --json, --prom and --nfd exclude each other. */
enum rb_fmt { RB_FMT_TEXT, RB_FMT_JSON, RB_FMT_PROM, RB_FMT_NFD };

/* What the options every command shares (rb_getopt()) have set. */
struct rb_opts {
	const char *input;	/* -i: NULL, the live node */
	const char *config;	/* -c: NULL, the default config, if any */
	const char *root;	/* --root: alternate filesystem root */
	const char *socket;	/* -s: the broker's socket; NULL, the default */
	const char *output;	/* -o: NULL, the command's default */
	bool json;
	bool pretty;
	int details;
	enum rb_fmt fmt;	/* text unless -j, --prom or --nfd */
	int nfmt;		/* how many of those were given */
	const char *prom_file;	/* --prom-file */
	unsigned long load_flags;	/* aff_topo_load()'s (AFF_LOAD_GPU_LIBS) */
};

/* One subcommand: name, handler, one-line help. */
struct rb_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

int cmd_topo(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_fleet(int argc, char **argv);
int cmd_nccl_topo(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_nccl_check(int argc, char **argv);
int cmd_slurm_gres(int argc, char **argv);

/*
 * options.c: one parser for every command, as hwloc's utils share theirs.
 * A command lists its options in --help order: { .val = 'i' } is a common
 * one (below), with its help unless .help is given; one of its own has a
 * .name. A letter as .val is also the short option.
 */
#define RB_OPT_ROOT 0x100
#define RB_OPT_PROM 0x180
#define RB_OPT_PROM_FILE 0x181
#define RB_OPT_NFD 0x182
struct rb_opt {
	int val;
	int has_arg;		/* getopt_long's no_argument, required_argument */
	const char *name;	/* NULL: the common option .val */
	const char *help;	/* its lines of --help; NULL: the common text */
};
/* -i, -c, --root, -j, -p, -d, -h: every command that reads a topology. */
#define RB_OPTS_COMMON { .val = 'i' }, { .val = 'c' }, { .val = RB_OPT_ROOT }, \
	{ .val = 'j' }, { .val = 'p' }, { .val = 'd' }, { .val = 'h' }
/* --prom, --prom-file, --nfd: the commands that judge (audit, verify). */
#define RB_OPTS_REPORT { .val = RB_OPT_PROM }, { .val = RB_OPT_PROM_FILE }, \
	{ .val = RB_OPT_NFD }

struct json_object;
/* One command: its --help, its options and its printers. */
struct rb_verb {
	const char *name;
	const char *synopsis;	/* after "Usage: railbind NAME " */
	const char *about;	/* what it does, before the options */
	const struct rb_opt *opts;	/* ends with { 0 } */
	/* Its own options; < 0 when wrong (said): a usage error. */
	int (*opt)(int c, const char *arg, void *data);
	/* The arguments after the options (NULL: none taken); < 0 as above. */
	int (*args)(int argc, char **argv, void *data);
	/* Its printers, each reading the one document: text, --prom, --nfd. */
	void (*text)(FILE *f, struct json_object *doc, int details);
	void (*prom)(FILE *f, struct json_object *doc);
	void (*nfd)(FILE *f, struct json_object *doc);
	enum rb_family family;	/* its exit codes */
};

/*
 * Parse the command line into @o (and through the command's own opt() and
 * args() into @data): -1 to go on, else the exit code to end with (0 after
 * --help, the family's usage code after a mistake, said on stderr).
 */
int rb_getopt(const struct rb_verb *v, int argc, char **argv, struct rb_opts *o, void *data);
/* The family's codes: a bad command line, and an error. */
int rb_usage_code(const struct rb_verb *v);
int rb_fail_code(const struct rb_verb *v);

/*
 * emit.c: the one output path. @doc (freed) in the format the options chose,
 * rendered in memory first so that nothing half-written reaches stdout, and
 * with --prom-file the Prometheus text into that file too, whole or not at
 * all. Returns @code, or the family's failure code when something could not
 * be written (said on stderr).
 */
int rb_emit(const struct rb_verb *v, const struct rb_opts *o, struct json_object *doc,
	    int code);

/*
 * The findings of severity @sev in @checks (an audit-model "checks" list)
 * under @title, each with its fix; a check's "nothing found" is left out.
 * @color (an ANSI sequence) on a terminal (@tty).
 */
void rb_print_findings(FILE *f, struct json_object *checks, const char *sev,
		       const char *title, const char *color, bool tty);

/* METRIC{check,severity} lines: how many warn and fail findings each check of @doc's "summary" has. */
void rb_prom_findings(FILE *f, struct json_object *doc, const char *metric);

/* utils.c */
extern const char *rb_prog;
void rb_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Context with the config loaded (--root, --config), or -errno, said on stderr. */
int rb_ctx(const struct rb_opts *o, struct aff_ctx **ctx);
/*
 * Before hwloc is first used by a command that reads only files: hwloc need
 * not load its discovery plugins (PCI, OpenCL, GL and X11, CUDA, NVML, ROCm
 * SMI, Level Zero), which an XML import does not use; loading them took a
 * fifth of the time of railbind plan on a 164 KiB file (HWLOC_PLUGINS_BLACKLIST,
 * added to the user's own).
 */
void rb_xml_plugins_only(void);
/*
 * The context (config loaded) and topology of a command that reads one:
 * the live node, or --input in a child process (rb_contain()). -1 to go on
 * with both set, else the exit code to end with: the child's, or the
 * command's error code (said on stderr).
 */
int rb_topology(const struct rb_verb *v, const struct rb_opts *o, struct aff_ctx **ctx,
		struct aff_topo **topo);
bool rb_color(FILE *f);
/* A string member of a JSON object (numbers as text), or NULL. */
const char *rb_jstr(struct json_object *o, const char *key);
/*
 * The document a library writer gave (@rc and @text of aff_topo_json(),
 * aff_audit_json(), ...) as JSON objects; frees @text. NULL after an error.
 */
struct json_object *rb_doc(int rc, char *text);
/* A member of a JSON object (o may be NULL), or NULL. */
struct json_object *rb_jget(struct json_object *o, const char *key);
/* A string member for printing: never NULL ("-"). */
const char *rb_js(struct json_object *o, const char *key);
/* "ok" 0, "warn" 1, "fail" 2, else 3. */
int rb_sev_value(const char *s);
/* A Prometheus label value: backslash, double quote and newline escaped. */
void rb_prom_label(FILE *f, const char *s);

#endif
