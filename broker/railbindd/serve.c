// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The node's topology and its plans. A plan depends on the client's limits
 * (allowed CPUs, visible GPUs, isolation), so plans are cached per limit:
 * every rank launched by one job asks under the same limits and is
 * answered from one computed plan, serialised once. The key is the limit
 * as the planner reads it, not as the client wrote it: "1,0", "0,1" and
 * "1,1,0" are one set of GPUs, one entry. A miss costs a plan computation,
 * so the caller decides (charge) whether this client may have one more.
 *
 * A refresh that cannot read the topology keeps the last good one: a
 * truncated file or a failing sysfs read must not take the plan from every
 * rank. The failure is logged and kept for `status` until a refresh works.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <systemd/sd-daemon.h>

#include "client.h"
#include "log.h"
#include "railbindd.h"

#define CACHE_SIZE 64

struct entry {
	char *key;
	int rc;			/* 0, or the negative errno of aff_plan_new() */
	char *msg;		/* its message */
	struct aff_plan *plan;	/* what the facts of its ranks point into */
	char *doc;		/* railbind.plan/1 */
	struct serve_rank *rank;	/* each rank's facts */
	size_t nrank;
	unsigned long long used;
};

static struct aff_ctx *ctx;
static struct aff_topo *topo;
static char *topo_doc;
static char topo_err[1024];
static char *audit_doc;		/* railbind.audit/1 of topo, made on first ask */
static int audit_code;
static struct entry cache[CACHE_SIZE];
static unsigned long long tick, generation;
static char *fingerprint;	/* the unlimited plan's text: did it change? */
static struct timespec plan_time;
static long nranks;
/* The last refresh: when, and what went wrong (empty: nothing). */
static time_t refresh_time;
static char refresh_err[1024];
static char refresh_why[128];

static void entry_clear(struct entry *e)
{
	size_t i;

	for (i = 0; e->rank && i < e->nrank; i++) {
		free(e->rank[i].nics);
		free(e->rank[i].json);
	}
	free(e->rank);
	aff_plan_unref(e->plan);
	free(e->key);
	free(e->msg);
	free(e->doc);
	memset(e, 0, sizeof(*e));
}

/* Rank @k's facts, read from @plan through its getters; -ENOMEM. */
static int rank_facts(struct aff_plan *plan, size_t k, struct serve_rank *r)
{
	size_t i;

	r->rank = (long)k;
	r->gpu = aff_plan_rank_gpu(plan, k);
	r->cpus = aff_plan_rank_cpus(plan, k);
	r->mems = aff_plan_rank_mems(plan, k);
	r->env = aff_plan_rank_env(plan, k);
	r->nnics = aff_plan_rank_nic_count(plan, k);
	r->nics = calloc(r->nnics + 1, sizeof(*r->nics));
	if (!r->nics)
		return -ENOMEM;
	for (i = 0; i < r->nnics; i++)
		r->nics[i] = aff_plan_rank_nic(plan, k, i);
	/* The protocol's rank object: serialised once, sent as it is to every asker. */
	return aff_json_string(aff_plan_rank_object(plan, k), 0, &r->json);
}

static void compute(struct entry *e, const char *allowed, const char *visible, bool isolate)
{
	struct aff_plan_spec spec = { .allowed_cpus = allowed, .visible_gpus = visible };
	char err[1024] = "";
	size_t i;

	if (isolate)
		spec.flags |= AFF_PLAN_ISOLATE_GPU;
	if (!topo) {
		e->rc = -ENODEV;
		e->msg = strdup(topo_err);
		return;
	}
	e->rc = aff_plan_new(topo, &spec, &e->plan, err, sizeof(err));
	if (!e->rc)
		e->rc = aff_plan_json(e->plan, 0, &e->doc);
	if (!e->rc) {
		e->nrank = aff_plan_rank_count(e->plan);
		e->rank = calloc(e->nrank ? e->nrank : 1, sizeof(*e->rank));
		if (!e->rank)
			e->rc = -ENOMEM;
		for (i = 0; e->rank && i < e->nrank; i++)
			if (rank_facts(e->plan, i, &e->rank[i]) < 0)
				e->rc = -ENOMEM;
	}
	if (e->rc)
		e->msg = strdup(*err ? err : strerror(-e->rc));
}

/*
 * The cached plan for these limits. A miss computes it if @charge (NULL:
 * always) lets this client have one more; otherwise NULL with *refused set.
 */
static struct entry *lookup(const char *allowed, const char *visible, bool isolate,
			    serve_charge_fn charge, void *arg, bool *refused)
{
	struct entry *e, *victim = &cache[0];
	char *key;
	size_t i;

	*refused = false;
	if (asprintf(&key, "%s|%s|%d", allowed ? allowed : "*", visible ? visible : "*",
		     isolate) < 0)
		return NULL;
	for (i = 0; i < CACHE_SIZE; i++) {
		e = &cache[i];
		if (e->key && !strcmp(e->key, key)) {
			e->used = ++tick;
			free(key);
			return e;
		}
		if (!e->key || e->used < victim->used)
			victim = e;
	}
	if (charge && !charge(arg)) {
		free(key);
		*refused = true;
		return NULL;
	}
	entry_clear(victim);
	victim->key = key;
	victim->used = ++tick;
	compute(victim, allowed, visible, isolate);
	return victim;
}

static const char *error_name(int rc)
{
	switch (-rc) {
	case ENODEV:
		return "no-accelerator";
	case EINVAL:
		return "invalid";
	case ERANGE:
		return "no-such-rank";
	default:
		return "internal";
	}
}

static int miss_error(bool refused, const char **error, char *msg, size_t msglen)
{
	if (refused) {
		*error = "overloaded";
		snprintf(msg, msglen,
			 "too many distinct plans asked for (new CPU or GPU limits) in too short a time; compute it in-process or ask again later");
		return -EAGAIN;
	}
	*error = "internal";
	snprintf(msg, msglen, "out of memory");
	return -ENOMEM;
}

/* The plan for these limits, or NULL with @error, @msg and *rc set. */
static struct entry *planned(const char *allowed, const char *visible, bool isolate,
			     serve_charge_fn charge, void *arg, const char **error,
			     char *msg, size_t msglen, int *rc)
{
	bool refused;
	struct entry *e = lookup(allowed, visible, isolate, charge, arg, &refused);

	if (!e) {
		*rc = miss_error(refused, error, msg, msglen);
		return NULL;
	}
	if (e->rc) {
		*error = error_name(e->rc);
		snprintf(msg, msglen, "%s", e->msg ? e->msg : "");
		*rc = e->rc;
		return NULL;
	}
	return e;
}

int serve_rank(const char *allowed, const char *visible, bool isolate, long rank,
	       serve_charge_fn charge, void *arg,
	       const struct serve_rank **facts, const char **error, char *msg, size_t msglen)
{
	int rc;
	struct entry *e = planned(allowed, visible, isolate, charge, arg, error, msg, msglen,
				  &rc);

	if (!e)
		return rc;
	if (rank < 0 || (size_t)rank >= e->nrank) {
		*error = "no-such-rank";
		snprintf(msg, msglen, "no rank %ld: the plan has %zu rank%s (one per GPU)",
			 rank, e->nrank, e->nrank == 1 ? "" : "s");
		return -ERANGE;
	}
	*facts = &e->rank[rank];
	return 0;
}

int serve_plan(const char *allowed, const char *visible, bool isolate,
	       serve_charge_fn charge, void *arg,
	       const char **text, const char **error, char *msg, size_t msglen)
{
	int rc;
	struct entry *e = planned(allowed, visible, isolate, charge, arg, error, msg, msglen,
				  &rc);

	if (!e)
		return rc;
	*text = e->doc;
	return 0;
}

/*
 * @list with each index counted within the GPUs @auth marks, as CUDA numbers
 * them inside such a cgroup ("1": the second of them), made an index of the
 * node; UUIDs, MIG instances and PCI addresses stay as they are. NULL with
 * @msg set for an index beyond them.
 */
static char *within_auth(const char *list, const unsigned char *auth, char *msg, size_t msglen)
{
	size_t ngpu = aff_topo_gpu_count(topo);
	size_t cap = strlen(list) + ngpu * 8 + 2, used = 0, i, k, n = 0;
	char *out = malloc(cap);
	const char *p;

	if (!out) {
		snprintf(msg, msglen, "out of memory");
		return NULL;
	}
	for (i = 0; i < ngpu; i++)
		n += auth[i];
	out[0] = '\0';
	for (p = list; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
		size_t len = strcspn(p, ",");
		unsigned long v;

		if (len && len <= 6 && strspn(p, "0123456789") >= len) {
			v = strtoul(p, NULL, 10);
			for (i = 0, k = 0; i < ngpu && !(auth[i] && k++ == v); i++)
				;
			if (i == ngpu) {
				snprintf(msg, msglen,
					 "GPU index %lu: the process's devices cgroup gives it %zu GPU%s (indices count within them)",
					 v, n, n == 1 ? "" : "s");
				free(out);
				return NULL;
			}
			used += (size_t)snprintf(out + used, cap - used, "%s%zu", used ? "," : "", i);
		} else {
			used += (size_t)snprintf(out + used, cap - used, "%s%.*s", used ? "," : "",
						 (int)len, p);
		}
	}
	return out;
}

int serve_visible(const char *claim, bool from_env, const unsigned char *auth,
		  char **out, const char **error, char *msg, size_t msglen)
{
	int *gpu = NULL, *mig = NULL;
	char err[512] = "", *list = NULL, *s = NULL;
	size_t n = 0, i, used = 0, cap;
	int rc = 0;

	*out = NULL;
	if (!topo || (!claim && !auth))
		return 0;	/* nothing narrows the plan, or no plan to narrow */
	*error = "invalid";
	if (claim && auth && !(list = within_auth(claim, auth, msg, msglen)))
		return -EINVAL;
	if (claim) {
		rc = aff_visible_select(topo, list ? list : claim, &gpu, &mig, &n, err, sizeof(err));
	} else {
		gpu = calloc(aff_topo_gpu_count(topo) + 1, sizeof(*gpu));
		mig = calloc(aff_topo_gpu_count(topo) + 1, sizeof(*mig));
		for (i = 0; gpu && mig && i < aff_topo_gpu_count(topo); i++)
			if (auth[i]) {
				gpu[n] = (int)i;
				mig[n++] = -1;
			}
		rc = gpu && mig ? 0 : -ENOMEM;
	}
	free(list);
	if (rc < 0) {
		/* The process's environment is checked, never echoed. */
		if (from_env)
			snprintf(msg, msglen,
				 "the process's CUDA_VISIBLE_DEVICES (or ROCR_VISIBLE_DEVICES) names a GPU this node does not have");
		else
			snprintf(msg, msglen, "%s", *err ? err : strerror(-rc));
		goto out;
	}
	for (i = 0; auth && i < n; i++)
		if (!auth[gpu[i]]) {
			*error = "permission";
			snprintf(msg, msglen,
				 "GPU %d (%s) is not one the process's devices cgroup lets it open", gpu[i],
				 aff_topo_gpu_pci(topo, (size_t)gpu[i]));
			rc = -EPERM;
			goto out;
		}
	/* One spelling per set: the cache key, and what the planner reads. */
	cap = n * 128 + 8;
	s = malloc(cap);
	if (!s) {
		rc = -ENOMEM;
		snprintf(msg, msglen, "out of memory");
		goto out;
	}
	s[0] = '\0';
	for (i = 0; i < n; i++) {
		char name[128];

		aff_visible_name(topo, gpu[i], mig[i], name, sizeof(name));
		used += (size_t)snprintf(s + used, cap - used, "%s%s", i ? "," : "", name);
	}
	*out = n ? s : strdup("none");
	if (n)
		s = NULL;
	if (!*out) {
		rc = -ENOMEM;
		snprintf(msg, msglen, "out of memory");
	}
out:
	free(s);
	free(gpu);
	free(mig);
	return rc;
}

int serve_visible_within(const char *claim, const char *own, const unsigned char *auth,
			 char *msg, size_t msglen)
{
	char *c = NULL, *o = NULL, err[512] = "";
	int rc;

	if (!topo)
		return 0;
	if (auth && (!(c = within_auth(claim, auth, msg, msglen)) ||
		     !(o = within_auth(own, auth, msg, msglen)))) {
		free(c);
		return -EINVAL;
	}
	rc = aff_visible_within(topo, c ? c : claim, o ? o : own, err, sizeof(err));
	free(c);
	free(o);
	if (rc < 0)
		snprintf(msg, msglen, "the claim or the process's own list does not resolve on this node");
	return rc;
}

size_t serve_gpu_count(void)
{
	return topo ? aff_topo_gpu_count(topo) : 0;
}

const char *serve_topo(const char **error, char *msg, size_t msglen)
{
	if (!topo_doc) {
		*error = "no-accelerator";
		snprintf(msg, msglen, "%s", topo_err);
	}
	return topo_doc;
}

/*
 * The audit of the current topology. Made on the first request after a
 * refresh, not at every refresh: most nodes never ask, and it reads sysfs.
 */
const char *serve_audit(int *code, const char **error, char *msg, size_t msglen)
{
	struct aff_audit *a = NULL;
	char err[1024] = "";
	int rc;

	if (audit_doc) {
		*code = audit_code;
		return audit_doc;
	}
	if (!topo) {
		*error = "no-topology";
		snprintf(msg, msglen, "%s", topo_err);
		return NULL;
	}
	rc = aff_audit_run(topo, NULL, 0, &a, err, sizeof(err));
	if (rc < 0) {
		*error = "audit";
		snprintf(msg, msglen, "%s", *err ? err : strerror(-rc));
		return NULL;
	}
	audit_code = aff_audit_exit_code(a);
	if (aff_audit_json(a, 0, &audit_doc) < 0)
		audit_doc = NULL;
	aff_audit_unref(a);
	if (!audit_doc) {
		*error = "internal";
		snprintf(msg, msglen, "out of memory");
		return NULL;
	}
	*code = audit_code;
	return audit_doc;
}

long serve_rank_count(void)
{
	return nranks;
}

struct aff_topo *serve_topology(void)
{
	return topo;
}

unsigned long long serve_generation(void)
{
	return generation;
}

double serve_plan_age(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - plan_time.tv_sec) +
	       (double)(now.tv_nsec - plan_time.tv_nsec) / 1e9;
}

const char *serve_source(void)
{
	return conf.input ? conf.input : "live";
}

static void refresh_failed(const char *why, const char *what, const char *err)
{
	refresh_time = time(NULL);
	snprintf(refresh_why, sizeof(refresh_why), "%s", why);
	snprintf(refresh_err, sizeof(refresh_err), "%s: %s", what, err);
	if (topo)
		rbd_log(LOG_ERR, "%s (%s); keeping the last good one, plan generation %llu",
			refresh_err, why, generation);
	else
		rbd_log(LOG_ERR, "%s (%s)", refresh_err, why);
}

int serve_refresh(const char *why)
{
	struct aff_ctx *nctx = aff_ctx_new(conf.root);
	struct aff_topo *ntopo = NULL;
	struct entry *e;
	char err[1024] = "";
	bool refused;
	char *fp;
	size_t i;
	int rc;

	if (!nctx) {
		refresh_failed(why, "context", strerror(errno));
		return -errno;
	}
	if (conf.debug)
		aff_set_log_priority(nctx, LOG_INFO);
	rc = aff_ctx_load_config(nctx, conf.config, err, sizeof(err));
	if (rc < 0) {
		/* Keep serving the plan we have rather than none. */
		refresh_failed(why, "config", *err ? err : strerror(-rc));
		aff_ctx_unref(nctx);
		return rc;
	}
	/* Loaded once per change: worth NVML's start (MIG claims, NVLink in topo). */
	rc = aff_topo_load(nctx, conf.input, AFF_LOAD_GPU_LIBS, &ntopo, err, sizeof(err));
	if (rc < 0) {
		refresh_failed(why, "topology", *err ? err : strerror(-rc));
		snprintf(topo_err, sizeof(topo_err), "%s", *err ? err : strerror(-rc));
		if (topo) {
			aff_ctx_unref(nctx);
			return rc;
		}
	} else {
		refresh_time = time(NULL);
		snprintf(refresh_why, sizeof(refresh_why), "%s", why);
		refresh_err[0] = '\0';
	}
	aff_topo_unref(topo);
	aff_ctx_unref(ctx);
	ctx = nctx;
	topo = ntopo;
	gpuown_refresh(topo);
	free(topo_doc);
	topo_doc = NULL;
	free(audit_doc);
	audit_doc = NULL;
	if (topo && aff_topo_json(topo, 0, &topo_doc) < 0)
		topo_doc = NULL;
	for (i = 0; i < CACHE_SIZE; i++)
		entry_clear(&cache[i]);
	e = lookup(NULL, NULL, false, NULL, NULL, &refused);
	nranks = e && !e->rc ? (long)e->nrank : 0;
	fp = e && e->doc ? strdup(e->doc) : strdup(e && e->msg ? e->msg : "");
	clock_gettime(CLOCK_MONOTONIC, &plan_time);
	/* The file first: a watcher told of the new plan finds it in place. */
	ncclout_update(ctx, topo, !fingerprint || !fp || strcmp(fp, fingerprint));
	if (!fingerprint || !fp || strcmp(fp, fingerprint)) {
		struct json_object *ev = json_object_new_object();

		generation++;
		rbd_log(LOG_INFO, "plan generation %llu (%s): %ld rank%s", generation, why,
			nranks, nranks == 1 ? "" : "s");
		json_object_object_add(ev, "v", json_object_new_int(AFF_PROTO_VERSION));
		json_object_object_add(ev, "event", json_object_new_string("plan"));
		json_object_object_add(ev, "generation", json_object_new_int64((int64_t)generation));
		json_object_object_add(ev, "reason", json_object_new_string(why));
		json_object_object_add(ev, "ranks", json_object_new_int64(nranks));
		ctl_broadcast_watch(ev);
	}
	free(fingerprint);
	fingerprint = fp;
	return rc;
}

/* {"ok", "time", "reason", "error"}: the last refresh (start, SIGHUP, udev). */
struct json_object *serve_refresh_status(void)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "ok", json_object_new_boolean(!refresh_err[0]));
	json_object_object_add(o, "time", json_object_new_int64((int64_t)refresh_time));
	json_object_object_add(o, "reason", json_object_new_string(refresh_why));
	json_object_object_add(o, "error", refresh_err[0] ?
			       json_object_new_string(refresh_err) : NULL);
	return o;
}

enum rbd_sharing serve_gpu_sharing(void)
{
	switch (aff_ctx_gpu_sharing(ctx)) {
	case AFF_GPU_SHARING_YES:
		return RBD_SHARING_YES;
	case AFF_GPU_SHARING_NO:
		return RBD_SHARING_NO;
	default:
		return RBD_SHARING_AUTO;
	}
}

void serve_reload(const char *why)
{
	sd_notify(0, "RELOADING=1");
	serve_refresh(why);
	sd_notify(0, "READY=1");
}

int serve_init(void)
{
	return serve_refresh("start");
}

void serve_fini(void)
{
	size_t i;

	for (i = 0; i < CACHE_SIZE; i++)
		entry_clear(&cache[i]);
	free(topo_doc);
	topo_doc = NULL;
	free(audit_doc);
	audit_doc = NULL;
	free(fingerprint);
	fingerprint = NULL;
	ncclout_fini();
	gpuown_fini();
	aff_topo_unref(topo);
	topo = NULL;
	aff_ctx_unref(ctx);
	ctx = NULL;
}
