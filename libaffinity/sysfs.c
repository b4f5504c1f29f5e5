// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The files annotation reads, under the root it was given: ${root}/sys and
 * ${root}/proc of the live node or of a recorded tree.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "annotate.h"
#include "internal.h"

/* ${root}/<fmt...>; -ENAMETOOLONG rather than a silently truncated path. */
int aff_sysfs_path(const struct annotator *an, char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (an->rootlen >= len)
		return -ENAMETOOLONG;
	memcpy(buf, an->root, an->rootlen);
	va_start(ap, fmt);
	n = vsnprintf(buf + an->rootlen, len - an->rootlen, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= len - an->rootlen)
		return -ENAMETOOLONG;
	return 0;
}

bool aff_sysfs_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Read a small text file, trailing whitespace stripped. */
int aff_sysfs_read(const char *path, char *buf, size_t len)
{
	return aff_read_text(path, buf, len, false);
}

bool aff_sysfs_rooted_exists(const struct annotator *an, const char *rel)
{
	char path[PATH_MAX];

	return aff_sysfs_path(an, path, sizeof(path), "%s", rel) == 0 && aff_sysfs_exists(path);
}

int aff_sysfs_rooted_read(const struct annotator *an, const char *rel, char *buf, size_t len)
{
	char path[PATH_MAX];
	int ret = aff_sysfs_path(an, path, sizeof(path), "%s", rel);

	return ret < 0 ? ret : aff_sysfs_read(path, buf, len);
}
