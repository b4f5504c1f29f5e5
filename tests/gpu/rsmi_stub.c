// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A stand-in librocm_smi64.so.7 for tests on machines without AMD GPUs: the
 * ROCm SMI calls railbind makes, answered from the file $RB_FAKE_RSMI.
 *
 * Answer file, one fact per line ('#' comments); devices are numbered in
 * the order of their "dev" lines:
 *   init ok | init fail CODE
 *   dev PCI [unique=HEX] [minor=N] [compute=SPX] [memory=NPS1] [partition=K]
 *   xgmi PCI PCI HOPS WEIGHT             (both directions; others are PCIe)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answers.h"

#define EXPORT __attribute__((visibility("default")))

enum { OK = 0, INVALID_ARGS = 1, NOT_SUPPORTED = 2, INSUFFICIENT_SIZE = 3 };

struct dev {
	unsigned dom, bus, dv, fn, part;
	unsigned long long unique;
	int minor;
	char compute[16], memory[16];
};

static struct dev devs[64];
static unsigned ndev;
static int init_rc;
static struct {
	unsigned a, b;
	uint64_t hops, weight;
} xg[512];
static int nxg;

static int find(const char *pci, unsigned *out)
{
	unsigned d, b, v, f, i;

	if (sscanf(pci, "%x:%x:%x.%x", &d, &b, &v, &f) != 4)
		return -1;
	for (i = 0; i < ndev; i++)
		if (devs[i].dom == d && devs[i].bus == b && devs[i].dv == v && devs[i].fn == f &&
		    !devs[i].part) {
			*out = i;
			return 0;
		}
	return -1;
}

static void dev_line(char *rest)
{
	struct dev *d = &devs[ndev];
	char *w, *save = NULL;

	if (ndev == 64)
		return;
	memset(d, 0, sizeof(*d));
	d->minor = -1;
	w = strtok_r(rest, " \t\n", &save);
	if (!w || sscanf(w, "%x:%x:%x.%x", &d->dom, &d->bus, &d->dv, &d->fn) != 4)
		return;
	while ((w = strtok_r(NULL, " \t\n", &save))) {
		if (!strncmp(w, "unique=", 7))
			d->unique = strtoull(w + 7, NULL, 16);
		else if (!strncmp(w, "minor=", 6))
			d->minor = atoi(w + 6);
		else if (!strncmp(w, "compute=", 8))
			snprintf(d->compute, sizeof(d->compute), "%s", w + 8);
		else if (!strncmp(w, "memory=", 7))
			snprintf(d->memory, sizeof(d->memory), "%s", w + 7);
		else if (!strncmp(w, "partition=", 10))
			d->part = (unsigned)atoi(w + 10);
	}
	ndev++;
}

static void load(void)
{
	const char *path = getenv("RB_FAKE_RSMI");
	char line[512], *rest;
	FILE *f;

	ndev = 0;
	nxg = 0;
	init_rc = OK;
	f = path ? fopen(path, "r") : NULL;
	if (!f) {
		init_rc = 8;	/* RSMI_STATUS_INIT_ERROR */
		return;
	}
	while (answers_next(f, line, sizeof(line), &rest, &init_rc)) {
		if (!strcmp(line, "dev"))
			dev_line(rest);
		else if (!strcmp(line, "xgmi") && nxg < 512) {
			char a[32], b[32];
			unsigned long long h, wt;

			if (sscanf(rest, "%31s %31s %llu %llu", a, b, &h, &wt) == 4 &&
			    !find(a, &xg[nxg].a) && !find(b, &xg[nxg].b)) {
				xg[nxg].hops = h;
				xg[nxg++].weight = wt;
			}
		}
	}
	fclose(f);
}

EXPORT int rsmi_init(uint64_t flags)
{
	(void)flags;
	load();
	return init_rc;
}

EXPORT int rsmi_shut_down(void)
{
	return OK;
}

EXPORT int rsmi_status_string(int status, const char **out)
{
	*out = status == 8 ? "RSMI_STATUS_INIT_ERROR: An error occurred during initialization" :
			     "RSMI_STATUS_UNKNOWN_ERROR";
	return OK;
}

EXPORT int rsmi_num_monitor_devices(uint32_t *n)
{
	*n = ndev;
	return OK;
}

EXPORT int rsmi_dev_pci_id_get(uint32_t i, uint64_t *id)
{
	if (i >= ndev)
		return INVALID_ARGS;
	*id = (uint64_t)devs[i].dom << 32 | (uint64_t)(devs[i].part & 0xf) << 28 |
	      devs[i].bus << 8 | devs[i].dv << 3 | devs[i].fn;
	return OK;
}

EXPORT int rsmi_dev_unique_id_get(uint32_t i, uint64_t *id)
{
	if (i >= ndev)
		return INVALID_ARGS;
	if (!devs[i].unique)
		return NOT_SUPPORTED;
	*id = devs[i].unique;
	return OK;
}

EXPORT int rsmi_dev_drm_render_minor_get(uint32_t i, uint32_t *minor)
{
	if (i >= ndev || devs[i].minor < 0)
		return NOT_SUPPORTED;
	*minor = (uint32_t)devs[i].minor;
	return OK;
}

static int xgmi(uint32_t a, uint32_t b)
{
	int k;

	for (k = 0; k < nxg; k++)
		if ((xg[k].a == a && xg[k].b == b) || (xg[k].a == b && xg[k].b == a))
			return k;
	return -1;
}

EXPORT int rsmi_topo_get_link_type(uint32_t a, uint32_t b, uint64_t *hops, int *type)
{
	int k;

	if (a >= ndev || b >= ndev)
		return INVALID_ARGS;
	k = xgmi(a, b);
	*hops = a == b ? 0 : k >= 0 ? xg[k].hops : 2;
	*type = k >= 0 ? 2 : 1;
	return OK;
}

EXPORT int rsmi_topo_get_link_weight(uint32_t a, uint32_t b, uint64_t *weight)
{
	int k;

	if (a >= ndev || b >= ndev)
		return INVALID_ARGS;
	k = xgmi(a, b);
	*weight = a == b ? 0 : k >= 0 ? xg[k].weight : 40;
	return OK;
}

static int put(const char *v, char *buf, uint32_t len)
{
	if (!*v)
		return NOT_SUPPORTED;
	if (strlen(v) + 1 > len)
		return INSUFFICIENT_SIZE;
	memcpy(buf, v, strlen(v) + 1);
	return OK;
}

EXPORT int rsmi_dev_compute_partition_get(uint32_t i, char *buf, uint32_t len)
{
	return i < ndev ? put(devs[i].compute, buf, len) : INVALID_ARGS;
}

EXPORT int rsmi_dev_memory_partition_get(uint32_t i, char *buf, uint32_t len)
{
	return i < ndev ? put(devs[i].memory, buf, len) : INVALID_ARGS;
}
