// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The PCIe checks: gpu-nic-path (the class of each rank's pair), acs-redirect
 * (audit_acs.c: ACS against what each complex needs) and
 * link-downtrained (a link of the pair trained below what both ends can do).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "audit.h"


static struct json_object *jstr(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static int check_paths(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	struct aff_audit_pair p;
	size_t k;
	int rc;

	if (!a->plan)
		return aff_audit_undecided(a, "gpu-nic-path", "no GPU or accelerator");
	if (!t->nrail)
		return aff_audit_undecided(a, "gpu-nic-path", "no rail NIC");
	for (k = 0; k < a->plan->nrank; k++) {
		const char *devs[3];
		struct json_object *ev;
		const char *cls;

		if (aff_audit_pair(a, k, &p) < 0 || p.nic < 0 || p.path <= AFF_PATH_PXB)
			continue;
		/* Its nearest rail is there but left out: nic-port-down's finding. */
		if (a->plan->rank[k].lost.n)
			continue;
		cls = aff_path_name(p.path);
		devs[0] = t->dev[p.gpu].pci;
		devs[1] = t->dev[p.nic].pci;
		devs[2] = NULL;
		ev = json_object_new_object();
		json_object_object_add(ev, "path", jstr(cls));
		json_object_object_add(ev, "nic", jstr(aff_audit_rail_name(t, p.rail)));
		json_object_object_add(ev, "local_rank", json_object_new_int((int)k));
		if (p.path == AFF_PATH_PHB)
			rc = aff_audit_add(a, "gpu-nic-path", AFF_SEV_WARN, devs[0], devs, ev,
					   "put the GPU and its NIC under one PCIe switch (same riser or switch board); until then GPUDirect RDMA crosses the root complex",
					   "GPU %s reaches its closest rail %s only through the host bridge (PHB)",
					   devs[0], aff_audit_rail_name(t, p.rail));
		else
			rc = aff_audit_add(a, "gpu-nic-path", AFF_SEV_FAIL, devs[0], devs, ev,
					   "install a rail NIC on the GPU's own socket (ideally its PCIe switch) or move the GPU; NCCL will otherwise stage through host memory or cross the inter-socket link",
					   "GPU %s has no rail NIC nearer than %s: its closest, %s, is %s",
					   devs[0], cls, aff_audit_rail_name(t, p.rail),
					   p.path == AFF_PATH_SYS ? "across NUMA nodes (SYS)" :
					   "on another root complex (NODE)");
		if (rc < 0)
			return rc;
	}
	return 0;
}

struct link_state {
	int *seen;
	bool any;		/* some link was judged */
	bool unknown;		/* some link could not be read */
};

/* The link between device i and the port above it, once. */
static int check_link(struct aff_audit *a, struct link_state *ls, int i)
{
	const struct aff_topo *t = a->topo;
	const struct aff_dev *d = &t->dev[i], *up;
	const char *devs[3] = { d->pci, NULL, NULL };
	double cap_speed = d->link_speed_cap;
	int cap_width = d->link_width_cap;
	struct json_object *ev;
	char cur[32], cap[32];
	bool width, speed;

	if (ls->seen[i])
		return 0;
	ls->seen[i] = 1;
	if (d->unreadable & AFF_UNREADABLE_LINK)
		ls->unknown = true;
	/* A port's own values describe the link below it, judged at that end. */
	if (d->type != AFF_DEV_ENDPOINT && !d->is_switch)
		return 0;
	if (!(d->link_speed > 0 && d->link_width > 0 && d->link_speed_cap > 0 &&
	      d->link_width_cap > 0))
		return 0;
	ls->any = true;
	up = d->parent >= 0 && t->dev[d->parent].type == AFF_DEV_BRIDGE ?
	     &t->dev[d->parent] : NULL;
	if (up && up->link_speed_cap > 0 && up->link_speed_cap < cap_speed)
		cap_speed = up->link_speed_cap;
	if (up && up->link_width_cap > 0 && up->link_width_cap < cap_width)
		cap_width = up->link_width_cap;
	width = d->link_width < cap_width;
	speed = d->link_speed + 0.01 < cap_speed;
	if (!width && !speed)
		return 0;
	devs[1] = up ? up->pci : NULL;
	snprintf(cur, sizeof(cur), "%.1f GT/s x%d", d->link_speed, d->link_width);
	snprintf(cap, sizeof(cap), "%.1f GT/s x%d", cap_speed, cap_width);
	ev = json_object_new_object();
	json_object_object_add(ev, "speed", json_object_new_double(d->link_speed));
	json_object_object_add(ev, "width", json_object_new_int(d->link_width));
	json_object_object_add(ev, "speed_cap", json_object_new_double(cap_speed));
	json_object_object_add(ev, "width_cap", json_object_new_int(cap_width));
	json_object_object_add(ev, "port", up ? jstr(up->pci) : NULL);
	/* Lost lanes are hardware; a lower speed alone may be idle power saving. */
	if (width)
		return aff_audit_add(a, "link-downtrained", AFF_SEV_FAIL, d->pci, devs, ev,
				     "reseat the card or riser, check the slot's bifurcation setting in the BIOS, and replace the cable or riser if it stays narrow",
				     "the PCIe link of %s runs at %s, both ends support %s",
				     d->pci, cur, cap);
	return aff_audit_add(a, "link-downtrained", AFF_SEV_WARN, d->pci, devs, ev,
			     "re-check under load (GPUs lower the link speed when idle); if it stays low, check the BIOS PCIe speed setting and the riser",
			     "the PCIe link of %s runs at %s, both ends support %s",
			     d->pci, cur, cap);
}

/* An NCCL file with link attributes: NCCL writes the maxima (src/graph/xml.cc). */
static bool nccl_links(const struct aff_topo *t)
{
	size_t i;

	for (i = 0; t->src == AFF_SRC_NCCL && i < t->ndev; i++)
		if (t->dev[i].link_speed > 0)
			return true;
	return false;
}

/* Each device and port from a GPU or NIC of the plan up to its root complex. */
static int check_links(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	struct link_state ls = { 0 };
	size_t k, r;
	int rc = 0, i;

	if (!a->plan)
		return aff_audit_undecided(a, "link-downtrained", "no GPU or accelerator");
	ls.seen = calloc(t->ndev, sizeof(*ls.seen));
	if (!ls.seen)
		return -ENOMEM;
	for (k = 0; k < a->plan->nrank && !rc; k++) {
		const struct aff_rank *rk = &a->plan->rank[k];

		for (i = t->gpus[rk->gpu]; i >= 0 && !rc; i = t->dev[i].parent)
			rc = check_link(a, &ls, i);
		for (r = 0; r < rk->rails.n && !rc; r++)
			for (i = t->rail[rk->rails.rail[r]].dev; i >= 0 && !rc;
			     i = t->dev[i].parent)
				rc = check_link(a, &ls, i);
	}
	free(ls.seen);
	if (rc < 0)
		return rc;
	if (ls.unknown)
		return aff_audit_undecided(a, "link-downtrained",
					   "the PCIe link state of a GPU, NIC or port could not be read");
	if (!ls.any)
		return aff_audit_undecided(a, "link-downtrained", "%s",
					   nccl_links(t) ?
					   "the source's PCIe link speeds and widths are each link's maximum (NCCL's topology writes max_link_speed and max_link_width), not the current link" :
					   "the source has no PCIe link speeds and widths");
	return 0;
}

int aff_audit_pcie(struct aff_audit *a)
{
	int rc = check_paths(a);

	if (!rc)
		rc = aff_audit_acs(a);
	if (!rc)
		rc = check_links(a);
	return rc;
}
