// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel's DCB_CMD_IEEE_GET reply (net/dcb/dcbnl.c, dcbnl_ieee_fill):
 * a struct dcbmsg, DCB_ATTR_IFNAME, then the DCB_ATTR_IEEE nest holding
 * DCB_ATTR_IEEE_ETS (struct ieee_ets) and DCB_ATTR_IEEE_PFC (struct
 * ieee_pfc) where the driver has them, the DCB_ATTR_IEEE_APP_TABLE nest of
 * DCB_ATTR_IEEE_APP entries (struct dcb_app), the peer's view, then
 * DCB_ATTR_DCBX. A failure is an NLMSG_ERROR instead. Everything else is
 * skipped, and a struct shorter than the kernel's layout is malformed.
 * The attributes are walked by libmnl (mnl_lazy.c), which checks every
 * length against the message.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "dcb.h"
#include "mnl_lazy.h"

#define mnl aff_mnl

struct parse {
	struct aff_dcb *d;
	char *why;
	size_t whylen;
	bool bad;
};

static int bad(struct parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(struct parse *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->bad && p->whylen) {
		va_start(ap, fmt);
		vsnprintf(p->why, p->whylen, fmt, ap);
		va_end(ap);
	}
	p->bad = true;
	return MNL_CB_ERROR;
}

static int app_attr(const struct nlattr *attr, void *data)
{
	struct parse *p = data;
	struct dcb_app app;

	if (mnl.attr_get_type(attr) != DCB_ATTR_IEEE_APP)
		return MNL_CB_OK;
	if (mnl.attr_get_payload_len(attr) < sizeof(app))
		return bad(p, "an APP entry of %u bytes, shorter than struct dcb_app",
			   (unsigned)mnl.attr_get_payload_len(attr));
	memcpy(&app, mnl.attr_get_payload(attr), sizeof(app));
	if (app.selector != IEEE_8021QAZ_APP_SEL_DSCP)
		return MNL_CB_OK;
	if (app.protocol >= AFF_DCB_DSCPS || app.priority >= AFF_DCB_PRIOS)
		return bad(p, "a DSCP APP entry %u -> priority %u out of range",
			   app.protocol, app.priority);
	/* Several priorities for one DSCP: the lowest, as mlx5 programs it. */
	if (!(p->d->dscp_mapped & 1ull << app.protocol) ||
	    app.priority < p->d->dscp_prio[app.protocol])
		p->d->dscp_prio[app.protocol] = app.priority;
	p->d->dscp_mapped |= 1ull << app.protocol;
	return MNL_CB_OK;
}

static int ieee_attr(const struct nlattr *attr, void *data)
{
	struct parse *p = data;
	struct aff_dcb *d = p->d;
	struct ieee_pfc pfc;
	struct ieee_ets ets;
	unsigned i;

	switch (mnl.attr_get_type(attr)) {
	case DCB_ATTR_IEEE_PFC:
		if (mnl.attr_get_payload_len(attr) < sizeof(pfc))
			return bad(p, "DCB_ATTR_IEEE_PFC of %u bytes, shorter than struct ieee_pfc",
				   (unsigned)mnl.attr_get_payload_len(attr));
		memcpy(&pfc, mnl.attr_get_payload(attr), sizeof(pfc));
		d->has_pfc = true;
		d->pfc_cap = pfc.pfc_cap;
		d->pfc_en = pfc.pfc_en;
		for (i = 0; i < AFF_DCB_PRIOS; i++) {
			d->pause_tx[i] = pfc.requests[i];
			d->pause_rx[i] = pfc.indications[i];
		}
		return MNL_CB_OK;
	case DCB_ATTR_IEEE_ETS:
		if (mnl.attr_get_payload_len(attr) < sizeof(ets))
			return bad(p, "DCB_ATTR_IEEE_ETS of %u bytes, shorter than struct ieee_ets",
				   (unsigned)mnl.attr_get_payload_len(attr));
		memcpy(&ets, mnl.attr_get_payload(attr), sizeof(ets));
		for (i = 0; i < AFF_DCB_PRIOS; i++) {
			if (ets.prio_tc[i] >= AFF_DCB_PRIOS)
				return bad(p, "ETS maps priority %u to traffic class %u", i,
					   ets.prio_tc[i]);
			d->prio_tc[i] = ets.prio_tc[i];
			d->tc_bw[i] = ets.tc_tx_bw[i];
		}
		d->has_ets = true;
		return MNL_CB_OK;
	case DCB_ATTR_IEEE_APP_TABLE:
		if (mnl.attr_validate(attr, MNL_TYPE_NESTED) < 0)
			return bad(p, "DCB_ATTR_IEEE_APP_TABLE is not a nest");
		return mnl.attr_parse_nested(attr, app_attr, p) < 0 ? MNL_CB_ERROR : MNL_CB_OK;
	default:
		return MNL_CB_OK;
	}
}

static int top_attr(const struct nlattr *attr, void *data)
{
	struct parse *p = data;

	if (mnl.attr_get_type(attr) != DCB_ATTR_IEEE)
		return MNL_CB_OK;
	if (mnl.attr_validate(attr, MNL_TYPE_NESTED) < 0)
		return bad(p, "DCB_ATTR_IEEE is not a nest");
	return mnl.attr_parse_nested(attr, ieee_attr, p) < 0 ? MNL_CB_ERROR : MNL_CB_OK;
}

int aff_dcb_parse(const void *msg, size_t len, struct aff_dcb *d, char *why, size_t whylen)
{
	struct parse p = { .d = d, .why = why, .whylen = whylen };
	const struct nlmsghdr *nlh = msg;
	const struct dcbmsg *dm;
	int n = len > INT32_MAX ? INT32_MAX : (int)len;

	memset(d, 0, sizeof(*d));
	if (whylen)
		*why = '\0';
	if (!aff_mnl_load())
		return -ENOSYS;
	/* mnl_nlmsg_ok() compares the length as an int: one over 2 GiB passes it. */
	if (!msg || !mnl.nlmsg_ok(nlh, n) || nlh->nlmsg_len > len)
		return bad(&p, "a reply of %zu bytes that is not one netlink message", len),
		       -EPROTO;
	if (nlh->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = (const void *)(nlh + 1);

		if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
			return bad(&p, "a truncated netlink error"), -EPROTO;
		if (e->error >= 0 || e->error < -4095)
			return bad(&p, "a netlink error %d where a DCB reply was due", e->error),
			       -EPROTO;
		/* The kernel's own refusal: its errno says it all, but say whose it is. */
		bad(&p, "the kernel refused RTM_GETDCB: %s", strerror(-e->error));
		return e->error;
	}
	if (nlh->nlmsg_type != RTM_GETDCB || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*dm)))
		return bad(&p, "message type %u where RTM_GETDCB was due", nlh->nlmsg_type),
		       -EPROTO;
	dm = (const void *)(nlh + 1);
	if (dm->cmd != DCB_CMD_IEEE_GET)
		return bad(&p, "DCB command %u where DCB_CMD_IEEE_GET was due", dm->cmd), -EPROTO;
	if (mnl.attr_parse(nlh, sizeof(*dm), top_attr, &p) < 0 || p.bad) {
		if (!p.bad)
			bad(&p, "attributes overrun the message");
		memset(d, 0, sizeof(*d));
		return -EPROTO;
	}
	return 0;
}
