/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * audit - the NUMA/PCIe checks of `railbind audit` (DESIGN.md "Audit check ids"),
 * private to libaffinity and its in-tree users (the CLI's cmd_audit, the broker's
 * `audit` op). Functions return 0 or a negative errno.
 *
 * Use:
 *	struct aff_audit *a;
 *	if (aff_audit_run(topo, plan_or_NULL, 0, &a, err, sizeof(err)) == 0) {
 *		struct json_object *doc = aff_audit_to_json(a);   // caller puts it
 *		int code = aff_audit_exit_code(a);                // 0 ok 1 warn 2 fail 3 unknown
 *		aff_audit_unref(a);
 *	}
 *
 * The document is railbind.audit/1:
 *	{ "schema": "railbind.audit/1", "host", "source",
 *	  "status": "ok|warn|fail|unknown",
 *	  "checks": [ { "id", "severity": "ok|warn|fail", "subject", "message",
 *	                "remedy", "devices": [pci...], "evidence": {...} } ],
 *	  "undecided": [ { "id", "reason" } ],
 *	  "summary": { "<check id>": "ok|warn|fail|unknown", ... },
 *	  "topo": <railbind.topo/1 document>,
 *	  "pairs": [ { "gpu", "nic", "nic_pci", "path", "planned" } ],
 *	  "acs_remedy": { "complex", "kernel", "status": "none|cmdline|setpci|unknown",
 *	                  "reason", "ports": [pci...], "parameter", "grub",
 *	                  "setpci": [line...] }   (absent when ACS is not judged)
 *	  "optics": [ { "nic", "pci", "netdev", "type", "temperature_c", "voltage_v",
 *	                "lanes": [ { "lane", "rx_power_mw", "tx_power_mw", "bias_ma" } ],
 *	                "thresholds": { "<quantity>": { "high_alarm", "low_alarm",
 *	                                                "high_warn", "low_warn" } } } ],
 *	  "dcb": [ { "nic", "pci", "netdev", "trust": "dscp|pcp", "pfc_enabled": [prio...],
 *	             "pfc_frames_sent": [8 counts], "pfc_frames_received": [8 counts],
 *	             "dscp_priority": { "<dscp>": prio }, "ecn_np", "ecn_rp": [prio...] | null } ] }
 * A check that found nothing wrong has one entry of severity "ok" (subject
 * "node"); nic-shared findings are information and carry severity "ok". A check
 * that could not be decided has no entry in "checks" and one in "undecided".
 * "status" is the worst severity, or "unknown" when no check could be decided.
 */
#ifndef AFF_AUDIT_H
#define AFF_AUDIT_H

#include <stddef.h>

#include "plan.h"

struct json_object;

/* Every check, in report order. */
#define AFF_AUDIT_NCHECKS 24
extern const char *const aff_audit_check_ids[AFF_AUDIT_NCHECKS];

struct aff_audit;

/* aff_audit_run, aff_audit_ref/unref, aff_audit_json, aff_audit_exit_code: affinity.h. */
/* A new reference to the railbind.audit/1 document (json_object_put() it). */
struct json_object *aff_audit_to_json(const struct aff_audit *a);
/* aff_audit_unref() (the unit tests' name). */
void aff_audit_free(struct aff_audit *a);

/* The exit code (0-3) of a document's "status" (audit, verify): its severity. */
int aff_status_exit_code(struct json_object *doc);

/* ---- Between the audit's files (audit_findings.c gives these), and verify ---- */

struct aff_audit {
	int refcount;
	struct aff_topo *topo;
	struct aff_plan *plan;		/* NULL without accelerators */
	struct json_object *checks;	/* array */
	struct json_object *undecided;	/* array */
	struct json_object *optics;	/* array: each rail's transceiver readings */
	struct json_object *dcb;	/* array: each RoCE rail's DCB reading (audit_roce.c) */
	struct json_object *acs_remedy;	/* the node's ACS remedy (audit_acs.c), NULL */
	enum aff_sev check_sev[AFF_AUDIT_NCHECKS];
	unsigned check_found[AFF_AUDIT_NCHECKS];
	struct json_object *doc;	/* built by aff_audit_run */
};

/*
 * A finding of check @id on @subject. @devices: NULL-terminated PCI addresses (or
 * NULL). @evidence is taken over (may be NULL).
 */
int aff_audit_add(struct aff_audit *a, const char *id, enum aff_sev sev,
		  const char *subject, const char *const *devices,
		  struct json_object *evidence, const char *remedy, const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));
/* A JSON string, or NULL (JSON null) for NULL or "". */
struct json_object *aff_audit_str(const char *s);
/* Check @id could not be decided, and why. */
int aff_audit_undecided(struct aff_audit *a, const char *id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The devices of one rank's primary pair; nic -1 when the rank has no rail. */
struct aff_audit_pair {
	int gpu;	/* dev index */
	int nic;	/* dev index, -1 */
	int rail;	/* rail index, -1 */
	enum aff_path path;
};
int aff_audit_pair(const struct aff_audit *a, size_t rank, struct aff_audit_pair *p);
/* Bridges on the path between devices x and y (dev indices), at most max. */
size_t aff_audit_path_bridges(const struct aff_topo *t, int x, int y, int *out,
			      size_t max);
/* A rail's display name: RDMA name, netdev, else PCI address. */
const char *aff_audit_rail_name(const struct aff_topo *t, int rail);
/* NUMA node of a device: raw sysfs value when >= 0, else its locality's; -1. */
int aff_audit_dev_numa(const struct aff_topo *t, int dev);

/* The check groups (audit_pcie.c, audit_numa.c, audit_nic.c, audit_host.c, audit_health.c). */
int aff_audit_pcie(struct aff_audit *a);
int aff_audit_numa(struct aff_audit *a);
int aff_audit_nic(struct aff_audit *a);
int aff_audit_host(struct aff_audit *a);
/* link-flapping, pcie-errors, port-flapping (audit_health.c). */
int aff_audit_health(struct aff_audit *a);
/* acs-redirect (audit_acs.c), run by aff_audit_pcie. */
int aff_audit_acs(struct aff_audit *a);
/* gdr-readiness: GPUDirect RDMA on each pair (audit_gdr.c). */
int aff_audit_gdr(struct aff_audit *a);
/* transceiver (audit_optics.c). */
int aff_audit_optics(struct aff_audit *a);
/* roce-lossless, pause-storm (audit_roce.c). */
int aff_audit_roce(struct aff_audit *a);
/* slurm-gres: the node's gres.conf against the hardware (audit_slurm.c). */
int aff_audit_slurm(struct aff_audit *a);
/* ib-subnet-manager, rail-link, roce-gid, rail-mtu, rail-errors (audit_fabric.c). */
int aff_audit_fabric(struct aff_audit *a);

#endif /* AFF_AUDIT_H */
