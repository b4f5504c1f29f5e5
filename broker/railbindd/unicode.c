// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which code points a job name may not hold, by Unicode class rather than
 * by example: what a terminal, a log viewer or `railbind status` shows as
 * nothing, or lets reorder or break a line. A name made of them would pass
 * for another ("def\u115fault" shows as "default") or forge a line.
 *
 * Refused: the controls (Cc), format characters (Cf, the Bidi_Control
 * marks among them), the line and paragraph separators (Zl, Zp),
 * Default_Ignorable_Code_Point (the Hangul fillers, variation selectors,
 * tags: letters or marks that draw nothing), and the 66 noncharacters.
 *
 * No ICU: the broker would load it on every start for these few ranges.
 * The table is written by hand from the Unicode Character Database,
 * version RQ_UNICODE_VERSION (UnicodeData.txt for Cf, Zl, Zp;
 * DerivedCoreProperties.txt for Default_Ignorable_Code_Point). It cannot
 * drift silently: tests/broker/test_unicode.py compares this function,
 * code point by code point, with Python's unicodedata (and perl's
 * \p{Default_Ignorable_Code_Point}) and fails when their Unicode differs.
 */
#include <stddef.h>

#include "request.h"

struct cp_range {
	unsigned long lo, hi;
};

/* Cf, Zl, Zp and Default_Ignorable_Code_Point, merged where they touch. */
static const struct cp_range invisible[] = {
	{ 0x00ad, 0x00ad },	/* SOFT HYPHEN (Cf) */
	{ 0x034f, 0x034f },	/* COMBINING GRAPHEME JOINER (DI) */
	{ 0x0600, 0x0605 },	/* ARABIC NUMBER SIGN.. (Cf) */
	{ 0x061c, 0x061c },	/* ARABIC LETTER MARK (Cf, Bidi_Control) */
	{ 0x06dd, 0x06dd },	/* ARABIC END OF AYAH (Cf) */
	{ 0x070f, 0x070f },	/* SYRIAC ABBREVIATION MARK (Cf) */
	{ 0x0890, 0x0891 },	/* ARABIC POUND/PIASTRE MARK ABOVE (Cf) */
	{ 0x08e2, 0x08e2 },	/* ARABIC DISPUTED END OF AYAH (Cf) */
	{ 0x115f, 0x1160 },	/* HANGUL CHOSEONG/JUNGSEONG FILLER (DI) */
	{ 0x17b4, 0x17b5 },	/* KHMER VOWEL INHERENT AQ, AA (DI) */
	{ 0x180b, 0x180f },	/* MONGOLIAN FVS1-3 (DI), VOWEL SEPARATOR (Cf), FVS4 (DI) */
	{ 0x200b, 0x200f },	/* ZERO WIDTH SPACE.. RIGHT-TO-LEFT MARK (Cf) */
	{ 0x2028, 0x202e },	/* LINE (Zl), PARAGRAPH SEPARATOR (Zp), bidi embeddings (Cf) */
	{ 0x2060, 0x206f },	/* WORD JOINER.. NOMINAL DIGIT SHAPES (Cf; U+2065 DI) */
	{ 0x3164, 0x3164 },	/* HANGUL FILLER (DI) */
	{ 0xfe00, 0xfe0f },	/* VARIATION SELECTOR-1..16 (DI) */
	{ 0xfeff, 0xfeff },	/* ZERO WIDTH NO-BREAK SPACE (Cf) */
	{ 0xffa0, 0xffa0 },	/* HALFWIDTH HANGUL FILLER (DI) */
	{ 0xfff0, 0xfffb },	/* unassigned (DI), INTERLINEAR ANNOTATION marks (Cf) */
	{ 0x110bd, 0x110bd },	/* KAITHI NUMBER SIGN (Cf) */
	{ 0x110cd, 0x110cd },	/* KAITHI NUMBER SIGN ABOVE (Cf) */
	{ 0x13430, 0x13438 },	/* EGYPTIAN HIEROGLYPH format controls (Cf) */
	{ 0x1bca0, 0x1bca3 },	/* SHORTHAND FORMAT controls (Cf) */
	{ 0x1d173, 0x1d17a },	/* MUSICAL SYMBOL BEGIN BEAM.. (Cf) */
	{ 0xe0000, 0xe0fff },	/* tags (Cf), the rest of the block (DI) */
};

bool unicode_invisible(unsigned long cp)
{
	size_t lo = 0, hi = sizeof(invisible) / sizeof(*invisible);

	/* Cc: C0, DEL, C1. */
	if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
		return true;
	/* Noncharacters: U+FDD0..U+FDEF and the last two of every plane. */
	if ((cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe)
		return true;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cp < invisible[mid].lo)
			hi = mid;
		else if (cp > invisible[mid].hi)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}
