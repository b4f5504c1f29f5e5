// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A rank's environment. What NCCL, UCX and MPI are given is the node's, the
 * same string on every rank, and railbind's pairing reaches a GPU by
 * CPU and memory binding and RAILBIND_NICS, never by a per-rank list:
 *
 * - NCCL_IB_HCA: "=" and every rail port the plan uses, in PCI order, with
 *   the verbs port. NCCL builds its rings and trees from one view of the
 *   node that every rank must share, pairs NICs across nodes by index, and
 *   picks each GPU's NIC itself from the topology (src/graph/search.cc);
 *   NCCL_IB_HCA only filters the devices it opens, exact with "=" (without
 *   it "mlx5_1" also matches mlx5_10), "dev:port" the verbs port, at most
 *   32 entries read (parseStringList into MAX_IB_DEVS, src/misc/utils.cc,
 *   src/transport/net_ib/init.cc). NICs that are not rails stay out.
 * - NCCL_SOCKET_IFNAME: "=" and the node's Ethernet rails' interfaces, when
 *   it has any: NCCL opens them all as its socket transport's devices (the
 *   same count on every rank) and its bootstrap and IB out-of-band take the
 *   first. Rails are the data fabric, so they reach the other nodes. On an
 *   RDMA node it is not set: NCCL's default (ib* first, never lo or
 *   docker*) reaches the other nodes, and railbind knows no better
 *   out-of-band interface. It never names an RDMA device.
 * - UCX_NET_DEVICES: an allow-list ("the order is not meaningful",
 *   src/ucp/core/ucp_context.c), so a per-rank list is fine for UCX itself,
 *   but UCX refuses an IB peer of another subnet prefix and a RoCE peer it
 *   cannot route to (src/uct/ib/base/ib_iface.c): a rank given mlx5_0 alone
 *   cannot reach a peer given mlx5_3 alone on a rail-only fabric (a subnet
 *   per rail). The rank's own rails only when the node's rails are known to
 *   share one configured IB subnet prefix; else the node's rails and
 *   UCX_MAX_RNDV_RAILS=1, so that UCX finds a reachable pair and sends
 *   each transfer over one rail rather than also over a far one.
 * - NCCL_IB_GID_INDEX: plan_gid.c says when.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_ident.h"
#include "plan.h"

#define NCCL_MAX_IB_DEVS 32

struct strbuf {
	char *s;
	size_t len, cap;
	int n;			/* entries */
};

/* Append "name" (port <= 0) or "name:port", comma-separated. */
static int sb_add(struct strbuf *b, const char *name, int port)
{
	char num[16] = "";
	size_t need;

	if (port > 0)
		snprintf(num, sizeof(num), ":%d", port);
	need = strlen(name) + strlen(num) + 2;
	if (b->len + need > b->cap) {
		size_t cap = (b->len + need) * 2;
		char *s = realloc(b->s, cap);

		if (!s)
			return -ENOMEM;
		b->s = s;
		b->cap = cap;
	}
	b->len += (size_t)sprintf(b->s + b->len, "%s%s%s", b->n ? "," : "", name, num);
	b->n++;
	return 0;
}

/*
 * A verbs port as NCCL_IB_HCA names it: "mlx5_0:1", "mlx5_0" when unknown;
 * with a rail id (>= 0) "mlx5_0:1:3", "mlx5_0::3" (src/misc/utils.cc: an
 * empty port is any port).
 */
static int add_hca(struct strbuf *b, const struct aff_rail *r, int rail)
{
	char item[320];
	int port;
	const char *name = aff_rail_hca(r, &port);

	if (rail < 0)
		return sb_add(b, name, port);
	if (port > 0)
		snprintf(item, sizeof(item), "%s:%d:%d", name, port, rail);
	else
		snprintf(item, sizeof(item), "%s::%d", name, rail);
	return sb_add(b, item, 0);
}

/* UCX names a port always: "mlx5_0:1". */
static int add_ucx(struct strbuf *b, const struct aff_rail *r)
{
	int port;
	const char *name = aff_rail_hca(r, &port);

	return sb_add(b, name, port > 0 ? port : 1);
}

static bool plan_rdma(const struct aff_rail *r)
{
	return r->excl == AFF_EXCL_NONE && r->rdma && r->name;
}

/* An Ethernet rail's interface, never an RDMA device's name. */
static bool plan_socket(const struct aff_rail *r)
{
	return r->excl == AFF_EXCL_NONE && !r->rdma && r->name &&
	       !aff_is_verbs_name(r->name);
}

/*
 * The node's rails: those the plan gives some GPU of the node when it plans
 * for all of them, whichever GPUs this plan is for (each Slurm task may
 * plan for its own), so that every rank of the node lists the same. A NIC
 * no GPU gets (storage, north-south) is no rail.
 */
static int node_rails(const struct aff_topo *t, bool *used)
{
	struct aff_rail_set *set = calloc(t->ngpu + 1, sizeof(*set));
	int *gpu = calloc(t->ngpu + 1, sizeof(*gpu));
	size_t i, j;
	int rc = -ENOMEM;

	if (set && gpu) {
		for (i = 0; i < t->ngpu; i++)
			gpu[i] = (int)i;
		rc = aff_assign_rails(t, gpu, t->ngpu, set);
	}
	for (i = 0; set && i < t->ngpu; i++) {
		for (j = 0; !rc && j < set[i].n; j++)
			used[set[i].rail[j]] = true;
		free(set[i].rail);
	}
	free(set);
	free(gpu);
	return rc;
}

/*
 * Every rail of the node on one IB subnet prefix, a configured one: UCX
 * takes a peer as reachable when the prefixes are equal, but rails on
 * separate fabrics all keep the default fe80:: (each subnet manager's
 * default), and a RoCE port's GID 0 is link-local, so the default proves
 * nothing. Unknown (no GID read, an NCCL file): not reachable.
 */
#define IB_DEFAULT_SUBNET 0xfe80000000000000ull

static bool rails_share_subnet(const struct aff_topo *t, const bool *used)
{
	unsigned long long prefix = 0;
	size_t i;

	for (i = 0; i < t->nrail; i++) {
		const struct aff_rail *r = &t->rail[i];

		if (!used[i] || !plan_rdma(r))
			continue;
		if (!r->subnet || r->subnet == IB_DEFAULT_SUBNET ||
		    (prefix && r->subnet != prefix))
			return false;
		prefix = r->subnet;
	}
	return prefix != 0;
}

/* Seen before in the list: two rails that name one port (the port unknown). */
static bool named_before(const struct aff_topo *t, const bool *used, size_t i)
{
	int pi, pj;
	const char *ni = aff_rail_hca(&t->rail[i], &pi);
	size_t j;

	for (j = 0; j < i; j++) {
		const char *nj = aff_rail_hca(&t->rail[j], &pj);

		if (used[j] && plan_rdma(&t->rail[j]) && !strcmp(ni, nj) && pi == pj)
			return true;
	}
	return false;
}

int aff_plan_node_env(struct aff_plan *p)
{
	const struct aff_topo *t = p->topo;
	struct strbuf hca = { 0 }, ucx = { 0 }, sock = { 0 };
	bool *used = calloc(t->nrail + 1, sizeof(*used));
	size_t i, nhca = 0;
	int rc = used ? node_rails(t, used) : -ENOMEM;

	for (i = 0; i < t->nrail && !rc; i++) {
		const struct aff_rail *r = &t->rail[i];

		if (!used[i])
			continue;
		if (plan_rdma(r) && !named_before(t, used, i)) {
			if (nhca++ < NCCL_MAX_IB_DEVS)
				rc = add_hca(&hca, r, p->flags & AFF_PLAN_NCCL_RAIL_IDS ?
					     (int)nhca - 1 : -1);
			if (!rc)
				rc = add_ucx(&ucx, r);
		} else if (plan_socket(r)) {
			rc = sb_add(&sock, r->name, 0);
		}
	}
	if (!rc && nhca > NCCL_MAX_IB_DEVS) {
		char msg[256];

		snprintf(msg, sizeof(msg),
			 "the node has %zu rail ports and NCCL reads at most %d of NCCL_IB_HCA (MAX_IB_DEVS): the first %d, in PCI order, are listed",
			 nhca, NCCL_MAX_IB_DEVS, NCCL_MAX_IB_DEVS);
		rc = aff_plan_warn(p, "nccl-ib-hca-limit", t->source, msg);
	}
	if (!rc && hca.n && asprintf(&p->nccl_ib_hca, "=%s", hca.s) < 0)
		rc = -ENOMEM;
	if (!rc && sock.n && asprintf(&p->socket_ifname, "=%s", sock.s) < 0)
		rc = -ENOMEM;
	p->ucx_per_rank = !rc && rails_share_subnet(t, used);
	if (!rc && ucx.n) {
		p->ucx_node = ucx.s;
		ucx.s = NULL;
		p->ucx_rails = ucx.n;
	}
	free(hca.s);
	free(ucx.s);
	free(sock.s);
	p->node_rail = used;
	return rc;
}

bool aff_plan_env_lists(const struct aff_plan *p, int rail)
{
	const struct aff_rail *r = &p->topo->rail[rail];

	return p->node_rail && p->node_rail[rail] &&
	       (r->rdma ? plan_rdma(r) : plan_socket(r));
}

static int set_env(char ***env, size_t *n, const char *name, const char *value)
{
	char **p = realloc(*env, (*n + 2) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	*env = p;
	if (asprintf(&p[*n], "%s=%s", name, value) < 0)
		return -ENOMEM;
	p[++*n] = NULL;
	return 0;
}

/* The rank's own rails for UCX, where every rail reaches every peer. */
static int rank_ucx(const struct aff_plan *p, const struct aff_rank *rk,
		    struct strbuf *b)
{
	const struct aff_topo *t = p->topo;
	size_t i;
	int rc = 0;

	for (i = 0; i < rk->rails.n && !rc; i++)
		if (plan_rdma(&t->rail[rk->rails.rail[i]]))
			rc = add_ucx(b, &t->rail[rk->rails.rail[i]]);
	return rc;
}

int aff_plan_rank_env_build(const struct aff_plan *p, size_t k, struct aff_rank *rk)
{
	const struct aff_topo *t = p->topo;
	const struct aff_dev *g = &t->dev[t->gpus[rk->gpu]];
	const struct aff_gident *id = g->gident;
	struct strbuf names = { 0 }, ucx = { 0 };
	char num[32];
	size_t i, n = 0;
	int rc = 0;

	for (i = 0; i < rk->rails.n && !rc; i++)
		rc = sb_add(&names, rk->nic_names[i], 0);
	if (!rc && p->ucx_per_rank)
		rc = rank_ucx(p, rk, &ucx);
	rc |= set_env(&rk->env, &n, "CUDA_DEVICE_ORDER", "PCI_BUS_ID");
	if (p->nccl_ib_hca)
		rc |= set_env(&rk->env, &n, "NCCL_IB_HCA", p->nccl_ib_hca);
	if (p->socket_ifname)
		rc |= set_env(&rk->env, &n, "NCCL_SOCKET_IFNAME", p->socket_ifname);
	if (p->nccl_gid_index[0])
		rc |= set_env(&rk->env, &n, "NCCL_IB_GID_INDEX", p->nccl_gid_index);
	if (ucx.n) {
		rc |= set_env(&rk->env, &n, "UCX_NET_DEVICES", ucx.s);
	} else if (p->ucx_node) {
		rc |= set_env(&rk->env, &n, "UCX_NET_DEVICES", p->ucx_node);
		if (p->ucx_rails > 1)
			rc |= set_env(&rk->env, &n, "UCX_MAX_RNDV_RAILS", "1");
	}
	if (p->flags & AFF_PLAN_ISOLATE_GPU) {
		snprintf(num, sizeof(num), "%d", rk->gpu);
		/* A MIG rank sees its instance, as the claim named it. */
		rc |= set_env(&rk->env, &n, g->vendor == 0x1002 ?
			      "ROCR_VISIBLE_DEVICES" : "CUDA_VISIBLE_DEVICES",
			      rk->mig >= 0 && id ? id->migdev[rk->mig].uuid : num);
	}
	snprintf(num, sizeof(num), "%zu", k);
	rc |= set_env(&rk->env, &n, "RAILBIND_LOCAL_RANK", num);
	snprintf(num, sizeof(num), "%d", rk->gpu);
	rc |= set_env(&rk->env, &n, "RAILBIND_GPU_INDEX", num);
	rc |= set_env(&rk->env, &n, "RAILBIND_GPU", g->pci);
	if (id && id->uuid)
		rc |= set_env(&rk->env, &n, "RAILBIND_GPU_UUID", id->uuid);
	if (rk->mig >= 0 && id)
		rc |= set_env(&rk->env, &n, "RAILBIND_MIG_UUID", id->migdev[rk->mig].uuid);
	rc |= set_env(&rk->env, &n, "RAILBIND_NICS", names.s ? names.s : "");
	rc |= set_env(&rk->env, &n, "RAILBIND_CPUS",
		      rk->cpus_str ? rk->cpus_str : "");
	rc |= set_env(&rk->env, &n, "RAILBIND_MEMS",
		      rk->mems_str ? rk->mems_str : "");
	free(names.s);
	free(ucx.s);
	return rc ? -ENOMEM : 0;
}
