// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbindd's log: in the foreground one "railbindd: " line on stderr each,
 * else syslog. Informational lines only in the foreground or with -d, debug
 * lines with -dd.
 *
 * What a user causes (a lease taken, a lease ended) is logged within that
 * user's budget (rbd_log_user()): journald drops a service's lines beyond
 * its own budget, whichever they are, so one user churning leases would
 * otherwise push every other message of the broker out. Each uid may have
 * LOG_USER_RATE lines a second, LOG_USER_BURST saved up; the rest are
 * counted and summed up in one "uid N: M lines suppressed" line once the
 * user is quiet again (or every LOG_USER_SUMMARY_MS while it is not).
 * Errors are never suppressed, and the broker's own lines (rbd_log()) are
 * no user's: another user's noise cannot cost them anything.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "log.h"

static bool foreground;
static int debug;

void rbd_log_init(bool fg, int level)
{
	foreground = fg;
	debug = level;
}

/*
 * One write a line (stderr has no buffer): lines from railbindd and from
 * what shares its stderr (a journal stream, a test's log) never interleave.
 */
static void line(const char *fmt, va_list ap)
{
	char buf[1024], *big = NULL;
	const char *out = buf;
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n >= (int)sizeof(buf) && vasprintf(&big, fmt, again) >= 0)
		out = big;
	va_end(again);
	fprintf(stderr, "railbindd: %s\n", out);
	free(big);
}

static bool shown(int prio)
{
	return !(prio == LOG_DEBUG && debug < 2) && !(prio == LOG_INFO && !debug && !foreground);
}

static void vlog(int prio, const char *fmt, va_list ap)
{
	if (foreground)
		line(fmt, ap);
	else
		vsyslog(prio, fmt, ap);
}

void rbd_log(int prio, const char *fmt, ...)
{
	va_list ap;

	if (!shown(prio))
		return;
	va_start(ap, fmt);
	vlog(prio, fmt, ap);
	va_end(ap);
}

#define LOG_USER_RATE 20
#define LOG_USER_BURST 100
#define LOG_USER_SUMMARY_MS 60000
/* Users with a budget in use at once; a quiet one gives its slot up. */
#define LOG_USERS 64

struct user_budget {
	uid_t uid;
	bool used;
	double tokens;
	long long at;			/* when tokens was last brought up to date */
	unsigned long suppressed;
	long long since;		/* the first line suppressed since the last summary */
};

static struct user_budget users[LOG_USERS];

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void refill(struct user_budget *u, long long now)
{
	u->tokens += (double)(now - u->at) * LOG_USER_RATE / 1000.0;
	if (u->tokens > LOG_USER_BURST)
		u->tokens = LOG_USER_BURST;
	u->at = now;
}

static void summary(struct user_budget *u, long long now)
{
	rbd_log(LOG_NOTICE, "uid %u: %lu lines suppressed over %lld s (beyond %d a second)",
		(unsigned)u->uid, u->suppressed, (now - u->since + 999) / 1000, LOG_USER_RATE);
	u->suppressed = 0;
}

/* @uid's budget; a quiet user's slot is taken when all are in use. */
static struct user_budget *budget(uid_t uid, long long now)
{
	struct user_budget *u, *free_slot = NULL, *quiet = NULL;

	for (u = users; u < users + LOG_USERS; u++) {
		if (u->used && u->uid == uid)
			return u;
		if (!u->used && !free_slot)
			free_slot = u;
		if (u->used && (!quiet || u->at < quiet->at))
			quiet = u;
	}
	u = free_slot ? free_slot : quiet;
	if (u->used && u->suppressed)
		summary(u, now);
	u->used = true;
	u->uid = uid;
	u->tokens = LOG_USER_BURST;
	u->at = now;
	u->suppressed = 0;
	return u;
}

void rbd_log_user(uid_t uid, int prio, const char *fmt, ...)
{
	long long now = now_ms();
	struct user_budget *u;
	va_list ap;

	if (!shown(prio))
		return;
	if (prio > LOG_ERR) {
		u = budget(uid, now);
		refill(u, now);
		if (u->tokens < 1.0) {
			if (!u->suppressed++)
				u->since = now;
			return;
		}
		u->tokens -= 1.0;
	}
	va_start(ap, fmt);
	vlog(prio, fmt, ap);
	va_end(ap);
}

void rbd_log_flush(void)
{
	long long now = now_ms();
	struct user_budget *u;

	for (u = users; u < users + LOG_USERS; u++) {
		if (!u->used || !u->suppressed)
			continue;
		refill(u, now);
		/* Quiet again (its budget back whole), or a long flood: say it now. */
		if (u->tokens >= LOG_USER_BURST || now - u->since >= LOG_USER_SUMMARY_MS)
			summary(u, now);
	}
}
