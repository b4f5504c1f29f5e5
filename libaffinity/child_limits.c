// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The limits a process that reads untrusted input runs under: hwloc 2.9.0
 * turns some tiny files into gigabytes of bitmaps for seconds (a PU without
 * os_index), and nothing proves no file can make it spin. A child with
 * these limits dies instead, and its parent reports that in one line.
 */
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "internal.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif
#if defined(AFF_ASAN) && defined(__has_include)
#if __has_include(<sanitizer/common_interface_defs.h>)
#include <sanitizer/common_interface_defs.h>
#define AFF_SANITIZER_DEATH 1
#endif
#endif

/* Bytes mapped now: the budget is on top (ASan's shadow alone is terabytes). */
static unsigned long long mapped_now(void)
{
	unsigned long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return 0;
	if (fscanf(f, "%llu", &pages) != 1)
		pages = 0;
	fclose(f);
	return pages * (unsigned long long)sysconf(_SC_PAGESIZE);
}

static rlim_t cpu_used(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return (rlim_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1);
}

/* A soft limit, at most the hard one (which stays: a worker lowers and raises it per file). */
static void cap(int resource, rlim_t soft)
{
	struct rlimit rl;

	if (getrlimit(resource, &rl) < 0)
		return;
	rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && soft > rl.rlim_max ? rl.rlim_max : soft;
	setrlimit(resource, &rl);
}

AFF_EXPORT void aff_child_limits(size_t len)
{
	/* Not SIGXFSZ: no file size limit is set here, and one ignored stays so. */
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS,
				     SIGTRAP, SIGXCPU };
	unsigned long long mapped = mapped_now();
	size_t i;

	/*
	 * A crash ends the process by its signal, for the parent to see: no
	 * handler of the caller's runs (a test harness's, or ASan's, whose
	 * report would reach the user as more lines and exit 1).
	 */
	for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		signal(fatal[i], SIG_DFL);
#ifdef AFF_SANITIZER_DEATH
	/*
	 * Nor a death callback of the caller's: under libFuzzer, a child that
	 * ASan ended (out of memory at the limit below) saved its input as the
	 * fuzzer's crash, although the fuzzer, its parent, lived on.
	 */
	__sanitizer_set_death_callback(NULL);
#endif

	/* Valgrind keeps its shadow memory in the process: its runs are tests. */
	if (mapped && !RUNNING_ON_VALGRIND)
		cap(RLIMIT_AS, (rlim_t)(mapped + AFF_CHILD_MEM_BASE + AFF_CHILD_MEM_PER_BYTE * len));
	/* Past it, SIGXCPU ends the process. */
	cap(RLIMIT_CPU, cpu_used() + AFF_CHILD_CPU_SECONDS(len));
}
