/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A strict UTF-8 check written apart from json-c's, for the broker targets:
 * what the broker echoes in replies and keeps in its lease file must decode
 * in any strict reader (Python's json, jq): no overlong forms, no
 * surrogates, nothing above U+10FFFF.
 */
#ifndef RAILBIND_FUZZ_UTF8_H
#define RAILBIND_FUZZ_UTF8_H

#include <stdbool.h>
#include <stddef.h>

static inline bool fuzz_utf8_valid(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = s[i];
		unsigned long cp;
		size_t k, len;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			len = 2;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			len = 3;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			len = 4;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (n - i < len)
			return false;
		for (k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

/*
 * Printable (issues 15, 25), written apart from request.c: strict UTF-8
 * whose code points include no C0/C1 control or DEL, no U+2028/U+2029, no
 * LRM/RLM, no bidi embedding, override or isolate, no U+FEFF, none of issue
 * 25's invisible characters, no noncharacter.
 */
static inline bool fuzz_text_printable(const unsigned char *s, size_t n)
{
	size_t i = 0;

	if (!fuzz_utf8_valid(s, n))
		return false;
	while (i < n) {
		unsigned long cp = s[i];
		size_t len = cp < 0x80 ? 1 : cp < 0xe0 ? 2 : cp < 0xf0 ? 3 : 4, k;

		if (len > 1)
			cp &= 0xffu >> (len + 1);
		for (k = 1; k < len; k++)
			cp = cp << 6 | (s[i + k] & 0x3f);
		if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0) || cp == 0x2028 || cp == 0x2029 ||
		    cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
		    (cp >= 0x2066 && cp <= 0x2069) || cp == 0xfeff)
			return false;
		/* Issue 25's examples of Cf, Default_Ignorable and noncharacters
		 * (the whole classes: tests/broker/test_unicode.py). */
		if (cp == 0x061c || cp == 0x00ad || cp == 0x115f || cp == 0x180e || cp == 0xfff9 ||
		    cp == 0x200b || (cp & 0xfffe) == 0xfffe || (cp >= 0xfdd0 && cp <= 0xfdef))
			return false;
		i += len;
	}
	return true;
}

#endif
