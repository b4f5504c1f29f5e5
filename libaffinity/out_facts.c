// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * aff_topo_facts_json(): what only the model of a topology file knows, as
 * facts one node's record can be compared on with another's (railbind
 * fleet): each PCIe link's speed and width against what it is capable of,
 * each port's ACS control, and the machine (NUMA nodes and their CPUs,
 * cores, peer memory, the module), and its rails as NCCL sees them. Every
 * value is a string, so two nodes compare by text.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "audit.h"
#include "fabric.h"
#include "model.h"
#include "optics_info.h"

static void put(struct json_object *facts, const char *key, const char *value)
{
	json_object_object_add(facts, key, json_object_new_string(value ? value : "unknown"));
}

/*
 * Mark the GPUs, the rails and every port: a port stays where it is when
 * the card below it is missing, and says so by its link.
 */
static bool *mark_paths(const struct aff_topo *t)
{
	bool *mark = calloc(t->ndev ? t->ndev : 1, sizeof(*mark));
	size_t k;

	if (!mark)
		return NULL;
	for (k = 0; k < t->ndev; k++)
		mark[k] = t->dev[k].type == AFF_DEV_BRIDGE;
	for (k = 0; k < t->ngpu + t->nrail; k++)
		mark[k < t->ngpu ? t->gpus[k] : t->rail[k - t->ngpu].dev] = true;
	return mark;
}

static void speed_width(char *buf, size_t len, double speed, int width)
{
	char s[32] = "?", w[32] = "?";

	if (speed > 0)
		snprintf(s, sizeof(s), "%.1f", speed);
	if (width > 0)
		snprintf(w, sizeof(w), "%d", width);
	snprintf(buf, len, "%s GT/s x%s", s, w);
}

static void links_acs(const struct aff_topo *t, const bool *mark, struct json_object *links,
		      struct json_object *acs)
{
	char key[256], val[160], cur[64], cap[64];
	size_t i;

	for (i = 0; i < t->ndev; i++) {
		const struct aff_dev *d = &t->dev[i];
		const char *role = d->gpu >= 0 ? "GPU" : d->type == AFF_DEV_BRIDGE ? "port" : "NIC";

		if (!mark[i] || !d->pci[0] || d->type == AFF_DEV_HOSTBRIDGE)
			continue;
		snprintf(key, sizeof(key), "%s %s", role, d->pci);
		if (d->unreadable & AFF_UNREADABLE_LINK) {
			put(links, key, "unreadable");
		} else if (d->link_speed > 0 || d->link_width > 0) {
			speed_width(cur, sizeof(cur), d->link_speed, d->link_width);
			speed_width(cap, sizeof(cap), d->link_speed_cap, d->link_width_cap);
			snprintf(val, sizeof(val), "%s (capable of %s)", cur, cap);
			put(links, key, val);
		}
		if (d->unreadable & AFF_UNREADABLE_ACS) {
			put(acs, key, "unreadable");
		} else if (d->acs_ctl >= 0) {
			snprintf(val, sizeof(val), "0x%04x", (unsigned)d->acs_ctl);
			put(acs, key, val);
		}
	}
}

static int machine(const struct aff_topo *t, struct json_object *m)
{
	char val[32], *s;
	size_t i, len;
	FILE *f = open_memstream(&s, &len);

	if (!f)
		return -ENOMEM;
	for (i = 0; i < t->nnuma; i++) {
		char *cpus = aff_bitmap_list(t->numa[i].cpuset);

		fprintf(f, "%s%u: %s", i ? "; " : "", t->numa[i].os_index,
			cpus && *cpus ? cpus : "no CPU");
		free(cpus);
	}
	if (fclose(f))
		return -ENOMEM;
	put(m, "NUMA nodes", s);
	free(s);
	snprintf(val, sizeof(val), "%zu", t->ncore);
	put(m, "cores", val);
	put(m, "peer memory", t->peer_memory);
	put(m, "railbind.ko", t->kmod);
	return 0;
}

/*
 * The rails NCCL's IB transport opens (src/transport/net_ib/init.cc: RDMA
 * devices, ACTIVE ports), in the order it numbers them: the model's rail
 * order, PCI order, which is how the verbs devices are named and listed on
 * these nodes. NCCL pairs NICs by that index across nodes (NVIDIA/nccl#1591),
 * so each is told by what matters to the pairing and not by its name, which
 * may differ between node models: link layer, rate, NUMA node and the first
 * GPU it is closest to (GPU indices are PCI order too). The link layer is
 * the port's (link_layer) where discovery read it, else guessed from the
 * netdev name (IPoIB interfaces are ib*); no netdev: unknown. Rails with
 * fabric facts also give their MTU, GID, width and speed, firmware and
 * board id: a node whose firmware or MTU differs is the classic slow one.
 */
/* What the fabric sees of rail @n, where discovery read it (fabric.h). */
static void fabric_facts(const struct aff_fabric_port *f, size_t n, struct json_object *out)
{
	char key[48], val[96];
	bool v2 = false, v2addr = false;
	size_t i;
	int g = aff_fabric_roce_v2_ipv4(f);

	/* The MTU RDMA moves with: verbs' active MTU, else what the RoCE netdev's gives. */
	int mtu = f->active_mtu ? f->active_mtu :
		  !strcmp(f->link_layer, "Ethernet") ? aff_roce_mtu_of_netdev(f->netdev_mtu) : 0;

	snprintf(key, sizeof(key), "rail %zu MTU", n);
	snprintf(val, sizeof(val), "%d", mtu);
	put(out, key, mtu ? val : NULL);
	snprintf(key, sizeof(key), "rail %zu netdev MTU", n);
	snprintf(val, sizeof(val), "%d", f->netdev_mtu);
	put(out, key, f->netdev_mtu ? val : NULL);
	if (!strcmp(f->link_layer, "Ethernet")) {
		for (i = 0; i < f->ngid; i++)
			if (f->gid[i].type == AFF_GID_ROCE_V2) {
				v2 = true;
				v2addr |= aff_gid_has_address(f->gid[i].raw);
			}
		if (g >= 0)
			snprintf(val, sizeof(val), "RoCE v2 IPv4 at index %d", g);
		else
			snprintf(val, sizeof(val), "%s", v2addr ? "RoCE v2 IPv6 only" :
				 v2 ? "RoCE v2 without an address" : "no RoCE v2");
	} else {
		snprintf(val, sizeof(val), "%s", f->link_layer[0] ? "IB" : "unknown");
	}
	snprintf(key, sizeof(key), "rail %zu GID", n);
	put(out, key, val);
	snprintf(key, sizeof(key), "rail %zu width", n);
	snprintf(val, sizeof(val), "%s %s", f->width, f->speed);
	put(out, key, f->width[0] ? val : NULL);
	snprintf(key, sizeof(key), "rail %zu firmware", n);
	put(out, key, f->fw[0] ? f->fw : NULL);
	snprintf(key, sizeof(key), "rail %zu board", n);
	put(out, key, f->board[0] ? f->board : NULL);
}

/*
 * The module a root-run snapshot read on rail @n's NIC: its memory map (and
 * vendor and part where the module gives them). Nothing when none was read
 * (no privilege, an InfiniBand port, an older snapshot), so fleets of such
 * snapshots compare as before.
 */
static void transceiver_fact(const struct aff_topo *t, const struct aff_dev *d, size_t n,
			     struct json_object *out)
{
	hwloc_obj_t obj = t->hw ? hwloc_get_pcidev_by_busid(t->hw, d->domain, d->bus, d->devno,
							    d->func) : NULL;
	const char *why;
	struct aff_optics o;
	char key[40], buf[160];

	if (!obj || aff_optics_info_read(obj, &o, &why, buf, sizeof(buf)) != 0)
		return;
	snprintf(key, sizeof(key), "rail %zu transceiver", n);
	snprintf(buf, sizeof(buf), "%s%s%s%s%s", aff_optics_kind_name(o.kind),
		 o.vendor[0] ? " " : "", o.vendor, o.part[0] ? " " : "", o.part);
	put(out, key, buf);
}

static void rails(const struct aff_topo *t, struct json_object *out)
{
	char key[32], val[160], rate[32], gpu[48], node[16];
	size_t i, g, n = 0;

	put(out, "count", "0");	/* first, however many follow */
	for (i = 0; i < t->nrail; i++) {
		const struct aff_rail *r = &t->rail[i];
		const struct aff_dev *d = &t->dev[r->dev];
		enum aff_path best = AFF_PATH_NONE;
		int near = -1, numa = aff_audit_dev_numa(t, r->dev);

		if (!r->rdma || (r->port_state && strcmp(r->port_state, "ACTIVE")))
			continue;
		for (g = 0; g < t->ngpu; g++) {
			enum aff_path p = aff_topo_path(t, g, i);

			if (p != AFF_PATH_NONE && (best == AFF_PATH_NONE || p < best)) {
				best = p;
				near = (int)g;
			}
		}
		if (r->rate > 0)
			snprintf(rate, sizeof(rate), "%g Gb/s", r->rate);
		else
			snprintf(rate, sizeof(rate), "rate unknown");
		if (near >= 0)
			snprintf(gpu, sizeof(gpu), "nearest GPU %d (%s)", near, aff_path_name(best));
		else
			snprintf(gpu, sizeof(gpu), "no GPU");
		if (numa >= 0)
			snprintf(node, sizeof(node), "%d", numa);
		snprintf(val, sizeof(val), "%s, %s, NUMA node %s, %s",
			 r->fab && r->fab->link_layer[0] ?
			 (!strcmp(r->fab->link_layer, "InfiniBand") ? "InfiniBand" : "Ethernet (RoCE)") :
			 !d->netdev ? "link layer unknown" :
			 !strncmp(d->netdev, "ib", 2) ? "InfiniBand" : "Ethernet (RoCE)",
			 rate, numa >= 0 ? node : "unknown", gpu);
		snprintf(key, sizeof(key), "rail %zu", n);
		put(out, key, val);
		if (r->fab)
			fabric_facts(r->fab, n, out);
		transceiver_fact(t, d, n, out);
		n++;
	}
	snprintf(val, sizeof(val), "%zu", n);
	put(out, "count", val);
}

AFF_EXPORT int aff_topo_facts_json(const struct aff_topo *t, unsigned long flags, char **out)
{
	struct json_object *doc = json_object_new_object();
	struct json_object *links = json_object_new_object(), *acs = json_object_new_object();
	struct json_object *m = json_object_new_object(), *r = json_object_new_object();
	bool *mark = mark_paths(t);
	int rc = doc && links && acs && m && r && mark ? 0 : -ENOMEM;

	*out = NULL;
	if (!rc) {
		json_object_object_add(doc, "links", json_object_get(links));
		json_object_object_add(doc, "acs", json_object_get(acs));
		json_object_object_add(doc, "machine", json_object_get(m));
		json_object_object_add(doc, "rails", json_object_get(r));
		links_acs(t, mark, links, acs);
		rails(t, r);
		rc = machine(t, m);
	}
	free(mark);
	json_object_put(links);
	json_object_put(acs);
	json_object_put(m);
	json_object_put(r);
	if (rc < 0) {
		json_object_put(doc);
		return rc;
	}
	return aff_json_string(doc, flags, out);
}
