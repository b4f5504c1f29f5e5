// SPDX-License-Identifier: GPL-2.0
/*
 * Kprobes on the NVIDIA driver's third-party P2P interface (nv-p2p.h),
 * which nvidia-peermem and other RDMA providers call to map GPU memory
 * for a NIC.
 *
 * Only the provider module's own symbols are probed ("nvidia:name": the
 * peer_provider parameter names the module), armed when that module goes
 * live and disarmed when it goes away, so another module exporting the
 * same names (the Tegra variant has another signature) is never probed.
 * Handlers trust nothing they are given:
 *  - the peer (argument 0) only counts when it is, by pointer identity, a
 *    NIC railbind tracks; it is never dereferenced;
 *  - the page table's version (its first 32 bits, nv-p2p.h's rule for
 *    third parties) must be a compatible 1.x, checked before any other
 *    field is read; every read is a nofault copy;
 *  - the mapping and page table pointers are kept as opaque keys only.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/ptrace.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "railbind.h"

/* nv-p2p.h: NVIDIA_P2P_PAGE_TABLE_VERSION is 0x00010002; compatible = same major, minor >= 2. */
#define RAILBIND_NV_PT_MAJOR 1
#define RAILBIND_NV_PT_MINOR 2

/* The leading fields of struct nvidia_p2p_page_table, version 1.x. */
struct railbind_nv_page_table {
	u32 version;
	u32 page_size;		/* enum nvidia_p2p_page_size_type */
	u64 **pages;		/* struct nvidia_p2p_page *[]; physical_address first */
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

enum {
	RAILBIND_NV_UNMAP,
	RAILBIND_NV_FREE_MAPPING,
	RAILBIND_NV_PUT_PAGES,
	RAILBIND_NV_PUT_PERSISTENT,
	RAILBIND_NV_FREE_TABLE,
	RAILBIND_NV_NKPS,
};

/* "module:symbol", the kprobe name that only that module's symbol matches. */
static char railbind_nv_map_sym[MODULE_NAME_LEN + 32];
static char railbind_nv_kp_syms[RAILBIND_NV_NKPS][MODULE_NAME_LEN + 40];

struct railbind_nv_call {
	unsigned long table;
	unsigned long out;
	u64 nic;
};

/* nvidia_p2p_dma_map_pages(peer, page_table, &mapping): untracked peers end here. */
static int railbind_nv_map_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct railbind_nv_call *c = (void *)ri->data;

	c->nic = railbind_peer_nic((const void *)regs_get_kernel_argument(regs, 0));
	if (c->nic == RAILBIND_NO_DEV) {
		railbind_peer_stat_inc(RAILBIND_ST_UNTRACKED);
		return 1;
	}
	c->table = regs_get_kernel_argument(regs, 1);
	c->out = regs_get_kernel_argument(regs, 2);
	return 0;
}

static int railbind_nv_map_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct railbind_nv_call *c = (void *)ri->data;
	struct railbind_nv_page_table pt;
	unsigned long mapping;
	u64 *page0, phys = 0;
	u32 version;

	if (regs_return_value(regs) != 0 || !c->table || !c->out)
		return 0;
	if (get_kernel_nofault(version, (u32 *)c->table))
		return 0;
	if (version >> 16 != RAILBIND_NV_PT_MAJOR || (version & 0xffff) < RAILBIND_NV_PT_MINOR) {
		railbind_peer_stat_inc(RAILBIND_ST_BADVERSION);
		return 0;
	}
	if (copy_from_kernel_nofault(&pt, (void *)c->table, sizeof(pt)) ||
	    get_kernel_nofault(mapping, (unsigned long *)c->out) || !mapping)
		return 0;
	if (pt.entries && pt.pages && !get_kernel_nofault(page0, pt.pages) && page0 &&
	    get_kernel_nofault(phys, page0))
		phys = 0;
	railbind_peer_add(mapping, c->table, NULL, RAILBIND_ROUTE_NVIDIA,
			  railbind_peer_gpu_at(phys), c->nic, NULL,
			  (u64)pt.entries * railbind_nv_page_bytes(pt.page_size), true);
	return 0;
}

/* nvidia_p2p_dma_unmap_pages(peer, page_table, mapping) */
static int railbind_nv_unmap_pre(struct kprobe *p, struct pt_regs *regs)
{
	railbind_peer_drop(regs_get_kernel_argument(regs, 2), RAILBIND_ROUTE_NVIDIA, false);
	return 0;
}

/* nvidia_p2p_free_dma_mapping(mapping): the mapping goes, unmapped or not. */
static int railbind_nv_free_map_pre(struct kprobe *p, struct pt_regs *regs)
{
	railbind_peer_drop(regs_get_kernel_argument(regs, 0), RAILBIND_ROUTE_NVIDIA, true);
	return 0;
}

/* nvidia_p2p_put_pages(token, va_space, va, page_table) */
static int railbind_nv_put_pre(struct kprobe *p, struct pt_regs *regs)
{
	railbind_peer_drop_group(regs_get_kernel_argument(regs, 3), RAILBIND_ROUTE_NVIDIA);
	return 0;
}

/* nvidia_p2p_put_pages_persistent(va, page_table, flags) */
static int railbind_nv_put_persistent_pre(struct kprobe *p, struct pt_regs *regs)
{
	railbind_peer_drop_group(regs_get_kernel_argument(regs, 1), RAILBIND_ROUTE_NVIDIA);
	return 0;
}

/* nvidia_p2p_free_page_table(page_table) */
static int railbind_nv_free_table_pre(struct kprobe *p, struct pt_regs *regs)
{
	railbind_peer_drop_group(regs_get_kernel_argument(regs, 0), RAILBIND_ROUTE_NVIDIA);
	return 0;
}

static const struct {
	const char *name;
	kprobe_pre_handler_t pre;
} railbind_nv_kp_def[RAILBIND_NV_NKPS] = {
	[RAILBIND_NV_UNMAP] = { "nvidia_p2p_dma_unmap_pages", railbind_nv_unmap_pre },
	[RAILBIND_NV_FREE_MAPPING] = { "nvidia_p2p_free_dma_mapping", railbind_nv_free_map_pre },
	[RAILBIND_NV_PUT_PAGES] = { "nvidia_p2p_put_pages", railbind_nv_put_pre },
	[RAILBIND_NV_PUT_PERSISTENT] = { "nvidia_p2p_put_pages_persistent",
					 railbind_nv_put_persistent_pre },
	[RAILBIND_NV_FREE_TABLE] = { "nvidia_p2p_free_page_table", railbind_nv_free_table_pre },
};

static struct kretprobe railbind_nv_map_rp;
static struct kprobe railbind_nv_kps[RAILBIND_NV_NKPS];
static bool railbind_nv_kp_on[RAILBIND_NV_NKPS];
static bool railbind_nv_is_armed;
static unsigned long railbind_nv_missed_before;	/* from earlier armings */
static DEFINE_MUTEX(railbind_nv_lock);

bool railbind_nv_armed(void)
{
	return READ_ONCE(railbind_nv_is_armed);
}

unsigned long railbind_nv_missed(void)
{
	unsigned long n;

	mutex_lock(&railbind_nv_lock);
	n = railbind_nv_missed_before;
	if (railbind_nv_is_armed)
		n += READ_ONCE(railbind_nv_map_rp.nmissed);
	mutex_unlock(&railbind_nv_lock);
	return n;
}

/*
 * Caller holds railbind_nv_lock. The map probe is required; the freeing
 * entry points are optional (older drivers lack the persistent one). The
 * structures are rebuilt each time: the kprobe core keeps state in them.
 */
static int railbind_nv_arm(void)
{
	const char *prov = railbind_peer_module;
	unsigned int i;
	int ret;

	if (railbind_nv_is_armed)
		return 0;
	snprintf(railbind_nv_map_sym, sizeof(railbind_nv_map_sym), "%s:%s", prov,
		 "nvidia_p2p_dma_map_pages");
	memset(&railbind_nv_map_rp, 0, sizeof(railbind_nv_map_rp));
	railbind_nv_map_rp.kp.symbol_name = railbind_nv_map_sym;
	railbind_nv_map_rp.entry_handler = railbind_nv_map_entry;
	railbind_nv_map_rp.handler = railbind_nv_map_ret;
	railbind_nv_map_rp.data_size = sizeof(struct railbind_nv_call);
	railbind_nv_map_rp.maxactive = 64;
	ret = register_kretprobe(&railbind_nv_map_rp);
	if (ret)
		return ret;
	for (i = 0; i < RAILBIND_NV_NKPS; i++) {
		struct kprobe *kp = &railbind_nv_kps[i];

		snprintf(railbind_nv_kp_syms[i], sizeof(railbind_nv_kp_syms[i]), "%s:%s", prov,
			 railbind_nv_kp_def[i].name);
		memset(kp, 0, sizeof(*kp));
		kp->symbol_name = railbind_nv_kp_syms[i];
		kp->pre_handler = railbind_nv_kp_def[i].pre;
		railbind_nv_kp_on[i] = !register_kprobe(kp);
	}
	WRITE_ONCE(railbind_nv_is_armed, true);
	return 0;
}

/* Caller holds railbind_nv_lock; the provider's mappings go with it. */
static void railbind_nv_disarm(void)
{
	unsigned int i;

	if (!railbind_nv_is_armed)
		return;
	unregister_kretprobe(&railbind_nv_map_rp);
	for (i = 0; i < RAILBIND_NV_NKPS; i++) {
		if (railbind_nv_kp_on[i])
			unregister_kprobe(&railbind_nv_kps[i]);
		railbind_nv_kp_on[i] = false;
	}
	railbind_nv_missed_before += railbind_nv_map_rp.nmissed;
	WRITE_ONCE(railbind_nv_is_armed, false);
	railbind_peer_drop_all(RAILBIND_ROUTE_NVIDIA, NULL);
}

/* The module notifier, for every module: only the provider matters here. */
void railbind_nv_module_event(struct module *mod, unsigned long action)
{
	int ret;

	if (strcmp(mod->name, railbind_peer_module))
		return;
	mutex_lock(&railbind_nv_lock);
	if (action == MODULE_STATE_LIVE) {
		ret = railbind_nv_arm();
		if (ret)
			pr_warn("%s is live but %s cannot be probed (%d)\n", mod->name,
				railbind_nv_map_sym, ret);
	} else if (action == MODULE_STATE_GOING) {
		railbind_nv_disarm();
	}
	mutex_unlock(&railbind_nv_lock);
}

/* Arms at once when the provider is already live; absent is not an error. */
int railbind_nv_init(void)
{
	int ret;

	mutex_lock(&railbind_nv_lock);
	ret = railbind_nv_arm();
	mutex_unlock(&railbind_nv_lock);
	return ret;
}

void railbind_nv_exit(void)
{
	mutex_lock(&railbind_nv_lock);
	railbind_nv_disarm();
	mutex_unlock(&railbind_nv_lock);
}
