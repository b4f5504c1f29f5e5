/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gres - the node's GPUs (and rails) in Slurm's gres.conf terms, private to
 * libaffinity: out_gres.c writes the lines (railbind slurm-gres), the audit's
 * slurm-gres check (audit_slurm.c) compares a node's file with them. Both
 * speak Slurm's units, so the comparison is made in one:
 *
 *  - Cores= are logical core indices (hwloc's Core L#: core 0 the first core
 *    of the first socket), never OS CPU numbers, which differ from them where
 *    the firmware numbers CPUs alternately across sockets;
 *  - Slurm co-allocates GRES with CPUs per socket (per NUMA node with
 *    SlurmdParameters=numa_node_as_socket, per L3 with l3cache_as_socket)
 *    and wants a socket's cores listed together: a device gets every core of
 *    every such unit its CPUs touch, never a split of one.
 *
 * The flags are affinity.h's AFF_GRES_*.
 */
#ifndef AFF_GRES_H
#define AFF_GRES_H

#include <stdbool.h>
#include <stddef.h>
#include <hwloc.h>

struct aff_topo;

/*
 * The Cores= of device @dev (topo->dev index) into @cores (logical core
 * indices). 0; -ENOENT when the device's locality is unknown (no Cores=:
 * any core); -ENOTSUP for a source without hwloc's CPU tree (NCCL XML).
 */
int aff_gres_cores(const struct aff_topo *t, int dev, unsigned long flags,
		   hwloc_bitmap_t cores);
/*
 * The File= of GPU @g (PCI order) into @buf: /dev/nvidiaN from its device
 * minor. 1 when the minor is known, 0 when it is assumed to be the GPU's
 * index (no NVML, no snapshot said it), -ENOENT for a GPU that is not
 * NVIDIA's (its file is not known here).
 */
int aff_gres_gpu_file(const struct aff_topo *t, size_t g, char *buf, size_t len);
/* The SlurmdParameters value @flags needs, or NULL (socket, the default). */
const char *aff_gres_slurmd_param(unsigned long flags);
/* The unit's name for messages: "socket", "NUMA node", "L3 cache". */
const char *aff_gres_unit_name(unsigned long flags);

/* A node's gres.conf as read (audit_slurm.c): its GPUs, one per device file. */
#define AFF_GRES_MAX_DEVS 256
struct aff_gres_dev {
	char file[256];			/* "" when the line has no File= */
	hwloc_bitmap_t cores;		/* NULL: no Cores= */
	unsigned line;
};

struct aff_gres_file {
	struct aff_gres_dev dev[AFF_GRES_MAX_DEVS];
	size_t ndev;
	bool autodetect;		/* AutoDetect= other than off */
	char why[256];			/* the line that could not be read */
};

/*
 * The Name=gpu devices of @host (lines without NodeName=, or naming it) in
 * @text (NUL-terminated, changed) into @g (zeroed by the caller). 0; -EINVAL
 * with g->why naming the line; -E2BIG over AFF_GRES_MAX_DEVS; -ENOMEM.
 */
int aff_gres_parse(struct aff_gres_file *g, char *text, const char *host);
/* Frees @g (calloc()ed) and its core sets. */
void aff_gres_file_free(struct aff_gres_file *g);

#endif /* AFF_GRES_H */
