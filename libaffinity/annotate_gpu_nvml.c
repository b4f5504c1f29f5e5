// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * NVIDIA GPUs as NVML sees them, with libnvidia-ml.so.1 dlopen()ed where the
 * driver installed it: UUID, device minor, NVLink (state, far end, its type),
 * MIG mode and instances, Grace's C2C link, and nvmlDeviceGetTopologyCommonAncestor
 * between every two GPUs (the driver's own path class, which railbind
 * cross-checks against its own). No NVIDIA header is used: the few calls are
 * declared here by their exported, versioned names, with the layouts the
 * NVML API reference documents for them. A call an older driver lacks leaves
 * its answer unknown (RailbindGPUUnreadable), never guessed.
 *
 * RAILBIND_NVML_LIBRARY names another library file ("none": do not load one).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate_gpu.h"
#include "gpu_ident.h"

/* nvmlReturn_t values railbind tells apart. */
enum {
	NVML_OK = 0,
	NVML_INVALID_ARGUMENT = 2,
	NVML_NOT_SUPPORTED = 3,
	NVML_NOT_FOUND = 6,
};

typedef int nvml_ret;			/* nvmlReturn_t */
typedef struct nvml_device *nvml_dev;	/* nvmlDevice_t: an opaque handle */

/* nvmlPciInfo_t as the _v2/_v3 calls fill it. */
struct nvml_pci {
	char bus_id_legacy[16];
	unsigned domain, bus, device;
	unsigned pci_device_id, pci_subsystem_id;
	char bus_id[32];
};

/* nvmlC2cModeInfo_v1_t */
struct nvml_c2c {
	unsigned enabled;
};

#define NVML_UUID_LEN 96	/* NVML_DEVICE_UUID_V2_BUFFER_SIZE */
#define NVML_MAX_LINKS 32	/* past NVML_NVLINK_MAX_LINKS (18): the scan stops at the end */

struct nvml {
	void *lib;
	nvml_ret (*init)(void);
	nvml_ret (*shutdown)(void);
	const char *(*error_string)(nvml_ret);
	nvml_ret (*driver_version)(char *, unsigned);
	nvml_ret (*by_pci)(const char *, nvml_dev *);
	nvml_ret (*uuid)(nvml_dev, char *, unsigned);
	nvml_ret (*minor)(nvml_dev, unsigned *);
	nvml_ret (*link_state)(nvml_dev, unsigned, int *);
	nvml_ret (*link_pci)(nvml_dev, unsigned, struct nvml_pci *);
	nvml_ret (*link_type)(nvml_dev, unsigned, int *);
	nvml_ret (*mig_mode)(nvml_dev, unsigned *, unsigned *);
	nvml_ret (*mig_max)(nvml_dev, unsigned *);
	nvml_ret (*mig_by_index)(nvml_dev, unsigned, nvml_dev *);
	nvml_ret (*gi_id)(nvml_dev, unsigned *);
	nvml_ret (*ci_id)(nvml_dev, unsigned *);
	nvml_ret (*c2c)(nvml_dev, struct nvml_c2c *);
	nvml_ret (*ancestor)(nvml_dev, nvml_dev, int *);
};

/* dlsym() into a function pointer (POSIX guarantees the conversion). */
#define SYM(n, field, name) (*(void **)&(n)->field = dlsym((n)->lib, name))

static void resolve(struct nvml *n)
{
	SYM(n, init, "nvmlInit_v2");
	SYM(n, shutdown, "nvmlShutdown");
	SYM(n, error_string, "nvmlErrorString");
	SYM(n, driver_version, "nvmlSystemGetDriverVersion");
	SYM(n, by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
	SYM(n, uuid, "nvmlDeviceGetUUID");
	SYM(n, minor, "nvmlDeviceGetMinorNumber");
	SYM(n, link_state, "nvmlDeviceGetNvLinkState");
	SYM(n, link_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
	SYM(n, link_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
	SYM(n, mig_mode, "nvmlDeviceGetMigMode");
	SYM(n, mig_max, "nvmlDeviceGetMaxMigDeviceCount");
	SYM(n, mig_by_index, "nvmlDeviceGetMigDeviceHandleByIndex");
	SYM(n, gi_id, "nvmlDeviceGetGpuInstanceId");
	SYM(n, ci_id, "nvmlDeviceGetComputeInstanceId");
	SYM(n, c2c, "nvmlDeviceGetC2cModeInfoV");
	SYM(n, ancestor, "nvmlDeviceGetTopologyCommonAncestor");
}

static const char *errstr(const struct nvml *n, nvml_ret rc)
{
	static _Thread_local char buf[32];
	const char *s = n->error_string ? n->error_string(rc) : NULL;

	if (s)
		return s;
	snprintf(buf, sizeof(buf), "NVML error %d", rc);
	return buf;
}

/* What could not be asked of one GPU: RailbindGPUUnreadable's words. */
static void unread(char *buf, size_t len, const char *word)
{
	size_t used = strlen(buf);

	snprintf(buf + used, len - used, "%s%s", used ? "," : "", word);
}

/* One far end of some of a GPU's links. */
struct nvml_end {
	char remote[16];
	const char *type;
	int links;
};

static const char *link_type_word(const struct nvml *n, nvml_dev d, unsigned link,
				  const char *remote, const struct aff_gpu_obj *g, size_t ng)
{
	int type;

	if (n->link_type && n->link_type(d, link, &type) == NVML_OK)
		return type == 0 ? "gpu" : type == 1 ? "npu" : type == 2 ? "switch" : "unknown";
	/* An older NVML: a far end at one of this node's GPUs is that GPU. */
	return *remote && aff_gpu_obj_at(g, ng, remote) ? "gpu" : "unknown";
}

static int nvlinks(const struct nvml *n, nvml_dev d, hwloc_obj_t o, const struct aff_gpu_obj *g,
		   size_t ng, char *unreadable, size_t ulen)
{
	struct nvml_end end[NVML_MAX_LINKS];
	size_t nend = 0, i;
	unsigned link;
	int active = 0, rc;
	char v[64];

	if (!n->link_state) {
		unread(unreadable, ulen, "nvlink");
		return 0;
	}
	for (link = 0; link < NVML_MAX_LINKS; link++) {
		struct nvml_pci pci;
		char remote[16] = "";
		const char *type;
		int state = 0;

		rc = n->link_state(d, link, &state);
		if (rc == NVML_INVALID_ARGUMENT)
			break;		/* past the GPU's last link */
		if (rc == NVML_NOT_SUPPORTED)
			continue;	/* no such link on this GPU, or no NVLink at all */
		if (rc != NVML_OK) {
			unread(unreadable, ulen, "nvlink");
			return 0;
		}
		if (!state)
			continue;
		active++;
		memset(&pci, 0, sizeof(pci));
		/* nvmlPciInfo_t has no function number: NVLink ends are function 0. */
		if (n->link_pci && n->link_pci(d, link, &pci) == NVML_OK)
			snprintf(remote, sizeof(remote), "%04x:%02x:%02x.0", pci.domain & 0xffff,
				 pci.bus & 0xff, pci.device & 0x1f);
		type = link_type_word(n, d, link, remote, g, ng);
		for (i = 0; i < nend; i++)
			if (!strcmp(end[i].remote, remote) && end[i].type == type)
				break;
		if (i == nend) {
			memcpy(end[nend].remote, remote, sizeof(remote));
			end[nend].type = type;
			end[nend++].links = 0;
		}
		end[i].links++;
	}
	snprintf(v, sizeof(v), "%d", active);
	rc = aff_gpu_info(o, AFF_INFO_NVLINKS, v);
	for (i = 0; i < nend && !rc; i++) {
		snprintf(v, sizeof(v), "%.15s %.7s %d", end[i].remote[0] ? end[i].remote : "-",
			 end[i].type, end[i].links);
		rc = aff_gpu_info_add(o, AFF_INFO_NVLINK, v);
	}
	return rc;
}

static int mig(const struct nvml *n, nvml_dev d, hwloc_obj_t o, char *unreadable, size_t ulen)
{
	unsigned cur = 0, pending = 0, max = 0, i, gi, ci;
	char uuid[NVML_UUID_LEN], v[NVML_UUID_LEN + 32];
	nvml_ret r;
	int rc;

	if (!n->mig_mode) {
		unread(unreadable, ulen, "mig");
		return 0;
	}
	r = n->mig_mode(d, &cur, &pending);
	if (r == NVML_NOT_SUPPORTED)
		return aff_gpu_info(o, AFF_INFO_MIG, "unsupported");
	if (r != NVML_OK) {
		unread(unreadable, ulen, "mig");
		return 0;
	}
	rc = aff_gpu_info(o, AFF_INFO_MIG, cur == 1 ? "enabled" : "disabled");
	if (rc < 0 || cur != 1)
		return rc;
	if (!n->mig_max || !n->mig_by_index || !n->uuid || n->mig_max(d, &max) != NVML_OK) {
		unread(unreadable, ulen, "mig-devices");
		return 0;
	}
	for (i = 0; i < max && i < 64 && !rc; i++) {
		nvml_dev m;

		r = n->mig_by_index(d, i, &m);
		if (r == NVML_NOT_FOUND)
			continue;	/* a slot with no instance */
		if (r != NVML_OK || n->uuid(m, uuid, sizeof(uuid)) != NVML_OK ||
		    strncmp(uuid, "MIG-", 4) || strpbrk(uuid, " \t\n")) {
			unread(unreadable, ulen, "mig-devices");
			return 0;
		}
		uuid[sizeof(uuid) - 1] = '\0';
		if (!n->gi_id || n->gi_id(m, &gi) != NVML_OK || gi > 1024)
			gi = (unsigned)-1;
		if (!n->ci_id || n->ci_id(m, &ci) != NVML_OK || ci > 1024)
			ci = (unsigned)-1;
		snprintf(v, sizeof(v), "%s %d %d", uuid, (int)gi, (int)ci);
		rc = aff_gpu_info_add(o, AFF_INFO_MIG_DEVICE, v);
	}
	return rc;
}

static int c2c(const struct nvml *n, nvml_dev d, hwloc_obj_t o, char *unreadable, size_t ulen)
{
	struct nvml_c2c info = { 0 };
	nvml_ret r;

	if (!n->c2c) {
		unread(unreadable, ulen, "c2c");
		return 0;
	}
	r = n->c2c(d, &info);
	if (r == NVML_NOT_SUPPORTED)
		return aff_gpu_info(o, AFF_INFO_C2C, "disabled");
	if (r != NVML_OK) {
		unread(unreadable, ulen, "c2c");
		return 0;
	}
	return aff_gpu_info(o, AFF_INFO_C2C, info.enabled ? "enabled" : "disabled");
}

static const char *level_name(int level)
{
	switch (level) {
	case 0:
		return "INTERNAL";
	case 10:
		return "PIX";
	case 20:
		return "PXB";
	case 30:
		return "PHB";
	case 40:
		return "NODE";
	case 50:
		return "SYS";
	}
	return NULL;
}

/* The driver's class from GPU i to every later GPU, kept on GPU i. */
static int paths(const struct nvml *n, const struct aff_gpu_obj *g, size_t ng, const nvml_dev *h,
		 size_t i, char *unreadable, size_t ulen)
{
	size_t j;
	int level, rc = 0;
	char v[48];

	for (j = i + 1; j < ng && !rc; j++) {
		const char *name;

		if (!h[j])
			continue;
		if (!n->ancestor || n->ancestor(h[i], h[j], &level) != NVML_OK ||
		    !(name = level_name(level))) {
			unread(unreadable, ulen, "paths");
			return 0;
		}
		snprintf(v, sizeof(v), "%s %s", g[j].pci, name);
		rc = aff_gpu_info_add(g[i].obj, AFF_INFO_GPU_PATH, v);
	}
	return rc;
}

static int one_gpu(const struct nvml *n, const struct aff_gpu_obj *g, size_t ng,
		   const nvml_dev *h, size_t i)
{
	hwloc_obj_t o = g[i].obj;
	char unreadable[96] = "", uuid[NVML_UUID_LEN], v[32];
	unsigned minor;
	int rc = 0;

	if (!h[i])
		return aff_gpu_info(o, AFF_INFO_GPU_UNREADABLE, "uuid,minor,nvlink,mig,c2c,paths");
	if (n->uuid && n->uuid(h[i], uuid, sizeof(uuid)) == NVML_OK &&
	    (uuid[sizeof(uuid) - 1] = '\0', !strpbrk(uuid, " \t\n")) && *uuid)
		rc = aff_gpu_info(o, AFF_INFO_GPU_UUID, uuid);
	else
		unread(unreadable, sizeof(unreadable), "uuid");
	if (!rc && n->minor && n->minor(h[i], &minor) == NVML_OK) {
		snprintf(v, sizeof(v), "%u", minor);
		rc = aff_gpu_info(o, AFF_INFO_GPU_MINOR, v);
	} else if (!rc) {
		unread(unreadable, sizeof(unreadable), "minor");
	}
	/* A snapshot being annotated again keeps what it says. */
	if (!rc && !hwloc_obj_get_info_by_name(o, AFF_INFO_NVLINKS))
		rc = nvlinks(n, h[i], o, g, ng, unreadable, sizeof(unreadable));
	if (!rc && !hwloc_obj_get_info_by_name(o, AFF_INFO_MIG))
		rc = mig(n, h[i], o, unreadable, sizeof(unreadable));
	if (!rc)
		rc = c2c(n, h[i], o, unreadable, sizeof(unreadable));
	if (!rc && !hwloc_obj_get_info_by_name(o, AFF_INFO_GPU_PATH))
		rc = paths(n, g, ng, h, i, unreadable, sizeof(unreadable));
	if (!rc && *unreadable)
		rc = aff_gpu_info(o, AFF_INFO_GPU_UNREADABLE, unreadable);
	return rc;
}

static int set_state(hwloc_topology_t topo, const char *state)
{
	return aff_gpu_info(hwloc_get_root_obj(topo), AFF_INFO_NVML, state);
}

int aff_discover_nvml(hwloc_topology_t topo, char *note, size_t notelen)
{
	const char *path = secure_getenv("RAILBIND_NVML_LIBRARY");
	struct nvml n = { 0 };
	struct aff_gpu_obj *g;
	nvml_dev *h = NULL;
	char state[160], version[96] = "";
	size_t ng, i;
	nvml_ret r;
	int rc;

	rc = aff_gpu_objs(topo, 0x10de, &g, &ng);
	if (rc < 0 || !ng)
		return rc;
	if (!path)
		path = "libnvidia-ml.so.1";
	n.lib = *path && strcmp(path, "none") ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
	if (!n.lib) {
		aff_gpu_note(note, notelen,
			     "NVML (libnvidia-ml.so.1) not installed: NVLink, MIG and the driver's GPU x GPU classes unknown");
		free(g);
		return set_state(topo, "absent");
	}
	resolve(&n);
	if (!n.init || !n.shutdown || !n.by_pci) {
		snprintf(state, sizeof(state), "failed %s lacks nvmlInit_v2, nvmlShutdown or nvmlDeviceGetHandleByPciBusId_v2",
			 path);
		goto fail;
	}
	r = n.init();
	if (r != NVML_OK) {
		snprintf(state, sizeof(state), "failed nvmlInit_v2: %s", errstr(&n, r));
		goto fail;
	}
	if (!n.driver_version || n.driver_version(version, sizeof(version)) != NVML_OK ||
	    (version[sizeof(version) - 1] = '\0', !*version) || strpbrk(version, " \t\n"))
		snprintf(version, sizeof(version), "unknown");
	h = calloc(ng, sizeof(*h));
	rc = h ? 0 : -ENOMEM;
	for (i = 0; i < ng && !rc; i++)
		if (n.by_pci(g[i].pci, &h[i]) != NVML_OK)
			h[i] = NULL;
	for (i = 0; i < ng && !rc; i++)
		rc = one_gpu(&n, g, ng, h, i);
	n.shutdown();
	snprintf(state, sizeof(state), "ok %s", version);
	if (!rc)
		rc = set_state(topo, state);
	free(h);
	free(g);
	dlclose(n.lib);
	return rc;
fail:
	aff_gpu_note(note, notelen, state + 7);
	free(g);
	dlclose(n.lib);
	return set_state(topo, state);
}
