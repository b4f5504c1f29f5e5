// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * SFF-8636 (QSFP+, QSFP28): four lanes. The live values sit in the lower
 * page (temperature bytes 22-23, Vcc 26-27, then per lane RX power 34-41,
 * TX bias 42-49, TX power 50-57); upper page 00h byte 220 bit 2 says whether
 * TX power is measured at all. The thresholds are on upper page 03h (module
 * temperature at 128, Vcc at 144, lane RX power at 176, bias at 184, TX power
 * at 192; high alarm, low alarm, high warning, low warning each), which a
 * flat-memory module (lower page byte 2 bit 2) does not have.
 */
#include <errno.h>
#include <string.h>

#include "optics.h"

#define LOW_STATUS		2
#define  STATUS_FLAT_MEM	0x04
#define LOW_TEMP		22
#define LOW_VCC			26
#define LOW_RX_PWR		34
#define LOW_TX_BIAS		42
#define LOW_TX_PWR		50
#define P00_DIAG_TYPE		220
#define  DIAG_TX_PWR		0x04
#define P03_TEMP		128
#define P03_VCC			144
#define P03_RX_PWR		176
#define P03_TX_BIAS		184
#define P03_TX_PWR		192
#define LANES			4

int aff_optics_sff8636(aff_eeprom_read_fn rd, void *arg, const uint8_t *lower,
		       struct aff_optics *o)
{
	uint8_t up[AFF_OPTICS_HALF];
	size_t l;
	int rc;

	o->lanes = LANES;
	o->flat = lower[LOW_STATUS] & STATUS_FLAT_MEM;
	rc = rd(arg, AFF_OPTICS_I2C_A0, 0, 0, AFF_OPTICS_HALF, AFF_OPTICS_HALF, up);
	if (rc < 0)
		return rc;
	o->temp_c = aff_optics_temp(aff_be16s(lower + LOW_TEMP));
	o->vcc_v = aff_optics_vcc(aff_be16(lower + LOW_VCC));
	for (l = 0; l < LANES; l++) {
		o->rx_mw[l] = aff_optics_mw(aff_be16(lower + LOW_RX_PWR + 2 * l));
		o->bias_ma[l] = aff_optics_ma(aff_be16(lower + LOW_TX_BIAS + 2 * l));
		o->tx_mw[l] = aff_optics_mw(aff_be16(lower + LOW_TX_PWR + 2 * l));
	}
	o->has = 1u << AFF_OQ_TEMP | 1u << AFF_OQ_VCC | 1u << AFF_OQ_RX | 1u << AFF_OQ_BIAS;
	if (up[P00_DIAG_TYPE - AFF_OPTICS_HALF] & DIAG_TX_PWR)
		o->has |= 1u << AFF_OQ_TX;
	else
		memset(o->tx_mw, 0, sizeof(o->tx_mw));
	/* Thresholds are the module's or none: a page 03h that cannot be read gives none. */
	if (o->flat || rd(arg, AFF_OPTICS_I2C_A0, 0, 3, AFF_OPTICS_HALF, AFF_OPTICS_HALF, up) < 0)
		return 0;
	aff_optics_thresh_at(o, AFF_OQ_TEMP, up + (P03_TEMP - AFF_OPTICS_HALF), 1);
	aff_optics_thresh_at(o, AFF_OQ_VCC, up + (P03_VCC - AFF_OPTICS_HALF), 1);
	aff_optics_thresh_at(o, AFF_OQ_RX, up + (P03_RX_PWR - AFF_OPTICS_HALF), 1);
	aff_optics_thresh_at(o, AFF_OQ_BIAS, up + (P03_TX_BIAS - AFF_OPTICS_HALF), 1);
	if (o->has & 1u << AFF_OQ_TX)
		aff_optics_thresh_at(o, AFF_OQ_TX, up + (P03_TX_PWR - AFF_OPTICS_HALF), 1);
	return 0;
}
