/* SPDX-License-Identifier: GPL-2.0 */
/*
 * railbind.ko internals shared between its source files.
 *
 * Locking, outermost first:
 *   railbind_snap_lock (railbind_snap.c): one render at a time;
 *   railbind_lock (railbind_topo.c): the tracked set and the facts cached
 *     for it; the PCI bus notifier takes it (often under the PCI rescan
 *     lock), so nothing under it may wait for a rescan, a misc device or
 *     a reader;
 *   railbind_peer_lock (railbind_peer.c): an irq-off spinlock over the
 *     peer-memory registry, taken from kprobe handlers for a bounded
 *     number of steps (see railbind_peer.c).
 * Nothing takes the PCI rescan lock except module init, nothing runs
 * under misc_mtx except ->open, which does no work, and nothing sleeps on
 * a PCI core lock (pci_bus_sem, device locks) under railbind_lock.
 */
#ifndef RAILBIND_H
#define RAILBIND_H

#include <linux/cpumask.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/types.h>

#include "railbind_api.h"

/* The 0.1.0 entry point, still exported for providers built against it. */
#undef railbind_peer_map
int railbind_peer_map(struct pci_dev *gpu, struct pci_dev *nic, u64 bytes,
		      const void *cookie);

#define DRIVER_NAME "railbind"
#define RAILBIND_VERSION "0.1.0"
/* Bumped only when a record or key changes meaning; new keys do not bump it. */
#define RAILBIND_FORMAT 1

enum railbind_role {
	RAILBIND_GPU,
	RAILBIND_NIC,
	RAILBIND_BRIDGE,
};

/*
 * A PCI function's address as one number: domain (all 32 bits: VMD and
 * Hyper-V use domains past 0xffff), bus, devfn. Sorts in PCI order.
 */
#define RAILBIND_NO_DEV U64_MAX

static inline u64 railbind_pci_id(const struct pci_dev *pdev)
{
	return (u64)(u32)pci_domain_nr(pdev->bus) << 16 | pdev->bus->number << 8 |
	       pdev->devfn;
}

/* Why the cached config-space facts of a device may be old. */
enum railbind_cfg_state {
	RAILBIND_CFG_OK,	/* read at the last refresh */
	RAILBIND_CFG_SUSPENDED,	/* runtime-suspended or D3cold: not woken, not read */
	RAILBIND_CFG_RESET,	/* config access blocked (reset in progress) */
	RAILBIND_CFG_ERROR,	/* read all-ones, or the channel failed */
};

/* Config-space facts, read when the notifier fires and on refresh. */
struct railbind_cfg {
	u16 acs_cap;		/* ACS capability register, if pdev->acs_cap */
	u16 acs_ctl;		/* ACS control register */
	u16 lnksta;		/* PCIe link status */
	u32 lnkcap;		/* PCIe link capabilities */
	u8 state;		/* enum railbind_cfg_state */
	bool have_acs;		/* acs_cap/acs_ctl hold a value once read */
	bool have_link;		/* lnksta/lnkcap hold a value once read */
};

/*
 * The render's immutable copy of one tracked function: everything the
 * snapshot prints, taken under railbind_lock, so formatting runs outside
 * every lock and never touches a pci_dev.
 */
struct railbind_mnode {
	u64 id;
	char name[20];		/* dddd:bb:dd.f, as pci_name() */
	u64 physfn;		/* a VF's PF, else RAILBIND_NO_DEV */
	u16 vendor, device;
	u32 class;
	u8 role;		/* enum railbind_role */
	u8 hdr_type;
	s8 pcie_type;		/* pci_pcie_type(), -1 when not PCI Express */
	bool has_link;		/* a link of its own (not RCiEP/RCEC/VF) */
	bool has_acs;		/* pdev->acs_cap */
	int up;			/* index of pci_upstream_bridge(), -1 at the root bus */
	int hb;			/* index of its host bridge */
	int numa;
	const struct cpumask *cpus;	/* a mask the kernel never frees */
	int iommu_group;	/* -1: none */
	struct railbind_cfg cfg;
};

struct railbind_mhb {
	const void *key;	/* the pci_host_bridge, for identity only */
	struct pci_dev *below;	/* a device below it, referenced */
	int orig;		/* index before sorting */
	char name[24];
	u32 domain;
	u8 bus;
	int numa;
	bool fn0;		/* function 00.0 on the root bus, not a bridge */
	u16 fn0_vendor, fn0_device;
	bool root;		/* p2pdma's pci_host_bridge_dev() found one */
	u16 root_vendor, root_device;
};

struct railbind_model {
	unsigned long gen;
	int nnodes, nhbs;
	struct railbind_mnode *nodes;	/* PCI address order */
	struct railbind_mhb *hbs;	/* (domain, bus) order */
};

/* railbind_main.c */
unsigned long railbind_generation(void);
void railbind_changed(const char *event);

/* railbind_match.c */
int railbind_match_init(const char *spec);
bool railbind_match(struct pci_dev *pdev, enum railbind_role *role);
const char *railbind_role_name(enum railbind_role role);

/* railbind_topo.c */
extern struct mutex railbind_lock;
int railbind_topo_init(void);
void railbind_topo_exit(void);
bool railbind_topo_refresh(void);
bool railbind_topo_dirty(void);
struct railbind_model *railbind_model_build(void);
void railbind_model_free(struct railbind_model *m);

/* What the peer-memory probes look devices up in (railbind_peer.c). */
struct railbind_devtab_bar {
	resource_size_t start, end;
	u64 gpu;
};

struct railbind_devtab_nic {
	const struct pci_dev *pdev;	/* identity only, never dereferenced */
	u64 id;
};

struct railbind_devtab {
	struct rcu_head rcu;
	unsigned int nbars, nnics;
	struct railbind_devtab_bar *bars;	/* sorted by start */
	struct railbind_devtab_nic *nics;	/* sorted by pdev */
	struct pci_dev **refs;			/* nnics references */
};

struct railbind_devtab *railbind_topo_devtab(void);
void railbind_devtab_free(struct railbind_devtab *t);

/* railbind_p2p.c */
struct railbind_p2p {
	int distance;
	bool redirected;
	const char *map;	/* "bus", "host" or "none", as p2pdma's map types */
	int common;		/* index of the closest common upstream node, or -1 */
	int acs_port;		/* first redirecting port p2pdma would name, or -1 */
};

int railbind_p2p_init(const char *spec);
void railbind_p2p_calc(const struct railbind_model *m, int provider, int client,
		       struct railbind_p2p *out);
bool railbind_p2p_redirects(const struct railbind_mnode *n);
void railbind_p2p_host_root(struct pci_dev *below, struct railbind_mhb *hb);

/* railbind_emit.c: a growing text buffer, charged to the reader. */
struct railbind_buf {
	char *data;
	size_t len;
	size_t size;
	unsigned int lines;
	int err;
};

int railbind_buf_init(struct railbind_buf *buf, size_t hint);
void railbind_buf_free(struct railbind_buf *buf);
__printf(2, 3) void railbind_emit(struct railbind_buf *buf, const char *fmt, ...);
void railbind_emit_id(struct railbind_buf *buf, const char *key, u64 id);
void railbind_emit_addr(struct railbind_buf *buf, u64 id, const char *sep);

/* railbind_render.c */
int railbind_render_topo(const struct railbind_model *m, struct railbind_buf *buf);

/* railbind_snap.c: one shared snapshot per generation. */
struct railbind_snap {
	struct list_head stale;		/* superseded and still named */
	unsigned int holders;		/* descriptors that attached it */
	unsigned int pins;		/* read() calls copying from it now */
	bool listed;			/* on the superseded list */
	unsigned long gen;
	unsigned int lines;
	size_t len;
	char *text;
};

struct railbind_snap *railbind_snap_get(void);
void railbind_snap_put(struct railbind_snap *snap);
int railbind_snap_pin(struct railbind_snap *snap);
void railbind_snap_unpin(struct railbind_snap *snap);
void railbind_snap_exit(void);

/* railbind_peer.c: the registry, its API and its render. */
enum railbind_route {
	RAILBIND_ROUTE_API,
	RAILBIND_ROUTE_NVIDIA,
	RAILBIND_ROUTE_DMABUF,
	RAILBIND_NROUTES,
};

enum railbind_peer_stat {
	RAILBIND_ST_MAPS,
	RAILBIND_ST_UNMAPS,
	RAILBIND_ST_FREED,
	RAILBIND_ST_OVERFLOW,
	RAILBIND_ST_BADVERSION,
	RAILBIND_ST_UNTRACKED,
	RAILBIND_NSTATS,
};

#define RAILBIND_EXP_LEN 16

u64 railbind_peer_nic(const void *pdev);
u64 railbind_peer_gpu_at(u64 addr);
int railbind_peer_add(unsigned long cookie, unsigned long group, const void *owner,
		      u8 route, u64 gpu, u64 nic, const char *exporter, u64 bytes,
		      bool mapped);
bool railbind_peer_set_mapping(unsigned long cookie, u8 route, u64 gpu, u64 bytes,
			       bool mapped);
void railbind_peer_drop(unsigned long cookie, u8 route, bool freed);
void railbind_peer_drop_group(unsigned long group, u8 route);
void railbind_peer_drop_all(u8 route, const void *owner);
bool railbind_peer_route_live(u8 route);
bool railbind_peer_known(unsigned long cookie, u8 route);
void railbind_peer_stat_inc(enum railbind_peer_stat stat);
u64 railbind_peer_irqoff_max(unsigned int *steps);

/* railbind_probe_nv.c, railbind_probe_dmabuf.c */
int railbind_nv_init(void);
void railbind_nv_exit(void);
void railbind_nv_module_event(struct module *mod, unsigned long action);
bool railbind_nv_armed(void);
unsigned long railbind_nv_missed(void);
int railbind_dmabuf_init(void);
void railbind_dmabuf_exit(void);
bool railbind_dmabuf_armed(void);
unsigned long railbind_dmabuf_missed(void);

int railbind_peer_init(void);
void railbind_peer_exit(void);
void railbind_peer_devs_changed(void);
void railbind_peer_devs_sync(void);
int railbind_peer_render(struct railbind_buf *buf, bool full);
const char *railbind_peer_state(void);
extern char *railbind_peer_provider;
extern char railbind_peer_module[];

#endif
