// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A rail port's fabric facts from sysfs (fabric.h lists the attributes):
 * link layer, physical state, LIDs, the rate's width and speed, the GID
 * table with each entry's type and netdev, the netdev's MTU, the error
 * counters, and the device's firmware and board id. A file that is absent
 * leaves its fact unknown; one that does not parse is recorded as
 * malformed, naming it, and read no further.
 *
 * The counters are read once per discovery: each read of counters/ is a
 * MAD to the HCA, so the broker's health loop paces them, not requests.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate.h"
#include "fabric.h"

/* Past any real table (mlx5: 255 RoCE entries, 128 on IB): a bound, not a limit. */
#define MAX_GIDS 1024

struct port_ctx {
	struct annotator *an;
	hwloc_obj_t obj;
	const char *dev;
	unsigned port;
	bool ethernet;
	bool bad;	/* a malformed file was recorded */
};

static int put(hwloc_obj_t obj, const char *fmt, unsigned port, const char *value)
{
	char name[64];

	aff_port_info_name(name, sizeof(name), port, fmt);
	return add_info(obj, name, value);
}

/* Repeated attributes: added even when one of the name exists. */
static int put_more(hwloc_obj_t obj, const char *fmt, unsigned port, const char *value)
{
	char name[64];

	aff_port_info_name(name, sizeof(name), port, fmt);
	return hwloc_obj_add_info(obj, name, value) < 0 ? -ENOMEM : 0;
}

static int malformed(struct port_ctx *pc, const char *rel, const char *why)
{
	char val[PATH_MAX + 64];

	snprintf(val, sizeof(val), "%s: %s", rel, why);
	pc->bad = true;
	return put_more(pc->obj, AFF_PORT_MALFORMED, pc->port, val);
}

/* ports/N/@file, or -errno (-ENOENT when absent). */
static int read_port(struct port_ctx *pc, const char *file, char *rel, size_t rellen,
		     char *buf, size_t len)
{
	if (snprintf(rel, rellen, "/sys/class/infiniband/%s/ports/%u/%s", pc->dev, pc->port,
		     file) >= (int)rellen)
		return -ENAMETOOLONG;
	return aff_sysfs_rooted_read(pc->an, rel, buf, len);
}

static int link_layer(struct port_ctx *pc)
{
	char rel[PATH_MAX], buf[32];

	if (read_port(pc, "link_layer", rel, sizeof(rel), buf, sizeof(buf)) < 0)
		return 0;
	if (strcmp(buf, "InfiniBand") && strcmp(buf, "Ethernet"))
		return malformed(pc, rel, "not InfiniBand or Ethernet");
	pc->ethernet = !strcmp(buf, "Ethernet");
	return put(pc->obj, AFF_PORT_LINK_LAYER, pc->port, buf);
}

static int phys_state(struct port_ctx *pc)
{
	char rel[PATH_MAX], buf[64], name[32];
	int num;

	if (read_port(pc, "phys_state", rel, sizeof(rel), buf, sizeof(buf)) < 0)
		return 0;
	if (aff_fabric_parse_state(buf, &num, name, sizeof(name)) < 0)
		return malformed(pc, rel, "not \"N: NAME\"");
	return put(pc->obj, AFF_PORT_PHYS_STATE, pc->port, buf);
}

static int lid(struct port_ctx *pc, const char *file, const char *fmt)
{
	char rel[PATH_MAX], buf[32];
	long v;

	if (read_port(pc, file, rel, sizeof(rel), buf, sizeof(buf)) < 0)
		return 0;
	if (aff_fabric_parse_lid(buf, &v) < 0)
		return malformed(pc, rel, "not a LID (0x0 to 0xffff)");
	return put(pc->obj, fmt, pc->port, buf);
}

static int rate_mode(struct port_ctx *pc)
{
	char rel[PATH_MAX], buf[64], width[8], speed[16];
	int rc;

	if (read_port(pc, "rate", rel, sizeof(rel), buf, sizeof(buf)) < 0)
		return 0;
	/* "100 Gb/sec" without a parenthesis: Ethernet ports of some drivers. */
	if (!strchr(buf, '('))
		return 0;
	if (aff_fabric_parse_rate_mode(buf, width, sizeof(width), speed, sizeof(speed)) < 0)
		return malformed(pc, rel, "not \"RATE Gb/sec (WIDTH SPEED)\"");
	rc = put(pc->obj, AFF_PORT_WIDTH, pc->port, width);
	return rc ? rc : put(pc->obj, AFF_PORT_SPEED, pc->port, speed);
}

static int netdev_mtu(struct port_ctx *pc, const char *netdev)
{
	char rel[PATH_MAX], buf[32];
	unsigned long long mtu;
	int rc;

	rc = put(pc->obj, AFF_PORT_NETDEV, pc->port, netdev);
	if (rc || snprintf(rel, sizeof(rel), "/sys/class/net/%s/mtu", netdev) >= (int)sizeof(rel) ||
	    aff_sysfs_rooted_read(pc->an, rel, buf, sizeof(buf)) < 0)
		return rc;
	if (aff_fabric_parse_count(buf, &mtu) < 0 || mtu < 68 || mtu > 1u << 20)
		return malformed(pc, rel, "not an MTU (68 to 1048576)");
	return put(pc->obj, AFF_PORT_NETDEV_MTU, pc->port, buf);
}

/* Entry @i: 1 when read (or empty), 0 at the end of the table, or -errno. */
static int one_gid(struct port_ctx *pc, unsigned i, char *first_ndev, size_t ndlen)
{
	char rel[PATH_MAX], file[48], buf[64], type[32], nd[64], val[128], addr[40];
	enum aff_gid_type t;
	unsigned char raw[16];
	int rc;

	snprintf(file, sizeof(file), "gids/%u", i);
	rc = read_port(pc, file, rel, sizeof(rel), buf, sizeof(buf));
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return 1;
	if (aff_fabric_parse_gid(buf, raw) < 0)
		return malformed(pc, rel, "not a GID (eight groups of four hex digits)") < 0 ? -ENOMEM : 1;
	/* An unused entry: the zero GID, and its type fails with EINVAL. */
	if (aff_gid_is_zero(raw))
		return 1;
	snprintf(file, sizeof(file), "gid_attrs/types/%u", i);
	rc = read_port(pc, file, rel, sizeof(rel), type, sizeof(type));
	if (rc < 0 && pc->ethernet)
		return 1;	/* a RoCE entry of unknown kind: not guessed */
	if (rc < 0)
		t = AFF_GID_IB;	/* a kernel before gid_attrs: IB's are all IB */
	else if (aff_fabric_parse_gid_type(type, pc->ethernet, &t) < 0)
		return malformed(pc, rel, "not \"IB/RoCE v1\" or \"RoCE v2\"") < 0 ? -ENOMEM : 1;
	snprintf(file, sizeof(file), "gid_attrs/ndevs/%u", i);
	if (read_port(pc, file, rel, sizeof(rel), nd, sizeof(nd)) < 0)
		nd[0] = '\0';
	if (nd[0] && (strlen(nd) >= 16 || !valid_token(nd)))
		return malformed(pc, rel, "not an interface name") < 0 ? -ENOMEM : 1;
	if (nd[0] && !first_ndev[0])
		snprintf(first_ndev, ndlen, "%s", nd);
	aff_fabric_format_gid(raw, addr, sizeof(addr));
	snprintf(val, sizeof(val), "%u %s %s %s", i, aff_gid_type_name(t), addr, nd[0] ? nd : "-");
	return put_more(pc->obj, AFF_PORT_GID, pc->port, val) < 0 ? -ENOMEM : 1;
}

static int gids(struct port_ctx *pc)
{
	char ndev[32] = "", name[64];
	unsigned i;
	int rc = 1;

	/* A snapshot's recorded table is not read again. */
	aff_port_info_name(name, sizeof(name), pc->port, AFF_PORT_GID);
	if (has_info(pc->obj, name))
		return 0;
	for (i = 0; i < MAX_GIDS && rc > 0; i++)
		rc = one_gid(pc, i, ndev, sizeof(ndev));
	if (rc < 0)
		return rc;
	return ndev[0] ? netdev_mtu(pc, ndev) : 0;
}

static int counters(struct port_ctx *pc)
{
	char rel[PATH_MAX], file[80], buf[32], val[96], name[64];
	unsigned long long v;
	size_t k;
	int rc = 0;

	aff_port_info_name(name, sizeof(name), pc->port, AFF_PORT_COUNTER);
	if (has_info(pc->obj, name))
		return 0;
	for (k = 0; k < aff_port_error_ncounters && !rc; k++) {
		const struct aff_counter_def *d = &aff_port_error_counters[k];
		unsigned bits = 64;

		snprintf(file, sizeof(file), "hw_counters/%s", d->name);
		if (read_port(pc, file, rel, sizeof(rel), buf, sizeof(buf)) < 0) {
			bits = d->bits;
			snprintf(file, sizeof(file), "counters/%s", d->name);
			if (read_port(pc, file, rel, sizeof(rel), buf, sizeof(buf)) < 0)
				continue;
		}
		if (aff_fabric_parse_count(buf, &v) < 0 || (bits < 64 && v >= 1ull << bits)) {
			rc = malformed(pc, rel, "not a count of the counter's width");
			continue;
		}
		snprintf(val, sizeof(val), "%s %llu %u", d->name, v, bits);
		rc = put_more(pc->obj, AFF_PORT_COUNTER, pc->port, val);
	}
	return rc;
}

int aff_annotate_port_fabric(struct annotator *an, hwloc_obj_t obj, const char *dev,
			     unsigned port)
{
	struct port_ctx pc = { .an = an, .obj = obj, .dev = dev, .port = port };
	int rc;

	rc = link_layer(&pc);
	if (!rc)
		rc = phys_state(&pc);
	if (!rc)
		rc = lid(&pc, "lid", AFF_PORT_LID);
	if (!rc)
		rc = lid(&pc, "sm_lid", AFF_PORT_SM_LID);
	if (!rc)
		rc = rate_mode(&pc);
	if (!rc)
		rc = gids(&pc);
	if (!rc)
		rc = counters(&pc);
	return rc;
}

/* The device's own files: fw_ver, board_id (printable, at most 63 bytes). */
int aff_annotate_rdma_device(struct annotator *an, hwloc_obj_t obj, const char *dev)
{
	static const struct {
		const char *file, *info;
	} files[] = {
		{ "fw_ver", AFF_INFO_FW_VER },
		{ "board_id", AFF_INFO_BOARD_ID },
	};
	char rel[PATH_MAX], buf[128];
	size_t k;
	int rc = 0;

	for (k = 0; k < 2 && !rc; k++) {
		snprintf(rel, sizeof(rel), "/sys/class/infiniband/%s/%s", dev, files[k].file);
		if (aff_sysfs_rooted_read(an, rel, buf, sizeof(buf)) < 0 || !buf[0])
			continue;
		if (strlen(buf) >= 64 || !valid_token(buf)) {
			char val[PATH_MAX + 64];

			snprintf(val, sizeof(val), "%s: not a printable word of at most 63 bytes", rel);
			rc = put_more(obj, AFF_PORT_MALFORMED, 1, val);
			continue;
		}
		rc = add_info(obj, files[k].info, buf);
	}
	return rc;
}
