// SPDX-License-Identifier: GPL-2.0-or-later
/* rbgen: allocation and small helpers of the machine model. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbgen.h"

void *rb_xmalloc(size_t n)
{
	void *p = calloc(1, n);

	if (!p) {
		fprintf(stderr, "rbgen: out of memory\n");
		exit(1);
	}
	return p;
}

char *rb_xstrdup(const char *s)
{
	char *p = rb_xmalloc(strlen(s) + 1);

	return memcpy(p, s, strlen(s) + 1);
}

void rb_err(const struct rb_machine *m, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: ", m->file ? m->file : "<generated>", line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

struct rb_node *rb_node_new(struct rb_machine *m, enum rb_kind kind, int line)
{
	struct rb_node *n = rb_xmalloc(sizeof(*n));

	n->kind = kind;
	n->line = line;
	n->bus = n->dev = n->fn = -1;
	n->secbus = n->subbus = -1;
	n->fixed_bus = -1;
	n->acs = -1;
	n->mps = n->mrrs = n->ro = n->ats = -1;
	n->bar1 = -1;
	n->numa_raw = INT32_MIN;
	n->minor = -1;
	n->mig = -1;
	n->c2c = -1;
	n->port = 1;
	n->nports = 1;
	for (int i = 0; i < RB_MAX_PORTS; i++)
		n->state[i] = 4;
	n->gpu_index = -1;
	m->nr_nodes++;
	return n;
}

void rb_node_append(struct rb_node *parent, struct rb_node *child)
{
	child->parent = parent;
	if (parent->last)
		parent->last->next = child;
	else
		parent->child = child;
	parent->last = child;
}

void rb_root_append(struct rb_machine *m, struct rb_node *hb)
{
	if (m->roots_last)
		m->roots_last->next = hb;
	else
		m->roots = hb;
	m->roots_last = hb;
}

static void node_free(struct rb_node *n)
{
	while (n) {
		struct rb_node *next = n->next;

		node_free(n->child);
		free(n->name);
		free(n->netdev);
		free(n->uuid);
		free(n->vpd);
		free(n->nvlink);
		free(n);
		n = next;
	}
}

void rb_machine_free(struct rb_machine *m)
{
	node_free(m->roots);
	free(m->hostname);
	free(m->peer_memory);
	free(m->kernel);
	free(m->gpu_driver);
	free(m->kmod);
	free(m->cpu_vendor);
	memset(m, 0, sizeof(*m));
}

int rb_nr_cpu_numa(const struct rb_machine *m)
{
	return m->packages * m->numa_per_package;
}

int rb_nr_numa(const struct rb_machine *m)
{
	return rb_nr_cpu_numa(m) + m->cpuless_numa;
}
