// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * railbind topo: the GPU x NIC path matrix with CPU and NUMA affinity. The
 * text is printed from the same JSON document --json prints, so the two
 * cannot say different things.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "model.h"
#include "railbind.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s topo [OPTIONS]\n"
		"Show the path class between every GPU and every rail NIC, and each GPU's\n"
		"CPU and NUMA affinity, like nvidia-smi topo -m.\n\n"
		RB_COMMON_HELP, rb_prog);
}

static const char *legend =
	"Legend:\n"
	"  PIX  = through at most one PCIe switch\n"
	"  PXB  = through several PCIe switches, not the host bridge\n"
	"  PHB  = through a PCIe host bridge (root complex)\n"
	"  NODE = across root complexes of one NUMA node\n"
	"  SYS  = across NUMA nodes (the inter-socket link)\n";

static void print_text(struct json_object *doc, int details)
{
	struct json_object *gpus, *nics, *paths;
	size_t g, n, ng, nn;

	json_object_object_get_ex(doc, "gpus", &gpus);
	json_object_object_get_ex(doc, "nics", &nics);
	json_object_object_get_ex(doc, "paths", &paths);
	ng = json_object_array_length(gpus);
	nn = json_object_array_length(nics);
	printf("%-7s", "");
	for (n = 0; n < nn; n++)
		printf(" NIC%-3zu", n);
	printf(" %-20s %s\n", "CPU Affinity", "NUMA Affinity");
	for (g = 0; g < ng; g++) {
		struct json_object *gj = json_object_array_get_idx(gpus, g);
		struct json_object *row = json_object_array_get_idx(paths, g);
		const char *cpus = rb_jstr(gj, "cpus"), *numa = rb_jstr(gj, "numa");

		printf("GPU%-4zu", g);
		for (n = 0; n < nn; n++)
			printf(" %-6s", json_object_get_string(
				json_object_array_get_idx(row, n)));
		printf(" %-20s %s\n", cpus ? cpus : "unknown",
		       numa ? numa : "unknown");
	}
	if (!ng)
		printf("(no GPU or accelerator)\n");
	printf("\nGPUs:\n");
	for (g = 0; g < ng; g++)
		printf("  GPU%zu: %s\n", g,
		       rb_jstr(json_object_array_get_idx(gpus, g), "pci"));
	printf("NICs:\n");
	for (n = 0; n < nn; n++) {
		struct json_object *nj = json_object_array_get_idx(nics, n);
		const char *name = rb_jstr(nj, "name"), *pci = rb_jstr(nj, "pci");
		const char *netdev = rb_jstr(nj, "netdev"), *numa = rb_jstr(nj, "numa");
		struct json_object *rdma;

		json_object_object_get_ex(nj, "rdma", &rdma);
		printf("  NIC%zu: %-10s %s", n, name ? name : "-",
		       pci ? pci : "(no PCI address)");
		if (netdev)
			printf(" %s", netdev);
		if (details)
			printf(" numa %s%s", numa ? numa : "unknown",
			       json_object_get_boolean(rdma) ? "" : " (no RDMA)");
		putchar('\n');
	}
	if (!nn)
		printf("  (no rail NIC)\n");
	printf("\n%s", legend);
}

int cmd_topo(int argc, char **argv)
{
	static const struct option longopts[] = { RB_COMMON_LONG, { 0 } };
	struct rb_opts o = { 0 };
	struct aff_ctx *ctx = NULL;
	struct aff_topo *topo = NULL;
	struct json_object *doc;
	int c, rc;

	while ((c = getopt_long(argc, argv, "+h" RB_COMMON_SHORT, longopts,
				NULL)) != -1) {
		if (rb_common_opt(c, optarg, &o))
			continue;
		if (c == 'h') {
			usage(stdout);
			return RB_EXIT_OK;
		}
		usage(stderr);
		return RB_EXIT_USAGE;
	}
	if (optind < argc) {
		rb_error("topo: unexpected argument \"%s\"", argv[optind]);
		return RB_EXIT_USAGE;
	}
	rc = rb_load(&o, &ctx, &topo);
	if (rc < 0) {
		aff_ctx_unref(ctx);
		return RB_EXIT_FAIL;
	}
	doc = aff_topo_to_json(topo);
	rc = rb_emit(doc, &o, print_text);
	aff_topo_unref(topo);
	aff_ctx_unref(ctx);
	return rc;
}
