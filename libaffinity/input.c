// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * aff_topo_load(): which source, and a clear word when a file is none of
 * them. hwloc itself only says "invalid"; the root element is sniffed here
 * and a malformed file is re-read with libxml2 for its line number.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "discover.h"
#include "model.h"
#include "xml_lazy.h"

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

/*
 * hwloc and NCCL write UTF-8, and nothing else needs reading. Any other
 * declared encoding would send libxml2 (ours, and hwloc's XML plugin) through
 * iconv's converters: a UTF-7 file with bad bytes crashed fuzz_hwloc inside
 * glibc's UTF-7 module once hwloc's plugin had parsed it (not reproduced with
 * libxml2 alone). Refused before any parser sees it.
 */
int aff_xml_check_encoding(const char *buf, size_t len, const char *path,
			   char *err, size_t errlen)
{
	static const char *const ok[] = { "UTF-8", "UTF8", "US-ASCII", "ASCII" };
	const char *end = buf + len, *close, *enc, *v;
	char quote, name[32];
	size_t i, k;

	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
		buf += 3;
	if (end - buf < 5 || memcmp(buf, "<?xml", 5))
		return 0;
	close = memmem(buf, (size_t)(end - buf), "?>", 2);
	if (!close)
		close = end;
	enc = memmem(buf, (size_t)(close - buf), "encoding", 8);
	if (!enc)
		return 0;
	for (v = enc + 8; v < close && isspace((unsigned char)*v); v++)
		;
	if (v < close && *v == '=')
		for (v++; v < close && isspace((unsigned char)*v); v++)
			;
	quote = v < close ? *v : '\0';
	if (quote != '"' && quote != '\'')
		return aff_seterr(err, errlen, EINVAL,
				  "%s: malformed encoding in the XML declaration", path);
	for (v++, k = 0; v < close && *v != quote && k + 1 < sizeof(name); v++)
		name[k++] = *v;
	name[k] = '\0';
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcasecmp(name, ok[i]))
			return 0;
	return aff_seterr(err, errlen, EINVAL,
			  "%s: XML encoding \"%s\"; railbind reads UTF-8 topology files (as hwloc and NCCL write them)",
			  path, name);
}

static int sniff(const char *path, enum input_kind *kind, char *err,
		 size_t errlen)
{
	char buf[SNIFF_SIZE], name[32];
	const char *p, *end;
	struct stat st;
	ssize_t n;
	size_t k = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return aff_seterr(err, errlen, errno, "%s: %s", path,
				  strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;

		close(fd);
		return aff_seterr(err, errlen, e,
				  "%s: %s, expected a topology XML file", path,
				  e == EISDIR ? "is a directory" : "not a regular file");
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return aff_seterr(err, errlen, errno, "%s: %s", path,
				  strerror(errno));
	if (n == 0)
		return aff_seterr(err, errlen, EINVAL,
				  "%s: empty file, expected a topology XML file", path);
	if (aff_xml_check_encoding(buf, (size_t)n, path, err, errlen) < 0)
		return -EINVAL;
	end = buf + n;
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

/* hwloc refused the file: find out why, with a line when libxml2 can. */
static int explain_hwloc_failure(const char *path, char *err, size_t errlen)
{
	const struct aff_xml *x = aff_xml(path, err, errlen);
	xmlDoc *doc;
	const xmlError *e;
	const char *msg;

	if (!x)
		return -ELIBACC;
	doc = x->read_file(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR |
					  XML_PARSE_NOWARNING | XML_PARSE_HUGE);
	if (doc) {
		x->free_doc(doc);
		return aff_seterr(err, errlen, EINVAL,
				  "%s: well-formed XML, but hwloc rejected it as a topology (a missing or inconsistent object, cpuset or attribute)",
				  path);
	}
	e = x->last_error();
	msg = e && e->message ? e->message : "unreadable";
	return aff_seterr(err, errlen, EINVAL, "%s:%d: malformed XML: %.*s",
			  path, e ? e->line : 0, (int)strcspn(msg, "\n"), msg);
}

/*
 * hwloc 2.9.0 dereferences NULL when an <object> has a cpuset but no
 * complete_cpuset, or a nodeset but no complete_nodeset (found by
 * fuzz/fuzz_hwloc; every file hwloc writes, v1 or v2, has the pairs).
 * Refuse such a file before hwloc sees it. Returns 1 when the file is fine
 * for hwloc, 0 when it is not well-formed XML (hwloc's own error path
 * explains that), or -EINVAL with err set.
 */
static const char *unpaired_set(const struct aff_xml *x, const xmlNode *n)
{
	static const char *const pairs[][2] = {
		{ "cpuset", "complete_cpuset" },
		{ "nodeset", "complete_nodeset" },
	};
	size_t i;

	xmlChar *type;
	bool indexed;

	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
		if (x->has_prop(n, (const xmlChar *)pairs[i][0]) &&
		    !x->has_prop(n, (const xmlChar *)pairs[i][1]))
			return pairs[i][0];
	/* A PU or NUMA node without os_index: hwloc 2.9.0 sets bit 2^32-1 of a
	 * bitmap, 512 MB, several times over (fuzz_hwloc, out of memory). */
	type = x->get_prop(n, (const xmlChar *)"type");
	indexed = !type || (strcmp((const char *)type, "PU") &&
			    strcmp((const char *)type, "NUMANode")) ||
		  x->has_prop(n, (const xmlChar *)"os_index");
	x->free(type);
	return indexed ? NULL : "os_index";
}

/*
 * hwloc's bitmap syntax, as hwloc writes it: words of "0x" and 1-16 hex
 * digits, comma separated, an empty word for a zero one, the first possibly
 * "0xf...f" (an infinite set), at least one word with digits. hwloc 2.9.0
 * asserts (aborts the process) on some other texts, such as ",x00010001"
 * (fuzz_hwloc).
 */
static bool bitmap_text_ok(const char *v)
{
	bool digits = false;
	size_t k;

	if (!strncmp(v, "0xf...f", 7)) {
		v += 7;
		if (!*v)
			return true;
		if (*v++ != ',')
			return false;
		digits = true;
	}
	/* A leading empty word makes hwloc 2.9.0 assert (",0x1"), a trailing
	 * one is never written. */
	if (*v == ',' || !*v)
		return false;
	for (;;) {
		/* An empty word inside is hwloc's shorthand for 0x00000000 (",,"). */
		if (*v && *v != ',') {
			if (strncmp(v, "0x", 2))
				return false;
			v += 2;
			for (k = 0; isxdigit((unsigned char)v[k]); k++)
				;
			if (k < 1 || k > 16)
				return false;
			v += k;
			digits = true;
		}
		if (!*v)
			return digits;
		if (*v++ != ',' || !*v)
			return false;
	}
}

/* The first set attribute of @n hwloc could not parse, or NULL. */
static const char *bad_bitmap(const struct aff_xml *x, const xmlNode *n)
{
	static const char *const sets[] = {
		"cpuset", "complete_cpuset", "allowed_cpuset", "online_cpuset",
		"nodeset", "complete_nodeset", "allowed_nodeset",
	};
	const char *bad = NULL;
	size_t i;

	for (i = 0; i < sizeof(sets) / sizeof(sets[0]) && !bad; i++) {
		xmlChar *v = x->get_prop(n, (const xmlChar *)sets[i]);

		if (v && !bitmap_text_ok((const char *)v))
			bad = sets[i];
		x->free(v);
	}
	return bad;
}

static int check_cpusets(const struct aff_xml *x, const xmlNode *n,
			 const char *path, char *err, size_t errlen)
{
	int rc = 1;

	for (; n && rc > 0; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		bool object = !strcmp((const char *)n->name, "object");
		const char *set = object ? unpaired_set(x, n) : NULL;

		if (set && !strcmp(set, "os_index"))
			return aff_seterr(err, errlen, EINVAL,
					  "%s:%ld: <object> PU or NUMANode without os_index",
					  path, x->line_no(n));
		if (set)
			return aff_seterr(err, errlen, EINVAL,
					  "%s:%ld: <object> with a %s but no complete_%s",
					  path, x->line_no(n), set, set);
		set = object ? bad_bitmap(x, n) : NULL;
		if (set)
			return aff_seterr(err, errlen, EINVAL,
					  "%s:%ld: <object> %s is not a bitmap such as 0x000000ff,0xffffffff",
					  path, x->line_no(n), set);
		rc = check_cpusets(x, n->children, path, err, errlen);
	}
	return rc;
}

static int precheck_hwloc(const char *path, char *err, size_t errlen)
{
	const struct aff_xml *x = aff_xml(path, err, errlen);
	xmlDoc *doc;
	int rc;

	if (!x)
		return -ELIBACC;
	doc = x->read_file(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR |
					  XML_PARSE_NOWARNING | XML_PARSE_HUGE);
	if (!doc)
		return 0;
	rc = check_cpusets(x, x->root(doc), path, err, errlen);
	x->free_doc(doc);
	return rc;
}

static int hwloc_open(hwloc_topology_t *hw, const char *xml)
{
	if (hwloc_topology_init(hw) < 0)
		return -errno;
	hwloc_topology_set_io_types_filter(*hw, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (xml && hwloc_topology_set_xml(*hw, xml) < 0) {
		int e = errno;

		hwloc_topology_destroy(*hw);
		return -e;
	}
	return 0;
}

static int load_hwloc_source(struct aff_topo *t, const char *path, char *err,
			     size_t errlen)
{
	hwloc_topology_t hw;
	int rc = precheck_hwloc(path, err, errlen);

	if (rc < 0)
		return rc;
	rc = hwloc_open(&hw, path);

	/* hwloc parses the file as it is set: a malformed one fails here. */
	if (rc == -EINVAL)
		return explain_hwloc_failure(path, err, errlen);
	if (rc < 0)
		return aff_seterr(err, errlen, -rc, "%s: %s", path, strerror(-rc));
	if (hwloc_topology_load(hw) < 0) {
		hwloc_topology_destroy(hw);
		return explain_hwloc_failure(path, err, errlen);
	}
	return aff_load_hwloc(t, hw, err, errlen);
}

/* The live node, annotated from sysfs exactly as a snapshot records it. */
static int load_live(struct aff_topo *t, unsigned long flags, char *err, size_t errlen)
{
	struct aff_discover_report rep;
	hwloc_topology_t hw;
	int rc;

	rc = aff_discover_live(t->ctx->root, &hw, &rep, err, errlen);
	if (rc < 0)
		return rc;
	if ((flags & AFF_LOAD_GPU_LIBS) &&
	    aff_discover_gpu_libs(hw, t->ctx->root, &rep) < 0) {
		hwloc_topology_destroy(hw);
		return aff_seterr(err, errlen, ENOMEM, "live node: out of memory");
	}
	if (rep.note[0])
		aff_info(t->ctx, "live node: %s\n", rep.note);
	return aff_load_hwloc(t, hw, err, errlen);
}

AFF_EXPORT int aff_topo_load(struct aff_ctx *ctx, const char *input,
			     unsigned long flags, struct aff_topo **out,
			     char *err, size_t errlen)
{
	enum input_kind kind = INPUT_HWLOC;
	struct aff_topo *t;
	int rc;

	*out = NULL;
	if (input) {
		rc = sniff(input, &kind, err, errlen);
		if (rc < 0)
			return rc;
	}
	t = aff_topo_alloc(ctx, !input ? AFF_SRC_LIVE :
			   kind == INPUT_NCCL ? AFF_SRC_NCCL : AFF_SRC_HWLOC,
			   input);
	if (!t)
		return -ENOMEM;
	if (!input)
		rc = load_live(t, flags, err, errlen);
	else if (kind == INPUT_NCCL)
		rc = aff_load_nccl(t, input, err, errlen);
	else
		rc = load_hwloc_source(t, input, err, errlen);
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
