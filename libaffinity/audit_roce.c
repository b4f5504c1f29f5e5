// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Lossless RoCE, from the node (the DCB readings discovery records,
 * annotate_dcb.c; live or in a snapshot):
 *
 *  roce-lossless  each Ethernet rail: the priority the ranks' RDMA traffic
 *		   lands on (NCCL_IB_TC, NCCL_IB_FIFO_TC, NCCL_IB_SL,
 *		   UCX_IB_TRAFFIC_CLASS of the audit's environment, which a
 *		   prolog or NHC shares with the job's, else /etc/nccl.conf;
 *		   roce_judge.c says how)
 *		   has PFC on, is railbind.conf's roce-priority, the NIC's
 *		   trust is roce-trust, and ECN is on there where readable.
 *  pause-storm    PFC frames sent or received on any priority at a rate
 *		   over pause-frames-per-second, from the two samples
 *		   discovery takes.
 *
 * InfiniBand rails are not judged (no DCB). A rail with no reading (a
 * VF, a driver without DCB, an old snapshot) is undecided with its reason.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "audit.h"
#include "roce.h"

struct reasons {
	char text[768];
	size_t used, n;
	char first[320];
	bool same;
};

static void reason(struct reasons *rs, const char *rail, const char *why)
{
	if (!rs->n) {
		snprintf(rs->first, sizeof(rs->first), "%s", why);
		rs->same = true;
	} else if (strcmp(rs->first, why)) {
		rs->same = false;
	}
	if (rs->used < sizeof(rs->text))
		rs->used += (size_t)snprintf(rs->text + rs->used, sizeof(rs->text) - rs->used,
					     "%s%s: %s", rs->used ? "; " : "", rail, why);
	rs->n++;
}

static const char *summary(struct reasons *rs)
{
	if (rs->same && rs->n > 1)
		snprintf(rs->text, sizeof(rs->text), "all %zu rails: %s", rs->n, rs->first);
	return rs->text;
}

static struct json_object *prio_array(unsigned bits)
{
	struct json_object *a = json_object_new_array();
	unsigned i;

	for (i = 0; i < AFF_DCB_PRIOS; i++)
		if (bits & 1u << i)
			json_object_array_add(a, json_object_new_int((int)i));
	return a;
}

static struct json_object *u64_array(const uint64_t *v)
{
	struct json_object *a = json_object_new_array();
	unsigned i;

	for (i = 0; i < AFF_DCB_PRIOS; i++)
		json_object_array_add(a, json_object_new_int64((int64_t)(v[i] & INT64_MAX)));
	return a;
}

/* The reading, for --prom (PFC frame counters to rate, the PFC bitmap) and offline readers. */
static struct json_object *reading_json(const struct aff_topo *t, int r, const char *netdev,
					const struct aff_dcb *d)
{
	struct json_object *j = json_object_new_object(), *map = json_object_new_object();
	char key[8];
	unsigned i;

	json_object_object_add(j, "nic", json_object_new_string(aff_audit_rail_name(t, r)));
	json_object_object_add(j, "pci", aff_audit_str(t->dev[t->rail[r].dev].pci));
	json_object_object_add(j, "netdev", aff_audit_str(netdev));
	json_object_object_add(j, "trust", json_object_new_string(aff_dcb_trusts_dscp(d) ? "dscp" : "pcp"));
	json_object_object_add(j, "pfc_enabled", prio_array(d->pfc_en));
	/* The later sample, where there are two: the counters now. */
	json_object_object_add(j, "pfc_frames_sent", u64_array(d->has_second ? d->pause_tx2 : d->pause_tx));
	json_object_object_add(j, "pfc_frames_received",
			       u64_array(d->has_second ? d->pause_rx2 : d->pause_rx));
	for (i = 0; i < AFF_DCB_DSCPS; i++)
		if (d->dscp_mapped & 1ull << i) {
			snprintf(key, sizeof(key), "%u", i);
			json_object_object_add(map, key, json_object_new_int(d->dscp_prio[i]));
		}
	json_object_object_add(j, "dscp_priority", map);
	json_object_object_add(j, "ecn_np", d->has_ecn ? prio_array(d->ecn_np) : NULL);
	json_object_object_add(j, "ecn_rp", d->has_ecn ? prio_array(d->ecn_rp) : NULL);
	return j;
}

static int judge_lossless(struct aff_audit *a, int r, const char *netdev, const struct aff_dcb *d,
			  const char *ecn_why, struct aff_roce_env *es)
{
	const struct aff_topo *t = a->topo;
	const struct aff_config *conf = &t->ctx->conf;
	const char *devs[2] = { t->dev[t->rail[r].dev].pci, NULL };
	struct aff_roce_user u[AFF_ROCE_USERS];
	struct json_object *ev, *ua = json_object_new_array();
	enum aff_sev worst = AFF_SEV_OK, s;
	char text[1024] = "", line[384];
	size_t n = aff_roce_users(aff_roce_env_get, es, u), i, used = 0;
	int prio;

	aff_roce_env_mark(es, u, n);

	for (i = 0; i < n; i++) {
		struct json_object *uj = json_object_new_object();

		s = aff_roce_judge(d, conf, &u[i], &prio, line, sizeof(line));
		json_object_object_add(uj, "transport", json_object_new_string(u[i].who));
		json_object_object_add(uj, "traffic_class", json_object_new_int((int)u[i].tc));
		json_object_object_add(uj, "dscp", json_object_new_int((int)(u[i].tc >> 2)));
		json_object_object_add(uj, "service_level", json_object_new_int((int)u[i].sl));
		json_object_object_add(uj, "from", json_object_new_string(u[i].src));
		json_object_object_add(uj, "priority", prio >= 0 ? json_object_new_int(prio) : NULL);
		json_object_object_add(uj, "severity", json_object_new_string(aff_sev_name(s)));
		json_object_object_add(uj, "message", json_object_new_string(line));
		json_object_array_add(ua, uj);
		if (s == AFF_SEV_OK)
			continue;
		if (s > worst)
			worst = s;
		if (used < sizeof(text))
			used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s",
						 used ? "; " : "", line);
	}
	if (worst == AFF_SEV_OK) {
		json_object_put(ua);
		return 0;
	}
	ev = json_object_new_object();
	json_object_object_add(ev, "nic", json_object_new_string(aff_audit_rail_name(t, r)));
	json_object_object_add(ev, "netdev", aff_audit_str(netdev));
	json_object_object_add(ev, "trust", json_object_new_string(aff_dcb_trusts_dscp(d) ? "dscp" : "pcp"));
	json_object_object_add(ev, "pfc_enabled", prio_array(d->pfc_en));
	json_object_object_add(ev, "roce_priority", conf->roce_priority_set ?
			       json_object_new_int((int)conf->roce_priority) : NULL);
	json_object_object_add(ev, "ecn_np", d->has_ecn ? prio_array(d->ecn_np) : NULL);
	json_object_object_add(ev, "ecn_rp", d->has_ecn ? prio_array(d->ecn_rp) : NULL);
	json_object_object_add(ev, "ecn_unknown", aff_audit_str(d->has_ecn ? NULL : ecn_why));
	json_object_object_add(ev, "users", ua);
	return aff_audit_add(a, "roce-lossless", worst, aff_audit_rail_name(t, r), devs, ev,
			     "make the ranks' traffic class land on the fabric's lossless priority: set NCCL_IB_TC (DSCP << 2, e.g. 106 for DSCP 26) in the job or /etc/nccl.conf; on the NIC: dcb pfc set dev NETDEV prio-pfc P:on, dcb app add dev NETDEV dscp-prio D:P (trust DSCP), and ECN on for P; a traffic class a program sets on its communicator is invisible here",
			     "rail %s (%s): %s", aff_audit_rail_name(t, r), netdev ? netdev : "?", text);
}

/* The larger of the sent and received rates on priority @p, frames a second; 0 after a reset. */
static double rate(const struct aff_dcb *d, unsigned p, bool *sent)
{
	double tx = d->pause_tx2[p] >= d->pause_tx[p] ?
		    (double)(d->pause_tx2[p] - d->pause_tx[p]) * 1000.0 / d->interval_ms : 0;
	double rx = d->pause_rx2[p] >= d->pause_rx[p] ?
		    (double)(d->pause_rx2[p] - d->pause_rx[p]) * 1000.0 / d->interval_ms : 0;

	*sent = tx >= rx;
	return tx >= rx ? tx : rx;
}

static int judge_storm(struct aff_audit *a, int r, const char *netdev, const struct aff_dcb *d,
		       unsigned long lim, const char *limsrc, double *max)
{
	const struct aff_topo *t = a->topo;
	const char *devs[2] = { t->dev[t->rail[r].dev].pci, NULL };
	struct json_object *ev, *pa;
	char text[512] = "";
	size_t used = 0;
	unsigned p;
	bool sent, any = false;

	pa = json_object_new_array();
	for (p = 0; p < AFF_DCB_PRIOS; p++) {
		double x = rate(d, p, &sent);
		struct json_object *pj;

		if (x > *max)
			*max = x;
		if (!lim || x <= (double)lim)
			continue;
		any = true;
		pj = json_object_new_object();
		json_object_object_add(pj, "priority", json_object_new_int((int)p));
		json_object_object_add(pj, "direction", json_object_new_string(sent ? "sent" : "received"));
		json_object_object_add(pj, "per_second", json_object_new_double(x));
		json_object_object_add(pj, "first", json_object_new_int64((int64_t)(sent ? d->pause_tx[p] : d->pause_rx[p])));
		json_object_object_add(pj, "second", json_object_new_int64((int64_t)(sent ? d->pause_tx2[p] : d->pause_rx2[p])));
		json_object_array_add(pa, pj);
		if (used < sizeof(text))
			used += (size_t)snprintf(text + used, sizeof(text) - used,
				"%spriority %u: %.0f PFC frames/s %s", used ? "; " : "", p, x,
				sent ? "sent (this host cannot keep up: it pauses the switch)" :
				       "received (the fabric pauses this host)");
	}
	if (!any) {
		json_object_put(pa);
		return 0;
	}
	ev = json_object_new_object();
	json_object_object_add(ev, "nic", json_object_new_string(aff_audit_rail_name(t, r)));
	json_object_object_add(ev, "netdev", aff_audit_str(netdev));
	json_object_object_add(ev, "interval_ms", json_object_new_int((int)d->interval_ms));
	json_object_object_add(ev, "limit_per_second", json_object_new_int64((int64_t)lim));
	json_object_object_add(ev, "limit_from", json_object_new_string(limsrc));
	json_object_object_add(ev, "priorities", pa);
	return aff_audit_add(a, "pause-storm", AFF_SEV_FAIL, aff_audit_rail_name(t, r), devs, ev,
			     "drain the node: find the paused priority's source (a stuck receiver, a slow PCIe link or host memory, a switch port's buffer); the NIC's PFC storm prevention (ethtool --set-tunable NETDEV pfc-prevention-tout) stops one host from pausing the fabric",
			     "rail %s (%s): %s over %u ms, limit %lu/s (%s)", aff_audit_rail_name(t, r),
			     netdev ? netdev : "?", text, d->interval_ms, lim, limsrc);
}

int aff_audit_roce(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	const struct aff_config *conf = &t->ctx->conf;
	unsigned long lim = aff_config_health_limit(conf, AFF_LIMIT_PAUSE_PER_SEC);
	struct reasons und = { .same = true }, nostorm = { .same = true };
	struct aff_roce_env es;
	size_t r, judged = 0, sampled = 0, ib = 0;
	char buf[160], limsrc[96];
	double max = 0;
	int rc = 0;

	snprintf(limsrc, sizeof(limsrc), "%s %s", conf->health_set & 1u << AFF_LIMIT_PAUSE_PER_SEC ?
		 "railbind.conf" : "railbind's default; railbind.conf",
		 aff_config_health_key(AFF_LIMIT_PAUSE_PER_SEC));
	if (!t->hw) {
		rc = aff_audit_undecided(a, "roce-lossless", "the source (an NCCL topology file) has no DCB readings");
		return rc ? rc : aff_audit_undecided(a, "pause-storm", "the source (an NCCL topology file) has no DCB readings");
	}
	if (!t->nrail) {
		rc = aff_audit_undecided(a, "roce-lossless", "no rail NIC");
		return rc ? rc : aff_audit_undecided(a, "pause-storm", "no rail NIC");
	}
	aff_roce_env_load(&es, t);
	for (r = 0; r < t->nrail && !rc; r++) {
		const struct aff_dev *dv = &t->dev[t->rail[r].dev];
		hwloc_obj_t obj = hwloc_get_pcidev_by_busid(t->hw, dv->domain, dv->bus, dv->devno,
							    dv->func);
		const char *name = aff_audit_rail_name(t, (int)r), *why = NULL, *netdev;
		struct aff_dcb d;
		int k;

		if (obj && hwloc_obj_get_info_by_name(obj, AFF_INFO_DCB_NOT_APPLICABLE)) {
			ib++;
			continue;
		}
		k = obj ? aff_dcb_info_read(obj, &d, &why, buf, sizeof(buf)) : -ENOENT;
		if (k == -EINVAL)
			why = buf;
		if (k == 0 && !d.has_pfc)
			why = "the driver reports no IEEE PFC state";
		if (k < 0 || why) {
			if (!why && t->source && !strcmp(t->source, "live"))
				why = "the live node was loaded without reading DCB (railbind audit and snapshot read it)";
			if (!why)
				why = "no DCB readings (not a railbind snapshot, or one taken before railbind read DCB)";
			reason(&und, name, why);
			reason(&nostorm, name, why);
			continue;
		}
		netdev = hwloc_obj_get_info_by_name(obj, AFF_INFO_DCB_NETDEV);
		judged++;
		json_object_array_add(a->dcb, reading_json(t, (int)r, netdev, &d));
		why = hwloc_obj_get_info_by_name(obj, AFF_INFO_DCB_ECN_UNDECIDED);
		rc = judge_lossless(a, (int)r, netdev, &d, why, &es);
		if (rc)
			break;
		if (!d.has_second) {
			reason(&nostorm, name, "one sample of the pause counters only");
			continue;
		}
		sampled++;
		rc = judge_storm(a, (int)r, netdev, &d, lim, limsrc, &max);
	}
	aff_roce_env_clear(&es);
	if (rc)
		return rc;
	if (ib == t->nrail) {
		rc = aff_audit_undecided(a, "roce-lossless", "no RoCE rail: InfiniBand ports have no DCB (their service levels map to virtual lanes in the subnet manager)");
		return rc ? rc : aff_audit_undecided(a, "pause-storm", "no RoCE rail: InfiniBand ports send no PFC frames");
	}
	if (!judged)
		rc = aff_audit_undecided(a, "roce-lossless", "%s", summary(&und));
	else if (und.n)
		rc = aff_audit_add(a, "roce-lossless", AFF_SEV_OK, "node", NULL, NULL,
				   "read DCB on the node itself (railbind audit or snapshot there); a VF's PFC and trust: on the host's PF",
				   "%zu rail%s not judged: %s", und.n, und.n == 1 ? "" : "s",
				   summary(&und));
	if (rc)
		return rc;
	if (!sampled)
		return aff_audit_undecided(a, "pause-storm", "%s", summary(&nostorm));
	if (nostorm.n)
		return aff_audit_add(a, "pause-storm", AFF_SEV_OK, "node", NULL, NULL, NULL,
				     "highest PFC rate %.0f/s (limit %lu/s, %s); %zu rail%s not sampled: %s",
				     max, lim, limsrc, nostorm.n, nostorm.n == 1 ? "" : "s",
				     summary(&nostorm));
	if (!lim || max <= (double)lim)
		return aff_audit_add(a, "pause-storm", AFF_SEV_OK, "node", NULL, NULL, NULL,
				     "highest PFC rate %.0f/s over %zu rail%s (limit %lu/s, %s)",
				     max, sampled, sampled == 1 ? "" : "s", lim, limsrc);
	return 0;
}
