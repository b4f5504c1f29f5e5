// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * acs-redirect: ACS control judged against what the port's complex needs
 * (acs_table.c). On a classic node every redirect bit on a GPU-NIC path is
 * a fault, as before; ConnectX-8 Data Direct, inline and NUMA-based
 * complexes need the asymmetric values rdma-core's rdma_topo computes. The
 * node's remedy ("acs_remedy" in the document) is the kernel's
 * pci=config_acs= parameter where the target kernel takes it, else setpci.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "audit.h"
#include "model_complex.h"

#define MAX_BRIDGES 64
/* ACS control: Request Redirect, Completion Redirect, Egress Control (p2pdma.c). */
#define ACS_RR 0x0004
#define ACS_CR 0x0008
#define ACS_EC 0x0020
#define ACS_REDIRECT (ACS_RR | ACS_CR | ACS_EC)

/* A port the node's remedy sets: its BDF, its current value, what it needs. */
struct want {
	int dev;
	const char *pci;	/* the port's address, owned by the topology */
	const char *want;
	bool vera;
	enum aff_complex kind;
	enum aff_acs_role role;
};

struct acs_state {
	struct want *w;
	size_t nw;
	const struct aff_topo *t;
	bool *judged;		/* by the table (not the classic path rule) */
	bool unknown, any;
};

static struct json_object *jstr(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

static int add_want(struct acs_state *s, int dev, enum aff_complex kind,
		    enum aff_acs_role role, bool vera)
{
	struct want *w;
	size_t i;

	for (i = 0; i < s->nw; i++)
		if (s->w[i].dev == dev)
			return 0;
	w = realloc(s->w, (s->nw + 1) * sizeof(*w));
	if (!w)
		return -ENOMEM;
	s->w = w;
	s->w[s->nw++] = (struct want){ dev, s->t->dev[dev].pci, aff_acs_rule(role)->want, vera,
				       kind, role };
	return 0;
}

/* By PCI address, as rdma_topo lists the ports (the order does not matter to the kernel). */
static int by_pci(const void *x, const void *y)
{
	const struct want *a = x, *b = y;

	return strcmp(a->pci, b->pci);
}

/* "setpci -s BDF ECAP0d+6.w=VALUE:MASK": only the bits @want says. */
static void setpci_line(const char *bdf, const char *want, char *buf, size_t len)
{
	unsigned val = aff_acs_apply(0, want), mask = 0;
	int b;

	for (b = 0; b < 7; b++)
		if (want[6 - b] != 'x')
			mask |= 1u << b;
	snprintf(buf, len, "setpci -s %s ECAP0d+6.w=%04x:%04x", bdf, val, mask);
}

/* One table-judged port against its row. */
static int judge_port(struct aff_audit *a, struct acs_state *s,
		      const struct aff_acs_port *p)
{
	const struct aff_topo *t = a->topo;
	const struct aff_dev *b = &t->dev[p->dev];
	const struct aff_acs_rule *r = aff_acs_rule(p->role);
	const char *devs[2] = { b->pci, NULL };
	char bits[8], names[48], ctl[8], fix[96], remedy[320];
	struct json_object *ev, *dj;
	unsigned diff;
	int b6;

	s->judged[p->dev] = true;
	if (b->unreadable & AFF_UNREADABLE_ACS) {
		s->unknown = true;
		return 0;
	}
	if (b->acs_ctl < 0)
		return 0;
	s->any = true;
	if (add_want(s, p->dev, p->kind, p->role, p->vera) < 0)
		return -ENOMEM;
	diff = aff_acs_differs((unsigned)b->acs_ctl, r->want);
	if (!diff)
		return 0;
	aff_acs_bits((unsigned)b->acs_ctl, bits);
	aff_acs_bit_names(diff, names, sizeof(names));
	snprintf(ctl, sizeof(ctl), "0x%04x", (unsigned)b->acs_ctl & 0xffffu);
	setpci_line(b->pci, r->want, fix, sizeof(fix));
	snprintf(remedy, sizeof(remedy),
		 "boot with pci=config_acs=%s@%s (Linux >= 6.11; `railbind audit --acs-cmdline` gives the node's whole parameter), or now: %s (lost on reboot and reset)",
		 r->want, b->pci, fix);
	ev = json_object_new_object();
	dj = json_object_new_array();
	for (b6 = 6; b6 >= 0; b6--)
		if (diff & (1u << b6)) {
			char one[4];

			aff_acs_bit_names(1u << b6, one, sizeof(one));
			json_object_array_add(dj, json_object_new_string(one));
		}
	json_object_object_add(ev, "bridge", jstr(b->pci));
	json_object_object_add(ev, "acs_ctl", jstr(ctl));
	json_object_object_add(ev, "acs_bits", jstr(bits));
	json_object_object_add(ev, "required", jstr(r->want));
	json_object_object_add(ev, "complex", jstr(aff_complex_name(p->kind)));
	json_object_object_add(ev, "role", jstr(r->id));
	json_object_object_add(ev, "differing", dj);
	json_object_object_add(ev, "kernel_default", jstr(aff_acs_kernel_default(p->vera)));
	return aff_audit_add(a, "acs-redirect", r->fail ? AFF_SEV_FAIL : AFF_SEV_WARN, b->pci,
			     devs, ev, remedy,
			     "ACS control %s (bits %s) on %s (%s complex: %s) differs from the required %s in %s: %s",
			     ctl, bits, b->pci, aff_complex_name(p->kind), r->name, r->want, names,
			     r->why);
}

/* The classic rule: the redirecting bridges on the pairs of the plan, each once. */
static int judge_paths(struct aff_audit *a, struct acs_state *s)
{
	const struct aff_topo *t = a->topo;
	const char *want = aff_acs_rule(AFF_ACS_CLASSIC_PATH)->want;
	int *seen, br[MAX_BRIDGES];
	size_t k, i, n, r;
	int rc = 0;

	seen = calloc(t->ndev, sizeof(*seen));
	if (!seen)
		return -ENOMEM;
	for (k = 0; k < a->plan->nrank && !rc; k++) {
		const struct aff_rank *rk = &a->plan->rank[k];
		int gpu = t->gpus[rk->gpu];

		for (r = 0; r < rk->rails.n && !rc; r++) {
			int nic = t->rail[rk->rails.rail[r]].dev;
			enum aff_path path = aff_topo_path(t, (size_t)rk->gpu,
							   (size_t)rk->rails.rail[r]);

			n = aff_audit_path_bridges(t, gpu, nic, br, MAX_BRIDGES);
			s->any = true;
			for (i = 0; i < n && !rc; i++) {
				const struct aff_dev *b = &t->dev[br[i]];
				const char *devs[4] = { b->pci, t->dev[gpu].pci, t->dev[nic].pci, NULL };
				struct json_object *ev;
				char ctl[8];

				if (s->judged[br[i]])
					continue;
				if (b->unreadable & AFF_UNREADABLE_ACS)
					s->unknown = true;
				if (b->acs_ctl >= 0 &&
				    (rc = add_want(s, br[i], AFF_COMPLEX_CLASSIC, AFF_ACS_CLASSIC_PATH,
						   false)) < 0)
					break;
				if (b->acs_ctl < 0 || !(b->acs_ctl & ACS_REDIRECT) || seen[br[i]])
					continue;
				seen[br[i]] = 1;
				snprintf(ctl, sizeof(ctl), "0x%04x", (unsigned)b->acs_ctl & 0xffffu);
				ev = json_object_new_object();
				json_object_object_add(ev, "bridge", jstr(b->pci));
				json_object_object_add(ev, "acs_ctl", jstr(ctl));
				json_object_object_add(ev, "request_redirect",
						       json_object_new_boolean(b->acs_ctl & ACS_RR));
				json_object_object_add(ev, "completion_redirect",
						       json_object_new_boolean(b->acs_ctl & ACS_CR));
				json_object_object_add(ev, "egress_control",
						       json_object_new_boolean(b->acs_ctl & ACS_EC));
				json_object_object_add(ev, "path", jstr(aff_path_name(path)));
				json_object_object_add(ev, "complex", jstr("classic"));
				json_object_object_add(ev, "required", jstr(want));
				rc = aff_audit_add(a, "acs-redirect",
						   path <= AFF_PATH_PXB ? AFF_SEV_FAIL : AFF_SEV_WARN,
						   b->pci, devs, ev,
						   "clear ACS RR/CR/EC on this port (setpci -s BDF ECAP0d+6.w=0000, or the BIOS/kernel setting that enables it) if the node needs no VM isolation; with IOMMU isolation needed, accept host-bridge routing",
						   "ACS control %s on bridge %s redirects peer-to-peer traffic between GPU %s and NIC %s up to the root complex",
						   ctl, b->pci, t->dev[gpu].pci, t->dev[nic].pci);
			}
		}
	}
	free(seen);
	return rc;
}

/*
 * The node's remedy: pci=config_acs= lists the ports whose required value
 * differs from the kernel's own (rdma_topo's write-grub-acs does the same);
 * setpci lists the ports whose value differs now.
 */
static int build_remedy(struct aff_audit *a, struct acs_state *s, enum aff_complex node)
{
	const struct aff_topo *t = a->topo;
	const char *kernel = t->kernel_target ? t->kernel_target : t->kernel;
	struct json_object *o = json_object_new_object();
	struct json_object *ports = json_object_new_array();
	struct json_object *setpci = json_object_new_array();
	struct json_object *table = json_object_new_array();
	char *param = NULL;
	size_t i, np = 0, len = 0;
	const char *why = NULL;
	enum aff_acs_kernel kc;

	if (!o || !ports || !setpci || !table)
		goto nomem;
	if (s->nw)
		qsort(s->w, s->nw, sizeof(*s->w), by_pci);
	for (i = 0; i < s->nw; i++) {
		const struct aff_dev *b = &t->dev[s->w[i].dev];
		struct json_object *row = json_object_new_object();
		char line[96], ctl[8];

		snprintf(ctl, sizeof(ctl), "0x%04x", (unsigned)b->acs_ctl & 0xffffu);
		json_object_object_add(row, "port", jstr(b->pci));
		json_object_object_add(row, "complex", jstr(aff_complex_name(s->w[i].kind)));
		json_object_object_add(row, "role", jstr(aff_acs_rule(s->w[i].role)->id));
		json_object_object_add(row, "required", jstr(s->w[i].want));
		json_object_object_add(row, "acs_ctl", jstr(ctl));
		json_object_object_add(row, "ok", json_object_new_boolean(
			!aff_acs_differs((unsigned)b->acs_ctl, s->w[i].want)));
		json_object_array_add(table, row);

		if (aff_acs_differs((unsigned)b->acs_ctl, s->w[i].want)) {
			setpci_line(b->pci, s->w[i].want, line, sizeof(line));
			json_object_array_add(setpci, json_object_new_string(line));
		}
		if (aff_acs_same(s->w[i].want, aff_acs_kernel_default(s->w[i].vera)))
			continue;
		len += strlen(b->pci) + 10;
		json_object_array_add(ports, json_object_new_string(b->pci));
		np++;
	}
	if (np && !(param = calloc(1, len + 1)))
		goto nomem;
	for (i = 0, len = 0; i < s->nw; i++) {
		const struct aff_dev *b = &t->dev[s->w[i].dev];

		if (aff_acs_same(s->w[i].want, aff_acs_kernel_default(s->w[i].vera)))
			continue;
		len += (size_t)sprintf(param + len, "%s%s@%s", len ? ";" : "", s->w[i].want,
				       b->pci);
	}
	kc = aff_acs_kernel_check(kernel, np);
	json_object_object_add(o, "complex", jstr(aff_complex_name(node)));
	json_object_object_add(o, "kernel", jstr(kernel));
	json_object_object_add(o, "table", table);
	json_object_object_add(o, "ports", ports);
	json_object_object_add(o, "setpci", setpci);
	if (!np)
		why = "no port needs a value other than the kernel's default";
	else if (kc == AFF_ACS_KERNEL_UNKNOWN)
		why = "the target kernel is not known (pass --kernel VERSION)";
	else if (kc == AFF_ACS_KERNEL_TOO_OLD)
		why = "the target kernel has no pci=config_acs= (Linux >= 6.11): use setpci after every boot and reset";
	else if (kc == AFF_ACS_KERNEL_ONE_ONLY)
		why = "the target kernel fails to parse a config_acs= list of more than one port (needs 9cf8a952d57b: Linux >= 6.15 or 6.12-stable): use setpci after every boot and reset";
	json_object_object_add(o, "status", jstr(!np ? "none" : kc == AFF_ACS_KERNEL_OK ? "cmdline" :
						  kc == AFF_ACS_KERNEL_UNKNOWN ? "unknown" :
						  "setpci"));
	json_object_object_add(o, "reason", jstr(why));
	if (np && kc == AFF_ACS_KERNEL_OK) {
		size_t gl = strlen(param) + 32;
		char *grub = malloc(gl), *kp = malloc(gl);

		if (!grub || !kp) {
			free(grub);
			free(kp);
			free(param);
			json_object_put(o);	/* it holds ports, setpci and table now */
			return -ENOMEM;
		}
		/* GRUB's script would cut the list at ';': rdma_topo quotes it so. */
		snprintf(grub, gl, "pci=config_acs=\\\"%s\\\"", param);
		snprintf(kp, gl, "pci=config_acs=%s", param);
		json_object_object_add(o, "parameter", jstr(kp));
		json_object_object_add(o, "grub", jstr(grub));
		free(grub);
		free(kp);
	}
	free(param);
	json_object_put(a->acs_remedy);
	a->acs_remedy = o;
	return 0;
nomem:
	json_object_put(o);
	json_object_put(ports);
	json_object_put(setpci);
	json_object_put(table);
	free(param);
	return -ENOMEM;
}

int aff_audit_acs(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	struct acs_state s = { .t = t };
	struct aff_acs_port *ports = NULL;
	enum aff_complex node;
	size_t np = 0, i;
	int rc;

	if (!a->plan)
		return aff_audit_undecided(a, "acs-redirect", "no GPU or accelerator");
	if (!t->nrail)
		return aff_audit_undecided(a, "acs-redirect", "no rail NIC");
	if (!t->extras)
		return aff_audit_undecided(a, "acs-redirect",
					   "the source has no ACS data (not a railbind snapshot)");
	rc = aff_complex_ports(t, &ports, &np, &node);
	if (rc < 0)
		return rc;
	s.judged = calloc(t->ndev + 1, sizeof(*s.judged));
	if (!s.judged) {
		free(ports);
		return -ENOMEM;
	}
	for (i = 0; i < np && !rc; i++)
		rc = judge_port(a, &s, &ports[i]);
	if (!rc)
		rc = judge_paths(a, &s);
	if (!rc)
		rc = build_remedy(a, &s, node);
	free(ports);
	free(s.judged);
	free(s.w);
	if (rc < 0)
		return rc;
	if (!s.any)
		return aff_audit_undecided(a, "acs-redirect", "no GPU has a rail");
	if (s.unknown)
		return aff_audit_undecided(a, "acs-redirect",
					   "ACS control of a port on a GPU-NIC path could not be read (run as root, or load railbind.ko)");
	return 0;
}
