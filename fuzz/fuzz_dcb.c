// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The DCB netlink parser on any bytes as a kernel reply (seeds: the replies
 * tests/dcb/mkdcb.c writes from the kernel's layouts): a parsed reply has
 * its DSCP entries on priorities 0-7 and its ETS classes 0-7, an error is
 * one the parser documents, with a reason when malformed. Then the snapshot
 * attributes the reading becomes, read back: the same state. And the
 * judge on the reading, for every traffic class: a line, a priority 0-7 or
 * -1.
 */
#include <errno.h>

#include <hwloc.h>

#include "dcb.h"
#include "roce.h"
#include "fuzz.h"

static const char *no_env(const char *name, void *arg)
{
	(void)name;
	(void)arg;
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aff_config conf = { .roce_priority_set = true, .roce_priority = 3,
				   .roce_trust = AFF_TRUST_DSCP };
	struct aff_roce_user u[AFF_ROCE_USERS];
	struct aff_dcb d, back;
	hwloc_topology_t topo;
	const char *reason;
	hwloc_obj_t obj;
	char why[256], buf[160], line[384];
	uint8_t *copy;
	unsigned i;
	int rc, prio;

	/* An exact-size heap copy, so ASan catches a read past the end. */
	copy = malloc(size ? size : 1);
	if (!copy)
		abort();
	memcpy(copy, data, size);
	rc = aff_dcb_parse(copy, size, &d, why, sizeof(why));
	FUZZ_CHECK(rc <= 0 && rc >= -4095);
	if (rc == -EPROTO)
		FUZZ_CHECK(why[0] != '\0');
	if (rc == 0) {
		for (i = 0; i < AFF_DCB_DSCPS; i++)
			FUZZ_CHECK(!(d.dscp_mapped & 1ull << i) || d.dscp_prio[i] < AFF_DCB_PRIOS);
		for (i = 0; i < AFF_DCB_PRIOS; i++)
			FUZZ_CHECK(d.prio_tc[i] < AFF_DCB_PRIOS);
		if (hwloc_topology_init(&topo) < 0 || hwloc_topology_set_synthetic(topo, "pu:1") < 0 ||
		    hwloc_topology_load(topo) < 0)
			abort();
		obj = hwloc_get_root_obj(topo);
		FUZZ_CHECK(aff_dcb_info_write(obj, "eth0", &d) == 0);
		FUZZ_CHECK(aff_dcb_info_read(obj, &back, &reason, buf, sizeof(buf)) == 0);
		FUZZ_CHECK(back.has_pfc == d.has_pfc && back.has_ets == d.has_ets &&
			   back.dscp_mapped == d.dscp_mapped);
		if (d.has_pfc)
			FUZZ_CHECK(back.pfc_en == d.pfc_en && back.pfc_cap == d.pfc_cap &&
				   !memcmp(back.pause_tx, d.pause_tx, sizeof(d.pause_tx)) &&
				   !memcmp(back.pause_rx, d.pause_rx, sizeof(d.pause_rx)));
		FUZZ_CHECK(!memcmp(back.dscp_prio, d.dscp_prio, sizeof(d.dscp_prio)));
		hwloc_topology_destroy(topo);
		aff_roce_users(no_env, NULL, u);
		for (i = 0; i < 256; i += 4) {
			u[0].tc = i;
			aff_roce_judge(&d, &conf, &u[0], &prio, line, sizeof(line));
			FUZZ_CHECK(prio >= -1 && prio < AFF_DCB_PRIOS && line[0]);
		}
	}
	free(copy);
	return 0;
}
