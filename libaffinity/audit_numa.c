// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The NUMA checks: numa-unknown (firmware gave a GPU or NIC no NUMA node on a
 * multi-NUMA machine) and numa-mismatch (a GPU and its NIC share a PCIe
 * switch or root complex yet firmware puts them on different NUMA nodes, so
 * one of them is misreported and the rank's CPUs follow the wrong one).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <json-c/json.h>

#include "audit.h"

static size_t cpu_nodes(const struct aff_topo *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->nnuma; i++)
		if (!hwloc_bitmap_iszero(t->numa[i].cpuset))
			n++;
	return n;
}

static int unknown_one(struct aff_audit *a, int dev, const char *what, const char *name)
{
	const struct aff_dev *d = &a->topo->dev[dev];
	const char *devs[2] = { d->pci, NULL };
	struct json_object *ev = json_object_new_object();

	json_object_object_add(ev, "numa_node", json_object_new_int(-1));
	return aff_audit_add(a, "numa-unknown", AFF_SEV_FAIL, d->pci, devs, ev,
			     "fix the firmware's ACPI _PXM/SRAT for this slot (BIOS update or NUMA/SNC setting); meanwhile railbind leaves the rank's CPUs unnarrowed rather than guess",
			     "%s %s%s%s has no NUMA node (sysfs numa_node is -1) on a machine with %zu NUMA nodes",
			     what, d->pci, name ? " " : "", name ? name : "",
			     cpu_nodes(a->topo));
}

static int check_unknown(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	bool any = false, unknown = false;
	size_t g, r;
	int rc = 0;

	if (!t->ngpu && !t->nrail)
		return aff_audit_undecided(a, "numa-unknown", "no GPU and no rail NIC");
	for (g = 0; g < t->ngpu && !rc; g++) {
		const struct aff_dev *d = &t->dev[t->gpus[g]];

		any |= d->numa_raw != INT_MIN;
		unknown |= (d->unreadable & AFF_UNREADABLE_NUMA) != 0;
		if (d->numa_raw == -1 && cpu_nodes(t) > 1)
			rc = unknown_one(a, t->gpus[g], "GPU", NULL);
	}
	for (r = 0; r < t->nrail && !rc; r++) {
		const struct aff_dev *d = &t->dev[t->rail[r].dev];

		any |= d->numa_raw != INT_MIN;
		unknown |= (d->unreadable & AFF_UNREADABLE_NUMA) != 0;
		if (d->numa_raw == -1 && cpu_nodes(t) > 1)
			rc = unknown_one(a, t->rail[r].dev, "NIC", aff_audit_rail_name(t, (int)r));
	}
	if (rc < 0)
		return rc;
	if (!any)
		return aff_audit_undecided(a, "numa-unknown",
					   "the source has no sysfs numa_node values");
	if (unknown)
		return aff_audit_undecided(a, "numa-unknown",
					   "the numa_node of a GPU or NIC could not be read");
	return 0;
}

static int check_mismatch(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	struct aff_audit_pair p;
	size_t k;
	int rc = 0;

	if (!a->plan)
		return aff_audit_undecided(a, "numa-mismatch", "no GPU or accelerator");
	if (!t->nrail)
		return aff_audit_undecided(a, "numa-mismatch", "no rail NIC");
	for (k = 0; k < a->plan->nrank && !rc; k++) {
		const char *devs[3];
		struct json_object *ev;
		int gn, nn;

		/* Across sockets (SYS) different nodes are right: gpu-nic-path's case. */
		if (aff_audit_pair(a, k, &p) < 0 || p.nic < 0 || p.path >= AFF_PATH_SYS)
			continue;
		gn = aff_audit_dev_numa(t, p.gpu);
		nn = aff_audit_dev_numa(t, p.nic);
		if (gn < 0 || nn < 0 || gn == nn)
			continue;
		devs[0] = t->dev[p.gpu].pci;
		devs[1] = t->dev[p.nic].pci;
		devs[2] = NULL;
		ev = json_object_new_object();
		json_object_object_add(ev, "gpu_numa", json_object_new_int(gn));
		json_object_object_add(ev, "nic_numa", json_object_new_int(nn));
		json_object_object_add(ev, "path", json_object_new_string(aff_path_name(p.path)));
		rc = aff_audit_add(a, "numa-mismatch", AFF_SEV_WARN, devs[0], devs, ev,
				   "one of the two numa_node values is wrong: check the firmware's _PXM for these slots (BIOS update, NPS/SNC setting); bind the rank to the node its root complex really sits on",
				   "GPU %s (NUMA %d) and its rail %s (NUMA %d) are %s on PCIe yet on different NUMA nodes",
				   devs[0], gn, aff_audit_rail_name(t, p.rail), nn,
				   p.path <= AFF_PATH_PXB ? "under one switch" :
				   p.path == AFF_PATH_PHB ? "under one root complex" :
				   "on one NUMA node's root complexes");
	}
	return rc;
}

int aff_audit_numa(struct aff_audit *a)
{
	int rc = check_unknown(a);

	return rc ? rc : check_mismatch(a);
}
