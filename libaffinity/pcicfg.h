/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcicfg - read PCI Express extended capabilities out of a config-space dump.
 *
 * Pure functions over a byte buffer (what sysfs "config" returned), so they can be
 * unit tested and fuzzed without hardware. Every function returns 0 or a positive
 * value on success and a negative errno on failure:
 *   -ENOENT   the capability is not in the list
 *   -ENODATA  the buffer does not reach the extended space (an unprivileged read of
 *             sysfs "config" returns only 64 bytes): the answer is unknown
 *   -EIO      the extended space reads as all ones (device gone or powered off)
 *   -EINVAL   bad arguments
 */
#ifndef AFF_PCICFG_H
#define AFF_PCICFG_H

#include <stddef.h>
#include <stdint.h>

#define AFF_PCICFG_STD_SIZE	256u	/* conventional config space */
#define AFF_PCICFG_EXT_SIZE	4096u	/* PCI Express extended config space */
#define AFF_PCI_EXT_CAP_ID_ACS	0x000du

/* ACS capability layout, PCIe base spec 7.7.8 */
#define AFF_PCI_ACS_CAP		4u	/* 16-bit capability register */
#define AFF_PCI_ACS_CTRL	6u	/* 16-bit control register */

/*
 * Find extended capability @cap_id in @cfg[0..len). Returns its offset (>= 0x100).
 * The walk stops on a next pointer that leaves the extended space, points backwards
 * into the conventional space, would read past @len, or revisits an offset.
 */
int aff_pcicfg_find_ext_cap(const uint8_t *cfg, size_t len, uint16_t cap_id);

/* Read the ACS capability and control registers; either out pointer may be NULL. */
int aff_pcicfg_read_acs(const uint8_t *cfg, size_t len, uint16_t *cap, uint16_t *ctl);

#define AFF_PCI_CAP_ID_EXP	0x10u	/* PCI Express capability */

/* Device/port types of the PCI Express capability (PCIe base spec 7.5.3.2) */
enum {
	AFF_PCI_EXP_ENDPOINT = 0x0,
	AFF_PCI_EXP_LEGACY_END = 0x1,
	AFF_PCI_EXP_ROOT_PORT = 0x4,
	AFF_PCI_EXP_UPSTREAM = 0x5,
	AFF_PCI_EXP_DOWNSTREAM = 0x6,
	AFF_PCI_EXP_PCIE_PCI_BRIDGE = 0x7,
	AFF_PCI_EXP_PCI_PCIE_BRIDGE = 0x8,
	AFF_PCI_EXP_RC_END = 0x9,
	AFF_PCI_EXP_RC_EC = 0xa,
};

/*
 * The device/port type (AFF_PCI_EXP_*) from the PCI Express capability in the
 * conventional space's capability list. -ENOENT: no such capability (a
 * conventional PCI function); -ENODATA: the buffer stops before it (an
 * unprivileged read of sysfs "config" returns 64 bytes); -EIO: all ones.
 * The walk stops on a pointer below 0x40, one past @len, or a revisited one.
 */
int aff_pcicfg_port_type(const uint8_t *cfg, size_t len);
/* Device Control in the PCI Express capability (PCIe base spec 7.5.3.4). */
#define AFF_PCI_EXP_DEVCTL	8u
#define AFF_PCI_EXP_DEVCTL_RELAX	0x0010u	/* Enable Relaxed Ordering */
#define AFF_PCI_EXP_DEVCTL_PAYLOAD(v)	(128u << (((v) >> 5) & 7u))	/* bytes */
#define AFF_PCI_EXP_DEVCTL_READRQ(v)	(128u << (((v) >> 12) & 7u))	/* bytes */
#define AFF_PCI_EXT_CAP_ID_ATS	0x000fu

/*
 * The 16-bit Device Control register, or the errors of aff_pcicfg_port_type
 * (-ENODATA also when the capability's register lies past @len).
 */
int aff_pcicfg_devctl(const uint8_t *cfg, size_t len);
/* Whether the header is a PCI-to-PCI bridge's (type 1); -ENODATA if too short. */
int aff_pcicfg_is_bridge(const uint8_t *cfg, size_t len);

/*
 * A keyword of the read-only section (VPD-R) of a function's Vital Product
 * Data (PCI local bus spec 3.0, 6.4; sysfs "vpd"): its value, printable
 * characters only, trailing spaces and NULs cut, into @out. -ENOENT: no such
 * keyword; -EINVAL: the data does not parse (a resource past @len, no VPD-R
 * before the end tag); -ERANGE: longer than @outlen - 1 or not printable.
 */
int aff_pcicfg_vpd_keyword(const uint8_t *vpd, size_t len, const char kw[2], char *out,
			   size_t outlen);

#endif /* AFF_PCICFG_H */
