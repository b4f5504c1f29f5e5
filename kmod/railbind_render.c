// SPDX-License-Identifier: GPL-2.0
/*
 * The topology part of the text snapshot, from a model (railbind_topo.c):
 * hostbridge, dev and pair records, one per line, "<type> key=value ...",
 * values never contain spaces. It runs outside every lock, on a copy, and
 * reads no config space. The header, the peer records and the end record
 * are added per reader (railbind_main.c). The format is in ABI.md; keys
 * may be added, never renamed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/kernel.h>
#include <linux/pci.h>
#include <linux/sched.h>

#include "railbind.h"

static const char *railbind_speed(u16 code)
{
	static const char * const speeds[] = {
		"-", "2.5", "5.0", "8.0", "16.0", "32.0", "64.0",
	};

	return code < ARRAY_SIZE(speeds) ? speeds[code] : "?";
}

static const char *railbind_port_type(const struct railbind_mnode *n)
{
	if (n->pcie_type < 0)
		return (n->hdr_type & 0x7f) == PCI_HEADER_TYPE_BRIDGE ? "pci_bridge" : "pci";
	switch (n->pcie_type) {
	case PCI_EXP_TYPE_ENDPOINT:
		return "endpoint";
	case PCI_EXP_TYPE_LEG_END:
		return "legacy_endpoint";
	case PCI_EXP_TYPE_ROOT_PORT:
		return "root_port";
	case PCI_EXP_TYPE_UPSTREAM:
		return "upstream";
	case PCI_EXP_TYPE_DOWNSTREAM:
		return "downstream";
	case PCI_EXP_TYPE_PCI_BRIDGE:
		return "pcie_pci_bridge";
	case PCI_EXP_TYPE_PCIE_BRIDGE:
		return "pci_pcie_bridge";
	case PCI_EXP_TYPE_RC_END:
		return "rc_endpoint";
	case PCI_EXP_TYPE_RC_EC:
		return "rc_event_collector";
	default:
		return "other";
	}
}

static const char * const railbind_cfg_names[] = {
	[RAILBIND_CFG_OK] = "ok",
	[RAILBIND_CFG_SUSPENDED] = "suspended",
	[RAILBIND_CFG_RESET] = "reset",
	[RAILBIND_CFG_ERROR] = "error",
};

static void railbind_emit_link(struct railbind_buf *buf, const struct railbind_mnode *n)
{
	const struct railbind_cfg *c = &n->cfg;

	if (!n->has_link) {
		railbind_emit(buf, " link_speed=- link_width=- link_speed_cap=- link_width_cap=-");
		return;
	}
	if (!c->have_link) {
		railbind_emit(buf, " link_speed=? link_width=? link_speed_cap=? link_width_cap=?");
		return;
	}
	railbind_emit(buf, " link_speed=%s link_width=%u link_speed_cap=%s link_width_cap=%u",
		      railbind_speed(c->lnksta & PCI_EXP_LNKSTA_CLS),
		      (c->lnksta & PCI_EXP_LNKSTA_NLW) >> PCI_EXP_LNKSTA_NLW_SHIFT,
		      railbind_speed(c->lnkcap & PCI_EXP_LNKCAP_SLS),
		      (c->lnkcap & PCI_EXP_LNKCAP_MLW) >> 4);
}

static void railbind_emit_acs(struct railbind_buf *buf, const struct railbind_mnode *n)
{
	if (!n->has_acs)
		railbind_emit(buf, " acs_cap=- acs_ctl=- acs_redirect=-");
	else if (!n->cfg.have_acs)
		railbind_emit(buf, " acs_cap=? acs_ctl=? acs_redirect=?");
	else
		railbind_emit(buf, " acs_cap=0x%04x acs_ctl=0x%04x acs_redirect=%d",
			      n->cfg.acs_cap, n->cfg.acs_ctl, railbind_p2p_redirects(n));
}

static int railbind_depth(const struct railbind_model *m, int i)
{
	int d = 0;

	for (i = m->nodes[i].up; i >= 0; i = m->nodes[i].up)
		d++;
	return d;
}

/* The k-th bridge above node i (k = 1: its parent). */
static int railbind_above(const struct railbind_model *m, int i, int k)
{
	while (k--)
		i = m->nodes[i].up;
	return i;
}

/* parent, root_port and the whole chain from the root port down: no depth limit. */
static void railbind_emit_chain(struct railbind_buf *buf, const struct railbind_model *m,
				int i)
{
	int d = railbind_depth(m, i), k;

	if (!d) {
		railbind_emit(buf, " parent=- root_port=- chain=-");
		return;
	}
	railbind_emit(buf, " parent=%s root_port=%s chain=", m->nodes[railbind_above(m, i, 1)].name,
		      m->nodes[railbind_above(m, i, d)].name);
	for (k = d; k >= 1; k--)
		railbind_emit(buf, "%s%s", m->nodes[railbind_above(m, i, k)].name,
			      k > 1 ? "," : "");
}

static void railbind_emit_dev(struct railbind_buf *buf, const struct railbind_model *m,
			      int i)
{
	const struct railbind_mnode *n = &m->nodes[i];
	static const char * const kinds[] = { "gpu", "nic", "bridge" };

	railbind_emit(buf, "dev pci=%s kind=%s vendor=0x%04x device=0x%04x", n->name,
		      kinds[n->role], n->vendor, n->device);
	railbind_emit(buf, " class=0x%06x type=%s hostbridge=%s", n->class,
		      railbind_port_type(n), m->hbs[n->hb].name);
	railbind_emit_chain(buf, m, i);
	railbind_emit_acs(buf, n);
	railbind_emit_link(buf, n);
	railbind_emit(buf, " numa=%d cpus=%*pbl", n->numa, cpumask_pr_args(n->cpus));
	if (n->iommu_group >= 0)
		railbind_emit(buf, " iommu_group=%d", n->iommu_group);
	else
		railbind_emit(buf, " iommu_group=-");
	railbind_emit_id(buf, "physfn", n->physfn);
	railbind_emit(buf, " cfg=%s\n", railbind_cfg_names[n->cfg.state]);
}

static void railbind_emit_hostbridge(struct railbind_buf *buf, const struct railbind_mhb *hb)
{
	railbind_emit(buf, "hostbridge name=%s domain=%04x bus=%02x numa=%d", hb->name,
		      hb->domain, hb->bus, hb->numa);
	if (hb->fn0)
		railbind_emit(buf, " vendor=0x%04x device=0x%04x", hb->fn0_vendor,
			      hb->fn0_device);
	else
		railbind_emit(buf, " vendor=- device=-");
	if (hb->root)
		railbind_emit(buf, " p2p_root=0x%04x:0x%04x\n", hb->root_vendor,
			      hb->root_device);
	else
		railbind_emit(buf, " p2p_root=-\n");
}

/* Few calls per line: thousands of pairs make this the render's loop. */
static void railbind_emit_pair(struct railbind_buf *buf, const struct railbind_model *m,
			       int g, int n)
{
	struct railbind_p2p p;

	railbind_p2p_calc(m, g, n, &p);
	railbind_emit(buf, "pair gpu=%s nic=%s distance=%d redirected=%d map=%s",
		      m->nodes[g].name, m->nodes[n].name, p.distance, p.redirected, p.map);
	railbind_emit(buf, " common=%s acs_port=%s same_hostbridge=%d\n",
		      p.common >= 0 ? m->nodes[p.common].name : "-",
		      p.acs_port >= 0 ? m->nodes[p.acs_port].name : "-",
		      m->nodes[g].hb == m->nodes[n].hb);
}

/**
 * railbind_render_topo - the hostbridge, dev and pair records of a model
 * @m: the model
 * @buf: an initialised buffer, appended to
 *
 * Context: process, no lock held: O(nodes + GPUs x NICs x depth^2), with a
 * chance to reschedule every GPU row.
 * Return: 0 or the buffer's error.
 */
int railbind_render_topo(const struct railbind_model *m, struct railbind_buf *buf)
{
	int i, g;

	for (i = 0; i < m->nhbs; i++)
		railbind_emit_hostbridge(buf, &m->hbs[i]);
	for (i = 0; i < m->nnodes; i++)
		railbind_emit_dev(buf, m, i);
	for (g = 0; g < m->nnodes; g++) {
		if (m->nodes[g].role != RAILBIND_GPU)
			continue;
		for (i = 0; i < m->nnodes; i++)
			if (m->nodes[i].role == RAILBIND_NIC)
				railbind_emit_pair(buf, m, g, i);
		cond_resched();
	}
	return buf->err;
}
