// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Parser of railbind.ko's text snapshot: "<type> key=value ...\n" lines,
 * a "railbind format=N ..." header first and "end records=N" last.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source_kmod.h"

struct aff_kmod_kv {
	const char *key;
	const char *value;
};

struct aff_kmod_rec {
	const char *type;
	struct aff_kmod_kv *kv;
	size_t nkv;
	unsigned int line;
};

struct aff_kmod_snapshot {
	char *text;
	struct aff_kmod_rec *recs;
	size_t nrecs;
	struct aff_kmod_kv *kvs;
};

__attribute__((format(printf, 5, 6)))
static int fail(char *err, size_t errlen, int ret, unsigned int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || !errlen)
		return ret;
	n = snprintf(err, errlen, "line %u: ", line);
	if (n < 0 || (size_t)n >= errlen)
		return ret;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - n, fmt, ap);
	va_end(ap);
	return ret;
}

static int is_name_start(char c)
{
	return c >= 'a' && c <= 'z';
}

static int is_name(char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9') || c == '_';
}

static int is_value(char c)
{
	return c > ' ' && c <= '~';
}

/* Checks one line's grammar and counts its keys; the line has no '\n'. */
static int check_line(const char *s, size_t n, unsigned int line, size_t *nkeys,
		      char *err, size_t errlen)
{
	size_t i = 0, keys = 0;

	if (n > AFF_KMOD_MAX_LINE)
		return fail(err, errlen, -E2BIG, line, "line longer than %d bytes",
			    AFF_KMOD_MAX_LINE);
	if (!n || !is_name_start(s[0]))
		return fail(err, errlen, -EINVAL, line,
			    "expected a record type ([a-z][a-z0-9_]*)");
	while (i < n && is_name(s[i]))
		i++;
	while (i < n) {
		size_t k;

		if (s[i] != ' ')
			return fail(err, errlen, -EINVAL, line,
				    "expected a space before key at column %zu", i + 1);
		i++;
		if (i == n || !is_name_start(s[i]))
			return fail(err, errlen, -EINVAL, line,
				    "expected a key ([a-z][a-z0-9_]*) at column %zu", i + 1);
		k = i;
		while (i < n && is_name(s[i]))
			i++;
		if (i == n || s[i] != '=')
			return fail(err, errlen, -EINVAL, line,
				    "expected '=' after key \"%.*s\"", (int)(i - k), s + k);
		i++;
		if (i == n || !is_value(s[i]))
			return fail(err, errlen, -EINVAL, line,
				    "expected a value for key \"%.*s\"", (int)(i - 1 - k),
				    s + k);
		while (i < n && is_value(s[i]))
			i++;
		if (++keys > AFF_KMOD_MAX_KEYS)
			return fail(err, errlen, -E2BIG, line, "more than %d keys",
				    AFF_KMOD_MAX_KEYS);
	}
	*nkeys = keys;
	return 0;
}

/* Splits a checked line in place (the text is our own copy). */
static void split_line(char *s, struct aff_kmod_rec *rec)
{
	size_t k = 0;
	char *p;

	rec->type = s;
	p = strchr(s, ' ');
	while (p) {
		*p++ = '\0';
		rec->kv[k].key = p;
		p = strchr(p, '=');
		*p++ = '\0';
		rec->kv[k].value = p;
		k++;
		p = strchr(p, ' ');
	}
	rec->nkv = k;
}

static int check_dups(const struct aff_kmod_rec *rec, char *err, size_t errlen)
{
	size_t i, j;

	for (i = 0; i < rec->nkv; i++)
		for (j = 0; j < i; j++)
			if (!strcmp(rec->kv[i].key, rec->kv[j].key))
				return fail(err, errlen, -EINVAL, rec->line,
					    "key \"%s\" appears twice", rec->kv[i].key);
	return 0;
}

static int parse_count(const char *s, unsigned long *v)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

static int check_frame(const struct aff_kmod_snapshot *snap, char *err, size_t errlen)
{
	const struct aff_kmod_rec *first = &snap->recs[0];
	const struct aff_kmod_rec *last = &snap->recs[snap->nrecs - 1];
	unsigned long v;

	if (strcmp(first->type, "railbind"))
		return fail(err, errlen, -EPROTO, first->line,
			    "expected the \"railbind\" header record first");
	if (parse_count(aff_kmod_rec_get(first, "format"), &v))
		return fail(err, errlen, -EPROTO, first->line,
			    "expected format=<number> in the header");
	if (v != AFF_KMOD_FORMAT)
		return fail(err, errlen, -EPROTONOSUPPORT, first->line,
			    "format %lu is not supported (expected %d)", v, AFF_KMOD_FORMAT);
	if (strcmp(last->type, "end"))
		return fail(err, errlen, -EPROTO, last->line,
			    "expected the \"end\" trailer record last (truncated?)");
	if (parse_count(aff_kmod_rec_get(last, "records"), &v))
		return fail(err, errlen, -EPROTO, last->line,
			    "expected records=<number> in the trailer");
	if (v != snap->nrecs)
		return fail(err, errlen, -EPROTO, last->line,
			    "trailer says %lu records, found %zu", v, snap->nrecs);
	return 0;
}

/* First pass: grammar, bounds and sizes, before anything is allocated. */
static int scan(const char *text, size_t len, size_t *nrecs, size_t *nkvs,
		char *err, size_t errlen)
{
	size_t pos = 0, recs = 0, kvs = 0;
	unsigned int line = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n, keys = 0;
		int ret;

		line++;
		if (!nl)
			return fail(err, errlen, -EPROTO, line,
				    "expected a newline at the end (truncated?)");
		n = (size_t)(nl - (text + pos));
		if (memchr(text + pos, '\0', n))
			return fail(err, errlen, -EINVAL, line, "unexpected NUL byte");
		ret = check_line(text + pos, n, line, &keys, err, errlen);
		if (ret)
			return ret;
		if (++recs > AFF_KMOD_MAX_RECORDS)
			return fail(err, errlen, -E2BIG, line, "more than %d records",
				    AFF_KMOD_MAX_RECORDS);
		kvs += keys;
		pos += n + 1;
	}
	if (!recs)
		return fail(err, errlen, -EPROTO, 1, "expected the \"railbind\" header record");
	*nrecs = recs;
	*nkvs = kvs;
	return 0;
}

int aff_kmod_snapshot_parse(const char *text, size_t len,
			    struct aff_kmod_snapshot **out, char *err, size_t errlen)
{
	struct aff_kmod_snapshot *snap;
	size_t nrecs = 0, nkvs = 0, i, kv = 0;
	char *line;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (!text && len)
		return -EINVAL;
	ret = scan(text, len, &nrecs, &nkvs, err, errlen);
	if (ret)
		return ret;

	snap = calloc(1, sizeof(*snap));
	if (!snap)
		return -ENOMEM;
	snap->text = malloc(len + 1);
	/* A scanned snapshot has its header and trailer: nrecs >= 2. */
	snap->recs = calloc(nrecs, sizeof(*snap->recs)); // NOLINT(clang-analyzer-optin.portability.UnixAPI)
	snap->kvs = calloc(nkvs ? nkvs : 1, sizeof(*snap->kvs));
	if (!snap->text || !snap->recs || !snap->kvs) {
		aff_kmod_snapshot_free(snap);
		return -ENOMEM;
	}
	memcpy(snap->text, text, len);
	snap->text[len] = '\0';
	snap->nrecs = nrecs;

	line = snap->text;
	for (i = 0; i < nrecs; i++) {
		char *nl = strchr(line, '\n');
		struct aff_kmod_rec *rec = &snap->recs[i];

		*nl = '\0';
		rec->line = (unsigned int)i + 1;
		rec->kv = &snap->kvs[kv];
		split_line(line, rec);
		kv += rec->nkv;
		ret = check_dups(rec, err, errlen);
		if (ret)
			goto err;
		line = nl + 1;
	}
	ret = check_frame(snap, err, errlen);
	if (ret)
		goto err;
	*out = snap;
	return 0;
err:
	aff_kmod_snapshot_free(snap);
	return ret;
}

int aff_kmod_snapshot_read(const char *root, struct aff_kmod_snapshot **out, char *err,
			   size_t errlen)
{
	size_t len = 0, cap = 1 << 16;
	char path[4096], *buf, *nb;
	int fd, n, ret, restarts = 0;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!root || !*root)
		root = "/";
	n = snprintf(path, sizeof(path), "%s%sdev/railbind", root,
		     root[strlen(root) - 1] == '/' ? "" : "/");
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t r;

		if (len == cap) {
			if (cap >= AFF_KMOD_MAX_BYTES) {
				ret = fail(err, errlen, -E2BIG, 0, "%s is over %u bytes", path,
					   AFF_KMOD_MAX_BYTES);
				goto out;
			}
			cap *= 2;
			nb = realloc(buf, cap);
			if (!nb) {
				ret = -ENOMEM;
				goto out;
			}
			buf = nb;
		}
		r = pread(fd, buf + len, cap - len, (off_t)len);
		if (r < 0 && errno == EINTR)
			continue;
		/*
		 * The module keeps only a few superseded snapshots: one pushed
		 * out while we were in the middle of it is gone (ESTALE), and a
		 * read from offset 0 attaches the current one (kmod/ABI.md).
		 */
		if (r < 0 && errno == ESTALE && len && restarts++ < 8) {
			len = 0;
			continue;
		}
		if (r < 0) {
			ret = -errno;
			goto out;
		}
		if (!r)
			break;
		len += (size_t)r;
	}
	ret = aff_kmod_snapshot_parse(buf, len, out, err, errlen);
out:
	free(buf);
	close(fd);
	return ret;
}

size_t aff_kmod_snapshot_count(const struct aff_kmod_snapshot *snap)
{
	return snap ? snap->nrecs : 0;
}

const struct aff_kmod_rec *aff_kmod_snapshot_rec(const struct aff_kmod_snapshot *snap,
						 size_t i)
{
	if (!snap || i >= snap->nrecs)
		return NULL;
	return &snap->recs[i];
}

const struct aff_kmod_rec *aff_kmod_snapshot_next(const struct aff_kmod_snapshot *snap,
						  const char *type, size_t *from)
{
	size_t i;

	if (!snap || !type || !from)
		return NULL;
	for (i = *from; i < snap->nrecs; i++) {
		if (!strcmp(snap->recs[i].type, type)) {
			*from = i + 1;
			return &snap->recs[i];
		}
	}
	*from = snap->nrecs;
	return NULL;
}

const char *aff_kmod_rec_type(const struct aff_kmod_rec *rec)
{
	return rec ? rec->type : NULL;
}

const char *aff_kmod_rec_get(const struct aff_kmod_rec *rec, const char *key)
{
	size_t i;

	if (!rec || !key)
		return NULL;
	for (i = 0; i < rec->nkv; i++)
		if (!strcmp(rec->kv[i].key, key))
			return rec->kv[i].value;
	return NULL;
}

size_t aff_kmod_rec_nkeys(const struct aff_kmod_rec *rec)
{
	return rec ? rec->nkv : 0;
}

const char *aff_kmod_rec_key(const struct aff_kmod_rec *rec, size_t i,
			     const char **value)
{
	if (!rec || i >= rec->nkv)
		return NULL;
	if (value)
		*value = rec->kv[i].value;
	return rec->kv[i].key;
}

unsigned int aff_kmod_rec_line(const struct aff_kmod_rec *rec)
{
	return rec ? rec->line : 0;
}

void aff_kmod_snapshot_free(struct aff_kmod_snapshot *snap)
{
	if (!snap)
		return;
	free(snap->text);
	free(snap->recs);
	free(snap->kvs);
	free(snap);
}
