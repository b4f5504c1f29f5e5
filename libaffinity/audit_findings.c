// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the audit's checks share: the check ids and severities, adding a
 * finding or an undecided check, and the facts several checks (and verify)
 * look at: a rank's pair, the bridges between two devices, a rail's name, a
 * device's NUMA node. Apart from the frame (audit.c), which runs the checks,
 * so that the checks depend on this file and not back on their caller.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "audit.h"

const char *const aff_audit_check_ids[AFF_AUDIT_NCHECKS] = {
	"gpu-nic-path", "numa-unknown", "numa-mismatch", "acs-redirect",
	"link-downtrained", "peer-memory", "iommu-translation", "nic-port-down",
	"nic-shared", "peer-cross-path", "link-flapping", "pcie-errors", "port-flapping",
	"transceiver",
	"rails-asymmetric",
	"slurm-gres",
	"ib-subnet-manager", "rail-link", "roce-gid", "rail-mtu", "rail-errors",
	"roce-lossless", "pause-storm",
	"gdr-readiness",
};

static const char *const sev_names[] = { "ok", "warn", "fail", "unknown" };

AFF_EXPORT const char *aff_sev_name(enum aff_sev s)
{
	return (unsigned)s < 4 ? sev_names[s] : "unknown";
}

AFF_EXPORT enum aff_sev aff_sev_from_name(const char *s)
{
	int i;

	for (i = 0; s && i < 4; i++)
		if (!strcmp(sev_names[i], s))
			return (enum aff_sev)i;
	return AFF_SEV_UNKNOWN;
}

int aff_status_exit_code(struct json_object *doc)
{
	struct json_object *v;

	if (!json_object_object_get_ex(doc, "status", &v))
		return AFF_SEV_UNKNOWN;
	return (int)aff_sev_from_name(json_object_get_string(v));
}

static int check_index(const char *id)
{
	int i;

	for (i = 0; i < AFF_AUDIT_NCHECKS; i++)
		if (!strcmp(aff_audit_check_ids[i], id))
			return i;
	return -1;
}

struct json_object *aff_audit_str(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

int aff_audit_add(struct aff_audit *a, const char *id, enum aff_sev sev,
		  const char *subject, const char *const *devices,
		  struct json_object *evidence, const char *remedy, const char *fmt, ...)
{
	struct json_object *c = json_object_new_object(), *devs = json_object_new_array();
	int k = check_index(id);
	char msg[1024];
	va_list ap;

	if (!c || !devs || k < 0) {
		json_object_put(c);
		json_object_put(devs);
		json_object_put(evidence);
		return k < 0 ? -EINVAL : -ENOMEM;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (; devices && *devices; devices++)
		if (**devices)
			json_object_array_add(devs, json_object_new_string(*devices));
	json_object_object_add(c, "id", json_object_new_string(id));
	json_object_object_add(c, "severity", json_object_new_string(aff_sev_name(sev)));
	json_object_object_add(c, "subject", aff_audit_str(subject));
	json_object_object_add(c, "message", json_object_new_string(msg));
	json_object_object_add(c, "remedy", aff_audit_str(remedy));
	json_object_object_add(c, "devices", devs);
	json_object_object_add(c, "evidence", evidence ? evidence : json_object_new_object());
	json_object_array_add(a->checks, c);
	if (sev > a->check_sev[k] || a->check_sev[k] == AFF_SEV_UNKNOWN)
		a->check_sev[k] = sev;
	a->check_found[k]++;
	return 0;
}

int aff_audit_undecided(struct aff_audit *a, const char *id, const char *fmt, ...)
{
	struct json_object *u = json_object_new_object();
	char msg[512];
	va_list ap;

	if (!u)
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(u, "id", json_object_new_string(id));
	json_object_object_add(u, "reason", json_object_new_string(msg));
	json_object_array_add(a->undecided, u);
	return 0;
}

int aff_audit_pair(const struct aff_audit *a, size_t rank, struct aff_audit_pair *p)
{
	const struct aff_rank *r;

	if (!a->plan || rank >= a->plan->nrank)
		return -ERANGE;
	r = &a->plan->rank[rank];
	p->gpu = a->topo->gpus[r->gpu];
	p->rail = r->rails.n ? r->rails.rail[0] : -1;
	p->nic = p->rail >= 0 ? a->topo->rail[p->rail].dev : -1;
	p->path = p->nic >= 0 ? aff_topo_path(a->topo, (size_t)r->gpu, (size_t)p->rail) :
				AFF_PATH_NONE;
	return 0;
}

size_t aff_audit_path_bridges(const struct aff_topo *t, int x, int y, int *out, size_t max)
{
	size_t n = 0;
	int i, j;

	/* x's ancestors up to (and including) the first one y also has. */
	for (i = t->dev[x].parent; i >= 0; i = t->dev[i].parent) {
		bool common = false;

		for (j = t->dev[y].parent; j >= 0; j = t->dev[j].parent)
			if (j == i)
				common = true;
		if (t->dev[i].type == AFF_DEV_BRIDGE && n < max)
			out[n++] = i;
		if (common)
			break;
	}
	for (j = t->dev[y].parent; j >= 0; j = t->dev[j].parent) {
		bool mine = false;

		for (i = t->dev[x].parent; i >= 0; i = t->dev[i].parent)
			if (i == j)
				mine = true;
		if (mine)
			break;
		if (t->dev[j].type == AFF_DEV_BRIDGE && n < max)
			out[n++] = j;
	}
	return n;
}

const char *aff_audit_rail_name(const struct aff_topo *t, int rail)
{
	const struct aff_rail *r = &t->rail[rail];

	if (r->name && *r->name)
		return r->name;
	if (t->dev[r->dev].netdev)
		return t->dev[r->dev].netdev;
	return t->dev[r->dev].pci;
}

int aff_audit_dev_numa(const struct aff_topo *t, int dev)
{
	const struct aff_dev *d = &t->dev[dev];

	if (d->numa_raw >= 0)
		return d->numa_raw;
	if (d->numa_raw == -1)
		return -1;
	if (d->loc >= 0 && t->loc[d->loc].known)
		return t->loc[d->loc].numa;
	return -1;
}
