// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rbgen-hwcheck: loads an XML file through hwloc itself (all object types
 * kept, hwloc_topology_check run) and prints what hwloc sees, one fact a
 * line, so test-rbgen.sh can compare it with what a description asked for
 * without trusting rbgen's own code.
 *
 *   cpu pus=N cores=N packages=N numa=N cpuless=N
 *   pci BUSID CLASS VVVV:DDDD local=NUMA|machine|mismatch raw=R osdevs=a,b chain=C
 *     (C: the bridges above, host bridge first, as hbDDDD:BB,BUSID,...)
 *   bridge BUSID depth=D acs=0x....|none link=S/W cap=S/W
 *   machine peer-memory=X kmod=Y
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

static const char *info_or(hwloc_obj_t o, const char *name, const char *dflt)
{
	const char *v = hwloc_obj_get_info_by_name(o, name);

	return v ? v : dflt;
}

/*
 * The NUMA node an I/O object is local to: the memory attached to its first
 * non-I/O ancestor. (hwloc 2 nodesets also hold the NUMA nodes of every
 * ancestor, so the ancestor's nodeset alone would not tell.)
 */
static void locality(hwloc_topology_t t, hwloc_obj_t o, char *buf, size_t len)
{
	hwloc_obj_t a = hwloc_get_non_io_ancestor_obj(t, o);
	hwloc_obj_t node = a->memory_first_child;

	if (!a->parent) {
		snprintf(buf, len, "machine");
		return;
	}
	if (!node || node->type != HWLOC_OBJ_NUMANODE || node->next_sibling ||
	    !hwloc_bitmap_isequal(node->cpuset, a->cpuset)) {
		snprintf(buf, len, "mismatch");
		return;
	}
	snprintf(buf, len, "%u", node->os_index);
}

static void chain(hwloc_obj_t o, char *buf, size_t len)
{
	hwloc_obj_t v[64];
	int n = 0;
	size_t k = 0;

	for (hwloc_obj_t p = o->parent; p && p->type == HWLOC_OBJ_BRIDGE && n < 64; p = p->parent)
		v[n++] = p;
	buf[0] = '\0';
	while (n-- > 0 && k < len) {
		hwloc_obj_t b = v[n];

		if (b->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST)
			k += (size_t)snprintf(buf + k, len - k, "hb%04x:%02x",
					      b->attr->bridge.downstream.pci.domain,
					      b->attr->bridge.downstream.pci.secondary_bus);
		else
			k += (size_t)snprintf(buf + k, len - k, ",%04x:%02x:%02x.%01x",
					      b->attr->pcidev.domain, b->attr->pcidev.bus,
					      b->attr->pcidev.dev, b->attr->pcidev.func);
	}
}

int main(int argc, char **argv)
{
	hwloc_topology_t t;
	hwloc_obj_t o = NULL;
	hwloc_bitmap_t cpu_nodes;
	int cpuless = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: rbgen-hwcheck FILE.xml\n");
		return 1;
	}
	if (hwloc_topology_init(&t) || hwloc_topology_set_xml(t, argv[1]) ||
	    hwloc_topology_set_all_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL) ||
	    hwloc_topology_load(t)) {
		fprintf(stderr, "rbgen-hwcheck: hwloc cannot load %s\n", argv[1]);
		return 1;
	}
	hwloc_topology_check(t);

	/*
	 * hwloc 2 gives a CPU-less node its parent's cpuset and puts it in the
	 * nodeset of every PU below: it is CPU-less when it is no PU's nearest
	 * memory (the first memory found walking up from the PU).
	 */
	cpu_nodes = hwloc_bitmap_alloc();
	while ((o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_PU, o))) {
		hwloc_obj_t a = o;

		while (a && !a->memory_first_child)
			a = a->parent;
		for (hwloc_obj_t m = a ? a->memory_first_child : NULL; m; m = m->next_sibling)
			if (m->type == HWLOC_OBJ_NUMANODE)
				hwloc_bitmap_set(cpu_nodes, m->os_index);
	}
	while ((o = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, o)))
		if (!hwloc_bitmap_isset(cpu_nodes, o->os_index))
			cpuless++;
	hwloc_bitmap_free(cpu_nodes);
	printf("cpu pus=%d cores=%d packages=%d numa=%d cpuless=%d\n",
	       hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU),
	       hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE),
	       hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE),
	       hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE), cpuless);
	o = hwloc_get_root_obj(t);
	printf("machine peer-memory=%s kmod=%s\n", info_or(o, "RailbindPeerMemory", "-"),
	       info_or(o, "RailbindKmod", "-"));

	o = NULL;
	while ((o = hwloc_get_next_pcidev(t, o))) {
		char loc[32], osdevs[512] = "", path[1024];
		size_t n = 0;

		locality(t, o, loc, sizeof(loc));
		chain(o, path, sizeof(path));
		for (hwloc_obj_t c = o->io_first_child; c; c = c->next_sibling) {
			if (c->type != HWLOC_OBJ_OS_DEVICE)
				continue;
			n += (size_t)snprintf(osdevs + n, sizeof(osdevs) - n, "%s%s", n ? "," : "",
					      c->name);
			if (n >= sizeof(osdevs))
				return 1;
		}
		printf("pci %04x:%02x:%02x.%01x %04x %04x:%04x local=%s raw=%s osdevs=%s chain=%s\n",
		       o->attr->pcidev.domain, o->attr->pcidev.bus, o->attr->pcidev.dev,
		       o->attr->pcidev.func, o->attr->pcidev.class_id, o->attr->pcidev.vendor_id,
		       o->attr->pcidev.device_id, loc, info_or(o, "RailbindNumaNode", "-"),
		       n ? osdevs : "-", path);
	}
	o = NULL;
	while ((o = hwloc_get_next_bridge(t, o))) {
		if (o->attr->bridge.upstream_type != HWLOC_OBJ_BRIDGE_PCI)
			continue;
		printf("bridge %04x:%02x:%02x.%01x depth=%u acs=%s link=%s/%s cap=%s/%s\n",
		       o->attr->pcidev.domain, o->attr->pcidev.bus, o->attr->pcidev.dev,
		       o->attr->pcidev.func, o->attr->bridge.depth,
		       info_or(o, "RailbindACSCtl", "none"), info_or(o, "RailbindLinkSpeed", "-"),
		       info_or(o, "RailbindLinkWidth", "-"), info_or(o, "RailbindLinkSpeedCap", "-"),
		       info_or(o, "RailbindLinkWidthCap", "-"));
	}
	hwloc_topology_destroy(t);
	return 0;
}
