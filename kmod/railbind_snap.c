// SPDX-License-Identifier: GPL-2.0
/*
 * One shared, refcounted topology snapshot: rendered on the first read
 * that finds the current one stale (the generation moved, or cached
 * config-space facts changed), never in ->open, and kept until a newer one
 * replaces it and its last reader lets go. Renders are serialised, so any
 * number of readers cost one render per change; the memory is charged to
 * the reader that rendered it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "railbind.h"

static unsigned int refresh_ms = 1000;
module_param(refresh_ms, uint, 0444);
MODULE_PARM_DESC(refresh_ms,
		 "Re-read ACS and link registers when a reader asks, at most this often (ms; 0: only when the PCI notifier fires)");

static DEFINE_MUTEX(railbind_snap_lock);
static struct railbind_snap *railbind_snap_cur;	/* under railbind_snap_lock */
static unsigned long railbind_snap_refreshed;	/* jiffies of the last refresh */
static bool railbind_snap_refreshed_once;

static void railbind_snap_release(struct kref *ref)
{
	struct railbind_snap *snap = container_of(ref, struct railbind_snap, ref);

	kvfree(snap->text);
	kfree(snap);
}

void railbind_snap_put(struct railbind_snap *snap)
{
	if (snap)
		kref_put(&snap->ref, railbind_snap_release);
}

static struct railbind_snap *railbind_snap_render(void)
{
	struct railbind_model *m;
	struct railbind_snap *snap;
	struct railbind_buf buf;
	size_t gpus = 0, nics = 0;
	int i, ret;

	m = railbind_model_build();
	if (IS_ERR(m))
		return ERR_CAST(m);
	for (i = 0; i < m->nnodes; i++) {
		gpus += m->nodes[i].role == RAILBIND_GPU;
		nics += m->nodes[i].role == RAILBIND_NIC;
	}
	/* Sized from measured line lengths, so that one allocation is the rule. */
	ret = railbind_buf_init(&buf, m->nhbs * 128 + m->nnodes * 448 + gpus * nics * 176);
	if (!ret)
		ret = railbind_render_topo(m, &buf);
	snap = ret ? NULL : kzalloc(sizeof(*snap), GFP_KERNEL_ACCOUNT);
	if (!snap) {
		railbind_buf_free(&buf);
		railbind_model_free(m);
		return ERR_PTR(ret ? ret : -ENOMEM);
	}
	kref_init(&snap->ref);
	snap->gen = m->gen;
	snap->text = buf.data;
	snap->len = buf.len;
	snap->lines = buf.lines;
	railbind_model_free(m);
	return snap;
}

/**
 * railbind_snap_get - the current topology snapshot, rendered if stale
 *
 * Context: process, may sleep (killable while another reader renders).
 * Return: a reference for railbind_snap_put(), or ERR_PTR(-ENOMEM/-EINTR).
 */
struct railbind_snap *railbind_snap_get(void)
{
	struct railbind_snap *cur, *snap;

	if (mutex_lock_killable(&railbind_snap_lock))
		return ERR_PTR(-EINTR);
	if (refresh_ms && (!railbind_snap_refreshed_once ||
			   time_after_eq(jiffies, railbind_snap_refreshed +
					 msecs_to_jiffies(refresh_ms)))) {
		railbind_topo_refresh();
		railbind_snap_refreshed = jiffies;
		railbind_snap_refreshed_once = true;
	}
	cur = railbind_snap_cur;
	if (!cur || cur->gen != railbind_generation() || railbind_topo_dirty()) {
		snap = railbind_snap_render();
		if (IS_ERR(snap)) {
			mutex_unlock(&railbind_snap_lock);
			return snap;
		}
		railbind_snap_put(cur);
		railbind_snap_cur = snap;
		cur = snap;
	}
	kref_get(&cur->ref);
	mutex_unlock(&railbind_snap_lock);
	return cur;
}

void railbind_snap_exit(void)
{
	mutex_lock(&railbind_snap_lock);
	railbind_snap_put(railbind_snap_cur);
	railbind_snap_cur = NULL;
	mutex_unlock(&railbind_snap_lock);
}
