// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Slurm's gres.conf lines for this node (railbind slurm-gres). In the library,
 * not the CLI, because the audit's slurm-gres check compares a node's file
 * with exactly these devices and cores (gres.h says in which units).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "gpu_ident.h"
#include "gres.h"
#include "model.h"

const char *aff_gres_slurmd_param(unsigned long flags)
{
	if (flags & AFF_GRES_NUMA)
		return "numa_node_as_socket";
	if (flags & AFF_GRES_L3)
		return "l3cache_as_socket";
	return NULL;
}

const char *aff_gres_unit_name(unsigned long flags)
{
	return flags & AFF_GRES_NUMA ? "NUMA node" : flags & AFF_GRES_L3 ? "L3 cache" : "socket";
}

static hwloc_obj_type_t unit_type(unsigned long flags)
{
	return flags & AFF_GRES_NUMA ? HWLOC_OBJ_NUMANODE :
	       flags & AFF_GRES_L3 ? HWLOC_OBJ_L3CACHE : HWLOC_OBJ_PACKAGE;
}

int aff_gres_cores(const struct aff_topo *t, int dev, unsigned long flags,
		   hwloc_bitmap_t cores)
{
	const struct aff_locality *loc;
	hwloc_obj_type_t ut = unit_type(flags), ct = HWLOC_OBJ_CORE;
	hwloc_bitmap_t units;
	hwloc_obj_t o = NULL;

	hwloc_bitmap_zero(cores);
	if (!t->hw)
		return -ENOTSUP;
	loc = &t->loc[t->dev[dev].loc];
	if (!loc->known || !loc->cpuset || hwloc_bitmap_iszero(loc->cpuset))
		return -ENOENT;
	units = hwloc_bitmap_alloc();
	if (!units)
		return -ENOMEM;
	/* Every unit the device's CPUs touch, whole; none at all: one unit. */
	while ((o = hwloc_get_next_obj_by_type(t->hw, ut, o)))
		if (o->cpuset && hwloc_bitmap_intersects(o->cpuset, loc->cpuset))
			hwloc_bitmap_or(units, units, o->cpuset);
	if (hwloc_bitmap_iszero(units))
		hwloc_bitmap_copy(units, hwloc_get_root_obj(t->hw)->cpuset);
	/* As source_hwloc.c counts them: an export without cores has PUs. */
	if (hwloc_get_nbobjs_by_type(t->hw, HWLOC_OBJ_CORE) <= 0)
		ct = HWLOC_OBJ_PU;
	o = NULL;
	while ((o = hwloc_get_next_obj_by_type(t->hw, ct, o)))
		if (o->cpuset && hwloc_bitmap_intersects(o->cpuset, units))
			hwloc_bitmap_set(cores, o->logical_index);
	hwloc_bitmap_free(units);
	return 0;
}

int aff_gres_gpu_file(const struct aff_topo *t, size_t g, char *buf, size_t len)
{
	int minor = aff_topo_gpu_minor(t, g);

	if (t->dev[t->gpus[g]].vendor != 0x10de)
		return -ENOENT;
	snprintf(buf, len, "/dev/nvidia%d", minor >= 0 ? minor : (int)g);
	return minor >= 0;
}

/* Links=: NVLinks to each GPU in order, -1 itself; only when NVML answered. */
static void put_links(FILE *f, const struct aff_topo *t, size_t g)
{
	for (size_t j = 0; j < t->ngpu; j++) {
		const struct aff_gident *id = aff_gpu_ident(t, j);

		if (!id || id->nvlinks < 0)
			return;
	}
	fputs(" Links=", f);
	for (size_t j = 0; j < t->ngpu; j++)
		fprintf(f, "%s%d", j ? "," : "", j == g ? -1 : aff_gpu_nvlinks_between(t, g, j));
}

/* " Cores=LIST", or a reason into @why: 0, or < 0 as aff_gres_cores(). */
static int put_cores(FILE *f, const struct aff_topo *t, int dev, unsigned long flags,
		     hwloc_bitmap_t cores)
{
	int rc = aff_gres_cores(t, dev, flags, cores);
	char *list;

	if (rc < 0)
		return rc;
	list = aff_bitmap_list(cores);
	if (!list)
		return -ENOMEM;
	fprintf(f, " Cores=%s", list);
	free(list);
	return 0;
}

/* The uverbs character device of RDMA device @name, from sysfs: N, or -1. */
static int uverbs_index(const struct aff_topo *t, const char *name)
{
	char rel[256], path[4096];
	struct dirent *e;
	DIR *d;
	int n = -1;

	if (t->src != AFF_SRC_LIVE || !name || strchr(name, '/'))
		return -1;
	snprintf(rel, sizeof(rel), "/sys/class/infiniband/%s/device/infiniband_verbs", name);
	d = opendir(aff_ctx_path(t->ctx, rel, path, sizeof(path)));
	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "uverbs", 6) && sscanf(e->d_name + 6, "%d", &n) == 1)
			break;
	closedir(d);
	return n;
}

static int write_nics(FILE *f, const struct aff_topo *t, unsigned long flags,
		      hwloc_bitmap_t cores)
{
	fputs("# NICs as gres \"nic\": with ConstrainDevices=yes a job sees only its own\n"
	      "# uverbs devices, so NCCL counts fewer HCAs than the node has and a\n"
	      "# node-wide NCCL_IB_HCA names devices it cannot open; leave it\n"
	      "# unconstrained unless every job asks for all of them.\n", f);
	for (size_t r = 0; r < t->nrail; r++) {
		const struct aff_rail *rl = &t->rail[r];
		int n, rc;

		if (!rl->rdma || (r && t->rail[r - 1].dev == rl->dev))
			continue;	/* one file per device, not per port */
		n = uverbs_index(t, rl->name);
		if (n < 0) {
			fprintf(f, "# nic %s (%s): its uverbs device is not known here"
				" (ls /sys/class/infiniband/%s/device/infiniband_verbs)\n",
				rl->name ? rl->name : "?", t->dev[rl->dev].pci,
				rl->name ? rl->name : "DEV");
			continue;
		}
		fprintf(f, "Name=nic File=/dev/infiniband/uverbs%d", n);
		rc = put_cores(f, t, rl->dev, flags, cores);
		if (rc == -ENOMEM)
			return rc;
		fprintf(f, "\t# %s %s%s\n", rl->name, t->dev[rl->dev].pci,
			rc == -ENOENT ? ", locality unknown: any core" : "");
	}
	return 0;
}

static int write_conf(FILE *f, const struct aff_topo *t, unsigned long flags,
		      hwloc_bitmap_t cores)
{
	const char *param = aff_gres_slurmd_param(flags);
	bool guessed = false;

	fprintf(f, "# gres.conf for %s, from railbind slurm-gres (%s).\n",
		t->host ? t->host : "this node", t->source ? t->source : "live");
	fprintf(f, "# Cores= are logical core indices (hwloc Core L#), every core of each %s\n"
		"# a device's CPUs touch: Slurm co-allocates GRES with whole %ss.\n",
		aff_gres_unit_name(flags), aff_gres_unit_name(flags));
	if (param)
		fprintf(f, "# slurm.conf needs SlurmdParameters=%s for these Cores=.\n", param);
	for (size_t g = 0; g < t->ngpu; g++) {
		char file[64];
		int fr = aff_gres_gpu_file(t, g, file, sizeof(file)), rc;

		if (fr < 0) {
			fprintf(f, "# GPU %zu (%s) is not NVIDIA's: its File= is not known here.\n",
				g, t->dev[t->gpus[g]].pci);
			fputs("Name=gpu Count=1", f);
		} else {
			fprintf(f, "Name=gpu File=%s", file);
			guessed |= fr == 0;
		}
		rc = put_cores(f, t, t->gpus[g], flags, cores);
		if (rc == -ENOMEM)
			return rc;
		put_links(f, t, g);
		fprintf(f, "\t# GPU %zu %s%s\n", g, t->dev[t->gpus[g]].pci,
			rc == -ENOENT ? ", locality unknown: any core" :
			rc == -ENOTSUP ? ", no CPU tree in this source: any core" : "");
	}
	if (guessed)
		fputs("# A device minor was not known (no NVML, no snapshot): /dev/nvidiaN assumes\n"
		      "# minor N = GPU index in PCI order; check nvidia-smi -q | grep Minor.\n", f);
	if (flags & AFF_GRES_NICS)
		return write_nics(f, t, flags, cores);
	return 0;
}

AFF_EXPORT int aff_topo_gres_conf(const struct aff_topo *topo, unsigned long flags,
				  char **out, char *err, size_t errlen)
{
	hwloc_bitmap_t cores;
	size_t len = 0;
	FILE *f;
	int rc;

	*out = NULL;
	if ((flags & AFF_GRES_NUMA) && (flags & AFF_GRES_L3))
		return aff_seterr(err, errlen, EINVAL,
				  "per NUMA node and per L3 cache exclude each other");
	if (!topo->ngpu && !(flags & AFF_GRES_NICS))
		return aff_seterr(err, errlen, ENODEV, "%s: no GPU", topo->source);
	cores = hwloc_bitmap_alloc();
	f = open_memstream(out, &len);
	if (!cores || !f) {
		if (f)
			fclose(f);
		hwloc_bitmap_free(cores);
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	rc = write_conf(f, topo, flags, cores);
	hwloc_bitmap_free(cores);
	if (fclose(f) || rc < 0) {
		free(*out);
		*out = NULL;
		return rc < 0 ? rc : -ENOMEM;
	}
	return 0;
}
