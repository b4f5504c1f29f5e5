// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * alt: time two commands run alternately, for a ratio that survives a busy
 * machine. Runs come in pairs, A then B, then B then A, so drift in the
 * machine's load and any cache warmed by the one before fall on both. The
 * ratio reported is the median of the per-pair ratios, not a ratio of
 * medians, for the same reason.
 *
 *   alt [-t SECONDS] [-m MIN] [-M MAX] -- A [ARGS...] -- B [ARGS...]
 *
 * Pairs are run until SECONDS of wall time are spent (default 2), at least
 * MIN (5) and at most MAX (51). Each command's stdout and stderr go to
 * /dev/null; either failing stops alt with status 1.
 *
 * Output, one line, seconds:
 *   pairs=P a_wall=.. b_wall=.. ratio_wall=.. a_cpu=.. b_cpu=.. ratio_cpu=..
 * where *_wall / *_cpu are medians and cpu is the child's user+system time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>

struct sample {
	double wall, cpu;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double tv(struct timeval t)
{
	return (double)t.tv_sec + t.tv_usec / 1e6;
}

static int run(char **argv, struct sample *s)
{
	struct rusage ru;
	double t0 = now();
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return -errno;
	s->wall = now() - t0;
	s->cpu = tv(ru.ru_utime) + tv(ru.ru_stime);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "alt: %s failed (status %d)\n", argv[0],
			WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -1;
	}
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void usage(void)
{
	fputs("usage: alt [-t SECONDS] [-m MIN] [-M MAX] -- A [ARGS...] -- B [ARGS...]\n",
	      stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	double budget = 2.0, t0;
	int min = 5, max = 51, n, opt, i;
	char **a, **b;
	double *v[6];

	while ((opt = getopt(argc, argv, "t:m:M:")) != -1) {
		switch (opt) {
		case 't':
			budget = atof(optarg);
			break;
		case 'm':
			min = atoi(optarg);
			break;
		case 'M':
			max = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	/* getopt consumed the first "--"; B starts after the next one. */
	a = argv + optind;
	for (i = optind; i < argc && strcmp(argv[i], "--"); i++)
		;
	if (i == optind || i >= argc - 1 || min < 1 || max < min)
		usage();
	argv[i] = NULL;
	b = argv + i + 1;

	for (i = 0; i < 6; i++) {
		v[i] = calloc((size_t)max, sizeof(double));
		if (!v[i])
			return 1;
	}
	t0 = now();
	for (n = 0; n < max && (n < min || now() - t0 < budget); n++) {
		struct sample sa, sb;
		int rc = n % 2 ? run(b, &sb) || run(a, &sa) :
				 run(a, &sa) || run(b, &sb);

		if (rc)
			return 1;
		v[0][n] = sa.wall;
		v[1][n] = sb.wall;
		v[2][n] = sa.wall / sb.wall;
		v[3][n] = sa.cpu;
		v[4][n] = sb.cpu;
		/* A child under the clock tick reads 0 CPU: no ratio then. */
		v[5][n] = sb.cpu > 0 ? sa.cpu / sb.cpu : 0;
	}
	printf("pairs=%d a_wall=%.6f b_wall=%.6f ratio_wall=%.3f a_cpu=%.6f b_cpu=%.6f ratio_cpu=%.3f\n",
	       n, median(v[0], n), median(v[1], n), median(v[2], n),
	       median(v[3], n), median(v[4], n), median(v[5], n));
	for (i = 0; i < 6; i++)
		free(v[i]);
	return 0;
}
