// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A rail port's fabric attributes (fabric.h) read back from the OpenFabrics
 * OS device of a live discovery or a snapshot: what live discovery saw is
 * what an offline audit sees. A value that does not parse is an error
 * naming the attribute, as for every Railbind* attribute of a snapshot.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"

static const char *port_info(hwloc_obj_t os, const char *fmt, unsigned port)
{
	char name[64];

	aff_port_info_name(name, sizeof(name), port, fmt);
	return hwloc_obj_get_info_by_name(os, name);
}

static bool is_name(const char *name, const char *fmt, unsigned port)
{
	char want[64];

	aff_port_info_name(want, sizeof(want), port, fmt);
	return !strcmp(name, want);
}

static int bad(char *why, size_t len, const char *fmt, unsigned port, const char *value)
{
	char name[64];

	aff_port_info_name(name, sizeof(name), port, fmt);
	snprintf(why, len, "%s=\"%.48s\" does not parse", name, value);
	return -EINVAL;
}

static int mtu_of(const char *s, int *out)
{
	unsigned long long v;

	if (aff_fabric_parse_count(s, &v) < 0 || v < 68 || v > 1u << 20)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

static int scalars(hwloc_obj_t os, unsigned port, struct aff_fabric_port *p, char *why,
		   size_t len)
{
	const char *s;

	if ((s = port_info(os, AFF_PORT_LINK_LAYER, port))) {
		if (strcmp(s, "InfiniBand") && strcmp(s, "Ethernet"))
			return bad(why, len, AFF_PORT_LINK_LAYER, port, s);
		snprintf(p->link_layer, sizeof(p->link_layer), "%s", s);
	}
	if ((s = port_info(os, AFF_PORT_PHYS_STATE, port)) &&
	    aff_fabric_parse_state(s, &p->phys_state, p->phys_name, sizeof(p->phys_name)) < 0)
		return bad(why, len, AFF_PORT_PHYS_STATE, port, s);
	if ((s = port_info(os, AFF_PORT_LID, port)) && aff_fabric_parse_lid(s, &p->lid) < 0)
		return bad(why, len, AFF_PORT_LID, port, s);
	if ((s = port_info(os, AFF_PORT_SM_LID, port)) &&
	    aff_fabric_parse_lid(s, &p->sm_lid) < 0)
		return bad(why, len, AFF_PORT_SM_LID, port, s);
	if ((s = port_info(os, AFF_PORT_WIDTH, port)))
		snprintf(p->width, sizeof(p->width), "%s", s);
	if ((s = port_info(os, AFF_PORT_SPEED, port)))
		snprintf(p->speed, sizeof(p->speed), "%s", s);
	if ((s = port_info(os, AFF_PORT_ACTIVE_MTU, port)) &&
	    mtu_of(s, &p->active_mtu) < 0)
		return bad(why, len, AFF_PORT_ACTIVE_MTU, port, s);
	if ((s = port_info(os, AFF_PORT_MAX_MTU, port)) && mtu_of(s, &p->max_mtu) < 0)
		return bad(why, len, AFF_PORT_MAX_MTU, port, s);
	if ((s = port_info(os, AFF_PORT_NETDEV, port)))
		snprintf(p->netdev, sizeof(p->netdev), "%s", s);
	if ((s = port_info(os, AFF_PORT_NETDEV_MTU, port)) &&
	    mtu_of(s, &p->netdev_mtu) < 0)
		return bad(why, len, AFF_PORT_NETDEV_MTU, port, s);
	if ((s = port_info(os, AFF_PORT_MALFORMED, port)))
		snprintf(p->malformed, sizeof(p->malformed), "%s", s);
	if ((s = hwloc_obj_get_info_by_name(os, AFF_INFO_FW_VER)))
		snprintf(p->fw, sizeof(p->fw), "%s", s);
	if ((s = hwloc_obj_get_info_by_name(os, AFF_INFO_BOARD_ID)))
		snprintf(p->board, sizeof(p->board), "%s", s);
	return 0;
}

/* The repeated GID and counter attributes. */
static int tables(hwloc_obj_t os, unsigned port, struct aff_fabric_port *p, char *why,
		  size_t len)
{
	unsigned i;

	for (i = 0; i < os->infos_count; i++) {
		const char *n = os->infos[i].name, *v = os->infos[i].value;

		if (is_name(n, AFF_PORT_GID, port)) {
			struct aff_gid *g = realloc(p->gid, (p->ngid + 1) * sizeof(*g));

			if (!g)
				return -ENOMEM;
			p->gid = g;
			if (aff_fabric_parse_gid_info(v, &g[p->ngid]) < 0)
				return bad(why, len, AFF_PORT_GID, port, v);
			p->ngid++;
		} else if (is_name(n, AFF_PORT_COUNTER, port)) {
			struct aff_port_counter *c = realloc(p->ctr, (p->nctr + 1) * sizeof(*c));

			if (!c)
				return -ENOMEM;
			p->ctr = c;
			if (aff_fabric_parse_counter_info(v, &c[p->nctr]) < 0)
				return bad(why, len, AFF_PORT_COUNTER, port, v);
			p->nctr++;
		}
	}
	return 0;
}

/* Does @os carry any fabric attribute of @port? */
static bool has_facts(hwloc_obj_t os, unsigned port)
{
	static const char *const fmts[] = {
		AFF_PORT_LINK_LAYER, AFF_PORT_PHYS_STATE, AFF_PORT_GID,
		AFF_PORT_COUNTER, AFF_PORT_ACTIVE_MTU, AFF_PORT_MALFORMED,
	};
	size_t k;

	for (k = 0; k < sizeof(fmts) / sizeof(fmts[0]); k++)
		if (port_info(os, fmts[k], port))
			return true;
	return false;
}

int aff_fabric_port_load(hwloc_obj_t os, unsigned port, struct aff_fabric_port **out,
			 char *why, size_t whylen)
{
	struct aff_fabric_port *p;
	int rc;

	*out = NULL;
	if (!has_facts(os, port))
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->phys_state = -1;
	p->lid = p->sm_lid = -1;
	rc = scalars(os, port, p, why, whylen);
	if (!rc)
		rc = tables(os, port, p, why, whylen);
	if (rc < 0) {
		aff_fabric_port_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

void aff_fabric_port_free(struct aff_fabric_port *p)
{
	if (!p)
		return;
	free(p->gid);
	free(p->ctr);
	free(p);
}

int aff_fabric_roce_v2_ipv4(const struct aff_fabric_port *p)
{
	int best = -1;
	size_t i;

	for (i = 0; p && i < p->ngid; i++)
		if (p->gid[i].type == AFF_GID_ROCE_V2 && aff_gid_is_ipv4(p->gid[i].raw, NULL, 0) &&
		    (best < 0 || (int)p->gid[i].index < best))
			best = (int)p->gid[i].index;
	return best;
}
