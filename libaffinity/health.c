// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The counters of health.h: sampling sysfs, and railbind.counters/1 on disk.
 *
 *	{ "schema": "railbind.counters/1", "source": "broker", "boot_id",
 *	  "since", "updated",			seconds since the epoch
 *	  "links": [ { "pci", "speed", "width", "gpu_link", "present", "changes",
 *		       "speed_idle", "aer": [cor, nonfatal, fatal],
 *		       "aer_base": [cor, nonfatal, fatal] } ],
 *	  "ports": [ { "name", "port", "state", "present", "changes", "downs" } ] }
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <json-c/json.h>

#include "health.h"
#include "internal.h"

#define MAX_COUNTERS_FILE (16u << 20)

static const char *const aer_files[AFF_AER_N] = {
	"aer_dev_correctable", "aer_dev_nonfatal", "aer_dev_fatal",
};
static const char *const aer_totals[AFF_AER_N] = {
	"TOTAL_ERR_COR", "TOTAL_ERR_NONFATAL", "TOTAL_ERR_FATAL",
};

static const char *rootp(const char *root)
{
	return root && strcmp(root, "/") ? root : "";
}

void aff_health_boot_id(const char *root, char *out, size_t len)
{
	char path[PATH_MAX], buf[64];

	snprintf(path, sizeof(path), "%s/proc/sys/kernel/random/boot_id", rootp(root));
	if (aff_read_text(path, buf, sizeof(buf), false) < 0)
		buf[0] = '\0';
	snprintf(out, len, "%s", buf);
}

int aff_health_read_aer(const char *devdir, unsigned long long out[AFF_AER_N])
{
	char path[PATH_MAX], line[128];
	int k, found = 0;

	for (k = 0; k < AFF_AER_N; k++) {
		FILE *f;

		out[k] = 0;
		if (snprintf(path, sizeof(path), "%s/%s", devdir, aer_files[k]) >= (int)sizeof(path))
			return -ENAMETOOLONG;
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			size_t n = strlen(aer_totals[k]);
			char *end;

			if (strncmp(line, aer_totals[k], n) || line[n] != ' ')
				continue;
			errno = 0;
			out[k] = strtoull(line + n + 1, &end, 10);
			if (!errno && (*end == '\n' || !*end))
				found++;
			else
				out[k] = 0;
		}
		fclose(f);
	}
	return found ? 0 : -ENOENT;
}

/* "16.0 GT/s PCIe" -> 16.0; 0 when it says nothing ("Unknown"). */
static double parse_speed(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	return end != s && v > 0 && v < 1000 ? v : 0;
}

static int parse_width(const char *s)
{
	char *end;
	long v;

	if (*s == 'x')
		s++;
	v = strtol(s, &end, 10);
	return end != s && !*end && v > 0 && v <= 64 ? (int)v : 0;
}

/* PCI class of a device directory: display (0x03) or processing accelerator (0x12). */
static bool is_gpu_class(const char *devdir)
{
	char path[PATH_MAX], buf[32];
	unsigned long cls;
	char *end;

	if (snprintf(path, sizeof(path), "%s/class", devdir) >= (int)sizeof(path) ||
	    aff_read_text(path, buf, sizeof(buf), false) < 0)
		return false;
	cls = strtoul(buf, &end, 16);
	return !*end && ((cls >> 16) == 0x03 || (cls >> 16) == 0x12);
}

static bool is_bdf(const char *s)
{
	unsigned d, b, v, f;
	char c;

	return sscanf(s, "%4x:%2x:%2x.%1x%c", &d, &b, &v, &f, &c) == 4 && strlen(s) == 12;
}

/* A GPU's own link: the GPU itself, or the port whose child a GPU is. */
static bool gpu_link(const char *devdir)
{
	char child[PATH_MAX];
	struct dirent *e;
	bool gpu = is_gpu_class(devdir);
	DIR *dp;

	if (gpu)
		return true;
	dp = opendir(devdir);
	if (!dp)
		return false;
	while (!gpu && (e = readdir(dp)))
		if (is_bdf(e->d_name) &&
		    snprintf(child, sizeof(child), "%s/%s", devdir, e->d_name) < (int)sizeof(child))
			gpu = is_gpu_class(child);
	closedir(dp);
	return gpu;
}

static struct aff_health_link *find_link(struct aff_health *h, const char *pci)
{
	size_t i;

	for (i = 0; i < h->nlink; i++)
		if (!strcmp(h->link[i].pci, pci))
			return &h->link[i];
	return NULL;
}

const struct aff_health_link *aff_health_find_link(const struct aff_health *h, const char *pci)
{
	return find_link((struct aff_health *)h, pci);
}

static struct aff_health_port *find_port(struct aff_health *h, const char *name, unsigned port)
{
	size_t i;

	for (i = 0; i < h->nport; i++)
		if (h->port[i].port == port && !strcmp(h->port[i].name, name))
			return &h->port[i];
	return NULL;
}

const struct aff_health_port *aff_health_find_port(const struct aff_health *h, const char *name,
						   unsigned port)
{
	return find_port((struct aff_health *)h, name, port);
}

static struct aff_health_link *add_link(struct aff_health *h, const char *pci)
{
	struct aff_health_link *l = realloc(h->link, (h->nlink + 1) * sizeof(*l));

	if (!l)
		return NULL;
	h->link = l;
	l = &h->link[h->nlink++];
	memset(l, 0, sizeof(*l));
	snprintf(l->pci, sizeof(l->pci), "%.15s", pci);
	return l;
}

static struct aff_health_port *add_port(struct aff_health *h, const char *name, unsigned port)
{
	struct aff_health_port *p = realloc(h->port, (h->nport + 1) * sizeof(*p));

	if (!p)
		return NULL;
	h->port = p;
	p = &h->port[h->nport++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%.63s", name);
	p->port = port;
	return p;
}

static int sample_link(struct aff_health *h, const char *devdir, const char *pci, bool *changed)
{
	char path[PATH_MAX], buf[64];
	unsigned long long aer[AFF_AER_N];
	struct aff_health_link *l;
	double speed = 0;
	int width = 0, k;
	bool has_aer;

	if (snprintf(path, sizeof(path), "%s/current_link_speed", devdir) < (int)sizeof(path) &&
	    aff_read_text(path, buf, sizeof(buf), false) == 0)
		speed = parse_speed(buf);
	if (snprintf(path, sizeof(path), "%s/current_link_width", devdir) < (int)sizeof(path) &&
	    aff_read_text(path, buf, sizeof(buf), false) == 0)
		width = parse_width(buf);
	has_aer = aff_health_read_aer(devdir, aer) == 0;
	if (!speed && !width && !has_aer)
		return 0;	/* not PCI Express, or not readable: nothing to count */
	l = find_link(h, pci);
	if (!l) {
		l = add_link(h, pci);
		if (!l)
			return -ENOMEM;
		l->gpu_link = gpu_link(devdir);
		*changed = true;
	} else if (!l->present) {
		/* Back after a removal: the link came up again, a change. */
		l->changes++;
		l->sampled = false;
		*changed = true;
	}
	l->present = true;
	l->seen = true;
	/* An unknown reading (a link down reads "Unknown" or 0) is a change too. */
	if (l->sampled && width != l->width) {
		l->changes++;
		*changed = true;
	} else if (l->sampled && speed != l->speed) {
		if (l->gpu_link)
			l->speed_idle++;
		else
			l->changes++;
		*changed = true;
	}
	l->width = width;
	l->speed = speed;
	l->sampled = true;
	if (has_aer) {
		/* The kernel's totals restart when a device is removed and added again. */
		for (k = 0; k < AFF_AER_N; k++)
			if (aer[k] < l->aer[k]) {
				for (int m = 0; m < AFF_AER_N; m++)
					l->aer_base[m] += l->aer[m];
				break;
			}
		for (k = 0; k < AFF_AER_N; k++)
			if (aer[k] != l->aer[k])
				*changed = true;
		memcpy(l->aer, aer, sizeof(aer));
		l->has_aer = true;
	}
	return 0;
}

static int sample_links(const char *root, struct aff_health *h, bool *changed)
{
	char dir[PATH_MAX], devdir[PATH_MAX];
	struct dirent *e;
	DIR *dp;
	int rc = 0;

	snprintf(dir, sizeof(dir), "%s/sys/bus/pci/devices", rootp(root));
	dp = opendir(dir);
	if (!dp)
		return 0;
	while (!rc && (e = readdir(dp)))
		if (is_bdf(e->d_name) &&
		    snprintf(devdir, sizeof(devdir), "%s/%s", dir, e->d_name) < (int)sizeof(devdir))
			rc = sample_link(h, devdir, e->d_name, changed);
	closedir(dp);
	return rc;
}

static int sample_port(struct aff_health *h, const char *dev, const char *ports, const char *num,
		       bool *changed)
{
	char path[PATH_MAX], buf[64];
	struct aff_health_port *p;
	const char *state;
	unsigned long n;
	char *end;

	n = strtoul(num, &end, 10);
	if (*end || !n || n > 255 ||
	    snprintf(path, sizeof(path), "%s/%s/state", ports, num) >= (int)sizeof(path) ||
	    aff_read_text(path, buf, sizeof(buf), false) < 0)
		return 0;
	/* "4: ACTIVE" */
	state = strstr(buf, ": ");
	state = state ? state + 2 : buf;
	p = find_port(h, dev, (unsigned)n);
	if (!p) {
		p = add_port(h, dev, (unsigned)n);
		if (!p)
			return -ENOMEM;
		*changed = true;
	} else {
		if (!p->present) {
			/* The device came back: its port's state was nothing, now this. */
			p->changes++;
			*changed = true;
		} else if (p->state[0] && strcmp(p->state, state)) {
			p->changes++;
			if (!strcmp(p->state, "ACTIVE"))
				p->downs++;
			*changed = true;
		}
	}
	p->present = true;
	p->seen = true;
	snprintf(p->state, sizeof(p->state), "%.23s", state);
	return 0;
}

static int sample_ports(const char *root, struct aff_health *h, bool *changed)
{
	char dir[PATH_MAX], ports[PATH_MAX];
	struct dirent *e, *pe;
	DIR *dp, *pp;
	int rc = 0;

	snprintf(dir, sizeof(dir), "%s/sys/class/infiniband", rootp(root));
	dp = opendir(dir);
	if (!dp)
		return 0;
	while (!rc && (e = readdir(dp))) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof(h->port->name) ||
		    snprintf(ports, sizeof(ports), "%s/%s/ports", dir, e->d_name) >= (int)sizeof(ports))
			continue;
		pp = opendir(ports);
		if (!pp)
			continue;
		while (!rc && (pe = readdir(pp)))
			if (pe->d_name[0] != '.')
				rc = sample_port(h, e->d_name, ports, pe->d_name, changed);
		closedir(pp);
	}
	closedir(dp);
	return rc;
}

AFF_EXPORT int aff_health_sample(const char *root, struct aff_health *h, bool *changed)
{
	size_t i;
	int rc;

	*changed = false;
	if (!h->boot_id[0])
		aff_health_boot_id(root, h->boot_id, sizeof(h->boot_id));
	if (!h->since)
		h->since = (long long)time(NULL);
	if (!h->source[0])
		snprintf(h->source, sizeof(h->source), "broker");
	/* Seen again this time or not: `sampled` still says who was there before. */
	for (i = 0; i < h->nlink; i++)
		h->link[i].seen = false;
	for (i = 0; i < h->nport; i++)
		h->port[i].seen = false;
	rc = sample_links(root, h, changed);
	if (!rc)
		rc = sample_ports(root, h, changed);
	/*
	 * A device gone since the last sample (removed, or its link down so far
	 * that its function went away): a change; its counts are kept for its return.
	 */
	for (i = 0; i < h->nlink && !rc; i++)
		if (!h->link[i].seen && h->link[i].present) {
			h->link[i].present = false;
			h->link[i].changes++;
			*changed = true;
		}
	for (i = 0; i < h->nport && !rc; i++)
		if (!h->port[i].seen && h->port[i].present) {
			h->port[i].present = false;
			h->port[i].changes++;
			if (!strcmp(h->port[i].state, "ACTIVE"))
				h->port[i].downs++;
			*changed = true;
		}
	h->updated = (long long)time(NULL);
	return rc;
}

/* ---- railbind.counters/1 ---- */

static struct json_object *u64(unsigned long long v)
{
	return json_object_new_int64(v > INT64_MAX ? INT64_MAX : (int64_t)v);
}

static struct json_object *aer_json(const unsigned long long v[AFF_AER_N])
{
	struct json_object *a = json_object_new_array();
	int k;

	for (k = 0; k < AFF_AER_N; k++)
		json_object_array_add(a, u64(v[k]));
	return a;
}

AFF_EXPORT int aff_health_save(const struct aff_health *h, const char *path, char *err,
			       size_t errlen)
{
	struct json_object *doc = json_object_new_object(), *links = json_object_new_array();
	struct json_object *ports = json_object_new_array();
	const char *s;
	size_t i;
	int rc;

	if (!doc || !links || !ports) {
		json_object_put(doc);
		json_object_put(links);
		json_object_put(ports);
		return aff_seterr(err, errlen, ENOMEM, "counters: %s", strerror(ENOMEM));
	}
	for (i = 0; i < h->nlink; i++) {
		const struct aff_health_link *l = &h->link[i];
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "pci", json_object_new_string(l->pci));
		json_object_object_add(o, "speed", json_object_new_double(l->speed));
		json_object_object_add(o, "width", json_object_new_int(l->width));
		json_object_object_add(o, "gpu_link", json_object_new_boolean(l->gpu_link));
		json_object_object_add(o, "present", json_object_new_boolean(l->present));
		json_object_object_add(o, "changes", u64(l->changes));
		json_object_object_add(o, "speed_idle", u64(l->speed_idle));
		if (l->has_aer) {
			json_object_object_add(o, "aer", aer_json(l->aer));
			json_object_object_add(o, "aer_base", aer_json(l->aer_base));
		}
		json_object_array_add(links, o);
	}
	for (i = 0; i < h->nport; i++) {
		const struct aff_health_port *p = &h->port[i];
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "name", json_object_new_string(p->name));
		json_object_object_add(o, "port", json_object_new_int((int)p->port));
		json_object_object_add(o, "state", json_object_new_string(p->state));
		json_object_object_add(o, "present", json_object_new_boolean(p->present));
		json_object_object_add(o, "changes", u64(p->changes));
		json_object_object_add(o, "downs", u64(p->downs));
		json_object_array_add(ports, o);
	}
	json_object_object_add(doc, "schema", json_object_new_string("railbind.counters/1"));
	json_object_object_add(doc, "source", json_object_new_string(h->source));
	json_object_object_add(doc, "boot_id", json_object_new_string(h->boot_id));
	json_object_object_add(doc, "since", json_object_new_int64(h->since));
	json_object_object_add(doc, "updated", json_object_new_int64(h->updated));
	json_object_object_add(doc, "links", links);
	json_object_object_add(doc, "ports", ports);
	s = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN);
	rc = aff_write_atomic("counters", path, s, strlen(s), err, errlen);
	json_object_put(doc);
	return rc;
}

static long long jint(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
		return 0;
	return json_object_get_int64(v);
}

static unsigned long long jcount(struct json_object *o, const char *key)
{
	long long v = jint(o, key);

	return v > 0 ? (unsigned long long)v : 0;
}

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static bool jbool(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

static void jaer(struct json_object *o, const char *key, unsigned long long out[AFF_AER_N],
		 bool *has)
{
	struct json_object *a, *v;
	int k;

	if (!json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array) ||
	    json_object_array_length(a) != AFF_AER_N)
		return;
	for (k = 0; k < AFF_AER_N; k++) {
		v = json_object_array_get_idx(a, (size_t)k);
		out[k] = json_object_is_type(v, json_type_int) && json_object_get_int64(v) > 0 ?
			 (unsigned long long)json_object_get_int64(v) : 0;
	}
	if (has)
		*has = true;
}

static int load_doc(struct json_object *doc, struct aff_health *h)
{
	struct json_object *links, *ports, *v;
	const char *s;
	size_t i;

	if (!json_object_object_get_ex(doc, "schema", &v) ||
	    strcmp(json_object_get_string(v), "railbind.counters/1") ||
	    !json_object_object_get_ex(doc, "links", &links) ||
	    !json_object_is_type(links, json_type_array) ||
	    !json_object_object_get_ex(doc, "ports", &ports) ||
	    !json_object_is_type(ports, json_type_array))
		return -EINVAL;
	snprintf(h->boot_id, sizeof(h->boot_id), "%.39s", jstr(doc, "boot_id") ? jstr(doc, "boot_id") : "");
	snprintf(h->source, sizeof(h->source), "%.15s", jstr(doc, "source") ? jstr(doc, "source") : "");
	h->since = jint(doc, "since");
	h->updated = jint(doc, "updated");
	for (i = 0; i < json_object_array_length(links); i++) {
		struct json_object *o = json_object_array_get_idx(links, i), *sp;
		struct aff_health_link *l;

		s = jstr(o, "pci");
		if (!s || !is_bdf(s) || find_link(h, s))
			continue;
		l = add_link(h, s);
		if (!l)
			return -ENOMEM;
		if (json_object_object_get_ex(o, "speed", &sp))
			l->speed = json_object_get_double(sp);
		l->width = (int)jint(o, "width");
		l->gpu_link = jbool(o, "gpu_link");
		l->present = jbool(o, "present");
		l->sampled = l->present;
		l->changes = jcount(o, "changes");
		l->speed_idle = jcount(o, "speed_idle");
		jaer(o, "aer", l->aer, &l->has_aer);
		jaer(o, "aer_base", l->aer_base, NULL);
	}
	for (i = 0; i < json_object_array_length(ports); i++) {
		struct json_object *o = json_object_array_get_idx(ports, i);
		struct aff_health_port *p;
		long long n = jint(o, "port");

		s = jstr(o, "name");
		/* An RDMA device's name is shorter than IB_DEVICE_NAME_MAX (64): a
		 * longer one, cut to fit, could pose as another port. */
		if (!s || !*s || strlen(s) >= sizeof(h->port->name) || n <= 0 || n > 255 ||
		    find_port(h, s, (unsigned)n))
			continue;
		p = add_port(h, s, (unsigned)n);
		if (!p)
			return -ENOMEM;
		snprintf(p->state, sizeof(p->state), "%.23s", jstr(o, "state") ? jstr(o, "state") : "");
		p->present = jbool(o, "present");
		p->changes = jcount(o, "changes");
		p->downs = jcount(o, "downs");
	}
	return 0;
}

int aff_health_parse(const char *text, struct aff_health *h)
{
	struct json_object *doc = json_tokener_parse(text);
	int rc;

	memset(h, 0, sizeof(*h));
	rc = doc && json_object_is_type(doc, json_type_object) ? load_doc(doc, h) : -EINVAL;
	json_object_put(doc);
	if (rc)
		aff_health_clear(h);
	return rc;
}

AFF_EXPORT int aff_health_load(const char *path, const char *root, struct aff_health *h)
{
	char boot[40], *buf, err[256];
	size_t got = 0;
	int rc;

	memset(h, 0, sizeof(*h));
	rc = aff_read_state_file(path, MAX_COUNTERS_FILE, &buf, &got, err, sizeof(err));
	if (rc < 0)
		return rc == -ENOENT || rc == -ENOMEM ? rc : -EINVAL;
	rc = aff_health_parse(buf, h);
	free(buf);
	if (!rc) {
		aff_health_boot_id(root, boot, sizeof(boot));
		if (*boot && strcmp(boot, h->boot_id))
			rc = -ESTALE;
	}
	if (rc)
		aff_health_clear(h);
	return rc;
}

AFF_EXPORT int aff_health_new(struct aff_health **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

AFF_EXPORT void aff_health_free(struct aff_health *h)
{
	if (!h)
		return;
	aff_health_clear(h);
	free(h);
}

void aff_health_clear(struct aff_health *h)
{
	free(h->link);
	free(h->port);
	memset(h, 0, sizeof(*h));
}
