// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbindd: start-up, signals, shutdown. Start-up order: options; state
 * directory; the udev monitor before the first topology read (so no change
 * falls between the two); the plan; the saved leases, checked against live
 * pids; the socket; readiness. One exit path undoes it in reverse.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

#include "log.h"
#include "railbindd.h"

#define DRAIN_MS 2000

static int ready_fd = -1;	/* the waiting parent, when daemonized */
static int sig_fd = -1;
static bool draining;
static long long drain_deadline;

static void drain_check(void *arg)
{
	(void)arg;
	if (ctl_drained() || sched_now_ms() >= drain_deadline)
		sched_stop();
	else
		sched_add_timer(20, drain_check, NULL);
}

/* SIGTERM's path: drain, save, exit. */
static void rbd_quit(void)
{
	if (draining)
		return;
	draining = true;
	sd_notify(0, "STOPPING=1");
	rbd_log(LOG_INFO, "stopping: answering what is pending, keeping %zu lease%s",
		lease_count(), lease_count() == 1 ? "" : "s");
	ctl_stop_listening();
	ctl_drain();
	drain_deadline = sched_now_ms() + DRAIN_MS;
	drain_check(NULL);
}

static void on_signal(int fd, uint32_t events, void *arg)
{
	struct signalfd_siginfo si;

	(void)events;
	(void)arg;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP)
			serve_reload("SIGHUP");
		else
			rbd_quit();
	}
}

/*
 * Two steps. While starting (the topology read, the saved leases) only
 * SIGHUP waits in the signalfd, for the loop to take once it runs: SIGTERM
 * and SIGINT keep their default action and end a start that hangs or takes
 * long, with nothing yet to drain or save. Once serving, they too go
 * through the loop (signals_serving), which answers what is pending first.
 */
static int signals_init(void)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);	/* a vanished client is EPIPE, not death */
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	sig_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sig_fd < 0)
		return -errno;
	return sched_add_fd(sig_fd, EPOLLIN, on_signal, NULL);
}

static int signals_serving(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 || signalfd(sig_fd, &set, 0) < 0)
		return -errno;
	return 0;
}

/*
 * Without --foreground: the parent waits until the child is serving (or
 * says why it cannot) and exits with that status, so an init script sees a
 * failed start as one.
 */
static int daemonize(void)
{
	int p[2];
	pid_t pid;
	char buf[512];
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		close(p[1]);
		n = read(p[0], buf, sizeof(buf) - 1);
		if (n == 1 && buf[0] == '\0')
			_exit(EXIT_SUCCESS);
		if (n > 0) {
			buf[n] = '\0';
			fprintf(stderr, "railbindd: %s\n", buf);
		}
		_exit(EXIT_FAILURE);
	}
	close(p[0]);
	ready_fd = p[1];
	if (setsid() < 0)
		return -errno;
	if (chdir("/") < 0)
		return -errno;
	openlog("railbindd", LOG_PID, LOG_DAEMON);
	return 0;
}

static void tell_parent(const char *msg)
{
	if (ready_fd < 0)
		return;
	if (write(ready_fd, msg, strlen(msg) + (*msg ? 0 : 1)) < 0)
		rbd_log(LOG_DEBUG, "the parent is gone");
	close(ready_fd);
	ready_fd = -1;
	if (!*msg) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			close(null);
		}
	}
}

static int state_dir_init(void)
{
	struct stat st;

	if (mkdir(conf.state_dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	if (stat(conf.state_dir, &st) < 0)
		return -errno;
	/* Leases decide who may use a GPU: trust no directory others can write. */
	if (!S_ISDIR(st.st_mode) || (st.st_mode & 0022) || st.st_uid != geteuid()) {
		rbd_log(LOG_ERR, "%s: must be a directory owned by uid %u and not group/world writable",
			conf.state_dir, (unsigned)geteuid());
		return -EPERM;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int rc = conf_parse(argc, argv), stage = 0;
	char msg[512] = "";

	if (rc)
		return rc > 0 ? EXIT_SUCCESS : 2;
	rbd_log_init(conf.foreground, conf.debug);
	if (!conf.foreground && (rc = daemonize()) < 0) {
		fprintf(stderr, "railbindd: cannot start in the background: %s\n", strerror(-rc));
		return EXIT_FAILURE;
	}
	if (geteuid() != 0)
		rbd_log(LOG_INFO, "not root: leases of other users' processes may not be checked");
	if ((rc = state_dir_init()) < 0) {
		snprintf(msg, sizeof(msg), "state directory %s: %s", conf.state_dir, strerror(-rc));
		goto out;
	}
	if ((rc = sched_init()) < 0 || (stage = 1, rc = signals_init()) < 0) {
		snprintf(msg, sizeof(msg), "cannot set up the main loop: %s", strerror(-rc));
		goto out;
	}
	/* These cannot fail: the broker serves even without udev or a plan. */
	udevmon_init();
	serve_init();
	lease_init();
	state_load();
	counters_init();
	stage = 5;
	if ((rc = ctl_init()) < 0) {
		snprintf(msg, sizeof(msg), "cannot serve on %s: %s", conf.socket, strerror(-rc));
		goto out;
	}
	stage = 6;
	if ((rc = signals_serving()) < 0) {
		snprintf(msg, sizeof(msg), "cannot handle signals: %s", strerror(-rc));
		goto out;
	}
	rbd_log(LOG_INFO, "serving %s on %s, plan generation %llu, %zu lease%s", serve_source(),
		conf.socket, serve_generation(), lease_count(), lease_count() == 1 ? "" : "s");
	sd_notify(0, "READY=1");
	tell_parent("");
	rc = sched_loop();
	if (rc < 0)
		snprintf(msg, sizeof(msg), "main loop: %s", strerror(-rc));
out:
	if (*msg) {
		rbd_log(LOG_ERR, "%s", msg);
		tell_parent(msg);
	}
	/* Reverse order; the lease file stays for the next start. */
	if (stage >= 6)
		ctl_fini();
	if (stage >= 5) {
		state_flush();
		counters_fini();
		lease_fini();
		share_fini();
		peerenv_fini();
	}
	if (stage >= 4)
		serve_fini();
	if (stage >= 3)
		udevmon_fini();
	if (stage >= 1) {
		if (sig_fd >= 0) {
			sched_del_fd(sig_fd);
			close(sig_fd);
		}
		sched_fini();
	}
	return *msg ? EXIT_FAILURE : EXIT_SUCCESS;
}
