// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * verify's frame: which processes (the listed pids, or every one in /proc the
 * caller may read), their facts (verify_proc.c), the leases (verify_lease.c),
 * the verdicts (verify_judge.c), and the railbind.verify/1 document every
 * output is printed from. Read-only from start to end.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "verify.h"

static struct json_object *str_or_null(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

static int pid_list(const struct aff_verify_spec *spec, pid_t **out, size_t *n)
{
	size_t cap = 256;
	struct dirent *e;
	DIR *dp;

	*n = 0;
	if (!(spec->flags & AFF_VERIFY_ALL)) {
		*out = malloc((spec->npids + 1) * sizeof(**out));
		if (!*out)
			return -ENOMEM;
		memcpy(*out, spec->pids, spec->npids * sizeof(**out));
		*n = spec->npids;
		return 0;
	}
	*out = malloc(cap * sizeof(**out));
	dp = opendir("/proc");
	if (!*out || !dp) {
		int err = *out ? errno : ENOMEM;

		if (dp)
			closedir(dp);
		return -err;
	}
	while ((e = readdir(dp))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (!isdigit((unsigned char)e->d_name[0]) || *end || pid <= 0 || pid == getpid())
			continue;
		if (*n == cap) {
			pid_t *np = realloc(*out, cap * 2 * sizeof(*np));

			if (!np) {
				closedir(dp);
				return -ENOMEM;
			}
			*out = np;
			cap *= 2;
		}
		(*out)[(*n)++] = (pid_t)pid;
	}
	closedir(dp);
	return 0;
}

static int by_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

static int read_procs(struct aff_verify *v, const struct aff_verify_spec *spec,
		      aff_vproc_hook hook, void *data)
{
	pid_t *pids = NULL;
	size_t n, i;
	int rc = pid_list(spec, &pids, &n);

	if (rc < 0) {
		free(pids);
		return rc;
	}
	qsort(pids, n, sizeof(*pids), by_pid);
	v->procs = calloc(n + 1, sizeof(*v->procs));
	if (!v->procs) {
		free(pids);
		return -ENOMEM;
	}
	for (i = 0; i < n && !rc; i++) {
		struct aff_vproc *p = &v->procs[v->nproc];

		if (i && pids[i] == pids[i - 1])
			continue;
		rc = aff_vproc_read(&v->devs, pids[i], v->all, spec->uid, hook, data, p);
		if (rc < 0) {
			aff_vproc_clear(p);
			break;
		}
		/* A scan of all keeps the ranks; one not readable is counted. */
		if (v->all && (p->state != AFF_VP_OK || aff_verify_not_judged(v, p))) {
			if (p->state == AFF_VP_DENIED)
				v->skipped++;
			aff_vproc_clear(p);
			continue;
		}
		v->nproc++;
	}
	free(pids);
	return rc;
}

/* The worst status of the judged processes; per check, the worst finding. */
static int build_doc(struct aff_verify *v, const struct aff_verify_spec *spec)
{
	struct json_object *doc = json_object_new_object(), *sum = json_object_new_object();
	struct json_object *counts = json_object_new_object(), *leases = json_object_new_object();
	enum aff_sev check_sev[AFF_VERIFY_NCHECKS], worst = AFF_SEV_OK;
	size_t i, k, n = json_object_array_length(v->processes), count[4] = { 0 };
	bool decided = false;

	if (!doc || !sum || !counts || !leases) {
		json_object_put(doc);
		json_object_put(sum);
		json_object_put(counts);
		json_object_put(leases);
		return -ENOMEM;
	}
	for (k = 0; k < AFF_VERIFY_NCHECKS; k++)
		check_sev[k] = AFF_SEV_OK;
	for (i = 0; i < n; i++) {
		struct json_object *p = json_object_array_get_idx(v->processes, i), *fs;
		enum aff_sev s = (enum aff_sev)aff_status_exit_code(p);
		size_t f;

		count[s]++;
		if (s != AFF_SEV_UNKNOWN) {
			decided = true;
			if (s > worst)
				worst = s;
		}
		if (!json_object_object_get_ex(p, "findings", &fs))
			continue;
		for (f = 0; f < json_object_array_length(fs); f++) {
			struct json_object *fd = json_object_array_get_idx(fs, f), *id, *sv;

			if (!json_object_object_get_ex(fd, "id", &id) ||
			    !json_object_object_get_ex(fd, "severity", &sv))
				continue;
			for (k = 0; k < AFF_VERIFY_NCHECKS; k++)
				if (!strcmp(json_object_get_string(id), aff_verify_check_ids[k]) &&
				    aff_sev_from_name(json_object_get_string(sv)) > check_sev[k])
					check_sev[k] = aff_sev_from_name(json_object_get_string(sv));
		}
	}
	for (k = 0; k < AFF_VERIFY_NCHECKS; k++)
		json_object_object_add(sum, aff_verify_check_ids[k], json_object_new_string(
			aff_sev_name(decided ? check_sev[k] : AFF_SEV_UNKNOWN)));
	json_object_object_add(counts, "processes", json_object_new_int64((int64_t)n));
	for (k = 0; k < 4; k++)
		json_object_object_add(counts, aff_sev_name((enum aff_sev)k),
				       json_object_new_int64((int64_t)count[k]));
	json_object_object_add(counts, "skipped", json_object_new_int64((int64_t)v->skipped));
	json_object_object_add(leases, "source", json_object_new_string(v->leases.source));
	json_object_object_add(leases, "from", str_or_null(v->leases.reason));
	json_object_object_add(leases, "count", json_object_new_int64((int64_t)v->leases.n));
	json_object_object_add(doc, "schema", json_object_new_string("railbind.verify/1"));
	json_object_object_add(doc, "host", str_or_null(v->topo->host));
	json_object_object_add(doc, "source", str_or_null(v->topo->source));
	json_object_object_add(doc, "time", json_object_new_int64((int64_t)time(NULL)));
	json_object_object_add(doc, "scope", json_object_new_string(v->all ? "all" : "pids"));
	json_object_object_add(doc, "uid", json_object_new_int64(spec->uid >= 0 ? spec->uid :
								 (int64_t)geteuid()));
	json_object_object_add(doc, "status", json_object_new_string(
		aff_sev_name(decided ? worst : AFF_SEV_UNKNOWN)));
	json_object_object_add(doc, "processes", json_object_get(v->processes));
	json_object_object_add(doc, "summary", sum);
	json_object_object_add(doc, "counts", counts);
	json_object_object_add(doc, "leases", leases);
	v->doc = doc;
	return 0;
}

static void verify_free(struct aff_verify *v)
{
	size_t i;

	for (i = 0; i < v->nproc; i++)
		aff_vproc_clear(&v->procs[i]);
	free(v->procs);
	for (i = 0; i < v->nplans; i++) {
		free(v->plans[i].allowed);
		aff_plan_unref(v->plans[i].plan);
	}
	free(v->plans);
	aff_vdevs_clear(&v->devs);
	aff_vleases_clear(&v->leases);
	json_object_put(v->processes);
	json_object_put(v->doc);
	aff_topo_unref(v->topo);
	free(v);
}

int aff_verify_run_hooked(struct aff_topo *topo, const struct aff_verify_spec *spec,
			  aff_vproc_hook hook, void *hook_data, struct aff_verify **out,
			  char *err, size_t errlen)
{
	struct aff_verify *v;
	size_t i;
	int rc;

	*out = NULL;
	if (!spec || (!(spec->flags & AFF_VERIFY_ALL) && spec->npids && !spec->pids))
		return aff_seterr(err, errlen, EINVAL, "verify: no process given");
	for (i = 0; !(spec->flags & AFF_VERIFY_ALL) && i < spec->npids; i++)
		if (spec->pids[i] <= 0)
			return aff_seterr(err, errlen, EINVAL, "verify: %d is not a process id",
					  (int)spec->pids[i]);
	v = calloc(1, sizeof(*v));
	if (!v)
		return aff_seterr(err, errlen, ENOMEM, "verify: %s", strerror(ENOMEM));
	v->refcount = 1;
	v->topo = aff_topo_ref(topo);
	v->all = spec->flags & AFF_VERIFY_ALL;
	v->processes = json_object_new_array();
	rc = v->processes ? aff_vdevs_load(topo->ctx, &v->devs) : -ENOMEM;
	if (!rc)
		rc = aff_vleases_load(topo->ctx, spec->socket, !(spec->flags & AFF_VERIFY_NO_BROKER),
				      spec->timeout_ms, spec->leases, &v->leases);
	if (!rc)
		rc = read_procs(v, spec, hook, hook_data);
	if (!rc)
		rc = aff_verify_judge(v);
	if (!rc)
		rc = build_doc(v, spec);
	if (rc < 0) {
		verify_free(v);
		return aff_seterr(err, errlen, -rc, "verify: %s", strerror(-rc));
	}
	*out = v;
	return 0;
}

AFF_EXPORT int aff_verify_run(struct aff_topo *topo, const struct aff_verify_spec *spec,
			      struct aff_verify **out, char *err, size_t errlen)
{
	return aff_verify_run_hooked(topo, spec, NULL, NULL, out, err, errlen);
}

AFF_EXPORT struct aff_verify *aff_verify_ref(struct aff_verify *v)
{
	if (v)
		v->refcount++;
	return v;
}

AFF_EXPORT struct aff_verify *aff_verify_unref(struct aff_verify *v)
{
	if (v && --v->refcount <= 0)
		verify_free(v);
	return NULL;
}

struct json_object *aff_verify_to_json(const struct aff_verify *v)
{
	return json_object_get(v->doc);
}

AFF_EXPORT int aff_verify_json(const struct aff_verify *v, unsigned long flags, char **out)
{
	/* aff_json_string() takes a reference: a new one, not the document's own. */
	return aff_json_string(aff_verify_to_json(v), flags, out);
}

AFF_EXPORT int aff_verify_exit_code(const struct aff_verify *v)
{
	return aff_status_exit_code(v->doc);
}
