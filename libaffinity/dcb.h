/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dcb - a RoCE rail netdev's Data Center Bridging state, as the kernel's DCB
 * netlink interface gives it (RTM_GETDCB, DCB_CMD_IEEE_GET; what iproute2's
 * `dcb` reads): IEEE PFC (the enable bitmap, the PFC frames sent and
 * received per priority), the APP table (DSCP to priority), ETS (priority
 * to traffic class); and ECN/DCQCN where the driver exposes it. Parsed by
 * dcb_parse.c, read by dcb_read.c, recorded as snapshot attributes by
 * dcb_info.c, judged by audit_roce.c. Private to libaffinity. Functions
 * return 0 or a negative errno.
 */
#ifndef AFF_DCB_H
#define AFF_DCB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hwloc.h>

#define AFF_DCB_PRIOS	8
#define AFF_DCB_DSCPS	64

struct aff_dcb {
	bool has_pfc, has_ets;
	uint8_t pfc_cap;			/* priorities PFC can be on at once */
	uint8_t pfc_en;				/* bit per priority */
	uint64_t pause_tx[AFF_DCB_PRIOS];	/* PFC frames sent (ieee_pfc.requests) */
	uint64_t pause_rx[AFF_DCB_PRIOS];	/* received (ieee_pfc.indications) */
	uint8_t prio_tc[AFF_DCB_PRIOS];		/* ETS: each priority's traffic class */
	uint8_t tc_bw[AFF_DCB_PRIOS];		/* ETS: each class's bandwidth share, % */
	uint64_t dscp_mapped;			/* bit per DSCP the APP table maps */
	uint8_t dscp_prio[AFF_DCB_DSCPS];
	/* A second sample of the pause counters, @interval_ms later (pause-storm). */
	bool has_second;
	unsigned interval_ms;
	uint64_t pause_tx2[AFF_DCB_PRIOS], pause_rx2[AFF_DCB_PRIOS];
	/* ECN/DCQCN per priority (MLNX_OFED's ecn/roce_np|roce_rp/enable/P files). */
	bool has_ecn;
	uint8_t ecn_np, ecn_rp;			/* bit per priority */
};

/*
 * mlx5 trusts DSCP exactly when the APP table has DSCP entries (it switches
 * its trust state when the first is added and back when the last goes):
 * the trust a DCB reading implies.
 */
static inline bool aff_dcb_trusts_dscp(const struct aff_dcb *d)
{
	return d->dscp_mapped != 0;
}

/*
 * The kernel's reply to RTM_GETDCB/DCB_CMD_IEEE_GET (@msg: what one recv()
 * gave, @len bytes) into @d: 0; the kernel's own error as a negative errno
 * (-EOPNOTSUPP: the driver has no DCB ops); -EPROTO for a malformed reply
 * (@why says where); -ENOSYS without libmnl.
 */
int aff_dcb_parse(const void *msg, size_t len, struct aff_dcb *d, char *why, size_t whylen);

/*
 * Ask the kernel about @ifname (no privilege needed): 0 or what
 * aff_dcb_parse gives, or -errno of the socket.
 */
int aff_dcb_read_netdev(const char *ifname, struct aff_dcb *d, char *why, size_t whylen);
/* The pause counters alone, again (the second sample). */
int aff_dcb_read_pause(const char *ifname, uint64_t tx[AFF_DCB_PRIOS], uint64_t rx[AFF_DCB_PRIOS]);
/* What a negative errno of aff_dcb_read_netdev means, for a person. */
const char *aff_dcb_errno_reason(int rc);

/* MLNX_OFED's ECN files of @ifname under @root ("" for /): 0, or -ENOENT and @why. */
int aff_dcb_read_ecn(const char *root, const char *ifname, struct aff_dcb *d, char *why,
		     size_t whylen);

/* ---- The snapshot attributes (dcb_info.c lists them) ---- */
#define AFF_INFO_DCB_NETDEV		"RailbindDcbNetdev"
#define AFF_INFO_DCB_UNDECIDED		"RailbindDcbUndecided"
#define AFF_INFO_DCB_ECN_UNDECIDED	"RailbindDcbEcnUndecided"
#define AFF_INFO_DCB_NOT_APPLICABLE	"RailbindDcbNotApplicable"
int aff_dcb_info_write(hwloc_obj_t obj, const char *netdev, const struct aff_dcb *d);
int aff_dcb_info_undecided(hwloc_obj_t obj, const char *netdev, const char *reason);
int aff_dcb_info_ecn_undecided(hwloc_obj_t obj, const char *reason);
/*
 * Back: 0 and @d; -ENOENT when @obj has no DCB reading (*@reason then the
 * recorded reason, or NULL); -EINVAL for a malformed attribute (@buf names it).
 */
int aff_dcb_info_read(hwloc_obj_t obj, struct aff_dcb *d, const char **reason, char *buf,
		      size_t buflen);

/*
 * Discovery of one network function @obj whose netdev is @ifname
 * (annotate_dcb.c): its DCB and ECN state or why none, recorded on @obj.
 * @root: "" for the live node; @real_root false for a recorded tree, whose
 * kernel is elsewhere (its sysfs files still read). @d, when not NULL,
 * receives what was read (has_pfc false when nothing).
 */
int aff_dcb_annotate(hwloc_obj_t obj, const char *root, bool real_root, const char *ifname,
		     struct aff_dcb *d);

/*
 * The priority RDMA traffic of traffic class @tc and service level @sl
 * lands on at a NIC with @d: trusting DSCP, the APP table's entry for
 * DSCP @tc >> 2 (-1: none, the driver's default mapping decides, which
 * dcbnl does not show); trusting PCP, the VLAN priority, which RoCE takes
 * from the service level.
 */
int aff_dcb_landing(const struct aff_dcb *d, unsigned tc, unsigned sl);

#endif /* AFF_DCB_H */
