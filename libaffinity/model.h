/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The node model every source (live node, hwloc XML, NCCL XML) is turned
 * into, and everything after it (paths, plan, audit, outputs) reads. It is a
 * flat array of PCI devices linked to their parents, the CPU side as NUMA
 * nodes and cores, and the classified GPUs and rails.
 */
#ifndef RAILBIND_MODEL_H
#define RAILBIND_MODEL_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <hwloc.h>

#include "internal.h"

enum aff_src {
	AFF_SRC_LIVE,
	AFF_SRC_HWLOC,
	AFF_SRC_NCCL,
};

enum aff_devtype {
	AFF_DEV_HOSTBRIDGE,	/* root complex (hwloc 0-1 bridge, NCCL <cpu>) */
	AFF_DEV_BRIDGE,		/* PCI-to-PCI bridge (port) */
	AFF_DEV_ENDPOINT,
};

/*
 * PCIe port type, from the PCI Express capability (config space, the
 * module's type=, a snapshot's RailbindPortType). AFF_PORT_BRIDGE is any
 * bridge to or from conventional PCI.
 */
enum aff_port_type {
	AFF_PORT_UNKNOWN,
	AFF_PORT_ROOT,
	AFF_PORT_UPSTREAM,
	AFF_PORT_DOWNSTREAM,
	AFF_PORT_ENDPOINT,
	AFF_PORT_LEGACY,
	AFF_PORT_RCIEP,
	AFF_PORT_BRIDGE,
};

/* Where a device sits on the CPU side: the first non-I/O object above it. */
struct aff_locality {
	hwloc_bitmap_t cpuset;
	hwloc_bitmap_t nodeset;
	hwloc_bitmap_t mems;	/* nodeset less CPU-less nodes (unless all are) */
	int numa;		/* os_index when mems is one node, else -1 */
	bool known;		/* false: machine-wide on a multi-NUMA node */
	int depth;		/* hwloc depth of that object, for distances */
	hwloc_obj_t obj;	/* NULL for NCCL sources */
};

struct aff_dev {
	enum aff_devtype type;
	char pci[16];		/* "dddd:bb:dd.f", "" when unknown */
	unsigned domain, bus, devno, func;
	int vendor, device;	/* -1 unknown */
	int class_id;		/* 16-bit class<<8|subclass, -1 unknown */
	int subvendor, subdevice;	/* subsystem ids, -1 unknown */
	enum aff_port_type port_type;
	int parent;		/* index in topo->dev, -1 at the top */
	int hostbridge;		/* index of the host bridge above, -1 none */
	int loc;		/* index in topo->loc */
	bool is_switch;		/* a switch's upstream port: some device's up */
	/*
	 * The switch this device hangs from, as a path class counts it (-1:
	 * the root complex): its nearest upstream port where port types are
	 * known, else NCCL's rule. nccl_up is what NCCL itself computes
	 * (always its rule, Broadcom two-level switches flattened). model_switches.c.
	 */
	int up, nccl_up;
	bool has_gpu_osdev;	/* hwloc GPU/CoProc OS device, NCCL <gpu> */
	bool has_net;		/* a network interface */
	int gpu;		/* index in topo->gpus, -1 */
	int gdr;		/* an NCCL file's <gpu gdr=> (GPUDirect), -1 not said */
	/* Railbind* infos and sysfs facts; -1 / 0 / NULL when unknown. */
	double link_speed, link_speed_cap;
	int link_width, link_width_cap;
	int acs_ctl;
	/*
	 * GPUDirect RDMA readiness (audit_gdr.c), -1 unknown: ATS capability
	 * (RailbindATS, 0/1), Max Payload and Max Read Request in bytes
	 * (RailbindMPS, RailbindMRRS, from Device Control), Relaxed Ordering
	 * enabled (RailbindRelaxedOrdering, 0/1), BAR1 size in bytes
	 * (RailbindBAR1, the GPU's peer-memory window).
	 */
	int ats, mps, mrrs, relaxed;
	long long bar1;
	int numa_raw;		/* RailbindNumaNode, INT_MIN when absent */
	char *iommu_type;
	char *netdev;
	unsigned unreadable;	/* AFF_UNREADABLE_*: what discovery could not read */
	struct aff_gident *gident;	/* GPU identity (gpu_ident.h), NULL unknown */
	/*
	 * RailbindVPDUUID: the VPD V3 keyword (a ConnectX-8's DMA function and
	 * its PF carry the same one), NULL unknown.
	 */
	char *vpd_uuid;
};

/* RailbindUnreadable on a PCI object: "acs,link,numa,iommu,vpd" (any subset). */
enum {
	AFF_UNREADABLE_ACS = 1u << 0,
	AFF_UNREADABLE_LINK = 1u << 1,
	AFF_UNREADABLE_NUMA = 1u << 2,
	AFF_UNREADABLE_IOMMU = 1u << 3,
	AFF_UNREADABLE_VPD = 1u << 4,	/* "vpd": root-only, read by the broker */
};

/*
 * A peer-memory (GPUDirect RDMA) mapping group railbind.ko saw: a NIC
 * mapping a GPU's memory (RailbindPeer on the Machine, from the module's
 * peer records).
 */
struct aff_peer {
	char gpu[16];		/* "dddd:bb:dd.f", "" when the GPU is unknown */
	char nic[16];
	char route[16];		/* nvidia, dmabuf, api */
	long maps;
	long long bytes;
};

/* Why a rail is left out of the plan (model_rank.c); AFF_EXCL_NONE: it is used. */
enum aff_excl {
	AFF_EXCL_NONE,
	AFF_EXCL_DOWN,		/* its port is known and not ACTIVE */
	AFF_EXCL_SLOW,		/* much slower than the fastest rail */
	AFF_EXCL_NORTH_SOUTH,	/* a BlueField DPU beside the node's rails */
};

/* An RDMA device port (or Ethernet rail) on a PCI device. */
struct aff_rail {
	int dev;		/* index in topo->dev */
	char *name;		/* mlx5_0, NULL when the source has none */
	int port;		/* 0 when unknown */
	/*
	 * The verbs device and port NCCL_IB_HCA and UCX_NET_DEVICES match, where
	 * the source spells them otherwise (an NCCL file: "<dev>_dma", the port
	 * plus NCCL's real-port index, source_nccl.c); NULL / 0: name and port.
	 */
	char *hca;
	int hca_port;
	/*
	 * The Data Direct DMA function (dev index) that carries this PF's GPU
	 * traffic, matched by VPD UUID (model_complex.c); -1: dev itself.
	 */
	int via;
	char *port_state;	/* ACTIVE, DOWN, ... NULL when unknown */
	double rate;		/* Gb/s, 0 when unknown */
	bool rdma;		/* false for an Ethernet NIC made a rail */
	bool listed;		/* the source names it a collective network */
	bool included;		/* include-nic names it */
	int gdr;		/* an NCCL file's gdr= (GPUDirect), -1 not said */
	enum aff_excl excl;
	unsigned long long guid;	/* node GUID, 0 when unknown */
	/* The port's IB subnet prefix (its GID 0's upper half), 0 unknown. */
	unsigned long long subnet;
	/* The port as the fabric sees it (fabric.h), NULL when the source has none. */
	struct aff_fabric_port *fab;
};

/* A NIC railbind.conf's exclude-nic took out of the model. */
struct aff_dropped {
	char *name;		/* RDMA device or interface, NULL unknown */
	char pci[16];
};

struct aff_core {
	hwloc_bitmap_t pus;
	int cache;		/* cache domain id (L3, else L2), -1 none */
};

struct aff_numa {
	unsigned os_index;
	hwloc_bitmap_t cpuset;	/* empty for CPU-less nodes */
};

struct aff_topo {
	int refcount;
	struct aff_ctx *ctx;
	enum aff_src src;
	char *source;		/* file name, or "live" */
	char *host;
	hwloc_topology_t hw;	/* NULL for NCCL sources */
	hwloc_bitmap_t all_cpus;
	hwloc_bitmap_t all_nodes;

	struct aff_numa *numa;
	size_t nnuma;
	struct aff_core *core;
	size_t ncore;
	struct aff_locality *loc;
	size_t nloc;
	struct aff_dev *dev;
	size_t ndev;
	struct aff_rail *rail;
	size_t nrail;

	int *gpus;		/* dev indices of accelerators, PCI order */
	size_t ngpu;

	struct aff_dropped *dropped;	/* exclude-nic's, for the plan to name */
	size_t ndropped;
	/* The CPU kind NCCL reads (arch, vendor, family, model): NULL / -1. */
	char *cpu_arch, *cpu_vendor;
	int cpu_family, cpu_model;
	double intercpu_bw;	/* GB/s NCCL assumes between sockets, 0 unknown */

	char *peer_memory;	/* RailbindPeerMemory, NULL when unknown */
	char *kmod;		/* RailbindKmod */
	/*
	 * RailbindKernel (the running kernel's release) and RailbindGPUDriver
	 * (open, proprietary, absent) on the Machine, NULL unknown; kernel_target:
	 * the kernel the audit's remedies are for (aff_topo_set_kernel), else
	 * kernel.
	 */
	char *kernel, *gpu_driver, *kernel_target;
	bool extras;		/* the source carries Railbind* attributes */
	char bad_info[160];	/* source_hwloc.c: a Railbind* value that does not parse */
	struct aff_peer *peer;	/* RailbindPeer records */
	size_t npeer;
	char *nvml, *rocm_smi;	/* RailbindNVML, RailbindROCmSMI (gpu_ident.h) */
};

/* The device a rail's GPU traffic crosses: its DMA function, else its own. */
static inline int aff_rail_path_dev(const struct aff_rail *r)
{
	return r->via >= 0 ? r->via : r->dev;
}

/* model.c: building */
struct aff_topo *aff_topo_alloc(struct aff_ctx *ctx, enum aff_src src,
				const char *source);
int aff_topo_add_dev(struct aff_topo *t, enum aff_devtype type, int parent);
int aff_topo_add_loc(struct aff_topo *t, hwloc_const_bitmap_t cpuset,
		     hwloc_const_bitmap_t nodeset, int depth, hwloc_obj_t obj);
int aff_topo_add_rail(struct aff_topo *t, int dev, const char *name, int port,
		      bool rdma);
/* The verbs device of a rail (NULL: none named) and its port (*port 0: unknown). */
const char *aff_rail_hca(const struct aff_rail *r, int *port);
/*
 * A name as the verbs devices of Linux's RDMA drivers are named (mlx5_0,
 * mlx5_bond_0, bnxt_re0, irdma1, efa_0, ...), never a network interface's.
 */
bool aff_is_verbs_name(const char *name);
int aff_topo_add_numa(struct aff_topo *t, unsigned os_index,
		      hwloc_const_bitmap_t cpuset);
int aff_topo_add_core(struct aff_topo *t, hwloc_const_bitmap_t pus, int cache);
int aff_dev_set_pci(struct aff_dev *d, const char *busid);
/* The CPU kind (each may be NULL / -1); set once, by the loader. */
int aff_topo_set_cpu(struct aff_topo *t, const char *arch, const char *vendor,
		     int family, int model);
/* Classify, order and compute paths once every device is in. */
int aff_topo_finish(struct aff_topo *t, char *err, size_t errlen);

/*
 * aff_topo_load() of a file's text already read (railbind fleet reads each
 * file once, to tell audits from snapshots); name is for messages.
 */
int aff_topo_load_buffer(struct aff_ctx *ctx, const char *name, const char *buf,
			 size_t len, unsigned long flags, struct aff_topo **out,
			 char *err, size_t errlen);
/*
 * source_hwloc_import.c: hwloc's import of an XML text, in a child process so that
 * no text can crash the caller (*out is then a read-only, adopted topology),
 * or in this one with AFF_LOAD_NO_FORK in @flags. -EINVAL with one line in
 * err for a text hwloc cannot read, however it failed (refused, crashed,
 * out of memory, timed out).
 */
int aff_hwloc_import(const struct aff_ctx *ctx, const char *name, const char *buf,
		     size_t len, unsigned long flags, hwloc_topology_t *out, char *err,
		     size_t errlen);

/* Loaders. */
int aff_load_hwloc(struct aff_topo *t, hwloc_topology_t hw, char *err,
		   size_t errlen);
/*
 * Refuse an XML declaration naming an encoding other than UTF-8 or ASCII
 * (xml_encoding.c): 0, or -EINVAL with err set. @buf is the file's first bytes.
 */
int aff_xml_check_encoding(const char *buf, size_t len, const char *path,
			   char *err, size_t errlen);
/* An NCCL topology from len bytes in memory; name is for messages. */
int aff_load_nccl_mem(struct aff_topo *t, const char *buf, size_t len,
		      const char *name, char *err, size_t errlen);

/* cpulist.c: a sysfs cpumap-style hex mask ("ffffffff,0000ffff"). */
int aff_parse_cpumask(const char *s, hwloc_bitmap_t set);

/* model_classify.c */
bool aff_is_accelerator(const struct aff_config *conf, const struct aff_dev *d);
bool aff_is_bmc_display(int vendor, int device);
bool aff_nic_listed(char *const *list, size_t n, const char *name,
		    const char *pci);

/* model_switches.c: up, nccl_up and is_switch of every device (aff_topo_finish). */
int aff_find_switches(struct aff_topo *t);
const char *aff_port_type_name(enum aff_port_type type);
/* RailbindPortType's word -> type; -EINVAL for another word. */
int aff_port_type_from_name(const char *name, enum aff_port_type *out);

/* model_rank.c: set each rail's excl (down, slow) per the config (aff_topo_finish). */
void aff_mark_excluded(struct aff_topo *t);

/* model_paths.c */
enum aff_path aff_path_between(const struct aff_topo *t, int a, int b,
			       int *dist);
/* The class NCCL computes between a and b: no NODE, its own switches. */
enum aff_path aff_nccl_path_between(const struct aff_topo *t, int a, int b);
/*
 * NCCL's class between a GPU (dev index) and a rail: without GPUDirect RDMA
 * (gdr="0" on either) NCCL stages through the GPU's CPU, PHB at best.
 */
enum aff_path aff_nccl_rail_path(const struct aff_topo *t, int gdev, int rail);

/* model_bandwidth.c: GB/s as NCCL estimates it; INFINITY where nothing limits it. */
double aff_link_bw(const struct aff_topo *t, int dev);
double aff_rail_bw(const struct aff_topo *t, int rail);
double aff_pair_bw(const struct aff_topo *t, int gdev, int rail);
/* NCCL's figure between sockets for an x86 vendor/family/model or arch. */
double aff_intercpu_bw(const char *arch, const char *vendor, int family,
		       int model);
/*
 * fmin() and fmax(), NaN ignored as theirs, without libm: these two were all
 * it was linked for, and each library loaded at exec slows `railbind run`.
 */
static inline double aff_fmin(double a, double b)
{
	return isnan(a) ? b : isnan(b) || a < b ? a : b;
}

static inline double aff_fmax(double a, double b)
{
	return isnan(a) ? b : isnan(b) || a > b ? a : b;
}

/* out_json.c: json-c objects for in-tree users (CLI, broker, audit). */
struct json_object;
struct json_object *aff_topo_to_json(const struct aff_topo *t);
struct json_object *aff_plan_to_json(const struct aff_plan *p);
int aff_json_string(struct json_object *o, unsigned long flags, char **out);

/* cpulist.c: Linux cpulist of a bitmap into a malloc()ed string ("" when empty). */
char *aff_bitmap_list(hwloc_const_bitmap_t set);
/*
 * A Linux cpulist ("0-13,112-125") into set: numbers below AFF_MAX_CPU,
 * ranges low to high, nothing else (no blanks, no empty item). -EINVAL
 * otherwise. hwloc_bitmap_list_sscanf() is not used on what users write:
 * it takes trailing garbage ("1,0=" is {1}) and some inputs ("1,009-1,0=")
 * spin for seconds into a bitmap that is both finite and unbounded.
 */
#define AFF_MAX_CPU 65536
int aff_parse_cpulist(const char *s, hwloc_bitmap_t set);
/*
 * The same parser without hwloc (a rank's binding is applied without
 * loading it): @range called on each "lo" or "lo-hi" in turn, its negative
 * return the result; -EINVAL where the text stops being a cpulist.
 */
int aff_cpulist_walk(const char *s, int (*range)(unsigned lo, unsigned hi, void *data),
		     void *data);

#endif
