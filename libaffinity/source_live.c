// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Live discovery: hwloc loads the node, then sysfs and PCI config space fill in what
 * hwloc does not record (negotiated vs. capable link, raw numa_node, IOMMU domain type,
 * ACS control, PCIe port type, RDMA port state and rate, peer-memory support) as
 * Railbind* info attributes.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hwloc.h>

#include "annotate_gpu.h"
#include "annotate_health.h"
#include "discover.h"
#include "internal.h"
#include "pcicfg.h"
#include "source_kmod.h"

struct annotator {
	const char *root;	/* "" for the real root, else a prefix without trailing '/' */
	size_t rootlen;
	bool real_root;
	struct aff_discover_report *rep;
	struct aff_kmod_snapshot *kmod;	/* railbind.ko's view, NULL without the module */
	struct aff_health health;	/* railbindd's counters of this boot */
	bool have_health;
	unsigned unreadable;		/* AFF_UNREADABLE_* of the object being annotated */
};

/* What could not be read on one object, recorded so a snapshot's audit knows too. */
#define UNREADABLE_ACS		1u
#define UNREADABLE_LINK		2u
#define UNREADABLE_NUMA		4u
#define UNREADABLE_IOMMU	8u

/* ${root}/<fmt...>; -ENAMETOOLONG rather than a silently truncated path. */
__attribute__((format(printf, 4, 5)))
static int mkpath(const struct annotator *an, char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (an->rootlen >= len)
		return -ENAMETOOLONG;
	memcpy(buf, an->root, an->rootlen);
	va_start(ap, fmt);
	n = vsnprintf(buf + an->rootlen, len - an->rootlen, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= len - an->rootlen)
		return -ENAMETOOLONG;
	return 0;
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Read a small text file, trailing whitespace stripped. */
static int read_text(const char *path, char *buf, size_t len)
{
	ssize_t n;
	size_t got = 0;
	int fd, ret = 0;

	/* A string even on failure. */
	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (ret)
		return ret;
	buf[got] = '\0';
	while (got && isspace((unsigned char)buf[got - 1]))
		buf[--got] = '\0';
	return 0;
}

static bool has_info(hwloc_obj_t obj, const char *name)
{
	return hwloc_obj_get_info_by_name(obj, name) != NULL;
}

static int add_info(hwloc_obj_t obj, const char *name, const char *value)
{
	if (has_info(obj, name))
		return 0;
	return hwloc_obj_add_info(obj, name, value) < 0 ? -ENOMEM : 0;
}

/*
 * "16.0 GT/s PCIe" (>= 5.x kernels) or "8 GT/s" (older) -> "16.0" / "8.0": one spelling
 * across kernels so the model can compare strings and numbers alike. "Unknown" -> error.
 */
static int parse_link_speed(const char *s, char *out, size_t outlen)
{
	size_t i = 0;
	bool dot = false;

	/* The analyzer takes isspace('\0') for true past read_text's empty string. */
	// NOLINTNEXTLINE(clang-analyzer-core.uninitialized.ArraySubscript)
	while (isspace((unsigned char)*s))
		s++;
	while (isdigit((unsigned char)s[i]) || (s[i] == '.' && !dot && i > 0)) {
		if (s[i] == '.')
			dot = true;
		i++;
	}
	if (!i || s[i - 1] == '.' || strncmp(s + i, " GT/s", 5))
		return -EINVAL;
	if (i + 3 > outlen)
		return -ERANGE;
	memcpy(out, s, i);
	out[i] = '\0';
	if (!dot)
		memcpy(out + i, ".0", sizeof(".0"));	/* fits: i + 3 <= outlen */
	return 0;
}

/* "16" (some tools print "x16") -> "16". */
static int parse_link_width(const char *s, char *out, size_t outlen)
{
	char *end;
	unsigned long w;

	while (isspace((unsigned char)*s))
		s++;
	if (*s == 'x')
		s++;
	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	w = strtoul(s, &end, 10);
	if (errno || *end || w > 64)
		return -EINVAL;
	snprintf(out, outlen, "%lu", w);
	return 0;
}

/*
 * The kernel creates the link files only for PCI Express functions, so when all four are
 * absent this is conventional PCI (no link to judge), not an unreadable link.
 */
static int annotate_link(struct annotator *an, hwloc_obj_t obj, const char *dev)
{
	static const struct {
		const char *file, *info;
		bool speed;
	} links[] = {
		{ "current_link_speed", AFF_INFO_LINK_SPEED, true },
		{ "max_link_speed", AFF_INFO_LINK_SPEED_CAP, true },
		{ "current_link_width", AFF_INFO_LINK_WIDTH, false },
		{ "max_link_width", AFF_INFO_LINK_WIDTH_CAP, false },
	};
	unsigned tried = 0, absent = 0, bad = 0;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		char path[PATH_MAX], raw[64], val[16];

		if (has_info(obj, links[i].info))
			continue;
		tried++;
		if (snprintf(path, sizeof(path), "%s/%s", dev, links[i].file) >= (int)sizeof(path)) {
			bad++;
			continue;
		}
		ret = read_text(path, raw, sizeof(raw));
		if (ret == -ENOENT) {
			absent++;
			continue;
		}
		if (ret == 0)
			ret = links[i].speed ? parse_link_speed(raw, val, sizeof(val)) :
					       parse_link_width(raw, val, sizeof(val));
		if (ret < 0) {
			bad++;
			continue;
		}
		ret = add_info(obj, links[i].info, val);
		if (ret < 0)
			return ret;
	}
	/* A function hwloc saw but sysfs lacks altogether is unknown, not conventional. */
	if (bad || (absent && absent < tried) || (absent && !exists(dev))) {
		an->rep->link_unreadable++;
		an->unreadable |= UNREADABLE_LINK;
	}
	return 0;
}

static int annotate_numa(struct annotator *an, hwloc_obj_t obj, const char *dev)
{
	char path[PATH_MAX], raw[32], val[16];
	char *end;
	long node;

	if (has_info(obj, AFF_INFO_NUMA_NODE))
		return 0;
	if (snprintf(path, sizeof(path), "%s/numa_node", dev) >= (int)sizeof(path) ||
	    read_text(path, raw, sizeof(raw)) < 0)
		goto unreadable;
	errno = 0;
	node = strtol(raw, &end, 10);
	if (errno || end == raw || *end || node < -1 || node > INT_MAX)
		goto unreadable;
	/* -1 is kept: "unknown locality" is information the audit reports on. */
	snprintf(val, sizeof(val), "%ld", node);
	return add_info(obj, AFF_INFO_NUMA_NODE, val);

unreadable:
	an->rep->numa_unreadable++;
	an->unreadable |= UNREADABLE_NUMA;
	return 0;
}

static bool valid_token(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isgraph((unsigned char)*s))
			return false;
	return true;
}

static int annotate_iommu(struct annotator *an, hwloc_obj_t obj, const char *dev)
{
	char path[PATH_MAX], val[32];

	if (has_info(obj, AFF_INFO_IOMMU_GROUP_TYPE))
		return 0;
	if (snprintf(path, sizeof(path), "%s/iommu_group", dev) >= (int)sizeof(path))
		goto unreadable;
	/* No group: no IOMMU translating for this device, which is not an error. */
	if (!exists(path))
		return 0;
	/* "type" appeared in Linux 5.11; older kernels count as unreadable. */
	if (strlen(path) + sizeof("/type") > sizeof(path))
		goto unreadable;
	memcpy(path + strlen(path), "/type", sizeof("/type"));
	if (read_text(path, val, sizeof(val)) < 0 || !valid_token(val))
		goto unreadable;
	return add_info(obj, AFF_INFO_IOMMU_GROUP_TYPE, val);

unreadable:
	an->rep->iommu_unreadable++;
	an->unreadable |= UNREADABLE_IOMMU;
	return 0;
}

/* Reads up to the full extended space; *size gets what the file claims to hold. */
static int read_config(const char *path, uint8_t *buf, size_t len, size_t *got, off_t *size)
{
	struct stat st;
	ssize_t n;
	int fd, ret = 0;

	*got = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out;
	}
	*size = st.st_size;
	while (*got < len) {
		n = pread(fd, buf + *got, len - *got, (off_t)*got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		if (n == 0)
			break;
		*got += (size_t)n;
	}
out:
	close(fd);
	return ret;
}

/*
 * The module reads config space in the kernel, so its snapshot has ACS control for
 * readers who may not read beyond 64 bytes of sysfs "config". 1: taken, 0: the module
 * says the port has no ACS capability, -ENOENT: the module does not know the port.
 */
static int acs_from_kmod(struct annotator *an, hwloc_obj_t obj)
{
	const struct hwloc_pcidev_attr_s *pci = &obj->attr->bridge.upstream.pci;
	const struct aff_kmod_rec *rec;
	const char *ctl;
	char bdf[16], *end;
	size_t i = 0;
	unsigned long v;
	int ret;

	if (!an->kmod)
		return -ENOENT;
	snprintf(bdf, sizeof(bdf), "%04x:%02x:%02x.%01x", pci->domain, pci->bus, pci->dev,
		 pci->func);
	while ((rec = aff_kmod_snapshot_next(an->kmod, "dev", &i))) {
		if (!aff_kmod_rec_get(rec, "pci") || strcmp(aff_kmod_rec_get(rec, "pci"), bdf))
			continue;
		ctl = aff_kmod_rec_get(rec, "acs_ctl");
		if (!ctl)
			return -ENOENT;
		if (!strcmp(ctl, "-"))
			return 0;
		errno = 0;
		v = strtoul(ctl, &end, 16);
		if (errno || *end || v > 0xffff)
			return -ENOENT;
		snprintf(bdf, sizeof(bdf), "0x%04lx", v);
		ret = add_info(obj, AFF_INFO_ACS_CTL, bdf);
		return ret < 0 ? ret : 1;
	}
	return -ENOENT;
}

/*
 * Only ports (PCI-to-PCI bridges) are looked at: ACS on the bridges between a GPU and
 * its NIC decides whether peer-to-peer traffic is redirected to the root complex.
 */
static int annotate_acs(struct annotator *an, hwloc_obj_t obj, const char *dev)
{
	uint8_t cfg[AFF_PCICFG_EXT_SIZE];
	char path[PATH_MAX], val[8];
	size_t got;
	off_t size = 0;
	uint16_t ctl;
	int ret;

	if (has_info(obj, AFF_INFO_ACS_CTL))
		return 0;
	if (snprintf(path, sizeof(path), "%s/config", dev) >= (int)sizeof(path) ||
	    read_config(path, cfg, sizeof(cfg), &got, &size) < 0)
		goto unreadable;
	/*
	 * Unprivileged readers get the first 64 bytes of a 4 KiB file. A conventional
	 * PCI function has a 256-byte file and no extended space, hence no ACS.
	 */
	if (got < AFF_PCICFG_STD_SIZE || (off_t)got < size)
		goto unreadable;
	if (got == AFF_PCICFG_STD_SIZE)
		return 0;
	ret = aff_pcicfg_read_acs(cfg, got, NULL, &ctl);
	if (ret == -ENOENT)
		return 0;
	if (ret < 0)
		goto unreadable;
	snprintf(val, sizeof(val), "0x%04x", ctl);
	return add_info(obj, AFF_INFO_ACS_CTL, val);

unreadable:
	ret = acs_from_kmod(an, obj);
	if (ret != -ENOENT)
		return ret < 0 ? ret : 0;
	an->rep->acs_unreadable++;
	an->unreadable |= UNREADABLE_ACS;
	return 0;
}

/* RailbindPortType's word for a PCIe device/port type; NULL where it has none. */
static const char *port_word(int type, bool bridge)
{
	switch (type) {
	case AFF_PCI_EXP_ENDPOINT:
		return "endpoint";
	case AFF_PCI_EXP_LEGACY_END:
		return "legacy";
	case AFF_PCI_EXP_ROOT_PORT:
		return "root";
	case AFF_PCI_EXP_UPSTREAM:
		return "upstream";
	case AFF_PCI_EXP_DOWNSTREAM:
		return "downstream";
	case AFF_PCI_EXP_PCIE_PCI_BRIDGE:
	case AFF_PCI_EXP_PCI_PCIE_BRIDGE:
		return "bridge";
	case AFF_PCI_EXP_RC_END:
		return "rciep";
	case -ENOENT:
		/* Conventional PCI: a bridge is a bridge, an endpoint says nothing. */
		return bridge ? "bridge" : NULL;
	default:
		return NULL;
	}
}

/* The module's type= word (kmod/ABI.md) as RailbindPortType's. */
static const char *kmod_port_word(const char *type)
{
	static const char *const map[][2] = {
		{ "root_port", "root" }, { "upstream", "upstream" },
		{ "downstream", "downstream" }, { "endpoint", "endpoint" },
		{ "legacy_endpoint", "legacy" }, { "rc_endpoint", "rciep" },
		{ "pcie_pci_bridge", "bridge" }, { "pci_pcie_bridge", "bridge" },
		{ "pci_bridge", "bridge" },
	};
	size_t i;

	for (i = 0; type && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(type, map[i][0]))
			return map[i][1];
	return NULL;
}

static const char *port_type_from_kmod(const struct annotator *an, const char *bdf)
{
	const struct aff_kmod_rec *rec;
	size_t i = 0;

	if (!an->kmod)
		return NULL;
	while ((rec = aff_kmod_snapshot_next(an->kmod, "dev", &i)))
		if (aff_kmod_rec_get(rec, "pci") && !strcmp(aff_kmod_rec_get(rec, "pci"), bdf))
			return kmod_port_word(aff_kmod_rec_get(rec, "type"));
	return NULL;
}

/*
 * PCIe port type, which tells a switch's upstream port from the root and
 * downstream ports around it. Config space has it for root (the capability
 * list lies past the 64 bytes others may read), else the module; else the
 * attribute is left out and the model counts switches by NCCL's rule.
 */
static int annotate_port_type(struct annotator *an, hwloc_obj_t obj, const char *dev,
			      const char *bdf)
{
	uint8_t cfg[AFF_PCICFG_STD_SIZE];
	char path[PATH_MAX];
	const char *word = NULL;
	size_t got = 0;
	off_t size = 0;
	int type;

	if (has_info(obj, AFF_INFO_PORT_TYPE))
		return 0;
	if (snprintf(path, sizeof(path), "%s/config", dev) < (int)sizeof(path) &&
	    read_config(path, cfg, sizeof(cfg), &got, &size) == 0) {
		type = aff_pcicfg_port_type(cfg, got);
		if (type != -ENODATA && type != -EIO)
			word = port_word(type, aff_pcicfg_is_bridge(cfg, got) == 1);
	}
	if (!word)
		word = port_type_from_kmod(an, bdf);
	return word ? add_info(obj, AFF_INFO_PORT_TYPE, word) : 0;
}

/* RailbindUnreadable="acs,link,...": the audit says which checks it could not decide. */
static int add_unreadable(hwloc_obj_t obj, unsigned bits)
{
	/* In the order of the UNREADABLE_ bits above. */
	static const char *const names[] = { "acs", "link", "numa", "iommu" };
	char val[32] = "";
	size_t i, used = 0;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (bits & (1u << i))
			used += (size_t)snprintf(val + used, sizeof(val) - used, "%s%s",
						 used ? "," : "", names[i]);
	return add_info(obj, AFF_INFO_UNREADABLE, val);
}

static bool is_pci_function(hwloc_obj_t obj)
{
	if (obj->type == HWLOC_OBJ_PCI_DEVICE)
		return true;
	/* Host bridges are hwloc's own construct, with no sysfs device behind them. */
	return obj->type == HWLOC_OBJ_BRIDGE &&
	       obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI;
}

static int annotate_pci(struct annotator *an, hwloc_obj_t obj)
{
	const struct hwloc_pcidev_attr_s *pci = obj->type == HWLOC_OBJ_BRIDGE ?
		&obj->attr->bridge.upstream.pci : &obj->attr->pcidev;
	char dev[PATH_MAX], bdf[16];
	int ret;

	snprintf(bdf, sizeof(bdf), "%04x:%02x:%02x.%01x", pci->domain, pci->bus, pci->dev,
		 pci->func);
	ret = mkpath(an, dev, sizeof(dev), "/sys/bus/pci/devices/%s", bdf);
	if (ret < 0)
		return ret;
	an->unreadable = 0;
	ret = annotate_link(an, obj, dev);
	if (!ret)
		ret = annotate_numa(an, obj, dev);
	if (!ret)
		ret = annotate_iommu(an, obj, dev);
	if (!ret && obj->type == HWLOC_OBJ_BRIDGE)
		ret = annotate_acs(an, obj, dev);
	if (!ret)
		ret = annotate_port_type(an, obj, dev, bdf);
	if (!ret && an->unreadable)
		ret = add_unreadable(obj, an->unreadable);
	if (!ret)
		ret = aff_discover_health_pci(obj, dev, strrchr(dev, '/') + 1,
					      an->have_health ? &an->health : NULL, an->kmod);
	return ret;
}

static int port_filter(const struct dirent *d)
{
	const char *s = d->d_name;

	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

static int port_cmp(const struct dirent **a, const struct dirent **b)
{
	unsigned long x = strtoul((*a)->d_name, NULL, 10), y = strtoul((*b)->d_name, NULL, 10);

	return (x > y) - (x < y);
}

/* "4: ACTIVE" -> "ACTIVE" */
static const char *parse_port_state(const char *s)
{
	const char *p = strstr(s, ": ");

	return p ? p + 2 : s;
}

/* "400 Gb/sec (4X NDR)" -> "400"; "2.5 Gb/sec (1X SDR)" -> "2.5" */
static int parse_port_rate(const char *s, char *out, size_t outlen)
{
	size_t i = 0;

	while (isdigit((unsigned char)s[i]) || (s[i] == '.' && i > 0))
		i++;
	if (!i || s[i - 1] == '.' || s[i] != ' ' || i >= outlen)
		return -EINVAL;
	memcpy(out, s, i);
	out[i] = '\0';
	return 0;
}

static int annotate_ofed_port(struct annotator *an, hwloc_obj_t obj, const char *ports,
			      const char *port)
{
	char path[PATH_MAX], raw[64], name[48], val[32];
	unsigned long p = strtoul(port, NULL, 10);
	int ret;

	if (p > UINT_MAX)
		return 0;
	snprintf(name, sizeof(name), AFF_INFO_PORT_STATE_FMT, (unsigned)p);
	if (!has_info(obj, name) &&
	    snprintf(path, sizeof(path), "%s/%s/state", ports, port) < (int)sizeof(path) &&
	    read_text(path, raw, sizeof(raw)) == 0 && valid_token(parse_port_state(raw))) {
		ret = add_info(obj, name, parse_port_state(raw));
		if (ret < 0)
			return ret;
	}
	snprintf(name, sizeof(name), AFF_INFO_PORT_RATE_FMT, (unsigned)p);
	if (!has_info(obj, name) &&
	    snprintf(path, sizeof(path), "%s/%s/rate", ports, port) < (int)sizeof(path) &&
	    read_text(path, raw, sizeof(raw)) == 0 &&
	    parse_port_rate(raw, val, sizeof(val)) == 0) {
		ret = add_info(obj, name, val);
		if (ret < 0)
			return ret;
	}
	if (snprintf(path, sizeof(path), "%s/%s", ports, port) >= (int)sizeof(path))
		return 0;
	return aff_discover_health_port(obj, path, (unsigned)p,
					an->have_health ? &an->health : NULL);
}

static int annotate_ofed(struct annotator *an, hwloc_obj_t obj)
{
	struct dirent **ents;
	char ports[PATH_MAX];
	int n, i, ret;

	/* The name becomes a path component: refuse anything that could leave the tree. */
	if (!obj->name || !*obj->name || obj->name[0] == '.' || strchr(obj->name, '/'))
		return 0;
	ret = mkpath(an, ports, sizeof(ports), "/sys/class/infiniband/%s/ports", obj->name);
	if (ret < 0)
		return ret;
	n = scandir(ports, &ents, port_filter, port_cmp);
	if (n < 0)
		return 0;
	ret = 0;
	for (i = 0; i < n; i++) {
		if (!ret)
			ret = annotate_ofed_port(an, obj, ports, ents[i]->d_name);
		free(ents[i]);
	}
	free(ents);
	return ret;
}

static bool is_openfabrics(hwloc_obj_t obj)
{
	return obj->type == HWLOC_OBJ_OS_DEVICE &&
	       (obj->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS ||
		(obj->subtype && !strcmp(obj->subtype, "OpenFabrics")));
}

static bool rooted_exists(const struct annotator *an, const char *rel)
{
	char path[PATH_MAX];

	return mkpath(an, path, sizeof(path), "%s", rel) == 0 && exists(path);
}

static int rooted_read(const struct annotator *an, const char *rel, char *buf, size_t len)
{
	char path[PATH_MAX];
	int ret = mkpath(an, path, sizeof(path), "%s", rel);

	return ret < 0 ? ret : read_text(path, buf, len);
}

/*
 * Major version of the NVIDIA driver when it is the open kernel module flavour, from
 * "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.104.05  Release Build ...";
 * 0 when proprietary, absent or unparsable.
 */
static unsigned long nvidia_open_major(const struct annotator *an)
{
	char buf[512];
	const char *p;

	if (rooted_read(an, "/proc/driver/nvidia/version", buf, sizeof(buf)) < 0)
		return 0;
	p = strstr(buf, "Open Kernel Module");
	if (!p)
		return 0;
	for (p += strlen("Open Kernel Module"); *p && *p != '\n'; p++) {
		char *end;
		unsigned long major;

		if (!isdigit((unsigned char)*p) || !isspace((unsigned char)p[-1]))
			continue;
		major = strtoul(p, &end, 10);
		if (*end == '.')
			return major;
	}
	return 0;
}

static bool kernel_at_least(const struct annotator *an, unsigned major, unsigned minor)
{
	char buf[128];
	unsigned ma, mi;

	if (rooted_read(an, "/proc/sys/kernel/osrelease", buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%u.%u", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

/*
 * GPUDirect RDMA needs a peer-memory path between the GPU driver and the RDMA stack:
 * - "nvidia_peermem": the nvidia_peermem (or legacy MLNX nv_peer_mem) module is loaded;
 * - "dmabuf": upstream dma-buf import in the RDMA core (ib_umem_dmabuf, Linux 5.12),
 *   the verbs character devices present (ib_uverbs), and a GPU driver that exports
 *   device memory as dma-buf: amdgpu, or NVIDIA's open kernel modules from r515 on
 *   (the proprietary flavour does not support it);
 * - "none" otherwise.
 */
static const char *peer_memory(const struct annotator *an)
{
	bool verbs, gpu;

	if (rooted_exists(an, "/sys/module/nvidia_peermem") ||
	    rooted_exists(an, "/sys/module/nv_peer_mem"))
		return "nvidia_peermem";
	verbs = rooted_exists(an, "/sys/module/ib_uverbs") ||
		rooted_exists(an, "/sys/class/infiniband_verbs");
	gpu = rooted_exists(an, "/sys/module/amdgpu") || nvidia_open_major(an) >= 515;
	if (verbs && gpu && kernel_at_least(an, 5, 12))
		return "dmabuf";
	return "none";
}

/*
 * The module's peer records (a NIC mapping a GPU's memory) as RailbindPeer infos, one
 * per record, in the module's own key=value words, for the audit's peer-cross-path;
 * or, when the module showed this reader none of them, RailbindPeerView=restricted.
 */
static int annotate_peers(struct annotator *an, hwloc_obj_t obj)
{
	const struct aff_kmod_rec *rec;
	const char *view;
	size_t i = 0;
	char val[160];
	int ret;

	if (!an->kmod || has_info(obj, AFF_INFO_PEER) || has_info(obj, AFF_INFO_PEER_VIEW))
		return 0;
	view = aff_kmod_rec_get(aff_kmod_snapshot_rec(an->kmod, 0), "view");
	if (view && !strcmp(view, "restricted"))
		return add_info(obj, AFF_INFO_PEER_VIEW, "restricted");
	while ((rec = aff_kmod_snapshot_next(an->kmod, "peer", &i))) {
		const char *gpu = aff_kmod_rec_get(rec, "gpu"), *nic = aff_kmod_rec_get(rec, "nic");
		const char *route = aff_kmod_rec_get(rec, "route");
		const char *maps = aff_kmod_rec_get(rec, "maps");
		const char *bytes = aff_kmod_rec_get(rec, "bytes");

		if (!nic || !maps)
			continue;
		snprintf(val, sizeof(val), "gpu=%.15s nic=%.15s route=%.15s maps=%.20s bytes=%.20s",
			 gpu ? gpu : "-", nic, route ? route : "-", maps, bytes ? bytes : "0");
		ret = hwloc_obj_add_info(obj, AFF_INFO_PEER, val);
		if (ret < 0)
			return -ENOMEM;
	}
	return 0;
}

static int annotate_machine(struct annotator *an, hwloc_obj_t obj)
{
	char buf[256];
	int ret;

	snprintf(buf, sizeof(buf), "%d", AFF_SNAPSHOT_VERSION);
	ret = add_info(obj, AFF_INFO_SNAPSHOT_VERSION, buf);
	if (ret < 0)
		return ret;

	if (!has_info(obj, AFF_INFO_HOSTNAME)) {
		if (rooted_read(an, "/proc/sys/kernel/hostname", buf, sizeof(buf)) < 0 &&
		    (!an->real_root || gethostname(buf, sizeof(buf)) < 0))
			buf[0] = '\0';
		buf[sizeof(buf) - 1] = '\0';
		if (valid_token(buf)) {
			ret = add_info(obj, AFF_INFO_HOSTNAME, buf);
			if (ret < 0)
				return ret;
		}
	}

	if (!has_info(obj, AFF_INFO_KMOD)) {
		const char *kmod = buf;

		if (rooted_read(an, "/sys/module/railbind/version", buf, sizeof(buf)) < 0 ||
		    !valid_token(buf))
			/* Loaded without MODULE_VERSION is not the same as not loaded. */
			kmod = rooted_exists(an, "/sys/module/railbind") ? "unknown" : "absent";
		ret = add_info(obj, AFF_INFO_KMOD, kmod);
		if (ret < 0)
			return ret;
	}

	if (!has_info(obj, AFF_INFO_PEER_MEMORY)) {
		ret = add_info(obj, AFF_INFO_PEER_MEMORY, peer_memory(an));
		if (ret < 0)
			return ret;
	}
	ret = aff_discover_health_machine(obj, an->root, an->have_health ? &an->health : NULL,
					  an->kmod);
	if (ret < 0)
		return ret;
	return annotate_peers(an, obj);
}

static void append_note(char *note, size_t len, unsigned count, const char *what)
{
	size_t used = strlen(note);

	if (!count || used >= len - 1)
		return;
	snprintf(note + used, len - used, "%s%s unreadable on %u object%s", used ? "; " : "",
		 what, count, count == 1 ? "" : "s");
}

static void write_note(struct aff_discover_report *rep)
{
	rep->note[0] = '\0';
	append_note(rep->note, sizeof(rep->note), rep->acs_unreadable,
		    "ACS control (needs root)");
	append_note(rep->note, sizeof(rep->note), rep->link_unreadable, "PCIe link state");
	append_note(rep->note, sizeof(rep->note), rep->numa_unreadable, "NUMA node");
	append_note(rep->note, sizeof(rep->note), rep->iommu_unreadable, "IOMMU group type");
}

static bool is_real_root(const char *root)
{
	return !root || !*root || !strcmp(root, "/");
}

int aff_discover_annotate(hwloc_topology_t topo, const char *root, struct aff_discover_report *rep)
{
	struct aff_discover_report local = { 0 };
	char gpuroot[PATH_MAX];
	struct annotator an;
	hwloc_obj_t obj;
	int ret;

	if (!topo)
		return -EINVAL;
	an.real_root = is_real_root(root);
	an.root = an.real_root ? "" : root;
	an.rootlen = strlen(an.root);
	while (an.rootlen > 1 && an.root[an.rootlen - 1] == '/')
		an.rootlen--;
	an.rep = rep ? rep : &local;
	memset(an.rep, 0, sizeof(*an.rep));
	/* Without the module (-ENOENT) or with an unreadable snapshot, sysfs alone. */
	an.kmod = NULL;
	if (aff_kmod_snapshot_read(an.real_root ? NULL : root, &an.kmod, NULL, 0) < 0)
		an.kmod = NULL;
	/* railbindd's counters, when it keeps them and they are of this boot. */
	{
		char path[PATH_MAX];

		an.have_health = mkpath(&an, path, sizeof(path), "%s", AFF_COUNTERS_FILE) == 0 &&
				 aff_health_load(path, an.real_root ? NULL : root, &an.health) == 0;
	}

	for (obj = NULL; (obj = hwloc_get_next_pcidev(topo, obj));) {
		ret = annotate_pci(&an, obj);
		if (ret < 0)
			goto out;
	}
	for (obj = NULL; (obj = hwloc_get_next_bridge(topo, obj));) {
		if (!is_pci_function(obj))
			continue;
		ret = annotate_pci(&an, obj);
		if (ret < 0)
			goto out;
	}
	for (obj = NULL; (obj = hwloc_get_next_osdev(topo, obj));) {
		if (!is_openfabrics(obj))
			continue;
		ret = annotate_ofed(&an, obj);
		if (ret < 0)
			goto out;
	}
	ret = annotate_machine(&an, hwloc_get_root_obj(topo));
	if (ret < 0)
		goto out;
	/* UUID and device minor from the GPU drivers' own files (gpu_discover.c). */
	if (snprintf(gpuroot, sizeof(gpuroot), "%.*s", (int)an.rootlen, an.root) < (int)sizeof(gpuroot))
		ret = aff_discover_gpu_files(topo, gpuroot);
	if (ret < 0)
		goto out;
	write_note(an.rep);
out:
	aff_kmod_snapshot_free(an.kmod);
	if (an.have_health)
		aff_health_clear(&an.health);
	return ret;
}

/* hwloc 2.x reads its alternate root from the environment when the load starts. */
static int fsroot_swap(const char *root, char **saved)
{
	const char *old = getenv("HWLOC_FSROOT");

	*saved = NULL;
	if (old) {
		*saved = strdup(old);
		if (!*saved)
			return -ENOMEM;
	}
	if (is_real_root(root))
		return unsetenv("HWLOC_FSROOT") < 0 ? -errno : 0;
	return setenv("HWLOC_FSROOT", root, 1) < 0 ? -errno : 0;
}

static void fsroot_restore(char *saved)
{
	if (saved)
		setenv("HWLOC_FSROOT", saved, 1);
	else
		unsetenv("HWLOC_FSROOT");
	free(saved);
}

int aff_discover_live(const char *root, hwloc_topology_t *out, struct aff_discover_report *rep,
		      char *err, size_t errlen)
{
	static const char *const host_only[] = {
		"x86", "opencl", "gl", "cuda", "nvml", "rsmi", "levelzero",
	};
	hwloc_topology_t topo;
	size_t i;
	struct stat st;
	char *saved;
	int ret;

	if (!out) {
		aff_seterr(err, errlen, 0, "discover: no output topology given");
		return -EINVAL;
	}
	*out = NULL;
	if (!is_real_root(root)) {
		if (stat(root, &st) < 0) {
			ret = -errno;
			aff_seterr(err, errlen, 0, "discover: root %s: %s", root, strerror(-ret));
			return ret;
		}
		if (!S_ISDIR(st.st_mode)) {
			aff_seterr(err, errlen, 0, "discover: root %s: %s", root, strerror(ENOTDIR));
			return -ENOTDIR;
		}
	}
	if (hwloc_topology_init(&topo) < 0) {
		ret = errno ? -errno : -ENOMEM;
		aff_seterr(err, errlen, 0, "discover: hwloc_topology_init: %s", strerror(-ret));
		return ret;
	}
	/* Keep every bridge: path classes count switches, and ACS lives on the ports. */
	if (hwloc_topology_set_type_filter(topo, HWLOC_OBJ_BRIDGE, HWLOC_TYPE_FILTER_KEEP_ALL) < 0 ||
	    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PCI_DEVICE, HWLOC_TYPE_FILTER_KEEP_ALL) < 0 ||
	    hwloc_topology_set_type_filter(topo, HWLOC_OBJ_OS_DEVICE, HWLOC_TYPE_FILTER_KEEP_ALL) < 0) {
		ret = errno ? -errno : -EINVAL;
		aff_seterr(err, errlen, 0, "discover: hwloc_topology_set_type_filter: %s", strerror(-ret));
		goto fail;
	}
	/*
	 * On Linux the "linux" backend already discovers PCI from sysfs; the "pci" plugin
	 * (libpciaccess) would only add vendor/device name strings, and leaks its pci.ids
	 * table (~750 KiB) on every load, which a long-running broker cannot afford.
	 * It fails when the plugin is not installed, which is just as good.
	 */
	hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "pci");
	/*
	 * These ask the running machine itself (CPUID, GPU runtimes, X displays), not the
	 * files under root: with a recorded tree they would graft this host's CPU model
	 * and GPUs onto the recorded node.
	 */
	if (!is_real_root(root))
		for (i = 0; i < sizeof(host_only) / sizeof(host_only[0]); i++)
			hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
						      host_only[i]);
	ret = fsroot_swap(root, &saved);
	if (ret < 0) {
		fsroot_restore(saved);
		aff_seterr(err, errlen, 0, "discover: setting HWLOC_FSROOT: %s", strerror(-ret));
		goto fail;
	}
	errno = 0;
	ret = hwloc_topology_load(topo);
	if (ret < 0)
		ret = errno ? -errno : -EIO;
	fsroot_restore(saved);
	if (ret < 0) {
		aff_seterr(err, errlen, 0, "discover: hwloc_topology_load (root %s): %s",
			is_real_root(root) ? "/" : root, strerror(-ret));
		goto fail;
	}
	ret = aff_discover_annotate(topo, root, rep);
	if (ret < 0) {
		aff_seterr(err, errlen, 0, "discover: annotating the topology: %s", strerror(-ret));
		goto fail;
	}
	*out = topo;
	return 0;

fail:
	hwloc_topology_destroy(topo);
	return ret;
}
