// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The main loop: one epoll set owns every fd, a short list owns the timers.
 * Single-threaded on purpose: requests are answered from a cache in
 * microseconds, so a thread per client would only add locks.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "railbindd.h"

struct handler {
	sched_fd_fn fn;
	void *arg;
};

struct timer {
	unsigned int id;
	long long deadline;
	sched_timer_fn fn;
	void *arg;
};

static int epfd = -1;
static struct handler *handlers;
static size_t nhandlers;
static struct timer *timers;
static size_t ntimers, captimers;
static unsigned int next_timer_id;
static bool stop;

long long sched_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int sched_init(void)
{
	epfd = epoll_create1(EPOLL_CLOEXEC);
	return epfd < 0 ? -errno : 0;
}

void sched_fini(void)
{
	if (epfd >= 0)
		close(epfd);
	epfd = -1;
	free(handlers);
	handlers = NULL;
	nhandlers = 0;
	free(timers);
	timers = NULL;
	ntimers = captimers = 0;
}

int sched_add_fd(int fd, uint32_t events, sched_fd_fn fn, void *arg)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	if ((size_t)fd >= nhandlers) {
		size_t n = (size_t)fd * 2 + 16;
		struct handler *h = realloc(handlers, n * sizeof(*h));

		if (!h)
			return -ENOMEM;
		memset(h + nhandlers, 0, (n - nhandlers) * sizeof(*h));
		handlers = h;
		nhandlers = n;
	}
	assert(!handlers[fd].fn);	/* registering an fd twice is a bug */
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	handlers[fd].fn = fn;
	handlers[fd].arg = arg;
	return 0;
}

int sched_mod_fd(int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.fd = fd };

	return epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev) < 0 ? -errno : 0;
}

void sched_del_fd(int fd)
{
	if (fd < 0 || (size_t)fd >= nhandlers || !handlers[fd].fn)
		return;
	epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
	handlers[fd].fn = NULL;
	handlers[fd].arg = NULL;
}

unsigned int sched_add_timer(int ms, sched_timer_fn fn, void *arg)
{
	if (ntimers == captimers) {
		size_t n = captimers ? captimers * 2 : 8;
		struct timer *t = realloc(timers, n * sizeof(*t));

		if (!t)
			return 0;
		timers = t;
		captimers = n;
	}
	if (!++next_timer_id)
		next_timer_id = 1;
	timers[ntimers++] = (struct timer){ next_timer_id, sched_now_ms() + ms, fn, arg };
	return next_timer_id;
}

void sched_del_timer(unsigned int id)
{
	size_t i;

	for (i = 0; i < ntimers; i++)
		if (timers[i].id == id) {
			timers[i] = timers[--ntimers];
			return;
		}
}

static int next_timeout(void)
{
	long long now = sched_now_ms(), best = -1;
	size_t i;

	for (i = 0; i < ntimers; i++) {
		long long left = timers[i].deadline - now;

		if (left < 0)
			left = 0;
		if (best < 0 || left < best)
			best = left;
	}
	return best > 60000 ? 60000 : (int)best;
}

static void run_timers(void)
{
	long long now = sched_now_ms();
	size_t i = 0;

	/* A callback may add or delete timers: restart the scan after each. */
	while (i < ntimers) {
		if (timers[i].deadline <= now) {
			struct timer t = timers[i];

			timers[i] = timers[--ntimers];
			t.fn(t.arg);
			i = 0;
			continue;
		}
		i++;
	}
}

void sched_stop(void)
{
	stop = true;
}

int sched_loop(void)
{
	struct epoll_event ev[64];

	while (!stop) {
		int n = epoll_wait(epfd, ev, 64, next_timeout()), i;

		if (n < 0 && errno != EINTR)
			return -errno;
		for (i = 0; i < n; i++) {
			int fd = ev[i].data.fd;

			/* An earlier handler of this batch may have closed it. */
			if ((size_t)fd < nhandlers && handlers[fd].fn)
				handlers[fd].fn(fd, ev[i].events, handlers[fd].arg);
		}
		run_timers();
	}
	return 0;
}
