// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Which GPUs a process may use, as CUDA_VISIBLE_DEVICES, NVIDIA_VISIBLE_DEVICES
 * (the container toolkit's) and ROCR_VISIBLE_DEVICES name them: indices,
 * PCI addresses, UUIDs (GPU-..., or a unique prefix, as CUDA takes them) and
 * MIG instances (MIG-..., or R450's MIG-GPU-UUID/GI/CI). Every spelling of
 * one GPU narrows the plan the same way; a MIG instance stands for its
 * parent GPU, one rank per instance named.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpu_ident.h"
#include "model.h"

static int by_index(const struct aff_topo *t, const char *item, int *gpu, char *why,
		    size_t whylen)
{
	char *end;
	long v = strtol(item, &end, 10);

	if (*end)
		return -EINVAL;
	if (v < 0 || (size_t)v >= t->ngpu) {
		snprintf(why, whylen, "no GPU index %s: this node has %zu GPU%s", item, t->ngpu,
			 t->ngpu == 1 ? "" : "s");
		return -ENOENT;
	}
	*gpu = (int)v;
	return 0;
}

/* A GPU UUID, or a prefix of exactly one (CUDA takes "GPU-5c3" for GPU-5c3a...). */
static int by_uuid(const struct aff_topo *t, const char *item, int *gpu, char *why,
		   size_t whylen)
{
	size_t k, len = strlen(item);
	int found = -1, matches = 0;

	for (k = 0; k < t->ngpu; k++) {
		const struct aff_gident *g = aff_gpu_ident(t, k);

		if (!g || !g->uuid)
			continue;
		if (!strcasecmp(g->uuid, item)) {
			*gpu = (int)k;
			return 0;
		}
		if (len > 4 && !strncasecmp(g->uuid, item, len)) {
			found = (int)k;
			matches++;
		}
	}
	if (matches == 1) {
		*gpu = found;
		return 0;
	}
	if (matches > 1) {
		snprintf(why, whylen, "%s is the start of %d GPUs' UUIDs", item, matches);
		return -EINVAL;
	}
	snprintf(why, whylen, "no GPU with UUID %s on this node%s", item,
		 aff_gpu_ident(t, 0) && aff_gpu_ident(t, 0)->uuid ? "" :
		 " (its GPUs' UUIDs are unknown: no NVIDIA driver /proc files, NVML or ROCm SMI answers)");
	return -ENOENT;
}

/* MIG-UUID, or MIG-GPU-UUID/GI/CI. */
static int by_mig(const struct aff_topo *t, const char *item, int *gpu, int *mig, char *why,
		  size_t whylen)
{
	char parent[96];
	unsigned gi, ci;
	size_t k, i;
	int n, rc;

	if (sscanf(item, "MIG-%95[^/]/%u/%u%n", parent, &gi, &ci, &n) == 3 && !item[n]) {
		rc = by_uuid(t, parent, gpu, why, whylen);
		if (rc < 0)
			return rc;
		for (i = 0; i < aff_gpu_ident(t, (size_t)*gpu)->nmig; i++) {
			const struct aff_gmig *m = &aff_gpu_ident(t, (size_t)*gpu)->migdev[i];

			if (m->gi == (int)gi && m->ci == (int)ci) {
				*mig = (int)i;
				return 0;
			}
		}
		snprintf(why, whylen, "GPU%d has no MIG instance %u/%u%s", *gpu, gi, ci,
			 aff_gpu_ident(t, (size_t)*gpu)->mig < 0 ? " that NVML told of" : "");
		return -ENOENT;
	}
	for (k = 0; k < t->ngpu; k++) {
		const struct aff_gident *g = aff_gpu_ident(t, k);

		for (i = 0; g && i < g->nmig; i++)
			if (!strcasecmp(g->migdev[i].uuid, item)) {
				*gpu = (int)k;
				*mig = (int)i;
				return 0;
			}
	}
	snprintf(why, whylen, "no MIG instance %s on this node%s", item,
		 t->nvml && !strncmp(t->nvml, "ok", 2) ? "" :
		 " (MIG instances are known only through NVML)");
	return -ENOENT;
}

int aff_visible_item(const struct aff_topo *t, const char *item, int *gpu, int *mig,
		     char *why, size_t whylen)
{
	struct aff_dev probe;
	size_t k;
	int rc;

	*mig = -1;
	*why = '\0';
	if (isdigit((unsigned char)*item)) {
		rc = by_index(t, item, gpu, why, whylen);
		if (rc != -EINVAL)
			return rc;
	}
	if (!strncasecmp(item, "MIG-", 4))
		return by_mig(t, item, gpu, mig, why, whylen);
	if (!strncasecmp(item, "GPU-", 4))
		return by_uuid(t, item, gpu, why, whylen);
	if (aff_dev_set_pci(&probe, item) == 0) {
		for (k = 0; k < t->ngpu; k++)
			if (!strcmp(t->dev[t->gpus[k]].pci, probe.pci)) {
				*gpu = (int)k;
				return 0;
			}
		snprintf(why, whylen, "no GPU at PCI address %s", probe.pci);
		return -ENOENT;
	}
	snprintf(why, whylen,
		 "\"%s\" is neither a GPU index below %zu, a GPU's PCI address, a GPU UUID nor a MIG UUID",
		 item, t->ngpu);
	return -EINVAL;
}

struct pick {
	int gpu, mig;
};

static int pick_cmp(const void *a, const void *b)
{
	const struct pick *x = a, *y = b;

	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	return (x->mig > y->mig) - (x->mig < y->mig);
}

static bool blank_list(const char *v)
{
	return !*v || !strcmp(v, "none") || !strcmp(v, "void") || !strcmp(v, "NoDevFiles");
}

AFF_EXPORT int aff_visible_select(const struct aff_topo *t, const char *visible, int **gpu,
				  int **mig, size_t *n, char *err, size_t errlen)
{
	struct pick *p = NULL;
	char *copy = NULL, *item, *save = NULL, why[256];
	size_t cap = 0, k, i;
	int rc = 0;

	*gpu = *mig = NULL;
	*n = 0;
	if (!visible || !strcmp(visible, "all")) {
		cap = t->ngpu;
		p = calloc(cap + 1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		for (k = 0; k < t->ngpu; k++)
			p[k] = (struct pick){ (int)k, -1 };
		*n = t->ngpu;
	} else if (!blank_list(visible)) {
		copy = strdup(visible);
		cap = strlen(visible) / 2 + 1;
		p = calloc(cap + 1, sizeof(*p));
		if (!copy || !p) {
			rc = -ENOMEM;
			goto out;
		}
		for (item = strtok_r(copy, ",", &save); item && !rc;
		     item = strtok_r(NULL, ",", &save)) {
			struct pick q;

			rc = aff_visible_item(t, item, &q.gpu, &q.mig, why, sizeof(why));
			if (rc < 0) {
				rc = aff_seterr(err, errlen, rc == -ENOMEM ? ENOMEM : EINVAL,
						"visible GPUs \"%s\": %s", visible, why);
				break;
			}
			for (i = 0; i < *n; i++)
				if (p[i].gpu == q.gpu && p[i].mig == q.mig)
					break;
			if (i == *n && *n < cap)
				p[(*n)++] = q;
		}
		/* Ranks follow PCI order (then MIG order) whatever the order of the claim. */
		if (!rc && *n)
			qsort(p, *n, sizeof(*p), pick_cmp);
	}
	if (rc)
		goto out;
	*gpu = calloc(*n + 1, sizeof(**gpu));
	*mig = calloc(*n + 1, sizeof(**mig));
	if (!*gpu || !*mig) {
		rc = -ENOMEM;
		goto out;
	}
	for (k = 0; k < *n; k++) {
		(*gpu)[k] = p[k].gpu;
		(*mig)[k] = p[k].mig;
	}
out:
	if (rc) {
		free(*gpu);
		free(*mig);
		*gpu = *mig = NULL;
		*n = 0;
	}
	free(copy);
	free(p);
	return rc;
}

AFF_EXPORT void aff_visible_name(const struct aff_topo *t, int gpu, int mig, char *buf,
				 size_t len)
{
	const struct aff_gident *g = aff_gpu_ident(t, (size_t)gpu);
	const struct aff_gmig *m = mig >= 0 && g ? &g->migdev[mig] : NULL;

	if (!m)
		snprintf(buf, len, "%d", gpu);
	else if (m->uuid)
		snprintf(buf, len, "%.100s", m->uuid);
	else
		snprintf(buf, len, "MIG-%.60s/%d/%d", g->uuid ? g->uuid : "?", m->gi, m->ci);
}

AFF_EXPORT bool aff_visible_needs_libs(const char *visible)
{
	const char *p = visible;

	/*
	 * MIG instances are known to NVML only; UUIDs to the drivers' files too,
	 * but not inside every container: ask the libraries when a claim names
	 * either, not on every run.
	 */
	while (p && *p) {
		if (!strncasecmp(p, "MIG-", 4) || !strncasecmp(p, "GPU-", 4))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

AFF_EXPORT int aff_visible_within(const struct aff_topo *t, const char *claim, const char *own,
				  char *err, size_t errlen)
{
	int *cg = NULL, *cm = NULL, *og = NULL, *om = NULL;
	size_t cn = 0, on = 0, i, j;
	int rc;

	if (!own)
		return 1;
	rc = aff_visible_select(t, own, &og, &om, &on, err, errlen);
	if (!rc)
		rc = aff_visible_select(t, claim, &cg, &cm, &cn, err, errlen);
	for (i = 0; i < cn && !rc; i++) {
		/* A whole GPU of one's own holds its instances; an instance holds only itself. */
		for (j = 0; j < on; j++)
			if (og[j] == cg[i] && (om[j] < 0 || om[j] == cm[i]))
				break;
		if (j == on)
			rc = 1;
	}
	free(cg);
	free(cm);
	free(og);
	free(om);
	return rc < 0 ? rc : !rc;
}
