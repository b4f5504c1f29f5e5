/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The broker's wire protocol (docs/PROTOCOL.md) as both ends use it, so the
 * broker and the in-process fallback hand a rank over as the same JSON text.
 * For railbindd and railbind status, beside affinity.h; not installed. What
 * railbind uses of it (aff_socket_path, aff_unix_address, aff_broker_call,
 * aff_json_string) is exported (LIBAFFINITY_1.6, since 1.6), so railbind
 * links against libaffinity.so; the rest only links statically.
 */
#ifndef RAILBIND_CLIENT_H
#define RAILBIND_CLIENT_H

#include <stddef.h>
#include <json-c/json.h>

#include "affinity.h"

#define AFF_PROTO_VERSION 1
/* The longest request line the broker reads; a longer one is an error. */
#define AFF_PROTO_MAX_REQUEST 4096
#define AFF_DEFAULT_SOCKET "/run/railbind/railbind.sock"
/* The most descriptors a request carries (SCM_RIGHTS); the broker takes no more. */
#define AFF_PROTO_MAX_PROOF 64

/* @opt, else $RAILBIND_SOCKET, else the default path. */
const char *aff_socket_path(const char *opt);

/* The job a lease belongs to: @opt, else the launcher's job id, else "default". */
const char *aff_job_name(const char *opt);

/* The largest local rank accepted from the environment (and by the broker). */
#define AFF_MAX_LOCAL_RANK 65535
/* A local rank variable's value: canonical decimal, 0..AFF_MAX_LOCAL_RANK. */
int aff_parse_local_rank(const char *s, long *out);

/* Rank @k of @plan as its railbind.plan/1 object (new reference). */
struct json_object *aff_plan_rank_object(const struct aff_plan *plan, size_t k);

/*
 * @o as JSON text (AFF_JSON_PRETTY: indented), malloc()ed into @out; takes
 * the reference to @o. -ENOMEM.
 */
int aff_json_string(struct json_object *o, unsigned long flags, char **out);

/* The address of the Unix socket @path; -ENAMETOOLONG if it does not fit. */
struct sockaddr_un;
int aff_unix_address(const char *path, struct sockaddr_un *sa);

/*
 * Send one request line to the broker at @path and read one reply line,
 * within @timeout_ms. Returns 0 and the parsed reply in @reply, or a
 * negative errno: -ENOENT/-ECONNREFUSED no broker, -ETIMEDOUT, -EPROTO.
 */
int aff_broker_call(const char *path, const char *request, int timeout_ms,
		    struct json_object **reply);

/* The binding of the rank object @text (JSON), as the client sees it. */
int aff_binding_from_text(const char *text, const char *source,
			  const char *fallback, unsigned long long generation,
			  struct aff_binding **out);

/* The errno of a broker error name ("busy" -> EBUSY), EPROTO if unknown. */
int aff_broker_errno(const char *error);

#endif
