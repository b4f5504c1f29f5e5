// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rbgen: reads a .topo machine description (see README.md) into the model.
 * Every problem is reported as FILE:LINE with what was expected there.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rbgen.h"

#define MAX_TOKENS 64
#define MAX_DEPTH 64

struct ctx {
	struct rb_machine *m;
	int line;
};

static int parse_int(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Hex register values as lspci prints them: up to `digits` digits, 0x optional. */
static int parse_hex(const char *s, int digits, unsigned int *out)
{
	unsigned int v = 0;
	int n = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; *s; s++, n++) {
		if (!isxdigit((unsigned char)*s) || n >= digits)
			return -1;
		v = v * 16 + (unsigned int)(isdigit((unsigned char)*s) ? *s - '0' :
					     tolower((unsigned char)*s) - 'a' + 10);
	}
	if (!n)
		return -1;
	*out = v;
	return 0;
}

static int parse_link(const char *s, double *speed, int *width)
{
	char *end;
	long w;

	errno = 0;
	*speed = strtod(s, &end);
	if (errno || end == s || *end != '/' || !(*speed > 0 && *speed <= 256))
		return -1;
	if (parse_int(end + 1, 1, 32, &w))
		return -1;
	if (w != 1 && w != 2 && w != 4 && w != 8 && w != 12 && w != 16 && w != 32)
		return -1;
	*width = (int)w;
	return 0;
}

/* dddd:bb:dd.f or bb:dd.f */
static int parse_busid(const char *s, struct rb_node *n)
{
	unsigned int dom = 0, bus, dev, fn;
	char c;

	if (sscanf(s, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &c) == 4 &&
	    strlen(s) >= 12) {
		n->has_domain = true;
	} else if (sscanf(s, "%x:%x.%x%c", &bus, &dev, &fn, &c) == 3 &&
		   strlen(s) <= 7) {
		dom = 0;
	} else {
		return -1;
	}
	if (dom > 0xffff || bus > 0xff || dev > 0x1f || fn > 7)
		return -1;
	n->domain = dom;
	n->bus = (int)bus;
	n->dev = (int)dev;
	n->fn = (int)fn;
	return 0;
}

/* "12@switch" or "4@0f:00.0,4@47:00.0": links per far end, 18 in all at most. */
static int nvlink_spec(const char *v)
{
	struct rb_node probe;
	char buf[256], *item, *save = NULL;
	long links, total = 0;

	if (strlen(v) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", v);
	for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *at = strchr(item, '@');

		if (!at)
			return -1;
		*at = '\0';
		if (parse_int(item, 1, 18, &links))
			return -1;
		if (strcmp(at + 1, "switch") && parse_busid(at + 1, &probe))
			return -1;
		total += links;
	}
	return total >= 1 && total <= 18 ? 0 : -1;
}

static const char *const port_types[] = { "root", "upstream", "downstream", "bridge", NULL };

static const char *port_type_lookup(const char *v)
{
	for (int i = 0; port_types[i]; i++)
		if (!strcmp(v, port_types[i]))
			return port_types[i];
	return NULL;
}

/* "a,b,c" of at most RB_MAX_PORTS items, each through one(); the count, or -1. */
static int parse_each(char *val, int *out, int (*one)(const char *, int *))
{
	int n = 0;

	for (char *item = strtok(val, ","); item; item = strtok(NULL, ",")) {
		if (n == RB_MAX_PORTS || one(item, &out[n]))
			return -1;
		n++;
	}
	return n;
}

static int one_state(const char *s, int *out)
{
	static const char *const st[] = { "", "DOWN", "INIT", "ARMED", "ACTIVE" };

	for (int i = 1; i < 5; i++)
		if (!strcasecmp(s, st[i])) {
			*out = i;
			return 0;
		}
	return -1;
}

static int one_rate(const char *s, int *out)
{
	long v;

	if (parse_int(s, 1, 100000, &v))
		return -1;
	*out = (int)v;
	return 0;
}

/* A list of one value applies to every port. */
static void fill_list(int *v, int n)
{
	for (int i = n; i < RB_MAX_PORTS; i++)
		v[i] = v[0];
}

static const char *const iommu_types[] = { "identity", "DMA", "DMA-FQ", "blocked",
					    "unmanaged", NULL };

static const char *iommu_lookup(const char *v)
{
	for (int i = 0; iommu_types[i]; i++)
		if (!strcmp(v, iommu_types[i]))
			return iommu_types[i];
	return NULL;
}

static const char *kind_name(enum rb_kind k)
{
	static const char *const names[] = { "hostbridge", "bridge", "switch", "gpu", "nic",
					     "dev" };

	return names[k];
}

/* Which options each line kind takes; a space-separated list, checked per key. */
static const char *allowed_keys(enum rb_kind k)
{
	switch (k) {
	case RB_HOSTBRIDGE:
		return "numa domain bus iommu";
	case RB_BRIDGE:
		return "type acs link linkcap vendor device subvendor subdevice rev numa-raw iommu mps mrrs ro";
	case RB_SWITCH:
		return "acs link linkcap vendor device subvendor subdevice rev numa-raw iommu mps mrrs ro";
	case RB_GPU:
		return "vendor device subvendor subdevice class rev link linkcap numa-raw iommu uuid minor nvlink mig mig-devices c2c mps mrrs ro ats bar1";
	case RB_NIC:
		return "name netdev port ports state rate eth vendor device subvendor subdevice class rev link linkcap numa-raw iommu mps mrrs ro ats vpd";
	case RB_DEV:
		return "class vendor device subvendor subdevice rev link linkcap numa-raw iommu mps mrrs ro ats vpd";
	}
	return "";
}

static bool key_allowed(enum rb_kind k, const char *key)
{
	const char *list = allowed_keys(k);
	size_t len = strlen(key);

	for (const char *p = list; (p = strstr(p, key)); p += len)
		if ((p == list || p[-1] == ' ') && (p[len] == ' ' || !p[len]))
			return true;
	return false;
}

static int set_opt(struct ctx *c, struct rb_node *n, const char *key, const char *val)
{
	struct rb_machine *m = c->m;
	unsigned int h;
	long v;

	if (!key_allowed(n->kind, key)) {
		rb_err(m, c->line, "unknown option '%s' for %s (expected one of: %s)", key,
		       kind_name(n->kind), allowed_keys(n->kind));
		return -1;
	}
	if (!strcmp(key, "eth")) {
		if (val) {
			rb_err(m, c->line, "'eth' takes no value");
			return -1;
		}
		n->eth = true;
		return 0;
	}
	if (!val || !*val) {
		rb_err(m, c->line, "option '%s' needs a value (%s=...)", key, key);
		return -1;
	}
	if (!strcmp(key, "numa")) {
		if (parse_int(val, -1, 4095, &v))
			goto bad;
		n->numa = (int)v;
	} else if (!strcmp(key, "domain")) {
		if (parse_hex(val, 4, &h))
			goto bad;
		n->domain = h;
		n->has_domain = true;
	} else if (!strcmp(key, "bus")) {
		if (parse_hex(val, 2, &h))
			goto bad;
		n->fixed_bus = (int)h;
	} else if (!strcmp(key, "iommu")) {
		n->iommu = iommu_lookup(val);
		if (!n->iommu)
			goto bad;
	} else if (!strcmp(key, "acs")) {
		if (parse_hex(val, 4, &h))
			goto bad;
		n->acs = (int)h;
	} else if (!strcmp(key, "link")) {
		if (parse_link(val, &n->speed, &n->width))
			goto bad;
	} else if (!strcmp(key, "linkcap")) {
		if (parse_link(val, &n->capspeed, &n->capwidth))
			goto bad;
	} else if (!strcmp(key, "vendor")) {
		if (parse_hex(val, 4, &n->vendor))
			goto bad;
	} else if (!strcmp(key, "device")) {
		if (parse_hex(val, 4, &n->device))
			goto bad;
	} else if (!strcmp(key, "subvendor")) {
		if (parse_hex(val, 4, &n->subvendor))
			goto bad;
	} else if (!strcmp(key, "subdevice")) {
		if (parse_hex(val, 4, &n->subdevice))
			goto bad;
	} else if (!strcmp(key, "type")) {
		n->ptype = port_type_lookup(val);
		if (!n->ptype)
			goto bad;
	} else if (!strcmp(key, "class")) {
		if (parse_hex(val, 4, &n->class_id))
			goto bad;
	} else if (!strcmp(key, "rev")) {
		if (parse_hex(val, 2, &n->rev))
			goto bad;
	} else if (!strcmp(key, "numa-raw")) {
		if (parse_int(val, -1, 4095, &v))
			goto bad;
		n->numa_raw = (int)v;
	} else if (!strcmp(key, "mps") || !strcmp(key, "mrrs")) {
		/* Device Control's encodings: 128 << 0..5 bytes. */
		if (parse_int(val, 128, 4096, &v) || (v & (v - 1)))
			goto bad;
		*(key[1] == 'p' ? &n->mps : &n->mrrs) = (int)v;
	} else if (!strcmp(key, "ro") || !strcmp(key, "ats")) {
		if (parse_int(val, 0, 1, &v))
			goto bad;
		*(key[0] == 'r' ? &n->ro : &n->ats) = (int)v;
	} else if (!strcmp(key, "bar1")) {
		char *end;
		unsigned long long b = strtoull(val, &end, 10);

		if (end == val || b == 0)
			goto bad;
		if (*end == 'M')
			b <<= 20, end++;
		else if (*end == 'G')
			b <<= 30, end++;
		if (*end || b > (1ULL << 50))
			goto bad;
		n->bar1 = (long long)b;
	} else if (!strcmp(key, "name")) {
		free(n->name);
		n->name = rb_xstrdup(val);
	} else if (!strcmp(key, "netdev")) {
		free(n->netdev);
		n->netdev = rb_xstrdup(val);
	} else if (!strcmp(key, "port")) {
		if (parse_int(val, 1, 255 - RB_MAX_PORTS, &v))
			goto bad;
		n->port = (int)v;
	} else if (!strcmp(key, "ports")) {
		if (parse_int(val, 1, RB_MAX_PORTS, &v))
			goto bad;
		n->nports = (int)v;
	} else if (!strcmp(key, "state")) {
		char list[256];
		int k;

		snprintf(list, sizeof(list), "%s", val);
		k = parse_each(list, n->state, one_state);
		if (k < 0)
			goto bad;
		if (k == 1)
			fill_list(n->state, 1);
		n->nstate = k;
	} else if (!strcmp(key, "rate")) {
		char list[256];
		int k;

		snprintf(list, sizeof(list), "%s", val);
		k = parse_each(list, n->rate, one_rate);
		if (k < 0)
			goto bad;
		if (k == 1)
			fill_list(n->rate, 1);
		n->nrate = k;
	} else if (!strcmp(key, "vpd")) {
		if (!*val || strlen(val) > 64 || strspn(val, "0123456789abcdefABCDEF-") != strlen(val))
			if (strcmp(val, "unreadable"))
				goto bad;
		free(n->vpd);
		n->vpd = rb_xstrdup(val);
	} else if (!strcmp(key, "uuid")) {
		if (strncmp(val, "GPU-", 4) || strlen(val) > 80)
			goto bad;
		free(n->uuid);
		n->uuid = rb_xstrdup(val);
	} else if (!strcmp(key, "minor")) {
		if (parse_int(val, 0, 255, &v))
			goto bad;
		n->minor = (int)v;
	} else if (!strcmp(key, "nvlink")) {
		if (nvlink_spec(val))
			goto bad;
		free(n->nvlink);
		n->nvlink = rb_xstrdup(val);
	} else if (!strcmp(key, "mig") || !strcmp(key, "c2c")) {
		int *f = key[0] == 'm' ? &n->mig : &n->c2c;

		if (!strcmp(val, "enabled"))
			*f = 1;
		else if (!strcmp(val, "disabled"))
			*f = 0;
		else
			goto bad;
	} else if (!strcmp(key, "mig-devices")) {
		if (parse_int(val, 1, 7, &v))
			goto bad;
		n->mig_devices = (int)v;
	}
	return 0;
bad:
	rb_err(m, c->line, "bad value '%s' for %s (expected %s)", val, key,
	       !strcmp(key, "link") || !strcmp(key, "linkcap") ?
			"GT/LANES such as 16.0/16, lanes 1 2 4 8 12 16 32" :
	       !strcmp(key, "numa") || !strcmp(key, "numa-raw") ? "a NUMA node number or -1" :
	       !strcmp(key, "iommu") ? "identity, DMA, DMA-FQ, blocked or unmanaged" :
	       !strcmp(key, "state") ? "ACTIVE, DOWN, INIT or ARMED, or a comma list of them, one per port" :
	       !strcmp(key, "type") ? "root, upstream, downstream or bridge" :
	       !strcmp(key, "bus") || !strcmp(key, "rev") ? "up to 2 hex digits" :
	       !strcmp(key, "rate") ? "Gb/s, or a comma list of them, one per port" :
	       !strcmp(key, "port") || !strcmp(key, "ports") ? "a positive number (ports: at most 8)" :
	       !strcmp(key, "uuid") ? "GPU-... (at most 80 characters)" :
	       !strcmp(key, "vpd") ? "a VPD V3 UUID (hex digits and dashes, 64 at most) or unreadable" :
	       !strcmp(key, "minor") ? "a device minor 0-255" :
	       !strcmp(key, "nvlink") ?
			"LINKS@switch or LINKS@BUSID, comma separated, 18 links at most" :
	       !strcmp(key, "mig") || !strcmp(key, "c2c") ? "enabled or disabled" :
	       !strcmp(key, "mig-devices") ? "1 to 7 instances" :
	       !strcmp(key, "mps") || !strcmp(key, "mrrs") ? "128, 256, 512, 1024, 2048 or 4096 bytes" :
	       !strcmp(key, "ro") || !strcmp(key, "ats") ? "0 or 1" :
	       !strcmp(key, "bar1") ? "a size in bytes, or with M or G (256M, 128G)" :
								"up to 4 hex digits");
	return -1;
}

static int split(char *s, char **tok)
{
	int n = 0;

	for (char *p = strtok(s, " \t"); p; p = strtok(NULL, " \t")) {
		if (n == MAX_TOKENS)
			return -1;
		tok[n++] = p;
	}
	return n;
}

static int parse_machine(struct ctx *c, char **tok, int ntok)
{
	struct rb_machine *m = c->m;

	if (m->hostname) {
		rb_err(m, c->line, "a second 'machine' line (one per description)");
		return -1;
	}
	m->hostname = rb_xstrdup("rbgen");
	for (int i = 1; i < ntok; i++) {
		char *eq = strchr(tok[i], '=');
		char *val = eq ? eq + 1 : NULL;

		if (eq)
			*eq = '\0';
		if (!val || !*val) {
			rb_err(m, c->line, "expected KEY=VALUE, got '%s'", tok[i]);
			return -1;
		}
		if (!strcmp(tok[i], "hostname")) {
			free(m->hostname);
			m->hostname = rb_xstrdup(val);
		} else if (!strcmp(tok[i], "peer-memory")) {
			if (strcmp(val, "nvidia_peermem") && strcmp(val, "dmabuf") &&
			    strcmp(val, "none")) {
				rb_err(m, c->line,
				       "bad peer-memory '%s' (expected nvidia_peermem, dmabuf or none)",
				       val);
				return -1;
			}
			free(m->peer_memory);
			m->peer_memory = rb_xstrdup(val);
		} else if (!strcmp(tok[i], "kmod")) {
			free(m->kmod);
			m->kmod = rb_xstrdup(val);
		} else if (!strcmp(tok[i], "cpu")) {
			char vendor[32];
			int fam, model, n = 0;

			if (sscanf(val, "%31[A-Za-z]:%d:%d%n", vendor, &fam, &model, &n) != 3 ||
			    val[n] || fam < 0 || model < 0) {
				rb_err(m, c->line,
				       "bad cpu '%s' (expected VENDOR:FAMILY:MODEL, e.g. GenuineIntel:6:143)",
				       val);
				return -1;
			}
			free(m->cpu_vendor);
			m->cpu_vendor = rb_xstrdup(vendor);
			m->cpu_family = fam;
			m->cpu_model = model;
		} else if (!strcmp(tok[i], "kernel")) {
			if (val[0] < '0' || val[0] > '9' || !strchr(val, '.')) {
				rb_err(m, c->line, "bad kernel '%s' (expected a release, e.g. 6.12.9)",
				       val);
				return -1;
			}
			free(m->kernel);
			m->kernel = rb_xstrdup(val);
		} else if (!strcmp(tok[i], "gpu-driver")) {
			if (strcmp(val, "open") && strcmp(val, "proprietary") && strcmp(val, "absent")) {
				rb_err(m, c->line,
				       "bad gpu-driver '%s' (expected open, proprietary or absent)", val);
				return -1;
			}
			free(m->gpu_driver);
			m->gpu_driver = rb_xstrdup(val);
		} else if (!strcmp(tok[i], "port-types")) {
			if (strcmp(val, "yes") && strcmp(val, "no")) {
				rb_err(m, c->line, "bad port-types '%s' (expected yes or no)", val);
				return -1;
			}
			m->no_port_types = !strcmp(val, "no");
		} else {
			rb_err(m, c->line,
			       "unknown option '%s' for machine (expected hostname, peer-memory, kmod, kernel, gpu-driver, cpu, port-types)",
			       tok[i]);
			return -1;
		}
	}
	return 0;
}

static int parse_cpus(struct ctx *c, char **tok, int ntok)
{
	static const char *const keys[] = { "packages", "numa-per-package", "cores-per-numa",
					     "smt", "l3-per-numa", "cpuless-numa" };
	struct rb_machine *m = c->m;
	int *fields[] = { &m->packages, &m->numa_per_package, &m->cores_per_numa, &m->smt,
			  &m->l3_per_numa, &m->cpuless_numa };
	static const long maxv[] = { 64, 64, 1024, 8, 1024, 1024 };

	if (m->has_cpus) {
		rb_err(m, c->line, "a second 'cpus' line (one per description)");
		return -1;
	}
	m->has_cpus = true;
	m->l3_per_numa = 1;
	for (int i = 1; i < ntok; i++) {
		char *eq = strchr(tok[i], '=');
		size_t k;
		long v;

		if (eq)
			*eq = '\0';
		if (!strcmp(tok[i], "numbering")) {
			if (!eq || (strcmp(eq + 1, "linear") && strcmp(eq + 1, "alternate"))) {
				rb_err(m, c->line, "expected numbering=linear or numbering=alternate");
				return -1;
			}
			m->alternate = !strcmp(eq + 1, "alternate");
			continue;
		}
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (!strcmp(tok[i], keys[k]))
				break;
		if (k == sizeof(keys) / sizeof(keys[0])) {
			rb_err(m, c->line,
			       "unknown option '%s' for cpus (expected packages, numa-per-package, cores-per-numa, smt, l3-per-numa, cpuless-numa, numbering)",
			       tok[i]);
			return -1;
		}
		if (!eq || parse_int(eq + 1, k == 5 ? 0 : 1, maxv[k], &v)) {
			rb_err(m, c->line, "expected %s=N with N from %d to %ld", keys[k],
			       k == 5 ? 0 : 1, maxv[k]);
			return -1;
		}
		*fields[k] = (int)v;
	}
	for (int k = 0; k < 4; k++) {
		if (!*fields[k]) {
			rb_err(m, c->line, "cpus needs %s=N", keys[k]);
			return -1;
		}
	}
	if ((long)m->packages * m->numa_per_package * m->cores_per_numa * m->smt > 65536) {
		rb_err(m, c->line, "more than 65536 PUs");
		return -1;
	}
	if (m->l3_per_numa > m->cores_per_numa) {
		rb_err(m, c->line, "l3-per-numa=%d is more than cores-per-numa=%d",
		       m->l3_per_numa, m->cores_per_numa);
		return -1;
	}
	return 0;
}

static int kind_of(const char *word, enum rb_kind *k)
{
	for (int i = RB_HOSTBRIDGE; i <= RB_DEV; i++) {
		if (!strcmp(word, kind_name((enum rb_kind)i))) {
			*k = (enum rb_kind)i;
			return 0;
		}
	}
	return -1;
}

static bool is_endpoint(enum rb_kind k)
{
	return k == RB_GPU || k == RB_NIC || k == RB_DEV;
}

static int parse_io(struct ctx *c, enum rb_kind kind, char **tok, int ntok,
		    struct rb_node **stack, int *depth, int indent)
{
	struct rb_machine *m = c->m;
	struct rb_node *n, *parent;
	int first_opt = 1;

	while (*depth && stack[*depth - 1]->indent >= indent)
		(*depth)--;
	parent = *depth ? stack[*depth - 1] : NULL;
	if (kind == RB_HOSTBRIDGE && parent) {
		rb_err(m, c->line, "'hostbridge' must not be indented (it starts a new PCI tree)");
		return -1;
	}
	if (kind != RB_HOSTBRIDGE && !parent) {
		rb_err(m, c->line, "'%s' must be indented below a hostbridge, bridge or switch",
		       tok[0]);
		return -1;
	}
	if (parent && is_endpoint(parent->kind)) {
		rb_err(m, c->line, "'%s' is indented below the %s of line %d, which cannot have devices below it",
		       tok[0], kind_name(parent->kind), parent->line);
		return -1;
	}
	if (parent && parent->last && parent->last->indent != indent) {
		rb_err(m, c->line, "indentation (%d) does not match its sibling on line %d (%d)",
		       indent, parent->last->line, parent->last->indent);
		return -1;
	}
	if (*depth == MAX_DEPTH) {
		rb_err(m, c->line, "PCI tree deeper than %d levels", MAX_DEPTH);
		return -1;
	}

	n = rb_node_new(m, kind, c->line);
	n->indent = indent;
	if (parent)
		rb_node_append(parent, n);
	else
		rb_root_append(m, n);
	stack[(*depth)++] = n;

	if (is_endpoint(kind)) {
		if (ntok < 2 || strchr(tok[1], '=') || parse_busid(tok[1], n)) {
			rb_err(m, c->line, "'%s' needs a PCI address first: dddd:bb:dd.f or bb:dd.f",
			       tok[0]);
			return -1;
		}
		first_opt = 2;
	}
	if (kind == RB_HOSTBRIDGE)
		n->numa = INT32_MIN;
	for (int i = first_opt; i < ntok; i++) {
		char *eq = strchr(tok[i], '=');

		if (eq)
			*eq = '\0';
		if (set_opt(c, n, tok[i], eq ? eq + 1 : NULL))
			return -1;
	}

	switch (kind) {
	case RB_HOSTBRIDGE:
		if (n->numa == INT32_MIN) {
			rb_err(m, c->line, "hostbridge needs numa=N (or numa=-1 for unknown locality)");
			return -1;
		}
		break;
	case RB_GPU:
		if (!n->vendor)
			n->vendor = 0x10de;
		if (!n->device)
			n->device = n->vendor == 0x10de ? 0x2330 : 0x0001;
		if (!n->class_id)
			n->class_id = 0x0302;
		if (!n->rev)
			n->rev = 0xa1;
		break;
	case RB_NIC:
		if (!n->name && !n->eth) {
			rb_err(m, c->line, "nic needs name=RDMA_DEVICE (or eth with netdev=)");
			return -1;
		}
		if (n->eth && !n->netdev) {
			rb_err(m, c->line, "an eth nic needs netdev=NAME");
			return -1;
		}
		if (!n->vendor)
			n->vendor = 0x15b3;
		if (!n->device)
			n->device = n->vendor == 0x15b3 ? 0x1021 : 0x0001;
		if (!n->class_id)
			n->class_id = n->eth ? 0x0200 : 0x0207;
		if (!n->rate[0]) {
			n->rate[0] = 400;
			fill_list(n->rate, 1);
		}
		if ((n->nstate > 1 && n->nstate != n->nports) ||
		    (n->nrate > 1 && n->nrate != n->nports)) {
			rb_err(m, c->line, "state= and rate= list one value, or one per port (ports=%d)",
			       n->nports);
			return -1;
		}
		break;
	case RB_DEV:
		if (!n->class_id || !n->vendor || !n->device) {
			rb_err(m, c->line, "dev needs class=CCCC vendor=VVVV device=DDDD");
			return -1;
		}
		break;
	default:
		break;
	}
	return 0;
}

static int parse_line(struct ctx *c, char *buf, struct rb_node **stack, int *depth)
{
	struct rb_machine *m = c->m;
	char *tok[MAX_TOKENS];
	int indent = 0, ntok;
	enum rb_kind kind;
	char *p;

	p = strchr(buf, '#');
	if (p)
		*p = '\0';
	p = buf + strcspn(buf, "\r\n");
	*p = '\0';
	for (p = buf; *p == ' ' || *p == '\t'; p++)
		indent = *p == '\t' ? (indent / 8 + 1) * 8 : indent + 1;
	ntok = split(p, tok);
	if (ntok < 0) {
		rb_err(m, c->line, "more than %d words on one line", MAX_TOKENS);
		return -1;
	}
	if (!ntok)
		return 0;
	if (!strcmp(tok[0], "machine") || !strcmp(tok[0], "cpus")) {
		if (indent) {
			rb_err(m, c->line, "'%s' must not be indented", tok[0]);
			return -1;
		}
		*depth = 0;
		return tok[0][0] == 'm' ? parse_machine(c, tok, ntok) : parse_cpus(c, tok, ntok);
	}
	if (kind_of(tok[0], &kind)) {
		rb_err(m, c->line,
		       "unknown line '%s' (expected machine, cpus, hostbridge, bridge, switch, gpu, nic or dev)",
		       tok[0]);
		return -1;
	}
	return parse_io(c, kind, tok, ntok, stack, depth, indent);
}

int rb_parse(struct rb_machine *m, FILE *in, const char *file)
{
	struct rb_node *stack[MAX_DEPTH];
	struct ctx c = { .m = m };
	char buf[4096];
	int depth = 0;

	m->file = file;
	while (fgets(buf, sizeof(buf), in)) {
		c.line++;
		if (!strchr(buf, '\n') && !feof(in)) {
			rb_err(m, c.line, "line longer than %zu characters", sizeof(buf) - 2);
			return -1;
		}
		if (parse_line(&c, buf, stack, &depth))
			return -1;
	}
	if (ferror(in)) {
		rb_err(m, c.line, "read error");
		return -1;
	}
	if (!m->has_cpus) {
		rb_err(m, c.line ? c.line : 1,
		       "expected a 'cpus packages=P numa-per-package=N cores-per-numa=C smt=T' line");
		return -1;
	}
	if (!m->hostname)
		m->hostname = rb_xstrdup("rbgen");
	for (struct rb_node *hb = m->roots; hb; hb = hb->next) {
		if (hb->numa >= rb_nr_numa(m)) {
			rb_err(m, hb->line, "numa=%d but the machine has NUMA nodes 0-%d", hb->numa,
			       rb_nr_numa(m) - 1);
			return -1;
		}
	}
	return 0;
}
