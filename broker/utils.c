// SPDX-License-Identifier: GPL-2.0-or-later
/* Helpers shared by railbind's subcommands. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "model.h"
#include "railbind.h"

const char *rb_prog = "railbind";

void rb_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", rb_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int rb_ctx(const struct rb_opts *o, struct aff_ctx **ctx)
{
	char err[1024] = "";
	int rc;

	*ctx = aff_ctx_new(o->root);
	if (!*ctx) {
		rb_error("cannot create a context: %s", strerror(errno));
		return -errno;
	}
	rc = aff_ctx_load_config(*ctx, o->config, err, sizeof(err));
	if (rc < 0)
		rb_error("config: %s", *err ? err : strerror(-rc));
	return rc;
}

int rb_load(const struct rb_opts *o, struct aff_ctx **ctx,
	    struct aff_topo **topo)
{
	char err[1024] = "";
	int rc;

	*topo = NULL;
	rc = rb_ctx(o, ctx);
	if (rc < 0)
		return rc;
	rc = aff_topo_load(*ctx, o->input, o->load_flags, topo, err, sizeof(err));
	if (rc < 0)
		rb_error("%s", *err ? err : strerror(-rc));
	return rc;
}

bool rb_common_opt(int c, const char *arg, struct rb_opts *o)
{
	switch (c) {
	case 'i':
		o->input = arg;
		return true;
	case 'c':
		o->config = arg;
		return true;
	case RB_OPT_ROOT:
		o->root = arg;
		return true;
	case 'j':
		o->json = true;
		return true;
	case 'p':
		o->pretty = o->json = true;
		return true;
	case 'd':
		o->details++;
		return true;
	}
	return false;
}

int rb_print_json(int rc, char *doc)
{
	if (rc < 0) {
		rb_error("cannot write JSON: %s", strerror(-rc));
		return RB_EXIT_FAIL;
	}
	puts(doc);
	free(doc);
	return fflush(stdout) ? RB_EXIT_FAIL : RB_EXIT_OK;
}

const char *rb_jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return NULL;
	return json_object_get_string(v);
}

struct json_object *rb_jget(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (o)
		json_object_object_get_ex(o, key, &v);
	return v;
}

int rb_emit(struct json_object *doc, const struct rb_opts *o,
	    void (*text)(struct json_object *doc, int details))
{
	char *s = NULL;
	int rc;

	if (o->json) {
		rc = aff_json_string(doc, o->pretty ? AFF_JSON_PRETTY : 0, &s);
		return rb_print_json(rc, s);
	}
	text(doc, o->details);
	json_object_put(doc);
	return fflush(stdout) ? RB_EXIT_FAIL : RB_EXIT_OK;
}

bool rb_color(FILE *f)
{
	const char *nc = getenv("NO_COLOR");

	return isatty(fileno(f)) && !(nc && *nc);
}
