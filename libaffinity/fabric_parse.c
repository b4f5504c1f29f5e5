// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The text of the RDMA port files sysfs gives (Documentation/ABI/stable/
 * sysfs-class-infiniband) and of the attributes discovery makes of them
 * (fabric.h), parsed strictly: anything else is -EINVAL, so that a caller
 * can name the file. No I/O here (fuzz/fuzz_fabric.c runs all of it).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric.h"

/*
 * The error counters of the IBA PortCounters attribute, with the widths
 * the kernel reads them at (they stop at their maximum, never wrap), and
 * the group of ibcheckerrs' default thresholds (infiniband-diags: 10 for
 * symbol, recovery, receive, integrity and overrun errors, 100 for the rest).
 */
const struct aff_counter_def aff_port_error_counters[] = {
	{ "symbol_error", 16, false },
	{ "link_error_recovery", 8, false },
	{ "link_downed", 8, false },
	{ "port_rcv_errors", 16, false },
	{ "port_rcv_remote_physical_errors", 16, true },
	{ "port_rcv_switch_relay_errors", 16, true },
	{ "port_xmit_discards", 16, true },
	{ "port_xmit_constraint_errors", 8, true },
	{ "port_rcv_constraint_errors", 8, true },
	{ "local_link_integrity_errors", 4, false },
	{ "excessive_buffer_overrun_errors", 4, false },
	{ "VL15_dropped", 16, true },
};
const size_t aff_port_error_ncounters = sizeof(aff_port_error_counters) /
					sizeof(aff_port_error_counters[0]);

void aff_port_info_name(char *buf, size_t len, unsigned port, const char *what)
{
	snprintf(buf, len, "RailbindPort%u%s", port, what);
}

int aff_fabric_parse_count(const char *s, unsigned long long *v)
{
	char *end;

	if (!s || !isdigit((unsigned char)*s) || strlen(s) > 20)
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

int aff_fabric_parse_state(const char *s, int *num, char *name, size_t namelen)
{
	const char *p = s;
	size_t n;
	long v = 0;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		v = v * 10 + (*p - '0');
		if (v > 255)
			return -EINVAL;
	}
	if (p[0] != ':' || p[1] != ' ')
		return -EINVAL;
	p += 2;
	n = strlen(p);
	if (!n || n >= namelen || !isgraph((unsigned char)p[0]) ||
	    !isgraph((unsigned char)p[n - 1]))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isgraph((unsigned char)p[i]) && p[i] != ' ')
			return -EINVAL;
	*num = (int)v;
	memcpy(name, p, n + 1);
	return 0;
}

int aff_fabric_parse_lid(const char *s, long *lid)
{
	char *end;
	long v;

	if (s[0] != '0' || s[1] != 'x' || !isxdigit((unsigned char)s[2]) || strlen(s) > 10)
		return -EINVAL;
	errno = 0;
	v = strtol(s + 2, &end, 16);
	if (errno || *end || v > 0xffff)
		return -EINVAL;
	*lid = v;
	return 0;
}

static int copy_word(const char *s, size_t n, char *out, size_t len)
{
	size_t i;

	if (!n || n >= len)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '.')
			return -EINVAL;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

int aff_fabric_parse_rate_mode(const char *s, char *width, size_t wlen, char *speed,
			       size_t slen)
{
	const char *open = strchr(s, '('), *sp, *close;

	if (!open)
		return -EINVAL;
	close = strchr(open, ')');
	sp = strchr(open, ' ');
	if (!close || close[1] || !sp || sp > close)
		return -EINVAL;
	if (copy_word(open + 1, (size_t)(sp - open - 1), width, wlen) < 0)
		return -EINVAL;
	return copy_word(sp + 1, (size_t)(close - sp - 1), speed, slen);
}

static int hexval(int c)
{
	if (isdigit(c))
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int aff_fabric_parse_gid(const char *s, unsigned char raw[16])
{
	size_t g, k;

	if (strlen(s) != 39)
		return -EINVAL;
	for (g = 0; g < 8; g++) {
		const char *p = s + g * 5;
		unsigned v = 0;

		for (k = 0; k < 4; k++) {
			int h = hexval((unsigned char)p[k]);

			if (h < 0)
				return -EINVAL;
			v = v << 4 | (unsigned)h;
		}
		if (g < 7 && p[4] != ':')
			return -EINVAL;
		raw[2 * g] = (unsigned char)(v >> 8);
		raw[2 * g + 1] = (unsigned char)v;
	}
	return 0;
}

void aff_fabric_format_gid(const unsigned char raw[16], char *buf, size_t len)
{
	snprintf(buf, len, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
		 raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7], raw[8], raw[9],
		 raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]);
}

int aff_fabric_parse_gid_type(const char *s, bool ethernet, enum aff_gid_type *type)
{
	if (!strcmp(s, "IB/RoCE v1")) {
		*type = ethernet ? AFF_GID_ROCE_V1 : AFF_GID_IB;
		return 0;
	}
	if (!strcmp(s, "RoCE v2")) {
		*type = AFF_GID_ROCE_V2;
		return 0;
	}
	return -EINVAL;
}

static const char *const gid_type_names[] = { "IB", "RoCEv1", "RoCEv2" };

const char *aff_gid_type_name(enum aff_gid_type t)
{
	return (unsigned)t < 3 ? gid_type_names[t] : "IB";
}

bool aff_gid_is_zero(const unsigned char raw[16])
{
	int i;

	for (i = 0; i < 16; i++)
		if (raw[i])
			return false;
	return true;
}

bool aff_gid_is_ipv4(const unsigned char raw[16], char *v4, size_t len)
{
	int i;

	for (i = 0; i < 10; i++)
		if (raw[i])
			return false;
	if (raw[10] != 0xff || raw[11] != 0xff)
		return false;
	if (v4)
		snprintf(v4, len, "%u.%u.%u.%u", raw[12], raw[13], raw[14], raw[15]);
	return true;
}

bool aff_gid_has_address(const unsigned char raw[16])
{
	if (aff_gid_is_ipv4(raw, NULL, 0))
		return true;
	if (raw[0] == 0xfe && (raw[1] & 0xc0) == 0x80)
		return false;
	return !aff_gid_is_zero(raw);
}

int aff_ib_mtu_bytes(int e)
{
	return e >= 1 && e <= 5 ? 128 << e : 0;
}

int aff_roce_mtu_of_netdev(int netdev_mtu)
{
	/* GRH 40, UDP 8, BTH 12, XRC 4, AtomicETH 28, ICRC 4 bytes (rdma/ib_addr.h). */
	int room = netdev_mtu - 96, mtu;

	for (mtu = 4096; mtu >= 256; mtu /= 2)
		if (room >= mtu)
			return mtu;
	return 0;
}

int aff_fabric_parse_gid_info(const char *s, struct aff_gid *g)
{
	char type[8], addr[40], nd[32];
	unsigned idx;
	int n = -1, i;

	if (sscanf(s, "%5u %7s %39s %31s%n", &idx, type, addr, nd, &n) != 4 || n < 0 ||
	    s[n] || !isdigit((unsigned char)s[0]) || idx > 65535)
		return -EINVAL;
	for (i = 0; i < 3; i++)
		if (!strcmp(type, gid_type_names[i]))
			break;
	if (i == 3 || aff_fabric_parse_gid(addr, g->raw) < 0)
		return -EINVAL;
	g->index = idx;
	g->type = (enum aff_gid_type)i;
	snprintf(g->netdev, sizeof(g->netdev), "%s", strcmp(nd, "-") ? nd : "");
	return 0;
}

int aff_fabric_parse_counter_info(const char *s, struct aff_port_counter *c)
{
	char name[40], val[24];
	unsigned bits;
	int n = -1;

	if (sscanf(s, "%39s %23s %2u%n", name, val, &bits, &n) != 3 || n < 0 || s[n] ||
	    aff_fabric_parse_count(val, &c->value) < 0 ||
	    (bits != 4 && bits != 8 && bits != 16 && bits != 32 && bits != 64))
		return -EINVAL;
	if (bits < 64 && c->value >= 1ull << bits)
		return -EINVAL;
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->bits = bits;
	return 0;
}
