// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * aff_discover_dcb(): each Ethernet network function's DCB state (PFC, the
 * APP table, ETS, pause counters; dcb_read.c) and ECN where the driver
 * exposes it, recorded on its PCI object (dcb_info.c) for the audit's
 * roce-lossless and pause-storm checks, or why not: an InfiniBand port
 * (no DCB: its SL-to-VL map is the subnet manager's), an SR-IOV virtual
 * function (DCB is the PF's: the host configures it), a driver without DCB
 * ops, a recorded tree (--root). The pause counters are read twice,
 * AFF_DCB_SAMPLE_MS apart, once for all functions: a storm is a rate.
 * Asked for with AFF_LOAD_OPTICS (the audit and the snapshot); reading
 * needs no privilege.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "annotate.h"
#include "dcb.h"
#include "source_live.h"

#define AFF_DCB_SAMPLE_MS	1000
#define ARPHRD_INFINIBAND_TYPE "32"

static bool is_network_function(hwloc_obj_t obj)
{
	return obj->type == HWLOC_OBJ_PCI_DEVICE && (obj->attr->pcidev.class_id >> 8) == 0x02;
}

static hwloc_obj_t netdev_of(hwloc_obj_t obj)
{
	hwloc_obj_t c;

	for (c = obj->io_first_child; c; c = c->next_sibling)
		if (c->type == HWLOC_OBJ_OS_DEVICE && c->name &&
		    c->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK)
			return c;
	return NULL;
}

static bool net_file(const char *root, const char *ifname, const char *rel, char *buf,
		     size_t len)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/sys/class/net/%s/%s", root, ifname, rel) >=
	    (int)sizeof(path))
		return false;
	if (!buf)
		return access(path, F_OK) == 0;
	return aff_sysfs_read(path, buf, len) == 0;
}

int aff_dcb_annotate(hwloc_obj_t obj, const char *root, bool real_root, const char *ifname,
		     struct aff_dcb *out)
{
	struct aff_dcb d, ecn;
	char buf[16], why[256] = "", ecnwhy[320] = "", reason[320];
	int rc;

	memset(&d, 0, sizeof(d));
	if (out)
		memset(out, 0, sizeof(*out));
	if (hwloc_obj_get_info_by_name(obj, AFF_INFO_DCB_NETDEV) ||
	    hwloc_obj_get_info_by_name(obj, AFF_INFO_DCB_NOT_APPLICABLE))
		return 0;
	if (net_file(root, ifname, "type", buf, sizeof(buf)) && !strcmp(buf, ARPHRD_INFINIBAND_TYPE))
		return hwloc_obj_add_info(obj, AFF_INFO_DCB_NOT_APPLICABLE,
			"an InfiniBand port: no DCB, its service levels map to virtual lanes in the subnet manager") < 0 ?
			-ENOMEM : 0;
	if (net_file(root, ifname, "device/physfn", NULL, 0))
		return aff_dcb_info_undecided(obj, ifname,
			"an SR-IOV virtual function: undecided, configured on the host's PF (a VF has no DCB ops; check PFC and trust on the hypervisor's physical function)");
	rc = aff_dcb_read_ecn(root, ifname, &ecn, ecnwhy, sizeof(ecnwhy));
	if (rc == -ENOMEM)
		return rc;
	if (!real_root)
		return aff_dcb_info_undecided(obj, ifname,
			"a recorded tree (--root): DCB is read from the node's kernel, not its files");
	rc = aff_dcb_read_netdev(ifname, &d, why, sizeof(why));
	if (rc == -ENOMEM)
		return rc;
	if (rc < 0) {
		/* Where: only a malformed reply needs more than its errno's reason. */
		snprintf(reason, sizeof(reason), "%s%s%s", aff_dcb_errno_reason(rc),
			 rc == -EPROTO && *why ? ": " : "", rc == -EPROTO ? why : "");
		return aff_dcb_info_undecided(obj, ifname, reason);
	}
	d.has_ecn = ecn.has_ecn;
	d.ecn_np = ecn.ecn_np;
	d.ecn_rp = ecn.ecn_rp;
	if (out)
		*out = d;
	else
		rc = aff_dcb_info_write(obj, ifname, &d);
	if (!rc && !d.has_ecn && !out)
		rc = aff_dcb_info_ecn_undecided(obj, ecnwhy);
	return rc;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

struct pending {
	hwloc_obj_t obj;
	const char *ifname;
	struct aff_dcb d;
	char ecnwhy[320];
};

int aff_discover_dcb(hwloc_topology_t topo, const char *root, struct aff_discover_report *rep)
{
	bool real_root = !root || !*root || !strcmp(root, "/");
	struct pending *p = NULL, *grown;
	size_t n = 0, i;
	hwloc_obj_t obj, net;
	bool any = false;
	int rc = 0;

	(void)rep;
	for (obj = NULL; !rc && (obj = hwloc_get_next_pcidev(topo, obj));) {
		if (!is_network_function(obj) || !(net = netdev_of(obj)))
			continue;
		/* The name becomes a path component: one that could leave the tree is not asked. */
		if (!*net->name || net->name[0] == '.' || strchr(net->name, '/'))
			continue;
		grown = realloc(p, (n + 1) * sizeof(*p));
		if (!grown) {
			rc = -ENOMEM;
			break;
		}
		p = grown;
		p[n].obj = obj;
		p[n].ifname = net->name;
		rc = aff_dcb_annotate(obj, real_root ? "" : root, real_root, net->name, &p[n].d);
		if (!rc && p[n].d.has_pfc)
			any = true;
		n++;
	}
	/* The second sample, once for all: a pause storm is a rate. */
	if (!rc && any)
		sleep_ms(AFF_DCB_SAMPLE_MS);
	for (i = 0; !rc && i < n; i++) {
		struct aff_dcb *d = &p[i].d;
		struct aff_dcb ecn;

		if (hwloc_obj_get_info_by_name(p[i].obj, AFF_INFO_DCB_UNDECIDED) ||
		    hwloc_obj_get_info_by_name(p[i].obj, AFF_INFO_DCB_NOT_APPLICABLE))
			continue;
		if (d->has_pfc &&
		    aff_dcb_read_pause(p[i].ifname, d->pause_tx2, d->pause_rx2) == 0) {
			d->has_second = true;
			d->interval_ms = AFF_DCB_SAMPLE_MS;
		}
		rc = aff_dcb_info_write(p[i].obj, p[i].ifname, d);
		if (!rc && !d->has_ecn) {
			aff_dcb_read_ecn(real_root ? "" : root, p[i].ifname, &ecn, p[i].ecnwhy,
					 sizeof(p[i].ecnwhy));
			rc = aff_dcb_info_ecn_undecided(p[i].obj, p[i].ecnwhy);
		}
	}
	free(p);
	return rc;
}

int aff_dcb_landing(const struct aff_dcb *d, unsigned tc, unsigned sl)
{
	unsigned dscp = (tc >> 2) & (AFF_DCB_DSCPS - 1);

	if (!aff_dcb_trusts_dscp(d))
		return (int)(sl & (AFF_DCB_PRIOS - 1));
	return d->dscp_mapped & 1ull << dscp ? d->dscp_prio[dscp] : -1;
}
