/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * optics_info - a module's readings as the snapshot's info attributes on the
 * NIC's PCI object, and back (optics_info.c lists them). Written by
 * discovery (annotate_optics.c), read by the audit's transceiver check
 * (audit_optics.c), live or from a snapshot. Private to libaffinity.
 */
#ifndef AFF_OPTICS_INFO_H
#define AFF_OPTICS_INFO_H

#include <hwloc.h>

#include "optics.h"

#define AFF_INFO_XCVR_NETDEV		"RailbindXcvrNetdev"
#define AFF_INFO_XCVR_UNDECIDED		"RailbindXcvrUndecided"
#define AFF_INFO_XCVR_TYPE		"RailbindXcvrType"
#define AFF_INFO_XCVR_VENDOR		"RailbindXcvrVendor"
#define AFF_INFO_XCVR_PART		"RailbindXcvrPart"
#define AFF_INFO_XCVR_TIME		"RailbindXcvrTime"
#define AFF_INFO_XCVR_TEMP_HISTORY	"RailbindXcvrTempHistory"

/* Record @o (read through @netdev) on @obj. 0 or -ENOMEM. */
int aff_optics_info_write(hwloc_obj_t obj, const char *netdev, const struct aff_optics *o);
/* Record that @obj's module could not be read, and why. 0 or -ENOMEM. */
int aff_optics_info_undecided(hwloc_obj_t obj, const char *netdev, const char *reason);
/*
 * Read back: 0 with @o filled; 1 when the object records why it could not be
 * read (@reason points at it); -ENOENT when it records nothing; -EINVAL when
 * an attribute is malformed (@reason names it, in @buf).
 */
int aff_optics_info_read(hwloc_obj_t obj, struct aff_optics *o, const char **reason,
			 char *buf, size_t buflen);

#endif /* AFF_OPTICS_INFO_H */
