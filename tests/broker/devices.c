// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * broker_devices MODE ...: the device side of tests/broker/test_devices.py.
 *
 *   filter CGROUP MAJOR MINOR...  (root) attach to the cgroup v2 directory
 *                          CGROUP a device program (BPF_PROG_TYPE_CGROUP_DEVICE,
 *                          by bpf(2)) that denies the character devices
 *                          MAJOR:MINOR and allows every other device
 *   ask SOCKET [PATH...]   for each request line on stdin: a new connection,
 *                          the line sent with PATH... opened O_RDONLY
 *                          ("path:PATH": O_PATH) passed as SCM_RIGHTS; the
 *                          reply line to stdout. A PATH that cannot be
 *                          opened is said on stderr and left out
 *   leader-exit SOCKET REQUEST  the main thread exits (SYS_exit) while a
 *                          second one, once the leader shows as a zombie,
 *                          sends REQUEST and prints the reply line
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#define MAX_FDS 128

static int bpf(int cmd, union bpf_attr *a)
{
	return (int)syscall(__NR_bpf, cmd, a, sizeof(*a));
}

static struct bpf_insn insn(unsigned char code, unsigned char dst, unsigned char src,
			    short off, int imm)
{
	struct bpf_insn i = { .code = code, .dst_reg = dst, .src_reg = src, .off = off,
			      .imm = imm };

	return i;
}

static int filter(const char *cgroup, int major, char **minors, int nminor)
{
	struct bpf_insn prog[64];
	union bpf_attr a;
	char log[4096] = "";
	int n = 0, k, allow, cg, pfd;

	if (nminor > 40)
		return fprintf(stderr, "filter: at most 40 minors\n"), 2;
	allow = 6 + nminor;
	/* struct bpf_cgroup_dev_ctx: access_type (type | access << 16), major, minor. */
	prog[n++] = insn(BPF_LDX | BPF_MEM | BPF_W, 2, 1, 0, 0);
	prog[n++] = insn(BPF_ALU64 | BPF_AND | BPF_K, 2, 0, 0, 0xffff);
	prog[n] = insn(BPF_JMP | BPF_JNE | BPF_K, 2, 0, (short)(allow - n - 1), BPF_DEVCG_DEV_CHAR);
	n++;
	prog[n++] = insn(BPF_LDX | BPF_MEM | BPF_W, 3, 1, 4, 0);
	prog[n] = insn(BPF_JMP | BPF_JNE | BPF_K, 3, 0, (short)(allow - n - 1), major);
	n++;
	prog[n++] = insn(BPF_LDX | BPF_MEM | BPF_W, 4, 1, 8, 0);
	for (k = 0; k < nminor; k++, n++)
		prog[n] = insn(BPF_JMP | BPF_JEQ | BPF_K, 4, 0, (short)(allow + 2 - n - 1),
			       atoi(minors[k]));
	prog[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1);
	prog[n++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	prog[n++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	prog[n++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	a.insns = (unsigned long)prog;
	a.insn_cnt = (unsigned int)n;
	a.license = (unsigned long)"GPL";
	a.log_buf = (unsigned long)log;
	a.log_size = sizeof(log);
	a.log_level = 1;
	pfd = bpf(BPF_PROG_LOAD, &a);
	if (pfd < 0)
		return fprintf(stderr, "filter: BPF_PROG_LOAD: %s\n%s\n", strerror(errno), log), 1;
	cg = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg < 0)
		return fprintf(stderr, "filter: %s: %s\n", cgroup, strerror(errno)), 1;
	memset(&a, 0, sizeof(a));
	a.target_fd = (unsigned int)cg;
	a.attach_bpf_fd = (unsigned int)pfd;
	a.attach_type = BPF_CGROUP_DEVICE;
	if (bpf(BPF_PROG_ATTACH, &a) < 0)
		return fprintf(stderr, "filter: BPF_PROG_ATTACH %s: %s\n", cgroup, strerror(errno)), 1;
	/* The cgroup holds the program now; it goes with the cgroup. */
	close(pfd);
	close(cg);
	return 0;
}

static int conn(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* @line (newline included) with @fds, then the reply line to stdout. */
static int ask_one(const char *path, const char *line, const int *fds, int nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * MAX_FDS)];
	} ctl;
	struct iovec iov = { .iov_base = (void *)line, .iov_len = strlen(line) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	char reply[65536];
	size_t got = 0;
	ssize_t r;
	int fd = conn(path);

	if (fd < 0)
		return printf("no broker: %s\n", strerror(errno)), 1;
	if (nfds) {
		memset(&ctl, 0, sizeof(ctl));
		m.msg_control = ctl.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		CMSG_FIRSTHDR(&m)->cmsg_level = SOL_SOCKET;
		CMSG_FIRSTHDR(&m)->cmsg_type = SCM_RIGHTS;
		CMSG_FIRSTHDR(&m)->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(CMSG_FIRSTHDR(&m)), fds, sizeof(int) * (size_t)nfds);
	}
	if (sendmsg(fd, &m, MSG_NOSIGNAL) < 0)
		return printf("sendmsg: %s\n", strerror(errno)), close(fd), 1;
	while (got < sizeof(reply) - 1 && (r = read(fd, reply + got, sizeof(reply) - 1 - got)) > 0) {
		got += (size_t)r;
		if (memchr(reply, '\n', got))
			break;
	}
	close(fd);
	reply[got] = '\0';
	printf("%s%s", reply, got && reply[got - 1] == '\n' ? "" : "\n");
	fflush(stdout);
	return 0;
}

static int ask(const char *path, char **files, int nfiles)
{
	int fds[MAX_FDS], nfds = 0, i;
	char line[8192];

	for (i = 0; i < nfiles && nfds < MAX_FDS; i++) {
		int o_path = !strncmp(files[i], "path:", 5);
		const char *f = files[i] + (o_path ? 5 : 0);
		int fd = open(f, (o_path ? O_PATH : O_RDONLY | O_NONBLOCK) | O_CLOEXEC);

		if (fd < 0)
			fprintf(stderr, "ask: %s: %s\n", f, strerror(errno));
		else
			fds[nfds++] = fd;
	}
	fprintf(stderr, "ask: passing %d descriptor%s\n", nfds, nfds == 1 ? "" : "s");
	while (fgets(line, sizeof(line), stdin))
		ask_one(path, line, fds, nfds);
	return 0;
}

static const char *lx_path, *lx_request;

static void *leader_gone(void *arg)
{
	char path[64], stat[512];
	char line[8192];
	int i;

	(void)arg;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)getpid());
	for (i = 0; i < 5000; i++) {
		FILE *f = fopen(path, "re");
		char *p = NULL;

		if (f && fgets(stat, sizeof(stat), f))
			p = strrchr(stat, ')');
		if (f)
			fclose(f);
		if (p && p[1] == ' ' && p[2] == 'Z')
			break;
		usleep(1000);
	}
	snprintf(line, sizeof(line), "%s\n", lx_request);
	ask_one(lx_path, line, NULL, 0);
	exit(0);	/* exit_group: the whole process */
}

static int leader_exit(const char *path, const char *request)
{
	pthread_t t;

	lx_path = path;
	lx_request = request;
	if (pthread_create(&t, NULL, leader_gone, NULL))
		return 1;
	/* The thread-group leader alone ends; the process lives on in @t. */
	syscall(SYS_exit, 0);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "filter"))
		return filter(argv[2], atoi(argv[3]), argv + 4, argc - 4);
	if (argc >= 3 && !strcmp(argv[1], "ask"))
		return ask(argv[2], argv + 3, argc - 3);
	if (argc == 4 && !strcmp(argv[1], "leader-exit"))
		return leader_exit(argv[2], argv[3]);
	fprintf(stderr, "usage: broker_devices filter CGROUP MAJOR MINOR... | ask SOCKET [PATH...] | leader-exit SOCKET REQUEST\n");
	return 2;
}
