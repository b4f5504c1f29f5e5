// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * railbind.optics/1: {"schema": "railbind.optics/1", "modules": {PCI:
 * [[EPOCH, CELSIUS], ...]}}, each module's samples oldest first. Read as a
 * file another process may have planted (a symbolic link is refused, a
 * size over 256 KiB too) and checked sample by sample: what does not parse
 * is dropped, so a damaged file costs a trend, never an audit.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "optics_history.h"

#define SCHEMA "railbind.optics/1"
#define MAX_FILE ((size_t)256 * 1024)

static struct json_object *empty_doc(void)
{
	struct json_object *doc = json_object_new_object();

	if (!doc)
		return NULL;
	json_object_object_add(doc, "schema", json_object_new_string(SCHEMA));
	json_object_object_add(doc, "modules", json_object_new_object());
	return doc;
}

int aff_optics_history_parse(const char *text, struct json_object **doc)
{
	struct json_object *d = text ? json_tokener_parse(text) : NULL, *schema, *mods;

	if (d && (!json_object_is_type(d, json_type_object) ||
		  !json_object_object_get_ex(d, "schema", &schema) ||
		  !json_object_is_type(schema, json_type_string) ||
		  strcmp(json_object_get_string(schema), SCHEMA) ||
		  !json_object_object_get_ex(d, "modules", &mods) ||
		  !json_object_is_type(mods, json_type_object))) {
		json_object_put(d);
		d = NULL;
	}
	*doc = d ? d : empty_doc();
	return *doc ? 0 : -ENOMEM;
}

int aff_optics_history_load(const char *path, struct json_object **doc)
{
	char *buf = NULL, err[256];
	size_t got = 0;
	int rc;

	if (aff_read_state_file(path, MAX_FILE, &buf, &got, err, sizeof(err)) < 0)
		buf = NULL;
	rc = aff_optics_history_parse(buf, doc);
	free(buf);
	return rc;
}

/* One [EPOCH, CELSIUS] sample, or false. */
static bool sample(struct json_object *s, long long *t, double *c)
{
	struct json_object *jt, *jc;

	if (!json_object_is_type(s, json_type_array) || json_object_array_length(s) != 2)
		return false;
	jt = json_object_array_get_idx(s, 0);
	jc = json_object_array_get_idx(s, 1);
	if (!json_object_is_type(jt, json_type_int) ||
	    !(json_object_is_type(jc, json_type_double) || json_object_is_type(jc, json_type_int)))
		return false;
	*t = json_object_get_int64(jt);
	*c = json_object_get_double(jc);
	return *t > 0 && isfinite(*c) && fabs(*c) < 1000;
}

static struct json_object *new_sample(long long t, double c)
{
	struct json_object *s = json_object_new_array();

	json_object_array_add(s, json_object_new_int64(t));
	json_object_array_add(s, json_object_new_double(c));
	return s;
}

int aff_optics_history_take(struct json_object *doc, const char *pci, long long now,
			    struct aff_optics *o)
{
	struct json_object *mods, *old = NULL, *keep;
	long long t[AFF_OPTICS_HIST_MAX];
	double c[AFF_OPTICS_HIST_MAX];
	size_t i, n = 0, len;
	unsigned k;

	o->when = now;
	o->nhist = 0;
	if (!json_object_object_get_ex(doc, "modules", &mods))
		return 0;
	json_object_object_get_ex(mods, pci, &old);
	len = json_object_is_type(old, json_type_array) ? json_object_array_length(old) : 0;
	/* The newest samples strictly before @now and within the window, oldest first. */
	for (i = 0; i < len; i++) {
		long long st;
		double sc;

		if (!sample(json_object_array_get_idx(old, i), &st, &sc) || st >= now ||
		    st < now - AFF_OPTICS_HIST_WINDOW || (n && st <= t[n - 1]))
			continue;
		if (n == AFF_OPTICS_HIST_MAX - 1) {
			memmove(t, t + 1, (n - 1) * sizeof(*t));
			memmove(c, c + 1, (n - 1) * sizeof(*c));
			n--;
		}
		t[n] = st;
		c[n++] = sc;
	}
	for (k = 0; k < n; k++) {
		o->hist_t[k] = t[k];
		o->hist_c[k] = c[k];
	}
	o->nhist = (unsigned)n;
	keep = json_object_new_array();
	if (!keep)
		return -ENOMEM;
	for (k = 0; k < n; k++)
		json_object_array_add(keep, new_sample(t[k], c[k]));
	if (o->has & 1u << AFF_OQ_TEMP)
		json_object_array_add(keep, new_sample(now, o->temp_c));
	return json_object_object_add(mods, pci, keep) < 0 ? -ENOMEM : 0;
}

int aff_optics_history_save(struct json_object *doc, const char *path, char *err,
			    size_t errlen)
{
	size_t len;
	const char *s = json_object_to_json_string_length(doc, JSON_C_TO_STRING_PLAIN, &len);

	if (!s)
		return -ENOMEM;
	return aff_write_atomic("transceiver history", path, s, len, err, errlen);
}
