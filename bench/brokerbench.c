// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * brokerbench: N concurrent clients, each on its own connection, asking
 * railbindd for rank plans (no lease) back to back for S seconds. Prints
 * one line: requests/s, p50 and p99 latency, the broker's peak RSS.
 * Usage: brokerbench SOCKET BROKER_PID [CLIENTS [SECONDS [RANKS]]]
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

struct worker {
	pthread_t t;
	int id;
	double *lat;		/* microseconds */
	size_t n, cap;
	int failed;
};

static const char *sock_path;
static int nranks = 8;
static double stop_at;
static volatile int go;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *run(void *arg)
{
	struct worker *w = arg;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char req[128], buf[65536];
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), k = 0;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		w->failed = 1;
		return NULL;
	}
	while (!go)
		usleep(100);
	while (now() < stop_at) {
		int len = snprintf(req, sizeof(req),
				   "{\"v\":1,\"op\":\"plan\",\"rank\":%d,\"lease\":\"none\"}\n",
				   (w->id + k++) % nranks);
		double t0 = now();
		size_t got = 0;

		if (write(fd, req, (size_t)len) != len) {
			w->failed = 1;
			break;
		}
		for (;;) {
			ssize_t n = read(fd, buf + got, sizeof(buf) - got - 1);

			if (n <= 0) {
				w->failed = 1;
				goto out;
			}
			got += (size_t)n;
			if (buf[got - 1] == '\n')
				break;
		}
		buf[got] = '\0';
		if (!strstr(buf, "\"ok\":true")) {
			w->failed = 1;
			break;
		}
		if (w->n == w->cap) {
			w->cap = w->cap ? w->cap * 2 : 4096;
			w->lat = realloc(w->lat, w->cap * sizeof(double));
			if (!w->lat)
				abort();
		}
		w->lat[w->n++] = (now() - t0) * 1e6;
	}
out:
	close(fd);
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static long peak_rss_kib(const char *pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

int main(int argc, char **argv)
{
	int clients = argc > 3 ? atoi(argv[3]) : 64, i, failed = 0;
	double secs = argc > 4 ? atof(argv[4]) : 3.0, t0;
	struct worker *w;
	double *all;
	size_t total = 0, k = 0;

	if (argc < 3 || clients <= 0 || secs <= 0) {
		fprintf(stderr, "usage: brokerbench SOCKET BROKER_PID [CLIENTS [SECONDS [RANKS]]]\n");
		return 2;
	}
	sock_path = argv[1];
	if (argc > 5)
		nranks = atoi(argv[5]);
	w = calloc((size_t)clients, sizeof(*w));
	if (!w)
		return 1;
	stop_at = now() + 3600;
	for (i = 0; i < clients; i++) {
		w[i].id = i;
		pthread_create(&w[i].t, NULL, run, &w[i]);
	}
	usleep(200000);	/* every client connected before the clock starts */
	t0 = now();
	stop_at = t0 + secs;
	go = 1;
	for (i = 0; i < clients; i++) {
		pthread_join(w[i].t, NULL);
		total += w[i].n;
		failed += w[i].failed;
	}
	all = malloc((total ? total : 1) * sizeof(double));
	for (i = 0; i < clients; i++) {
		memcpy(all + k, w[i].lat, w[i].n * sizeof(double));
		k += w[i].n;
		free(w[i].lat);
	}
	qsort(all, total, sizeof(double), cmp);
	printf("clients %d requests %zu failed %d rate %.0f/s p50 %.0f us p99 %.0f us rss %ld KiB\n",
	       clients, total, failed, (double)total / (now() - t0),
	       total ? all[total / 2] : 0, total ? all[total * 99 / 100] : 0,
	       peak_rss_kib(argv[2]));
	free(all);
	free(w);
	return failed ? 1 : 0;
}
