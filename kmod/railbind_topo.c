// SPDX-License-Identifier: GPL-2.0
/*
 * The set of tracked GPUs and NICs, kept current by a PCI bus notifier.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/notifier.h>
#include <linux/pci.h>
#include <linux/slab.h>

#include "railbind.h"

/* Serialises the tracked list against notifier, render and peer tables. */
DEFINE_MUTEX(railbind_lock);
LIST_HEAD(railbind_devs);

u32 railbind_pci_id(struct pci_dev *pdev)
{
	return (u32)pci_domain_nr(pdev->bus) << 16 | pdev->bus->number << 8 |
	       pdev->devfn;
}

static struct railbind_dev *railbind_find(struct pci_dev *pdev)
{
	struct railbind_dev *rd;

	list_for_each_entry(rd, &railbind_devs, node)
		if (rd->pdev == pdev)
			return rd;
	return NULL;
}

/*
 * Idempotent: the notifier and the initial walk may both see a device.
 * The list stays sorted by PCI address, which is the GPU index order.
 */
static bool railbind_add(struct pci_dev *pdev)
{
	struct railbind_dev *rd, *pos;
	enum railbind_role role;
	u32 id = railbind_pci_id(pdev);

	if (!railbind_match(pdev, &role))
		return false;
	if (railbind_find(pdev))
		return false;
	rd = kzalloc(sizeof(*rd), GFP_KERNEL);
	if (!rd) {
		pr_warn("%s: no memory to track it\n", pci_name(pdev));
		return false;
	}
	rd->pdev = pci_dev_get(pdev);
	rd->role = role;
	list_for_each_entry(pos, &railbind_devs, node)
		if (railbind_pci_id(pos->pdev) > id)
			break;
	list_add_tail(&rd->node, &pos->node);
	return true;
}

static bool railbind_del(struct pci_dev *pdev)
{
	struct railbind_dev *rd = railbind_find(pdev);

	if (!rd)
		return false;
	list_del(&rd->node);
	pci_dev_put(rd->pdev);
	kfree(rd);
	return true;
}

static int railbind_pci_notify(struct notifier_block *nb, unsigned long action,
			       void *data)
{
	struct pci_dev *pdev = to_pci_dev(data);
	bool changed;

	if (action != BUS_NOTIFY_ADD_DEVICE && action != BUS_NOTIFY_DEL_DEVICE)
		return NOTIFY_DONE;

	mutex_lock(&railbind_lock);
	if (action == BUS_NOTIFY_ADD_DEVICE)
		changed = railbind_add(pdev);
	else
		changed = railbind_del(pdev);
	/* A bridge coming or going reshapes every path below it. */
	changed |= pci_is_bridge(pdev);
	/* Bump under the lock: no snapshot may pair old content with a new generation. */
	if (changed) {
		railbind_peer_devs_changed();
		railbind_changed(action == BUS_NOTIFY_ADD_DEVICE ? "add" : "remove");
	}
	mutex_unlock(&railbind_lock);
	return NOTIFY_OK;
}

static struct notifier_block railbind_pci_nb = {
	.notifier_call = railbind_pci_notify,
};

int railbind_topo_init(void)
{
	struct pci_dev *pdev = NULL;
	int ret;

	/* Register first so nothing added during the walk is missed. */
	ret = bus_register_notifier(&pci_bus_type, &railbind_pci_nb);
	if (ret)
		return ret;
	/* Hot removal takes the rescan lock; holding it keeps the walk exact. */
	pci_lock_rescan_remove();
	mutex_lock(&railbind_lock);
	for_each_pci_dev(pdev)
		railbind_add(pdev);
	railbind_peer_devs_changed();
	mutex_unlock(&railbind_lock);
	pci_unlock_rescan_remove();
	return 0;
}

void railbind_topo_exit(void)
{
	struct railbind_dev *rd, *tmp;

	bus_unregister_notifier(&pci_bus_type, &railbind_pci_nb);
	mutex_lock(&railbind_lock);
	list_for_each_entry_safe(rd, tmp, &railbind_devs, node) {
		list_del(&rd->node);
		pci_dev_put(rd->pdev);
		kfree(rd);
	}
	railbind_peer_devs_changed();
	mutex_unlock(&railbind_lock);
}
