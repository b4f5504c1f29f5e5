// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The audit's slurm-gres check: the node's gres.conf (railbind.conf's
 * slurm-gres-conf, else /etc/slurm/gres.conf on a live node) against the
 * lines railbind slurm-gres writes, in Slurm's units (gres.h): each GPU's
 * Cores= as logical core indices, the GPUs in PCI order. A file written per
 * socket, per NUMA node (numa_node_as_socket) or per L3 (l3cache_as_socket)
 * passes when every GPU agrees with one of these. No file (or none named
 * for a saved topology): ok, as Slurm then binds no GPU to cores; AutoDetect
 * without GPU lines: undecided (Slurm asks NVML itself).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "affinity.h"
#include "audit.h"
#include "gres.h"
#include "model.h"

#define ID "slurm-gres"
#define GRES_LIMIT (1u << 20)

void aff_gres_file_free(struct aff_gres_file *g)
{
	for (size_t i = 0; g && i < g->ndev; i++)
		hwloc_bitmap_free(g->dev[i].cores);
	free(g);
}

/* The value of KEY= in the tokens of one line (keys are case-blind), or NULL. */
static const char *value_of(char **tok, int n, const char *key)
{
	size_t k = strlen(key);

	for (int i = 0; i < n; i++)
		if (!strncasecmp(tok[i], key, k) && tok[i][k] == '=')
			return tok[i] + k + 1;
	return NULL;
}

/* File=/dev/nvidia[0-3,5] or File=/dev/nvidia0: one device per name. */
static int add_files(struct aff_gres_file *g, const char *v, unsigned line,
		     hwloc_const_bitmap_t cores)
{
	const char *lb = strchr(v, '['), *rb = lb ? strchr(lb, ']') : NULL;
	hwloc_bitmap_t nums;
	int i, rc = 0;

	if (!lb) {
		if (g->ndev >= AFF_GRES_MAX_DEVS)
			return -E2BIG;
		snprintf(g->dev[g->ndev].file, sizeof(g->dev[0].file), "%s", v);
		g->dev[g->ndev].line = line;
		g->dev[g->ndev++].cores = cores ? hwloc_bitmap_dup(cores) : NULL;
		return 0;
	}
	nums = hwloc_bitmap_alloc();
	if (!rb || rb[1] || !nums || (size_t)(rb - lb) > 64) {
		hwloc_bitmap_free(nums);
		return -EINVAL;
	}
	{
		char list[80];

		snprintf(list, sizeof(list), "%.*s", (int)(rb - lb - 1), lb + 1);
		if (aff_parse_cpulist(list, nums) < 0 || hwloc_bitmap_weight(nums) > AFF_GRES_MAX_DEVS)
			rc = -EINVAL;
	}
	hwloc_bitmap_foreach_begin(i, nums) {
		if (rc)
			break;
		if (g->ndev >= AFF_GRES_MAX_DEVS) {
			rc = -E2BIG;
			break;
		}
		snprintf(g->dev[g->ndev].file, sizeof(g->dev[0].file), "%.*s%d",
			 (int)(lb - v), v, i);
		g->dev[g->ndev].line = line;
		g->dev[g->ndev++].cores = cores ? hwloc_bitmap_dup(cores) : NULL;
	}
	hwloc_bitmap_foreach_end();
	hwloc_bitmap_free(nums);
	return rc;
}

/* One line's Name=gpu devices (those of this node) into @g; < 0 unreadable. */
static int parse_line(struct aff_gres_file *g, char *s, unsigned line, const char *host)
{
	char *tok[32], *save = NULL;
	const char *name, *node, *file, *cores, *count;
	hwloc_bitmap_t set = NULL;
	int n = 0, rc;

	for (char *t = strtok_r(s, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save))
		if (n < 32)
			tok[n++] = t;
	if (!n)
		return 0;
	node = value_of(tok, n, "NodeName");
	if (node && (!host || strcmp(node, host))) {
		if (strpbrk(node, "[,"))
			return snprintf(g->why, sizeof(g->why),
					"line %u: NodeName=%s: host lists are not read here", line,
					node), -EINVAL;
		return 0;	/* another node's line */
	}
	if (value_of(tok, n, "AutoDetect") && strcasecmp(value_of(tok, n, "AutoDetect"), "off"))
		g->autodetect = true;
	name = value_of(tok, n, "Name");
	if (!name || strcasecmp(name, "gpu"))
		return 0;
	file = value_of(tok, n, "File");
	cores = value_of(tok, n, "Cores");
	count = value_of(tok, n, "Count");
	if (cores) {
		set = hwloc_bitmap_alloc();
		if (!set)
			return -ENOMEM;
		if (aff_parse_cpulist(cores, set) < 0) {
			hwloc_bitmap_free(set);
			return snprintf(g->why, sizeof(g->why),
					"line %u: Cores=%s: expected core indices like 0-15,32", line,
					cores), -EINVAL;
		}
	}
	if (file) {
		rc = add_files(g, file, line, set);
		if (rc == -EINVAL)
			snprintf(g->why, sizeof(g->why), "line %u: File=%s: expected a path, or a"
				 " path ending in [0-3]", line, file);
	} else {
		long c = count ? strtol(count, NULL, 10) : 1;

		rc = 0;
		for (long i = 0; i < c && i < AFF_GRES_MAX_DEVS && !rc; i++)
			rc = add_files(g, "", line, set);
	}
	hwloc_bitmap_free(set);
	if (rc == -E2BIG)
		snprintf(g->why, sizeof(g->why), "more than %d GPUs", AFF_GRES_MAX_DEVS);
	return rc;
}

int aff_gres_parse(struct aff_gres_file *g, char *text, const char *host)
{
	unsigned line = 0;
	char *p;
	int rc = 0;

	for (char *s = text; s && !rc; s = p) {
		line++;
		p = strchr(s, '\n');
		if (p)
			*p++ = '\0';
		if (strchr(s, '#'))
			*strchr(s, '#') = '\0';
		rc = parse_line(g, s, line, host);
	}
	return rc;
}

/* Does every GPU's line agree with unit @flags? The first GPU that does not, or -1. */
static int first_wrong(const struct aff_topo *t, const struct aff_gres_file *g, unsigned long flags,
		       hwloc_bitmap_t want, bool by_file)
{
	for (size_t i = 0; i < t->ngpu; i++) {
		const struct aff_gres_dev *d = &g->dev[i];
		char file[64];
		int rc;

		if (aff_gres_gpu_file(t, i, file, sizeof(file)) > 0 && by_file && strcmp(file, d->file))
			return (int)i;
		rc = aff_gres_cores(t, t->gpus[i], flags, want);
		if (rc == -ENOMEM)
			return -2;
		/* No locality known: any Cores= may be right. */
		if (rc == 0 && (!d->cores || !hwloc_bitmap_isequal(d->cores, want)))
			return (int)i;
	}
	return -1;
}

static int judge(struct aff_audit *a, const char *path, const struct aff_gres_file *g)
{
	const struct aff_topo *t = a->topo;
	static const unsigned long units[] = { 0, AFF_GRES_NUMA, AFF_GRES_L3 };
	hwloc_bitmap_t want = hwloc_bitmap_alloc();
	bool by_file = g->ndev == t->ngpu;
	char *lines = NULL, err[256], *have = NULL;
	int wrong = -1, rc;

	if (!want)
		return -ENOMEM;
	if (by_file)
		for (size_t i = 0; i < t->ngpu && by_file; i++)
			by_file = *g->dev[i].file;
	/* Per socket first: what a file that fits no unit is told. */
	for (size_t u = 0; u < 3 && g->ndev == t->ngpu; u++) {
		int w = first_wrong(t, g, units[u], want, by_file);

		if (w == -2) {
			hwloc_bitmap_free(want);
			return -ENOMEM;
		}
		if (w == -1) {
			hwloc_bitmap_free(want);
			return aff_audit_add(a, ID, AFF_SEV_OK, "node", NULL, NULL, NULL,
					     "%s: %zu GPUs in PCI order, Cores= per %s as the hardware",
					     path, t->ngpu, aff_gres_unit_name(units[u]));
		}
		if (!u)
			wrong = w;
	}
	rc = aff_topo_gres_conf(t, 0, &lines, err, sizeof(err));
	if (rc < 0) {
		hwloc_bitmap_free(want);
		return rc == -ENOMEM ? rc : aff_audit_undecided(a, ID, "%s", err);
	}
	if (wrong >= 0 && g->dev[wrong].cores)
		have = aff_bitmap_list(g->dev[wrong].cores);
	aff_gres_cores(t, t->gpus[wrong >= 0 ? wrong : 0], 0, want);
	{
		char *w = aff_bitmap_list(want);
		const char *devs[] = { wrong >= 0 ? t->dev[t->gpus[wrong]].pci : NULL, NULL };

		if (g->ndev != t->ngpu)
			rc = aff_audit_add(a, ID, AFF_SEV_FAIL, "node", NULL, NULL, lines,
					   "%s lists %zu GPUs for this node, which has %zu", path,
					   g->ndev, t->ngpu);
		else
			rc = aff_audit_add(a, ID, AFF_SEV_FAIL, t->dev[t->gpus[wrong]].pci, devs,
					   NULL, lines,
					   "%s line %u (%s%sCores=%s) is not GPU %d's: the hardware's is %s"
					   " in PCI order, Cores=%s (logical core indices, whole sockets)",
					   path, g->dev[wrong].line, g->dev[wrong].file,
					   *g->dev[wrong].file ? " " : "", have ? have : "(none)", wrong,
					   t->dev[t->gpus[wrong]].pci, w ? w : "?");
		free(w);
	}
	free(have);
	free(lines);
	hwloc_bitmap_free(want);
	return rc;
}

int aff_audit_slurm(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	const char *conf = t->ctx ? t->ctx->conf.slurm_gres_conf : NULL;
	char buf[4096], err[512];
	struct aff_gres_file *g;
	char *text = NULL;
	const char *path;
	size_t len;
	int rc;

	if (!t->ngpu)
		return aff_audit_undecided(a, ID, "no GPU");
	/* No Slurm here, or none named: nothing to disagree with (not a doubt). */
	if (!conf && t->src != AFF_SRC_LIVE)
		return aff_audit_add(a, ID, AFF_SEV_OK, "node", NULL, NULL, NULL,
				     "no gres.conf named (slurm-gres-conf in railbind.conf)");
	path = conf ? conf : aff_ctx_path(t->ctx, "/etc/slurm/gres.conf", buf, sizeof(buf));
	rc = aff_read_file(path, GRES_LIMIT, &text, &len, err, sizeof(err));
	if (rc == -ENOENT)
		return aff_audit_add(a, ID, AFF_SEV_OK, "node", NULL, NULL, NULL,
				     "%s absent: Slurm binds no GPU to cores here", path);
	if (rc < 0)
		return rc == -ENOMEM ? rc : aff_audit_undecided(a, ID, "%s", err);
	g = calloc(1, sizeof(*g));
	if (!g) {
		free(text);
		return -ENOMEM;
	}
	rc = aff_gres_parse(g, text, t->host);
	free(text);
	if (rc == -ENOMEM)
		;
	else if (rc < 0)
		rc = aff_audit_undecided(a, ID, "%s: %s", path, g->why);
	else if (!g->ndev && g->autodetect)
		rc = aff_audit_undecided(a, ID, "%s: AutoDetect: Slurm finds the GPUs itself", path);
	else
		rc = judge(a, path, g);
	aff_gres_file_free(g);
	return rc;
}
