// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libmnl on first use. Netlink through libmnl: a few hundred lines of C
 * that only frame and walk messages, which is all a request needs, and what
 * ethtool and iproute2's dcb are built on; libnl's cache and object layers
 * would be unused weight here. dlopen()ed as libhwloc is (hwloc_lazy.c): a
 * rank that links libaffinity never loads it, and a node without it still
 * has the ioctls and sysfs.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#include "mnl_lazy.h"

#define MNL_SONAME "libmnl.so.0"

struct aff_mnl aff_mnl;
static bool loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
#define SYM(f) { (void **)&aff_mnl.f, "mnl_" #f }
	static const struct { void **slot; const char *name; } syms[] = {
		SYM(socket_open2), SYM(socket_get_fd), SYM(socket_bind), SYM(socket_get_portid),
		SYM(socket_sendto), SYM(socket_recvfrom), SYM(socket_close), SYM(cb_run),
		SYM(nlmsg_put_header), SYM(nlmsg_put_extra_header), SYM(attr_put_strz),
		SYM(attr_put_u32), SYM(attr_put_u8), SYM(attr_nest_start), SYM(attr_nest_end),
		SYM(attr_parse), SYM(attr_parse_nested), SYM(attr_get_type), SYM(attr_validate),
		SYM(attr_validate2), SYM(attr_get_u8), SYM(attr_get_u16),
		SYM(attr_get_payload_len), SYM(attr_get_payload), SYM(nlmsg_ok),
	};
#undef SYM
	void *h = dlopen(MNL_SONAME, RTLD_LAZY | RTLD_LOCAL);
	size_t i;

	if (!h)
		return;
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		*syms[i].slot = dlsym(h, syms[i].name);
		if (!*syms[i].slot) {
			dlclose(h);
			return;
		}
	}
	/* Kept loaded for the rest of the process: the pointers above point into it. */
	loaded = true;
}

bool aff_mnl_load(void)
{
	pthread_once(&once, load);
	return loaded;
}
