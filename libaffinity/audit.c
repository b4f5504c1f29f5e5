// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The audit's frame: run the check groups (audit_*.c), which add their
 * findings and undecided checks through audit_findings.c, and build the
 * railbind.audit/1 document every output is printed from (text, JSON,
 * Prometheus, NFD), so they cannot disagree.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "audit.h"

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
			json_object_object_add(o, "nic_pci", aff_audit_str(t->dev[t->rail[r].dev].pci));
			json_object_object_add(o, "path", aff_audit_str(aff_path_name(
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
	json_object_object_add(doc, "host", aff_audit_str(a->topo->host));
	json_object_object_add(doc, "source", aff_audit_str(a->topo->source));
	json_object_object_add(doc, "status", json_object_new_string(
		aff_sev_name(decided ? worst : AFF_SEV_UNKNOWN)));
	json_object_object_add(doc, "checks", json_object_get(a->checks));
	json_object_object_add(doc, "undecided", json_object_get(a->undecided));
	json_object_object_add(doc, "summary", sum);
	json_object_object_add(doc, "topo", aff_topo_to_json(a->topo));
	json_object_object_add(doc, "pairs", pairs_json(a));
	json_object_object_add(doc, "optics", json_object_get(a->optics));
	json_object_object_add(doc, "dcb", json_object_get(a->dcb));
	if (a->acs_remedy)
		json_object_object_add(doc, "acs_remedy", json_object_get(a->acs_remedy));
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
	a->optics = json_object_new_array();
	a->dcb = json_object_new_array();
	if (!a->checks || !a->undecided || !a->optics || !a->dcb) {
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
	if (!rc)
		rc = aff_audit_optics(a);
	if (!rc)
		rc = aff_audit_slurm(a);
	if (!rc)
		rc = aff_audit_fabric(a);
	if (!rc)
		rc = aff_audit_roce(a);
	if (!rc)
		rc = aff_audit_gdr(a);
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
	json_object_put(a->optics);
	json_object_put(a->dcb);
	json_object_put(a->acs_remedy);
	aff_plan_unref(a->plan);
	aff_topo_unref(a->topo);
	free(a);
	return NULL;
}

void aff_audit_free(struct aff_audit *a)
{
	aff_audit_unref(a);
}
