/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NVIDIA's nv-p2p.h interface as nvidia-peermem uses it (page table 1.x,
 * DMA mapping 2.x), restated for the test provider.
 */
#ifndef RAILBIND_TEST_NV_P2P_H
#define RAILBIND_TEST_NV_P2P_H

#include <linux/pci.h>
#include <linux/types.h>

struct nvidia_p2p_page {
	u64 physical_address;
	u32 registers[6];
};

struct nvidia_p2p_page_table {
	u32 version;
	u32 page_size;
	struct nvidia_p2p_page **pages;
	u32 entries;
	u8 *gpu_uuid;
};

struct nvidia_p2p_dma_mapping {
	u32 version;
	u32 page_size_type;
	u32 entries;
	u64 *dma_addresses;
	void *private;
	struct pci_dev *pci_dev;
};

int nvidia_p2p_get_pages(u64 p2p_token, u32 va_space, u64 virtual_address, u64 length,
			 struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data);
int nvidia_p2p_put_pages(u64 p2p_token, u32 va_space, u64 virtual_address,
			 struct nvidia_p2p_page_table *page_table);
int nvidia_p2p_dma_map_pages(struct pci_dev *peer, struct nvidia_p2p_page_table *page_table,
			     struct nvidia_p2p_dma_mapping **dma_mapping);
int nvidia_p2p_dma_unmap_pages(struct pci_dev *peer, struct nvidia_p2p_page_table *page_table,
			       struct nvidia_p2p_dma_mapping *dma_mapping);
int nvidia_p2p_free_dma_mapping(struct nvidia_p2p_dma_mapping *dma_mapping);
int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *page_table);

#endif
