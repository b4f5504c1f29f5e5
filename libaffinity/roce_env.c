// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The ranks' environment as the audit sees it: its own process
 * environment, which a prolog or NHC shares with the job's, and for what
 * that does not set, NCCL's own defaults file: NCCL_CONF_FILE, else
 * /etc/nccl.conf (NAME=VALUE lines, # comments), where sites often put
 * NCCL_IB_TC. Read on the live node, or under --root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "roce.h"

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

void aff_roce_env_load(struct aff_roce_env *e, const struct aff_topo *t)
{
	const char *root = t->ctx ? t->ctx->root : NULL;
	const char *file = getenv("NCCL_CONF_FILE");
	bool rooted = root && *root && strcmp(root, "/");
	char err[256], *line, *next, *eq;
	size_t len;

	memset(e, 0, sizeof(*e));
	if (!t->ctx || (t->src != AFF_SRC_LIVE && !rooted))
		return;
	if (!file || rooted)
		file = "/etc/nccl.conf";
	e->path = file;
	if (aff_read_file(aff_ctx_path(t->ctx, file, e->pathbuf, sizeof(e->pathbuf)), 1 << 20,
			  &e->text, &len, err, sizeof(err)) < 0) {
		e->text = NULL;
		return;
	}
	for (line = e->text; line && e->n < AFF_ROCE_ENV_MAX; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		line = trim(line);
		eq = strchr(line, '=');
		if (*line == '#' || !eq)
			continue;
		*eq = '\0';
		e->name[e->n] = trim(line);
		e->value[e->n++] = trim(eq + 1);
	}
}

const char *aff_roce_env_get(const char *name, void *arg)
{
	const char *v = getenv(name);

	return v ? v : aff_roce_env_file(arg, name);
}

const char *aff_roce_env_file(struct aff_roce_env *e, const char *name)
{
	size_t i, used = strlen(e->served);

	for (i = 0; i < e->n; i++)
		if (!strcmp(e->name[i], name)) {
			snprintf(e->served + used, sizeof(e->served) - used, "%s%s ",
				 used ? "" : " ", name);
			return e->value[i];
		}
	return NULL;
}

/* "NCCL_IB_TC=106 (DSCP 26)" becomes "NCCL_IB_TC=106 (DSCP 26) from /etc/nccl.conf". */
void aff_roce_env_mark(const struct aff_roce_env *e, struct aff_roce_user *u, size_t n)
{
	char word[48];
	size_t i, k;

	for (i = 0; i < n; i++) {
		for (k = 0; k + 1 < sizeof(word) && u[i].src[k] && u[i].src[k] != '=' &&
		     u[i].src[k] != ' '; k++)
			word[k + 1] = u[i].src[k];
		word[0] = ' ';
		word[k + 1] = ' ';
		word[k + 2] = '\0';
		if (u[i].src[k] == '=' && strstr(e->served, word))
			snprintf(u[i].src + strlen(u[i].src), sizeof(u[i].src) - strlen(u[i].src),
				 " from %s", e->path);
	}
}

void aff_roce_env_clear(struct aff_roce_env *e)
{
	free(e->text);
	e->text = NULL;
	e->n = 0;
}
