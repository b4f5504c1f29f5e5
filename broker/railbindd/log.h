/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * railbindd's one log function, in a module of its own: every other module
 * logs through it, and it depends on none of them.
 */
#ifndef RAILBINDD_LOG_H
#define RAILBINDD_LOG_H

#include <stdbool.h>
#include <syslog.h>
#include <sys/types.h>

/* From the command line: stderr in the foreground, else syslog; -d raises the level. */
void rbd_log_init(bool foreground, int debug);
/* A syslog priority and one line (no newline). */
void rbd_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * A line @uid caused, within that uid's budget of lines a second (log.c);
 * the rest are counted, and rbd_log_flush() (called a few times a second)
 * says how many once the user is quiet again. Errors always pass.
 */
void rbd_log_user(uid_t uid, int prio, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void rbd_log_flush(void);

#endif
