// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A client's GPU claim against its own CUDA_VISIBLE_DEVICES: pure string
 * work, kept apart from peer.c's /proc reading so the fuzz target
 * (fuzz/fuzz_rank_env.c) runs the broker's own code. A claim may narrow
 * the process's GPUs, never widen them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "railbindd.h"

bool peer_claim_within(const char *claim, const char *own)
{
	char *c = strdup(claim), *save = NULL, *tok;
	bool ok = c != NULL;

	for (tok = c ? strtok_r(c, ",", &save) : NULL; tok && ok;
	     tok = strtok_r(NULL, ",", &save)) {
		size_t n = strlen(tok);
		const char *p = own;

		ok = false;
		while (p && *p) {
			size_t m = strcspn(p, ",");

			if (m == n && !strncmp(p, tok, n))
				ok = true;
			p += m + (p[m] == ',');
		}
	}
	free(c);
	return ok;
}

int peer_environ_get(const char *env, size_t len, const char *name, char **out)
{
	size_t k = strlen(name), off, n;

	*out = NULL;
	for (off = 0; off < len; off += n + 1) {
		const char *e = env + off, *nul = memchr(e, '\0', len - off);

		/* The last entry may lack its NUL (a cut read): it ends at len. */
		n = nul ? (size_t)(nul - e) : len - off;
		if (n >= k && !memcmp(e, name, k)) {
			*out = strndup(e + k, n - k);
			return *out ? 1 : -ENOMEM;
		}
	}
	return 0;
}

int peer_environ_visible(const char *env, size_t len, char **out)
{
	int rc = peer_environ_get(env, len, "CUDA_VISIBLE_DEVICES=", out);

	if (rc == 0)
		rc = peer_environ_get(env, len, "ROCR_VISIBLE_DEVICES=", out);
	return rc < 0 ? rc : 0;
}
