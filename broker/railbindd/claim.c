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

/* Whether @name is in the comma-separated controller list [@p, @end). */
static bool has_controller(const char *p, const char *end, const char *name)
{
	size_t n = strlen(name);

	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		size_t m = comma ? (size_t)(comma - p) : (size_t)(end - p);

		if (m == n && !strncmp(p, name, n))
			return true;
		p += m + 1;
	}
	return false;
}

/*
 * The cgroup path of @controller in a /proc/<pid>/cgroup text, whose lines
 * are "ID:CONTROLLERS:PATH"; "" names the cgroup v2 line, "0::PATH".
 */
char *peer_cgroup_path(const char *cg, const char *controller)
{
	const char *line = cg;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *c1 = memchr(line, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;

		if (c2 && (*controller ? has_controller(c1 + 1, c2, controller)
				       : c1 == line + 1 && *line == '0' && c2 == c1 + 1))
			return strndup(c2 + 1, len - (size_t)(c2 + 1 - line));
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}
