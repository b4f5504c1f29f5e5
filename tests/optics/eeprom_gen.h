/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * EEPROM images of pluggable modules, written from the specifications'
 * memory maps (SFF-8472 rev 12.4, SFF-8636 rev 2.10, CMIS 5.2), not from
 * railbind's decoders: the caller gives every value in the raw units the
 * specification stores (1/256 C, 100 uV, 0.1 uW, 2 uA, or A/D counts for an
 * externally calibrated SFP), and the image holds them big-endian at the
 * offsets the specification names. The image is the dump format of
 * libaffinity/optics.h: 4 bytes (I2C address, page, bank, half) + 128 bytes.
 * Header-only, so the unit test, the seed writer and the fuzz seeds share it.
 */
#ifndef RAILBIND_EEPROM_GEN_H
#define RAILBIND_EEPROM_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define GEN_HALF 128
#define GEN_RECORD (4 + GEN_HALF)
#define GEN_MAX_RECORDS 16

enum gen_kind { GEN_SFF8472, GEN_SFF8636, GEN_CMIS };
/* Threshold order in every table: high alarm, low alarm, high warning, low warning. */
enum gen_q { GEN_TEMP, GEN_VCC, GEN_RX, GEN_TX, GEN_BIAS, GEN_NQ };

struct gen_module {
	enum gen_kind kind;
	bool ddm;		/* SFF-8472: A0h byte 92 bit 6 */
	bool ext_cal;		/* SFF-8472: bit 4 instead of bit 5 */
	bool flat;		/* SFF-8636 byte 2 bit 2, CMIS byte 2 bit 7 */
	unsigned lanes;		/* CMIS: media lanes of application 1 */
	unsigned bias_scale;	/* CMIS: page 01h byte 160 bits 4-3 (0: x1, 1: x2, 2: x4) */
	int16_t temp;
	uint16_t vcc;
	uint16_t lane[GEN_NQ][8];	/* GEN_RX, GEN_TX, GEN_BIAS */
	uint16_t th[GEN_NQ][4];
	/* SFF-8472 external calibration: RX polynomial x^0..x^4, slope (8.8) and offset. */
	float rx_poly[5];
	uint16_t slope[GEN_NQ];
	int16_t offset[GEN_NQ];
	/* Vendor name and part number, space-padded to 16 bytes; NULL: left zero. */
	const char *vendor, *part;
};

struct gen_image {
	uint8_t data[GEN_MAX_RECORDS * GEN_RECORD];
	size_t len;
};

static inline void gen_be16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void gen_be_float(uint8_t *p, float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	p[0] = (uint8_t)(u >> 24);
	p[1] = (uint8_t)(u >> 16);
	p[2] = (uint8_t)(u >> 8);
	p[3] = (uint8_t)u;
}

/* A new zeroed half of @im; NULL when full. */
static inline uint8_t *gen_half(struct gen_image *im, unsigned i2c, unsigned page, unsigned bank,
				unsigned upper)
{
	uint8_t *r;

	if (im->len + GEN_RECORD > sizeof(im->data))
		return NULL;
	r = im->data + im->len;
	im->len += GEN_RECORD;
	memset(r, 0, GEN_RECORD);
	r[0] = (uint8_t)i2c;
	r[1] = (uint8_t)page;
	r[2] = (uint8_t)bank;
	r[3] = (uint8_t)upper;
	return r + 4;
}

/* A space-padded 16-byte ASCII field, as all three specifications store names. */
static inline void gen_ascii(uint8_t *p, const char *s)
{
	size_t i, n = s ? strlen(s) : 0;

	for (i = 0; s && i < 16; i++)
		p[i] = i < n ? (uint8_t)s[i] : ' ';
}

/* Four thresholds at @p (offset within the half). */
static inline void gen_th(uint8_t *p, const uint16_t th[4])
{
	int i;

	for (i = 0; i < 4; i++)
		gen_be16(p + 2 * i, th[i]);
}

static inline void gen_sff8472(const struct gen_module *m, struct gen_image *im)
{
	uint8_t *a0 = gen_half(im, 0x50, 0, 0, 0), *a2;
	/* A2h threshold and live order: temperature, Vcc, bias, TX power, RX power. */
	static const enum gen_q order[5] = { GEN_TEMP, GEN_VCC, GEN_BIAS, GEN_TX, GEN_RX };
	int k;

	a0[0] = 0x03;			/* SFF-8024: SFP/SFP+/SFP28 */
	a0[92] = m->ddm ? (uint8_t)(0x40 | (m->ext_cal ? 0x10 : 0x20) | 0x08) : 0;
	a0[94] = m->ddm ? 0x08 : 0;	/* SFF-8472 rev 12.3 compliance */
	gen_ascii(a0 + 20, m->vendor);
	gen_ascii(a0 + 40, m->part);
	gen_half(im, 0x50, 0, 0, 1);
	if (!m->ddm)
		return;
	a2 = gen_half(im, 0x51, 0, 0, 0);
	for (k = 0; k < 5; k++)
		gen_th(a2 + 8 * k, m->th[order[k]]);
	for (k = 0; k < 5; k++)		/* RX power constants at 56: x^4 first */
		gen_be_float(a2 + 56 + 4 * k, m->rx_poly[4 - k]);
	/* Slope/offset pairs at 76: bias, TX power, temperature, Vcc. */
	gen_be16(a2 + 76, m->slope[GEN_BIAS]);
	gen_be16(a2 + 78, (uint16_t)m->offset[GEN_BIAS]);
	gen_be16(a2 + 80, m->slope[GEN_TX]);
	gen_be16(a2 + 82, (uint16_t)m->offset[GEN_TX]);
	gen_be16(a2 + 84, m->slope[GEN_TEMP]);
	gen_be16(a2 + 86, (uint16_t)m->offset[GEN_TEMP]);
	gen_be16(a2 + 88, m->slope[GEN_VCC]);
	gen_be16(a2 + 90, (uint16_t)m->offset[GEN_VCC]);
	gen_be16(a2 + 96, (uint16_t)m->temp);
	gen_be16(a2 + 98, m->vcc);
	gen_be16(a2 + 100, m->lane[GEN_BIAS][0]);
	gen_be16(a2 + 102, m->lane[GEN_TX][0]);
	gen_be16(a2 + 104, m->lane[GEN_RX][0]);
}

static inline void gen_sff8636(const struct gen_module *m, struct gen_image *im)
{
	uint8_t *lo = gen_half(im, 0x50, 0, 0, 0), *up, *p3;
	int l;

	lo[0] = 0x11;			/* QSFP28 */
	lo[1] = 0x08;			/* SFF-8636 rev 2.10 */
	lo[2] = m->flat ? 0x04 : 0;
	gen_be16(lo + 22, (uint16_t)m->temp);
	gen_be16(lo + 26, m->vcc);
	for (l = 0; l < 4; l++) {
		gen_be16(lo + 34 + 2 * l, m->lane[GEN_RX][l]);
		gen_be16(lo + 42 + 2 * l, m->lane[GEN_BIAS][l]);
		gen_be16(lo + 50 + 2 * l, m->lane[GEN_TX][l]);
	}
	up = gen_half(im, 0x50, 0, 0, 1);
	up[0] = 0x11;
	up[220 - GEN_HALF] = 0x0c;	/* RX power average, TX power measured */
	gen_ascii(up + (148 - GEN_HALF), m->vendor);
	gen_ascii(up + (168 - GEN_HALF), m->part);
	if (m->flat)
		return;
	p3 = gen_half(im, 0x50, 3, 0, 1);
	gen_th(p3 + (128 - GEN_HALF), m->th[GEN_TEMP]);
	gen_th(p3 + (144 - GEN_HALF), m->th[GEN_VCC]);
	gen_th(p3 + (176 - GEN_HALF), m->th[GEN_RX]);
	gen_th(p3 + (184 - GEN_HALF), m->th[GEN_BIAS]);
	gen_th(p3 + (192 - GEN_HALF), m->th[GEN_TX]);
}

static inline void gen_cmis(const struct gen_module *m, struct gen_image *im)
{
	uint8_t *lo = gen_half(im, 0x50, 0, 0, 0), *p01, *p02, *p11;
	unsigned l;

	lo[0] = 0x18;			/* QSFP-DD */
	lo[1] = 0x52;			/* CMIS 5.2 */
	lo[2] = m->flat ? 0x80 : 0;
	gen_be16(lo + 14, (uint16_t)m->temp);
	gen_be16(lo + 16, m->vcc);
	lo[86] = 0x11;			/* application 1: host interface */
	lo[87] = 0x03;
	lo[88] = (uint8_t)(m->lanes << 4 | m->lanes);	/* host lanes, media lanes */
	p01 = gen_half(im, 0x50, 0, 0, 1);
	p01[0] = 0x18;
	gen_ascii(p01 + (129 - GEN_HALF), m->vendor);
	gen_ascii(p01 + (148 - GEN_HALF), m->part);
	if (m->flat)
		return;
	p01 = gen_half(im, 0x50, 1, 0, 1);
	p01[142 - GEN_HALF] = 0x04 | 0x00;	/* pages 01h, 02h; bank 0 */
	p01[160 - GEN_HALF] = (uint8_t)(0x07 | (m->bias_scale & 3) << 3);
	p02 = gen_half(im, 0x50, 2, 0, 1);
	gen_th(p02 + (128 - GEN_HALF), m->th[GEN_TEMP]);
	gen_th(p02 + (136 - GEN_HALF), m->th[GEN_VCC]);
	gen_th(p02 + (176 - GEN_HALF), m->th[GEN_TX]);
	gen_th(p02 + (184 - GEN_HALF), m->th[GEN_BIAS]);
	gen_th(p02 + (192 - GEN_HALF), m->th[GEN_RX]);
	p11 = gen_half(im, 0x50, 0x11, 0, 1);
	for (l = 0; l < 8; l++) {
		gen_be16(p11 + (154 - GEN_HALF) + 2 * l, m->lane[GEN_TX][l]);
		gen_be16(p11 + (170 - GEN_HALF) + 2 * l, m->lane[GEN_BIAS][l]);
		gen_be16(p11 + (186 - GEN_HALF) + 2 * l, m->lane[GEN_RX][l]);
	}
}

static inline void gen_image(const struct gen_module *m, struct gen_image *im)
{
	im->len = 0;
	if (m->kind == GEN_SFF8472)
		gen_sff8472(m, im);
	else if (m->kind == GEN_SFF8636)
		gen_sff8636(m, im);
	else
		gen_cmis(m, im);
}

/*
 * A healthy module of @kind: 40 C, 3.3 V, every lane 0.5 mW received, 0.6 mW
 * sent, 7 mA bias; thresholds 75/-5/70/0 C, 3.6/3.0/3.5/3.1 V, RX and TX
 * 2.0/0.05/1.5/0.1 mW, bias 15/2/12/3 mA. Raw units as stored.
 */
static inline struct gen_module gen_healthy(enum gen_kind kind)
{
	struct gen_module m = { .kind = kind, .ddm = true, .lanes = kind == GEN_CMIS ? 8 : 4 };
	unsigned l;

	m.temp = 40 * 256;
	m.vcc = 33000;
	for (l = 0; l < 8; l++) {
		m.lane[GEN_RX][l] = 5000;
		m.lane[GEN_TX][l] = 6000;
		m.lane[GEN_BIAS][l] = 3500;
	}
	m.th[GEN_TEMP][0] = 75 * 256;
	m.th[GEN_TEMP][1] = (uint16_t)(int16_t)(-5 * 256);
	m.th[GEN_TEMP][2] = 70 * 256;
	m.th[GEN_TEMP][3] = 0;
	m.th[GEN_VCC][0] = 36000, m.th[GEN_VCC][1] = 30000;
	m.th[GEN_VCC][2] = 35000, m.th[GEN_VCC][3] = 31000;
	m.th[GEN_RX][0] = m.th[GEN_TX][0] = 20000;
	m.th[GEN_RX][1] = m.th[GEN_TX][1] = 500;
	m.th[GEN_RX][2] = m.th[GEN_TX][2] = 15000;
	m.th[GEN_RX][3] = m.th[GEN_TX][3] = 1000;
	m.th[GEN_BIAS][0] = 7500, m.th[GEN_BIAS][1] = 1000;
	m.th[GEN_BIAS][2] = 6000, m.th[GEN_BIAS][3] = 1500;
	return m;
}

#endif /* RAILBIND_EEPROM_GEN_H */
