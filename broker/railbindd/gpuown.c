// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which GPUs a process may use, where the node says so itself: the cgroup
 * v1 devices controller (what Slurm's ConstrainDevices, and container
 * runtimes, write: deny everything, then allow "c 195:3 rwm" for each GPU
 * the job was given). A process cannot widen that list, unlike its own
 * CUDA_VISIBLE_DEVICES, so where it restricts GPUs it is the authority.
 *
 * A GPU is known by its device nodes: the NVIDIA driver's /dev/nvidiaN
 * (major 195, minor as the topology knows it, else from
 * /proc/driver/nvidia/gpus/PCI/information; CUDA
 * needs that node, a DRM node of the same GPU gives no compute), else its
 * DRM render nodes (AMD: ROCm opens /dev/dri/renderD*) and accel nodes
 * (Intel Gaudi and other compute accelerators).
 *
 * The cgroup v2 device controller is a BPF program that cannot be read
 * back. There the broker only learns that one applies to the process (a
 * BPF_PROG_QUERY of its cgroup), and the process proves which GPUs it may
 * open by passing their opened nodes (SCM_RIGHTS, ctl.c): the kernel ran
 * the program when it opened them. docs/PROTOCOL.md says what each kind
 * of node gets.
 *
 * Where the broker cannot tell (the cgroup file unreadable, a path longer
 * than the broker reads, the thread-group leader gone: the kernel then
 * shows "/" for every v1 hierarchy), it refuses rather than read "/" as
 * the root cgroup that allows every device.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "affinity.h"
#include "railbindd.h"

#define GPU_MAX_NODES 8
#define NVIDIA_MAJOR 195

struct gpu_nodes {
	size_t n;
	unsigned int major[GPU_MAX_NODES], minor[GPU_MAX_NODES];
};

struct rule {
	char type;		/* 'a', 'b' or 'c' */
	long major, minor;	/* -1: any */
	bool use;		/* read or write access */
};

struct gpuown_rules {
	bool v1;	/* a devices list that restricts: r[] */
	bool filter;	/* a cgroup v2 device program applies */
	char deny[200];	/* set: the broker cannot tell, and refuses */
	size_t n;
	struct rule r[];
};

/* The kernel's PF_EXITING (include/linux/sched.h), in /proc/<pid>/stat's flags. */
#define TASK_PF_EXITING 0x00000004u
/* The longest cgroup path the broker looks up; a longer one is refused. */
#define CGROUP_PATH_MAX 4096
/* Processes last seen in a non-root v1 devices cgroup (by pid and start). */
#define SEEN_SLOTS 4096

static struct gpu_nodes *nodes;
static size_t ngpu;
static bool known;	/* some GPU's device numbers are known */
static struct {
	pid_t pid;
	unsigned long long start;
} seen[SEEN_SLOTS];

static int read_dev(const char *path, unsigned int *major, unsigned int *minor)
{
	FILE *f = fopen(path, "re");
	int rc;

	if (!f)
		return -errno;
	rc = fscanf(f, "%u:%u", major, minor) == 2 ? 0 : -EINVAL;
	fclose(f);
	return rc;
}

static void add_node(struct gpu_nodes *g, unsigned int major, unsigned int minor)
{
	if (g->n < GPU_MAX_NODES) {
		g->major[g->n] = major;
		g->minor[g->n] = minor;
		g->n++;
	}
}

/* The NVIDIA driver's minor of the GPU at @pci, or -1. */
static long nvidia_minor(const char *root, const char *pci)
{
	char path[512], line[256];
	long minor = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/driver/nvidia/gpus/%s/information", root, pci);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Device Minor:", 13)) {
			char *end;

			minor = strtol(line + 13, &end, 10);
			if (end == line + 13 || minor < 0 || minor > 254)
				minor = -1;
			break;
		}
	if (f)
		fclose(f);
	return minor;
}

/* /sys/bus/pci/devices/PCI/@class/@prefix*: the GPU's DRM or accel nodes. */
static void sysfs_nodes(const char *root, const char *pci, const char *class,
			const char *prefix, struct gpu_nodes *g)
{
	char path[512];
	struct dirent *e;
	unsigned int major = 0, minor = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/%s", root, pci, class);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/%s/%s/dev", root, pci,
			 class, e->d_name);
		if (read_dev(path, &major, &minor) == 0)
			add_node(g, major, minor);
	}
	if (d)
		closedir(d);
}

void gpuown_refresh(const struct aff_topo *t)
{
	const char *root = conf.root ? conf.root : "";
	size_t i;

	free(nodes);
	nodes = NULL;
	ngpu = 0;
	known = false;
	if (!t || !aff_topo_gpu_count(t))
		return;
	nodes = calloc(aff_topo_gpu_count(t), sizeof(*nodes));
	if (!nodes)
		return;
	ngpu = aff_topo_gpu_count(t);
	for (i = 0; i < ngpu; i++) {
		const char *pci = aff_topo_gpu_pci(t, i);
		int minor = aff_topo_gpu_minor(t, i);
		/* The minor the topology knows (NVML, a snapshot), else the driver's file. */
		long nv = minor >= 0 && minor <= 254 ? minor : nvidia_minor(root, pci);

		if (nv >= 0) {
			add_node(&nodes[i], NVIDIA_MAJOR, (unsigned int)nv);
		} else {
			sysfs_nodes(root, pci, "drm", "renderD", &nodes[i]);
			sysfs_nodes(root, pci, "accel", "accel", &nodes[i]);
		}
		known = known || nodes[i].n;
	}
}

static int number(const char **p, long *out)
{
	char *end;

	if (**p == '*') {
		*out = -1;
		(*p)++;
		return 0;
	}
	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	*out = strtol(*p, &end, 10);
	*p = end;
	return 0;
}

/*
 * devices.list: "TYPE MAJOR:MINOR ACCESS" per line. A cgroup that allows
 * by default shows the single line "a *:* rwm" (and hides its denials):
 * no restriction to speak of, so NULL.
 */
struct gpuown_rules *gpuown_rules_parse(const char *list)
{
	struct gpuown_rules *r;
	const char *p;
	size_t lines = 1;

	for (p = list; *p; p++)
		lines += *p == '\n';
	r = calloc(1, sizeof(*r) + lines * sizeof(r->r[0]));
	if (!r)
		return NULL;
	r->v1 = true;
	for (p = list; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n')) {
		struct rule *x = &r->r[r->n];
		const char *q = p;

		if (!strchr("abc", *q) || q[1] != ' ')
			continue;
		x->type = *q;
		q += 2;
		if (number(&q, &x->major) < 0 || *q++ != ':' || number(&q, &x->minor) < 0 ||
		    *q++ != ' ')
			continue;
		x->use = strcspn(q, "\n") > strcspn(q, "rw");
		if (x->type == 'a' && x->major < 0 && x->minor < 0 && x->use) {
			free(r);
			return NULL;
		}
		r->n++;
	}
	return r;
}

void gpuown_rules_free(struct gpuown_rules *r)
{
	free(r);
}

static bool allows(const struct gpuown_rules *r, unsigned int major, unsigned int minor)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct rule *x = &r->r[i];

		if (x->use && (x->type == 'a' || x->type == 'c') &&
		    (x->major < 0 || (unsigned long)x->major == major) &&
		    (x->minor < 0 || (unsigned long)x->minor == minor))
			return true;
	}
	return false;
}

int gpuown_allowed(const struct gpuown_rules *r, unsigned char *mask, size_t n)
{
	size_t i, k;

	if (!r || !r->v1 || !known || n != ngpu)
		return 0;
	for (i = 0; i < n; i++) {
		mask[i] = 0;
		for (k = 0; k < nodes[i].n; k++)
			if (allows(r, nodes[i].major[k], nodes[i].minor[k]))
				mask[i] = 1;
	}
	return 1;
}

/* The thread-group leader's /proc/<pid>/stat: pid, state, flags, start time. */
struct leader {
	long pid;
	char state;
	unsigned int flags;
	unsigned long long start;
};

static int read_at(int dirfd, const char *name, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n = 0;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	buf[0] = '\0';
	if (fd < 0)
		return -EIO;
	while (got < len - 1 && ((n = read(fd, buf + got, len - 1 - got)) > 0 ||
				 (n < 0 && errno == EINTR)))
		got += n > 0 ? (size_t)n : 0;
	close(fd);
	buf[got] = '\0';
	return n < 0 ? -EIO : (int)got;
}

static int read_leader(int dirfd, struct leader *l)
{
	char buf[1024], *p;

	if (read_at(dirfd, "stat", buf, sizeof(buf)) <= 0)
		return -EIO;
	l->pid = strtol(buf, NULL, 10);
	/* comm may hold spaces and parentheses: fields count from the last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 &l->state, &l->flags, &l->start) != 3)
		return -EIO;
	return 0;
}

static size_t seen_slot(long pid, unsigned long long start)
{
	return (size_t)(((unsigned long long)pid * 2654435761u) ^ start) % SEEN_SLOTS;
}

static void deny(struct gpuown_rules *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void deny(struct gpuown_rules *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->deny, sizeof(r->deny), fmt, ap);
	va_end(ap);
}

/* Whether a cgroup v2 device program applies to the cgroup @dir (v2 path). */
static bool v2_filtered(const char *dir)
{
	static const char *const mounts[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup", NULL };
	const char *root = conf.root ? conf.root : "";
	char path[CGROUP_PATH_MAX + 256];
	size_t i;

	for (i = 0; mounts[i]; i++) {
		union bpf_attr a;
		struct statfs sf;
		int fd, rc;

		snprintf(path, sizeof(path), "%s%s%s", root, mounts[i], dir);
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* On a hybrid node /sys/fs/cgroup is a tmpfs: the v2 tree is "unified". */
		if (fstatfs(fd, &sf) < 0 || sf.f_type != CGROUP2_SUPER_MAGIC) {
			close(fd);
			continue;
		}
		memset(&a, 0, sizeof(a));
		a.query.target_fd = (unsigned int)fd;
		a.query.attach_type = BPF_CGROUP_DEVICE;
		a.query.query_flags = BPF_F_QUERY_EFFECTIVE;
		rc = (int)syscall(__NR_bpf, BPF_PROG_QUERY, &a, sizeof(a));
		close(fd);
		/* No answer (no CAP_NET_ADMIN, an old kernel): no authority, as before. */
		return rc == 0 && a.query.prog_cnt > 0;
	}
	return false;
}

struct gpuown_rules *gpuown_read(int dirfd, const char *cg)
{
	const char *root = conf.root ? conf.root : "";
	struct gpuown_rules *r = NULL, *parsed;
	char path[CGROUP_PATH_MAX + 256], *dir = NULL, *list = NULL;
	struct leader l = { 0 };
	size_t slot;
	int len;

	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	/* Checked after @cg was read: a leader alive now was alive then. */
	if (read_leader(dirfd, &l) < 0) {
		deny(r, "cannot read the process's /proc stat: its devices cgroup cannot be judged");
		return r;
	}
	if (l.state == 'Z' || l.state == 'X' || (l.flags & TASK_PF_EXITING)) {
		deny(r, "the thread-group leader of pid %ld has exited (a thread of it asks): its cgroups no longer show",
		     l.pid);
		return r;
	}
	if (!cg) {
		deny(r, "cannot read /proc/%ld/cgroup", l.pid);
		return r;
	}
	slot = seen_slot(l.pid, l.start);
	dir = peer_cgroup_path(cg, "devices");
	if (dir && strcmp(dir, "/")) {
		len = *dir ? snprintf(path, sizeof(path), "%s/sys/fs/cgroup/devices%s%sdevices.list",
				      root, dir, dir[strlen(dir) - 1] == '/' ? "" : "/") : -1;
		if (strlen(dir) > CGROUP_PATH_MAX || len < 0 || (size_t)len >= sizeof(path)) {
			deny(r, "the devices cgroup path of pid %ld is empty or longer than the broker reads",
			     l.pid);
		} else if (!(list = malloc(1u << 20)) || read_at(AT_FDCWD, path, list, 1u << 20) < 0) {
			deny(r, "cannot read the devices list of pid %ld's devices cgroup", l.pid);
		} else if ((parsed = gpuown_rules_parse(list))) {
			free(r);
			r = parsed;
		}
		seen[slot].pid = (pid_t)l.pid;
		seen[slot].start = l.start;
	} else if (dir && seen[slot].pid == l.pid && seen[slot].start == l.start) {
		deny(r, "pid %ld was in a devices cgroup and now shows the root one", l.pid);
	} else {
		free(dir);
		dir = peer_cgroup_path(cg, "");
		if (dir && strlen(dir) > CGROUP_PATH_MAX)
			deny(r, "the cgroup path of pid %ld is longer than the broker reads", l.pid);
		else if (dir)
			r->filter = v2_filtered(dir);
	}
	free(list);
	free(dir);
	return r;
}

void gpuown_proof_add(struct gpuown_proof *p, int fd)
{
	int fl = fcntl(fd, F_GETFL);
	struct stat st;
	size_t i;

	/* An O_PATH descriptor is had without the device's permission check. */
	if (fl < 0 || (fl & O_PATH) || fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode))
		return;
	for (i = 0; i < p->n; i++)
		if (p->rdev[i] == st.st_rdev)
			return;
	if (p->n < GPUOWN_MAX_PROOF)
		p->rdev[p->n++] = st.st_rdev;
}

int gpuown_decide(const struct gpuown_rules *r, const struct gpuown_proof *p,
		  unsigned char *mask, size_t n, char *why, size_t whylen)
{
	bool any = false;
	size_t i, j, k;

	if (!r || r->deny[0]) {
		snprintf(why, whylen, "%s", r ? r->deny : "out of memory reading its devices cgroup");
		return -EPERM;
	}
	if (r->v1)
		return gpuown_allowed(r, mask, n);
	if (!r->filter || !p || p->cut || !p->n || !known || n != ngpu)
		return 0;
	for (i = 0; i < n; i++) {
		mask[i] = 0;
		for (k = 0; k < nodes[i].n; k++)
			for (j = 0; j < p->n; j++)
				if (major(p->rdev[j]) == nodes[i].major[k] &&
				    minor(p->rdev[j]) == nodes[i].minor[k])
					mask[i] = 1;
		any = any || mask[i];
	}
	/* Descriptors of no GPU prove nothing: as without any. */
	return any;
}

void gpuown_fini(void)
{
	free(nodes);
	nodes = NULL;
	ngpu = 0;
	known = false;
}
