// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * aff_topo_svg_write(), railbind topo --svg: the node as people draw it on a whiteboard. Boxes in
 * boxes: sockets, their NUMA nodes, root complexes, PCIe switches (nested as
 * they are), and at the bottom of each the GPUs and rail NICs; NVLink (or
 * XGMI) where the GPUs' libraries told of it; each rank's GPU and its NICs in
 * the rank's colour; a pair the audit fails outlined in red and joined by a
 * red line. Plain SVG text written here: boxes, lines and words need no
 * drawing library, and any browser or rsvg-convert shows it.
 *
 * Layout: a container stacks its devices in one column and puts its child
 * containers side by side below them, so a switch with a GPU and four NICs
 * (AWS p5) is one column, and 8 GPUs with 32 NICs stay as wide as 8 switches.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "audit.h"
#include "gpu_ident.h"
#include "internal.h"
#include "model.h"

#define LEAF_W 196
#define LEAF_H 20
#define GAP 8
#define PAD 8
#define HEAD 20
#define MARGIN 16

enum vkind { V_ROOT, V_SOCKET, V_NUMA, V_RC, V_SWITCH, V_GPU, V_NIC };

struct vnode {
	enum vkind kind;
	int dev;		/* model device (RC, switch, GPU), -1 */
	int rail;		/* rail index (NIC), -1 */
	int key;		/* socket number, locality index */
	int parent, first, last, next;
	double x, y, w, h;
};

struct svg {
	const struct aff_topo *t;
	struct vnode *v;
	size_t nv;
	int *gpu_rank;		/* per GPU index: its rank, -1 */
	int *rail_rank;		/* per rail: the first rank using it, -1 */
	bool *rail_primary;	/* per rail: some rank's primary */
	char (*rail_label)[24];	/* per rail: "r1,r2" (its ranks), "+r0" (a further rail) */
	char **fail;		/* per rank: the failing checks, NULL none */
	const struct aff_plan *plan;
	FILE *f;
};

static const char *const colours[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
	"#7f7f7f", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d",
};
#define NCOLOURS (sizeof(colours) / sizeof(colours[0]))
#define FAIL_RED "#d62728"
#define NVLINK_GREEN "#2e8b57"

static int vnew(struct svg *s, enum vkind kind, int parent, int dev, int rail, int key)
{
	struct vnode *p = realloc(s->v, (s->nv + 1) * sizeof(*p));
	int i = (int)s->nv;

	if (!p)
		return -ENOMEM;
	s->v = p;
	p[i] = (struct vnode){ .kind = kind, .dev = dev, .rail = rail, .key = key,
			       .parent = parent, .first = -1, .last = -1, .next = -1 };
	s->nv++;
	if (parent >= 0) {
		if (p[parent].last >= 0)
			p[p[parent].last].next = i;
		else
			p[parent].first = i;
		p[parent].last = i;
	}
	return i;
}

/* The child of @parent of this kind and key (dev for RC/switch), made when absent. */
static int child(struct svg *s, int parent, enum vkind kind, int dev, int key)
{
	int c;

	for (c = s->v[parent].first; c >= 0; c = s->v[c].next)
		if (s->v[c].kind == kind && s->v[c].dev == dev && s->v[c].key == key)
			return c;
	return vnew(s, kind, parent, dev, -1, key);
}

static int socket_of(const struct aff_topo *t, int loc)
{
	hwloc_obj_t pkg;

	if (loc < 0 || !t->hw || !t->loc[loc].obj || !t->loc[loc].known)
		return -1;
	pkg = hwloc_get_ancestor_obj_by_type(t->hw, HWLOC_OBJ_PACKAGE, t->loc[loc].obj);
	if (!pkg && t->loc[loc].obj->type == HWLOC_OBJ_PACKAGE)
		pkg = t->loc[loc].obj;
	return pkg ? (int)pkg->logical_index : -1;
}

/* Where device @dev hangs: socket, NUMA, root complex, its switches. */
static int container_of(struct svg *s, int dev)
{
	const struct aff_topo *t = s->t;
	int chain[64], n = 0, i, c, hb = t->dev[dev].hostbridge, loc = t->dev[dev].loc;

	for (i = t->dev[dev].parent; i >= 0 && i != hb && n < 64; i = t->dev[i].parent)
		if (t->dev[i].is_switch)
			chain[n++] = i;
	c = child(s, 0, V_SOCKET, -1, socket_of(t, loc));
	if (c >= 0)
		c = child(s, c, V_NUMA, -1, loc);
	if (c >= 0)
		c = child(s, c, V_RC, hb, 0);
	while (c >= 0 && n)
		c = child(s, c, V_SWITCH, chain[--n], 0);
	return c;
}

static int build(struct svg *s)
{
	const struct aff_topo *t = s->t;
	size_t i, r;
	int c, rc;

	rc = vnew(s, V_ROOT, -1, -1, -1, 0);
	/* Tree order of the devices: the picture follows the buses. */
	for (i = 0; i < t->ndev && rc >= 0; i++) {
		if (t->dev[i].gpu >= 0) {
			c = container_of(s, (int)i);
			rc = c < 0 ? c : vnew(s, V_GPU, c, (int)i, -1, 0);
		}
		for (r = 0; r < t->nrail && rc >= 0; r++) {
			if (t->rail[r].dev != (int)i)
				continue;
			c = container_of(s, (int)i);
			rc = c < 0 ? c : vnew(s, V_NIC, c, (int)i, (int)r, 0);
		}
	}
	return rc < 0 ? rc : 0;
}

static bool leaf(const struct vnode *v)
{
	return v->kind == V_GPU || v->kind == V_NIC;
}

static void measure(struct svg *s, int n)
{
	struct vnode *v = &s->v[n];
	double lh = 0, sw = 0, sh = 0;
	int c, leaves = 0, subs = 0;

	if (leaf(v)) {
		v->w = LEAF_W;
		v->h = LEAF_H;
		return;
	}
	for (c = v->first; c >= 0; c = s->v[c].next) {
		measure(s, c);
		if (leaf(&s->v[c])) {
			lh += (leaves++ ? GAP : 0) + LEAF_H;
		} else {
			sw += (subs++ ? GAP : 0) + s->v[c].w;
			if (s->v[c].h > sh)
				sh = s->v[c].h;
		}
	}
	v->w = (leaves && LEAF_W > sw ? LEAF_W : sw) + 2 * PAD;
	v->h = HEAD + lh + (leaves && subs ? GAP : 0) + sh + PAD;
	if (n == 0) {
		v->w -= 2 * PAD;
		v->h -= HEAD + PAD;
	}
}

static void place(struct svg *s, int n, double x, double y)
{
	struct vnode *v = &s->v[n];
	double cy, sx, top = n ? HEAD : 0, pad = n ? PAD : 0;
	int c;

	v->x = x;
	v->y = y;
	cy = y + top;
	for (c = v->first; c >= 0; c = s->v[c].next)
		if (leaf(&s->v[c])) {
			place(s, c, x + pad, cy);
			cy += LEAF_H + GAP;
		}
	sx = x + pad;
	for (c = v->first; c >= 0; c = s->v[c].next)
		if (!leaf(&s->v[c])) {
			place(s, c, sx, cy);
			sx += s->v[c].w + GAP;
		}
}

static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			/* Control characters are not XML. */
			if ((unsigned char)*s >= 0x20)
				fputc(*s, f);
		}
	}
}

/* "07:00.0" for domain 0, the full address otherwise. */
static const char *short_pci(const char *pci)
{
	return !strncmp(pci, "0000:", 5) ? pci + 5 : pci;
}

static void text(struct svg *s, double x, double y, const char *cls, const char *str)
{
	fprintf(s->f, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\">", cls, x, y);
	esc(s->f, str);
	fputs("</text>\n", s->f);
}

static void container_label(struct svg *s, const struct vnode *v, char *buf, size_t len)
{
	const struct aff_topo *t = s->t;
	char *cpus;

	switch (v->kind) {
	case V_SOCKET:
		if (v->key >= 0)
			snprintf(buf, len, "Socket %d", v->key);
		else
			snprintf(buf, len, "Machine (no socket known)");
		break;
	case V_NUMA: {
		const struct aff_locality *l = v->key >= 0 ? &t->loc[v->key] : NULL;

		if (!l || !l->known) {
			snprintf(buf, len, "NUMA unknown (locality not reported)");
			break;
		}
		cpus = aff_bitmap_list(l->cpuset);
		if (l->numa >= 0)
			snprintf(buf, len, "NUMA %d  CPUs %s", l->numa, cpus ? cpus : "?");
		else
			snprintf(buf, len, "NUMA nodes of CPUs %s", cpus ? cpus : "?");
		free(cpus);
		break;
	}
	case V_RC:
		snprintf(buf, len, "Root complex");
		break;
	default:
		snprintf(buf, len, "PCIe switch %s", v->dev >= 0 ? short_pci(t->dev[v->dev].pci) : "");
		break;
	}
}

static const char *const fills[] = {
	[V_ROOT] = "none", [V_SOCKET] = "#f2f2f2", [V_NUMA] = "#e8f0fa", [V_RC] = "#fbfbf4",
	[V_SWITCH] = "#ffffff",
};
static const char *const kinds[] = {
	[V_ROOT] = "node", [V_SOCKET] = "socket", [V_NUMA] = "numa", [V_RC] = "rootcomplex",
	[V_SWITCH] = "switch", [V_GPU] = "gpu", [V_NIC] = "nic",
};

static void draw_containers(struct svg *s, int n)
{
	const struct vnode *v = &s->v[n];
	char label[256];
	int c;

	if (n && !leaf(v)) {
		fprintf(s->f, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"6\" fill=\"%s\" stroke=\"#8a8a8a\"/>\n",
			kinds[v->kind], v->x, v->y, v->w, v->h, fills[v->kind]);
		container_label(s, v, label, sizeof(label));
		text(s, v->x + 6, v->y + 14, kinds[v->kind], label);
	}
	for (c = v->first; c >= 0; c = s->v[c].next)
		draw_containers(s, c);
}

static const struct vnode *gpu_box(const struct svg *s, size_t g)
{
	size_t i;

	for (i = 0; i < s->nv; i++)
		if (s->v[i].kind == V_GPU && s->t->dev[s->v[i].dev].gpu == (int)g)
			return &s->v[i];
	return NULL;
}

static const struct vnode *rail_box(const struct svg *s, int rail)
{
	size_t i;

	for (i = 0; i < s->nv; i++)
		if (s->v[i].kind == V_NIC && s->v[i].rail == rail)
			return &s->v[i];
	return NULL;
}

/* A link's label, haloed in white: it may cross boxes and lines. */
static void label(struct svg *s, double x, double y, const char *str)
{
	fprintf(s->f, "<text class=\"nvlink-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\" fill=\"%s\">",
		x, y, NVLINK_GREEN);
	esc(s->f, str);
	fputs("</text>\n", s->f);
}

/* GPU g's NVLinks into NVSwitches. */
static int switch_links(const struct aff_topo *t, size_t g)
{
	const struct aff_gident *id = aff_gpu_ident(t, g);
	size_t i;
	int n = 0;

	for (i = 0; id && i < id->nlink; i++)
		if (id->link[i].type == AFF_GLINK_SWITCH)
			n += id->link[i].links;
	return n;
}

static bool xgmi_pair(const struct aff_topo *t, size_t g, size_t h, char *cell, size_t len)
{
	aff_gpu_pair_cell(t, g, h, cell, len);
	return !strncmp(cell, "XGMI", 4);
}

/* A bar under the node for a fabric every GPU reaches, a line from each GPU to it. */
static double fabric_bar(struct svg *s, double y, const char *cls, const char *title,
			 const int *links, const char *unit)
{
	const struct aff_topo *t = s->t;
	char label[32];
	size_t g;

	for (g = 0; g < t->ngpu; g++) {
		const struct vnode *a = gpu_box(s, g);

		if (!links[g] || !a)
			continue;
		fprintf(s->f, "<line class=\"%s-link\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"/>\n",
			cls, a->x + a->w - 14, a->y + a->h / 2, a->x + a->w - 14, y, NVLINK_GREEN);
		snprintf(label, sizeof(label), "%s%d", unit, links[g]);
		text(s, a->x + a->w - 10, y - 4, "nvlink-label", label);
	}
	fprintf(s->f, "<rect class=\"%s\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"22\" rx=\"4\" fill=\"%s\" fill-opacity=\"0.15\" stroke=\"%s\"/>\n",
		cls, MARGIN, y, s->v[0].w, NVLINK_GREEN, NVLINK_GREEN);
	text(s, MARGIN + 8, y + 15, cls, title);
	return y + 30;
}

/* NVLink and XGMI, under the device boxes. Returns the y below what it drew. */
static double draw_links(struct svg *s, double y)
{
	const struct aff_topo *t = s->t;
	int *links = calloc(t->ngpu + 1, sizeof(int));
	bool fabric = false, xgmi_all = t->ngpu > 1;
	char cell[16];
	size_t g, h;

	if (!links)
		return y;
	for (g = 0; g < t->ngpu; g++) {
		links[g] = switch_links(t, g);
		fabric |= links[g] > 0;
		for (h = 0; h < t->ngpu; h++)
			if (h != g && !xgmi_pair(t, g, h, cell, sizeof(cell)))
				xgmi_all = false;
	}
	if (fabric)
		y = fabric_bar(s, y, "nvswitch", "NVLink through NVSwitches: every GPU reaches every other GPU (NV# = its links)",
			       links, "NV");
	if (xgmi_all) {
		for (g = 0; g < t->ngpu; g++)
			links[g] = 1;
		y = fabric_bar(s, y, "xgmi",
			       "AMD Infinity Fabric (XGMI) between every two GPUs (gpu_paths: XGMI# = hops)",
			       links, "XGMI");
	}
	free(links);
	/* Direct NVLinks and partial XGMI meshes: an arc between the two GPUs. */
	for (g = 0; g < t->ngpu; g++)
		for (h = g + 1; h < t->ngpu; h++) {
			const struct vnode *a = gpu_box(s, g), *b = gpu_box(s, h);
			int direct = aff_gpu_direct_nvlinks(t, g, h);
			double low;

			if (!a || !b)
				continue;
			if (direct > 0)
				snprintf(cell, sizeof(cell), "NV%d", direct);
			else if (xgmi_all || !xgmi_pair(t, g, h, cell, sizeof(cell)))
				continue;
			if (a->x == b->x) {
				/* One above the other in a column: bowed out to the left. */
				double mid = (a->y + b->y + a->h) / 2;

				fprintf(s->f, "<path class=\"gpulink\" d=\"M %.1f %.1f Q %.1f %.1f %.1f %.1f\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n",
					a->x, a->y + a->h / 2, a->x - 34, mid, b->x,
					b->y + b->h / 2,
					NVLINK_GREEN);
				label(s, a->x - 14, mid + 4, cell);
				continue;
			}
			low = (a->y > b->y ? a->y : b->y) + a->h + 18 + 5.0 * (double)(h - g);
			fprintf(s->f, "<path class=\"gpulink\" d=\"M %.1f %.1f Q %.1f %.1f %.1f %.1f\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n",
				a->x + 24, a->y + a->h, (a->x + b->x) / 2 + 24,
				2 * low - a->y - a->h,
				b->x + 24, b->y + b->h, NVLINK_GREEN);
			label(s, (a->x + b->x) / 2 + 24, low, cell);
		}
	return y;
}

static void draw_leaf(struct svg *s, const struct vnode *v)
{
	const struct aff_topo *t = s->t;
	const char *stroke = "#555555", *fill = "#ffffff";
	char label[128], ranks[48] = "";
	int rank = -1, width = 1;
	bool primary = true, failed;

	if (v->kind == V_GPU) {
		rank = s->gpu_rank[t->dev[v->dev].gpu];
		snprintf(label, sizeof(label), "GPU%d %s", t->dev[v->dev].gpu,
			 short_pci(t->dev[v->dev].pci));
	} else {
		const struct aff_rail *r = &t->rail[v->rail];

		rank = s->rail_rank[v->rail];
		primary = s->rail_primary[v->rail];
		snprintf(label, sizeof(label), "%s %s", r->name ? r->name : "NIC",
			 short_pci(t->dev[r->dev].pci));
		snprintf(ranks, sizeof(ranks), "%s", s->rail_label[v->rail]);
	}
	failed = rank >= 0 && s->fail[rank] && (v->kind == V_GPU || primary);
	if (rank >= 0) {
		stroke = colours[(size_t)rank % NCOLOURS];
		fill = stroke;
		width = primary ? 2 : 1;
		if (v->kind == V_GPU)
			snprintf(ranks, sizeof(ranks), "r%d", rank);
	}
	if (failed) {
		stroke = FAIL_RED;
		width = 3;
	}
	fprintf(s->f, "<rect class=\"%s%s\" data-pci=\"%s\" data-rank=\"%d\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" rx=\"3\" fill=\"%s\" fill-opacity=\"%s\" stroke=\"%s\" stroke-width=\"%d\"/>\n",
		kinds[v->kind], failed ? " failed" : "", t->dev[v->dev].pci, rank, v->x, v->y,
		v->w, v->h, fill, rank >= 0 ? (primary ? "0.30" : "0.12") : "1", stroke, width);
	text(s, v->x + 5, v->y + 14, kinds[v->kind], label);
	if (*ranks)
		text(s, v->x + v->w - 6 - 7.0 * (double)strlen(ranks), v->y + 14, "rank", ranks);
}

static void draw_leaves(struct svg *s)
{
	size_t i;

	for (i = 0; i < s->nv; i++)
		if (leaf(&s->v[i]))
			draw_leaf(s, &s->v[i]);
}

/* A red line from a failed pair's GPU to its NIC, over everything. */
static void draw_failures(struct svg *s)
{
	size_t k;

	for (k = 0; s->plan && k < s->plan->nrank; k++) {
		const struct aff_rank *rk = &s->plan->rank[k];
		const struct vnode *a = gpu_box(s, (size_t)rk->gpu);
		const struct vnode *b = rk->rails.n ? rail_box(s, rk->rails.rail[0]) : NULL;

		if (!s->fail[k] || !a || !b)
			continue;
		/* Under the boxes' words: from their bottom edges, bowed downwards. */
		fprintf(s->f, "<path class=\"failed-pair\" data-rank=\"%zu\" d=\"M %.1f %.1f Q %.1f %.1f %.1f %.1f\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" stroke-dasharray=\"6,4\"/>\n",
			k, a->x + a->w / 2, a->y + a->h, (a->x + b->x + b->w) / 2,
			(a->y > b->y ? a->y : b->y) + a->h + 40, b->x + b->w / 2, b->y + b->h,
			FAIL_RED);
	}
}

/* One line per rank: colour, GPU, primary NIC and class; failures named. */
static double draw_legend(struct svg *s, double y)
{
	const struct aff_topo *t = s->t;
	size_t k, per_col, col;
	char line[512];

	if (!s->plan || !s->plan->nrank) {
		text(s, MARGIN, y + 14, "legend", "No plan: no GPU or accelerator on this node.");
		return y + 24;
	}
	per_col = s->plan->nrank <= 8 ? s->plan->nrank : (s->plan->nrank + 1) / 2;
	text(s, MARGIN, y + 14, "legend-title",
	     "Ranks: each rank's GPU and rail NIC(s) in one colour (+rN: a further rail of rank N); red: a pair the audit fails");
	y += 22;
	for (k = 0; k < s->plan->nrank; k++) {
		const struct aff_rank *rk = &s->plan->rank[k];
		const struct aff_dev *g = &t->dev[t->gpus[rk->gpu]];
		size_t column = k / per_col, row = k % per_col;
		double x = MARGIN + (double)column * 520, yy = y + (double)row * 18;
		int used;

		col = k % NCOLOURS;
		fprintf(s->f, "<rect class=\"legend-swatch\" data-rank=\"%zu\" x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\" stroke=\"%s\"/>\n",
			k, x, yy + 3, colours[col], s->fail[k] ? FAIL_RED : colours[col]);
		used = snprintf(line, sizeof(line), "rank %zu: GPU%d %s", k, rk->gpu, g->pci);
		if (rk->rails.n) {
			const struct aff_rail *r = &t->rail[rk->rails.rail[0]];

			used += snprintf(line + used, sizeof(line) - (size_t)used, " -> %s (%s)",
					 r->name ? r->name : t->dev[r->dev].pci,
					 aff_path_name(aff_path_between(t, t->gpus[rk->gpu], aff_rail_path_dev(r),
									NULL)));
		} else {
			used += snprintf(line + used, sizeof(line) - (size_t)used, " -> no rail");
		}
		if (s->fail[k] && used > 0 && (size_t)used < sizeof(line))
			snprintf(line + used, sizeof(line) - (size_t)used, "  FAIL: %s", s->fail[k]);
		text(s, x + 18, yy + 13, s->fail[k] ? "legend failed" : "legend", line);
	}
	return y + (double)per_col * 18 + 8;
}

static bool is_gpu(const struct aff_topo *t, const char *pci)
{
	size_t g;

	for (g = 0; g < t->ngpu; g++)
		if (!strcmp(t->dev[t->gpus[g]].pci, pci))
			return true;
	return false;
}

/*
 * Does a finding on @devs judge this pair? One that names a GPU is about that
 * GPU's pair (gpu-nic-path names the GPU and the NIC it got); one that names
 * no GPU is about a NIC or port, and judges every pair using that NIC.
 */
static bool names_pair(const struct aff_topo *t, struct json_object *devs, const char *gpu,
		       const char *nic)
{
	bool any_gpu = false, has_gpu = false, has_nic = false;
	size_t j;

	for (j = 0; j < json_object_array_length(devs); j++) {
		const char *d = json_object_get_string(json_object_array_get_idx(devs, j));

		if (!d)
			continue;
		any_gpu |= is_gpu(t, d);
		has_gpu |= !strcmp(d, gpu);
		has_nic |= *nic && !strcmp(d, nic);
	}
	return any_gpu ? has_gpu : has_nic;
}

/* The failing checks that judge a rank's pair: its GPU, or its primary NIC. */
static int mark_failures(struct svg *s, struct aff_topo *topo, struct aff_plan *plan)
{
	struct json_object *doc, *checks;
	struct aff_audit *a;
	char err[256];
	size_t k, i;

	if (aff_audit_run(topo, plan, 0, &a, err, sizeof(err)) < 0)
		return 0;	/* the picture without verdicts */
	doc = aff_audit_to_json(a);
	checks = json_object_object_get(doc, "checks");
	for (k = 0; k < plan->nrank; k++) {
		const struct aff_rank *rk = &plan->rank[k];
		const char *gpu = topo->dev[topo->gpus[rk->gpu]].pci;
		const char *nic = rk->rails.n ? topo->dev[topo->rail[rk->rails.rail[0]].dev].pci : "";

		for (i = 0; i < json_object_array_length(checks); i++) {
			struct json_object *c = json_object_array_get_idx(checks, i);
			struct json_object *devs = json_object_object_get(c, "devices");
			const char *sev = json_object_get_string(json_object_object_get(c, "severity"));
			const char *id = json_object_get_string(json_object_object_get(c, "id"));

			if (!sev || strcmp(sev, "fail") || !id || !names_pair(topo, devs, gpu, nic) ||
			    (s->fail[k] && strstr(s->fail[k], id)))
				continue;
			if (!s->fail[k]) {
				s->fail[k] = strdup(id);
			} else {
				char *p = NULL;

				if (asprintf(&p, "%s, %s", s->fail[k], id) < 0)
					p = NULL;
				free(s->fail[k]);
				s->fail[k] = p;
			}
			if (!s->fail[k]) {
				json_object_put(doc);
				aff_audit_free(a);
				return -ENOMEM;
			}
		}
	}
	json_object_put(doc);
	aff_audit_free(a);
	return 0;
}

static int ranks(struct svg *s, struct aff_topo *topo, struct aff_plan **plan)
{
	char err[256];
	size_t k, i;

	s->gpu_rank = malloc((topo->ngpu + 1) * sizeof(int));
	s->rail_rank = malloc((topo->nrail + 1) * sizeof(int));
	s->rail_primary = calloc(topo->nrail + 1, sizeof(bool));
	s->rail_label = calloc(topo->nrail + 1, sizeof(*s->rail_label));
	if (!s->gpu_rank || !s->rail_rank || !s->rail_primary || !s->rail_label)
		return -ENOMEM;
	memset(s->gpu_rank, 0xff, (topo->ngpu + 1) * sizeof(int));
	memset(s->rail_rank, 0xff, (topo->nrail + 1) * sizeof(int));
	*plan = NULL;
	if (!topo->ngpu || aff_plan_new(topo, NULL, plan, err, sizeof(err)) < 0)
		return 0;	/* nothing to colour */
	s->plan = *plan;
	s->fail = calloc((*plan)->nrank + 1, sizeof(*s->fail));
	if (!s->fail)
		return -ENOMEM;
	for (k = 0; k < (*plan)->nrank; k++) {
		const struct aff_rank *rk = &(*plan)->rank[k];

		if (s->gpu_rank[rk->gpu] < 0)
			s->gpu_rank[rk->gpu] = (int)k;
		for (i = 0; i < rk->rails.n; i++) {
			int r = rk->rails.rail[i];
			char *l = s->rail_label[r];
			size_t used = strlen(l);

			if (s->rail_rank[r] < 0)
				s->rail_rank[r] = (int)k;
			if (!i)
				s->rail_primary[r] = true;
			/* A shared rail (p4d) names each rank; a further rail (p5) its owner. */
			if (used + 8 < sizeof(*s->rail_label))
				snprintf(l + used, sizeof(*s->rail_label) - used, "%s%sr%zu",
					 used ? "," : "", i ? "+" : "", k);
		}
	}
	return mark_failures(s, topo, *plan);
}

/* The picture's body into s->f; its size into *w, *h. */
static void write_body(struct svg *s, double *w, double *h)
{
	const struct aff_topo *t = s->t;
	char title[256];
	double y;

	measure(s, 0);
	place(s, 0, MARGIN, MARGIN + 24);
	snprintf(title, sizeof(title), "railbind topo: %s (%s), %zu GPU%s, %zu rail NIC%s",
		 t->host ? t->host : "node", t->source, t->ngpu, t->ngpu == 1 ? "" : "s",
		 t->nrail, t->nrail == 1 ? "" : "s");
	fputs("<title>", s->f);
	esc(s->f, title);
	fputs("</title>\n<style>text.title{font-size:14px;font-weight:bold} text.socket,text.numa{font-weight:bold} text.rank{font-weight:bold} text.failed{fill:" FAIL_RED "}</style>\n",
	      s->f);
	fputs("<rect class=\"background\" x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n",
	      s->f);
	text(s, MARGIN, MARGIN + 10, "title", title);
	draw_containers(s, 0);
	y = draw_links(s, MARGIN + 24 + s->v[0].h + GAP + 8);
	draw_leaves(s);
	draw_failures(s);
	y = draw_legend(s, y + GAP);
	*w = s->v[0].w + 2 * MARGIN;
	if (*w < 820)
		*w = 820;
	*h = y + MARGIN;
}

AFF_EXPORT int aff_topo_svg_write(struct aff_topo *topo, const char *path, char *err,
				  size_t errlen)
{
	struct svg s = { .t = topo };
	struct aff_plan *plan = NULL;
	char *buf = NULL, *body = NULL;
	size_t blen = 0, k;
	double w = 0, h = 0;
	int rc;

	rc = ranks(&s, topo, &plan);
	if (!rc)
		rc = build(&s);
	if (!rc) {
		s.f = open_memstream(&body, &blen);
		rc = s.f ? 0 : -errno;
	}
	if (!rc) {
		write_body(&s, &w, &h);
		rc = fclose(s.f) ? -errno : 0;
	}
	if (!rc && asprintf(&buf, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Verdana, sans-serif\" font-size=\"11\">\n%s</svg>\n",
			    w, h, w, h, body) < 0) {
		buf = NULL;
		rc = -ENOMEM;
	}
	if (!rc)
		rc = aff_write_atomic("svg", path, buf, strlen(buf), err, errlen);
	else
		aff_seterr(err, errlen, -rc, "svg %s: %s", path, strerror(-rc));
	for (k = 0; s.fail && plan && k < plan->nrank; k++)
		free(s.fail[k]);
	free(s.fail);
	free(s.gpu_rank);
	free(s.rail_rank);
	free(s.rail_primary);
	free(s.rail_label);
	free(s.v);
	free(body);
	free(buf);
	aff_plan_unref(plan);
	return rc;
}
