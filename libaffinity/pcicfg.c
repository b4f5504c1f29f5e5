// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>

#include "pcicfg.h"

/* Config space is little endian whatever the CPU; assemble bytes, never cast. */
static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

int aff_pcicfg_find_ext_cap(const uint8_t *cfg, size_t len, uint16_t cap_id)
{
	/* One bit per dword of extended space: a visited set defeats any loop shape. */
	uint8_t seen[(AFF_PCICFG_EXT_SIZE - AFF_PCICFG_STD_SIZE) / 4 / 8] = { 0 };
	size_t pos = AFF_PCICFG_STD_SIZE;

	if (!cfg)
		return -EINVAL;
	if (len > AFF_PCICFG_EXT_SIZE)
		len = AFF_PCICFG_EXT_SIZE;
	if (len < AFF_PCICFG_STD_SIZE + 4)
		return -ENODATA;

	for (;;) {
		size_t slot = (pos - AFF_PCICFG_STD_SIZE) / 4;
		uint32_t hdr;

		if (pos + 4 > len)
			return -ENODATA;
		if (seen[slot / 8] & (1u << (slot % 8)))
			return -ENOENT;
		seen[slot / 8] |= (uint8_t)(1u << (slot % 8));

		hdr = rd32(cfg + pos);
		if (hdr == 0xffffffffu)
			return -EIO;
		/* An empty first header means "no extended capabilities". */
		if (hdr == 0)
			return -ENOENT;
		if ((hdr & 0xffffu) == cap_id)
			return (int)pos;

		/* The low two bits of the next pointer are reserved (PCIe 7.6.3). */
		pos = (hdr >> 20) & 0xffcu;
		if (pos < AFF_PCICFG_STD_SIZE)
			return -ENOENT;
	}
}

int aff_pcicfg_read_acs(const uint8_t *cfg, size_t len, uint16_t *cap, uint16_t *ctl)
{
	int pos = aff_pcicfg_find_ext_cap(cfg, len, AFF_PCI_EXT_CAP_ID_ACS);

	if (pos < 0)
		return pos;
	if (len > AFF_PCICFG_EXT_SIZE)
		len = AFF_PCICFG_EXT_SIZE;
	/* A header so close to the end that its registers fall off the space is bogus. */
	if ((size_t)pos + AFF_PCI_ACS_CTRL + 2 > AFF_PCICFG_EXT_SIZE)
		return -ENOENT;
	if ((size_t)pos + AFF_PCI_ACS_CTRL + 2 > len)
		return -ENODATA;
	if (cap)
		*cap = rd16(cfg + pos + AFF_PCI_ACS_CAP);
	if (ctl)
		*ctl = rd16(cfg + pos + AFF_PCI_ACS_CTRL);
	return 0;
}

/* Conventional header offsets (PCI local bus spec 6.1) */
#define PCI_STATUS		0x06u
#define PCI_STATUS_CAP_LIST	0x10u
#define PCI_HEADER_TYPE		0x0eu
#define PCI_CAPABILITY_LIST	0x34u
#define PCI_CAP_FIRST		0x40u

int aff_pcicfg_is_bridge(const uint8_t *cfg, size_t len)
{
	if (!cfg)
		return -EINVAL;
	if (len <= PCI_HEADER_TYPE)
		return -ENODATA;
	return (cfg[PCI_HEADER_TYPE] & 0x7f) == 1;
}

/* The PCI Express capability's offset in the conventional list, or a negative errno. */
static int exp_cap(const uint8_t *cfg, size_t len)
{
	/* One bit per dword of the capability area, 0x40-0xff. */
	uint8_t seen[(AFF_PCICFG_STD_SIZE - PCI_CAP_FIRST) / 4 / 8] = { 0 };
	size_t pos;

	if (!cfg)
		return -EINVAL;
	if (len > AFF_PCICFG_STD_SIZE)
		len = AFF_PCICFG_STD_SIZE;
	if (len < PCI_CAPABILITY_LIST + 1)
		return -ENODATA;
	if (rd32(cfg) == 0xffffffffu)
		return -EIO;
	if (!(rd16(cfg + PCI_STATUS) & PCI_STATUS_CAP_LIST))
		return -ENOENT;
	/* The low two bits of every capability pointer are reserved. */
	for (pos = cfg[PCI_CAPABILITY_LIST] & 0xfcu; pos >= PCI_CAP_FIRST;
	     pos = cfg[pos + 1] & 0xfcu) {
		size_t slot = (pos - PCI_CAP_FIRST) / 4;

		if (pos + 4 > len)
			return -ENODATA;
		if (seen[slot / 8] & (1u << (slot % 8)))
			return -ENOENT;
		seen[slot / 8] |= (uint8_t)(1u << (slot % 8));
		if (cfg[pos] == AFF_PCI_CAP_ID_EXP)
			return (int)pos;
	}
	return -ENOENT;
}

int aff_pcicfg_port_type(const uint8_t *cfg, size_t len)
{
	int pos = exp_cap(cfg, len);

	return pos < 0 ? pos : (rd16(cfg + pos + 2) >> 4) & 0xf;
}

int aff_pcicfg_devctl(const uint8_t *cfg, size_t len)
{
	int pos = exp_cap(cfg, len);

	if (pos < 0)
		return pos;
	/* exp_cap() walks at most the conventional space. */
	if ((size_t)pos + AFF_PCI_EXP_DEVCTL + 2 > len)
		return -ENODATA;
	return rd16(cfg + pos + AFF_PCI_EXP_DEVCTL);
}

/* One keyword's value: printable, trailing blanks and NULs cut. */
static int vpd_value(const uint8_t *v, size_t n, char *out, size_t outlen)
{
	size_t i;

	while (n && (v[n - 1] == ' ' || !v[n - 1]))
		n--;
	if (n >= outlen)
		return -ERANGE;
	for (i = 0; i < n; i++) {
		if (v[i] < 0x20 || v[i] > 0x7e)
			return -ERANGE;
		out[i] = (char)v[i];
	}
	out[n] = '\0';
	return 0;
}

int aff_pcicfg_vpd_keyword(const uint8_t *vpd, size_t len, const char kw[2], char *out,
			   size_t outlen)
{
	size_t pos = 0, n, end, k;

	if (!vpd || !out || !outlen)
		return -EINVAL;
	while (pos < len) {
		uint8_t tag = vpd[pos];

		if (!(tag & 0x80)) {
			/* Small resource: the end tag (0x0f) stops the walk. */
			if (((tag >> 3) & 0x0f) == 0x0f)
				return -EINVAL;
			pos += 1 + (tag & 7u);
			continue;
		}
		if (pos + 3 > len)
			return -EINVAL;
		n = vpd[pos + 1] | (size_t)vpd[pos + 2] << 8;
		end = pos + 3 + n;
		if (end > len)
			return -EINVAL;
		if ((tag & 0x7f) != 0x10) {
			pos = end;
			continue;
		}
		/* VPD-R: keyword (2), length (1), data; RV (the checksum) ends it. */
		for (k = pos + 3; k + 3 <= end; k += 3u + vpd[k + 2]) {
			if (k + 3u + vpd[k + 2] > end)
				return -EINVAL;
			if (vpd[k] == (uint8_t)kw[0] && vpd[k + 1] == (uint8_t)kw[1])
				return vpd_value(vpd + k + 3, vpd[k + 2], out, outlen);
		}
		return -ENOENT;
	}
	return -EINVAL;
}
