/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Between out_nccl.c (the model as NCCL topology XML) and out_nccl_source.c
 * (what an NCCL source file says that the model does not hold).
 */
#ifndef RAILBIND_OUT_NCCL_H
#define RAILBIND_OUT_NCCL_H

#include "model.h"
#include "xml_lazy.h"

struct aff_nccl_src {
	const struct aff_xml *x;
	xmlDoc *doc;		/* NULL: nothing to add (not an NCCL source, or unreadable) */
};

/* The NCCL file @t was read from, read again; s->doc NULL when it cannot be. */
void aff_nccl_src_open(const struct aff_topo *t, const struct aff_xml *x, struct aff_nccl_src *s);
void aff_nccl_src_close(struct aff_nccl_src *s);
/* The source's <pci busid=@busid> (of its first host), NULL if none. */
const xmlNode *aff_nccl_src_pci(const struct aff_nccl_src *s, const char *busid);
/* The first child element @name of @n (NULL-safe). */
const xmlNode *aff_nccl_src_sub(const xmlNode *n, const char *name);
/* The <net> under @pci's <nic> named @name or @name "_dma", NULL if none. */
const xmlNode *aff_nccl_src_net(const struct aff_nccl_src *s, const xmlNode *pci,
				const char *name);

#endif
