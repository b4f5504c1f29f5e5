// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * RDMA ports: the state and rate of each port of an OpenFabrics device, from
 * sysfs (/sys/class/infiniband/DEV/ports/N), its health counters, and its
 * fabric facts (annotate_port.c).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate.h"
#include "annotate_health.h"
#include "fabric.h"

static int port_filter(const struct dirent *d)
{
	const char *s = d->d_name;

	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

static int port_cmp(const struct dirent **a, const struct dirent **b)
{
	unsigned long x = strtoul((*a)->d_name, NULL, 10), y = strtoul((*b)->d_name, NULL, 10);

	return (x > y) - (x < y);
}

/* "4: ACTIVE" -> "ACTIVE" */
static const char *parse_port_state(const char *s)
{
	const char *p = strstr(s, ": ");

	return p ? p + 2 : s;
}

/* "400 Gb/sec (4X NDR)" -> "400"; "2.5 Gb/sec (1X SDR)" -> "2.5" */
static int parse_port_rate(const char *s, char *out, size_t outlen)
{
	size_t i = 0;

	while (isdigit((unsigned char)s[i]) || (s[i] == '.' && i > 0))
		i++;
	if (!i || s[i - 1] == '.' || s[i] != ' ' || i >= outlen)
		return -EINVAL;
	memcpy(out, s, i);
	out[i] = '\0';
	return 0;
}

static int annotate_ofed_port(struct annotator *an, hwloc_obj_t obj, const char *dev,
			      const char *ports, const char *port)
{
	char path[PATH_MAX], raw[64], name[48], val[32];
	unsigned long p = strtoul(port, NULL, 10);
	int ret;

	if (p > UINT_MAX)
		return 0;
	snprintf(name, sizeof(name), AFF_INFO_PORT_STATE_FMT, (unsigned)p);
	if (!has_info(obj, name) &&
	    snprintf(path, sizeof(path), "%s/%s/state", ports, port) < (int)sizeof(path) &&
	    aff_sysfs_read(path, raw, sizeof(raw)) == 0 && valid_token(parse_port_state(raw))) {
		ret = add_info(obj, name, parse_port_state(raw));
		if (ret < 0)
			return ret;
	}
	snprintf(name, sizeof(name), AFF_INFO_PORT_RATE_FMT, (unsigned)p);
	if (!has_info(obj, name) &&
	    snprintf(path, sizeof(path), "%s/%s/rate", ports, port) < (int)sizeof(path) &&
	    aff_sysfs_read(path, raw, sizeof(raw)) == 0 &&
	    parse_port_rate(raw, val, sizeof(val)) == 0) {
		ret = add_info(obj, name, val);
		if (ret < 0)
			return ret;
	}
	ret = aff_annotate_port_fabric(an, obj, dev, (unsigned)p);
	if (ret < 0)
		return ret;
	if (snprintf(path, sizeof(path), "%s/%s", ports, port) >= (int)sizeof(path))
		return 0;
	return aff_discover_health_port(obj, path, (unsigned)p,
					an->have_health ? &an->health : NULL);
}

/* The ports of RDMA device @dev, onto @obj (its OS device, or its netdev's). */
static int annotate_device(struct annotator *an, hwloc_obj_t obj, const char *dev)
{
	struct dirent **ents;
	char ports[PATH_MAX];
	int n, i, ret;

	/* The name becomes a path component: refuse anything that could leave the tree. */
	if (!dev || !*dev || dev[0] == '.' || strchr(dev, '/'))
		return 0;
	ret = aff_sysfs_path(an, ports, sizeof(ports), "/sys/class/infiniband/%s/ports", dev);
	if (ret < 0)
		return ret;
	n = scandir(ports, &ents, port_filter, port_cmp);
	if (n < 0)
		return 0;
	ret = aff_annotate_rdma_device(an, obj, dev);
	for (i = 0; i < n; i++) {
		if (!ret)
			ret = annotate_ofed_port(an, obj, dev, ports, ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	return ret;
}

int aff_annotate_rdma(struct annotator *an, hwloc_obj_t obj)
{
	return annotate_device(an, obj, obj->name);
}

static bool has_openfabrics(hwloc_topology_t topo, const char *name)
{
	hwloc_obj_t o;

	for (o = NULL; (o = hwloc_get_next_osdev(topo, o));)
		if (aff_is_openfabrics(o) && o->name && !strcmp(o->name, name))
			return true;
	return false;
}

/* The network OS device @name on a PCI function, or NULL. */
static hwloc_obj_t pci_netdev(hwloc_topology_t topo, const char *name)
{
	hwloc_obj_t o;

	for (o = NULL; (o = hwloc_get_next_osdev(topo, o));)
		if (o->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && o->name &&
		    !strcmp(o->name, name) && o->parent && o->parent->type == HWLOC_OBJ_PCI_DEVICE)
			return o;
	return NULL;
}

static int name_filter(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/*
 * Soft-RoCE (rxe) and soft iWARP (siw) sit on a netdev and have no device
 * link of their own, so hwloc reports no OS device for them; NCCL and UCX
 * open them like any verbs device. Their `parent` file (else the netdev of
 * port 1's GID 0) names the netdev: where that is a PCI NIC's, the RDMA
 * device's ports are annotated onto the netdev's OS device and
 * RailbindRDMADevice names the RDMA device, so that the model makes it the
 * NIC's rail.
 */
int aff_annotate_soft_rdma(struct annotator *an, hwloc_topology_t topo)
{
	struct dirent **ents;
	char dir[PATH_MAX], rel[PATH_MAX], nd[64];
	hwloc_obj_t os;
	int n, i, ret = 0;

	if (aff_sysfs_path(an, dir, sizeof(dir), "/sys/class/infiniband") < 0)
		return 0;
	n = scandir(dir, &ents, name_filter, alphasort);
	if (n < 0)
		return 0;
	for (i = 0; i < n; i++) {
		const char *dev = ents[i]->d_name;

		if (ret || strchr(dev, '/') || has_openfabrics(topo, dev))
			goto next;
		snprintf(rel, sizeof(rel), "/sys/class/infiniband/%s/parent", dev);
		if (aff_sysfs_rooted_read(an, rel, nd, sizeof(nd)) < 0) {
			snprintf(rel, sizeof(rel), "/sys/class/infiniband/%s/ports/1/gid_attrs/ndevs/0", dev);
			if (aff_sysfs_rooted_read(an, rel, nd, sizeof(nd)) < 0)
				goto next;
		}
		if (!valid_token(nd) || !(os = pci_netdev(topo, nd)) ||
		    hwloc_obj_get_info_by_name(os, AFF_INFO_RDMA_DEVICE))
			goto next;
		ret = hwloc_obj_add_info(os, AFF_INFO_RDMA_DEVICE, dev) < 0 ? -ENOMEM : 0;
		if (!ret)
			ret = annotate_device(an, os, dev);
next:
		free(ents[i]);
	}
	free(ents);
	return ret;
}

bool aff_is_openfabrics(hwloc_obj_t obj)
{
	return obj->type == HWLOC_OBJ_OS_DEVICE &&
	       (obj->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS ||
		(obj->subtype && !strcmp(obj->subtype, "OpenFabrics")));
}
