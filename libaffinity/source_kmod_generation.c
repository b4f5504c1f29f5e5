// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * railbind.ko's generation from its sysfs attribute: what `railbind status`
 * and railbindd's status op report of the module, without its snapshot.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "affinity.h"
#include "internal.h"

AFF_EXPORT int aff_kmod_generation(const char *root, unsigned long long *gen)
{
	char path[4096], val[32], *end;
	int rc;

	if (snprintf(path, sizeof(path), "%s/sys/class/misc/railbind/generation",
		     root ? root : "") >= (int)sizeof(path))
		return -ENAMETOOLONG;
	/* Without blocking: under railbindd's --root, a planted FIFO is empty. */
	rc = aff_read_text(path, val, sizeof(val), false);
	if (rc < 0)
		return rc;
	errno = 0;
	*gen = strtoull(val, &end, 10);
	return !isdigit((unsigned char)val[0]) || *end || errno ? -EINVAL : 0;
}
