// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * One request line: {"v":1,"op":...,"id":...} (docs/PROTOCOL.md). Every
 * request gets exactly one reply line carrying its id; watch then streams
 * events. Unknown ops and versions get an explicit error, not silence.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "railbindd.h"
#include "request.h"

#ifndef RAILBIND_VERSION
#define RAILBIND_VERSION "0.1"
#endif

static struct json_object *reply_new(struct json_object *id)
{
	struct json_object *r = json_object_new_object();

	json_object_object_add(r, "v", json_object_new_int(AFF_PROTO_VERSION));
	if (id)
		json_object_object_add(r, "id", json_object_get(id));
	json_object_object_add(r, "ok", json_object_new_boolean(1));
	json_object_object_add(r, "generation",
			       json_object_new_int64((int64_t)serve_generation()));
	return r;
}

struct json_object *ops_reply(struct json_object *id)
{
	return reply_new(id);
}

/* Add a pre-serialised document without parsing it again. */
static void add_text(struct json_object *r, const char *key, const char *text)
{
	struct json_object *o = json_object_new_object();

	json_object_set_serializer(o, json_object_userdata_to_json_string, strdup(text),
				   json_object_free_userdata);
	json_object_object_add(r, key, o);
}

/*
 * A claim is checked against the process's own CUDA_VISIBLE_DEVICES (else
 * ROCR_...): *@own, NULL when neither is set. Its environment is read for
 * this only (peerenv.c); -1 with the error sent when it cannot be.
 */
static int own_visible(struct client *c, struct json_object *id, const char **own)
{
	int rc = ctl_peer_visible(c, own);

	if (rc == -EAGAIN)
		ctl_send_error(c, id, "overloaded",
			       "uid %u has had its share of environment reads for now (a claim is checked against the process's own environment); ask again shortly",
			       (unsigned)ctl_uid(c));
	else if (rc == -E2BIG)
		ctl_send_error(c, id, "permission",
			       "the environment of pid %d is larger than the broker reads (1 MiB, 4 KiB of a value) and its CUDA_VISIBLE_DEVICES is not within it: a claim cannot be checked",
			       (int)ctl_pid(c));
	else if (rc == -ESRCH)
		ctl_send_error(c, id, "permission",
			       "the process that connected (pid %d) has exited: a plan is for the process that asks",
			       (int)ctl_pid(c));
	else if (rc < 0)
		ctl_send_error(c, id, "permission", "cannot read the environment of pid %d",
			       (int)ctl_pid(c));
	return rc < 0 ? -1 : 0;
}

/*
 * The limits of this client: its CPUs and GPUs as /proc and its devices
 * cgroup say (with cgroup v2, the GPU nodes it passed), narrowed (never
 * widened) by what it claims. *auth is set when the devices cgroup decided
 * its GPUs.
 */
static int limits(struct client *c, const struct request *rq, char **allowed,
		  char **visible, bool *auth)
{
	const struct peer_info *pi;
	const char *claim = rq->visible, *error = NULL, *own = NULL;
	struct json_object *id = rq->id;
	unsigned char *mask = NULL;
	char msg[512];
	size_t n;
	int rc;

	*allowed = *visible = NULL;
	*auth = false;
	if (ctl_peer_info(c, &pi) < 0) {
		ctl_send_error(c, id, "permission",
			       "the process that connected (pid %d) has exited: a plan is for the process that asks",
			       (int)ctl_pid(c));
		return -EPERM;
	}
	if (conf_apply_limits() && !pi->cpus) {
		ctl_send_error(c, id, "permission", "cannot read the CPUs of pid %d",
			       (int)ctl_pid(c));
		return -EPERM;
	}
	if (claim && own_visible(c, id, &own) < 0)
		return -EPERM;
	n = serve_gpu_count();
	mask = calloc(n + 1, 1);
	if (!mask) {
		ctl_send_error(c, id, "internal", "out of memory");
		return -ENOMEM;
	}
	/* Asked with no GPU too: a process the broker cannot judge gets no CPUs either. */
	rc = gpuown_decide(pi->devices, ctl_proof(c), mask, n, msg, sizeof(msg));
	if (rc < 0) {
		ctl_send_error(c, id, "permission", "%s", msg);
		free(mask);
		return -EPERM;
	}
	*auth = rc == 1;
	/* The same words are the same GPUs; other spellings are compared by
	 * identity. The environment is the process's own: checked, never echoed. */
	if (claim && own && !peer_claim_within(claim, own) &&
	    (rc = serve_visible_within(claim, own, *auth ? mask : NULL, msg,
				       sizeof(msg))) != 1) {
		if (rc < 0)
			ctl_send_error(c, id, "permission", "GPUs \"%s\": %s", claim, msg);
		else
			ctl_send_error(c, id, "permission",
				       "GPUs \"%s\" are not within the process's own CUDA_VISIBLE_DEVICES",
				       claim);
		free(mask);
		return -EPERM;
	}
	/* Without a claim, the environment is not read: the GPUs are those the
	 * process may open (the library always sends its own list as a claim). */
	rc = serve_visible(claim, false, *auth ? mask : NULL, visible, &error, msg, sizeof(msg));
	free(mask);
	if (rc < 0) {
		ctl_send_error(c, id, error, "%s", msg);
		return rc;
	}
	*allowed = pi->cpus ? strdup(pi->cpus) : NULL;
	return 0;
}

static bool charge(void *arg)
{
	return ctl_charge_miss(arg);
}

static void op_plan(struct client *c, const struct request *rq)
{
	struct json_object *v, *r, *id = rq->id;
	const char *text = NULL, *error = NULL, *job = rq->job ? rq->job : "default";
	const struct serve_rank *facts = NULL;
	char *allowed, *visible, msg[1024];
	bool isolate = rq->isolate, conn = rq->lease == RQ_LEASE_CONN, auth;
	long rank = rq->rank;

	if (limits(c, rq, &allowed, &visible, &auth) < 0)
		return;
	if (rank < 0) {	/* the whole plan: nothing to lease */
		if (serve_plan(allowed, visible, isolate, charge, c, &text, &error, msg,
			       sizeof(msg)) < 0) {
			ctl_send_error(c, id, error, "%s", msg);
		} else {
			r = reply_new(id);
			add_text(r, "plan", text);
			ctl_send(c, r);
		}
		goto out;
	}
	if (serve_rank(allowed, visible, isolate, rank, charge, c, &facts, &error, msg,
		       sizeof(msg)) < 0) {
		ctl_send_error(c, id, error, "%s", msg);
		goto out;
	}
	r = reply_new(id);
	if (rq->lease != RQ_LEASE_NONE) {
		bool shared;
		int rc;

		rc = lease_take(c, conn, job, rank, facts->gpu, facts->cpus, auth, &shared, &error,
				msg, sizeof(msg));
		if (rc < 0) {
			json_object_put(r);
			ctl_send_error(c, id, error, "%s", msg);
			goto out;
		}
		v = json_object_new_object();
		json_object_object_add(v, "job", json_object_new_string(job));
		json_object_object_add(v, "rank", json_object_new_int64(rank));
		json_object_object_add(v, "pid", json_object_new_int(ctl_pid(c)));
		json_object_object_add(v, "until", json_object_new_string(conn ? "close" : "exit"));
		if (shared) {
			json_object_object_add(v, "shared", json_object_new_boolean(1));
			json_object_object_add(v, "warning", json_object_new_string(
				"this GPU is leased to another user's job too; nothing on this node assigns GPUs to users (railbind.conf gpu-sharing = no refuses such leases)"));
		}
		json_object_object_add(r, "lease", v);
	}
	add_text(r, "rank", facts->json);
	ctl_send(c, r);
out:
	free(allowed);
	free(visible);
}

static void op_topo(struct client *c, struct json_object *id)
{
	const char *error = NULL, *text;
	char msg[1024];
	struct json_object *r;

	text = serve_topo(&error, msg, sizeof(msg));
	if (!text) {
		ctl_send_error(c, id, error, "%s", msg);
		return;
	}
	r = reply_new(id);
	add_text(r, "topo", text);
	ctl_send(c, r);
}

static void op_audit(struct client *c, struct json_object *id)
{
	const char *error = NULL, *text;
	struct json_object *r;
	char msg[1024];
	int code = 3;

	text = serve_audit(&code, &error, msg, sizeof(msg));
	if (!text) {
		ctl_send_error(c, id, error, "%s", msg);
		return;
	}
	r = reply_new(id);
	add_text(r, "audit", text);
	json_object_object_add(r, "exit_code", json_object_new_int(code));
	ctl_send(c, r);
}

static struct json_object *module_info(void)
{
	struct json_object *m = json_object_new_object();
	unsigned long long gen;
	int rc = aff_kmod_generation(conf.root, &gen);

	json_object_object_add(m, "loaded", json_object_new_boolean(rc == 0 || rc == -EINVAL));
	json_object_object_add(m, "generation", rc == 0 ? json_object_new_int64((int64_t)gen) : NULL);
	return m;
}

static struct json_object *limits_info(void)
{
	struct json_object *l = json_object_new_object();

	json_object_object_add(l, "max_clients", json_object_new_int(conf.max_clients));
	json_object_object_add(l, "max_user_clients", json_object_new_int(conf.max_user_clients));
	json_object_object_add(l, "max_user_watchers",
			       json_object_new_int(conf.max_user_watchers));
	json_object_object_add(l, "max_user_leases", json_object_new_int(conf.max_user_leases));
	json_object_object_add(l, "max_leases", json_object_new_int(conf.max_leases));
	json_object_object_add(l, "max_user_queued",
			       json_object_new_int64((int64_t)conf.max_user_queued));
	json_object_object_add(l, "memory_budget",
			       json_object_new_int64((int64_t)conf.memory_budget));
	json_object_object_add(l, "miss_rate", json_object_new_int(conf.miss_rate));
	json_object_object_add(l, "max_user_rate", json_object_new_int(conf.max_user_rate));
	json_object_object_add(l, "reply_timeout_ms", json_object_new_int(conf.reply_timeout_ms));
	json_object_object_add(l, "idle_timeout_ms", json_object_new_int(conf.idle_timeout_ms));
	json_object_object_add(l, "gpu_sharing",
			       json_object_new_boolean(serve_gpu_sharing() == RBD_SHARING_YES));
	json_object_object_add(l, "gpu_sharing_policy",
			       json_object_new_string(serve_gpu_sharing() == RBD_SHARING_YES ? "yes" :
						      serve_gpu_sharing() == RBD_SHARING_NO ? "no" :
						      "auto"));
	return l;
}

static void op_status(struct client *c, struct json_object *id)
{
	struct json_object *r = reply_new(id), *b = json_object_new_object();

	json_object_object_add(r, "schema", json_object_new_string("railbind.status/1"));
	json_object_object_add(b, "version", json_object_new_string(RAILBIND_VERSION));
	json_object_object_add(b, "protocol", json_object_new_int(AFF_PROTO_VERSION));
	json_object_object_add(b, "pid", json_object_new_int(getpid()));
	json_object_object_add(b, "socket", json_object_new_string(conf.socket));
	json_object_object_add(b, "source", json_object_new_string(serve_source()));
	json_object_object_add(b, "clients", json_object_new_int64((int64_t)ctl_count()));
	json_object_object_add(b, "queued_bytes",
			       json_object_new_int64((int64_t)share_total_queued()));
	json_object_object_add(b, "watched_processes",
			       json_object_new_int64((int64_t)lease_watched()));
	json_object_object_add(b, "limits", limits_info());
	json_object_object_add(r, "broker", b);
	json_object_object_add(r, "module", module_info());
	json_object_object_add(r, "refresh", serve_refresh_status());
	json_object_object_add(r, "plan_age_s", json_object_new_double(serve_plan_age()));
	json_object_object_add(r, "ranks", json_object_new_int64(serve_rank_count()));
	json_object_object_add(r, "users", share_list(ctl_uid(c)));
	json_object_object_add(r, "leases", lease_list(ctl_uid(c)));
	ctl_send(c, r);
}

/* Changing what the broker serves is root's (or the broker user's). */
static bool privileged(struct client *c)
{
	return ctl_uid(c) == 0 || ctl_uid(c) == geteuid();
}

void ops_request(struct client *c, const char *line, size_t len)
{
	const char *error = NULL;
	struct request rq;
	char msg[512];

	if (request_parse(line, len, &rq, &error, msg, sizeof(msg)) < 0) {
		ctl_send_error(c, rq.id, error, "%s", msg);
		request_fini(&rq);
		return;
	}
	switch (rq.op) {
	case RQ_PLAN:
		op_plan(c, &rq);
		break;
	case RQ_TOPO:
		op_topo(c, rq.id);
		break;
	case RQ_STATUS:
		op_status(c, rq.id);
		break;
	case RQ_WATCH:
		if (ctl_set_watching(c) < 0)
			ctl_send_error(c, rq.id, "overloaded",
				       "uid %u has %d watchers, the most one user may (--max-user-watchers)",
				       (unsigned)ctl_uid(c), conf.max_user_watchers);
		else
			ctl_send(c, reply_new(rq.id));
		break;
	case RQ_AUDIT:
		op_audit(c, rq.id);
		break;
	case RQ_VERIFY:
		verifyop_request(c, &rq);
		break;
	case RQ_RELOAD:
		if (!privileged(c)) {
			ctl_send_error(c, rq.id, "permission", "reload is root's; uid %u may not",
				       (unsigned)ctl_uid(c));
		} else {
			struct json_object *r;

			serve_reload("reload request");
			/* A failed reload still serves the last good plan: say both. */
			r = reply_new(rq.id);
			json_object_object_add(r, "refresh", serve_refresh_status());
			ctl_send(c, r);
		}
		break;
	case RQ_NOPS:
		break;
	}
	request_fini(&rq);
}
