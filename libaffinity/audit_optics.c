// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The transceiver check: each rail's pluggable module against its own
 * thresholds, from the readings discovery records (annotate_optics.c,
 * optics_info.c), live or in a snapshot. Nothing is judged against a limit
 * of railbind's: the module's alarm thresholds fail (NHC drains the node),
 * its warning thresholds warn, and a lane that receives no light at all
 * (0 mW) fails whatever the thresholds say. Every rail read also lands in
 * the document's "optics" (per-lane power and bias, temperature, the
 * thresholds) for --prom's gauges, so a falling RX power or a rising
 * temperature shows as a trend before it crosses a threshold. The audit
 * judges one trend itself, from the earlier temperatures the reading
 * carries (RailbindXcvrTempHistory, kept by root-run reads:
 * optics_history.c): rising faster than railbind.conf's
 * transceiver-temp-rise-per-hour warns, with when it would cross the
 * module's high warning at that rate.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>

#include "audit.h"
#include "internal.h"
#include "optics_history.h"
#include "optics_info.h"

/* Shorter than this, the 1/256 C steps and the airflow's noise are the trend. */
#define TREND_MIN_SPAN_S 600

static const char *const qkey[AFF_OQ_N] = {
	[AFF_OQ_TEMP] = "temperature_c", [AFF_OQ_VCC] = "voltage_v", [AFF_OQ_RX] = "rx_power_mw",
	[AFF_OQ_TX] = "tx_power_mw", [AFF_OQ_BIAS] = "bias_ma",
};
static const char *const qwhat[AFF_OQ_N] = {
	[AFF_OQ_TEMP] = "temperature", [AFF_OQ_VCC] = "supply voltage",
	[AFF_OQ_RX] = "RX power", [AFF_OQ_TX] = "TX power", [AFF_OQ_BIAS] = "laser bias",
};
static const char *const qunit[AFF_OQ_N] = {
	[AFF_OQ_TEMP] = "C", [AFF_OQ_VCC] = "V", [AFF_OQ_RX] = "mW", [AFF_OQ_TX] = "mW",
	[AFF_OQ_BIAS] = "mA",
};

struct verdict {
	enum aff_sev sev;
	char text[768];
	size_t used;
	struct json_object *problems;
};

static void problem(struct verdict *v, enum aff_sev sev, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void problem(struct verdict *v, enum aff_sev sev, const char *fmt, ...)
{
	char line[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (sev > v->sev)
		v->sev = sev;
	json_object_array_add(v->problems, json_object_new_string(line));
	if (v->used < sizeof(v->text))
		v->used += (size_t)snprintf(v->text + v->used, sizeof(v->text) - v->used, "%s%s",
					    v->used ? "; " : "", line);
}

/* One value of quantity @q (lane @lane, -1 for the module) against its thresholds. */
static void judge(struct verdict *v, const struct aff_optics *o, enum aff_optics_q q, int lane,
		  double x)
{
	const struct aff_optics_thresh *t = &o->thresh[q];
	char who[24] = "";

	if (lane >= 0)
		snprintf(who, sizeof(who), "lane %d ", lane + 1);
	if (q == AFF_OQ_RX && x <= 0.0) {
		problem(v, AFF_SEV_FAIL, "%sdark (0 mW received)", who);
		return;
	}
	if (!(o->has_thresh & 1u << q))
		return;
	if (x > t->high_alarm)
		problem(v, AFF_SEV_FAIL, "%s%s %.4g %s over the module's high alarm %.4g",
			who, qwhat[q], x, qunit[q], t->high_alarm);
	else if (x < t->low_alarm)
		problem(v, AFF_SEV_FAIL, "%s%s %.4g %s under the module's low alarm %.4g",
			who, qwhat[q], x, qunit[q], t->low_alarm);
	else if (x > t->high_warn)
		problem(v, AFF_SEV_WARN, "%s%s %.4g %s over the module's high warning %.4g",
			who, qwhat[q], x, qunit[q], t->high_warn);
	else if (x < t->low_warn)
		problem(v, AFF_SEV_WARN, "%s%s %.4g %s under the module's low warning %.4g",
			who, qwhat[q], x, qunit[q], t->low_warn);
}

/*
 * The least-squares rise in C per hour of the samples in the window before
 * the reading and the reading itself, over @span_h hours; false when there
 * are too few or too close together to say.
 */
static bool temp_rise(const struct aff_optics *o, double *per_h, double *span_h)
{
	double st = 0, sc = 0, stt = 0, stc = 0, n = 0, dt, den;
	long long first = 0;
	unsigned i;

	if (!(o->has & 1u << AFF_OQ_TEMP) || !o->when)
		return false;
	for (i = 0; i <= o->nhist; i++) {
		long long t = i < o->nhist ? o->hist_t[i] : o->when;
		double c = i < o->nhist ? o->hist_c[i] : o->temp_c;

		if (t < o->when - AFF_OPTICS_HIST_WINDOW || t > o->when)
			continue;
		if (!first)
			first = t;
		/* Hours since the first sample, so the sums stay small. */
		dt = (double)(t - first) / 3600.0;
		st += dt;
		sc += c;
		stt += dt * dt;
		stc += dt * c;
		n++;
	}
	if (n < 2 || o->when - first < TREND_MIN_SPAN_S)
		return false;
	den = n * stt - st * st;
	if (den <= 0)
		return false;
	*per_h = (n * stc - st * sc) / den;
	*span_h = (double)(o->when - first) / 3600.0;
	return true;
}

static void judge_trend(struct verdict *v, const struct aff_optics *o, unsigned long limit)
{
	const struct aff_optics_thresh *t = &o->thresh[AFF_OQ_TEMP];
	bool thr = o->has_thresh & 1u << AFF_OQ_TEMP;
	double rise, span;

	if (!limit || !temp_rise(o, &rise, &span) || rise <= (double)limit)
		return;
	/* Over the warning already: judge() said so. */
	if (thr && o->temp_c > t->high_warn)
		return;
	if (thr)
		problem(v, AFF_SEV_WARN, "temperature %.4g C rising %.1f C/h over %.1f h (more than transceiver-temp-rise-per-hour %lu): over the module's high warning %.4g C in %.1f h at this rate",
			o->temp_c, rise, span, limit, t->high_warn, (t->high_warn - o->temp_c) / rise);
	else
		problem(v, AFF_SEV_WARN, "temperature %.4g C rising %.1f C/h over %.1f h (more than transceiver-temp-rise-per-hour %lu; the module gives no threshold)",
			o->temp_c, rise, span, limit);
}

static const double *lane_values(const struct aff_optics *o, enum aff_optics_q q)
{
	return q == AFF_OQ_RX ? o->rx_mw : q == AFF_OQ_TX ? o->tx_mw : o->bias_ma;
}

static struct json_object *readings_json(const struct aff_topo *t, int r, const char *netdev,
					 const struct aff_optics *o)
{
	struct json_object *j = json_object_new_object(), *lanes = json_object_new_array();
	struct json_object *th = json_object_new_object();
	unsigned l;
	int q;

	json_object_object_add(j, "nic", json_object_new_string(aff_audit_rail_name(t, r)));
	json_object_object_add(j, "pci", aff_audit_str(t->dev[t->rail[r].dev].pci));
	json_object_object_add(j, "netdev", aff_audit_str(netdev));
	json_object_object_add(j, "type", aff_audit_str(aff_optics_kind_name(o->kind)));
	json_object_object_add(j, "vendor", o->vendor[0] ? json_object_new_string(o->vendor) : NULL);
	json_object_object_add(j, "part", o->part[0] ? json_object_new_string(o->part) : NULL);
	json_object_object_add(j, "temperature_c", o->has & 1u << AFF_OQ_TEMP ?
			       json_object_new_double(o->temp_c) : NULL);
	json_object_object_add(j, "voltage_v", o->has & 1u << AFF_OQ_VCC ?
			       json_object_new_double(o->vcc_v) : NULL);
	{
		double rise, span;
		bool trend = temp_rise(o, &rise, &span);

		json_object_object_add(j, "read_at", o->when ?
				       json_object_new_int64(o->when) : NULL);
		json_object_object_add(j, "temperature_samples", json_object_new_int((int)o->nhist + 1));
		json_object_object_add(j, "temperature_rise_c_per_hour", trend ?
				       json_object_new_double(rise) : NULL);
	}
	for (l = 0; l < o->lanes; l++) {
		struct json_object *lj = json_object_new_object();

		json_object_object_add(lj, "lane", json_object_new_int((int)l + 1));
		for (q = AFF_OQ_RX; q <= AFF_OQ_BIAS; q++)
			json_object_object_add(lj, qkey[q], o->has & 1u << q ?
				json_object_new_double(lane_values(o, (enum aff_optics_q)q)[l]) : NULL);
		json_object_array_add(lanes, lj);
	}
	json_object_object_add(j, "lanes", lanes);
	for (q = 0; q < AFF_OQ_N; q++) {
		struct json_object *tq;

		if (!(o->has_thresh & 1u << q))
			continue;
		tq = json_object_new_object();
		json_object_object_add(tq, "high_alarm", json_object_new_double(o->thresh[q].high_alarm));
		json_object_object_add(tq, "low_alarm", json_object_new_double(o->thresh[q].low_alarm));
		json_object_object_add(tq, "high_warn", json_object_new_double(o->thresh[q].high_warn));
		json_object_object_add(tq, "low_warn", json_object_new_double(o->thresh[q].low_warn));
		json_object_object_add(th, qkey[q], tq);
	}
	json_object_object_add(j, "thresholds", th);
	return j;
}

static int judge_rail(struct aff_audit *a, int r, const char *netdev, const struct aff_optics *o)
{
	const struct aff_topo *t = a->topo;
	const char *devs[2] = { t->dev[t->rail[r].dev].pci, NULL };
	struct verdict v = { .sev = AFF_SEV_OK, .problems = json_object_new_array() };
	struct json_object *ev;
	unsigned l;
	int q;

	if (o->has & 1u << AFF_OQ_TEMP)
		judge(&v, o, AFF_OQ_TEMP, -1, o->temp_c);
	if (o->has & 1u << AFF_OQ_VCC)
		judge(&v, o, AFF_OQ_VCC, -1, o->vcc_v);
	for (l = 0; l < o->lanes; l++)
		for (q = AFF_OQ_RX; q <= AFF_OQ_BIAS; q++)
			if (o->has & 1u << q)
				judge(&v, o, (enum aff_optics_q)q, (int)l,
				      lane_values(o, (enum aff_optics_q)q)[l]);
	judge_trend(&v, o, aff_config_health_limit(&t->ctx->conf, AFF_LIMIT_XCVR_TEMP_RISE));
	json_object_array_add(a->optics, readings_json(t, r, netdev, o));
	if (v.sev == AFF_SEV_OK) {
		json_object_put(v.problems);
		return 0;
	}
	ev = readings_json(t, r, netdev, o);
	json_object_object_add(ev, "problems", v.problems);
	return aff_audit_add(a, "transceiver", v.sev, aff_audit_rail_name(t, r), devs, ev,
			     v.sev == AFF_SEV_FAIL ?
			     "drain the node; clean or reseat the module and its fibre, check the far end's port and module (its TX power), then replace the module or cable; ethtool -m NETDEV shows the module's view" :
			     "clean the connectors and plan to replace the module or cable at the next window; watch railbind_transceiver_* in Prometheus for the trend",
			     "rail %s transceiver (%s, %s): %s", aff_audit_rail_name(t, r),
			     netdev ? netdev : "?", aff_optics_kind_name(o->kind), v.text);
}

int aff_audit_optics(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	char reasons[512] = "", buf[160], first[160] = "";
	size_t used = 0, r, decided = 0, other = 0;
	bool same = true;
	int rc = 0;

	if (!t->hw)
		return aff_audit_undecided(a, "transceiver",
			"the source (an NCCL topology file) has no transceiver readings");
	if (!t->nrail)
		return aff_audit_undecided(a, "transceiver", "no rail NIC");
	for (r = 0; r < t->nrail && !rc; r++) {
		const struct aff_dev *d = &t->dev[t->rail[r].dev];
		hwloc_obj_t obj = hwloc_get_pcidev_by_busid(t->hw, d->domain, d->bus, d->devno,
							    d->func);
		const char *why = NULL, *netdev;
		struct aff_optics o;
		int k = obj ? aff_optics_info_read(obj, &o, &why, buf, sizeof(buf)) : -ENOENT;

		if (k == 0) {
			netdev = hwloc_obj_get_info_by_name(obj, AFF_INFO_XCVR_NETDEV);
			if (o.has_thresh || (o.has & 1u << AFF_OQ_RX)) {
				decided++;
				rc = judge_rail(a, (int)r, netdev, &o);
				continue;
			}
			why = "the module gives neither thresholds nor lane monitors (flat memory)";
		}
		if (!why && t->source && !strcmp(t->source, "live"))
			why = "the live node was loaded without reading its modules (railbindd's audit op cannot: reading needs CAP_NET_ADMIN; railbind audit as root does)";
		if (!why)
			why = "no transceiver readings (not a railbind snapshot, or one taken before railbind read optics)";
		if (!other)
			snprintf(first, sizeof(first), "%s", why);
		else if (strcmp(first, why))
			same = false;
		if (used < sizeof(reasons))
			used += (size_t)snprintf(reasons + used, sizeof(reasons) - used, "%s%s: %s",
						 used ? "; " : "", aff_audit_rail_name(t, (int)r), why);
		other++;
	}
	if (rc || !other)
		return rc;
	/* One reason for every rail (no privilege, an old snapshot): said once. */
	if (same && other > 1)
		snprintf(reasons, sizeof(reasons), "all %zu rails: %s", other, first);
	if (!decided)
		return aff_audit_undecided(a, "transceiver", "%s", reasons);
	return aff_audit_add(a, "transceiver", AFF_SEV_OK, "node", NULL, NULL,
			     "run the audit as root on the node; InfiniBand ports: mlxlink -d DEVICE -m",
			     "transceivers of %zu rail%s not judged: %s", other, other == 1 ? "" : "s",
			     reasons);
}
