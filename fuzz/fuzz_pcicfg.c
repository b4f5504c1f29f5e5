// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The PCI config-space walker on any dump: the first two bytes pick the
 * capability id, the rest is the config space. A capability it finds lies
 * in the extended space and within the buffer; a PCIe port type is one of
 * the 4-bit field's values, and only a buffer reaching past the header has
 * one; Device Control only where the port type is.
 */
#include "pcicfg.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint16_t id, cap = 0, ctl = 0;
	uint8_t *cfg;
	size_t len;
	int pos;

	if (size < 2)
		return 0;
	id = (uint16_t)(data[0] | data[1] << 8);
	len = size - 2;
	/* An exact-size heap copy, so ASan catches a read past len. */
	cfg = malloc(len ? len : 1);
	if (!cfg)
		abort();
	memcpy(cfg, data + 2, len);
	pos = aff_pcicfg_find_ext_cap(cfg, len, id);
	if (pos >= 0) {
		FUZZ_CHECK(pos >= (int)AFF_PCICFG_STD_SIZE);
		FUZZ_CHECK((size_t)pos + 4 <= len);
		FUZZ_CHECK((cfg[pos] | cfg[pos + 1] << 8) == id);
	}
	if (aff_pcicfg_read_acs(cfg, len, &cap, &ctl) == 0) {
		pos = aff_pcicfg_find_ext_cap(cfg, len, AFF_PCI_EXT_CAP_ID_ACS);
		FUZZ_CHECK(pos >= 0 && (size_t)pos + 8 <= len);
		FUZZ_CHECK(cap == (cfg[pos + 4] | cfg[pos + 5] << 8));
		FUZZ_CHECK(ctl == (cfg[pos + 6] | cfg[pos + 7] << 8));
	}
	pos = aff_pcicfg_port_type(cfg, len);
	FUZZ_CHECK(pos == -ENOENT || pos == -ENODATA || pos == -EIO || (pos >= 0 && pos <= 15));
	FUZZ_CHECK(pos < 0 || len > 0x40);
	/* Device Control comes from the same capability: none without a port type. */
	{
		int dc = aff_pcicfg_devctl(cfg, len);

		FUZZ_CHECK(dc == -ENOENT || dc == -ENODATA || dc == -EIO || (dc >= 0 && dc <= 0xffff));
		FUZZ_CHECK(dc < 0 || pos >= 0);
		FUZZ_CHECK(dc < 0 || AFF_PCI_EXP_DEVCTL_READRQ((unsigned)dc) <= 16384);
	}
	pos = aff_pcicfg_is_bridge(cfg, len);
	FUZZ_CHECK(pos == 0 || pos == 1 || (pos == -ENODATA && len <= 0x0e));
	FUZZ_CHECK(aff_pcicfg_find_ext_cap(NULL, len, id) == -EINVAL);
	/* The same bytes as VPD: a value found is printable and within the buffer. */
	{
		char v[64];

		pos = aff_pcicfg_vpd_keyword(cfg, len, "V3", v, sizeof(v));
		FUZZ_CHECK(pos == 0 || pos == -ENOENT || pos == -EINVAL || pos == -ERANGE);
		FUZZ_CHECK(pos || strlen(v) < len);
		for (size_t i = 0; !pos && v[i]; i++)
			FUZZ_CHECK(v[i] >= 0x20 && v[i] <= 0x7e);
	}
	free(cfg);
	return 0;
}
