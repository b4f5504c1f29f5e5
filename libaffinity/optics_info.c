// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The transceiver's info attributes, on the NIC's PCI object (additive,
 * DESIGN.md's snapshot extras):
 *	RailbindXcvrNetdev	the netdev the module was asked through
 *	RailbindXcvrUndecided	why it could not be read (then nothing below)
 *	RailbindXcvrType	sff8472, sff8636 or cmis
 *	RailbindXcvrMemory	paged or flat
 *	RailbindXcvrLanes	lanes reported (1-8)
 *	RailbindXcvrVendor, RailbindXcvrPart	the module's vendor name and part
 *		number, where it gives them (ASCII, up to 16 characters)
 *	RailbindXcvrTemp, RailbindXcvrVcc	degrees C, volts
 *	RailbindXcvrRxPower, RailbindXcvrTxPower, RailbindXcvrBias
 *		mW, mW, mA, one value per lane, comma-separated
 *	RailbindXcvr<Q>Thresholds	for each of the above: the module's own
 *		high alarm, low alarm, high warning, low warning, comma-separated
 *	RailbindXcvrTime	when it was read, seconds since the epoch
 *	RailbindXcvrTempHistory	earlier reads' temperatures (optics_history.c),
 *		oldest first: EPOCH:CELSIUS, comma-separated
 * A quantity the module does not report has no attribute.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optics_info.h"

static const char *const qname[AFF_OQ_N] = {
	[AFF_OQ_TEMP] = "RailbindXcvrTemp", [AFF_OQ_VCC] = "RailbindXcvrVcc",
	[AFF_OQ_RX] = "RailbindXcvrRxPower", [AFF_OQ_TX] = "RailbindXcvrTxPower",
	[AFF_OQ_BIAS] = "RailbindXcvrBias",
};

static int put(hwloc_obj_t obj, const char *name, const char *value)
{
	if (hwloc_obj_get_info_by_name(obj, name))
		return 0;
	return hwloc_obj_add_info(obj, name, value) < 0 ? -ENOMEM : 0;
}

/* @n values, comma-separated; non-finite values are not written (-ERANGE). */
static int put_list(hwloc_obj_t obj, const char *name, const double *v, unsigned n)
{
	char buf[256];
	size_t used = 0;
	unsigned i;

	for (i = 0; i < n; i++) {
		if (!isfinite(v[i]) || fabs(v[i]) > 1e9)
			return -ERANGE;
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%.4f", i ? "," : "",
					 v[i]);
		if (used >= sizeof(buf))
			return -ERANGE;
	}
	return put(obj, name, buf);
}

static int put_history(hwloc_obj_t obj, const struct aff_optics *o)
{
	char buf[AFF_OPTICS_HIST_MAX * 40];
	size_t used = 0;
	unsigned i;

	for (i = 0; i < o->nhist && i < AFF_OPTICS_HIST_MAX; i++)
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%lld:%.2f", i ? "," : "",
					 o->hist_t[i], o->hist_c[i]);
	return used < sizeof(buf) ? put(obj, AFF_INFO_XCVR_TEMP_HISTORY, buf) : -ERANGE;
}

/* EPOCH:CELSIUS,... oldest first, at most AFF_OPTICS_HIST_MAX; false when malformed. */
static bool parse_history(const char *s, struct aff_optics *o)
{
	char *end;

	for (o->nhist = 0; *s; o->nhist++) {
		long long t;

		if (o->nhist == AFF_OPTICS_HIST_MAX || (o->nhist && *s++ != ','))
			return false;
		if (*s < '0' || *s > '9')
			return false;
		errno = 0;
		t = strtoll(s, &end, 10);
		if (errno || *end != ':' || t <= 0 || (o->nhist && t <= o->hist_t[o->nhist - 1]))
			return false;
		s = end + 1;
		if (!*s || *s == ' ')
			return false;
		o->hist_c[o->nhist] = strtod(s, &end);
		if (end == s || !isfinite(o->hist_c[o->nhist]))
			return false;
		o->hist_t[o->nhist] = t;
		s = end;
	}
	return o->nhist > 0;
}

int aff_optics_info_write(hwloc_obj_t obj, const char *netdev, const struct aff_optics *o)
{
	char name[64], num[16];
	const double *lane[AFF_OQ_N] = {
		[AFF_OQ_TEMP] = &o->temp_c, [AFF_OQ_VCC] = &o->vcc_v, [AFF_OQ_RX] = o->rx_mw,
		[AFF_OQ_TX] = o->tx_mw, [AFF_OQ_BIAS] = o->bias_ma,
	};
	int q, rc;

	rc = put(obj, AFF_INFO_XCVR_NETDEV, netdev);
	if (!rc)
		rc = put(obj, AFF_INFO_XCVR_TYPE, aff_optics_kind_name(o->kind));
	if (!rc)
		rc = put(obj, "RailbindXcvrMemory", o->flat ? "flat" : "paged");
	snprintf(num, sizeof(num), "%u", o->lanes);
	if (!rc)
		rc = put(obj, "RailbindXcvrLanes", num);
	if (!rc && o->vendor[0])
		rc = put(obj, AFF_INFO_XCVR_VENDOR, o->vendor);
	if (!rc && o->part[0])
		rc = put(obj, AFF_INFO_XCVR_PART, o->part);
	for (q = 0; q < AFF_OQ_N && rc != -ENOMEM; q++) {
		const struct aff_optics_thresh *t = &o->thresh[q];
		double th[4] = { t->high_alarm, t->low_alarm, t->high_warn, t->low_warn };

		if (o->has & 1u << q)
			rc = put_list(obj, qname[q], lane[q],
				      q == AFF_OQ_TEMP || q == AFF_OQ_VCC ? 1 : o->lanes);
		snprintf(name, sizeof(name), "%sThresholds", qname[q]);
		if (rc != -ENOMEM && (o->has_thresh & 1u << q))
			rc = put_list(obj, name, th, 4);
	}
	if (rc != -ENOMEM && o->when > 0) {
		char when[24];

		snprintf(when, sizeof(when), "%lld", o->when);
		rc = put(obj, AFF_INFO_XCVR_TIME, when);
	}
	if (rc != -ENOMEM && o->nhist)
		rc = put_history(obj, o);
	return rc == -ENOMEM ? rc : 0;
}

int aff_optics_info_undecided(hwloc_obj_t obj, const char *netdev, const char *reason)
{
	int rc = netdev ? put(obj, AFF_INFO_XCVR_NETDEV, netdev) : 0;

	return rc ? rc : put(obj, AFF_INFO_XCVR_UNDECIDED, reason);
}

/* Exactly @n comma-separated numbers. */
static bool parse_list(const char *s, double *v, unsigned n)
{
	unsigned i;
	char *end;

	for (i = 0; i < n; i++) {
		if (i && *s++ != ',')
			return false;
		if (!*s || *s == ' ')
			return false;
		v[i] = strtod(s, &end);
		if (end == s || !isfinite(v[i]))
			return false;
		s = end;
	}
	return !*s;
}

/* A vendor name or part number as aff_optics_ascii() gives them, or -EINVAL. */
static int read_id(hwloc_obj_t obj, const char *name, char *out, const char **reason, char *buf,
		   size_t buflen)
{
	const char *s = hwloc_obj_get_info_by_name(obj, name);
	size_t n = s ? strlen(s) : 0;

	if (!s)
		return 0;
	aff_optics_ascii((const uint8_t *)s, n <= AFF_OPTICS_ID_LEN ? n : 0, out);
	if (n && n <= AFF_OPTICS_ID_LEN && !strcmp(out, s))
		return 0;
	snprintf(buf, buflen, "%s=\"%.40s\", expected 1 to %d printable ASCII characters, no blank at either end",
		 name, s, AFF_OPTICS_ID_LEN);
	*reason = buf;
	return -EINVAL;
}

int aff_optics_info_read(hwloc_obj_t obj, struct aff_optics *o, const char **reason,
			 char *buf, size_t buflen)
{
	const char *s = hwloc_obj_get_info_by_name(obj, AFF_INFO_XCVR_UNDECIDED);
	double *lane[AFF_OQ_N] = {
		[AFF_OQ_TEMP] = &o->temp_c, [AFF_OQ_VCC] = &o->vcc_v, [AFF_OQ_RX] = o->rx_mw,
		[AFF_OQ_TX] = o->tx_mw, [AFF_OQ_BIAS] = o->bias_ma,
	};
	char name[64];
	char *end;
	int q;

	memset(o, 0, sizeof(*o));
	*reason = NULL;
	if (s) {
		*reason = s;
		return 1;
	}
	s = hwloc_obj_get_info_by_name(obj, AFF_INFO_XCVR_TYPE);
	if (!s)
		return -ENOENT;
	if (aff_optics_kind_from_name(s, &o->kind) < 0) {
		snprintf(buf, buflen, "%s=\"%.24s\", expected sff8472, sff8636 or cmis",
			 AFF_INFO_XCVR_TYPE, s);
		*reason = buf;
		return -EINVAL;
	}
	s = hwloc_obj_get_info_by_name(obj, "RailbindXcvrMemory");
	o->flat = s && !strcmp(s, "flat");
	s = hwloc_obj_get_info_by_name(obj, "RailbindXcvrLanes");
	o->lanes = s ? (unsigned)strtoul(s, &end, 10) : 0;
	if (!s || end == s || *end || o->lanes < 1 || o->lanes > AFF_OPTICS_MAX_LANES) {
		snprintf(buf, buflen, "RailbindXcvrLanes=\"%.24s\", expected 1 to 8", s ? s : "");
		*reason = buf;
		return -EINVAL;
	}
	if (read_id(obj, AFF_INFO_XCVR_VENDOR, o->vendor, reason, buf, buflen) < 0 ||
	    read_id(obj, AFF_INFO_XCVR_PART, o->part, reason, buf, buflen) < 0)
		return -EINVAL;
	for (q = 0; q < AFF_OQ_N; q++) {
		unsigned n = q == AFF_OQ_TEMP || q == AFF_OQ_VCC ? 1 : o->lanes;
		double th[4];

		s = hwloc_obj_get_info_by_name(obj, qname[q]);
		if (s && !parse_list(s, lane[q], n)) {
			snprintf(buf, buflen, "%s=\"%.40s\", expected %u comma-separated number%s",
				 qname[q], s, n, n == 1 ? "" : "s");
			*reason = buf;
			return -EINVAL;
		}
		if (s)
			o->has |= 1u << q;
		snprintf(name, sizeof(name), "%sThresholds", qname[q]);
		s = hwloc_obj_get_info_by_name(obj, name);
		if (s && !parse_list(s, th, 4)) {
			snprintf(buf, buflen, "%s=\"%.40s\", expected 4 comma-separated numbers (high alarm, low alarm, high warning, low warning)",
				 name, s);
			*reason = buf;
			return -EINVAL;
		}
		if (s) {
			o->thresh[q] = (struct aff_optics_thresh){ th[0], th[1], th[2], th[3] };
			o->has_thresh |= 1u << q;
		}
	}
	s = hwloc_obj_get_info_by_name(obj, AFF_INFO_XCVR_TIME);
	if (s) {
		errno = 0;
		o->when = strtoll(s, &end, 10);
	}
	if (s && (*s < '0' || *s > '9' || errno || *end || o->when <= 0)) {
		snprintf(buf, buflen, "%s=\"%.24s\", expected seconds since the epoch",
			 AFF_INFO_XCVR_TIME, s);
		*reason = buf;
		return -EINVAL;
	}
	s = hwloc_obj_get_info_by_name(obj, AFF_INFO_XCVR_TEMP_HISTORY);
	if (s && (!parse_history(s, o) || !o->when || o->hist_t[o->nhist - 1] >= o->when)) {
		snprintf(buf, buflen, "%s=\"%.40s\", expected up to %d EPOCH:CELSIUS, oldest first, before %s",
			 AFF_INFO_XCVR_TEMP_HISTORY, s, AFF_OPTICS_HIST_MAX, AFF_INFO_XCVR_TIME);
		*reason = buf;
		return -EINVAL;
	}
	return 0;
}
