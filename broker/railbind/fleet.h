/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * railbind fleet: what the fleet*.c files share. A node is read into a
 * record (a JSON object, so a worker process can hand it over as one line):
 *	{ "i", "file", "name", "input": "snapshot|audit", "status",
 *	  "facts": { "<aspect>": { "<subject>": "<value>", ... }, ... } }
 * or, for a file that could not be read, { "i", "file", "error" }.
 * An aspect is absent when the input does not tell it (an audit document
 * has no link widths); nodes are compared per aspect, subject by subject.
 */
#ifndef RAILBIND_FLEET_H
#define RAILBIND_FLEET_H

#include <stddef.h>
#include <stdio.h>

struct aff_ctx;
struct json_object;

/* The aspects, in report order. */
#define FLEET_NASPECTS 8
extern const char *const fleet_aspects[FLEET_NASPECTS];

/*
 * fleet_node.c: the record of file number i (never NULL unless out of
 * memory); flags: aff_topo_load()'s (AFF_LOAD_NO_FORK in a worker).
 */
struct json_object *fleet_node_read(struct aff_ctx *ctx, const char *file, size_t i,
				    unsigned long flags);

/*
 * fleet_jobs.c: the records of files[0..n) in order, read by jobs worker
 * processes (this one, each import in a child, where none can be started).
 * A file that kills its reader gets a record saying so. -ENOMEM.
 */
int fleet_read_all(struct aff_ctx *ctx, char *const *files, size_t n, int jobs,
		   struct json_object **out);

/* fleet_compare.c: the railbind.fleet/1 document of the records. */
struct json_object *fleet_compare(struct json_object *const *rec, size_t n);
/* Exit code of a railbind.fleet/1 document: 0 ok .. 3 unknown. */
int fleet_exit_code(struct json_object *doc);

/* fleet_print.c: the text report, from the document. */
void fleet_print_text(FILE *f, struct json_object *doc, int details);

#endif
