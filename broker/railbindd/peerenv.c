// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A client's own CUDA_VISIBLE_DEVICES (else ROCR_VISIBLE_DEVICES), which a
 * GPU claim is checked against (ops.c). Its environment is the client's to
 * make as large as it likes: a process can point it at a 63 MiB mapping
 * (PR_SET_MM) or exec with 6 MiB of it under an unlimited stack, and every
 * byte the broker reads is read in its one loop, in everyone's time. So:
 *
 *  - it is read only for a request with a claim, never otherwise;
 *  - at most PEER_ENV_MAX bytes, in PEER_ENV_CHUNK pieces, stopping at the
 *    first CUDA_VISIBLE_DEVICES. A variable may sit anywhere in the block:
 *    one not found within the bound, where the block goes on, cannot be
 *    said absent, and the claim is refused (-E2BIG: `permission`) rather
 *    than taken unchecked; a value longer than PEER_ENV_MAX_VALUE too; an
 *    empty one is checked to be a live process's (-ESRCH otherwise);
 *  - what was found is kept per process (pid and start time: that very
 *    process, whatever its pid becomes), not per connection, for as long
 *    as the cache holds it: a process's environment block does not change
 *    (the CAP_SYS_RESOURCE that PR_SET_MM needs aside);
 *  - every read is charged, by the bytes it read, to the user's budget of
 *    PEER_ENV_RATE bytes a second (share.c); a user in debt is told
 *    `overloaded` (-EAGAIN) until it is paid. Root is not counted, as for
 *    requests (share_may_ask()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "railbindd.h"

/* Far beyond any real environment (a login shell's is a few KiB). */
#define PEER_ENV_MAX (1u << 20)
#define PEER_ENV_CHUNK (64u << 10)
/* A claim is at most 256 characters; a process's own list may be longer. */
#define PEER_ENV_MAX_VALUE 4096
/* Bytes a second of environment read for one user, and saved up. */
#define PEER_ENV_RATE (4.0 * (1u << 20))
#define PEER_ENV_BURST (8.0 * (1u << 20))
/* Each read costs at least this much, however little it finds. */
#define PEER_ENV_MIN_COST 4096
#define PEER_ENV_CACHE 256

struct env_entry {
	unsigned long long start;	/* 0: a free slot */
	char *visible;			/* NULL: neither variable is set */
	long long used;
	pid_t pid;
	int err;			/* 0 or -E2BIG */
};

static struct env_entry cache[PEER_ENV_CACHE];

static const char cuda[] = "CUDA_VISIBLE_DEVICES=", rocr[] = "ROCR_VISIBLE_DEVICES=";

/* The variables in the whole entries of [@buf, @buf + @len). */
static int scan(const char *buf, size_t len, char **cuda_out, char **rocr_out)
{
	int rc = peer_environ_get(buf, len, cuda, cuda_out);

	if (rc == 0 && !*rocr_out)
		rc = peer_environ_get(buf, len, rocr, rocr_out);
	return rc < 0 ? rc : 0;
}

/*
 * Whether the process under @dirfd still has its memory: an empty
 * environment is also what a zombie, a process whose thread-group leader
 * has exited, or one exiting now reads as, and a claim must not pass
 * unchecked for that. Their status has no VmSize line.
 */
static bool has_mm(int dirfd)
{
	char buf[8192];
	ssize_t n = -1;
	int fd = openat(dirfd, "status", O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, "\nVmSize:") != NULL;
}

/*
 * Read the environment under @dirfd as far as it must be; *@cost: the
 * bytes read. 0 and *@out (NULL: neither variable), -E2BIG, or -errno.
 */
static int read_visible(int dirfd, size_t *cost, char **out)
{
	char *buf = malloc(PEER_ENV_MAX), *c = NULL, *r = NULL, more;
	size_t n = 0, scanned = 0;
	ssize_t got = 0;
	int fd, rc = 0;

	*cost = 0;
	*out = NULL;
	if (!buf)
		return -ENOMEM;
	fd = openat(dirfd, "environ", O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		free(buf);
		return -errno;
	}
	while (!c && !rc && n < PEER_ENV_MAX) {
		size_t want = PEER_ENV_MAX - n < PEER_ENV_CHUNK ? PEER_ENV_MAX - n : PEER_ENV_CHUNK;
		const char *nul;

		got = read(fd, buf + n, want);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
		/* Whole entries only; a cut one waits for the rest. */
		nul = memrchr(buf + scanned, '\0', n - scanned);
		if (nul) {
			rc = scan(buf + scanned, (size_t)(nul + 1 - (buf + scanned)), &c, &r);
			scanned = (size_t)(nul + 1 - buf);
		}
	}
	if (got < 0 && !rc)
		rc = -errno;
	/* At the bound: the end of the block, or more of it unread. */
	if (!c && !rc && n == PEER_ENV_MAX) {
		got = read(fd, &more, 1);
		if (got > 0)
			rc = -E2BIG;
		else if (got < 0)
			rc = -errno;
	}
	/* The last entry, without its NUL. */
	if (!c && !rc && scanned < n)
		rc = scan(buf + scanned, n - scanned, &c, &r);
	close(fd);
	free(buf);
	if (!rc && !n && !has_mm(dirfd))
		rc = -ESRCH;
	*cost = n;
	if (!rc && c) {
		free(r);
		r = c;
	} else if (rc) {
		free(c);
		free(r);
		r = NULL;
	}
	if (r && strlen(r) > PEER_ENV_MAX_VALUE) {
		free(r);
		r = NULL;
		rc = -E2BIG;
	}
	*out = r;
	return rc;
}

/* The entry of (@pid, @start), else the slot to fill: a free or the least used. */
static struct env_entry *slot(pid_t pid, unsigned long long start, bool *hit)
{
	struct env_entry *e, *victim = cache;

	for (e = cache; e < cache + PEER_ENV_CACHE; e++) {
		if (e->start && e->pid == pid && e->start == start) {
			*hit = true;
			return e;
		}
		if (victim->start && (!e->start || e->used < victim->used))
			victim = e;
	}
	*hit = false;
	return victim;
}

int peerenv_visible(int dirfd, pid_t pid, unsigned long long start, struct share *s,
		    const char **out)
{
	struct env_entry *e;
	size_t cost;
	char *v;
	bool hit;
	int rc;

	*out = NULL;
	if (!start)
		return -ESRCH;
	e = slot(pid, start, &hit);
	if (hit) {
		e->used = sched_now_ms();
		*out = e->visible;
		return e->err;
	}
	if (s->uid && !share_bucket_has(&s->environ, PEER_ENV_RATE, PEER_ENV_BURST))
		return -EAGAIN;
	rc = read_visible(dirfd, &cost, &v);
	if (s->uid)
		s->environ.tokens -= (double)(cost > PEER_ENV_MIN_COST ? cost : PEER_ENV_MIN_COST);
	if (rc < 0 && rc != -E2BIG)
		return rc;	/* not the process's answer: not kept */
	free(e->visible);
	e->pid = pid;
	e->start = start;
	e->visible = v;
	e->err = rc;
	e->used = sched_now_ms();
	*out = v;
	return rc;
}

void peerenv_fini(void)
{
	size_t i;

	for (i = 0; i < PEER_ENV_CACHE; i++)
		free(cache[i].visible);
	memset(cache, 0, sizeof(cache));
}
