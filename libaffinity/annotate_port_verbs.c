// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What only libibverbs knows of a rail port: its active and max MTU (sysfs
 * has no file for them on InfiniBand). rdma-core's libibverbs.so.1 is
 * dlopen()ed on first use, as NVML is (annotate_gpu_nvml.c): a node without
 * rdma-core still works, its MTUs are unknown and RailbindVerbs says why.
 * Only the exported IBVERBS_1.1 calls are used; ibv_query_port is called by
 * its exported name, which fills the port attribute's stable leading part
 * (the header's inline wrapper would reach into the provider's table).
 *
 * RAILBIND_VERBS_LIBRARY names another library file ("none": do not load one).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "annotate.h"
#include "fabric.h"
#include "source_live.h"

struct verbs {
	void *lib;
	struct ibv_device **(*get_list)(int *);
	void (*free_list)(struct ibv_device **);
	const char *(*name)(struct ibv_device *);
	struct ibv_context *(*open)(struct ibv_device *);
	int (*close)(struct ibv_context *);
	int (*query_port)(struct ibv_context *, uint8_t, void *);
};

#define SYM(v, field, sym) (*(void **)&(v)->field = dlsym((v)->lib, sym))

static int set_state(hwloc_topology_t topo, const char *state)
{
	hwloc_obj_t root = hwloc_get_root_obj(topo);

	if (hwloc_obj_get_info_by_name(root, AFF_INFO_VERBS))
		return 0;
	return hwloc_obj_add_info(root, AFF_INFO_VERBS, state) < 0 ? -ENOMEM : 0;
}

static int put_mtu(hwloc_obj_t os, const char *fmt, unsigned port, int e)
{
	char name[64], val[16];
	int bytes = aff_ib_mtu_bytes(e);

	if (!bytes)
		return 0;
	aff_port_info_name(name, sizeof(name), port, fmt);
	snprintf(val, sizeof(val), "%d", bytes);
	return add_info(os, name, val);
}

/* The ports discovery found on @os (RailbindPortNState), each queried. */
static int one_device(struct verbs *v, struct ibv_device *dev, hwloc_obj_t os)
{
	struct ibv_context *ctx = v->open(dev);
	unsigned port;
	int rc = 0;

	if (!ctx)
		return 0;
	for (port = 1; port < 256 && !rc; port++) {
		struct ibv_port_attr attr;
		char name[64];

		snprintf(name, sizeof(name), AFF_INFO_PORT_STATE_FMT, port);
		if (!hwloc_obj_get_info_by_name(os, name))
			continue;
		memset(&attr, 0, sizeof(attr));
		if (v->query_port(ctx, (uint8_t)port, &attr))
			continue;
		rc = put_mtu(os, AFF_PORT_ACTIVE_MTU, port, (int)attr.active_mtu);
		if (!rc)
			rc = put_mtu(os, AFF_PORT_MAX_MTU, port, (int)attr.max_mtu);
	}
	v->close(ctx);
	return rc;
}

/* The RDMA device whose ports @os carries: its own, or a soft one on a netdev. */
static const char *rdma_name(hwloc_obj_t os)
{
	if (aff_is_openfabrics(os))
		return os->name;
	return hwloc_obj_get_info_by_name(os, AFF_INFO_RDMA_DEVICE);
}

static bool any_openfabrics(hwloc_topology_t topo)
{
	hwloc_obj_t o;

	for (o = NULL; (o = hwloc_get_next_osdev(topo, o));)
		if (rdma_name(o))
			return true;
	return false;
}

int aff_discover_verbs(hwloc_topology_t topo)
{
	const char *path = secure_getenv("RAILBIND_VERBS_LIBRARY");
	struct ibv_device **list;
	struct verbs v = { 0 };
	char state[160];
	int n = 0, i, rc = 0;
	hwloc_obj_t os;

	if (!any_openfabrics(topo))
		return 0;
	if (!path)
		path = "libibverbs.so.1";
	v.lib = *path && strcmp(path, "none") ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
	if (!v.lib)
		return set_state(topo, "absent");
	SYM(&v, get_list, "ibv_get_device_list");
	SYM(&v, free_list, "ibv_free_device_list");
	SYM(&v, name, "ibv_get_device_name");
	SYM(&v, open, "ibv_open_device");
	SYM(&v, close, "ibv_close_device");
	SYM(&v, query_port, "ibv_query_port");
	if (!v.get_list || !v.free_list || !v.name || !v.open || !v.close || !v.query_port) {
		snprintf(state, sizeof(state), "failed %.100s lacks an IBVERBS_1.1 call", path);
		goto out;
	}
	list = v.get_list(&n);
	if (!list) {
		snprintf(state, sizeof(state), "failed ibv_get_device_list: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < n && !rc; i++) {
		const char *name = v.name(list[i]);

		for (os = NULL; name && !rc && (os = hwloc_get_next_osdev(topo, os));)
			if (rdma_name(os) && !strcmp(rdma_name(os), name))
				rc = one_device(&v, list[i], os);
	}
	v.free_list(list);
	snprintf(state, sizeof(state), "ok");
out:
	dlclose(v.lib);
	return rc ? rc : set_state(topo, state);
}
