/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fabric - a rail port as the fabric sees it: link layer, logical and
 * physical state, LIDs, MTUs, the GID table, the error counters, firmware.
 *
 * Discovery reads them from sysfs (Documentation/ABI/stable/sysfs-class-infiniband;
 * annotate_port.c) and from libibverbs where sysfs has no file (an IB port's
 * active and max MTU; annotate_port_verbs.c), and records them as info
 * attributes on the OpenFabrics OS device, per port N:
 *
 *	RailbindPortNLinkLayer	InfiniBand, Ethernet (ports/N/link_layer)
 *	RailbindPortNPhysState	as sysfs gives it: "5: LinkUp" (ports/N/phys_state)
 *	RailbindPortNLID, RailbindPortNSMLID	as sysfs: "0x1a" (ports/N/lid, sm_lid)
 *	RailbindPortNWidth, RailbindPortNSpeed	"4X", "NDR" (ports/N/rate's parenthesis)
 *	RailbindPortNActiveMTU, RailbindPortNMaxMTU	bytes (verbs: ibv_query_port)
 *	RailbindPortNNetdev, RailbindPortNNetdevMTU	the port's netdev (gid_attrs/ndevs)
 *				and its /sys/class/net/IF/mtu
 *	RailbindPortNGID	repeated, one per used entry: "INDEX TYPE GID NETDEV",
 *				TYPE IB, RoCEv1 or RoCEv2, NETDEV "-" when none
 *	RailbindPortNCounter	repeated: "NAME VALUE BITS", BITS the counter's width
 *				(64: hw_counters/NAME, preferred where the driver has it)
 *	RailbindPortNMalformed	repeated: "FILE: why", a file that did not parse
 *  on the device: RailbindFirmware (fw_ver), RailbindBoardId (board_id)
 *  on a PCI NIC's network OS device: RailbindRDMADevice, the software RDMA
 *	device (rxe, siw) on that netdev, which hwloc does not report; its
 *	ports' attributes (these and RailbindPortNState, ...) are on that OS device
 *  on the Machine: RailbindVerbs: "ok", "absent" or "failed WHY"
 *
 * fabric_info.c reads them back into struct aff_fabric_port (source_hwloc.c
 * hangs one on each rail). Private to libaffinity.
 */
#ifndef AFF_FABRIC_H
#define AFF_FABRIC_H

#include <stdbool.h>
#include <stddef.h>

#include <hwloc.h>

#define AFF_INFO_FW_VER			"RailbindFirmware"
#define AFF_INFO_BOARD_ID		"RailbindBoardId"
#define AFF_INFO_VERBS			"RailbindVerbs"
/* On a PCI NIC's network OS device: the software RDMA device (rxe0) on it. */
#define AFF_INFO_RDMA_DEVICE		"RailbindRDMADevice"
/* Port attributes: "RailbindPort" N and one of these (aff_port_info_name()). */
#define AFF_PORT_LINK_LAYER	"LinkLayer"
#define AFF_PORT_PHYS_STATE	"PhysState"
#define AFF_PORT_LID		"LID"
#define AFF_PORT_SM_LID	"SMLID"
#define AFF_PORT_WIDTH		"Width"
#define AFF_PORT_SPEED		"Speed"
#define AFF_PORT_ACTIVE_MTU	"ActiveMTU"
#define AFF_PORT_MAX_MTU	"MaxMTU"
#define AFF_PORT_NETDEV	"Netdev"
#define AFF_PORT_NETDEV_MTU	"NetdevMTU"
#define AFF_PORT_GID		"GID"
#define AFF_PORT_COUNTER	"Counter"
#define AFF_PORT_MALFORMED	"Malformed"

enum aff_gid_type { AFF_GID_IB, AFF_GID_ROCE_V1, AFF_GID_ROCE_V2 };

struct aff_gid {
	unsigned index;
	enum aff_gid_type type;
	unsigned char raw[16];
	char netdev[32];	/* "" when none */
};

struct aff_port_counter {
	char name[40];
	unsigned long long value;
	unsigned bits;		/* 4, 8, 16, 32, 64 */
};

struct aff_fabric_port {
	char link_layer[16];	/* "" unknown */
	int phys_state;		/* 1 Sleep ... 5 LinkUp ... 7 Phy Test; -1 unknown */
	char phys_name[32];
	long lid, sm_lid;	/* -1 unknown */
	char width[8], speed[16];
	int active_mtu, max_mtu;	/* bytes, 0 unknown */
	char netdev[32];
	int netdev_mtu;		/* 0 unknown */
	struct aff_gid *gid;
	size_t ngid;
	struct aff_port_counter *ctr;
	size_t nctr;
	char fw[64], board[64];
	char malformed[200];	/* the first malformed file, "" none */
};

/* "RailbindPort<port><what>" into @buf. */
void aff_port_info_name(char *buf, size_t len, unsigned port, const char *what);

/* ---- fabric_parse.c: one sysfs file's text, or one attribute value ---- */

/* "4: ACTIVE", "5: LinkUp", "7: Phy Test": the number and the name after ": ". */
int aff_fabric_parse_state(const char *s, int *num, char *name, size_t namelen);
/* "0x1a" (sysfs lid, sm_lid): 0 to 0xffff. */
int aff_fabric_parse_lid(const char *s, long *lid);
/* "400 Gb/sec (4X NDR)": the width and speed inside the parenthesis. */
int aff_fabric_parse_rate_mode(const char *s, char *width, size_t wlen, char *speed,
			       size_t slen);
/* "fe80:0000:0000:0000:0002:c903:0031:7e91": eight groups of four hex digits. */
int aff_fabric_parse_gid(const char *s, unsigned char raw[16]);
/* The text form of a GID as sysfs writes it (buf: at least 40 bytes). */
void aff_fabric_format_gid(const unsigned char raw[16], char *buf, size_t len);
/* gid_attrs/types/N: "IB/RoCE v1" (RoCE v1 or, on an IB port, IB), "RoCE v2". */
int aff_fabric_parse_gid_type(const char *s, bool ethernet, enum aff_gid_type *type);
const char *aff_gid_type_name(enum aff_gid_type t);
bool aff_gid_is_zero(const unsigned char raw[16]);
/* An IPv4-mapped GID (::ffff:a.b.c.d); the address into @v4 (may be NULL). */
bool aff_gid_is_ipv4(const unsigned char raw[16], char *v4, size_t len);
/* A GID carrying an address: IPv4-mapped, or IPv6 outside fe80::/10. */
bool aff_gid_has_address(const unsigned char raw[16]);
/* A decimal count without sign or blanks (counters, mtu). */
int aff_fabric_parse_count(const char *s, unsigned long long *v);
/* An IB MTU enum (1..5, IBV_MTU_256..4096) as bytes; 0 for anything else. */
int aff_ib_mtu_bytes(int e);
/* The RoCE active MTU the kernel derives from a netdev MTU (iboe_get_mtu()). */
int aff_roce_mtu_of_netdev(int netdev_mtu);

/* Attribute values: "INDEX TYPE GID NETDEV", "NAME VALUE BITS". */
int aff_fabric_parse_gid_info(const char *s, struct aff_gid *g);
int aff_fabric_parse_counter_info(const char *s, struct aff_port_counter *c);

/* The PortCounters error counters (drivers/infiniband/core/sysfs.c) and their widths. */
struct aff_counter_def {
	const char *name;
	unsigned bits;
	bool discard;	/* ibcheckerrs' threshold 100 group, else its 10 */
};
extern const struct aff_counter_def aff_port_error_counters[];
extern const size_t aff_port_error_ncounters;

/* ---- fabric_info.c: the attributes of @os's port @port read back ---- */

/*
 * A new aff_fabric_port in *out, NULL (and 0) when @os has no fabric facts
 * for the port (a source of before railbind read them); -ENOMEM, or
 * -EINVAL with @why naming the attribute that does not parse.
 */
int aff_fabric_port_load(hwloc_obj_t os, unsigned port, struct aff_fabric_port **out,
			 char *why, size_t whylen);
void aff_fabric_port_free(struct aff_fabric_port *p);
/* The lowest RoCE v2 IPv4 GID's index, -1 none. */
int aff_fabric_roce_v2_ipv4(const struct aff_fabric_port *p);

#endif /* AFF_FABRIC_H */
