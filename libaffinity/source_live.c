// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Live discovery: hwloc loads the node (or a recorded tree, through HWLOC_FSROOT),
 * then the annotators fill in what hwloc does not record, as Railbind* info
 * attributes: PCI functions and ports (annotate_pci.c), RDMA ports
 * (annotate_rdma.c), the Machine (annotate_host.c), the GPUs' own files
 * (annotate_gpu.c). A snapshot is this topology written out (out_snapshot.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <hwloc.h>

#include "annotate.h"
#include "annotate_gpu.h"
#include "annotate_health.h"
#include "internal.h"
#include "source_kmod.h"
#include "source_live.h"

static void append_note(char *note, size_t len, unsigned count, const char *what)
{
	size_t used = strlen(note);

	if (!count || used >= len - 1)
		return;
	snprintf(note + used, len - used, "%s%s unreadable on %u object%s", used ? "; " : "",
		 what, count, count == 1 ? "" : "s");
}

static void write_note(struct aff_discover_report *rep)
{
	rep->note[0] = '\0';
	append_note(rep->note, sizeof(rep->note), rep->acs_unreadable,
		    "ACS control (needs root)");
	append_note(rep->note, sizeof(rep->note), rep->link_unreadable, "PCIe link state");
	append_note(rep->note, sizeof(rep->note), rep->numa_unreadable, "NUMA node");
	append_note(rep->note, sizeof(rep->note), rep->iommu_unreadable, "IOMMU group type");
}

static bool is_real_root(const char *root)
{
	return !root || !*root || !strcmp(root, "/");
}

int aff_discover_annotate(hwloc_topology_t topo, const char *root, struct aff_discover_report *rep)
{
	struct aff_discover_report local = { 0 };
	char gpuroot[PATH_MAX];
	struct annotator an;
	hwloc_obj_t obj;
	int ret;

	if (!topo)
		return -EINVAL;
	an.real_root = is_real_root(root);
	an.root = an.real_root ? "" : root;
	an.rootlen = strlen(an.root);
	while (an.rootlen > 1 && an.root[an.rootlen - 1] == '/')
		an.rootlen--;
	an.rep = rep ? rep : &local;
	memset(an.rep, 0, sizeof(*an.rep));
	/* Without the module (-ENOENT) or with an unreadable snapshot, sysfs alone. */
	an.kmod = NULL;
	if (aff_kmod_snapshot_read(an.real_root ? NULL : root, &an.kmod, NULL, 0) < 0)
		an.kmod = NULL;
	/*
	 * railbindd's counters, when it keeps them and they are of this boot:
	 * the unit's broker's first, then those of a broker run by hand with
	 * its default state directory.
	 */
	{
		static const char *const files[] = { AFF_COUNTERS_FILE_UNIT, AFF_COUNTERS_FILE };
		char path[PATH_MAX];

		an.have_health = false;
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]) && !an.have_health; i++)
			an.have_health = aff_sysfs_path(&an, path, sizeof(path), "%s", files[i]) == 0 &&
					 aff_health_load(path, an.real_root ? NULL : root, &an.health) == 0;
	}

	for (obj = NULL; (obj = hwloc_get_next_pcidev(topo, obj));) {
		ret = aff_annotate_pci(&an, obj);
		if (ret < 0)
			goto out;
	}
	for (obj = NULL; (obj = hwloc_get_next_bridge(topo, obj));) {
		if (!aff_is_pci_function(obj))
			continue;
		ret = aff_annotate_pci(&an, obj);
		if (ret < 0)
			goto out;
	}
	for (obj = NULL; (obj = hwloc_get_next_osdev(topo, obj));) {
		if (!aff_is_openfabrics(obj))
			continue;
		ret = aff_annotate_rdma(&an, obj);
		if (ret < 0)
			goto out;
	}
	ret = aff_annotate_soft_rdma(&an, topo);
	if (ret < 0)
		goto out;
	ret = aff_annotate_host(&an, hwloc_get_root_obj(topo));
	if (ret < 0)
		goto out;
	/* UUID and device minor from the GPU drivers' own files (annotate_gpu.c). */
	if (snprintf(gpuroot, sizeof(gpuroot), "%.*s", (int)an.rootlen, an.root) < (int)sizeof(gpuroot))
		ret = aff_discover_gpu_files(topo, gpuroot);
	if (ret < 0)
		goto out;
	write_note(an.rep);
out:
	aff_kmod_snapshot_free(an.kmod);
	if (an.have_health)
		aff_health_clear(&an.health);
	return ret;
}

/* hwloc 2.x reads its alternate root from the environment when the load starts. */
static int fsroot_swap(const char *root, char **saved)
{
	const char *old = getenv("HWLOC_FSROOT");

	*saved = NULL;
	if (old) {
		*saved = strdup(old);
		if (!*saved)
			return -ENOMEM;
	}
	if (is_real_root(root))
		return unsetenv("HWLOC_FSROOT") < 0 ? -errno : 0;
	return setenv("HWLOC_FSROOT", root, 1) < 0 ? -errno : 0;
}

static void fsroot_restore(char *saved)
{
	if (saved)
		setenv("HWLOC_FSROOT", saved, 1);
	else
		unsetenv("HWLOC_FSROOT");
	free(saved);
}

int aff_discover_live(const char *root, hwloc_topology_t *out, struct aff_discover_report *rep,
		      char *err, size_t errlen)
{
	static const char *const host_only[] = {
		"x86", "opencl", "gl", "cuda", "nvml", "rsmi", "levelzero",
	};
	hwloc_topology_t topo;
	size_t i;
	struct stat st;
	char *saved;
	int ret;

	if (!out) {
		aff_seterr(err, errlen, 0, "discover: no output topology given");
		return -EINVAL;
	}
	*out = NULL;
	if (!is_real_root(root)) {
		if (stat(root, &st) < 0) {
			ret = -errno;
			aff_seterr(err, errlen, 0, "discover: root %s: %s", root, strerror(-ret));
			return ret;
		}
		if (!S_ISDIR(st.st_mode)) {
			aff_seterr(err, errlen, 0, "discover: root %s: %s", root, strerror(ENOTDIR));
			return -ENOTDIR;
		}
	}
	if (hwloc_topology_init(&topo) < 0) {
		ret = errno ? -errno : -ENOMEM;
		aff_seterr(err, errlen, 0, "discover: hwloc_topology_init: %s", strerror(-ret));
		return ret;
	}
	/* Keep every bridge: path classes count switches, and ACS lives on the ports. */
	if (hwloc_topology_set_type_filter(topo, HWLOC_OBJ_BRIDGE, HWLOC_TYPE_FILTER_KEEP_ALL) < 0 ||
	    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PCI_DEVICE, HWLOC_TYPE_FILTER_KEEP_ALL) < 0 ||
	    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_OS_DEVICE, HWLOC_TYPE_FILTER_KEEP_ALL) < 0) {
		ret = errno ? -errno : -EINVAL;
		aff_seterr(err, errlen, 0, "discover: hwloc_topology_set_type_filter: %s", strerror(-ret));
		goto fail;
	}
	/*
	 * On Linux the "linux" backend already discovers PCI from sysfs; the "pci" plugin
	 * (libpciaccess) would only add vendor/device name strings, and leaks its pci.ids
	 * table (~750 KiB) on every load, which a long-running broker cannot afford.
	 * It fails when the plugin is not installed, which is just as good.
	 */
	hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
	/*
	 * These ask the running machine itself (CPUID, GPU runtimes, X displays), not the
	 * files under root: with a recorded tree they would graft this host's CPU model
	 * and GPUs onto the recorded node.
	 */
	if (!is_real_root(root))
		for (i = 0; i < sizeof(host_only) / sizeof(host_only[0]); i++)
			hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
						      host_only[i]);
	ret = fsroot_swap(root, &saved);
	if (ret < 0) {
		fsroot_restore(saved);
		aff_seterr(err, errlen, 0, "discover: setting HWLOC_FSROOT: %s", strerror(-ret));
		goto fail;
	}
	errno = 0;
	ret = hwloc_topology_load(topo);
	if (ret < 0)
		ret = errno ? -errno : -EIO;
	fsroot_restore(saved);
	if (ret < 0) {
		aff_seterr(err, errlen, 0, "discover: hwloc_topology_load (root %s): %s",
			is_real_root(root) ? "/" : root, strerror(-ret));
		goto fail;
	}
	ret = aff_discover_annotate(topo, root, rep);
	if (ret < 0) {
		aff_seterr(err, errlen, 0, "discover: annotating the topology: %s", strerror(-ret));
		goto fail;
	}
	*out = topo;
	return 0;

fail:
	hwloc_topology_destroy(topo);
	return ret;
}
