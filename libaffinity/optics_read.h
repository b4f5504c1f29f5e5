/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * optics_read - a netdev's module EEPROM, read and decoded (optics_read.c
 * says how, and who may). Private to libaffinity.
 */
#ifndef AFF_OPTICS_READ_H
#define AFF_OPTICS_READ_H

#include <stddef.h>

#include "optics.h"

/*
 * Read and decode the module of @ifname: 0, or a negative errno: -EPERM
 * (needs CAP_NET_ADMIN), -EOPNOTSUPP (no module EEPROM), the decoder's
 * -ENODATA and -EPROTONOSUPPORT (@why then says more), -EIO, -ENODEV.
 */
int aff_optics_read_netdev(const char *ifname, struct aff_optics *o, char *why, size_t whylen);
/* What a negative errno of aff_optics_read_netdev means, for a person. */
const char *aff_optics_errno_reason(int rc);

#endif /* AFF_OPTICS_READ_H */
