// SPDX-License-Identifier: GPL-2.0-or-later
/* railbind.conf(5): aff_config_parse() on any text, twice into one config. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aff_config conf = { 0 };
	char *text = fuzz_strdup(data, size), err[256];
	size_t i;

	err[0] = '\0';
	if (aff_config_parse(&conf, "fuzz.conf", text, err, sizeof(err)) == 0) {
		for (i = 0; i < conf.nexclude; i++)
			FUZZ_CHECK(conf.exclude_nic[i] && *conf.exclude_nic[i]);
		for (i = 0; i < conf.ninclude; i++)
			FUZZ_CHECK(conf.include_nic[i] && *conf.include_nic[i]);
		for (i = 0; i < conf.naccel; i++)
			FUZZ_CHECK(conf.accel[i].vendor >= 0 &&
				   conf.accel[i].vendor <= 0xffff);
	} else {
		/* A refused file says where, and keeps the config it had. */
		FUZZ_CHECK(conf.naccel == 0 && conf.nexclude == 0);
	}
	/* A second parse replaces the first without leaking it. */
	(void)aff_config_parse(&conf, "fuzz.conf", text, err, sizeof(err));
	aff_config_clear(&conf);
	free(text);
	return 0;
}
