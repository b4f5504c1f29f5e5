/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The railbind command: what its subcommands share. */
#ifndef RAILBIND_CLI_H
#define RAILBIND_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "affinity.h"

/* Exit codes scripts rely on (railbind(1)). */
enum {
	RB_EXIT_OK = 0,
	RB_EXIT_FAIL = 1,	/* an error; audit: warnings */
	RB_EXIT_USAGE = 2,	/* bad command line; audit: failures */
	RB_EXIT_UNKNOWN = 3,	/* audit: could not decide */
};

struct rb_opts {
	const char *input;	/* NULL: the live node */
	const char *config;	/* NULL: the default config, if any */
	const char *root;	/* alternate filesystem root */
	bool json;
	bool pretty;
	int details;
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

/* utils.c */
extern const char *rb_prog;
void rb_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Context with the config loaded (--root, --config), or -errno, said on stderr. */
int rb_ctx(const struct rb_opts *o, struct aff_ctx **ctx);
/*
 * With --input, run the rest of the command in a child process, so that no
 * file can take it down: returns -1 in the child (and where no child can be
 * started), and in the parent the exit status to end with: the child's, or
 * @fail after a crash, said in one line (what was wrong with the file).
 */
int rb_contain(const struct rb_opts *o, const char *cmd, int fail);
/*
 * Before hwloc is first used by a command that reads only files: hwloc need
 * not load its discovery plugins (PCI, OpenCL, GL and X11, CUDA, NVML, ROCm
 * SMI, Level Zero), which an XML import does not use; loading them took a
 * fifth of the time of railbind plan on a 164 KiB file (HWLOC_PLUGINS_BLACKLIST,
 * added to the user's own).
 */
void rb_xml_plugins_only(void);
/* Context with the config loaded and the topology, or an exit code < 0. */
int rb_load(const struct rb_opts *o, struct aff_ctx **ctx,
	    struct aff_topo **topo);
/*
 * Options every topology-reading subcommand takes (-i, -c, --root, -j, -p,
 * -d). RB_COMMON_SHORT and RB_COMMON_LONG go into its getopt tables;
 * rb_common_opt() returns true when it consumed option c.
 */
#define RB_COMMON_SHORT "i:c:jpd"
#define RB_OPT_ROOT 0x100
#define RB_COMMON_LONG                                          \
	{ "input", required_argument, NULL, 'i' },              \
	{ "config", required_argument, NULL, 'c' },             \
	{ "root", required_argument, NULL, RB_OPT_ROOT },       \
	{ "json", no_argument, NULL, 'j' },                     \
	{ "pretty", no_argument, NULL, 'p' },                   \
	{ "details", no_argument, NULL, 'd' },                  \
	{ "help", no_argument, NULL, 'h' }
bool rb_common_opt(int c, const char *arg, struct rb_opts *o);
#define RB_COMMON_HELP                                                               \
	"  -i, --input FILE   read FILE (hwloc XML, railbind snapshot, NCCL topology)\n" \
	"                     instead of the live node\n"                                \
	"  -c, --config FILE  use FILE instead of /etc/railbind/railbind.conf\n"         \
	"      --root DIR     read /sys, /proc and /etc under DIR\n"                     \
	"  -j, --json         machine-readable JSON on stdout\n"                         \
	"  -p, --pretty       indent the JSON\n"                                         \
	"  -d, --details      more detail in the text output\n"                          \
	"  -h, --help         this help\n"

/* Print a JSON string document (and free it). */
int rb_print_json(int rc, char *doc);
bool rb_color(FILE *f);
struct json_object;
/* A string member of a JSON object (numbers as text), or NULL. */
const char *rb_jstr(struct json_object *o, const char *key);
/*
 * The document a library writer gave (@rc and @text of aff_topo_json(),
 * aff_audit_json(), ...) as JSON objects; frees @text. NULL after an error.
 */
struct json_object *rb_doc(int rc, char *text);
/* A member of a JSON object (o may be NULL), or NULL. */
struct json_object *rb_jget(struct json_object *o, const char *key);
/*
 * Print doc on stdout: as JSON with -j (-p), else through text(), which
 * reads the same document. Frees doc; returns an exit code.
 */
int rb_emit(struct json_object *doc, const struct rb_opts *o,
	    void (*text)(struct json_object *doc, int details));

/*
 * report.c: the output of the commands that judge (audit, verify): text,
 * --json, --prom (+ --prom-file) and --nfd, all from one JSON document.
 */
enum rb_fmt { RB_FMT_TEXT, RB_FMT_JSON, RB_FMT_PROM, RB_FMT_NFD };
#define RB_OPT_PROM 0x180
#define RB_OPT_PROM_FILE 0x181
#define RB_OPT_NFD 0x182
#define RB_REPORT_LONG                                                  \
	{ "prom", no_argument, NULL, RB_OPT_PROM },                     \
	{ "prom-file", required_argument, NULL, RB_OPT_PROM_FILE },     \
	{ "nfd", no_argument, NULL, RB_OPT_NFD }
#define RB_REPORT_HELP                                                                   \
	"      --prom         Prometheus text format (node_exporter textfile collector)\n" \
	"      --prom-file F  also write the Prometheus text to F, atomically\n"         \
	"      --nfd          Node Feature Discovery feature file lines\n"
struct rb_report_opts {
	enum rb_fmt fmt;
	int nfmt;
	const char *prom_file;
};
/* One command's printers; each reads the document only. */
struct rb_report {
	const char *cmd;
	void (*text)(FILE *f, struct json_object *doc, int details);
	void (*prom)(FILE *f, struct json_object *doc);
	void (*nfd)(FILE *f, struct json_object *doc);
};
/* True when it consumed option c (RB_REPORT_LONG's). */
bool rb_report_opt(int c, const char *arg, struct rb_report_opts *r);
/* -j from the common options counts as a format; -EINVAL (said) on a conflict. */
int rb_report_check(struct rb_report_opts *r, const struct rb_opts *o, const char *cmd);
/*
 * Print doc in the chosen format on stdout, and the Prometheus text into
 * --prom-file first (whole or not at all). Returns code, or RB_EXIT_UNKNOWN
 * when something could not be written (said on stderr).
 */
int rb_report_emit(const struct rb_report *rep, struct json_object *doc, int code,
		   const struct rb_report_opts *r, bool pretty, int details);
/* A string member for printing: never NULL ("-"). */
const char *rb_js(struct json_object *o, const char *key);
/* "ok" 0, "warn" 1, "fail" 2, else 3. */
int rb_sev_value(const char *s);
/* A Prometheus label value: backslash, double quote and newline escaped. */
void rb_prom_label(FILE *f, const char *s);

#endif
