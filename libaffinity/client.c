// SPDX-License-Identifier: LGPL-2.1-or-later
/* Talking to railbindd: one request line, one reply line, bounded in time. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "client.h"
#include "internal.h"

AFF_EXPORT const char *aff_socket_path(const char *opt)
{
	const char *env = secure_getenv("RAILBIND_SOCKET");

	if (opt && *opt)
		return opt;
	return env && *env ? env : AFF_DEFAULT_SOCKET;
}

const char *aff_job_name(const char *opt)
{
	static const char *const vars[] = {
		"RAILBIND_JOB", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID",
		"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", NULL,
	};
	const char *const *v;

	if (opt && *opt)
		return opt;
	for (v = vars; *v; v++) {
		const char *s = getenv(*v);

		if (s && *s)
			return s;
	}
	return "default";
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Wait for @events on @fd until @deadline; -ETIMEDOUT when it passes. */
static int wait_fd(int fd, short events, long long deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int rc;

	do {
		long long left = deadline - now_ms();

		if (left <= 0)
			return -ETIMEDOUT;
		rc = poll(&p, 1, (int)left);
	} while (rc < 0 && errno == EINTR);
	if (rc < 0)
		return -errno;
	return rc ? 0 : -ETIMEDOUT;
}

static int send_all(int fd, const char *buf, size_t len, long long deadline)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			int rc = wait_fd(fd, POLLOUT, deadline);

			if (rc < 0)
				return rc;
			continue;
		}
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * The line, its first bytes carrying @fds (SCM_RIGHTS): the broker takes
 * the descriptors with the bytes they came with, and closes them.
 */
static int send_line(int fd, const char *buf, size_t len, const int *fds, size_t nfds,
		     long long deadline)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * AFF_PROTO_MAX_PROOF)];
	} ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf };
	struct cmsghdr *h;
	ssize_t n;

	if (nfds > AFF_PROTO_MAX_PROOF)
		nfds = AFF_PROTO_MAX_PROOF;
	if (!nfds)
		return send_all(fd, buf, len, deadline);
	memset(&ctl, 0, sizeof(ctl));
	m.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
	h = CMSG_FIRSTHDR(&m);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
	memcpy(CMSG_DATA(h), fds, sizeof(int) * nfds);
	while ((n = sendmsg(fd, &m, MSG_NOSIGNAL)) < 0 && (errno == EAGAIN || errno == EINTR)) {
		int rc = wait_fd(fd, POLLOUT, deadline);

		if (rc < 0)
			return rc;
	}
	if (n < 0)
		return -errno;
	return send_all(fd, buf + n, len - (size_t)n, deadline);
}

/* Read up to the first newline; the reply may be large (a whole plan). */
static int recv_line(int fd, char **out, long long deadline)
{
	size_t len = 0, cap = 8192;
	char *buf = malloc(cap);
	int rc;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;
		char *nl;

		if (len + 1 >= cap) {
			char *p = cap < (16u << 20) ? realloc(buf, cap * 2) : NULL;

			if (!p) {
				rc = -EPROTO;
				break;
			}
			buf = p;
			cap *= 2;
		}
		n = recv(fd, buf + len, cap - len - 1, 0);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			rc = wait_fd(fd, POLLIN, deadline);
			if (rc < 0)
				break;
			continue;
		}
		if (n <= 0) {
			rc = n < 0 ? -errno : -ECONNRESET;
			break;
		}
		nl = memchr(buf + len, '\n', (size_t)n);
		len += (size_t)n;
		if (nl) {
			*nl = '\0';
			*out = buf;
			return 0;
		}
	}
	free(buf);
	return rc;
}

AFF_EXPORT int aff_unix_address(const char *path, struct sockaddr_un *sa)
{
	size_t n = strlen(path);

	if (n >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, n + 1);
	return 0;
}

AFF_EXPORT int aff_broker_call(const char *path, const char *request, int timeout_ms,
			       struct json_object **reply)
{
	return aff_broker_call_fds(path, request, NULL, 0, timeout_ms, reply);
}

int aff_broker_call_fds(const char *path, const char *request, const int *fds, size_t nfds,
			int timeout_ms, struct json_object **reply)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	long long deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 1000);
	char *line = NULL;
	int fd, rc;

	*reply = NULL;
	if (aff_unix_address(path, &sa) < 0)
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (rc < 0 && errno == EAGAIN)	/* backlog full: a broker is there */
		rc = wait_fd(fd, POLLOUT, deadline);
	else if (rc < 0)
		rc = -errno;
	/* One write for the line, newline included: the broker wakes once. */
	if (!rc) {
		size_t len = strlen(request);

		line = malloc(len + 1);
		if (!line) {
			rc = -ENOMEM;
		} else {
			memcpy(line, request, len);
			line[len] = '\n';
			rc = send_line(fd, line, len + 1, fds, nfds, deadline);
			free(line);
			line = NULL;
		}
	}
	if (!rc)
		rc = recv_line(fd, &line, deadline);
	close(fd);
	if (rc < 0)
		return rc;
	*reply = json_tokener_parse(line);
	free(line);
	return *reply && json_object_is_type(*reply, json_type_object) ? 0 : -EPROTO;
}

int aff_broker_errno(const char *error)
{
	static const struct {
		const char *name;
		int err;
	} map[] = {
		{ "no-such-rank", ERANGE }, { "busy", EBUSY },
		{ "permission", EPERM }, { "no-accelerator", ENODEV },
		{ "invalid", EINVAL }, { "malformed", EINVAL },
		{ "too-large", EMSGSIZE }, { "unsupported", ENOSYS },
		{ "timeout", ETIMEDOUT }, { "overloaded", EAGAIN },
		{ "not-ready", EAGAIN },
	};
	size_t i;

	for (i = 0; error && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i].name, error))
			return map[i].err;
	return EPROTO;
}
