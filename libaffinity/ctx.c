// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The library context: reference counting, logging, the filesystem root, and
 * the site configuration it holds (railbind.conf, parsed by config.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define CONF_MAX_SIZE (1 << 20)

AFF_EXPORT unsigned int aff_get_api_version(void)
{
	return AFF_API_VERSION;
}

/* The format attribute lets clang's -Wformat-nonliteral check the callers. */
__attribute__((format(printf, 6, 0)))
static void log_stderr(void *data, int priority, const char *file, int line,
		       const char *fn, const char *format, va_list args)
{
	(void)data;
	(void)priority;
	(void)file;
	(void)line;
	(void)fn;
	fputs("railbind: ", stderr);
	vfprintf(stderr, format, args);
}

static int log_priority_from_env(void)
{
	const char *s = secure_getenv("RAILBIND_LOG");
	char *end;
	long v;

	if (!s || !*s)
		return LOG_ERR;
	if (!strcmp(s, "err"))
		return LOG_ERR;
	if (!strcmp(s, "warning"))
		return LOG_WARNING;
	if (!strcmp(s, "info"))
		return LOG_INFO;
	if (!strcmp(s, "debug"))
		return LOG_DEBUG;
	v = strtol(s, &end, 10);
	if (*end || v < 0 || v > LOG_DEBUG)
		return LOG_ERR;
	return (int)v;
}

AFF_EXPORT struct aff_ctx *aff_ctx_new(const char *root)
{
	struct aff_ctx *ctx = calloc(1, sizeof(*ctx));

	if (!ctx)
		return NULL;
	ctx->refcount = 1;
	ctx->log_fn = log_stderr;
	ctx->log_priority = log_priority_from_env();
	/* "/" and "" both mean the real root; keep no trailing slash. */
	if (root && *root && strcmp(root, "/")) {
		size_t n = strlen(root);

		ctx->root = strdup(root);
		if (!ctx->root) {
			free(ctx);
			errno = ENOMEM;
			return NULL;
		}
		while (n > 1 && ctx->root[n - 1] == '/')
			ctx->root[--n] = '\0';
	}
	return ctx;
}

AFF_EXPORT struct aff_ctx *aff_ctx_ref(struct aff_ctx *ctx)
{
	if (ctx)
		ctx->refcount++;
	return ctx;
}

AFF_EXPORT struct aff_ctx *aff_ctx_unref(struct aff_ctx *ctx)
{
	if (!ctx || --ctx->refcount > 0)
		return NULL;
	aff_config_clear(&ctx->conf);
	free(ctx->root);
	free(ctx);
	return NULL;
}

AFF_EXPORT void aff_set_log_fn(struct aff_ctx *ctx, aff_log_fn fn, void *data)
{
	ctx->log_fn = fn ? fn : log_stderr;
	ctx->log_data = data;
}

AFF_EXPORT void aff_set_log_priority(struct aff_ctx *ctx, int priority)
{
	ctx->log_priority = priority;
}

AFF_EXPORT int aff_get_log_priority(const struct aff_ctx *ctx)
{
	return ctx->log_priority;
}

void aff_log(const struct aff_ctx *ctx, int priority, const char *file,
	     int line, const char *fn, const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	ctx->log_fn(ctx->log_data, priority, file, line, fn, format, ap);
	va_end(ap);
}

const char *aff_ctx_path(const struct aff_ctx *ctx, const char *rel,
			 char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", ctx->root ? ctx->root : "", rel);
	return buf;
}

AFF_EXPORT int aff_ctx_load_config(struct aff_ctx *ctx, const char *path,
				   char *err, size_t errlen)
{
	char buf[4096];
	const char *file = path;
	char *text;
	size_t n;
	int rc;

	if (!file)
		file = aff_ctx_path(ctx, "/etc/railbind/railbind.conf", buf,
				    sizeof(buf));
	rc = aff_read_file(file, CONF_MAX_SIZE, &text, &n, err, errlen);
	if (rc == -ENOENT && !path)
		return 0;
	if (rc < 0)
		return rc;
	if (memchr(text, '\0', n))
		rc = aff_seterr(err, errlen, EINVAL, "%s: binary data, expected a text file",
				file);
	else
		rc = aff_config_parse(&ctx->conf, file, text, err, errlen);
	free(text);
	return rc;
}
