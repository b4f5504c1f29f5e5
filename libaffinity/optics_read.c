// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A netdev's module EEPROM from the kernel, by page, bank and I2C address
 * through ethtool's generic netlink family (ETHTOOL_MSG_MODULE_EEPROM_GET,
 * Linux 5.13 and later), else through the older SIOCETHTOOL ioctl
 * (ETHTOOL_GMODULEINFO, ETHTOOL_GMODULEEEPROM), which gives one flat buffer:
 * A0h then A2h for SFF-8472, and for SFF-8636 the lower page, upper page 00h
 * and upper pages 01h-03h, 128 bytes each.
 *
 * Netlink through libmnl, loaded on first use (mnl_lazy.c).
 *
 * Both interfaces need CAP_NET_ADMIN (the netlink request is
 * GENL_UNS_ADMIN_PERM; the ioctl is not on ethtool's read-by-anyone list):
 * the EEPROM is read by a root-run `railbind audit` or `railbind snapshot`
 * (NHC runs the audit as root), never by railbindd, which does not hold that
 * capability. Without it the reading is -EPERM, and the audit says so.
 */
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/sockios.h>

#include "mnl_lazy.h"

#include "optics.h"
#include "optics_read.h"

/* libmnl's functions (mnl_lazy.c). */
#define mnl aff_mnl

struct nl_reader {
	struct mnl_socket *nl;
	unsigned portid, seq;
	uint16_t family;
	const char *ifname;
	uint8_t *buf;		/* MNL_SOCKET_BUFFER_SIZE */
	uint8_t *out;		/* the reply's data goes here */
	unsigned want;
	bool got;
};

static int family_attr(const struct nlattr *attr, void *data)
{
	uint16_t *family = data;

	if (mnl.attr_get_type(attr) == CTRL_ATTR_FAMILY_ID &&
	    mnl.attr_validate(attr, MNL_TYPE_U16) == 0)
		*family = mnl.attr_get_u16(attr);
	return MNL_CB_OK;
}

static int family_reply(const struct nlmsghdr *nlh, void *data)
{
	return mnl.attr_parse(nlh, sizeof(struct genlmsghdr), family_attr, data) < 0 ?
		MNL_CB_ERROR : MNL_CB_OK;
}

static int data_attr(const struct nlattr *attr, void *data)
{
	struct nl_reader *r = data;

	if (mnl.attr_get_type(attr) != ETHTOOL_A_MODULE_EEPROM_DATA)
		return MNL_CB_OK;
	if (mnl.attr_get_payload_len(attr) != r->want)
		return MNL_CB_ERROR;
	memcpy(r->out, mnl.attr_get_payload(attr), r->want);
	r->got = true;
	return MNL_CB_OK;
}

static int data_reply(const struct nlmsghdr *nlh, void *data)
{
	return mnl.attr_parse(nlh, sizeof(struct genlmsghdr), data_attr, data) < 0 ?
		MNL_CB_ERROR : MNL_CB_OK;
}

/* Send what is in r->buf and run @cb on the replies until the ACK. */
static int transact(struct nl_reader *r, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	ssize_t n;
	int rc;

	if (mnl.socket_sendto(r->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		n = mnl.socket_recvfrom(r->nl, r->buf, MNL_SOCKET_BUFFER_SIZE);
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		errno = 0;
		rc = mnl.cb_run(r->buf, (size_t)n, r->seq, r->portid, cb, data);
	} while (rc > 0);
	return rc < 0 ? (errno ? -errno : -EIO) : 0;
}

static struct nlmsghdr *request(struct nl_reader *r, uint16_t type, uint8_t cmd, uint8_t version)
{
	struct nlmsghdr *nlh = mnl.nlmsg_put_header(r->buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = ++r->seq;
	g = mnl.nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = version;
	return nlh;
}

static int nl_read(void *arg, unsigned i2c, unsigned bank, unsigned page, unsigned offset,
		   unsigned len, uint8_t *out)
{
	struct nl_reader *r = arg;
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	int rc;

	if (offset > 255 || !len || offset % AFF_OPTICS_HALF + len > AFF_OPTICS_HALF ||
	    page > 255 || bank > 255 || i2c > 127)
		return -EINVAL;
	nlh = request(r, r->family, ETHTOOL_MSG_MODULE_EEPROM_GET, ETHTOOL_GENL_VERSION);
	nest = mnl.attr_nest_start(nlh, ETHTOOL_A_MODULE_EEPROM_HEADER);
	mnl.attr_put_strz(nlh, ETHTOOL_A_HEADER_DEV_NAME, r->ifname);
	mnl.attr_nest_end(nlh, nest);
	mnl.attr_put_u32(nlh, ETHTOOL_A_MODULE_EEPROM_OFFSET, offset);
	mnl.attr_put_u32(nlh, ETHTOOL_A_MODULE_EEPROM_LENGTH, len);
	mnl.attr_put_u8(nlh, ETHTOOL_A_MODULE_EEPROM_PAGE, (uint8_t)page);
	mnl.attr_put_u8(nlh, ETHTOOL_A_MODULE_EEPROM_BANK, (uint8_t)bank);
	mnl.attr_put_u8(nlh, ETHTOOL_A_MODULE_EEPROM_I2C_ADDRESS, (uint8_t)i2c);
	r->out = out;
	r->want = len;
	r->got = false;
	rc = transact(r, nlh, data_reply, r);
	return rc < 0 ? rc : r->got ? 0 : -EIO;
}

/* Open the ethtool family: 0, or -ENOENT when the kernel has none (before 5.6). */
static int nl_open(struct nl_reader *r, const char *ifname)
{
	struct timeval tv = { .tv_sec = 2 };
	struct nlmsghdr *nlh;
	int rc;

	memset(r, 0, sizeof(*r));
	r->ifname = ifname;
	if (!aff_mnl_load())
		return -ENOENT;	/* no libmnl: the ioctl, as on a kernel without the family */
	/* Zeroed: libmnl 1.0.4 (bookworm) leaves an attribute's padding unwritten. */
	r->buf = calloc(1, MNL_SOCKET_BUFFER_SIZE);
	if (!r->buf)
		return -ENOMEM;
	r->nl = mnl.socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
	if (!r->nl)
		return -errno;
	/* A kernel that never answers must not hang the audit. */
	if (setsockopt(mnl.socket_get_fd(r->nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    mnl.socket_bind(r->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		return -errno;
	r->portid = mnl.socket_get_portid(r->nl);
	nlh = request(r, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	mnl.attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME);
	rc = transact(r, nlh, family_reply, &r->family);
	if (rc < 0)
		return rc;
	return r->family ? 0 : -ENOENT;
}

static void nl_close(struct nl_reader *r)
{
	if (r->nl)
		mnl.socket_close(r->nl);
	free(r->buf);
}

/* ---- The ioctl: one flat buffer ---- */

_Static_assert(AFF_OPTICS_FLAT_MAX == ETH_MODULE_SFF_8636_MAX_LEN, "the ioctl's longest map");
_Static_assert(AFF_OPTICS_FLAT_SFF8472 == ETH_MODULE_SFF_8472 &&
	       AFF_OPTICS_FLAT_SFF8079 == ETH_MODULE_SFF_8079, "ethtool's module types");

int aff_optics_flat_read(void *arg, unsigned i2c, unsigned bank, unsigned page, unsigned offset,
		     unsigned len, uint8_t *out)
{
	const struct aff_optics_flat *f = arg;
	size_t at;

	if (offset > 255 || !len || offset % AFF_OPTICS_HALF + len > AFF_OPTICS_HALF || bank ||
	    (offset < AFF_OPTICS_HALF && page))
		return -EINVAL;
	if (f->type == ETH_MODULE_SFF_8472 || f->type == ETH_MODULE_SFF_8079) {
		if (page || (i2c != AFF_OPTICS_I2C_A0 && i2c != AFF_OPTICS_I2C_A2))
			return -EIO;
		at = (i2c == AFF_OPTICS_I2C_A2 ? 256 : 0) + offset;
	} else {
		if (i2c != AFF_OPTICS_I2C_A0 || page > 3)
			return -EIO;
		at = page ? 256 + (page - 1) * AFF_OPTICS_HALF + offset - AFF_OPTICS_HALF : offset;
	}
	if (at + len > f->len)
		return -EIO;
	memcpy(out, f->data + at, len);
	return 0;
}

static int ioctl_read_all(const char *ifname, struct aff_optics_flat *f)
{
	struct ethtool_modinfo mi = { .cmd = ETHTOOL_GMODULEINFO };
	struct ethtool_eeprom *ee;
	struct ifreq ifr;
	int fd, rc = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, ifname, strlen(ifname));
	ifr.ifr_data = (void *)&mi;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0) {
		rc = -errno;
		goto out;
	}
	f->type = mi.type;
	f->len = mi.eeprom_len < sizeof(f->data) ? mi.eeprom_len : sizeof(f->data);
	ee = calloc(1, sizeof(*ee) + f->len);
	if (!ee) {
		rc = -ENOMEM;
		goto out;
	}
	ee->cmd = ETHTOOL_GMODULEEEPROM;
	ee->len = f->len;
	ifr.ifr_data = (void *)ee;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		rc = -errno;
	else
		memcpy(f->data, ee->data, f->len);
	free(ee);
out:
	close(fd);
	return rc;
}

int aff_optics_read_netdev(const char *ifname, struct aff_optics *o, char *why, size_t whylen)
{
	struct nl_reader r;
	struct aff_optics_flat *f;
	int rc;

	if (!ifname || !*ifname || strlen(ifname) >= IFNAMSIZ || strchr(ifname, '/'))
		return -EINVAL;
	rc = nl_open(&r, ifname);
	if (rc == 0)
		rc = aff_optics_decode(nl_read, &r, o, why, whylen);
	nl_close(&r);
	/* No ethtool family, or one without MODULE_EEPROM_GET (before 5.13): the ioctl. */
	if (rc != -ENOENT && rc != -EOPNOTSUPP)
		return rc;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	rc = ioctl_read_all(ifname, f);
	if (rc == 0)
		rc = aff_optics_decode(aff_optics_flat_read, f, o, why, whylen);
	free(f);
	return rc;
}

const char *aff_optics_errno_reason(int rc)
{
	switch (-rc) {
	case EPERM:
	case EACCES:
		return "needs CAP_NET_ADMIN (reading a module EEPROM is privileged: run the audit or snapshot as root)";
	case EOPNOTSUPP:
		return "no module EEPROM (the driver reports no pluggable module)";
	case ENODEV:
		return "the netdev is gone";
	case ENODATA:
		return "the module implements no diagnostics";
	case EPROTONOSUPPORT:
		return "a module EEPROM layout railbind does not decode";
	case ETIMEDOUT:
		return "the kernel did not answer the module EEPROM request";
	default:
		return "the module EEPROM could not be read (no module in the cage, or it does not answer)";
	}
}
