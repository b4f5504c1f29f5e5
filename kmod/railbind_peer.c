// SPDX-License-Identifier: GPL-2.0
/*
 * Peer-memory (GPUDirect RDMA) accounting per (GPU, NIC) pair.
 *
 * Three sources feed one registry: providers calling railbind_peer_map()
 * and railbind_peer_unmap(), kprobes on the provider's nvidia_p2p_*
 * (railbind_probe_nv.c) and, when enabled, kprobes on the dma-buf calls a
 * tracked NIC makes (railbind_probe_dmabuf.c). Handlers run in atomic
 * context, so the registry is built to do a bounded amount of work there:
 *  - records (one per live mapping) and pair counters come from two pools
 *    of max_maps entries, allocated at load; nothing is allocated later;
 *  - a record is found by its source (route) and cookie, and by its group (an NVIDIA page
 *    table) for frees of a whole table, in hash tables whose buckets never
 *    hold more than RAILBIND_CHAIN entries: an insert into a full bucket is
 *    refused and counted as overflow, like an insert into a full pool;
 *  - counters live per (gpu, nic, route, exporter) and move as mappings
 *    come and go, so a render copies counters and never walks mappings;
 *  - devices are matched against a table published with RCU
 *    (railbind_devtab): NICs by pci_dev pointer identity, never
 *    dereferenced, GPUs by assigned memory BAR.
 * Every section with interrupts off (railbind_peer_lock) therefore looks
 * at no more than 3 x RAILBIND_CHAIN entries plus constant work, or, in
 * process context, at RAILBIND_BATCH pool entries; the longest one
 * measured, in time and in entries, is in sysfs (irqoff_max_ns,
 * irqoff_max_steps).
 *
 * Cookies and groups taken from a provider are opaque numbers, never
 * dereferenced after the call that produced them, and are dropped with
 * the module that owns them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/ctype.h>
#include <linux/hash.h>
#include <linux/jhash.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/rcupdate.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "railbind.h"

char *railbind_peer_provider = "nvidia";
module_param_named(peer_provider, railbind_peer_provider, charp, 0444);
/* The same name as the module loader keeps it ('-' read as '_'). */
char railbind_peer_module[MODULE_NAME_LEN];
MODULE_PARM_DESC(peer_provider,
		 "Module whose nvidia_p2p_* calls are counted (default nvidia); only that module's symbols are probed");

static unsigned int max_maps = 4096;
module_param(max_maps, uint, 0444);
MODULE_PARM_DESC(max_maps, "Live peer-memory mappings tracked at most (64..1048576, default 4096)");

#define RAILBIND_CHAIN 16	/* entries per hash bucket, at most */
#define RAILBIND_BATCH 64	/* pool entries per lock hold in process context */
#define RAILBIND_NONE U32_MAX

struct railbind_rec {
	struct hlist_node by_cookie;
	struct hlist_node by_group;
	unsigned long cookie;	/* 0: free */
	unsigned long group;	/* 0: none */
	const void *owner;	/* the API caller's module, or NULL */
	u64 bytes;
	u32 slot;		/* the pair counters it adds to */
	u8 route;
	bool mapped;		/* dma-buf: attached, and mapped */
};

struct railbind_pair_key {
	u64 gpu, nic;
	u8 route;
	char exporter[RAILBIND_EXP_LEN];
};

struct railbind_slot {
	struct hlist_node hash;
	struct railbind_pair_key key;
	u32 refs;		/* records adding to it; 0: free */
	u64 attachments, maps, bytes;
};

/* One rendered row: a slot's key and counters, copied out. */
struct railbind_row {
	struct railbind_pair_key key;
	u64 attachments, maps, bytes;
};

static DEFINE_SPINLOCK(railbind_peer_lock);
static struct railbind_rec *railbind_recs;
static struct railbind_slot *railbind_slots;
static u32 *railbind_free_recs, *railbind_free_slots;	/* stacks of free indices */
static u32 railbind_nfree_recs, railbind_nfree_slots;
static struct hlist_head *railbind_by_cookie, *railbind_by_group, *railbind_by_pair;
static unsigned int railbind_hash_bits;
static u64 railbind_irqoff_max;	/* ns, under railbind_peer_lock */
static unsigned int railbind_steps;	/* entries looked at in this lock hold */
static unsigned int railbind_steps_max;	/* the most in one hold */
static atomic_t railbind_route_live[RAILBIND_NROUTES];
static atomic_long_t railbind_stats[RAILBIND_NSTATS];

static struct railbind_devtab __rcu *railbind_devtab;
static DEFINE_MUTEX(railbind_devtab_mutex);
static bool railbind_peer_up;

static unsigned long railbind_peer_lock_irqsave(u64 *t0)
	__acquires(&railbind_peer_lock)
{
	unsigned long flags;

	spin_lock_irqsave(&railbind_peer_lock, flags);
	*t0 = local_clock();
	railbind_steps = 0;
	return flags;
}

static void railbind_peer_unlock_irqrestore(unsigned long flags, u64 t0)
	__releases(&railbind_peer_lock)
{
	u64 d = local_clock() - t0;

	if (d > railbind_irqoff_max)
		railbind_irqoff_max = d;
	if (railbind_steps > railbind_steps_max)
		railbind_steps_max = railbind_steps;
	spin_unlock_irqrestore(&railbind_peer_lock, flags);
}

/*
 * The longest section with interrupts off under railbind_peer_lock: in ns
 * (includes whatever preempts a virtual CPU) and in entries looked at.
 */
u64 railbind_peer_irqoff_max(unsigned int *steps)
{
	unsigned long flags;
	u64 t0, max;

	flags = railbind_peer_lock_irqsave(&t0);
	max = railbind_irqoff_max;
	*steps = railbind_steps_max;
	railbind_peer_unlock_irqrestore(flags, t0);
	return max;
}

void railbind_peer_stat_inc(enum railbind_peer_stat stat)
{
	atomic_long_inc(&railbind_stats[stat]);
}

/* Any live record of this route: lets probe handlers return at once. */
bool railbind_peer_route_live(u8 route)
{
	return atomic_read(&railbind_route_live[route]) > 0;
}

/*
 * The record of (route, cookie), and the length of its bucket. Under the
 * lock. Sources pick their cookies independently (a provider's handle,
 * a mapping or attachment pointer): the same number from two of them
 * names two records.
 */
static struct railbind_rec *railbind_rec_find(unsigned long cookie, u8 route,
					      unsigned int *len)
{
	struct railbind_rec *r;
	unsigned int n = 0;

	hlist_for_each_entry(r, &railbind_by_cookie[hash_long(cookie, railbind_hash_bits)],
			     by_cookie) {
		railbind_steps++;
		if (r->cookie == cookie && r->route == route)
			return r;
		n++;
	}
	if (len)
		*len = n;
	return NULL;
}

static unsigned int railbind_bucket_len(struct hlist_head *head)
{
	struct hlist_node *pos;
	unsigned int n = 0;

	hlist_for_each(pos, head)
		n++;
	railbind_steps += n;
	return n;
}

static u32 railbind_pair_hash(const struct railbind_pair_key *k)
{
	u32 h = jhash(k->exporter, sizeof(k->exporter), k->route);

	h = jhash_2words((u32)k->gpu, (u32)(k->gpu >> 32), h);
	h = jhash_2words((u32)k->nic, (u32)(k->nic >> 32), h);
	return hash_32(h, railbind_hash_bits);
}

static bool railbind_key_eq(const struct railbind_pair_key *a,
			    const struct railbind_pair_key *b)
{
	return a->gpu == b->gpu && a->nic == b->nic && a->route == b->route &&
	       !memcmp(a->exporter, b->exporter, sizeof(a->exporter));
}

/* The counters of a pair, found or taken from the pool. Under the lock. */
static u32 railbind_slot_get(const struct railbind_pair_key *key)
{
	struct hlist_head *head = &railbind_by_pair[railbind_pair_hash(key)];
	struct railbind_slot *s;
	unsigned int n = 0;
	u32 i;

	hlist_for_each_entry(s, head, hash) {
		railbind_steps++;
		if (railbind_key_eq(&s->key, key)) {
			s->refs++;
			return s - railbind_slots;
		}
		n++;
	}
	if (n >= RAILBIND_CHAIN || !railbind_nfree_slots)
		return RAILBIND_NONE;
	i = railbind_free_slots[--railbind_nfree_slots];
	s = &railbind_slots[i];
	memset(s, 0, sizeof(*s));
	s->key = *key;
	s->refs = 1;
	hlist_add_head(&s->hash, head);
	return i;
}

static void railbind_slot_put(u32 i)
{
	struct railbind_slot *s = &railbind_slots[i];

	if (--s->refs)
		return;
	hlist_del(&s->hash);
	railbind_free_slots[railbind_nfree_slots++] = i;
}

/* Adds (sign 1) or takes back (sign -1) what a record counts for. */
static void railbind_account(const struct railbind_rec *r, int sign)
{
	struct railbind_slot *s = &railbind_slots[r->slot];

	if (r->route == RAILBIND_ROUTE_DMABUF)
		s->attachments += sign;
	if (r->mapped) {
		s->maps += sign;
		s->bytes += sign * r->bytes;
	}
}

static void railbind_rec_remove(struct railbind_rec *r)
{
	railbind_account(r, -1);
	railbind_slot_put(r->slot);
	hlist_del(&r->by_cookie);
	if (r->group)
		hlist_del(&r->by_group);
	atomic_dec(&railbind_route_live[r->route]);
	r->cookie = 0;
	railbind_free_recs[railbind_nfree_recs++] = r - railbind_recs;
}

/* Drops a record, counted as an unmap or a free without unmap. */
static void railbind_rec_drop(struct railbind_rec *r, bool freed)
{
	if (r->mapped || r->route != RAILBIND_ROUTE_DMABUF)
		railbind_peer_stat_inc(freed ? RAILBIND_ST_FREED : RAILBIND_ST_UNMAPS);
	railbind_rec_remove(r);
}

/**
 * railbind_peer_add - record a mapping (or a dma-buf attachment)
 * @cookie: its key until it goes (mapping or attachment pointer), not 0
 * @group: NVIDIA page table it belongs to, or 0
 * @owner: the module to drop it with, or NULL
 * @route: enum railbind_route
 * @gpu: the GPU's id, or RAILBIND_NO_DEV when not known (yet)
 * @nic: the NIC's id
 * @exporter: dma-buf exporter name, or NULL
 * @bytes: size
 * @mapped: counted as a mapping (a dma-buf attachment is not, until mapped)
 *
 * Context: any; at most 3 x RAILBIND_CHAIN comparisons with interrupts off.
 * A probe's cookie seen again on its route replaces its old record (the
 * provider reused the memory); an API cookie seen again is refused. The
 * same cookie on another route is another record.
 * Return: 0, -EEXIST, or -ENOSPC (pool or bucket full, counted as overflow).
 */
int railbind_peer_add(unsigned long cookie, unsigned long group, const void *owner,
		      u8 route, u64 gpu, u64 nic, const char *exporter, u64 bytes,
		      bool mapped)
{
	struct railbind_pair_key key = { .gpu = gpu, .nic = nic, .route = route };
	struct hlist_head *gh = NULL;
	struct railbind_rec *r;
	unsigned long flags;
	unsigned int len;
	int ret = 0;
	u64 t0;
	u32 slot;

	if (!cookie || !railbind_recs)
		return -EINVAL;
	strscpy(key.exporter, exporter ? exporter : "-", sizeof(key.exporter));
	flags = railbind_peer_lock_irqsave(&t0);
	r = railbind_rec_find(cookie, route, &len);
	if (r && route == RAILBIND_ROUTE_API) {
		ret = -EEXIST;
		goto out;
	}
	if (r) {
		railbind_rec_remove(r);
		len = RAILBIND_CHAIN - 1;	/* the bucket had room for it */
	}
	if (group)
		gh = &railbind_by_group[hash_long(group, railbind_hash_bits)];
	if (len >= RAILBIND_CHAIN || !railbind_nfree_recs ||
	    (gh && railbind_bucket_len(gh) >= RAILBIND_CHAIN)) {
		ret = -ENOSPC;
		goto out;
	}
	slot = railbind_slot_get(&key);
	if (slot == RAILBIND_NONE) {
		ret = -ENOSPC;
		goto out;
	}
	r = &railbind_recs[railbind_free_recs[--railbind_nfree_recs]];
	r->cookie = cookie;
	r->group = group;
	r->owner = owner;
	r->bytes = bytes;
	r->slot = slot;
	r->route = route;
	r->mapped = mapped;
	hlist_add_head(&r->by_cookie, &railbind_by_cookie[hash_long(cookie, railbind_hash_bits)]);
	if (gh)
		hlist_add_head(&r->by_group, gh);
	atomic_inc(&railbind_route_live[route]);
	railbind_account(r, 1);
	if (mapped)
		railbind_peer_stat_inc(RAILBIND_ST_MAPS);
out:
	railbind_peer_unlock_irqrestore(flags, t0);
	if (ret == -ENOSPC)
		railbind_peer_stat_inc(RAILBIND_ST_OVERFLOW);
	return ret;
}

/**
 * railbind_peer_set_mapping - a dma-buf attachment mapped or unmapped
 * @cookie: the attachment
 * @route: the route it must have been recorded by
 * @gpu: the GPU it now points into, or RAILBIND_NO_DEV
 * @bytes: mapped size (0 when unmapped)
 * @mapped: the new state
 *
 * Context: any; at most 2 x RAILBIND_CHAIN comparisons with interrupts off.
 * Return: whether the cookie is a record of @route (callers filter on it).
 */
bool railbind_peer_set_mapping(unsigned long cookie, u8 route, u64 gpu, u64 bytes,
			       bool mapped)
{
	struct railbind_pair_key key;
	struct railbind_rec *r;
	unsigned long flags;
	bool found = false;
	u64 t0;
	u32 slot;

	flags = railbind_peer_lock_irqsave(&t0);
	r = railbind_rec_find(cookie, route, NULL);
	if (!r)
		goto out;
	found = true;
	if (r->mapped == mapped)
		goto out;
	key = railbind_slots[r->slot].key;
	key.gpu = gpu;
	slot = railbind_slot_get(&key);
	if (slot == RAILBIND_NONE) {
		railbind_peer_stat_inc(RAILBIND_ST_OVERFLOW);
		goto out;
	}
	railbind_account(r, -1);
	railbind_slot_put(r->slot);
	r->slot = slot;
	r->mapped = mapped;
	r->bytes = bytes;
	railbind_account(r, 1);
	railbind_peer_stat_inc(mapped ? RAILBIND_ST_MAPS : RAILBIND_ST_UNMAPS);
out:
	railbind_peer_unlock_irqrestore(flags, t0);
	return found;
}

/* Whether cookie is a live record of route (dma-buf map probe's filter). */
bool railbind_peer_known(unsigned long cookie, u8 route)
{
	struct railbind_rec *r;
	unsigned long flags;
	bool found;
	u64 t0;

	flags = railbind_peer_lock_irqsave(&t0);
	r = railbind_rec_find(cookie, route, NULL);
	found = r;
	railbind_peer_unlock_irqrestore(flags, t0);
	return found;
}

/* One mapping goes: unmapped, or freed without an unmap. Any context. */
void railbind_peer_drop(unsigned long cookie, u8 route, bool freed)
{
	struct railbind_rec *r;
	unsigned long flags;
	u64 t0;

	if (!cookie || !railbind_peer_route_live(route))
		return;
	flags = railbind_peer_lock_irqsave(&t0);
	r = railbind_rec_find(cookie, route, NULL);
	if (r)
		railbind_rec_drop(r, freed);
	railbind_peer_unlock_irqrestore(flags, t0);
}

/* Every mapping of a page table goes, without unmaps. Any context. */
void railbind_peer_drop_group(unsigned long group, u8 route)
{
	struct railbind_rec *r;
	struct hlist_node *tmp;
	unsigned long flags;
	u64 t0;

	if (!group || !railbind_peer_route_live(route))
		return;
	flags = railbind_peer_lock_irqsave(&t0);
	hlist_for_each_entry_safe(r, tmp,
				  &railbind_by_group[hash_long(group, railbind_hash_bits)],
				  by_group) {
		railbind_steps++;
		if (r->group == group && r->route == route)
			railbind_rec_drop(r, true);
	}
	railbind_peer_unlock_irqrestore(flags, t0);
}

/*
 * Every record of a route (and owner, unless NULL) goes: the provider or
 * the owning module is going away. Process context, RAILBIND_BATCH
 * records per lock hold.
 */
void railbind_peer_drop_all(u8 route, const void *owner)
{
	unsigned long flags;
	unsigned int i, j;
	u64 t0;

	for (i = 0; i < max_maps && railbind_peer_route_live(route); i += RAILBIND_BATCH) {
		flags = railbind_peer_lock_irqsave(&t0);
		for (j = i; j < min(i + RAILBIND_BATCH, max_maps); j++) {
			struct railbind_rec *r = &railbind_recs[j];

			railbind_steps++;
			if (r->cookie && r->route == route && (!owner || r->owner == owner))
				railbind_rec_drop(r, true);
		}
		railbind_peer_unlock_irqrestore(flags, t0);
		cond_resched();
	}
}

/* The id of a tracked NIC by pci_dev pointer, without dereferencing it. */
u64 railbind_peer_nic(const void *pdev)
{
	const struct railbind_devtab *t;
	unsigned int lo, hi, mid;
	u64 id = RAILBIND_NO_DEV;

	rcu_read_lock();
	t = rcu_dereference(railbind_devtab);
	for (lo = 0, hi = t ? t->nnics : 0; lo < hi;) {
		mid = lo + (hi - lo) / 2;
		if (t->nics[mid].pdev == pdev) {
			id = t->nics[mid].id;
			break;
		}
		if ((unsigned long)t->nics[mid].pdev < (unsigned long)pdev)
			lo = mid + 1;
		else
			hi = mid;
	}
	rcu_read_unlock();
	return id;
}

/* The GPU whose assigned memory BAR holds addr (never address 0). */
u64 railbind_peer_gpu_at(u64 addr)
{
	const struct railbind_devtab *t;
	unsigned int lo, hi, mid;
	u64 id = RAILBIND_NO_DEV;

	if (!addr)
		return id;
	rcu_read_lock();
	t = rcu_dereference(railbind_devtab);
	/* The last BAR starting at or below addr. */
	for (lo = 0, hi = t ? t->nbars : 0; lo < hi;) {
		mid = lo + (hi - lo) / 2;
		if (t->bars[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr <= t->bars[lo - 1].end)
		id = t->bars[lo - 1].gpu;
	rcu_read_unlock();
	return id;
}

/*
 * Rebuilds the table probes match against. Only from the work item, so
 * two rebuilds never race to publish (an older table after a newer one).
 * Waits for an RCU grace period before the old table (and its NIC
 * references) goes.
 */
static void railbind_peer_devs_publish(void)
{
	struct railbind_devtab *t, *old;

	t = railbind_topo_devtab();
	if (!t)
		return;
	mutex_lock(&railbind_devtab_mutex);
	old = rcu_replace_pointer(railbind_devtab, t, lockdep_is_held(&railbind_devtab_mutex));
	mutex_unlock(&railbind_devtab_mutex);
	synchronize_rcu();
	railbind_devtab_free(old);
}

static void railbind_devtab_fn(struct work_struct *work)
{
	railbind_peer_devs_publish();
}

static DECLARE_WORK(railbind_devtab_work, railbind_devtab_fn);

/* The tracked set changed (any context that may queue work). */
void railbind_peer_devs_changed(void)
{
	if (READ_ONCE(railbind_peer_up))
		schedule_work(&railbind_devtab_work);
}

/* The table as the tracked set is now, before returning. Process context. */
void railbind_peer_devs_sync(void)
{
	railbind_peer_devs_changed();
	flush_work(&railbind_devtab_work);
}

int railbind_peer_map_owned(struct module *owner, struct pci_dev *gpu,
			    struct pci_dev *nic, u64 bytes, const void *cookie)
{
	if (!gpu || !nic || !cookie)
		return -EINVAL;
	return railbind_peer_add((unsigned long)cookie, 0, owner, RAILBIND_ROUTE_API,
				 railbind_pci_id(gpu), railbind_pci_id(nic), NULL, bytes,
				 true);
}
EXPORT_SYMBOL_GPL(railbind_peer_map_owned);

/* For providers built against 0.1.0's header: no owner is known. */
int railbind_peer_map(struct pci_dev *gpu, struct pci_dev *nic, u64 bytes,
		      const void *cookie)
{
	return railbind_peer_map_owned(NULL, gpu, nic, bytes, cookie);
}
EXPORT_SYMBOL_GPL(railbind_peer_map);

void railbind_peer_unmap(const void *cookie)
{
	railbind_peer_drop((unsigned long)cookie, RAILBIND_ROUTE_API, false);
}
EXPORT_SYMBOL_GPL(railbind_peer_unmap);

const char *railbind_peer_state(void)
{
	return railbind_nv_armed() ? "armed" : "waiting";
}

static int railbind_cmp_row(const void *a, const void *b)
{
	const struct railbind_pair_key *x = &((const struct railbind_row *)a)->key;
	const struct railbind_pair_key *y = &((const struct railbind_row *)b)->key;

	if (x->gpu != y->gpu)
		return x->gpu < y->gpu ? -1 : 1;
	if (x->nic != y->nic)
		return x->nic < y->nic ? -1 : 1;
	if (x->route != y->route)
		return x->route < y->route ? -1 : 1;
	return strcmp(x->exporter, y->exporter);
}

static const char * const railbind_route_names[] = { "api", "nvidia", "dmabuf" };

/* Copies the live counters, RAILBIND_BATCH pool entries per lock hold. */
static unsigned int railbind_peer_rows(struct railbind_row *rows, unsigned int cap)
{
	unsigned int i, j, n = 0;
	unsigned long flags;
	u64 t0;

	for (i = 0; i < max_maps && n < cap; i += RAILBIND_BATCH) {
		flags = railbind_peer_lock_irqsave(&t0);
		for (j = i; j < min(i + RAILBIND_BATCH, max_maps) && n < cap; j++) {
			const struct railbind_slot *s = &railbind_slots[j];

			railbind_steps++;
			if (!s->refs)
				continue;
			rows[n].key = s->key;
			rows[n].attachments = s->attachments;
			rows[n].maps = s->maps;
			rows[n++].bytes = s->bytes;
		}
		railbind_peer_unlock_irqrestore(flags, t0);
	}
	return n;
}

/**
 * railbind_peer_render - this reader's peer part: peer records, peerstat
 * @buf: appended to
 * @full: peer records too (the opener had CAP_PERFMON or CAP_SYS_ADMIN)
 *
 * Context: process. The node-wide counters of peerstat name no device and
 * no tenant; peer records name the GPU and NIC of other users' jobs.
 * Return: 0 or -ENOMEM.
 */
int railbind_peer_render(struct railbind_buf *buf, bool full)
{
	struct railbind_row *rows = NULL;
	unsigned int i, n = 0, cap;
	unsigned long flags;
	u64 t0;

	if (full) {
		flags = railbind_peer_lock_irqsave(&t0);
		cap = max_maps - railbind_nfree_slots;
		railbind_peer_unlock_irqrestore(flags, t0);
		rows = kvcalloc(cap + 1, sizeof(*rows), GFP_KERNEL_ACCOUNT);
		if (!rows)
			return -ENOMEM;
		n = railbind_peer_rows(rows, cap);
		sort(rows, n, sizeof(*rows), railbind_cmp_row, NULL);
	}
	for (i = 0; i < n; i++) {
		railbind_emit(buf, "peer");
		railbind_emit_id(buf, "gpu", rows[i].key.gpu);
		railbind_emit_id(buf, "nic", rows[i].key.nic);
		railbind_emit(buf, " route=%s exporter=%s attachments=%llu maps=%llu bytes=%llu\n",
			      railbind_route_names[rows[i].key.route], rows[i].key.exporter,
			      rows[i].attachments, rows[i].maps, rows[i].bytes);
	}
	kvfree(rows);
	railbind_emit(buf, "peerstat maps=%lu unmaps=%lu",
		      atomic_long_read(&railbind_stats[RAILBIND_ST_MAPS]),
		      atomic_long_read(&railbind_stats[RAILBIND_ST_UNMAPS]));
	railbind_emit(buf, " freed_without_unmap=%lu overflow=%lu",
		      atomic_long_read(&railbind_stats[RAILBIND_ST_FREED]),
		      atomic_long_read(&railbind_stats[RAILBIND_ST_OVERFLOW]));
	/* A return probe out of instances misses a map: say so rather than drift silently. */
	railbind_emit(buf, " missed=%lu nvidia=%s dmabuf=%s",
		      railbind_nv_missed() + railbind_dmabuf_missed(), railbind_peer_state(),
		      railbind_dmabuf_armed() ? "armed" : "off");
	railbind_emit(buf, " badversion=%lu untracked=%lu max_maps=%u\n",
		      atomic_long_read(&railbind_stats[RAILBIND_ST_BADVERSION]),
		      atomic_long_read(&railbind_stats[RAILBIND_ST_UNTRACKED]), max_maps);
	return buf->err;
}

/*
 * Modules going away take their mappings with them: the provider's
 * (probes disarmed first) and any API caller's.
 */
static int railbind_module_notify(struct notifier_block *nb, unsigned long action,
				  void *data)
{
	struct module *mod = data;

	railbind_nv_module_event(mod, action);
	if (action == MODULE_STATE_GOING && railbind_peer_route_live(RAILBIND_ROUTE_API))
		railbind_peer_drop_all(RAILBIND_ROUTE_API, mod);
	return NOTIFY_OK;
}

static struct notifier_block railbind_module_nb = {
	.notifier_call = railbind_module_notify,
};

static void railbind_peer_free(void)
{
	vfree(railbind_recs);
	vfree(railbind_slots);
	vfree(railbind_free_recs);
	vfree(railbind_free_slots);
	vfree(railbind_by_cookie);
	vfree(railbind_by_group);
	vfree(railbind_by_pair);
	railbind_recs = NULL;
}

static int railbind_peer_alloc(void)
{
	unsigned int buckets, i;

	if (max_maps < 64 || max_maps > (1u << 20)) {
		pr_err("max_maps=%u is outside 64..1048576\n", max_maps);
		return -EINVAL;
	}
	/* As many buckets as records: chains stay short, and never pass RAILBIND_CHAIN. */
	buckets = roundup_pow_of_two(max_maps);
	railbind_hash_bits = ilog2(buckets);
	railbind_recs = vzalloc(array_size(max_maps, sizeof(*railbind_recs)));
	railbind_slots = vzalloc(array_size(max_maps, sizeof(*railbind_slots)));
	railbind_free_recs = vmalloc(array_size(max_maps, sizeof(u32)));
	railbind_free_slots = vmalloc(array_size(max_maps, sizeof(u32)));
	railbind_by_cookie = vmalloc(array_size(buckets, sizeof(struct hlist_head)));
	railbind_by_group = vmalloc(array_size(buckets, sizeof(struct hlist_head)));
	railbind_by_pair = vmalloc(array_size(buckets, sizeof(struct hlist_head)));
	if (!railbind_recs || !railbind_slots || !railbind_free_recs || !railbind_free_slots ||
	    !railbind_by_cookie || !railbind_by_group || !railbind_by_pair) {
		railbind_peer_free();
		return -ENOMEM;
	}
	for (i = 0; i < buckets; i++) {
		INIT_HLIST_HEAD(&railbind_by_cookie[i]);
		INIT_HLIST_HEAD(&railbind_by_group[i]);
		INIT_HLIST_HEAD(&railbind_by_pair[i]);
	}
	/* Popped from the end: the lowest indices first, so renders find them early. */
	for (i = 0; i < max_maps; i++) {
		railbind_free_recs[i] = max_maps - 1 - i;
		railbind_free_slots[i] = max_maps - 1 - i;
	}
	railbind_nfree_recs = max_maps;
	railbind_nfree_slots = max_maps;
	return 0;
}

static bool railbind_provider_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= MODULE_NAME_LEN)
		return false;
	for (; *s; s++)
		if (!isalnum(*s) && *s != '_' && *s != '-')
			return false;
	return true;
}

int railbind_peer_init(void)
{
	int ret;

	if (!railbind_provider_name_ok(railbind_peer_provider)) {
		pr_err("peer_provider \"%s\" is not a module name\n", railbind_peer_provider);
		return -EINVAL;
	}
	strscpy(railbind_peer_module, railbind_peer_provider, sizeof(railbind_peer_module));
	strreplace(railbind_peer_module, '-', '_');
	ret = railbind_peer_alloc();
	if (ret)
		return ret;
	WRITE_ONCE(railbind_peer_up, true);
	ret = register_module_notifier(&railbind_module_nb);
	if (ret)
		goto err_free;
	/* The provider may already be loaded; absent is not an error. */
	railbind_nv_init();
	railbind_dmabuf_init();
	return 0;

err_free:
	WRITE_ONCE(railbind_peer_up, false);
	railbind_peer_free();
	return ret;
}

void railbind_peer_exit(void)
{
	unregister_module_notifier(&railbind_module_nb);
	railbind_dmabuf_exit();
	railbind_nv_exit();
	WRITE_ONCE(railbind_peer_up, false);
	cancel_work_sync(&railbind_devtab_work);
	railbind_devtab_free(rcu_replace_pointer(railbind_devtab, NULL, true));
	railbind_peer_free();
}
