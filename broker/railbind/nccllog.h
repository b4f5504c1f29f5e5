/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * railbind nccl-check's reader: what NCCL (NCCL_DEBUG=INFO) and nccl-tests
 * printed, read one line at a time into per-process and per-GPU summaries,
 * so that memory grows with the number of ranks, never with the length of
 * the log. Only railbind's command line uses it (broker/railbind/, not the
 * library): it needs nothing of the model but the plan's public JSON.
 *
 *	struct nl_log *log = nl_new();
 *	nl_feed_line(log, "run.log", lineno, line, len);   // each line, any order of files
 *	nl_finish(log);                                     // end of all input
 *	... log->gpu[], log->proc[], log->test[], log->note[] ...
 *	nl_free(log);
 *
 * Forms read (NCCL 2.18.1 to 2.30, nccl-tests 2.13 to 2.19): see
 * nccllog_parse.c and nccllog_tests.c. A line is "host:pid:tid [dev] NCCL
 * INFO ..." after any timestamp or launcher prefix ("N: ", "[rankN]:").
 */
#ifndef RAILBIND_NCCLLOG_H
#define RAILBIND_NCCLLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* NET device indices NCCL can print (NCCL_NET_MAX_DEVS is 128 in 2.30). */
#define NL_MAX_DEVS 128
/* The longest line read whole; the rest of a longer one is skipped. */
#define NL_LINE_MAX 16384
/* At most this many processes, GPUs, threads, tables, notes are kept. */
#define NL_MAX_ITEMS 65536
#define NL_MAX_NOTES 256

/* String -> index, for host:pid and host:pid:tid keys (nccllog_map.c). */
struct nl_map {
	char **key;
	int *val;
	size_t cap, n;
};
/* The index of @key, or -1. */
int nl_map_get(const struct nl_map *m, const char *key);
/* Set @key to @val: 0, or -ENOMEM. */
int nl_map_put(struct nl_map *m, const char *key, int val);
void nl_map_free(struct nl_map *m);

/* Which NET devices one GPU's channels went through, and how. */
struct nl_use {
	uint64_t dev[NL_MAX_DEVS / 64];		/* by this rank's own proxy */
	uint64_t gdr[NL_MAX_DEVS / 64];		/* of those, with /GDRDMA */
	unsigned channels;		/* channel lines through the network */
	unsigned gdr_lines, host_lines;	/* with /GDRDMA, staged through host memory */
	unsigned pxn_lines;		/* through another rank's NIC (NET/IB/N(proxy)) */
};

/* One process (host:pid): what its NET plugin said. */
struct nl_proc {
	char *host;
	long pid;
	char net[32];			/* "IB", "Socket", "Libfabric", ... ("" unknown) */
	char plugin[64];		/* NET/Plugin: Loaded net plugin NAME */
	int ndev;			/* -1: no "NET/x : Using" line seen */
	char *dev[NL_MAX_DEVS];		/* "mlx5_0:1" by NET index, or NULL */
	char *ib_hca;			/* NCCL_IB_HCA as NCCL printed it, or NULL */
	char *algo;			/* NCCL_ALGO as NCCL printed it, or NULL */
	uint64_t gdr_off[NL_MAX_DEVS / 64];	/* "GPU Direct RDMA Disabled for HCA n" */
	bool gdr_distance;		/* "GPU Direct RDMA Disabled for GPU ... (distance" */
	bool vnic;			/* TOPO/NET : Made vNic */
	long using_line;
	const char *using_file;
};

/* One GPU of one process (host, pid, busId): its communicators together. */
struct nl_gpu {
	int proc;
	uint64_t busid;			/* NCCL's busId: the PCI address as hex digits */
	int cuda_dev;
	long rank, nranks;		/* of the first communicator */
	unsigned comms;
	struct nl_use use;
};

/* One nccl-tests table (or -J document). */
struct nl_test {
	const char *file;
	long line;			/* its header line (JSON: 1) */
	char name[48];			/* "all_reduce_perf", "" unknown */
	char algo[32];			/* "Ring"..., "" unknown: tuning lines of the log */
	int nranks;			/* "# Rank N ... on HOST" lines, 0 unknown */
	int nhosts;
	uint64_t max_size;		/* the largest message */
	double busbw;			/* at max_size, the better of out/in-place */
	double avg_busbw;		/* "# Avg bus bandwidth"; < 0 absent */
	long wrong;			/* sum of #wrong; < 0 all N/A */
	long wrong_line;		/* the first row with #wrong > 0 */
	long oob;			/* "# Out of bounds values"; < 0 absent */
	unsigned rows;
	bool complete;			/* its footer was read */
};

/* What could not be read: FILE:LINE and what was expected. */
struct nl_note {
	char *file;
	long line;
	char *message;
};

struct nl_log {
	struct nl_proc *proc;
	size_t nproc;
	struct nl_gpu *gpu;
	size_t ngpu;
	struct nl_test *test;
	size_t ntest;
	struct nl_note note[NL_MAX_NOTES];
	size_t nnote, notes_dropped;
	struct nl_map procs, gpus, threads;
	/* Per thread (host:pid:tid): the communicator it is creating. */
	struct nl_thread {
		bool in_init;
		const char *start_file;	/* its Init START */
		long start_line;
		int gpu;		/* its last communicator's GPU, -1 */
		struct nl_use pending;	/* channels seen since Init START */
	} *thread;
	size_t nthread;
	/* rank 0's "Local Net device counts across ranks", -1 unseen */
	int net_min, net_max;
	const char *net_count_file;
	long net_count_line;
	bool net_mismatch;		/* "Detected mixed local Net device counts" */
	/* Largest message of each collective's tuning line, and its algorithm. */
	struct nl_tuning {
		char func[24], algo[24];
		uint64_t bytes;
	} tuning[16];
	size_t ntuning;
	unsigned long lines, nccl_lines, long_lines, unattributed;
	char **files;			/* file names: see nl_file() */
	size_t nfiles;
	/* What nccl-tests said before its table: see nccllog_tests.c. */
	struct nl_map hosts;
	int prelude;			/* its generation, to count hosts once */
	char pre_name[48];
	int pre_nranks, pre_nhosts;
	/* The table being read, -1 none. */
	long cur_test;
	int col[12];			/* its header's column indices: see nccllog_tests.c */
	int ncol;
	bool oom;
};

struct nl_log *nl_new(void);
void nl_free(struct nl_log *log);
/* One line (without its newline; @len bytes) of @file: 0, or -ENOMEM. */
int nl_feed_line(struct nl_log *log, const char *file, long lineno, const char *line,
		 size_t len);
/* A whole nccl-tests -J document: 0, or -ENOMEM. */
int nl_feed_json(struct nl_log *log, const char *file, const char *text, size_t len);
/* The end of all input: tables left open and inits never completed are noted. */
int nl_finish(struct nl_log *log);

/* ---- between the reader's files ---- */

/* A copy of @file that lives as long as @log; NULL without memory. */
const char *nl_file(struct nl_log *log, const char *file);
/* Note FILE:LINE: message. */
void nl_note(struct nl_log *log, const char *file, long line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* The text after launcher prefixes ("N: ", "[rankN]:") and leading blanks. */
const char *nl_strip_launcher(const char *s);
/* An nccl-tests line (starting "#" or a table row): 0, or -ENOMEM. */
int nl_tests_line(struct nl_log *log, const char *file, long lineno, const char *s);
/* The PCI address "dddd:bb:dd.f" of NCCL's busId. */
void nl_busid_pci(uint64_t busid, char *buf, size_t len);
/* Whether NCCL_IB_HCA @spec lets NCCL use port @port of device @name. */
bool nl_ib_hca_admits(const char *spec, const char *name, int port);

#endif
