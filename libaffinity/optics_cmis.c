// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * CMIS (QSFP-DD, OSFP, QSFP112): module temperature and Vcc in the lower
 * page (bytes 14-17); a flat-memory module (byte 2 bit 7) has nothing more.
 * A paged one says on upper page 01h byte 160 which lane monitors it has
 * (bit 0 bias, 1 TX power, 2 RX power) and the bias scale (bits 4-3: x1, x2,
 * x4); gives its thresholds on page 02h (temperature at 128, Vcc at 136, TX
 * power at 176, bias at 184, RX power at 192) and the monitors of lanes 1-8
 * on page 11h of bank 0 (TX power from 154, bias from 170, RX power from 186).
 * How many lanes are in use: the media lane count of the first application
 * the module advertises (lower page byte 88, bits 3-0).
 */
#include <errno.h>
#include <string.h>

#include "optics.h"

#define LOW_MEMORY_MODEL	2
#define  MEMORY_FLAT		0x80
#define LOW_TEMP		14
#define LOW_VCC			16
#define LOW_APP1_LANES		88
#define P01_LANE_MONITORS	160
#define  MON_BIAS		0x01
#define  MON_TX_PWR		0x02
#define  MON_RX_PWR		0x04
#define  MON_BIAS_SCALE		0x18
#define P02_TEMP		128
#define P02_VCC			136
#define P02_TX_PWR		176
#define P02_TX_BIAS		184
#define P02_RX_PWR		192
#define P11_TX_PWR		154
#define P11_TX_BIAS		170
#define P11_RX_PWR		186

static int upper(aff_eeprom_read_fn rd, void *arg, unsigned page, uint8_t *buf)
{
	return rd(arg, AFF_OPTICS_I2C_A0, 0, page, AFF_OPTICS_HALF, AFF_OPTICS_HALF, buf);
}

int aff_optics_cmis(aff_eeprom_read_fn rd, void *arg, const uint8_t *lower, struct aff_optics *o)
{
	uint8_t p01[AFF_OPTICS_HALF], p02[AFF_OPTICS_HALF], p11[AFF_OPTICS_HALF];
	unsigned lanes = lower[LOW_APP1_LANES] & 0x0f, mon, scale;
	size_t l;
	int rc;

	o->lanes = lanes >= 1 && lanes <= AFF_OPTICS_MAX_LANES ? lanes : AFF_OPTICS_MAX_LANES;
	o->flat = lower[LOW_MEMORY_MODEL] & MEMORY_FLAT;
	o->temp_c = aff_optics_temp(aff_be16s(lower + LOW_TEMP));
	o->vcc_v = aff_optics_vcc(aff_be16(lower + LOW_VCC));
	o->has = 1u << AFF_OQ_TEMP | 1u << AFF_OQ_VCC;
	if (o->flat)
		return 0;
	/* Without page 01h (the old ioctl gives page 00h only), the module level alone. */
	if (upper(rd, arg, 0x01, p01) < 0)
		return 0;
	mon = p01[P01_LANE_MONITORS - AFF_OPTICS_HALF];
	scale = 1u << ((mon & MON_BIAS_SCALE) >> 3);
	if (scale > 4)
		scale = 4;	/* 11b is reserved */
	/* Thresholds are the module's or none: a page that cannot be read gives none. */
	if (upper(rd, arg, 0x02, p02) == 0) {
		aff_optics_thresh_at(o, AFF_OQ_TEMP, p02 + (P02_TEMP - AFF_OPTICS_HALF), 1);
		aff_optics_thresh_at(o, AFF_OQ_VCC, p02 + (P02_VCC - AFF_OPTICS_HALF), 1);
		if (mon & MON_TX_PWR)
			aff_optics_thresh_at(o, AFF_OQ_TX, p02 + (P02_TX_PWR - AFF_OPTICS_HALF), 1);
		if (mon & MON_BIAS)
			aff_optics_thresh_at(o, AFF_OQ_BIAS, p02 + (P02_TX_BIAS - AFF_OPTICS_HALF),
					     scale);
		if (mon & MON_RX_PWR)
			aff_optics_thresh_at(o, AFF_OQ_RX, p02 + (P02_RX_PWR - AFF_OPTICS_HALF), 1);
	}
	if (!(mon & (MON_BIAS | MON_TX_PWR | MON_RX_PWR)))
		return 0;
	rc = upper(rd, arg, 0x11, p11);
	if (rc < 0)
		return rc;
	for (l = 0; l < o->lanes; l++) {
		if (mon & MON_TX_PWR)
			o->tx_mw[l] = aff_optics_mw(aff_be16(p11 + (P11_TX_PWR - AFF_OPTICS_HALF) + 2 * l));
		if (mon & MON_BIAS)
			o->bias_ma[l] = aff_optics_ma(aff_be16(p11 + (P11_TX_BIAS - AFF_OPTICS_HALF) +
							       2 * l) * scale);
		if (mon & MON_RX_PWR)
			o->rx_mw[l] = aff_optics_mw(aff_be16(p11 + (P11_RX_PWR - AFF_OPTICS_HALF) + 2 * l));
	}
	if (mon & MON_TX_PWR)
		o->has |= 1u << AFF_OQ_TX;
	if (mon & MON_BIAS)
		o->has |= 1u << AFF_OQ_BIAS;
	if (mon & MON_RX_PWR)
		o->has |= 1u << AFF_OQ_RX;
	return 0;
}
