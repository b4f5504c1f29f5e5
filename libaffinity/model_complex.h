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

/*
 * The complex a GPU or rail NIC belongs to, as topo and plan --json name
 * it: a scheduler matches on id ("dma:0008:01:00.0": the kind and the PCI
 * address of the complex's top port, the same on every boot).
 */
struct aff_complex_id {
	enum aff_complex kind;
	char id[32];
	int dma;		/* the Data Direct DMA function, -1 none */
	int pf;			/* the NIC's physical function, -1 unknown */
	const char *undecided;	/* why pf is unknown where it could be known; NULL */
};

/* false: the node's complexes are all classic (no complex is named there). */
bool aff_complex_of(const struct aff_topo *t, int dev, struct aff_complex_id *c);

/*
 * Each PF whose VPD UUID a DMA function shares has its GPU traffic carried
 * there: rail.via (aff_topo_finish).
 */
void aff_complex_match(struct aff_topo *t);

#endif /* AFF_MODEL_COMPLEX_H */
