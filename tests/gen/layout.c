// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rbgen: turns the described PCI trees into a consistent PCI layout.
 *
 * Only endpoints carry addresses in a description; every port's own address
 * and bus range is derived here the way firmware enumerates depth-first: a
 * port's secondary bus is the bus of the devices below it, or one less than
 * the lowest secondary bus of the ports below it. When that cannot give a
 * consistent tree (siblings on different buses, overlapping ranges) the
 * description is rejected with the line to change, instead of inventing
 * numbers the author did not ask for.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rbgen.h"

static bool is_endpoint(const struct rb_node *n)
{
	return n->kind == RB_GPU || n->kind == RB_NIC || n->kind == RB_DEV;
}

static const char *what(const struct rb_node *n)
{
	static const char *const names[] = { "hostbridge", "bridge", "switch", "gpu", "nic",
					     "dev" };

	return names[n->kind];
}

/* Switch sugar: an upstream port and one downstream port per child. */
static int expand_switches(struct rb_machine *m, struct rb_node *n)
{
	for (; n; n = n->next) {
		if (n->kind == RB_SWITCH) {
			struct rb_node *c = n->child, *up = n;
			int acs = n->acs;

			if (!c) {
				rb_err(m, n->line, "switch with no devices below it (expected indented gpu, nic, dev, bridge or switch lines)");
				return -1;
			}
			up->kind = RB_BRIDGE;
			up->switch_up = true;
			up->ptype = "upstream";
			up->acs = -1;
			up->child = up->last = NULL;
			if (!up->vendor) {
				up->vendor = 0x1000;
				up->device = up->device ? up->device : 0xc030;
			}
			while (c) {
				struct rb_node *next = c->next, *ds = c;

				c->next = NULL;
				if (c->kind != RB_BRIDGE) {
					ds = rb_node_new(m, RB_BRIDGE, c->line);
					ds->indent = c->indent;
					/* both ends of a link train to the same speed */
					ds->speed = c->speed;
					ds->width = c->width;
					ds->capspeed = c->capspeed;
					ds->capwidth = c->capwidth;
					rb_node_append(ds, c);
				}
				if (!ds->ptype)
					ds->ptype = "downstream";
				if (ds->acs < 0)
					ds->acs = acs;
				if (!ds->vendor) {
					ds->vendor = up->vendor;
					ds->device = up->device;
					ds->rev = up->rev;
				}
				rb_node_append(up, ds);
				c = next;
			}
		}
		if (expand_switches(m, n->child))
			return -1;
	}
	return 0;
}

static void fill_defaults(struct rb_node *n, const char *iommu)
{
	for (; n; n = n->next) {
		const char *io = n->iommu ? n->iommu : iommu;

		if (n->kind != RB_HOSTBRIDGE) {
			n->iommu = io;
			if (n->speed == 0 && n->capspeed == 0) {
				n->speed = n->capspeed = 16.0;
				n->width = n->capwidth = 16;
			} else if (n->capspeed == 0) {
				n->capspeed = n->speed;
				n->capwidth = n->width;
			} else if (n->speed == 0) {
				n->speed = n->capspeed;
				n->width = n->capwidth;
			}
		}
		if (n->kind == RB_BRIDGE && !n->vendor) {
			bool root = n->parent && n->parent->kind == RB_HOSTBRIDGE;

			n->vendor = root ? 0x8086 : 0x1000;
			n->device = root ? 0x352a : 0xc030;
			n->rev = root ? 0x04 : 0xb0;
		}
		if (n->kind == RB_BRIDGE && !n->class_id)
			n->class_id = 0x0604;
		/* A bridge line right below a host bridge is a root port; any
		 * other, not from a switch, bridges to conventional PCI. */
		if (n->kind == RB_BRIDGE && !n->ptype)
			n->ptype = n->parent && n->parent->kind == RB_HOSTBRIDGE ? "root" :
									       "bridge";
		if (n->kind != RB_BRIDGE && n->kind != RB_HOSTBRIDGE && !n->ptype)
			n->ptype = "endpoint";
		if (n->kind == RB_BRIDGE && !n->rev)
			n->rev = n->vendor == 0x1000 ? 0xb0 : 0x04;
		fill_defaults(n->child, io);
	}
}

static void fill_numa(struct rb_node *n, int numa)
{
	for (; n; n = n->next) {
		if (n->kind == RB_HOSTBRIDGE)
			numa = n->numa;
		else if (n->numa_raw == INT32_MIN)
			n->numa_raw = numa;
		fill_numa(n->child, n->kind == RB_HOSTBRIDGE ? n->numa : numa);
	}
}

static int cmp_range(const void *a, const void *b)
{
	const struct rb_node *x = *(struct rb_node *const *)a, *y = *(struct rb_node *const *)b;

	if (x->domain != y->domain)
		return x->domain < y->domain ? -1 : 1;
	if (x->secbus != y->secbus)
		return x->secbus - y->secbus;
	return x->line - y->line;
}

static int cmp_addr(const void *a, const void *b)
{
	const struct rb_node *x = *(struct rb_node *const *)a, *y = *(struct rb_node *const *)b;

	if (x->domain != y->domain)
		return x->domain < y->domain ? -1 : 1;
	if (x->bus != y->bus)
		return x->bus - y->bus;
	if (x->dev != y->dev)
		return x->dev - y->dev;
	if (x->fn != y->fn)
		return x->fn - y->fn;
	return x->line - y->line;
}

/* Sibling bus ranges must not overlap: each bus belongs to one port. */
static int check_ranges(struct rb_machine *m, struct rb_node **v, int n, const char *where)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_range);
	for (int i = 1; i < n; i++) {
		if (v[i]->domain == v[i - 1]->domain && v[i]->secbus <= v[i - 1]->subbus) {
			rb_err(m, v[i]->line,
			       "this %s needs buses %04x:%02x-%02x, which overlap %04x:%02x-%02x of the %s on line %d%s (a port's secondary bus is one below the lowest bus of the ports below it: leave free bus numbers between sibling subtrees)",
			       what(v[i]), v[i]->domain, v[i]->secbus, v[i]->subbus, v[i - 1]->domain,
			       v[i - 1]->secbus, v[i - 1]->subbus, what(v[i - 1]), v[i - 1]->line,
			       where);
			return -1;
		}
	}
	return 0;
}

/* Orders a node's children by address, as hwloc inserts them. */
static void sort_children(struct rb_node *b, struct rb_node **v)
{
	int n = 0;

	for (struct rb_node *c = b->child; c; c = c->next)
		v[n++] = c;
	if (n < 2)
		return;
	qsort(v, (size_t)n, sizeof(*v), cmp_addr);
	b->child = v[0];
	for (int i = 0; i < n - 1; i++)
		v[i]->next = v[i + 1];
	v[n - 1]->next = NULL;
	b->last = v[n - 1];
}

static int derive(struct rb_machine *m, struct rb_node *b, struct rb_node **scratch)
{
	struct rb_node *ep = NULL;
	uint32_t used = 0;
	int sec = -1, sub, nbr = 0, devno;

	for (struct rb_node *c = b->child; c; c = c->next) {
		if (c->has_domain && c->domain != b->domain) {
			rb_err(m, c->line, "%s in PCI domain %04x below the %s of line %d, in domain %04x (set domain= on the hostbridge)",
			       what(c), c->domain, what(b), b->line, b->domain);
			return -1;
		}
		c->domain = b->domain;
		c->depth = b->depth + 1;
		if (!is_endpoint(c)) {
			if (derive(m, c, scratch))
				return -1;
			continue;
		}
		if (c->child) {
			rb_err(m, c->child->line, "a %s cannot have devices below it", what(c));
			return -1;
		}
		if (!ep) {
			ep = c;
		} else if (c->bus != ep->bus) {
			rb_err(m, c->line,
			       "%s on bus %02x but its sibling on line %d is on bus %02x: the devices below one port share its secondary bus (put them below separate bridges)",
			       what(c), c->bus, ep->line, ep->bus);
			return -1;
		}
		used |= 1u << c->dev;
	}

	if (b->kind == RB_HOSTBRIDGE && b->fixed_bus >= 0) {
		sec = b->fixed_bus;
		if (ep && ep->bus != sec) {
			rb_err(m, ep->line, "%s on bus %02x, but its hostbridge (line %d) has bus=%02x",
			       what(ep), ep->bus, b->line, sec);
			return -1;
		}
	} else if (ep) {
		sec = ep->bus;
	} else {
		for (struct rb_node *c = b->child; c; c = c->next)
			if (sec < 0 || c->secbus - 1 < sec)
				sec = c->secbus - 1;
		if (!b->child) {
			rb_err(m, b->line, "%s with no devices below it: its bus numbers cannot be derived",
			       what(b));
			return -1;
		}
		if (sec < 0) {
			rb_err(m, b->line,
			       "no bus number left for this %s: the lowest bus below it is 00 (use higher bus numbers below it)",
			       what(b));
			return -1;
		}
	}

	sub = sec;
	devno = b->kind == RB_HOSTBRIDGE ? 1 : 0;
	for (struct rb_node *c = b->child; c; c = c->next) {
		if (is_endpoint(c))
			continue;
		if (c->secbus <= sec) {
			rb_err(m, c->line,
			       "the devices below this %s use bus %02x, which must be above its parent's bus %02x (line %d)",
			       what(c), c->secbus, sec, b->line);
			return -1;
		}
		while (devno < 32 && (used & (1u << devno)))
			devno++;
		if (devno == 32) {
			rb_err(m, c->line, "no free device number left on bus %02x for this %s",
			       sec, what(c));
			return -1;
		}
		used |= 1u << devno;
		c->bus = sec;
		c->dev = devno;
		c->fn = 0;
		if (c->subbus > sub)
			sub = c->subbus;
		scratch[nbr++] = c;
	}
	b->secbus = sec;
	b->subbus = sub;
	if (check_ranges(m, scratch, nbr, ""))
		return -1;
	sort_children(b, scratch);
	return 0;
}

static int collect(struct rb_node *n, struct rb_node **v, int k)
{
	for (; n; n = n->next) {
		if (n->kind != RB_HOSTBRIDGE)
			v[k++] = n;
		k = collect(n->child, v, k);
	}
	return k;
}

static int cmp_name(const void *a, const void *b)
{
	const struct rb_node *x = *(struct rb_node *const *)a, *y = *(struct rb_node *const *)b;
	int r = strcmp(x->name ? x->name : "", y->name ? y->name : "");

	return r ? r : x->line - y->line;
}

static int cmp_netdev(const void *a, const void *b)
{
	const struct rb_node *x = *(struct rb_node *const *)a, *y = *(struct rb_node *const *)b;
	int r = strcmp(x->netdev ? x->netdev : "", y->netdev ? y->netdev : "");

	return r ? r : x->line - y->line;
}

static int check_unique(struct rb_machine *m, struct rb_node **v, int n)
{
	int k = 0, nv = 0, amd = 0, other = 0;

	qsort(v, (size_t)n, sizeof(*v), cmp_addr);
	for (int i = 0; i < n; i++) {
		if (i && v[i]->domain == v[i - 1]->domain && v[i]->bus == v[i - 1]->bus &&
		    v[i]->dev == v[i - 1]->dev && v[i]->fn == v[i - 1]->fn) {
			rb_err(m, v[i]->line, "PCI address %04x:%02x:%02x.%x is also used on line %d",
			       v[i]->domain, v[i]->bus, v[i]->dev, v[i]->fn, v[i - 1]->line);
			return -1;
		}
		/* OSDev names count per vendor, as NVML and ROCm SMI do */
		if (v[i]->kind == RB_GPU)
			v[i]->gpu_index = v[i]->vendor == 0x10de ? nv++ :
					  v[i]->vendor == 0x1002 ? amd++ : other++;
	}
	for (int i = 0; i < n; i++)
		if (v[i]->kind == RB_NIC)
			v[k++] = v[i];
	qsort(v, (size_t)k, sizeof(*v), cmp_name);
	for (int i = 1; i < k; i++) {
		if (v[i]->name && v[i - 1]->name && !strcmp(v[i]->name, v[i - 1]->name)) {
			rb_err(m, v[i]->line, "RDMA device name '%s' is also used on line %d",
			       v[i]->name, v[i - 1]->line);
			return -1;
		}
	}
	qsort(v, (size_t)k, sizeof(*v), cmp_netdev);
	for (int i = 1; i < k; i++) {
		if (v[i]->netdev && v[i - 1]->netdev && !strcmp(v[i]->netdev, v[i - 1]->netdev)) {
			rb_err(m, v[i]->line, "netdev '%s' is also used on line %d", v[i]->netdev,
			       v[i - 1]->line);
			return -1;
		}
	}
	return 0;
}

int rb_layout(struct rb_machine *m)
{
	struct rb_node **v;
	int n = 0, ret = -1;

	if (expand_switches(m, m->roots))
		return -1;
	fill_defaults(m->roots, "identity");
	fill_numa(m->roots, -1);
	/* every node fits: m->nr_nodes counts all that were ever created */
	v = rb_xmalloc(sizeof(*v) * (size_t)(m->nr_nodes + 1));
	for (struct rb_node *hb = m->roots; hb; hb = hb->next) {
		hb->depth = 0;
		if (derive(m, hb, v))
			goto out;
		n++;
	}
	n = 0;
	for (struct rb_node *hb = m->roots; hb; hb = hb->next)
		v[n++] = hb;
	if (check_ranges(m, v, n, " (another hostbridge of that PCI domain)"))
		goto out;
	n = collect(m->roots, v, 0);
	ret = check_unique(m, v, n);
out:
	free(v);
	return ret;
}
