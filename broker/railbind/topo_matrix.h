/* SPDX-License-Identifier: GPL-2.0-or-later */
/* railbind topo's text output: the matrix (the SVG picture: aff_topo_svg_write()). */
#ifndef RAILBIND_TOPO_MATRIX_H
#define RAILBIND_TOPO_MATRIX_H

#include <stddef.h>
#include <stdio.h>

struct json_object;

/* The text of railbind topo, from its railbind.topo/1 document. */
void rb_topo_text(FILE *f, struct json_object *doc, int details);

#endif
