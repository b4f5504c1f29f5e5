// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * NCCL's NCCL_DEBUG=INFO lines, as NCCL 2.18.1 to 2.30 print them (read in
 * its src/init.cc, src/transport/net.cc, src/transport/net_ib/init.cc,
 * src/graph/topo.cc and paths.cc, src/enqueue.cc):
 *
 *   host:pid:tid [cudaDev] NCCL INFO <message>
 *
 * after any timestamp or launcher prefix. A channel line names neither its
 * communicator nor its GPU: it is the thread's, between that thread's
 * "Init START" and "... busId %lx ... - Init COMPLETE"; after the init (NCCL
 * 2.22+ connects at the first collective) it is the GPU the line's [cudaDev]
 * had in that process's last init, else the thread's last communicator's.
 * NET/IB/N is NCCL's net-device index, named only by the same process's
 * "NET/IB : Using [0]mlx5_0:1/IB ..." line.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccllog.h"

struct nl_log *nl_new(void)
{
	struct nl_log *log = calloc(1, sizeof(*log));

	if (!log)
		return NULL;
	log->net_min = log->net_max = -1;
	log->cur_test = -1;
	return log;
}

void nl_free(struct nl_log *log)
{
	size_t i, d;

	if (!log)
		return;
	for (i = 0; i < log->nproc; i++) {
		free(log->proc[i].host);
		free(log->proc[i].ib_hca);
		free(log->proc[i].algo);
		for (d = 0; d < NL_MAX_DEVS; d++)
			free(log->proc[i].dev[d]);
	}
	for (i = 0; i < log->nnote; i++) {
		free(log->note[i].file);
		free(log->note[i].message);
	}
	for (i = 0; i < log->nfiles; i++)
		free(log->files[i]);
	free(log->files);
	free(log->proc);
	free(log->gpu);
	free(log->thread);
	free(log->test);
	nl_map_free(&log->procs);
	nl_map_free(&log->gpus);
	nl_map_free(&log->threads);
	nl_map_free(&log->hosts);
	free(log);
}

const char *nl_file(struct nl_log *log, const char *file)
{
	char **more;
	size_t i;

	for (i = 0; i < log->nfiles; i++)
		if (!strcmp(log->files[i], file))
			return log->files[i];
	more = realloc(log->files, (log->nfiles + 1) * sizeof(*more));
	if (!more)
		return NULL;
	log->files = more;
	more[log->nfiles] = strdup(file);
	return more[log->nfiles] ? more[log->nfiles++] : NULL;
}

void nl_note(struct nl_log *log, const char *file, long line, const char *fmt, ...)
{
	struct nl_note *n;
	char msg[512];
	va_list ap;

	if (log->nnote >= NL_MAX_NOTES) {
		log->notes_dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = &log->note[log->nnote];
	n->file = strdup(file ? file : "-");
	n->message = strdup(msg);
	n->line = line;
	if (!n->file || !n->message) {
		free(n->file);
		free(n->message);
		log->oom = true;
		return;
	}
	log->nnote++;
}

const char *nl_strip_launcher(const char *s)
{
	const char *p;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		/* srun --label: "N: " */
		for (p = s; isdigit((unsigned char)*p); p++)
			;
		if (p > s && p[0] == ':' && p[1] == ' ') {
			s = p + 2;
			continue;
		}
		/* torchrun --tee / --redirects: "[rankN]:" or "[default0]:" */
		if (*s == '[' && (p = strchr(s, ']')) && p[1] == ':' && p - s < 32 &&
		    !memchr(s, ' ', (size_t)(p - s))) {
			s = p + 2;
			continue;
		}
		return s;
	}
}

void nl_busid_pci(uint64_t busid, char *buf, size_t len)
{
	snprintf(buf, len, "%04x:%02x:%02x.%x", (unsigned)(busid >> 20) & 0xffff,
		 (unsigned)(busid >> 12) & 0xff, (unsigned)(busid >> 4) & 0xff,
		 (unsigned)busid & 0xf);
}

bool nl_ib_hca_admits(const char *spec, const char *name, int port)
{
	bool exclude = false, exact = false, match = false;
	const char *p;

	if (!spec || !*spec)
		return true;
	if (*spec == '^') {
		exclude = true;
		spec++;
	}
	if (*spec == '=') {
		exact = true;
		spec++;
	}
	for (p = spec; *p && !match;) {
		size_t n = strcspn(p, ",:");
		int want = -1;

		if (p[n] == ':')
			want = atoi(p + n + 1);
		/* NCCL matches a name as a prefix unless the list starts with '='. */
		if ((exact ? strlen(name) == n : strlen(name) >= n) && n && !strncmp(name, p, n) &&
		    (want < 0 || want == port))
			match = true;
		p += strcspn(p, ",");
		if (*p == ',')
			p++;
	}
	return exclude ? !match : match;
}

/* ---- the tables ---- */

/* Room for item @n of @arr: doubling at powers of two (from 8). */
static void *grow(void *arr, size_t n, size_t size)
{
	if (n < 8)
		return arr ? arr : malloc(8 * size);
	if (n & (n - 1))
		return arr;
	return realloc(arr, n * 2 * size);
}

/*
 * The index of @key in @map, else of a new zeroed item at the end of *@arr
 * (*@n items of @size bytes), *@fresh then set. -E2BIG past NL_MAX_ITEMS.
 */
static int item_of(struct nl_map *map, const char *key, void **arr, size_t *n, size_t size,
		   bool *fresh)
{
	int i = nl_map_get(map, key);
	char *more;

	*fresh = false;
	if (i >= 0)
		return i;
	if (*n >= NL_MAX_ITEMS)
		return -E2BIG;
	more = grow(*arr, *n, size);
	if (!more)
		return -ENOMEM;
	*arr = more;
	memset(more + *n * size, 0, size);
	if (nl_map_put(map, key, (int)*n) < 0)
		return -ENOMEM;
	*fresh = true;
	return (int)(*n)++;
}

static int proc_of(struct nl_log *log, const char *host, long pid)
{
	void *arr = log->proc;
	char key[320];
	bool fresh;
	int i;

	snprintf(key, sizeof(key), "%s:%ld", host, pid);
	i = item_of(&log->procs, key, &arr, &log->nproc, sizeof(*log->proc), &fresh);
	log->proc = arr;
	if (i < 0 || !fresh)
		return i;
	log->proc[i].pid = pid;
	log->proc[i].ndev = -1;
	log->proc[i].host = strdup(host);
	return log->proc[i].host ? i : -ENOMEM;
}

static int thread_of(struct nl_log *log, const char *key)
{
	void *arr = log->thread;
	bool fresh;
	int i = item_of(&log->threads, key, &arr, &log->nthread, sizeof(*log->thread), &fresh);

	log->thread = arr;
	if (fresh)
		log->thread[i].gpu = -1;
	return i;
}

static int gpu_of(struct nl_log *log, int proc, uint64_t busid)
{
	void *arr = log->gpu;
	char key[352];
	bool fresh;
	int i;

	snprintf(key, sizeof(key), "%s:%ld:%" PRIx64, log->proc[proc].host, log->proc[proc].pid,
		 busid);
	i = item_of(&log->gpus, key, &arr, &log->ngpu, sizeof(*log->gpu), &fresh);
	log->gpu = arr;
	if (fresh) {
		log->gpu[i].proc = proc;
		log->gpu[i].busid = busid;
		log->gpu[i].rank = log->gpu[i].nranks = -1;
	}
	return i;
}

static void use_merge(struct nl_use *to, const struct nl_use *from)
{
	size_t i;

	for (i = 0; i < NL_MAX_DEVS / 64; i++) {
		to->dev[i] |= from->dev[i];
		to->gdr[i] |= from->gdr[i];
	}
	to->channels += from->channels;
	to->gdr_lines += from->gdr_lines;
	to->host_lines += from->host_lines;
	to->pxn_lines += from->pxn_lines;
}

/* ---- one line ---- */

struct nl_line {
	struct nl_log *log;
	const char *file;
	long lineno;
	char host[256];
	long pid, tid;
	int cuda_dev;
	int proc, thread;
	char tkey[320];
};

/* "host:pid:tid [dev]" right before "NCCL INFO" at @at: false when it is not. */
static bool prefix(const char *start, const char *at, struct nl_line *l)
{
	const char *end = at, *tok, *c1, *c2;
	char *stop;

	/* "H [N]": at least a host character, a blank, "[", a digit and "]". */
	if (end - start < 5 || end[-1] != ']')
		return false;
	for (tok = end - 2; tok > start && (isdigit((unsigned char)*tok) || *tok == '-'); tok--)
		;
	if (tok == end - 2 || *tok != '[' || tok - start < 2 || tok[-1] != ' ')
		return false;
	l->cuda_dev = atoi(tok + 1);
	end = tok - 1;
	for (tok = end; tok > start && !isspace((unsigned char)tok[-1]); tok--)
		;
	/* A timestamp or launcher glued on: "[...]host:pid:tid". */
	if (memchr(tok, ']', (size_t)(end - tok)))
		tok = (const char *)memrchr(tok, ']', (size_t)(end - tok)) + 1;
	c2 = memrchr(tok, ':', (size_t)(end - tok));
	if (!c2)
		return false;
	c1 = memrchr(tok, ':', (size_t)(c2 - tok));
	if (!c1 || c1 == tok || (size_t)(c1 - tok) >= sizeof(l->host))
		return false;
	l->pid = strtol(c1 + 1, &stop, 10);
	if (stop != c2)
		return false;
	l->tid = strtol(c2 + 1, &stop, 10);
	if (stop != end)
		return false;
	memcpy(l->host, tok, (size_t)(c1 - tok));
	l->host[c1 - tok] = '\0';
	snprintf(l->tkey, sizeof(l->tkey), "%s:%ld:%ld", l->host, l->pid, l->tid);
	return true;
}

/* The GPU of the process with @cuda_dev in an init of this process, or -1. */
static int gpu_by_dev(struct nl_log *log, const struct nl_line *l)
{
	char key[352];

	snprintf(key, sizeof(key), "%s:%ld/d%d", l->host, l->pid, l->cuda_dev);
	return nl_map_get(&log->gpus, key);
}

static int channel(struct nl_line *l, const char *msg)
{
	static const char expect[] =
		"expected \"Channel NN/N : RANK[DEV] -> RANK[DEV] [send|receive] via NET/NAME/INDEX\"";
	struct nl_log *log = l->log;
	struct nl_thread *t = &log->thread[l->thread];
	struct nl_use one = { 0 }, *to;
	int ch, conn, dev, proxy = -1, n = 0, gi;
	long r1, r2;
	char dir[16], net[32];
	const char *rest;

	if (sscanf(msg, "Channel %d/%d : %ld[%*[^]]] -> %ld[%*[^]]] [%15[a-z]] via NET/%31[^/]/%d%n",
		   &ch, &conn, &r1, &r2, dir, net, &dev, &n) < 7 || !n) {
		nl_note(log, l->file, l->lineno, "%s", expect);
		return 0;
	}
	if (dev < 0 || dev >= NL_MAX_DEVS) {
		nl_note(log, l->file, l->lineno, "NET device index %d: expected 0 to %d", dev,
			NL_MAX_DEVS - 1);
		return 0;
	}
	rest = msg + n;
	if (sscanf(rest, "(%d)", &proxy) == 1) {
		one.pxn_lines = 1;
	} else {
		one.dev[dev / 64] |= 1ull << (dev % 64);
		if (strstr(rest, "/GDRDMA"))
			one.gdr[dev / 64] |= 1ull << (dev % 64);
	}
	one.channels = 1;
	if (strstr(rest, "/GDRDMA"))
		one.gdr_lines = 1;
	else
		one.host_lines = 1;
	if (!log->proc[l->proc].net[0])
		snprintf(log->proc[l->proc].net, sizeof(log->proc[l->proc].net), "%s", net);
	/* NCCL before 2.19 printed no Init START: lines before a thread's first
	 * Init COMPLETE wait for it too. */
	gi = t->in_init ? -1 : gpu_by_dev(log, l);
	if (gi < 0 && !t->in_init)
		gi = t->gpu;
	to = gi < 0 ? &t->pending : &log->gpu[gi].use;
	use_merge(to, &one);
	return 0;
}

/* "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_3:1:2/RoCE [RO]; OOB ..." */
static int using_line(struct nl_line *l, const char *msg)
{
	struct nl_proc *p = &l->log->proc[l->proc];
	const char *s = strstr(msg, " : Using");
	int d;

	p->ndev = 0;
	p->using_line = l->lineno;
	p->using_file = l->file;
	for (d = 0; d < NL_MAX_DEVS; d++) {
		free(p->dev[d]);
		p->dev[d] = NULL;
	}
	for (s += 8; (s = strchr(s, '[')) != NULL; ) {
		char *stop, name[40];
		long idx = strtol(s + 1, &stop, 10);
		size_t n;

		if (stop == s + 1 || *stop != ']') {
			s++;
			continue;
		}
		s = stop + 1;
		/* name[:port][:rail][:plane]/LINK: keep name:port. */
		n = strcspn(s, ":/ <;");
		if (!n || n >= 32 || idx < 0 || idx >= NL_MAX_DEVS)
			continue;
		memcpy(name, s, n);
		name[n] = '\0';
		if (s[n] == ':' && isdigit((unsigned char)s[n + 1])) {
			size_t k = strspn(s + n + 1, "0123456789");

			if (strchr(":/ ;", s[n + 1 + k]) && s[n + 1 + k] && k < 6)
				snprintf(name + n, sizeof(name) - n, ":%.*s", (int)k, s + n + 1);
		}
		free(p->dev[idx]);
		p->dev[idx] = strdup(name);
		if (!p->dev[idx])
			return -ENOMEM;
		if (idx + 1 > p->ndev)
			p->ndev = (int)idx + 1;
	}
	if (!p->net[0])
		sscanf(msg, "NET/%31[^ ]", p->net);
	return 0;
}

/* "... rank %d nranks %d cudaDev %d [nvmlDev %d] busId %lx ... - Init COMPLETE" */
static int init_complete(struct nl_line *l, const char *msg)
{
	struct nl_log *log = l->log;
	struct nl_thread *t = &log->thread[l->thread];
	const char *r = strstr(msg, " rank "), *nr = strstr(msg, " nranks ");
	const char *cd = strstr(msg, " cudaDev "), *b = strstr(msg, " busId ");
	long rank, nranks;
	int dev, gi;
	char key[352];
	uint64_t busid;

	if (!r || !nr || !cd || !b || sscanf(r, " rank %ld", &rank) != 1 ||
	    sscanf(nr, " nranks %ld", &nranks) != 1 || sscanf(cd, " cudaDev %d", &dev) != 1 ||
	    sscanf(b, " busId %" SCNx64, &busid) != 1) {
		nl_note(log, l->file, l->lineno,
			"expected \"rank R nranks N cudaDev D busId HEX ... - Init COMPLETE\"");
		return 0;
	}
	gi = gpu_of(log, l->proc, busid);
	if (gi < 0)
		return gi == -E2BIG ? 0 : gi;
	if (!log->gpu[gi].comms) {
		log->gpu[gi].rank = rank;
		log->gpu[gi].nranks = nranks;
		log->gpu[gi].cuda_dev = dev;
	}
	log->gpu[gi].comms++;
	use_merge(&log->gpu[gi].use, &t->pending);
	memset(&t->pending, 0, sizeof(t->pending));
	t->in_init = false;
	t->gpu = gi;
	snprintf(key, sizeof(key), "%s:%ld/d%d", l->host, l->pid, dev);
	return nl_map_put(&log->gpus, key, gi);
}

static int set_str(char **to, const char *s)
{
	size_t n = strcspn(s, "\r\n");
	char *v = strndup(s, n);

	if (!v)
		return -ENOMEM;
	/* NCCL prints some values with a final '.'. */
	while (n && (v[n - 1] == ' ' || v[n - 1] == '.'))
		v[--n] = '\0';
	free(*to);
	*to = v;
	return 0;
}

static void tuning(struct nl_log *log, const char *msg)
{
	char func[24], algo[24];
	unsigned long long bytes;
	size_t i;

	if (sscanf(msg, "%23[A-Za-z]: %llu Bytes -> Algo %23s", func, &bytes, algo) != 3)
		return;
	for (i = 0; i < log->ntuning; i++)
		if (!strcmp(log->tuning[i].func, func))
			break;
	if (i == log->ntuning) {
		if (i == sizeof(log->tuning) / sizeof(log->tuning[0]))
			return;
		log->ntuning++;
		snprintf(log->tuning[i].func, sizeof(log->tuning[i].func), "%s", func);
	} else if (log->tuning[i].bytes > bytes) {
		return;
	}
	log->tuning[i].bytes = bytes;
	snprintf(log->tuning[i].algo, sizeof(log->tuning[i].algo), "%s", algo);
}

static int message(struct nl_line *l, const char *msg)
{
	struct nl_log *log = l->log;
	struct nl_proc *p = &log->proc[l->proc];
	struct nl_thread *t = &log->thread[l->thread];
	const char *s;
	int a, b;

	if (!strncmp(msg, "Channel ", 8) && strstr(msg, " via NET/"))
		return channel(l, msg);
	if (!strncmp(msg, "NET/", 4) && strstr(msg, " : Using"))
		return using_line(l, msg);
	if (!strncmp(msg, "NET/", 4) && strstr(msg, " : No device found")) {
		int d;

		for (d = 0; d < NL_MAX_DEVS; d++) {
			free(p->dev[d]);
			p->dev[d] = NULL;
		}
		p->ndev = 0;
		return 0;
	}
	if (strstr(msg, "- Init START")) {
		t->in_init = true;
		t->start_file = l->file;
		t->start_line = l->lineno;
		memset(&t->pending, 0, sizeof(t->pending));
		return 0;
	}
	if (strstr(msg, "Init COMPLETE"))
		return init_complete(l, msg);
	if (!strncmp(msg, "Using network ", 14)) {
		snprintf(p->net, sizeof(p->net), "%.*s", (int)strcspn(msg + 14, " \r\n"), msg + 14);
		return 0;
	}
	if ((s = strstr(msg, "Loaded net plugin "))) {
		snprintf(p->plugin, sizeof(p->plugin), "%.*s", (int)strcspn(s + 18, "\r\n"), s + 18);
		return 0;
	}
	if (!strncmp(msg, "NCCL_IB_HCA set to ", 19))
		return set_str(&p->ib_hca, msg + 19);
	if (!strncmp(msg, "NCCL_IB_HCA set by environment to ", 34))
		return set_str(&p->ib_hca, msg + 34);
	if (!strncmp(msg, "NCCL_ALGO set by environment to ", 32))
		return set_str(&p->algo, msg + 32);
	if ((s = strstr(msg, "GPU Direct RDMA Disabled for HCA ")) && sscanf(s + 33, "%d", &a) == 1) {
		if (a >= 0 && a < NL_MAX_DEVS)
			p->gdr_off[a / 64] |= 1ull << (a % 64);
		return 0;
	}
	if (strstr(msg, "GPU Direct RDMA Disabled for GPU ") && strstr(msg, "(distance ")) {
		p->gdr_distance = true;
		return 0;
	}
	if (strstr(msg, " Bytes -> Algo ")) {
		tuning(log, msg);
		return 0;
	}
	if (sscanf(msg, "Local Net device counts across ranks: min %d max %d", &a, &b) == 2) {
		log->net_min = a;
		log->net_max = b;
		log->net_count_file = l->file;
		log->net_count_line = l->lineno;
		return 0;
	}
	if (strstr(msg, "Detected mixed local Net device counts")) {
		log->net_mismatch = true;
		s = strstr(msg, "(min ");
		if (log->net_min < 0 && s && sscanf(s, "(min %d, max %d)", &a, &b) == 2) {
			log->net_min = a;
			log->net_max = b;
		}
		log->net_count_file = l->file;
		log->net_count_line = l->lineno;
		return 0;
	}
	if (strstr(msg, "TOPO/NET : Made vNic"))
		p->vnic = true;
	return 0;
}

int nl_feed_line(struct nl_log *log, const char *file, long lineno, const char *line, size_t len)
{
	struct nl_line l = { .log = log, .lineno = lineno };
	char buf[NL_LINE_MAX], *nul;
	const char *s, *at, *msg;
	int rc;

	log->lines++;
	if (len >= sizeof(buf)) {
		log->long_lines++;
		return 0;
	}
	/* A NUL in a log (a crashed writer) ends nothing: read it as a blank. */
	memcpy(buf, line, len);
	for (nul = memchr(buf, '\0', len); nul; nul = memchr(nul, '\0', len - (size_t)(nul - buf)))
		*nul = ' ';
	while (len && (buf[len - 1] == '\r' || buf[len - 1] == '\n'))
		len--;
	buf[len] = '\0';
	l.file = nl_file(log, file);
	if (!l.file)
		return -ENOMEM;
	s = nl_strip_launcher(buf);
	at = strstr(s, " NCCL INFO ");
	msg = at ? at + 11 : NULL;
	if (!at && (at = strstr(s, " NCCL WARN ")))
		msg = at + 11;
	if (!at || !prefix(s, at, &l))
		return nl_tests_line(log, l.file, lineno, s);
	log->nccl_lines++;
	/* Past NL_MAX_ITEMS processes or threads, a line is counted, not read. */
	rc = proc_of(log, l.host, l.pid);
	if (rc < 0)
		return rc == -E2BIG ? 0 : rc;
	l.proc = rc;
	rc = thread_of(log, l.tkey);
	if (rc < 0)
		return rc == -E2BIG ? 0 : rc;
	l.thread = rc;
	return message(&l, msg);
}

int nl_finish(struct nl_log *log)
{
	size_t i;

	for (i = 0; i < log->nthread; i++) {
		log->unattributed += log->thread[i].pending.channels;
		if (log->thread[i].in_init)
			nl_note(log, log->thread[i].start_file, log->thread[i].start_line,
				"an Init START without its Init COMPLETE: expected \"... busId HEX ... - Init COMPLETE\" from the same thread (log cut short, or the init failed)");
	}
	if (log->cur_test >= 0 && !log->test[log->cur_test].complete)
		nl_note(log, log->test[log->cur_test].file, log->test[log->cur_test].line,
			"an nccl-tests table without its footer: expected \"# Avg bus bandwidth : N\" (output cut short)");
	return log->oom ? -ENOMEM : 0;
}
