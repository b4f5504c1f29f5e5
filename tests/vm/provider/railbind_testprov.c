// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only peer-memory provider for the QEMU tests; never installed.
 *
 * It exports the nvidia_p2p_* entry points with NVIDIA's signatures (over
 * a stand-in GPU's BAR, no real memory behind it), a dma-buf exporter over
 * the same BAR, and a control device that drives them the way
 * nvidia-peermem and ib_umem_dmabuf do, including frees without unmap.
 *
 * /dev/railbind_testprov takes one command per write:
 *   nvmap ID GPU NIC ENTRIES PAGESIZE   get_pages + dma_map_pages
 *   nvmapv ID GPU NIC ENTRIES PAGESIZE VERSION   the same, page table version given
 *   nvunmap ID                          dma_unmap_pages + put_pages
 *   nvput ID                            put_pages only (mapping freed unmapped)
 *   apimap ID GPU NIC BYTES / apiunmap ID   railbind_peer_map/unmap
 *   apialias ID GPU NIC BYTES SRC           railbind_peer_map with slot SRC's
 *                                           nvidia mapping as the cookie
 *   apileak ID                          forget an API mapping without unmapping it
 *   dbattach ID GPU NIC BYTES           export + dynamic attach by the NIC
 *   dbmap ID / dbunmap ID               map/unmap the attachment
 *   dbdetach ID                         detach and release, mapped or not
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "nv_p2p.h"
#include "railbind_api.h"

#define TP_SLOTS 128

struct tp_slot {
	struct nvidia_p2p_page_table *pt;
	struct nvidia_p2p_dma_mapping *map;
	struct pci_dev *nic;
	const void *api_cookie;
	struct dma_buf *dmabuf;
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;
	u64 bar;
	u64 bytes;
};

static struct tp_slot tp_slots[TP_SLOTS];
static DEFINE_MUTEX(tp_lock);

static const u64 tp_page_bytes[] = { SZ_4K, SZ_64K, SZ_128K };

noinline int nvidia_p2p_get_pages(u64 p2p_token, u32 va_space, u64 virtual_address,
				  u64 length, struct nvidia_p2p_page_table **page_table,
				  void (*free_callback)(void *data), void *data)
{
	struct nvidia_p2p_page_table *pt;
	u32 i, n = length >> 16;

	pt = kzalloc(sizeof(*pt), GFP_KERNEL);
	if (!pt)
		return -ENOMEM;
	pt->version = 0x00010002;
	pt->page_size = 1;
	pt->entries = n;
	pt->pages = kcalloc(n, sizeof(*pt->pages), GFP_KERNEL);
	if (!pt->pages)
		goto err;
	for (i = 0; i < n; i++) {
		pt->pages[i] = kzalloc(sizeof(*pt->pages[i]), GFP_KERNEL);
		if (!pt->pages[i])
			goto err;
		pt->pages[i]->physical_address = virtual_address + (u64)i * SZ_64K;
	}
	*page_table = pt;
	return 0;
err:
	for (i = 0; pt->pages && i < n; i++)
		kfree(pt->pages[i]);
	kfree(pt->pages);
	kfree(pt);
	return -ENOMEM;
}
EXPORT_SYMBOL_GPL(nvidia_p2p_get_pages);

noinline int nvidia_p2p_free_dma_mapping(struct nvidia_p2p_dma_mapping *dma_mapping)
{
	if (dma_mapping) {
		kfree(dma_mapping->dma_addresses);
		kfree(dma_mapping);
	}
	return 0;
}
EXPORT_SYMBOL_GPL(nvidia_p2p_free_dma_mapping);

noinline int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *page_table)
{
	u32 i;

	for (i = 0; i < page_table->entries; i++)
		kfree(page_table->pages[i]);
	kfree(page_table->pages);
	kfree(page_table);
	return 0;
}
EXPORT_SYMBOL_GPL(nvidia_p2p_free_page_table);

noinline int nvidia_p2p_dma_map_pages(struct pci_dev *peer,
				      struct nvidia_p2p_page_table *page_table,
				      struct nvidia_p2p_dma_mapping **dma_mapping)
{
	struct nvidia_p2p_dma_mapping *m;
	u32 i;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	m->dma_addresses = kcalloc(page_table->entries, sizeof(u64), GFP_KERNEL);
	if (!m->dma_addresses) {
		kfree(m);
		return -ENOMEM;
	}
	m->version = 0x00020003;
	m->page_size_type = page_table->page_size;
	m->entries = page_table->entries;
	m->pci_dev = peer;
	for (i = 0; i < m->entries; i++)
		m->dma_addresses[i] = page_table->pages[i]->physical_address;
	*dma_mapping = m;
	return 0;
}
EXPORT_SYMBOL_GPL(nvidia_p2p_dma_map_pages);

noinline int nvidia_p2p_dma_unmap_pages(struct pci_dev *peer,
					struct nvidia_p2p_page_table *page_table,
					struct nvidia_p2p_dma_mapping *dma_mapping)
{
	return nvidia_p2p_free_dma_mapping(dma_mapping);
}
EXPORT_SYMBOL_GPL(nvidia_p2p_dma_unmap_pages);

/* The caller drops its mappings with the pages: no unmap call is made. */
noinline int nvidia_p2p_put_pages(u64 p2p_token, u32 va_space, u64 virtual_address,
				  struct nvidia_p2p_page_table *page_table)
{
	struct tp_slot *s;

	for (s = tp_slots; s < tp_slots + TP_SLOTS; s++) {
		if (s->pt == page_table && s->map) {
			nvidia_p2p_free_dma_mapping(s->map);
			s->map = NULL;
		}
	}
	return nvidia_p2p_free_page_table(page_table);
}
EXPORT_SYMBOL_GPL(nvidia_p2p_put_pages);

static struct sg_table *tp_map_dma_buf(struct dma_buf_attachment *attach,
				       enum dma_data_direction dir)
{
	struct tp_slot *s = attach->dmabuf->priv;
	struct sg_table *sgt;

	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	if (sg_alloc_table(sgt, 1, GFP_KERNEL)) {
		kfree(sgt);
		return ERR_PTR(-ENOMEM);
	}
	sg_dma_address(sgt->sgl) = s->bar;
	sg_dma_len(sgt->sgl) = s->bytes;
	return sgt;
}

static void tp_unmap_dma_buf(struct dma_buf_attachment *attach, struct sg_table *sgt,
			     enum dma_data_direction dir)
{
	sg_free_table(sgt);
	kfree(sgt);
}

static void tp_release(struct dma_buf *dmabuf)
{
}

static const struct dma_buf_ops tp_dmabuf_ops = {
	.map_dma_buf = tp_map_dma_buf,
	.unmap_dma_buf = tp_unmap_dma_buf,
	.release = tp_release,
};

static void tp_move_notify(struct dma_buf_attachment *attach)
{
}

static const struct dma_buf_attach_ops tp_importer_ops = {
	.allow_peer2peer = true,
	.move_notify = tp_move_notify,
};

static u64 tp_bar(struct pci_dev *gpu)
{
	int bar;

	for (bar = 0; bar < PCI_STD_NUM_BARS; bar++)
		if (pci_resource_flags(gpu, bar) & IORESOURCE_MEM)
			return pci_resource_start(gpu, bar);
	return 0;
}

static struct pci_dev *tp_dev(const char *bdf)
{
	unsigned int dom, bus, dev, fn;

	if (sscanf(bdf, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
		return NULL;
	return pci_get_domain_bus_and_slot(dom, bus, PCI_DEVFN(dev, fn));
}

static void tp_slot_free(struct tp_slot *s)
{
	if (s->map)
		nvidia_p2p_dma_unmap_pages(s->nic, s->pt, s->map);
	s->map = NULL;
	if (s->pt)
		nvidia_p2p_put_pages(0, 0, 0, s->pt);
	if (s->api_cookie) {
		void (*unmap)(const void *cookie) = symbol_get(railbind_peer_unmap);

		if (unmap) {
			unmap(s->api_cookie);
			symbol_put(railbind_peer_unmap);
		}
	}
	if (s->attach) {
		if (s->sgt) {
			dma_resv_lock(s->dmabuf->resv, NULL);
			dma_buf_unmap_attachment(s->attach, s->sgt, DMA_BIDIRECTIONAL);
			dma_resv_unlock(s->dmabuf->resv);
		}
		dma_buf_detach(s->dmabuf, s->attach);
	}
	if (s->dmabuf)
		dma_buf_put(s->dmabuf);
	pci_dev_put(s->nic);
	memset(s, 0, sizeof(*s));
}

static int tp_nvmap(struct tp_slot *s, struct pci_dev *gpu, struct pci_dev *nic,
		    u32 entries, u32 psize, u32 version)
{
	int ret;

	if (psize >= ARRAY_SIZE(tp_page_bytes))
		return -EINVAL;
	ret = nvidia_p2p_get_pages(0, 0, tp_bar(gpu), (u64)entries << 16, &s->pt, NULL, NULL);
	if (ret)
		return ret;
	s->pt->page_size = psize;
	if (version)
		s->pt->version = version;
	ret = nvidia_p2p_dma_map_pages(nic, s->pt, &s->map);
	if (ret) {
		nvidia_p2p_put_pages(0, 0, 0, s->pt);
		s->pt = NULL;
		return ret;
	}
	s->nic = pci_dev_get(nic);
	return 0;
}

static int tp_dbattach(struct tp_slot *s, struct pci_dev *gpu, struct pci_dev *nic,
		       u64 bytes)
{
	DEFINE_DMA_BUF_EXPORT_INFO(exp);

	s->bar = tp_bar(gpu);
	s->bytes = bytes;
	exp.exp_name = "rbtestprov";
	exp.ops = &tp_dmabuf_ops;
	exp.size = PAGE_ALIGN(bytes);
	exp.flags = O_RDWR;
	exp.priv = s;
	s->dmabuf = dma_buf_export(&exp);
	if (IS_ERR(s->dmabuf)) {
		int ret = PTR_ERR(s->dmabuf);

		s->dmabuf = NULL;
		return ret;
	}
	s->attach = dma_buf_dynamic_attach(s->dmabuf, &nic->dev, &tp_importer_ops, s);
	if (IS_ERR(s->attach)) {
		int ret = PTR_ERR(s->attach);

		s->attach = NULL;
		dma_buf_put(s->dmabuf);
		s->dmabuf = NULL;
		return ret;
	}
	s->nic = pci_dev_get(nic);
	return 0;
}

static int tp_command(char *cmd)
{
	char verb[16], gpu_s[16], nic_s[16];
	struct pci_dev *gpu = NULL, *nic = NULL;
	unsigned long long a = 0, b = 0, c = 0;
	unsigned int id;
	struct tp_slot *s;
	int n, ret = 0;

	n = sscanf(cmd, "%15s %u %15s %15s %llu %llu %llx", verb, &id, gpu_s, nic_s, &a, &b, &c);
	if (n < 2 || id >= TP_SLOTS)
		return -EINVAL;
	s = &tp_slots[id];
	if (n >= 4) {
		gpu = tp_dev(gpu_s);
		nic = tp_dev(nic_s);
		if (!gpu || !nic) {
			ret = -ENODEV;
			goto out;
		}
	}
	if (!strcmp(verb, "nvmap") && n == 6 && !s->pt) {
		ret = tp_nvmap(s, gpu, nic, a, b, 0);
	} else if (!strcmp(verb, "nvmapv") && n == 7 && !s->pt) {
		ret = tp_nvmap(s, gpu, nic, a, b, c);
	} else if (!strcmp(verb, "nvunmap") && s->map) {
		nvidia_p2p_dma_unmap_pages(s->nic, s->pt, s->map);
		s->map = NULL;
		tp_slot_free(s);
	} else if (!strcmp(verb, "nvput") && s->pt) {
		nvidia_p2p_put_pages(0, 0, 0, s->pt);
		s->pt = NULL;
		s->map = NULL;
		tp_slot_free(s);
	} else if ((!strcmp(verb, "apimap") && n == 5) ||
		   (!strcmp(verb, "apialias") && n == 6 && b < TP_SLOTS && tp_slots[b].map)) {
		int (*map)(struct module *owner, struct pci_dev *gpu, struct pci_dev *nic,
			   u64 bytes, const void *cookie);
		/* An alias: the number another source (the nvidia probes) keys on. */
		const void *cookie = n == 6 ? (const void *)tp_slots[b].map : s;

		if (s->api_cookie) {
			ret = -EBUSY;
			goto out;
		}
		/* What railbind_peer_map() expands to, without a link-time dependency. */
		map = symbol_get(railbind_peer_map_owned);
		if (!map) {
			ret = -ENOENT;
			goto out;
		}
		ret = map(THIS_MODULE, gpu, nic, a, cookie);
		symbol_put(railbind_peer_map_owned);
		if (!ret)
			s->api_cookie = cookie;
	} else if (!strcmp(verb, "apiunmap") && s->api_cookie) {
		tp_slot_free(s);
	} else if (!strcmp(verb, "apileak") && s->api_cookie) {
		/* Left for railbind to drop when this module goes away. */
		s->api_cookie = NULL;
		tp_slot_free(s);
	} else if (!strcmp(verb, "dbattach") && n == 5 && !s->dmabuf) {
		ret = tp_dbattach(s, gpu, nic, a);
	} else if (!strcmp(verb, "dbmap") && s->attach && !s->sgt) {
		dma_resv_lock(s->dmabuf->resv, NULL);
		s->sgt = dma_buf_map_attachment(s->attach, DMA_BIDIRECTIONAL);
		dma_resv_unlock(s->dmabuf->resv);
		if (IS_ERR(s->sgt)) {
			ret = PTR_ERR(s->sgt);
			s->sgt = NULL;
		}
	} else if (!strcmp(verb, "dbunmap") && s->sgt) {
		dma_resv_lock(s->dmabuf->resv, NULL);
		dma_buf_unmap_attachment(s->attach, s->sgt, DMA_BIDIRECTIONAL);
		dma_resv_unlock(s->dmabuf->resv);
		s->sgt = NULL;
	} else if (!strcmp(verb, "dbdetach") && s->attach) {
		/* Detach with the mapping still held: the importer went away. */
		s->sgt = NULL;
		tp_slot_free(s);
	} else {
		ret = -EPROTO;
	}
out:
	pci_dev_put(gpu);
	pci_dev_put(nic);
	return ret;
}

static ssize_t tp_write(struct file *file, const char __user *ubuf, size_t len,
			loff_t *ppos)
{
	char buf[128];
	int ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	mutex_lock(&tp_lock);
	ret = tp_command(buf);
	mutex_unlock(&tp_lock);
	return ret ? ret : len;
}

static const struct file_operations tp_fops = {
	.owner = THIS_MODULE,
	.write = tp_write,
};

static struct miscdevice tp_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "railbind_testprov",
	.fops = &tp_fops,
	.mode = 0200,
};

static int __init tp_init(void)
{
	return misc_register(&tp_misc);
}

static void __exit tp_exit(void)
{
	int i;

	misc_deregister(&tp_misc);
	for (i = 0; i < TP_SLOTS; i++)
		tp_slot_free(&tp_slots[i]);
}

module_init(tp_init);
module_exit(tp_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("railbind test-only peer-memory provider");
MODULE_IMPORT_NS(DMA_BUF);
