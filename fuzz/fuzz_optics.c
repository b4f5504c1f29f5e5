// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The transceiver decoders on any module dump (optics.h's records of an
 * I2C address, page, bank, half and 128 bytes): whatever the bytes, a
 * decoded module has 1 to 8 lanes and finite readings and thresholds, and
 * an error is one the decoders document. Then the snapshot attributes the
 * readings become, read back: the same lanes and quantities.
 */
#include <errno.h>
#include <math.h>

#include <hwloc.h>

#include "optics.h"
#include "optics_info.h"
#include "fuzz.h"

static void check_finite(const struct aff_optics *o)
{
	unsigned l;
	int q;

	FUZZ_CHECK(isfinite(o->temp_c) && isfinite(o->vcc_v));
	for (l = 0; l < AFF_OPTICS_MAX_LANES; l++)
		FUZZ_CHECK(isfinite(o->rx_mw[l]) && isfinite(o->tx_mw[l]) &&
			   isfinite(o->bias_ma[l]) && o->rx_mw[l] >= 0 && o->bias_ma[l] >= 0);
	for (q = 0; q < AFF_OQ_N; q++)
		FUZZ_CHECK(isfinite(o->thresh[q].high_alarm) && isfinite(o->thresh[q].low_alarm) &&
			   isfinite(o->thresh[q].high_warn) && isfinite(o->thresh[q].low_warn));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aff_optics_image im;
	struct aff_optics o, back;
	const char *reason;
	hwloc_obj_t obj;
	char why[256], buf[160];
	uint8_t *copy;
	int rc;

	/* An exact-size heap copy, so ASan catches a read past the end. */
	copy = malloc(size ? size : 1);
	if (!copy)
		abort();
	memcpy(copy, data, size);
	im.data = copy;
	im.len = size;
	rc = aff_optics_decode(aff_optics_image_read, &im, &o, why, sizeof(why));
	FUZZ_CHECK(rc == 0 || rc == -EIO || rc == -ENODATA || rc == -EPROTONOSUPPORT);
	if (rc == 0) {
		FUZZ_CHECK(o.lanes >= 1 && o.lanes <= AFF_OPTICS_MAX_LANES);
		FUZZ_CHECK(aff_optics_kind_name(o.kind) != NULL);
		check_finite(&o);
		/* A fresh object each time: infos already there are kept, not rewritten. */
		hwloc_topology_t topo;

		if (hwloc_topology_init(&topo) < 0 || hwloc_topology_set_synthetic(topo, "pu:1") < 0 ||
		    hwloc_topology_load(topo) < 0)
			abort();
		obj = hwloc_get_root_obj(topo);
		FUZZ_CHECK(aff_optics_info_write(obj, "eth0", &o) == 0);
		FUZZ_CHECK(aff_optics_info_read(obj, &back, &reason, buf, sizeof(buf)) == 0);
		FUZZ_CHECK(back.kind == o.kind && back.lanes == o.lanes);
		/* Only a value too large for the attribute's text is left out. */
		FUZZ_CHECK((back.has & ~o.has) == 0 && (back.has_thresh & ~o.has_thresh) == 0);
		hwloc_topology_destroy(topo);
	} else if (rc != -EIO) {
		FUZZ_CHECK(why[0] != '\0');
	}
	free(copy);
	return 0;
}
