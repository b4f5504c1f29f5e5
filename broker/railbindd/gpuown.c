// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which GPUs a process may use, where the node says so itself: the cgroup
 * v1 devices controller (what Slurm's ConstrainDevices, and container
 * runtimes, write: deny everything, then allow "c 195:3 rwm" for each GPU
 * the job was given). A process cannot widen that list, unlike its own
 * CUDA_VISIBLE_DEVICES, so where it restricts GPUs it is the authority.
 *
 * A GPU is known by its device nodes: the NVIDIA driver's /dev/nvidiaN
 * (major 195, minor as the topology knows it, else from
 * /proc/driver/nvidia/gpus/PCI/information; CUDA
 * needs that node, a DRM node of the same GPU gives no compute), else its
 * DRM render nodes (AMD: ROCm opens /dev/dri/renderD*) and accel nodes
 * (Intel Gaudi and other compute accelerators). The cgroup v2 device
 * controller is a BPF program that cannot be read back: not an authority
 * here (docs/PROTOCOL.md says what is trusted then).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affinity.h"
#include "railbindd.h"

#define GPU_MAX_NODES 8
#define NVIDIA_MAJOR 195

struct gpu_nodes {
	size_t n;
	unsigned int major[GPU_MAX_NODES], minor[GPU_MAX_NODES];
};

struct rule {
	char type;		/* 'a', 'b' or 'c' */
	long major, minor;	/* -1: any */
	bool use;		/* read or write access */
};

struct gpuown_rules {
	size_t n;
	struct rule r[];
};

static struct gpu_nodes *nodes;
static size_t ngpu;
static bool known;	/* some GPU's device numbers are known */

static int read_dev(const char *path, unsigned int *major, unsigned int *minor)
{
	FILE *f = fopen(path, "re");
	int rc;

	if (!f)
		return -errno;
	rc = fscanf(f, "%u:%u", major, minor) == 2 ? 0 : -EINVAL;
	fclose(f);
	return rc;
}

static void add_node(struct gpu_nodes *g, unsigned int major, unsigned int minor)
{
	if (g->n < GPU_MAX_NODES) {
		g->major[g->n] = major;
		g->minor[g->n] = minor;
		g->n++;
	}
}

/* The NVIDIA driver's minor of the GPU at @pci, or -1. */
static long nvidia_minor(const char *root, const char *pci)
{
	char path[512], line[256];
	long minor = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/proc/driver/nvidia/gpus/%s/information", root, pci);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Device Minor:", 13)) {
			char *end;

			minor = strtol(line + 13, &end, 10);
			if (end == line + 13 || minor < 0 || minor > 254)
				minor = -1;
			break;
		}
	if (f)
		fclose(f);
	return minor;
}

/* /sys/bus/pci/devices/PCI/@class/@prefix*: the GPU's DRM or accel nodes. */
static void sysfs_nodes(const char *root, const char *pci, const char *class,
			const char *prefix, struct gpu_nodes *g)
{
	char path[512];
	struct dirent *e;
	unsigned int major = 0, minor = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/%s", root, pci, class);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/%s/%s/dev", root, pci,
			 class, e->d_name);
		if (read_dev(path, &major, &minor) == 0)
			add_node(g, major, minor);
	}
	if (d)
		closedir(d);
}

void gpuown_refresh(const struct aff_topo *t)
{
	const char *root = conf.root ? conf.root : "";
	size_t i;

	free(nodes);
	nodes = NULL;
	ngpu = 0;
	known = false;
	if (!t || !aff_topo_gpu_count(t))
		return;
	nodes = calloc(aff_topo_gpu_count(t), sizeof(*nodes));
	if (!nodes)
		return;
	ngpu = aff_topo_gpu_count(t);
	for (i = 0; i < ngpu; i++) {
		const char *pci = aff_topo_gpu_pci(t, i);
		int minor = aff_topo_gpu_minor(t, i);
		/* The minor the topology knows (NVML, a snapshot), else the driver's file. */
		long nv = minor >= 0 && minor <= 254 ? minor : nvidia_minor(root, pci);

		if (nv >= 0) {
			add_node(&nodes[i], NVIDIA_MAJOR, (unsigned int)nv);
		} else {
			sysfs_nodes(root, pci, "drm", "renderD", &nodes[i]);
			sysfs_nodes(root, pci, "accel", "accel", &nodes[i]);
		}
		known = known || nodes[i].n;
	}
}

static int number(const char **p, long *out)
{
	char *end;

	if (**p == '*') {
		*out = -1;
		(*p)++;
		return 0;
	}
	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	*out = strtol(*p, &end, 10);
	*p = end;
	return 0;
}

/*
 * devices.list: "TYPE MAJOR:MINOR ACCESS" per line. A cgroup that allows
 * by default shows the single line "a *:* rwm" (and hides its denials):
 * no restriction to speak of, so NULL.
 */
struct gpuown_rules *gpuown_rules_parse(const char *list)
{
	struct gpuown_rules *r;
	const char *p;
	size_t lines = 1;

	for (p = list; *p; p++)
		lines += *p == '\n';
	r = calloc(1, sizeof(*r) + lines * sizeof(r->r[0]));
	if (!r)
		return NULL;
	for (p = list; *p; p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n')) {
		struct rule *x = &r->r[r->n];
		const char *q = p;

		if (!strchr("abc", *q) || q[1] != ' ')
			continue;
		x->type = *q;
		q += 2;
		if (number(&q, &x->major) < 0 || *q++ != ':' || number(&q, &x->minor) < 0 ||
		    *q++ != ' ')
			continue;
		x->use = strcspn(q, "\n") > strcspn(q, "rw");
		if (x->type == 'a' && x->major < 0 && x->minor < 0 && x->use) {
			free(r);
			return NULL;
		}
		r->n++;
	}
	return r;
}

void gpuown_rules_free(struct gpuown_rules *r)
{
	free(r);
}

static bool allows(const struct gpuown_rules *r, unsigned int major, unsigned int minor)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct rule *x = &r->r[i];

		if (x->use && (x->type == 'a' || x->type == 'c') &&
		    (x->major < 0 || (unsigned long)x->major == major) &&
		    (x->minor < 0 || (unsigned long)x->minor == minor))
			return true;
	}
	return false;
}

int gpuown_allowed(const struct gpuown_rules *r, unsigned char *mask, size_t n)
{
	size_t i, k;

	if (!r || !known || n != ngpu)
		return 0;
	for (i = 0; i < n; i++) {
		mask[i] = 0;
		for (k = 0; k < nodes[i].n; k++)
			if (allows(r, nodes[i].major[k], nodes[i].minor[k]))
				mask[i] = 1;
	}
	return 1;
}

void gpuown_fini(void)
{
	free(nodes);
	nodes = NULL;
	ngpu = 0;
	known = false;
}
