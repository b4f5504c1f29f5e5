// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rbgen: the parametric machine for benchmarks and scale tests.
 *
 * N GPUs in switch groups (one GPU with K NICs, or K GPUs sharing one NIC),
 * groups spread in contiguous blocks over the NUMA nodes, each group behind
 * its own root port, up to 31 root ports per host bridge and one PCI domain
 * per host bridge. NIC names are deliberately not in bus order: group g
 * carries the names of group g^1, reversed, so code that pairs GPU i with
 * mlx5_i is caught out.
 */
#include <stdio.h>
#include <stdlib.h>

#include "rbgen.h"

static struct rb_node *endpoint(struct rb_machine *m, struct rb_node *sw, enum rb_kind kind,
				unsigned int domain, int bus)
{
	struct rb_node *n = rb_node_new(m, kind, 0);

	n->domain = domain;
	n->has_domain = true;
	n->bus = bus;
	n->dev = 0;
	n->fn = 0;
	n->class_id = kind == RB_GPU ? 0x0302 : 0x0207;
	n->vendor = kind == RB_GPU ? 0x10de : 0x15b3;
	n->device = kind == RB_GPU ? 0x2330 : 0x1021;
	n->rev = kind == RB_GPU ? 0xa1 : 0x00;
	n->rate[0] = 400;
	rb_node_append(sw, n);
	return n;
}

int rb_build_param(struct rb_machine *m, const struct rb_param *p)
{
	int per_group_gpus = p->gpus_per_nic ? p->gpus_per_nic : 1;
	int per_group_nics = p->gpus_per_nic ? 1 : p->nics_per_gpu;
	int ngroups = (p->gpus + per_group_gpus - 1) / per_group_gpus;
	struct rb_node *hb = NULL;
	int base = 0, ports = 0, hb_numa = -2, gpu = 0;
	unsigned int domain = 0;
	char name[64];

	if (per_group_gpus + per_group_nics > 32) {
		fprintf(stderr, "rbgen: at most 32 devices per switch group\n");
		return -1;
	}
	m->hostname = rb_xmalloc(32);
	snprintf(m->hostname, 32, "rbgen-%dgpu", p->gpus);
	m->packages = p->numa >= 2 && p->numa % 2 == 0 ? 2 : 1;
	m->numa_per_package = p->numa / m->packages;
	m->cores_per_numa = p->cores_per_numa;
	m->smt = p->smt;
	m->l3_per_numa = 1;
	m->has_cpus = true;

	for (int g = 0; g < ngroups; g++) {
		int numa = (int)((long)g * p->numa / ngroups);
		int ngpu = p->gpus - gpu < per_group_gpus ? p->gpus - gpu : per_group_gpus;
		int need = 2 + ngpu + per_group_nics;
		int partner = (g ^ 1) < ngroups ? g ^ 1 : g;
		struct rb_node *rp, *sw;

		if (!hb || numa != hb_numa || base + need - 1 > 0xff || ports == 31) {
			if (hb && domain == 0xffff) {
				fprintf(stderr, "rbgen: more host bridges than PCI domains\n");
				return -1;
			}
			hb = rb_node_new(m, RB_HOSTBRIDGE, 0);
			hb->numa = hb_numa = numa;
			hb->domain = m->roots ? ++domain : 0;
			hb->fixed_bus = 0;
			rb_root_append(m, hb);
			base = 1;
			ports = 0;
		}
		rp = rb_node_new(m, RB_BRIDGE, 0);
		rb_node_append(hb, rp);
		sw = rb_node_new(m, RB_SWITCH, 0);
		rb_node_append(rp, sw);
		for (int i = 0; i < ngpu; i++, gpu++)
			endpoint(m, sw, RB_GPU, hb->domain, base + 2 + i);
		for (int j = 0; j < per_group_nics; j++) {
			int bus = base + 2 + ngpu + j;
			struct rb_node *nic = endpoint(m, sw, RB_NIC, hb->domain, bus);

			snprintf(name, sizeof(name), "mlx5_%d",
				 partner * per_group_nics + per_group_nics - 1 - j);
			nic->name = rb_xstrdup(name);
			if (hb->domain)
				snprintf(name, sizeof(name), "ibP%up%ds0", hb->domain, bus);
			else
				snprintf(name, sizeof(name), "ibp%ds0", bus);
			nic->netdev = rb_xstrdup(name);
		}
		base += need;
		ports++;
	}
	return 0;
}
