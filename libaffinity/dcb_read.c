// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A netdev's DCB state from the kernel: one RTM_GETDCB request
 * (DCB_CMD_IEEE_GET) on a NETLINK_ROUTE socket, through libmnl (mnl_lazy.c).
 * Reading needs no privilege: dcbnl refuses only RTM_SETDCB without
 * CAP_NET_ADMIN, so railbindd and a plain user's audit read what a root
 * one does. A driver without DCB ops (virtio-net, e1000e, an mlx5 VF or a
 * function that is not the vport manager) answers -EOPNOTSUPP.
 *
 * ECN/DCQCN: upstream mlx5 keeps the congestion control state in firmware
 * and exposes none of it per priority (its debugfs cc_params are the
 * algorithm's constants, root only); bnxt_re's cc settings live in configfs
 * only once someone creates the device there, irdma's in module
 * parameters. MLNX_OFED's mlx5 adds /sys/class/net/IF/ecn/roce_np/enable/P
 * and roce_rp/enable/P, one 0/1 file per priority: read where present,
 * else the reading is undecided with that reason, never a guess.
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <linux/dcbnl.h>
#include <linux/rtnetlink.h>

#include "annotate.h"
#include "dcb.h"
#include "mnl_lazy.h"

#define mnl aff_mnl

int aff_dcb_read_netdev(const char *ifname, struct aff_dcb *d, char *why, size_t whylen)
{
	struct timeval tv = { .tv_sec = 2 };
	struct mnl_socket *nl;
	struct nlmsghdr *nlh;
	struct dcbmsg *dm;
	uint8_t *buf;
	ssize_t n;
	int rc;

	memset(d, 0, sizeof(*d));
	if (whylen)
		*why = '\0';
	if (!ifname || !*ifname || strlen(ifname) >= IFNAMSIZ || strchr(ifname, '/'))
		return -EINVAL;
	if (!aff_mnl_load())
		return -ENOSYS;
	/* Zeroed: libmnl 1.0.4 (bookworm) leaves an attribute's padding unwritten. */
	buf = calloc(1, MNL_SOCKET_BUFFER_SIZE);
	if (!buf)
		return -ENOMEM;
	nl = mnl.socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!nl) {
		rc = -errno;
		goto out;
	}
	/* A kernel that never answers must not hang the audit. */
	if (setsockopt(mnl.socket_get_fd(nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    mnl.socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		rc = -errno;
		goto out;
	}
	nlh = mnl.nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETDCB;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = 1;
	dm = mnl.nlmsg_put_extra_header(nlh, sizeof(*dm));
	dm->dcb_family = AF_UNSPEC;
	dm->cmd = DCB_CMD_IEEE_GET;
	mnl.attr_put_strz(nlh, DCB_ATTR_IFNAME, ifname);
	if (mnl.socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		rc = -errno;
		goto out;
	}
	/* The reply, or the error, is one message: nothing was asked to be acknowledged. */
	n = mnl.socket_recvfrom(nl, buf, MNL_SOCKET_BUFFER_SIZE);
	if (n < 0)
		rc = errno == EAGAIN ? -ETIMEDOUT : -errno;
	else
		rc = aff_dcb_parse(buf, (size_t)n, d, why, whylen);
out:
	if (nl)
		mnl.socket_close(nl);
	free(buf);
	return rc;
}

int aff_dcb_read_pause(const char *ifname, uint64_t tx[AFF_DCB_PRIOS], uint64_t rx[AFF_DCB_PRIOS])
{
	struct aff_dcb d;
	char why[128];
	int rc = aff_dcb_read_netdev(ifname, &d, why, sizeof(why));

	if (rc < 0)
		return rc;
	if (!d.has_pfc)
		return -ENODATA;
	memcpy(tx, d.pause_tx, sizeof(d.pause_tx));
	memcpy(rx, d.pause_rx, sizeof(d.pause_rx));
	return 0;
}

const char *aff_dcb_errno_reason(int rc)
{
	switch (-rc) {
	case EOPNOTSUPP:
		return "the driver has no DCB (no dcbnl ops: a virtual or non-DCB NIC, or a function that is not its port's vport manager)";
	case ENODEV:
		return "the netdev is gone";
	case ENOSYS:
		return "libmnl.so.0 is not installed: DCB netlink is read through it";
	case ETIMEDOUT:
		return "the kernel did not answer the DCB request";
	case EPROTO:
		return "the kernel's DCB reply was malformed";
	default:
		return "the DCB state could not be read";
	}
}

/* One priority's 0/1 file; -ENOENT when absent. */
static int ecn_file(const char *root, const char *ifname, const char *point, unsigned prio,
		    bool *on)
{
	char path[PATH_MAX], buf[16];
	int rc;

	if (snprintf(path, sizeof(path), "%s/sys/class/net/%s/ecn/%s/enable/%u", root, ifname,
		     point, prio) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	rc = aff_sysfs_read(path, buf, sizeof(buf));
	if (rc < 0)
		return rc;
	if (strcmp(buf, "0") && strcmp(buf, "1"))
		return -EINVAL;
	*on = buf[0] == '1';
	return 0;
}

int aff_dcb_read_ecn(const char *root, const char *ifname, struct aff_dcb *d, char *why,
		     size_t whylen)
{
	static const char *const points[2] = { "roce_np", "roce_rp" };
	uint8_t *bits[2] = { &d->ecn_np, &d->ecn_rp };
	unsigned p, prio;
	bool on;
	int rc;

	d->has_ecn = false;
	d->ecn_np = d->ecn_rp = 0;
	for (p = 0; p < 2; p++)
		for (prio = 0; prio < AFF_DCB_PRIOS; prio++) {
			rc = ecn_file(root, ifname, points[p], prio, &on);
			if (rc == -EINVAL) {
				snprintf(why, whylen, "/sys/class/net/%s/ecn/%s/enable/%u holds neither 0 nor 1",
					 ifname, points[p], prio);
				return rc;
			}
			if (rc < 0) {
				snprintf(why, whylen, "no /sys/class/net/%s/ecn/%s/enable/%u (MLNX_OFED's mlx5 only; upstream mlx5 keeps DCQCN in firmware, bnxt_re and irdma expose no per-priority ECN state)",
					 ifname, points[p], prio);
				return -ENOENT;
			}
			if (on)
				*bits[p] |= 1u << prio;
		}
	d->has_ecn = true;
	return 0;
}
