// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The verify op: `railbind verify` for a client, so a launcher can ask after
 * its ranks started whether they run where their plan put them. The broker
 * reads /proc with its own rights (it may read every process), so the scan is
 * narrowed to the client's own processes (root: all) before anything of a
 * process is read beyond its owner (aff_verify_spec.uid). The leases are the
 * broker's own, handed over as a document: the library must not ask this
 * broker over its socket from inside its loop.
 *
 * The scan runs in the loop: a client's own processes cost little, root's
 * --all up to a few hundred milliseconds on a busy node, so each user gets
 * one verify a second (share.c's bucket, root's too, beside the request rate
 * every request is held to); one more within it is answered "overloaded"
 * (the connection stays open). The uid is the one pinned at accept.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "request.h"
#include "railbindd.h"

static char *leases_text(void)
{
	struct json_object *doc = json_object_new_object();
	char *s;

	json_object_object_add(doc, "schema", json_object_new_string("railbind.leases/1"));
	json_object_object_add(doc, "leases", lease_list(0));
	s = strdup(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN));
	json_object_put(doc);
	return s;
}

void verifyop_request(struct client *c, const struct request *rq)
{
	struct aff_verify_spec spec = { .flags = AFF_VERIFY_NO_BROKER, .uid = -1 };
	struct aff_topo *topo = serve_topology();
	uid_t uid = ctl_uid(c);
	struct aff_verify *v = NULL;
	struct json_object *r;
	pid_t *pids = NULL;
	char err[512] = "", *leases, *text = NULL;
	size_t i;
	int rc;

	if (!topo) {
		ctl_send_error(c, rq->id, "not-ready", "the broker has no topology to judge against");
		return;
	}
	if (!ctl_charge_verify(c)) {
		ctl_send_error(c, rq->id, "overloaded",
			       "one verify a second per user: uid %u asked within the last second",
			       (unsigned)uid);
		return;
	}
	if (rq->pids) {
		spec.npids = json_object_array_length(rq->pids);
		pids = calloc(spec.npids, sizeof(*pids));
		for (i = 0; pids && i < spec.npids; i++)
			pids[i] = (pid_t)json_object_get_int64(json_object_array_get_idx(rq->pids, i));
		spec.pids = pids;
	} else {
		spec.flags |= AFF_VERIFY_ALL;
	}
	if (uid != 0)
		spec.uid = (long)uid;
	spec.leases = leases = leases_text();
	if ((rq->pids && !pids) || !leases)
		rc = -ENOMEM;
	else
		rc = aff_verify_run(topo, &spec, &v, err, sizeof(err));
	free(leases);
	free(pids);
	if (rc < 0) {
		ctl_send_error(c, rq->id, rc == -ENOMEM ? "overloaded" : "invalid", "%s",
			       *err ? err : strerror(-rc));
		return;
	}
	r = ops_reply(rq->id);
	json_object_object_add(r, "verify", aff_verify_json(v, 0, &text) < 0 ? NULL :
			       json_tokener_parse(text));
	free(text);
	json_object_object_add(r, "exit_code", json_object_new_int(aff_verify_exit_code(v)));
	ctl_send(c, r);
	aff_verify_unref(v);
}
