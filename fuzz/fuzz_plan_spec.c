// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The two strings of struct aff_plan_spec, which come from the user's
 * command line or a rank's request: the allowed CPUs (a cpulist) and the
 * visible GPUs (indices or PCI addresses). Input: ALLOWED '\n' VISIBLE, a
 * missing part meaning NULL. Planned on each topology named in
 * $RAILBIND_FUZZ_TOPOS (colon separated; default: the dgx-h100 fixture).
 */
#include "fuzz.h"

#ifndef FUZZ_TOPO
#define FUZZ_TOPO "build/fixtures/dgx-h100.xml"
#endif

static struct aff_topo *topo[8];
static size_t ntopo;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *env = getenv("RAILBIND_FUZZ_TOPOS");
	char *list = strdup(env && *env ? env : FUZZ_TOPO), *item, *save = NULL;
	struct aff_ctx *ctx = fuzz_ctx();
	char err[512];

	(void)argc;
	(void)argv;
	for (item = strtok_r(list, ":", &save); item && ntopo < 8;
	     item = strtok_r(NULL, ":", &save)) {
		if (aff_topo_load(ctx, item, 0, &topo[ntopo], err, sizeof(err)) < 0) {
			fprintf(stderr, "fuzz_plan_spec: %s\n", err);
			exit(1);
		}
		ntopo++;
	}
	free(list);
	aff_ctx_unref(ctx);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aff_plan_spec spec = { 0 };
	char *text = fuzz_strdup(data, size), *nl;
	size_t i;

	nl = strchr(text, '\n');
	spec.allowed_cpus = *text == '-' && text[1] == '\n' ? NULL : text;
	if (nl) {
		*nl = '\0';
		spec.visible_gpus = nl + 1;
	}
	for (i = 0; i < ntopo; i++)
		fuzz_plan(topo[i], &spec);
	free(text);
	return 0;
}
