/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * acs_table - the ACS control each port of a GPU-NIC complex needs, by the
 * complex's kind and the port's role in it (acs_table.c has the table and
 * its sources), and the kernel's pci=config_acs= remedy.
 *
 * A required value is a 7-character string, bit 6 first, as the kernel's
 * config_acs= takes it: '1' on, '0' off, 'x' left as it is.
 */
#ifndef AFF_ACS_TABLE_H
#define AFF_ACS_TABLE_H

#include <stdbool.h>
#include <stddef.h>

/* The kinds of complex (model_complex.c classifies them). */
enum aff_complex {
	AFF_COMPLEX_CLASSIC,	/* a PCIe switch (Broadcom, ...) or a root port */
	AFF_COMPLEX_DMA,	/* ConnectX-8 DMA function 15b3:2100 beside the GPU */
	AFF_COMPLEX_INLINE,	/* GPU and ConnectX NIC under one ConnectX switch */
	AFF_COMPLEX_NUMA,	/* GPUs and NICs on Grace/Vera root ports */
};

/* A port's role; each has one row in the table. */
enum aff_acs_role {
	AFF_ACS_NONE,		/* not judged by the table */
	AFF_ACS_CLASSIC_PATH,	/* a port on a GPU-NIC path of a classic switch */
	AFF_ACS_DMA_DSP_DMA,	/* shared switch's port toward the DMA function */
	AFF_ACS_DMA_DSP_GPU,	/* shared switch's downstream port toward the GPU */
	AFF_ACS_DMA_ROOT,	/* the root port above a DMA complex */
	AFF_ACS_ISOLATED,	/* any other ConnectX switch port, Grace root port */
	AFF_ACS_ISOLATED_VERA,	/* a Vera root port (completion redirect read-only off) */
	AFF_ACS_INLINE_BARE,	/* inline complex ports, bare metal */
	AFF_ACS_INLINE_VIRT_NIC,	/* the NIC's downstream port, virtualised */
	AFF_ACS_NROLES,
};

struct aff_acs_rule {
	const char *id;		/* the role's word in JSON: dma-dsp-dma, ... */
	const char *want;	/* 7 characters, bit 6 first */
	const char *name;	/* the role in words, for messages */
	const char *why;	/* one line: what the setting does there */
	bool fail;		/* a difference costs GPUDirect bandwidth (else: warn) */
};

const struct aff_acs_rule *aff_acs_rule(enum aff_acs_role role);
const char *aff_complex_name(enum aff_complex k);

/* The kernel's own value for a port (pci_std_enable_acs): Vera's differs. */
const char *aff_acs_kernel_default(bool vera);

/*
 * The bits of @ctl that @want sets otherwise: a mask of bits 0..6. @want is
 * 7 characters of '0', '1', 'x'.
 */
unsigned aff_acs_differs(unsigned ctl, const char *want);
/* @ctl with @want applied (what the kernel does with config_acs=). */
unsigned aff_acs_apply(unsigned ctl, const char *want);
/* The 7 bits of @ctl as text, bit 6 first, into @buf (8 bytes). */
void aff_acs_bits(unsigned ctl, char *buf);
/* "RR CR" for a mask: the short names of the bits, into @buf. */
void aff_acs_bit_names(unsigned mask, char *buf, size_t len);
/* @a and @b ask the same of every bit. */
bool aff_acs_same(const char *a, const char *b);

/* Does the kernel @release take pci=config_acs= for @nports ports? */
enum aff_acs_kernel {
	AFF_ACS_KERNEL_UNKNOWN,		/* release not known or not parsed */
	AFF_ACS_KERNEL_TOO_OLD,		/* < 6.11: no config_acs= */
	AFF_ACS_KERNEL_ONE_ONLY,	/* a list of more than one fails to parse */
	AFF_ACS_KERNEL_OK,
};
enum aff_acs_kernel aff_acs_kernel_check(const char *release, size_t nports);
/* The release's major.minor(.patch); -EINVAL when it does not start so. */
int aff_kernel_version(const char *release, int *major, int *minor, int *patch);

#endif /* AFF_ACS_TABLE_H */
