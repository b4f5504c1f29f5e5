// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Which bridges are PCIe switches, and which switch each device hangs from.
 *
 * A switch is an upstream port with its downstream ports; path classes count
 * it once, at its upstream port. Where the PCIe port types are known (config
 * space, railbind.ko, a snapshot's RailbindPortType) that is what the types
 * say. Plain hwloc XML has no types: there NCCL's own rule applies, which
 * works upward from the device (src/graph/xml.cc, ncclTopoGetXmlFromSys):
 * skip the parent bridge (a downstream or root port), keep the grandparent
 * (the upstream port), and repeat from there until the root complex. Counting
 * from the host bridge down agrees with it only when a root port sits above
 * every switch; in cloud VMs a switch's upstream port often hangs right off
 * the host bridge, and top-down counting splits one switch in two.
 *
 * NCCL never reads port types, so what NCCL computes (nccl_up) is always its
 * rule, and it then flattens Broadcom PEX switches that present themselves as
 * two levels (ncclTopoFlattenBcmSwitches): a second-level switch of the same
 * generation under a first-level one is merged into it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static const char *const port_names[] = {
	[AFF_PORT_UNKNOWN] = NULL,
	[AFF_PORT_ROOT] = "root",
	[AFF_PORT_UPSTREAM] = "upstream",
	[AFF_PORT_DOWNSTREAM] = "downstream",
	[AFF_PORT_ENDPOINT] = "endpoint",
	[AFF_PORT_LEGACY] = "legacy",
	[AFF_PORT_RCIEP] = "rciep",
	[AFF_PORT_BRIDGE] = "bridge",
};

const char *aff_port_type_name(enum aff_port_type type)
{
	if ((unsigned)type >= sizeof(port_names) / sizeof(port_names[0]))
		return NULL;
	return port_names[type];
}

int aff_port_type_from_name(const char *name, enum aff_port_type *out)
{
	size_t i;

	for (i = 1; i < sizeof(port_names) / sizeof(port_names[0]); i++)
		if (name && !strcmp(name, port_names[i])) {
			*out = (enum aff_port_type)i;
			return 0;
		}
	return -EINVAL;
}

static bool is_bridge(const struct aff_topo *t, int i)
{
	return i >= 0 && t->dev[i].type == AFF_DEV_BRIDGE;
}

/* NCCL's rule: the grandparent when parent and grandparent are bridges. */
static int nccl_rule(const struct aff_topo *t, int i)
{
	int p = t->dev[i].parent;

	if (!is_bridge(t, p) || !is_bridge(t, t->dev[p].parent))
		return -1;
	return t->dev[p].parent;
}

/* Whether every bridge between device i and its root complex has a type. */
static bool typed_chain(const struct aff_topo *t, int i)
{
	bool any = false;

	for (i = t->dev[i].parent; is_bridge(t, i); i = t->dev[i].parent) {
		if (t->dev[i].port_type == AFF_PORT_UNKNOWN)
			return false;
		any = true;
	}
	return any;
}

static int nearest_upstream(const struct aff_topo *t, int i)
{
	for (i = t->dev[i].parent; is_bridge(t, i); i = t->dev[i].parent)
		if (t->dev[i].port_type == AFF_PORT_UPSTREAM)
			return i;
	return -1;
}

/*
 * The generation of a Broadcom PEX switch presenting itself as two levels
 * (level 0 the top, 1 the second), 0 for anything else. Gen4 (PEX88000,
 * device c010) marks both levels with subsystem a0xx; Gen5 (PEX89000, device
 * c030) marks the top 0xxx and the second level 1xxx. Missing ids count as
 * 0, as NCCL reads them.
 */
static int bcm_gen(const struct aff_dev *d, int level)
{
	unsigned sub = d->subdevice > 0 ? (unsigned)d->subdevice : 0;

	if (d->vendor != 0x1000 || d->subvendor != 0x1000)
		return 0;
	if (d->device == 0xc010 && (sub & 0xf000) == 0xa000)
		return 4;
	if (d->device == 0xc030 && (sub & 0xf000) == (unsigned)level * 0x1000)
		return 5;
	return 0;
}

/*
 * The flattening, in one pass over the devices in the order the loaders add
 * them (a parent before its children). A second-level switch merges into its
 * first-level parent unless that parent was itself merged: NCCL merges each
 * first-level switch's own children once, never its grandchildren.
 */
static int flatten_bcm(struct aff_topo *t)
{
	int *merged_into = malloc((t->ndev + 1) * sizeof(int));
	size_t i;

	if (!merged_into)
		return -ENOMEM;
	for (i = 0; i < t->ndev; i++)
		merged_into[i] = -1;
	for (i = 0; i < t->ndev; i++) {
		struct aff_dev *d = &t->dev[i];
		int p = d->nccl_up, gen;

		if (p < 0)
			continue;
		if (merged_into[p] >= 0) {
			d->nccl_up = merged_into[p];
			continue;
		}
		gen = bcm_gen(&t->dev[p], 0);
		if (gen && d->type == AFF_DEV_BRIDGE && bcm_gen(d, 1) == gen)
			merged_into[i] = p;
	}
	free(merged_into);
	return 0;
}

int aff_find_switches(struct aff_topo *t)
{
	size_t i;

	for (i = 0; i < t->ndev; i++) {
		struct aff_dev *d = &t->dev[i];
		int p = d->parent;

		d->is_switch = false;
		if (d->type == AFF_DEV_HOSTBRIDGE) {
			d->up = d->nccl_up = -1;
		} else if (t->src == AFF_SRC_NCCL) {
			/* Every <pci> with children already is a switch. */
			d->up = d->nccl_up = is_bridge(t, p) ? p : -1;
		} else {
			d->nccl_up = nccl_rule(t, (int)i);
			d->up = typed_chain(t, (int)i) ? nearest_upstream(t, (int)i) :
							 d->nccl_up;
		}
	}
	for (i = 0; i < t->ndev; i++)
		if (t->dev[i].up >= 0)
			t->dev[t->dev[i].up].is_switch = true;
	return flatten_bcm(t);
}
