// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A client's identity and limits come from the kernel (SO_PEERCRED) and
 * from its own /proc entries, never from what it writes in a request.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hwloc.h>
#include <sys/socket.h>

#include "railbindd.h"

/* A process environment is bounded by the kernel's ARG_MAX-like limits. */
#define PEER_MAX_ENVIRON (64u << 20)

int peer_cred(int fd, uid_t *uid, gid_t *gid, pid_t *pid)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return -errno;
	*uid = cr.uid;
	*gid = cr.gid;
	*pid = cr.pid;
	return 0;
}

/*
 * A whole /proc or cgroup file (@len may be NULL). Whole, not a first
 * buffer's worth: a variable past the first 64 KiB of /proc/<pid>/environ
 * must count too, or a claim would be checked against none (and widen).
 */
static char *read_all(const char *path, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap), *p;
	ssize_t r;
	int fd;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	while ((r = read(fd, buf + n, cap - n - 1)) > 0) {
		n += (size_t)r;
		if (cap - n - 1 == 0) {
			p = cap < PEER_MAX_ENVIRON ? realloc(buf, cap * 2) : NULL;
			if (!p) {
				r = -1;
				errno = E2BIG;
				break;
			}
			buf = p;
			cap *= 2;
		}
	}
	close(fd);
	if (r < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* The cgroup v2 cpuset of @pid ("0::/path" -> cpuset.cpus.effective). */
static char *cgroup_cpus(pid_t pid)
{
	char path[512], *cg, *line, *s, *nl;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	cg = read_all(path, NULL);
	if (!cg)
		return NULL;
	line = strstr(cg, "0::");
	if (line != cg && line && line[-1] != '\n')
		line = NULL;
	if (!line) {
		free(cg);
		return NULL;
	}
	line += 3;
	nl = strchr(line, '\n');
	if (nl)
		*nl = '\0';
	snprintf(path, sizeof(path), "%s/sys/fs/cgroup%s/cpuset.cpus.effective",
		 conf.root ? conf.root : "", line);
	free(cg);
	s = read_all(path, NULL);
	if (s && (nl = strchr(s, '\n')))
		*nl = '\0';
	if (s && !*s) {
		free(s);
		s = NULL;
	}
	return s;
}

char *peer_allowed_cpus(pid_t pid)
{
	char path[64], *status, *p, *cg, *out = NULL;
	hwloc_bitmap_t a = hwloc_bitmap_alloc(), b = hwloc_bitmap_alloc();

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	status = read_all(path, NULL);
	p = status ? strstr(status, "\nCpus_allowed_list:") : NULL;
	if (a && b && p) {
		char *nl;

		p += strlen("\nCpus_allowed_list:");
		p += strspn(p, " \t");
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (hwloc_bitmap_list_sscanf(a, p) == 0) {
			/* Affinity is already inside the cpuset; the cpuset is
			 * read too, so a race with a move between cgroups
			 * cannot widen it. */
			cg = cgroup_cpus(pid);
			if (cg && hwloc_bitmap_list_sscanf(b, cg) == 0 && !hwloc_bitmap_iszero(b))
				hwloc_bitmap_and(a, a, b);
			free(cg);
			if (hwloc_bitmap_list_asprintf(&out, a) < 0)
				out = NULL;
		}
	}
	free(status);
	hwloc_bitmap_free(a);
	hwloc_bitmap_free(b);
	return out;
}

int peer_visible_gpus(pid_t pid, char **out)
{
	char path[64], *env;
	size_t len;
	int rc;

	*out = NULL;
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	env = read_all(path, &len);
	if (!env)
		return -errno;
	rc = peer_environ_visible(env, len, out);
	free(env);
	return rc;
}

unsigned long long peer_start_time(pid_t pid)
{
	char path[64], *stat, *p;
	unsigned long long start = 0;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	stat = read_all(path, NULL);
	/* comm may hold spaces and parentheses: count from the last ')'. */
	p = stat ? strrchr(stat, ')') : NULL;
	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		start = strtoull(p + 1, NULL, 10);
	free(stat);
	return start;
}
