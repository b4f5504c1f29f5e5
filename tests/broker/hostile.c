// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * broker_hostile MODE SOCKET ...: one local user attacking railbindd, for
 * tests/broker/test_hostile.py and bench/broker.sh (which run it under
 * another uid with setpriv). Each mode sets its attack up, prints one line
 * of counts ending in "ready", then holds it until killed (SIGTERM):
 *
 *   conns SOCK N [watch]   N connections, each sending "watch" if asked
 *   leases SOCK N FIRST LAST  one process, N pid leases on one connection,
 *                          job flood-K, ranks FIRST..LAST in turn
 *   procs SOCK N FIRST LAST  N processes, one pid lease each
 *   flood SOCK N M         N connections, M "audit" requests each, then
 *                          shutdown(SHUT_WR); replies never read
 *   bust SOCK SECONDS      plan requests, each with a GPU claim never sent
 *                          before ("1,0", "0,0,1", ...), as fast as the
 *                          broker answers, for SECONDS; prints counts, exits
 *   churn SOCK SECONDS     lease churn: a new process after another takes a
 *                          pid lease (a new job each) and exits, for
 *                          SECONDS; prints counts, exits
 *   bigenv SOCK UID SECONDS CONC MIB  (root) a process of UID whose
 *                          environment is MIB MiB, CUDA_VISIBLE_DEVICES last:
 *                          pointed at an anonymous mapping by root
 *                          (prctl PR_SET_MM_ENV_START/END need
 *                          CAP_SYS_RESOURCE), then the uid dropped to; where
 *                          prctl is refused, re-exec'd as UID with up to
 *                          6 MiB of environment under an unlimited stack
 *                          (the kernel's most). Forks children that inherit
 *                          it, CONC at a time, each a plan with a GPU claim,
 *                          for SECONDS; prints counts, exits
 *   overflow SOCK N        a watcher that does not read, and N topo
 *                          requests left unread on a second connection;
 *                          then reads the watcher, prints its lines, exits
 *   pidreuse SOCK VICTIM_UID ATTACKER_UID SECRET  (root) a client of
 *                          ATTACKER_UID connects and exits; a process of
 *                          VICTIM_UID with CUDA_VISIBLE_DEVICES=SECRET is
 *                          started under the same pid (clone3 set_tid);
 *                          then the attacker's socket asks for a plan, a
 *                          lease and status: the replies go to stdout.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>

static const char *sock_path;

static int open_conn(bool block)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!block)
		fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

static int send_line(int fd, const char *s)
{
	size_t len = strlen(s);

	return write(fd, s, len) == (ssize_t)len ? 0 : -1;
}

/*
 * One reply line (5 s at most); its length, or -1. Buffered per descriptor:
 * what follows the line stays for the next call.
 */
#define RBUF 8192
static char *rbuf[65536];
static size_t rlen[65536];

static void forget(int fd)
{
	if (fd >= 0 && fd < 65536)
		rlen[fd] = 0;
}

static int read_line(int fd, char *buf, size_t cap)
{
	char *held, *nl;
	size_t *hn, n = 0;

	if (fd < 0 || fd >= 65536 || (!rbuf[fd] && !(rbuf[fd] = malloc(RBUF))))
		return -1;
	held = rbuf[fd];
	hn = &rlen[fd];
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		nl = memchr(held, '\n', *hn);
		if (nl) {
			size_t take = (size_t)(nl - held) + 1, keep = take < cap - n - 1 ? take : cap - n - 1;

			memcpy(buf + n, held, keep);
			n += keep;
			memmove(held, held + take, *hn - take);
			*hn -= take;
			buf[n] = '\0';
			return (int)n;
		}
		if (*hn && n + *hn < cap - 1) {
			memcpy(buf + n, held, *hn);
			n += *hn;
		}
		*hn = 0;
		if (poll(&p, 1, 5000) <= 0)
			return -1;
		r = read(fd, held, RBUF);
		if (r <= 0)
			return -1;
		*hn = (size_t)r;
	}
}

static volatile sig_atomic_t done;

static void on_term(int sig)
{
	(void)sig;
	done = 1;
}

static void hold(void)
{
	signal(SIGTERM, on_term);
	while (!done)
		pause();
}

static int conns(int argc, char **argv)
{
	int n = argc > 3 ? atoi(argv[3]) : 100, i, ok = 0, refused = 0, watching = 0,
	    watch_refused = 0;
	bool watch = argc > 4 && !strcmp(argv[4], "watch");
	int *fds = calloc((size_t)n, sizeof(int));
	char buf[512];

	if (!fds)
		return 1;
	for (i = 0; i < n; i++)
		fds[i] = open_conn(true);
	usleep(300000);	/* the refused ones have their line by now */
	for (i = 0; i < n; i++) {
		ssize_t r = fds[i] < 0 ? 0 : recv(fds[i], buf, sizeof(buf) - 1,
						  MSG_PEEK | MSG_DONTWAIT);

		if (r >= 0) {	/* a line it was not asked for, or closed */
			refused++;
			if (fds[i] >= 0)
				close(fds[i]);
			fds[i] = -1;
			continue;
		}
		ok++;
		if (!watch)
			continue;
		if (send_line(fds[i], "{\"v\":1,\"op\":\"watch\"}\n") < 0 ||
		    read_line(fds[i], buf, sizeof(buf)) < 0)
			refused++;
		else if (strstr(buf, "\"ok\":true"))
			watching++;
		else
			watch_refused++;
	}
	printf("connected %d refused %d watching %d watch_refused %d ready\n", ok, refused,
	       watching, watch_refused);
	fflush(stdout);
	hold();
	free(fds);
	return 0;
}

static void count_reply(const char *buf, int *ok, int *over, int *busy, int *other)
{
	if (strstr(buf, "\"ok\":true"))
		(*ok)++;
	else if (strstr(buf, "\"overloaded\""))
		(*over)++;
	else if (strstr(buf, "\"busy\""))
		(*busy)++;
	else
		(*other)++;
}

/* A reply line as one letter, for a child to pass on through a pipe. */
static char reply_letter(const char *buf)
{
	return strstr(buf, "\"ok\":true") ? 'o' : strstr(buf, "\"overloaded\"") ? 'v' :
	       strstr(buf, "\"busy\"") ? 'b' : strstr(buf, "\"permission\"") ? 'p' : 'x';
}

struct tally {
	int ok, over, busy, perm, other;
};

static void tally(struct tally *t, char c)
{
	if (c == 'o')
		t->ok++;
	else if (c == 'v')
		t->over++;
	else if (c == 'b')
		t->busy++;
	else if (c == 'p')
		t->perm++;
	else
		t->other++;
}

static int leases(char **argv)
{
	int n = atoi(argv[3]), first = atoi(argv[4]), last = atoi(argv[5]), i;
	int ok = 0, over = 0, busy = 0, other = 0, fd = open_conn(true);
	char req[256], buf[65536];

	if (fd < 0) {
		perror("connect");
		return 1;
	}
	for (i = 0; i < n; i++) {
		snprintf(req, sizeof(req),
			 "{\"v\":1,\"op\":\"plan\",\"rank\":%d,\"job\":\"flood-%d\",\"lease\":\"pid\"}\n",
			 first + i % (last - first + 1), i);
		if (send_line(fd, req) < 0 || read_line(fd, buf, sizeof(buf)) < 0) {
			other += n - i;
			break;
		}
		count_reply(buf, &ok, &over, &busy, &other);
	}
	printf("ok %d overloaded %d busy %d other %d ready\n", ok, over, busy, other);
	fflush(stdout);
	hold();
	return 0;
}

static int procs(char **argv)
{
	int n = atoi(argv[3]), first = atoi(argv[4]), last = atoi(argv[5]), i, p[2];
	struct tally t = { 0 };
	pid_t *kids = calloc((size_t)n, sizeof(pid_t));
	char c;

	if (!kids || pipe(p) < 0)
		return 1;
	for (i = 0; i < n; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			char req[256], buf[65536];
			int fd;

			/* Gone with the attacker, however it ends. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			fd = open_conn(true);

			close(p[0]);
			snprintf(req, sizeof(req),
				 "{\"v\":1,\"op\":\"plan\",\"rank\":%d,\"job\":\"proc-%d-%d\",\"lease\":\"pid\"}\n",
				 first + i % (last - first + 1), (int)getppid(), i);
			c = 'x';
			if (fd >= 0 && send_line(fd, req) == 0 && read_line(fd, buf, sizeof(buf)) > 0)
				c = reply_letter(buf);
			if (write(p[1], &c, 1) != 1)
				_exit(1);
			close(fd);	/* the lease is the pid's, not the connection's */
			pause();
			_exit(0);
		}
	}
	close(p[1]);
	for (i = 0; i < n && read(p[0], &c, 1) == 1; i++)
		tally(&t, c);
	printf("ok %d overloaded %d busy %d other %d ready\n", t.ok, t.over, t.busy,
	       t.other + t.perm);
	fflush(stdout);
	hold();
	for (i = 0; i < n; i++)
		if (kids[i] > 0)
			kill(kids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	free(kids);
	return 0;
}

static int flood(char **argv)
{
	int n = atoi(argv[3]), m = atoi(argv[4]), i, k, ok = 0;
	static const char req[] = "{\"v\":1,\"op\":\"audit\"}\n";
	size_t len = sizeof(req) - 1;
	char *batch = malloc(len * (size_t)m);
	int *fds = calloc((size_t)n, sizeof(int));

	if (!batch || !fds)
		return 1;
	for (k = 0; k < m; k++)
		memcpy(batch + k * len, req, len);
	for (i = 0; i < n; i++) {
		int fd = open_conn(true);
		size_t off = 0;

		fds[i] = -1;
		if (fd < 0)
			continue;
		/* The kernel holds what the broker does not read yet: fine. */
		fcntl(fd, F_SETFL, O_NONBLOCK);
		while (off < len * (size_t)m) {
			ssize_t r = write(fd, batch + off, len * (size_t)m - off);

			if (r <= 0)
				break;
			off += (size_t)r;
		}
		shutdown(fd, SHUT_WR);
		fds[i] = fd;
	}
	free(batch);
	usleep(300000);
	/* Taken ones have audit replies waiting; refused ones an error line. */
	for (i = 0; i < n; i++) {
		char head[64];
		ssize_t r = fds[i] < 0 ? 0 : recv(fds[i], head, sizeof(head) - 1,
						  MSG_PEEK | MSG_DONTWAIT);

		if (r > 0)
			head[r] = '\0';
		/* Nothing yet (EAGAIN): taken, its requests waiting for its
		 * user's share. A reset: refused with its requests unread. */
		if (fds[i] >= 0 && ((r < 0 && errno == EAGAIN) ||
				    (r > 0 && !strstr(head, "\"overloaded\"")))) {
			ok++;
			continue;
		}
		if (fds[i] >= 0)
			close(fds[i]);
	}
	printf("half_closed %d ready\n", ok);
	fflush(stdout);
	hold();
	free(fds);
	return 0;
}

/*
 * The K-th claim: the GPUs of the K-th of the 255 non-empty sets of 8, in
 * turn (more sets than the broker caches, so each is new to it again),
 * written backwards with the first one again at the end ("7,3,7"): one
 * set, whatever the string.
 */
static void claim(unsigned long k, char *buf, size_t cap)
{
	unsigned int set = (unsigned int)(k % 255) + 1, g, top = 0;
	size_t used = 0;

	for (g = 8; g-- > 0;)
		if (set & (1u << g)) {
			if (!used)
				top = g;
			used += (size_t)snprintf(buf + used, cap - used, "%s%u", used ? "," : "", g);
		}
	snprintf(buf + used, cap - used, ",%u", top);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int bust(int argc, char **argv)
{
	double secs = argc > 3 ? atof(argv[3]) : 3, end;
	unsigned long k = 1, sent = 0;
	int ok = 0, over = 0, busy = 0, other = 0, fd = -1;
	char req[512], c[256], buf[65536];

	printf("busting ready\n");
	fflush(stdout);
	signal(SIGTERM, on_term);
	end = now() + secs;
	while (now() < end && !done) {
		if (fd < 0 && (fd = open_conn(true)) < 0)
			break;
		claim(k++, c, sizeof(c));
		snprintf(req, sizeof(req),
			 "{\"v\":1,\"op\":\"plan\",\"rank\":0,\"lease\":\"none\",\"visible\":\"%s\"}\n",
			 c);
		sent++;
		if (send_line(fd, req) < 0 || read_line(fd, buf, sizeof(buf)) < 0) {
			forget(fd);
			close(fd);
			fd = -1;
			other++;
			continue;
		}
		count_reply(buf, &ok, &over, &busy, &other);
		/* Each connection has its own budget: a new one every 64. */
		if (sent % 64 == 0) {
			forget(fd);
			close(fd);
			fd = -1;
		}
	}
	printf("requests %lu ok %d overloaded %d other %d rate %.0f/s\n", sent, ok, over,
	       other + busy, (double)sent / secs);
	return 0;
}

/* Each lease is taken by a child that exits at once: a start and an end line. */
static int churn(int argc, char **argv)
{
	double secs = argc > 3 ? atof(argv[3]) : 5, end;
	struct tally t = { 0 };
	int k = 0;

	printf("churning ready\n");
	fflush(stdout);
	signal(SIGTERM, on_term);
	end = now() + secs;
	while (now() < end && !done) {
		int p[2], status = 0;
		char c = 'x';
		pid_t kid;

		if (pipe(p) < 0)
			break;
		kid = fork();
		if (kid == 0) {
			char req[256], buf[65536];
			int fd = open_conn(true);

			snprintf(req, sizeof(req),
				 "{\"v\":1,\"op\":\"plan\",\"rank\":%d,\"job\":\"churn-%d\",\"lease\":\"pid\"}\n",
				 k % 8, k);
			if (fd >= 0 && send_line(fd, req) == 0 && read_line(fd, buf, sizeof(buf)) > 0)
				c = reply_letter(buf);
			if (write(p[1], &c, 1) != 1)
				_exit(1);
			_exit(0);
		}
		close(p[1]);
		if (kid < 0 || read(p[0], &c, 1) != 1)
			c = 'x';
		close(p[0]);
		if (kid > 0)
			waitpid(kid, &status, 0);
		tally(&t, c);
		k++;
	}
	printf("leases %d ok %d overloaded %d other %d\n", k, t.ok, t.over,
	       t.other + t.busy + t.perm);
	return 0;
}

/* Environment entries of about 4 KiB filling [@p, @p + @len), CUDA_VISIBLE_DEVICES last. */
static void fill_environ(char *p, size_t len)
{
	static const char tail[] = "CUDA_VISIBLE_DEVICES=0";
	size_t off = 0, k = 0;

	while (off + 4096 + sizeof(tail) < len) {
		int n = snprintf(p + off, 32, "PAD%zu=", k++);

		memset(p + off + n, 'x', 4095 - (size_t)n);
		p[off + 4095] = '\0';
		off += 4096;
	}
	memcpy(p + off, tail, sizeof(tail));
}

/* The attack itself, as the attacker: CONC children at a time, one claim each. */
static int bigenv_run(const char *how, size_t bytes, double secs, int conc)
{
	static const char req[] =
		"{\"v\":1,\"op\":\"plan\",\"rank\":0,\"lease\":\"none\",\"visible\":\"0\"}\n";
	int running = 0, sent = 0, p[2];
	struct tally t = { 0 };
	double end;
	char c;

	if (pipe(p) < 0)
		return 1;
	printf("env %zu KiB via %s ready\n", bytes >> 10, how);
	fflush(stdout);
	signal(SIGTERM, on_term);
	end = now() + secs;
	while (!done && (now() < end || running)) {
		while (!done && running < conc && now() < end) {
			pid_t kid = fork();

			if (kid == 0) {
				char buf[65536];
				int fd = open_conn(true);

				close(p[0]);
				c = 'x';
				if (fd >= 0 && send_line(fd, req) == 0 &&
				    read_line(fd, buf, sizeof(buf)) > 0)
					c = reply_letter(buf);
				if (write(p[1], &c, 1) != 1)
					_exit(1);
				_exit(0);
			}
			if (kid < 0)
				break;
			running++;
			sent++;
		}
		if (read(p[0], &c, 1) != 1)
			break;
		running--;
		tally(&t, c);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	while (wait(NULL) > 0)
		;
	printf("requests %d ok %d overloaded %d permission %d other %d\n", sent, t.ok, t.over,
	       t.perm, t.other + t.busy);
	return 0;
}

static int become(uid_t uid);

static int bigenv(char **argv)
{
	uid_t uid = (uid_t)atol(argv[3]);
	size_t bytes = (size_t)atol(argv[6]) << 20, len;
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	char *env, **envp;
	size_t i, n;

	env = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (env == MAP_FAILED)
		return 1;
	fill_environ(env, bytes);
	if (prctl(PR_SET_MM, PR_SET_MM_ENV_START, (unsigned long)env, 0, 0) == 0 &&
	    prctl(PR_SET_MM, PR_SET_MM_ENV_END, (unsigned long)env + bytes, 0, 0) == 0) {
		if (become(uid) < 0)
			return 3;
		return bigenv_run("prctl", bytes, atof(argv[4]), atoi(argv[5]));
	}
	fprintf(stderr, "bigenv: prctl(PR_SET_MM): %s; exec with a large environment instead\n",
		strerror(errno));
	/* The kernel takes at most 6 MiB (3/4 of _STK_LIM) of arguments and
	 * environment, in strings of at most 128 KiB. */
	len = bytes < (6u << 20) - (64u << 10) ? bytes : (6u << 20) - (64u << 10);
	n = len / (120u << 10) + 2;
	envp = calloc(n + 1, sizeof(char *));
	if (!envp)
		return 1;
	for (i = 0; i + 1 < n; i++) {
		envp[i] = malloc(120u << 10);
		if (!envp[i])
			return 1;
		snprintf(envp[i], 16, "PAD%zu=", i);
		memset(envp[i] + strlen(envp[i]), 'x', (120u << 10) - 1 - strlen(envp[i]));
		envp[i][(120u << 10) - 1] = '\0';
	}
	envp[n - 1] = "CUDA_VISIBLE_DEVICES=0";
	if (setrlimit(RLIMIT_STACK, &unlimited) < 0 || become(uid) < 0)
		return 3;
	execve("/proc/self/exe", (char *[]){ argv[0], "bigenv-exec", argv[2], argv[4], argv[5],
					    NULL }, envp);
	perror("bigenv: execve");
	return 1;
}

/*
 * A watcher that never reads, and a second connection of the same user
 * leaving N topo replies unread; then the watcher's lines, once read.
 */
static int overflow(char **argv)
{
	int n = atoi(argv[3]), w = open_conn(true), g = open_conn(true), i;
	char line[65536];
	double end = now() + 2;

	if (w < 0 || g < 0 || send_line(w, "{\"v\":1,\"op\":\"watch\"}\n") < 0 ||
	    read_line(w, line, sizeof(line)) < 0 || !strstr(line, "\"ok\":true")) {
		printf("no watcher ready\n");
		return 1;
	}
	fcntl(g, F_SETFL, O_NONBLOCK);
	for (i = 0; i < n && now() < end;) {
		static const char req[] = "{\"v\":1,\"op\":\"topo\"}\n";

		if (write(g, req, sizeof(req) - 1) == (ssize_t)sizeof(req) - 1)
			i++;
		else
			usleep(1000);
	}
	printf("sent %d ready\n", i);
	fflush(stdout);
	while (read_line(w, line, sizeof(line)) > 0)
		printf("got %s", line);
	printf("end\n");
	return 0;
}

static int become(uid_t uid)
{
	return setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid) ? -1 : 0;
}

static pid_t spawn_at(pid_t pid, uid_t uid, const char *secret)
{
	struct clone_args args = { .exit_signal = SIGCHLD };
	pid_t tid = pid, got;

	args.set_tid = (uint64_t)(uintptr_t)&tid;
	args.set_tid_size = 1;
	got = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	if (got == 0) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(0, &one);
		sched_setaffinity(0, sizeof(one), &one);
		if (become(uid) < 0)
			_exit(1);
		setenv("CUDA_VISIBLE_DEVICES", secret, 1);
		execlp("sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	return got;
}

static int pidreuse(int argc, char **argv)
{
	uid_t victim = (uid_t)atol(argv[3]), attacker = (uid_t)atol(argv[4]);
	const char *secret = argv[5];
	int p1[2], p2[2], tries;
	pid_t a, v = -1, pid = 0;
	char go = 'g';

	if (argc < 6 || pipe(p1) < 0 || pipe(p2) < 0)
		return 2;
	a = fork();
	if (a == 0) {
		static const char *const reqs[] = {
			"{\"v\":1,\"op\":\"plan\",\"rank\":0,\"job\":\"steal\",\"lease\":\"pid\",\"visible\":\"0\",\"id\":1}\n",
			"{\"v\":1,\"op\":\"plan\",\"rank\":0,\"job\":\"steal2\",\"lease\":\"pid\",\"id\":2}\n",
			"{\"v\":1,\"op\":\"plan\",\"lease\":\"none\",\"id\":3}\n",
			"{\"v\":1,\"op\":\"status\",\"id\":4}\n",
		};
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		char buf[65536];
		int fd, i;
		pid_t c;

		if (become(attacker) < 0)
			_exit(3);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		/* The child connects (SO_PEERCRED names it), lives long enough
		 * to be accepted, and exits; the socket stays here. */
		c = fork();
		if (c == 0) {
			if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
				_exit(1);
			usleep(300000);
			_exit(0);
		}
		waitpid(c, NULL, 0);
		if (write(p1[1], &c, sizeof(c)) != sizeof(c) || read(p2[0], &go, 1) != 1)
			_exit(4);
		for (i = 0; i < 4; i++) {
			if (send_line(fd, reqs[i]) < 0 || read_line(fd, buf, sizeof(buf)) < 0) {
				printf("no reply to request %d\n", i + 1);
				continue;
			}
			fputs(buf, stdout);
		}
		fflush(stdout);
		_exit(0);
	}
	if (read(p1[0], &pid, sizeof(pid)) != sizeof(pid))
		return 2;
	/* Another process may take the pid first on a busy machine: retry. */
	for (tries = 0; tries < 50 && v < 0; tries++) {
		v = spawn_at(pid, victim, secret);
		if (v < 0)
			usleep(10000);
	}
	if (v != pid) {
		fprintf(stderr, "pidreuse: cannot start a process as pid %d: %s\n", (int)pid,
			strerror(errno));
		kill(a, SIGKILL);
		waitpid(a, NULL, 0);
		return 2;
	}
	fprintf(stderr, "pidreuse: uid %u's process now has pid %d\n", (unsigned)victim, (int)pid);
	usleep(200000);	/* exec'd, its environment in place */
	if (write(p2[1], &go, 1) != 1)
		return 2;
	waitpid(a, NULL, 0);
	printf("victim_pid %d\n", (int)pid);
	fflush(stdout);
	kill(v, SIGKILL);
	waitpid(v, NULL, 0);
	return 0;
}

int main(int argc, char **argv)
{
	struct rlimit rl;

	if (argc < 3) {
		fprintf(stderr, "usage: broker_hostile conns|leases|procs|flood|bust|churn|bigenv|overflow|pidreuse SOCKET ...\n");
		return 2;
	}
	sock_path = argv[2];
	signal(SIGPIPE, SIG_IGN);
	/* As many connections as the attack wants, as far as the hard limit goes. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "conns"))
		return conns(argc, argv);
	if (!strcmp(argv[1], "leases") && argc > 5)
		return leases(argv);
	if (!strcmp(argv[1], "procs") && argc > 5)
		return procs(argv);
	if (!strcmp(argv[1], "flood") && argc > 4)
		return flood(argv);
	if (!strcmp(argv[1], "bust"))
		return bust(argc, argv);
	if (!strcmp(argv[1], "bigenv") && argc > 6)
		return bigenv(argv);
	if (!strcmp(argv[1], "bigenv-exec") && argc > 4) {
		extern char **environ;
		size_t bytes = 0, i;

		for (i = 0; environ[i]; i++)
			bytes += strlen(environ[i]) + 1;
		return bigenv_run("exec", bytes, atof(argv[3]), atoi(argv[4]));
	}
	if (!strcmp(argv[1], "churn"))
		return churn(argc, argv);
	if (!strcmp(argv[1], "overflow") && argc > 3)
		return overflow(argv);
	if (!strcmp(argv[1], "pidreuse") && argc > 5)
		return pidreuse(argc, argv);
	fprintf(stderr, "broker_hostile: unknown mode or missing arguments: %s\n", argv[1]);
	return 2;
}
