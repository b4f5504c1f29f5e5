// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind fleet: the majority and the outliers. For each aspect, the
 * reference is the value most nodes that tell it share (ties: the one that
 * sorts first, and the document says there is no majority). A node differs
 * where its subjects' values are not the reference's; nodes with exactly the
 * same differences form one group. A device a node lacks (or has in excess)
 * is said once, under "devices": what the other aspects say about that
 * device follows from it and is left out.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "fleet.h"
#include "railbind.h"

struct node {
	struct json_object *rec;
	struct json_object *facts[FLEET_NASPECTS];
	const char *canon[FLEET_NASPECTS];
	struct json_object *diffs;	/* NULL: agrees with the majority */
	const char *key;		/* diffs as text, for grouping */
};

/* qsort() has no argument for the aspect to compare by. */
static int by_canon_aspect;

static int cmp_canon(const void *a, const void *b)
{
	const struct node *x = *(struct node *const *)a, *y = *(struct node *const *)b;

	return strcmp(x->canon[by_canon_aspect], y->canon[by_canon_aspect]);
}

/*
 * The reference facts of aspect a, and how many nodes hold them. A tie goes
 * to the value of the earliest file, in every aspect alike, so that with no
 * majority one node is the reference rather than a mix of several.
 */
static struct json_object *majority(struct node **v, size_t n, int a, size_t *count)
{
	struct json_object *best = NULL;
	const struct node *best_first = NULL;
	size_t i, k, run;

	*count = 0;
	by_canon_aspect = a;
	qsort(v, n, sizeof(*v), cmp_canon);
	for (i = 0; i < n; i += run) {
		const struct node *first = v[i];

		for (run = 1; i + run < n && !strcmp(v[i]->canon[a], v[i + run]->canon[a]); run++)
			;
		for (k = i; k < i + run; k++)
			if (v[k] < first)
				first = v[k];
		if (run > *count || (run == *count && first < best_first)) {
			*count = run;
			best = v[i]->facts[a];
			best_first = first;
		}
	}
	return best;
}

/* Does subject name one of the devices in words (a JSON object used as a set)? */
static bool about(const char *subject, struct json_object *words)
{
	char buf[256], *w, *save;

	if (!json_object_object_length(words))
		return false;
	snprintf(buf, sizeof(buf), "%s", subject);
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save))
		if (json_object_object_get_ex(words, w, NULL))
			return true;
	return false;
}

/*
 * What a rail that differs does to NCCL, in one line. NCCL pairs NICs by
 * index across nodes (NVIDIA/nccl#1591) and, from 2.30.3, compares only
 * their count (src/init.cc): NCCL_IGNORE_NET_MISMATCH defaults to 1, which
 * logs "Detected mixed local Net device counts" and goes on (the hang of
 * NVIDIA/nccl#2428); 0 makes the init fail.
 */
static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);

	return n >= k && !strcmp(s + n - k, tail);
}

static const char *rails_consequence(const char *subject, struct json_object *value)
{
	if (!strcmp(subject, "count"))
		return "NCCL pairs NICs by index across nodes and compares only their count: by default (NCCL_IGNORE_NET_MISMATCH=1) it logs \"Detected mixed local Net device counts\" and goes on, and the job can hang; with NCCL_IGNORE_NET_MISMATCH=0 its init fails";
	if (ends_with(subject, " transceiver") && !value)
		return "this rail's module was not read here (none plugged, an InfiniBand port, or a snapshot taken without CAP_NET_ADMIN): take the snapshot as root to compare it";
	if (ends_with(subject, " transceiver"))
		return "this rail's module differs here (another memory map: SFP, QSFP or QSFP-DD/OSFP; another vendor or part): a module the switch port or the cable plan does not expect can train to another rate or not at all; check it against the others with ethtool -m";
	if (!value)
		return "NCCL's NIC of this index on the other nodes has no peer here (see count)";
	if (ends_with(subject, " MTU") || ends_with(subject, " netdev MTU"))
		return "RDMA moves with the smaller MTU of the two ends, and peers whose MTUs differ can hang a collective (NVIDIA/nccl#1524): set one MTU on every node's rails and switch ports";
	if (ends_with(subject, " GID"))
		return "the rank needs the RoCE v2 GID with the rail's IPv4 address on every node: where it is missing or at another index, NCCL picks another GID or none (NCCL_IB_GID_INDEX is one index for the whole job)";
	if (ends_with(subject, " firmware") || ends_with(subject, " board"))
		return "NIC firmware (or a board) that differs across the nodes of a job is a classic cause of one slow node: update them to one version";
	if (ends_with(subject, " width"))
		return "this rail trained to another width or speed here: its traffic runs at the slower rate";
	return "NCCL pairs NICs by index across nodes and does not check them: this index is another rail here (another rate, link layer or place), so its traffic runs at the slower rate or crosses rails";
}

static void add_diff(struct json_object *diffs, const char *aspect, const char *subject,
		     struct json_object *value, struct json_object *ref)
{
	struct json_object *d = json_object_new_object();

	json_object_object_add(d, "aspect", json_object_new_string(aspect));
	json_object_object_add(d, "subject", json_object_new_string(subject));
	json_object_object_add(d, "value", json_object_get(value));
	json_object_object_add(d, "majority", json_object_get(ref));
	if (!strcmp(aspect, "rails"))
		json_object_object_add(d, "consequence",
				       json_object_new_string(rails_consequence(subject, value)));
	json_object_array_add(diffs, d);
}

/*
 * The devices one side has and the other lacks, as the words other aspects
 * name them by: the GPU's PCI address, the NIC's name and PCI address.
 */
static void odd_side(struct json_object *mine, struct json_object *other,
		     struct json_object *words)
{
	json_object_object_foreach(mine, k, v) {
		const char *pci = json_object_get_string(v);

		if ((strncmp(k, "GPU ", 4) && strncmp(k, "NIC ", 4)) ||
		    json_object_object_get_ex(other, k, NULL))
			continue;
		json_object_object_add(words, k + 4, NULL);
		if (pci && strchr(pci, ':'))
			json_object_object_add(words, pci, NULL);
	}
}

static void diff_node(struct node *nd, struct json_object *const *ref)
{
	struct json_object *diffs = json_object_new_array(), *odd = json_object_new_object();
	int a;

	if (nd->facts[0] && ref[0]) {
		odd_side(nd->facts[0], ref[0], odd);
		odd_side(ref[0], nd->facts[0], odd);
	}
	for (a = 0; a < FLEET_NASPECTS; a++) {
		struct json_object *mine = nd->facts[a], *v;

		if (!mine || !ref[a] || mine == ref[a] ||
		    !strcmp(nd->canon[a], json_object_to_json_string_ext(ref[a],
								       JSON_C_TO_STRING_PLAIN)))
			continue;
		json_object_object_foreach(ref[a], k, rv) {
			bool has = json_object_object_get_ex(mine, k, &v);

			if (!has && (a == 0 || !about(k, odd)))
				add_diff(diffs, fleet_aspects[a], k, NULL, rv);
			else if (has && strcmp(json_object_get_string(v), json_object_get_string(rv)))
				add_diff(diffs, fleet_aspects[a], k, v, rv);
		}
		json_object_object_foreach(mine, mk, mv)
			if (!json_object_object_get_ex(ref[a], mk, NULL) &&
			    (a == 0 || !about(mk, odd)))
				add_diff(diffs, fleet_aspects[a], mk, mv, NULL);
	}
	json_object_put(odd);
	if (!json_object_array_length(diffs)) {
		json_object_put(diffs);
		return;
	}
	nd->diffs = diffs;
	nd->key = json_object_to_json_string_ext(diffs, JSON_C_TO_STRING_PLAIN);
}

static int cmp_key(const void *a, const void *b)
{
	const struct node *x = *(struct node *const *)a, *y = *(struct node *const *)b;
	int c = strcmp(x->key, y->key);

	return c ? c : (x < y ? -1 : x > y);
}

static int cmp_group(const void *a, const void *b)
{
	struct json_object *x = *(struct json_object *const *)a;
	struct json_object *y = *(struct json_object *const *)b;
	size_t cx = json_object_array_length(rb_jget(x, "nodes"));
	size_t cy = json_object_array_length(rb_jget(y, "nodes"));

	if (cx != cy)
		return cx > cy ? -1 : 1;
	return strcmp(json_object_get_string(json_object_array_get_idx(rb_jget(x, "nodes"), 0)),
		      json_object_get_string(json_object_array_get_idx(rb_jget(y, "nodes"), 0)));
}

static struct json_object *new_group(struct node *first)
{
	struct json_object *g = json_object_new_object(), *aspects = json_object_new_array();
	size_t i;
	int a;

	for (a = 0; a < FLEET_NASPECTS; a++)
		for (i = 0; i < json_object_array_length(first->diffs); i++)
			if (!strcmp(rb_jstr(json_object_array_get_idx(first->diffs, i), "aspect"),
				    fleet_aspects[a])) {
				json_object_array_add(aspects, json_object_new_string(fleet_aspects[a]));
				break;
			}
	json_object_object_add(g, "count", json_object_new_int(0));
	json_object_object_add(g, "aspects", aspects);
	json_object_object_add(g, "nodes", json_object_new_array());
	json_object_object_add(g, "differences", json_object_get(first->diffs));
	return g;
}

/* Group the outliers v[0..n) by their differences; returns the groups array. */
static struct json_object *group(struct node **v, size_t n)
{
	struct json_object *groups = json_object_new_array(), *g = NULL;
	size_t i;

	qsort(v, n, sizeof(*v), cmp_key);
	for (i = 0; i < n; i++) {
		if (!i || strcmp(v[i]->key, v[i - 1]->key)) {
			g = new_group(v[i]);
			json_object_array_add(groups, g);
		}
		json_object_array_add(rb_jget(g, "nodes"), json_object_get(rb_jget(v[i]->rec, "name")));
	}
	json_object_array_sort(groups, cmp_group);
	for (i = 0; i < json_object_array_length(groups); i++) {
		struct json_object *gi = json_object_array_get_idx(groups, i);

		json_object_object_add(gi, "count", json_object_new_int(
			(int)json_object_array_length(rb_jget(gi, "nodes"))));
	}
	return groups;
}

static const char *status_of(size_t files, size_t nodes, size_t unreadable, size_t outliers)
{
	if (!files || !nodes)
		return "unknown";
	return unreadable ? "unreadable" : outliers ? "outliers" : "ok";
}

int fleet_exit_code(struct json_object *doc)
{
	static const char *const codes[] = { "ok", "outliers", "unreadable", "unknown" };
	const char *s = rb_jstr(doc, "status");
	int i;

	for (i = 0; s && i < 3; i++)
		if (!strcmp(s, codes[i]))
			return i;
	return RB_CHECK_UNKNOWN;
}

/* The host list, with each node's group number (1-based, as printed) or null. */
static struct json_object *hosts(struct node *nd, size_t n, struct json_object *groups)
{
	struct json_object *list = json_object_new_array();
	size_t i, k, ng = json_object_array_length(groups);

	for (i = 0; i < n; i++) {
		struct json_object *h = json_object_new_object(), *gv = NULL;

		json_object_object_add(h, "name", json_object_get(rb_jget(nd[i].rec, "name")));
		json_object_object_add(h, "file", json_object_get(rb_jget(nd[i].rec, "file")));
		json_object_object_add(h, "input", json_object_get(rb_jget(nd[i].rec, "input")));
		json_object_object_add(h, "status", json_object_get(rb_jget(nd[i].rec, "status")));
		for (k = 0; nd[i].diffs && !gv && k < ng; k++)
			if (!strcmp(nd[i].key, json_object_to_json_string_ext(
				rb_jget(json_object_array_get_idx(groups, k), "differences"),
				JSON_C_TO_STRING_PLAIN)))
				gv = json_object_new_int((int)k + 1);
		json_object_object_add(h, "group", gv);
		json_object_array_add(list, h);
	}
	return list;
}

struct json_object *fleet_compare(struct json_object *const *rec, size_t n)
{
	struct json_object *doc = json_object_new_object(), *bad = json_object_new_array();
	struct json_object *aspects = json_object_new_object(), *ref[FLEET_NASPECTS] = { 0 };
	struct json_object *groups;
	struct node *nd = calloc(n ? n : 1, sizeof(*nd));
	struct node **v = calloc(n ? n : 1, sizeof(*v));
	size_t i, k, m = 0, nout = 0;
	int a;

	if (!doc || !bad || !aspects || !nd || !v) {
		json_object_put(doc);
		json_object_put(bad);
		json_object_put(aspects);
		free(nd);
		free(v);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		struct json_object *facts = rb_jget(rec[i], "facts");

		if (!facts) {
			struct json_object *b = json_object_new_object();

			json_object_object_add(b, "file", json_object_get(rb_jget(rec[i], "file")));
			json_object_object_add(b, "error", json_object_get(rb_jget(rec[i], "error")));
			json_object_array_add(bad, b);
			continue;
		}
		nd[m].rec = rec[i];
		for (a = 0; a < FLEET_NASPECTS; a++) {
			nd[m].facts[a] = rb_jget(facts, fleet_aspects[a]);
			if (nd[m].facts[a])
				nd[m].canon[a] = json_object_to_json_string_ext(nd[m].facts[a],
									JSON_C_TO_STRING_PLAIN);
		}
		m++;
	}
	for (a = 0; a < FLEET_NASPECTS; a++) {
		struct json_object *asp;
		size_t have = 0, count;

		for (i = 0; i < m; i++)
			if (nd[i].facts[a])
				v[have++] = &nd[i];
		if (!have)
			continue;
		ref[a] = majority(v, have, a, &count);
		asp = json_object_new_object();
		json_object_object_add(asp, "nodes", json_object_new_int64((int64_t)have));
		json_object_object_add(asp, "majority", json_object_new_int64((int64_t)count));
		json_object_object_add(asp, "reference", json_object_get(ref[a]));
		json_object_object_add(aspects, fleet_aspects[a], asp);
	}
	for (i = 0; i < m; i++) {
		diff_node(&nd[i], ref);
		if (nd[i].diffs)
			v[nout++] = &nd[i];
	}
	groups = group(v, nout);
	json_object_object_add(doc, "schema", json_object_new_string("railbind.fleet/1"));
	json_object_object_add(doc, "status", json_object_new_string(
		status_of(n, m, json_object_array_length(bad), nout)));
	json_object_object_add(doc, "files", json_object_new_int64((int64_t)n));
	json_object_object_add(doc, "nodes", json_object_new_int64((int64_t)m));
	json_object_object_add(doc, "agree", json_object_new_int64((int64_t)(m - nout)));
	json_object_object_add(doc, "outliers", json_object_new_int64((int64_t)nout));
	json_object_object_add(doc, "aspects", aspects);
	json_object_object_add(doc, "groups", groups);
	json_object_object_add(doc, "unreadable", bad);
	json_object_object_add(doc, "hosts", hosts(nd, m, groups));
	for (k = 0; k < m; k++)
		json_object_put(nd[k].diffs);
	free(nd);
	free(v);
	return doc;
}
