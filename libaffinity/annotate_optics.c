// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * aff_discover_optics(): each network PCI function's pluggable module, read
 * through its netdev (optics_read.c) and recorded on the function's PCI
 * object (optics_info.c), or why it could not be: without CAP_NET_ADMIN; an
 * InfiniBand port, whose IPoIB netdev is not the port's PHY (its module is
 * reachable only through MADs: mlxlink, ibdiagnet's cable info); a recorded
 * tree (--root), whose modules are on another machine. Asked for by the
 * audit and the snapshot only (AFF_LOAD_OPTICS): each module costs a few
 * I2C reads of 128 bytes. A module read on the real node also gets the
 * temperatures earlier reads recorded, and adds its own (optics_history.c),
 * so the audit can judge the trend.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "annotate.h"
#include "optics_history.h"
#include "optics_info.h"
#include "optics_read.h"

#define ARPHRD_INFINIBAND_TYPE "32"

static bool is_network_function(hwloc_obj_t obj)
{
	return obj->type == HWLOC_OBJ_PCI_DEVICE && (obj->attr->pcidev.class_id >> 8) == 0x02;
}

/* The first netdev child of @obj, and whether an OpenFabrics device hangs there too. */
static hwloc_obj_t netdev_of(hwloc_obj_t obj, bool *rdma)
{
	hwloc_obj_t c, net = NULL;

	*rdma = false;
	for (c = obj->io_first_child; c; c = c->next_sibling) {
		if (c->type != HWLOC_OBJ_OS_DEVICE || !c->name)
			continue;
		if (c->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && !net)
			net = c;
		if (aff_is_openfabrics(c))
			*rdma = true;
	}
	return net;
}

static bool is_infiniband(const char *root, const char *ifname)
{
	char path[PATH_MAX], buf[16];

	if (snprintf(path, sizeof(path), "%s/sys/class/net/%s/type", root, ifname) >=
	    (int)sizeof(path))
		return false;
	return aff_sysfs_read(path, buf, sizeof(buf)) == 0 && !strcmp(buf, ARPHRD_INFINIBAND_TYPE);
}

static int annotate(hwloc_obj_t obj, const char *root, bool real_root, struct json_object *hist,
		    bool *took)
{
	struct aff_optics o;
	char why[256], reason[320];
	hwloc_obj_t net;
	bool rdma;
	int rc;

	if (hwloc_obj_get_info_by_name(obj, AFF_INFO_XCVR_TYPE) ||
	    hwloc_obj_get_info_by_name(obj, AFF_INFO_XCVR_UNDECIDED))
		return 0;
	net = netdev_of(obj, &rdma);
	if (!net && !rdma)
		return 0;
	/* The name becomes a path component: one that could leave the tree is not asked. */
	if (net && (!*net->name || net->name[0] == '.' || strchr(net->name, '/')))
		return 0;
	if (!net)
		return aff_optics_info_undecided(obj, NULL,
			"an InfiniBand port without a netdev: its module is reachable only through MADs (mlxlink, ibdiagnet)");
	if (is_infiniband(root, net->name))
		return aff_optics_info_undecided(obj, net->name,
			"an InfiniBand port: its IPoIB netdev is not the port's PHY, and the module is reachable only through MADs (mlxlink, ibdiagnet)");
	if (!real_root)
		return aff_optics_info_undecided(obj, net->name,
			"a recorded tree (--root): its modules are on another machine, no module EEPROM to read");
	rc = aff_optics_read_netdev(net->name, &o, why, sizeof(why));
	if (rc == 0 && hist) {
		char pci[16];

		snprintf(pci, sizeof(pci), "%04x:%02x:%02x.%x", obj->attr->pcidev.domain,
			 obj->attr->pcidev.bus, obj->attr->pcidev.dev, obj->attr->pcidev.func);
		rc = aff_optics_history_take(hist, pci, (long long)time(NULL), &o);
		*took = true;
	}
	if (rc == 0)
		return aff_optics_info_write(obj, net->name, &o);
	if (rc == -ENOMEM)
		return rc;
	snprintf(reason, sizeof(reason), "%s", *why ? why : aff_optics_errno_reason(rc));
	return aff_optics_info_undecided(obj, net->name, reason);
}

int aff_discover_optics(hwloc_topology_t topo, const char *root, struct aff_discover_report *rep)
{
	bool real_root = !root || !*root || !strcmp(root, "/"), took = false;
	struct json_object *hist = NULL;
	struct stat st;
	hwloc_obj_t obj;
	char err[256];
	int rc = 0;

	(void)rep;
	/* Only where railbindd made its directory: root creating it would lock railbindd out. */
	if (real_root && stat("/run/railbind", &st) == 0 && S_ISDIR(st.st_mode))
		rc = aff_optics_history_load(AFF_OPTICS_HISTORY_FILE, &hist);
	for (obj = NULL; !rc && (obj = hwloc_get_next_pcidev(topo, obj));)
		if (is_network_function(obj))
			rc = annotate(obj, real_root ? "" : root, real_root, hist, &took);
	/* Unprivileged runs read no module and so change nothing. */
	if (!rc && took)
		aff_optics_history_save(hist, AFF_OPTICS_HISTORY_FILE, err, sizeof(err));
	json_object_put(hist);
	return rc;
}
