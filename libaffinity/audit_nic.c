// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The NIC checks: nic-port-down (a GPU's nearest RDMA port not ACTIVE, so
 * left out of the plan, or a planned rail slower than the others) and
 * nic-shared (more GPUs than rails under one PCIe switch: information, AWS
 * p4d is built that way) and rails-asymmetric (the NUMA nodes' GPUs have
 * different numbers of rails: information).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "audit.h"

/* Rails some rank uses (1), by rail index. */
static int *planned_rails(const struct aff_audit *a)
{
	int *used = calloc(a->topo->nrail ? a->topo->nrail : 1, sizeof(*used));
	size_t k, r;

	if (!used)
		return NULL;
	/* Rails are the plan's: ranks never get a left-out one. */
	for (k = 0; k < a->plan->nrank; k++)
		for (r = 0; r < a->plan->rank[k].rails.n; r++)
			used[a->plan->rank[k].rails.rail[r]] = 1;
	return used;
}

/* The GPUs whose nearest rail r is, left out of their plan (plan_judge.c). */
static struct json_object *losers(const struct aff_audit *a, int r, const char **first)
{
	struct json_object *gpus = json_object_new_array();
	size_t k, i;

	*first = NULL;
	for (k = 0; k < a->plan->nrank; k++) {
		const struct aff_rank *rk = &a->plan->rank[k];

		for (i = 0; i < rk->lost.n; i++)
			if (rk->lost.rail[i] == r) {
				const struct aff_topo *t = a->topo;
				const char *pci = t->dev[t->gpus[rk->gpu]].pci;

				if (!*first)
					*first = pci;
				json_object_array_add(gpus, json_object_new_string(pci));
			}
	}
	return gpus;
}

/* Gb/s as an integer when it is one (400), else 2.5; null when unknown. */
static struct json_object *gbps(double v)
{
	if (!(v > 0))
		return NULL;
	if (v == (double)(int)v)
		return json_object_new_int((int)v);
	return json_object_new_double(v);
}

static int port_finding(struct aff_audit *a, int r, double best)
{
	const struct aff_topo *t = a->topo;
	const struct aff_rail *rl = &t->rail[r];
	const char *pci = t->dev[rl->dev].pci, *name = aff_audit_rail_name(t, r), *gpu;
	const char *devs[2] = { pci, NULL };
	struct json_object *ev = json_object_new_object(), *gpus = losers(a, r, &gpu);
	int port = rl->port > 0 ? rl->port : 1;

	json_object_object_add(ev, "nic", json_object_new_string(name));
	json_object_object_add(ev, "port", json_object_new_int(rl->port));
	json_object_object_add(ev, "state", rl->port_state ?
			       json_object_new_string(rl->port_state) : NULL);
	json_object_object_add(ev, "rate", gbps(rl->rate));
	json_object_object_add(ev, "peer_rate", gbps(best));
	json_object_object_add(ev, "gpus", gpus);
	if (rl->excl == AFF_EXCL_DOWN)
		return aff_audit_add(a, "nic-port-down", AFF_SEV_FAIL, name, devs, ev,
				     "check the cable, the switch port and the subnet manager (ibstat, ibportstate); until then the plan gives its GPUs a farther rail",
				     "RDMA port %s/%d (%s) is %s, not ACTIVE: the nearest rail of GPU %s%s, which NCCL cannot use",
				     name, port, pci, rl->port_state, gpu ? gpu : "-",
				     json_object_array_length(gpus) > 1 ? " and others" : "");
	return aff_audit_add(a, "nic-port-down", AFF_SEV_WARN, name, devs, ev,
			     "check the cable and the switch port speed (ibstat): the slowest rail paces every all-reduce",
			     "RDMA port %s/%d (%s) runs at %g Gb/s, other rails at %g Gb/s", name,
			     port, pci, rl->rate, best);
}

/*
 * A port that is not ACTIVE is left out of the plan (model_rank.c); it is a
 * failure when it was some GPU's nearest rail. A spare port nobody needs
 * (the second port of a card, not cabled) is no finding. A planned rail
 * slower than the other planned ones is a warning.
 */
static int check_ports(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	bool any = false;
	int *used, *lost, rc = 0;
	double best = 0;
	size_t r, k, i;

	if (!a->plan)
		return aff_audit_undecided(a, "nic-port-down", "no GPU or accelerator");
	used = planned_rails(a);
	lost = calloc(t->nrail ? t->nrail : 1, sizeof(*lost));
	if (!used || !lost) {
		free(used);
		free(lost);
		return -ENOMEM;
	}
	for (k = 0; k < a->plan->nrank; k++)
		for (i = 0; i < a->plan->rank[k].lost.n; i++)
			lost[a->plan->rank[k].lost.rail[i]] = 1;
	for (r = 0; r < t->nrail; r++)
		if (used[r] && t->rail[r].rdma && t->rail[r].port_state &&
		    !strcmp(t->rail[r].port_state, "ACTIVE") && t->rail[r].rate > best)
			best = t->rail[r].rate;
	for (r = 0; r < t->nrail && !rc; r++) {
		const struct aff_rail *rl = &t->rail[r];

		if (!rl->rdma || !rl->port_state || (!used[r] && !lost[r]))
			continue;
		any = true;
		if ((lost[r] && rl->excl == AFF_EXCL_DOWN) ||
		    (used[r] && rl->rate > 0 && rl->rate < best))
			rc = port_finding(a, (int)r, best);
	}
	free(used);
	free(lost);
	if (rc < 0)
		return rc;
	if (!any)
		return aff_audit_undecided(a, "nic-port-down",
					   "no RDMA port state for the planned rails");
	return 0;
}

/* Whether device i is below bridge s. */
static bool below(const struct aff_topo *t, int i, int s)
{
	for (i = t->dev[i].parent; i >= 0; i = t->dev[i].parent)
		if (i == s)
			return true;
	return false;
}

/* The topmost switch above device i, or -1. */
static int top_switch(const struct aff_topo *t, int i)
{
	int s = -1;

	for (i = t->dev[i].parent; i >= 0; i = t->dev[i].parent)
		if (t->dev[i].is_switch)
			s = i;
	return s;
}

static int check_shared(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	size_t s, g, r;
	int rc = 0;

	if (!t->ngpu)
		return aff_audit_undecided(a, "nic-shared", "no GPU or accelerator");
	if (!t->nrail)
		return aff_audit_undecided(a, "nic-shared", "no rail NIC");
	for (s = 0; s < t->ndev && !rc; s++) {
		struct json_object *ev;
		const char *devs[2] = { t->dev[s].pci, NULL };
		size_t ng = 0, nr = 0;

		if (!t->dev[s].is_switch)
			continue;
		for (g = 0; g < t->ngpu; g++)
			if (top_switch(t, t->gpus[g]) == (int)s)
				ng++;
		for (r = 0; r < t->nrail; r++)
			if (t->rail[r].rdma && below(t, t->rail[r].dev, (int)s))
				nr++;
		if (!nr || ng <= nr)
			continue;
		ev = json_object_new_object();
		json_object_object_add(ev, "gpus", json_object_new_int((int)ng));
		json_object_object_add(ev, "rails", json_object_new_int((int)nr));
		rc = aff_audit_add(a, "nic-shared", AFF_SEV_OK, t->dev[s].pci, devs, ev,
				   "nothing to fix if the node is built this way (AWS p4d): these GPUs share the rails' bandwidth in all-reduce",
				   "%zu GPUs share %zu rail NIC%s under the PCIe switch at %s",
				   ng, nr, nr == 1 ? "" : "s", t->dev[s].pci);
	}
	return rc;
}

/*
 * rails-asymmetric: NCCL pairs NICs by index across nodes and gives each GPU
 * its nearest NIC (NVIDIA/nccl#1591: it assumes a rail-optimized network,
 * the same NICs on each node). Where one socket's GPUs have more rails than
 * another's (4 rails for 4 GPUs on NUMA node 0, 2 for 4 on node 1), the GPUs
 * of the poorer node share rails or reach across the socket, and their
 * channels cannot meet the same rail on every node: information, the node is
 * built that way. Rails the plan leaves out (down, slow) do not count; a
 * socket with GPUs and no rail is gpu-nic-path's, not this.
 */
static int check_symmetry(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	struct json_object *ev, *nodes;
	size_t g, r, n = 0, k;
	struct { int node; int gpus, rails; } per[16];
	char line[512] = "";
	bool differ = false;

	if (!t->ngpu)
		return aff_audit_undecided(a, "rails-asymmetric", "no GPU or accelerator");
	if (!t->nrail)
		return aff_audit_undecided(a, "rails-asymmetric", "no rail NIC");
	for (g = 0; g < t->ngpu + t->nrail; g++) {
		bool gpu = g < t->ngpu;
		const struct aff_rail *rl = gpu ? NULL : &t->rail[g - t->ngpu];
		int node = aff_audit_dev_numa(t, gpu ? t->gpus[g] : rl->dev);

		if (!gpu && (!rl->rdma || rl->excl != AFF_EXCL_NONE))
			continue;
		if (node < 0)
			return aff_audit_undecided(a, "rails-asymmetric",
						   "the NUMA node of %s is not known",
						   gpu ? t->dev[t->gpus[g]].pci : aff_audit_rail_name(t, (int)(g - t->ngpu)));
		for (k = 0; k < n && per[k].node != node; k++)
			;
		if (k == n) {
			if (n == sizeof(per) / sizeof(per[0]))
				continue;
			per[n].node = node;
			per[n].gpus = per[n].rails = 0;
			n++;
		}
		if (gpu)
			per[k].gpus++;
		else
			per[k].rails++;
	}
	/*
	 * Compared among the nodes that hold GPUs: rails per GPU, as fractions.
	 * A socket without a rail is not this: its GPUs cross the socket to
	 * any rail, which gpu-nic-path says.
	 */
	for (k = 0, r = n; k < n; k++) {
		if (!per[k].gpus)
			continue;
		if (!per[k].rails)
			return 0;
		if (r < n && per[k].rails * per[r].gpus != per[r].rails * per[k].gpus)
			differ = true;
		if (r == n)
			r = k;
	}
	if (!differ)
		return 0;
	ev = json_object_new_object();
	nodes = json_object_new_array();
	for (k = 0; k < n; k++) {
		struct json_object *o;

		if (!per[k].gpus)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "numa", json_object_new_int(per[k].node));
		json_object_object_add(o, "gpus", json_object_new_int(per[k].gpus));
		json_object_object_add(o, "rails", json_object_new_int(per[k].rails));
		json_object_array_add(nodes, o);
		snprintf(line + strlen(line), sizeof(line) - strlen(line), "%sNUMA node %d has %d rail%s for %d GPU%s",
			 *line ? ", " : "", per[k].node, per[k].rails, per[k].rails == 1 ? "" : "s",
			 per[k].gpus, per[k].gpus == 1 ? "" : "s");
	}
	json_object_object_add(ev, "nodes", nodes);
	return aff_audit_add(a, "rails-asymmetric", AFF_SEV_OK, "node", NULL, ev,
			     "nothing to fix if the node is built this way; a fleet of such nodes pairs alike (railbind fleet's rails aspect), mixed with others it does not",
			     "rails are not symmetric across sockets (%s): NCCL pairs NICs by index across nodes and gives each GPU its nearest, so the GPUs with fewer rails share them or cross the socket",
			     line);
}

int aff_audit_nic(struct aff_audit *a)
{
	int rc = check_ports(a);

	if (!rc)
		rc = check_shared(a);
	return rc ? rc : check_symmetry(a);
}
