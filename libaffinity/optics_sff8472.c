// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * SFF-8472 (SFP and its successors): diagnostics live at I2C address A2h,
 * present only when A0h byte 92 bit 6 says so. A2h bytes 0-39 hold the
 * module's thresholds (temperature, Vcc, bias, TX power, RX power; each high
 * alarm, low alarm, high warning, low warning), bytes 96-105 the live values.
 * An internally calibrated module (byte 92 bit 5) stores both in the common
 * units (optics.h); an externally calibrated one (bit 4) stores A/D counts,
 * turned into those units by the constants at A2h 56-91: slopes (unsigned
 * 8.8 fixed point) and offsets (signed) for temperature, Vcc, bias and TX
 * power, and a 4th-degree polynomial (IEEE 754 singles, x^4 first) for RX
 * power. The thresholds are counts too, and take the same conversion.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "optics.h"

#define A0_DIAG_TYPE		92
#define  DIAG_IMPLEMENTED	0x40
#define  DIAG_INTERNAL_CAL	0x20
#define  DIAG_EXTERNAL_CAL	0x10
#define A2_THRESH		0	/* 5 quantities x 4 thresholds x 2 bytes */
#define A2_CAL_RXPWR4		56	/* then 3, 2, 1, 0, 4 bytes each */
#define A2_CAL_TXI_SLOPE	76
#define A2_CAL_TXPWR_SLOPE	80
#define A2_CAL_T_SLOPE		84
#define A2_CAL_V_SLOPE		88
#define A2_LIVE			96	/* temp, vcc, bias, tx, rx */

/* The A2h order of both the thresholds and the live values. */
static const enum aff_optics_q order[5] = {
	AFF_OQ_TEMP, AFF_OQ_VCC, AFF_OQ_BIAS, AFF_OQ_TX, AFF_OQ_RX,
};

static float be_float(const uint8_t *p)
{
	uint32_t u = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* A raw field (counts, or already in units) of quantity @q in its own units. */
struct cal {
	bool ext;
	double slope[AFF_OQ_N], offset[AFF_OQ_N];	/* per quantity but RX */
	double rx[5];					/* x^0 .. x^4 */
	bool rx_ok;
};

static double convert(const struct cal *c, enum aff_optics_q q, const uint8_t *p)
{
	double raw = q == AFF_OQ_TEMP ? (double)aff_be16s(p) : (double)aff_be16(p), v = raw;
	int i;

	if (c->ext && q == AFF_OQ_RX) {
		for (v = 0, i = 4; i >= 0; i--)
			v = v * raw + c->rx[i];
	} else if (c->ext) {
		v = c->slope[q] * raw + c->offset[q];
	}
	switch (q) {
	case AFF_OQ_TEMP:
		return v / 256.0;
	case AFF_OQ_VCC:
		return v * 0.0001;
	case AFF_OQ_BIAS:
		return v < 0 ? 0 : v * 0.002;
	default:
		return v < 0 ? 0 : v * 0.0001;
	}
}

static void load_cal(const uint8_t *a2, struct cal *c)
{
	static const struct { enum aff_optics_q q; unsigned at; } lin[] = {
		{ AFF_OQ_BIAS, A2_CAL_TXI_SLOPE }, { AFF_OQ_TX, A2_CAL_TXPWR_SLOPE },
		{ AFF_OQ_TEMP, A2_CAL_T_SLOPE }, { AFF_OQ_VCC, A2_CAL_V_SLOPE },
	};
	size_t i;

	for (i = 0; i < sizeof(lin) / sizeof(lin[0]); i++) {
		c->slope[lin[i].q] = aff_be16(a2 + lin[i].at) / 256.0;
		c->offset[lin[i].q] = aff_be16s(a2 + lin[i].at + 2);
	}
	c->rx_ok = true;
	for (i = 0; i < 5; i++) {
		c->rx[4 - i] = be_float(a2 + A2_CAL_RXPWR4 + 4 * i);
		if (!isfinite(c->rx[4 - i]) || fabs(c->rx[4 - i]) > 1e30)
			c->rx_ok = false;
	}
}

int aff_optics_sff8472(aff_eeprom_read_fn rd, void *arg, const uint8_t *lower,
		       struct aff_optics *o, char *why, size_t whylen)
{
	uint8_t a2[AFF_OPTICS_HALF];
	struct cal c = { 0 };
	double v[4];
	size_t k, t;
	int rc;

	o->lanes = 1;
	if (!(lower[A0_DIAG_TYPE] & DIAG_IMPLEMENTED)) {
		if (why && whylen)
			snprintf(why, whylen, "the SFP module implements no diagnostics (SFF-8472 A0h byte 92 is 0x%02x)",
				 lower[A0_DIAG_TYPE]);
		return -ENODATA;
	}
	rc = rd(arg, AFF_OPTICS_I2C_A2, 0, 0, 0, AFF_OPTICS_HALF, a2);
	if (rc < 0)
		return rc;
	c.ext = (lower[A0_DIAG_TYPE] & DIAG_EXTERNAL_CAL) &&
		!(lower[A0_DIAG_TYPE] & DIAG_INTERNAL_CAL);
	if (c.ext)
		load_cal(a2, &c);
	o->ext_cal = c.ext;
	for (k = 0; k < 5; k++) {
		enum aff_optics_q q = order[k];
		const uint8_t *live = a2 + A2_LIVE + 2 * k;
		double x;

		if (q == AFF_OQ_RX && c.ext && !c.rx_ok)
			continue;
		x = convert(&c, q, live);
		switch (q) {
		case AFF_OQ_TEMP:
			o->temp_c = x;
			break;
		case AFF_OQ_VCC:
			o->vcc_v = x;
			break;
		case AFF_OQ_BIAS:
			o->bias_ma[0] = x;
			break;
		case AFF_OQ_TX:
			o->tx_mw[0] = x;
			break;
		default:
			o->rx_mw[0] = x;
		}
		o->has |= 1u << q;
		for (t = 0; t < 4; t++)
			v[t] = convert(&c, q, a2 + A2_THRESH + 8 * k + 2 * t);
		o->thresh[q] = (struct aff_optics_thresh){ v[0], v[1], v[2], v[3] };
		o->has_thresh |= 1u << q;
	}
	return 0;
}
