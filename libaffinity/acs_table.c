// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The ACS control each port needs, per complex kind and port role, and
 * which kernels take the pci=config_acs= remedy.
 *
 * Sources (read, not copied):
 * - ACS control bits: PCIe base spec 7.7.8.3; the kernel's
 *   Documentation/admin-guide/kernel-parameters.txt "config_acs=" (bit 0
 *   Source Validation, 1 Translation Blocking, 2 P2P Request Redirect,
 *   3 P2P Completion Redirect, 4 Upstream Forwarding, 5 P2P Egress Control,
 *   6 Direct Translated P2P; '0' off, '1' on, 'x' unchanged).
 * - The kernel's default (drivers/pci/pci.c pci_std_enable_acs): SV, RR, CR
 *   and UF on where the port has them.
 * - The complexes: rdma-core kernel-boot/rdma_topo (PRs #1644, #1725, #1779):
 *   NVCX_DMA_Complex.compute_acs (DMA-based), NVCX_Inline_Complex.compute_acs
 *   (inline, bare metal and virtualised), PCITopo.compute_acs (every other
 *   ConnectX switch port and Grace/Vera root port), kernel_acs_isolated (Vera
 *   root ports 10de:2f95/2f96 have completion redirect read-only off).
 * - Classic switches: drivers/pci/p2pdma.c (RR, CR or EC on a port between
 *   two devices sends their peer-to-peer traffic up to the root complex).
 * - config_acs= first appears in Linux 6.11 (47c8846a49ba "PCI: Extend ACS
 *   configurability"); a list of more than one device fails to parse until
 *   9cf8a952d57b "PCI: Fix Extend ACS configurability" (mainline 6.15,
 *   backported to 6.12-stable).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acs_table.h"

static const struct aff_acs_rule rules[AFF_ACS_NROLES] = {
	[AFF_ACS_NONE] = { "none", "xxxxxxx", "port", "not judged", false },
	/* p2pdma.c: any redirect bit sends the pair's traffic to the root complex. */
	[AFF_ACS_CLASSIC_PATH] = { "classic-path", "x0x00xx", "port on a GPU-NIC path of a PCIe switch",
		"request/completion redirect or egress control send the pair's peer-to-peer traffic up to the root complex",
		true },
	/* rdma_topo NVCX_DMA_Complex: UF, CR, SV on; RR off. */
	[AFF_ACS_DMA_DSP_DMA] = { "dma-dsp-dma", "xx110x1", "downstream port toward the ConnectX DMA function",
		"request redirect must be off so the DMA function's requests reach the GPU inside the switch (Data Direct), completion redirect on keeps completions isolated",
		true },
	/* rdma_topo NVCX_DMA_Complex: UF, RR, SV on; CR off. */
	[AFF_ACS_DMA_DSP_GPU] = { "dma-dsp-gpu", "xx101x1", "downstream port toward the GPU",
		"completion redirect must be off so the GPU's completions to the DMA function stay in the switch, request redirect on keeps the GPU's own requests isolated",
		true },
	/* rdma_topo NVCX_DMA_Complex: SV off on the top port, one IOMMU group. */
	[AFF_ACS_DMA_ROOT] = { "dma-root", "xx111x0", "root port above the DMA complex",
		"source validation off puts the whole segment in one IOMMU group, which avoids kernel bugs building groups for irregular ACS",
		true },
	/* rdma_topo kernel_acs_isolated / PCITopo.compute_acs: the kernel default. */
	[AFF_ACS_ISOLATED] = { "isolated", "xx111x1", "ConnectX switch port or Grace root port",
		"the kernel's isolating default (SV, RR, CR, UF), which the complex's routing expects here",
		false },
	[AFF_ACS_ISOLATED_VERA] = { "isolated-vera", "xx101x1", "Vera root port",
		"the kernel's isolating default; completion redirect is read-only off on Vera, so it can never be on",
		false },
	/* rdma_topo NVCX_Inline_Complex, bare metal: SV, RR, CR, UF off. */
	[AFF_ACS_INLINE_BARE] = { "inline-bare", "xx000x0", "inline complex port (bare metal)",
		"bare metal needs no isolation: peer-to-peer between the GPU and the NIC stays in their ConnectX switch",
		true },
	/* rdma_topo NVCX_Inline_Complex, virtualised: DT, UF, CR, RR, SV on. */
	[AFF_ACS_INLINE_VIRT_NIC] = { "inline-virt-nic", "1x111x1", "NIC's downstream port (virtualised)",
		"direct translated P2P lets the NIC's ATS-translated requests reach the GPU while the VM stays isolated",
		true },
};

static const char *const complex_names[] = {
	[AFF_COMPLEX_CLASSIC] = "classic",
	[AFF_COMPLEX_DMA] = "dma",
	[AFF_COMPLEX_INLINE] = "inline",
	[AFF_COMPLEX_NUMA] = "numa",
};

static const char *const bit_names[7] = { "SV", "TB", "RR", "CR", "UF", "EC", "DT" };

const struct aff_acs_rule *aff_acs_rule(enum aff_acs_role role)
{
	return (unsigned)role < AFF_ACS_NROLES ? &rules[role] : &rules[AFF_ACS_NONE];
}

const char *aff_complex_name(enum aff_complex k)
{
	return (unsigned)k <= AFF_COMPLEX_NUMA ? complex_names[k] : "classic";
}

const char *aff_acs_kernel_default(bool vera)
{
	return vera ? rules[AFF_ACS_ISOLATED_VERA].want : rules[AFF_ACS_ISOLATED].want;
}

unsigned aff_acs_differs(unsigned ctl, const char *want)
{
	unsigned mask = 0;
	int b;

	for (b = 0; b < 7; b++) {
		char c = want[6 - b];
		bool on = ctl & (1u << b);

		if ((c == '1' && !on) || (c == '0' && on))
			mask |= 1u << b;
	}
	return mask;
}

unsigned aff_acs_apply(unsigned ctl, const char *want)
{
	int b;

	for (b = 0; b < 7; b++) {
		if (want[6 - b] == '1')
			ctl |= 1u << b;
		else if (want[6 - b] == '0')
			ctl &= ~(1u << b);
	}
	return ctl;
}

void aff_acs_bits(unsigned ctl, char *buf)
{
	int b;

	for (b = 0; b < 7; b++)
		buf[6 - b] = ctl & (1u << b) ? '1' : '0';
	buf[7] = '\0';
}

void aff_acs_bit_names(unsigned mask, char *buf, size_t len)
{
	size_t n = 0;
	int b;

	buf[0] = '\0';
	for (b = 6; b >= 0 && n < len; b--)
		if (mask & (1u << b))
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? " " : "",
					      bit_names[b]);
}

bool aff_acs_same(const char *a, const char *b)
{
	return !strcmp(a, b);
}

int aff_kernel_version(const char *release, int *major, int *minor, int *patch)
{
	long v[3] = { 0, 0, 0 };
	char *end;
	int i;

	/* "6.12.9+deb13-amd64": major and minor are needed, the patch may be absent. */
	for (i = 0; release && i < 3; i++) {
		if (*release < '0' || *release > '9')
			break;
		v[i] = strtol(release, &end, 10);
		if (v[i] > 100000)
			return -EINVAL;
		release = end;
		if (*release != '.')
			break;
		release++;
	}
	if (!release || i < 1)
		return -EINVAL;
	*major = (int)v[0];
	*minor = (int)v[1];
	*patch = (int)v[2];
	return 0;
}

enum aff_acs_kernel aff_acs_kernel_check(const char *release, size_t nports)
{
	int maj, min, pat;
	long v;

	if (aff_kernel_version(release, &maj, &min, &pat) < 0)
		return AFF_ACS_KERNEL_UNKNOWN;
	v = maj * 1000L + min;
	if (v < 6011)
		return AFF_ACS_KERNEL_TOO_OLD;
	/*
	 * 9cf8a952d57b: mainline from 6.15; 6.12-stable carries the backport
	 * (the first 6.12.y with it is not pinned here: a 6.12 kernel is
	 * trusted with the list).
	 */
	if (nports <= 1 || v >= 6015 || v == 6012)
		return AFF_ACS_KERNEL_OK;
	return AFF_ACS_KERNEL_ONE_ONLY;
}
