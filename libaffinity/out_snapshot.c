// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Snapshot writer: the topology as hwloc v2 XML, replaced atomically so a reader (or a
 * fleet collector) never sees half a file, even if we crash or the disk fills.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hwloc.h>
#include <hwloc/export.h>

#include "discover.h"
#include "internal.h"

AFF_EXPORT int aff_write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ENOSPC;	/* no progress: never loop on it */
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_stdout(const char *what, const char *buf, size_t len, char *err,
			size_t errlen)
{
	int ret;

	/* Flush what stdio already holds so our bytes land after it, not before. */
	fflush(stdout);
	ret = aff_write_all(STDOUT_FILENO, buf, len);
	if (ret < 0)
		aff_seterr(err, errlen, 0, "%s: writing to stdout: %s", what, strerror(-ret));
	return ret;
}

/* Make the rename itself durable; a filesystem without directory fsync is not an error. */
static int sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0 && errno != EINVAL && errno != EROFS)
		ret = -errno;
	close(fd);
	return ret;
}

static int write_file(const char *what, const char *path, const char *buf, size_t len,
		      char *err, size_t errlen)
{
	char *pathcopy, *dir, *tmp = NULL;
	const char *step;
	int fd = -1, ret;

	pathcopy = strdup(path);
	if (!pathcopy) {
		aff_seterr(err, errlen, 0, "%s: %s: %s", what, path, strerror(ENOMEM));
		return -ENOMEM;
	}
	dir = dirname(pathcopy);
	/* Same directory as the target, so rename() stays on one filesystem. */
	if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0) {
		tmp = NULL;
		ret = -ENOMEM;
		step = "allocating a temporary name";
		goto fail;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		free(tmp);
		tmp = NULL;
		step = "creating a temporary file";
		goto fail;
	}
	step = "writing";
	ret = aff_write_all(fd, buf, len);
	if (ret < 0)
		goto fail;
	/* mkostemp() creates 0600; a snapshot is meant to be read by other tools. */
	step = "setting the mode";
	if (fchmod(fd, 0644) < 0) {
		ret = -errno;
		goto fail;
	}
	step = "syncing";
	if (fsync(fd) < 0) {
		ret = -errno;
		goto fail;
	}
	step = "closing";
	ret = close(fd);
	fd = -1;
	if (ret < 0) {
		ret = -errno;
		goto fail;
	}
	step = "renaming the temporary file into place";
	if (rename(tmp, path) < 0) {
		ret = -errno;
		goto fail;
	}
	free(tmp);
	tmp = NULL;
	step = "syncing the directory";
	ret = sync_dir(dir);
	if (ret < 0)
		goto fail;
	free(pathcopy);
	return 0;

fail:
	aff_seterr(err, errlen, 0, "%s: %s: %s: %s", what, path, step, strerror(-ret));
	if (fd >= 0)
		close(fd);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	free(pathcopy);
	return ret;
}

AFF_EXPORT int aff_write_atomic(const char *what, const char *path, const char *buf, size_t len,
				char *err, size_t errlen)
{
	if (!strcmp(path, "-"))
		return write_stdout(what, buf, len, err, errlen);
	return write_file(what, path, buf, len, err, errlen);
}

int aff_snapshot_write(hwloc_topology_t topo, const char *path, char *err, size_t errlen)
{
	char *xml;
	int len, ret;

	if (!topo || !path || !*path) {
		aff_seterr(err, errlen, 0, "snapshot: no topology or no output path");
		return -EINVAL;
	}
	errno = 0;
	if (hwloc_topology_export_xmlbuffer(topo, &xml, &len, 0) < 0) {
		ret = errno ? -errno : -EIO;
		aff_seterr(err, errlen, 0, "snapshot: exporting the topology as XML: %s",
			strerror(-ret));
		return ret;
	}
	/* hwloc counts the terminating NUL in len. */
	if (len > 0 && xml[len - 1] == '\0')
		len--;
	ret = aff_write_atomic("snapshot", path, xml, (size_t)len, err, errlen);
	hwloc_free_xmlbuffer(topo, xml);
	return ret;
}
