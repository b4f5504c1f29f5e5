// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Fair share: what each uid holds of the broker (connections, watchers,
 * leases, reply bytes waiting to be read, requests, plan-cache misses and
 * bytes of environment read a second) and what the
 * whole broker holds, so that a limit reached by one user is answered to
 * that user only. Every local user may connect to the 0666 socket; without
 * these counts one of them could fill every slot, descriptor or byte the
 * broker has and cut all the others off.
 */
#include <stdlib.h>
#include <string.h>

#include "railbindd.h"

#define SHARE_BUCKETS 256

static struct share *table[SHARE_BUCKETS];
static size_t nshares, nconnected;
static size_t total_queued;

static struct share **slot(uid_t uid)
{
	struct share **p = &table[uid % SHARE_BUCKETS];

	while (*p && (*p)->uid != uid)
		p = &(*p)->next;
	return p;
}

struct share *share_get(uid_t uid)
{
	struct share **p = slot(uid);

	if (*p)
		return *p;
	*p = calloc(1, sizeof(**p));
	if (!*p)
		return NULL;
	(*p)->uid = uid;
	nshares++;
	return *p;
}

struct share *share_find(uid_t uid)
{
	return *slot(uid);
}

/*
 * Forget a uid that holds nothing, once its rates have had time to refill:
 * a user must not get a full budget back by closing its last connection
 * and opening another.
 */
#define SHARE_FORGET_MS 10000

static bool forgettable(const struct share *s, long long now)
{
	return !s->conns && !s->watchers && !s->leases && !s->queued &&
	       now - s->requests.at >= SHARE_FORGET_MS && now - s->misses.at >= SHARE_FORGET_MS &&
	       now - s->verifies.at >= SHARE_FORGET_MS && now - s->environ.at >= SHARE_FORGET_MS;
}

void share_release(struct share *s)
{
	struct share **p;

	if (!s || !forgettable(s, sched_now_ms()))
		return;
	p = slot(s->uid);
	*p = s->next;
	free(s);
	nshares--;
}

/* The uids share_release() had to keep a while. */
void share_gc(void)
{
	long long now = sched_now_ms();
	struct share **p, *s;
	size_t i;

	for (i = 0; i < SHARE_BUCKETS; i++)
		for (p = &table[i]; (s = *p);) {
			if (forgettable(s, now)) {
				*p = s->next;
				free(s);
				nshares--;
			} else {
				p = &s->next;
			}
		}
}

void share_conn(struct share *s, int delta)
{
	if (delta > 0 && !s->conns)
		nconnected++;
	s->conns += (unsigned int)delta;
	if (delta < 0 && !s->conns)
		nconnected--;
}

void share_queued(struct share *s, long long delta)
{
	s->queued = (size_t)((long long)s->queued + delta);
	total_queued = (size_t)((long long)total_queued + delta);
}

size_t share_total_queued(void)
{
	return total_queued;
}

/*
 * Whether @s's clients must wait before more of their requests are read:
 * over the per-user byte limit, or the whole budget is spent and this user
 * holds more than an equal part of it. The others keep being served.
 */
bool share_over_budget(const struct share *s)
{
	size_t users = nconnected ? nconnected : 1;

	if (s->queued >= conf.max_user_queued)
		return true;
	return total_queued >= conf.memory_budget && s->queued >= conf.memory_budget / users;
}

/* The uid with the most connections: who gives one up when all are taken. */
struct share *share_heaviest(void)
{
	struct share *best = NULL, *s;
	size_t i;

	for (i = 0; i < SHARE_BUCKETS; i++)
		for (s = table[i]; s; s = s->next)
			if (!best || s->conns > best->conns)
				best = s;
	return best;
}

/* A token bucket: @rate a second, at most @burst saved up. */
bool share_bucket_has(struct share_bucket *b, double rate, double burst)
{
	long long now = sched_now_ms();

	if (!b->at) {
		b->tokens = burst;
		b->at = now;
	}
	b->tokens += (double)(now - b->at) * rate / 1000.0;
	if (b->tokens > burst)
		b->tokens = burst;
	b->at = now;
	return b->tokens >= 1.0;
}

bool share_bucket_take(struct share_bucket *b, double rate, double burst)
{
	if (!share_bucket_has(b, rate, burst))
		return false;
	b->tokens -= 1.0;
	return true;
}

/*
 * Whether the requests of @s's clients may be read now: --max-user-rate a
 * second, twice that saved up. Root is not counted: it can stop the broker
 * anyway, and its tools (benchmarks, monitoring) may ask at any rate.
 */
bool share_may_ask(struct share *s)
{
	return !s->uid || share_bucket_has(&s->requests, conf.max_user_rate,
					   2.0 * conf.max_user_rate);
}

void share_asked(struct share *s)
{
	if (s->uid)
		share_bucket_take(&s->requests, conf.max_user_rate, 2.0 * conf.max_user_rate);
}

static struct json_object *one(const struct share *s)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "uid", json_object_new_int64(s->uid));
	json_object_object_add(o, "clients", json_object_new_int64(s->conns));
	json_object_object_add(o, "watchers", json_object_new_int64(s->watchers));
	json_object_object_add(o, "leases", json_object_new_int64(s->leases));
	json_object_object_add(o, "queued_bytes", json_object_new_int64((int64_t)s->queued));
	return o;
}

static int by_uid(const void *a, const void *b)
{
	int64_t x = json_object_get_int64(json_object_object_get(
			*(struct json_object *const *)a, "uid"));
	int64_t y = json_object_get_int64(json_object_object_get(
			*(struct json_object *const *)b, "uid"));

	return (x > y) - (x < y);
}

/* What each user holds: root sees every user, a user themself. */
struct json_object *share_list(uid_t viewer)
{
	struct json_object *a = json_object_new_array();
	struct share *s;
	size_t i;

	for (i = 0; i < SHARE_BUCKETS; i++)
		for (s = table[i]; s; s = s->next)
			if (viewer == 0 || viewer == s->uid)
				json_object_array_add(a, one(s));
	json_object_array_sort(a, by_uid);
	return a;
}

void share_fini(void)
{
	struct share *s;
	size_t i;

	for (i = 0; i < SHARE_BUCKETS; i++)
		while ((s = table[i])) {
			table[i] = s->next;
			free(s);
		}
	nshares = nconnected = total_queued = 0;
}
