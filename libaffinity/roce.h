/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * roce - where a rank's RDMA traffic lands on a RoCE NIC and whether that
 * priority is lossless there (roce_judge.c): shared by the audit's
 * roce-lossless (the plan: the audit's own environment) and verify (each
 * running rank's). Private to libaffinity.
 */
#ifndef AFF_ROCE_H
#define AFF_ROCE_H

#include <stddef.h>

#include "affinity.h"
#include "dcb.h"
#include "internal.h"

/* One transport's traffic class and service level, and where they came from. */
struct aff_roce_user {
	const char *who;	/* "NCCL", "NCCL's CTS FIFO", "UCX" */
	unsigned tc, sl;
	bool tc_set;		/* the variable is set (not the default) */
	char src[160];		/* "NCCL_IB_TC=106", "NCCL_IB_TC unset: traffic class 0" */
};
#define AFF_ROCE_USERS 3

/*
 * The users an environment gives: NCCL always (unset NCCL_IB_TC means
 * traffic class 0, DSCP 0, the commonest misconfiguration: judged, not
 * skipped), its CTS FIFO (NCCL_IB_FIFO_TC) and UCX (UCX_IB_TRAFFIC_CLASS)
 * when set. @get returns a variable's value or NULL.
 */
size_t aff_roce_users(const char *(*get)(const char *name, void *arg), void *arg,
		      struct aff_roce_user out[AFF_ROCE_USERS]);

/*
 * User @u's traffic on a NIC with DCB state @d against @conf (roce-priority,
 * roce-trust): the severity (ok, warn, fail), the priority it lands on in
 * *@prio (-1: not known), and why, one line, in @line.
 */
enum aff_sev aff_roce_judge(const struct aff_dcb *d, const struct aff_config *conf,
			    const struct aff_roce_user *u, int *prio, char *line, size_t len);

/*
 * The audit's view of the ranks' environment (roce_env.c): its own, and
 * NCCL's defaults file for the rest. aff_roce_env_get() is the @get of
 * aff_roce_users() (@arg: the aff_roce_env); aff_roce_env_mark() adds
 * " from /etc/nccl.conf" to a user whose traffic class came from the file.
 */
#define AFF_ROCE_ENV_MAX 64
struct aff_topo;
struct aff_roce_env {
	char *text;
	char *name[AFF_ROCE_ENV_MAX], *value[AFF_ROCE_ENV_MAX];
	size_t n;
	const char *path;
	char pathbuf[4096];
	char served[256];	/* the names taken from the file, each between spaces */
};
void aff_roce_env_load(struct aff_roce_env *e, const struct aff_topo *t);
const char *aff_roce_env_get(const char *name, void *arg);
/* The file's value of @name alone (verify: the rank's own environment comes first). */
const char *aff_roce_env_file(struct aff_roce_env *e, const char *name);
void aff_roce_env_mark(const struct aff_roce_env *e, struct aff_roce_user *u, size_t n);
void aff_roce_env_clear(struct aff_roce_env *e);

/* "3,4" or "none": the priorities of @bits. */
const char *aff_roce_prios(unsigned bits, char *buf, size_t len);

#endif /* AFF_ROCE_H */
