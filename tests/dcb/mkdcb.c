// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mkdcb: the kernel's answers to RTM_GETDCB/DCB_CMD_IEEE_GET, written byte
 * for byte from the layouts of include/uapi/linux/dcbnl.h in the order
 * net/dcb/dcbnl.c's dcbnl_ieee_fill() puts them: struct dcbmsg,
 * DCB_ATTR_IFNAME, the DCB_ATTR_IEEE nest (ETS, PFC, the APP table), then
 * DCB_ATTR_DCBX; or an NLMSG_ERROR. Standalone: no libmnl, no railbind.
 *
 *   mkdcb OUT [ifname=eth0] [pfc=3,4|none] [app=26:3,0:0|std] [tx=N,...] [rx=N,...]
 *             [cap=8] [noets] [nopfc] [short-pfc] [err=95]
 *   mkdcb -seeds DIR      a set of healthy and broken replies (fuzz seeds)
 * app=std maps every DSCP d to priority d >> 3 (what `mlnx_qos --trust dscp`
 * sets up); tx and rx are the PFC frames sent and received per priority.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

struct msg {
	uint8_t b[8192];
	size_t len;
};

static size_t put(struct msg *m, const void *p, size_t n)
{
	size_t at = m->len;

	if (m->len + NLMSG_ALIGN(n) > sizeof(m->b)) {
		fprintf(stderr, "mkdcb: message too long\n");
		exit(1);
	}
	memcpy(m->b + m->len, p, n);
	memset(m->b + m->len + n, 0, NLMSG_ALIGN(n) - n);
	m->len += NLMSG_ALIGN(n);
	return at;
}

static size_t attr(struct msg *m, uint16_t type, const void *p, size_t n)
{
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + n), .nla_type = type };
	size_t at = m->len;

	put(m, &a, sizeof(a));
	if (n)
		put(m, p, n);
	return at;
}

static size_t nest(struct msg *m, uint16_t type)
{
	return attr(m, type | NLA_F_NESTED, NULL, 0);
}

static void nest_end(struct msg *m, size_t at)
{
	struct nlattr *a = (struct nlattr *)(m->b + at);

	a->nla_len = (uint16_t)(m->len - at);
}

struct spec {
	const char *ifname;
	int err;
	unsigned pfc_en, pfc_cap;
	uint64_t tx[IEEE_8021QAZ_MAX_TCS], rx[IEEE_8021QAZ_MAX_TCS];
	int dscp_prio[64];	/* -1: no entry */
	int noets, nopfc, short_pfc;
};

static void build(const struct spec *s, struct msg *m)
{
	struct nlmsghdr h = { .nlmsg_type = RTM_GETDCB, .nlmsg_seq = 1 };
	struct dcbmsg dm = { .dcb_family = AF_UNSPEC, .cmd = DCB_CMD_IEEE_GET };
	struct ieee_ets ets;
	struct ieee_pfc pfc;
	size_t ieee, app, i;
	uint8_t dcbx = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE;

	memset(m, 0, sizeof(*m));
	if (s->err) {
		struct nlmsgerr e = { .error = -s->err };

		h.nlmsg_type = NLMSG_ERROR;
		put(m, &h, sizeof(h));
		e.msg.nlmsg_type = RTM_GETDCB;
		e.msg.nlmsg_len = NLMSG_LENGTH(sizeof(dm) + 8);
		e.msg.nlmsg_flags = NLM_F_REQUEST;
		e.msg.nlmsg_seq = 1;
		put(m, &e, sizeof(e));
		((struct nlmsghdr *)m->b)->nlmsg_len = (uint32_t)m->len;
		return;
	}
	put(m, &h, sizeof(h));
	put(m, &dm, sizeof(dm));
	attr(m, DCB_ATTR_IFNAME, s->ifname, strlen(s->ifname) + 1);
	ieee = nest(m, DCB_ATTR_IEEE);
	if (!s->noets) {
		memset(&ets, 0, sizeof(ets));
		ets.ets_cap = 8;
		for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
			ets.prio_tc[i] = (uint8_t)i;
			ets.tc_tx_bw[i] = i == 3 ? 50 : i == 0 ? 50 : 0;
			ets.tc_tsa[i] = i == 0 || i == 3 ? IEEE_8021QAZ_TSA_ETS : IEEE_8021QAZ_TSA_STRICT;
		}
		attr(m, DCB_ATTR_IEEE_ETS, &ets, sizeof(ets));
	}
	if (!s->nopfc) {
		memset(&pfc, 0, sizeof(pfc));
		pfc.pfc_cap = (uint8_t)s->pfc_cap;
		pfc.pfc_en = (uint8_t)s->pfc_en;
		memcpy(pfc.requests, s->tx, sizeof(pfc.requests));
		memcpy(pfc.indications, s->rx, sizeof(pfc.indications));
		attr(m, DCB_ATTR_IEEE_PFC, &pfc, s->short_pfc ? sizeof(pfc) / 2 : sizeof(pfc));
	}
	app = nest(m, DCB_ATTR_IEEE_APP_TABLE);
	for (i = 0; i < 64; i++) {
		struct dcb_app a = { .selector = IEEE_8021QAZ_APP_SEL_DSCP, .protocol = (uint16_t)i };

		if (s->dscp_prio[i] < 0)
			continue;
		a.priority = (uint8_t)s->dscp_prio[i];
		attr(m, DCB_ATTR_IEEE_APP, &a, sizeof(a));
	}
	{
		/* RoCE v1's ethertype entry, which the parser must skip. */
		struct dcb_app a = { .selector = IEEE_8021QAZ_APP_SEL_ETHERTYPE, .priority = 3,
				     .protocol = 0x8915 };

		attr(m, DCB_ATTR_IEEE_APP, &a, sizeof(a));
	}
	nest_end(m, app);
	nest_end(m, ieee);
	attr(m, DCB_ATTR_DCBX, &dcbx, 1);
	((struct nlmsghdr *)m->b)->nlmsg_len = (uint32_t)m->len;
}

static int counters(const char *v, uint64_t *out)
{
	char *end;
	int i;

	for (i = 0; i < IEEE_8021QAZ_MAX_TCS; i++) {
		out[i] = strtoull(v, &end, 10);
		if (end == v || *end != (i + 1 < IEEE_8021QAZ_MAX_TCS ? ',' : '\0'))
			return -1;
		v = end + 1;
	}
	return 0;
}

static int option(struct spec *s, const char *a)
{
	const char *v = strchr(a, '=');
	char *end;

	if (!strcmp(a, "noets"))
		return s->noets = 1, 0;
	if (!strcmp(a, "nopfc"))
		return s->nopfc = 1, 0;
	if (!strcmp(a, "short-pfc"))
		return s->short_pfc = 1, 0;
	if (!v)
		return -1;
	v++;
	if (!strncmp(a, "ifname=", 7))
		return s->ifname = v, 0;
	if (!strncmp(a, "cap=", 4))
		return s->pfc_cap = (unsigned)atoi(v) & 0xff, 0;
	if (!strncmp(a, "err=", 4))
		return s->err = atoi(v), 0;
	if (!strncmp(a, "tx=", 3))
		return counters(v, s->tx);
	if (!strncmp(a, "rx=", 3))
		return counters(v, s->rx);
	if (!strncmp(a, "pfc=", 4)) {
		s->pfc_en = 0;
		if (!strcmp(v, "none"))
			return 0;
		for (; *v; v++)
			if (*v >= '0' && *v <= '7')
				s->pfc_en |= 1u << (*v - '0');
			else if (*v != ',')
				return -1;
		return 0;
	}
	if (!strncmp(a, "app=", 4)) {
		int i;

		for (i = 0; i < 64; i++)
			s->dscp_prio[i] = !strcmp(v, "std") ? i >> 3 : -1;
		if (!strcmp(v, "std") || !strcmp(v, "none"))
			return 0;
		while (*v) {
			long d = strtol(v, &end, 10), p;

			if (*end != ':' || d < 0 || d > 63)
				return -1;
			p = strtol(end + 1, &end, 10);
			if (p < 0 || p > 7 || (*end && *end != ','))
				return -1;
			s->dscp_prio[d] = (int)p;
			v = *end ? end + 1 : end;
		}
		return 0;
	}
	return -1;
}

static void defaults(struct spec *s)
{
	int i;

	memset(s, 0, sizeof(*s));
	s->ifname = "eth0";
	s->pfc_en = 1u << 3;
	s->pfc_cap = 8;
	for (i = 0; i < 64; i++)
		s->dscp_prio[i] = -1;
	s->dscp_prio[26] = 3;
	s->dscp_prio[48] = 6;
}

static int write_file(const char *path, const struct msg *m)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(m->b, 1, m->len, f) != m->len || fclose(f)) {
		fprintf(stderr, "mkdcb: %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

static int seeds(const char *dir)
{
	static const char *const sets[][4] = {
		{ "healthy", "pfc=3", NULL },
		{ "std", "app=std", "pfc=3", NULL },
		{ "pcp", "app=none", NULL },
		{ "pause", "tx=0,0,0,123456,0,0,0,0", "rx=9,0,0,77,0,0,0,1", NULL },
		{ "noets", "noets", "pfc=3,4", NULL },
		{ "nopfc", "nopfc", NULL },
		{ "short", "short-pfc", NULL },
		{ "eopnotsupp", "err=95", NULL },
		{ "enodev", "err=19", NULL },
		/* fuzz_dcb's first find: a capability over 8 was refused on read-back. */
		{ "cap200", "cap=200", NULL },
	};
	char path[4096];
	struct msg m;
	struct spec s;
	size_t i, k;
	int rc = 0;

	for (i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		defaults(&s);
		for (k = 1; k < 4 && sets[i][k]; k++)
			if (option(&s, sets[i][k]) < 0)
				return 1;
		build(&s, &m);
		snprintf(path, sizeof(path), "%s/%s.dcb", dir, sets[i][0]);
		rc |= write_file(path, &m);
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct spec s;
	struct msg m;
	int i;

	if (argc == 3 && !strcmp(argv[1], "-seeds"))
		return seeds(argv[2]);
	if (argc < 2) {
		fprintf(stderr, "usage: mkdcb OUT [key=value...] | mkdcb -seeds DIR\n");
		return 2;
	}
	defaults(&s);
	for (i = 2; i < argc; i++)
		if (option(&s, argv[i]) < 0) {
			fprintf(stderr, "mkdcb: bad option %s\n", argv[i]);
			return 2;
		}
	build(&s, &m);
	return write_file(argv[1], &m);
}
