// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * aff_read_file(): how every file railbind reads is read. Any input may be a
 * FIFO that never delivers (open and read would block for ever), a device
 * such as /dev/zero that never ends, a directory, or simply huge; the
 * command or the daemon must say so in one line and go on. So: a regular
 * file only, opened without blocking, within a size limit, read once.
 *
 * aff_write_atomic(): how every file railbind writes is written (snapshots,
 * the NCCL topology, the broker's state): whole or not at all.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* What a file that is not a regular one is, for the message. */
static const char *kind_of(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

static int refuse(const char *path, mode_t mode, char *err, size_t errlen)
{
	int e = S_ISDIR(mode) ? EISDIR : EINVAL;

	return aff_seterr(err, errlen, e, "%s: %s, expected a regular file", path,
			  kind_of(mode));
}

static int too_big(const char *path, size_t limit, char *err, size_t errlen)
{
	return aff_seterr(err, errlen, EFBIG,
			  "%s: larger than %zu bytes (max-input-size in railbind.conf)",
			  path, limit);
}

/* All of fd, at most limit bytes; a file growing past it is refused too. */
static int slurp(int fd, const char *path, size_t size, size_t limit, char **out,
		 size_t *len, char *err, size_t errlen)
{
	size_t cap = size < limit ? size + 1 : limit + 1, n = 0;
	char *buf = malloc(cap + 1), *p;

	if (!buf)
		return aff_seterr(err, errlen, ENOMEM, "%s: out of memory", path);
	for (;;) {
		ssize_t r;

		if (n == cap) {
			/* /proc and sysfs files say 0 bytes and have some. */
			if (cap > limit) {
				free(buf);
				return too_big(path, limit, err, errlen);
			}
			cap = cap > limit / 2 ? limit + 1 : cap * 2 + 4096;
			p = realloc(buf, cap + 1);
			if (!p) {
				free(buf);
				return aff_seterr(err, errlen, ENOMEM, "%s: out of memory", path);
			}
			buf = p;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(buf);
			return aff_seterr(err, errlen, e, "%s: %s", path, strerror(e));
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	if (n > limit) {
		free(buf);
		return too_big(path, limit, err, errlen);
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

static int read_file(const char *path, bool nofollow, size_t limit, char **out,
		     size_t *len, char *err, size_t errlen)
{
	struct stat st;
	int fd, rc;

	*out = NULL;
	*len = 0;
	if (!limit)
		limit = AFF_INPUT_LIMIT;
	/*
	 * Look before opening: opening a device can do things (a tape rewinds,
	 * a watchdog arms). The fstat below is what decides; a FIFO swapped in
	 * between is opened without blocking and refused there.
	 */
	if ((nofollow ? lstat(path, &st) : stat(path, &st)) < 0)
		return aff_seterr(err, errlen, errno, "%s: %s", path, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return aff_seterr(err, errlen, ELOOP, "%s: a symbolic link, expected a regular file",
				  path);
	if (!S_ISREG(st.st_mode))
		return refuse(path, st.st_mode, err, errlen);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (nofollow ? O_NOFOLLOW : 0));
	if (fd < 0)
		return aff_seterr(err, errlen, errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		rc = aff_seterr(err, errlen, errno, "%s: %s", path, strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		rc = refuse(path, st.st_mode, err, errlen);
	} else if (st.st_size > 0 && (unsigned long long)st.st_size > limit) {
		rc = too_big(path, limit, err, errlen);
	} else {
		rc = slurp(fd, path, (size_t)st.st_size, limit, out, len, err, errlen);
	}
	close(fd);
	return rc;
}

AFF_EXPORT int aff_read_file(const char *path, size_t limit, char **out, size_t *len,
			     char *err, size_t errlen)
{
	return read_file(path, false, limit, out, len, err, errlen);
}

AFF_EXPORT int aff_read_state_file(const char *path, size_t limit, char **out, size_t *len,
				   char *err, size_t errlen)
{
	return read_file(path, true, limit, out, len, err, errlen);
}

AFF_EXPORT size_t aff_ctx_input_limit(const struct aff_ctx *ctx)
{
	return ctx && ctx->conf.max_input_size ? ctx->conf.max_input_size :
						 AFF_INPUT_LIMIT;
}

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

/* Up to @len bytes, or to the end of the file; the count, or -errno. */
ssize_t aff_read_upto(int fd, void *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

/*
 * A small text file (a sysfs or /proc attribute) into @buf, trailing blanks
 * cut; -errno, @buf an empty string then. Opened without blocking, so a FIFO
 * planted in a --root tree reads as empty instead of hanging the reader;
 * @nofollow refuses a symbolic link in the last component (-ELOOP).
 */
int aff_read_text(const char *path, char *buf, size_t len, bool nofollow)
{
	ssize_t got;
	int fd;

	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0));
	if (fd < 0)
		return -errno;
	got = aff_read_upto(fd, buf, len - 1);
	close(fd);
	if (got < 0)
		return (int)got;
	buf[got] = '\0';
	while (got && isspace((unsigned char)buf[got - 1]))
		buf[--got] = '\0';
	return 0;
}
