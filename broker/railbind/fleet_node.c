// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind fleet: one node's record (fleet.h). The file is read once, as
 * every command reads a file (aff_read_file); a snapshot is loaded from
 * that text (aff_topo_load_buffer) and audited; an audit document
 * (railbind.audit/1) is taken as it is. What both tell (devices, paths,
 * numa, checks) is taken from the audit document in both cases, by the same
 * code, so a node's snapshot and its audit compare equal. Rails, links,
 * ACS and the machine come from the model (aff_topo_facts_json), which only
 * a topology file gives. A rail's transceiver at its warning or alarm comes
 * from the audit document, under checks ("transceiver NIC"); its module's
 * kind from the model, under rails ("rail N transceiver").
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "fleet.h"
#include "railbind.h"

const char *const fleet_aspects[FLEET_NASPECTS] = {
	"devices", "rails", "paths", "numa", "checks", "links", "acs", "machine",
};

static void fact(struct json_object *facts, const char *value, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fact(struct json_object *facts, const char *value, const char *fmt, ...)
{
	char key[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(key, sizeof(key), fmt, ap);
	va_end(ap);
	json_object_object_add(facts, key, json_object_new_string(value ? value : "unknown"));
}

/* An empty aspect of the node, owned by aspects. */
static struct json_object *new_aspect(struct json_object *aspects, const char *name)
{
	struct json_object *facts = json_object_new_object();

	json_object_object_add(aspects, name, facts);
	return facts;
}

/* How the audit names a NIC: RDMA device, else interface, else PCI address. */
static const char *nic_label(struct json_object *nic)
{
	const char *s = rb_jstr(nic, "name");

	if (!s)
		s = rb_jstr(nic, "netdev");
	if (!s)
		s = rb_jstr(nic, "pci");
	return s ? s : "?";
}

static bool is_array(struct json_object *o)
{
	return json_object_is_type(o, json_type_array);
}

/* devices, paths, numa and checks from a railbind.audit/1 document. */
static int audit_facts(struct json_object *doc, struct json_object *aspects)
{
	struct json_object *topo = rb_jget(doc, "topo"), *gpus = rb_jget(topo, "gpus");
	struct json_object *nics = rb_jget(topo, "nics"), *paths = rb_jget(topo, "paths");
	struct json_object *pairs = rb_jget(doc, "pairs"), *sum = rb_jget(doc, "summary");
	struct json_object *dev, *path, *numa, *checks;
	size_t g, n, ng, nn;
	char num[32], val[256];

	if (!is_array(gpus) || !is_array(nics) || !is_array(paths) ||
	    !json_object_is_type(sum, json_type_object))
		return -EINVAL;
	ng = json_object_array_length(gpus);
	nn = json_object_array_length(nics);
	if (json_object_array_length(paths) != ng)
		return -EINVAL;
	dev = new_aspect(aspects, "devices");
	path = new_aspect(aspects, "paths");
	numa = new_aspect(aspects, "numa");
	checks = new_aspect(aspects, "checks");
	snprintf(num, sizeof(num), "%zu", ng);
	fact(dev, num, "GPUs");
	/* The plan's rails first: what the ranks use matters most. */
	for (n = 0; is_array(pairs) && n < json_object_array_length(pairs); n++) {
		struct json_object *p = json_object_array_get_idx(pairs, n);

		if (!json_object_get_boolean(rb_jget(p, "planned")))
			continue;
		snprintf(val, sizeof(val), "%s %s", rb_jstr(p, "nic") ? rb_jstr(p, "nic") : "?",
			 rb_jstr(p, "path") ? rb_jstr(p, "path") : "?");
		fact(path, val, "rail of GPU %s", rb_jstr(p, "gpu") ? rb_jstr(p, "gpu") : "?");
	}
	snprintf(num, sizeof(num), "%zu", nn);
	fact(dev, num, "NICs");
	for (g = 0; g < ng; g++) {
		struct json_object *gpu = json_object_array_get_idx(gpus, g);
		struct json_object *row = json_object_array_get_idx(paths, g);
		const char *pci = rb_jstr(gpu, "pci"), *node = rb_jstr(gpu, "numa");
		const char *cpus = rb_jstr(gpu, "cpus");

		if (!pci || !is_array(row) || json_object_array_length(row) != nn)
			return -EINVAL;
		fact(dev, "present", "GPU %s", pci);
		snprintf(val, sizeof(val), "node %s, cpus %s", node ? node : "unknown",
			 cpus ? cpus : "unknown");
		fact(numa, val, "GPU %s", pci);
		for (n = 0; n < nn; n++)
			fact(path, json_object_get_string(json_object_array_get_idx(row, n)),
			     "GPU %s - %s", pci, nic_label(json_object_array_get_idx(nics, n)));
	}
	for (n = 0; n < nn; n++) {
		struct json_object *nic = json_object_array_get_idx(nics, n);
		const char *node = rb_jstr(nic, "numa");

		fact(dev, rb_jstr(nic, "pci"), "NIC %s", nic_label(nic));
		snprintf(val, sizeof(val), "node %s", node ? node : "unknown");
		fact(numa, node ? val : NULL, "NIC %s", nic_label(nic));
	}
	json_object_object_foreach(sum, id, v)
		fact(checks, json_object_get_string(v), "%s", id);
	return 0;
}

/*
 * The transceiver check's findings per rail, but "ok": a healthy fleet
 * agrees without them, and a node read without privilege says nothing.
 */
static void optics_facts(struct json_object *doc, struct json_object *checks)
{
	struct json_object *list = rb_jget(doc, "checks");
	size_t i;

	for (i = 0; checks && is_array(list) && i < json_object_array_length(list); i++) {
		struct json_object *c = json_object_array_get_idx(list, i);
		const char *id = rb_jstr(c, "id"), *sev = rb_jstr(c, "severity");
		const char *subject = rb_jstr(c, "subject");

		if (id && sev && subject && !strcmp(id, "transceiver") && strcmp(subject, "node") &&
		    (!strcmp(sev, "warn") || !strcmp(sev, "fail")))
			fact(checks, sev, "transceiver %s", subject);
	}
}

/* links, acs and machine: what only the model of a topology file has. */
static int model_facts(const struct aff_topo *t, struct json_object *aspects)
{
	struct json_object *doc;
	char *text = NULL;
	int rc = aff_topo_facts_json(t, 0, &text);

	doc = rc ? NULL : json_tokener_parse(text);
	free(text);
	if (!doc)
		return rc ? rc : -ENOMEM;
	json_object_object_foreach(doc, name, facts)
		json_object_object_add(aspects, name, json_object_get(facts));
	json_object_put(doc);
	return 0;
}

/* The file name less its directory and a .xml or .json ending. */
static struct json_object *name_of_file(const char *file)
{
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	size_t len = strlen(base);

	if (len > 4 && !strcmp(base + len - 4, ".xml"))
		len -= 4;
	else if (len > 5 && !strcmp(base + len - 5, ".json"))
		len -= 5;
	return json_object_new_string_len(base, (int)len);
}

static void set_name(struct json_object *rec, const char *host, const char *file)
{
	json_object_object_add(rec, "name", host && *host ? json_object_new_string(host) :
					    name_of_file(file));
}

static int read_snapshot(struct aff_ctx *ctx, const char *file, const char *buf, size_t len,
			 unsigned long flags, struct json_object *rec, char *err, size_t errlen)
{
	struct json_object *aspects, *doc = NULL;
	struct aff_topo *t = NULL;
	struct aff_audit *a = NULL;
	char *text = NULL;
	int rc;

	rc = aff_topo_load_buffer(ctx, file, buf, len, flags, &t, err, errlen);
	if (!rc)
		rc = aff_audit_run(t, NULL, 0, &a, err, errlen);
	if (!rc && (rc = aff_audit_json(a, 0, &text)) == 0 && !(doc = json_tokener_parse(text)))
		rc = -ENOMEM;
	free(text);
	if (rc < 0) {
		aff_audit_unref(a);
		aff_topo_unref(t);
		return rc;
	}
	aspects = json_object_new_object();
	json_object_object_add(rec, "facts", aspects);
	set_name(rec, aff_topo_host(t), file);
	json_object_object_add(rec, "input", json_object_new_string("snapshot"));
	json_object_object_add(rec, "status", json_object_get(rb_jget(doc, "status")));
	rc = audit_facts(doc, aspects);
	if (!rc)
		rc = model_facts(t, aspects);
	if (!rc)
		optics_facts(doc, rb_jget(aspects, "checks"));
	if (rc < 0)
		snprintf(err, errlen, "%s: %s", file, strerror(-rc));
	json_object_put(doc);
	aff_audit_unref(a);
	aff_topo_unref(t);
	return rc;
}

static int read_audit(const char *file, const char *buf, size_t len, struct json_object *rec,
		      char *err, size_t errlen)
{
	struct json_tokener *tok = json_tokener_new();
	struct json_object *doc, *aspects;
	const char *schema;
	int rc;

	if (!tok)
		return -ENOMEM;
	doc = json_tokener_parse_ex(tok, buf, (int)len);
	if (!doc || json_tokener_get_parse_end(tok) < len) {
		enum json_tokener_error e = json_tokener_get_error(tok);

		snprintf(err, errlen, "%s: malformed JSON at byte %zu: %s", file,
			 json_tokener_get_parse_end(tok),
			 doc ? "data after the document" : e == json_tokener_continue ?
			 "unexpected end of file" : json_tokener_error_desc(e));
		json_tokener_free(tok);
		json_object_put(doc);
		return -EINVAL;
	}
	json_tokener_free(tok);
	schema = rb_jstr(doc, "schema");
	if (!json_object_is_type(doc, json_type_object) || !schema ||
	    strcmp(schema, "railbind.audit/1")) {
		snprintf(err, errlen, "%s: JSON with schema \"%.40s\", expected railbind.audit/1 (railbind audit --json)",
			 file, schema ? schema : "(none)");
		json_object_put(doc);
		return -EINVAL;
	}
	aspects = json_object_new_object();
	json_object_object_add(rec, "facts", aspects);
	set_name(rec, rb_jstr(doc, "host"), file);
	json_object_object_add(rec, "input", json_object_new_string("audit"));
	json_object_object_add(rec, "status", json_object_get(rb_jget(doc, "status")));
	rc = audit_facts(doc, aspects);
	if (!rc)
		optics_facts(doc, rb_jget(aspects, "checks"));
	if (rc < 0)
		snprintf(err, errlen, "%s: railbind.audit/1 document without its topo, pairs or summary",
			 file);
	json_object_put(doc);
	return rc;
}

struct json_object *fleet_node_read(struct aff_ctx *ctx, const char *file, size_t i,
				    unsigned long flags)
{
	struct json_object *rec = json_object_new_object();
	char err[1024] = "", *buf = NULL;
	size_t len;
	int rc;

	if (!rec)
		return NULL;
	json_object_object_add(rec, "i", json_object_new_int64((int64_t)i));
	json_object_object_add(rec, "file", json_object_new_string(file));
	rc = aff_read_file(file, aff_ctx_input_limit(ctx), &buf, &len, err, sizeof(err));
	/* An audit document is JSON (its first byte past blanks is '{'); anything else, a topology. */
	if (!rc && buf[strspn(buf, " \t\r\n")] == '{')
		rc = read_audit(file, buf, len, rec, err, sizeof(err));
	else if (!rc)
		rc = read_snapshot(ctx, file, buf, len, flags, rec, err, sizeof(err));
	free(buf);
	if (rc < 0) {
		/* Only where the file is: what was read of it is no use. */
		json_object_put(rec);
		rec = json_object_new_object();
		json_object_object_add(rec, "i", json_object_new_int64((int64_t)i));
		json_object_object_add(rec, "file", json_object_new_string(file));
		if (!*err)
			snprintf(err, sizeof(err), "%s: %s", file, strerror(-rc));
		json_object_object_add(rec, "error", json_object_new_string(err));
	}
	return rec;
}
