// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What railbind.topo/1 gains from the GPUs' own libraries: per GPU uuid,
 * minor, nvlinks, mig, c2c, xgmi, partition; the GPU x GPU and NIC x NIC
 * matrices nvidia-smi topo -m prints beside GPU x NIC; the libraries'
 * state; and warnings: where the driver's own path class differs from
 * railbind's (both answers), and, once, what could not be known.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "gpu_ident.h"
#include "model.h"
#include "model_complex.h"

static struct json_object *str_or_null(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

static struct json_object *int_or_null(int v)
{
	return v >= 0 ? json_object_new_int(v) : NULL;
}

static const char *link_type(enum aff_glink_type type)
{
	static const char *const names[] = {
		[AFF_GLINK_GPU] = "gpu", [AFF_GLINK_SWITCH] = "switch", [AFF_GLINK_NPU] = "npu",
		[AFF_GLINK_UNKNOWN] = "unknown", [AFF_GLINK_XGMI] = "xgmi",
	};

	return names[type];
}

static struct json_object *links_json(const struct aff_gident *g, bool xgmi)
{
	struct json_object *a;
	size_t i;
	bool any = false;

	if (!g)
		return NULL;
	for (i = 0; i < g->nlink; i++)
		any |= (g->link[i].type == AFF_GLINK_XGMI) == xgmi;
	/* NVLink: known when NVML counted the links (0 is an answer); XGMI: when listed. */
	if (!any && (xgmi || g->nvlinks < 0))
		return NULL;
	a = json_object_new_array();
	for (i = 0; i < g->nlink; i++) {
		const struct aff_glink *l = &g->link[i];
		struct json_object *o;

		if ((l->type == AFF_GLINK_XGMI) != xgmi)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "remote", str_or_null(l->remote));
		if (xgmi) {
			json_object_object_add(o, "hops", json_object_new_int(l->hops));
			json_object_object_add(o, "weight", json_object_new_int(l->weight));
		} else {
			json_object_object_add(o, "type", json_object_new_string(link_type(l->type)));
			json_object_object_add(o, "links", json_object_new_int(l->links));
		}
		json_object_array_add(a, o);
	}
	return a;
}

static struct json_object *mig_json(const struct aff_gident *g)
{
	static const char *const modes[] = { "disabled", "enabled", "unsupported" };
	struct json_object *o, *devs;
	size_t i;

	if (!g || g->mig < 0)
		return NULL;
	o = json_object_new_object();
	devs = json_object_new_array();
	json_object_object_add(o, "mode", json_object_new_string(modes[g->mig]));
	for (i = 0; i < g->nmig; i++) {
		struct json_object *d = json_object_new_object();

		json_object_object_add(d, "uuid", json_object_new_string(g->migdev[i].uuid));
		json_object_object_add(d, "gi", int_or_null(g->migdev[i].gi));
		json_object_object_add(d, "ci", int_or_null(g->migdev[i].ci));
		json_object_array_add(devs, d);
	}
	json_object_object_add(o, "devices", devs);
	return o;
}

static struct json_object *partition_json(const struct aff_gident *g)
{
	struct json_object *o;

	if (!g || (!g->compute_partition && !g->memory_partition))
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "compute", str_or_null(g->compute_partition));
	json_object_object_add(o, "memory", str_or_null(g->memory_partition));
	return o;
}

static void gpu_fields(const struct aff_topo *t, size_t k, struct json_object *j)
{
	const struct aff_gident *g = aff_gpu_ident(t, k);

	json_object_object_add(j, "uuid", str_or_null(g ? g->uuid : NULL));
	json_object_object_add(j, "minor", int_or_null(g ? g->minor : -1));
	json_object_object_add(j, "nvlinks", links_json(g, false));
	json_object_object_add(j, "c2c", g && g->c2c >= 0 ? json_object_new_boolean(g->c2c) : NULL);
	json_object_object_add(j, "mig", mig_json(g));
	json_object_object_add(j, "xgmi", links_json(g, true));
	json_object_object_add(j, "partition", partition_json(g));
}

static struct json_object *gpu_matrix(const struct aff_topo *t)
{
	struct json_object *m = json_object_new_array();
	char cell[16];
	size_t a, b;

	for (a = 0; a < t->ngpu; a++) {
		struct json_object *row = json_object_new_array();

		for (b = 0; b < t->ngpu; b++) {
			aff_gpu_pair_cell(t, a, b, cell, sizeof(cell));
			json_object_array_add(row, json_object_new_string(cell));
		}
		json_object_array_add(m, row);
	}
	return m;
}

static struct json_object *nic_matrix(const struct aff_topo *t)
{
	struct json_object *m = json_object_new_array();
	size_t a, b;

	for (a = 0; a < t->nrail; a++) {
		struct json_object *row = json_object_new_array();

		for (b = 0; b < t->nrail; b++)
			json_object_array_add(row, json_object_new_string(a == b ? "X" :
				aff_path_name(aff_path_between(t, t->rail[a].dev, t->rail[b].dev,
							       NULL))));
		json_object_array_add(m, row);
	}
	return m;
}

static void warn(struct json_object *warns, const char *id, const char *subject,
		 const char *message)
{
	struct json_object *w = json_object_new_object();

	json_object_object_add(w, "id", json_object_new_string(id));
	json_object_object_add(w, "subject", json_object_new_string(subject));
	json_object_object_add(w, "message", json_object_new_string(message));
	json_object_array_add(warns, w);
}

/* The driver's own class against railbind's, for every pair NVML answered. */
static void path_warnings(const struct aff_topo *t, struct json_object *warns)
{
	char msg[512];
	size_t a, b, i;

	for (a = 0; a < t->ngpu; a++) {
		const struct aff_gident *g = aff_gpu_ident(t, a);

		for (i = 0; g && i < g->npath; i++) {
			enum aff_path ours, theirs = g->path[i].path;

			for (b = 0; b < t->ngpu; b++)
				if (b != a && !strcmp(t->dev[t->gpus[b]].pci, g->path[i].remote))
					break;
			if (b == t->ngpu)
				continue;
			ours = aff_path_between(t, t->gpus[a], t->gpus[b], NULL);
			/* "Internal": two GPUs of one board, behind its own switch. */
			if (theirs == AFF_PATH_NONE)
				theirs = AFF_PATH_PIX;
			if (ours == theirs)
				continue;
			snprintf(msg, sizeof(msg),
				 "GPU%zu (%s) and GPU%zu (%s): railbind says %s, the driver (NVML nvmlDeviceGetTopologyCommonAncestor) says %s%s",
				 a, t->dev[t->gpus[a]].pci, b, t->dev[t->gpus[b]].pci,
				 aff_path_name(ours), aff_path_name(theirs),
				 g->path[i].path == AFF_PATH_NONE ? " (internal: one board)" : "");
			warn(warns, "gpu-path-differs", t->dev[t->gpus[a]].pci, msg);
		}
	}
}

/*
 * A GPU whose DMA function could not be paired with its PF: the plan
 * takes the PF's own path, which NCCL's traffic does not.
 */
static void complex_warnings(const struct aff_topo *t, struct json_object *warns)
{
	char msg[512], gpus[256] = "";
	size_t k, used = 0;
	struct aff_complex_id c;

	for (k = 0; k < t->ngpu; k++)
		if (aff_complex_of(t, t->gpus[k], &c) && c.undecided && used < sizeof(gpus))
			used += (size_t)snprintf(gpus + used, sizeof(gpus) - used, "%sGPU%zu",
						 used ? ", " : "", k);
	if (!used)
		return;
	snprintf(msg, sizeof(msg),
		 "undecided: VPD unreadable: the Data Direct DMA functions of %s are paired with no PF (VPD is root-only: run as root, or read the broker's snapshot)",
		 gpus);
	warn(warns, "complex", "vpd", msg);
}

/* Once per library: what it could not tell, and for which GPUs. */
static void library_warnings(const struct aff_topo *t, struct json_object *warns, int vendor,
			     const char *lib, const char *state, const char *what)
{
	char msg[768], gpus[256] = "";
	size_t k, n = 0, used = 0;
	const char *unread = NULL;
	bool any_ident = false;

	for (k = 0; k < t->ngpu; k++) {
		const struct aff_dev *d = &t->dev[t->gpus[k]];

		if (d->vendor != vendor)
			continue;
		n++;
		any_ident |= d->gident != NULL;
		if (d->gident && d->gident->unreadable) {
			unread = d->gident->unreadable;
			if (used < sizeof(gpus))
				used += (size_t)snprintf(gpus + used, sizeof(gpus) - used, "%sGPU%zu",
							 used ? ", " : "", k);
		}
	}
	if (!n)
		return;
	if (state && !strcmp(state, "absent"))
		snprintf(msg, sizeof(msg), "%s is not installed: %s unknown", lib, what);
	else if (state && !strncmp(state, "failed", 6))
		snprintf(msg, sizeof(msg), "%s did not answer (%s): %s unknown", lib,
			 state[6] ? state + 7 : "failed", what);
	else if (!state && !any_ident)
		snprintf(msg, sizeof(msg), "this input holds no answers of %s: %s unknown", lib, what);
	else if (unread)
		snprintf(msg, sizeof(msg), "%s could not tell %s of %s (an older driver lacks those calls)",
			 lib, unread, gpus);
	else
		return;
	warn(warns, "gpu-library", lib, msg);
}

void aff_gpu_topo_json(const struct aff_topo *t, struct json_object *doc)
{
	struct json_object *gpus, *libs, *warns = json_object_new_array();
	size_t k;

	if (json_object_object_get_ex(doc, "gpus", &gpus))
		for (k = 0; k < t->ngpu && k < json_object_array_length(gpus); k++)
			gpu_fields(t, k, json_object_array_get_idx(gpus, k));
	json_object_object_add(doc, "gpu_paths", gpu_matrix(t));
	json_object_object_add(doc, "nic_paths", nic_matrix(t));
	libs = json_object_new_object();
	json_object_object_add(libs, "nvml", str_or_null(t->nvml));
	json_object_object_add(libs, "rocm_smi", str_or_null(t->rocm_smi));
	json_object_object_add(doc, "gpu_libraries", libs);
	library_warnings(t, warns, 0x10de, "NVML (libnvidia-ml.so.1)", t->nvml,
			 "NVLink, MIG, C2C and the driver's own GPU x GPU classes are");
	library_warnings(t, warns, 0x1002, "ROCm SMI (librocm_smi64)", t->rocm_smi,
			 "XGMI links and partition modes are");
	path_warnings(t, warns);
	complex_warnings(t, warns);
	json_object_object_add(doc, "warnings", warns);
}

void aff_gpu_rank_json(const struct aff_topo *t, int gpu, int mig, struct json_object *o)
{
	const struct aff_gident *g = aff_gpu_ident(t, (size_t)gpu);

	json_object_object_add(o, "uuid", str_or_null(g ? g->uuid : NULL));
	json_object_object_add(o, "mig", g && mig >= 0 && (size_t)mig < g->nmig ?
				json_object_new_string(g->migdev[mig].uuid) : NULL);
}
