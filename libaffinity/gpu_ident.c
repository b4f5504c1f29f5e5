// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The GPU identity infos (gpu_ident.h) into the model, and what the model
 * then says about a pair of GPUs. A value that does not parse is refused as
 * bad input, naming the attribute and the device, as source_hwloc.c does for
 * every other Railbind* attribute.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_ident.h"
#include "model.h"

static int bad(struct aff_topo *t, const char *name, const char *value, const char *pci,
	       const char *want)
{
	snprintf(t->bad_info, sizeof(t->bad_info), "%s=\"%.32s\" on %s, expected %s", name,
		 value, pci, want);
	return -EINVAL;
}

/* A decimal number in [lo, hi] and nothing else. */
static int number(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)*s) && *s != '-')
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A token without blanks or control characters, at most max bytes. */
static bool word_ok(const char *s, size_t max)
{
	size_t n = 0;

	for (; *s; s++, n++)
		if (!isgraph((unsigned char)*s) || n >= max)
			return false;
	return n > 0;
}

/* "dddd:bb:dd.f" (or "-": unknown) into buf, canonical lower case. */
static int pci_word(const char *s, char *buf)
{
	struct aff_dev probe;

	if (!strcmp(s, "-")) {
		buf[0] = '\0';
		return 0;
	}
	if (aff_dev_set_pci(&probe, s) < 0)
		return -EINVAL;
	memcpy(buf, probe.pci, sizeof(probe.pci));
	return 0;
}

/* Split "a b c" into at most max words (in place in @copy). */
static size_t words(char *copy, char **w, size_t max)
{
	size_t n = 0;
	char *save = NULL, *p;

	for (p = strtok_r(copy, " \t", &save); p; p = strtok_r(NULL, " \t", &save)) {
		if (n == max)
			return max + 1;
		w[n++] = p;
	}
	return n;
}

static const char *const link_types[] = {
	[AFF_GLINK_GPU] = "gpu",
	[AFF_GLINK_SWITCH] = "switch",
	[AFF_GLINK_NPU] = "npu",
	[AFF_GLINK_UNKNOWN] = "unknown",
};

static int add_link(struct aff_gident *g, struct aff_glink *l)
{
	struct aff_glink *p = realloc(g->link, (g->nlink + 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	g->link = p;
	g->link[g->nlink++] = *l;
	return 0;
}

/* RailbindNVLink="REMOTE TYPE LINKS" */
static int parse_nvlink(struct aff_topo *t, struct aff_gident *g, const char *v,
			const char *pci)
{
	struct aff_glink l = { .hops = -1, .weight = -1 };
	char copy[96], *w[4];
	size_t k;
	long n;

	snprintf(copy, sizeof(copy), "%s", v);
	if (strlen(v) >= sizeof(copy) || words(copy, w, 3) != 3 || pci_word(w[0], l.remote) ||
	    number(w[2], 1, 1024, &n))
		return bad(t, AFF_INFO_NVLINK, v, pci,
			   "\"REMOTE TYPE LINKS\" (a PCI address or -, gpu/switch/npu/unknown, a count)");
	for (k = 0; k < sizeof(link_types) / sizeof(link_types[0]); k++)
		if (!strcmp(w[1], link_types[k]))
			break;
	if (k == sizeof(link_types) / sizeof(link_types[0]))
		return bad(t, AFF_INFO_NVLINK, v, pci,
			   "\"REMOTE TYPE LINKS\" with TYPE gpu, switch, npu or unknown");
	l.type = (enum aff_glink_type)k;
	l.links = (int)n;
	return add_link(g, &l);
}

/* RailbindXGMI="REMOTE HOPS WEIGHT" */
static int parse_xgmi(struct aff_topo *t, struct aff_gident *g, const char *v, const char *pci)
{
	struct aff_glink l = { .type = AFF_GLINK_XGMI };
	char copy[96], *w[4];
	long hops, weight;

	snprintf(copy, sizeof(copy), "%s", v);
	if (strlen(v) >= sizeof(copy) || words(copy, w, 3) != 3 || pci_word(w[0], l.remote) ||
	    !l.remote[0] || number(w[1], 1, 64, &hops) || number(w[2], 0, 1000000, &weight))
		return bad(t, AFF_INFO_XGMI, v, pci, "\"REMOTE HOPS WEIGHT\" (a PCI address, two numbers)");
	l.hops = (int)hops;
	l.weight = (int)weight;
	return add_link(g, &l);
}

/* RailbindMIGDevice="MIG-UUID GI CI" */
static int parse_mig(struct aff_topo *t, struct aff_gident *g, const char *v, const char *pci)
{
	struct aff_gmig *p;
	char copy[160], *w[4];
	long gi, ci;

	snprintf(copy, sizeof(copy), "%s", v);
	if (strlen(v) >= sizeof(copy) || words(copy, w, 3) != 3 || strncmp(w[0], "MIG-", 4) ||
	    !word_ok(w[0], 96) || number(w[1], -1, 1024, &gi) || number(w[2], -1, 1024, &ci))
		return bad(t, AFF_INFO_MIG_DEVICE, v, pci, "\"MIG-UUID GI CI\" (GI, CI: numbers or -1)");
	p = realloc(g->migdev, (g->nmig + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	g->migdev = p;
	p[g->nmig].uuid = strdup(w[0]);
	p[g->nmig].gi = (int)gi;
	p[g->nmig].ci = (int)ci;
	return p[g->nmig++].uuid ? 0 : -ENOMEM;
}

/* RailbindGPUPath="OTHER CLASS" */
static int parse_path(struct aff_topo *t, struct aff_gident *g, const char *v, const char *pci)
{
	struct aff_gpath *p, gp = { .path = AFF_PATH_NONE };
	char copy[64], *w[3];

	snprintf(copy, sizeof(copy), "%s", v);
	if (strlen(v) >= sizeof(copy) || words(copy, w, 2) != 2 || pci_word(w[0], gp.remote) ||
	    !gp.remote[0] || (strcmp(w[1], "INTERNAL") &&
			      (aff_path_from_name(w[1], &gp.path) < 0 || gp.path == AFF_PATH_NV)))
		return bad(t, AFF_INFO_GPU_PATH, v, pci,
			   "\"OTHER CLASS\" (a PCI address, INTERNAL PIX PXB PHB NODE or SYS)");
	p = realloc(g->path, (g->npath + 1) * sizeof(*p));
	if (!p)
		return -ENOMEM;
	g->path = p;
	g->path[g->npath++] = gp;
	return 0;
}

static int one_of(struct aff_topo *t, const char *name, const char *v, const char *pci,
		  const char *const *choices, int *out)
{
	int i;

	for (i = 0; choices[i]; i++)
		if (!strcmp(v, choices[i])) {
			*out = i;
			return 0;
		}
	return bad(t, name, v, pci, !strcmp(name, AFF_INFO_MIG) ? "enabled, disabled or unsupported" :
			 "enabled or disabled");
}

static int dup_word(struct aff_topo *t, char **dst, const char *name, const char *v,
		    const char *pci, size_t max, const char *want)
{
	if (!word_ok(v, max))
		return bad(t, name, v, pci, want);
	*dst = strdup(v);
	return *dst ? 0 : -ENOMEM;
}

static bool is_gpu_vendor(const struct aff_dev *d)
{
	return d->vendor == 0x10de || d->vendor == 0x1002 ||
	       (d->class_id >= 0 && (d->class_id >> 8) == 0x12);
}

/*
 * hwloc's own GPU backends name a GPU's UUID on its OS device: NVIDIAUUID as
 * CUDA spells it (GPU-...), AMDUUID as the bare hex ROCR_VISIBLE_DEVICES takes
 * after "GPU-". Into buf, in the spelling the visible-device lists use.
 */
static const char *osdev_uuid(hwloc_obj_t o, char *buf, size_t len)
{
	hwloc_obj_t os;
	const char *v;

	for (os = o->io_first_child; os; os = os->next_sibling) {
		if (os->type != HWLOC_OBJ_OS_DEVICE)
			continue;
		v = hwloc_obj_get_info_by_name(os, "NVIDIAUUID");
		if (v && word_ok(v, 80) && !strncmp(v, "GPU-", 4)) {
			snprintf(buf, len, "%s", v);
			return buf;
		}
		v = hwloc_obj_get_info_by_name(os, "AMDUUID");
		if (v && word_ok(v, 64)) {
			snprintf(buf, len, "%s%s", strncmp(v, "GPU-", 4) ? "GPU-" : "", v);
			return buf;
		}
	}
	return NULL;
}

static int load_info(struct aff_topo *t, struct aff_gident *g, const char *name,
		     const char *v, const char *pci)
{
	static const char *const onoff[] = { "disabled", "enabled", NULL };
	static const char *const mig[] = { "disabled", "enabled", "unsupported", NULL };
	long n;

	if (!strcmp(name, AFF_INFO_GPU_UUID)) {
		free(g->uuid);
		g->uuid = NULL;
		return dup_word(t, &g->uuid, name, v, pci, 80, "a UUID such as GPU-5c3a...");
	}
	if (!strcmp(name, AFF_INFO_GPU_MINOR)) {
		if (number(v, 0, 1 << 20, &n))
			return bad(t, name, v, pci, "a device minor number");
		g->minor = (int)n;
	} else if (!strcmp(name, AFF_INFO_NVLINKS)) {
		if (number(v, 0, 1024, &n))
			return bad(t, name, v, pci, "a number of links");
		g->nvlinks = (int)n;
	} else if (!strcmp(name, AFF_INFO_NVLINK)) {
		return parse_nvlink(t, g, v, pci);
	} else if (!strcmp(name, AFF_INFO_XGMI)) {
		return parse_xgmi(t, g, v, pci);
	} else if (!strcmp(name, AFF_INFO_C2C)) {
		return one_of(t, name, v, pci, onoff, &g->c2c);
	} else if (!strcmp(name, AFF_INFO_MIG)) {
		return one_of(t, name, v, pci, mig, &g->mig);
	} else if (!strcmp(name, AFF_INFO_MIG_DEVICE)) {
		return parse_mig(t, g, v, pci);
	} else if (!strcmp(name, AFF_INFO_GPU_PATH)) {
		return parse_path(t, g, v, pci);
	} else if (!strcmp(name, AFF_INFO_COMPUTE_PARTITION) && !g->compute_partition) {
		return dup_word(t, &g->compute_partition, name, v, pci, 16, "a partition mode such as SPX or CPX");
	} else if (!strcmp(name, AFF_INFO_MEMORY_PARTITION) && !g->memory_partition) {
		return dup_word(t, &g->memory_partition, name, v, pci, 16, "a partition mode such as NPS1");
	} else if (!strcmp(name, AFF_INFO_GPU_UNREADABLE) && !g->unreadable) {
		return dup_word(t, &g->unreadable, name, v, pci, 96, "words such as nvlink,mig");
	}
	return 0;
}

int aff_gident_load(struct aff_topo *t, int dev, hwloc_obj_t o)
{
	struct aff_dev *d = &t->dev[dev];
	struct aff_gident *g;
	const char *uuid;
	char ubuf[96];
	unsigned i;
	int rc = 0;
	bool any = false;

	if (d->type != AFF_DEV_ENDPOINT || !is_gpu_vendor(d))
		return 0;
	for (i = 0; i < o->infos_count && !any; i++)
		any = !strncmp(o->infos[i].name, "RailbindGPU", 11) ||
		      !strncmp(o->infos[i].name, "RailbindNVLink", 14) ||
		      !strncmp(o->infos[i].name, "RailbindMIG", 11) ||
		      !strcmp(o->infos[i].name, AFF_INFO_C2C) ||
		      !strcmp(o->infos[i].name, AFF_INFO_XGMI) ||
		      !strcmp(o->infos[i].name, AFF_INFO_COMPUTE_PARTITION) ||
		      !strcmp(o->infos[i].name, AFF_INFO_MEMORY_PARTITION);
	uuid = osdev_uuid(o, ubuf, sizeof(ubuf));
	if (!any && !uuid)
		return 0;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->minor = g->nvlinks = g->c2c = g->mig = -1;
	d->gident = g;
	if (uuid && !(g->uuid = strdup(uuid)))
		return -ENOMEM;
	for (i = 0; i < o->infos_count && !rc; i++)
		if (o->infos[i].name && o->infos[i].value)
			rc = load_info(t, g, o->infos[i].name, o->infos[i].value, d->pci);
	return rc;
}

int aff_gident_load_machine(struct aff_topo *t, hwloc_obj_t root)
{
	const char *nvml = hwloc_obj_get_info_by_name(root, AFF_INFO_NVML);
	const char *rsmi = hwloc_obj_get_info_by_name(root, AFF_INFO_ROCM_SMI);

	if (nvml && !(t->nvml = strdup(nvml)))
		return -ENOMEM;
	if (rsmi && !(t->rocm_smi = strdup(rsmi)))
		return -ENOMEM;
	return 0;
}

void aff_gident_free(struct aff_gident *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->nmig; i++)
		free(g->migdev[i].uuid);
	free(g->migdev);
	free(g->link);
	free(g->path);
	free(g->uuid);
	free(g->compute_partition);
	free(g->memory_partition);
	free(g->unreadable);
	free(g);
}

const struct aff_gident *aff_gpu_ident(const struct aff_topo *t, size_t g)
{
	return g < t->ngpu ? t->dev[t->gpus[g]].gident : NULL;
}

/* Links of GPU a's entries of @type reaching @remote ("" any). */
static int links_to(const struct aff_gident *g, enum aff_glink_type type, const char *remote)
{
	size_t i;
	int n = 0;

	for (i = 0; g && i < g->nlink; i++)
		if (g->link[i].type == type && (!remote || !strcmp(g->link[i].remote, remote)))
			n += g->link[i].links;
	return n;
}

/*
 * Direct NVLinks a -> b: links whose far end is b. An older NVML cannot say
 * what is at the far end; a PCI address that is b's makes it b all the same.
 */
static int direct_links(const struct aff_gident *g, const char *remote)
{
	return links_to(g, AFF_GLINK_GPU, remote) + links_to(g, AFF_GLINK_UNKNOWN, remote);
}

int aff_gpu_direct_nvlinks(const struct aff_topo *t, size_t a, size_t b)
{
	const struct aff_gident *ga = aff_gpu_ident(t, a), *gb = aff_gpu_ident(t, b);
	int ab, ba;

	if (a == b || a >= t->ngpu || b >= t->ngpu)
		return 0;
	ab = ga ? direct_links(ga, t->dev[t->gpus[b]].pci) : 0;
	ba = gb ? direct_links(gb, t->dev[t->gpus[a]].pci) : 0;
	/* Both ends say it; where one was unreadable, the other's word stands. */
	return ab > ba ? ab : ba;
}

int aff_gpu_nvlinks_between(const struct aff_topo *t, size_t a, size_t b)
{
	const struct aff_gident *ga = aff_gpu_ident(t, a), *gb = aff_gpu_ident(t, b);
	int sa, sb, n;

	if (a == b)
		return 0;
	n = aff_gpu_direct_nvlinks(t, a, b);
	if (!ga || !gb)
		return n;
	/*
	 * Through NVSwitches every GPU of the fabric reaches every other with
	 * all of its switch links (nvidia-smi: NV12 on every DGX A100 pair,
	 * NV18 on HGX H100/H200): the fewer of the two ends' links.
	 */
	sa = links_to(ga, AFF_GLINK_SWITCH, NULL);
	sb = links_to(gb, AFF_GLINK_SWITCH, NULL);
	if (sa > 0 && sb > 0)
		n += sa < sb ? sa : sb;
	return n;
}

static const struct aff_glink *xgmi_to(const struct aff_gident *g, const char *remote)
{
	size_t i;

	for (i = 0; g && i < g->nlink; i++)
		if (g->link[i].type == AFF_GLINK_XGMI && !strcmp(g->link[i].remote, remote))
			return &g->link[i];
	return NULL;
}

void aff_gpu_pair_cell(const struct aff_topo *t, size_t a, size_t b, char *buf, size_t len)
{
	const struct aff_glink *x;
	int nv;

	if (a == b) {
		snprintf(buf, len, "X");
		return;
	}
	nv = aff_gpu_nvlinks_between(t, a, b);
	if (nv > 0) {
		snprintf(buf, len, "NV%d", nv);
		return;
	}
	x = xgmi_to(aff_gpu_ident(t, a), t->dev[t->gpus[b]].pci);
	if (!x)
		x = xgmi_to(aff_gpu_ident(t, b), t->dev[t->gpus[a]].pci);
	if (x) {
		snprintf(buf, len, "XGMI%d", x->hops);
		return;
	}
	snprintf(buf, len, "%s", aff_path_name(aff_path_between(t, t->gpus[a], t->gpus[b], NULL)));
}

AFF_EXPORT int aff_topo_gpu_minor(const struct aff_topo *t, size_t i)
{
	const struct aff_gident *g = aff_gpu_ident(t, i);

	return g && g->minor >= 0 ? g->minor : -1;
}
