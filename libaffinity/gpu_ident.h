/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A GPU as its vendor's own library (NVML, ROCm SMI) or its driver's files
 * (/proc/driver/nvidia, amdgpu's sysfs) see it: UUID, device minor, NVLink
 * or XGMI links, MIG instances, Grace's C2C link, partition modes, and the
 * driver's own path class to every other GPU. Discovery writes these as
 * Railbind* info attributes on the GPU's PCI object (and two on the Machine);
 * the loader reads them back, so the live node and a snapshot of it reach the
 * model through the same code (gpu_ident.c). Private to libaffinity.
 */
#ifndef RAILBIND_GPU_IDENT_H
#define RAILBIND_GPU_IDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <hwloc.h>

#include "affinity.h"

/* On the Machine: what the library said ("ok VERSION", "absent", "failed TEXT"). */
#define AFF_INFO_NVML			"RailbindNVML"
#define AFF_INFO_ROCM_SMI		"RailbindROCmSMI"
/* On a GPU's PCI object. */
#define AFF_INFO_GPU_UUID		"RailbindGPUUUID"
#define AFF_INFO_GPU_MINOR		"RailbindGPUMinor"
#define AFF_INFO_NVLINKS		"RailbindNVLinks"	/* active links, total */
#define AFF_INFO_NVLINK			"RailbindNVLink"	/* "REMOTE TYPE LINKS", repeated */
#define AFF_INFO_C2C			"RailbindC2C"		/* enabled, disabled */
#define AFF_INFO_MIG			"RailbindMIG"		/* enabled, disabled, unsupported */
#define AFF_INFO_MIG_DEVICE		"RailbindMIGDevice"	/* "MIG-UUID GI CI", repeated */
#define AFF_INFO_GPU_PATH		"RailbindGPUPath"	/* "OTHER CLASS", repeated */
#define AFF_INFO_XGMI			"RailbindXGMI"		/* "OTHER HOPS WEIGHT", repeated */
#define AFF_INFO_COMPUTE_PARTITION	"RailbindComputePartition"	/* SPX, CPX, ... */
#define AFF_INFO_MEMORY_PARTITION	"RailbindMemoryPartition"	/* NPS1, NPS4, ... */
/* What the library could not answer for this GPU: "uuid,minor,nvlink,...". */
#define AFF_INFO_GPU_UNREADABLE		"RailbindGPUUnreadable"

/* What is at the far end of a GPU's links. */
enum aff_glink_type {
	AFF_GLINK_GPU,		/* NVLink to another GPU */
	AFF_GLINK_SWITCH,	/* NVLink to an NVSwitch */
	AFF_GLINK_NPU,		/* NVLink to a CPU (IBM POWER's NPU) */
	AFF_GLINK_UNKNOWN,	/* NVLink, far end unknown (older NVML) */
	AFF_GLINK_XGMI,		/* AMD Infinity Fabric to another GPU */
};

struct aff_glink {
	char remote[16];	/* "dddd:bb:dd.f", "" unknown */
	enum aff_glink_type type;
	int links;		/* NVLink: active links to that end */
	int hops, weight;	/* XGMI: ROCm SMI's hops and weight */
};

struct aff_gmig {
	char *uuid;		/* MIG-... */
	int gi, ci;		/* GPU and compute instance ids, -1 unknown */
};

/* The driver's own class between this GPU and another (NVML common ancestor). */
struct aff_gpath {
	char remote[16];
	enum aff_path path;	/* AFF_PATH_NONE: NVML said "internal" (one board) */
};

struct aff_gident {
	char *uuid;		/* NULL unknown */
	int minor;		/* -1 unknown */
	int nvlinks;		/* active NVLinks in all, -1 unknown */
	struct aff_glink *link;
	size_t nlink;
	int c2c;		/* -1 unknown, 0 disabled, 1 enabled */
	int mig;		/* -1 unknown, 0 disabled, 1 enabled, 2 unsupported */
	struct aff_gmig *migdev;
	size_t nmig;
	char *compute_partition, *memory_partition;
	struct aff_gpath *path;
	size_t npath;
	char *unreadable;	/* RailbindGPUUnreadable, verbatim; NULL none */
};

struct aff_topo;
struct json_object;

/*
 * Read the GPU identity infos of PCI object @o into dev @dev (only for
 * NVIDIA and AMD devices and accelerators; others are left alone). Falls back
 * to hwloc's own NVIDIAUUID/AMDUUID infos on the GPU's OS devices. A value
 * that does not parse is -EINVAL with t->bad_info set, like every Railbind*.
 */
int aff_gident_load(struct aff_topo *t, int dev, hwloc_obj_t o);
/* RailbindNVML and RailbindROCmSMI from the Machine. */
int aff_gident_load_machine(struct aff_topo *t, hwloc_obj_t root);
void aff_gident_free(struct aff_gident *g);

/* GPU @g's identity (g is a GPU index in PCI order), or NULL. */
const struct aff_gident *aff_gpu_ident(const struct aff_topo *t, size_t g);
/*
 * The GPU x GPU cell as nvidia-smi topo -m prints it: "X" for a GPU and
 * itself, "NV#" (# bonded NVLinks, through NVSwitches or direct), "XGMI#"
 * (# XGMI hops), else the PCIe class (PIX ... SYS).
 */
void aff_gpu_pair_cell(const struct aff_topo *t, size_t a, size_t b, char *buf,
		       size_t len);
/* NVLinks between GPUs a and b (direct, plus through NVSwitches), 0 none. */
int aff_gpu_nvlinks_between(const struct aff_topo *t, size_t a, size_t b);
/* Direct NVLinks between GPUs a and b only (no NVSwitch), 0 none. */
int aff_gpu_direct_nvlinks(const struct aff_topo *t, size_t a, size_t b);

/*
 * Add to a railbind.topo/1 document what this file knows: per GPU uuid,
 * minor, nvlinks, mig, c2c, xgmi, partition; gpu_paths (GPU x GPU),
 * nic_paths (NIC x NIC), gpu_libraries, warnings (the driver's path class
 * where it differs from railbind's, and once what could not be known).
 */
void aff_gpu_topo_json(const struct aff_topo *t, struct json_object *doc);
/* A plan rank's GPU object gains "uuid" and "mig" (the MIG instance's UUID). */
void aff_gpu_rank_json(const struct aff_topo *t, int gpu, int mig, struct json_object *o);

/*
 * One item of a CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES /
 * ROCR_VISIBLE_DEVICES list: a GPU index (PCI order), a PCI address, a GPU
 * UUID or a unique prefix of one (as CUDA takes them), a MIG UUID, or
 * MIG-GPU-UUID/GI/CI. *gpu gets the GPU index (a MIG instance's parent),
 * *mig the instance's index in its GPU's list or -1. 0, or -ENOENT (no such
 * GPU), -EINVAL (malformed, ambiguous prefix) with a reason in @why.
 */
int aff_visible_item(const struct aff_topo *t, const char *item, int *gpu, int *mig,
		     char *why, size_t whylen);
/*
 * The ranks a visible-GPU list gives, in PCI order (then MIG order): NULL
 * for all GPUs; "all" too; "none", "void" or "" for none. *gpu and *mig
 * (malloc()ed, *n entries, at least one slot) are freed by the caller.
 */
int aff_visible_select(const struct aff_topo *t, const char *visible, int **gpu,
		       int **mig, size_t *n, char *err, size_t errlen);
/*
 * Whether every GPU (or MIG instance) @claim names is one @own names, in any
 * spelling: 1 yes, 0 no, or the -errno of a list that does not resolve (@err
 * says which). A whole GPU in @own holds its MIG instances; NULL @own holds
 * everything. For the broker's check of a client's claim against its own
 * CUDA_VISIBLE_DEVICES (today a comparison of words, broker/railbindd/claim.c).
 */
int aff_visible_within(const struct aff_topo *t, const char *claim, const char *own,
		       char *err, size_t errlen);
/* Whether resolving @visible may need the GPU libraries (it names UUIDs). */
bool aff_visible_needs_libs(const char *visible);

#endif
