// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Binding the calling process to a rank's plan. Raw syscalls rather than
 * hwloc_set_cpubind()/hwloc_set_membind(): those need a loaded topology of
 * this host (milliseconds), while a rank's launcher must cost no more than
 * taskset; the calls made are the ones hwloc's Linux backend makes. No
 * hwloc at all, not even its bitmaps: a rank the broker planned for then
 * never loads libhwloc (hwloc_lazy.c).
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/mempolicy.h>
#include <sys/syscall.h>

#include "internal.h"
#include "model.h"

#ifndef MPOL_PREFERRED_MANY
#define MPOL_PREFERRED_MANY 5
#endif

static int highest(unsigned lo, unsigned hi, void *last)
{
	(void)lo;
	if (hi > *(unsigned *)last)
		*(unsigned *)last = hi;
	return 0;
}

struct cpu_mask {
	cpu_set_t *set;
	size_t size;
};

static int add_cpus(unsigned lo, unsigned hi, void *data)
{
	struct cpu_mask *m = data;

	for (; lo <= hi; lo++)
		CPU_SET_S(lo, m->size, m->set);
	return 0;
}

/* Every thread of this process, as hwloc's HWLOC_CPUBIND_PROCESS does. */
static int set_cpus(const char *cpus)
{
	struct cpu_mask m;
	unsigned last = 0;
	struct dirent *e;
	int rc = 0;
	DIR *d;

	if (!*cpus)
		return -EXDEV;
	if (aff_cpulist_walk(cpus, highest, &last) < 0)
		return -EINVAL;
	m.set = CPU_ALLOC(last + 1);
	if (!m.set)
		return -ENOMEM;
	m.size = CPU_ALLOC_SIZE(last + 1);
	CPU_ZERO_S(m.size, m.set);
	aff_cpulist_walk(cpus, add_cpus, &m);
	d = opendir("/proc/self/task");
	if (!d) {
		rc = sched_setaffinity(0, m.size, m.set) ? -errno : 0;
	} else {
		while ((e = readdir(d)) && !rc) {
			pid_t tid = (pid_t)atoi(e->d_name);

			/* A thread that exited meanwhile is no failure. */
			if (tid > 0 && sched_setaffinity(tid, m.size, m.set) && errno != ESRCH)
				rc = -errno;
		}
		closedir(d);
	}
	CPU_FREE(m.set);
	return rc == -EINVAL ? -EXDEV : rc;
}

#define NODE_BITS (8 * sizeof(unsigned long))

/* 1024 nodes, the kernel's maximum */
#define NODE_WORDS (1024 / NODE_BITS)

static int add_nodes(unsigned lo, unsigned hi, void *bits)
{
	unsigned long *mask = bits;

	if (hi >= NODE_WORDS * NODE_BITS)
		return -EXDEV;
	for (; lo <= hi; lo++)
		mask[lo / NODE_BITS] |= 1ul << (lo % NODE_BITS);
	return 0;
}

static int set_mems(const char *mems, int bind)
{
	unsigned long mask[NODE_WORDS] = { 0 };
	unsigned first = 0, w, weight = 0;
	int rc;

	if (!*mems)
		return -EXDEV;
	rc = aff_cpulist_walk(mems, add_nodes, mask);
	if (rc < 0)
		return rc;
	for (w = 0; w < NODE_WORDS; w++)
		weight += (unsigned)__builtin_popcountl(mask[w]);
	while (!(mask[first / NODE_BITS] & (1ul << (first % NODE_BITS))))
		first++;
	if (bind) {
		rc = (int)syscall(SYS_set_mempolicy, MPOL_BIND, mask, 1025);
	} else if (weight > 1) {
		rc = (int)syscall(SYS_set_mempolicy, MPOL_PREFERRED_MANY, mask, 1025);
		if (rc && errno == EINVAL) {	/* before Linux 5.15: the first */
			memset(mask, 0, sizeof(mask));
			mask[first / NODE_BITS] = 1ul << (first % NODE_BITS);
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
	int rc = 0;

	if (!flags)
		flags = AFF_APPLY_CPUS | AFF_APPLY_MEMS | AFF_APPLY_ENV;
	if ((flags & AFF_APPLY_CPUS) && cpus)
		rc = set_cpus(cpus);
	if (!rc && (flags & AFF_APPLY_MEMS) && mems)
		rc = set_mems(mems, !strcmp(aff_binding_mem_policy(b), "bind"));
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
