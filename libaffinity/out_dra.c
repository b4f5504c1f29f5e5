// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Kubernetes DRA device attributes of the node's GPUs and NICs. railbind is
 * not the DRA driver of either (a ResourceSlice's attributes are published
 * by the driver that owns the device), so these are what such drivers
 * publish, computed as they compute them, for people writing selectors and
 * for the drivers to check against, plus railbind's own finer pairing:
 *
 *  resource.kubernetes.io/pcieRoot  GetPCIeRootAttributeByPCIBusID's answer:
 *	the first component below /sys/devices of the path
 *	/sys/bus/pci/devices/BDF links to ("pci0000:17"). On a live node the
 *	link itself is read (under --root); from a file, the same name is made
 *	from the host bridge the device hangs from: its domain and root bus.
 *  resource.kubernetes.io/numaNode  the device's sysfs numa_node; none for -1,
 *	as Kubernetes publishes none.
 *  railbind.io/rail  the rail (NIC index, railbind topo's NICn) a GPU's
 *	default plan gives it first, a NIC's own: matchAttribute on it pairs
 *	a GPU with its NIC where pcieRoot is coarse (every device of a socket,
 *	or of a VM, may share one).
 *  railbind.io/complex  the PCIe switch the device hangs from (its upstream
 *	port's address), else its pcieRoot.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "dra.h"
#include "plan.h"

#define K8S_ROOT "resource.kubernetes.io/pcieRoot"
#define K8S_NUMA "resource.kubernetes.io/numaNode"
#define RB_RAIL "railbind.io/rail"
#define RB_COMPLEX "railbind.io/complex"

/*
 * Kubernetes' rule on ${root}/sys: the link's target, made absolute and
 * cleaned as Go's filepath.Join does, must lie under /sys/devices/pci and
 * end in the address itself.
 */
static int root_from_sysfs(const struct aff_topo *t, const char *bdf, char *buf, size_t len)
{
	char rel[64], link[PATH_MAX], target[PATH_MAX], path[2 * PATH_MAX + 2];
	char *part[256], *save = NULL, *first;
	size_t n = 0;
	ssize_t k;

	snprintf(rel, sizeof(rel), "/sys/bus/pci/devices/%s", bdf);
	k = readlink(aff_ctx_path(t->ctx, rel, link, sizeof(link)), target, sizeof(target) - 1);
	if (k <= 0)
		return -ENOENT;
	target[k] = '\0';
	if (target[0] == '/')
		snprintf(path, sizeof(path), "%s", target);
	else
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", target);
	/* The components, ".." and "." resolved lexically. */
	for (char *c = strtok_r(path, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, "."))
			continue;
		if (!strcmp(c, "..")) {
			if (n)
				n--;
			continue;
		}
		if (n == sizeof(part) / sizeof(part[0]))
			return -ENOENT;
		part[n++] = c;
	}
	if (n < 4 || strcmp(part[0], "sys") || strcmp(part[1], "devices") ||
	    strncmp(part[2], "pci", 3) || strcmp(part[n - 1], bdf))
		return -ENOENT;
	first = part[2];
	if (strlen(first) >= len)
		return -ENOENT;
	snprintf(buf, len, "%s", first);
	return 0;
}

int aff_dra_pcie_root(const struct aff_topo *t, int dev, char *buf, size_t len)
{
	const struct aff_dev *d = &t->dev[dev];
	int hb = d->hostbridge, bus = -1;

	if (!*d->pci)
		return -ENOENT;
	if (t->src == AFF_SRC_LIVE)
		return root_from_sysfs(t, d->pci, buf, len);
	/* The root bus: that of the devices right below the host bridge. */
	if (hb < 0) {
		snprintf(buf, len, "pci%04x:%02x", d->domain, d->bus);
		return 0;
	}
	for (size_t i = 0; i < t->ndev; i++)
		if (t->dev[i].parent == hb && *t->dev[i].pci &&
		    (bus < 0 || t->dev[i].bus < (unsigned)bus))
			bus = (int)t->dev[i].bus;
	if (bus < 0)
		return -ENOENT;
	snprintf(buf, len, "pci%04x:%02x", d->domain, (unsigned)bus);
	return 0;
}

/* Kubernetes' numaNode: the raw sysfs value where the source has it. */
static int dev_numa(const struct aff_topo *t, int dev)
{
	const struct aff_dev *d = &t->dev[dev];

	if (d->numa_raw != INT_MIN)
		return d->numa_raw;
	return d->loc >= 0 && t->loc[d->loc].known ? t->loc[d->loc].numa : -1;
}

static void put(struct json_object *o, const char *key, struct json_object *v, bool typed,
		const char *type)
{
	if (typed) {
		struct json_object *w = json_object_new_object();

		json_object_object_add(w, type, v);
		v = w;
	}
	json_object_object_add(o, key, v);
}

struct json_object *aff_dra_attrs(const struct aff_topo *t, int dev, int rail, bool typed)
{
	struct json_object *o = json_object_new_object();
	char root[64];
	int numa = dev_numa(t, dev), up = t->dev[dev].up;
	bool have_root = aff_dra_pcie_root(t, dev, root, sizeof(root)) == 0;

	if (have_root)
		put(o, K8S_ROOT, json_object_new_string(root), typed, "string");
	if (numa >= 0)
		put(o, K8S_NUMA, json_object_new_int(numa), typed, "int");
	if (rail >= 0)
		put(o, RB_RAIL, json_object_new_int(rail), typed, "int");
	if (up >= 0 && *t->dev[up].pci)
		put(o, RB_COMPLEX, json_object_new_string(t->dev[up].pci), typed, "string");
	else if (have_root)
		put(o, RB_COMPLEX, json_object_new_string(root), typed, "string");
	return o;
}

int *aff_dra_gpu_rails(const struct aff_topo *t)
{
	struct aff_plan_spec spec = { 0 };
	struct aff_plan *p = NULL;
	char *all, err[256];
	int *rail;

	if (!t->ngpu)
		return NULL;
	rail = calloc(t->ngpu, sizeof(*rail));
	if (!rail)
		return NULL;
	for (size_t g = 0; g < t->ngpu; g++)
		rail[g] = -1;
	/* Every CPU: the pairing is the node's, not this process's. */
	all = aff_bitmap_list(t->all_cpus);
	spec.allowed_cpus = all && *all ? all : NULL;
	/* The plan takes a reference to the topology; it changes nothing else. */
	if (aff_plan_new((struct aff_topo *)t, &spec, &p, err, sizeof(err)) == 0) {
		for (size_t r = 0; r < p->nrank; r++)
			if (p->rank[r].gpu >= 0 && p->rank[r].rails.n)
				rail[p->rank[r].gpu] = p->rank[r].rails.rail[0];
		aff_plan_unref(p);
	}
	free(all);
	return rail;
}

static struct json_object *device(const struct aff_topo *t, const char *name, int dev,
				  int rail)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "name", json_object_new_string(name));
	json_object_object_add(o, "pci", json_object_new_string(t->dev[dev].pci));
	json_object_object_add(o, "attributes", aff_dra_attrs(t, dev, rail, true));
	return o;
}

struct json_object *aff_dra_to_json(const struct aff_topo *t)
{
	struct json_object *o = json_object_new_object(), *devs = json_object_new_array();
	int *rail = aff_dra_gpu_rails(t);
	char name[64];

	json_object_object_add(o, "schema", json_object_new_string("railbind.dra/1"));
	json_object_object_add(o, "host", t->host ? json_object_new_string(t->host) : NULL);
	for (size_t g = 0; g < t->ngpu; g++) {
		snprintf(name, sizeof(name), "gpu%zu", g);
		json_object_array_add(devs, device(t, name, t->gpus[g], rail ? rail[g] : -1));
	}
	for (size_t r = 0; r < t->nrail; r++) {
		/* One device per NIC, not per port. */
		if (r && t->rail[r - 1].dev == t->rail[r].dev)
			continue;
		snprintf(name, sizeof(name), "nic%zu", r);
		json_object_array_add(devs, device(t, name, t->rail[r].dev, (int)r));
	}
	json_object_object_add(o, "devices", devs);
	free(rail);
	return o;
}
