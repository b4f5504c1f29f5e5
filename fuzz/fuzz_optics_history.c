// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind.optics/1 (optics_history.c), the file root-run reads keep and
 * anyone who can write /run/railbind could plant: whatever the text, a
 * module's samples come back oldest first, strictly before the reading,
 * within the window, finite and at most AFF_OPTICS_HIST_MAX - 1; the
 * document written back gives the same samples; and
 * the snapshot attributes they become read back the same.
 */
#include <errno.h>
#include <math.h>

#include <hwloc.h>

#include "optics_history.h"
#include "optics_info.h"
#include "fuzz.h"

#define NOW 1700010800LL

static void check_samples(const struct aff_optics *o)
{
	unsigned i;

	FUZZ_CHECK(o->when == NOW && o->nhist < AFF_OPTICS_HIST_MAX);
	for (i = 0; i < o->nhist; i++) {
		FUZZ_CHECK(o->hist_t[i] < NOW && o->hist_t[i] >= NOW - AFF_OPTICS_HIST_WINDOW);
		FUZZ_CHECK(isfinite(o->hist_c[i]) && fabs(o->hist_c[i]) < 1000);
		FUZZ_CHECK(!i || o->hist_t[i] > o->hist_t[i - 1]);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aff_optics o = { .kind = AFF_OPTICS_SFF8636, .lanes = 1, .has = 1u << AFF_OQ_TEMP,
				.temp_c = 41.5 }, again = o, back;
	struct json_object *doc, *doc2;
	hwloc_topology_t topo;
	const char *reason;
	char *text, buf[200];
	unsigned i;

	text = malloc(size + 1);
	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	FUZZ_CHECK(aff_optics_history_parse(text, &doc) == 0);
	FUZZ_CHECK(aff_optics_history_take(doc, "0000:05:00.0", NOW, &o) == 0);
	check_samples(&o);
	/* Written back and read again at the same time: the same samples (the reading is not before itself). */
	FUZZ_CHECK(aff_optics_history_parse(json_object_to_json_string_ext(doc,
					    JSON_C_TO_STRING_PLAIN), &doc2) == 0);
	FUZZ_CHECK(aff_optics_history_take(doc2, "0000:05:00.0", NOW, &again) == 0);
	FUZZ_CHECK(again.nhist == o.nhist);
	for (i = 0; i < again.nhist; i++)
		FUZZ_CHECK(again.hist_t[i] == o.hist_t[i] && again.hist_c[i] == o.hist_c[i]);
	json_object_put(doc2);
	json_object_put(doc);
	if (o.nhist) {
		if (hwloc_topology_init(&topo) < 0 || hwloc_topology_set_synthetic(topo, "pu:1") < 0 ||
		    hwloc_topology_load(topo) < 0)
			abort();
		FUZZ_CHECK(aff_optics_info_write(hwloc_get_root_obj(topo), "eth0", &o) == 0);
		FUZZ_CHECK(aff_optics_info_read(hwloc_get_root_obj(topo), &back, &reason, buf,
						sizeof(buf)) == 0);
		FUZZ_CHECK(back.nhist == o.nhist && back.when == NOW);
		hwloc_topology_destroy(topo);
	}
	free(text);
	return 0;
}
