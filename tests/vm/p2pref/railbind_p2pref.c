// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only, never installed: the kernel's own P2P verdict between two PCI
 * functions, to hold railbind.ko's port of it against (tests/vm/p2p.py).
 * tests/vm/run.sh copies calc_map_type_and_dist() and what it calls out of
 * drivers/pci/p2pdma.c of the Debian source package matching the kernel
 * under test (extract.py: unchanged but for the one line naming a field
 * Debian's kernels lack) into p2pdma_extract.c, included below.
 *
 * /dev/railbind_p2pref (root only): write "PROVIDER CLIENT" as two
 * dddd:bb:dd.f addresses, then read "map=bus|host|none distance=N\n".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-map-ops.h>
#include <linux/fs.h>
#include <linux/genalloc.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/seq_buf.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#ifdef CONFIG_X86
#include <asm/processor.h>
#endif

#include "p2pdma_extract.c"

static DEFINE_MUTEX(p2pref_lock);
static char p2pref_result[64];

static struct pci_dev *p2pref_dev(const char *bdf)
{
	unsigned int dom, bus, dev, fn;

	if (sscanf(bdf, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
		return NULL;
	return pci_get_domain_bus_and_slot(dom, bus, PCI_DEVFN(dev, fn));
}

static ssize_t p2pref_write(struct file *file, const char __user *ubuf, size_t len,
			    loff_t *ppos)
{
	char buf[64], a[24], b[24];
	struct pci_dev *provider, *client;
	enum pci_p2pdma_map_type map;
	int dist = -1;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%23s %23s", a, b) != 2)
		return -EINVAL;
	provider = p2pref_dev(a);
	client = p2pref_dev(b);
	if (!provider || !client) {
		pci_dev_put(provider);
		pci_dev_put(client);
		return -ENODEV;
	}
	map = calc_map_type_and_dist(provider, client, &dist, false);
	pci_dev_put(provider);
	pci_dev_put(client);
	mutex_lock(&p2pref_lock);
	snprintf(p2pref_result, sizeof(p2pref_result), "map=%s distance=%d\n",
		 map == PCI_P2PDMA_MAP_BUS_ADDR ? "bus" :
		 map == PCI_P2PDMA_MAP_THRU_HOST_BRIDGE ? "host" : "none", dist);
	mutex_unlock(&p2pref_lock);
	return len;
}

static ssize_t p2pref_read(struct file *file, char __user *ubuf, size_t len, loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&p2pref_lock);
	ret = simple_read_from_buffer(ubuf, len, ppos, p2pref_result, strlen(p2pref_result));
	mutex_unlock(&p2pref_lock);
	return ret;
}

static const struct file_operations p2pref_fops = {
	.owner = THIS_MODULE,
	.write = p2pref_write,
	.read = p2pref_read,
};

static struct miscdevice p2pref_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "railbind_p2pref",
	.fops = &p2pref_fops,
	.mode = 0600,
};

module_misc_device(p2pref_misc);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("railbind test-only: drivers/pci/p2pdma.c's verdict, for comparison");
