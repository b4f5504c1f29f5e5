/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For peer-memory providers that report their GPU<->NIC mappings to
 * railbind.ko directly. The cookie identifies one mapping until unmap;
 * mappings go with the module that made them (THIS_MODULE, passed by the
 * macro) if it unloads without unmapping. Context: any.
 *
 * railbind_peer_map() returns 0, -EINVAL, -EEXIST (cookie already mapped)
 * or -ENOSPC (the registry is full; counted in peerstat's overflow).
 */
#ifndef RAILBIND_API_H
#define RAILBIND_API_H

#include <linux/module.h>
#include <linux/pci.h>
#include <linux/types.h>

int railbind_peer_map_owned(struct module *owner, struct pci_dev *gpu,
			    struct pci_dev *nic, u64 bytes, const void *cookie);
#define railbind_peer_map(gpu, nic, bytes, cookie) \
	railbind_peer_map_owned(THIS_MODULE, gpu, nic, bytes, cookie)
void railbind_peer_unmap(const void *cookie);

#endif
