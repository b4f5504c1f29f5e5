// SPDX-License-Identifier: GPL-2.0
/*
 * The text snapshot: one record per line, "<type> key=value ...", values
 * never contain spaces. The format is in ABI.md; keys may be added, never
 * renamed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <generated/utsrelease.h>
#include <linux/cpumask.h>
#include <linux/iommu.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/topology.h>

#include "railbind.h"

void railbind_emit(struct railbind_buf *buf, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (buf->err)
		return;
	for (;;) {
		size_t room = buf->size - buf->len;
		char *nd;
		size_t ns;

		va_start(ap, fmt);
		n = vsnprintf(buf->data ? buf->data + buf->len : NULL, room, fmt, ap);
		va_end(ap);
		if ((size_t)n < room) {
			buf->len += n;
			return;
		}
		ns = max_t(size_t, buf->size * 2, buf->len + n + 1);
		ns = max_t(size_t, ns, PAGE_SIZE);
		nd = kvmalloc(ns, GFP_KERNEL);
		if (!nd) {
			buf->err = -ENOMEM;
			return;
		}
		if (buf->data)
			memcpy(nd, buf->data, buf->len);
		kvfree(buf->data);
		buf->data = nd;
		buf->size = ns;
	}
}

static const char *railbind_speed(u16 code)
{
	static const char * const speeds[] = {
		"-", "2.5", "5.0", "8.0", "16.0", "32.0", "64.0",
	};

	return code < ARRAY_SIZE(speeds) ? speeds[code] : "?";
}

static const char *railbind_port_type(struct pci_dev *pdev)
{
	if (!pci_is_pcie(pdev))
		return pdev->hdr_type == PCI_HEADER_TYPE_BRIDGE ? "pci_bridge" : "pci";
	switch (pci_pcie_type(pdev)) {
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

static bool railbind_has_link(struct pci_dev *pdev)
{
	int type;

	if (!pci_is_pcie(pdev))
		return false;
	type = pci_pcie_type(pdev);
	return type != PCI_EXP_TYPE_RC_END && type != PCI_EXP_TYPE_RC_EC;
}

static void railbind_emit_link(struct railbind_buf *buf, struct pci_dev *pdev)
{
	u16 sta = 0;
	u32 cap = 0;

	if (!railbind_has_link(pdev)) {
		railbind_emit(buf, " link_speed=- link_width=- link_speed_cap=- link_width_cap=-");
		return;
	}
	pcie_capability_read_word(pdev, PCI_EXP_LNKSTA, &sta);
	pcie_capability_read_dword(pdev, PCI_EXP_LNKCAP, &cap);
	railbind_emit(buf, " link_speed=%s link_width=%u link_speed_cap=%s link_width_cap=%u",
		      railbind_speed(sta & PCI_EXP_LNKSTA_CLS),
		      (sta & PCI_EXP_LNKSTA_NLW) >> PCI_EXP_LNKSTA_NLW_SHIFT,
		      railbind_speed(cap & PCI_EXP_LNKCAP_SLS),
		      (cap & PCI_EXP_LNKCAP_MLW) >> 4);
}

static void railbind_emit_acs(struct railbind_buf *buf, struct pci_dev *pdev)
{
	int pos = pci_find_ext_capability(pdev, PCI_EXT_CAP_ID_ACS);
	u16 cap, ctl;

	if (!pos) {
		railbind_emit(buf, " acs_cap=- acs_ctl=- acs_redirect=-");
		return;
	}
	pci_read_config_word(pdev, pos + PCI_ACS_CAP, &cap);
	pci_read_config_word(pdev, pos + PCI_ACS_CTRL, &ctl);
	railbind_emit(buf, " acs_cap=0x%04x acs_ctl=0x%04x acs_redirect=%d", cap, ctl,
		      railbind_acs_redirects(pdev));
}

static void railbind_emit_chain(struct railbind_buf *buf, struct pci_dev *pdev)
{
	struct pci_dev *up, *chain[32];
	int n = 0;

	for (up = pci_upstream_bridge(pdev); up && n < ARRAY_SIZE(chain);
	     up = pci_upstream_bridge(up))
		chain[n++] = up;
	railbind_emit(buf, " parent=%s", n ? pci_name(chain[0]) : "-");
	railbind_emit(buf, " root_port=%s", n ? pci_name(chain[n - 1]) : "-");
	railbind_emit(buf, " chain=");
	if (!n)
		railbind_emit(buf, "-");
	while (n--)
		railbind_emit(buf, "%s%s", pci_name(chain[n]), n ? "," : "");
}

static void railbind_emit_dev(struct railbind_buf *buf, struct pci_dev *pdev,
			      const char *kind)
{
	struct pci_host_bridge *hb = pci_find_host_bridge(pdev->bus);
	const struct cpumask *mask;
	struct iommu_group *grp;
	int node = dev_to_node(&pdev->dev);

	railbind_emit(buf, "dev pci=%s kind=%s vendor=0x%04x device=0x%04x class=0x%06x type=%s",
		      pci_name(pdev), kind, pdev->vendor, pdev->device, pdev->class,
		      railbind_port_type(pdev));
	railbind_emit(buf, " hostbridge=%s", hb ? dev_name(&hb->dev) : "-");
	railbind_emit_chain(buf, pdev);
	railbind_emit_acs(buf, pdev);
	railbind_emit_link(buf, pdev);
	/* As sysfs local_cpus does: the bus's mask when the node is unknown. */
	mask = node == NUMA_NO_NODE ? cpumask_of_pcibus(pdev->bus) : cpumask_of_node(node);
	railbind_emit(buf, " numa=%d cpus=%*pbl", node, cpumask_pr_args(mask));
	grp = iommu_group_get(&pdev->dev);
	if (grp) {
		railbind_emit(buf, " iommu_group=%d", iommu_group_id(grp));
		iommu_group_put(grp);
	} else {
		railbind_emit(buf, " iommu_group=-");
	}
	railbind_emit(buf, "\n");
}

static int railbind_cmp_dev(const void *a, const void *b)
{
	u32 ia = railbind_pci_id(*(struct pci_dev * const *)a);
	u32 ib = railbind_pci_id(*(struct pci_dev * const *)b);

	return ia < ib ? -1 : ia > ib;
}

static int railbind_cmp_hb(const void *a, const void *b)
{
	const struct pci_host_bridge *ha = *(struct pci_host_bridge * const *)a;
	const struct pci_host_bridge *hb = *(struct pci_host_bridge * const *)b;
	u32 ia = (u32)pci_domain_nr(ha->bus) << 8 | ha->bus->number;
	u32 ib = (u32)pci_domain_nr(hb->bus) << 8 | hb->bus->number;

	return ia < ib ? -1 : ia > ib;
}

static bool railbind_seen(void **arr, int n, void *p)
{
	int i;

	for (i = 0; i < n; i++)
		if (arr[i] == p)
			return true;
	return false;
}

/* Every bridge above a tracked device, once, in PCI address order. */
static int railbind_collect(struct pci_dev ***bridges, int *nbridges,
			    struct pci_host_bridge ***hbs, int *nhbs)
{
	struct railbind_dev *rd;
	struct pci_dev *up;
	int cap = 0, nb = 0, nh = 0;

	list_for_each_entry(rd, &railbind_devs, node)
		for (cap++, up = pci_upstream_bridge(rd->pdev); up;
		     up = pci_upstream_bridge(up))
			cap++;
	*bridges = kcalloc(cap + 1, sizeof(**bridges), GFP_KERNEL);
	*hbs = kcalloc(cap + 1, sizeof(**hbs), GFP_KERNEL);
	if (!*bridges || !*hbs) {
		kfree(*bridges);
		kfree(*hbs);
		return -ENOMEM;
	}
	list_for_each_entry(rd, &railbind_devs, node) {
		struct pci_host_bridge *hb = pci_find_host_bridge(rd->pdev->bus);

		if (hb && !railbind_seen((void **)*hbs, nh, hb))
			(*hbs)[nh++] = hb;
		for (up = pci_upstream_bridge(rd->pdev); up; up = pci_upstream_bridge(up))
			if (!railbind_seen((void **)*bridges, nb, up))
				(*bridges)[nb++] = up;
	}
	sort(*bridges, nb, sizeof(**bridges), railbind_cmp_dev, NULL);
	sort(*hbs, nh, sizeof(**hbs), railbind_cmp_hb, NULL);
	*nbridges = nb;
	*nhbs = nh;
	return 0;
}

static void railbind_emit_hostbridge(struct railbind_buf *buf,
				     struct pci_host_bridge *hb)
{
	struct pci_dev *fn0 = pci_get_slot(hb->bus, PCI_DEVFN(0, 0));

	railbind_emit(buf, "hostbridge name=%s domain=%04x bus=%02x numa=%d",
		      dev_name(&hb->dev), pci_domain_nr(hb->bus), hb->bus->number,
		      dev_to_node(&hb->dev));
	if (fn0 && !pci_is_bridge(fn0))
		railbind_emit(buf, " vendor=0x%04x device=0x%04x\n", fn0->vendor,
			      fn0->device);
	else
		railbind_emit(buf, " vendor=- device=-\n");
	pci_dev_put(fn0);
}

static void railbind_emit_pairs(struct railbind_buf *buf, int *records)
{
	struct railbind_dev *g, *n;
	struct railbind_p2p p;

	list_for_each_entry(g, &railbind_devs, node) {
		if (g->role != RAILBIND_GPU)
			continue;
		list_for_each_entry(n, &railbind_devs, node) {
			if (n->role != RAILBIND_NIC)
				continue;
			railbind_p2p_calc(g->pdev, n->pdev, &p);
			railbind_emit(buf, "pair gpu=%s nic=%s distance=%d redirected=%d map=%s",
				      pci_name(g->pdev), pci_name(n->pdev), p.distance,
				      p.redirected, p.map);
			railbind_emit(buf, " common=%s acs_port=%s same_hostbridge=%d\n",
				      p.common ? pci_name(p.common) : "-",
				      p.acs_port ? pci_name(p.acs_port) : "-",
				      pci_find_host_bridge(g->pdev->bus) ==
				      pci_find_host_bridge(n->pdev->bus));
			(*records)++;
		}
	}
}

int railbind_render(struct railbind_buf *buf, unsigned long *gen)
{
	struct pci_host_bridge **hbs;
	struct pci_dev **bridges;
	struct railbind_dev *rd;
	int nb, nh, i, records = 0, ret;

	pci_lock_rescan_remove();
	mutex_lock(&railbind_lock);
	ret = railbind_collect(&bridges, &nb, &hbs, &nh);
	if (ret)
		goto out;
	*gen = railbind_generation();
	railbind_emit(buf, "railbind format=%d version=%s generation=%lu kernel=%s",
		      RAILBIND_FORMAT, RAILBIND_VERSION, *gen, UTS_RELEASE);
	railbind_emit(buf, " peer_provider=%s peer_state=%s\n", railbind_peer_provider,
		      railbind_peer_state());
	records++;
	for (i = 0; i < nh; i++, records++)
		railbind_emit_hostbridge(buf, hbs[i]);

	/* Bridges and endpoints merged in PCI address order. */
	i = 0;
	list_for_each_entry(rd, &railbind_devs, node) {
		for (; i < nb && railbind_pci_id(bridges[i]) < railbind_pci_id(rd->pdev);
		     i++, records++)
			railbind_emit_dev(buf, bridges[i], "bridge");
		railbind_emit_dev(buf, rd->pdev, railbind_role_name(rd->role));
		records++;
	}
	for (; i < nb; i++, records++)
		railbind_emit_dev(buf, bridges[i], "bridge");
	railbind_emit_pairs(buf, &records);
	records += railbind_peer_render(buf);
	railbind_emit(buf, "end records=%d\n", records + 1);
	kfree(bridges);
	kfree(hbs);
	ret = buf->err;
out:
	mutex_unlock(&railbind_lock);
	pci_unlock_rescan_remove();
	if (ret) {
		kvfree(buf->data);
		buf->data = NULL;
		buf->len = 0;
		buf->size = 0;
		buf->err = 0;
	}
	return ret;
}
