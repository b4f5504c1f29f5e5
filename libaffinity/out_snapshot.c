// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Snapshot writer: the topology as hwloc v2 XML, replaced atomically (fileio.c) so a
 * reader (or a fleet collector) never sees half a file, even if we crash or the disk
 * fills.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <hwloc.h>
#include <hwloc/export.h>

#include "internal.h"
#include "source_live.h"

int aff_snapshot_write(hwloc_topology_t topo, const char *path, char *err, size_t errlen)
{
	char *xml;
	int len, ret;

	if (!topo || !path || !*path) {
		aff_seterr(err, errlen, 0, "snapshot: no topology or no output path");
		return -EINVAL;
	}
	errno = 0;
	if (hwloc_topology_export_xmlbuffer(topo, &xml, &len, 0) < 0) {
		ret = errno ? -errno : -EIO;
		aff_seterr(err, errlen, 0, "snapshot: exporting the topology as XML: %s",
			strerror(-ret));
		return ret;
	}
	/* hwloc counts the terminating NUL in len. */
	if (len > 0 && xml[len - 1] == '\0')
		len--;
	ret = aff_write_atomic("snapshot", path, xml, (size_t)len, err, errlen);
	hwloc_free_xmlbuffer(topo, xml);
	return ret;
}
