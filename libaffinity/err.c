// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one-line error text every libaffinity function leaves in its caller's
 * buffer. A file of its own so that parts tested without a context
 * (discover, the snapshot writer) link it alone.
 */
#include <stdarg.h>
#include <stdio.h>

#include "internal.h"

int aff_seterr(char *err, size_t errlen, int errnum, const char *format, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, format);
		vsnprintf(err, errlen, format, ap);
		va_end(ap);
	}
	return -errnum;
}
