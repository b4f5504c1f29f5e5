/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * optics_read - a netdev's module EEPROM, read and decoded (optics_read.c
 * says how, and who may). Private to libaffinity.
 */
#ifndef AFF_OPTICS_READ_H
#define AFF_OPTICS_READ_H

#include <stddef.h>
#include <stdint.h>

#include "optics.h"

/*
 * Read and decode the module of @ifname: 0, or a negative errno: -EPERM
 * (needs CAP_NET_ADMIN), -EOPNOTSUPP (no module EEPROM), the decoder's
 * -ENODATA and -EPROTONOSUPPORT (@why then says more), -EIO, -ENODEV.
 */
int aff_optics_read_netdev(const char *ifname, struct aff_optics *o, char *why, size_t whylen);
/*
 * The ioctl's one flat buffer (ETHTOOL_GMODULEEEPROM) read as pages: for
 * SFF-8472 and SFF-8079 (@type 2, 1) A0h then A2h, 256 bytes each; for the
 * others the lower page, upper page 00h, then upper pages 01h, 02h, 03h.
 */
#define AFF_OPTICS_FLAT_MAX	640
#define AFF_OPTICS_FLAT_SFF8079	1
#define AFF_OPTICS_FLAT_SFF8472	2
struct aff_optics_flat {
	uint32_t type;		/* ETH_MODULE_SFF_* */
	uint32_t len;		/* bytes of @data the kernel gave */
	uint8_t data[AFF_OPTICS_FLAT_MAX];
};
int aff_optics_flat_read(void *flat, unsigned i2c, unsigned bank, unsigned page,
			 unsigned offset, unsigned len, uint8_t *buf);

/* What a negative errno of aff_optics_read_netdev means, for a person. */
const char *aff_optics_errno_reason(int rc);

#endif /* AFF_OPTICS_READ_H */
