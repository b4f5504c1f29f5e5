// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbindd's log: in the foreground one "railbindd: " line on stderr each,
 * else syslog. Informational lines only in the foreground or with -d, debug
 * lines with -dd.
 */
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

static bool foreground;
static int debug;

void rbd_log_init(bool fg, int level)
{
	foreground = fg;
	debug = level;
}

void rbd_log(int prio, const char *fmt, ...)
{
	va_list ap;

	if (prio == LOG_DEBUG && debug < 2)
		return;
	if (prio == LOG_INFO && !debug && !foreground)
		return;
	va_start(ap, fmt);
	if (foreground) {
		fprintf(stderr, "railbindd: ");
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	} else {
		vsyslog(prio, fmt, ap);
	}
	va_end(ap);
}
