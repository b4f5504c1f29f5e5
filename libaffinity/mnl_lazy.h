/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mnl_lazy - libmnl, dlopen()ed on first use (mnl_lazy.c says why), for the
 * netlink readers: ethtool's module EEPROM (optics_read.c) and DCB
 * (dcb_read.c, dcb_parse.c). Private to libaffinity.
 */
#ifndef AFF_MNL_LAZY_H
#define AFF_MNL_LAZY_H

#include <stdbool.h>

#include <libmnl/libmnl.h>

/* libmnl's functions, each checked against <libmnl/libmnl.h> by the compiler. */
struct aff_mnl {
	__typeof__(mnl_socket_open2) *socket_open2;
	__typeof__(mnl_socket_get_fd) *socket_get_fd;
	__typeof__(mnl_socket_bind) *socket_bind;
	__typeof__(mnl_socket_get_portid) *socket_get_portid;
	__typeof__(mnl_socket_sendto) *socket_sendto;
	__typeof__(mnl_socket_recvfrom) *socket_recvfrom;
	__typeof__(mnl_socket_close) *socket_close;
	__typeof__(mnl_cb_run) *cb_run;
	__typeof__(mnl_nlmsg_put_header) *nlmsg_put_header;
	__typeof__(mnl_nlmsg_put_extra_header) *nlmsg_put_extra_header;
	__typeof__(mnl_attr_put_strz) *attr_put_strz;
	__typeof__(mnl_attr_put_u32) *attr_put_u32;
	__typeof__(mnl_attr_put_u8) *attr_put_u8;
	__typeof__(mnl_attr_nest_start) *attr_nest_start;
	__typeof__(mnl_attr_nest_end) *attr_nest_end;
	__typeof__(mnl_attr_parse) *attr_parse;
	__typeof__(mnl_attr_parse_nested) *attr_parse_nested;
	__typeof__(mnl_attr_get_type) *attr_get_type;
	__typeof__(mnl_attr_validate) *attr_validate;
	__typeof__(mnl_attr_validate2) *attr_validate2;
	__typeof__(mnl_attr_get_u8) *attr_get_u8;
	__typeof__(mnl_attr_get_u16) *attr_get_u16;
	__typeof__(mnl_attr_get_payload_len) *attr_get_payload_len;
	__typeof__(mnl_attr_get_payload) *attr_get_payload;
	__typeof__(mnl_nlmsg_ok) *nlmsg_ok;
};

/* The functions, once loaded; false when libmnl.so.0 is not on the node. */
bool aff_mnl_load(void);
extern struct aff_mnl aff_mnl;

#endif /* AFF_MNL_LAZY_H */
