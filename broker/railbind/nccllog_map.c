// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * String keys (host:pid, host:pid:tid) to indices for nccl-check's reader:
 * open addressing on an FNV-1a hash, so that a log of thousands of ranks
 * costs one probe per line, not a walk over every rank seen.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nccllog.h"

static size_t hash(const char *s)
{
	size_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static size_t slot(const struct nl_map *m, const char *key)
{
	size_t i = hash(key) & (m->cap - 1);

	while (m->key[i] && strcmp(m->key[i], key))
		i = (i + 1) & (m->cap - 1);
	return i;
}

int nl_map_get(const struct nl_map *m, const char *key)
{
	size_t i;

	if (!m->cap)
		return -1;
	i = slot(m, key);
	return m->key[i] ? m->val[i] : -1;
}

static int grow(struct nl_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64, i;
	char **key = calloc(cap, sizeof(*key));
	int *val = calloc(cap, sizeof(*val));
	struct nl_map to = { .key = key, .val = val, .cap = cap };

	if (!key || !val) {
		free(key);
		free(val);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++)
		if (m->key[i]) {
			size_t j = slot(&to, m->key[i]);

			key[j] = m->key[i];
			val[j] = m->val[i];
		}
	free(m->key);
	free(m->val);
	m->key = key;
	m->val = val;
	m->cap = cap;
	return 0;
}

int nl_map_put(struct nl_map *m, const char *key, int val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap && grow(m) < 0)
		return -ENOMEM;
	i = slot(m, key);
	if (!m->key[i]) {
		m->key[i] = strdup(key);
		if (!m->key[i])
			return -ENOMEM;
		m->n++;
	}
	m->val[i] = val;
	return 0;
}

void nl_map_free(struct nl_map *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++)
		free(m->key[i]);
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof(*m));
}
