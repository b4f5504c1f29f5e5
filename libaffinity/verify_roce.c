// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * roce-lossless, per running rank: the priority its RDMA traffic lands on
 * at each RoCE rail it uses (the devices it holds, else NCCL_IB_HCA's and
 * UCX_NET_DEVICES' picks, else its planned rails), from the traffic class
 * and service level of its own environment (NCCL_IB_TC, NCCL_IB_FIFO_TC,
 * NCCL_IB_SL, UCX_IB_TRAFFIC_CLASS, UCX_IB_SL; for what it does not set,
 * /etc/nccl.conf as NCCL reads it; roce_judge.c), against the
 * rail's DCB state: the snapshot's RailbindDcb* attributes, or on the live
 * node the kernel's answer (DCB netlink, no privilege). A traffic class a
 * program sets in code (NCCL's communicator config, a verbs address
 * handle) is not in its environment and so invisible here: said in every
 * finding. Only a process holding an RDMA device is judged.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>

#include "roce.h"
#include "verify.h"

struct rank_env {
	const struct aff_vproc *p;
	struct aff_roce_env file;
};

/* The rank's variable, else NCCL's defaults file, as NCCL inside the rank reads them. */
static const char *proc_env(const char *name, void *arg)
{
	struct rank_env *re = arg;
	size_t i;

	for (i = 0; i < AFF_VENV_COUNT; i++)
		if (i != AFF_VENV_LOCAL_RANK && i != AFF_VENV_JOB &&
		    !strcmp(aff_venv_names[i], name) && re->p->env[i])
			return re->p->env[i];
	return aff_roce_env_file(&re->file, name);
}

/* The rail's DCB state: 0, or -1 (and *@why when there is a reason). */
static int rail_dcb(const struct aff_verify *v, int r, struct aff_dcb *d, const char **why,
		    char *buf, size_t len)
{
	const struct aff_topo *t = v->topo;
	const struct aff_dev *dv = &t->dev[t->rail[r].dev];
	hwloc_obj_t obj = t->hw ? hwloc_get_pcidev_by_busid(t->hw, dv->domain, dv->bus, dv->devno,
							    dv->func) : NULL;
	const char *root = t->ctx ? t->ctx->root : NULL;
	char w[256];
	int rc;

	*why = NULL;
	if (obj && hwloc_obj_get_info_by_name(obj, AFF_INFO_DCB_NOT_APPLICABLE))
		return -1;
	if (obj && aff_dcb_info_read(obj, d, why, buf, len) == 0)
		return d->has_pfc ? 0 : -1;
	if (obj && hwloc_obj_get_info_by_name(obj, AFF_INFO_DCB_UNDECIDED))
		return -1;
	/* The live node, loaded without DCB: asked now. */
	if (t->src != AFF_SRC_LIVE || (root && *root && strcmp(root, "/")) || !dv->netdev)
		return -1;
	rc = aff_dcb_read_netdev(dv->netdev, d, w, sizeof(w));
	if (rc < 0) {
		*why = aff_dcb_errno_reason(rc);
		return -1;
	}
	return d->has_pfc ? 0 : -1;
}

void aff_vj_check_roce(struct aff_verify *v, struct judged *j, const struct planned *pl,
		       const struct nic_use *use, size_t nuse)
{
	const struct aff_topo *t = v->topo;
	struct aff_roce_user u[AFF_ROCE_USERS];
	struct rank_env re = { .p = j->p };
	char text[1024] = "", line[384], buf[160];
	enum aff_sev worst = AFF_SEV_OK, s;
	struct json_object *ev = NULL, *rails = NULL;
	int seen[64];
	size_t nseen = 0, i, k, n, used = 0;
	int prio;

	if (!use[0].n || (j->p->unreadable & AFF_VP_NO_ENV))
		return;
	aff_roce_env_load(&re.file, t);
	n = aff_roce_users(proc_env, &re, u);
	aff_roce_env_mark(&re.file, u, n);
	aff_roce_env_clear(&re.file);
	for (k = 0; k < nuse; k++)
		for (i = 0; i < use[k].n && nseen < 64; i++)
			seen[nseen++] = use[k].rail[i];
	for (i = 0; !nseen && i < pl->nrails && nseen < 64; i++)
		seen[nseen++] = pl->rails[i];
	for (i = 0; i < nseen; i++) {
		const char *why, *name = aff_audit_rail_name(t, seen[i]);
		struct aff_dcb d;
		size_t m;

		for (k = 0; k < i && seen[k] != seen[i]; k++)
			;
		if (k < i)
			continue;
		if (rail_dcb(v, seen[i], &d, &why, buf, sizeof(buf)) < 0) {
			if (why)
				aff_vj_unknown(j, "roce", "rail %s: %s", name, why);
			continue;
		}
		j->decided = true;
		for (m = 0; m < n; m++) {
			s = aff_roce_judge(&d, &t->ctx->conf, &u[m], &prio, line, sizeof(line));
			if (s == AFF_SEV_OK)
				continue;
			if (!ev) {
				ev = json_object_new_object();
				rails = json_object_new_array();
			}
			{
				struct json_object *rj = json_object_new_object();

				json_object_object_add(rj, "nic", json_object_new_string(name));
				json_object_object_add(rj, "transport", json_object_new_string(u[m].who));
				json_object_object_add(rj, "from", json_object_new_string(u[m].src));
				json_object_object_add(rj, "priority", prio >= 0 ? json_object_new_int(prio) : NULL);
				json_object_object_add(rj, "pfc_enabled", json_object_new_int(d.pfc_en));
				json_object_array_add(rails, rj);
			}
			if (s > worst)
				worst = s;
			if (used < sizeof(text))
				used += (size_t)snprintf(text + used, sizeof(text) - used, "%son %s: %s",
							 used ? "; " : "", name, line);
		}
	}
	if (!ev)
		return;
	json_object_object_add(ev, "rails", rails);
	aff_vj_finding(j, "roce-lossless", worst, ev,
		       "restart it with NCCL_IB_TC (and UCX_IB_TRAFFIC_CLASS) set so that DSCP = TC >> 2 maps to a priority with PFC on (railbind.conf roce-priority), or fix the NIC's PFC and APP table (dcb pfc, dcb app)",
		       "its RDMA traffic %s (a traffic class set in code, on the communicator or the address handle, is invisible to verify)",
		       text);
}
