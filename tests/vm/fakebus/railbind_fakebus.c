// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only, never installed: PCI host bridges whose config space is
 * emulated here, so the QEMU guest gets topologies QEMU cannot make: GPUs
 * and NICs by the thousand (SR-IOV VFs created by the kernel's own iov
 * code), PCI domains past 0xffff (as VMD and Hyper-V have), host bridges
 * on p2pdma's whitelist, ACS on switch ports, a BAR that cannot be
 * assigned. The kernel scans, numbers, assigns and adds every function as
 * for real hardware, so railbind.ko sees them through its bus notifier.
 * No driver binds (the IDs have none in the guest) and no BAR is ever
 * accessed: the memory windows are unused physical address space.
 *
 * layout=rails (default): one host bridge, domain 0x10000, NUMA node 0:
 *   8 root ports, each with a switch whose downstream ports hold a GPU
 *   and two NIC PFs; vfs=N gives each PF N VFs (16 x 128 = 2048).
 * layout=p2p: five host bridges (domains 0x10000-0x10004) whose first
 *   root-bus function is or is not on p2pdma's whitelist, with ACS on
 *   some ports, a multifunction GPU+NIC and a GPU whose 8 GB BAR does not
 *   fit its 4 GB window.
 *
 * Emulation: each function has a config space and a mask of its writable
 * bits; a write keeps the read-only bits, so BAR sizing, bus numbers and
 * bridge windows behave as the kernel expects. Config cycles are routed
 * by bus number like type 1 cycles: a function is reached on its parent
 * bridge's secondary bus. VFs read a shared template.
 *
 * Run-time parameters act as a PF driver and a rescan elsewhere would:
 * reset_pf=N disables and re-enables SR-IOV on the Nth PF under its
 * device lock, without the rescan lock (a driver's remove or reset path);
 * vfs_on=0/1 does that for every PF; rescan_hold=1 holds the PCI
 * rescan lock, as a rescan elsewhere would, until rescan_hold=0;
 * del_delay_ms=T holds each VF's removal T ms after the bus notifiers saw
 * BUS_NOTIFY_DEL_DEVICE, while it is still on the bus list: the window in
 * which a walk of that list meets a device whose removal was notified;
 * vf_dels counts the VF removals notified so far.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/device.h>
#include <linux/ioport.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#ifndef CONFIG_X86
#error "the fake host bridges use x86's struct pci_sysdata"
#endif

static char *layout = "rails";
module_param(layout, charp, 0444);
MODULE_PARM_DESC(layout, "rails or p2p");
static unsigned int vfs;
module_param(vfs, uint, 0444);
MODULE_PARM_DESC(vfs, "VFs per NIC PF in layout=rails (0..128)");
static unsigned int del_delay_ms;
module_param(del_delay_ms, uint, 0644);
MODULE_PARM_DESC(del_delay_ms, "Hold each VF's removal this long after BUS_NOTIFY_DEL_DEVICE (ms)");
static unsigned int vf_dels;
module_param(vf_dels, uint, 0444);
MODULE_PARM_DESC(vf_dels, "VF removals whose BUS_NOTIFY_DEL_DEVICE came so far");
static unsigned int resets_done;
module_param(resets_done, uint, 0444);
MODULE_PARM_DESC(resets_done, "reset_pf requests carried out so far");

#define FB_MAX_FNS 96
#define FB_MAX_HOSTS 5
#define FB_CFG PCI_CFG_SPACE_EXP_SIZE
#define FB_NOBUS -1

struct fb_fn {
	int parent;		/* index of the bridge above, or FB_NOBUS: the root bus */
	u8 devfn;
	u16 sriov;		/* SR-IOV capability offset, 0 if none */
	u8 cfg[FB_CFG];
	u8 wmask[FB_CFG];
};

struct fb_host {
	struct pci_sysdata sd;	/* first: the bus's sysdata points here */
	struct pci_bus *bus;
	struct resource mem;
	struct resource busn;
	int nfns;
	struct fb_fn *fns;
	u8 vf_cfg[PCI_CFG_SPACE_SIZE];
	char name[32];
};

static struct fb_host *fb_hosts[FB_MAX_HOSTS];
static int fb_nhosts;

static void fb_put(u8 *p, int off, int size, u32 val)
{
	int i;

	for (i = 0; i < size; i++)
		p[off + i] = val >> (8 * i);
}

static u32 fb_get(const u8 *p, int off, int size)
{
	u32 v = 0;
	int i;

	for (i = 0; i < size; i++)
		v |= (u32)p[off + i] << (8 * i);
	return v;
}

/* A function with a PCI Express capability of the given port type. */
static struct fb_fn *fb_fn_new(struct fb_host *h, int parent, int slot, int fn,
			       u16 vendor, u16 device, u32 class, int type,
			       int speed, int width)
{
	bool bridge = type == PCI_EXP_TYPE_ROOT_PORT || type == PCI_EXP_TYPE_UPSTREAM ||
		      type == PCI_EXP_TYPE_DOWNSTREAM;
	struct fb_fn *f;

	if (h->nfns == FB_MAX_FNS)
		return NULL;
	f = &h->fns[h->nfns++];
	f->parent = parent;
	f->devfn = PCI_DEVFN(slot, fn);
	fb_put(f->cfg, PCI_VENDOR_ID, 2, vendor);
	fb_put(f->cfg, PCI_DEVICE_ID, 2, device);
	fb_put(f->cfg, PCI_CLASS_REVISION, 4, class << 8);
	fb_put(f->cfg, PCI_HEADER_TYPE, 1, bridge ? PCI_HEADER_TYPE_BRIDGE : 0);
	fb_put(f->cfg, PCI_STATUS, 2, PCI_STATUS_CAP_LIST);
	fb_put(f->wmask, PCI_COMMAND, 2, 0x0547);
	fb_put(f->wmask, PCI_CACHE_LINE_SIZE, 1, 0xff);
	fb_put(f->wmask, PCI_LATENCY_TIMER, 1, 0xff);
	fb_put(f->wmask, PCI_INTERRUPT_LINE, 1, 0xff);
	fb_put(f->cfg, PCI_CAPABILITY_LIST, 1, 0x40);
	fb_put(f->cfg, 0x40 + PCI_CAP_LIST_ID, 1, PCI_CAP_ID_EXP);
	fb_put(f->cfg, 0x40 + PCI_EXP_FLAGS, 2, 2 | type << 4);
	fb_put(f->wmask, 0x40 + PCI_EXP_DEVCTL, 2, 0xffff);
	fb_put(f->wmask, 0x40 + PCI_EXP_DEVCTL2, 2, 0xffff);
	if (type != PCI_EXP_TYPE_RC_END) {
		fb_put(f->cfg, 0x40 + PCI_EXP_LNKCAP, 4, speed | width << 4);
		fb_put(f->cfg, 0x40 + PCI_EXP_LNKSTA, 2, speed | width << 4);
		fb_put(f->wmask, 0x40 + PCI_EXP_LNKCTL, 2, 0xffff);
		fb_put(f->wmask, 0x40 + PCI_EXP_LNKCTL2, 2, 0xffff);
	}
	if (bridge) {
		fb_put(f->wmask, PCI_PRIMARY_BUS, 4, 0xffffffff);
		/* Windows start closed (base above limit); no I/O window at all. */
		fb_put(f->cfg, PCI_MEMORY_BASE, 2, 0xfff0);
		fb_put(f->wmask, PCI_MEMORY_BASE, 2, 0xfff0);
		fb_put(f->wmask, PCI_MEMORY_LIMIT, 2, 0xfff0);
		fb_put(f->cfg, PCI_PREF_MEMORY_BASE, 2, 0xfff1);
		fb_put(f->cfg, PCI_PREF_MEMORY_LIMIT, 2, 0x0001);
		fb_put(f->wmask, PCI_PREF_MEMORY_BASE, 2, 0xfff0);
		fb_put(f->wmask, PCI_PREF_MEMORY_LIMIT, 2, 0xfff0);
		fb_put(f->cfg, PCI_PREF_BASE_UPPER32, 4, 0xffffffff);
		fb_put(f->wmask, PCI_PREF_BASE_UPPER32, 4, 0xffffffff);
		fb_put(f->wmask, PCI_PREF_LIMIT_UPPER32, 4, 0xffffffff);
		fb_put(f->wmask, PCI_BRIDGE_CONTROL, 2, 0xffff);
	}
	return f;
}

static int fb_idx(struct fb_host *h, struct fb_fn *f)
{
	return f - h->fns;
}

/* A 64-bit prefetchable memory BAR: the only kind a bridge forwards above 4 GB. */
static void fb_bar64(struct fb_fn *f, int bar, u64 size)
{
	int off = PCI_BASE_ADDRESS_0 + 4 * bar;

	fb_put(f->cfg, off, 4, PCI_BASE_ADDRESS_MEM_TYPE_64 | PCI_BASE_ADDRESS_MEM_PREFETCH);
	fb_put(f->wmask, off, 4, (u32)~(size - 1) & PCI_BASE_ADDRESS_MEM_MASK);
	fb_put(f->wmask, off + 4, 4, (u32)(~(size - 1) >> 32));
}

/* The first extended capability. */
static void fb_acs(struct fb_fn *f, u16 ctl)
{
	fb_put(f->cfg, PCI_CFG_SPACE_SIZE, 4, PCI_EXT_CAP_ID_ACS | 1 << 16);
	fb_put(f->cfg, PCI_CFG_SPACE_SIZE + PCI_ACS_CAP, 2, PCI_ACS_SV | PCI_ACS_TB |
	       PCI_ACS_RR | PCI_ACS_CR | PCI_ACS_UF);
	fb_put(f->cfg, PCI_CFG_SPACE_SIZE + PCI_ACS_CTRL, 2, ctl);
	fb_put(f->wmask, PCI_CFG_SPACE_SIZE + PCI_ACS_CTRL, 2, 0x007f);
}

static void fb_sriov(struct fb_fn *f, u16 total, u16 vf_device)
{
	int p = PCI_CFG_SPACE_SIZE;

	f->sriov = p;
	fb_put(f->cfg, p, 4, PCI_EXT_CAP_ID_SRIOV | 1 << 16);
	fb_put(f->wmask, p + PCI_SRIOV_CTRL, 2, 0x001f);
	fb_put(f->cfg, p + PCI_SRIOV_INITIAL_VF, 2, total);
	fb_put(f->cfg, p + PCI_SRIOV_TOTAL_VF, 2, total);
	fb_put(f->wmask, p + PCI_SRIOV_NUM_VF, 2, 0xffff);
	fb_put(f->cfg, p + PCI_SRIOV_VF_OFFSET, 2, 1);
	fb_put(f->cfg, p + PCI_SRIOV_VF_STRIDE, 2, 1);
	fb_put(f->cfg, p + PCI_SRIOV_VF_DID, 2, vf_device);
	fb_put(f->cfg, p + PCI_SRIOV_SUP_PGSIZE, 4, 0x553);
	fb_put(f->cfg, p + PCI_SRIOV_SYS_PGSIZE, 4, 1);
	fb_put(f->wmask, p + PCI_SRIOV_SYS_PGSIZE, 4, 0xffffffff);
}

/* What every VF reads: IDs all ones (they come from the PF), an Ethernet endpoint. */
static void fb_vf_template(struct fb_host *h)
{
	u8 *c = h->vf_cfg;

	fb_put(c, PCI_VENDOR_ID, 4, 0xffffffff);
	fb_put(c, PCI_CLASS_REVISION, 4, PCI_CLASS_NETWORK_ETHERNET << 16);
	fb_put(c, PCI_STATUS, 2, PCI_STATUS_CAP_LIST);
	fb_put(c, PCI_CAPABILITY_LIST, 1, 0x40);
	fb_put(c, 0x40 + PCI_CAP_LIST_ID, 1, PCI_CAP_ID_EXP);
	fb_put(c, 0x40 + PCI_EXP_FLAGS, 2, 2 | PCI_EXP_TYPE_ENDPOINT << 4);
}

static int fb_bus_of(struct fb_host *h, const struct fb_fn *f)
{
	if (f->parent == FB_NOBUS)
		return h->bus ? h->bus->number : 0;
	/* An unnumbered bridge forwards nothing. */
	return h->fns[f->parent].cfg[PCI_SECONDARY_BUS] ?: -1;
}

/* The function at (bus, devfn), or the PF of the VF there (*vf set). */
static struct fb_fn *fb_lookup(struct pci_bus *bus, unsigned int devfn, bool *vf)
{
	struct fb_host *h = container_of(bus->sysdata, struct fb_host, sd);
	int rid = bus->number << 8 | devfn, i, d;

	*vf = false;
	for (i = 0; i < h->nfns; i++) {
		struct fb_fn *f = &h->fns[i];

		if (f->devfn == devfn && fb_bus_of(h, f) == bus->number)
			return f;
	}
	for (i = 0; i < h->nfns; i++) {
		struct fb_fn *f = &h->fns[i];
		int p = f->sriov, n, off, stride;

		if (!p || !(fb_get(f->cfg, p + PCI_SRIOV_CTRL, 2) & PCI_SRIOV_CTRL_VFE))
			continue;
		n = fb_get(f->cfg, p + PCI_SRIOV_NUM_VF, 2);
		off = fb_get(f->cfg, p + PCI_SRIOV_VF_OFFSET, 2);
		stride = fb_get(f->cfg, p + PCI_SRIOV_VF_STRIDE, 2);
		d = rid - (fb_bus_of(h, f) << 8 | f->devfn) - off;
		if (fb_bus_of(h, f) >= 0 && d >= 0 && stride && d % stride == 0 &&
		    d / stride < n) {
			*vf = true;
			return f;
		}
	}
	return NULL;
}

static int fb_read(struct pci_bus *bus, unsigned int devfn, int where, int size, u32 *val)
{
	struct fb_host *h = container_of(bus->sysdata, struct fb_host, sd);
	bool vf;
	struct fb_fn *f = fb_lookup(bus, devfn, &vf);

	if (!f || where < 0 || where + size > (vf ? PCI_CFG_SPACE_SIZE : FB_CFG)) {
		*val = ~0U;
		return f ? PCIBIOS_BAD_REGISTER_NUMBER : PCIBIOS_DEVICE_NOT_FOUND;
	}
	*val = fb_get(vf ? h->vf_cfg : f->cfg, where, size);
	return PCIBIOS_SUCCESSFUL;
}

static int fb_write(struct pci_bus *bus, unsigned int devfn, int where, int size, u32 val)
{
	bool vf;
	struct fb_fn *f = fb_lookup(bus, devfn, &vf);
	int i;

	if (!f)
		return PCIBIOS_DEVICE_NOT_FOUND;
	if (vf || where < 0 || where + size > FB_CFG)
		return PCIBIOS_SUCCESSFUL;	/* VFs: nothing they have is writable here */
	for (i = 0; i < size; i++) {
		u8 m = f->wmask[where + i];

		f->cfg[where + i] = (f->cfg[where + i] & ~m) | ((val >> (8 * i)) & m);
	}
	return PCIBIOS_SUCCESSFUL;
}

static struct pci_ops fb_ops = {
	.read = fb_read,
	.write = fb_write,
};

static struct fb_host *fb_host_new(int domain, int node, u64 window)
{
	struct fb_host *h = kzalloc(sizeof(*h), GFP_KERNEL);

	if (!h)
		return NULL;
	h->fns = vzalloc(array_size(FB_MAX_FNS, sizeof(*h->fns)));
	if (!h->fns) {
		kfree(h);
		return NULL;
	}
	h->sd.domain = domain;
	h->sd.node = node;
	snprintf(h->name, sizeof(h->name), "railbind_fakebus %x", domain);
	h->mem.name = h->name;
	h->mem.start = window;	/* the size, until the window is placed */
	h->busn.name = h->name;
	h->busn.start = 0;
	h->busn.end = 255;
	h->busn.flags = IORESOURCE_BUS;
	fb_vf_template(h);
	fb_hosts[fb_nhosts++] = h;
	return h;
}

static void fb_host_free(struct fb_host *h)
{
	vfree(h->fns);
	kfree(h);
}

static int fb_host_start(struct fb_host *h)
{
	struct pci_host_bridge *bridge;
	u64 size = h->mem.start;
	LIST_HEAD(resources);
	int ret;

	h->mem.start = 0;
	h->mem.flags = IORESOURCE_MEM | IORESOURCE_PREFETCH | IORESOURCE_MEM_64;
	/* Unused physical address space far above the guest's RAM and devices. */
	ret = allocate_resource(&iomem_resource, &h->mem, size, 1ULL << 38,
				(1ULL << 44) - 1, SZ_1G, NULL, NULL);
	if (ret)
		return ret;
	pci_add_resource(&resources, &h->busn);
	pci_add_resource(&resources, &h->mem);
	h->bus = pci_create_root_bus(NULL, 0, &fb_ops, &h->sd, &resources);
	if (!h->bus) {
		pci_free_resource_list(&resources);
		release_resource(&h->mem);
		return -ENODEV;
	}
	/* No port services: the functions have no interrupts to give them. */
	bridge = pci_find_host_bridge(h->bus);
	bridge->native_aer = 0;
	bridge->native_pme = 0;
	bridge->native_pcie_hotplug = 0;
	bridge->native_dpc = 0;
	bridge->native_ltr = 0;
	pci_lock_rescan_remove();
	pci_scan_child_bus(h->bus);
	pci_assign_unassigned_bus_resources(h->bus);
	pci_bus_add_devices(h->bus);
	pci_unlock_rescan_remove();
	return 0;
}

/* Every PF gets its VFs as a driver's sriov_configure would give them. */
static void fb_enable_vfs(struct fb_host *h)
{
	struct pci_dev *pdev;
	int ret;

	pdev = NULL;
	while ((pdev = pci_get_device(PCI_ANY_ID, PCI_ANY_ID, pdev))) {
		if (pdev->bus->sysdata != &h->sd || !pdev->is_physfn)
			continue;
		device_lock(&pdev->dev);
		ret = pci_enable_sriov(pdev, pci_sriov_get_totalvfs(pdev));
		device_unlock(&pdev->dev);
		if (ret)
			pci_warn(pdev, "cannot enable VFs (%d)\n", ret);
	}
}

static void fb_host_stop(struct fb_host *h)
{
	struct pci_dev *pdev = NULL;

	if (!h->bus)
		return;
	while ((pdev = pci_get_device(PCI_ANY_ID, PCI_ANY_ID, pdev))) {
		if (pdev->bus->sysdata != &h->sd || !pdev->is_physfn)
			continue;
		device_lock(&pdev->dev);
		pci_disable_sriov(pdev);
		device_unlock(&pdev->dev);
	}
	pci_lock_rescan_remove();
	pci_stop_root_bus(h->bus);
	pci_remove_root_bus(h->bus);
	pci_unlock_rescan_remove();
	release_resource(&h->mem);
}

static bool fb_ours(struct pci_dev *pdev)
{
	int i;

	for (i = 0; i < fb_nhosts; i++)
		if (pdev->bus->sysdata == &fb_hosts[i]->sd)
			return true;
	return false;
}

/* Runs after every other bus notifier (lowest priority). */
static int fb_bus_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	struct pci_dev *pdev = to_pci_dev(data);
	unsigned int ms = READ_ONCE(del_delay_ms);

	if (action != BUS_NOTIFY_DEL_DEVICE || !pdev->is_virtfn || !fb_ours(pdev))
		return NOTIFY_DONE;
	/* Removals run one at a time (the PF's device lock): no lost update. */
	WRITE_ONCE(vf_dels, vf_dels + 1);
	if (ms)
		msleep(ms);
	return NOTIFY_DONE;
}

static struct notifier_block fb_bus_nb = {
	.notifier_call = fb_bus_notify,
	.priority = INT_MIN,
};

static DEFINE_MUTEX(fb_param_lock);	/* the run-time parameters' writers */

/* The idx-th PF of our host bridges, referenced, or NULL past the last. */
static struct pci_dev *fb_nth_pf(unsigned int idx)
{
	struct pci_dev *pdev = NULL;

	while ((pdev = pci_get_device(PCI_ANY_ID, PCI_ANY_ID, pdev)))
		if (pdev->is_physfn && fb_ours(pdev) && !idx--)
			return pdev;
	return NULL;
}

/* A rescan elsewhere: the rescan lock held from rescan_hold=1 to =0. */
static bool fb_want_hold, fb_held;
static DECLARE_WAIT_QUEUE_HEAD(fb_hold_wq);

static void fb_hold_fn(struct work_struct *work)
{
	pci_lock_rescan_remove();
	WRITE_ONCE(fb_held, true);
	wait_event(fb_hold_wq, !READ_ONCE(fb_want_hold));
	WRITE_ONCE(fb_held, false);
	pci_unlock_rescan_remove();
}

static DECLARE_WORK(fb_hold_work, fb_hold_fn);

/* Under fb_param_lock. */
static void fb_hold(bool on)
{
	if (on && !fb_want_hold) {
		WRITE_ONCE(fb_want_hold, true);
		schedule_work(&fb_hold_work);
	} else if (!on && fb_want_hold) {
		WRITE_ONCE(fb_want_hold, false);
		wake_up(&fb_hold_wq);
		flush_work(&fb_hold_work);
	}
}

static int fb_hold_set(const char *val, const struct kernel_param *kp)
{
	bool on;
	int ret = kstrtobool(val, &on);

	if (ret)
		return ret;
	mutex_lock(&fb_param_lock);
	fb_hold(on && fb_nhosts);
	mutex_unlock(&fb_param_lock);
	return 0;
}

static int fb_hold_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(fb_held));
}

static const struct kernel_param_ops fb_hold_ops = {
	.set = fb_hold_set,
	.get = fb_hold_get,
};
module_param_cb(rescan_hold, &fb_hold_ops, NULL, 0644);
MODULE_PARM_DESC(rescan_hold, "1: hold the PCI rescan lock until 0 is written (reads 1 once held)");

/*
 * A PF's driver resetting it: SR-IOV off and on again, no rescan lock. In
 * a work item: a parameter's writer holds the lock every reader of this
 * module's parameters (vf_dels, resets_done) needs.
 */
static struct pci_dev *fb_reset_pf_dev;	/* referenced, under fb_param_lock */

static void fb_reset_fn(struct work_struct *work)
{
	struct pci_dev *pf;

	mutex_lock(&fb_param_lock);
	pf = fb_reset_pf_dev;
	fb_reset_pf_dev = NULL;
	mutex_unlock(&fb_param_lock);
	if (!pf)
		return;
	device_lock(&pf->dev);
	pci_disable_sriov(pf);
	if (pci_enable_sriov(pf, pci_sriov_get_totalvfs(pf)))
		pci_warn(pf, "cannot enable VFs again\n");
	device_unlock(&pf->dev);
	pci_dev_put(pf);
	WRITE_ONCE(resets_done, resets_done + 1);
}

static DECLARE_WORK(fb_reset_work, fb_reset_fn);

static int fb_reset_pf_set(const char *val, const struct kernel_param *kp)
{
	struct pci_dev *pf;
	unsigned int idx;
	int ret = kstrtouint(val, 0, &idx);

	if (ret)
		return ret;
	pf = fb_nhosts ? fb_nth_pf(idx) : NULL;
	if (!pf)
		return -ENODEV;
	mutex_lock(&fb_param_lock);
	if (fb_reset_pf_dev) {
		ret = -EBUSY;
	} else {
		fb_reset_pf_dev = pf;
		pf = NULL;
		schedule_work(&fb_reset_work);
	}
	mutex_unlock(&fb_param_lock);
	pci_dev_put(pf);
	return ret;
}

static const struct kernel_param_ops fb_reset_pf_ops = {
	.set = fb_reset_pf_set,
};
module_param_cb(reset_pf, &fb_reset_pf_ops, NULL, 0200);
MODULE_PARM_DESC(reset_pf, "Write N: the Nth PF disables and re-enables SR-IOV, as its driver's reset would (resets_done counts them)");

/* Every PF's VFs on (1) or off (0), as their drivers would set them. */
static int fb_vfs_set(const char *val, const struct kernel_param *kp)
{
	struct pci_dev *pdev = NULL;
	bool on;
	int ret = kstrtobool(val, &on);

	if (ret)
		return ret;
	if (!fb_nhosts)
		return -ENODEV;
	while ((pdev = pci_get_device(PCI_ANY_ID, PCI_ANY_ID, pdev))) {
		if (!pdev->is_physfn || !fb_ours(pdev))
			continue;
		device_lock(&pdev->dev);
		if (!on)
			pci_disable_sriov(pdev);
		else if (!pci_num_vf(pdev))
			ret = pci_enable_sriov(pdev, pci_sriov_get_totalvfs(pdev)) ?: ret;
		device_unlock(&pdev->dev);
	}
	return ret;
}

static const struct kernel_param_ops fb_vfs_ops = {
	.set = fb_vfs_set,
};
module_param_cb(vfs_on, &fb_vfs_ops, NULL, 0200);
MODULE_PARM_DESC(vfs_on, "Write 1 or 0: every PF's VFs enabled or disabled");

#define GPU_V PCI_VENDOR_ID_NVIDIA
#define GPU_D 0x2330		/* H100 SXM5 */
#define NIC_V PCI_VENDOR_ID_MELLANOX
#define NIC_D 0x101d		/* ConnectX-6 Dx */
#define NIC_VF 0x101e
#define PORT_V PCI_VENDOR_ID_PLX
#define RP_CLASS (PCI_CLASS_BRIDGE_PCI << 8)
#define GEN5 5
#define X16 16

static struct fb_fn *fb_root_port(struct fb_host *h, int slot, u16 vendor, u16 device,
				  u16 acs)
{
	struct fb_fn *f = fb_fn_new(h, FB_NOBUS, slot, 0, vendor, device, RP_CLASS,
				    PCI_EXP_TYPE_ROOT_PORT, GEN5, X16);

	if (f)
		fb_acs(f, acs);
	return f;
}

static struct fb_fn *fb_gpu(struct fb_host *h, int parent, int slot, int fn, u64 bar)
{
	struct fb_fn *f = fb_fn_new(h, parent, slot, fn, GPU_V, GPU_D,
				    PCI_CLASS_DISPLAY_3D << 8, PCI_EXP_TYPE_ENDPOINT, GEN5, X16);

	if (f)
		fb_bar64(f, 0, bar);
	return f;
}

static struct fb_fn *fb_nic(struct fb_host *h, int parent, int slot, int fn, u16 nvfs)
{
	struct fb_fn *f = fb_fn_new(h, parent, slot, fn, NIC_V, NIC_D,
				    PCI_CLASS_NETWORK_ETHERNET << 8, PCI_EXP_TYPE_ENDPOINT,
				    GEN5, X16);

	if (f) {
		fb_bar64(f, 0, SZ_32M);
		if (nvfs)
			fb_sriov(f, nvfs, NIC_VF);
	}
	return f;
}

/* Root port, switch (upstream + downstream ports), what the caller hangs below. */
static int fb_switch(struct fb_host *h, int slot, u16 acs, int ndown, int *down)
{
	struct fb_fn *rp, *up, *dp;
	int i;

	rp = fb_root_port(h, slot, PCI_VENDOR_ID_INTEL, 0x2030, 0);
	if (!rp)
		return -ENOSPC;
	up = fb_fn_new(h, fb_idx(h, rp), 0, 0, PORT_V, 0xc010, RP_CLASS,
		       PCI_EXP_TYPE_UPSTREAM, GEN5, X16);
	if (!up)
		return -ENOSPC;
	for (i = 0; i < ndown; i++) {
		dp = fb_fn_new(h, fb_idx(h, up), i, 0, PORT_V, 0xc010, RP_CLASS,
			       PCI_EXP_TYPE_DOWNSTREAM, GEN5, X16);
		if (!dp)
			return -ENOSPC;
		fb_acs(dp, acs);
		down[i] = fb_idx(h, dp);
	}
	return 0;
}

/* Host bridge function 00.0 on the root bus, as p2pdma.c's whitelist looks for. */
static int fb_hostfn(struct fb_host *h, int slot, u16 vendor, u16 device)
{
	return fb_fn_new(h, FB_NOBUS, slot, 0, vendor, device, PCI_CLASS_BRIDGE_HOST << 8,
			 PCI_EXP_TYPE_RC_END, 0, 0) ? 0 : -ENOSPC;
}

static int fb_layout_rails(void)
{
	struct fb_host *h = fb_host_new(0x10000, 0, 16ULL * SZ_1G);
	int i, down[3], ret;

	if (!h)
		return -ENOMEM;
	if (vfs > 128)
		return -EINVAL;
	ret = fb_hostfn(h, 0, PCI_VENDOR_ID_INTEL, 0x09a2);
	for (i = 0; i < 8 && !ret; i++) {
		ret = fb_switch(h, 1 + i, 0, 3, down);
		if (!ret && (!fb_gpu(h, down[0], 0, 0, SZ_256M) || !fb_nic(h, down[1], 0, 0, vfs) ||
			     !fb_nic(h, down[2], 0, 0, vfs)))
			ret = -ENOSPC;
	}
	return ret;
}

/*
 * A: whitelisted (8086:09a2 at 00.0); a switch whose downstream ports have
 *    ACS off, RR|CR, off; a GPU on its own root port; a multifunction
 *    GPU+NIC below a root port with RR|CR; a GPU whose 8 GB BAR does not
 *    fit the 4 GB window.
 * B: whitelisted, another host bridge (cross-host P2P allowed).
 * C: 8086:3c00 at 00.0, whitelisted only within one host bridge.
 * D: no 00.0; the first function, a root port 8086:2031 at 02.0, is on
 *    the whitelist (Skylake has no host bridge function).
 * E: the first function is an endpoint at 01.0: nothing to match.
 */
static int fb_layout_p2p(void)
{
	struct fb_host *a = fb_host_new(0x10000, 0, 4ULL * SZ_1G);
	struct fb_host *b = fb_host_new(0x10001, 1, SZ_1G);
	struct fb_host *c = fb_host_new(0x10002, 0, SZ_1G);
	struct fb_host *d = fb_host_new(0x10003, 1, SZ_1G);
	struct fb_host *e = fb_host_new(0x10004, 0, SZ_1G);
	u16 redir = PCI_ACS_RR | PCI_ACS_CR;
	struct fb_fn *rp;
	int down[3], ret;

	if (!a || !b || !c || !d || !e)
		return -ENOMEM;
	ret = fb_hostfn(a, 0, PCI_VENDOR_ID_INTEL, 0x09a2) ?:
	      fb_switch(a, 1, 0, 3, down);
	if (ret)
		return ret;
	fb_acs(&a->fns[down[1]], redir);
	if (!fb_gpu(a, down[0], 0, 0, SZ_256M) || !fb_nic(a, down[1], 0, 0, 0) ||
	    !fb_nic(a, down[2], 0, 0, 0))
		return -ENOSPC;
	rp = fb_root_port(a, 2, PCI_VENDOR_ID_INTEL, 0x2030, 0);
	if (!rp || !fb_gpu(a, fb_idx(a, rp), 0, 0, SZ_256M))
		return -ENOSPC;
	rp = fb_root_port(a, 3, PCI_VENDOR_ID_INTEL, 0x2030, redir);
	if (!rp || !fb_gpu(a, fb_idx(a, rp), 0, 0, SZ_256M) || !fb_nic(a, fb_idx(a, rp), 0, 1, 0))
		return -ENOSPC;
	a->fns[a->nfns - 2].cfg[PCI_HEADER_TYPE] |= 0x80;	/* multifunction */
	rp = fb_root_port(a, 4, PCI_VENDOR_ID_INTEL, 0x2030, 0);
	if (!rp || !fb_gpu(a, fb_idx(a, rp), 0, 0, 8ULL * SZ_1G))
		return -ENOSPC;

	rp = fb_hostfn(b, 0, PCI_VENDOR_ID_INTEL, 0x09a2) ? NULL :
	     fb_root_port(b, 1, PCI_VENDOR_ID_INTEL, 0x2030, 0);
	if (!rp || !fb_nic(b, fb_idx(b, rp), 0, 0, 0))
		return -ENOSPC;
	rp = fb_root_port(b, 2, PCI_VENDOR_ID_INTEL, 0x2030, 0);
	if (!rp || !fb_gpu(b, fb_idx(b, rp), 0, 0, SZ_256M))
		return -ENOSPC;

	rp = fb_hostfn(c, 0, PCI_VENDOR_ID_INTEL, 0x3c00) ? NULL :
	     fb_root_port(c, 1, PCI_VENDOR_ID_INTEL, 0x3c02, 0);
	if (!rp || !fb_gpu(c, fb_idx(c, rp), 0, 0, SZ_256M))
		return -ENOSPC;
	rp = fb_root_port(c, 2, PCI_VENDOR_ID_INTEL, 0x3c02, 0);
	if (!rp || !fb_nic(c, fb_idx(c, rp), 0, 0, 0))
		return -ENOSPC;

	rp = fb_root_port(d, 2, PCI_VENDOR_ID_INTEL, 0x2031, 0);
	if (!rp || !fb_gpu(d, fb_idx(d, rp), 0, 0, SZ_256M))
		return -ENOSPC;

	if (!fb_gpu(e, FB_NOBUS, 1, 0, SZ_256M))
		return -ENOSPC;
	rp = fb_root_port(e, 2, PCI_VENDOR_ID_INTEL, 0x2030, 0);
	if (!rp || !fb_nic(e, fb_idx(e, rp), 0, 0, 0))
		return -ENOSPC;
	return 0;
}

static void fb_cleanup(void)
{
	int i;

	for (i = fb_nhosts - 1; i >= 0; i--) {
		fb_host_stop(fb_hosts[i]);
		fb_host_free(fb_hosts[i]);
	}
	fb_nhosts = 0;
}

static int __init fb_init(void)
{
	int i, ret;

	if (!strcmp(layout, "rails"))
		ret = fb_layout_rails();
	else if (!strcmp(layout, "p2p"))
		ret = fb_layout_p2p();
	else
		ret = -EINVAL;
	for (i = 0; i < fb_nhosts && !ret; i++)
		ret = fb_host_start(fb_hosts[i]);
	for (i = 0; i < fb_nhosts && !ret; i++)
		fb_enable_vfs(fb_hosts[i]);
	if (!ret)
		ret = bus_register_notifier(&pci_bus_type, &fb_bus_nb);
	if (ret)
		fb_cleanup();
	return ret;
}

static void __exit fb_exit(void)
{
	mutex_lock(&fb_param_lock);
	fb_hold(false);
	mutex_unlock(&fb_param_lock);
	WRITE_ONCE(del_delay_ms, 0);
	cancel_work_sync(&fb_reset_work);
	pci_dev_put(fb_reset_pf_dev);
	bus_unregister_notifier(&pci_bus_type, &fb_bus_nb);
	fb_cleanup();
}

module_init(fb_init);
module_exit(fb_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("railbind test-only: emulated PCI host bridges for scale and P2P tests");
