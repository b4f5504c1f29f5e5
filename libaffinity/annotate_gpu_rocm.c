// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * AMD GPUs as ROCm SMI sees them, with librocm_smi64 dlopen()ed where ROCm
 * installed it: unique id (ROCR_VISIBLE_DEVICES's GPU-<hex>), DRM render
 * minor, the XGMI (Infinity Fabric) link to every other GPU with ROCm SMI's
 * hops and weight (what rocm-smi --showtopo prints), and the compute and
 * memory partition modes (SPX/CPX..., NPS1/NPS4...). The calls are declared
 * here from ROCm SMI's documented C API; no ROCm header is needed.
 *
 * RAILBIND_ROCM_SMI_LIBRARY names another library file ("none": none).
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate_gpu.h"
#include "gpu_ident.h"

enum {
	RSMI_OK = 0,
	RSMI_LINK_XGMI = 2,	/* RSMI_IOLINK_TYPE_XGMI */
};

typedef int rsmi_ret;		/* rsmi_status_t */

struct rsmi {
	void *lib;
	rsmi_ret (*init)(uint64_t);
	rsmi_ret (*shut_down)(void);
	rsmi_ret (*status_string)(rsmi_ret, const char **);
	rsmi_ret (*count)(uint32_t *);
	rsmi_ret (*pci_id)(uint32_t, uint64_t *);
	rsmi_ret (*unique_id)(uint32_t, uint64_t *);
	rsmi_ret (*render_minor)(uint32_t, uint32_t *);
	rsmi_ret (*link_type)(uint32_t, uint32_t, uint64_t *, int *);
	rsmi_ret (*link_weight)(uint32_t, uint32_t, uint64_t *);
	rsmi_ret (*compute_partition)(uint32_t, char *, uint32_t);
	rsmi_ret (*memory_partition)(uint32_t, char *, uint32_t);
};

#define SYM(r, field, name) (*(void **)&(r)->field = dlsym((r)->lib, name))

/* ROCm 6 ships .so.7 (or .so.6), ROCm 5 .so.5; /opt/rocm/lib when not in ld.so.conf. */
static void *open_lib(const char **name)
{
	static const char *const names[] = {
		"librocm_smi64.so.7", "librocm_smi64.so.6", "librocm_smi64.so.5",
		"/opt/rocm/lib/librocm_smi64.so",
	};
	const char *env = secure_getenv("RAILBIND_ROCM_SMI_LIBRARY");
	size_t i;
	void *lib;

	if (env) {
		*name = env;
		return *env && strcmp(env, "none") ? dlopen(env, RTLD_NOW | RTLD_LOCAL) : NULL;
	}
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		*name = names[i];
		lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (lib)
			return lib;
	}
	*name = "librocm_smi64";
	return NULL;
}

/*
 * ROCm SMI's BDFID: domain << 32 | partition << 28 | bus << 8 | device << 3 |
 * function. A partition of a GPU (CPX) is the same PCI function.
 */
static void bdf_pci(uint64_t id, char *buf, size_t len)
{
	snprintf(buf, len, "%04x:%02x:%02x.%x", (unsigned)(id >> 32) & 0xffff,
		 (unsigned)(id >> 8) & 0xff, (unsigned)(id >> 3) & 0x1f, (unsigned)id & 7);
}

static bool word(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s <= ' ' || *s > '~')
			return false;
	return true;
}

static int partition(rsmi_ret (*get)(uint32_t, char *, uint32_t), uint32_t dev,
		     hwloc_obj_t o, const char *name, char *unreadable, size_t ulen)
{
	char buf[32] = "";
	size_t used;

	if (get && get(dev, buf, sizeof(buf)) == RSMI_OK) {
		buf[sizeof(buf) - 1] = '\0';
		if (word(buf))
			return aff_gpu_info(o, name, buf);
	}
	used = strlen(unreadable);
	snprintf(unreadable + used, ulen - used, "%spartition", used ? "," : "");
	return 0;
}

static int one_gpu(const struct rsmi *r, uint32_t dev, uint32_t ndev, const char (*pci)[16],
		   hwloc_obj_t o)
{
	char v[64], unreadable[64] = "";
	uint64_t id, hops, weight;
	uint32_t minor, j;
	int type, rc = 0;
	bool known;

	if (r->unique_id && r->unique_id(dev, &id) == RSMI_OK && id) {
		snprintf(v, sizeof(v), "GPU-%016" PRIx64, id);
		rc = aff_gpu_info(o, AFF_INFO_GPU_UUID, v);
	} else {
		snprintf(unreadable, sizeof(unreadable), "uuid");
	}
	if (!rc && r->render_minor && r->render_minor(dev, &minor) == RSMI_OK) {
		snprintf(v, sizeof(v), "%u", minor);
		rc = aff_gpu_info(o, AFF_INFO_GPU_MINOR, v);
	}
	/* A snapshot being annotated again keeps what it says. */
	known = hwloc_obj_get_info_by_name(o, AFF_INFO_XGMI) != NULL;
	for (j = 0; j < ndev && !rc && !known; j++) {
		if (j == dev || !*pci[j] || !strcmp(pci[j], pci[dev]))
			continue;
		if (!r->link_type || r->link_type(dev, j, &hops, &type) != RSMI_OK) {
			size_t used = strlen(unreadable);

			snprintf(unreadable + used, sizeof(unreadable) - used, "%sxgmi",
				 used ? "," : "");
			break;
		}
		if (type != RSMI_LINK_XGMI)
			continue;
		if (!r->link_weight || r->link_weight(dev, j, &weight) != RSMI_OK)
			weight = 0;
		snprintf(v, sizeof(v), "%s %" PRIu64 " %" PRIu64, pci[j], hops > 64 ? 64 : hops,
			 weight > 1000000 ? 1000000 : weight);
		rc = aff_gpu_info_add(o, AFF_INFO_XGMI, v);
	}
	if (!rc)
		rc = partition(r->compute_partition, dev, o, AFF_INFO_COMPUTE_PARTITION,
			       unreadable, sizeof(unreadable));
	if (!rc)
		rc = partition(r->memory_partition, dev, o, AFF_INFO_MEMORY_PARTITION,
			       unreadable, sizeof(unreadable));
	if (!rc && *unreadable)
		rc = aff_gpu_info(o, AFF_INFO_GPU_UNREADABLE, unreadable);
	return rc;
}

int aff_discover_rocm_smi(hwloc_topology_t topo, char *note, size_t notelen)
{
	struct rsmi r = { 0 };
	struct aff_gpu_obj *g;
	char (*pci)[16] = NULL, state[160];
	const char *name, *msg;
	uint32_t ndev = 0, i, k;
	uint64_t id;
	size_t ng;
	rsmi_ret s;
	int rc;

	rc = aff_gpu_objs(topo, 0x1002, &g, &ng);
	if (rc < 0 || !ng)
		return rc;
	r.lib = open_lib(&name);
	if (!r.lib) {
		aff_gpu_note(note, notelen,
			     "ROCm SMI (librocm_smi64) not installed: XGMI links and partition modes unknown");
		free(g);
		return aff_gpu_info(hwloc_get_root_obj(topo), AFF_INFO_ROCM_SMI, "absent");
	}
	SYM(&r, init, "rsmi_init");
	SYM(&r, shut_down, "rsmi_shut_down");
	SYM(&r, status_string, "rsmi_status_string");
	SYM(&r, count, "rsmi_num_monitor_devices");
	SYM(&r, pci_id, "rsmi_dev_pci_id_get");
	SYM(&r, unique_id, "rsmi_dev_unique_id_get");
	SYM(&r, render_minor, "rsmi_dev_drm_render_minor_get");
	SYM(&r, link_type, "rsmi_topo_get_link_type");
	SYM(&r, link_weight, "rsmi_topo_get_link_weight");
	SYM(&r, compute_partition, "rsmi_dev_compute_partition_get");
	SYM(&r, memory_partition, "rsmi_dev_memory_partition_get");
	if (!r.init || !r.shut_down || !r.count || !r.pci_id) {
		snprintf(state, sizeof(state), "failed %s lacks rsmi_init, rsmi_num_monitor_devices or rsmi_dev_pci_id_get",
			 name);
		goto fail;
	}
	s = r.init(0);
	if (s != RSMI_OK) {
		msg = NULL;
		if (!r.status_string || r.status_string(s, &msg) != RSMI_OK || !msg)
			msg = "error";
		snprintf(state, sizeof(state), "failed rsmi_init: %.100s (status %d)", msg, s);
		goto fail;
	}
	if (r.count(&ndev) != RSMI_OK || ndev > 4096)
		ndev = 0;
	pci = calloc(ndev + 1, sizeof(*pci));
	rc = pci ? 0 : -ENOMEM;
	for (i = 0; i < ndev && !rc; i++)
		if (r.pci_id(i, &id) == RSMI_OK)
			bdf_pci(id, pci[i], sizeof(pci[i]));
	for (i = 0; i < ndev && !rc; i++) {
		hwloc_obj_t o = *pci[i] ? aff_gpu_obj_at(g, ng, pci[i]) : NULL;

		/* The first partition of a GPU speaks for it. */
		for (k = 0; o && k < i; k++)
			if (!strcmp(pci[k], pci[i]))
				o = NULL;
		if (o)
			rc = one_gpu(&r, i, ndev, (const char (*)[16])pci, o);
	}
	r.shut_down();
	free(pci);
	free(g);
	dlclose(r.lib);
	return rc ? rc : aff_gpu_info(hwloc_get_root_obj(topo), AFF_INFO_ROCM_SMI, "ok");
fail:
	aff_gpu_note(note, notelen, state + 7);
	free(g);
	dlclose(r.lib);
	return aff_gpu_info(hwloc_get_root_obj(topo), AFF_INFO_ROCM_SMI, state);
}
