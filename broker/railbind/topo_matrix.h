/* SPDX-License-Identifier: GPL-2.0-or-later */
/* railbind topo's outputs besides JSON: the matrix text and the SVG picture. */
#ifndef RAILBIND_TOPO_MATRIX_H
#define RAILBIND_TOPO_MATRIX_H

#include <stddef.h>

struct json_object;
struct aff_topo;

/* The text of railbind topo, from its railbind.topo/1 document. */
void rb_topo_text(struct json_object *doc, int details);
/*
 * Draw @topo as SVG into @path (whole or not at all; "-" is stdout): sockets,
 * NUMA nodes, root complexes, switches, GPUs and NICs, NVLink where known,
 * each rank's pair in one colour, pairs the audit fails in red. 0, or -errno
 * with @err set.
 */
int rb_topo_svg(struct aff_topo *topo, const char *path, char *err, size_t errlen);

#endif
