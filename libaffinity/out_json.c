// SPDX-License-Identifier: LGPL-2.1-or-later
/* railbind.topo/1 and railbind.plan/1 documents (DESIGN.md), via json-c. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "dra.h"
#include "fabric.h"
#include "gpu_ident.h"
#include "model_complex.h"
#include "plan.h"

static struct json_object *str_or_null(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

static struct json_object *numa_of(const struct aff_topo *t, int loc)
{
	if (loc < 0 || !t->loc[loc].known || t->loc[loc].numa < 0)
		return NULL;
	return json_object_new_int(t->loc[loc].numa);
}

static struct json_object *cpus_of(const struct aff_topo *t, int loc)
{
	struct json_object *o;
	char *s;

	if (loc < 0 || !t->loc[loc].known)
		return NULL;
	s = aff_bitmap_list(t->loc[loc].cpuset);
	o = s ? json_object_new_string(s) : NULL;
	free(s);
	return o;
}

static void add(struct json_object *o, const char *key, struct json_object *v)
{
	json_object_object_add(o, key, v);
}

/*
 * The device's complex (model_complex.h), left out on a node of classic
 * complexes only, whose output stays as it was.
 */
static void add_complex(struct json_object *o, const struct aff_topo *t, int dev)
{
	struct aff_complex_id c;
	struct json_object *j;

	if (!aff_complex_of(t, dev, &c))
		return;
	j = json_object_new_object();
	add(j, "id", json_object_new_string(c.id));
	add(j, "kind", json_object_new_string(aff_complex_name(c.kind)));
	add(j, "dma", c.dma >= 0 ? str_or_null(t->dev[c.dma].pci) : NULL);
	add(j, "pf", c.pf >= 0 ? str_or_null(t->dev[c.pf].pci) : NULL);
	add(j, "undecided", str_or_null(c.undecided));
	add(o, "complex", j);
}

/* A RoCE rail's RoCE v2 IPv4 GID index; null on InfiniBand, unknown or none. */
static struct json_object *gid_index_json(const struct aff_rail *r)
{
	int g = r->fab && !strcmp(r->fab->link_layer, "Ethernet") ?
		aff_fabric_roce_v2_ipv4(r->fab) : -1;

	return g >= 0 ? json_object_new_int(g) : NULL;
}

static struct json_object *int_or_null(int v)
{
	return v > 0 ? json_object_new_int(v) : NULL;
}

/* The port's fabric facts (fabric.h), null each when unknown. */
static void add_fabric(struct json_object *j, const struct aff_rail *r)
{
	const struct aff_fabric_port *f = r->fab;

	add(j, "link_layer", str_or_null(f ? f->link_layer : NULL));
	add(j, "phys_state", str_or_null(f && f->phys_state >= 0 ? f->phys_name : NULL));
	add(j, "width", str_or_null(f ? f->width : NULL));
	add(j, "speed", str_or_null(f ? f->speed : NULL));
	add(j, "active_mtu", int_or_null(f ? f->active_mtu : 0));
	add(j, "max_mtu", int_or_null(f ? f->max_mtu : 0));
	add(j, "port_netdev", str_or_null(f ? f->netdev : NULL));
	add(j, "netdev_mtu", int_or_null(f ? f->netdev_mtu : 0));
	add(j, "gid_index", gid_index_json(r));
	add(j, "firmware", str_or_null(f ? f->fw : NULL));
	add(j, "board_id", str_or_null(f ? f->board : NULL));
}

/* A rate (Gb/s) or bandwidth (GB/s); null when unknown or unbounded. */
static struct json_object *number(double v)
{
	char buf[32];

	if (!(v > 0) || isinf(v))
		return NULL;
	if (v == (double)(long long)v && v < 1e15)
		return json_object_new_int64((long long)v);
	snprintf(buf, sizeof(buf), "%g", v);
	return json_object_new_double_s(v, buf);
}

/*
 * An RDMA rail as NCCL_IB_HCA and UCX_NET_DEVICES name it, the verbs device
 * and port ("mlx5_1:1" where an NCCL file says mlx5_1 port="2"); NULL for
 * one with no name or no verbs device.
 */
static struct json_object *hca_json(const struct aff_rail *r)
{
	char buf[320];
	int port;
	const char *name = aff_rail_hca(r, &port);

	if (!r->rdma || !name)
		return NULL;
	if (port > 0)
		snprintf(buf, sizeof(buf), "%s:%d", name, port);
	else
		snprintf(buf, sizeof(buf), "%s", name);
	return json_object_new_string(buf);
}

/* A rail's port as verbs numbers it (an NCCL file's spelling undone), null unknown. */
static struct json_object *port_json(const struct aff_rail *r)
{
	int port;

	aff_rail_hca(r, &port);
	return port > 0 ? json_object_new_int(port) : NULL;
}

/* An IB subnet prefix as a GID writes it: "fe80:0000:0000:0000". */
static struct json_object *subnet_json(unsigned long long v)
{
	char buf[24];

	if (!v)
		return NULL;
	snprintf(buf, sizeof(buf), "%04llx:%04llx:%04llx:%04llx", v >> 48,
		 v >> 32 & 0xffff, v >> 16 & 0xffff, v & 0xffff);
	return json_object_new_string(buf);
}

static struct json_object *path_json(enum aff_path p)
{
	return aff_path_name(p) ? json_object_new_string(aff_path_name(p)) : NULL;
}

struct json_object *aff_topo_to_json(const struct aff_topo *t)
{
	struct json_object *o = json_object_new_object();
	struct json_object *gpus = json_object_new_array();
	struct json_object *nics = json_object_new_array();
	struct json_object *paths = json_object_new_array();
	struct json_object *nccl_paths = json_object_new_array();
	int *dra_rail = aff_dra_gpu_rails(t);
	size_t g, r;

	add(o, "schema", json_object_new_string("railbind.topo/1"));
	add(o, "host", str_or_null(t->host));
	add(o, "source", json_object_new_string(t->source));
	for (g = 0; g < t->ngpu; g++) {
		const struct aff_dev *d = &t->dev[t->gpus[g]];
		struct json_object *j = json_object_new_object();
		struct json_object *row = json_object_new_array();
		struct json_object *nrow = json_object_new_array();

		add(j, "pci", json_object_new_string(d->pci));
		add(j, "index", json_object_new_int((int)g));
		add(j, "numa", numa_of(t, d->loc));
		add(j, "cpus", cpus_of(t, d->loc));
		add(j, "dra", aff_dra_attrs(t, t->gpus[g], dra_rail ? dra_rail[g] : -1, false));
		add_complex(j, t, t->gpus[g]);
		json_object_array_add(gpus, j);
		for (r = 0; r < t->nrail; r++) {
			json_object_array_add(row, json_object_new_string(
				aff_path_name(aff_topo_path(t, g, r))));
			json_object_array_add(nrow, path_json(aff_nccl_rail_path(
				t, t->gpus[g], (int)r)));
		}
		json_object_array_add(paths, row);
		json_object_array_add(nccl_paths, nrow);
	}
	for (r = 0; r < t->nrail; r++) {
		const struct aff_rail *rl = &t->rail[r];
		const struct aff_dev *d = &t->dev[rl->dev];
		struct json_object *j = json_object_new_object();

		add(j, "pci", str_or_null(d->pci));
		add(j, "name", str_or_null(rl->name));
		add(j, "netdev", str_or_null(d->netdev));
		add(j, "port", port_json(rl));
		add(j, "hca", hca_json(rl));
		add(j, "subnet", subnet_json(rl->subnet));
		add(j, "numa", numa_of(t, d->loc));
		add(j, "rdma", json_object_new_boolean(rl->rdma));
		add(j, "port_state", str_or_null(rl->port_state));
		add(j, "rate", number(rl->rate));
		add_fabric(j, rl);
		add(j, "excluded", str_or_null(aff_excl_name(rl->excl)));
		add(j, "dra", aff_dra_attrs(t, rl->dev, (int)r, false));
		add_complex(j, t, rl->dev);
		json_object_array_add(nics, j);
	}
	free(dra_rail);
	add(o, "gpus", gpus);
	add(o, "nics", nics);
	add(o, "paths", paths);
	add(o, "nccl_paths", nccl_paths);
	aff_gpu_topo_json(t, o);
	return o;
}

/* What NCCL ranks best for the rank's GPU on its own, and why not that. */
static struct json_object *nccl_json(const struct aff_plan *p, const struct aff_rank *rk)
{
	const struct aff_topo *t = p->topo;
	struct json_object *o = json_object_new_object();
	struct json_object *nics = json_object_new_array();
	size_t i;

	for (i = 0; i < rk->nccl.n; i++) {
		const struct aff_rail *r = &t->rail[rk->nccl.rail[i]];
		struct json_object *n = json_object_new_object();

		add(n, "pci", str_or_null(t->dev[r->dev].pci));
		add(n, "name", str_or_null(r->name));
		add(n, "netdev", str_or_null(t->dev[r->dev].netdev));
		add(n, "port", port_json(r));
		add(n, "hca", hca_json(r));
		json_object_array_add(nics, n);
	}
	add(o, "nics", nics);
	add(o, "path", rk->nccl.n ? path_json(aff_nccl_rail_path(t, t->gpus[rk->gpu],
				    rk->nccl.rail[0])) : NULL);
	add(o, "bandwidth", rk->nccl.n ? number(aff_pair_bw(t, t->gpus[rk->gpu],
							   rk->nccl.rail[0])) : NULL);
	add(o, "note", str_or_null(rk->nccl_note));
	return o;
}

static struct json_object *excluded_json(const struct aff_plan *p)
{
	struct json_object *arr = json_object_new_array();
	size_t i;

	for (i = 0; i < p->nexcl; i++) {
		const struct aff_excluded *e = &p->excl[i];
		struct json_object *o = json_object_new_object();

		add(o, "name", json_object_new_string(e->name));
		add(o, "pci", str_or_null(e->pci));
		add(o, "port", e->port > 0 ? json_object_new_int(e->port) : NULL);
		add(o, "reason", json_object_new_string(e->reason));
		add(o, "message", json_object_new_string(e->message));
		json_object_array_add(arr, o);
	}
	return arr;
}

static struct json_object *rank_json(const struct aff_plan *p, size_t k)
{
	const struct aff_topo *t = p->topo;
	const struct aff_rank *rk = &p->rank[k];
	const struct aff_dev *g = &t->dev[t->gpus[rk->gpu]];
	struct json_object *o = json_object_new_object();
	struct json_object *gpu = json_object_new_object();
	struct json_object *nics = json_object_new_array();
	struct json_object *env = json_object_new_object();
	size_t i;

	add(o, "local_rank", json_object_new_int((int)k));
	add(gpu, "pci", json_object_new_string(g->pci));
	add(gpu, "index", json_object_new_int(rk->gpu));
	add(gpu, "numa", numa_of(t, g->loc));
	aff_gpu_rank_json(t, rk->gpu, rk->mig, gpu);
	add_complex(gpu, t, t->gpus[rk->gpu]);
	add(o, "gpu", gpu);
	for (i = 0; i < rk->rails.n; i++) {
		const struct aff_rail *r = &t->rail[rk->rails.rail[i]];
		const struct aff_dev *d = &t->dev[r->dev];
		struct json_object *n = json_object_new_object();

		add(n, "pci", str_or_null(d->pci));
		add(n, "name", str_or_null(r->name));
		add(n, "netdev", str_or_null(d->netdev));
		add(n, "port", port_json(r));
		add(n, "hca", hca_json(r));
		add(n, "path", json_object_new_string(aff_path_name(
			aff_path_between(t, t->gpus[rk->gpu], aff_rail_path_dev(r), NULL))));
		add(n, "nccl_path", path_json(aff_nccl_rail_path(t, t->gpus[rk->gpu],
								  rk->rails.rail[i])));
		add(n, "link_layer", str_or_null(r->fab ? r->fab->link_layer : NULL));
		add(n, "gid_index", gid_index_json(r));
		add(n, "bandwidth", number(aff_pair_bw(t, t->gpus[rk->gpu],
						       rk->rails.rail[i])));
		add_complex(n, t, r->dev);
		json_object_array_add(nics, n);
	}
	add(o, "nics", nics);
	add(o, "nccl", nccl_json(p, rk));
	add(o, "cpus", str_or_null(rk->cpus_str));
	add(o, "mems", str_or_null(rk->mems_str));
	add(o, "mem_policy", json_object_new_string(
		p->flags & AFF_PLAN_MEM_BIND ? "bind" : "preferred"));
	for (i = 0; rk->env[i]; i++) {
		const char *eq = strchr(rk->env[i], '=');
		char name[64];

		snprintf(name, sizeof(name), "%.*s", (int)(eq - rk->env[i]),
			 rk->env[i]);
		add(env, name, json_object_new_string(eq + 1));
	}
	add(o, "env", env);
	return o;
}

/* The node's rail devices this process can open (live node), else null. */
static struct json_object *uverbs_json(const struct aff_plan *p)
{
	struct json_object *arr;
	size_t i;

	if (!p->uverbs)
		return NULL;
	arr = json_object_new_array();
	for (i = 0; i < p->nuverbs; i++) {
		const struct aff_uverbs *u = &p->uverbs[i];
		struct json_object *o = json_object_new_object();
		char dev[64];

		snprintf(dev, sizeof(dev), "/dev/infiniband/%s", u->dev);
		add(o, "hca", json_object_new_string(u->hca));
		add(o, "device", u->dev[0] ? json_object_new_string(dev) : NULL);
		add(o, "openable", json_object_new_boolean(u->openable));
		json_object_array_add(arr, o);
	}
	return arr;
}

struct json_object *aff_plan_to_json(const struct aff_plan *p)
{
	struct json_object *o = json_object_new_object();
	struct json_object *ranks = json_object_new_array();
	struct json_object *warns = json_object_new_array();
	size_t i;

	add(o, "schema", json_object_new_string("railbind.plan/1"));
	add(o, "host", str_or_null(p->topo->host));
	add(o, "source", json_object_new_string(p->topo->source));
	for (i = 0; i < p->nrank; i++)
		json_object_array_add(ranks, rank_json(p, i));
	for (i = 0; i < p->nwarn; i++) {
		struct json_object *w = json_object_new_object();

		add(w, "id", json_object_new_string(p->warn[i].id));
		add(w, "subject", json_object_new_string(p->warn[i].subject));
		add(w, "message", json_object_new_string(p->warn[i].message));
		json_object_array_add(warns, w);
	}
	add(o, "ranks", ranks);
	add(o, "warnings", warns);
	add(o, "excluded", excluded_json(p));
	add(o, "uverbs", uverbs_json(p));
	return o;
}

AFF_EXPORT int aff_json_string(struct json_object *o, unsigned long flags, char **out)
{
	const char *s;

	if (!o)
		return -ENOMEM;
	s = json_object_to_json_string_ext(o, (flags & AFF_JSON_PRETTY ?
				JSON_C_TO_STRING_PRETTY : JSON_C_TO_STRING_PLAIN) |
				JSON_C_TO_STRING_NOSLASHESCAPE);
	*out = s ? strdup(s) : NULL;
	json_object_put(o);
	return *out ? 0 : -ENOMEM;
}

AFF_EXPORT int aff_topo_json(const struct aff_topo *t, unsigned long flags,
			     char **out)
{
	return aff_json_string(flags & AFF_JSON_DRA ? aff_dra_to_json(t) : aff_topo_to_json(t),
			       flags & ~AFF_JSON_DRA, out);
}

AFF_EXPORT int aff_plan_json(const struct aff_plan *p, unsigned long flags,
			     char **out)
{
	return aff_json_string(aff_plan_to_json(p), flags, out);
}
