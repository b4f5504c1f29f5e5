// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Did each rank use its rail, at the speed its rail allows? The log's
 * summaries (nccllog.h) against the plan's public JSON: per GPU (NCCL's
 * busId is the plan's GPU), the NICs its channels went through against its
 * planned rails, GPUDirect RDMA against what its path and the node's peer
 * memory allow; across nodes, the device set NCCL used on each; per
 * nccl-tests table, the large-message busbw against the bound of the
 * node's rails and PCIe paths, and #wrong. Each difference is a finding in
 * the audit's model, with the cause where the log or the node names it.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <json-c/json.h>

#include "nccllog_judge.h"

const char *const nl_check_ids[NL_NCHECKS] = {
	"nccl-nic", "nccl-gdr", "nccl-rail-set", "nccl-busbw", "nccl-wrong", "nccl-log",
};
enum { K_NIC, K_GDR, K_RAILSET, K_BUSBW, K_WRONG, K_LOG };

struct judge {
	const struct nl_log *log;
	struct json_object *plan, *topo, *facts;
	const struct nl_judge_spec *spec;
	struct json_object *checks, *undecided, *ranks, *tests;
	int sev[NL_NCHECKS];	/* worst severity found, -1 none */
	bool gave_up[NL_NCHECKS];
};

static const char *const sev_names[] = { "ok", "warn", "fail", "unknown" };

static struct json_object *str_or_null(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

static struct json_object *get(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *gets(struct json_object *o, const char *key)
{
	struct json_object *v = get(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* A JSON number with two decimals (GB/s, ratios). */
static struct json_object *num2(double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.2f", v);
	return json_object_new_double_s(v, buf);
}

__attribute__((format(printf, 8, 9)))
static void add(struct judge *j, int k, int sev, const char *subject, const char *device,
		struct json_object *evidence, const char *remedy, const char *fmt, ...)
{
	struct json_object *c = json_object_new_object(), *devs = json_object_new_array();
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (device && *device)
		json_object_array_add(devs, json_object_new_string(device));
	json_object_object_add(c, "id", json_object_new_string(nl_check_ids[k]));
	json_object_object_add(c, "severity", json_object_new_string(sev_names[sev]));
	json_object_object_add(c, "subject", str_or_null(subject));
	json_object_object_add(c, "message", json_object_new_string(msg));
	json_object_object_add(c, "remedy", str_or_null(remedy));
	json_object_object_add(c, "devices", devs);
	json_object_object_add(c, "evidence", evidence ? evidence : json_object_new_object());
	json_object_array_add(j->checks, c);
	if (sev > j->sev[k])
		j->sev[k] = sev;
}

__attribute__((format(printf, 3, 4)))
static void undecided(struct judge *j, int k, const char *fmt, ...)
{
	struct json_object *u;
	char msg[512];
	va_list ap;

	/* The first reason a check gave up is the one reported. */
	if (j->gave_up[k])
		return;
	u = json_object_new_object();
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(u, "id", json_object_new_string(nl_check_ids[k]));
	json_object_object_add(u, "reason", json_object_new_string(msg));
	json_object_array_add(j->undecided, u);
	j->gave_up[k] = true;
}

/* ---- names ---- */

/* NCCL's "mlx5_0:1" or "mlx5_0_dma:1" is port @port of RDMA device @name. */
static bool nic_is(const char *nccl, const char *name, int port)
{
	size_t n = strcspn(nccl, ":");
	const char *colon = nccl[n] ? nccl + n + 1 : NULL;

	if (!name)
		return false;
	/* Data Direct devices: NCCL names the DMA function "<dev>_dma". */
	if (n > 4 && !strncmp(nccl + n - 4, "_dma", 4) && strlen(name) == n - 4 &&
	    !strncmp(nccl, name, n - 4))
		return !colon || port <= 0 || atoi(colon) == port;
	if (strlen(name) != n || strncmp(nccl, name, n))
		return false;
	return !colon || port <= 0 || atoi(colon) == port;
}

static int port_of(struct json_object *nic)
{
	struct json_object *p = get(nic, "port");

	return p ? json_object_get_int(p) : -1;
}

/* "mlx5_0:1": a planned NIC's name as NCCL spells it. */
static void nic_label(struct json_object *nic, char *buf, size_t len)
{
	int port = port_of(nic);
	const char *name = gets(nic, "name");

	if (port > 0)
		snprintf(buf, len, "%s:%d", name ? name : "?", port);
	else
		snprintf(buf, len, "%s", name ? name : "?");
}

static struct json_object *plan_rank(struct json_object *plan, const char *pci)
{
	struct json_object *ranks = get(plan, "ranks");
	size_t i;

	for (i = 0; ranks && i < json_object_array_length(ranks); i++) {
		struct json_object *r = json_object_array_get_idx(ranks, i);

		if (!strcasecmp(gets(get(r, "gpu"), "pci") ? gets(get(r, "gpu"), "pci") : "", pci))
			return r;
	}
	return NULL;
}

static bool dev_set(const uint64_t *mask, int d)
{
	return mask[d / 64] >> (d % 64) & 1;
}

/* ---- per GPU: its NIC, GPUDirect ---- */

static bool planned(struct json_object *rank, const char *nccl)
{
	struct json_object *nics = get(rank, "nics");
	size_t i;

	for (i = 0; nics && i < json_object_array_length(nics); i++) {
		struct json_object *n = json_object_array_get_idx(nics, i);

		if (nic_is(nccl, gets(n, "name"), port_of(n)))
			return true;
	}
	return false;
}

/* Whether the process's "NET/IB : Using" list has the planned NIC. */
static bool listed(const struct nl_proc *p, struct json_object *nic)
{
	int d;

	for (d = 0; d < p->ndev; d++)
		if (p->dev[d] && nic_is(p->dev[d], gets(nic, "name"), port_of(nic)))
			return true;
	return false;
}

static void judge_nic(struct judge *j, const struct nl_gpu *g, const struct nl_proc *p,
		      struct json_object *rank, const char *subject, const char *pci,
		      struct json_object *used, int *decided)
{
	struct json_object *nic = json_object_array_get_idx(get(rank, "nics"), 0);
	char want[64], wrong[512] = "";
	const char *cause, *remedy;
	size_t w = 0;
	int d;

	for (d = 0; d < NL_MAX_DEVS; d++) {
		if (!dev_set(g->use.dev, d))
			continue;
		if (!p->dev[d]) {
			undecided(j, K_NIC, "%s: NET/%s/%d is not in a \"NET/%s : Using\" line of that process%s",
				  subject, p->net[0] ? p->net : "?", d, p->net[0] ? p->net : "IB",
				  p->vnic ? " (a virtual NIC NCCL made: TOPO/NET : Made vNic)" : "");
			return;
		}
		json_object_array_add(used, json_object_new_string(p->dev[d]));
		if (!planned(rank, p->dev[d]) && w < sizeof(wrong) - 40)
			w += (size_t)snprintf(wrong + w, sizeof(wrong) - w, "%s%s", w ? ", " : "",
					      p->dev[d]);
	}
	if (!nic) {
		undecided(j, K_NIC, "%s: the plan gives GPU %s no rail", subject, pci);
		return;
	}
	(*decided)++;
	if (!*wrong)
		return;
	nic_label(nic, want, sizeof(want));
	if (p->ib_hca && !nl_ib_hca_admits(p->ib_hca, gets(nic, "name"), port_of(nic))) {
		cause = "NCCL_IB_HCA excluded the rail";
		remedy = "set NCCL_IB_HCA to the node's rail list, the same on every node "
			 "(railbind plan --json: env NCCL_IB_HCA), or unset it";
	} else if (p->ndev >= 0 && !listed(p, nic)) {
		cause = "NCCL did not list the rail: its port was down, its driver not loaded, "
			"or another NCCL_IB_HCA";
		remedy = "railbind audit (nic-port-down); ibstat on the node";
	} else {
		cause = "NCCL listed the rail but chose another (NCCL_TOPO_FILE, NCCL_CROSS_NIC, "
			"or a topology NCCL sees differently)";
		remedy = "railbind nccl-topo -o FILE, then NCCL_TOPO_FILE=FILE; railbind audit";
	}
	add(j, K_NIC, 2, subject, pci, json_object_new_object(), remedy,
	    "%s (GPU %s) sent through %s, its plan's rail is %s (%s): %s%s%s%s", subject, pci,
	    wrong, want, gets(nic, "path") ? gets(nic, "path") : "?", cause,
	    p->ib_hca ? " (NCCL_IB_HCA=" : "", p->ib_hca ? p->ib_hca : "", p->ib_hca ? ")" : "");
}

static void judge_gdr(struct judge *j, const struct nl_gpu *g, const struct nl_proc *p,
		      struct json_object *rank, const char *subject, const char *pci,
		      int *decided)
{
	struct json_object *nic = json_object_array_get_idx(get(rank, "nics"), 0);
	const char *path = gets(nic, "path"), *peer = gets(get(j->facts, "machine"), "peer memory");
	const char *cause = NULL, *remedy = NULL;
	char want[64];
	int d;

	if (!nic || !path)
		return;
	(*decided)++;
	/* NCCL_NET_GDR_LEVEL's default is PXB: GPUDirect through a PCIe switch, not the CPU. */
	if (!g->use.host_lines || (strcmp(path, "PIX") && strcmp(path, "PXB")))
		return;
	for (d = 0; d < NL_MAX_DEVS && !cause; d++)
		if (dev_set(g->use.dev, d) && dev_set(p->gdr_off, d))
			cause = "NCCL found no GPUDirect RDMA support for the HCA "
				"(\"GPU Direct RDMA Disabled for HCA\": no nvidia_peermem, no dma-buf)";
	if (!cause && peer && !strcmp(peer, "none"))
		cause = "the node has no peer-memory module (nvidia_peermem not loaded, no dma-buf)";
	if (cause) {
		remedy = "modprobe nvidia_peermem, or dma-buf (open GPU kernel modules, Linux 5.12+); "
			 "railbind audit (peer-memory)";
	} else if (p->gdr_distance) {
		cause = "NCCL judged the GPU-NIC distance beyond NCCL_NET_GDR_LEVEL";
		remedy = "unset NCCL_NET_GDR_LEVEL, or check NCCL_TOPO_FILE against railbind nccl-topo";
	} else {
		cause = "cause not in the log (NCCL_NET_GDR_LEVEL, NCCL_IB_DISABLE_GDR, NCCL_NET_GDR_C2C?)";
		remedy = "rerun with NCCL_DEBUG_SUBSYS=INIT,NET,GRAPH to see NCCL's reason";
	}
	nic_label(nic, want, sizeof(want));
	add(j, K_GDR, 2, subject, pci, json_object_new_object(), remedy,
	    "%s (GPU %s): %u of %u channels through the network staged through host memory, "
	    "not GPUDirect RDMA, though its rail %s is %s: %s", subject, pci, g->use.host_lines,
	    g->use.channels, want, path, cause);
}

static void judge_gpus(struct judge *j)
{
	const struct nl_log *log = j->log;
	int nic_done = 0, gdr_done = 0, own_any = 0;
	size_t i, matched = 0;

	for (i = 0; i < log->ngpu; i++) {
		const struct nl_gpu *g = &log->gpu[i];
		const struct nl_proc *p = &log->proc[g->proc];
		struct json_object *o = json_object_new_object(), *used = json_object_new_array();
		struct json_object *rank, *nic;
		char pci[32], subject[320], want[64] = "";
		unsigned own = g->use.channels - g->use.pxn_lines;

		nl_busid_pci(g->busid, pci, sizeof(pci));
		snprintf(subject, sizeof(subject), "%s rank %ld/%ld pid %ld", p->host, g->rank,
			 g->nranks, p->pid);
		rank = j->plan ? plan_rank(j->plan, pci) : NULL;
		nic = rank ? json_object_array_get_idx(get(rank, "nics"), 0) : NULL;
		if (nic)
			nic_label(nic, want, sizeof(want));
		if (rank)
			matched++;
		if (own)
			own_any++;
		if (rank && own) {
			judge_nic(j, g, p, rank, subject, pci, used, &nic_done);
			judge_gdr(j, g, p, rank, subject, pci, &gdr_done);
		}
		json_object_object_add(o, "host", json_object_new_string(p->host));
		json_object_object_add(o, "pid", json_object_new_int64(p->pid));
		json_object_object_add(o, "gpu", json_object_new_string(pci));
		json_object_object_add(o, "rank", json_object_new_int64(g->rank));
		json_object_object_add(o, "nranks", json_object_new_int64(g->nranks));
		json_object_object_add(o, "comms", json_object_new_int((int)g->comms));
		json_object_object_add(o, "net", str_or_null(p->net));
		json_object_object_add(o, "plugin", str_or_null(p->plugin));
		json_object_object_add(o, "nics", used);
		json_object_object_add(o, "gdr", !own ? NULL : json_object_new_string(
			!g->use.host_lines ? "on" : !g->use.gdr_lines ? "off" : "mixed"));
		json_object_object_add(o, "channels", json_object_new_int((int)g->use.channels));
		json_object_object_add(o, "pxn_channels", json_object_new_int((int)g->use.pxn_lines));
		json_object_object_add(o, "planned_nic", str_or_null(want));
		json_object_object_add(o, "planned_path", str_or_null(gets(nic, "path")));
		json_object_array_add(j->ranks, o);
	}
	if (!log->nccl_lines) {
		undecided(j, K_NIC, "no NCCL INFO line in the input: run the job with NCCL_DEBUG=INFO");
		undecided(j, K_GDR, "no NCCL INFO line in the input: run the job with NCCL_DEBUG=INFO");
	} else if (!log->ngpu) {
		undecided(j, K_NIC, "no \"Init COMPLETE\" line: which GPU each rank had is unknown");
		undecided(j, K_GDR, "no \"Init COMPLETE\" line: which GPU each rank had is unknown");
	} else if (!j->plan || !matched) {
		undecided(j, K_NIC, "none of the log's GPUs is a GPU of this topology (%s): give the node's snapshot with --input",
			  gets(j->topo, "source") ? gets(j->topo, "source") : "?");
		undecided(j, K_GDR, "none of the log's GPUs is a GPU of this topology");
	} else if (!own_any) {
		undecided(j, K_NIC, "no channel line through the network (\"via NET/\"): a single-node run, or NCCL_DEBUG_SUBSYS without INIT/NET");
		undecided(j, K_GDR, "no channel line through the network");
	}
	if (!nic_done)
		undecided(j, K_NIC, "no rank's NIC could be compared with its plan");
	if (!gdr_done)
		undecided(j, K_GDR, "no rank's GPUDirect RDMA could be compared with its plan");
}

/* ---- across nodes: the device set ---- */

static bool has_dev(const struct nl_proc *p, const char *name)
{
	int d;

	for (d = 0; d < p->ndev; d++)
		if (p->dev[d] && !strcmp(p->dev[d], name))
			return true;
	return false;
}

static int count_devs(const struct nl_proc *p)
{
	int d, n = 0;

	for (d = 0; d < p->ndev; d++)
		n += p->dev[d] != NULL;
	return n;
}

static void judge_rail_set(struct judge *j)
{
	const struct nl_log *log = j->log;
	const struct nl_proc *ref = NULL;
	size_t i, k, hosts = 0;
	bool decided = false;

	/* The reference: the process that listed the most devices. */
	for (i = 0; i < log->nproc; i++)
		if (log->proc[i].ndev >= 0 && (!ref || count_devs(&log->proc[i]) > count_devs(ref)))
			ref = &log->proc[i];
	for (i = 0; ref && i < log->nproc; i++) {
		const struct nl_proc *p = &log->proc[i];
		char missing[512] = "";
		size_t m = 0;
		int d;

		if (p->ndev < 0)
			continue;
		/* One finding per host: its first process that listed its devices. */
		for (k = 0; k < i; k++)
			if (log->proc[k].ndev >= 0 && !strcmp(log->proc[k].host, p->host))
				break;
		if (k < i)
			continue;
		hosts++;
		for (d = 0; d < ref->ndev; d++)
			if (ref->dev[d] && !has_dev(p, ref->dev[d]) && m < sizeof(missing) - 40)
				m += (size_t)snprintf(missing + m, sizeof(missing) - m, "%s%s",
						      m ? ", " : "", ref->dev[d]);
		if (*missing)
			add(j, K_RAILSET, 2, p->host, NULL, json_object_new_object(),
			    "the same rails on every node: railbind audit on the node, and one "
			    "NCCL_IB_HCA for the whole job",
			    "%s: NCCL used %d net devices, %s %d: %s missing on %s (%s:%ld)%s%s%s",
			    p->host, count_devs(p), ref->host, count_devs(ref), missing, p->host,
			    p->using_file ? p->using_file : "-", p->using_line,
			    p->ib_hca ? " (NCCL_IB_HCA=" : "", p->ib_hca ? p->ib_hca : "",
			    p->ib_hca ? ")" : "");
		if ((p->ib_hca || ref->ib_hca) &&
		    (!p->ib_hca || !ref->ib_hca || strcmp(p->ib_hca, ref->ib_hca)))
			add(j, K_RAILSET, 2, p->host, NULL, json_object_new_object(),
			    "one NCCL_IB_HCA string for every rank of the job",
			    "NCCL_IB_HCA differs across nodes: %s on %s, %s on %s",
			    p->ib_hca ? p->ib_hca : "(unset)", p->host,
			    ref->ib_hca ? ref->ib_hca : "(unset)", ref->host);
	}
	if (hosts > 1)
		decided = true;
	if (log->net_min >= 0) {
		decided = true;
		if (log->net_min != log->net_max || log->net_mismatch)
			add(j, K_RAILSET, 2, log->net_count_file, NULL, json_object_new_object(),
			    "the same rails on every node (NCCL refuses mixed counts unless "
			    "NCCL_IGNORE_NET_MISMATCH=1)",
			    "%s:%ld: NCCL's local Net device counts across ranks differ: min %d max %d%s",
			    log->net_count_file ? log->net_count_file : "-", log->net_count_line,
			    log->net_min, log->net_max,
			    log->net_mismatch ? " (Detected mixed local Net device counts)" : "");
	} else if (log->net_mismatch) {
		decided = true;
		add(j, K_RAILSET, 2, log->net_count_file, NULL, json_object_new_object(),
		    "the same rails on every node", "%s:%ld: NCCL detected mixed local Net device counts across ranks",
		    log->net_count_file ? log->net_count_file : "-", log->net_count_line);
	}
	if (!decided)
		undecided(j, K_RAILSET, "%s", !ref ? "no \"NET/... : Using\" line in the input" :
			  "one node's NCCL lines only: nothing to compare across nodes");
}

/* ---- nccl-tests ---- */

/* NCCL's name of an nccl-tests program's collective; NULL for point-to-point ones. */
static const char *nccl_func(const char *prog)
{
	static const char *const map[][2] = {
		{ "all_reduce", "AllReduce" }, { "all_gather", "AllGather" },
		{ "reduce_scatter", "ReduceScatter" }, { "broadcast", "Broadcast" },
		{ "reduce", "Reduce" },
	};
	size_t i, n = strcspn(prog, ".");

	if (n > 5 && !strncmp(prog + n - 5, "_perf", 5))
		n -= 5;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strlen(map[i][0]) == n && !strncmp(prog, map[i][0], n))
			return map[i][1];
	return NULL;
}

/* Whether NCCL_ALGO (or a tuning line's algorithm) allows Ring and Tree only. */
static bool ring_or_tree(const char *algo)
{
	const char *p = algo;

	if (!algo || !*algo || *algo == '^')
		return false;
	while (*p) {
		size_t n = strcspn(p, ",");

		if (!((n == 4 && !strncasecmp(p, "ring", 4)) || (n == 4 && !strncasecmp(p, "tree", 4))))
			return false;
		p += n + (p[n] == ',');
	}
	return true;
}

static const char *test_algo(const struct judge *j, const struct nl_test *t, const char *func,
			     const char **from)
{
	const struct nl_log *log = j->log;
	size_t i;

	*from = "the -J document's NCCL_ALGO";
	if (t->algo[0])
		return t->algo;
	*from = "NCCL's tuning line for the largest message";
	for (i = 0; func && i < log->ntuning; i++)
		if (!strcmp(log->tuning[i].func, func))
			return log->tuning[i].algo;
	*from = "NCCL_ALGO in the log";
	for (i = 0; i < log->nproc; i++)
		if (log->proc[i].algo)
			return log->proc[i].algo;
	*from = "--algo or NCCL_ALGO";
	return j->spec->algo;
}

/* The smallest per-GPU bound of the plan's rails, and what sets it. */
static double rail_bound(struct judge *j, char *why, size_t len)
{
	struct json_object *ranks = get(j->plan, "ranks"), *nics = get(j->topo, "nics");
	double best = INFINITY;
	size_t i, k;

	for (i = 0; ranks && i < json_object_array_length(ranks); i++) {
		struct json_object *r = json_object_array_get_idx(ranks, i);
		struct json_object *nic = json_object_array_get_idx(get(r, "nics"), 0);
		const char *pci = gets(nic, "pci");
		struct json_object *bwj = get(nic, "bandwidth");
		double bw, rate = 0;
		int share = 0;

		if (!nic || !bwj)
			return 0;
		bw = json_object_get_double(bwj);
		for (k = 0; k < json_object_array_length(ranks); k++) {
			const char *o = gets(json_object_array_get_idx(get(json_object_array_get_idx(
				ranks, k), "nics"), 0), "pci");

			share += pci && o && !strcmp(o, pci);
		}
		for (k = 0; nics && k < json_object_array_length(nics); k++) {
			struct json_object *n = json_object_array_get_idx(nics, k);

			if (pci && gets(n, "pci") && !strcmp(gets(n, "pci"), pci) && get(n, "rate"))
				rate = json_object_get_double(get(n, "rate"));
		}
		if (share < 1)
			share = 1;
		if (bw / share >= best)
			continue;
		best = bw / share;
		if (rate > 0 && bw < rate / 8 - 0.01)
			snprintf(why, len, "the PCIe path between GPU %s and %s: %.2f GB/s, below the port's %g Gb/s (%.2f GB/s)%s",
				 gets(get(r, "gpu"), "pci"), gets(nic, "name") ? gets(nic, "name") : pci,
				 bw, rate, rate / 8, share > 1 ? ", shared by several GPUs" : "");
		else
			snprintf(why, len, "the NIC %s at %g Gb/s (%.2f GB/s)%s",
				 gets(nic, "name") ? gets(nic, "name") : pci, rate > 0 ? rate : bw * 8,
				 bw, share > 1 ? ", shared by several GPUs" : "");
	}
	return isinf(best) ? 0 : best;
}

static size_t log_hosts(const struct nl_log *log)
{
	size_t i, k, n = 0;

	for (i = 0; i < log->nproc; i++) {
		for (k = 0; k < i; k++)
			if (!strcmp(log->proc[k].host, log->proc[i].host))
				break;
		n += k == i;
	}
	return n;
}

static void judge_test(struct judge *j, const struct nl_test *t, size_t nlog_hosts,
		       int *bus_done, int *wrong_done)
{
	struct json_object *o = json_object_new_object();
	const char *func = t->name[0] ? nccl_func(t->name) : NULL, *algo, *from;
	char subject[320], why[512] = "", reason[1024] = "";
	int nodes = t->nhosts ? t->nhosts : (int)nlog_hosts;
	double bound = 0, ratio = 0;

	snprintf(subject, sizeof(subject), "%s:%ld", t->file, t->line);
	algo = test_algo(j, t, func, &from);
	if (t->wrong > 0) {
		add(j, K_WRONG, 2, subject, NULL, json_object_new_object(),
		    "rerun on each node alone (-g N) to find the GPU or link that corrupts data; "
		    "railbind audit (pcie-errors, link-downtrained)",
		    "%s: %s reported %ld wrong elements (#wrong), the first at line %ld",
		    subject, t->name[0] ? t->name : "nccl-tests", t->wrong, t->wrong_line);
	}
	if (t->oob > 0)
		add(j, K_WRONG, 2, subject, NULL, json_object_new_object(), NULL,
		    "%s: %s: Out of bounds values %ld (FAILED)", subject,
		    t->name[0] ? t->name : "nccl-tests", t->oob);
	/* With -c 0 the footer still says 0 out of bounds: only a number in #wrong decides. */
	if (t->wrong >= 0 || t->oob > 0)
		(*wrong_done)++;
	if (!t->rows)
		snprintf(reason, sizeof(reason), "%s: the table has no rows", subject);
	else if (!t->name[0])
		snprintf(reason, sizeof(reason), "%s: which collective is unknown (no \"# Collective test starting\" line)", subject);
	else if (!func)
		snprintf(reason, sizeof(reason), "%s: %s is point-to-point: judged are ring and tree collectives only", subject, t->name);
	else if (nodes < 2)
		snprintf(reason, sizeof(reason), "%s: %s on %s: bound by NVLink/NVSwitch, not the rails", subject, t->name,
			 nodes ? "one node" : "an unknown number of nodes (no \"# Rank ... on HOST\" line)");
	else if (t->max_size < j->spec->min_size)
		snprintf(reason, sizeof(reason), "%s: the largest message, %llu bytes, is below %llu: run up to -e 8G",
			 subject, (unsigned long long)t->max_size, (unsigned long long)j->spec->min_size);
	else if (!ring_or_tree(algo))
		snprintf(reason, sizeof(reason), "%s: the algorithm is %s%s%s: NVLS, CollNet/SHARP and PAT can pass the rails' bound; judged are Ring and Tree (NCCL_ALGO=Ring, or --algo)",
			 subject, algo ? algo : "unknown", algo ? " from " : "", algo ? from : "");
	else if ((bound = rail_bound(j, why, sizeof(why))) <= 0)
		snprintf(reason, sizeof(reason), "%s: the plan knows no rail bandwidth (no port rate, no link speeds)", subject);
	if (*reason) {
		undecided(j, K_BUSBW, "%s", reason);
	} else {
		int sev = 0;

		ratio = t->busbw / bound;
		if (ratio < j->spec->expect * 0.75)
			sev = 2;
		else if (ratio < j->spec->expect)
			sev = 1;
		add(j, K_BUSBW, sev, subject, NULL, json_object_new_object(),
		    sev ? "railbind audit on each node (link-downtrained, acs-redirect, gpu-nic-path), "
			  "then railbind nccl-check on the run's NCCL_DEBUG=INFO log" : NULL,
		    "%s: %s across %d nodes (%s): busbw %.2f GB/s at %llu bytes is %.2f of the %.2f GB/s bound (%s); expected at least %.2f",
		    subject, t->name, nodes, algo, t->busbw, (unsigned long long)t->max_size, ratio,
		    bound, why, j->spec->expect);
		(*bus_done)++;
	}
	json_object_object_add(o, "file", json_object_new_string(t->file));
	json_object_object_add(o, "line", json_object_new_int64(t->line));
	json_object_object_add(o, "collective", str_or_null(t->name));
	json_object_object_add(o, "nodes", nodes ? json_object_new_int(nodes) : NULL);
	json_object_object_add(o, "ranks", t->nranks ? json_object_new_int(t->nranks) : NULL);
	json_object_object_add(o, "size", json_object_new_int64((int64_t)t->max_size));
	json_object_object_add(o, "busbw", num2(t->busbw));
	json_object_object_add(o, "avg_busbw", t->avg_busbw >= 0 ? num2(t->avg_busbw) : NULL);
	json_object_object_add(o, "bound", bound > 0 ? num2(bound) : NULL);
	json_object_object_add(o, "ratio", bound > 0 ? num2(ratio) : NULL);
	json_object_object_add(o, "expected", num2(j->spec->expect));
	json_object_object_add(o, "expected_source", json_object_new_string(
		"railbind's default (--expect): NCCL's Ring and Tree reach 80-95% of the per-GPU rail bandwidth on large messages"));
	json_object_object_add(o, "algo", str_or_null(algo));
	json_object_object_add(o, "bottleneck", str_or_null(why));
	json_object_object_add(o, "wrong", t->wrong >= 0 ? json_object_new_int64(t->wrong) : NULL);
	json_object_object_add(o, "undecided", str_or_null(reason));
	json_object_array_add(j->tests, o);
}

static void judge_tests(struct judge *j)
{
	size_t i, hosts = log_hosts(j->log);
	int bus = 0, wrong = 0;

	for (i = 0; i < j->log->ntest; i++)
		judge_test(j, &j->log->test[i], hosts, &bus, &wrong);
	if (!j->log->ntest) {
		undecided(j, K_BUSBW, "no nccl-tests table in the input");
		undecided(j, K_WRONG, "no nccl-tests table in the input");
	}
	if (!wrong)
		undecided(j, K_WRONG, "validation was off (-c 0: #wrong N/A)");
	(void)bus;
}

static void judge_notes(struct judge *j)
{
	const struct nl_log *log = j->log;
	size_t i;

	for (i = 0; i < log->nnote; i++) {
		char subject[320];

		snprintf(subject, sizeof(subject), "%s:%ld", log->note[i].file, log->note[i].line);
		add(j, K_LOG, 1, subject, NULL, json_object_new_object(), NULL, "%s: %s", subject,
		    log->note[i].message);
	}
	if (log->notes_dropped)
		add(j, K_LOG, 1, "input", NULL, json_object_new_object(), NULL,
		    "%zu more lines could not be read (only the first %d are listed)",
		    log->notes_dropped, NL_MAX_NOTES);
	if (log->long_lines)
		add(j, K_LOG, 0, "input", NULL, json_object_new_object(), NULL,
		    "%lu lines longer than %d bytes were skipped", log->long_lines, NL_LINE_MAX);
	if (log->unattributed)
		add(j, K_LOG, 0, "input", NULL, json_object_new_object(), NULL,
		    "%lu channel lines of threads without an Init COMPLETE were not attributed to a GPU",
		    log->unattributed);
	if (!log->lines)
		undecided(j, K_LOG, "the input is empty");
}

struct json_object *nl_judge(const struct nl_log *log, struct json_object *plan,
			     struct json_object *topo, struct json_object *facts,
			     const struct nl_judge_spec *spec)
{
	struct judge j = { .log = log, .plan = plan, .topo = topo, .facts = facts, .spec = spec };
	struct json_object *doc = json_object_new_object(), *sum = json_object_new_object();
	struct json_object *in = json_object_new_object();
	int k, worst = -1;

	j.checks = json_object_new_array();
	j.undecided = json_object_new_array();
	j.ranks = json_object_new_array();
	j.tests = json_object_new_array();
	for (k = 0; k < NL_NCHECKS; k++)
		j.sev[k] = -1;
	judge_gpus(&j);
	judge_rail_set(&j);
	judge_tests(&j);
	judge_notes(&j);
	for (k = 0; k < NL_NCHECKS; k++) {
		/* A check that neither found anything nor gave up passed: say so. */
		if (j.sev[k] < 0 && !j.gave_up[k])
			add(&j, k, 0, "node", NULL, NULL, NULL, "nothing found");
		json_object_object_add(sum, nl_check_ids[k], json_object_new_string(
			sev_names[j.sev[k] < 0 ? 3 : j.sev[k]]));
		if (j.sev[k] > worst)
			worst = j.sev[k];
	}
	json_object_object_add(doc, "schema", json_object_new_string("railbind.nccl-check/1"));
	json_object_object_add(doc, "host", str_or_null(gets(topo, "host")));
	json_object_object_add(doc, "source", str_or_null(gets(topo, "source")));
	json_object_object_add(doc, "status", json_object_new_string(sev_names[worst < 0 ? 3 : worst]));
	json_object_object_add(doc, "checks", j.checks);
	json_object_object_add(doc, "undecided", j.undecided);
	json_object_object_add(doc, "summary", sum);
	json_object_object_add(doc, "ranks", j.ranks);
	json_object_object_add(doc, "tests", j.tests);
	json_object_object_add(in, "lines", json_object_new_int64((int64_t)log->lines));
	json_object_object_add(in, "nccl_lines", json_object_new_int64((int64_t)log->nccl_lines));
	json_object_object_add(in, "long_lines", json_object_new_int64((int64_t)log->long_lines));
	json_object_object_add(in, "unattributed_channels",
			       json_object_new_int64((int64_t)log->unattributed));
	json_object_object_add(doc, "input", in);
	return doc;
}
