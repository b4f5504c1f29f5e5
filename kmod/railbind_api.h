/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For peer-memory providers that report their GPU<->NIC mappings to
 * railbind.ko directly. The cookie identifies one mapping until unmap.
 */
#ifndef RAILBIND_API_H
#define RAILBIND_API_H

#include <linux/pci.h>
#include <linux/types.h>

int railbind_peer_map(struct pci_dev *gpu, struct pci_dev *nic, u64 bytes,
		      const void *cookie);
void railbind_peer_unmap(const void *cookie);

#endif
