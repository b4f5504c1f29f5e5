// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The Machine's attributes: hostname, railbind.ko's version, the
 * peer-memory path GPUDirect RDMA needs (modules, kernel and driver
 * versions), the node's health, and railbind.ko's peer records.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "annotate.h"
#include "annotate_health.h"
#include "source_kmod.h"

/*
 * Major version of the NVIDIA driver when it is the open kernel module flavour, from
 * "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.104.05  Release Build ...";
 * 0 when proprietary, absent or unparsable.
 */
static unsigned long nvidia_open_major(const struct annotator *an)
{
	char buf[512];
	const char *p;

	if (aff_sysfs_rooted_read(an, "/proc/driver/nvidia/version", buf, sizeof(buf)) < 0)
		return 0;
	p = strstr(buf, "Open Kernel Module");
	if (!p)
		return 0;
	for (p += strlen("Open Kernel Module"); *p && *p != '\n'; p++) {
		char *end;
		unsigned long major;

		if (!isdigit((unsigned char)*p) || !isspace((unsigned char)p[-1]))
			continue;
		major = strtoul(p, &end, 10);
		if (*end == '.')
			return major;
	}
	return 0;
}

static bool kernel_at_least(const struct annotator *an, unsigned major, unsigned minor)
{
	char buf[128];
	unsigned ma, mi;

	if (aff_sysfs_rooted_read(an, "/proc/sys/kernel/osrelease", buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%u.%u", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

/*
 * GPUDirect RDMA needs a peer-memory path between the GPU driver and the RDMA stack:
 * - "nvidia_peermem": the nvidia_peermem (or legacy MLNX nv_peer_mem) module is loaded;
 * - "dmabuf": upstream dma-buf import in the RDMA core (ib_umem_dmabuf, Linux 5.12),
 *   the verbs character devices present (ib_uverbs), and a GPU driver that exports
 *   device memory as dma-buf: amdgpu, or NVIDIA's open kernel modules from r515 on
 *   (the proprietary flavour does not support it);
 * - "none" otherwise.
 */
static const char *peer_memory(const struct annotator *an)
{
	bool verbs, gpu;

	if (aff_sysfs_rooted_exists(an, "/sys/module/nvidia_peermem") ||
	    aff_sysfs_rooted_exists(an, "/sys/module/nv_peer_mem"))
		return "nvidia_peermem";
	verbs = aff_sysfs_rooted_exists(an, "/sys/module/ib_uverbs") ||
		aff_sysfs_rooted_exists(an, "/sys/class/infiniband_verbs");
	gpu = aff_sysfs_rooted_exists(an, "/sys/module/amdgpu") || nvidia_open_major(an) >= 515;
	if (verbs && gpu && kernel_at_least(an, 5, 12))
		return "dmabuf";
	return "none";
}

/*
 * The kernel release (which remedies it takes: config_acs=, dma-buf) and
 * the NVIDIA driver's flavour (dma-buf needs the open one), for
 * acs-redirect's remedy and gdr-readiness.
 */
static int annotate_kernel_driver(const struct annotator *an, hwloc_obj_t obj)
{
	char buf[128];
	const char *drv;
	int ret;

	if (!has_info(obj, AFF_INFO_KERNEL) &&
	    aff_sysfs_rooted_read(an, "/proc/sys/kernel/osrelease", buf, sizeof(buf)) == 0 &&
	    valid_token(buf)) {
		ret = add_info(obj, AFF_INFO_KERNEL, buf);
		if (ret < 0)
			return ret;
	}
	if (has_info(obj, AFF_INFO_GPU_DRIVER))
		return 0;
	if (nvidia_open_major(an))
		drv = "open";
	else if (aff_sysfs_rooted_exists(an, "/sys/module/nvidia"))
		drv = "proprietary";
	else
		drv = "absent";
	return add_info(obj, AFF_INFO_GPU_DRIVER, drv);
}

/*
 * The module's peer records (a NIC mapping a GPU's memory) as RailbindPeer infos, one
 * per record, in the module's own key=value words, for the audit's peer-cross-path;
 * or, when the module showed this reader none of them, RailbindPeerView=restricted.
 */
static int annotate_peers(struct annotator *an, hwloc_obj_t obj)
{
	const struct aff_kmod_rec *rec;
	const char *view;
	size_t i = 0;
	char val[160];
	int ret;

	if (!an->kmod || has_info(obj, AFF_INFO_PEER) || has_info(obj, AFF_INFO_PEER_VIEW))
		return 0;
	view = aff_kmod_rec_get(aff_kmod_snapshot_rec(an->kmod, 0), "view");
	if (view && !strcmp(view, "restricted"))
		return add_info(obj, AFF_INFO_PEER_VIEW, "restricted");
	while ((rec = aff_kmod_snapshot_next(an->kmod, "peer", &i))) {
		const char *gpu = aff_kmod_rec_get(rec, "gpu"), *nic = aff_kmod_rec_get(rec, "nic");
		const char *route = aff_kmod_rec_get(rec, "route");
		const char *maps = aff_kmod_rec_get(rec, "maps");
		const char *bytes = aff_kmod_rec_get(rec, "bytes");

		if (!nic || !maps)
			continue;
		snprintf(val, sizeof(val), "gpu=%.15s nic=%.15s route=%.15s maps=%.20s bytes=%.20s",
			 gpu ? gpu : "-", nic, route ? route : "-", maps, bytes ? bytes : "0");
		ret = hwloc_obj_add_info(obj, AFF_INFO_PEER, val);
		if (ret < 0)
			return -ENOMEM;
	}
	return 0;
}

int aff_annotate_host(struct annotator *an, hwloc_obj_t obj)
{
	char buf[256];
	int ret;

	snprintf(buf, sizeof(buf), "%d", AFF_SNAPSHOT_VERSION);
	ret = add_info(obj, AFF_INFO_SNAPSHOT_VERSION, buf);
	if (ret < 0)
		return ret;

	if (!has_info(obj, AFF_INFO_HOSTNAME)) {
		if (aff_sysfs_rooted_read(an, "/proc/sys/kernel/hostname", buf, sizeof(buf)) < 0 &&
		    (!an->real_root || gethostname(buf, sizeof(buf)) < 0))
			buf[0] = '\0';
		buf[sizeof(buf) - 1] = '\0';
		if (valid_token(buf)) {
			ret = add_info(obj, AFF_INFO_HOSTNAME, buf);
			if (ret < 0)
				return ret;
		}
	}

	if (!has_info(obj, AFF_INFO_KMOD)) {
		const char *kmod = buf;

		if (aff_sysfs_rooted_read(an, "/sys/module/railbind/version", buf, sizeof(buf)) < 0 ||
		    !valid_token(buf))
			/* Loaded without MODULE_VERSION is not the same as not loaded. */
			kmod = aff_sysfs_rooted_exists(an, "/sys/module/railbind") ? "unknown" : "absent";
		ret = add_info(obj, AFF_INFO_KMOD, kmod);
		if (ret < 0)
			return ret;
	}

	if (!has_info(obj, AFF_INFO_PEER_MEMORY)) {
		ret = add_info(obj, AFF_INFO_PEER_MEMORY, peer_memory(an));
		if (ret < 0)
			return ret;
	}
	ret = annotate_kernel_driver(an, obj);
	if (ret < 0)
		return ret;
	ret = aff_discover_health_machine(obj, an->root, an->have_health ? &an->health : NULL,
					  an->kmod);
	if (ret < 0)
		return ret;
	return annotate_peers(an, obj);
}
