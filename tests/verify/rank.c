// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rank: a stand-in training rank for verify's tests and benchmark. It holds
 * the files it is told to open (the stand-in device nodes of a --root tree,
 * or real ones), sets its memory policy, touches anonymous memory, starts
 * idle threads, then writes its pid to the ready file and waits to be killed.
 *
 *	rank [--open PATH]... [--policy default|bind:N|preferred:N|interleave:LIST]
 *	     [--mem MIB] [--threads N] [--ready FILE]
 *
 * The policy is set with set_mempolicy(2) before the memory is touched, so the
 * pages land where the policy says (on a host with those nodes).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define MPOL_DEFAULT 0
#define MPOL_PREFERRED 1
#define MPOL_BIND 2
#define MPOL_INTERLEAVE 3

static void die(const char *what)
{
	fprintf(stderr, "rank: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* "0-1,3" into a node mask. */
static unsigned long nodemask(const char *s)
{
	unsigned long m = 0;
	char *end;

	while (*s) {
		long a = strtol(s, &end, 10), b = a;

		if (end == s || a < 0 || a > 63)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (; a <= b && a < 64; a++)
			m |= 1ul << a;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			break;
	}
	return m;
}

static void set_policy(const char *p)
{
	const char *colon = strchr(p, ':');
	unsigned long mask = colon ? nodemask(colon + 1) : 0;
	int mode;

	if (!strcmp(p, "default"))
		mode = MPOL_DEFAULT;
	else if (!strncmp(p, "bind:", 5))
		mode = MPOL_BIND;
	else if (!strncmp(p, "preferred:", 10))
		mode = MPOL_PREFERRED;
	else if (!strncmp(p, "interleave:", 11))
		mode = MPOL_INTERLEAVE;
	else {
		errno = EINVAL;
		die(p);
		return;
	}
	if (syscall(SYS_set_mempolicy, mode, mode == MPOL_DEFAULT ? NULL : &mask,
		    mode == MPOL_DEFAULT ? 0 : 64) < 0)
		die("set_mempolicy");
}

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *ready = NULL;
	long mib = 0, threads = 0, i;
	sigset_t none;
	char tmp[4096];
	FILE *f;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v) {
			fprintf(stderr, "rank: %s needs a value\n", a);
			return 2;
		}
		if (!strcmp(a, "--open")) {
			if (open(v, O_RDONLY | O_CLOEXEC) < 0)
				die(v);
		} else if (!strcmp(a, "--policy")) {
			set_policy(v);
		} else if (!strcmp(a, "--mem")) {
			mib = atol(v);
		} else if (!strcmp(a, "--threads")) {
			threads = atol(v);
		} else if (!strcmp(a, "--ready")) {
			ready = v;
		} else {
			fprintf(stderr, "rank: unknown option %s\n", a);
			return 2;
		}
		i++;
	}
	if (mib > 0) {
		size_t len = (size_t)mib << 20;
		char *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				 -1, 0);

		if (mem == MAP_FAILED)
			die("mmap");
		memset(mem, 1, len);
	}
	for (i = 0; i < threads; i++) {
		pthread_t t;

		if ((errno = pthread_create(&t, NULL, idle, NULL)))
			die("pthread_create");
	}
	if (ready) {
		snprintf(tmp, sizeof(tmp), "%s.tmp", ready);
		f = fopen(tmp, "w");
		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) || rename(tmp, ready))
			die(ready);
	}
	sigemptyset(&none);
	for (;;)
		sigsuspend(&none);
}
