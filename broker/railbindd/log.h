/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * railbindd's one log function, in a module of its own: every other module
 * logs through it, and it depends on none of them.
 */
#ifndef RAILBINDD_LOG_H
#define RAILBINDD_LOG_H

#include <stdbool.h>
#include <syslog.h>

/* From the command line: stderr in the foreground, else syslog; -d raises the level. */
void rbd_log_init(bool foreground, int debug);
/* A syslog priority and one line (no newline). */
void rbd_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
