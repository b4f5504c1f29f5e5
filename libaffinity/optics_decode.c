// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Which decoder a module needs: the SFF-8024 identifier, byte 0 of lower
 * page 0, the same place in all three memory maps. And the dump format the
 * tests and the fuzz target hand the decoders (optics.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "optics.h"

static const char *const kind_names[] = { NULL, "sff8472", "sff8636", "cmis" };

const char *aff_optics_kind_name(enum aff_optics_kind k)
{
	return (unsigned)k < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[k] : NULL;
}

int aff_optics_kind_from_name(const char *s, enum aff_optics_kind *k)
{
	unsigned i;

	for (i = 1; s && i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (!strcmp(s, kind_names[i])) {
			*k = (enum aff_optics_kind)i;
			return 0;
		}
	return -EINVAL;
}

/* SFF-8024 table 4-1: the identifiers each memory map is used with. */
static enum aff_optics_kind kind_of(uint8_t id)
{
	switch (id) {
	case 0x02:	/* soldered module, SFF-8472 map */
	case 0x03:	/* SFP/SFP+/SFP28 */
		return AFF_OPTICS_SFF8472;
	case 0x0c:	/* QSFP */
	case 0x0d:	/* QSFP+ */
	case 0x11:	/* QSFP28 */
		return AFF_OPTICS_SFF8636;
	case 0x18:	/* QSFP-DD */
	case 0x19:	/* OSFP */
	case 0x1b:	/* DSFP */
	case 0x1e:	/* QSFP+ or later with CMIS */
	case 0x1f:	/* SFP-DD with CMIS */
	case 0x20:	/* SFP+ with CMIS */
		return AFF_OPTICS_CMIS;
	default:
		return AFF_OPTICS_NONE;
	}
}

void aff_optics_ascii(const uint8_t *p, size_t n, char *out)
{
	size_t i, len = 0;

	out[0] = '\0';
	for (i = 0; i < n; i++) {
		if (p[i] < 0x20 || p[i] > 0x7e)
			return;
		if (p[i] != ' ')
			len = i + 1;
	}
	/* Leading blanks too would make it a different name for the same module. */
	for (i = 0; i < len && p[i] == ' '; i++)
		;
	memcpy(out, p + i, len - i);
	out[len - i] = '\0';
}

/*
 * The vendor name and part number: SFF-8472 A0h bytes 20-35 and 40-55 (in
 * @lower); SFF-8636 upper page 00h 148-163 and 168-183; CMIS upper page
 * 00h 129-144 and 148-163. A page that cannot be read gives neither.
 */
static void identity(aff_eeprom_read_fn rd, void *arg, const uint8_t *lower,
		     struct aff_optics *o)
{
	uint8_t up[AFF_OPTICS_HALF];
	unsigned v = 129, pn = 148;

	if (o->kind == AFF_OPTICS_SFF8472) {
		aff_optics_ascii(lower + 20, AFF_OPTICS_ID_LEN, o->vendor);
		aff_optics_ascii(lower + 40, AFF_OPTICS_ID_LEN, o->part);
		return;
	}
	if (rd(arg, AFF_OPTICS_I2C_A0, 0, 0, AFF_OPTICS_HALF, AFF_OPTICS_HALF, up) < 0)
		return;
	if (o->kind == AFF_OPTICS_SFF8636)
		v = 148, pn = 168;
	aff_optics_ascii(up + (v - AFF_OPTICS_HALF), AFF_OPTICS_ID_LEN, o->vendor);
	aff_optics_ascii(up + (pn - AFF_OPTICS_HALF), AFF_OPTICS_ID_LEN, o->part);
}

int aff_optics_decode(aff_eeprom_read_fn rd, void *arg, struct aff_optics *o, char *why,
		      size_t whylen)
{
	uint8_t lower[AFF_OPTICS_HALF];
	int rc;

	memset(o, 0, sizeof(*o));
	if (why && whylen)
		*why = '\0';
	rc = rd(arg, AFF_OPTICS_I2C_A0, 0, 0, 0, AFF_OPTICS_HALF, lower);
	if (rc < 0)
		return rc;
	o->kind = kind_of(lower[0]);
	switch (o->kind) {
	case AFF_OPTICS_SFF8472:
		rc = aff_optics_sff8472(rd, arg, lower, o, why, whylen);
		break;
	case AFF_OPTICS_SFF8636:
		rc = aff_optics_sff8636(rd, arg, lower, o);
		break;
	case AFF_OPTICS_CMIS:
		rc = aff_optics_cmis(rd, arg, lower, o);
		break;
	default:
		if (why && whylen)
			snprintf(why, whylen, "module identifier 0x%02x is none of SFF-8472, SFF-8636, CMIS",
				 lower[0]);
		return -EPROTONOSUPPORT;
	}
	if (rc == 0)
		identity(rd, arg, lower, o);
	return rc;
}

int aff_optics_image_read(void *image, unsigned i2c, unsigned bank, unsigned page,
			  unsigned offset, unsigned len, uint8_t *buf)
{
	const struct aff_optics_image *im = image;
	unsigned half = offset >= AFF_OPTICS_HALF;
	size_t at;

	if (offset > 255 || !len || len > AFF_OPTICS_HALF ||
	    offset % AFF_OPTICS_HALF + len > AFF_OPTICS_HALF || (!half && page))
		return -EINVAL;
	for (at = 0; at + AFF_OPTICS_RECORD <= im->len; at += AFF_OPTICS_RECORD) {
		const uint8_t *r = im->data + at;

		if (r[0] == i2c && r[1] == page && r[2] == bank && r[3] == half) {
			memcpy(buf, r + 4 + offset % AFF_OPTICS_HALF, len);
			return 0;
		}
	}
	return -EIO;
}

void aff_optics_thresh_at(struct aff_optics *o, enum aff_optics_q q, const uint8_t *p,
			  unsigned bias_scale)
{
	double v[4];
	size_t i;

	for (i = 0; i < 4; i++)
		switch (q) {
		case AFF_OQ_TEMP:
			v[i] = aff_optics_temp(aff_be16s(p + 2 * i));
			break;
		case AFF_OQ_VCC:
			v[i] = aff_optics_vcc(aff_be16(p + 2 * i));
			break;
		case AFF_OQ_BIAS:
			v[i] = aff_optics_ma(aff_be16(p + 2 * i) * bias_scale);
			break;
		default:
			v[i] = aff_optics_mw(aff_be16(p + 2 * i));
		}
	o->thresh[q] = (struct aff_optics_thresh){ v[0], v[1], v[2], v[3] };
	o->has_thresh |= 1u << q;
}
