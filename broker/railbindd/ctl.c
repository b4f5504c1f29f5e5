// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The control socket: JSON lines over a Unix stream socket, open to every
 * local user, so every bound is per user (share.c) as well as per client:
 *
 *  - a request line of at most AFF_PROTO_MAX_REQUEST bytes, ended within
 *    the request timeout;
 *  - replies must be read: a client with CLIENT_PAUSE_BYTES unread is not
 *    read from until it takes them (its own requests wait, no one else's);
 *    nor is any client of a user over --max-user-queued, or over an equal
 *    part of --memory-budget once the budget is spent; a client that takes
 *    nothing of its replies for --reply-timeout is closed (a half-closed
 *    client that never reads included), and one that lets conf.max_output
 *    pile up (a watcher that never reads) gets one error line and is closed;
 *  - requests: --max-user-rate a second per user (root aside); the rest
 *    wait in their sockets, costing the broker nothing;
 *  - connections: --max-user-clients per user, --max-user-watchers of them
 *    watching; when all --max-clients are taken, the user with the most
 *    gives up its longest idle one to a user with fewer;
 *  - a silent connection is closed after the idle timeout (not a watcher).
 *
 * A client over a bound gets an error line saying which ("overloaded",
 * "too-large", "timeout"); the others never wait.
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
#include "log.h"
#include "railbindd.h"

/* Unread replies beyond which a client's next requests wait. */
#define CLIENT_PAUSE_BYTES (64u << 10)
/* The kernel's send buffer of a client (it doubles it: 64 KiB). */
#define CLIENT_SNDBUF (32 << 10)
/* Descriptors kept for what is not a client or a watched process. */
#define FD_RESERVE 64

struct client {
	int fd;
	struct peer_id id;
	struct share *share;
	char in[AFF_PROTO_MAX_REQUEST + 1];
	size_t inlen;
	char *out;
	size_t outlen, outoff, outcap;
	long long partial_since;	/* when the unfinished line began */
	long long last_active;		/* the last byte read */
	long long stalled_since;	/* replies waiting and none taken since */
	long long paused_since;		/* requests waiting for its user's share */
	bool watching;
	bool closing;	/* no more reading; close once written */
	bool paused;	/* too much unread: stop reading requests */
	struct share_bucket misses;
	/* The peer's limits, read from /proc once per connection. */
	bool have_info;
	int info_err;
	struct peer_info info;
	/* GPU nodes it passed: their device numbers; the descriptors are closed. */
	struct gpuown_proof proof;
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

static size_t pending(const struct client *c)
{
	return c->outlen - c->outoff;
}

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
	share_queued(c->share, -(long long)pending(c));
	if (c->watching)
		c->share->watchers--;
	share_conn(c->share, -1);
	share_release(c->share);
	peer_info_clear(&c->info);
	free(c->out);
	free(c);
}

static bool must_pause(const struct client *c)
{
	return pending(c) >= CLIENT_PAUSE_BYTES || share_over_budget(c->share) ||
	       !share_may_ask(c->share);
}

static void update_events(struct client *c)
{
	uint32_t ev = c->closing || c->paused ? 0 : EPOLLIN;

	if (pending(c))
		ev |= EPOLLOUT;
	sched_mod_fd(c->fd, ev);
}

static void take_lines(struct client *c);

/* Write what the socket takes; false when the client is gone. */
static bool flush_out(struct client *c)
{
	while (pending(c)) {
		ssize_t n = send(c->fd, c->out + c->outoff, pending(c),
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
		share_queued(c->share, -n);
		c->stalled_since = sched_now_ms();
	}
	if (!pending(c))
		c->outoff = c->outlen = 0;
	if (c->closing && !pending(c)) {
		client_close(c);
		return false;
	}
	/* Its replies are taken: read what it asked meanwhile. */
	if (c->paused && !c->closing && !must_pause(c)) {
		c->paused = false;
		take_lines(c);
		/* Once more: what it asked is to be written, or it may be done. */
		return flush_out(c);
	}
	update_events(c);
	return true;
}

/* Append one line to c->out; false when out of memory. */
static bool append(struct client *c, const char *s, size_t len)
{
	if (c->outlen + len + 1 > c->outcap && c->outoff) {
		/* Written bytes first out of the way: the buffer is what is unread. */
		memmove(c->out, c->out + c->outoff, pending(c));
		c->outlen -= c->outoff;
		c->outoff = 0;
	}
	if (c->outlen + len + 1 > c->outcap) {
		size_t cap = (c->outlen + len + 1) * 2;
		char *p = realloc(c->out, cap);

		if (!p)
			return false;
		c->out = p;
		c->outcap = cap;
	}
	if (!pending(c))
		c->stalled_since = sched_now_ms();
	memcpy(c->out + c->outlen, s, len);
	c->out[c->outlen + len] = '\n';
	c->outlen += len + 1;
	share_queued(c->share, (long long)len + 1);
	return true;
}

/*
 * Too much unread: keep the line being written (a client must never get
 * half a line), drop the rest, end with one error line and close.
 */
static void overflow(struct client *c, size_t limit)
{
	char *nl = c->outoff ? memchr(c->out + c->outoff, '\n', pending(c)) : NULL;
	size_t keep = nl ? (size_t)(nl - c->out) + 1 : c->outoff;
	char line[160];
	int n;

	rbd_log_user(c->id.uid, LOG_WARNING, "client pid %d uid %u: %zu bytes unread, closing",
		     (int)c->id.pid, (unsigned)c->id.uid, pending(c));
	share_queued(c->share, -(long long)(c->outlen - keep));
	c->outlen = keep;
	c->closing = true;
	n = snprintf(line, sizeof(line),
		     "{\"v\":1,\"error\":\"overloaded\",\"message\":\"more than %zu bytes of replies left unread; closing\"}",
		     limit);
	append(c, line, (size_t)n);
}

static void queue(struct client *c, const char *s, size_t len)
{
	if (pending(c) + len + 1 > conf.max_output)
		overflow(c, conf.max_output);
	else if (!append(c, s, len))
		c->closing = true;
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

int ctl_set_watching(struct client *c)
{
	if (c->watching)
		return 0;
	if (c->share->watchers >= (unsigned int)conf.max_user_watchers)
		return -EUSERS;
	c->watching = true;
	c->share->watchers++;
	return 0;
}

void ctl_broadcast_watch(struct json_object *event)
{
	const char *s = json_object_to_json_string_ext(event, JSON_C_TO_STRING_PLAIN |
						       JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t len = strlen(s);
	struct client *c, *next;

	for (c = clients; c; c = next) {
		next = c->next;
		if (!c->watching || c->closing)
			continue;
		/* Events cannot wait like replies: a watcher whose user holds
		 * too much unread is closed rather than sent more. */
		if (c->share->queued + len + 1 > conf.max_user_queued)
			overflow(c, conf.max_user_queued);
		else
			queue(c, s, len);
		/* Written by the loop: a reload asked by a watcher runs this,
		 * and that client must still exist when its request returns. */
		update_events(c);
	}
	json_object_put(event);
}

uid_t ctl_uid(const struct client *c)
{
	return c->id.uid;
}

pid_t ctl_pid(const struct client *c)
{
	return c->id.pid;
}

unsigned long long ctl_start(const struct client *c)
{
	return c->id.start;
}

int ctl_peer_info(struct client *c, const struct peer_info **out)
{
	if (!c->have_info) {
		int dirfd = peer_open(c->fd, &c->id);

		c->have_info = true;
		c->info_err = dirfd < 0 ? dirfd : 0;
		if (dirfd >= 0) {
			peer_read_info(dirfd, conf_apply_limits(), &c->info);
			close(dirfd);
		}
	}
	*out = &c->info;
	return c->info_err;
}

int ctl_peer_visible(struct client *c, const char **out)
{
	int dirfd = peer_open(c->fd, &c->id), rc;

	*out = NULL;
	if (dirfd < 0)
		return dirfd;
	rc = peerenv_visible(dirfd, c->id.pid, c->id.start, c->share, out);
	close(dirfd);
	return rc;
}

const struct gpuown_proof *ctl_proof(const struct client *c)
{
	return &c->proof;
}

int ctl_peer_pidfd(struct client *c)
{
	return peer_pidfd(c->fd, &c->id);
}

bool ctl_charge_miss(struct client *c)
{
	double rate = conf.miss_rate;

	/* Per connection, and four times that per user across all of theirs. */
	if (!share_bucket_take(&c->misses, rate, rate * 2))
		return false;
	return share_bucket_take(&c->share->misses, rate * 4, rate * 8);
}

bool ctl_charge_verify(struct client *c)
{
	/* A verify op scans /proc in the loop: its time is every client's. */
	return share_bucket_take(&c->share->verifies, 1.0, 1.0);
}

size_t ctl_count(void)
{
	return nclients;
}

/* Whole lines out of c->in, until the client must wait; the rest stays. */
static void take_lines(struct client *c)
{
	size_t start = 0;
	char *nl;

	while (!c->closing && !(c->paused = must_pause(c)) &&
	       (nl = memchr(c->in + start, '\n', c->inlen - start))) {
		size_t len = (size_t)(nl - (c->in + start));

		if (len && nl[-1] == '\r')
			len--;
		if (len) {
			share_asked(c->share);
			ops_request(c, c->in + start, len);
		}
		start = (size_t)(nl - c->in) + 1;
	}
	if (!c->paused)
		c->paused_since = 0;
	else if (!c->paused_since)
		c->paused_since = sched_now_ms();
	memmove(c->in, c->in + start, c->inlen - start);
	c->inlen -= start;
	if (c->inlen && !start && c->partial_since == 0)
		c->partial_since = sched_now_ms();
	else if (start)
		c->partial_since = c->inlen ? sched_now_ms() : 0;
	if (c->inlen >= AFF_PROTO_MAX_REQUEST && !c->closing && !c->paused) {
		ctl_send_error(c, NULL, "too-large", "a request is at most %d bytes, one line",
			       AFF_PROTO_MAX_REQUEST);
		c->closing = true;
	}
}

/*
 * Request bytes, and the descriptors sent with them (SCM_RIGHTS): each is
 * looked at (fstat) and closed at once, whatever the client sends and
 * whether or not a request follows, so a client costs the broker no
 * descriptor. More than GPUOWN_MAX_PROOF in one message are cut by the
 * kernel (MSG_CTRUNC): the connection's proof is void then.
 */
static ssize_t recv_request(struct client *c)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * GPUOWN_MAX_PROOF)];
	} ctl;
	struct iovec iov = {
		.iov_base = c->in + c->inlen,
		.iov_len = AFF_PROTO_MAX_REQUEST - c->inlen,
	};
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *h;
	ssize_t n = recvmsg(c->fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	if (n < 0)
		return n;
	for (h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
		const unsigned char *data = CMSG_DATA(h);
		size_t i, nfd;

		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < nfd; i++) {
			int fd;

			memcpy(&fd, data + i * sizeof(int), sizeof(int));
			gpuown_proof_add(&c->proof, fd);
			close(fd);
		}
	}
	if (m.msg_flags & MSG_CTRUNC)
		c->proof.cut = true;
	return n;
}

static void client_event(int fd, uint32_t events, void *arg)
{
	struct client *c = arg;

	(void)fd;
	if ((events & EPOLLIN) && !c->closing && !c->paused) {
		ssize_t n = recv_request(c);

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			/* Half-closed: answer what came, then go. */
			take_lines(c);
			c->closing = true;
		} else if (n > 0) {
			c->inlen += (size_t)n;
			c->last_active = sched_now_ms();
			take_lines(c);
		}
	} else if ((events & (EPOLLERR | EPOLLHUP)) && !pending(c)) {
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

/* One error line to a connection that is not taken, then close it. */
static void refuse(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refuse(int fd, const char *fmt, ...)
{
	struct json_object *r = json_object_new_object();
	char msg[256];
	const char *s;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(r, "v", json_object_new_int(AFF_PROTO_VERSION));
	json_object_object_add(r, "error", json_object_new_string("overloaded"));
	json_object_object_add(r, "message", json_object_new_string(msg));
	s = json_object_to_json_string_ext(r, JSON_C_TO_STRING_PLAIN);
	if (send(fd, s, strlen(s), MSG_NOSIGNAL | MSG_DONTWAIT) < 0 ||
	    send(fd, "\n", 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		rbd_log(LOG_DEBUG, "refusing a client: %s", strerror(errno));
	json_object_put(r);
	close(fd);
}

/*
 * All --max-clients are taken: the user with the most connections gives up
 * its longest idle one, when @s (the newcomer's user) has fewer.
 */
static bool evict_for(const struct share *s)
{
	struct share *heavy = share_heaviest();
	struct client *c, *victim = NULL;
	char line[256];
	int n;

	if (!heavy || heavy == s || heavy->conns <= s->conns + 1)
		return false;
	for (c = clients; c; c = c->next)
		if (c->share == heavy && (!victim || c->last_active < victim->last_active))
			victim = c;
	if (!victim)
		return false;
	rbd_log(LOG_INFO, "all %d connections taken: closing uid %u's longest idle one (it holds %u) for uid %u",
		conf.max_clients, (unsigned)heavy->uid, heavy->conns, (unsigned)s->uid);
	/* The error line only where it cannot land inside a reply. */
	n = snprintf(line, sizeof(line),
		     "{\"v\":1,\"error\":\"overloaded\",\"message\":\"the broker is full and uid %u holds the most connections: closing this one\"}\n",
		     (unsigned)heavy->uid);
	if (!pending(victim) && send(victim->fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		rbd_log(LOG_DEBUG, "closing a client: %s", strerror(errno));
	client_close(victim);
	return true;
}

static void accept_clients(int fd, uint32_t events, void *arg)
{
	static const int sndbuf = CLIENT_SNDBUF;

	(void)events;
	(void)arg;
	for (;;) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct peer_id id;
		struct share *s;
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
		if (peer_pin(cfd, &id) < 0 || !(s = share_get(id.uid))) {
			refuse(cfd, "the broker cannot tell who is asking");
			continue;
		}
		if (s->conns >= (unsigned int)conf.max_user_clients) {
			refuse(cfd, "uid %u has %u connections, the most one user may (--max-user-clients)",
			       (unsigned)id.uid, s->conns);
			share_release(s);
			continue;
		}
		if ((int)nclients >= conf.max_clients && !evict_for(s)) {
			refuse(cfd, "too many clients (%d, --max-clients)", conf.max_clients);
			share_release(s);
			continue;
		}
		/* What the kernel holds for a client that does not read is bounded
		 * too (a reply larger than this is simply sent in parts). */
		if (setsockopt(cfd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)) < 0)
			rbd_log(LOG_DEBUG, "SO_SNDBUF: %s", strerror(errno));
		c = calloc(1, sizeof(*c));
		if (!c || sched_add_fd(cfd, EPOLLIN, client_event, c) < 0) {
			free(c);
			refuse(cfd, "out of memory");
			share_release(s);
			continue;
		}
		c->fd = cfd;
		c->id = id;
		c->share = s;
		share_conn(s, 1);
		c->last_active = sched_now_ms();
		c->next = clients;
		if (clients)
			clients->prev = c;
		clients = c;
		nclients++;
	}
}

/* Every quarter second: timeouts, idle clients, clients allowed to go on. */
static void sweep(void *arg)
{
	long long now = sched_now_ms();
	struct client *c, *next;

	(void)arg;
	for (c = clients; c; c = next) {
		next = c->next;
		if (pending(c) && now - c->stalled_since > conf.reply_timeout_ms) {
			rbd_log(LOG_DEBUG, "client pid %d uid %u took no reply for %d ms: closing",
				(int)c->id.pid, (unsigned)c->id.uid, conf.reply_timeout_ms);
			client_close(c);
		} else if (c->closing) {
			if (!pending(c))
				client_close(c);
		} else if (c->paused && !pending(c) &&
			   now - c->paused_since > conf.reply_timeout_ms) {
			/* Its user's other clients read nothing: these requests
			 * would wait for ever. */
			ctl_send_error(c, NULL, "overloaded",
				       "uid %u's requests waited %d ms for its share of the broker (its replies left unread); closing",
				       (unsigned)c->id.uid, conf.reply_timeout_ms);
			c->closing = true;
			flush_out(c);
		} else if (c->paused) {
			flush_out(c);
		} else if (c->inlen && now - c->partial_since > conf.request_timeout_ms) {
			ctl_send_error(c, NULL, "timeout",
				       "a request must end with a newline within %d ms",
				       conf.request_timeout_ms);
			c->closing = true;
			flush_out(c);
		} else if (!c->watching && !c->inlen && !pending(c) &&
			   now - c->last_active > conf.idle_timeout_ms) {
			client_close(c);
		}
	}
	share_gc();
	rbd_log_flush();	/* the users' suppressed lines, summed up */
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
 * Each client holds a descriptor, each watched process one more; the usual
 * soft limit (1024) would refuse clients long before --max-clients. Raise
 * it as far as the hard limit allows; where that is not enough, take fewer
 * clients rather than let accept() and /proc reads fail for everyone once
 * the descriptors run out.
 */
static void raise_nofile(void)
{
	rlim_t want = (rlim_t)conf.max_clients + (rlim_t)conf.max_watched + FD_RESERVE;
	struct rlimit rl;
	long fit, reserve;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ?
		      want : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
		rbd_log(LOG_WARNING, "raising the open files limit: %s", strerror(errno));
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur >= want)
		return;
	reserve = rl.rlim_cur < (rlim_t)4 * FD_RESERVE ? (long)rl.rlim_cur / 2 : FD_RESERVE;
	fit = (long)rl.rlim_cur - reserve;
	conf.max_watched = fit / 4 < conf.max_watched ? (int)(fit / 4) : conf.max_watched;
	conf.max_clients = fit - conf.max_watched > 1 ? (int)(fit - conf.max_watched) : 1;
	if (conf.max_user_clients > conf.max_clients)
		conf.max_user_clients = conf.max_clients;
	rbd_log(LOG_WARNING, "open files limited to %llu: taking at most %d clients and watching %d processes",
		(unsigned long long)rl.rlim_cur, conf.max_clients, conf.max_watched);
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
