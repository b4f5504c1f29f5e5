// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * broker_load SOCKET PID CLIENTS SECONDS [SEED]: up to CLIENTS concurrent
 * connections to railbindd (pid PID) for SECONDS, each sending a valid, a
 * partial or a malformed request, or nothing, and hanging up at a random
 * point; forked children take pid leases and die (exit or SIGKILL). Then:
 *  - the broker's open fds (/proc/PID/fd) are as many as before the load;
 *  - its VmRSS grew by at most RSS_BOUND_KB since the end of the warm-up
 *    (the first fifth of the run);
 *  - it still answers: status lists no lease and one client (us), and
 *    rank 0's plan is the one it gave before the load.
 * Closing line: "N passed, N failed". Seed printed, -s style, for replay.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <json-c/json.h>

#define RSS_BOUND_KB 4096

static const char *sock_path;
static int passed, failed;

static void check(bool ok, const char *what)
{
	if (ok) {
		passed++;
	} else {
		failed++;
		printf("FAIL: %s\n", what);
		fflush(stdout);
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int open_conn(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* One request, one reply line, blocking with a 5 s bound; NULL on failure. */
static struct json_object *call(const char *req)
{
	char buf[1 << 16];
	size_t n = 0;
	double end = now() + 5;
	int fd = open_conn();
	struct pollfd p;

	if (fd < 0)
		return NULL;
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req)) {
		close(fd);
		return NULL;
	}
	p.fd = fd;
	p.events = POLLIN;
	while (n < sizeof(buf) - 1 && !memchr(buf, '\n', n) && now() < end) {
		ssize_t r;

		if (poll(&p, 1, 100) <= 0)
			continue;
		r = recv(fd, buf + n, sizeof(buf) - 1 - n, 0);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	return json_tokener_parse(buf);
}

static int count_fds(pid_t pid)
{
	char path[64];
	struct dirent *d;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.')
			n++;
	closedir(dir);
	return n;
}

static long rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static const char *const requests[] = {
	"{\"v\":1,\"op\":\"status\"}\n",
	"{\"v\":1,\"op\":\"plan\",\"rank\":3,\"lease\":\"none\"}\n",
	NULL,	/* a connection lease: written in slot_start() */
	"{\"v\":1,\"op\":\"topo\"}\n",
	"{\"v\":1,\"op\":\"plan\"}\n",
	"{\"v\":1,\"op\":\"watch\"}\n",
	"{\"v\":1,\"op\":\"plan\",\"rank\":1,\"job\":\"load\",\"lease\":\"conn\"}\n",
	"{\"v\":1,\"op\":",				/* partial */
	"not json at all\n",				/* malformed */
	"{\"v\":1,\"op\":\"plan\",\"job\":\"\xed\xa0\x80\"}\n",	/* invalid UTF-8 */
	"",						/* connect and go */
};
#define NREQ (sizeof(requests) / sizeof(*requests))

struct slot {
	int fd;
	char out[256];
	size_t len, off;
	int hangup_after;	/* bytes read before hanging up; -1: after a line */
	int got;
};

static void slot_start(struct slot *s)
{
	size_t k = (size_t)rand() % NREQ;

	s->fd = open_conn();
	if (s->fd < 0)
		return;
	if (requests[k])
		snprintf(s->out, sizeof(s->out), "%s", requests[k]);
	else
		snprintf(s->out, sizeof(s->out),
			 "{\"v\":1,\"op\":\"plan\",\"rank\":%d,\"job\":\"load%d\",\"lease\":\"conn\"}\n",
			 rand() % 8, rand() % 50);
	s->len = strlen(s->out);
	/* Hang up before sending all of it, at times. */
	if (s->len && rand() % 4 == 0)
		s->len = (size_t)rand() % s->len;
	s->off = 0;
	s->got = 0;
	s->hangup_after = rand() % 3 == 0 ? rand() % 200 : -1;
}

static void slot_stop(struct slot *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* A child holding a pid lease, killed or exiting at a random point. */
static pid_t spawn_holder(int rank)
{
	pid_t pid = fork();
	char req[128];

	if (pid)
		return pid;
	snprintf(req, sizeof(req),
		 "{\"v\":1,\"op\":\"plan\",\"rank\":%d,\"job\":\"pid%d\",\"lease\":\"pid\"}\n",
		 rank % 8, rank);
	json_object_put(call(req));
	if (rand() % 2)
		_exit(0);
	pause();
	_exit(0);
}

int main(int argc, char **argv)
{
	int clients, i, fds0, fds1, nholders = 0, seed;
	double secs, start, warm_end, next_holder;
	pid_t bpid, holders[4096];
	long rss_warm = -1, rss_end, overloaded = 0, replies = 0, opened = 0;
	struct json_object *before, *after, *st, *v;
	struct pollfd *pfd;
	struct slot *slots;
	struct rlimit rl;
	char msg[256];

	if (argc < 5) {
		fprintf(stderr, "usage: broker_load SOCKET PID CLIENTS SECONDS [SEED]\n");
		return 2;
	}
	sock_path = argv[1];
	bpid = (pid_t)atoi(argv[2]);
	clients = atoi(argv[3]);
	secs = atof(argv[4]);
	seed = argc > 5 ? atoi(argv[5]) : (int)time(NULL);
	printf("broker_load: %d clients, %.0f s, seed %d\n", clients, secs, seed);
	srand((unsigned)seed);
	signal(SIGPIPE, SIG_IGN);
	/* Our own fds: one per client, and some to spare. */
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < (rlim_t)clients + 64) {
		rl.rlim_cur = (rlim_t)clients + 64;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
			perror("broker_load: RLIMIT_NOFILE");
			return 2;
		}
	}
	before = call("{\"v\":1,\"op\":\"plan\",\"rank\":0,\"lease\":\"none\"}\n");
	check(before && json_object_object_get_ex(before, "rank", NULL), "rank 0 before the load");
	usleep(300000);	/* that connection's close reaches the broker */
	fds0 = count_fds(bpid);
	slots = calloc((size_t)clients, sizeof(*slots));
	pfd = calloc((size_t)clients, sizeof(*pfd));
	if (!slots || !pfd)
		return 2;
	for (i = 0; i < clients; i++)
		slots[i].fd = -1;
	start = now();
	warm_end = start + secs / 5;
	next_holder = start;
	while (now() < start + secs) {
		if (rss_warm < 0 && now() >= warm_end)
			rss_warm = rss_kb(bpid);
		if (now() >= next_holder && nholders < 4096) {
			holders[nholders] = spawn_holder(nholders);
			nholders++;
			next_holder = now() + 0.05;
		}
		/* Kill a random live holder now and then. */
		if (nholders && rand() % 20 == 0)
			kill(holders[rand() % nholders], SIGKILL);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		for (i = 0; i < clients; i++) {
			struct slot *s = &slots[i];

			if (s->fd < 0) {
				slot_start(s);
				opened += s->fd >= 0;
			}
			if (s->fd >= 0 && s->off < s->len) {
				ssize_t n = send(s->fd, s->out + s->off, s->len - s->off,
						 MSG_NOSIGNAL | MSG_DONTWAIT);

				if (n > 0)
					s->off += (size_t)n;
				else if (n < 0 && errno != EAGAIN)
					slot_stop(s);
			}
			pfd[i].fd = s->fd;
			pfd[i].events = POLLIN;
		}
		if (poll(pfd, (nfds_t)clients, 10) < 0 && errno != EINTR)
			break;
		for (i = 0; i < clients; i++) {
			struct slot *s = &slots[i];
			char buf[8192];
			ssize_t n;

			if (s->fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (n <= 0) {
				slot_stop(s);
				continue;
			}
			if (n > 14 && !memcmp(buf, "{\"v\":1,\"error\":\"overloaded\"", 27 < n ? 27 : (size_t)n))
				overloaded++;
			if (memchr(buf, '\n', (size_t)n))
				replies++;
			s->got += (int)n;
			/* Hang up mid-reply, or after a line, or keep it (watch). */
			if ((s->hangup_after >= 0 && s->got >= s->hangup_after) ||
			    (memchr(buf, '\n', (size_t)n) && rand() % 2))
				slot_stop(s);
		}
	}
	for (i = 0; i < clients; i++)
		slot_stop(&slots[i]);
	for (i = 0; i < nholders; i++)
		kill(holders[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	printf("broker_load: %ld connections, %ld replies, %ld overloaded, %d lease holders\n",
	       opened, replies, overloaded, nholders);
	/* Give the broker its sweep (250 ms) to see every hang-up. */
	for (i = 0; i < 50 && count_fds(bpid) != fds0; i++)
		usleep(100000);
	fds1 = count_fds(bpid);
	snprintf(msg, sizeof(msg), "broker fds back to %d after the load (now %d)", fds0, fds1);
	check(fds1 == fds0, msg);
	rss_end = rss_kb(bpid);
	snprintf(msg, sizeof(msg), "broker VmRSS %ld kB after warm-up, %ld kB at the end (bound +%d kB)",
		 rss_warm, rss_end, RSS_BOUND_KB);
	printf("broker_load: %s\n", msg);
	check(rss_warm > 0 && rss_end > 0 && rss_end - rss_warm <= RSS_BOUND_KB, msg);
	st = NULL;
	for (i = 0; i < 30; i++) {
		json_object_put(st);
		st = call("{\"v\":1,\"op\":\"status\"}\n");
		if (st && json_object_object_get_ex(st, "leases", &v) &&
		    json_object_array_length(v) == 0)
			break;
		usleep(100000);
	}
	check(st && json_object_object_get_ex(st, "leases", &v) && json_object_array_length(v) == 0,
	      "every lease of a dead client or closed connection is released");
	check(st && json_object_object_get_ex(st, "broker", &v) &&
	      json_object_get_int(json_object_object_get(v, "clients")) == 1,
	      "the broker counts one client (this status request)");
	after = call("{\"v\":1,\"op\":\"plan\",\"rank\":0,\"lease\":\"none\"}\n");
	check(after && before &&
	      !strcmp(json_object_to_json_string(json_object_object_get(before, "rank")),
		      json_object_to_json_string(json_object_object_get(after, "rank"))),
	      "rank 0's plan after the load is the one before it");
	check(replies > 0 && opened >= clients, "the load did reach the broker");
	json_object_put(st);
	json_object_put(before);
	json_object_put(after);
	free(slots);
	free(pfd);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
