// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mkeeprom DIR: write an image of each module layout eeprom_gen.h knows
 * into DIR (fuzz_optics's seeds): SFF-8472 with and without diagnostics,
 * internally and externally calibrated; SFF-8636 paged and flat; CMIS
 * paged (eight lanes, four lanes at x2 bias) and flat; and faulty modules
 * (a dark lane, one too hot, RX power under its warning).
 */
#include <stdio.h>
#include <stdlib.h>

#include "eeprom_gen.h"

static int put(const char *dir, const char *name, const struct gen_module *m)
{
	static struct gen_image im;
	char path[4096];
	FILE *f;
	int ok;

	gen_image(m, &im);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f) {
		perror(path);
		return 1;
	}
	ok = fwrite(im.data, 1, im.len, f) == im.len;
	if (fclose(f) != 0 || !ok) {
		perror(path);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct gen_module m;
	int bad = 0;

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: mkeeprom DIR\n");
		return 2;
	}
	m = gen_healthy(GEN_SFF8472);
	bad |= put(argv[1], "sff8472-internal", &m);
	m.ext_cal = true;
	m.slope[GEN_TEMP] = m.slope[GEN_VCC] = m.slope[GEN_TX] = m.slope[GEN_BIAS] = 0x0100;
	m.offset[GEN_TEMP] = -256;
	m.rx_poly[1] = 1.0f;
	m.rx_poly[2] = 1e-6f;
	bad |= put(argv[1], "sff8472-external", &m);
	m.ddm = false;
	bad |= put(argv[1], "sff8472-no-ddm", &m);
	m = gen_healthy(GEN_SFF8636);
	bad |= put(argv[1], "sff8636-paged", &m);
	m.lane[GEN_RX][1] = 800;
	bad |= put(argv[1], "sff8636-rx-low-warning", &m);
	m.flat = true;
	bad |= put(argv[1], "sff8636-flat", &m);
	m = gen_healthy(GEN_CMIS);
	bad |= put(argv[1], "cmis-paged", &m);
	m.lane[GEN_RX][5] = 0;
	bad |= put(argv[1], "cmis-dark-lane", &m);
	m.lanes = 4;
	m.bias_scale = 1;
	m.temp = 80 * 256;
	bad |= put(argv[1], "cmis-dr4-hot", &m);
	m.flat = true;
	bad |= put(argv[1], "cmis-flat", &m);
	return bad;
}
