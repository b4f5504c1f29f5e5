// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A stand-in libnvidia-ml.so.1 for tests on machines without NVIDIA GPUs:
 * the NVML calls railbind makes, answered from the file $RB_FAKE_NVML
 * (written by hand in tests/gpu/, or by rbgen --nvml for a described
 * machine). Built twice: whole, and with -DRB_NVML_OLD without the calls
 * drivers before R460/R535 lack (remote device type, MIG, C2C), so railbind
 * is seen handling a library that lacks newer symbols.
 *
 * Answer file, one fact per line ('#' comments):
 *   init ok | init fail CODE           nvmlInit_v2's return
 *   driver VERSION
 *   gpu PCI [uuid=U] [minor=N] [mig=enabled|disabled|unsupported|error]
 *           [c2c=enabled|disabled|unsupported]
 *   link PCI INDEX REMOTE|- gpu|switch|npu|unknown [down]
 *   mig PCI MIG-UUID GI CI
 *   ancestor PCI PCI LEVEL             nvmlGpuTopologyLevel_t: 0 10 20 30 40 50
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answers.h"

#define EXPORT __attribute__((visibility("default")))

enum { OK = 0, INVALID_ARGUMENT = 2, NOT_SUPPORTED = 3, NOT_FOUND = 6,
       INSUFFICIENT_SIZE = 7, UNKNOWN = 999 };

struct pci {
	char busid_legacy[16];
	unsigned domain, bus, device, device_id, subsystem_id;
	char busid[32];
};

struct link {
	unsigned index;
	char remote[16];
	int type, up;
};

struct dev {
	char pci[16];
	char uuid[96];
	int minor;
	int mig, c2c;		/* -1 unsupported, -2 error, 0 disabled, 1 enabled */
	struct link link[32];
	int nlink;
	struct dev *parent;	/* a MIG instance's GPU */
	int gi, ci;
	struct dev *migs[8];
	int nmig;
};

static struct dev devs[64], migs[64];
static int ndev, nmigdev, init_rc;
static char driver[64] = "550.00.00";
static struct {
	char a[16], b[16];
	int level;
} anc[256];
static int nanc;

/* "0000:07:00.0", "00000000:07:00.0", "7:0.0" -> "0000:07:00.0" */
static int canon(const char *s, char *out)
{
	unsigned d = 0, b, v, f;
	char c;

	if (sscanf(s, "%x:%x:%x.%x%c", &d, &b, &v, &f, &c) != 4 &&
	    (d = 0, sscanf(s, "%x:%x.%x%c", &b, &v, &f, &c) != 3))
		return -1;
	snprintf(out, 16, "%04x:%02x:%02x.%x", d & 0xffff, b & 0xff, v & 0x1f, f & 7);
	return 0;
}

static struct dev *by_pci(const char *s)
{
	char pci[16];
	int i;

	if (canon(s, pci))
		return NULL;
	for (i = 0; i < ndev; i++)
		if (!strcmp(devs[i].pci, pci))
			return &devs[i];
	return NULL;
}

static int state_of(const char *v)
{
	return !strcmp(v, "enabled") ? 1 : !strcmp(v, "disabled") ? 0 :
	       !strcmp(v, "error") ? -2 : -1;
}

static void gpu_line(char *rest)
{
	struct dev *d = &devs[ndev];
	char *w, *save = NULL;

	if (ndev == 64)
		return;
	memset(d, 0, sizeof(*d));
	d->minor = -1;
	d->mig = d->c2c = -1;
	w = strtok_r(rest, " \t\n", &save);
	if (!w || canon(w, d->pci))
		return;
	while ((w = strtok_r(NULL, " \t\n", &save))) {
		if (!strncmp(w, "uuid=", 5))
			snprintf(d->uuid, sizeof(d->uuid), "%s", w + 5);
		else if (!strncmp(w, "minor=", 6))
			d->minor = atoi(w + 6);
		else if (!strncmp(w, "mig=", 4))
			d->mig = state_of(w + 4);
		else if (!strncmp(w, "c2c=", 4))
			d->c2c = state_of(w + 4);
	}
	ndev++;
}

static void link_line(const char *rest)
{
	char pci[32], remote[32], type[16], down[16] = "";
	unsigned index;
	struct dev *d;
	struct link *l;

	if (sscanf(rest, "%31s %u %31s %15s %15s", pci, &index, remote, type, down) < 4 ||
	    !(d = by_pci(pci)) || d->nlink == 32)
		return;
	l = &d->link[d->nlink++];
	l->index = index;
	if (strcmp(remote, "-") && canon(remote, l->remote))
		l->remote[0] = '\0';
	l->type = !strcmp(type, "gpu") ? 0 : !strcmp(type, "npu") ? 1 :
		  !strcmp(type, "switch") ? 2 : 255;
	l->up = strcmp(down, "down") != 0;
}

static void mig_line(const char *rest)
{
	char pci[32], uuid[96];
	struct dev *d, *m;
	int gi, ci;

	if (sscanf(rest, "%31s %95s %d %d", pci, uuid, &gi, &ci) != 4 || !(d = by_pci(pci)) ||
	    nmigdev == 64 || d->nmig == 8)
		return;
	m = &migs[nmigdev++];
	memset(m, 0, sizeof(*m));
	snprintf(m->uuid, sizeof(m->uuid), "%s", uuid);
	m->parent = d;
	m->gi = gi;
	m->ci = ci;
	d->migs[d->nmig++] = m;
}

static void load(void)
{
	const char *path = getenv("RB_FAKE_NVML");
	char line[512], *rest;
	FILE *f;

	ndev = nmigdev = nanc = 0;
	init_rc = OK;
	f = path ? fopen(path, "r") : NULL;
	if (!f) {
		init_rc = 9;	/* NVML_ERROR_DRIVER_NOT_LOADED */
		return;
	}
	while (answers_next(f, line, sizeof(line), &rest, &init_rc)) {
		if (!strcmp(line, "driver"))
			sscanf(rest, "%63s", driver);
		else if (!strcmp(line, "gpu"))
			gpu_line(rest);
		else if (!strcmp(line, "link"))
			link_line(rest);
		else if (!strcmp(line, "mig"))
			mig_line(rest);
		else if (!strcmp(line, "ancestor") && nanc < 256) {
			char a[32], b[32];

			if (sscanf(rest, "%31s %31s %d", a, b, &anc[nanc].level) == 3 &&
			    !canon(a, anc[nanc].a) && !canon(b, anc[nanc].b))
				nanc++;
		}
	}
	fclose(f);
}

EXPORT int nvmlInit_v2(void)
{
	load();
	return init_rc;
}

EXPORT int nvmlShutdown(void)
{
	return OK;
}

EXPORT const char *nvmlErrorString(int rc)
{
	switch (rc) {
	case OK:
		return "Success";
	case 9:
		return "Driver Not Loaded";
	case 12:
		return "NVML Shared Library Not Found";
	case NOT_SUPPORTED:
		return "Not Supported";
	}
	return "Unknown Error";
}

EXPORT int nvmlSystemGetDriverVersion(char *buf, unsigned len)
{
	if (strlen(driver) + 1 > len)
		return INSUFFICIENT_SIZE;
	memcpy(buf, driver, strlen(driver) + 1);
	return OK;
}

EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char *busid, struct dev **out)
{
	struct dev *d = by_pci(busid);

	if (!d)
		return NOT_FOUND;
	*out = d;
	return OK;
}

EXPORT int nvmlDeviceGetUUID(struct dev *d, char *buf, unsigned len)
{
	if (!d->uuid[0])
		return NOT_SUPPORTED;
	if (strlen(d->uuid) + 1 > len)
		return INSUFFICIENT_SIZE;
	memcpy(buf, d->uuid, strlen(d->uuid) + 1);
	return OK;
}

EXPORT int nvmlDeviceGetMinorNumber(struct dev *d, unsigned *minor)
{
	if (d->minor < 0)
		return NOT_SUPPORTED;
	*minor = (unsigned)d->minor;
	return OK;
}

static const struct link *link_of(const struct dev *d, unsigned index, int *rc)
{
	int i;

	*rc = index >= 18 ? INVALID_ARGUMENT : NOT_SUPPORTED;
	for (i = 0; i < d->nlink && index < 18; i++)
		if (d->link[i].index == index) {
			*rc = OK;
			return &d->link[i];
		}
	return NULL;
}

EXPORT int nvmlDeviceGetNvLinkState(struct dev *d, unsigned index, int *active)
{
	const struct link *l;
	int rc;

	l = link_of(d, index, &rc);
	if (l)
		*active = l->up;
	return rc;
}

EXPORT int nvmlDeviceGetNvLinkRemotePciInfo_v2(struct dev *d, unsigned index, struct pci *pci)
{
	unsigned dom, bus, dv, fn;
	const struct link *l;
	int rc;

	l = link_of(d, index, &rc);
	if (!l)
		return rc;
	if (!l->remote[0] || sscanf(l->remote, "%x:%x:%x.%x", &dom, &bus, &dv, &fn) != 4)
		return NOT_SUPPORTED;
	memset(pci, 0, sizeof(*pci));
	pci->domain = dom;
	pci->bus = bus;
	pci->device = dv;
	snprintf(pci->busid, sizeof(pci->busid), "%08x:%02x:%02x.0", dom, bus, dv);
	snprintf(pci->busid_legacy, sizeof(pci->busid_legacy), "%04x:%02x:%02x.0", dom, bus, dv);
	return OK;
}

EXPORT int nvmlDeviceGetTopologyCommonAncestor(struct dev *a, struct dev *b, int *level)
{
	int i;

	for (i = 0; i < nanc; i++)
		if ((!strcmp(anc[i].a, a->pci) && !strcmp(anc[i].b, b->pci)) ||
		    (!strcmp(anc[i].a, b->pci) && !strcmp(anc[i].b, a->pci))) {
			*level = anc[i].level;
			return OK;
		}
	return NOT_SUPPORTED;
}

#ifndef RB_NVML_OLD
EXPORT int nvmlDeviceGetNvLinkRemoteDeviceType(struct dev *d, unsigned index, int *type)
{
	const struct link *l;
	int rc;

	l = link_of(d, index, &rc);
	if (l)
		*type = l->type;
	return rc;
}

EXPORT int nvmlDeviceGetMigMode(struct dev *d, unsigned *cur, unsigned *pending)
{
	if (d->mig == -1)
		return NOT_SUPPORTED;
	if (d->mig == -2)
		return UNKNOWN;
	*cur = *pending = (unsigned)d->mig;
	return OK;
}

EXPORT int nvmlDeviceGetMaxMigDeviceCount(struct dev *d, unsigned *count)
{
	if (d->mig != 1)
		return NOT_SUPPORTED;
	*count = 7;
	return OK;
}

EXPORT int nvmlDeviceGetMigDeviceHandleByIndex(struct dev *d, unsigned index, struct dev **out)
{
	if (d->mig != 1)
		return NOT_SUPPORTED;
	if (index >= (unsigned)d->nmig)
		return NOT_FOUND;
	*out = d->migs[index];
	return OK;
}

EXPORT int nvmlDeviceGetGpuInstanceId(struct dev *m, unsigned *id)
{
	if (!m->parent)
		return INVALID_ARGUMENT;
	*id = (unsigned)m->gi;
	return OK;
}

EXPORT int nvmlDeviceGetComputeInstanceId(struct dev *m, unsigned *id)
{
	if (!m->parent)
		return INVALID_ARGUMENT;
	*id = (unsigned)m->ci;
	return OK;
}

EXPORT int nvmlDeviceGetC2cModeInfoV(struct dev *d, unsigned *enabled)
{
	if (d->c2c == -1)
		return NOT_SUPPORTED;
	*enabled = (unsigned)d->c2c;
	return OK;
}
#endif
