// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What this process can open of the node's rails, on a live node: a pod or
 * cgroup that exposes only some /dev/infiniband/uverbsN (a Kubernetes RDMA
 * device plugin, a Slurm NIC gres) gives NCCL in this rank another device
 * count than its node-mates, and NCCL pairs NICs across ranks by index. The
 * device cgroup shows only on open(2), so each is opened and closed at once
 * (O_NONBLOCK: a FIFO planted under --root does not hang it).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan.h"

/* "uverbs3" of /sys/class/infiniband/HCA/device/infiniband_verbs/, or "". */
static void uverbs_of(const struct aff_ctx *ctx, const char *hca, char *out, size_t len)
{
	char rel[320], path[4096];
	struct dirent *e;
	DIR *d;

	out[0] = '\0';
	if (!*hca || hca[0] == '.' || strchr(hca, '/'))
		return;
	snprintf(rel, sizeof(rel), "/sys/class/infiniband/%s/device/infiniband_verbs", hca);
	d = opendir(aff_ctx_path(ctx, rel, path, sizeof(path)));
	if (!d)
		return;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "uverbs", 6) && strlen(e->d_name) < len) {
			snprintf(out, len, "%s", e->d_name);
			break;
		}
	closedir(d);
}

static bool can_open(const struct aff_ctx *ctx, const char *dev)
{
	char rel[64], path[4096];
	int fd;

	snprintf(rel, sizeof(rel), "/dev/infiniband/%s", dev);
	fd = open(aff_ctx_path(ctx, rel, path, sizeof(path)),
		  O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static int warn_hidden(struct aff_plan *p, size_t shut)
{
	char msg[1024];
	size_t i, used;

	used = (size_t)snprintf(msg, sizeof(msg),
				"this process can open %zu of the node's %zu rail devices (not:",
				p->nuverbs - shut, p->nuverbs);
	for (i = 0; i < p->nuverbs && used < sizeof(msg); i++)
		if (!p->uverbs[i].openable)
			used += (size_t)snprintf(msg + used, sizeof(msg) - used, " %s %s",
						 p->uverbs[i].hca, p->uverbs[i].dev[0] ?
						 p->uverbs[i].dev : "(no uverbs device)");
	if (used < sizeof(msg))
		snprintf(msg + used, sizeof(msg) - used,
			 "): NCCL in this rank sees another device count than a rank that sees them all, and pairs NICs across ranks by index; give every rank the node's full set (the RDMA device plugin's or the NIC gres's)");
	return aff_plan_warn(p, "rails-hidden", p->topo->source, msg);
}

/* A two-port device is one uverbs device: listed once. */
static bool listed(const struct aff_plan *p, const char *hca)
{
	size_t i;

	for (i = 0; i < p->nuverbs; i++)
		if (!strcmp(p->uverbs[i].hca, hca))
			return true;
	return false;
}

int aff_plan_uverbs(struct aff_plan *p)
{
	const struct aff_topo *t = p->topo;
	size_t i, shut = 0;

	if (t->src != AFF_SRC_LIVE || !p->node_rail)
		return 0;
	p->uverbs = calloc(t->nrail + 1, sizeof(*p->uverbs));
	if (!p->uverbs)
		return -ENOMEM;
	for (i = 0; i < t->nrail; i++) {
		struct aff_uverbs *u = &p->uverbs[p->nuverbs];
		int port;
		const char *hca = aff_rail_hca(&t->rail[i], &port);

		if (!t->rail[i].rdma || !hca || !aff_plan_env_lists(p, (int)i) ||
		    listed(p, hca))
			continue;
		snprintf(u->hca, sizeof(u->hca), "%s", hca);
		uverbs_of(t->ctx, hca, u->dev, sizeof(u->dev));
		u->openable = u->dev[0] && can_open(t->ctx, u->dev);
		shut += !u->openable;
		p->nuverbs++;
	}
	return shut ? warn_hidden(p, shut) : 0;
}
