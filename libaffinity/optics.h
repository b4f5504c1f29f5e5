/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * optics - a pluggable transceiver's digital diagnostics: temperature, supply
 * voltage, per-lane RX/TX optical power and laser bias, and the module's own
 * alarm and warning thresholds, decoded from its EEPROM (SFF-8472 for SFP,
 * SFF-8636 for QSFP+/QSFP28, CMIS for QSFP-DD/OSFP: optics_sff8472.c,
 * optics_sff8636.c, optics_cmis.c), read from the kernel through ethtool
 * (optics_read.c). Private to libaffinity. Functions return 0 or a negative
 * errno.
 *
 * The decoders see the module as the kernel's netlink interface does: a
 * 256-byte window at an I2C address (0x50, and 0x51 for SFF-8472's A2h),
 * whose lower half is always page 0 and whose upper half is the selected
 * page (and bank, CMIS). Nothing is invented: a quantity the module does not
 * report, or a threshold it does not give, is marked absent.
 */
#ifndef AFF_OPTICS_H
#define AFF_OPTICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AFF_OPTICS_MAX_LANES	8
#define AFF_OPTICS_I2C_A0	0x50
#define AFF_OPTICS_I2C_A2	0x51
#define AFF_OPTICS_HALF		128
/* Earlier temperature samples a reading carries (optics_history.c). */
#define AFF_OPTICS_HIST_MAX	16
/* Vendor name and part number: 16 ASCII bytes, space-padded, in all three. */
#define AFF_OPTICS_ID_LEN	16

enum aff_optics_kind {
	AFF_OPTICS_NONE,
	AFF_OPTICS_SFF8472,	/* SFP, SFP+, SFP28 */
	AFF_OPTICS_SFF8636,	/* QSFP+, QSFP28 */
	AFF_OPTICS_CMIS,	/* QSFP-DD, OSFP, QSFP112 */
};

/* One quantity's four thresholds, in its own unit. */
struct aff_optics_thresh {
	double high_alarm, low_alarm, high_warn, low_warn;
};

/* Which quantities were read (live value) and which have thresholds. */
enum aff_optics_q { AFF_OQ_TEMP, AFF_OQ_VCC, AFF_OQ_RX, AFF_OQ_TX, AFF_OQ_BIAS, AFF_OQ_N };

struct aff_optics {
	enum aff_optics_kind kind;
	bool flat;			/* flat memory: no upper pages beyond 00h */
	bool ext_cal;			/* SFF-8472: externally calibrated */
	unsigned lanes;			/* 1 (SFP) .. 8 */
	unsigned has;			/* bit per enum aff_optics_q: live value read */
	unsigned has_thresh;		/* bit per enum aff_optics_q: thresholds read */
	double temp_c;			/* degrees Celsius */
	double vcc_v;			/* volts */
	double rx_mw[AFF_OPTICS_MAX_LANES];	/* milliwatts */
	double tx_mw[AFF_OPTICS_MAX_LANES];
	double bias_ma[AFF_OPTICS_MAX_LANES];	/* milliamperes */
	struct aff_optics_thresh thresh[AFF_OQ_N];
	/* The module's vendor name and part number ("" when not given, or not ASCII). */
	char vendor[AFF_OPTICS_ID_LEN + 1], part[AFF_OPTICS_ID_LEN + 1];
	/*
	 * Not from the module: when it was read (seconds since the epoch, 0
	 * unknown) and the temperatures earlier root-run reads recorded,
	 * oldest first, for the audit's trend (optics_history.c).
	 */
	long long when;
	unsigned nhist;
	long long hist_t[AFF_OPTICS_HIST_MAX];
	double hist_c[AFF_OPTICS_HIST_MAX];
};

/*
 * Read @len bytes at @offset (0-255; never crossing 128) of @page in @bank at
 * I2C address @i2c into @buf. 0, or a negative errno.
 */
typedef int (*aff_eeprom_read_fn)(void *arg, unsigned i2c, unsigned bank, unsigned page,
				  unsigned offset, unsigned len, uint8_t *buf);

/*
 * Decode the module behind @rd. -ENODATA: a module without diagnostics
 * (@why says which); -EPROTONOSUPPORT: an identifier none of the decoders
 * knows; else what @rd returned.
 */
int aff_optics_decode(aff_eeprom_read_fn rd, void *arg, struct aff_optics *o, char *why,
		      size_t whylen);

/* "sff8472", "sff8636", "cmis"; NULL for none. And back: 0 or -EINVAL. */
const char *aff_optics_kind_name(enum aff_optics_kind k);
int aff_optics_kind_from_name(const char *s, enum aff_optics_kind *k);

/* The decoders (optics_*.c), after aff_optics_decode read lower page 0 (@lower). */
int aff_optics_sff8472(aff_eeprom_read_fn rd, void *arg, const uint8_t *lower,
		       struct aff_optics *o, char *why, size_t whylen);
int aff_optics_sff8636(aff_eeprom_read_fn rd, void *arg, const uint8_t *lower,
		       struct aff_optics *o);
int aff_optics_cmis(aff_eeprom_read_fn rd, void *arg, const uint8_t *lower, struct aff_optics *o);

/* A space-padded ASCII field of @n bytes into @out ("" when it holds anything else). */
void aff_optics_ascii(const uint8_t *p, size_t n, char *out);

/* Four thresholds (high alarm, low alarm, high warning, low warning) at @p, bias x @bias_scale. */
void aff_optics_thresh_at(struct aff_optics *o, enum aff_optics_q q, const uint8_t *p,
			  unsigned bias_scale);

/* Big-endian fields, the way every one of these specifications stores them. */
static inline unsigned aff_be16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static inline int aff_be16s(const uint8_t *p)
{
	return (int)(int16_t)(uint16_t)aff_be16(p);
}

/*
 * The units shared by all three: temperature a signed 1/256 degree C,
 * voltage 100 uV, optical power 0.1 uW, bias 2 uA.
 */
static inline double aff_optics_temp(int raw)
{
	return raw / 256.0;
}

static inline double aff_optics_vcc(unsigned raw)
{
	return raw * 0.0001;
}

static inline double aff_optics_mw(unsigned raw)
{
	return raw * 0.0001;
}

static inline double aff_optics_ma(unsigned raw)
{
	return raw * 0.002;
}

/*
 * An in-memory dump of a module (tests, the fuzz target, `railbind` reading
 * a saved one): records of 4 bytes (I2C address, page, bank, half: 0 lower,
 * 1 upper) and 128 bytes of data. A half not in the dump reads -EIO.
 */
struct aff_optics_image {
	const uint8_t *data;
	size_t len;
};
#define AFF_OPTICS_RECORD (4 + AFF_OPTICS_HALF)
int aff_optics_image_read(void *image, unsigned i2c, unsigned bank, unsigned page,
			  unsigned offset, unsigned len, uint8_t *buf);

#endif /* AFF_OPTICS_H */
