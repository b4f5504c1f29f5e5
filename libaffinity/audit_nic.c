// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The NIC checks: nic-port-down (a planned rail's RDMA port not ACTIVE, or
 * slower than the other planned rails) and nic-shared (more GPUs than rails
 * under one PCIe switch: information, AWS p4d is built that way).
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
	for (k = 0; k < a->plan->nrank; k++)
		for (r = 0; r < a->plan->rank[k].rails.n; r++)
			used[a->plan->rank[k].rails.rail[r]] = 1;
	return used;
}

static int port_finding(struct aff_audit *a, int r, int best)
{
	const struct aff_topo *t = a->topo;
	const struct aff_rail *rl = &t->rail[r];
	const char *pci = t->dev[rl->dev].pci, *name = aff_audit_rail_name(t, r);
	const char *devs[2] = { pci, NULL };
	struct json_object *ev = json_object_new_object();

	json_object_object_add(ev, "nic", json_object_new_string(name));
	json_object_object_add(ev, "port", json_object_new_int(rl->port));
	json_object_object_add(ev, "state", rl->port_state ?
			       json_object_new_string(rl->port_state) : NULL);
	json_object_object_add(ev, "rate", rl->rate ? json_object_new_int(rl->rate) : NULL);
	json_object_object_add(ev, "peer_rate", best ? json_object_new_int(best) : NULL);
	if (rl->port_state && strcmp(rl->port_state, "ACTIVE"))
		return aff_audit_add(a, "nic-port-down", AFF_SEV_FAIL, name, devs, ev,
				     "check the cable, the switch port and the subnet manager (ibstat, ibportstate); ranks on this rail cannot reach the network",
				     "RDMA port %s/%d (%s) is %s, not ACTIVE", name, rl->port,
				     pci, rl->port_state);
	return aff_audit_add(a, "nic-port-down", AFF_SEV_WARN, name, devs, ev,
			     "check the cable and the switch port speed (ibstat): the slowest rail paces every all-reduce",
			     "RDMA port %s/%d (%s) runs at %d Gb/s, other rails at %d Gb/s", name,
			     rl->port, pci, rl->rate, best);
}

static int check_ports(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	bool any = false;
	int *used, best = 0, rc = 0;
	size_t r;

	if (!a->plan)
		return aff_audit_undecided(a, "nic-port-down", "no GPU or accelerator");
	used = planned_rails(a);
	if (!used)
		return -ENOMEM;
	for (r = 0; r < t->nrail; r++)
		if (used[r] && t->rail[r].rdma && t->rail[r].port_state &&
		    !strcmp(t->rail[r].port_state, "ACTIVE") && t->rail[r].rate > best)
			best = t->rail[r].rate;
	for (r = 0; r < t->nrail && !rc; r++) {
		const struct aff_rail *rl = &t->rail[r];

		if (!used[r] || !rl->rdma || !rl->port_state)
			continue;
		any = true;
		if (strcmp(rl->port_state, "ACTIVE") || (rl->rate && rl->rate < best))
			rc = port_finding(a, (int)r, best);
	}
	free(used);
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

int aff_audit_nic(struct aff_audit *a)
{
	int rc = check_ports(a);

	return rc ? rc : check_shared(a);
}
