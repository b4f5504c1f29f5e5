// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The broker's leases, for verify: which process holds which local rank of
 * which job, and the GPU and CPUs the broker gave it. Asked of a running
 * railbindd (its status op: root sees every lease, a user their own), else
 * read from the file the broker keeps them in (<root>/run/railbind/leases.json,
 * railbind.leases/1), whose entries carry the holder's start time, so a
 * lease left by a process whose pid was reused is not taken for the new one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <json-c/json.h>

#include "client.h"
#include "verify.h"

#define MAX_LEASE_FILE (16u << 20)

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static bool jint(struct json_object *o, const char *key, long long *out)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return false;
	*out = json_object_get_int64(v);
	return true;
}

static int take(struct aff_vleases *ls, struct json_object *arr)
{
	size_t i, n = json_object_array_length(arr);

	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(arr, i);
		struct aff_vlease l = { 0 }, *nl;
		long long pid, uid = -1, rank, start = 0;
		const char *job = jstr(o, "job"), *gpu = jstr(o, "gpu"), *cpus = jstr(o, "cpus");

		if (!json_object_is_type(o, json_type_object) || !job || !jint(o, "pid", &pid) ||
		    pid <= 0 || pid > 0x7fffffff || !jint(o, "rank", &rank))
			continue;	/* not a lease: skipped, the rest still count */
		jint(o, "uid", &uid);
		jint(o, "start", &start);
		l.pid = (pid_t)pid;
		l.uid = (uid_t)uid;
		l.rank = (long)rank;
		l.start = start > 0 ? (unsigned long long)start : 0;
		l.job = strdup(job);
		l.gpu = gpu ? strdup(gpu) : NULL;
		l.cpus = cpus ? strdup(cpus) : NULL;
		nl = realloc(ls->l, (ls->n + 1) * sizeof(*nl));
		if (!l.job || (gpu && !l.gpu) || (cpus && !l.cpus) || !nl) {
			free(l.job);
			free(l.gpu);
			free(l.cpus);
			if (nl)
				ls->l = nl;
			return -ENOMEM;
		}
		ls->l = nl;
		ls->l[ls->n++] = l;
	}
	return 0;
}

static int from_broker(struct aff_vleases *ls, const char *path, int timeout_ms)
{
	struct json_object *reply = NULL, *arr;
	int rc = aff_broker_call(path, "{\"v\":1,\"op\":\"status\"}", timeout_ms, &reply);

	if (rc < 0) {
		snprintf(ls->reason, sizeof(ls->reason), "no broker at %s: %s", path,
			 strerror(-rc));
		return rc == -ENOMEM ? rc : 1;
	}
	if (!json_object_object_get_ex(reply, "leases", &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		snprintf(ls->reason, sizeof(ls->reason), "the broker at %s sent no leases (%s)",
			 path, jstr(reply, "message") ? jstr(reply, "message") : "no \"leases\"");
		json_object_put(reply);
		return 1;
	}
	rc = take(ls, arr);
	json_object_put(reply);
	snprintf(ls->source, sizeof(ls->source), "broker");
	snprintf(ls->reason, sizeof(ls->reason), "railbindd at %s", path);
	return rc;
}

/* The leases of a document's "leases" array; -EINVAL when it has none. */
static int take_text(struct aff_vleases *ls, const char *text)
{
	struct json_object *doc = json_tokener_parse(text), *arr;
	int rc = -EINVAL;

	if (doc && json_object_object_get_ex(doc, "leases", &arr) &&
	    json_object_is_type(arr, json_type_array))
		rc = take(ls, arr);
	json_object_put(doc);
	return rc;
}

int aff_vleases_parse(const char *text, struct aff_vleases *ls)
{
	int rc;

	memset(ls, 0, sizeof(*ls));
	rc = take_text(ls, text);
	if (rc)
		aff_vleases_clear(ls);
	return rc;
}

/* Read as every file railbind reads (aff_read_state_file): a link refused. */
static int from_file(struct aff_vleases *ls, const char *path)
{
	char *buf = NULL, why[256];
	size_t got = 0;
	int rc;

	rc = aff_read_state_file(path, MAX_LEASE_FILE, &buf, &got, why, sizeof(why));
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0)
		goto none;
	rc = take_text(ls, buf);
	free(buf);
	if (rc == -EINVAL) {
		snprintf(why, sizeof(why), "%s: not a railbind.leases/1 file", path);
		goto none;
	}
	snprintf(ls->source, sizeof(ls->source), "file");
	snprintf(ls->reason, sizeof(ls->reason), "%s", path);
	return rc;
none:
	/* Keep why the broker did not answer, then why the file did not help. */
	if (ls->reason[0]) {
		size_t used = strlen(ls->reason);

		snprintf(ls->reason + used, sizeof(ls->reason) - used, "; %s", why);
	} else {
		snprintf(ls->reason, sizeof(ls->reason), "%.255s", why);
	}
	return 0;
}

int aff_vleases_load(const struct aff_ctx *ctx, const char *socket, bool ask_broker,
		     int timeout_ms, const char *given, struct aff_vleases *out)
{
	char sock[4096], file[4096];
	const char *env = secure_getenv("RAILBIND_SOCKET");
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(out->source, sizeof(out->source), "none");
	if (given) {
		rc = take_text(out, given);
		snprintf(out->source, sizeof(out->source), "broker");
		snprintf(out->reason, sizeof(out->reason), "%s",
			 rc < 0 ? "the broker's leases did not parse" : "the broker's own");
		return rc == -ENOMEM ? rc : 0;
	}
	if (!socket || !*socket)
		socket = env && *env ? env : aff_ctx_path(ctx, "/run/railbind/railbind.sock",
							 sock, sizeof(sock));
	if (ask_broker) {
		rc = from_broker(out, socket, timeout_ms > 0 ? timeout_ms : 500);
		if (rc <= 0)
			return rc;
	}
	return from_file(out, aff_ctx_path(ctx, "/run/railbind/leases.json", file, sizeof(file)));
}

const struct aff_vlease *aff_vleases_find(const struct aff_vleases *ls, pid_t pid,
					  unsigned long long start)
{
	size_t i;

	for (i = 0; i < ls->n; i++)
		if (ls->l[i].pid == pid && (!ls->l[i].start || ls->l[i].start == start))
			return &ls->l[i];
	return NULL;
}

void aff_vleases_clear(struct aff_vleases *ls)
{
	size_t i;

	for (i = 0; i < ls->n; i++) {
		free(ls->l[i].job);
		free(ls->l[i].gpu);
		free(ls->l[i].cpus);
	}
	free(ls->l);
	memset(ls, 0, sizeof(*ls));
}
