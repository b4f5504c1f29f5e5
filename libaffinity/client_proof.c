// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The GPU nodes this process can open, sent with a plan request as proof
 * (SCM_RIGHTS, docs/PROTOCOL.md). With cgroup v2 the device filter is a
 * BPF program the broker cannot read back; the kernel ran it on each open
 * here, so an open descriptor is the node's own word that this process may
 * use that GPU. Where a cgroup v1 devices list applies the broker reads it
 * and nothing is opened (an NVIDIA node opened without persistence mode
 * initialises its GPU).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "internal.h"

/* Whether /proc/self/cgroup names a v1 devices cgroup other than the root. */
static bool v1_devices(void)
{
	char buf[16384], *line, *save = NULL;

	if (aff_read_text("/proc/self/cgroup", buf, sizeof(buf), false) < 0)
		return false;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, *p;
		size_t n;

		if (!c2)
			continue;
		*c2 = '\0';
		for (p = c1 + 1; *p; p += n + (p[n] == ',')) {
			n = strcspn(p, ",");
			if (n == 7 && !strncmp(p, "devices", 7))
				return strcmp(c2 + 1, "/") != 0;
		}
	}
	return false;
}

/* "nvidia3", "renderD128": @prefix then digits only (not nvidiactl, nvidia-uvm). */
static bool numbered(const char *name, const char *prefix)
{
	size_t n = strlen(prefix);

	if (strncmp(name, prefix, n) || !name[n])
		return false;
	return strspn(name + n, "0123456789") == strlen(name + n);
}

size_t aff_gpu_proof_open(int *fds, size_t max)
{
	static const struct {
		const char *dir, *prefix;
	} where[] = { { "/dev", "nvidia" }, { "/dev/dri", "renderD" } };
	size_t i, n = 0;

	if (v1_devices())
		return 0;
	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		DIR *d = opendir(where[i].dir);
		struct dirent *e;

		while (d && n < max && (e = readdir(d))) {
			struct stat st;
			int fd;

			if (!numbered(e->d_name, where[i].prefix))
				continue;
			/* Not openable here: not this process's GPU, nothing said. */
			fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
			if (fd < 0)
				continue;
			if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode)) {
				close(fd);
				continue;
			}
			fds[n++] = fd;
		}
		if (d)
			closedir(d);
	}
	return n;
}

void aff_gpu_proof_close(const int *fds, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		close(fds[i]);
}
