// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Which GPU or RDMA device a process's open file is. The tables come from the
 * context's root: /proc/devices (the NVIDIA and UVM majors),
 * /proc/driver/nvidia/gpus/<pci>/information (the GPU behind each NVIDIA
 * minor), and the sysfs classes drm (render nodes), kfd and infiniband_verbs
 * (uverbsN: its RDMA device and PCI function). verify.h says how a file is
 * matched: by device number, or by path for stand-ins under an alternate root.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "verify.h"

/* Devices of a known kind that no table names (an NVIDIA minor without an
 * information file): a process holding one still uses a GPU or a NIC. */
static const struct aff_vdev unknown_nv = { .kind = AFF_VDEV_NV_GPU, .path = "/dev/nvidia?" };
static const struct aff_vdev unknown_drm = { .kind = AFF_VDEV_DRM, .path = "/dev/dri/renderD?" };
static const struct aff_vdev unknown_uverbs = { .kind = AFF_VDEV_UVERBS,
						.path = "/dev/infiniband/uverbs?" };
static const struct aff_vdev nv_ctl = { .kind = AFF_VDEV_NV_CTL, .path = "/dev/nvidiactl" };
static const struct aff_vdev nv_uvm = { .kind = AFF_VDEV_NV_UVM, .path = "/dev/nvidia-uvm" };
static const struct aff_vdev kfd = { .kind = AFF_VDEV_KFD, .path = "/dev/kfd" };

static int add(struct aff_vdevs *t, const struct aff_vdev *d)
{
	struct aff_vdev *v = realloc(t->v, (t->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	t->v = v;
	t->v[t->n++] = *d;
	return 0;
}

/* "MAJ:MIN" of a sysfs dev file; 0 when it does not parse. */
static dev_t parse_devnum(const char *s)
{
	unsigned maj, min;
	char c;

	if (sscanf(s, "%u:%u%c", &maj, &min, &c) != 2)
		return 0;
	return makedev(maj, min);
}

/* "dddd:bb:dd.f", the last component of a sysfs device link; "" if not one. */
static void link_pci(const char *link, char *pci, size_t len)
{
	char target[PATH_MAX];
	const char *base;
	unsigned d, b, s, f;
	char c;
	ssize_t n = readlink(link, target, sizeof(target) - 1);

	pci[0] = '\0';
	if (n <= 0)
		return;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (sscanf(base, "%4x:%2x:%2x.%1x%c", &d, &b, &s, &f, &c) == 4)
		snprintf(pci, len, "%04x:%02x:%02x.%x", d, b, s, f);
}

static void rooted(const struct aff_vdevs *t, char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, "%s%s", t->root ? t->root : "", rel);
}

static void load_majors(struct aff_vdevs *t)
{
	char path[PATH_MAX], line[256];
	bool chr = false;
	FILE *f;

	rooted(t, path, sizeof(path), "/proc/devices");
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned major;
		char name[64];

		if (!strncmp(line, "Character devices:", 18)) {
			chr = true;
			continue;
		}
		if (!strncmp(line, "Block devices:", 14))
			break;
		if (!chr || sscanf(line, "%u %63s", &major, name) != 2)
			continue;
		if (!strcmp(name, "nvidia-frontend") || (!strcmp(name, "nvidia") && !t->nv_major))
			t->nv_major = major;
		else if (!strcmp(name, "nvidia-uvm"))
			t->uvm_major = major;
	}
	fclose(f);
}

/* One /proc/driver/nvidia/gpus/<pci>/information: "Device Minor:", "GPU UUID:". */
static int load_nvidia_one(struct aff_vdevs *t, const char *dir, const char *name)
{
	struct aff_vdev d = { .kind = AFF_VDEV_NV_GPU };
	char path[PATH_MAX], line[256];
	long minor = -1;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%s/information", dir, name) >= (int)sizeof(path))
		return 0;
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':'), *end;

		if (!v)
			continue;
		*v++ = '\0';
		while (isspace((unsigned char)*v))
			v++;
		end = v + strlen(v);
		while (end > v && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (!strcmp(line, "Device Minor")) {
			minor = strtol(v, &end, 10);
			if (*end || minor < 0 || minor > 253)
				minor = -1;
		} else if (!strcmp(line, "GPU UUID")) {
			snprintf(d.uuid, sizeof(d.uuid), "%.63s", v);
		} else if (!strcmp(line, "Bus Location")) {
			snprintf(d.pci, sizeof(d.pci), "%.15s", v);
		}
	}
	fclose(f);
	if (minor < 0)
		return 0;
	if (!d.pci[0])
		snprintf(d.pci, sizeof(d.pci), "%.15s", name);
	/* The driver prints the domain as 4 digits, hex digits in lower case. */
	for (char *c = d.pci; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	snprintf(d.path, sizeof(d.path), "/dev/nvidia%ld", minor);
	if (t->nv_major)
		d.rdev = makedev(t->nv_major, (unsigned)minor);
	return add(t, &d);
}

static int load_nvidia(struct aff_vdevs *t)
{
	char dir[PATH_MAX];
	struct dirent *e;
	DIR *dp;
	int rc = 0;

	rooted(t, dir, sizeof(dir), "/proc/driver/nvidia/gpus");
	dp = opendir(dir);
	if (!dp)
		return 0;
	while (!rc && (e = readdir(dp)))
		if (e->d_name[0] != '.')
			rc = load_nvidia_one(t, dir, e->d_name);
	closedir(dp);
	return rc;
}

/*
 * The entries of a sysfs class directory whose names start with @prefix:
 * their "dev", "device" link and, for uverbs, "ibdev".
 */
static int load_class(struct aff_vdevs *t, const char *class, const char *prefix,
		      enum aff_vdev_kind kind, const char *devdir)
{
	char dir[PATH_MAX];
	struct dirent *e;
	DIR *dp;
	int rc = 0;

	snprintf(dir, sizeof(dir), "%s/sys/class/%s", t->root ? t->root : "", class);
	dp = opendir(dir);
	if (!dp)
		return 0;
	while (!rc && (e = readdir(dp))) {
		struct aff_vdev d = { .kind = kind };
		char path[PATH_MAX], val[128];

		if (strncmp(e->d_name, prefix, strlen(prefix)) ||
		    strlen(e->d_name) + strlen(devdir) + 2 > sizeof(d.path))
			continue;
		snprintf(d.path, sizeof(d.path), "%.16s/%.30s", devdir, e->d_name);
		if (snprintf(path, sizeof(path), "%s/%s/dev", dir, e->d_name) < (int)sizeof(path) &&
		    aff_read_text(path, val, sizeof(val), true) == 0)
			d.rdev = parse_devnum(val);
		if (snprintf(path, sizeof(path), "%s/%s/device", dir, e->d_name) < (int)sizeof(path))
			link_pci(path, d.pci, sizeof(d.pci));
		if (kind == AFF_VDEV_UVERBS &&
		    snprintf(path, sizeof(path), "%s/%s/ibdev", dir, e->d_name) < (int)sizeof(path) &&
		    aff_read_text(path, val, sizeof(val), true) == 0)
			snprintf(d.name, sizeof(d.name), "%.63s", val);
		rc = add(t, &d);
	}
	closedir(dp);
	return rc;
}

int aff_vdevs_load(const struct aff_ctx *ctx, struct aff_vdevs *t)
{
	char path[PATH_MAX], val[64];
	int rc;

	memset(t, 0, sizeof(*t));
	if (ctx->root) {
		t->root = strdup(ctx->root);
		if (!t->root)
			return -ENOMEM;
		t->rootlen = strlen(t->root);
	}
	load_majors(t);
	rc = load_nvidia(t);
	if (!rc)
		rc = load_class(t, "drm", "renderD", AFF_VDEV_DRM, "/dev/dri");
	if (!rc)
		rc = load_class(t, "infiniband_verbs", "uverbs", AFF_VDEV_UVERBS,
				"/dev/infiniband");
	if (!rc) {
		struct aff_vdev d = kfd;

		rooted(t, path, sizeof(path), "/sys/class/kfd/kfd/dev");
		if (aff_read_text(path, val, sizeof(val), true) == 0 && (d.rdev = parse_devnum(val)))
			rc = add(t, &d);
	}
	if (rc)
		aff_vdevs_clear(t);
	return rc;
}

void aff_vdevs_clear(struct aff_vdevs *t)
{
	free(t->v);
	free(t->root);
	memset(t, 0, sizeof(*t));
}

static bool digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

static const struct aff_vdev *by_rdev(const struct aff_vdevs *t, dev_t rdev)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->v[i].rdev && t->v[i].rdev == rdev)
			return &t->v[i];
	if (t->nv_major && major(rdev) == t->nv_major)
		return minor(rdev) >= 254 ? &nv_ctl : &unknown_nv;
	if (t->uvm_major && major(rdev) == t->uvm_major)
		return &nv_uvm;
	return NULL;
}

static const struct aff_vdev *by_path(const struct aff_vdevs *t, const char *rel)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].path, rel))
			return &t->v[i];
	if (!strncmp(rel, "/dev/nvidia", 11) && digits(rel + 11))
		return &unknown_nv;
	if (!strcmp(rel, "/dev/nvidiactl") || !strcmp(rel, "/dev/nvidia-modeset"))
		return &nv_ctl;
	if (!strcmp(rel, "/dev/nvidia-uvm"))
		return &nv_uvm;
	if (!strcmp(rel, "/dev/kfd"))
		return &kfd;
	if (!strncmp(rel, "/dev/dri/renderD", 16) && digits(rel + 16))
		return &unknown_drm;
	if (!strncmp(rel, "/dev/infiniband/uverbs", 22) && digits(rel + 22))
		return &unknown_uverbs;
	return NULL;
}

const struct aff_vdev *aff_vdevs_match(const struct aff_vdevs *t, const char *target,
				       const struct stat *st)
{
	const struct aff_vdev *d;
	const char *rel = target;
	bool inside = t->root && !strncmp(target, t->root, t->rootlen) &&
		      target[t->rootlen] == '/';

	if (S_ISCHR(st->st_mode)) {
		d = by_rdev(t, st->st_rdev);
		if (d)
			return d;
	} else if (!S_ISREG(st->st_mode) || !inside) {
		/* On the real root only device nodes are devices. */
		return NULL;
	}
	if (inside)
		rel = target + t->rootlen;
	return by_path(t, rel);
}
