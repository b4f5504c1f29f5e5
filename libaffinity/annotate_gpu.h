/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Live discovery of GPU identity (gpu_ident.h's attributes): the drivers'
 * own files, cheap and always read (annotate_gpu.c), and the vendors'
 * libraries, dlopen()ed only where installed and only when asked, because
 * starting them costs up to seconds on a node without persistence mode
 * (annotate_gpu_nvml.c, annotate_gpu_rocm.c). Private to libaffinity.
 */
#ifndef RAILBIND_ANNOTATE_GPU_H
#define RAILBIND_ANNOTATE_GPU_H

#include <stddef.h>
#include <hwloc.h>

/* One GPU of the loaded topology: its PCI object and address. */
struct aff_gpu_obj {
	hwloc_obj_t obj;
	char pci[16];
};

/*
 * The GPUs (display, 3D or processing-accelerator class; not their audio
 * functions, not NVSwitches) of @vendor, in PCI order, into *out
 * (malloc()ed). 0 or -ENOMEM.
 */
int aff_gpu_objs(hwloc_topology_t topo, int vendor, struct aff_gpu_obj **out, size_t *n);
/* The GPU object at @pci among @g, or NULL. */
hwloc_obj_t aff_gpu_obj_at(const struct aff_gpu_obj *g, size_t n, const char *pci);
/* Add info @name unless the object already has one: 0 or -ENOMEM. */
int aff_gpu_info(hwloc_obj_t o, const char *name, const char *value);
/* Add one more @name (a repeated attribute): 0 or -ENOMEM. */
int aff_gpu_info_add(hwloc_obj_t o, const char *name, const char *value);
/* Append "; text" (or "text") to a one-line note of @len bytes. */
void aff_gpu_note(char *note, size_t len, const char *text);

/*
 * UUID and device minor from the drivers' files under @root ("" for /):
 * NVIDIA's /proc/driver/nvidia/gpus/<pci>/information, amdgpu's sysfs
 * unique_id and DRM render node. 0 or -ENOMEM.
 */
int aff_discover_gpu_files(hwloc_topology_t topo, const char *root);
/*
 * NVML's and ROCm SMI's answers for the GPUs of those vendors in @topo;
 * RailbindNVML / RailbindROCmSMI on the Machine say how it went. What could
 * not be known is appended to @note. 0 or -ENOMEM.
 */
int aff_discover_nvml(hwloc_topology_t topo, char *note, size_t notelen);
int aff_discover_rocm_smi(hwloc_topology_t topo, char *note, size_t notelen);

#endif
