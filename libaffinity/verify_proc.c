// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What one process really uses, read from /proc/PID and nothing else: the
 * devices behind its open files, the CPUs its threads may run on
 * (sched_getaffinity per thread) and ran on last (task/TID/stat field 39),
 * its memory policy and where its anonymous memory sits (numa_maps), the few
 * environment variables that steer NCCL, UCX and CUDA, and its cgroup's
 * cpuset.
 *
 * Every file is opened relative to one descriptor of /proc/PID taken first:
 * when the process exits, reads through it fail rather than read whichever
 * process gets the pid next, and a last read of its stat at the end tells
 * "exited during the scan" (and, when /proc/PID is back with another start
 * time, "pid reused") from a clean read. Nothing is written, nothing signalled.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "verify.h"

const char *const aff_venv_names[AFF_VENV_COUNT] = {
	"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
	"HIP_VISIBLE_DEVICES", "NCCL_IB_HCA", "UCX_NET_DEVICES",
	"RAILBIND_GPU", "RAILBIND_CPUS", "RAILBIND_MEMS", "RAILBIND_NICS",
	"NCCL_IB_TC", "NCCL_IB_FIFO_TC", "NCCL_IB_SL", "UCX_IB_TRAFFIC_CLASS", "UCX_IB_SL",
	"RAILBIND_LOCAL_RANK", "LOCAL_RANK", "RAILBIND_JOB",
};

/* aff_local_rank()'s and aff_job_name()'s variables, first set wins. */
static const char *const rank_vars[] = {
	"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
	"PMI_LOCAL_RANK", "PALS_LOCAL_RANKID", NULL,
};
static const char *const job_vars[] = {
	"RAILBIND_JOB", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID", "PMIX_NAMESPACE",
	"OMPI_MCA_ess_base_jobid", NULL,
};

/* Bounds: a hostile process may have huge maps or environment. */
#define MAX_ENVIRON (1u << 20)
#define MAX_NUMA_MAPS (64u << 20)
#define MAX_VALUE 1024

/* Read @name under @dirfd, at most @max bytes, NUL-terminated; -errno. */
static int read_at(int dirfd, const char *name, size_t max, char **out, size_t *len)
{
	size_t cap = 4096, got = 0;
	char *buf = malloc(cap + 1), *nb;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	*out = NULL;
	if (fd < 0 || !buf) {
		int e = fd < 0 ? errno : ENOMEM;

		if (fd >= 0)
			close(fd);
		free(buf);
		return e > 0 ? -e : -EIO;
	}
	for (;;) {
		if (got == cap) {
			if (cap >= max)
				break;
			cap = cap * 2 > max ? max : cap * 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				close(fd);
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
		}
		n = read(fd, buf + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			close(fd);
			free(buf);
			return -e;
		}
		if (!n)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*out = buf;
	if (len)
		*len = got;
	return 0;
}

/* The fields after "(comm)" of a stat line; comm may hold ')' and blanks. */
static const char *stat_fields(const char *s, char *comm, size_t commlen)
{
	const char *open = s ? strchr(s, '(') : NULL, *close = s ? strrchr(s, ')') : NULL;

	if (!open || !close || close < open)
		return NULL;
	if (comm)
		snprintf(comm, commlen, "%.*s", (int)(close - open - 1), open + 1);
	return close[1] == ' ' ? close + 2 : NULL;
}

/* Field @n (1-based, as proc(5) counts; n >= 3) of a stat line. */
static int stat_field(const char *s, int n, unsigned long long *out, char *state)
{
	const char *p = stat_fields(s, NULL, 0);
	char *end;
	int i;

	if (!p)
		return -EINVAL;
	if (state)
		*state = *p;
	for (i = 3; i < n; i++) {
		p = strchr(p, ' ');
		if (!p)
			return -EINVAL;
		p++;
	}
	errno = 0;
	*out = strtoull(p, &end, 10);
	return errno || end == p ? -EINVAL : 0;
}

__attribute__((format(printf, 3, 4)))
static void set_state(struct aff_vproc *p, enum aff_vp_state st, const char *fmt, ...)
{
	va_list ap;

	p->state = st;
	va_start(ap, fmt);
	vsnprintf(p->reason, sizeof(p->reason), fmt, ap);
	va_end(ap);
}

static void note_unreadable(struct aff_vproc *p, unsigned bit, const char *what, int err)
{
	int i = __builtin_ctz(bit);

	p->unreadable |= bit;
	snprintf(p->unreadable_why[i], sizeof(p->unreadable_why[i]), "cannot read /proc/%d/%s: %s",
		 (int)p->pid, what, strerror(err));
}

static int hold(struct aff_vproc *p, const struct aff_vdev *d, const char *path)
{
	const struct aff_vdev **h;
	char **hp;
	size_t i;

	for (i = 0; i < p->nheld; i++)
		if (p->held[i] == d && (d->pci[0] || !strcmp(p->held_path[i], path)))
			return 0;
	h = realloc(p->held, (p->nheld + 1) * sizeof(*h));
	if (!h)
		return -ENOMEM;
	p->held = h;
	hp = realloc(p->held_path, (p->nheld + 1) * sizeof(*hp));
	if (!hp)
		return -ENOMEM;
	p->held_path = hp;
	p->held_path[p->nheld] = strdup(path);
	if (!p->held_path[p->nheld])
		return -ENOMEM;
	p->held[p->nheld++] = d;
	return 0;
}

/* The devices behind the open files. 1: done, 0: cannot tell (state set). */
static int read_fds(const struct aff_vdevs *t, int dfd, struct aff_vproc *p)
{
	int fdd = openat(dfd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *e;
	DIR *dp;
	int rc = 1;

	if (fdd < 0) {
		if (errno == EACCES || errno == EPERM)
			set_state(p, AFF_VP_DENIED, "cannot read /proc/%d/fd: %s", (int)p->pid,
				  strerror(errno));
		else
			set_state(p, AFF_VP_GONE, "process %d exited during the scan (/proc/%d/fd: %s)",
				  (int)p->pid, (int)p->pid, strerror(errno));
		return 0;
	}
	dp = fdopendir(fdd);
	if (!dp) {
		close(fdd);
		return -ENOMEM;
	}
	while ((e = readdir(dp)) && rc > 0) {
		char target[PATH_MAX];
		const struct aff_vdev *d;
		struct stat st;
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		n = readlinkat(fdd, e->d_name, target, sizeof(target) - 1);
		if (n <= 0)
			continue;	/* closed meanwhile */
		target[n] = '\0';
		/* Sockets, pipes, anon inodes and ordinary files go by without a stat. */
		if (strncmp(target, "/dev/", 5) &&
		    !(t->root && !strncmp(target, t->root, t->rootlen) &&
		      target[t->rootlen] == '/'))
			continue;
		if (fstatat(fdd, e->d_name, &st, 0) < 0)
			continue;
		d = aff_vdevs_match(t, target, &st);
		if (d && hold(p, d, target) < 0)
			rc = -ENOMEM;
	}
	closedir(dp);
	return rc;
}

/* Each thread's affinity (their union) and the CPU it ran on last. */
static int read_tasks(int dfd, struct aff_vproc *p)
{
	int tdd = openat(dfd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	unsigned char *set = malloc(AFF_MAX_CPU / 8);
	struct dirent *e;
	DIR *dp;

	if (tdd < 0 || !set) {
		int err = tdd < 0 ? errno : ENOMEM;

		if (tdd >= 0)
			close(tdd);
		free(set);
		if (err == ENOMEM)
			return -ENOMEM;
		note_unreadable(p, AFF_VP_NO_TASKS, "task", err);
		return 0;
	}
	dp = fdopendir(tdd);
	if (!dp) {
		close(tdd);
		free(set);
		return -ENOMEM;
	}
	while ((e = readdir(dp))) {
		char name[64], *stat = NULL;
		unsigned long long cpu;
		long tid, n, b;
		char *end;
		int c;

		if (e->d_name[0] == '.')
			continue;
		tid = strtol(e->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		snprintf(name, sizeof(name), "%ld/stat", tid);
		if (read_at(tdd, name, 4096, &stat, NULL) < 0)
			continue;	/* the thread ended meanwhile */
		if (stat_field(stat, 39, &cpu, NULL) == 0 && cpu < AFF_MAX_CPU)
			hwloc_bitmap_set(p->ran, (unsigned)cpu);
		free(stat);
		p->nthreads++;
		/*
		 * Needs no permission. The raw call returns how many bytes of mask the
		 * kernel has (nr_cpu_ids), so only those are looked at.
		 */
		n = syscall(SYS_sched_getaffinity, (pid_t)tid, (size_t)AFF_MAX_CPU / 8, set);
		for (b = 0; b < n; b++)
			for (c = 0; set[b] && c < 8; c++)
				if (set[b] & (1u << c))
					hwloc_bitmap_set(p->allowed, (unsigned)(b * 8 + c));
	}
	closedir(dp);
	free(set);
	if (!p->nthreads)
		note_unreadable(p, AFF_VP_NO_TASKS, "task", ESRCH);
	return 0;
}

static int add_mem(struct aff_vproc *p, int node, unsigned long long kb)
{
	struct aff_vmem *m;
	size_t i;

	for (i = 0; i < p->nmem; i++)
		if (p->mem[i].node == node) {
			p->mem[i].kb += kb;
			return 0;
		}
	m = realloc(p->mem, (p->nmem + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	p->mem = m;
	p->mem[p->nmem].node = node;
	p->mem[p->nmem++].kb = kb;
	return 0;
}

static int add_pol(struct aff_vproc *p, const char *pol, size_t len, unsigned long long kb)
{
	struct aff_vpol *v;
	size_t i;

	for (i = 0; i < p->npol; i++)
		if (strlen(p->pol[i].policy) == len && !strncmp(p->pol[i].policy, pol, len)) {
			p->pol[i].kb += kb;
			return 0;
		}
	v = realloc(p->pol, (p->npol + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->pol = v;
	p->pol[p->npol].policy = strndup(pol, len);
	if (!p->pol[p->npol].policy)
		return -ENOMEM;
	p->pol[p->npol++].kb = kb;
	return 0;
}

/*
 * The policy at the start of a numa_maps line (after the address): one of the
 * kernel's names (two of them hold a blank), then "=flags" and ":nodes" up to
 * the next blank. Its length, 0 when the line starts otherwise.
 */
static size_t policy_len(const char *s)
{
	static const char *const names[] = {
		"weighted interleave", "prefer (many)", "interleave", "default",
		"prefer", "bind", "local",
	};
	size_t i, n;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		n = strlen(names[i]);
		if (!strncmp(s, names[i], n) && (s[n] == ' ' || s[n] == '=' || s[n] == ':' ||
						 !s[n]))
			break;
	}
	if (i == sizeof(names) / sizeof(names[0]))
		return 0;
	while (s[n] && s[n] != ' ')
		n++;
	return n;
}

/*
 * numa_maps: only anonymous mappings count (heap, stack, malloc'ed and pinned
 * buffers): page cache pages of shared libraries sit wherever the file was
 * first read, by any process. File-backed lines are the only ones holding a
 * name the process chose, so nothing a process names can pose as a counter.
 */
static int parse_numa_maps(char *text, struct aff_vproc *p)
{
	char *line, *save = NULL;
	const char *stack_pol = NULL, *heap_pol = NULL;
	size_t stack_len = 0, heap_len = 0;
	int rc = 0;

	for (line = strtok_r(text, "\n", &save); line && !rc; line = strtok_r(NULL, "\n", &save)) {
		char *pol = strchr(line, ' '), *tok, *tsave = NULL;
		unsigned long long pagekb = 4, pages[64] = { 0 }, total = 0;
		bool is_stack = false, is_heap = false;
		size_t plen, i;

		if (!pol)
			continue;
		pol++;
		plen = policy_len(pol);
		if (!plen)
			continue;
		if (pol[plen] == ' ' && !strncmp(pol + plen + 1, "file=", 5))
			continue;
		if (!pol[plen])
			continue;	/* nothing resident, nothing to count */
		pol[plen] = '\0';
		for (tok = strtok_r(pol + plen + 1, " ", &tsave); tok;
		     tok = strtok_r(NULL, " ", &tsave)) {
			unsigned long node, v;
			char *end;

			if (!strcmp(tok, "stack")) {
				is_stack = true;
			} else if (!strcmp(tok, "heap")) {
				is_heap = true;
			} else if (tok[0] == 'N' && isdigit((unsigned char)tok[1])) {
				node = strtoul(tok + 1, &end, 10);
				if (*end != '=' || node >= 64)
					continue;
				v = strtoul(end + 1, &end, 10);
				if (!*end)
					pages[node] += v;
			} else if (!strncmp(tok, "kernelpagesize_kB=", 18)) {
				pagekb = strtoull(tok + 18, &end, 10);
				if (*end || !pagekb)
					pagekb = 4;
			}
		}
		for (i = 0; i < 64 && !rc; i++)
			if (pages[i]) {
				rc = add_mem(p, (int)i, pages[i] * pagekb);
				total += pages[i] * pagekb;
			}
		if (!rc)
			rc = add_pol(p, pol, plen, total);
		if (is_stack && !stack_pol) {
			stack_pol = pol;
			stack_len = plen;
		}
		if (is_heap && !heap_pol) {
			heap_pol = pol;
			heap_len = plen;
		}
	}
	if (!rc && (stack_pol || heap_pol)) {
		p->task_policy = stack_pol ? strndup(stack_pol, stack_len) :
					     strndup(heap_pol, heap_len);
		if (!p->task_policy)
			rc = -ENOMEM;
	}
	return rc;
}

static int by_kb(const void *a, const void *b)
{
	const struct aff_vpol *x = a, *y = b;

	return x->kb < y->kb ? 1 : x->kb > y->kb ? -1 : strcmp(x->policy, y->policy);
}

static int read_numa_maps(int dfd, struct aff_vproc *p)
{
	char *text;
	int rc = read_at(dfd, "numa_maps", MAX_NUMA_MAPS, &text, NULL);

	if (rc == -ENOMEM)
		return rc;
	if (rc < 0) {
		note_unreadable(p, AFF_VP_NO_NUMA_MAPS, "numa_maps", -rc);
		return 0;
	}
	rc = parse_numa_maps(text, p);
	free(text);
	if (p->npol > 1)
		qsort(p->pol, p->npol, sizeof(*p->pol), by_kb);
	return rc;
}

static int set_env_value(char **slot, const char *v, size_t len)
{
	if (*slot)
		return 0;
	*slot = strndup(v, len < MAX_VALUE ? len : MAX_VALUE);
	return *slot ? 0 : -ENOMEM;
}

/* The variables of aff_venv_names from an environ block (NUL-separated, @len bytes). */
static int parse_environ(struct aff_vproc *p, const char *env, size_t len)
{
	const char *rank_from = NULL, *job_from = NULL;
	int rank_prio = 99, job_prio = 99, rc = 0;
	size_t off;

	/* Like getenv(), the first of a name wins; a launcher's first variable too. */
	for (off = 0; off < len && !rc; off += strnlen(env + off, len - off) + 1) {
		const char *var = env + off, *eq = memchr(var, '=', strnlen(var, len - off));
		size_t nlen, vlen, i;

		if (!eq)
			continue;
		nlen = (size_t)(eq - var);
		vlen = strnlen(eq + 1, len - off - nlen - 1);
		for (i = 0; i < AFF_VENV_LOCAL_RANK && !rc; i++)
			if (strlen(aff_venv_names[i]) == nlen && !strncmp(var, aff_venv_names[i], nlen))
				rc = set_env_value(&p->env[i], eq + 1, vlen);
		for (i = 0; rank_vars[i] && !rc; i++)
			if ((int)i < rank_prio && strlen(rank_vars[i]) == nlen &&
			    !strncmp(var, rank_vars[i], nlen)) {
				free(p->env[AFF_VENV_LOCAL_RANK]);
				p->env[AFF_VENV_LOCAL_RANK] = NULL;
				rc = set_env_value(&p->env[AFF_VENV_LOCAL_RANK], eq + 1, vlen);
				rank_prio = (int)i;
				rank_from = rank_vars[i];
			}
		for (i = 0; job_vars[i] && !rc; i++)
			if ((int)i < job_prio && strlen(job_vars[i]) == nlen &&
			    !strncmp(var, job_vars[i], nlen) && vlen) {
				free(p->env[AFF_VENV_JOB]);
				p->env[AFF_VENV_JOB] = NULL;
				rc = set_env_value(&p->env[AFF_VENV_JOB], eq + 1, vlen);
				job_prio = (int)i;
				job_from = job_vars[i];
			}
	}
	p->env_rank_var = rank_from;
	p->env_job_var = job_from;
	return rc;
}

static int read_environ(int dfd, struct aff_vproc *p)
{
	size_t len = 0;
	char *env;
	int rc = read_at(dfd, "environ", MAX_ENVIRON, &env, &len);

	if (rc == -ENOMEM)
		return rc;
	if (rc < 0) {
		note_unreadable(p, AFF_VP_NO_ENV, "environ", -rc);
		return 0;
	}
	rc = parse_environ(p, env, len);
	free(env);
	return rc;
}

/* cpuset.cpus.effective of the process's cgroup (v2), under the root. */
static int read_cpuset(const struct aff_vdevs *t, int dfd, struct aff_vproc *p)
{
	char *cg, *line, *save = NULL;
	int rc = read_at(dfd, "cgroup", 65536, &cg, NULL);

	if (rc < 0)
		return rc == -ENOMEM ? rc : 0;
	for (line = strtok_r(cg, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char path[PATH_MAX], val[4096];
		ssize_t n;
		int fd;

		if (strncmp(line, "0::/", 4) || strstr(line, "/.."))
			continue;
		if (snprintf(path, sizeof(path), "%s/sys/fs/cgroup%s/cpuset.cpus.effective",
			     t->root ? t->root : "", line + 3) >= (int)sizeof(path))
			break;
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			break;
		n = read(fd, val, sizeof(val) - 1);
		close(fd);
		while (n > 0 && isspace((unsigned char)val[n - 1]))
			n--;
		if (n > 0) {
			val[n] = '\0';
			p->cpuset = strdup(val);
			rc = p->cpuset ? 0 : -ENOMEM;
		}
		break;
	}
	free(cg);
	return rc;
}

static void read_cmdline(int dfd, struct aff_vproc *p)
{
	size_t len = 0, i;
	char *s;

	if (read_at(dfd, "cmdline", sizeof(p->cmdline) - 1, &s, &len) < 0 || !s)
		return;
	for (i = 0; i < len; i++)
		if (!s[i] || !isprint((unsigned char)s[i]))
			s[i] = ' ';
	while (len && s[len - 1] == ' ')
		len--;
	s[len] = '\0';
	snprintf(p->cmdline, sizeof(p->cmdline), "%s", s);
	free(s);
}

/* Whether the process behind @dfd is still the one read: 0 yes, else the state. */
static enum aff_vp_state still_there(int dfd, const struct aff_vproc *p)
{
	char *s = NULL, path[64], st = 0;
	unsigned long long start;
	int fd, rc = read_at(dfd, "stat", 4096, &s, NULL);

	if (rc == 0) {
		rc = stat_field(s, 22, &start, &st);
		free(s);
		if (rc == 0 && st != 'Z' && st != 'X')
			return AFF_VP_OK;
		return AFF_VP_GONE;
	}
	/* Gone; is the pid someone else's already? */
	snprintf(path, sizeof(path), "/proc/%d", (int)p->pid);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return AFF_VP_GONE;
	rc = read_at(fd, "stat", 4096, &s, NULL);
	close(fd);
	if (rc == 0 && stat_field(s, 22, &start, NULL) == 0 && start != p->start) {
		free(s);
		return AFF_VP_REUSED;
	}
	free(s);
	return AFF_VP_GONE;
}

int aff_vproc_parse(struct aff_vproc *p, const char *statline, char *numa_maps, const char *env,
		    size_t envlen)
{
	unsigned long long cpu;
	int rc;

	memset(p, 0, sizeof(*p));
	p->allowed = hwloc_bitmap_alloc();
	p->ran = hwloc_bitmap_alloc();
	if (!p->allowed || !p->ran)
		return -ENOMEM;
	if (stat_fields(statline, p->comm, sizeof(p->comm)) &&
	    stat_field(statline, 22, &p->start, NULL) == 0 &&
	    stat_field(statline, 39, &cpu, NULL) == 0 && cpu < AFF_MAX_CPU)
		hwloc_bitmap_set(p->ran, (unsigned)cpu);
	rc = parse_numa_maps(numa_maps, p);
	if (!rc && p->npol > 1)
		qsort(p->pol, p->npol, sizeof(*p->pol), by_kb);
	if (!rc)
		rc = parse_environ(p, env, envlen);
	return rc;
}

bool aff_vproc_uses_devices(const struct aff_vproc *p)
{
	size_t i;

	for (i = 0; i < p->nheld; i++)
		if (p->held[i]->kind != AFF_VDEV_NV_CTL)
			return true;
	return false;
}

#define STEP(name)                                             \
	do {                                                   \
		if (hook)                                      \
			hook(pid, name, hook_data);            \
	} while (0)

int aff_vproc_read(const struct aff_vdevs *t, pid_t pid, bool all, long uid,
		   aff_vproc_hook hook, void *hook_data, struct aff_vproc *p)
{
	char path[64], *stat = NULL, st = 0;
	struct stat sb;
	int dfd, rc;

	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->allowed = hwloc_bitmap_alloc();
	p->ran = hwloc_bitmap_alloc();
	if (!p->allowed || !p->ran)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/*
	 * For one user's request (the broker's verify op), another user's process
	 * and no process at all read the same: the broker sees every pid, also
	 * those hidepid=2 hides from that user, and says nothing of them.
	 */
	if (uid >= 0 && (dfd < 0 || fstat(dfd, &sb) < 0 || (long)sb.st_uid != uid)) {
		p->uid = (uid_t)uid;
		set_state(p, AFF_VP_DENIED,
			  "no process %d of uid %ld (it exited, or it is another user's)", (int)pid,
			  uid);
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	if (dfd < 0) {
		if (errno == ENOENT || errno == ESRCH)
			set_state(p, AFF_VP_GONE,
				  "no process %d (it exited, or /proc hides it: hidepid)", (int)pid);
		else
			set_state(p, AFF_VP_DENIED, "cannot open /proc/%d: %s", (int)pid,
				  strerror(errno));
		return 0;
	}
	if (fstat(dfd, &sb) == 0)
		p->uid = sb.st_uid;
	rc = read_at(dfd, "stat", 4096, &stat, NULL);
	if (rc == -ENOMEM)
		goto out;
	if (rc < 0 || !stat_fields(stat, p->comm, sizeof(p->comm)) ||
	    stat_field(stat, 22, &p->start, &st) < 0) {
		set_state(p, AFF_VP_GONE, "process %d exited (/proc/%d/stat: %s)", (int)pid,
			  (int)pid, strerror(rc < 0 ? -rc : EINVAL));
		rc = 0;
		goto out;
	}
	if (st == 'Z' || st == 'X') {
		set_state(p, AFF_VP_GONE,
			  "process %d has exited (a zombie its parent has not reaped)", (int)pid);
		rc = 0;
		goto out;
	}
	STEP("stat");
	read_cmdline(dfd, p);
	rc = read_fds(t, dfd, p);
	if (rc <= 0)
		goto out;
	STEP("fds");
	rc = 0;
	if (all && !aff_vproc_uses_devices(p))
		goto out;
	rc = read_tasks(dfd, p);
	STEP("tasks");
	if (!rc)
		rc = read_numa_maps(dfd, p);
	if (!rc)
		rc = read_environ(dfd, p);
	if (!rc)
		rc = read_cpuset(t, dfd, p);
	STEP("end");
	if (!rc) {
		enum aff_vp_state now = still_there(dfd, p);

		if (now == AFF_VP_REUSED)
			set_state(p, now, "process %d exited during the scan and its pid now belongs to another process",
				  (int)pid);
		else if (now == AFF_VP_GONE)
			set_state(p, now, "process %d exited during the scan", (int)pid);
	}
out:
	free(stat);
	close(dfd);
	return rc;
}

void aff_vproc_clear(struct aff_vproc *p)
{
	size_t i;

	hwloc_bitmap_free(p->allowed);
	hwloc_bitmap_free(p->ran);
	for (i = 0; i < p->nheld; i++)
		free(p->held_path[i]);
	free(p->held_path);
	free(p->held);
	free(p->mem);
	for (i = 0; i < p->npol; i++)
		free(p->pol[i].policy);
	free(p->pol);
	free(p->task_policy);
	for (i = 0; i < AFF_VENV_COUNT; i++)
		free(p->env[i]);
	free(p->cpuset);
	memset(p, 0, sizeof(*p));
}
