// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * aff_topo_load(): which source, and a clear word when a file is none of
 * them. The file is read once (aff_read_file), its root element sniffed
 * here, and the text handed to the loader of its kind: hwloc XML to hwloc,
 * in a child process (source_hwloc_import.c), NCCL XML to source_nccl.c.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "source_live.h"

#define SNIFF_SIZE 65536

enum input_kind {
	INPUT_HWLOC,
	INPUT_NCCL,
};

/* Skip the prolog: BOM, blanks, <?...?>, <!-- -->, <!DOCTYPE>. */
static const char *skip_prolog(const char *p, const char *end)
{
	if (end - p >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		p += 3;
	for (;;) {
		const char *close;

		while (p < end && isspace((unsigned char)*p))
			p++;
		/* cppcheck wrongly takes p == end for granted after the loop. */
		// cppcheck-suppress knownConditionTrueFalse
		if (end - p < 2 || *p != '<')
			return p;
		if (p[1] == '?')
			close = memmem(p, (size_t)(end - p), "?>", 2);
		else if (end - p >= 4 && !memcmp(p, "<!--", 4))
			close = memmem(p, (size_t)(end - p), "-->", 3);
		else if (p[1] == '!')
			close = memchr(p, '>', (size_t)(end - p));
		else
			return p;
		if (!close)
			return end;
		p = close + (p[1] == '!' && p[2] == '-' ? 3 : p[1] == '?' ? 2 : 1);
	}
}

/* Which kind of topology the text is, from its root element. */
static int sniff(const char *path, const char *buf, size_t n,
		 enum input_kind *kind, char *err, size_t errlen)
{
	const char *p, *end;
	char name[32];
	size_t k = 0;

	if (n == 0)
		return aff_seterr(err, errlen, EINVAL,
				  "%s: empty file, expected a topology XML file", path);
	if (aff_xml_check_encoding(buf, n, path, err, errlen) < 0)
		return -EINVAL;
	/* The root element is near the start of any topology file. */
	end = buf + (n < SNIFF_SIZE ? n : SNIFF_SIZE);
	p = skip_prolog(buf, end);
	if (p >= end || *p != '<')
		return aff_seterr(err, errlen, EINVAL,
				  "%s: not XML, expected hwloc XML (<topology>) or an NCCL topology (<system>)",
				  path);
	for (p++; p < end && k + 1 < sizeof(name) &&
	     (isalnum((unsigned char)*p) || *p == '_' || *p == '-' || *p == ':');
	     p++)
		name[k++] = *p;
	name[k] = '\0';
	if (!strcmp(name, "topology")) {
		const char *v = memmem(p, (size_t)(end - p), "version=\"", 9);
		const char *gt = memchr(p, '>', (size_t)(end - p));

		*kind = INPUT_HWLOC;
		/* hwloc 2 reads v1 and v2 files and refuses v3 without a word. */
		if (v && gt && v < gt && atoi(v + 9) > HWLOC_API_VERSION >> 16)
			return aff_seterr(err, errlen, ENOTSUP,
					  "%s: hwloc XML version %d, newer than this hwloc %d.x reads; export it again with lstopo of hwloc %d",
					  path, atoi(v + 9), HWLOC_API_VERSION >> 16,
					  HWLOC_API_VERSION >> 16);
		return 0;
	}
	if (!strcmp(name, "system")) {
		*kind = INPUT_NCCL;
		return 0;
	}
	return aff_seterr(err, errlen, EINVAL,
			  "%s: root element <%s>, expected <topology> (hwloc XML) or <system> (NCCL topology)",
			  path, name);
}

/* hwloc XML: imported where a crash is contained (source_hwloc_import.c). */
static int load_hwloc_source(struct aff_topo *t, const char *buf, size_t len,
			     unsigned long flags, char *err, size_t errlen)
{
	hwloc_topology_t hw;
	int rc = aff_hwloc_import(t->ctx, t->source, buf, len, flags, &hw, err, errlen);

	if (rc < 0)
		return rc;
	return aff_load_hwloc(t, hw, err, errlen);
}

/* The live node under @ctx's root, annotated from sysfs (and by NVML and ROCm SMI). */
static int discover(const struct aff_ctx *ctx, unsigned long flags, hwloc_topology_t *hw,
		    struct aff_discover_report *rep, char *err, size_t errlen)
{
	int rc = aff_discover_live(ctx->root, hw, rep, err, errlen);

	if (rc < 0)
		return rc;
	if ((flags & AFF_LOAD_GPU_LIBS) && aff_discover_gpu_libs(*hw, ctx->root, rep) < 0) {
		hwloc_topology_destroy(*hw);
		return aff_seterr(err, errlen, ENOMEM, "live node: out of memory");
	}
	/* libibverbs with the other vendor libraries: an IB port's MTU is verbs-only. */
	if ((flags & (AFF_LOAD_GPU_LIBS | AFF_LOAD_OPTICS)) &&
	    (!ctx->root || !*ctx->root || !strcmp(ctx->root, "/")) && aff_discover_verbs(*hw) < 0) {
		hwloc_topology_destroy(*hw);
		return aff_seterr(err, errlen, ENOMEM, "live node: out of memory");
	}
	if ((flags & AFF_LOAD_OPTICS) && (aff_discover_optics(*hw, ctx->root, rep) < 0 ||
					  aff_discover_dcb(*hw, ctx->root, rep) < 0)) {
		hwloc_topology_destroy(*hw);
		return aff_seterr(err, errlen, ENOMEM, "live node: out of memory");
	}
	return 0;
}

/* The live node, annotated from sysfs exactly as a snapshot records it. */
static int load_live(struct aff_topo *t, unsigned long flags, char *err, size_t errlen)
{
	struct aff_discover_report rep;
	hwloc_topology_t hw;
	int rc;

	rc = discover(t->ctx, flags, &hw, &rep, err, errlen);
	if (rc < 0)
		return rc;
	if (rep.note[0])
		aff_info(t->ctx, "live node: %s\n", rep.note);
	return aff_load_hwloc(t, hw, err, errlen);
}

/* What load_live() reads, written as hwloc XML: a snapshot (out_snapshot.c). */
AFF_EXPORT int aff_snapshot_live(struct aff_ctx *ctx, const char *path, char *note,
				 size_t notelen, char *err, size_t errlen)
{
	struct aff_discover_report rep;
	char why[1024] = "";
	hwloc_topology_t hw;
	int rc;

	if (note && notelen)
		*note = '\0';
	rc = aff_hwloc_require("snapshot", err, errlen);
	if (rc < 0)
		return rc;
	/*
	 * A snapshot keeps what NVML and ROCm SMI say, and the transceivers'
	 * readings, for topo and audit --input anywhere.
	 */
	rc = discover(ctx, AFF_LOAD_GPU_LIBS | AFF_LOAD_OPTICS, &hw, &rep, why, sizeof(why));
	if (rc < 0)
		return aff_seterr(err, errlen, -rc, "snapshot: %s", *why ? why : strerror(-rc));
	rc = aff_snapshot_write(hw, path, err, errlen);
	hwloc_topology_destroy(hw);
	if (!rc && note && notelen)
		snprintf(note, notelen, "%s", rep.note);
	return rc;
}

static int finish(struct aff_topo *t, int rc, unsigned long flags,
		  struct aff_topo **out, char *err, size_t errlen)
{
	if (!rc && (flags & AFF_LOAD_REQUIRE_GPU) && !t->ngpu)
		rc = aff_seterr(err, errlen, ENODEV, "%s: no accelerator found",
				t->source);
	if (rc < 0) {
		aff_topo_unref(t);
		return rc;
	}
	*out = t;
	return 0;
}

AFF_EXPORT int aff_topo_load_buffer(struct aff_ctx *ctx, const char *name, const char *buf,
				    size_t len, unsigned long flags, struct aff_topo **out,
				    char *err, size_t errlen)
{
	enum input_kind kind = INPUT_HWLOC;
	struct aff_topo *t;
	int rc;

	*out = NULL;
	rc = sniff(name, buf, len, &kind, err, errlen);
	if (rc < 0)
		return rc;
	rc = aff_hwloc_require(name, err, errlen);
	if (rc < 0)
		return rc;
	t = aff_topo_alloc(ctx, kind == INPUT_NCCL ? AFF_SRC_NCCL : AFF_SRC_HWLOC, name);
	if (!t)
		return -ENOMEM;
	if (kind == INPUT_NCCL)
		rc = aff_load_nccl_mem(t, buf, len, name, err, errlen);
	else
		rc = load_hwloc_source(t, buf, len, flags, err, errlen);
	return finish(t, rc, flags, out, err, errlen);
}

AFF_EXPORT int aff_topo_load(struct aff_ctx *ctx, const char *input,
			     unsigned long flags, struct aff_topo **out,
			     char *err, size_t errlen)
{
	struct aff_topo *t;
	char *buf;
	size_t len;
	int rc;

	*out = NULL;
	if (input) {
		rc = aff_read_file(input, aff_ctx_input_limit(ctx), &buf, &len, err, errlen);
		if (rc < 0)
			return rc;
		rc = aff_topo_load_buffer(ctx, input, buf, len, flags, out, err, errlen);
		free(buf);
		return rc;
	}
	rc = aff_hwloc_require("live node", err, errlen);
	if (rc < 0)
		return rc;
	t = aff_topo_alloc(ctx, AFF_SRC_LIVE, NULL);
	if (!t)
		return -ENOMEM;
	return finish(t, load_live(t, flags, err, errlen), flags, out, err, errlen);
}
