// SPDX-License-Identifier: GPL-2.0
/*
 * The tracked set: every GPU and NIC, and every bridge above one, each
 * holding a reference on its pci_dev, kept current by a PCI bus notifier.
 *
 * Config space (ACS control, link status) is read here and nowhere else:
 * when the notifier fires for a device (added, driver bound or unbound)
 * and on a refresh that the snapshot code rate-limits; never per pair or
 * per reader. The render works on a copy (railbind_model_build()).
 *
 * Lifetime: a node leaves the set in BUS_NOTIFY_DEL_DEVICE, under
 * railbind_lock, before the PCI core tears the device down, and every
 * config read runs under that lock, so none reaches a removed device;
 * the reference held keeps the pci_dev and its upstream bridges in memory
 * for as long as a node names them (what drivers/pci/p2pdma.c relies on
 * when it walks pci_upstream_bridge() without taking references). A VF's
 * PF is not among them (the VF's reference on it goes with the VF's
 * removal), so its identity is recorded when the VF is added.
 *
 * The initial walk can meet a device whose BUS_NOTIFY_DEL_DEVICE has
 * already been handled: the device leaves the bus list after that event,
 * and not every removal holds the rescan lock (a PF disabling SR-IOV from
 * its own remove or reset path does not). BUS_NOTIFY_REMOVED_DEVICE comes
 * once it has left the list, so the walk, which holds railbind_lock
 * throughout, either misses the device or is followed by that event.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <linux/iommu.h>
#include <linux/notifier.h>
#include <linux/pci.h>
#include <linux/pm_runtime.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/topology.h>

#include "railbind.h"

struct railbind_node {
	struct list_head list;		/* railbind_nodes, PCI address order */
	struct hlist_node hash;		/* railbind_hash, keyed by pdev */
	struct pci_dev *pdev;		/* reference held */
	struct railbind_node *up;	/* node of pci_upstream_bridge(), or NULL */
	unsigned int users;		/* nodes whose up is this one, +1 if endpoint */
	enum railbind_role role;
	bool endpoint;			/* a GPU or NIC tracked for itself */
	bool gone;			/* removed while others still named it */
	u64 id;
	u64 physfn;			/* a VF's PF, recorded at add; else RAILBIND_NO_DEV */
	int idx;			/* position in the model being built */
	struct railbind_cfg cfg;
};

/* Serialises the tracked set, its cached facts and the model copy. */
DEFINE_MUTEX(railbind_lock);
static LIST_HEAD(railbind_nodes);
static DEFINE_HASHTABLE(railbind_hash, 8);
static unsigned int railbind_nnodes;
static bool railbind_facts_changed;	/* since the last model */

static struct railbind_node *railbind_find(struct pci_dev *pdev)
{
	struct railbind_node *n;

	hash_for_each_possible(railbind_hash, n, hash, (unsigned long)pdev)
		if (n->pdev == pdev)
			return n;
	return NULL;
}

static bool railbind_has_link(struct pci_dev *pdev)
{
	int type;

	/* A VF's link fields are reserved: the PF's link is the link. */
	if (!pci_is_pcie(pdev) || pdev->is_virtfn)
		return false;
	type = pci_pcie_type(pdev);
	return type != PCI_EXP_TYPE_RC_END && type != PCI_EXP_TYPE_RC_EC;
}

static bool railbind_cfg_same(const struct railbind_cfg *a, const struct railbind_cfg *b)
{
	return a->acs_cap == b->acs_cap && a->acs_ctl == b->acs_ctl &&
	       a->lnksta == b->lnksta && a->lnkcap == b->lnkcap &&
	       a->state == b->state && a->have_acs == b->have_acs &&
	       a->have_link == b->have_link;
}

/* A runtime PM reference only on a device active now (kmod/Kbuild: 6.9 changed it). */
static int railbind_pm_get_if_active(struct device *dev)
{
#ifdef RAILBIND_PM_IF_ACTIVE_NO_IGN
	return pm_runtime_get_if_active(dev);
#else
	return pm_runtime_get_if_active(dev, true);
#endif
}

/*
 * Reads ACS and link registers unless that would wake a suspended device,
 * race a reset or read a dead one; the last good values stay, with the
 * reason they are old in ->state. Caller holds railbind_lock. Returns
 * true when anything changed.
 *
 * The runtime PM reference is taken only if the device is active, under
 * its power lock, so no suspend starts until it is put; the config access
 * block is taken only if no reset (or other holder) has it, and the reads
 * are pci_read_config_*(), which do not wait on the block we hold.
 */
static bool railbind_cfg_read(struct railbind_node *n)
{
	struct pci_dev *pdev = n->pdev;
	struct railbind_cfg c = n->cfg;
	u16 cap, ctl, sta;
	u32 lcap;
	int pm;

	if (n->gone)
		return false;
	if (pdev->error_state == pci_channel_io_perm_failure) {
		c.state = RAILBIND_CFG_ERROR;
		goto out;
	}
	/* < 0: runtime PM disabled, so no runtime suspend can start either. */
	pm = railbind_pm_get_if_active(&pdev->dev);
	if (!pm || pdev->current_state == PCI_D3cold) {
		c.state = RAILBIND_CFG_SUSPENDED;
		goto put;
	}
	if (!pci_cfg_access_trylock(pdev)) {
		c.state = RAILBIND_CFG_RESET;
		goto put;
	}
	c.state = RAILBIND_CFG_OK;
	if (pdev->acs_cap) {
		if (pci_read_config_word(pdev, pdev->acs_cap + PCI_ACS_CAP, &cap) ||
		    pci_read_config_word(pdev, pdev->acs_cap + PCI_ACS_CTRL, &ctl) ||
		    PCI_POSSIBLE_ERROR(cap) || PCI_POSSIBLE_ERROR(ctl)) {
			c.state = RAILBIND_CFG_ERROR;
		} else {
			c.acs_cap = cap;
			c.acs_ctl = ctl;
			c.have_acs = true;
		}
	}
	if (railbind_has_link(pdev)) {
		if (pcie_capability_read_word(pdev, PCI_EXP_LNKSTA, &sta) ||
		    pcie_capability_read_dword(pdev, PCI_EXP_LNKCAP, &lcap) ||
		    PCI_POSSIBLE_ERROR(sta) || PCI_POSSIBLE_ERROR(lcap)) {
			c.state = RAILBIND_CFG_ERROR;
		} else {
			c.lnksta = sta;
			c.lnkcap = lcap;
			c.have_link = true;
		}
	}
	pci_cfg_access_unlock(pdev);
put:
	if (pm > 0)
		pm_runtime_put(&pdev->dev);
out:
	if (railbind_cfg_same(&c, &n->cfg))
		return false;
	n->cfg = c;
	return true;
}

static struct railbind_node *railbind_node_new(struct pci_dev *pdev)
{
	struct railbind_node *n, *pos;

	n = kzalloc(sizeof(*n), GFP_KERNEL);
	if (!n)
		return NULL;
	n->pdev = pci_dev_get(pdev);
	n->id = railbind_pci_id(pdev);
	n->physfn = pdev->is_virtfn ? railbind_pci_id(pdev->physfn) : RAILBIND_NO_DEV;
	n->role = RAILBIND_BRIDGE;
	n->users = 1;
	railbind_cfg_read(n);
	/* Devices mostly arrive in address order: look from the end. */
	list_for_each_entry_reverse(pos, &railbind_nodes, list)
		if (pos->id < n->id)
			break;
	list_add(&n->list, &pos->list);
	hash_add(railbind_hash, &n->hash, (unsigned long)pdev);
	railbind_nnodes++;
	return n;
}

/* Drops one use of n, and of each node above that it leaves unused. */
static void railbind_release(struct railbind_node *n)
{
	struct railbind_node *up;

	while (n && !--n->users) {
		up = n->up;
		list_del(&n->list);
		hash_del(&n->hash);
		railbind_nnodes--;
		pci_dev_put(n->pdev);
		kfree(n);
		n = up;
	}
}

/*
 * A node for pdev with one more use, and nodes for every bridge above it
 * (pci_upstream_bridge(), so a VF hangs where its PF does), created from
 * pdev upwards until one already tracked.
 */
static struct railbind_node *railbind_hold(struct pci_dev *pdev)
{
	struct railbind_node *n, *cur, *m;
	struct pci_dev *up;

	n = railbind_find(pdev);
	if (n) {
		n->users++;
		return n;
	}
	n = railbind_node_new(pdev);
	if (!n)
		return NULL;
	for (cur = n, up = pci_upstream_bridge(pdev); up; up = pci_upstream_bridge(up)) {
		m = railbind_find(up);
		if (m) {
			m->users++;
			cur->up = m;
			break;
		}
		m = railbind_node_new(up);
		if (!m) {
			railbind_release(n);
			return NULL;
		}
		cur->up = m;
		cur = m;
	}
	return n;
}

/* Idempotent: the notifier and the initial walk may both see a device. */
static bool railbind_add(struct pci_dev *pdev, enum railbind_role role)
{
	struct railbind_node *n = railbind_find(pdev);

	if (n && n->endpoint)
		return false;
	n = railbind_hold(pdev);
	if (!n) {
		pr_warn("%s: no memory to track it\n", pci_name(pdev));
		return false;
	}
	n->endpoint = true;
	n->role = role;
	return true;
}

/* Idempotent: BUS_NOTIFY_DEL_DEVICE and BUS_NOTIFY_REMOVED_DEVICE both call it. */
static bool railbind_del(struct pci_dev *pdev)
{
	struct railbind_node *n = railbind_find(pdev);

	if (!n)
		return false;
	if (n->endpoint) {
		n->endpoint = false;
		railbind_release(n);
		return true;
	}
	/* The PCI core removes children first; should it not, stop reading it. */
	if (n->gone)
		return false;
	n->gone = true;
	return true;
}

static int railbind_pci_notify(struct notifier_block *nb, unsigned long action,
			       void *data)
{
	struct pci_dev *pdev = to_pci_dev(data);
	enum railbind_role role;
	struct railbind_node *n;
	bool ours, changed = false;

	ours = railbind_match(pdev, &role);
	if (!ours && !pci_is_bridge(pdev))
		return NOTIFY_DONE;

	mutex_lock(&railbind_lock);
	switch (action) {
	case BUS_NOTIFY_ADD_DEVICE:
		changed = ours && railbind_add(pdev, role);
		break;
	case BUS_NOTIFY_DEL_DEVICE:
		changed = railbind_del(pdev);
		/* A bridge going reshapes every path below it. */
		changed |= pci_is_bridge(pdev);
		break;
	case BUS_NOTIFY_REMOVED_DEVICE:
		/* Only what the initial walk added after BUS_NOTIFY_DEL_DEVICE. */
		changed = railbind_del(pdev);
		break;
	case BUS_NOTIFY_BOUND_DRIVER:
	case BUS_NOTIFY_UNBOUND_DRIVER:
		/* Resources are assigned and a driver may have set ACS or retrained. */
		n = railbind_find(pdev);
		if (n && railbind_cfg_read(n))
			railbind_facts_changed = true;
		if (n && n->role == RAILBIND_GPU)
			railbind_peer_devs_changed();
		goto out;
	default:
		goto out;
	}
	/* A bridge coming reshapes every path below it. */
	changed |= action == BUS_NOTIFY_ADD_DEVICE && pci_is_bridge(pdev);
	/* Bump under the lock: no snapshot may pair old content with a new generation. */
	if (changed) {
		railbind_peer_devs_changed();
		railbind_changed(action == BUS_NOTIFY_ADD_DEVICE ? "add" : "remove");
	}
out:
	mutex_unlock(&railbind_lock);
	return NOTIFY_OK;
}

static struct notifier_block railbind_pci_nb = {
	.notifier_call = railbind_pci_notify,
};

/**
 * railbind_topo_refresh - re-read the cached config-space facts
 *
 * Context: process; takes railbind_lock. The snapshot code calls it at
 * most once per refresh_ms, for O(tracked nodes) config reads.
 * Return: true when any fact changed.
 */
bool railbind_topo_refresh(void)
{
	struct railbind_node *n;
	bool changed = false;

	mutex_lock(&railbind_lock);
	list_for_each_entry(n, &railbind_nodes, list)
		changed |= railbind_cfg_read(n);
	railbind_facts_changed |= changed;
	/* BARs too: they are assigned after the device is added. */
	railbind_peer_devs_changed();
	mutex_unlock(&railbind_lock);
	return changed;
}

/* Whether facts changed since the last model: the snapshot is then stale. */
bool railbind_topo_dirty(void)
{
	bool dirty;

	mutex_lock(&railbind_lock);
	dirty = railbind_facts_changed;
	mutex_unlock(&railbind_lock);
	return dirty;
}

static int railbind_model_hb(struct railbind_model *m, struct pci_dev *pdev)
{
	struct pci_host_bridge *host = pci_find_host_bridge(pdev->bus);
	struct railbind_mhb *hb;
	struct pci_dev *fn0;
	int i;

	for (i = 0; i < m->nhbs; i++)
		if (m->hbs[i].key == host)
			return i;
	hb = &m->hbs[m->nhbs];
	hb->key = host;
	strscpy(hb->name, dev_name(&host->dev), sizeof(hb->name));
	hb->domain = pci_domain_nr(host->bus);
	hb->bus = host->bus->number;
	hb->numa = dev_to_node(&host->dev);
	/*
	 * Not pci_get_slot(): it takes pci_bus_sem, which a pci_walk_bus()
	 * caller may hold while a notifier waits for railbind_lock.
	 */
	fn0 = pci_get_domain_bus_and_slot(hb->domain, hb->bus, PCI_DEVFN(0, 0));
	if (fn0 && !pci_is_bridge(fn0)) {
		hb->fn0 = true;
		hb->fn0_vendor = fn0->vendor;
		hb->fn0_device = fn0->device;
	}
	pci_dev_put(fn0);
	/* Keeps the host bridge for railbind_p2p_host_root(), after the lock. */
	hb->below = pci_dev_get(pdev);
	return m->nhbs++;
}

static void railbind_model_node(struct railbind_model *m, struct railbind_node *n)
{
	struct railbind_mnode *mn = &m->nodes[n->idx];
	struct pci_dev *pdev = n->pdev;
	struct iommu_group *grp;

	mn->id = n->id;
	strscpy(mn->name, pci_name(pdev), sizeof(mn->name));
	mn->physfn = n->physfn;
	mn->vendor = pdev->vendor;
	mn->device = pdev->device;
	mn->class = pdev->class;
	mn->role = n->role;
	mn->hdr_type = pdev->hdr_type;
	mn->pcie_type = pci_is_pcie(pdev) ? pci_pcie_type(pdev) : -1;
	mn->has_link = railbind_has_link(pdev);
	mn->has_acs = pdev->acs_cap;
	mn->up = n->up ? n->up->idx : -1;
	mn->hb = railbind_model_hb(m, pdev);
	mn->numa = dev_to_node(&pdev->dev);
	/* As sysfs local_cpus does: the bus's mask when the node is unknown. */
	mn->cpus = mn->numa == NUMA_NO_NODE ? cpumask_of_pcibus(pdev->bus) :
		   cpumask_of_node(mn->numa);
	grp = iommu_group_get(&pdev->dev);
	mn->iommu_group = grp ? iommu_group_id(grp) : -1;
	iommu_group_put(grp);
	mn->cfg = n->cfg;
}

static int railbind_cmp_hb(const void *a, const void *b)
{
	const struct railbind_mhb *x = a, *y = b;
	u64 ix = (u64)x->domain << 8 | x->bus, iy = (u64)y->domain << 8 | y->bus;

	return ix < iy ? -1 : ix > iy;
}

/**
 * railbind_model_build - copy the tracked set for rendering
 *
 * Context: process; takes railbind_lock for O(tracked nodes) copying, no
 * config-space access. Memory is charged to the caller.
 * Return: the model (free with railbind_model_free()) or ERR_PTR(-ENOMEM).
 */
struct railbind_model *railbind_model_build(void)
{
	struct railbind_model *m;
	struct railbind_node *n;
	int i, *remap;

	m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return ERR_PTR(-ENOMEM);
	mutex_lock(&railbind_lock);
	m->nodes = kvcalloc(railbind_nnodes + 1, sizeof(*m->nodes), GFP_KERNEL_ACCOUNT);
	m->hbs = kvcalloc(railbind_nnodes + 1, sizeof(*m->hbs), GFP_KERNEL_ACCOUNT);
	if (!m->nodes || !m->hbs) {
		mutex_unlock(&railbind_lock);
		railbind_model_free(m);
		return ERR_PTR(-ENOMEM);
	}
	i = 0;
	list_for_each_entry(n, &railbind_nodes, list)
		n->idx = i++;
	list_for_each_entry(n, &railbind_nodes, list)
		railbind_model_node(m, n);
	m->nnodes = i;
	m->gen = railbind_generation();
	railbind_facts_changed = false;
	mutex_unlock(&railbind_lock);

	/* It takes pci_bus_sem: never under railbind_lock (see railbind_model_hb()). */
	for (i = 0; i < m->nhbs; i++)
		railbind_p2p_host_root(m->hbs[i].below, &m->hbs[i]);

	/* Host bridges in (domain, bus) order; nodes follow their new places. */
	remap = kcalloc(m->nhbs + 1, sizeof(*remap), GFP_KERNEL_ACCOUNT);
	if (!remap) {
		railbind_model_free(m);
		return ERR_PTR(-ENOMEM);
	}
	for (i = 0; i < m->nhbs; i++)
		m->hbs[i].orig = i;
	sort(m->hbs, m->nhbs, sizeof(*m->hbs), railbind_cmp_hb, NULL);
	for (i = 0; i < m->nhbs; i++)
		remap[m->hbs[i].orig] = i;
	for (i = 0; i < m->nnodes; i++)
		m->nodes[i].hb = remap[m->nodes[i].hb];
	kfree(remap);
	return m;
}

void railbind_model_free(struct railbind_model *m)
{
	int i;

	if (IS_ERR_OR_NULL(m))
		return;
	for (i = 0; m->hbs && i < m->nhbs; i++)
		pci_dev_put(m->hbs[i].below);
	kvfree(m->nodes);
	kvfree(m->hbs);
	kfree(m);
}

static bool railbind_bar_assigned(const struct resource *r)
{
	/* Unassigned BARs keep [0, size) or carry IORESOURCE_UNSET: never credit them. */
	return (r->flags & IORESOURCE_MEM) && !(r->flags & IORESOURCE_UNSET) &&
	       r->parent && r->start && resource_size(r);
}

static int railbind_cmp_bar(const void *a, const void *b)
{
	const struct railbind_devtab_bar *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int railbind_cmp_nic(const void *a, const void *b)
{
	const struct railbind_devtab_nic *x = a, *y = b;

	return x->pdev < y->pdev ? -1 : x->pdev > y->pdev;
}

void railbind_devtab_free(struct railbind_devtab *t)
{
	unsigned int i;

	if (!t)
		return;
	for (i = 0; i < t->nnics; i++)
		pci_dev_put(t->refs[i]);
	kvfree(t->bars);
	kvfree(t->nics);
	kvfree(t->refs);
	kfree(t);
}

/**
 * railbind_topo_devtab - what the peer-memory probes match against
 *
 * Every assigned memory BAR of a tracked GPU and every tracked NIC, with
 * a reference on each NIC so its address cannot be reused for another
 * device while a probe may compare against it.
 *
 * Context: process; takes railbind_lock.
 * Return: a table for railbind_devtab_free(), or NULL without memory.
 */
struct railbind_devtab *railbind_topo_devtab(void)
{
	struct railbind_devtab *t;
	struct railbind_node *n;
	unsigned int nbars = 0, nnics = 0;
	int bar;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return NULL;
	mutex_lock(&railbind_lock);
	list_for_each_entry(n, &railbind_nodes, list) {
		if (n->endpoint && n->role == RAILBIND_NIC)
			nnics++;
		if (n->endpoint && n->role == RAILBIND_GPU)
			nbars += PCI_STD_NUM_BARS;
	}
	t->bars = kvcalloc(nbars + 1, sizeof(*t->bars), GFP_KERNEL);
	t->nics = kvcalloc(nnics + 1, sizeof(*t->nics), GFP_KERNEL);
	t->refs = kvcalloc(nnics + 1, sizeof(*t->refs), GFP_KERNEL);
	if (!t->bars || !t->nics || !t->refs) {
		mutex_unlock(&railbind_lock);
		railbind_devtab_free(t);
		return NULL;
	}
	list_for_each_entry(n, &railbind_nodes, list) {
		if (!n->endpoint || n->gone)
			continue;
		if (n->role == RAILBIND_NIC) {
			t->refs[t->nnics] = pci_dev_get(n->pdev);
			t->nics[t->nnics].pdev = n->pdev;
			t->nics[t->nnics++].id = n->id;
			continue;
		}
		for (bar = 0; bar < PCI_STD_NUM_BARS; bar++) {
			const struct resource *r = &n->pdev->resource[bar];

			if (!railbind_bar_assigned(r))
				continue;
			t->bars[t->nbars].start = r->start;
			t->bars[t->nbars].end = r->end;
			t->bars[t->nbars++].gpu = n->id;
		}
	}
	mutex_unlock(&railbind_lock);
	sort(t->bars, t->nbars, sizeof(*t->bars), railbind_cmp_bar, NULL);
	sort(t->nics, t->nnics, sizeof(*t->nics), railbind_cmp_nic, NULL);
	return t;
}

int railbind_topo_init(void)
{
	struct pci_dev *pdev = NULL;
	enum railbind_role role;
	int ret;

	/* Register first so nothing added during the walk is missed. */
	ret = bus_register_notifier(&pci_bus_type, &railbind_pci_nb);
	if (ret)
		return ret;
	/*
	 * One hold of railbind_lock: a device removed meanwhile is either not
	 * on the bus list any more or has its BUS_NOTIFY_REMOVED_DEVICE
	 * waiting for the lock (see the top of this file).
	 */
	mutex_lock(&railbind_lock);
	for_each_pci_dev(pdev)
		if (railbind_match(pdev, &role))
			railbind_add(pdev, role);
	mutex_unlock(&railbind_lock);
	/* Queued as the notifier queues it: one publisher at a time, in order. */
	railbind_peer_devs_sync();
	return 0;
}

void railbind_topo_exit(void)
{
	struct railbind_node *n, *tmp;

	bus_unregister_notifier(&pci_bus_type, &railbind_pci_nb);
	mutex_lock(&railbind_lock);
	list_for_each_entry_safe(n, tmp, &railbind_nodes, list) {
		list_del(&n->list);
		hash_del(&n->hash);
		pci_dev_put(n->pdev);
		kfree(n);
	}
	railbind_nnodes = 0;
	mutex_unlock(&railbind_lock);
}
