// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A rank's binding: asked of the broker, else computed in-process. Both
 * paths end in aff_binding_from_text() on the rank's JSON object, so what
 * the caller gets cannot depend on where it came from.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "client.h"
#include "gpu_ident.h"
#include "internal.h"
#include "plan.h"

struct aff_binding {
	int refcount;
	struct json_object *rank;	/* the railbind.plan/1 rank object */
	char *source;
	char *fallback;
	unsigned long long generation;
	long local_rank;
	const char *gpu, *cpus, *mems, *mem_policy;
	char *nics;
	char **env;
};

/*
 * A launcher's local rank as it writes one: a decimal number, no sign, no
 * space, no leading zero, at most AFF_MAX_LOCAL_RANK. strtol() would take
 * " 5", "+5", "-0" and "5\n"; a rank that does not print back as it was
 * read is a typo or another variable's value, better refused than guessed.
 */
int aff_parse_local_rank(const char *s, long *out)
{
	long r = 0;
	const char *p;

	if (!s || !*s || (s[0] == '0' && s[1]))
		return -EINVAL;
	for (p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		r = r * 10 + (*p - '0');
		if (r > AFF_MAX_LOCAL_RANK)
			return -ERANGE;
	}
	*out = r;
	return 0;
}

AFF_EXPORT int aff_local_rank(long *out, const char **from)
{
	static const char *const vars[] = {
		"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK",
		"MPI_LOCALRANKID", "PMI_LOCAL_RANK", "PALS_LOCAL_RANKID", NULL,
	};
	const char *const *v;

	for (v = vars; *v; v++) {
		const char *s = getenv(*v);

		if (!s || !*s)
			continue;
		if (from)
			*from = *v;
		return aff_parse_local_rank(s, out) < 0 ? -EINVAL : 0;
	}
	return -ENOENT;
}

struct json_object *aff_plan_rank_object(const struct aff_plan *plan, size_t k)
{
	struct json_object *doc = aff_plan_to_json(plan), *ranks, *r = NULL;

	if (doc && json_object_object_get_ex(doc, "ranks", &ranks))
		r = json_object_get(json_object_array_get_idx(ranks, k));
	json_object_put(doc);
	return r;
}

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int fill(struct aff_binding *b)
{
	struct json_object *gpu, *nics, *env, *v;
	size_t i, n, used = 0, cap = 1;

	if (!json_object_object_get_ex(b->rank, "local_rank", &v) ||
	    !json_object_object_get_ex(b->rank, "gpu", &gpu) ||
	    !json_object_object_get_ex(b->rank, "env", &env) ||
	    !json_object_is_type(env, json_type_object))
		return -EPROTO;
	b->local_rank = json_object_get_int(v);
	b->gpu = get_str(gpu, "pci");
	b->cpus = get_str(b->rank, "cpus");
	b->mems = get_str(b->rank, "mems");
	b->mem_policy = get_str(b->rank, "mem_policy");
	if (!b->gpu || !b->cpus)
		return -EPROTO;
	if (!b->mem_policy)
		b->mem_policy = "preferred";
	if (!json_object_object_get_ex(b->rank, "nics", &nics))
		nics = NULL;
	n = nics ? json_object_array_length(nics) : 0;
	for (i = 0; i < n; i++) {
		struct json_object *nic = json_object_array_get_idx(nics, i);
		const char *s = get_str(nic, "name");

		cap += strlen(s ? s : get_str(nic, "pci") ? get_str(nic, "pci") : "?") + 1;
	}
	b->nics = calloc(1, cap);
	b->env = calloc((size_t)json_object_object_length(env) + 1, sizeof(char *));
	if (!b->nics || !b->env)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct json_object *nic = json_object_array_get_idx(nics, i);
		const char *s = get_str(nic, "name");

		if (!s)
			s = get_str(nic, "pci");
		used += (size_t)snprintf(b->nics + used, cap - used, "%s%s",
					 i ? "," : "", s ? s : "?");
	}
	i = 0;
	json_object_object_foreach(env, key, val) {
		if (asprintf(&b->env[i], "%s=%s", key, json_object_get_string(val)) < 0) {
			b->env[i] = NULL;
			return -ENOMEM;
		}
		i++;
	}
	return 0;
}

int aff_binding_from_text(const char *text, const char *source,
			  const char *fallback, unsigned long long generation,
			  struct aff_binding **out)
{
	struct aff_binding *b = calloc(1, sizeof(*b));
	int rc;

	*out = NULL;
	if (!b)
		return -ENOMEM;
	b->refcount = 1;
	b->generation = generation;
	b->rank = json_tokener_parse(text);
	b->source = strdup(source);
	b->fallback = fallback ? strdup(fallback) : NULL;
	if (!b->source || (fallback && !b->fallback))
		rc = -ENOMEM;
	else if (!b->rank || !json_object_is_type(b->rank, json_type_object))
		rc = -EPROTO;
	else
		rc = fill(b);
	if (rc < 0) {
		aff_binding_unref(b);
		return rc;
	}
	*out = b;
	return 0;
}

/*
 * *answered: the broker replied (an error reply is its answer, no fallback,
 * except "overloaded").
 */
static int from_broker(struct aff_ctx *ctx, const struct aff_bind_spec *spec, long rank,
		       const char *visible, struct aff_binding **out,
		       bool *answered, char *err, size_t errlen)
{
	const char *path = aff_socket_path(spec->socket);
	struct json_object *req = json_object_new_object(), *reply = NULL, *v;
	int fds[AFF_PROTO_MAX_PROOF];
	char *text = NULL;
	size_t nfds;
	int rc;

	json_object_object_add(req, "v", json_object_new_int(AFF_PROTO_VERSION));
	json_object_object_add(req, "op", json_object_new_string("plan"));
	json_object_object_add(req, "rank", json_object_new_int64(rank));
	json_object_object_add(req, "job", json_object_new_string(aff_job_name(spec->job)));
	if (visible)
		json_object_object_add(req, "visible", json_object_new_string(visible));
	if (spec->flags & AFF_BIND_ISOLATE_GPU)
		json_object_object_add(req, "isolate_gpu", json_object_new_boolean(1));
	json_object_object_add(req, "lease", json_object_new_string(
		spec->flags & AFF_BIND_NO_LEASE ? "none" : "pid"));
	rc = aff_json_string(req, 0, &text);
	if (rc < 0)
		return rc;
	/* The GPU nodes it can open: with cgroup v2 the broker's only word on its GPUs. */
	nfds = spec->flags & AFF_BIND_NO_DEVICE_PROOF ? 0 : aff_gpu_proof_open(fds, AFF_PROTO_MAX_PROOF);
	rc = aff_broker_call_fds(path, text, fds, nfds, spec->timeout_ms, &reply);
	aff_gpu_proof_close(fds, nfds);
	free(text);
	if (rc < 0)
		return aff_seterr(err, errlen, -rc, "no broker at %s: %s", path, strerror(-rc));
	if (json_object_object_get_ex(reply, "error", &v)) {
		const char *name = json_object_get_string(v);

		/* "overloaded" is no answer about the plan: the broker (or this
		 * user's share of it) is full, and the plan is computed here as
		 * when no broker answers. Any other error is the broker's word. */
		*answered = !name || strcmp(name, "overloaded");
		rc = -aff_broker_errno(name);
		aff_seterr(err, errlen, -rc, "broker%s: %s", *answered ? "" : " overloaded",
			   get_str(reply, "message") ? get_str(reply, "message") : name);
		json_object_put(reply);
		return rc;
	}
	*answered = true;
	/* A lease granted beside another user's: the rank runs, and is told. */
	if (json_object_object_get_ex(reply, "lease", &v) &&
	    json_object_object_get_ex(v, "warning", &v))
		aff_log(ctx, LOG_WARNING, __FILE__, __LINE__, __func__, "broker: %s\n",
			json_object_get_string(v));
	if (!json_object_object_get_ex(reply, "rank", &v)) {
		json_object_put(reply);
		return aff_seterr(err, errlen, EPROTO, "broker at %s: a reply without a rank", path);
	}
	{
		struct json_object *g;
		unsigned long long gen = 0;

		if (json_object_object_get_ex(reply, "generation", &g))
			gen = (unsigned long long)json_object_get_int64(g);
		rc = aff_binding_from_text(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
					   "broker", NULL, gen, out);
	}
	json_object_put(reply);
	if (rc < 0)
		return aff_seterr(err, errlen, -rc, "broker at %s: a rank this client cannot read", path);
	return 0;
}

static int in_process(struct aff_ctx *ctx, const struct aff_bind_spec *spec,
		      long rank, const char *visible, const char *why,
		      struct aff_binding **out, char *err, size_t errlen)
{
	struct aff_plan_spec ps = { .visible_gpus = visible };
	struct aff_topo *topo = NULL;
	struct aff_plan *plan = NULL;
	char *text = NULL;
	int rc;

	if (spec->flags & AFF_BIND_ISOLATE_GPU)
		ps.flags |= AFF_PLAN_ISOLATE_GPU;
	/* A MIG instance is known to NVML only: start it then, not on every run. */
	rc = aff_topo_load(ctx, spec->input, aff_visible_needs_libs(visible) ? AFF_LOAD_GPU_LIBS : 0,
			   &topo, err, errlen);
	if (!rc)
		rc = aff_plan_new(topo, &ps, &plan, err, errlen);
	if (!rc && (size_t)rank >= plan->nrank)
		rc = aff_seterr(err, errlen, ERANGE,
				"no rank %ld: the plan has %zu rank%s (one per GPU)",
				rank, plan->nrank, plan->nrank == 1 ? "" : "s");
	if (!rc)
		rc = aff_json_string(aff_plan_rank_object(plan, (size_t)rank), 0, &text);
	if (!rc)
		rc = aff_binding_from_text(text, "local", why, 0, out);
	free(text);
	aff_plan_unref(plan);
	aff_topo_unref(topo);
	return rc;
}

AFF_EXPORT int aff_binding_get(struct aff_ctx *ctx, const struct aff_bind_spec *spec,
			       struct aff_binding **out, char *err, size_t errlen)
{
	const char *visible = spec->visible_gpus, *from = NULL;
	char why[512] = "asked not to use the broker";
	long rank = spec->rank;
	bool answered = false;
	int rc;

	*out = NULL;
	if (rank < 0) {
		rc = aff_local_rank(&rank, &from);
		if (rc == -ENOENT)
			return aff_seterr(err, errlen, EINVAL,
					  "no local rank: give --rank N or set LOCAL_RANK (or SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, PMI_LOCAL_RANK, PALS_LOCAL_RANKID)");
		if (rc < 0)
			return aff_seterr(err, errlen, EINVAL,
					  "%s=\"%s\": expected a local rank (0, 1, ...)",
					  from, getenv(from));
	}
	if (!visible)
		visible = getenv("CUDA_VISIBLE_DEVICES");
	if (!visible)
		visible = getenv("ROCR_VISIBLE_DEVICES");
	/* The container toolkit's; inside a container CUDA's own comes first. */
	if (!visible)
		visible = getenv("NVIDIA_VISIBLE_DEVICES");
	if (!(spec->flags & AFF_BIND_LOCAL)) {
		rc = from_broker(ctx, spec, rank, visible, out, &answered, why, sizeof(why));
		if (!rc)
			return 0;
		if (answered || (spec->flags & AFF_BIND_BROKER_ONLY)) {
			snprintf(err, errlen, "%s", why);
			return rc;
		}
		aff_info(ctx, "%s; computing the plan in-process\n", why);
	}
	return in_process(ctx, spec, rank, visible, why, out, err, errlen);
}

AFF_EXPORT struct aff_binding *aff_binding_ref(struct aff_binding *b)
{
	if (b)
		b->refcount++;
	return b;
}

AFF_EXPORT struct aff_binding *aff_binding_unref(struct aff_binding *b)
{
	size_t i;

	if (!b || --b->refcount > 0)
		return NULL;
	for (i = 0; b->env && b->env[i]; i++)
		free(b->env[i]);
	free(b->env);
	free(b->nics);
	free(b->source);
	free(b->fallback);
	json_object_put(b->rank);
	free(b);
	return NULL;
}

AFF_EXPORT const char *aff_binding_source(const struct aff_binding *b)
{
	return b->source;
}

AFF_EXPORT const char *aff_binding_fallback(const struct aff_binding *b)
{
	return b->fallback;
}

AFF_EXPORT long aff_binding_rank(const struct aff_binding *b)
{
	return b->local_rank;
}

AFF_EXPORT unsigned long long aff_binding_generation(const struct aff_binding *b)
{
	return b->generation;
}

AFF_EXPORT const char *aff_binding_gpu(const struct aff_binding *b)
{
	return b->gpu;
}

AFF_EXPORT const char *aff_binding_cpus(const struct aff_binding *b)
{
	return b->cpus;
}

AFF_EXPORT const char *aff_binding_mems(const struct aff_binding *b)
{
	return b->mems;
}

AFF_EXPORT const char *aff_binding_mem_policy(const struct aff_binding *b)
{
	return b->mem_policy;
}

AFF_EXPORT const char *aff_binding_nics(const struct aff_binding *b)
{
	return b->nics;
}

AFF_EXPORT const char *const *aff_binding_env(const struct aff_binding *b)
{
	return (const char *const *)b->env;
}

AFF_EXPORT int aff_binding_json(const struct aff_binding *b, unsigned long flags,
				char **out)
{
	return aff_json_string(json_object_get(b->rank), flags, out);
}
