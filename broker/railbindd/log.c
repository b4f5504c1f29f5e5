// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbindd's log: in the foreground one "railbindd: " line on stderr each,
 * else syslog. Informational lines only in the foreground or with -d, debug
 * lines with -dd.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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

void rbd_log(int prio, const char *fmt, ...)
{
	va_list ap;

	if (prio == LOG_DEBUG && debug < 2)
		return;
	if (prio == LOG_INFO && !debug && !foreground)
		return;
	va_start(ap, fmt);
	if (foreground)
		line(fmt, ap);
	else
		vsyslog(prio, fmt, ap);
	va_end(ap);
}
