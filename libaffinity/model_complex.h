/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * model_complex - which kind of GPU-NIC complex each PCIe port belongs to
 * and its role there (acs_table.h), as rdma-core's rdma_topo classifies
 * them: DMA-based (a ConnectX-8 DMA function beside the GPU), inline (GPU
 * and ConnectX NIC under one ConnectX switch), NUMA-based (GPUs on Grace or
 * Vera root ports), else classic.
 */
#ifndef AFF_MODEL_COMPLEX_H
#define AFF_MODEL_COMPLEX_H

#include "acs_table.h"
#include "model.h"

struct aff_acs_port {
	int dev;			/* index in topo->dev: a bridge */
	enum aff_complex kind;
	enum aff_acs_role role;
	bool vera;			/* a Vera root port (its kernel default differs) */
};

/*
 * The ports the table judges on a node whose complexes are not classic,
 * malloc()ed into *@out (free() it), in topo->dev order; *@node: the node's
 * kind (rdma_topo's precedence: DMA, NUMA, inline, classic). A classic node
 * has none: acs-redirect's path rule judges it. 0 or -ENOMEM.
 */
int aff_complex_ports(const struct aff_topo *t, struct aff_acs_port **out, size_t *n,
		      enum aff_complex *node);

#endif /* AFF_MODEL_COMPLEX_H */
