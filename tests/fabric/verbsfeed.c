// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * verbsfeed IN.xml OUT.xml: the verbs part of live discovery
 * (aff_discover_verbs, with RAILBIND_VERBS_LIBRARY naming the library) on
 * a recorded snapshot, written back as a snapshot. For tests/fabric/run.sh.
 */
#include <stdio.h>
#include <string.h>
#include <hwloc.h>

#include "source_live.h"

int main(int argc, char **argv)
{
	hwloc_topology_t topo;
	char err[256] = "";
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: verbsfeed IN.xml OUT.xml\n");
		return 2;
	}
	if (hwloc_topology_init(&topo) < 0)
		return 1;
	hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (hwloc_topology_set_xml(topo, argv[1]) < 0 || hwloc_topology_load(topo) < 0) {
		fprintf(stderr, "verbsfeed: cannot load %s\n", argv[1]);
		hwloc_topology_destroy(topo);
		return 1;
	}
	rc = aff_discover_verbs(topo);
	if (!rc)
		rc = aff_snapshot_write(topo, argv[2], err, sizeof(err));
	hwloc_topology_destroy(topo);
	if (rc < 0) {
		fprintf(stderr, "verbsfeed: %s\n", *err ? err : strerror(-rc));
		return 1;
	}
	return 0;
}
