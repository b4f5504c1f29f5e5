// SPDX-License-Identifier: GPL-2.0
/*
 * Peer-memory (GPUDirect RDMA) accounting per (GPU, NIC) pair.
 *
 * Three sources feed one fixed-size registry: providers calling
 * railbind_peer_map/unmap, kprobes on NVIDIA's nvidia_p2p_* entry points,
 * and kprobes on the dma-buf attach/map calls an RDMA NIC makes. Probe
 * handlers run in atomic context, so the registry is a preallocated table
 * under a spinlock: nothing in a handler allocates, sleeps or prints.
 * Keys taken from a provider (page tables, mappings) are opaque numbers,
 * never dereferenced after the call that produced them, and are dropped
 * when the provider module goes away.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-buf.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/ptrace.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "railbind.h"

char *railbind_peer_provider = "nvidia";
module_param_named(peer_provider, railbind_peer_provider, charp, 0444);
MODULE_PARM_DESC(peer_provider, "Module exporting nvidia_p2p_* whose calls are counted (default nvidia)");

static bool dmabuf_taps = true;
module_param(dmabuf_taps, bool, 0444);
MODULE_PARM_DESC(dmabuf_taps, "Count dma-buf attachments made by tracked NICs (default on)");

#define RAILBIND_MAX_MAPS 4096
#define RAILBIND_MAX_BARS 256
#define RAILBIND_MAX_NICS 256
#define RAILBIND_EXP_LEN 16
#define RAILBIND_NO_DEV 0xffffffffu

enum railbind_route {
	RAILBIND_ROUTE_API,
	RAILBIND_ROUTE_NVIDIA,
	RAILBIND_ROUTE_DMABUF,
};

static const char * const railbind_route_names[] = { "api", "nvidia", "dmabuf" };

struct railbind_map {
	unsigned long cookie;	/* 0: free slot */
	unsigned long group;	/* nvidia page table, for frees without unmap */
	u32 gpu, nic;
	u64 bytes;
	u8 route;
	bool mapped;		/* dma-buf: attached, and mapped */
	char exporter[RAILBIND_EXP_LEN];
};

struct railbind_bar {
	u32 gpu;
	resource_size_t start, end;
};

static DEFINE_SPINLOCK(railbind_peer_lock);
static struct railbind_map *railbind_maps;
static struct railbind_bar railbind_bars[RAILBIND_MAX_BARS];
static unsigned int railbind_nbars;
static u32 railbind_nics[RAILBIND_MAX_NICS];
static unsigned int railbind_nnics;
static u64 railbind_st_maps, railbind_st_unmaps, railbind_st_freed, railbind_st_overflow;

/* Caller holds railbind_lock; refreshes the tables probe handlers read. */
void railbind_peer_devs_changed(void)
{
	struct railbind_dev *rd;
	unsigned long flags;
	int bar;

	spin_lock_irqsave(&railbind_peer_lock, flags);
	railbind_nbars = 0;
	railbind_nnics = 0;
	list_for_each_entry(rd, &railbind_devs, node) {
		if (rd->role == RAILBIND_NIC) {
			if (railbind_nnics < RAILBIND_MAX_NICS)
				railbind_nics[railbind_nnics++] = railbind_pci_id(rd->pdev);
			continue;
		}
		for (bar = 0; bar < PCI_STD_NUM_BARS; bar++) {
			struct resource *r = &rd->pdev->resource[bar];

			if (!(r->flags & IORESOURCE_MEM) || !resource_size(r))
				continue;
			if (railbind_nbars == RAILBIND_MAX_BARS)
				break;
			railbind_bars[railbind_nbars].gpu = railbind_pci_id(rd->pdev);
			railbind_bars[railbind_nbars].start = r->start;
			railbind_bars[railbind_nbars].end = r->end;
			railbind_nbars++;
		}
	}
	spin_unlock_irqrestore(&railbind_peer_lock, flags);
}

/* Under railbind_peer_lock. */
static u32 railbind_gpu_at(u64 addr)
{
	unsigned int i;

	for (i = 0; i < railbind_nbars; i++)
		if (addr >= railbind_bars[i].start && addr <= railbind_bars[i].end)
			return railbind_bars[i].gpu;
	return RAILBIND_NO_DEV;
}

static bool railbind_is_nic(u32 id)
{
	unsigned int i;

	for (i = 0; i < railbind_nnics; i++)
		if (railbind_nics[i] == id)
			return true;
	return false;
}

static struct railbind_map *railbind_map_find(unsigned long cookie)
{
	unsigned int i;

	for (i = 0; i < RAILBIND_MAX_MAPS; i++)
		if (railbind_maps[i].cookie == cookie)
			return &railbind_maps[i];
	return NULL;
}

/* Under railbind_peer_lock; a cookie seen again replaces its old record. */
static struct railbind_map *railbind_map_add(unsigned long cookie)
{
	struct railbind_map *m = railbind_map_find(cookie);

	if (!m)
		m = railbind_map_find(0);
	if (!m) {
		railbind_st_overflow++;
		return NULL;
	}
	memset(m, 0, sizeof(*m));
	m->cookie = cookie;
	return m;
}

static void railbind_map_drop(struct railbind_map *m, bool freed)
{
	if (m->mapped || m->route != RAILBIND_ROUTE_DMABUF) {
		if (freed)
			railbind_st_freed++;
		else
			railbind_st_unmaps++;
	}
	memset(m, 0, sizeof(*m));
}

int railbind_peer_map(struct pci_dev *gpu, struct pci_dev *nic, u64 bytes,
		      const void *cookie)
{
	struct railbind_map *m;
	unsigned long flags;
	int ret = 0;

	if (!gpu || !nic || !cookie)
		return -EINVAL;
	spin_lock_irqsave(&railbind_peer_lock, flags);
	if (railbind_map_find((unsigned long)cookie)) {
		ret = -EEXIST;
		goto out;
	}
	m = railbind_map_add((unsigned long)cookie);
	if (!m) {
		ret = -ENOSPC;
		goto out;
	}
	m->gpu = railbind_pci_id(gpu);
	m->nic = railbind_pci_id(nic);
	m->bytes = bytes;
	m->route = RAILBIND_ROUTE_API;
	m->mapped = true;
	railbind_st_maps++;
out:
	spin_unlock_irqrestore(&railbind_peer_lock, flags);
	return ret;
}
EXPORT_SYMBOL_GPL(railbind_peer_map);

void railbind_peer_unmap(const void *cookie)
{
	struct railbind_map *m;
	unsigned long flags;

	spin_lock_irqsave(&railbind_peer_lock, flags);
	m = cookie ? railbind_map_find((unsigned long)cookie) : NULL;
	if (m && m->route == RAILBIND_ROUTE_API)
		railbind_map_drop(m, false);
	spin_unlock_irqrestore(&railbind_peer_lock, flags);
}
EXPORT_SYMBOL_GPL(railbind_peer_unmap);

static void railbind_drop_route(u8 route, unsigned long group, bool freed)
{
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&railbind_peer_lock, flags);
	for (i = 0; i < RAILBIND_MAX_MAPS; i++) {
		struct railbind_map *m = &railbind_maps[i];

		if (m->cookie && m->route == route && (!group || m->group == group))
			railbind_map_drop(m, freed);
	}
	spin_unlock_irqrestore(&railbind_peer_lock, flags);
}

/*
 * NVIDIA's nv-p2p.h layout (page table version 1.x, mapping version 1.x):
 * only the leading fields we read are mirrored here.
 */
struct railbind_nv_page {
	u64 physical_address;
};

struct railbind_nv_page_table {
	u32 version;
	u32 page_size;
	struct railbind_nv_page **pages;
	u32 entries;
};

static u64 railbind_nv_page_bytes(u32 code)
{
	switch (code) {
	case 0:
		return SZ_4K;
	case 1:
		return SZ_64K;
	case 2:
		return SZ_128K;
	default:
		return 0;
	}
}

struct railbind_nv_call {
	unsigned long peer;
	unsigned long table;
	unsigned long out;
};

static int railbind_nv_map_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct railbind_nv_call *c = (void *)ri->data;

	c->peer = regs_get_kernel_argument(regs, 0);
	c->table = regs_get_kernel_argument(regs, 1);
	c->out = regs_get_kernel_argument(regs, 2);
	return 0;
}

static int railbind_nv_map_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct railbind_nv_call *c = (void *)ri->data;
	struct railbind_nv_page_table pt;
	struct railbind_nv_page *page0;
	struct pci_dev *peer = (struct pci_dev *)c->peer;
	struct railbind_map *m;
	unsigned long mapping, flags;
	u64 phys = 0;

	if (regs_return_value(regs) != 0 || !c->table || !c->out || !peer)
		return 0;
	if (get_kernel_nofault(mapping, (unsigned long *)c->out) || !mapping)
		return 0;
	if (copy_from_kernel_nofault(&pt, (void *)c->table, sizeof(pt)))
		return 0;
	if (pt.entries && pt.pages &&
	    !get_kernel_nofault(page0, pt.pages) && page0)
		get_kernel_nofault(phys, &page0->physical_address);

	spin_lock_irqsave(&railbind_peer_lock, flags);
	m = railbind_map_add(mapping);
	if (m) {
		m->group = c->table;
		m->gpu = railbind_gpu_at(phys);
		m->nic = railbind_pci_id(peer);
		m->bytes = (u64)pt.entries * railbind_nv_page_bytes(pt.page_size);
		m->route = RAILBIND_ROUTE_NVIDIA;
		m->mapped = true;
		railbind_st_maps++;
	}
	spin_unlock_irqrestore(&railbind_peer_lock, flags);
	return 0;
}

static void railbind_drop_cookie(u8 route, unsigned long cookie, bool freed)
{
	struct railbind_map *m;
	unsigned long flags;

	if (!cookie)
		return;
	spin_lock_irqsave(&railbind_peer_lock, flags);
	m = railbind_map_find(cookie);
	if (m && m->route == route)
		railbind_map_drop(m, freed);
	spin_unlock_irqrestore(&railbind_peer_lock, flags);
}

/* nvidia_p2p_dma_unmap_pages(peer, page_table, mapping) */
static int railbind_nv_unmap_pre(struct kprobe *p, struct pt_regs *regs)
{
	railbind_drop_cookie(RAILBIND_ROUTE_NVIDIA, regs_get_kernel_argument(regs, 2),
			     false);
	return 0;
}

/* nvidia_p2p_free_dma_mapping(mapping): the mapping goes, unmapped or not. */
static int railbind_nv_free_map_pre(struct kprobe *p, struct pt_regs *regs)
{
	railbind_drop_cookie(RAILBIND_ROUTE_NVIDIA, regs_get_kernel_argument(regs, 0),
			     true);
	return 0;
}

/* nvidia_p2p_put_pages(token, va_space, va, page_table) */
static int railbind_nv_put_pre(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long table = regs_get_kernel_argument(regs, 3);

	if (table)
		railbind_drop_route(RAILBIND_ROUTE_NVIDIA, table, true);
	return 0;
}

/* nvidia_p2p_put_pages_persistent(va, page_table, flags) */
static int railbind_nv_put_persistent_pre(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long table = regs_get_kernel_argument(regs, 1);

	if (table)
		railbind_drop_route(RAILBIND_ROUTE_NVIDIA, table, true);
	return 0;
}

/* nvidia_p2p_free_page_table(page_table) */
static int railbind_nv_free_table_pre(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long table = regs_get_kernel_argument(regs, 0);

	if (table)
		railbind_drop_route(RAILBIND_ROUTE_NVIDIA, table, true);
	return 0;
}

static struct kretprobe railbind_nv_map_rp = {
	.kp.symbol_name = "nvidia_p2p_dma_map_pages",
	.entry_handler = railbind_nv_map_entry,
	.handler = railbind_nv_map_ret,
	.data_size = sizeof(struct railbind_nv_call),
	.maxactive = 64,
};

static struct kprobe railbind_nv_kps[] = {
	{ .symbol_name = "nvidia_p2p_dma_unmap_pages", .pre_handler = railbind_nv_unmap_pre },
	{ .symbol_name = "nvidia_p2p_free_dma_mapping", .pre_handler = railbind_nv_free_map_pre },
	{ .symbol_name = "nvidia_p2p_put_pages", .pre_handler = railbind_nv_put_pre },
	{ .symbol_name = "nvidia_p2p_put_pages_persistent",
	  .pre_handler = railbind_nv_put_persistent_pre },
	{ .symbol_name = "nvidia_p2p_free_page_table", .pre_handler = railbind_nv_free_table_pre },
};

static bool railbind_nv_kp_on[ARRAY_SIZE(railbind_nv_kps)];
static bool railbind_nv_armed;
static DEFINE_MUTEX(railbind_arm_lock);

/* Caller holds railbind_arm_lock. */
static void railbind_nv_disarm(void)
{
	unsigned int i;

	if (!railbind_nv_armed)
		return;
	unregister_kretprobe(&railbind_nv_map_rp);
	for (i = 0; i < ARRAY_SIZE(railbind_nv_kps); i++) {
		if (railbind_nv_kp_on[i])
			unregister_kprobe(&railbind_nv_kps[i]);
		railbind_nv_kp_on[i] = false;
	}
	railbind_nv_armed = false;
	railbind_drop_route(RAILBIND_ROUTE_NVIDIA, 0, true);
}

/*
 * Caller holds railbind_arm_lock. The map probe is required; the freeing
 * entry points are optional, older drivers lack the persistent one.
 * Structures are reinitialised: the kprobe core keeps state in them.
 */
static int railbind_nv_arm(void)
{
	unsigned int i;
	int ret;

	if (railbind_nv_armed)
		return 0;
	memset(&railbind_nv_map_rp.kp, 0, sizeof(railbind_nv_map_rp.kp));
	railbind_nv_map_rp.kp.symbol_name = "nvidia_p2p_dma_map_pages";
	ret = register_kretprobe(&railbind_nv_map_rp);
	if (ret)
		return ret;
	for (i = 0; i < ARRAY_SIZE(railbind_nv_kps); i++) {
		struct kprobe *kp = &railbind_nv_kps[i];
		const char *sym = kp->symbol_name;
		kprobe_pre_handler_t pre = kp->pre_handler;

		memset(kp, 0, sizeof(*kp));
		kp->symbol_name = sym;
		kp->pre_handler = pre;
		railbind_nv_kp_on[i] = !register_kprobe(kp);
	}
	railbind_nv_armed = true;
	return 0;
}

static int railbind_module_notify(struct notifier_block *nb, unsigned long action,
				  void *data)
{
	struct module *mod = data;

	if (strcmp(mod->name, railbind_peer_provider))
		return NOTIFY_DONE;
	mutex_lock(&railbind_arm_lock);
	if (action == MODULE_STATE_LIVE) {
		int ret = railbind_nv_arm();

		if (ret)
			pr_warn("%s is live but nvidia_p2p_dma_map_pages cannot be probed (%d)\n",
				mod->name, ret);
	} else if (action == MODULE_STATE_GOING) {
		railbind_nv_disarm();
	}
	mutex_unlock(&railbind_arm_lock);
	return NOTIFY_OK;
}

static struct notifier_block railbind_module_nb = {
	.notifier_call = railbind_module_notify,
};

/*
 * dma-buf route: dma_buf_dynamic_attach(dmabuf, dev, ops, priv) by a
 * tracked NIC creates an attachment; dma_buf_map_attachment() tells where
 * it points (a GPU BAR or not); unmap and detach undo each step.
 */
struct railbind_db_call {
	unsigned long dmabuf;
	u32 nic;
	bool ok;
};

static int railbind_db_attach_entry(struct kretprobe_instance *ri,
				    struct pt_regs *regs)
{
	struct railbind_db_call *c = (void *)ri->data;
	struct device *dev = (struct device *)regs_get_kernel_argument(regs, 1);
	unsigned long flags;

	c->ok = false;
	if (!dev || !dev_is_pci(dev))
		return 0;
	c->dmabuf = regs_get_kernel_argument(regs, 0);
	c->nic = railbind_pci_id(to_pci_dev(dev));
	spin_lock_irqsave(&railbind_peer_lock, flags);
	c->ok = railbind_is_nic(c->nic);
	spin_unlock_irqrestore(&railbind_peer_lock, flags);
	return 0;
}

/* strncpy_from_kernel_nofault is not exported; a byte loop is enough here. */
static void railbind_copy_name(char *dst, const char *src, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i++) {
		if (get_kernel_nofault(dst[i], src + i) || !dst[i] || dst[i] == ' ')
			break;
	}
	dst[i] = '\0';
	if (!i)
		strscpy(dst, "-", len);
}

static int railbind_db_attach_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct railbind_db_call *c = (void *)ri->data;
	unsigned long attach = regs_return_value(regs);
	char exporter[RAILBIND_EXP_LEN] = "-";
	const char *name = NULL;
	struct railbind_map *m;
	unsigned long flags;

	if (!c->ok || IS_ERR_OR_NULL((void *)attach))
		return 0;
	if (!get_kernel_nofault(name, &((struct dma_buf *)c->dmabuf)->exp_name) && name)
		railbind_copy_name(exporter, name, sizeof(exporter));
	spin_lock_irqsave(&railbind_peer_lock, flags);
	m = railbind_map_add(attach);
	if (m) {
		m->nic = c->nic;
		m->gpu = RAILBIND_NO_DEV;
		m->route = RAILBIND_ROUTE_DMABUF;
		memcpy(m->exporter, exporter, sizeof(m->exporter));
	}
	spin_unlock_irqrestore(&railbind_peer_lock, flags);
	return 0;
}

/* dma_buf_detach(dmabuf, attach) */
static int railbind_db_detach_pre(struct kprobe *p, struct pt_regs *regs)
{
	railbind_drop_cookie(RAILBIND_ROUTE_DMABUF, regs_get_kernel_argument(regs, 1),
			     true);
	return 0;
}

struct railbind_db_map_call {
	unsigned long attach;
};

static int railbind_db_map_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct railbind_db_map_call *c = (void *)ri->data;

	c->attach = regs_get_kernel_argument(regs, 0);
	return 0;
}

static int railbind_db_map_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct railbind_db_map_call *c = (void *)ri->data;
	struct sg_table *sgt = (struct sg_table *)regs_return_value(regs);
	struct railbind_map *m;
	struct scatterlist *sg;
	unsigned long flags;
	u64 bytes = 0, first = 0;
	int i;

	if (IS_ERR_OR_NULL(sgt))
		return 0;
	spin_lock_irqsave(&railbind_peer_lock, flags);
	m = railbind_map_find(c->attach);
	if (m && m->route == RAILBIND_ROUTE_DMABUF && !m->mapped) {
		for_each_sgtable_dma_sg(sgt, sg, i) {
			if (!i)
				first = sg_dma_address(sg);
			bytes += sg_dma_len(sg);
		}
		m->bytes = bytes;
		m->gpu = railbind_gpu_at(first);
		m->mapped = true;
		railbind_st_maps++;
	}
	spin_unlock_irqrestore(&railbind_peer_lock, flags);
	return 0;
}

/* dma_buf_unmap_attachment(attach, sgt, dir) */
static int railbind_db_unmap_pre(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long attach = regs_get_kernel_argument(regs, 0);
	struct railbind_map *m;
	unsigned long flags;

	spin_lock_irqsave(&railbind_peer_lock, flags);
	m = railbind_map_find(attach);
	if (m && m->route == RAILBIND_ROUTE_DMABUF && m->mapped) {
		m->mapped = false;
		m->bytes = 0;
		m->gpu = RAILBIND_NO_DEV;
		railbind_st_unmaps++;
	}
	spin_unlock_irqrestore(&railbind_peer_lock, flags);
	return 0;
}

static struct kretprobe railbind_db_attach_rp = {
	.kp.symbol_name = "dma_buf_dynamic_attach",
	.entry_handler = railbind_db_attach_entry,
	.handler = railbind_db_attach_ret,
	.data_size = sizeof(struct railbind_db_call),
	.maxactive = 64,
};

static struct kretprobe railbind_db_map_rp = {
	.kp.symbol_name = "dma_buf_map_attachment",
	.entry_handler = railbind_db_map_entry,
	.handler = railbind_db_map_ret,
	.data_size = sizeof(struct railbind_db_map_call),
	.maxactive = 64,
};

static struct kprobe railbind_db_kps[] = {
	{ .symbol_name = "dma_buf_detach", .pre_handler = railbind_db_detach_pre },
	{ .symbol_name = "dma_buf_unmap_attachment", .pre_handler = railbind_db_unmap_pre },
};

static bool railbind_db_armed;

static int railbind_db_arm(void)
{
	struct kretprobe *rps[] = { &railbind_db_attach_rp, &railbind_db_map_rp };
	struct kprobe *kps[] = { &railbind_db_kps[0], &railbind_db_kps[1] };
	int ret;

	ret = register_kretprobes(rps, ARRAY_SIZE(rps));
	if (ret)
		return ret;
	ret = register_kprobes(kps, ARRAY_SIZE(kps));
	if (ret) {
		unregister_kretprobes(rps, ARRAY_SIZE(rps));
		return ret;
	}
	railbind_db_armed = true;
	return 0;
}

static void railbind_db_disarm(void)
{
	struct kretprobe *rps[] = { &railbind_db_attach_rp, &railbind_db_map_rp };
	struct kprobe *kps[] = { &railbind_db_kps[0], &railbind_db_kps[1] };

	if (!railbind_db_armed)
		return;
	unregister_kprobes(kps, ARRAY_SIZE(kps));
	unregister_kretprobes(rps, ARRAY_SIZE(rps));
	railbind_db_armed = false;
}

const char *railbind_peer_state(void)
{
	if (READ_ONCE(railbind_nv_armed))
		return "armed";
	return "waiting";
}

struct railbind_peer_row {
	u32 gpu, nic;
	u8 route;
	char exporter[RAILBIND_EXP_LEN];
	u64 maps, attachments, bytes;
};

static void railbind_emit_id(struct railbind_buf *buf, const char *key, u32 id)
{
	if (id == RAILBIND_NO_DEV)
		railbind_emit(buf, " %s=-", key);
	else
		railbind_emit(buf, " %s=%04x:%02x:%02x.%x", key, id >> 16, (id >> 8) & 0xff,
			      PCI_SLOT(id & 0xff), PCI_FUNC(id & 0xff));
}

/* Aggregates the live table into rows per (gpu, nic, route, exporter). */
static unsigned int railbind_peer_rows(struct railbind_peer_row *rows, u64 *st)
{
	unsigned int i, j, n = 0;
	unsigned long flags;

	spin_lock_irqsave(&railbind_peer_lock, flags);
	for (i = 0; i < RAILBIND_MAX_MAPS; i++) {
		const struct railbind_map *m = &railbind_maps[i];

		if (!m->cookie)
			continue;
		for (j = 0; j < n; j++)
			if (rows[j].gpu == m->gpu && rows[j].nic == m->nic &&
			    rows[j].route == m->route &&
			    !strcmp(rows[j].exporter, m->exporter))
				break;
		if (j == n) {
			memset(&rows[n], 0, sizeof(rows[n]));
			rows[n].gpu = m->gpu;
			rows[n].nic = m->nic;
			rows[n].route = m->route;
			memcpy(rows[n].exporter, m->exporter, RAILBIND_EXP_LEN);
			n++;
		}
		if (m->route == RAILBIND_ROUTE_DMABUF)
			rows[j].attachments++;
		if (m->mapped) {
			rows[j].maps++;
			rows[j].bytes += m->bytes;
		}
	}
	st[0] = railbind_st_maps;
	st[1] = railbind_st_unmaps;
	st[2] = railbind_st_freed;
	st[3] = railbind_st_overflow;
	spin_unlock_irqrestore(&railbind_peer_lock, flags);
	return n;
}

int railbind_peer_render(struct railbind_buf *buf)
{
	struct railbind_peer_row *rows;
	unsigned int i, n;
	u64 st[4];

	rows = kvcalloc(RAILBIND_MAX_MAPS, sizeof(*rows), GFP_KERNEL);
	if (!rows) {
		buf->err = -ENOMEM;
		return 0;
	}
	n = railbind_peer_rows(rows, st);
	for (i = 0; i < n; i++) {
		railbind_emit(buf, "peer");
		railbind_emit_id(buf, "gpu", rows[i].gpu);
		railbind_emit_id(buf, "nic", rows[i].nic);
		railbind_emit(buf, " route=%s exporter=%s attachments=%llu maps=%llu bytes=%llu\n",
			      railbind_route_names[rows[i].route],
			      rows[i].exporter[0] ? rows[i].exporter : "-",
			      rows[i].attachments, rows[i].maps, rows[i].bytes);
	}
	railbind_emit(buf, "peerstat maps=%llu unmaps=%llu", st[0], st[1]);
	railbind_emit(buf, " freed_without_unmap=%llu overflow=%llu", st[2], st[3]);
	/* A return probe out of instances misses a map: say so rather than drift silently. */
	railbind_emit(buf, " missed=%u", READ_ONCE(railbind_nv_map_rp.nmissed) +
		      READ_ONCE(railbind_db_attach_rp.nmissed) +
		      READ_ONCE(railbind_db_map_rp.nmissed));
	railbind_emit(buf, " nvidia=%s dmabuf=%s\n", railbind_peer_state(),
		      railbind_db_armed ? "armed" : "off");
	kvfree(rows);
	return n + 1;
}

int railbind_peer_init(void)
{
	int ret;

	railbind_maps = vzalloc(array_size(RAILBIND_MAX_MAPS, sizeof(*railbind_maps)));
	if (!railbind_maps)
		return -ENOMEM;
	ret = register_module_notifier(&railbind_module_nb);
	if (ret)
		goto err_free;
	/* The provider may already be loaded; absent is not an error. */
	mutex_lock(&railbind_arm_lock);
	railbind_nv_arm();
	mutex_unlock(&railbind_arm_lock);
	if (dmabuf_taps) {
		ret = railbind_db_arm();
		if (ret)
			pr_warn("dma-buf taps unavailable (%d)\n", ret);
	}
	return 0;

err_free:
	vfree(railbind_maps);
	railbind_maps = NULL;
	return ret;
}

void railbind_peer_exit(void)
{
	unregister_module_notifier(&railbind_module_nb);
	railbind_db_disarm();
	mutex_lock(&railbind_arm_lock);
	railbind_nv_disarm();
	mutex_unlock(&railbind_arm_lock);
	vfree(railbind_maps);
	railbind_maps = NULL;
}
