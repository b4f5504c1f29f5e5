// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What verify's judge (verify_judge.c) and its checks (verify_checks.c)
 * share: the check ids, a finding or an unknown added to a process, and the
 * topology's view of a GPU or rail. Apart from both, so that the checks do
 * not call back into the judge that calls them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "verify.h"

const char *const aff_vj_ref_names[] = { NULL, "gpu", "local-rank", "railbind-env", "lease" };

const char *const aff_verify_check_ids[AFF_VERIFY_NCHECKS] = {
	"gpu-not-planned", "gpu-shared", "unbound", "cpu-numa", "cpus-outside-plan",
	"memory-far", "memory-policy", "nic-not-rail", "peer-cross-path", "nccl-hca-mismatch",
	"roce-lossless",
};

struct json_object *aff_vj_str(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

struct json_object *aff_vj_cpulist(hwloc_const_bitmap_t set)
{
	char *s = aff_bitmap_list(set);
	struct json_object *o = s ? json_object_new_string(s) : NULL;

	free(s);
	return o;
}

void aff_vj_finding(struct judged *j, const char *id, enum aff_sev sev,
			struct json_object *evidence, const char *remedy, const char *fmt, ...)
{
	struct json_object *f = json_object_new_object();
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(f, "id", json_object_new_string(id));
	json_object_object_add(f, "severity", json_object_new_string(aff_sev_name(sev)));
	json_object_object_add(f, "message", json_object_new_string(msg));
	json_object_object_add(f, "remedy", aff_vj_str(remedy));
	json_object_object_add(f, "evidence", evidence ? evidence : json_object_new_object());
	json_object_array_add(j->findings, f);
	if (sev > j->worst)
		j->worst = sev;
	j->decided = true;
}

void aff_vj_unknown(struct judged *j, const char *what, const char *fmt, ...)
{
	struct json_object *u = json_object_new_object();
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_object_object_add(u, "what", json_object_new_string(what));
	json_object_object_add(u, "reason", json_object_new_string(msg));
	json_object_array_add(j->unknown, u);
}

/* ---- the topology's view ---- */

int aff_vj_gpu_by_pci(const struct aff_topo *t, const char *pci)
{
	size_t i;

	for (i = 0; *pci && i < t->ngpu; i++)
		if (!strcmp(t->dev[t->gpus[i]].pci, pci))
			return (int)i;
	return -1;
}

int aff_vj_rail(const struct aff_topo *t, const char *pci, const char *name)
{
	size_t i;

	for (i = 0; i < t->nrail; i++)
		if ((*pci && !strcmp(t->dev[t->rail[i].dev].pci, pci)) ||
		    (name && *name && t->rail[i].name && !strcmp(t->rail[i].name, name)))
			return (int)i;
	return -1;
}

const char *aff_vj_gpu_pci(const struct aff_topo *t, int g)
{
	return t->dev[t->gpus[g]].pci;
}

int aff_vj_gpu_numa(const struct aff_topo *t, int g)
{
	return aff_audit_dev_numa(t, t->gpus[g]);
}

bool aff_vj_has_gpu(const struct judged *j, int g)
{
	size_t i;

	for (i = 0; i < j->ngpu; i++)
		if (j->gpu[i] == g)
			return true;
	return false;
}

/* The best path class from the process's GPUs to rail @r. */
enum aff_path aff_vj_best_path(const struct aff_topo *t, const struct judged *j, int r)
{
	enum aff_path best = AFF_PATH_NONE, p;
	size_t i;

	for (i = 0; i < j->ngpu; i++) {
		p = aff_topo_path(t, (size_t)j->gpu[i], (size_t)r);
		if (p != AFF_PATH_NONE && (best == AFF_PATH_NONE || p < best))
			best = p;
	}
	return best;
}
