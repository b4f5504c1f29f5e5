// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind audit: the NUMA/PCIe checks of the node or a snapshot. Every
 * output (text, --json, --prom, --nfd) is printed from the one
 * railbind.audit/1 document, so they cannot say different things. Exit
 * codes follow Nagios/NHC: 0 ok, 1 warnings, 2 failures, 3 could not decide
 * (also for an unreadable input or a bad command line, so a typo in a
 * health check never drains a node).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "railbind.h"

/* ---- text ---- */

static void print_matrix(FILE *f, struct json_object *topo)
{
	struct json_object *gpus = rb_jget(topo, "gpus"), *nics = rb_jget(topo, "nics");
	struct json_object *paths = rb_jget(topo, "paths");
	size_t g, n, ng = json_object_array_length(gpus), nn = json_object_array_length(nics);

	fprintf(f, "%-7s", "");
	for (n = 0; n < nn; n++)
		fprintf(f, " NIC%-3zu", n);
	fprintf(f, " %s\n", "NUMA");
	for (g = 0; g < ng; g++) {
		struct json_object *row = json_object_array_get_idx(paths, g);
		const char *numa = rb_jstr(json_object_array_get_idx(gpus, g), "numa");

		fprintf(f, "GPU%-4zu", g);
		for (n = 0; n < nn; n++)
			fprintf(f, " %-6s", json_object_get_string(json_object_array_get_idx(row, n)));
		fprintf(f, " %s\n", numa ? numa : "unknown");
	}
	if (!ng)
		fprintf(f, "(no GPU or accelerator)\n");
	for (g = 0; g < ng; g++)
		fprintf(f, "  GPU%zu: %s\n", g, rb_js(json_object_array_get_idx(gpus, g), "pci"));
	for (n = 0; n < nn; n++) {
		struct json_object *nj = json_object_array_get_idx(nics, n);
		const char *name = rb_jstr(nj, "name"), *pci = rb_jstr(nj, "pci");

		fprintf(f, "  NIC%zu: %-10s %s\n", n, name ? name : rb_js(nj, "netdev"),
			pci ? pci : "");
	}
}

/* acs-redirect's remedy for the whole node, once, where a port needs it. */
static void print_acs_remedy(FILE *f, struct json_object *doc)
{
	struct json_object *r = rb_jget(doc, "acs_remedy");
	const char *sum = rb_jstr(rb_jget(doc, "summary"), "acs-redirect");
	const char *status = rb_jstr(r, "status");

	if (!r || !sum || !strcmp(sum, "ok") || !status)
		return;
	if (!strcmp(status, "cmdline"))
		fprintf(f, "\nACS: boot with %s (railbind audit --acs-cmdline)\n", rb_js(r, "parameter"));
	else if (strcmp(status, "none"))
		fprintf(f, "\nACS: %s\n", rb_js(r, "reason"));
}

static void print_text(FILE *f, struct json_object *doc, int details)
{
	struct json_object *checks = rb_jget(doc, "checks"), *und = rb_jget(doc, "undecided");
	struct json_object *sum = rb_jget(doc, "summary");
	bool tty = rb_color(f);
	const char *status = rb_js(doc, "status");
	size_t i;

	(void)details;
	fprintf(f, "railbind audit of %s (%s)\n\n", rb_js(doc, "host"), rb_js(doc, "source"));
	print_matrix(f, rb_jget(doc, "topo"));
	rb_print_findings(f, checks, "fail", "Failures:", "\033[1;31m", tty);
	rb_print_findings(f, checks, "warn", "Warnings:", "\033[1;33m", tty);
	rb_print_findings(f, checks, "ok", "Information:", "\033[1m", tty);
	if (json_object_array_length(und)) {
		fprintf(f, "\nNot decided:\n");
		for (i = 0; i < json_object_array_length(und); i++) {
			struct json_object *u = json_object_array_get_idx(und, i);

			fprintf(f, "  [%s] %s\n", rb_js(u, "id"), rb_js(u, "reason"));
		}
	}
	print_acs_remedy(f, doc);
	fprintf(f, "\nChecks:");
	json_object_object_foreach(sum, id, v)
		fprintf(f, " %s=%s", id, json_object_get_string(v));
	fprintf(f, "\nStatus: %s%s%s\n",
		tty && strcmp(status, "ok") ? "\033[1m" : "", status, tty ? "\033[0m" : "");
}

/* ---- Prometheus ---- */

/* @name{nic,nic_pci,netdev@extra} of rail @x, the value left to the caller. */
static void prom_rail_series(FILE *f, const char *name, struct json_object *x, const char *extra)
{
	fprintf(f, "%s{nic=\"", name);
	rb_prom_label(f, rb_jstr(x, "nic"));
	fprintf(f, "\",nic_pci=\"");
	rb_prom_label(f, rb_jstr(x, "pci"));
	fprintf(f, "\",netdev=\"");
	rb_prom_label(f, rb_jstr(x, "netdev"));
	fprintf(f, "\"%s} ", extra);
}

/* One transceiver gauge line: @name{nic,nic_pci,netdev[,lane]} value. */
static void prom_xcvr(FILE *f, const char *name, struct json_object *x, const char *extra,
		      struct json_object *v)
{
	prom_rail_series(f, name, x, extra);
	fprintf(f, "%.6g\n", json_object_get_double(v));
}

/*
 * Each rail's transceiver, so Prometheus can trend what the audit judges
 * only against the module's thresholds: temperature, per-lane optical power
 * and bias, and the thresholds themselves (for alert rules).
 */
static void print_prom_optics(FILE *f, struct json_object *optics)
{
	static const char *const lanes_q[] = { "rx_power_mw", "tx_power_mw", "bias_ma" };
	size_t i, l, q, n = json_object_array_length(optics);
	char extra[64];

	if (!n)
		return;
	fprintf(f, "# HELP railbind_transceiver_temperature_celsius Temperature of each rail's pluggable module.\n"
		"# TYPE railbind_transceiver_temperature_celsius gauge\n");
	for (i = 0; i < n; i++) {
		struct json_object *x = json_object_array_get_idx(optics, i), *v = rb_jget(x, "temperature_c");

		if (v)
			prom_xcvr(f, "railbind_transceiver_temperature_celsius", x, "", v);
	}
	for (q = 0; q < 3; q++) {
		fprintf(f, "# HELP railbind_transceiver_%s Per lane, each rail's pluggable module.\n"
			"# TYPE railbind_transceiver_%s gauge\n", lanes_q[q], lanes_q[q]);
		for (i = 0; i < n; i++) {
			struct json_object *x = json_object_array_get_idx(optics, i);
			struct json_object *lanes = rb_jget(x, "lanes");
			char name[64];

			snprintf(name, sizeof(name), "railbind_transceiver_%s", lanes_q[q]);
			for (l = 0; l < json_object_array_length(lanes); l++) {
				struct json_object *lj = json_object_array_get_idx(lanes, l);
				struct json_object *v = rb_jget(lj, lanes_q[q]);

				snprintf(extra, sizeof(extra), ",lane=\"%d\"",
					 json_object_get_int(rb_jget(lj, "lane")));
				if (v)
					prom_xcvr(f, name, x, extra, v);
			}
		}
	}
	fprintf(f, "# HELP railbind_transceiver_threshold The module's own thresholds (quantity as in the gauges above, level high_alarm, low_alarm, high_warn, low_warn).\n"
		"# TYPE railbind_transceiver_threshold gauge\n");
	for (i = 0; i < n; i++) {
		struct json_object *x = json_object_array_get_idx(optics, i);

		json_object_object_foreach(rb_jget(x, "thresholds"), qname, tq) {
			json_object_object_foreach(tq, level, v) {
				snprintf(extra, sizeof(extra), ",quantity=\"%.16s\",level=\"%.12s\"",
					 qname, level);
				prom_xcvr(f, "railbind_transceiver_threshold", x, extra, v);
			}
		}
	}
}

/*
 * Each RoCE rail's PFC: frames sent and received per priority as counters
 * (Prometheus takes the rate: a storm between two audits shows), and which
 * priorities have PFC on.
 */
/* One integer line: @name{nic,nic_pci,netdev@extra} value (a counter's exact value). */
static void prom_rail_int(FILE *f, const char *name, struct json_object *x, const char *extra,
			  long long v)
{
	prom_rail_series(f, name, x, extra);
	fprintf(f, "%lld\n", v);
}

static void print_prom_dcb(FILE *f, struct json_object *dcb)
{
	static const char *const dir[2] = { "sent", "received" };
	size_t i, k, n = json_object_array_length(dcb);
	char extra[64];
	int p;

	if (!n)
		return;
	fprintf(f, "# HELP railbind_pfc_frames_total PFC frames each RoCE rail sent and received, per priority (DCB netlink).\n"
		"# TYPE railbind_pfc_frames_total counter\n");
	for (i = 0; i < n; i++) {
		struct json_object *x = json_object_array_get_idx(dcb, i);

		for (k = 0; k < 2; k++) {
			struct json_object *c = rb_jget(x, k ? "pfc_frames_received" : "pfc_frames_sent");

			for (p = 0; p < (int)json_object_array_length(c) && p < 8; p++) {
				snprintf(extra, sizeof(extra), ",priority=\"%d\",direction=\"%s\"", p,
					 dir[k]);
				prom_rail_int(f, "railbind_pfc_frames_total", x, extra, (long long)
					      json_object_get_int64(json_object_array_get_idx(c, (size_t)p)));
			}
		}
	}
	fprintf(f, "# HELP railbind_pfc_enabled Whether PFC is on for each priority of each RoCE rail.\n"
		"# TYPE railbind_pfc_enabled gauge\n");
	for (i = 0; i < n; i++) {
		struct json_object *x = json_object_array_get_idx(dcb, i), *en = rb_jget(x, "pfc_enabled");
		unsigned bits = 0;

		for (k = 0; k < json_object_array_length(en); k++)
			bits |= 1u << (json_object_get_int(json_object_array_get_idx(en, k)) & 7);
		for (p = 0; p < 8; p++) {
			snprintf(extra, sizeof(extra), ",priority=\"%d\"", p);
			prom_rail_int(f, "railbind_pfc_enabled", x, extra, bits & 1u << p ? 1 : 0);
		}
	}
}

static void print_prom(FILE *f, struct json_object *doc)
{
	struct json_object *pairs = rb_jget(doc, "pairs");
	size_t i, n;

	fprintf(f, "# HELP railbind_audit_status Audit status: 0 ok, 1 warn, 2 fail, 3 unknown.\n"
		"# TYPE railbind_audit_status gauge\n"
		"railbind_audit_status %d\n", rb_sev_value(rb_js(doc, "status")));
	fprintf(f, "# HELP railbind_audit_check_status Worst severity of each check: 0 ok, 1 warn, 2 fail, 3 not decided.\n"
		"# TYPE railbind_audit_check_status gauge\n");
	json_object_object_foreach(rb_jget(doc, "summary"), id, v)
		fprintf(f, "railbind_audit_check_status{check=\"%s\"} %d\n", id,
			rb_sev_value(json_object_get_string(v)));
	rb_prom_findings(f, doc, "railbind_audit_findings");
	fprintf(f, "# HELP railbind_gpu_nic_path Path class of each GPU-NIC pair: 1 PIX, 2 PXB, 3 PHB, 4 NODE, 5 SYS (label class); planned=1 for each rank's primary rail.\n"
		"# TYPE railbind_gpu_nic_path gauge\n");
	n = json_object_array_length(pairs);
	for (i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(pairs, i);
		enum aff_path path = AFF_PATH_NONE;
		const char *cls = rb_jstr(p, "path");

		if (!cls || aff_path_from_name(cls, &path) < 0)
			continue;
		fprintf(f, "railbind_gpu_nic_path{gpu=\"");
		rb_prom_label(f, rb_jstr(p, "gpu"));
		fprintf(f, "\",nic=\"");
		rb_prom_label(f, rb_jstr(p, "nic"));
		fprintf(f, "\",nic_pci=\"");
		rb_prom_label(f, rb_jstr(p, "nic_pci"));
		fprintf(f, "\",class=\"%s\",planned=\"%d\"} %d\n", cls,
			json_object_get_boolean(rb_jget(p, "planned")), (int)path - AFF_PATH_NV);
	}
	print_prom_optics(f, rb_jget(doc, "optics"));
	print_prom_dcb(f, rb_jget(doc, "dcb"));
}

/* ---- Node Feature Discovery ---- */

/*
 * The node's rails for a nodeSelector: how many NICs the plan uses (one per
 * device, not per port) and the slowest one's rate, Gb/s, when every rate is
 * known.
 */
static void print_nfd_rails(FILE *f, struct json_object *topo)
{
	struct json_object *nics = rb_jget(topo, "nics");
	size_t n = 0, len = nics ? json_object_array_length(nics) : 0;
	const char *last = NULL;
	long rate = -1;

	for (size_t i = 0; i < len; i++) {
		struct json_object *nic = json_object_array_get_idx(nics, i);
		struct json_object *r = rb_jget(nic, "rate");
		const char *pci = rb_js(nic, "pci");

		if (rb_jget(nic, "excluded") || !json_object_get_boolean(rb_jget(nic, "rdma")))
			continue;
		if (!pci || !last || strcmp(pci, last))
			n++;
		last = pci;
		if (!r)
			rate = 0;
		else if (rate && (rate < 0 || json_object_get_int64(r) < rate))
			rate = json_object_get_int64(r);
	}
	fprintf(f, "railbind.rails=%zu\n", n);
	if (rate > 0)
		fprintf(f, "railbind.rail-rate-gbps=%ld\n", rate);
}

static void print_nfd(FILE *f, struct json_object *doc)
{
	/* Label values: [A-Za-z0-9._-], so every value printed here is one word. */
	fprintf(f, "railbind.audit.status=%s\n", rb_js(doc, "status"));
	json_object_object_foreach(rb_jget(doc, "summary"), id, v)
		fprintf(f, "railbind.audit.%s=%s\n", id, json_object_get_string(v));
	print_nfd_rails(f, rb_jget(doc, "topo"));
}

/* ---- --acs-cmdline ---- */

enum { OPT_ACS_CMDLINE = 0x200, OPT_KERNEL };

struct audit_opts {
	bool acs_cmdline;
	const char *kernel;
};

/*
 * Only the node's pci=config_acs= parameter, quoted for GRUB_CMDLINE_LINUX,
 * for provisioning scripts: 0 printed; 1 none needed; 2 the target kernel
 * cannot take it (the setpci lines follow on stderr); 3 not decided.
 * Everything but the parameter goes to stderr.
 */
static int print_acs_cmdline(struct json_object *doc)
{
	struct json_object *r = rb_jget(doc, "acs_remedy"), *setpci = rb_jget(r, "setpci");
	const char *status = rb_jstr(r, "status"), *reason = rb_jstr(r, "reason");
	size_t i;

	if (!r) {
		struct json_object *und = rb_jget(doc, "undecided");

		for (i = 0; i < json_object_array_length(und); i++) {
			struct json_object *u = json_object_array_get_idx(und, i);

			if (!strcmp(rb_js(u, "id"), "acs-redirect"))
				reason = rb_jstr(u, "reason");
		}
		rb_error("audit --acs-cmdline: ACS not judged: %s", reason ? reason : "no ACS data");
		return RB_CHECK_UNKNOWN;
	}
	if (status && !strcmp(status, "cmdline")) {
		printf("%s\n", rb_js(r, "grub"));
		return fflush(stdout) ? RB_CHECK_UNKNOWN : 0;
	}
	rb_error("audit --acs-cmdline: no parameter: %s", reason ? reason : "unknown");
	if (!status || !strcmp(status, "none"))
		return 1;
	for (i = 0; i < json_object_array_length(setpci); i++)
		fprintf(stderr, "  %s\n", json_object_get_string(json_object_array_get_idx(setpci, i)));
	return !strcmp(status, "setpci") ? 2 : RB_CHECK_UNKNOWN;
}

static int own_opt(int c, const char *arg, void *data)
{
	struct audit_opts *ao = data;

	if (c == OPT_ACS_CMDLINE)
		ao->acs_cmdline = true;
	else
		ao->kernel = arg;
	return 0;
}

static const struct rb_opt opts[] = {
	RB_OPTS_COMMON,
	RB_OPTS_REPORT,
	{ OPT_ACS_CMDLINE, no_argument, "acs-cmdline",
	  "      --acs-cmdline  print only the node's pci=config_acs= kernel parameter\n"
	  "                     (quoted for GRUB_CMDLINE_LINUX); exit 0 printed, 1 none\n"
	  "                     needed, 2 the kernel cannot take it (setpci on stderr),\n"
	  "                     3 not decided\n" },
	{ OPT_KERNEL, required_argument, "kernel",
	  "      --kernel VER   the kernel release the remedies are for (default: the\n"
	  "                     node's, from the source's RailbindKernel or the live node)\n" },
	{ 0 }
};

static const struct rb_verb verb = {
	.name = "audit",
	.synopsis = "[OPTIONS]",
	.about = "Check the node's (or a snapshot's) NUMA/PCIe layout: GPU-NIC path classes,\n"
		 "NUMA nodes, ACS redirect, downtrained links, peer memory, IOMMU, RDMA ports,\n"
		 "transceivers (as root: reading a module EEPROM needs CAP_NET_ADMIN).\n"
		 "Exit: 0 ok, 1 warnings, 2 failures, 3 could not decide (or bad input).\n",
	.family = RB_CHECK,
	.opts = opts,
	.opt = own_opt,
	.text = print_text,
	.prom = print_prom,
	.nfd = print_nfd,
};

int cmd_audit(int argc, char **argv)
{
	/* The live node's transceivers too (needs root; says so without). */
	struct rb_opts o = { .load_flags = AFF_LOAD_OPTICS };
	struct audit_opts ao = { 0 };
	struct aff_ctx *ctx = NULL;
	struct aff_topo *topo = NULL;
	struct aff_audit *a = NULL;
	char err[1024] = "", *text = NULL;
	int rc;

	rc = rb_getopt(&verb, argc, argv, &o, &ao);
	if (rc >= 0)
		return rc;
	if (ao.acs_cmdline && o.nfmt) {
		rb_error("audit: --acs-cmdline prints only the parameter: it excludes --json, --prom and --nfd");
		return RB_CHECK_USAGE;
	}
	rc = rb_topology(&verb, &o, &ctx, &topo);
	if (rc >= 0)
		return rc;
	if (ao.kernel && aff_topo_set_kernel(topo, ao.kernel) < 0) {
		rb_error("audit: --kernel '%s': expected a release such as 6.12.9", ao.kernel);
		aff_topo_unref(topo);
		aff_ctx_unref(ctx);
		return RB_CHECK_USAGE;
	}
	rc = aff_audit_run(topo, NULL, 0, &a, err, sizeof(err));
	if (rc < 0)
		rb_error("%s", *err ? err : strerror(-rc));
	aff_topo_unref(topo);
	if (rc < 0) {
		aff_ctx_unref(ctx);
		return RB_CHECK_UNKNOWN;
	}
	rc = aff_audit_json(a, 0, &text);
	if (ao.acs_cmdline) {
		struct json_object *doc = rb_doc(rc, text);

		rc = doc ? print_acs_cmdline(doc) : RB_CHECK_UNKNOWN;
		json_object_put(doc);
		aff_audit_unref(a);
		aff_ctx_unref(ctx);
		return rc;
	}
	rc = rb_emit(&verb, &o, rb_doc(rc, text), aff_audit_exit_code(a));
	aff_audit_unref(a);
	aff_ctx_unref(ctx);
	return rc;
}
