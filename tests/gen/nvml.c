// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rbgen --nvml FILE: what NVML would answer on the described machine, in the
 * stand-in libnvidia-ml.so.1's answer format (tests/gpu/nvml_stub.c): each
 * NVIDIA GPU's UUID and minor, its NVLinks (to NVSwitches, spread over the
 * machine's NVSwitch devices, or to other GPUs), MIG and C2C, and the
 * common ancestor of every two GPUs, worked out here from the described PCI
 * tree on NVML's own terms (a single switch, several, the host bridge, the
 * NUMA node, the system), independently of railbind's path code.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rbgen.h"

struct list {
	const struct rb_node **n;
	int count, cap;
};

static void push(struct list *l, const struct rb_node *n)
{
	if (l->count == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->n = realloc(l->n, sizeof(*l->n) * (size_t)l->cap);
		if (!l->n) {
			perror("rbgen");
			exit(1);
		}
	}
	l->n[l->count++] = n;
}

static void collect(const struct rb_node *n, struct list *gpus, struct list *switches)
{
	for (; n; n = n->next) {
		if (n->kind == RB_GPU && n->vendor == 0x10de)
			push(gpus, n);
		if (n->kind == RB_DEV && n->vendor == 0x10de && n->class_id == 0x0680)
			push(switches, n);
		collect(n->child, gpus, switches);
	}
}

static void busid(const struct rb_node *n, char *buf)
{
	snprintf(buf, 16, "%04x:%02x:%02x.%x", n->domain, n->bus, n->dev, n->fn);
}

static uint64_t fnv(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* A stable UUID for a GPU: from the host name and its address; buf holds 96. */
static void uuid_of(const struct rb_machine *m, const struct rb_node *n, char *buf)
{
	char pci[16];
	uint64_t a, b;

	if (n->uuid) {
		snprintf(buf, 96, "%s", n->uuid);
		return;
	}
	busid(n, pci);
	a = fnv(pci, fnv(m->hostname, 0xcbf29ce484222325ULL));
	b = fnv("rbgen", a);
	snprintf(buf, 96, "GPU-%08x-%04x-%04x-%04x-%012llx", (unsigned)(a >> 32),
		(unsigned)(a >> 16) & 0xffff, (unsigned)a & 0xffff, (unsigned)(b >> 48),
		(unsigned long long)b & 0xffffffffffffULL);
}

static const struct rb_node *root_of(const struct rb_node *n)
{
	while (n->parent)
		n = n->parent;
	return n;
}

static void add_switch(const struct rb_node **set, int *n, const struct rb_node *s)
{
	for (int i = 0; i < *n; i++)
		if (set[i] == s)
			return;
	set[(*n)++] = s;
}

/* nvmlGpuTopologyLevel_t between two GPUs: 10 one switch, 20 several, 30 host bridge,
 * 40 same NUMA node, 50 across. */
static int level(const struct rb_node *a, const struct rb_node *b)
{
	const struct rb_node *ha = root_of(a), *hb = root_of(b), *x, *y, *l = NULL;
	const struct rb_node *set[128];
	int n = 0;

	if (ha != hb)
		return ha->numa >= 0 && ha->numa == hb->numa ? 40 : 50;
	for (x = a->parent; x && !l; x = x->parent)
		for (y = b->parent; y; y = y->parent)
			if (x == y) {
				l = x;
				break;
			}
	if (!l || l->kind == RB_HOSTBRIDGE)
		return 30;
	/* The switches crossed: on each way up to the meeting point, and the one it is in. */
	for (x = a->parent; x && x != l->parent && n < 64; x = x->parent)
		if (x->switch_up)
			add_switch(set, &n, x);
	for (x = b->parent; x && x != l->parent && n < 128; x = x->parent)
		if (x->switch_up)
			add_switch(set, &n, x);
	if (l->parent && l->parent->switch_up)
		add_switch(set, &n, l->parent);
	return n == 0 ? 30 : n == 1 ? 10 : 20;
}

static int links(const struct rb_machine *m, const struct rb_node *g, const struct list *gpus,
		 const struct list *switches, FILE *out)
{
	char buf[256], *item, *save = NULL, pci[16], remote[16];
	int index = 0, next_switch = 0;

	if (!g->nvlink)
		return 0;
	snprintf(buf, sizeof(buf), "%s", g->nvlink);
	busid(g, pci);
	for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *at = strchr(item, '@');
		int count = atoi(item), i;
		const struct rb_node *peer = NULL;

		if (strcmp(at + 1, "switch")) {
			unsigned d = 0, b, v, f;

			if (sscanf(at + 1, "%x:%x:%x.%x", &d, &b, &v, &f) != 4 &&
			    (d = 0, sscanf(at + 1, "%x:%x.%x", &b, &v, &f) != 3))
				b = 0x100;	/* parse.c took it: not reached */
			for (i = 0; i < gpus->count; i++)
				if (gpus->n[i]->domain == d && gpus->n[i]->bus == (int)b &&
				    gpus->n[i]->dev == (int)v && gpus->n[i]->fn == (int)f)
					peer = gpus->n[i];
			if (!peer || peer == g) {
				rb_err(m, g->line, "nvlink=%s: no other NVIDIA GPU at %s", g->nvlink,
				       at + 1);
				return -1;
			}
		}
		for (i = 0; i < count; i++) {
			if (peer)
				busid(peer, remote);
			else if (switches->count)
				busid(switches->n[next_switch++ % switches->count], remote);
			else
				snprintf(remote, sizeof(remote), "-");
			fprintf(out, "link %s %d %s %s\n", pci, index++, remote, peer ? "gpu" : "switch");
		}
	}
	return 0;
}

int rb_write_nvml(const struct rb_machine *m, FILE *out)
{
	struct list gpus = { 0 }, switches = { 0 };
	char pci[16], other[16], uuid[96];
	int i, j, rc = 0;

	for (const struct rb_node *hb = m->roots; hb; hb = hb->next) {
		const struct rb_node *next = hb->next;

		((struct rb_node *)hb)->next = NULL;
		collect(hb, &gpus, &switches);
		((struct rb_node *)hb)->next = (struct rb_node *)next;
	}
	fprintf(out, "# rbgen --nvml: what NVML answers on %s (tests/gpu/nvml_stub.c reads it)\n"
		"init ok\ndriver 550.54.15\n", m->hostname);
	for (i = 0; i < gpus.count && !rc; i++) {
		const struct rb_node *g = gpus.n[i];
		static const char *const state[] = { "unsupported", "disabled", "enabled" };

		busid(g, pci);
		uuid_of(m, g, uuid);
		fprintf(out, "gpu %s uuid=%s minor=%d mig=%s c2c=%s\n", pci, uuid,
			g->minor >= 0 ? g->minor : g->gpu_index, state[g->mig + 1],
			state[g->c2c + 1]);
		rc = links(m, g, &gpus, &switches, out);
		for (j = 0; j < g->mig_devices && g->mig == 1; j++)
			fprintf(out, "mig %s MIG-%.8s-%04x-4000-8000-%012x %d 0\n", pci, uuid + 4,
				(unsigned)j + 1, (unsigned)(i * 16 + j), j + 1);
	}
	for (i = 0; i < gpus.count; i++)
		for (j = i + 1; j < gpus.count; j++) {
			busid(gpus.n[i], pci);
			busid(gpus.n[j], other);
			fprintf(out, "ancestor %s %s %d\n", pci, other, level(gpus.n[i], gpus.n[j]));
		}
	free(gpus.n);
	free(switches.n);
	return rc ? -1 : ferror(out) ? -2 : 0;
}
