// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The audit's frame: run the check groups, collect findings and undecided
 * checks, and build the railbind.audit/1 document every output is printed
 * from (text, JSON, Prometheus, NFD), so they cannot disagree.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "audit.h"

const char *const aff_audit_check_ids[AFF_AUDIT_NCHECKS] = {
	"gpu-nic-path", "numa-unknown", "numa-mismatch", "acs-redirect",
	"link-downtrained", "peer-memory", "iommu-translation", "nic-port-down",
	"nic-shared", "peer-cross-path", "link-flapping", "pcie-errors", "port-flapping",
};

static const char *const sev_names[] = { "ok", "warn", "fail", "unknown" };

AFF_EXPORT const char *aff_sev_name(enum aff_sev s)
{
	return (unsigned)s < 4 ? sev_names[s] : "unknown";
}

AFF_EXPORT enum aff_sev aff_sev_from_name(const char *s)
{
	int i;

	for (i = 0; s && i < 4; i++)
		if (!strcmp(sev_names[i], s))
			return (enum aff_sev)i;
	return AFF_SEV_UNKNOWN;
}

int aff_status_exit_code(struct json_object *doc)
{
	struct json_object *v;

	if (!json_object_object_get_ex(doc, "status", &v))
		return AFF_SEV_UNKNOWN;
	return (int)aff_sev_from_name(json_object_get_string(v));
}

static int check_index(const char *id)
{
	int i;

	for (i = 0; i < AFF_AUDIT_NCHECKS; i++)
		if (!strcmp(aff_audit_check_ids[i], id))
			return i;
	return -1;
}

static struct json_object *str_or_null(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

int aff_audit_add(struct aff_audit *a, const char *id, enum aff_sev sev,
		  const char *subject, const char *const *devices,
		  struct json_object *evidence, const char *remedy, const char *fmt, ...)
{
	struct json_object *c = json_object_new_object(), *devs = json_object_new_array();
	int k = check_index(id);
	char msg[1024];
	va_list ap;

	if (!c || !devs || k < 0) {
		json_object_put(c);
		json_object_put(devs);
		json_object_put(evidence);
		return k < 0 ? -EINVAL : -ENOMEM;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (; devices && *devices; devices++)
		if (**devices)
			json_object_array_add(devs, json_object_new_string(*devices));
	json_object_object_add(c, "id", json_object_new_string(id));
	json_object_object_add(c, "severity", json_object_new_string(aff_sev_name(sev)));
	json_object_object_add(c, "subject", str_or_null(subject));
	json_object_object_add(c, "message", json_object_new_string(msg));
	json_object_object_add(c, "remedy", str_or_null(remedy));
	json_object_object_add(c, "devices", devs);
	json_object_object_add(c, "evidence", evidence ? evidence : json_object_new_object());
	json_object_array_add(a->checks, c);
	if (sev > a->check_sev[k] || a->check_sev[k] == AFF_SEV_UNKNOWN)
		a->check_sev[k] = sev;
	a->check_found[k]++;
	return 0;
}

int aff_audit_undecided(struct aff_audit *a, const char *id, const char *fmt, ...)
{
	struct json_object *u = json_object_new_object();
	char msg[512];
	va_list ap;

	if (!u)
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(u, "id", json_object_new_string(id));
	json_object_object_add(u, "reason", json_object_new_string(msg));
	json_object_array_add(a->undecided, u);
	return 0;
}

static bool is_undecided(const struct aff_audit *a, const char *id)
{
	size_t i, n = json_object_array_length(a->undecided);

	for (i = 0; i < n; i++) {
		struct json_object *u = json_object_array_get_idx(a->undecided, i), *v;

		if (json_object_object_get_ex(u, "id", &v) &&
		    !strcmp(json_object_get_string(v), id))
			return true;
	}
	return false;
}

int aff_audit_pair(const struct aff_audit *a, size_t rank, struct aff_audit_pair *p)
{
	const struct aff_rank *r;

	if (!a->plan || rank >= a->plan->nrank)
		return -ERANGE;
	r = &a->plan->rank[rank];
	p->gpu = a->topo->gpus[r->gpu];
	p->rail = r->rails.n ? r->rails.rail[0] : -1;
	p->nic = p->rail >= 0 ? a->topo->rail[p->rail].dev : -1;
	p->path = p->nic >= 0 ? aff_topo_path(a->topo, (size_t)r->gpu, (size_t)p->rail) :
				AFF_PATH_NONE;
	return 0;
}

size_t aff_audit_path_bridges(const struct aff_topo *t, int x, int y, int *out, size_t max)
{
	size_t n = 0;
	int i, j;

	/* x's ancestors up to (and including) the first one y also has. */
	for (i = t->dev[x].parent; i >= 0; i = t->dev[i].parent) {
		bool common = false;

		for (j = t->dev[y].parent; j >= 0; j = t->dev[j].parent)
			if (j == i)
				common = true;
		if (t->dev[i].type == AFF_DEV_BRIDGE && n < max)
			out[n++] = i;
		if (common)
			break;
	}
	for (j = t->dev[y].parent; j >= 0; j = t->dev[j].parent) {
		bool mine = false;

		for (i = t->dev[x].parent; i >= 0; i = t->dev[i].parent)
			if (i == j)
				mine = true;
		if (mine)
			break;
		if (t->dev[j].type == AFF_DEV_BRIDGE && n < max)
			out[n++] = j;
	}
	return n;
}

const char *aff_audit_rail_name(const struct aff_topo *t, int rail)
{
	const struct aff_rail *r = &t->rail[rail];

	if (r->name && *r->name)
		return r->name;
	if (t->dev[r->dev].netdev)
		return t->dev[r->dev].netdev;
	return t->dev[r->dev].pci;
}

int aff_audit_dev_numa(const struct aff_topo *t, int dev)
{
	const struct aff_dev *d = &t->dev[dev];

	if (d->numa_raw >= 0)
		return d->numa_raw;
	if (d->numa_raw == -1)
		return -1;
	if (d->loc >= 0 && t->loc[d->loc].known)
		return t->loc[d->loc].numa;
	return -1;
}

static struct json_object *pairs_json(const struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	struct json_object *arr = json_object_new_array();
	size_t g, r, k;

	for (g = 0; g < t->ngpu; g++)
		for (r = 0; r < t->nrail; r++) {
			struct json_object *o = json_object_new_object();
			bool planned = false;

			for (k = 0; a->plan && k < a->plan->nrank; k++)
				if (a->plan->rank[k].gpu == (int)g && a->plan->rank[k].rails.n &&
				    a->plan->rank[k].rails.rail[0] == (int)r)
					planned = true;
			json_object_object_add(o, "gpu", json_object_new_string(
				t->dev[t->gpus[g]].pci));
			json_object_object_add(o, "nic", json_object_new_string(
				aff_audit_rail_name(t, (int)r)));
			json_object_object_add(o, "nic_pci", str_or_null(t->dev[t->rail[r].dev].pci));
			json_object_object_add(o, "path", str_or_null(aff_path_name(
				aff_topo_path(t, g, r))));
			json_object_object_add(o, "planned", json_object_new_boolean(planned));
			json_object_array_add(arr, o);
		}
	return arr;
}

static int build_doc(struct aff_audit *a)
{
	struct json_object *doc = json_object_new_object(), *sum = json_object_new_object();
	enum aff_sev worst = AFF_SEV_OK;
	bool decided = false;
	int k;

	if (!doc || !sum) {
		json_object_put(doc);
		json_object_put(sum);
		return -ENOMEM;
	}
	for (k = 0; k < AFF_AUDIT_NCHECKS; k++) {
		enum aff_sev s = a->check_sev[k];

		if (s == AFF_SEV_UNKNOWN) {
			json_object_object_add(sum, aff_audit_check_ids[k],
					       json_object_new_string("unknown"));
			continue;
		}
		decided = true;
		if (s > worst)
			worst = s;
		json_object_object_add(sum, aff_audit_check_ids[k],
				       json_object_new_string(aff_sev_name(s)));
	}
	json_object_object_add(doc, "schema", json_object_new_string("railbind.audit/1"));
	json_object_object_add(doc, "host", str_or_null(a->topo->host));
	json_object_object_add(doc, "source", str_or_null(a->topo->source));
	json_object_object_add(doc, "status", json_object_new_string(
		aff_sev_name(decided ? worst : AFF_SEV_UNKNOWN)));
	json_object_object_add(doc, "checks", json_object_get(a->checks));
	json_object_object_add(doc, "undecided", json_object_get(a->undecided));
	json_object_object_add(doc, "summary", sum);
	json_object_object_add(doc, "topo", aff_topo_to_json(a->topo));
	json_object_object_add(doc, "pairs", pairs_json(a));
	a->doc = doc;
	return 0;
}

AFF_EXPORT int aff_audit_run(struct aff_topo *topo, struct aff_plan *plan, unsigned long flags,
			     struct aff_audit **out, char *err, size_t errlen)
{
	struct aff_audit *a;
	int k, rc;

	(void)flags;
	*out = NULL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->refcount = 1;
	a->topo = aff_topo_ref(topo);
	if (plan) {
		a->plan = aff_plan_ref(plan);
	} else if (topo->ngpu) {
		rc = aff_plan_new(topo, NULL, &a->plan, err, errlen);
		if (rc < 0 && rc != -ENODEV) {
			aff_audit_free(a);
			return rc;
		}
	}
	a->checks = json_object_new_array();
	a->undecided = json_object_new_array();
	if (!a->checks || !a->undecided) {
		aff_audit_free(a);
		return -ENOMEM;
	}
	for (k = 0; k < AFF_AUDIT_NCHECKS; k++)
		a->check_sev[k] = AFF_SEV_UNKNOWN;
	rc = aff_audit_pcie(a);
	if (!rc)
		rc = aff_audit_numa(a);
	if (!rc)
		rc = aff_audit_nic(a);
	if (!rc)
		rc = aff_audit_host(a);
	if (!rc)
		rc = aff_audit_health(a);
	/* A check that neither found anything nor gave up passed: say so. */
	for (k = 0; !rc && k < AFF_AUDIT_NCHECKS; k++)
		if (!a->check_found[k] && !is_undecided(a, aff_audit_check_ids[k]))
			rc = aff_audit_add(a, aff_audit_check_ids[k], AFF_SEV_OK, "node", NULL,
					   NULL, NULL, "nothing found");
	if (!rc)
		rc = build_doc(a);
	if (rc < 0) {
		aff_audit_free(a);
		return aff_seterr(err, errlen, -rc, "audit: %s", strerror(-rc));
	}
	*out = a;
	return 0;
}

struct json_object *aff_audit_to_json(const struct aff_audit *a)
{
	return json_object_get(a->doc);
}

AFF_EXPORT int aff_audit_json(const struct aff_audit *a, unsigned long flags, char **out)
{
	return aff_json_string(aff_audit_to_json(a), flags, out);
}

AFF_EXPORT int aff_audit_exit_code(const struct aff_audit *a)
{
	return aff_status_exit_code(a->doc);
}

AFF_EXPORT struct aff_audit *aff_audit_ref(struct aff_audit *a)
{
	if (a)
		a->refcount++;
	return a;
}

AFF_EXPORT struct aff_audit *aff_audit_unref(struct aff_audit *a)
{
	if (!a || --a->refcount > 0)
		return NULL;
	json_object_put(a->doc);
	json_object_put(a->checks);
	json_object_put(a->undecided);
	aff_plan_unref(a->plan);
	aff_topo_unref(a->topo);
	free(a);
	return NULL;
}

void aff_audit_free(struct aff_audit *a)
{
	aff_audit_unref(a);
}
