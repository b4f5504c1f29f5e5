// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * NCCL_IB_GID_INDEX, the node's: a RoCE rank needs the RoCE v2 GID that
 * carries its rail's IPv4 address. NCCL up to 2.20 uses GID index 0 unless
 * told (on most NICs a RoCE v1, link-local entry); from 2.21 it finds the
 * RoCE v2 IPv4 GID itself (NCCL_IB_ADDR_FAMILY, NCCL_IB_ADDR_RANGE steer
 * it). One NCCL_IB_GID_INDEX applies to every HCA of the process, so it is
 * set only for an NCCL known to be older than 2.21, and only when that index
 * is the same on every RoCE rail of the node; else a plan warning says why
 * not. The NCCL version is railbind.conf's nccl-version; unknown is said.
 * UCX is left alone: its UCX_IB_GID_INDEX default ("auto") already picks
 * a RoCE v2 entry per device.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fabric.h"
#include "plan.h"

static bool is_roce(const struct aff_rail *r)
{
	return r->rdma && r->fab && !strcmp(r->fab->link_layer, "Ethernet");
}

int aff_plan_gid_env(struct aff_plan *p)
{
	const struct aff_topo *t = p->topo;
	unsigned ver = t->ctx->conf.nccl_version;
	char list[512] = "", msg[768];
	int idx = -2, n;
	bool same = true;
	size_t i, len;

	for (i = 0; i < t->nrail; i++) {
		const struct aff_rail *r = &t->rail[i];
		int g;

		if (!is_roce(r) || !aff_plan_env_lists(p, (int)i))
			continue;
		g = aff_fabric_roce_v2_ipv4(r->fab);
		if (idx != -2 && g != idx)
			same = false;
		if (idx == -2 || g < 0)
			idx = g;
		len = strlen(list);
		if (g >= 0)
			snprintf(list + len, sizeof(list) - len, "%s%s %d", len ? ", " : "",
				 aff_topo_nic_name(t, i), g);
		else
			snprintf(list + len, sizeof(list) - len, "%s%s none", len ? ", " : "",
				 aff_topo_nic_name(t, i));
	}
	if (idx == -2)
		return 0;
	if (!ver) {
		n = snprintf(msg, sizeof(msg), "the NCCL version is unknown (railbind.conf: nccl-version), so NCCL_IB_GID_INDEX is not set: NCCL 2.21 and later find the RoCE v2 IPv4 GID themselves, older NCCL uses GID 0 unless told (the rails' RoCE v2 IPv4 GIDs: %s)",
			     list);
		return aff_plan_warn(p, "nccl-gid-index", t->source, n > 0 ? msg : "");
	}
	if (ver >= 22100)
		return 0;
	if (same && idx >= 0) {
		snprintf(p->nccl_gid_index, sizeof(p->nccl_gid_index), "%d", idx);
		return 0;
	}
	n = snprintf(msg, sizeof(msg), "NCCL %u.%u needs NCCL_IB_GID_INDEX, and one index applies to every HCA, but the rails' RoCE v2 IPv4 GIDs differ (%s): not set; give every rail's netdev its IPv4 address the same way so the indices agree, or use NCCL 2.21 or later",
		     ver / 10000, ver / 100 % 100, list);
	return aff_plan_warn(p, "nccl-gid-index", t->source, n > 0 ? msg : "");
}
