// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Where RoCE v2 traffic lands and whether it is lossless there. A queue
 * pair's traffic class is the IP header's TOS byte: DSCP = TC >> 2 (NCCL
 * and UCX take it from NCCL_IB_TC and UCX_IB_TRAFFIC_CLASS, 0 by default).
 * A NIC trusting DSCP puts the packet on the priority its APP table gives
 * that DSCP; trusting PCP, on the VLAN priority, which for RoCE is the
 * address handle's service level (NCCL_IB_SL, UCX_IB_SL; untagged: 0).
 * That priority must have PFC on for the traffic to be lossless, and be
 * the fabric's lossless priority (railbind.conf roce-priority) when the
 * site names one; ECN on it where the driver says.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roce.h"

const char *aff_roce_prios(unsigned bits, char *buf, size_t len)
{
	size_t used = 0;
	unsigned i;

	*buf = '\0';
	for (i = 0; i < AFF_DCB_PRIOS && used < len; i++)
		if (bits & 1u << i)
			used += (size_t)snprintf(buf + used, len - used, "%s%u", used ? "," : "", i);
	return *buf ? buf : "none";
}

/* A traffic class or service level: 0-@max, else false. */
static bool number(const char *s, unsigned max, unsigned *out)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	v = strtoul(s, &end, 10);
	if (*end || v > max)
		return false;
	*out = (unsigned)v;
	return true;
}

static void user(struct aff_roce_user *u, const char *who, const char *tcvar, const char *tc,
		 const char *slvar, const char *sl)
{
	memset(u, 0, sizeof(*u));
	u->who = who;
	if (!tc)
		snprintf(u->src, sizeof(u->src), "%s unset: traffic class 0 (DSCP 0)", tcvar);
	else if (number(tc, 255, &u->tc))
		snprintf(u->src, sizeof(u->src), "%s=%u (DSCP %u)", tcvar, u->tc, u->tc >> 2);
	else
		snprintf(u->src, sizeof(u->src), "%s=%.40s is not a traffic class 0-255: read as 0",
			 tcvar, tc);
	u->tc_set = tc != NULL;
	if (!number(sl, 15, &u->sl))
		u->sl = 0;
	if (sl)
		snprintf(u->src + strlen(u->src), sizeof(u->src) - strlen(u->src), ", %s=%u",
			 slvar, u->sl);
}

size_t aff_roce_users(const char *(*get)(const char *name, void *arg), void *arg,
		      struct aff_roce_user out[AFF_ROCE_USERS])
{
	const char *fifo = get("NCCL_IB_FIFO_TC", arg), *ucx = get("UCX_IB_TRAFFIC_CLASS", arg);
	size_t n = 0;

	user(&out[n++], "NCCL", "NCCL_IB_TC", get("NCCL_IB_TC", arg), "NCCL_IB_SL",
	     get("NCCL_IB_SL", arg));
	if (fifo)
		user(&out[n++], "NCCL's CTS FIFO", "NCCL_IB_FIFO_TC", fifo, "NCCL_IB_SL",
		     get("NCCL_IB_SL", arg));
	/* "auto": UCX picks per device, which only the running process knows. */
	if (ucx && strcmp(ucx, "auto"))
		user(&out[n++], "UCX", "UCX_IB_TRAFFIC_CLASS", ucx, "UCX_IB_SL",
		     get("UCX_IB_SL", arg));
	return n;
}

enum aff_sev aff_roce_judge(const struct aff_dcb *d, const struct aff_config *conf,
			    const struct aff_roce_user *u, int *prio, char *line, size_t len)
{
	bool dscp = aff_dcb_trusts_dscp(d);
	char on[24];
	int p;

	*prio = -1;
	aff_roce_prios(d->pfc_en, on, sizeof(on));
	if (conf->roce_trust == AFF_TRUST_DSCP && !dscp) {
		snprintf(line, len, "%s (%s): the NIC trusts PCP (its APP table has no DSCP entry) while railbind.conf says roce-trust = dscp: the DSCP marking is ignored",
			 u->who, u->src);
		return AFF_SEV_FAIL;
	}
	if (conf->roce_trust == AFF_TRUST_PCP && dscp) {
		snprintf(line, len, "%s (%s): the NIC trusts DSCP (its APP table maps DSCP) while railbind.conf says roce-trust = pcp",
			 u->who, u->src);
		return AFF_SEV_FAIL;
	}
	if (!dscp && u->tc_set && u->tc >> 2) {
		snprintf(line, len, "%s (%s): the NIC trusts PCP, so the DSCP marking is ignored and the traffic lands on priority %u (its service level)",
			 u->who, u->src, u->sl);
		*prio = (int)u->sl;
		return AFF_SEV_FAIL;
	}
	p = aff_dcb_landing(d, u->tc, u->sl);
	if (p < 0) {
		snprintf(line, len, "%s (%s): DSCP %u has no entry in the NIC's APP table: the driver's default mapping decides its priority, which DCB netlink does not show",
			 u->who, u->src, u->tc >> 2);
		return AFF_SEV_WARN;
	}
	*prio = p;
	if (conf->roce_priority_set && (unsigned)p != conf->roce_priority) {
		snprintf(line, len, "%s (%s): lands on priority %d (trust %s), not the fabric's lossless priority %u (railbind.conf roce-priority; PFC on: %s)",
			 u->who, u->src, p, dscp ? "dscp" : "pcp", conf->roce_priority, on);
		return AFF_SEV_FAIL;
	}
	if (!d->pfc_en && !conf->roce_priority_set) {
		snprintf(line, len, "%s (%s): lands on priority %d, and PFC is on for no priority: RoCE runs lossy (set roce-priority in railbind.conf if the fabric is meant to be lossless)",
			 u->who, u->src, p);
		return AFF_SEV_WARN;
	}
	if (!(d->pfc_en & 1u << p)) {
		snprintf(line, len, "%s (%s): lands on priority %d (trust %s), where PFC is off (PFC on: %s)",
			 u->who, u->src, p, dscp ? "dscp" : "pcp", on);
		return AFF_SEV_FAIL;
	}
	if (d->has_ecn && (!(d->ecn_np & 1u << p) || !(d->ecn_rp & 1u << p))) {
		snprintf(line, len, "%s (%s): lands on priority %d with PFC on, but ECN (DCQCN) is off there (%s%s)",
			 u->who, u->src, p, d->ecn_np & 1u << p ? "" : "roce_np",
			 d->ecn_np & 1u << p || d->ecn_rp & 1u << p ? (d->ecn_rp & 1u << p ? "" : "roce_rp") : ", roce_rp");
		return AFF_SEV_FAIL;
	}
	snprintf(line, len, "%s (%s): lands on priority %d, PFC on%s", u->who, u->src, p,
		 d->has_ecn ? ", ECN on" : "");
	return AFF_SEV_OK;
}
