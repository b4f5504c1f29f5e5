// SPDX-License-Identifier: GPL-2.0-or-later
/* railbind plan: each local rank's GPU, rails, CPUs, memory, environment. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "model.h"
#include "railbind.h"

enum {
	OPT_CPUS = 0x200,
	OPT_VISIBLE,
	OPT_ISOLATE,
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s plan [OPTIONS]\n"
		"Show the plan: for every local rank its GPU, its rail NIC(s) (primary first),\n"
		"its CPUs and memory node(s), and the environment railbind run gives it.\n\n"
		RB_COMMON_HELP
		"      --cpus LIST    plan within these CPUs (default: this process's affinity\n"
		"                     on the live node, every CPU of an input file)\n"
		"      --visible LIST only these GPUs (indices or PCI addresses, as in\n"
		"                     CUDA_VISIBLE_DEVICES)\n"
		"      --isolate-gpu  also set CUDA_VISIBLE_DEVICES/ROCR_VISIBLE_DEVICES\n",
		rb_prog);
}

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) || !v)
		return NULL;
	return json_object_get_string(v);
}

static void print_rank(struct json_object *r, int details)
{
	struct json_object *gpu, *nics, *env;
	const char *mems = jstr(r, "mems");
	char nicbuf[512] = "";
	size_t i, used = 0;

	json_object_object_get_ex(r, "gpu", &gpu);
	json_object_object_get_ex(r, "nics", &nics);
	for (i = 0; i < json_object_array_length(nics) && used < sizeof(nicbuf); i++) {
		struct json_object *n = json_object_array_get_idx(nics, i);
		const char *name = jstr(n, "name");

		used += (size_t)snprintf(nicbuf + used, sizeof(nicbuf) - used,
					 "%s%s(%s)", i ? "," : "",
					 name ? name : jstr(n, "pci"), jstr(n, "path"));
	}
	printf("%-5s %-4s %-13s %-24s %-22s %s\n", jstr(r, "local_rank"),
	       jstr(gpu, "index"), jstr(gpu, "pci"), *nicbuf ? nicbuf : "-",
	       jstr(r, "cpus"), mems ? mems : "unknown");
	if (!details)
		return;
	json_object_object_get_ex(r, "env", &env);
	json_object_object_foreach(env, key, val)
		printf("      %s=%s\n", key, json_object_get_string(val));
}

static void print_text(struct json_object *doc, int details)
{
	struct json_object *ranks, *warns;
	size_t i;

	json_object_object_get_ex(doc, "ranks", &ranks);
	json_object_object_get_ex(doc, "warnings", &warns);
	printf("%-5s %-4s %-13s %-24s %-22s %s\n", "rank", "gpu", "pci",
	       "nics (path)", "cpus", "mems");
	for (i = 0; i < json_object_array_length(ranks); i++)
		print_rank(json_object_array_get_idx(ranks, i), details);
	for (i = 0; i < json_object_array_length(warns); i++) {
		struct json_object *w = json_object_array_get_idx(warns, i);

		printf("warning: %s: %s\n", jstr(w, "id"), jstr(w, "message"));
	}
}

int cmd_plan(int argc, char **argv)
{
	static const struct option longopts[] = {
		RB_COMMON_LONG,
		{ "cpus", required_argument, NULL, OPT_CPUS },
		{ "visible", required_argument, NULL, OPT_VISIBLE },
		{ "isolate-gpu", no_argument, NULL, OPT_ISOLATE },
		{ 0 }
	};
	struct aff_plan_spec spec = { 0 };
	struct rb_opts o = { 0 };
	struct aff_ctx *ctx = NULL;
	struct aff_topo *topo = NULL;
	struct aff_plan *plan = NULL;
	struct json_object *doc;
	char err[1024] = "";
	int c, rc;

	while ((c = getopt_long(argc, argv, "+h" RB_COMMON_SHORT, longopts,
				NULL)) != -1) {
		if (rb_common_opt(c, optarg, &o))
			continue;
		switch (c) {
		case OPT_CPUS:
			spec.allowed_cpus = optarg;
			break;
		case OPT_VISIBLE:
			spec.visible_gpus = optarg;
			break;
		case OPT_ISOLATE:
			spec.flags |= AFF_PLAN_ISOLATE_GPU;
			break;
		case 'h':
			usage(stdout);
			return RB_EXIT_OK;
		default:
			usage(stderr);
			return RB_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		rb_error("plan: unexpected argument \"%s\"", argv[optind]);
		return RB_EXIT_USAGE;
	}
	rc = rb_load(&o, &ctx, &topo);
	if (rc >= 0) {
		rc = aff_plan_new(topo, &spec, &plan, err, sizeof(err));
		if (rc < 0)
			rb_error("plan: %s", *err ? err : strerror(-rc));
	}
	if (rc < 0) {
		aff_topo_unref(topo);
		aff_ctx_unref(ctx);
		return RB_EXIT_FAIL;
	}
	doc = aff_plan_to_json(plan);
	if (o.json) {
		char *s = NULL;

		rc = aff_json_string(doc, o.pretty ? AFF_JSON_PRETTY : 0, &s);
		rc = rb_print_json(rc, s);
	} else {
		print_text(doc, o.details);
		json_object_put(doc);
		rc = fflush(stdout) ? RB_EXIT_FAIL : RB_EXIT_OK;
	}
	aff_plan_unref(plan);
	aff_topo_unref(topo);
	aff_ctx_unref(ctx);
	return rc;
}
