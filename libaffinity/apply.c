// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Binding the calling process to a rank's plan. Raw syscalls rather than
 * hwloc_set_cpubind()/hwloc_set_membind(): those need a loaded topology of
 * this host (milliseconds), while a rank's launcher must cost no more than
 * taskset; the calls made are the ones hwloc's Linux backend makes.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hwloc.h>
#include <linux/mempolicy.h>
#include <sys/syscall.h>

#include "internal.h"

#ifndef MPOL_PREFERRED_MANY
#define MPOL_PREFERRED_MANY 5
#endif

/* Every thread of this process, as hwloc's HWLOC_CPUBIND_PROCESS does. */
static int set_cpus(hwloc_const_bitmap_t set)
{
	int last = hwloc_bitmap_last(set), i, rc = 0;
	size_t size;
	cpu_set_t *mask;
	struct dirent *e;
	DIR *d;

	if (last < 0)
		return -EXDEV;
	mask = CPU_ALLOC(last + 1);
	if (!mask)
		return -ENOMEM;
	size = CPU_ALLOC_SIZE(last + 1);
	CPU_ZERO_S(size, mask);
	hwloc_bitmap_foreach_begin(i, set)
		CPU_SET_S(i, size, mask);
	hwloc_bitmap_foreach_end();
	d = opendir("/proc/self/task");
	if (!d) {
		rc = sched_setaffinity(0, size, mask) ? -errno : 0;
	} else {
		while ((e = readdir(d)) && !rc) {
			pid_t tid = (pid_t)atoi(e->d_name);

			/* A thread that exited meanwhile is no failure. */
			if (tid > 0 && sched_setaffinity(tid, size, mask) && errno != ESRCH)
				rc = -errno;
		}
		closedir(d);
	}
	CPU_FREE(mask);
	return rc == -EINVAL ? -EXDEV : rc;
}

static int set_mems(hwloc_const_bitmap_t nodes, int bind)
{
	unsigned long mask[16] = { 0 };	/* 1024 nodes, the kernel's maximum */
	int i, first = hwloc_bitmap_first(nodes), rc;

	if (first < 0 || hwloc_bitmap_last(nodes) >= 1024)
		return -EXDEV;
	hwloc_bitmap_foreach_begin(i, nodes)
		mask[i / (8 * sizeof(long))] |= 1ul << (i % (8 * sizeof(long)));
	hwloc_bitmap_foreach_end();
	if (bind) {
		rc = (int)syscall(SYS_set_mempolicy, MPOL_BIND, mask, 1025);
	} else if (hwloc_bitmap_weight(nodes) > 1) {
		rc = (int)syscall(SYS_set_mempolicy, MPOL_PREFERRED_MANY, mask, 1025);
		if (rc && errno == EINVAL) {	/* before Linux 5.15: the first */
			memset(mask, 0, sizeof(mask));
			mask[first / (8 * sizeof(long))] = 1ul << (first % (8 * sizeof(long)));
			rc = (int)syscall(SYS_set_mempolicy, MPOL_PREFERRED, mask, 1025);
		}
	} else {
		rc = (int)syscall(SYS_set_mempolicy, MPOL_PREFERRED, mask, 1025);
	}
	if (rc)
		return errno == EINVAL ? -EXDEV : -errno;
	return 0;
}

AFF_EXPORT int aff_binding_apply(const struct aff_binding *b, unsigned long flags)
{
	const char *cpus = aff_binding_cpus(b), *mems = aff_binding_mems(b);
	const char *const *env;
	hwloc_bitmap_t set;
	int rc = 0;

	if (!flags)
		flags = AFF_APPLY_CPUS | AFF_APPLY_MEMS | AFF_APPLY_ENV;
	set = hwloc_bitmap_alloc();
	if (!set)
		return -ENOMEM;
	if ((flags & AFF_APPLY_CPUS) && cpus) {
		rc = hwloc_bitmap_list_sscanf(set, cpus) < 0 ? -EINVAL : set_cpus(set);
	}
	if (!rc && (flags & AFF_APPLY_MEMS) && mems) {
		rc = hwloc_bitmap_list_sscanf(set, mems) < 0 ? -EINVAL :
			set_mems(set, !strcmp(aff_binding_mem_policy(b), "bind"));
	}
	hwloc_bitmap_free(set);
	for (env = aff_binding_env(b); !rc && (flags & AFF_APPLY_ENV) && *env; env++) {
		const char *eq = strchr(*env, '=');
		char name[128];

		if (!eq || (size_t)(eq - *env) >= sizeof(name))
			continue;
		memcpy(name, *env, (size_t)(eq - *env));
		name[eq - *env] = '\0';
		if (setenv(name, eq + 1, 1))
			rc = -errno;
	}
	return rc;
}

AFF_EXPORT int aff_binding_exec(const struct aff_binding *b, unsigned long flags,
				char *const argv[])
{
	int rc = aff_binding_apply(b, flags);

	if (rc < 0)
		return rc;
	execvp(argv[0], argv);
	return -errno;
}
