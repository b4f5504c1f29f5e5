// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kmodfeed IN.xml ROOT OUT.xml: annotate a loaded topology the way live
 * discovery does, with ROOT as the filesystem root (a ROOT/dev/railbind
 * snapshot and no readable config space: an unprivileged user with the
 * module loaded), and write the result as a snapshot. Prints how many
 * ports' ACS stayed unreadable. For tests/audit/run.sh.
 */
#include <stdio.h>
#include <string.h>
#include <hwloc.h>

#include "source_live.h"

int main(int argc, char **argv)
{
	struct aff_discover_report rep;
	hwloc_topology_t topo;
	char err[256] = "";
	int rc;

	if (argc != 4) {
		fprintf(stderr, "usage: kmodfeed IN.xml ROOT OUT.xml\n");
		return 2;
	}
	if (hwloc_topology_init(&topo) < 0)
		return 1;
	hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (hwloc_topology_set_xml(topo, argv[1]) < 0 || hwloc_topology_load(topo) < 0) {
		fprintf(stderr, "kmodfeed: cannot load %s\n", argv[1]);
		hwloc_topology_destroy(topo);
		return 1;
	}
	rc = aff_discover_annotate(topo, argv[2], &rep);
	if (!rc)
		rc = aff_snapshot_write(topo, argv[3], err, sizeof(err));
	hwloc_topology_destroy(topo);
	if (rc < 0) {
		fprintf(stderr, "kmodfeed: %s\n", *err ? err : strerror(-rc));
		return 1;
	}
	printf("acs_unreadable=%u\n", rep.acs_unreadable);
	return 0;
}
