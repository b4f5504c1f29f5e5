/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * health - the node's health over time: per PCIe link, how often its width (and,
 * but for a GPU's own link, its speed) changed since boot, and its AER error
 * totals across removals; per RDMA port, how often its state changed. The
 * kernel keeps AER totals and the NICs keep link-down counters themselves;
 * link changes need someone to watch: railbind.ko where it is loaded, else
 * railbindd, which samples sysfs (aff_health_sample) and keeps the counts in
 * <state-dir>/counters.json (railbind.counters/1), read back by discovery
 * (Railbind* attributes of a snapshot) and so by the audit's link-flapping,
 * pcie-errors and port-flapping checks. Private to libaffinity and railbindd.
 *
 * A GPU lowers its link speed when idle and raises it under load, on its own
 * (the Link Autonomous Bandwidth Status of PCIe): the speed of a GPU's link
 * (the GPU and the port above it) is therefore not counted, its width is.
 */
#ifndef AFF_HEALTH_H
#define AFF_HEALTH_H

#include <stdbool.h>
#include <stddef.h>

/* The AER classes, in sysfs's files' order: aer_dev_correctable, _nonfatal, _fatal. */
enum { AFF_AER_COR, AFF_AER_NONFATAL, AFF_AER_FATAL, AFF_AER_N };

struct aff_health_link {
	char pci[16];
	double speed;		/* GT/s last seen, 0 unknown */
	int width;		/* lanes last seen, 0 unknown */
	bool gpu_link;		/* a GPU's own link: speed changes not counted */
	bool present;		/* there at the last sample */
	bool seen;		/* found by the sample under way */
	bool sampled;		/* speed and width hold a reading (0: link down or unknown) */
	bool has_aer;
	unsigned long long changes;	/* counted changes since first seen this boot */
	unsigned long long speed_idle;	/* a GPU link's speed changes (not counted) */
	unsigned long long aer[AFF_AER_N];	/* totals last read */
	unsigned long long aer_base[AFF_AER_N];	/* totals of earlier incarnations */
};

struct aff_health_port {
	char name[64];		/* RDMA device */
	unsigned port;
	char state[24];		/* "ACTIVE", ... */
	bool present;
	bool seen;
	unsigned long long changes;	/* state changes seen */
	unsigned long long downs;	/* of those, from ACTIVE to another state */
};

struct aff_health {
	char boot_id[40];	/* /proc/sys/kernel/random/boot_id */
	long long since;	/* when counting began (seconds since the epoch) */
	long long updated;	/* the last sample */
	char source[16];	/* "broker" */
	struct aff_health_link *link;
	size_t nlink;
	struct aff_health_port *port;
	size_t nport;
};

/*
 * Read every PCIe link and RDMA port under @root (NULL: the real one) once
 * and update @h (zeroed the first time). *@changed says whether a count moved
 * or a device came or went. -ENOMEM only; what cannot be read is skipped.
 */
int aff_health_sample(const char *root, struct aff_health *h, bool *changed);
/* @h as railbind.counters/1 into @path, whole or not at all (mode 0644). */
int aff_health_save(const struct aff_health *h, const char *path, char *err, size_t errlen);
/*
 * Read @path into @h: -ENOENT absent, -EINVAL not a counters file (or not a
 * regular file of sane size), -ESTALE counted in another boot than the one of
 * @root's boot_id (NULL root: this one). @h is cleared on failure.
 */
int aff_health_load(const char *path, const char *root, struct aff_health *h);
/* The same from @text (the fuzz target's entry); -EINVAL, -ENOMEM. */
int aff_health_parse(const char *text, struct aff_health *h);
const struct aff_health_link *aff_health_find_link(const struct aff_health *h, const char *pci);
const struct aff_health_port *aff_health_find_port(const struct aff_health *h, const char *name,
						   unsigned port);
void aff_health_clear(struct aff_health *h);

/* sysfs readers, shared with discovery */
/* The TOTAL_ERR_* lines of @devdir's aer_dev_* files; -ENOENT when it has none. */
int aff_health_read_aer(const char *devdir, unsigned long long out[AFF_AER_N]);
/* This boot's id under @root; "" when unknown. */
void aff_health_boot_id(const char *root, char *out, size_t len);

#endif /* AFF_HEALTH_H */
