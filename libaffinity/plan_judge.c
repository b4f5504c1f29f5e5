// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the plan leaves out, and where it parts from NCCL. Every rail left
 * out (a port not ACTIVE, a NIC much slower than the others, exclude-nic) is
 * listed with its reason; a GPU whose nearest NIC is among them gets a
 * warning with the fix; and for each rank, the NICs NCCL would rank best on
 * its own (no NCCL_IB_HCA), with one line saying why the plan's NIC is not
 * one of them when it is not. The plan's warnings are added here, by
 * plan.c's own checks too.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

int aff_plan_warn(struct aff_plan *p, const char *id, const char *subject,
		  const char *message)
{
	struct aff_warning *w = realloc(p->warn, (p->nwarn + 1) * sizeof(*w));

	if (!w)
		return -ENOMEM;
	p->warn = w;
	w = &p->warn[p->nwarn];
	w->id = strdup(id);
	w->subject = strdup(subject);
	w->message = strdup(message);
	p->nwarn++;
	return w->id && w->subject && w->message ? 0 : -ENOMEM;
}

const char *aff_rail_label(const struct aff_topo *t, int rail)
{
	const struct aff_rail *r = &t->rail[rail];
	const struct aff_dev *d = &t->dev[r->dev];

	if (r->name && *r->name)
		return r->name;
	if (d->netdev)
		return d->netdev;
	return d->pci[0] ? d->pci : "(no PCI address)";
}

static double fastest_rate(const struct aff_topo *t)
{
	double best = 0;
	size_t i;

	for (i = 0; i < t->nrail; i++)
		if (t->rail[i].excl != AFF_EXCL_DOWN && t->rail[i].rate > best &&
		    t->dev[t->rail[i].dev].pci[0])
			best = t->rail[i].rate;
	return best;
}

/* "12.5 GB/s", or "no known limit" for a pair nothing limits. */
static const char *bw_text(double bw, char *buf, size_t len)
{
	if (isinf(bw))
		snprintf(buf, len, "no known limit");
	else
		snprintf(buf, len, "%g GB/s", bw);
	return buf;
}

static int add_excluded(struct aff_plan *p, const char *name, const char *pci, int port,
			const char *reason, const char *message)
{
	struct aff_excluded *e = realloc(p->excl, (p->nexcl + 1) * sizeof(*e));

	if (!e)
		return -ENOMEM;
	p->excl = e;
	e = &p->excl[p->nexcl++];
	memset(e, 0, sizeof(*e));
	snprintf(e->pci, sizeof(e->pci), "%s", pci);
	e->port = port;
	e->reason = reason;
	e->name = strdup(name);
	e->message = strdup(message);
	return e->name && e->message ? 0 : -ENOMEM;
}

static int list_excluded(struct aff_plan *p)
{
	const struct aff_topo *t = p->topo;
	double fastest = fastest_rate(t);
	char msg[512];
	size_t i;
	int rc = 0;

	for (i = 0; i < t->nrail && !rc; i++) {
		const struct aff_rail *r = &t->rail[i];
		const char *name = aff_rail_label(t, (int)i), *pci = t->dev[r->dev].pci;
		int port;

		aff_rail_hca(r, &port);

		if (r->excl == AFF_EXCL_DOWN)
			snprintf(msg, sizeof(msg),
				 "%s port %d (%s) is %s, not ACTIVE: NCCL does not use it; check the cable, the switch port and the subnet manager (ibstat %s)",
				 name, port > 0 ? port : 1, pci, r->port_state,
				 name);
		else if (r->excl == AFF_EXCL_SLOW)
			snprintf(msg, sizeof(msg),
				 "%s (%s) runs at %g Gb/s, under a quarter of the fastest rail's %g Gb/s: not a rail (slow-rails = yes in railbind.conf makes it one)",
				 name, pci, r->rate, fastest);
		else if (r->excl == AFF_EXCL_NORTH_SOUTH)
			snprintf(msg, sizeof(msg),
				 "%s (%s) is a BlueField DPU, the node's north-south (storage, front-end) NIC: not a rail (include-nic = %s in railbind.conf makes it one)",
				 name, pci, name);
		else
			continue;
		rc = add_excluded(p, name, pci, port, aff_excl_name(r->excl), msg);
	}
	for (i = 0; i < t->ndropped && !rc; i++) {
		const struct aff_dropped *d = &t->dropped[i];
		const char *name = d->name ? d->name : d->pci;

		snprintf(msg, sizeof(msg), "%s (%s) is named by exclude-nic in railbind.conf",
			 name, d->pci);
		rc = add_excluded(p, name, d->pci, 0, "config", msg);
	}
	return rc;
}

/* A warning for a GPU whose nearest NICs are all left out. */
static int warn_lost(struct aff_plan *p, const struct aff_rank *rk,
		     const struct aff_key *mine)
{
	const struct aff_topo *t = p->topo;
	const struct aff_dev *g = &t->dev[t->gpus[rk->gpu]];
	const struct aff_rail *lost = &t->rail[rk->lost.rail[0]];
	const char *name = aff_rail_label(t, rk->lost.rail[0]);
	struct aff_key k;
	char msg[768], instead[96];

	aff_pair_key(t, t->gpus[rk->gpu], rk->lost.rail[0], &k, NULL);
	if (rk->rails.n)
		snprintf(instead, sizeof(instead), "the plan gives it %s (%s) instead",
			 aff_rail_label(t, rk->rails.rail[0]), aff_path_name(mine->path));
	else
		snprintf(instead, sizeof(instead), "the plan gives it no rail");
	if (lost->excl == AFF_EXCL_DOWN) {
		snprintf(msg, sizeof(msg),
			 "GPU %d (%s): its nearest rail %s (%s) has port %d %s, not ACTIVE, so NCCL cannot use it and %s; check the cable, the switch port and the subnet manager (ibstat %s), then plan again",
			 rk->gpu, g->pci, name, aff_path_name(k.path),
			 lost->port > 0 ? lost->port : 1, lost->port_state, instead,
			 name);
		return aff_plan_warn(p, "nic-port-down", g->pci, msg);
	}
	snprintf(msg, sizeof(msg),
		 "GPU %d (%s): its nearest NIC %s (%s) runs at %g Gb/s, under a quarter of the fastest rail, so %s; set slow-rails = yes (or include-nic = %s) in railbind.conf to use it",
		 rk->gpu, g->pci, name, aff_path_name(k.path), lost->rate, instead, name);
	return aff_plan_warn(p, "slow-rail", g->pci, msg);
}

/*
 * NCCL_IB_HCA and NCCL_SOCKET_IFNAME are the node's on every rank
 * (plan_env.c), so they cannot steer one GPU to its NIC; the topology NCCL
 * reads, the same in every rank, can. A NIC they leave out NCCL does not
 * pick at all.
 */
static int node_wide_lever(const struct aff_plan *p, struct aff_rank *rk, int rail)
{
	const char *var = p->topo->rail[rail].rdma ? "NCCL_IB_HCA" : "NCCL_SOCKET_IFNAME";
	char *s;
	int n;

	if (aff_plan_env_lists(p, rail))
		n = asprintf(&s, "%s; %s is the same on every rank and does not choose a GPU's NIC: for NCCL to pair them as the plan does, give every rank the node's topology, NCCL_TOPO_FILE=FILE from railbind nccl-topo > FILE (or railbindd's nccl-topo-file)",
			     rk->nccl_note, var);
	else
		n = asprintf(&s, "%s; %s leaves %s out, so NCCL picks among the plan's rails",
			     rk->nccl_note, var, aff_rail_label(p->topo, rail));
	if (n < 0)
		return -ENOMEM;
	free(rk->nccl_note);
	rk->nccl_note = s;
	return 0;
}

/* One line: why the plan's NIC is not the one NCCL would take. */
static int nccl_note(const struct aff_plan *p, struct aff_rank *rk,
		     const struct aff_cand *n0, const struct aff_key *mine)
{
	const struct aff_topo *t = p->topo;
	const struct aff_rail *r = &t->rail[n0->rail];
	const char *name = aff_rail_label(t, n0->rail);
	const char *own = aff_rail_label(t, rk->rails.rail[0]);
	char b1[32], b2[32];
	int n;

	bw_text(n0->key.bw, b1, sizeof(b1));
	bw_text(mine->bw, b2, sizeof(b2));
	if (n0->key.virt)
		n = asprintf(&rk->nccl_note,
			     "NCCL on its own would pick %s, a virtual interface with no PCI device (%s against %s for %s): the plan keeps the PCI NIC %s",
			     name, b1, b2, own, own);
	else if (r->excl == AFF_EXCL_SLOW)
		n = asprintf(&rk->nccl_note,
			     "NCCL on its own would pick %s (%s, %s against %s for %s), which the plan leaves out as slow (%g Gb/s): slow-rails = yes in railbind.conf lets the plan use it",
			     name, aff_path_name(n0->key.nccl), b1, b2, own, r->rate);
	else
		n = asprintf(&rk->nccl_note,
			     "NCCL on its own would pick %s (%s, %s) over %s (%s, %s)",
			     name, aff_path_name(n0->key.nccl), b1, own,
			     aff_path_name(mine->nccl), b2);
	if (n < 0) {
		rk->nccl_note = NULL;
		return -ENOMEM;
	}
	return r->excl == AFF_EXCL_SLOW ? 0 : node_wide_lever(p, rk, n0->rail);
}

static int judge_rank(struct aff_plan *p, const struct aff_ranker *rkr,
		      struct aff_rank *rk)
{
	const struct aff_topo *t = p->topo;
	int gdev = t->gpus[rk->gpu], rc;
	struct aff_cand *hw = NULL, *nccl = NULL;
	struct aff_key mine = { 0 };
	size_t nhw, nnccl, i;

	if (rk->rails.n)
		aff_pair_key(t, gdev, rk->rails.rail[0], &mine, NULL);
	rc = aff_rank_best(rkr, gdev, AFF_RANK_HW, &hw, &nhw);
	if (!rc)
		rc = aff_rank_best(rkr, gdev, AFF_RANK_NCCL, &nccl, &nnccl);
	if (rc)
		goto out;
	/* Left-out rails that rank above what the GPU got. */
	if (nhw && (!rk->rails.n || aff_key_cmp(&hw[0].key, &mine, AFF_RANK_PLAN) < 0))
		for (i = 0; i < nhw && !rc; i++)
			if (t->rail[hw[i].rail].excl != AFF_EXCL_NONE)
				rc = aff_rail_set_push(&rk->lost, hw[i].rail);
	for (i = 0; i < nnccl && !rc; i++)
		rc = aff_rail_set_push(&rk->nccl, nccl[i].rail);
	if (!rc && rk->lost.n)
		rc = warn_lost(p, rk, &mine);
	if (!rc && nnccl && rk->rails.n &&
	    aff_key_cmp(&nccl[0].key, &mine, AFF_RANK_NCCL) < 0)
		rc = nccl_note(p, rk, &nccl[0], &mine);
out:
	free(hw);
	free(nccl);
	return rc;
}

int aff_plan_judge(struct aff_plan *p)
{
	struct aff_ranker rkr;
	size_t i;
	int rc;

	rc = aff_ranker_init(&rkr, p->topo);
	if (rc)
		return rc;
	for (i = 0; i < p->nrank && !rc; i++)
		rc = judge_rank(p, &rkr, &p->rank[i]);
	aff_ranker_fini(&rkr);
	return rc ? rc : list_excluded(p);
}
