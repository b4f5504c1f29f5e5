// SPDX-License-Identifier: GPL-2.0
/*
 * Kprobes on dma-buf for mappings a tracked NIC makes of another device's
 * memory (the RDMA core's ib_umem_dmabuf path): off unless dmabuf_taps is
 * set, since they fire for every dma-buf on the system (DRM, V4L2, ...).
 *
 * Each handler filters first and cheaply: an attach by a device that is
 * not a tracked NIC (pointer identity, nothing dereferenced) returns 1 from
 * the entry handler, so its return handler never runs; map, unmap and
 * detach return at once unless some attachment is recorded, and then look
 * up only that one.
 *
 * dma_buf_dynamic_attach(dmabuf, dev, ops, priv) records the attachment;
 * dma_buf_map_attachment(attach, dir) places it on the GPU whose BAR holds
 * the first DMA address (the bus address without an IOMMU) with the
 * buffer's size; unmap and detach undo each step.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-buf.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/ptrace.h>
#include <linux/scatterlist.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "railbind.h"

static bool dmabuf_taps;
module_param(dmabuf_taps, bool, 0444);
MODULE_PARM_DESC(dmabuf_taps, "Count dma-buf attachments made by tracked NICs (default off)");

struct railbind_db_call {
	unsigned long dmabuf;
	u64 nic;
};

static int railbind_db_attach_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct railbind_db_call *c = (void *)ri->data;
	unsigned long dev = regs_get_kernel_argument(regs, 1);

	/* The pci_dev that would contain dev: an address, compared, never read. */
	c->nic = railbind_peer_nic((const void *)(dev - offsetof(struct pci_dev, dev)));
	if (c->nic == RAILBIND_NO_DEV)
		return 1;
	c->dmabuf = regs_get_kernel_argument(regs, 0);
	return 0;
}

/* strncpy_from_kernel_nofault is not exported; a byte loop is enough here. */
static void railbind_copy_name(char *dst, const char *src, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i++) {
		if (get_kernel_nofault(dst[i], src + i) || !dst[i] || dst[i] <= ' ' ||
		    dst[i] > '~')
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

	if (IS_ERR_OR_NULL((void *)attach))
		return 0;
	if (!get_kernel_nofault(name, &((struct dma_buf *)c->dmabuf)->exp_name) && name)
		railbind_copy_name(exporter, name, sizeof(exporter));
	railbind_peer_add(attach, 0, NULL, RAILBIND_ROUTE_DMABUF, RAILBIND_NO_DEV, c->nic,
			  exporter, 0, false);
	return 0;
}

/* dma_buf_detach(dmabuf, attach) */
static int railbind_db_detach_pre(struct kprobe *p, struct pt_regs *regs)
{
	railbind_peer_drop(regs_get_kernel_argument(regs, 1), RAILBIND_ROUTE_DMABUF, true);
	return 0;
}

struct railbind_db_map_call {
	unsigned long attach;
};

static int railbind_db_map_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct railbind_db_map_call *c = (void *)ri->data;

	c->attach = regs_get_kernel_argument(regs, 0);
	if (!railbind_peer_route_live(RAILBIND_ROUTE_DMABUF) ||
	    !railbind_peer_known(c->attach, RAILBIND_ROUTE_DMABUF))
		return 1;
	return 0;
}

static int railbind_db_map_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct railbind_db_map_call *c = (void *)ri->data;
	struct sg_table *sgt = (struct sg_table *)regs_return_value(regs);
	struct dma_buf_attachment *at = (struct dma_buf_attachment *)c->attach;
	struct dma_buf *dmabuf;
	unsigned int nents;
	size_t size = 0;
	u64 first = 0;

	if (IS_ERR_OR_NULL(sgt))
		return 0;
	/* O(1) whatever the sg_table's length: its first address and the buffer's size. */
	if (!get_kernel_nofault(nents, &sgt->nents) && nents)
		first = sg_dma_address(sgt->sgl);
	if (!get_kernel_nofault(dmabuf, &at->dmabuf) && dmabuf &&
	    get_kernel_nofault(size, &dmabuf->size))
		size = 0;
	railbind_peer_set_mapping(c->attach, RAILBIND_ROUTE_DMABUF,
				  railbind_peer_gpu_at(first), size, true);
	return 0;
}

/* dma_buf_unmap_attachment(attach, sgt, dir) */
static int railbind_db_unmap_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (railbind_peer_route_live(RAILBIND_ROUTE_DMABUF))
		railbind_peer_set_mapping(regs_get_kernel_argument(regs, 0),
					  RAILBIND_ROUTE_DMABUF, RAILBIND_NO_DEV, 0, false);
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

static struct kretprobe *railbind_db_rps[] = { &railbind_db_attach_rp, &railbind_db_map_rp };
static struct kprobe *railbind_db_kpp[] = { &railbind_db_kps[0], &railbind_db_kps[1] };
static bool railbind_db_is_armed;

bool railbind_dmabuf_armed(void)
{
	return READ_ONCE(railbind_db_is_armed);
}

unsigned long railbind_dmabuf_missed(void)
{
	if (!READ_ONCE(railbind_db_is_armed))
		return 0;
	return READ_ONCE(railbind_db_attach_rp.nmissed) + READ_ONCE(railbind_db_map_rp.nmissed);
}

int railbind_dmabuf_init(void)
{
	int ret;

	if (!dmabuf_taps)
		return 0;
	ret = register_kretprobes(railbind_db_rps, ARRAY_SIZE(railbind_db_rps));
	if (ret)
		goto err;
	ret = register_kprobes(railbind_db_kpp, ARRAY_SIZE(railbind_db_kpp));
	if (ret) {
		unregister_kretprobes(railbind_db_rps, ARRAY_SIZE(railbind_db_rps));
		goto err;
	}
	WRITE_ONCE(railbind_db_is_armed, true);
	return 0;
err:
	pr_warn("dma-buf taps unavailable (%d)\n", ret);
	return ret;
}

void railbind_dmabuf_exit(void)
{
	if (!railbind_db_is_armed)
		return;
	unregister_kprobes(railbind_db_kpp, ARRAY_SIZE(railbind_db_kpp));
	unregister_kretprobes(railbind_db_rps, ARRAY_SIZE(railbind_db_rps));
	WRITE_ONCE(railbind_db_is_armed, false);
	railbind_peer_drop_all(RAILBIND_ROUTE_DMABUF, NULL);
}
