// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The leases in <state-dir>/leases.json, so a restarted broker keeps the
 * leases of processes still alive. Checked against live pids on load.
 *
 * Written whole (a new file, then rename: /run is tmpfs, no fsync), but
 * not on every change: a change marks the state dirty and the file is
 * written once at the end of that turn of the loop, however many leases
 * the turn took or dropped, and no more than a tenth of the broker's time
 * goes to it (the next write waits nine times as long as the last one
 * took). A process exiting with a thousand leases is one write, not a
 * thousand writes of a shrinking file.
 *
 * The temporary file is created anew (O_EXCL|O_NOFOLLOW), never opened
 * through whatever a name points at. Reading follows the rules of every
 * file railbind reads (aff_read_state_file): opened non-blocking, refused
 * unless a regular file within STATE_MAX_SIZE, a link not followed, read
 * once; a FIFO or /dev/zero in its place costs a log line, not the start.
 *
 * A full or read-only state directory does not stop the broker: leases are
 * still served from memory, the previous file stays whole (the rename
 * never happens), the error is logged once, not per lease, and a timer
 * retries until the file is written again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "affinity.h"
#include "log.h"
#include "railbindd.h"

#define STATE_RETRY_MS 1000
/* Far above --max-leases of ~200-byte records; a bigger file is not ours. */
#define STATE_MAX_SIZE AFF_INPUT_LIMIT

static int failing;		/* the errno of the last failed save, 0 if none */
static unsigned int save_timer;
static bool dirty;
static long long next_allowed;	/* no save before this (sched_now_ms) */

static int path_of(char *buf, size_t len, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", conf.state_dir, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int save(void)
{
	struct json_object *doc = json_object_new_object();
	char path[4096], tmp[4096];
	const char *s;
	int fd, rc = 0;

	if (path_of(path, sizeof(path), "leases.json") ||
	    path_of(tmp, sizeof(tmp), "leases.json.tmp")) {
		json_object_put(doc);
		return -ENAMETOOLONG;
	}
	json_object_object_add(doc, "schema", json_object_new_string("railbind.leases/1"));
	json_object_object_add(doc, "leases", lease_dump());
	s = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN);
	/* A leftover of a crash, or anything planted under that name. */
	if (unlink(tmp) < 0 && errno != ENOENT)
		rc = -errno;
	fd = rc ? -1 : open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (!rc && fd < 0)
		rc = -errno;
	if (!rc)
		rc = aff_write_all(fd, s, strlen(s));
	if (!rc)
		rc = aff_write_all(fd, "\n", 1);
	if (fd >= 0 && close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	json_object_put(doc);
	if (rc < 0) {
		if (fd >= 0)
			unlink(tmp);	/* a cut copy must not fill what space is left */
		if (failing != -rc)
			rbd_log(LOG_ERR, "cannot save the leases to %s: %s; serving them from memory, retrying every %d ms",
				path, strerror(-rc), STATE_RETRY_MS);
		failing = -rc;
		return rc;
	}
	if (failing)
		rbd_log(LOG_WARNING, "saved the leases to %s again", path);
	failing = 0;
	return 0;
}

static void save_now(void *arg)
{
	long long t0 = sched_now_ms();

	(void)arg;
	save_timer = 0;
	if (!dirty)
		return;
	dirty = false;
	if (save() < 0) {
		dirty = true;
		save_timer = sched_add_timer(STATE_RETRY_MS, save_now, NULL);
		return;
	}
	next_allowed = sched_now_ms() + 9 * (sched_now_ms() - t0);
}

void state_dirty(void)
{
	long long now = sched_now_ms();

	dirty = true;
	if (save_timer)
		return;
	/* A timer due now runs after this turn's events: one save per turn. */
	save_timer = sched_add_timer(next_allowed > now ? (int)(next_allowed - now) : 0,
				     save_now, NULL);
}

int state_flush(void)
{
	int rc;

	if (save_timer)
		sched_del_timer(save_timer);
	save_timer = 0;
	if (!dirty)
		return 0;
	rc = save();
	dirty = rc < 0;
	return rc;
}

static const char *why(int err)
{
	switch (err) {
	case EINVAL:
	case EISDIR:
		return "not a regular file";
	case EFBIG:
		return "larger than 64 MiB";
	case ELOOP:
		return "a symbolic link";
	default:
		return strerror(err);
	}
}

int state_load(void)
{
	struct json_object *doc = NULL, *leases = NULL;
	struct json_tokener *tok;
	char path[4096], *text;
	size_t i, kept = 0, n, len = 0, bad = 0, first_bad = 0, over = 0;
	int err;

	if (path_of(path, sizeof(path), "leases.json"))
		return -ENAMETOOLONG;
	err = -aff_read_state_file(path, STATE_MAX_SIZE, &text, &len, NULL, 0);
	if (err) {
		if (err != ENOENT)
			rbd_log(LOG_WARNING, "%s: %s; starting without leases", path, why(err));
		return 0;
	}
	/* UTF-8 is checked per string (lease_restore): one bad record must
	 * not cost the others. */
	tok = json_tokener_new();
	if (tok && len <= INT32_MAX) {
		doc = json_tokener_parse_ex(tok, text, (int)len);
		if (json_tokener_get_error(tok) != json_tokener_success) {
			json_object_put(doc);
			doc = NULL;
		}
	}
	json_tokener_free(tok);
	free(text);
	if (!doc || !json_object_is_type(doc, json_type_object) ||
	    !json_object_object_get_ex(doc, "leases", &leases) ||
	    !json_object_is_type(leases, json_type_array)) {
		rbd_log(LOG_WARNING, "%s: not a lease file; starting without leases", path);
		json_object_put(doc);
		return 0;
	}
	n = json_object_array_length(leases);
	for (i = 0; i < n; i++) {
		int rc = lease_restore(json_object_array_get_idx(leases, i));

		if (rc == 0)
			kept++;
		else if (rc == -EINVAL && !bad++)
			first_bad = i + 1;
		else if (rc == -EUSERS)
			over++;
	}
	json_object_put(doc);
	if (bad)
		rbd_log(LOG_WARNING, "%s: %zu malformed lease%s dropped (the first: number %zu)",
			path, bad, bad == 1 ? "" : "s", first_bad);
	if (over)
		rbd_log(LOG_WARNING, "%s: %zu lease%s beyond --max-user-leases or --max-leases dropped",
			path, over, over == 1 ? "" : "s");
	rbd_log(LOG_INFO, "kept %zu of %zu saved leases (the others' processes are gone)",
		kept, n);
	/* Written once now: the dropped leases go, and a state directory
	 * that cannot be written is said at start, not at the first lease. */
	state_dirty();
	return 0;
}
