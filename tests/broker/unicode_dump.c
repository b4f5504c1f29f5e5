// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * broker_unicode_dump: the code points a job name may not hold, as the
 * broker decides them (request_text_ok() on each one alone), for
 * tests/broker/test_unicode.py to compare with the Unicode data. Prints the
 * Unicode version of the broker's table, then one "LO HI" line (hex) for
 * each range of refused code points; surrogates, which UTF-8 cannot carry,
 * are left out.
 */
#include <stdio.h>

#include "request.h"

/* @cp in UTF-8 at @buf: its length. */
static size_t utf8(unsigned long cp, char *buf)
{
	if (cp < 0x80) {
		buf[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		buf[0] = (char)(0xc0 | cp >> 6);
		buf[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		buf[0] = (char)(0xe0 | cp >> 12);
		buf[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		buf[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	buf[0] = (char)(0xf0 | cp >> 18);
	buf[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	buf[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	buf[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

int main(void)
{
	unsigned long cp, start = 0;
	bool in = false;
	char buf[4];

	printf("unicode %s\n", RQ_UNICODE_VERSION);
	for (cp = 0; cp <= 0x110000; cp++) {
		bool refused = cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) &&
			       !request_text_ok(buf, utf8(cp, buf), RQ_MAX_JOB);

		if (cp >= 0xd800 && cp <= 0xdfff)
			continue;
		if (refused && !in)
			start = cp;
		else if (!refused && in)
			printf("%04lX %04lX\n", start, cp - 1);
		in = refused;
	}
	return 0;
}
