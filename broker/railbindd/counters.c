// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The node's health counters where railbind.ko does not keep them: every
 * health-interval seconds (railbind.conf, default 10; 0: off) the broker reads
 * every PCIe link and RDMA port once (aff_health_sample: width changes, speed
 * changes but for a GPU's own link, removals and returns, AER totals across
 * removals, port state changes) and, when a count moved, writes them whole to
 * <state-dir>/counters.json (railbind.counters/1), where discovery reads them
 * into a snapshot's Railbind* attributes for the audit's link-flapping,
 * pcie-errors and port-flapping checks. The counts are this boot's: a file
 * of another boot is set aside at start, one of this boot is counted on.
 * A full or read-only state directory costs a log line, not the counting.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "affinity.h"
#include "log.h"
#include "railbindd.h"

static struct aff_health *health;
static unsigned int timer;
static int interval_ms;
static int failing;	/* errno of the last failed save, 0 if none */

static void path_of(char *buf, size_t len)
{
	snprintf(buf, len, "%s/counters.json", conf.state_dir);
}

static void save(void)
{
	char path[4096], err[512] = "";
	int rc;

	path_of(path, sizeof(path));
	rc = aff_health_save(health, path, err, sizeof(err));
	if (rc < 0 && failing != -rc)
		rbd_log(LOG_ERR, "cannot keep the link counters: %s", *err ? err : strerror(-rc));
	else if (!rc && failing)
		rbd_log(LOG_WARNING, "saved the link counters to %s again", path);
	failing = rc < 0 ? -rc : 0;
}

void counters_sample(void)
{
	bool changed = false;

	if (!interval_ms)
		return;
	if (aff_health_sample(conf.root, health, &changed) < 0) {
		rbd_log(LOG_ERR, "link counters: out of memory");
		return;
	}
	/* Retried each turn until it is written again. */
	if (changed || failing)
		save();
}

static void tick(void *arg)
{
	(void)arg;
	timer = 0;
	counters_sample();
	timer = sched_add_timer(interval_ms, tick, NULL);
}

/* health-interval from railbind.conf (the broker's --config, --root). */
static int read_interval(void)
{
	struct aff_ctx *ctx = aff_ctx_new(conf.root);
	char err[512] = "";
	int ms = -1;

	if (ctx && aff_ctx_load_config(ctx, conf.config, err, sizeof(err)) == 0)
		ms = (int)aff_ctx_health_interval(ctx) * 1000;
	else
		rbd_log(LOG_WARNING, "link counters: %s; sampling every 10 s",
			*err ? err : "no configuration");
	aff_ctx_unref(ctx);
	return ms < 0 ? 10000 : ms;
}

int counters_init(void)
{
	char path[4096];
	int rc;

	interval_ms = read_interval();
	if (!interval_ms) {
		rbd_log(LOG_INFO, "link counters off (health-interval = 0)");
		return 0;
	}
	if (aff_health_new(&health) < 0) {
		interval_ms = 0;
		rbd_log(LOG_ERR, "link counters: out of memory");
		return -ENOMEM;
	}
	path_of(path, sizeof(path));
	rc = aff_health_load(path, conf.root, health);
	if (rc == -ESTALE)
		rbd_log(LOG_INFO, "%s counted another boot: counting from now", path);
	else if (rc < 0 && rc != -ENOENT)
		rbd_log(LOG_WARNING, "%s is not a counters file: counting from now", path);
	counters_sample();
	save();
	timer = sched_add_timer(interval_ms, tick, NULL);
	return 0;
}

void counters_fini(void)
{
	if (timer)
		sched_del_timer(timer);
	timer = 0;
	aff_health_free(health);
	health = NULL;
}
