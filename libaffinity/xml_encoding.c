// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one XML encoding railbind reads, checked before any parser runs; both
 * sources of XML (source.c for hwloc's, source_nccl.c for NCCL's) call it.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "model.h"

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
