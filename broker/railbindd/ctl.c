// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The control socket: JSON lines over a Unix stream socket. Every client
 * is non-blocking and bounded: a request line of at most
 * AFF_PROTO_MAX_REQUEST bytes that must end within the request timeout,
 * output that must be read before it passes conf.max_output. A client that
 * breaks a bound gets one error line and is closed; the others never wait.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>

#include "client.h"
#include "railbindd.h"

struct client {
	int fd;
	uid_t uid;
	gid_t gid;
	pid_t pid;
	char in[AFF_PROTO_MAX_REQUEST + 1];
	size_t inlen;
	char *out;
	size_t outlen, outoff, outcap;
	long long partial_since;	/* when the unfinished line began */
	long long last_active;
	bool watching;
	bool closing;	/* no more reading; close once written */
	/* The peer's limits, read from /proc once per connection. */
	bool have_cpus, have_visible;
	char *cpus;
	char *visible;
	int visible_err;
	struct client *prev, *next;
};

static int listen_fd = -1;
static bool activated;	/* the socket came from systemd: do not unlink */
static struct client *clients;
static size_t nclients;
static unsigned int sweep_timer;
/* Out of descriptors: the listener is off until this timer turns it on. */
static unsigned int accept_timer;

/* How long the listener rests after accept() ran out of descriptors. */
#define ACCEPT_PAUSE_MS 100

static void client_close(struct client *c)
{
	char junk[4096];
	int i;

	/* Unread input would make close() reset the connection, and the
	 * client could lose the error line written just before. */
	for (i = 0; i < 16 && recv(c->fd, junk, sizeof(junk), MSG_DONTWAIT) > 0; i++)
		;
	lease_release_conn(c);
	sched_del_fd(c->fd);
	close(c->fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	nclients--;
	free(c->cpus);
	free(c->visible);
	free(c->out);
	free(c);
}

static void update_events(struct client *c)
{
	uint32_t ev = c->closing ? 0 : EPOLLIN;

	if (c->outlen > c->outoff)
		ev |= EPOLLOUT;
	sched_mod_fd(c->fd, ev);
}

/* Write what the socket takes; false when the client is gone. */
static bool flush_out(struct client *c)
{
	while (c->outlen > c->outoff) {
		ssize_t n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			client_close(c);
			return false;
		}
		c->outoff += (size_t)n;
	}
	if (c->outoff == c->outlen)
		c->outoff = c->outlen = 0;
	if (c->closing && !c->outlen) {
		client_close(c);
		return false;
	}
	update_events(c);
	return true;
}

static void queue(struct client *c, const char *s, size_t len)
{
	if (c->outlen + len + 1 > conf.max_output) {
		/* It does not read what it asked for: drop it, not the others. */
		rbd_log(LOG_WARNING, "client pid %d uid %u: %zu bytes unread, closing",
			(int)c->pid, (unsigned)c->uid, c->outlen - c->outoff);
		c->closing = true;
		c->outlen = c->outoff = 0;
		return;
	}
	if (c->outlen + len + 1 > c->outcap) {
		size_t cap = (c->outlen + len + 1) * 2;
		char *p = realloc(c->out, cap);

		if (!p) {
			c->closing = true;
			return;
		}
		c->out = p;
		c->outcap = cap;
	}
	memcpy(c->out + c->outlen, s, len);
	c->out[c->outlen + len] = '\n';
	c->outlen += len + 1;
}

void ctl_send(struct client *c, struct json_object *reply)
{
	const char *s = json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN |
						       JSON_C_TO_STRING_NOSLASHESCAPE);

	queue(c, s, strlen(s));
	json_object_put(reply);
}

void ctl_send_error(struct client *c, struct json_object *id, const char *error,
		    const char *fmt, ...)
{
	struct json_object *r = json_object_new_object();
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(r, "v", json_object_new_int(AFF_PROTO_VERSION));
	if (id)
		json_object_object_add(r, "id", json_object_get(id));
	json_object_object_add(r, "error", json_object_new_string(error));
	json_object_object_add(r, "message", json_object_new_string(msg));
	ctl_send(c, r);
}

void ctl_set_watching(struct client *c)
{
	c->watching = true;
}

void ctl_broadcast_watch(struct json_object *event)
{
	const char *s = json_object_to_json_string_ext(event, JSON_C_TO_STRING_PLAIN |
						       JSON_C_TO_STRING_NOSLASHESCAPE);
	struct client *c, *next;

	for (c = clients; c; c = next) {
		next = c->next;
		if (c->watching && !c->closing) {
			queue(c, s, strlen(s));
			flush_out(c);
		}
	}
	json_object_put(event);
}

uid_t ctl_uid(const struct client *c)
{
	return c->uid;
}

pid_t ctl_pid(const struct client *c)
{
	return c->pid;
}

const char *ctl_peer_cpus(struct client *c)
{
	if (!c->have_cpus) {
		c->cpus = peer_allowed_cpus(c->pid);
		c->have_cpus = true;
	}
	return c->cpus;
}

int ctl_peer_visible(struct client *c, const char **out)
{
	if (!c->have_visible) {
		c->visible_err = peer_visible_gpus(c->pid, &c->visible);
		c->have_visible = true;
	}
	*out = c->visible;
	return c->visible_err;
}

size_t ctl_count(void)
{
	return nclients;
}

/* Whole lines out of c->in; what remains is the start of the next one. */
static void take_lines(struct client *c)
{
	size_t start = 0;
	char *nl;

	while (!c->closing &&
	       (nl = memchr(c->in + start, '\n', c->inlen - start))) {
		size_t len = (size_t)(nl - (c->in + start));

		if (len && nl[-1] == '\r')
			len--;
		if (len)
			ops_request(c, c->in + start, len);
		start = (size_t)(nl - c->in) + 1;
	}
	memmove(c->in, c->in + start, c->inlen - start);
	c->inlen -= start;
	if (c->inlen && !start && c->partial_since == 0)
		c->partial_since = sched_now_ms();
	else if (start)
		c->partial_since = c->inlen ? sched_now_ms() : 0;
	if (c->inlen >= AFF_PROTO_MAX_REQUEST && !c->closing) {
		ctl_send_error(c, NULL, "too-large", "a request is at most %d bytes, one line",
			       AFF_PROTO_MAX_REQUEST);
		c->closing = true;
	}
}

static void client_event(int fd, uint32_t events, void *arg)
{
	struct client *c = arg;

	(void)fd;
	if ((events & EPOLLIN) && !c->closing) {
		ssize_t n = recv(c->fd, c->in + c->inlen, AFF_PROTO_MAX_REQUEST - c->inlen,
				 MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			/* Half-closed: answer what came, then go. */
			c->closing = true;
		} else if (n > 0) {
			c->inlen += (size_t)n;
			c->last_active = sched_now_ms();
			take_lines(c);
		}
	} else if (events & (EPOLLERR | EPOLLHUP)) {
		client_close(c);
		return;
	}
	flush_out(c);
}

static void accept_resume(void *arg)
{
	int rc;

	(void)arg;
	accept_timer = 0;
	rc = listen_fd < 0 ? 0 : sched_mod_fd(listen_fd, EPOLLIN);
	if (rc < 0)
		rbd_log(LOG_ERR, "listening again: %s", strerror(-rc));
}

/*
 * The pending connection stays queued, so a level-triggered listener would
 * wake the loop again at once: a busy spin that starves the clients already
 * served. Rest the listener instead; the waiting clients are taken when
 * descriptors are free again (the kernel's backlog holds them meanwhile).
 */
static void accept_pause(int err)
{
	static long long last_log;
	long long now = sched_now_ms();
	int rc;

	if (accept_timer)
		return;
	/* Once a minute at most: under a flood this would be every 100 ms. */
	if (!last_log || now - last_log >= 60000) {
		rbd_log(LOG_WARNING, "accept: %s with %zu clients; not accepting for %d ms",
			strerror(err), nclients, ACCEPT_PAUSE_MS);
		last_log = now;
	}
	rc = sched_mod_fd(listen_fd, 0);
	if (rc < 0) {
		rbd_log(LOG_ERR, "pausing the listener: %s", strerror(-rc));
		return;
	}
	accept_timer = sched_add_timer(ACCEPT_PAUSE_MS, accept_resume, NULL);
}

static void accept_clients(int fd, uint32_t events, void *arg)
{
	(void)events;
	(void)arg;
	for (;;) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct client *c;

		if (cfd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				accept_pause(errno);
				return;
			}
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				rbd_log(LOG_ERR, "accept: %s", strerror(errno));
			return;
		}
		c = calloc(1, sizeof(*c));
		if (!c || (int)nclients >= conf.max_clients ||
		    peer_cred(cfd, &c->uid, &c->gid, &c->pid) < 0 ||
		    sched_add_fd(cfd, EPOLLIN, client_event, c) < 0) {
			static const char busy[] =
				"{\"v\":1,\"error\":\"overloaded\",\"message\":\"too many clients\"}\n";

			if (send(cfd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				rbd_log(LOG_DEBUG, "refusing a client: %s", strerror(errno));
			free(c);
			close(cfd);
			continue;
		}
		c->fd = cfd;
		c->last_active = sched_now_ms();
		c->next = clients;
		if (clients)
			clients->prev = c;
		clients = c;
		nclients++;
	}
}

/* Every quarter second: requests that started and did not end, idle clients. */
static void sweep(void *arg)
{
	long long now = sched_now_ms();
	struct client *c, *next;

	(void)arg;
	for (c = clients; c; c = next) {
		next = c->next;
		if (c->closing)
			continue;
		if (c->inlen && now - c->partial_since > conf.request_timeout_ms) {
			ctl_send_error(c, NULL, "timeout",
				       "a request must end with a newline within %d ms",
				       conf.request_timeout_ms);
			c->closing = true;
			flush_out(c);
		} else if (!c->watching && !c->inlen &&
			   now - c->last_active > conf.idle_timeout_ms) {
			client_close(c);
		}
	}
	sweep_timer = sched_add_timer(250, sweep, NULL);
}

static int open_socket(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, n = sd_listen_fds(1);

	if (n > 1) {
		rbd_log(LOG_ERR, "socket activation passed %d sockets, expected 1", n);
		return -EINVAL;
	}
	if (n == 1) {
		fd = SD_LISTEN_FDS_START;
		if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) <= 0) {
			rbd_log(LOG_ERR, "the activated socket is not a listening Unix stream socket");
			return -EINVAL;
		}
		/* accept4() must not block the loop: systemd's socket may be blocking. */
		if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0 ||
		    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
			return -errno;
		activated = true;
		rbd_log(LOG_INFO, "using the socket systemd passed");
		return fd;
	}
	if (aff_unix_address(conf.socket, &sa) < 0) {
		rbd_log(LOG_ERR, "socket path too long: %s", conf.socket);
		return -ENAMETOOLONG;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A socket file nobody answers on is a leftover of a killed broker. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EAGAIN) {
		rbd_log(LOG_ERR, "another railbindd is serving %s", conf.socket);
		close(fd);
		return -EADDRINUSE;
	}
	unlink(conf.socket);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(conf.socket, 0666) < 0 || listen(fd, 512) < 0) {
		int err = errno;

		rbd_log(LOG_ERR, "cannot listen on %s: %s", conf.socket, strerror(err));
		close(fd);
		return -err;
	}
	return fd;
}

/*
 * Each client holds a descriptor; the usual soft limit (1024) would refuse
 * clients long before --max-clients. Raise it as far as the hard limit
 * allows, and say so when that is not enough.
 */
static void raise_nofile(void)
{
	rlim_t want = (rlim_t)conf.max_clients + 64;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ?
		      want : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		rbd_log(LOG_WARNING, "raising the open files limit: %s", strerror(errno));
	if (rl.rlim_cur < want)
		rbd_log(LOG_INFO, "open files limited to %llu: fewer clients than --max-clients %d",
			(unsigned long long)rl.rlim_cur, conf.max_clients);
}

int ctl_init(void)
{
	int rc;

	raise_nofile();
	listen_fd = open_socket();
	if (listen_fd < 0)
		return listen_fd;
	rc = sched_add_fd(listen_fd, EPOLLIN, accept_clients, NULL);
	if (rc < 0)
		return rc;
	sweep_timer = sched_add_timer(250, sweep, NULL);
	return 0;
}

void ctl_stop_listening(void)
{
	if (accept_timer)
		sched_del_timer(accept_timer);
	accept_timer = 0;
	if (listen_fd < 0)
		return;
	sched_del_fd(listen_fd);
	close(listen_fd);
	listen_fd = -1;
	if (!activated)
		unlink(conf.socket);
}

void ctl_drain(void)
{
	struct client *c, *next;

	for (c = clients; c; c = next) {
		next = c->next;
		c->closing = true;
		flush_out(c);
	}
}

bool ctl_drained(void)
{
	return !clients;
}

void ctl_fini(void)
{
	ctl_stop_listening();
	while (clients)
		client_close(clients);
	sched_del_timer(sweep_timer);
}
