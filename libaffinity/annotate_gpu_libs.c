// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * aff_discover_gpu_libs(): NVML, then ROCm SMI, on the live node only. Apart
 * from annotate_gpu.c so that discovery's own tests link without them.
 */
#include <stdbool.h>
#include <string.h>

#include "annotate_gpu.h"
#include "source_live.h"

static bool real_root(const char *root)
{
	return !root || !*root || !strcmp(root, "/");
}

int aff_discover_gpu_libs(hwloc_topology_t topo, const char *root,
			  struct aff_discover_report *rep)
{
	char note[sizeof(rep->note)] = "";
	int rc;

	/* The libraries describe the machine this runs on, not a recorded tree. */
	if (!real_root(root))
		return 0;
	rc = aff_discover_nvml(topo, note, sizeof(note));
	if (!rc)
		rc = aff_discover_rocm_smi(topo, note, sizeof(note));
	if (rep && *note)
		aff_gpu_note(rep->note, sizeof(rep->note), note);
	return rc;
}
