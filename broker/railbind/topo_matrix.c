// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind topo's text: the matrix nvidia-smi topo -m prints (GPU x GPU,
 * GPU x NIC, NIC x GPU, NIC x NIC, CPU and NUMA affinity), then the GPUs
 * with their identity, the NICs, one legend and the warnings. Everything is
 * read from the railbind.topo/1 document --json prints.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>

#include "railbind.h"
#include "topo_matrix.h"

static const char *legend =
	"Legend:\n"
	"  X    = Self\n"
	"  SYS  = across NUMA nodes (the inter-socket link)\n"
	"  NODE = across root complexes of one NUMA node\n"
	"  PHB  = through a PCIe host bridge (root complex)\n"
	"  PXB  = through several PCIe switches, not the host bridge\n"
	"  PIX  = through at most one PCIe switch\n"
	"  NV#  = a bonded set of # NVLinks, direct or through NVSwitches (NVML)\n"
	"  XGMI# = AMD Infinity Fabric (XGMI), # hops (ROCm SMI)\n";

static const char *cell(struct json_object *m, size_t r, size_t c)
{
	const char *s = json_object_get_string(
		json_object_array_get_idx(json_object_array_get_idx(m, r), c));

	return s ? s : "?";
}

static void affinity(FILE *f, struct json_object *dev)
{
	const char *cpus = rb_jstr(dev, "cpus"), *numa = rb_jstr(dev, "numa");

	if (rb_jget(dev, "index"))
		fprintf(f, " %-20s %s", cpus ? cpus : "unknown", numa ? numa : "unknown");
	else
		fprintf(f, " %-20s %s", "", numa ? numa : "unknown");
}

static void matrix(FILE *f, struct json_object *doc)
{
	struct json_object *gpus = rb_jget(doc, "gpus"), *nics = rb_jget(doc, "nics");
	struct json_object *gp = rb_jget(doc, "gpu_paths"), *np = rb_jget(doc, "nic_paths");
	struct json_object *paths = rb_jget(doc, "paths");
	size_t ng = json_object_array_length(gpus), nn = json_object_array_length(nics);
	size_t r, c;

	fprintf(f, "%-7s", "");
	for (c = 0; c < ng; c++)
		fprintf(f, " GPU%-3zu", c);
	for (c = 0; c < nn; c++)
		fprintf(f, " NIC%-3zu", c);
	fprintf(f, " %-20s %s\n", "CPU Affinity", "NUMA Affinity");
	for (r = 0; r < ng; r++) {
		fprintf(f, "GPU%-4zu", r);
		for (c = 0; c < ng; c++)
			fprintf(f, " %-6s", gp ? cell(gp, r, c) : r == c ? "X" : "?");
		for (c = 0; c < nn; c++)
			fprintf(f, " %-6s", cell(paths, r, c));
		affinity(f, json_object_array_get_idx(gpus, r));
		fputc('\n', f);
	}
	for (r = 0; r < nn; r++) {
		fprintf(f, "NIC%-4zu", r);
		for (c = 0; c < ng; c++)
			fprintf(f, " %-6s", cell(paths, c, r));
		for (c = 0; c < nn; c++)
			fprintf(f, " %-6s", np ? cell(np, r, c) : r == c ? "X" : "?");
		affinity(f, json_object_array_get_idx(nics, r));
		fputc('\n', f);
	}
	if (!ng)
		fprintf(f, "(no GPU or accelerator)\n");
}

/* "NV12 to 4 NVSwitch links..." for -d: each far end of the GPU's links. */
static void links(FILE *f, struct json_object *g)
{
	struct json_object *nv = rb_jget(g, "nvlinks"), *x = rb_jget(g, "xgmi");
	size_t i;

	for (i = 0; nv && i < json_object_array_length(nv); i++) {
		struct json_object *l = json_object_array_get_idx(nv, i);
		const char *remote = rb_jstr(l, "remote");

		fprintf(f, "        NVLink x%s to %s %s\n", rb_jstr(l, "links"), rb_jstr(l, "type"),
		        remote ? remote : "(address unknown)");
	}
	for (i = 0; x && i < json_object_array_length(x); i++) {
		struct json_object *l = json_object_array_get_idx(x, i);

		fprintf(f, "        XGMI to %s, %s hop(s), weight %s\n", rb_jstr(l, "remote"),
		        rb_jstr(l, "hops"), rb_jstr(l, "weight"));
	}
}

static void gpu_list(FILE *f, struct json_object *gpus, int details)
{
	size_t g, i;

	fprintf(f, "\nGPUs:\n");
	for (g = 0; g < json_object_array_length(gpus); g++) {
		struct json_object *j = json_object_array_get_idx(gpus, g);
		struct json_object *mig = rb_jget(j, "mig"), *part = rb_jget(j, "partition");
		struct json_object *devs = rb_jget(mig, "devices");
		const char *uuid = rb_jstr(j, "uuid"), *minor = rb_jstr(j, "minor");
		const char *c2c = rb_jstr(j, "c2c");

		fprintf(f, "  GPU%zu: %s", g, rb_jstr(j, "pci"));
		if (uuid)
			fprintf(f, " %s", uuid);
		if (minor)
			fprintf(f, " minor %s", minor);
		if (mig && strcmp(rb_jstr(mig, "mode"), "unsupported"))
			fprintf(f, " MIG %s", rb_jstr(mig, "mode"));
		if (c2c && !strcmp(c2c, "true"))
			fprintf(f, " C2C");
		if (part)
			fprintf(f, " partition %s/%s", rb_jstr(part, "compute") ? rb_jstr(part, "compute") : "?",
			        rb_jstr(part, "memory") ? rb_jstr(part, "memory") : "?");
		fputc('\n', f);
		for (i = 0; devs && i < json_object_array_length(devs); i++) {
			struct json_object *d = json_object_array_get_idx(devs, i);

			fprintf(f, "        %s (GPU instance %s, compute instance %s)\n",
			        rb_jstr(d, "uuid"), rb_jstr(d, "gi") ? rb_jstr(d, "gi") : "?",
			        rb_jstr(d, "ci") ? rb_jstr(d, "ci") : "?");
		}
		if (details)
			links(f, j);
	}
}


/*
 * The port as the fabric sees it, where discovery read it (a snapshot's
 * link_layer): link layer, state and rate (these two with -d already),
 * and the MTU RDMA moves with: verbs' active MTU, else the RoCE netdev's.
 */
static void fabric_legend(FILE *f, struct json_object *nj, bool details)
{
	const char *ll = rb_jstr(nj, "link_layer"), *state = rb_jstr(nj, "port_state");
	const char *rate = rb_jstr(nj, "rate"), *mtu = rb_jstr(nj, "active_mtu");
	const char *nmtu = rb_jstr(nj, "netdev_mtu");

	if (!ll)
		return;
	fprintf(f, " %s", ll);
	if (!details && state)
		fprintf(f, " %s", state);
	if (!details && rate)
		fprintf(f, " %s Gb/s", rate);
	if (mtu)
		fprintf(f, " MTU %s", mtu);
	else if (nmtu)
		fprintf(f, " netdev MTU %s", nmtu);
}
static void nic_list(FILE *f, struct json_object *nics, int details)
{
	size_t n;

	fprintf(f, "NICs:\n");
	for (n = 0; n < json_object_array_length(nics); n++) {
		struct json_object *nj = json_object_array_get_idx(nics, n);
		const char *name = rb_jstr(nj, "name"), *pci = rb_jstr(nj, "pci");
		const char *netdev = rb_jstr(nj, "netdev"), *numa = rb_jstr(nj, "numa");
		struct json_object *rdma = rb_jget(nj, "rdma");

		/* Printed when the document has them (port state and NCCL's view: issue 12). */
		const char *port = rb_jstr(nj, "port"), *state = rb_jstr(nj, "port_state");
		const char *rate = rb_jstr(nj, "rate"), *excl = rb_jstr(nj, "excluded");

		bool other_port = port && strcmp(port, "1");
		char label[64];

		/* A port past the first is its own rail: mlx4_0:2. */
		snprintf(label, sizeof(label), "%s%s%s", name ? name : "-", other_port ? ":" : "",
			 other_port ? port : "");
		fprintf(f, "  NIC%zu: %-10s %s", n, label, pci ? pci : "(no PCI address)");
		if (netdev)
			fprintf(f, " %s", netdev);
		if (details) {
			fprintf(f, " numa %s%s", numa ? numa : "unknown",
			        json_object_get_boolean(rdma) ? "" : " (no RDMA)");
			if (port)
				fprintf(f, " port %s", port);
			if (state)
				fprintf(f, " %s", state);
			if (rate)
				fprintf(f, " %s Gb/s", rate);
		}
		fabric_legend(f, nj, details);
		if (excl)
			fprintf(f, " (left out of the plan: %s)", excl);
		fputc('\n', f);
	}
	if (!json_object_array_length(nics))
		fprintf(f, "  (no rail NIC)\n");
}

/* With -d, the GPU x NIC pairs NCCL classes differently (nccl_paths, when present). */
static void nccl_differences(FILE *f, struct json_object *doc)
{
	struct json_object *paths = rb_jget(doc, "paths"), *nccl = rb_jget(doc, "nccl_paths");
	size_t g, n;
	bool any = false;

	for (g = 0; nccl && g < json_object_array_length(paths); g++)
		for (n = 0; n < json_object_array_length(rb_jget(doc, "nics")); n++) {
			const char *a = cell(paths, g, n), *b = cell(nccl, g, n);

			if (!strcmp(a, b))
				continue;
			if (!any)
				fprintf(f, "\nNCCL's own class where it differs:\n");
			any = true;
			fprintf(f, "  GPU%zu-NIC%zu: %s (here %s)\n", g, n, b, a);
		}
}

void rb_topo_text(FILE *f, struct json_object *doc, int details)
{
	struct json_object *warns = rb_jget(doc, "warnings");
	size_t i;

	matrix(f, doc);
	gpu_list(f, rb_jget(doc, "gpus"), details);
	nic_list(f, rb_jget(doc, "nics"), details);
	if (details)
		nccl_differences(f, doc);
	fprintf(f, "\n%s", legend);
	if (rb_jget(doc, "nccl_paths"))
		fprintf(f, "NCCL has no NODE (it says PHB) and flattens Broadcom two-level switches;\n"
		        "-d shows its own class of each pair where it differs, --json all of them\n"
		        "(nccl_paths).\n");
	for (i = 0; warns && i < json_object_array_length(warns); i++) {
		struct json_object *w = json_object_array_get_idx(warns, i);

		fprintf(f, "%swarning: %s: %s\n", i ? "" : "\n", rb_jstr(w, "id"), rb_jstr(w, "message"));
	}
}
