// SPDX-License-Identifier: GPL-2.0-or-later
/* railbind plan: each local rank's GPU, rails, CPUs, memory, environment. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "railbind.h"

enum {
	OPT_CPUS = 0x200,
	OPT_VISIBLE,
	OPT_ISOLATE,
	OPT_RAIL_IDS,
};

/* "mlx5_0(PIX),mlx4_0:2(PIX)": a rank's rails, primary first, the port when
 * it is not the first. */
static void nic_list(struct json_object *r, char *buf, size_t len)
{
	struct json_object *nics;
	size_t i, used = 0;

	*buf = '\0';
	json_object_object_get_ex(r, "nics", &nics);
	for (i = 0; i < json_object_array_length(nics) && used < len; i++) {
		struct json_object *n = json_object_array_get_idx(nics, i);
		const char *name = rb_jstr(n, "name"), *port = rb_jstr(n, "port");
		bool other_port = port && strcmp(port, "1");

		used += (size_t)snprintf(buf + used, len - used, "%s%s%s%s(%s)",
					 i ? "," : "", name ? name : rb_jstr(n, "pci"),
					 other_port ? ":" : "", other_port ? port : "",
					 rb_jstr(n, "path"));
	}
	if (!*buf)
		snprintf(buf, len, "-");
}

static void print_rank(FILE *f, struct json_object *r, int nicw, int details)
{
	const char *mems = rb_jstr(r, "mems"), *cpus = rb_jstr(r, "cpus");
	struct json_object *gpu, *env;
	char nics[512];

	json_object_object_get_ex(r, "gpu", &gpu);
	nic_list(r, nics, sizeof(nics));
	fprintf(f, "%-5s %-4s %-13s %-*s %-22s %s\n", rb_jstr(r, "local_rank"),
	        rb_jstr(gpu, "index"), rb_jstr(gpu, "pci"), nicw, nics,
	        cpus ? cpus : "unknown", mems ? mems : "unknown");
	if (!details)
		return;
	json_object_object_get_ex(r, "env", &env);
	json_object_object_foreach(env, key, val)
		fprintf(f, "      %s=%s\n", key, json_object_get_string(val));
}

static void print_text(FILE *f, struct json_object *doc, int details)
{
	struct json_object *ranks, *warns;
	int nicw = (int)strlen("nics (path)");
	char nics[512];
	size_t i;

	json_object_object_get_ex(doc, "ranks", &ranks);
	json_object_object_get_ex(doc, "warnings", &warns);
	/* The NIC column is as wide as its widest entry (p5: four NICs). */
	for (i = 0; i < json_object_array_length(ranks); i++) {
		nic_list(json_object_array_get_idx(ranks, i), nics, sizeof(nics));
		if ((int)strlen(nics) > nicw)
			nicw = (int)strlen(nics);
	}
	fprintf(f, "%-5s %-4s %-13s %-*s %-22s %s\n", "rank", "gpu", "pci", nicw,
	        "nics (path)", "cpus", "mems");
	for (i = 0; i < json_object_array_length(ranks); i++)
		print_rank(f, json_object_array_get_idx(ranks, i), nicw, details);
	for (i = 0; i < json_object_array_length(warns); i++) {
		struct json_object *w = json_object_array_get_idx(warns, i);

		fprintf(f, "warning: %s: %s\n", rb_jstr(w, "id"), rb_jstr(w, "message"));
	}
	/* Where the plan parts from what NCCL would pick on its own: one line. */
	for (i = 0; i < json_object_array_length(ranks); i++) {
		struct json_object *r = json_object_array_get_idx(ranks, i);
		const char *note = rb_jstr(rb_jget(r, "nccl"), "note");

		if (note)
			fprintf(f, "note: rank %s (GPU %s): %s\n", rb_jstr(r, "local_rank"),
			        rb_jstr(rb_jget(r, "gpu"), "pci"), note);
	}
}

/* Every NIC the plan leaves out, once, on stderr (stdout may be JSON). */
static void say_excluded(struct json_object *doc)
{
	struct json_object *ex = rb_jget(doc, "excluded");
	size_t i;

	for (i = 0; i < json_object_array_length(ex); i++) {
		struct json_object *e = json_object_array_get_idx(ex, i);

		rb_error("plan: left out (%s): %s", rb_jstr(e, "reason"),
			 rb_jstr(e, "message"));
	}
}

static const struct rb_opt opts[] = {
	RB_OPTS_COMMON,
	{ OPT_CPUS, required_argument, "cpus",
	  "      --cpus LIST    plan within these CPUs (default: this process's affinity\n"
	  "                     on the live node, every CPU of an input file)\n" },
	{ OPT_VISIBLE, required_argument, "visible",
	  "      --visible LIST only these GPUs, as CUDA_VISIBLE_DEVICES names them:\n"
	  "                     indices, PCI addresses, UUIDs (GPU-...), MIG instances\n"
	  "                     (MIG-..., one rank each, on the instance's GPU)\n" },
	{ OPT_ISOLATE, no_argument, "isolate-gpu",
	  "      --isolate-gpu  also set CUDA_VISIBLE_DEVICES/ROCR_VISIBLE_DEVICES\n" },
	{ OPT_RAIL_IDS, no_argument, "nccl-rail-ids",
	  "      --nccl-rail-ids  NCCL_IB_HCA entries as HCA:PORT:RAIL, rail membership\n"
	  "                     NCCL 2.30 and later read (rail k: the node's k-th rail)\n" },
	{ 0 }
};

static int own_opt(int c, const char *arg, void *data)
{
	struct aff_plan_spec *spec = data;

	if (c == OPT_CPUS)
		spec->allowed_cpus = arg;
	else if (c == OPT_VISIBLE)
		spec->visible_gpus = arg;
	else if (c == OPT_RAIL_IDS)
		spec->flags |= AFF_PLAN_NCCL_RAIL_IDS;
	else
		spec->flags |= AFF_PLAN_ISOLATE_GPU;
	return 0;
}

static const struct rb_verb verb = {
	.name = "plan",
	.synopsis = "[OPTIONS]",
	.about = "Show the plan: for every local rank its GPU, its rail NIC(s) (primary first),\n"
		 "its CPUs and memory node(s), and the environment railbind run gives it.\n",
	.family = RB_PLAIN,
	.opts = opts,
	.opt = own_opt,
	.text = print_text,
};

int cmd_plan(int argc, char **argv)
{
	struct aff_plan_spec spec = { 0 };
	struct rb_opts o = { 0 };
	struct aff_ctx *ctx = NULL;
	struct aff_topo *topo = NULL;
	struct aff_plan *plan = NULL;
	struct json_object *doc;
	char err[1024] = "", *text = NULL;
	int rc;

	rc = rb_getopt(&verb, argc, argv, &o, &spec);
	if (rc >= 0)
		return rc;
	/* MIG instances are known to NVML only (the live node). */
	if (aff_visible_needs_libs(spec.visible_gpus))
		o.load_flags |= AFF_LOAD_GPU_LIBS;
	rc = rb_topology(&verb, &o, &ctx, &topo);
	if (rc >= 0)
		return rc;
	rc = aff_plan_new(topo, &spec, &plan, err, sizeof(err));
	if (rc < 0) {
		rb_error("plan: %s", *err ? err : strerror(-rc));
		aff_topo_unref(topo);
		aff_ctx_unref(ctx);
		return RB_EXIT_FAIL;
	}
	rc = aff_plan_json(plan, 0, &text);
	doc = rb_doc(rc, text);
	say_excluded(doc);
	rc = rb_emit(&verb, &o, doc, RB_EXIT_OK);
	aff_plan_unref(plan);
	aff_topo_unref(topo);
	aff_ctx_unref(ctx);
	return rc;
}
