/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * annotate - between the files that add railbind's own info attributes to a loaded
 * hwloc topology (source_live.c drives them): the state of one pass over the
 * topology, the root's files (sysfs.c), and one annotator per kind of object:
 * PCI functions and ports (annotate_pci.c), RDMA ports (annotate_rdma.c), the
 * Machine (annotate_host.c). Private to libaffinity; functions return 0 or a
 * negative errno.
 */
#ifndef AFF_ANNOTATE_H
#define AFF_ANNOTATE_H

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include <hwloc.h>

#include "health.h"
#include "source_live.h"

struct aff_kmod_snapshot;

struct annotator {
	const char *root;	/* "" for the real root, else a prefix without trailing '/' */
	size_t rootlen;
	bool real_root;
	struct aff_discover_report *rep;
	struct aff_kmod_snapshot *kmod;	/* railbind.ko's view, NULL without the module */
	struct aff_health health;	/* railbindd's counters of this boot */
	bool have_health;
	unsigned unreadable;		/* AFF_UNREADABLE_* of the object being annotated */
};

/* What could not be read on one object, recorded so a snapshot's audit knows too. */
#define UNREADABLE_ACS		1u
#define UNREADABLE_LINK		2u
#define UNREADABLE_NUMA		4u
#define UNREADABLE_IOMMU	8u
#define UNREADABLE_VPD		16u

static inline bool has_info(hwloc_obj_t obj, const char *name)
{
	return hwloc_obj_get_info_by_name(obj, name) != NULL;
}

/* An info already there is kept: a snapshot's recorded value is not re-read. */
static inline int add_info(hwloc_obj_t obj, const char *name, const char *value)
{
	if (has_info(obj, name))
		return 0;
	return hwloc_obj_add_info(obj, name, value) < 0 ? -ENOMEM : 0;
}

/* A value fit for an info: printable, no blanks, not empty. */
static inline bool valid_token(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isgraph((unsigned char)*s))
			return false;
	return true;
}

/* sysfs.c: the files under the annotator's root. */
__attribute__((format(printf, 4, 5)))
int aff_sysfs_path(const struct annotator *an, char *buf, size_t len, const char *fmt, ...);
bool aff_sysfs_exists(const char *path);
int aff_sysfs_read(const char *path, char *buf, size_t len);
bool aff_sysfs_rooted_exists(const struct annotator *an, const char *rel);
int aff_sysfs_rooted_read(const struct annotator *an, const char *rel, char *buf, size_t len);

/* annotate_pci.c: PCI devices and the PCI-to-PCI bridges that are PCI functions. */
bool aff_is_pci_function(hwloc_obj_t obj);
int aff_annotate_pci(struct annotator *an, hwloc_obj_t obj);
/* annotate_rdma.c: the ports of an OpenFabrics OS device. */
bool aff_is_openfabrics(hwloc_obj_t obj);
int aff_annotate_rdma(struct annotator *an, hwloc_obj_t obj);
/*
 * annotate_rdma.c: a software RDMA device (rxe, siw) on a PCI NIC's netdev,
 * which hwloc leaves out (it has no PCI parent of its own): its ports
 * annotated onto that netdev's OS device, named by RailbindRDMADevice.
 */
int aff_annotate_soft_rdma(struct annotator *an, hwloc_topology_t topo);
/*
 * annotate_port.c: a port's fabric facts, the device's firmware and board id
 * (fabric.h), of RDMA device @dev, onto @obj.
 */
int aff_annotate_port_fabric(struct annotator *an, hwloc_obj_t obj, const char *dev,
			     unsigned port);
int aff_annotate_rdma_device(struct annotator *an, hwloc_obj_t obj, const char *dev);
/* annotate_host.c: the Machine: hostname, module, peer memory, health, peers. */
int aff_annotate_host(struct annotator *an, hwloc_obj_t obj);

#endif /* AFF_ANNOTATE_H */
