// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What hwloc does not record about a PCI function, from sysfs and config
 * space (or railbind.ko's snapshot where config space is closed to the
 * reader): negotiated vs. capable link, raw numa_node, IOMMU domain type, ACS
 * control on ports, PCIe port type, and what could not be read.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "annotate.h"
#include "annotate_health.h"
#include "internal.h"
#include "pcicfg.h"
#include "source_kmod.h"

/*
 * "16.0 GT/s PCIe" (>= 5.x kernels) or "8 GT/s" (older) -> "16.0" / "8.0": one spelling
 * across kernels so the model can compare strings and numbers alike. "Unknown" -> error.
 */
static int parse_link_speed(const char *s, char *out, size_t outlen)
{
	size_t i = 0;
	bool dot = false;

	/* The analyzer takes isspace('\0') for true past aff_sysfs_read's empty string. */
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
		ret = aff_sysfs_read(path, raw, sizeof(raw));
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
	if (bad || (absent && absent < tried) || (absent && !aff_sysfs_exists(dev))) {
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
	    aff_sysfs_read(path, raw, sizeof(raw)) < 0)
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

static int annotate_iommu(struct annotator *an, hwloc_obj_t obj, const char *dev)
{
	char path[PATH_MAX], val[32];

	if (has_info(obj, AFF_INFO_IOMMU_GROUP_TYPE))
		return 0;
	if (snprintf(path, sizeof(path), "%s/iommu_group", dev) >= (int)sizeof(path))
		goto unreadable;
	/* No group: no IOMMU translating for this device, which is not an error. */
	if (!aff_sysfs_exists(path))
		return 0;
	/* "type" appeared in Linux 5.11; older kernels count as unreadable. */
	if (strlen(path) + sizeof("/type") > sizeof(path))
		goto unreadable;
	memcpy(path + strlen(path), "/type", sizeof("/type"));
	if (aff_sysfs_read(path, val, sizeof(val)) < 0 || !valid_token(val))
		goto unreadable;
	return add_info(obj, AFF_INFO_IOMMU_GROUP_TYPE, val);

unreadable:
	an->rep->iommu_unreadable++;
	an->unreadable |= UNREADABLE_IOMMU;
	return 0;
}

/*
 * Reads up to the full extended space; *size gets what the file claims to
 * hold. Without blocking, as every attribute: a FIFO under --root is empty.
 */
static int read_config(const char *path, uint8_t *buf, size_t len, size_t *got, off_t *size)
{
	struct stat st;
	ssize_t n = 0;
	int fd;

	*got = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		n = -errno;
	else
		*size = st.st_size;
	if (!n)
		n = aff_read_upto(fd, buf, len);
	close(fd);
	if (n < 0)
		return (int)n;
	*got = (size_t)n;
	return 0;
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

static int add_num(hwloc_obj_t obj, const char *name, long long v)
{
	char val[24];

	snprintf(val, sizeof(val), "%lld", v);
	return add_info(obj, name, val);
}

/* BAR1's size from sysfs "resource" (line 2: start end flags), -1 unknown. */
static long long bar1_size(const char *dev)
{
	char path[PATH_MAX], buf[512], *line;
	unsigned long long start, end;
	int fd;
	ssize_t n;

	if (snprintf(path, sizeof(path), "%s/resource", dev) >= (int)sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	n = aff_read_upto(fd, (uint8_t *)buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	line = strchr(buf, '\n');
	if (!line || sscanf(line + 1, "%llx %llx", &start, &end) != 2 || !end || end < start)
		return -1;
	return (long long)(end - start + 1);
}

/*
 * What GPUDirect RDMA's speed depends on besides ACS (gdr-readiness): Max
 * Payload, Max Read Request and Relaxed Ordering from Device Control, the
 * ATS capability, and a GPU's BAR1 (the window peers map its memory through).
 * Unreadable config space leaves them out: the check then cannot say.
 */
static int gdr_devctl(hwloc_obj_t obj, const uint8_t *cfg, size_t got)
{
	bool endpoint = obj->type == HWLOC_OBJ_PCI_DEVICE;
	int dc = aff_pcicfg_devctl(cfg, got), ats, ret;
	unsigned v;

	if (dc < 0)
		return 0;
	v = (unsigned)dc;
	ret = add_num(obj, AFF_INFO_MPS, AFF_PCI_EXP_DEVCTL_PAYLOAD(v));
	if (!ret)
		ret = add_num(obj, AFF_INFO_MRRS, AFF_PCI_EXP_DEVCTL_READRQ(v));
	if (!ret)
		ret = add_num(obj, AFF_INFO_RELAXED, !!(v & AFF_PCI_EXP_DEVCTL_RELAX));
	if (ret || got <= AFF_PCICFG_STD_SIZE || !endpoint)
		return ret;
	ats = aff_pcicfg_find_ext_cap(cfg, got, AFF_PCI_EXT_CAP_ID_ATS);
	return ats == -ENOENT || ats >= 0 ? add_num(obj, AFF_INFO_ATS, ats >= 0) : 0;
}

static int annotate_gdr(hwloc_obj_t obj, const char *dev)
{
	uint8_t cfg[AFF_PCICFG_EXT_SIZE];
	char path[PATH_MAX];
	size_t got;
	off_t size = 0;
	int ret = 0;

	if (has_info(obj, AFF_INFO_MPS))
		return 0;
	if (snprintf(path, sizeof(path), "%s/config", dev) < (int)sizeof(path) &&
	    read_config(path, cfg, sizeof(cfg), &got, &size) == 0)
		ret = gdr_devctl(obj, cfg, got);
	if (!ret && obj->type == HWLOC_OBJ_PCI_DEVICE &&
	    (obj->attr->pcidev.class_id >> 8) == 0x03) {
		long long bar1 = bar1_size(dev);

		if (bar1 > 0)
			ret = add_num(obj, AFF_INFO_BAR1, bar1);
	}
	return ret;
}

/*
 * A ConnectX-8's Data Direct DMA function and its PF carry one VPD V3 UUID:
 * the model pairs them by it (model_complex.c). The kernel reads VPD from
 * the device, slowly, and to root only: read once per discovery (the
 * broker's snapshot keeps it), only on the functions that may pair.
 */
static bool pairs_by_vpd(const struct hwloc_pcidev_attr_s *pci)
{
	return pci->vendor_id == 0x15b3 &&
	       (pci->device_id == 0x2100 || pci->device_id == 0x1021 ||
		pci->device_id == 0x1023 || pci->device_id == 0x1025);
}

static int annotate_vpd(struct annotator *an, hwloc_obj_t obj, const char *dev)
{
	uint8_t vpd[4096];
	char path[PATH_MAX], uuid[80];
	size_t got;
	off_t size = 0;
	int rc;

	if (obj->type != HWLOC_OBJ_PCI_DEVICE || !pairs_by_vpd(&obj->attr->pcidev) ||
	    has_info(obj, AFF_INFO_VPD_UUID))
		return 0;
	if (snprintf(path, sizeof(path), "%s/vpd", dev) >= (int)sizeof(path))
		return 0;
	rc = read_config(path, vpd, sizeof(vpd), &got, &size);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0) {
		an->unreadable |= UNREADABLE_VPD;
		return 0;
	}
	/* A device with no V3 pairs with nothing; data that does not parse says nothing. */
	if (aff_pcicfg_vpd_keyword(vpd, got, "V3", uuid, sizeof(uuid)) < 0 || !uuid[0])
		return 0;
	return add_info(obj, AFF_INFO_VPD_UUID, uuid);
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
	static const char *const names[] = { "acs", "link", "numa", "iommu", "vpd" };
	char val[32] = "";
	size_t i, used = 0;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (bits & (1u << i))
			used += (size_t)snprintf(val + used, sizeof(val) - used, "%s%s",
						 used ? "," : "", names[i]);
	return add_info(obj, AFF_INFO_UNREADABLE, val);
}

bool aff_is_pci_function(hwloc_obj_t obj)
{
	if (obj->type == HWLOC_OBJ_PCI_DEVICE)
		return true;
	/* Host bridges are hwloc's own construct, with no sysfs device behind them. */
	return obj->type == HWLOC_OBJ_BRIDGE &&
	       obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI;
}

int aff_annotate_pci(struct annotator *an, hwloc_obj_t obj)
{
	const struct hwloc_pcidev_attr_s *pci = obj->type == HWLOC_OBJ_BRIDGE ?
		&obj->attr->bridge.upstream.pci : &obj->attr->pcidev;
	char dev[PATH_MAX], bdf[16];
	int ret;

	snprintf(bdf, sizeof(bdf), "%04x:%02x:%02x.%01x", pci->domain, pci->bus, pci->dev,
		 pci->func);
	ret = aff_sysfs_path(an, dev, sizeof(dev), "/sys/bus/pci/devices/%s", bdf);
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
	if (!ret)
		ret = annotate_gdr(obj, dev);
	if (!ret)
		ret = annotate_vpd(an, obj, dev);
	if (!ret && an->unreadable)
		ret = add_unreadable(obj, an->unreadable);
	if (!ret)
		ret = aff_discover_health_pci(obj, dev, strrchr(dev, '/') + 1,
					      an->have_health ? &an->health : NULL, an->kmod);
	return ret;
}
