// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The leases in <state-dir>/leases.json, rewritten (write, fsync-free
 * rename: /run is tmpfs) on each change, so a restarted broker keeps the
 * leases of processes still alive. Checked against live pids on load.
 * A full or read-only state directory does not stop the broker: leases are
 * still served from memory, the previous file stays whole (the rename never
 * happens), the error is logged once, not per lease, and a timer retries
 * until the file is written again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "railbindd.h"

#define STATE_RETRY_MS 1000

static int failing;		/* the errno of the last failed save, 0 if none */
static unsigned int retry_timer;

static void retry(void *arg)
{
	(void)arg;
	retry_timer = 0;
	state_save();
}

static int path_of(char *buf, size_t len, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", conf.state_dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int state_save(void)
{
	struct json_object *doc = json_object_new_object();
	char path[4096], tmp[4096];
	const char *s;
	FILE *f;
	int rc = 0;

	if (path_of(path, sizeof(path), "leases.json") ||
	    path_of(tmp, sizeof(tmp), "leases.json.tmp")) {
		json_object_put(doc);
		return -ENAMETOOLONG;
	}
	json_object_object_add(doc, "schema", json_object_new_string("railbind.leases/1"));
	json_object_object_add(doc, "leases", lease_dump());
	s = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN);
	f = fopen(tmp, "we");
	if (!f || fputs(s, f) < 0 || fputc('\n', f) < 0)
		rc = -errno;
	if (f && fclose(f) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	json_object_put(doc);
	if (rc < 0) {
		unlink(tmp);	/* a cut copy must not fill what space is left */
		if (failing != -rc)
			rbd_log(LOG_ERR, "cannot save the leases to %s: %s; serving them from memory, retrying every %d ms",
				path, strerror(-rc), STATE_RETRY_MS);
		failing = -rc;
		if (!retry_timer)
			retry_timer = sched_add_timer(STATE_RETRY_MS, retry, NULL);
		return rc;
	}
	if (failing)
		rbd_log(LOG_WARNING, "saved the leases to %s again", path);
	failing = 0;
	if (retry_timer) {
		sched_del_timer(retry_timer);
		retry_timer = 0;
	}
	return 0;
}

int state_load(void)
{
	struct json_object *doc, *leases;
	char path[4096];
	size_t i, kept = 0, n;

	if (path_of(path, sizeof(path), "leases.json"))
		return -ENAMETOOLONG;
	if (access(path, F_OK) < 0)
		return 0;
	doc = json_object_from_file(path);
	if (!doc || !json_object_object_get_ex(doc, "leases", &leases) ||
	    !json_object_is_type(leases, json_type_array)) {
		rbd_log(LOG_WARNING, "%s: not a lease file; starting without leases", path);
		json_object_put(doc);
		return 0;
	}
	n = json_object_array_length(leases);
	for (i = 0; i < n; i++)
		if (lease_restore(json_object_array_get_idx(leases, i)) == 0)
			kept++;
	json_object_put(doc);
	rbd_log(LOG_INFO, "kept %zu of %zu saved leases (the others' processes are gone)",
		kept, n);
	return state_save();
}
