/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stand-in libraries' answer files (nvml_stub.c, rsmi_stub.c): one fact
 * per line, "WORD REST...", '#' starting a comment, and an "init ok" or
 * "init fail CODE" line saying what the library's start returns.
 */
#ifndef RAILBIND_TESTS_ANSWERS_H
#define RAILBIND_TESTS_ANSWERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The next fact of @f: its first word in @line (NUL-terminated), the rest in
 * *rest. An "init" line is consumed here: *init_rc gets 0 or its CODE.
 * 0 at the end of the file.
 */
static inline int answers_next(FILE *f, char *line, int len, char **rest, int *init_rc)
{
	while (fgets(line, len, f)) {
		line[strcspn(line, "#\n")] = '\0';
		*rest = line + strcspn(line, " \t");
		if (**rest)
			*(*rest)++ = '\0';
		if (strcmp(line, "init"))
			return 1;
		*init_rc = !strncmp(*rest, "fail", 4) ? atoi(*rest + 4) : 0;
	}
	return 0;
}

#endif
