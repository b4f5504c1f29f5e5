// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dcbplant: a recorded DCB reply (tests/dcb/mkdcb.c) through railbind's own
 * parser and snapshot writer (dcb_parse.c, dcb_info.c), printed as the
 * <info> lines discovery would put on the NIC's PCI object, for run.sh to
 * plant in a fixture. So the audit's fixtures are what the parser makes of
 * the kernel's bytes, not hand-written attributes.
 *
 *   dcbplant REPLY [ifname=eth0] [second=REPLY2 ms=N] [ecn=ROOT]
 *   dcbplant vf=ROOT [ifname=eth0]   discovery's own decision on a tree
 *   dcbplant live IFNAME             read this host's netdev: "ok" or the reason
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "dcb.h"

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	void *buf = malloc(65536);

	if (!f || !buf) {
		fprintf(stderr, "dcbplant: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	*len = fread(buf, 1, 65536, f);
	fclose(f);
	return buf;
}

static void print_xml(const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '&': fputs("&amp;", stdout); break;
		case '<': fputs("&lt;", stdout); break;
		case '>': fputs("&gt;", stdout); break;
		case '"': fputs("&quot;", stdout); break;
		default: putchar(*s);
		}
}

static int parse(const char *path, struct aff_dcb *d, char *reason, size_t len)
{
	size_t n;
	void *buf = slurp(path, &n);
	char why[256];
	int rc = aff_dcb_parse(buf, n, d, why, sizeof(why));

	free(buf);
	if (rc < 0)
		snprintf(reason, len, "%s%s%s", aff_dcb_errno_reason(rc),
			 rc == -EPROTO && *why ? ": " : "", rc == -EPROTO ? why : "");
	return rc;
}

int main(int argc, char **argv)
{
	const char *ifname = "eth0", *second = NULL, *ecn = NULL, *vf = NULL, *reply = NULL;
	char reason[320], ecnwhy[320];
	unsigned ms = 1000, i;
	hwloc_topology_t topo;
	hwloc_obj_t obj;
	struct aff_dcb d, d2;
	int a, rc;

	if (argc == 3 && !strcmp(argv[1], "live")) {
		rc = aff_dcb_read_netdev(argv[2], &d, reason, sizeof(reason));
		printf("%s\n", rc ? aff_dcb_errno_reason(rc) : "ok");
		return 0;
	}
	for (a = 1; a < argc; a++) {
		if (!strncmp(argv[a], "ifname=", 7))
			ifname = argv[a] + 7;
		else if (!strncmp(argv[a], "second=", 7))
			second = argv[a] + 7;
		else if (!strncmp(argv[a], "ms=", 3))
			ms = (unsigned)atoi(argv[a] + 3);
		else if (!strncmp(argv[a], "ecn=", 4))
			ecn = argv[a] + 4;
		else if (!strncmp(argv[a], "vf=", 3))
			vf = argv[a] + 3;
		else if (!reply)
			reply = argv[a];
		else
			return fprintf(stderr, "dcbplant: bad argument %s\n", argv[a]), 2;
	}
	if (!reply && !vf)
		return fprintf(stderr, "usage: dcbplant REPLY [ifname=] [second= ms=] [ecn=ROOT] | vf=ROOT | live IFNAME\n"), 2;
	if (hwloc_topology_init(&topo) < 0 || hwloc_topology_set_synthetic(topo, "pu:1") < 0 ||
	    hwloc_topology_load(topo) < 0)
		return 1;
	obj = hwloc_get_root_obj(topo);
	if (vf) {
		rc = aff_dcb_annotate(obj, vf, false, ifname, NULL);
	} else if (parse(reply, &d, reason, sizeof(reason)) < 0) {
		rc = aff_dcb_info_undecided(obj, ifname, reason);
	} else {
		if (second) {
			if (parse(second, &d2, reason, sizeof(reason)) < 0)
				return fprintf(stderr, "dcbplant: %s: %s\n", second, reason), 1;
			d.has_second = true;
			d.interval_ms = ms;
			memcpy(d.pause_tx2, d2.pause_tx, sizeof(d.pause_tx2));
			memcpy(d.pause_rx2, d2.pause_rx, sizeof(d.pause_rx2));
		}
		/* No ECN files: the reason is what dcb_read.c says, recorded as discovery does. */
		if (aff_dcb_read_ecn(ecn ? ecn : "/nonexistent", ifname, &d, ecnwhy, sizeof(ecnwhy)) == -EINVAL)
			return fprintf(stderr, "dcbplant: %s\n", ecnwhy), 1;
		rc = aff_dcb_info_write(obj, ifname, &d);
		if (!rc && !d.has_ecn)
			rc = aff_dcb_info_ecn_undecided(obj, ecnwhy);
	}
	if (rc < 0)
		return fprintf(stderr, "dcbplant: %s\n", strerror(-rc)), 1;
	for (i = 0; i < obj->infos_count; i++) {
		if (strncmp(obj->infos[i].name, "RailbindDcb", 11))
			continue;
		printf("<info name=\"%s\" value=\"", obj->infos[i].name);
		print_xml(obj->infos[i].value);
		printf("\"/>\n");
	}
	hwloc_topology_destroy(topo);
	return 0;
}
