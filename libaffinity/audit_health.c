// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The health checks: what happened to the node's links and ports since boot,
 * from the counters discovery puts in a snapshot (annotate_health.c):
 *
 *  pcie-errors	  AER errors on a GPU, a rail NIC or a port on their way to the
 *		  root complex: fatal (the link was reset) fails, non-fatal (a
 *		  transaction lost) warns, correctable errors at a higher average
 *		  rate since boot than railbind.conf's pcie-correctable-per-minute
 *		  warn (each is a replay on the link).
 *  link-flapping the link of such a device changed (lanes, or the speed of a
 *		  link that is not a GPU's own: idle GPUs lower theirs to save power,
 *		  so only their lanes count; a removal and a return count too)
 *		  link-flapping times or more since boot: fails.
 *  port-flapping a rail's RDMA port went down (its LinkDowned counter, or
 *		  railbindd saw it leave ACTIVE) port-flapping times or more: fails.
 *
 * A check the source has no counters for (an NCCL file, a snapshot taken
 * before railbind counted, a node where nobody counts link changes) is
 * undecided and says why.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "annotate_health.h"
#include "audit.h"

/* The hwloc object of device @d (an endpoint or a bridge), or NULL. */
static hwloc_obj_t dev_obj(const struct aff_topo *t, int d)
{
	const struct aff_dev *dev = &t->dev[d];
	hwloc_obj_t obj;

	if (!t->hw || !dev->pci[0])
		return NULL;
	obj = hwloc_get_pcidev_by_busid(t->hw, dev->domain, dev->bus, dev->devno, dev->func);
	if (obj)
		return obj;
	for (obj = NULL; (obj = hwloc_get_next_bridge(t->hw, obj));) {
		const struct hwloc_pcidev_attr_s *p = &obj->attr->bridge.upstream.pci;

		if (obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI &&
		    p->domain == dev->domain && p->bus == dev->bus && p->dev == dev->devno &&
		    p->func == dev->func)
			return obj;
	}
	return NULL;
}

/* A count info of @obj; false when absent or not a count. */
static bool count_info(hwloc_obj_t obj, const char *name, unsigned long long *out)
{
	const char *s = obj ? hwloc_obj_get_info_by_name(obj, name) : NULL;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	*out = strtoull(s, &end, 10);
	return !*end;
}

/*
 * Every device a check looks at, once: each GPU and rail NIC and the bridges
 * from it up to its host bridge. @what[i] names the role of @dev[i].
 */
static size_t devices(const struct aff_topo *t, int *dev, const char **what, size_t max)
{
	size_t n = 0, i, k;

	for (i = 0; i < t->ngpu + t->nrail; i++) {
		int d = i < t->ngpu ? t->gpus[i] : t->rail[i - t->ngpu].dev;
		const char *role = i < t->ngpu ? "GPU" : "NIC";

		for (; d >= 0 && t->dev[d].type != AFF_DEV_HOSTBRIDGE; d = t->dev[d].parent) {
			for (k = 0; k < n && dev[k] != d; k++)
				;
			if (k == n && n < max) {
				what[n] = t->dev[d].type == AFF_DEV_BRIDGE ? "port" : role;
				dev[n++] = d;
			}
		}
	}
	return n;
}

#define MAX_DEVS 4096

static int check_pcie_errors(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	const struct aff_config *conf = &t->ctx->conf;
	unsigned long lim_fatal = aff_config_health_limit(conf, AFF_LIMIT_PCIE_FATAL);
	unsigned long lim_nonfatal = aff_config_health_limit(conf, AFF_LIMIT_PCIE_NONFATAL);
	unsigned long lim_cor = aff_config_health_limit(conf, AFF_LIMIT_PCIE_COR_PER_MIN);
	unsigned long long uptime = 0;
	int *dev = calloc(MAX_DEVS, sizeof(*dev));
	const char **what = calloc(MAX_DEVS, sizeof(*what));
	size_t i, n, with_aer = 0;
	bool have_uptime;
	int rc = 0;

	if (!dev || !what) {
		free(dev);
		free(what);
		return -ENOMEM;
	}
	have_uptime = t->hw && count_info(hwloc_get_root_obj(t->hw), AFF_INFO_UPTIME, &uptime) &&
		      uptime >= 60;
	n = devices(t, dev, what, MAX_DEVS);
	for (i = 0; i < n && !rc; i++) {
		hwloc_obj_t obj = dev_obj(t, dev[i]);
		const char *pci = t->dev[dev[i]].pci;
		const char *devs[2] = { pci, NULL };
		unsigned long long cor, nonfatal, fatal;
		double rate = 0;
		enum aff_sev sev = AFF_SEV_OK;
		struct json_object *ev;
		char why[160] = "";

		if (!count_info(obj, AFF_INFO_AER_COR, &cor) ||
		    !count_info(obj, AFF_INFO_AER_NONFATAL, &nonfatal) ||
		    !count_info(obj, AFF_INFO_AER_FATAL, &fatal))
			continue;
		with_aer++;
		if (have_uptime)
			rate = (double)cor * 60.0 / (double)uptime;
		if (lim_fatal && fatal >= lim_fatal) {
			sev = AFF_SEV_FAIL;
			snprintf(why, sizeof(why), "%llu fatal (the link was reset)", fatal);
		} else if (lim_nonfatal && nonfatal >= lim_nonfatal) {
			sev = AFF_SEV_WARN;
			snprintf(why, sizeof(why), "%llu non-fatal (transactions lost)", nonfatal);
		} else if (lim_cor && have_uptime && rate > (double)lim_cor) {
			sev = AFF_SEV_WARN;
			snprintf(why, sizeof(why), "%llu correctable, %.1f a minute since boot (more than %lu)",
				 cor, rate, lim_cor);
		}
		if (sev == AFF_SEV_OK)
			continue;
		ev = json_object_new_object();
		json_object_object_add(ev, "correctable", json_object_new_int64((int64_t)cor));
		json_object_object_add(ev, "nonfatal", json_object_new_int64((int64_t)nonfatal));
		json_object_object_add(ev, "fatal", json_object_new_int64((int64_t)fatal));
		json_object_object_add(ev, "uptime_s", have_uptime ?
				       json_object_new_int64((int64_t)uptime) : NULL);
		json_object_object_add(ev, "correctable_per_minute", have_uptime ?
				       json_object_new_double(rate) : NULL);
		rc = aff_audit_add(a, "pcie-errors", sev, pci, devs, ev,
				   "find the failing agent (dmesg | grep -i aer, lspci -vvv -s PCI), then reseat or replace the device, its riser or cable; drain the node meanwhile when errors are fatal",
				   "%s %s has had PCIe errors since boot: %s (AER totals: %llu correctable, %llu non-fatal, %llu fatal)",
				   what[i], pci, why, cor, nonfatal, fatal);
	}
	if (!rc && !with_aer)
		rc = aff_audit_undecided(a, "pcie-errors", t->hw ?
			"no AER counts for the GPUs, rail NICs and their ports (a snapshot taken before railbind read them, or a kernel without AER reporting)" :
			"the source (an NCCL topology file) has no AER counts");
	free(dev);
	free(what);
	return rc;
}

static int check_link_flapping(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	unsigned long lim = aff_config_health_limit(&t->ctx->conf, AFF_LIMIT_LINK_FLAPPING);
	hwloc_obj_t root = t->hw ? hwloc_get_root_obj(t->hw) : NULL;
	const char *by = root ? hwloc_obj_get_info_by_name(root, AFF_INFO_COUNTERS) : NULL;
	unsigned long long since = 0;
	int *dev;
	const char **what;
	size_t i, n;
	int rc = 0;

	if (!by)
		return aff_audit_undecided(a, "link-flapping", t->hw ?
			"nobody counts link changes on this node: railbind.ko does not, and railbindd keeps no counters of this boot" :
			"the source (an NCCL topology file) has no link counters");
	if (!lim)
		return 0;
	count_info(root, AFF_INFO_COUNTERS_SINCE, &since);
	dev = calloc(MAX_DEVS, sizeof(*dev));
	what = calloc(MAX_DEVS, sizeof(*what));
	if (!dev || !what) {
		free(dev);
		free(what);
		return -ENOMEM;
	}
	n = devices(t, dev, what, MAX_DEVS);
	for (i = 0; i < n && !rc; i++) {
		const struct aff_dev *d = &t->dev[dev[i]];
		const char *devs[2] = { d->pci, NULL };
		unsigned long long changes;
		struct json_object *ev;

		if (!count_info(dev_obj(t, dev[i]), AFF_INFO_LINK_CHANGES, &changes) || changes < lim)
			continue;
		ev = json_object_new_object();
		json_object_object_add(ev, "changes", json_object_new_int64((int64_t)changes));
		json_object_object_add(ev, "counted_by", json_object_new_string(by));
		json_object_object_add(ev, "since", since ? json_object_new_int64((int64_t)since) :
				       NULL);
		json_object_object_add(ev, "speed", d->link_speed > 0 ?
				       json_object_new_double(d->link_speed) : NULL);
		json_object_object_add(ev, "width", d->link_width > 0 ?
				       json_object_new_int(d->link_width) : NULL);
		json_object_object_add(ev, "speed_cap", d->link_speed_cap > 0 ?
				       json_object_new_double(d->link_speed_cap) : NULL);
		json_object_object_add(ev, "width_cap", d->link_width_cap > 0 ?
				       json_object_new_int(d->link_width_cap) : NULL);
		rc = aff_audit_add(a, "link-flapping", AFF_SEV_FAIL, d->pci, devs, ev,
				   "reseat the device and its riser or cable, check the slot's retimers; lspci -vvv -s PCI shows the link (LnkSta) and its errors",
				   "the link of %s %s changed %llu times since %s (lanes%s, or it went away and came back): it retrains or drops",
				   what[i], d->pci, changes, since ? "counting began" : "boot",
				   d->gpu >= 0 ? "" : " or speed");
	}
	free(dev);
	free(what);
	return rc;
}

/* The OpenFabrics OS device of rail @r, or NULL. */
static hwloc_obj_t rail_osdev(const struct aff_topo *t, int r)
{
	hwloc_obj_t obj = dev_obj(t, t->rail[r].dev), c;

	for (c = obj ? obj->io_first_child : NULL; c; c = c->next_sibling)
		if (c->type == HWLOC_OBJ_OS_DEVICE && c->name && t->rail[r].name &&
		    !strcmp(c->name, t->rail[r].name))
			return c;
	return NULL;
}

static int check_port_flapping(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	unsigned long lim = aff_config_health_limit(&t->ctx->conf, AFF_LIMIT_PORT_FLAPPING);
	size_t r, counted = 0;
	int rc = 0;

	for (r = 0; r < t->nrail && !rc; r++) {
		const struct aff_rail *rl = &t->rail[r];
		hwloc_obj_t os = rl->rdma ? rail_osdev(t, (int)r) : NULL;
		unsigned long long downed = 0, downs = 0, recov = 0, flaps;
		bool has_downed, has_downs;
		const char *devs[2] = { t->dev[rl->dev].pci, NULL };
		struct json_object *ev;
		char name[64];
		unsigned port = rl->port > 0 ? (unsigned)rl->port : 1;

		if (!os)
			continue;
		snprintf(name, sizeof(name), AFF_INFO_PORT_LINK_DOWNED_FMT, port);
		has_downed = count_info(os, name, &downed);
		snprintf(name, sizeof(name), AFF_INFO_PORT_DOWNS_FMT, port);
		has_downs = count_info(os, name, &downs);
		snprintf(name, sizeof(name), AFF_INFO_PORT_ERROR_RECOVERY_FMT, port);
		count_info(os, name, &recov);
		if (!has_downed && !has_downs)
			continue;
		counted++;
		flaps = downed > downs ? downed : downs;
		if (!lim || flaps < lim)
			continue;
		ev = json_object_new_object();
		json_object_object_add(ev, "port", json_object_new_int((int)port));
		json_object_object_add(ev, "link_downed", has_downed ?
				       json_object_new_int64((int64_t)downed) : NULL);
		json_object_object_add(ev, "link_error_recovery", json_object_new_int64((int64_t)recov));
		json_object_object_add(ev, "downs_seen", has_downs ?
				       json_object_new_int64((int64_t)downs) : NULL);
		rc = aff_audit_add(a, "port-flapping", AFF_SEV_FAIL, aff_audit_rail_name(t, (int)r),
				   devs, ev,
				   "check the cable, the transceiver and the switch port (ibstat, mlxlink -d DEVICE, the switch's port log); clear the port counters after the fix (perfquery -x) so a new flap shows",
				   "rail %s port %u went down %llu times (link_downed %llu, seen leaving ACTIVE %llu, error recoveries %llu): the link flaps",
				   aff_audit_rail_name(t, (int)r), port, flaps, downed, downs, recov);
	}
	if (!rc && !counted)
		rc = aff_audit_undecided(a, "port-flapping", t->nrail ?
			"no port counters for the rail NICs (not a railbind snapshot, or no RDMA port counters in sysfs)" :
			"no rail NIC");
	return rc;
}

int aff_audit_health(struct aff_audit *a)
{
	int rc = check_pcie_errors(a);

	if (!rc)
		rc = check_link_flapping(a);
	if (!rc)
		rc = check_port_flapping(a);
	return rc;
}
