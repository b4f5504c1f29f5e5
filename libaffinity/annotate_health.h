/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * annotate_health - the health attributes discovery adds (annotate_health.c
 * says what each one is); read by the audit's health checks (audit_health.c).
 * Private to libaffinity. Functions return 0 or a negative errno.
 */
#ifndef AFF_ANNOTATE_HEALTH_H
#define AFF_ANNOTATE_HEALTH_H

#include <hwloc.h>

#include "health.h"

#define AFF_INFO_AER_COR			"RailbindAerCorrectable"
#define AFF_INFO_AER_NONFATAL			"RailbindAerNonFatal"
#define AFF_INFO_AER_FATAL			"RailbindAerFatal"
#define AFF_INFO_LINK_CHANGES			"RailbindLinkChanges"
#define AFF_INFO_PORT_LINK_DOWNED_FMT		"RailbindPort%uLinkDowned"
#define AFF_INFO_PORT_ERROR_RECOVERY_FMT	"RailbindPort%uErrorRecovery"
#define AFF_INFO_PORT_CHANGES_FMT		"RailbindPort%uChanges"
#define AFF_INFO_PORT_DOWNS_FMT			"RailbindPort%uDowns"
#define AFF_INFO_UPTIME				"RailbindUptime"
#define AFF_INFO_COUNTERS			"RailbindCounters"
#define AFF_INFO_COUNTERS_SINCE			"RailbindCountersSince"

/* Where railbindd keeps its counters with its default --state-dir, below the root. */
#define AFF_COUNTERS_FILE "/run/railbind/counters.json"
/*
 * Where railbindd.service's broker keeps them: its --state-dir, the only
 * place under /run its ProtectSystem=strict sandbox may write.
 */
#define AFF_COUNTERS_FILE_UNIT "/run/railbind/state/counters.json"

struct aff_kmod_snapshot;

/* @devdir: the function's sysfs directory; @h, @kmod may be NULL. */
int aff_discover_health_pci(hwloc_obj_t obj, const char *devdir, const char *pci,
			    const struct aff_health *h, const struct aff_kmod_snapshot *kmod);
/* @portdir: .../infiniband/DEV/ports/N; @obj the OpenFabrics OS device. */
int aff_discover_health_port(hwloc_obj_t obj, const char *portdir, unsigned port,
			     const struct aff_health *h);
/* @root: the filesystem root prefix ("" for the real one). */
int aff_discover_health_machine(hwloc_obj_t obj, const char *root, const struct aff_health *h,
				const struct aff_kmod_snapshot *kmod);

#endif /* AFF_ANNOTATE_HEALTH_H */
