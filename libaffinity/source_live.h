/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * source_live - load the live node with hwloc and attach railbind's own info attributes
 * (DESIGN.md "Snapshot extras") read from sysfs and PCI config space, so the live node
 * and a snapshot of it reach the model through the same code.
 *
 * Private to libaffinity. All functions return 0 on success and a negative errno on
 * failure.
 *
 * Not thread-safe: aff_discover_live() sets and restores HWLOC_FSROOT in the process
 * environment around hwloc_topology_load(), which is how hwloc 2.x takes an alternate
 * filesystem root.
 */
#ifndef AFF_SOURCE_LIVE_H
#define AFF_SOURCE_LIVE_H

#include <stddef.h>

#include <hwloc.h>

/* Info attribute names, as DESIGN.md spells them. */
#define AFF_INFO_LINK_SPEED		"RailbindLinkSpeed"
#define AFF_INFO_LINK_SPEED_CAP		"RailbindLinkSpeedCap"
#define AFF_INFO_LINK_WIDTH		"RailbindLinkWidth"
#define AFF_INFO_LINK_WIDTH_CAP		"RailbindLinkWidthCap"
#define AFF_INFO_NUMA_NODE		"RailbindNumaNode"
#define AFF_INFO_IOMMU_GROUP_TYPE	"RailbindIOMMUGroupType"
#define AFF_INFO_ACS_CTL		"RailbindACSCtl"
/* root, upstream, downstream, endpoint, legacy, rciep, bridge */
#define AFF_INFO_PORT_TYPE		"RailbindPortType"
#define AFF_INFO_PORT_STATE_FMT		"RailbindPort%uState"	/* on OpenFabrics OSDevs */
#define AFF_INFO_PORT_RATE_FMT		"RailbindPort%uRate"
#define AFF_INFO_PEER_MEMORY		"RailbindPeerMemory"	/* on the Machine */
#define AFF_INFO_KMOD			"RailbindKmod"
#define AFF_INFO_KERNEL			"RailbindKernel"	/* on the Machine */
#define AFF_INFO_GPU_DRIVER		"RailbindGPUDriver"	/* open, proprietary, absent */
#define AFF_INFO_ATS			"RailbindATS"		/* on PCI objects: 0/1 */
#define AFF_INFO_MPS			"RailbindMPS"		/* bytes */
#define AFF_INFO_MRRS			"RailbindMRRS"		/* bytes */
#define AFF_INFO_RELAXED		"RailbindRelaxedOrdering"	/* 0/1 */
#define AFF_INFO_BAR1			"RailbindBAR1"		/* bytes, on GPUs */
/* On ConnectX functions: the VPD V3 keyword (a DMA function and its PF share it). */
#define AFF_INFO_VPD_UUID		"RailbindVPDUUID"
#define AFF_INFO_SNAPSHOT_VERSION	"RailbindSnapshotVersion"
#define AFF_INFO_HOSTNAME		"RailbindHostname"
/* On PCI objects: what could not be read there ("acs,link,numa,iommu,vpd", any subset). */
#define AFF_INFO_UNREADABLE		"RailbindUnreadable"
/* On the Machine, one per railbind.ko peer record: "gpu=A nic=B route=R maps=N bytes=N". */
#define AFF_INFO_PEER			"RailbindPeer"
/*
 * On the Machine: "restricted" when railbind.ko withheld its peer records from this
 * reader (they go to CAP_PERFMON/CAP_SYS_ADMIN only), so none of them is no evidence.
 */
#define AFF_INFO_PEER_VIEW		"RailbindPeerView"

#define AFF_SNAPSHOT_VERSION		1

/* What could not be read, for the audit's "undecided". Counts are per object. */
struct aff_discover_report {
	unsigned acs_unreadable;	/* ports whose ACS control could not be read (not root, no module) */
	unsigned link_unreadable;	/* PCI objects missing one of the four link values */
	unsigned numa_unreadable;	/* PCI objects without a readable numa_node */
	unsigned iommu_unreadable;	/* PCI objects in an IOMMU group whose type could not be read */
	char note[256];			/* one-line human summary of the above, "" when all read */
};

/*
 * Load the live node with every bridge, PCI device and OS device kept, then annotate it.
 * @root: alternate filesystem root holding sys/ and proc/ (a recorded tree); NULL or "/"
 *        means the real root. hwloc is pointed at the same root through HWLOC_FSROOT
 *        (and HWLOC_FSROOT is unset during the load when @root is the real root, so hwloc
 *        and the annotation always read the same tree).
 * @out:  receives the loaded topology; the caller destroys it with
 *        hwloc_topology_destroy(). Set to NULL on failure.
 * @rep:  may be NULL.
 * @err:  on failure receives a one-line message (may be NULL).
 */
int aff_discover_live(const char *root, hwloc_topology_t *out, struct aff_discover_report *rep,
		      char *err, size_t errlen);

/*
 * Add Railbind* infos to every PCI device, PCI-to-PCI bridge, OpenFabrics OS device and
 * the Machine of an already loaded topology, reading ${root}/sys and ${root}/proc.
 * An info that is already present is left as it is (so annotating a loaded snapshot
 * keeps its recorded values, and annotating twice adds nothing); it is not re-read and
 * not counted in @rep. @rep (may be NULL) is reset first.
 * Returns -ENOMEM if hwloc could not store an info, -EINVAL on bad arguments.
 */
int aff_discover_annotate(hwloc_topology_t topo, const char *root, struct aff_discover_report *rep);

/*
 * Ask the GPU vendors' libraries (NVML, ROCm SMI; annotate_gpu.h) about the GPUs of
 * @topo and add their answers as infos (gpu_ident.h). Only for the real root: a recorded
 * tree is another machine. What could not be known is appended to @rep's note. Costs a
 * driver start (up to seconds without persistence mode): callers ask only when the
 * answers are wanted. 0 or -ENOMEM.
 */
int aff_discover_gpu_libs(hwloc_topology_t topo, const char *root, struct aff_discover_report *rep);

/*
 * Read the module EEPROM of each network PCI function through its netdev and record the
 * readings, or why there are none, as RailbindXcvr* infos (annotate_optics.c): needs
 * CAP_NET_ADMIN, costs a few I2C reads per module, so only the audit and the snapshot
 * ask (AFF_LOAD_OPTICS). A recorded tree (@root not "/") has no module to read: each
 * function records that. 0 or -ENOMEM.
 */
int aff_discover_optics(hwloc_topology_t topo, const char *root, struct aff_discover_report *rep);
/*
 * Each Ethernet network function's DCB state (PFC, APP table, ETS, pause
 * counters sampled twice) and ECN, or why none, as RailbindDcb* infos
 * (annotate_dcb.c). Needs no privilege. 0 or -ENOMEM.
 */
int aff_discover_dcb(hwloc_topology_t topo, const char *root, struct aff_discover_report *rep);
/*
 * aff_discover_verbs - each rail port's active and max MTU from libibverbs,
 * dlopen()ed now (annotate_port_verbs.c); RailbindVerbs on the Machine says
 * whether it could. The live node only: the caller checks the root.
 */
int aff_discover_verbs(hwloc_topology_t topo);

/*
 * Export @topo as hwloc v2 XML to @path atomically: a temporary file in the same
 * directory, fsync, rename over @path, fsync of the directory. On any error no new file
 * is left behind and @path keeps its old content. "-" writes to stdout. The file is
 * created with mode 0644.
 */
int aff_snapshot_write(hwloc_topology_t topo, const char *path, char *err, size_t errlen);

#endif /* AFF_SOURCE_LIVE_H */
