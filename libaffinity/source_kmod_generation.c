// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * railbind.ko's generation from its sysfs attribute: what `railbind status`
 * and railbindd's status op report of the module, without its snapshot.
 */
#include <errno.h>
#include <stdio.h>

#include "affinity.h"
#include "internal.h"

AFF_EXPORT int aff_kmod_generation(const char *root, unsigned long long *gen)
{
	char path[4096];
	FILE *f;
	int rc;

	if (snprintf(path, sizeof(path), "%s/sys/class/misc/railbind/generation",
		     root ? root : "") >= (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	rc = fscanf(f, "%llu", gen) == 1 ? 0 : -EINVAL;
	fclose(f);
	return rc;
}
