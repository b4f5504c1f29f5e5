// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Discovery's health attributes (the audit's link-flapping, pcie-errors and
 * port-flapping read them, from the live node or a snapshot):
 *
 *  on PCI objects
 *	RailbindAerCorrectable, RailbindAerNonFatal, RailbindAerFatal
 *		AER totals since boot: the kernel's (sysfs aer_dev_*), plus what
 *		railbindd counted before the device was last removed and added
 *	RailbindLinkChanges
 *		link changes since boot, counted by railbind.ko (its dev record's
 *		link_changes=) or railbindd (counters.json): width changes, speed
 *		changes but for a GPU's own link, removals and returns
 *  on OpenFabrics OS devices, per port N
 *	RailbindPortNLinkDowned, RailbindPortNErrorRecovery
 *		the port's own counters (ports/N/counters/link_downed,
 *		link_error_recovery): since the counters were last cleared
 *	RailbindPortNChanges, RailbindPortNDowns
 *		state changes, and those from ACTIVE, railbindd saw this boot
 *  on the Machine
 *	RailbindUptime	seconds since boot (/proc/uptime), the AER rates' time
 *	RailbindCounters	who counted link changes: "kmod", "broker" (then
 *			RailbindCountersSince, seconds since the epoch), absent: nobody
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate_health.h"
#include "source_kmod.h"

static int add(hwloc_obj_t obj, const char *name, unsigned long long v)
{
	char val[32];

	if (hwloc_obj_get_info_by_name(obj, name))
		return 0;
	snprintf(val, sizeof(val), "%llu", v);
	return hwloc_obj_add_info(obj, name, val) < 0 ? -ENOMEM : 0;
}

/* The module's dev record of @pci, or NULL. */
static const struct aff_kmod_rec *kmod_dev(const struct aff_kmod_snapshot *kmod, const char *pci)
{
	const struct aff_kmod_rec *rec;
	size_t i = 0;

	while (kmod && (rec = aff_kmod_snapshot_next(kmod, "dev", &i)))
		if (aff_kmod_rec_get(rec, "pci") && !strcmp(aff_kmod_rec_get(rec, "pci"), pci))
			return rec;
	return NULL;
}

static bool parse_count(const char *s, unsigned long long *out)
{
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return !errno && !*end;
}

int aff_discover_health_pci(hwloc_obj_t obj, const char *devdir, const char *pci,
			    const struct aff_health *h, const struct aff_kmod_snapshot *kmod)
{
	static const char *const names[AFF_AER_N] = {
		AFF_INFO_AER_COR, AFF_INFO_AER_NONFATAL, AFF_INFO_AER_FATAL,
	};
	const struct aff_health_link *l = h ? aff_health_find_link(h, pci) : NULL;
	const struct aff_kmod_rec *rec = kmod_dev(kmod, pci);
	unsigned long long aer[AFF_AER_N] = { 0 }, v = 0;
	int k, rc = 0;

	if (aff_health_read_aer(devdir, aer) == 0)
		for (k = 0; k < AFF_AER_N && !rc; k++)
			rc = add(obj, names[k], aer[k] + (l ? l->aer_base[k] : 0));
	if (!rc && rec && parse_count(aff_kmod_rec_get(rec, "link_changes"), &v))
		rc = add(obj, AFF_INFO_LINK_CHANGES, v);
	else if (!rc && l)
		rc = add(obj, AFF_INFO_LINK_CHANGES, l->changes);
	return rc;
}

static int read_counter(const char *portdir, const char *name, unsigned long long *out)
{
	char path[PATH_MAX], buf[32];
	FILE *f;
	int ok;

	if (snprintf(path, sizeof(path), "%s/counters/%s", portdir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return ok && parse_count(buf, out) ? 0 : -EINVAL;
}

int aff_discover_health_port(hwloc_obj_t obj, const char *portdir, unsigned port,
			     const struct aff_health *h)
{
	const struct aff_health_port *p = h && obj->name ? aff_health_find_port(h, obj->name, port) :
				      NULL;
	unsigned long long v = 0;
	char name[64];
	int rc = 0;

	snprintf(name, sizeof(name), AFF_INFO_PORT_LINK_DOWNED_FMT, port);
	if (read_counter(portdir, "link_downed", &v) == 0)
		rc = add(obj, name, v);
	snprintf(name, sizeof(name), AFF_INFO_PORT_ERROR_RECOVERY_FMT, port);
	if (!rc && read_counter(portdir, "link_error_recovery", &v) == 0)
		rc = add(obj, name, v);
	if (!rc && p) {
		snprintf(name, sizeof(name), AFF_INFO_PORT_CHANGES_FMT, port);
		rc = add(obj, name, p->changes);
		snprintf(name, sizeof(name), AFF_INFO_PORT_DOWNS_FMT, port);
		if (!rc)
			rc = add(obj, name, p->downs);
	}
	return rc;
}

int aff_discover_health_machine(hwloc_obj_t obj, const char *root, const struct aff_health *h,
				const struct aff_kmod_snapshot *kmod)
{
	char path[PATH_MAX], buf[64];
	const struct aff_kmod_rec *rec;
	double up;
	size_t i = 0;
	FILE *f;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/proc/uptime", root);
	f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%lf", &up) == 1 && up >= 0 && up < 1e12)
			rc = add(obj, AFF_INFO_UPTIME, (unsigned long long)up);
		fclose(f);
	}
	/* The module counts when its dev records carry link_changes. */
	while (!rc && kmod && (rec = aff_kmod_snapshot_next(kmod, "dev", &i)))
		if (aff_kmod_rec_get(rec, "link_changes")) {
			if (!hwloc_obj_get_info_by_name(obj, AFF_INFO_COUNTERS) &&
			    hwloc_obj_add_info(obj, AFF_INFO_COUNTERS, "kmod") < 0)
				rc = -ENOMEM;
			return rc;
		}
	if (rc || !h)
		return rc;
	snprintf(buf, sizeof(buf), "%s", h->source[0] ? h->source : "broker");
	if (!hwloc_obj_get_info_by_name(obj, AFF_INFO_COUNTERS) &&
	    hwloc_obj_add_info(obj, AFF_INFO_COUNTERS, buf) < 0)
		return -ENOMEM;
	return h->since > 0 ? add(obj, AFF_INFO_COUNTERS_SINCE, (unsigned long long)h->since) : 0;
}
