// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The kernel module's /dev/railbind text (aff_kmod_snapshot_parse), read
 * back through every accessor: a parsed snapshot is what the broker will
 * trust, so each record, key and value must be there and within bounds.
 */
#include "source_kmod.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aff_kmod_snapshot *snap = NULL;
	char err[256];
	size_t i, k, from;

	/* A plain copy, so ASan sees a read past size (the parser needs no NUL). */
	char *text = malloc(size ? size : 1);

	if (!text)
		abort();
	memcpy(text, data, size);
	if (aff_kmod_snapshot_parse(text, size, &snap, err, sizeof(err)) == 0) {
		size_t n = aff_kmod_snapshot_count(snap);

		FUZZ_CHECK(n >= 2 && n <= AFF_KMOD_MAX_RECORDS);
		FUZZ_CHECK(!strcmp(aff_kmod_rec_type(aff_kmod_snapshot_rec(snap, 0)),
				   "railbind"));
		FUZZ_CHECK(aff_kmod_snapshot_rec(snap, n) == NULL);
		for (i = 0; i < n; i++) {
			const struct aff_kmod_rec *rec = aff_kmod_snapshot_rec(snap, i);

			FUZZ_CHECK(rec && *aff_kmod_rec_type(rec));
			FUZZ_CHECK(aff_kmod_rec_nkeys(rec) <= AFF_KMOD_MAX_KEYS);
			for (k = 0; k < aff_kmod_rec_nkeys(rec); k++) {
				const char *v = NULL, *key = aff_kmod_rec_key(rec, k, &v);

				FUZZ_CHECK(key && *key && v);
				FUZZ_CHECK(aff_kmod_rec_get(rec, key) != NULL);
			}
			FUZZ_CHECK(aff_kmod_rec_key(rec, k, NULL) == NULL);
			from = i;
			FUZZ_CHECK(aff_kmod_snapshot_next(snap, aff_kmod_rec_type(rec),
							  &from) == rec);
		}
		aff_kmod_snapshot_free(snap);
	} else {
		FUZZ_CHECK(snap == NULL);
	}
	free(text);
	return 0;
}
