// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A RoCE rail's DCB reading as info attributes on its PCI object (additive,
 * DESIGN.md's snapshot extras), so that an audit of a snapshot judges what
 * the live node read:
 *	RailbindDcbNetdev	the netdev asked
 *	RailbindDcbUndecided	why there is no reading (then nothing below)
 *	RailbindDcbPfcEnable	the priorities PFC is on for: "3,4", or "none"
 *	RailbindDcbPfcCap	how many priorities PFC can be on for at once
 *	RailbindDcbPauseTx, RailbindDcbPauseRx
 *		PFC frames sent and received, per priority 0-7, comma-separated
 *	RailbindDcbPauseIntervalMs, RailbindDcbPauseTx2, RailbindDcbPauseRx2
 *		the same counters read again that many milliseconds later
 *	RailbindDcbTrust	dscp or pcp (dscp exactly when DSCP APP entries exist)
 *	RailbindDcbDscpPrio	the APP table's DSCP entries: "26:3,48:6", or "none"
 *	RailbindDcbPrioTc, RailbindDcbTcBw
 *		ETS: each priority's traffic class; each class's bandwidth, %
 *	RailbindDcbEcnNp, RailbindDcbEcnRp
 *		the priorities ECN is on for, as notification and reaction
 *		point: "3", or "none"
 *	RailbindDcbEcnUndecided	why ECN could not be read (then no RailbindDcbEcn*)
 * PFC, ETS and the second sample are absent when the driver gave none.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcb.h"

static int put(hwloc_obj_t obj, const char *name, const char *value)
{
	if (hwloc_obj_get_info_by_name(obj, name))
		return 0;
	return hwloc_obj_add_info(obj, name, value) < 0 ? -ENOMEM : 0;
}

static int put_bits(hwloc_obj_t obj, const char *name, unsigned bits)
{
	char buf[32];
	size_t used = 0;
	unsigned i;

	for (i = 0; i < AFF_DCB_PRIOS; i++)
		if (bits & 1u << i)
			used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%u",
						 used ? "," : "", i);
	return put(obj, name, used ? buf : "none");
}

static int put_u64s(hwloc_obj_t obj, const char *name, const uint64_t *v)
{
	char buf[AFF_DCB_PRIOS * 21 + 1];
	size_t used = 0;
	unsigned i;

	for (i = 0; i < AFF_DCB_PRIOS; i++)
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%" PRIu64,
					 i ? "," : "", v[i]);
	return put(obj, name, buf);
}

static int put_u8s(hwloc_obj_t obj, const char *name, const uint8_t *v)
{
	uint64_t w[AFF_DCB_PRIOS];
	unsigned i;

	for (i = 0; i < AFF_DCB_PRIOS; i++)
		w[i] = v[i];
	return put_u64s(obj, name, w);
}

int aff_dcb_info_write(hwloc_obj_t obj, const char *netdev, const struct aff_dcb *d)
{
	char buf[AFF_DCB_DSCPS * 6 + 1], num[16];
	size_t used = 0;
	unsigned i;
	int rc = put(obj, AFF_INFO_DCB_NETDEV, netdev);

	if (!rc && d->has_pfc) {
		rc = put_bits(obj, "RailbindDcbPfcEnable", d->pfc_en);
		snprintf(num, sizeof(num), "%u", d->pfc_cap);
		if (!rc)
			rc = put(obj, "RailbindDcbPfcCap", num);
		if (!rc)
			rc = put_u64s(obj, "RailbindDcbPauseTx", d->pause_tx);
		if (!rc)
			rc = put_u64s(obj, "RailbindDcbPauseRx", d->pause_rx);
	}
	if (!rc && d->has_pfc && d->has_second) {
		snprintf(num, sizeof(num), "%u", d->interval_ms);
		rc = put(obj, "RailbindDcbPauseIntervalMs", num);
		if (!rc)
			rc = put_u64s(obj, "RailbindDcbPauseTx2", d->pause_tx2);
		if (!rc)
			rc = put_u64s(obj, "RailbindDcbPauseRx2", d->pause_rx2);
	}
	for (i = 0; i < AFF_DCB_DSCPS; i++)
		if (d->dscp_mapped & 1ull << i)
			used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%u:%u",
						 used ? "," : "", i, d->dscp_prio[i]);
	if (!rc)
		rc = put(obj, "RailbindDcbTrust", aff_dcb_trusts_dscp(d) ? "dscp" : "pcp");
	if (!rc)
		rc = put(obj, "RailbindDcbDscpPrio", used ? buf : "none");
	if (!rc && d->has_ets) {
		rc = put_u8s(obj, "RailbindDcbPrioTc", d->prio_tc);
		if (!rc)
			rc = put_u8s(obj, "RailbindDcbTcBw", d->tc_bw);
	}
	if (!rc && d->has_ecn) {
		rc = put_bits(obj, "RailbindDcbEcnNp", d->ecn_np);
		if (!rc)
			rc = put_bits(obj, "RailbindDcbEcnRp", d->ecn_rp);
	}
	return rc;
}

int aff_dcb_info_undecided(hwloc_obj_t obj, const char *netdev, const char *reason)
{
	int rc = netdev ? put(obj, AFF_INFO_DCB_NETDEV, netdev) : 0;

	return rc ? rc : put(obj, AFF_INFO_DCB_UNDECIDED, reason);
}

int aff_dcb_info_ecn_undecided(hwloc_obj_t obj, const char *reason)
{
	return put(obj, AFF_INFO_DCB_ECN_UNDECIDED, reason);
}

/* ---- Back ---- */

static int malformed(const char *name, char *buf, size_t buflen)
{
	snprintf(buf, buflen, "malformed %s attribute", name);
	return -EINVAL;
}

/* "none" or ascending priorities 0-7, comma-separated. */
static int get_bits(hwloc_obj_t obj, const char *name, uint8_t *bits, char *buf, size_t buflen)
{
	const char *s = hwloc_obj_get_info_by_name(obj, name);

	*bits = 0;
	if (!s)
		return malformed(name, buf, buflen);
	if (!strcmp(s, "none"))
		return 0;
	for (;;) {
		if (*s < '0' || *s > '7' || *bits & 1u << (*s - '0'))
			return malformed(name, buf, buflen);
		*bits |= (uint8_t)(1u << (*s - '0'));
		s++;
		if (!*s)
			return 0;
		if (*s++ != ',')
			return malformed(name, buf, buflen);
	}
}

static int get_u64s(hwloc_obj_t obj, const char *name, uint64_t *v, unsigned max, char *buf,
		    size_t buflen)
{
	const char *s = hwloc_obj_get_info_by_name(obj, name);
	unsigned i;
	char *end;

	if (!s)
		return malformed(name, buf, buflen);
	for (i = 0; i < AFF_DCB_PRIOS; i++) {
		if (*s < '0' || *s > '9')
			return malformed(name, buf, buflen);
		errno = 0;
		v[i] = strtoull(s, &end, 10);
		if (errno || (max && v[i] > max) || *end != (i + 1 < AFF_DCB_PRIOS ? ',' : '\0'))
			return malformed(name, buf, buflen);
		s = end + 1;
	}
	return 0;
}

static int get_u8s(hwloc_obj_t obj, const char *name, uint8_t *v, unsigned max, char *buf,
		   size_t buflen)
{
	uint64_t w[AFF_DCB_PRIOS];
	unsigned i;
	int rc = get_u64s(obj, name, w, max, buf, buflen);

	for (i = 0; !rc && i < AFF_DCB_PRIOS; i++)
		v[i] = (uint8_t)w[i];
	return rc;
}

static int get_dscp(hwloc_obj_t obj, struct aff_dcb *d, char *buf, size_t buflen)
{
	static const char name[] = "RailbindDcbDscpPrio";
	const char *s = hwloc_obj_get_info_by_name(obj, name);
	unsigned long dscp, prio;
	char *end;

	if (!s)
		return malformed(name, buf, buflen);
	if (!strcmp(s, "none"))
		return 0;
	for (;;) {
		if (*s < '0' || *s > '9')
			return malformed(name, buf, buflen);
		dscp = strtoul(s, &end, 10);
		if (*end != ':' || dscp >= AFF_DCB_DSCPS || end[1] < '0' || end[1] > '7' ||
		    (d->dscp_mapped & 1ull << dscp))
			return malformed(name, buf, buflen);
		prio = (unsigned long)(end[1] - '0');
		d->dscp_mapped |= 1ull << dscp;
		d->dscp_prio[dscp] = (uint8_t)prio;
		s = end + 2;
		if (!*s)
			return 0;
		if (*s++ != ',')
			return malformed(name, buf, buflen);
	}
}

int aff_dcb_info_read(hwloc_obj_t obj, struct aff_dcb *d, const char **reason, char *buf,
		      size_t buflen)
{
	const char *s;
	int rc = 0;

	memset(d, 0, sizeof(*d));
	*reason = hwloc_obj_get_info_by_name(obj, AFF_INFO_DCB_UNDECIDED);
	if (*reason || !hwloc_obj_get_info_by_name(obj, AFF_INFO_DCB_NETDEV))
		return -ENOENT;
	if (hwloc_obj_get_info_by_name(obj, "RailbindDcbPfcEnable")) {
		d->has_pfc = true;
		rc = get_bits(obj, "RailbindDcbPfcEnable", &d->pfc_en, buf, buflen);
		s = hwloc_obj_get_info_by_name(obj, "RailbindDcbPfcCap");
		if (!rc) {
			char *end;
			unsigned long cap = s ? strtoul(s, &end, 10) : 0;

			/* The driver's own number: 8 for every driver today, but a u8. */
			if (!s || *s < '0' || *s > '9' || *end || cap > 255)
				rc = malformed("RailbindDcbPfcCap", buf, buflen);
			else
				d->pfc_cap = (uint8_t)cap;
		}
		if (!rc)
			rc = get_u64s(obj, "RailbindDcbPauseTx", d->pause_tx, 0, buf, buflen);
		if (!rc)
			rc = get_u64s(obj, "RailbindDcbPauseRx", d->pause_rx, 0, buf, buflen);
	}
	s = hwloc_obj_get_info_by_name(obj, "RailbindDcbPauseIntervalMs");
	if (!rc && s) {
		char *end;
		unsigned long ms;

		errno = 0;
		ms = strtoul(s, &end, 10);
		if (*s < '1' || *s > '9' || *end || errno || ms > 3600000 || !d->has_pfc)
			return malformed("RailbindDcbPauseIntervalMs", buf, buflen);
		d->has_second = true;
		d->interval_ms = (unsigned)ms;
		rc = get_u64s(obj, "RailbindDcbPauseTx2", d->pause_tx2, 0, buf, buflen);
		if (!rc)
			rc = get_u64s(obj, "RailbindDcbPauseRx2", d->pause_rx2, 0, buf, buflen);
	}
	if (!rc)
		rc = get_dscp(obj, d, buf, buflen);
	if (!rc && hwloc_obj_get_info_by_name(obj, "RailbindDcbPrioTc")) {
		d->has_ets = true;
		rc = get_u8s(obj, "RailbindDcbPrioTc", d->prio_tc, AFF_DCB_PRIOS - 1, buf, buflen);
		if (!rc)
			rc = get_u8s(obj, "RailbindDcbTcBw", d->tc_bw, 255, buf, buflen);
	}
	if (!rc && hwloc_obj_get_info_by_name(obj, "RailbindDcbEcnNp")) {
		d->has_ecn = true;
		rc = get_bits(obj, "RailbindDcbEcnNp", &d->ecn_np, buf, buflen);
		if (!rc)
			rc = get_bits(obj, "RailbindDcbEcnRp", &d->ecn_rp, buf, buflen);
	}
	if (rc)
		memset(d, 0, sizeof(*d));
	return rc;
}
