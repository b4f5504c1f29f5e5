/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parser of the railbind.ko text snapshot (/dev/railbind, format 1; see
 * kmod/ABI.md). Functions returning int give 0 or a negative errno; the
 * strings a snapshot hands out belong to it and live until it is freed.
 * A snapshot is immutable once parsed, so threads may share it.
 */
#ifndef AFF_SOURCE_KMOD_H
#define AFF_SOURCE_KMOD_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The snapshot format this parser reads (the header's format= value). */
#define AFF_KMOD_FORMAT 1
/* Strict bounds: a longer line, more records or more keys is -E2BIG. */
#define AFF_KMOD_MAX_LINE 4096
#define AFF_KMOD_MAX_RECORDS 65536
#define AFF_KMOD_MAX_KEYS 64

struct aff_kmod_snapshot;
struct aff_kmod_rec;

/*
 * Parses len bytes of text (no NUL needed). On failure *out is NULL and,
 * when err is not NULL, err holds "line N: what was expected".
 * -EINVAL: malformed text; -E2BIG: a bound exceeded; -EPROTO: header or
 * trailer missing, or the trailer's record count disagrees (truncated
 * read); -EPROTONOSUPPORT: another format; -ENOMEM.
 */
int aff_kmod_snapshot_parse(const char *text, size_t len,
			    struct aff_kmod_snapshot **out, char *err, size_t errlen);
/*
 * Reads and parses <root>/dev/railbind (root NULL or "" means "/"): one
 * open, reads to EOF, at most AFF_KMOD_MAX_BYTES. -ENOENT when the module
 * is not loaded (callers fall back to sysfs), other errors as above or
 * from open/read.
 */
#define AFF_KMOD_MAX_BYTES (16u << 20)
int aff_kmod_snapshot_read(const char *root, struct aff_kmod_snapshot **out, char *err,
			   size_t errlen);
size_t aff_kmod_snapshot_count(const struct aff_kmod_snapshot *snap);
/* NULL when i is out of range. Record 0 is the "railbind" header. */
const struct aff_kmod_rec *aff_kmod_snapshot_rec(const struct aff_kmod_snapshot *snap,
						 size_t i);
/* The first record of a type at or after index *from (updated), or NULL. */
const struct aff_kmod_rec *aff_kmod_snapshot_next(const struct aff_kmod_snapshot *snap,
						  const char *type, size_t *from);
const char *aff_kmod_rec_type(const struct aff_kmod_rec *rec);
/* The value of key, or NULL when the record has no such key. */
const char *aff_kmod_rec_get(const struct aff_kmod_rec *rec, const char *key);
size_t aff_kmod_rec_nkeys(const struct aff_kmod_rec *rec);
/* The i-th key=value in line order; NULL when i is out of range. */
const char *aff_kmod_rec_key(const struct aff_kmod_rec *rec, size_t i,
			     const char **value);
/* 1-based line of the record in the text. */
unsigned int aff_kmod_rec_line(const struct aff_kmod_rec *rec);
void aff_kmod_snapshot_free(struct aff_kmod_snapshot *snap);

#ifdef __cplusplus
}
#endif

#endif
