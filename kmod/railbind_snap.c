// SPDX-License-Identifier: GPL-2.0
/*
 * One shared, refcounted topology snapshot: rendered on the first read
 * that finds the current one stale (the generation moved, or cached
 * config-space facts changed), never in ->open. Renders are serialised,
 * so any number of readers cost one render per change; the memory is
 * charged to the reader that rendered it.
 *
 * Bounded: a descriptor names the snapshot it attached, but only the
 * current one and the RAILBIND_SNAP_STALE newest superseded ones that a
 * descriptor still names keep their text, plus any a read() is copying
 * from this moment. Descriptors held across more re-renders than that
 * lose theirs (a read further on fails with ESTALE; one from offset 0
 * attaches the current snapshot), so no user who holds descriptors and
 * causes re-renders grows the renderer's memory past that bound.
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

#define RAILBIND_SNAP_STALE 4

/* Serialises renders and refreshes. */
static DEFINE_MUTEX(railbind_snap_lock);
static unsigned long railbind_snap_refreshed;	/* jiffies of the last refresh */
static bool railbind_snap_refreshed_once;

/* Every field below, and the counts in every snapshot, are under this lock. */
static DEFINE_SPINLOCK(railbind_snap_cache_lock);
static struct railbind_snap *railbind_snap_cur;
static LIST_HEAD(railbind_snap_stale);	/* superseded, still named, oldest first */
static unsigned int railbind_snap_nstale;

/* Under the cache lock: what of snap may go now (text, then all of it). */
static bool railbind_snap_unused(struct railbind_snap *snap, char **text)
{
	*text = NULL;
	if (snap == railbind_snap_cur || snap->listed || snap->pins)
		return false;
	*text = snap->text;
	snap->text = NULL;
	return !snap->holders;
}

static void railbind_snap_free(struct railbind_snap *snap, char *text, bool all)
{
	kvfree(text);
	if (all)
		kfree(snap);
}

/* Under the cache lock: snap is no longer named by a descriptor or listed. */
static void railbind_snap_unlist(struct railbind_snap *snap)
{
	if (!snap->listed)
		return;
	list_del(&snap->stale);
	snap->listed = false;
	railbind_snap_nstale--;
}

/* Under the cache lock: the next snapshot is current; returns one to evict. */
static struct railbind_snap *railbind_snap_supersede(struct railbind_snap *snap)
{
	struct railbind_snap *old = railbind_snap_cur, *victim = NULL;

	railbind_snap_cur = snap;
	if (!old || !old->holders)
		return old;
	list_add_tail(&old->stale, &railbind_snap_stale);
	old->listed = true;
	if (++railbind_snap_nstale <= RAILBIND_SNAP_STALE)
		return NULL;
	victim = list_first_entry(&railbind_snap_stale, struct railbind_snap, stale);
	railbind_snap_unlist(victim);
	return victim;
}

/* Frees what of snap nothing needs any more (after the cache lock changed it). */
static void railbind_snap_reap(struct railbind_snap *snap)
{
	bool all;
	char *text;

	if (!snap)
		return;
	spin_lock(&railbind_snap_cache_lock);
	all = railbind_snap_unused(snap, &text);
	spin_unlock(&railbind_snap_cache_lock);
	railbind_snap_free(snap, text, all);
}

/**
 * railbind_snap_pin - keep snap's text for one read()
 * @snap: what a descriptor attached (it holds it)
 *
 * Context: any process context; a spinlock held for O(1).
 * Return: 0, or -ESTALE when the text went (too many re-renders since).
 */
int railbind_snap_pin(struct railbind_snap *snap)
{
	int ret = -ESTALE;

	spin_lock(&railbind_snap_cache_lock);
	if (snap->text && (snap == railbind_snap_cur || snap->listed)) {
		snap->pins++;
		ret = 0;
	}
	spin_unlock(&railbind_snap_cache_lock);
	return ret;
}

void railbind_snap_unpin(struct railbind_snap *snap)
{
	spin_lock(&railbind_snap_cache_lock);
	snap->pins--;
	spin_unlock(&railbind_snap_cache_lock);
	railbind_snap_reap(snap);
}

/* A descriptor lets go of what it attached. */
void railbind_snap_put(struct railbind_snap *snap)
{
	if (!snap)
		return;
	spin_lock(&railbind_snap_cache_lock);
	if (!--snap->holders)
		railbind_snap_unlist(snap);
	spin_unlock(&railbind_snap_cache_lock);
	railbind_snap_reap(snap);
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
	snap->gen = m->gen;
	snap->text = buf.data;
	snap->len = buf.len;
	snap->lines = buf.lines;
	railbind_model_free(m);
	return snap;
}

/**
 * railbind_snap_get - attach the current topology snapshot, rendered if stale
 *
 * Context: process, may sleep (killable while another reader renders).
 * Return: the snapshot, held (railbind_snap_put()) and pinned for this
 * read (railbind_snap_unpin()), or ERR_PTR(-ENOMEM/-EINTR).
 */
struct railbind_snap *railbind_snap_get(void)
{
	struct railbind_snap *cur, *snap, *gone = NULL;

	if (mutex_lock_killable(&railbind_snap_lock))
		return ERR_PTR(-EINTR);
	if (refresh_ms && (!railbind_snap_refreshed_once ||
			   time_after_eq(jiffies, railbind_snap_refreshed +
					 msecs_to_jiffies(refresh_ms)))) {
		railbind_topo_refresh();
		railbind_snap_refreshed = jiffies;
		railbind_snap_refreshed_once = true;
	}
	/* Only this mutex's holder replaces the current snapshot. */
	cur = railbind_snap_cur;
	if (!cur || cur->gen != railbind_generation() || railbind_topo_dirty()) {
		snap = railbind_snap_render();
		if (IS_ERR(snap)) {
			mutex_unlock(&railbind_snap_lock);
			return snap;
		}
		spin_lock(&railbind_snap_cache_lock);
		gone = railbind_snap_supersede(snap);
		spin_unlock(&railbind_snap_cache_lock);
		cur = snap;
	}
	spin_lock(&railbind_snap_cache_lock);
	cur->holders++;
	cur->pins++;
	spin_unlock(&railbind_snap_cache_lock);
	mutex_unlock(&railbind_snap_lock);
	railbind_snap_reap(gone);
	return cur;
}

void railbind_snap_exit(void)
{
	struct railbind_snap *cur;

	/* No descriptor is open: nothing is held, listed or pinned. */
	mutex_lock(&railbind_snap_lock);
	spin_lock(&railbind_snap_cache_lock);
	cur = railbind_snap_cur;
	railbind_snap_cur = NULL;
	spin_unlock(&railbind_snap_cache_lock);
	mutex_unlock(&railbind_snap_lock);
	railbind_snap_reap(cur);
}
