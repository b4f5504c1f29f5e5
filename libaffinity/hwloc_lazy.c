// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libhwloc, loaded on first use rather than at exec.
 *
 * A rank that the broker plans for (railbind run, aff_binding_get) never
 * calls hwloc, yet a linked libhwloc, with the libudev and libm it brings,
 * is a fifth of the page faults of starting railbind: on a node where a
 * fault costs tens of microseconds that put `railbind run` at 1.23x
 * taskset, 1.09x without it (bench/broker.sh). GNU ld has no lazy loading (Solaris's
 * -z lazyload), so each hwloc function libaffinity and its programs call is
 * defined here under its own name, hidden (never exported from
 * libaffinity.so, never interposing on hwloc's own calls): the first call
 * dlopen()s libhwloc, and each function is found once with dlsym(). Each
 * definition is checked against <hwloc.h>'s declaration by the compiler; a
 * function missing here is a link error in railbind, railbindd and
 * libaffinity.so, which link no libhwloc.
 *
 * RTLD_GLOBAL: hwloc's plugins (the libxml2 importer, PCI) find hwloc's
 * core in the global scope, as they do when it is linked.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <hwloc.h>
#include <hwloc/shmem.h>

#include "internal.h"

/* hwloc 2.x has kept this soname since 2.0.0. */
#define HWLOC_SONAME "libhwloc.so.15"
_Static_assert(HWLOC_API_VERSION >= 0x00020000 && HWLOC_API_VERSION < 0x00030000,
	       "hwloc headers of another major version than " HWLOC_SONAME);

static void *handle;
static char load_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
	void *h = dlopen(HWLOC_SONAME, RTLD_LAZY | RTLD_GLOBAL);
	unsigned (*version)(void) = NULL;

	if (!h) {
		snprintf(load_error, sizeof(load_error), "%s", dlerror());
		return;
	}
	/* The check hwloc asks of programs built against one version, run with another. */
	*(void **)&version = dlsym(h, "hwloc_get_api_version");
	if (!version || version() >> 16 != HWLOC_API_VERSION >> 16) {
		snprintf(load_error, sizeof(load_error), "%s is not hwloc %u.x",
			 HWLOC_SONAME, HWLOC_API_VERSION >> 16);
		dlclose(h);
		return;
	}
	/* Kept loaded: topologies and bitmaps may live until the process ends. */
	handle = h;
}

int aff_hwloc_require(const char *what, char *err, size_t errlen)
{
	pthread_once(&once, load);
	if (handle)
		return 0;
	return aff_seterr(err, errlen, ELIBACC, "%s: needs %s, which cannot be loaded: %s",
			  what, HWLOC_SONAME, load_error);
}

/*
 * @name in libhwloc, kept in *@slot. A call with no way to report a failure
 * ends the process as the dynamic linker does when a linked library or its
 * symbol is missing, which is what this replaces.
 */
static void *resolve(void *_Atomic *slot, const char *name)
{
	void *f = atomic_load_explicit(slot, memory_order_acquire);

	if (f)
		return f;
	pthread_once(&once, load);
	f = handle ? dlsym(handle, name) : NULL;
	if (!f) {
		fprintf(stderr, "%s: error while loading shared libraries: %s%s%s\n",
			program_invocation_short_name, handle ? HWLOC_SONAME : load_error,
			handle ? ": undefined symbol: " : "", handle ? name : "");
		_exit(127);
	}
	atomic_store_explicit(slot, f, memory_order_release);
	return f;
}

/*
 * Each function under its own name, by the number of its parameters (R: a
 * result, V: none). dlsym's void * to a function pointer: POSIX guarantees
 * it works.
 */
#define R0(ret, name) \
	ret name(void) \
	{ \
		static void *_Atomic fn; \
		__typeof__(name) *f; \
		*(void **)&f = resolve(&fn, #name); \
		return f(); \
	}
#define R1(ret, name, A) \
	ret name(A a) \
	{ \
		static void *_Atomic fn; \
		__typeof__(name) *f; \
		*(void **)&f = resolve(&fn, #name); \
		return f(a); \
	}
#define R2(ret, name, A, B) \
	ret name(A a, B b) \
	{ \
		static void *_Atomic fn; \
		__typeof__(name) *f; \
		*(void **)&f = resolve(&fn, #name); \
		return f(a, b); \
	}
#define R3(ret, name, A, B, C) \
	ret name(A a, B b, C c) \
	{ \
		static void *_Atomic fn; \
		__typeof__(name) *f; \
		*(void **)&f = resolve(&fn, #name); \
		return f(a, b, c); \
	}
#define R4(ret, name, A, B, C, D) \
	ret name(A a, B b, C c, D d) \
	{ \
		static void *_Atomic fn; \
		__typeof__(name) *f; \
		*(void **)&f = resolve(&fn, #name); \
		return f(a, b, c, d); \
	}
#define R6(ret, name, A, B, C, D, E, F) \
	ret name(A a, B b, C c, D d, E e, F g) \
	{ \
		static void *_Atomic fn; \
		__typeof__(name) *f; \
		*(void **)&f = resolve(&fn, #name); \
		return f(a, b, c, d, e, g); \
	}
#define V1(name, A) \
	void name(A a) \
	{ \
		static void *_Atomic fn; \
		__typeof__(name) *f; \
		*(void **)&f = resolve(&fn, #name); \
		f(a); \
	}
#define V2(name, A, B) \
	void name(A a, B b) \
	{ \
		static void *_Atomic fn; \
		__typeof__(name) *f; \
		*(void **)&f = resolve(&fn, #name); \
		f(a, b); \
	}

R0(hwloc_bitmap_t, hwloc_bitmap_alloc)
V1(hwloc_bitmap_free, hwloc_bitmap_t)
R1(hwloc_bitmap_t, hwloc_bitmap_dup, hwloc_const_bitmap_t)
R2(int, hwloc_bitmap_copy, hwloc_bitmap_t, hwloc_const_bitmap_t)
V1(hwloc_bitmap_zero, hwloc_bitmap_t)
R2(int, hwloc_bitmap_only, hwloc_bitmap_t, unsigned)
R2(int, hwloc_bitmap_set, hwloc_bitmap_t, unsigned)
R3(int, hwloc_bitmap_set_range, hwloc_bitmap_t, unsigned, int)
R2(int, hwloc_bitmap_clr, hwloc_bitmap_t, unsigned)
R2(int, hwloc_bitmap_isset, hwloc_const_bitmap_t, unsigned)
R1(int, hwloc_bitmap_iszero, hwloc_const_bitmap_t)
R1(int, hwloc_bitmap_first, hwloc_const_bitmap_t)
R2(int, hwloc_bitmap_next, hwloc_const_bitmap_t, int)
R1(int, hwloc_bitmap_last, hwloc_const_bitmap_t)
R1(int, hwloc_bitmap_weight, hwloc_const_bitmap_t)
R2(unsigned long, hwloc_bitmap_to_ith_ulong, hwloc_const_bitmap_t, unsigned)
R3(int, hwloc_bitmap_or, hwloc_bitmap_t, hwloc_const_bitmap_t, hwloc_const_bitmap_t)
R3(int, hwloc_bitmap_and, hwloc_bitmap_t, hwloc_const_bitmap_t, hwloc_const_bitmap_t)
R3(int, hwloc_bitmap_andnot, hwloc_bitmap_t, hwloc_const_bitmap_t, hwloc_const_bitmap_t)
R2(int, hwloc_bitmap_isequal, hwloc_const_bitmap_t, hwloc_const_bitmap_t)
R2(int, hwloc_bitmap_isincluded, hwloc_const_bitmap_t, hwloc_const_bitmap_t)
R2(int, hwloc_bitmap_intersects, hwloc_const_bitmap_t, hwloc_const_bitmap_t)
R2(int, hwloc_bitmap_list_asprintf, char **, hwloc_const_bitmap_t)
R2(int, hwloc_bitmap_list_sscanf, hwloc_bitmap_t, const char *)
R1(int, hwloc_topology_init, hwloc_topology_t *)
R1(int, hwloc_topology_load, hwloc_topology_t)
V1(hwloc_topology_destroy, hwloc_topology_t)
R3(int, hwloc_topology_set_components, hwloc_topology_t, unsigned long, const char *)
R3(int, hwloc_topology_set_type_filter, hwloc_topology_t, hwloc_obj_type_t,
   enum hwloc_type_filter_e)
R2(int, hwloc_topology_set_io_types_filter, hwloc_topology_t, enum hwloc_type_filter_e)
R3(int, hwloc_topology_set_xmlbuffer, hwloc_topology_t, const char *, int)
R4(int, hwloc_topology_export_xmlbuffer, hwloc_topology_t, char **, int *, unsigned long)
V2(hwloc_free_xmlbuffer, hwloc_topology_t, char *)
R3(int, hwloc_shmem_topology_get_length, hwloc_topology_t, size_t *, unsigned long)
R6(int, hwloc_shmem_topology_write, hwloc_topology_t, int, hwloc_uint64_t, void *, size_t,
   unsigned long)
R6(int, hwloc_shmem_topology_adopt, hwloc_topology_t *, int, hwloc_uint64_t, void *, size_t,
   unsigned long)
R2(int, hwloc_get_type_depth, hwloc_topology_t, hwloc_obj_type_t)
R2(unsigned, hwloc_get_nbobjs_by_depth, hwloc_topology_t, int)
R3(hwloc_obj_t, hwloc_get_obj_by_depth, hwloc_topology_t, int, unsigned)
R3(int, hwloc_obj_add_info, hwloc_obj_t, const char *, const char *)
R3(int, hwloc_get_cpubind, hwloc_topology_t, hwloc_cpuset_t, int)
