// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A client's identity and limits come from the kernel (SO_PEERCRED) and
 * from its own /proc entries, never from what it writes in a request.
 *
 * The pid SO_PEERCRED gives is a number: the process that connected may
 * exit and another (another user's) be given that number before the broker
 * reads /proc/<pid>. So the identity is pinned when the connection is
 * accepted: on kernels with SO_PEERPIDFD (6.5) the socket itself keeps the
 * connecting process (a pidfd can be asked for at any time and says
 * whether it still lives); elsewhere the pid and its start time are taken
 * at accept. Every read of /proc for a client goes through a /proc/<pid>
 * directory opened first and checked after (the pidfd still alive, or the
 * same start time): a directory opened while its process lives stays that
 * process's, and reads from it fail once it is gone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hwloc.h>
#include <sys/pidfd.h>
#include <sys/socket.h>

#include "railbindd.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77		/* Linux 6.5; Debian 12's headers predate it */
#endif

/* /proc/<pid>/status, stat, cgroup; a cgroup's cpuset or devices.list. */
#define PEER_MAX_SMALL (1u << 20)

static int peer_pidfd_get(int sockfd)
{
	socklen_t len = sizeof(int);
	int pfd = -1;

	if (getsockopt(sockfd, SOL_SOCKET, SO_PEERPIDFD, &pfd, &len) < 0)
		return -errno;
	return pfd;
}

static bool pidfd_alive(int pfd)
{
	return pidfd_send_signal(pfd, 0, NULL, 0) == 0 || errno == EPERM;
}

/* A whole file under @dirfd (@len may be NULL), at most @max bytes. */
static char *read_all_at(int dirfd, const char *path, size_t max, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf, *p;
	ssize_t r;
	int fd;

	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return NULL;
	}
	while ((r = read(fd, buf + n, cap - n - 1)) > 0) {
		n += (size_t)r;
		if (cap - n - 1 == 0) {
			p = cap < max ? realloc(buf, cap * 2) : NULL;
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

/* Start time in clock ticks since boot (stat field 22), 0 if unreadable. */
static unsigned long long start_time_at(int dirfd)
{
	char *stat = read_all_at(dirfd, "stat", PEER_MAX_SMALL, NULL), *p;
	unsigned long long start = 0;
	int field;

	/* comm may hold spaces and parentheses: count from the last ')'. */
	p = stat ? strrchr(stat, ')') : NULL;
	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		start = strtoull(p + 1, NULL, 10);
	free(stat);
	return start;
}

unsigned long long peer_start_time(pid_t pid)
{
	char path[32];
	unsigned long long start;
	int dirfd;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return 0;
	start = start_time_at(dirfd);
	close(dirfd);
	return start;
}

/*
 * Whether this kernel pins a peer for us (SO_PEERPIDFD, and pidfds that can
 * be asked whether they live: valgrind cannot), found out on the first
 * client and kept: -1 not yet known.
 */
static int kernel_pins = -1;

static bool pins(int sockfd)
{
	int pfd;

	if (kernel_pins >= 0 || conf.no_peer_pidfd)
		return kernel_pins > 0 && !conf.no_peer_pidfd;
	pfd = peer_pidfd_get(sockfd);
	if (pfd == -ENOPROTOOPT) {
		kernel_pins = 0;
	} else if (pfd >= 0) {
		kernel_pins = pidfd_send_signal(pfd, 0, NULL, 0) == 0 || errno != ENOSYS;
		close(pfd);
	} else {
		return true;	/* known option, the peer is gone: ask again next time */
	}
	return kernel_pins > 0;
}

int peer_pin(int sockfd, struct peer_id *id)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	memset(id, 0, sizeof(*id));
	if (getsockopt(sockfd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return -errno;
	id->uid = cr.uid;
	id->gid = cr.gid;
	id->pid = cr.pid;
	/* pid 0: a process in a pid namespace the broker cannot see into. */
	if (cr.pid <= 0) {
		id->gone = true;
		return 0;
	}
	/* The socket keeps the process that connected; peer_open() asks it. */
	if (pins(sockfd)) {
		id->pidfd = true;
		return 0;
	}
	id->start = peer_start_time(cr.pid);
	id->gone = !id->start;
	return 0;
}

int peer_open(int sockfd, struct peer_id *id)
{
	char path[32];
	int dirfd, pfd = -1;
	bool same;

	if (id->gone)
		return -ESRCH;
	if (id->pidfd && (pfd = peer_pidfd_get(sockfd)) < 0) {
		id->gone = true;
		return -ESRCH;
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)id->pid);
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		int err = errno;

		if (pfd >= 0)
			close(pfd);
		if (err == ENOENT || err == ESRCH) {
			id->gone = true;
			return -ESRCH;
		}
		return -err;
	}
	/* Checked after the open: see the top of this file. */
	if (id->pidfd) {
		same = pidfd_alive(pfd);
		close(pfd);
		if (same && !id->start)
			id->start = start_time_at(dirfd);
	} else {
		same = start_time_at(dirfd) == id->start;
	}
	if (!same) {
		close(dirfd);
		id->gone = true;
		return -ESRCH;
	}
	return dirfd;
}

int peer_pidfd(int sockfd, const struct peer_id *id)
{
	int pfd;

	if (id->gone)
		return -ESRCH;
	if (id->pidfd) {
		pfd = peer_pidfd_get(sockfd);
		if (pfd < 0)
			return -ESRCH;
		if (!pidfd_alive(pfd)) {
			close(pfd);
			return -ESRCH;
		}
		return pfd;
	}
	return peer_pidfd_open(id->pid, id->start);
}

int peer_pidfd_open(pid_t pid, unsigned long long start)
{
	int pfd = pidfd_open(pid, 0);

	if (pfd < 0)
		return -errno;
	/* Opened first, checked after: a pidfd of a live pid with this start
	 * time is this process's, whatever happens to the number later. */
	if (peer_start_time(pid) != start) {
		close(pfd);
		return -ESRCH;
	}
	return pfd;
}

bool peer_alive(pid_t pid, unsigned long long start)
{
	return peer_start_time(pid) == start;
}

/* The cgroup v2 cpuset of the process: cpuset.cpus.effective of its "0::" line. */
static char *cgroup_cpus(const char *cg)
{
	char path[4096], *dir = peer_cgroup_path(cg, ""), *s, *nl;

	if (!dir)
		return NULL;
	snprintf(path, sizeof(path), "%s/sys/fs/cgroup%s/cpuset.cpus.effective",
		 conf.root ? conf.root : "", dir);
	free(dir);
	s = read_all_at(AT_FDCWD, path, PEER_MAX_SMALL, NULL);
	if (s && (nl = strchr(s, '\n')))
		*nl = '\0';
	if (s && !*s) {
		free(s);
		s = NULL;
	}
	return s;
}

static char *allowed_cpus(int dirfd, const char *cg)
{
	char *status, *p, *c, *out = NULL;
	hwloc_bitmap_t a = hwloc_bitmap_alloc(), b = hwloc_bitmap_alloc();

	status = read_all_at(dirfd, "status", PEER_MAX_SMALL, NULL);
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
			c = cg ? cgroup_cpus(cg) : NULL;
			if (c && hwloc_bitmap_list_sscanf(b, c) == 0 && !hwloc_bitmap_iszero(b))
				hwloc_bitmap_and(a, a, b);
			free(c);
			if (hwloc_bitmap_list_asprintf(&out, a) < 0)
				out = NULL;
		}
	}
	free(status);
	hwloc_bitmap_free(a);
	hwloc_bitmap_free(b);
	return out;
}

/* The environment is not read here: only for a claim (peerenv.c). */
int peer_read_info(int dirfd, bool want_cpus, struct peer_info *pi)
{
	char *cg;

	memset(pi, 0, sizeof(*pi));
	cg = read_all_at(dirfd, "cgroup", PEER_MAX_SMALL, NULL);
	if (want_cpus)
		pi->cpus = allowed_cpus(dirfd, cg);
	/* Read after the cgroup file, to tell whether that was the process's own. */
	pi->devices = gpuown_read(dirfd, cg);
	free(cg);
	return 0;
}

void peer_info_clear(struct peer_info *pi)
{
	free(pi->cpus);
	gpuown_rules_free(pi->devices);
	memset(pi, 0, sizeof(*pi));
}
