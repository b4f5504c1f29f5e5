// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * GPU identity from the drivers' own files, and what the library-backed
 * discovery (annotate_gpu_nvml.c, annotate_gpu_rocm.c) shares: the GPU objects of a vendor in
 * PCI order and adding their infos.
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

#include "annotate_gpu.h"
#include "gpu_ident.h"

static bool gpu_class(unsigned class_id)
{
	return (class_id >> 8) == 0x03 || (class_id >> 8) == 0x12;
}

static int obj_cmp(const void *a, const void *b)
{
	return strcmp(((const struct aff_gpu_obj *)a)->pci, ((const struct aff_gpu_obj *)b)->pci);
}

int aff_gpu_objs(hwloc_topology_t topo, int vendor, struct aff_gpu_obj **out, size_t *n)
{
	hwloc_obj_t o = NULL;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	while ((o = hwloc_get_next_pcidev(topo, o))) {
		const struct hwloc_pcidev_attr_s *pa = &o->attr->pcidev;

		if (pa->vendor_id != vendor || !gpu_class(pa->class_id))
			continue;
		if (*n == cap) {
			struct aff_gpu_obj *p;

			cap = cap ? 2 * cap : 8;
			p = realloc(*out, cap * sizeof(*p));

			if (!p) {
				free(*out);
				*out = NULL;
				*n = 0;
				return -ENOMEM;
			}
			*out = p;
		}
		(*out)[*n].obj = o;
		snprintf((*out)[*n].pci, sizeof((*out)[*n].pci), "%04x:%02x:%02x.%x", pa->domain,
			 pa->bus, pa->dev, pa->func);
		(*n)++;
	}
	/* Fixed-width lower-case hex: string order is PCI order. */
	if (*n)
		qsort(*out, *n, sizeof(**out), obj_cmp);
	return 0;
}

hwloc_obj_t aff_gpu_obj_at(const struct aff_gpu_obj *g, size_t n, const char *pci)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(g[i].pci, pci))
			return g[i].obj;
	return NULL;
}

int aff_gpu_info(hwloc_obj_t o, const char *name, const char *value)
{
	if (hwloc_obj_get_info_by_name(o, name))
		return 0;
	return aff_gpu_info_add(o, name, value);
}

int aff_gpu_info_add(hwloc_obj_t o, const char *name, const char *value)
{
	return hwloc_obj_add_info(o, name, value) < 0 ? -ENOMEM : 0;
}

void aff_gpu_note(char *note, size_t len, const char *text)
{
	size_t used = strlen(note);

	if (used + 1 < len)
		snprintf(note + used, len - used, "%s%s", used ? "; " : "", text);
}

/* A small file, NUL-terminated; -errno. */
static int slurp(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	while (got + 1 < len && (r = read(fd, buf + got, len - 1 - got)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			close(fd);
			return (int)r;
		}
		got += (size_t)r;
	}
	close(fd);
	buf[got] = '\0';
	return 0;
}

/* "Key:   value" of NVIDIA's information file: the value's first word. */
static bool field(const char *text, const char *key, char *out, size_t len)
{
	const char *p = text;
	size_t n = 0;

	while ((p = strstr(p, key))) {
		if (p == text || p[-1] == '\n')
			break;
		p++;
	}
	if (!p)
		return false;
	for (p += strlen(key); *p == ' ' || *p == '\t'; p++)
		;
	while (isgraph((unsigned char)p[n]) && n + 1 < len)
		n++;
	memcpy(out, p, n);
	out[n] = '\0';
	return n > 0 && !isgraph((unsigned char)p[n]);
}

static int nvidia_files(hwloc_obj_t o, const char *root, const char *pci)
{
	char path[PATH_MAX], text[2048], v[96];
	char *end;
	long minor;
	int rc;

	snprintf(path, sizeof(path), "%s/proc/driver/nvidia/gpus/%s/information", root, pci);
	if (slurp(path, text, sizeof(text)) < 0)
		return 0;
	if (field(text, "GPU UUID:", v, sizeof(v)) && !strncmp(v, "GPU-", 4)) {
		rc = aff_gpu_info(o, AFF_INFO_GPU_UUID, v);
		if (rc < 0)
			return rc;
	}
	if (field(text, "Device Minor:", v, sizeof(v))) {
		errno = 0;
		minor = strtol(v, &end, 10);
		if (!errno && !*end && minor >= 0 && minor <= 1 << 20)
			return aff_gpu_info(o, AFF_INFO_GPU_MINOR, v);
	}
	return 0;
}

/* renderD128 under the device's drm/ directory: 128. */
static long render_minor(const char *dir)
{
	struct dirent *e;
	long minor = -1;
	DIR *d = opendir(dir);

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "renderD", 7) && isdigit((unsigned char)e->d_name[7]))
			minor = strtol(e->d_name + 7, NULL, 10);
	closedir(d);
	return minor;
}

/*
 * amdgpu's unique_id is the GPU's 64-bit serial in hex; ROCR_VISIBLE_DEVICES
 * and rocminfo spell it GPU-<16 hex digits>.
 */
static int amd_files(hwloc_obj_t o, const char *root, const char *pci)
{
	char path[PATH_MAX], text[64], v[32];
	unsigned long long id;
	char *end;
	long minor;
	int rc;

	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/unique_id", root, pci);
	if (slurp(path, text, sizeof(text)) == 0) {
		text[strcspn(text, "\n")] = '\0';
		errno = 0;
		id = strtoull(text, &end, 16);
		if (!errno && *text && !*end && id) {
			snprintf(v, sizeof(v), "GPU-%016llx", id);
			rc = aff_gpu_info(o, AFF_INFO_GPU_UUID, v);
			if (rc < 0)
				return rc;
		}
	}
	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%s/drm", root, pci);
	minor = render_minor(path);
	if (minor >= 0) {
		snprintf(v, sizeof(v), "%ld", minor);
		return aff_gpu_info(o, AFF_INFO_GPU_MINOR, v);
	}
	return 0;
}

int aff_discover_gpu_files(hwloc_topology_t topo, const char *root)
{
	struct aff_gpu_obj *g;
	size_t n, i;
	int rc, vendor;

	for (vendor = 0; vendor < 2; vendor++) {
		rc = aff_gpu_objs(topo, vendor ? 0x1002 : 0x10de, &g, &n);
		for (i = 0; i < n && !rc; i++)
			rc = vendor ? amd_files(g[i].obj, root, g[i].pci) :
				      nvidia_files(g[i].obj, root, g[i].pci);
		free(g);
		if (rc < 0)
			return rc;
	}
	return 0;
}
