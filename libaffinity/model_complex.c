// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Classify the node's GPU-NIC complexes and give each port its ACS role.
 * The shapes and device ids follow rdma-core's kernel-boot/rdma_topo
 * (pci_device_types, PCITopo.__detect_topo_type, __get_nvcx_complex,
 * __get_nvcx_inline_complex, compute_acs); read there, written here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_complex.h"

enum devkind {
	DK_OTHER,
	DK_CX_SWITCH,	/* 15b3:197c, 15b3:1979: a ConnectX's switch ports */
	DK_BF3_SWITCH,	/* 15b3:197b: a BlueField-3's switch ports */
	DK_CX_DMA,	/* 15b3:2100: ConnectX-8 DMA (Data Direct) function */
	DK_CX_NIC,	/* ConnectX-7/8/9 15b3:1021/1023/1025, BlueField-3 15b3:a2dc */
	DK_GRACE_RP,	/* 10de:22b1, 22b2, 22b8 */
	DK_VERA_RP,	/* 10de:2f95, 2f96 */
	DK_NVGPU,
};

static enum devkind devkind(const struct aff_dev *d)
{
	if (d->vendor == 0x15b3) {
		switch (d->device) {
		case 0x197c:
		case 0x1979:
			return d->type == AFF_DEV_BRIDGE ? DK_CX_SWITCH : DK_OTHER;
		case 0x197b:
			return d->type == AFF_DEV_BRIDGE ? DK_BF3_SWITCH : DK_OTHER;
		case 0x2100:
			return DK_CX_DMA;
		case 0x1021:
		case 0x1023:
		case 0x1025:
		case 0xa2dc:
			return DK_CX_NIC;
		}
	}
	if (d->vendor == 0x10de && d->type == AFF_DEV_BRIDGE) {
		switch (d->device) {
		case 0x22b1:
		case 0x22b2:
		case 0x22b8:
			return DK_GRACE_RP;
		case 0x2f95:
		case 0x2f96:
			return DK_VERA_RP;
		}
	}
	if (d->vendor == 0x10de && d->gpu >= 0)
		return DK_NVGPU;
	return DK_OTHER;
}

static bool is_switch_port(const struct aff_topo *t, int i)
{
	enum devkind k = i >= 0 ? devkind(&t->dev[i]) : DK_OTHER;

	return k == DK_CX_SWITCH || k == DK_BF3_SWITCH;
}

static bool is_rp(enum devkind k)
{
	return k == DK_GRACE_RP || k == DK_VERA_RP;
}

/* The topmost port above device i (its parent is the host bridge); -1. */
static int top_port(const struct aff_topo *t, int i)
{
	int top = -1;

	for (i = t->dev[i].parent; i >= 0 && t->dev[i].type == AFF_DEV_BRIDGE;
	     i = t->dev[i].parent)
		top = i;
	return top;
}

/* The ancestor of i whose parent is anc (i's path just below anc); -1. */
static int child_toward(const struct aff_topo *t, int anc, int i)
{
	for (; i >= 0; i = t->dev[i].parent)
		if (t->dev[i].parent == anc)
			return i;
	return -1;
}

static bool below(const struct aff_topo *t, int i, int anc)
{
	for (i = t->dev[i].parent; i >= 0; i = t->dev[i].parent)
		if (i == anc)
			return true;
	return false;
}

/* The nearest bridge above both x and y; -1. */
static int common_port(const struct aff_topo *t, int x, int y)
{
	int i;

	for (i = t->dev[x].parent; i >= 0; i = t->dev[i].parent)
		if (t->dev[i].type == AFF_DEV_BRIDGE && below(t, y, i))
			return i;
	return -1;
}

struct cls {
	const struct aff_topo *t;
	enum aff_acs_role *role;
	enum aff_complex *kind;
};

static void set_role(struct cls *c, int i, enum aff_complex k, enum aff_acs_role r)
{
	if (i < 0)
		return;
	c->role[i] = r;
	c->kind[i] = k;
}

static enum aff_acs_role isolated(const struct aff_topo *t, int i)
{
	if (devkind(&t->dev[i]) == DK_VERA_RP)
		return AFF_ACS_ISOLATED_VERA;
	return AFF_ACS_ISOLATED;
}

/*
 * RP -> SW -> DMA and RP -> SW -> SW -> GPU: the switch both share routes
 * the Data Direct traffic; its two downstream ports and the top port get
 * their own values, the rest of the segment the kernel's.
 */
static bool find_dma(struct cls *c, int dma)
{
	const struct aff_topo *t = c->t;
	int dsp = t->dev[dma].parent, usp, top = top_port(t, dma);
	size_t g;

	if (!is_switch_port(t, dsp) || !is_switch_port(t, usp = t->dev[dsp].parent))
		return false;
	for (g = 0; g < t->ngpu; g++) {
		int gpu = t->gpus[g], gdsp;

		if (devkind(&t->dev[gpu]) != DK_NVGPU || common_port(t, dma, gpu) != usp)
			continue;
		gdsp = child_toward(t, usp, gpu);
		for (size_t i = 0; i < t->ndev; i++)
			if (t->dev[i].type == AFF_DEV_BRIDGE && top >= 0 &&
			    below(t, (int)i, top) && is_switch_port(t, (int)i))
				set_role(c, (int)i, AFF_COMPLEX_DMA, AFF_ACS_ISOLATED);
		set_role(c, dsp, AFF_COMPLEX_DMA, AFF_ACS_DMA_DSP_DMA);
		set_role(c, gdsp, AFF_COMPLEX_DMA, AFF_ACS_DMA_DSP_GPU);
		set_role(c, top, AFF_COMPLEX_DMA, AFF_ACS_DMA_ROOT);
		return true;
	}
	return false;
}

/*
 * RP -> SW -> NIC and RP -> SW -> SW -> GPU, no DMA function: the shared
 * switch's ports toward the NIC and the GPU, and the root port above.
 * Virtualised (the NIC offers ATS, as rdma_topo detects it) the NIC's port
 * adds Direct Translated P2P and the others keep the kernel's isolation.
 */
static bool find_inline(struct cls *c, int gpu, bool *virt)
{
	const struct aff_topo *t = c->t;
	size_t n;

	for (n = 0; n < t->ndev; n++) {
		int nic = (int)n, usp, top;
		bool v;

		if (devkind(&t->dev[nic]) != DK_CX_NIC)
			continue;
		usp = common_port(t, nic, gpu);
		if (!is_switch_port(t, usp))
			continue;
		top = top_port(t, nic);
		v = t->dev[nic].ats == 1;
		*virt = *virt || v;
		set_role(c, child_toward(t, usp, nic), AFF_COMPLEX_INLINE,
			 v ? AFF_ACS_INLINE_VIRT_NIC : AFF_ACS_INLINE_BARE);
		set_role(c, child_toward(t, usp, gpu), AFF_COMPLEX_INLINE,
			 v ? AFF_ACS_ISOLATED : AFF_ACS_INLINE_BARE);
		if (top >= 0 && !is_switch_port(t, top))
			set_role(c, top, AFF_COMPLEX_INLINE,
				 v ? isolated(t, top) : AFF_ACS_INLINE_BARE);
		return true;
	}
	return false;
}

int aff_complex_ports(const struct aff_topo *t, struct aff_acs_port **out, size_t *nout,
		      enum aff_complex *node)
{
	struct cls c = { .t = t };
	bool dma = false, numa = false, inl = false, virt = false;
	size_t i, n = 0;

	*out = NULL;
	*nout = 0;
	*node = AFF_COMPLEX_CLASSIC;
	c.role = calloc(t->ndev + 1, sizeof(*c.role));
	c.kind = calloc(t->ndev + 1, sizeof(*c.kind));
	if (!c.role || !c.kind) {
		free(c.role);
		free(c.kind);
		return -ENOMEM;
	}
	for (i = 0; i < t->ndev; i++)
		if (devkind(&t->dev[i]) == DK_CX_DMA)
			dma = find_dma(&c, (int)i) || dma;
	for (i = 0; !dma && i < t->ngpu; i++) {
		int g = t->gpus[i], p = t->dev[g].parent;

		if (devkind(&t->dev[g]) == DK_NVGPU && p >= 0 &&
		    is_rp(devkind(&t->dev[p])))
			numa = true;
	}
	for (i = 0; !dma && !numa && i < t->ngpu; i++)
		if (devkind(&t->dev[t->gpus[i]]) == DK_NVGPU)
			inl = find_inline(&c, t->gpus[i], &virt) || inl;
	*node = dma ? AFF_COMPLEX_DMA : numa ? AFF_COMPLEX_NUMA :
		inl ? AFF_COMPLEX_INLINE : AFF_COMPLEX_CLASSIC;
	/*
	 * PCITopo.compute_acs: every other ConnectX switch port and Grace/Vera
	 * root port keeps the kernel's isolation, except on a bare-metal inline
	 * node, where isolation is off everywhere.
	 */
	for (i = 0; *node != AFF_COMPLEX_CLASSIC && i < t->ndev; i++) {
		enum devkind k = devkind(&t->dev[i]);

		if (c.role[i] != AFF_ACS_NONE || !(is_switch_port(t, (int)i) || is_rp(k)))
			continue;
		if (*node == AFF_COMPLEX_INLINE && !virt)
			set_role(&c, (int)i, *node, AFF_ACS_INLINE_BARE);
		else
			set_role(&c, (int)i, *node, isolated(t, (int)i));
	}
	for (i = 0; i < t->ndev; i++)
		n += c.role[i] != AFF_ACS_NONE;
	if (n && !(*out = calloc(n, sizeof(**out)))) {
		free(c.role);
		free(c.kind);
		return -ENOMEM;
	}
	for (i = 0, n = 0; *out && i < t->ndev; i++) {
		if (c.role[i] == AFF_ACS_NONE)
			continue;
		(*out)[n].dev = (int)i;
		(*out)[n].kind = c.kind[i];
		(*out)[n].role = c.role[i];
		(*out)[n].vera = devkind(&t->dev[i]) == DK_VERA_RP;
		n++;
	}
	*nout = n;
	free(c.role);
	free(c.kind);
	return 0;
}

/*
 * Is gpu beside dma in one DMA complex: the switch above the DMA function's
 * port also above the GPU (RP -> SW -> DMA, SW -> SW -> GPU), or, as NCCL's
 * files flatten the ports, the DMA function's switch itself?
 */
static bool dma_beside(const struct aff_topo *t, int dma, int gpu)
{
	int dsp = t->dev[dma].parent, c;

	if (devkind(&t->dev[gpu]) != DK_NVGPU || !is_switch_port(t, dsp))
		return false;
	c = common_port(t, dma, gpu);
	return is_switch_port(t, c) && (c == dsp || c == t->dev[dsp].parent);
}

/* A ConnectX NIC sharing a ConnectX switch with the device (inline); -1. */
static int inline_peer(const struct aff_topo *t, int dev)
{
	bool gpu = devkind(&t->dev[dev]) == DK_NVGPU;
	size_t i;

	if (!gpu && devkind(&t->dev[dev]) != DK_CX_NIC)
		return -1;
	for (i = 0; i < t->ndev; i++) {
		enum devkind k = devkind(&t->dev[i]);

		if ((gpu ? k == DK_CX_NIC : k == DK_NVGPU) &&
		    is_switch_port(t, common_port(t, dev, (int)i)))
			return gpu ? (int)i : dev;
	}
	return -1;
}

static int rail_of(const struct aff_topo *t, int dev)
{
	size_t r;

	for (r = 0; r < t->nrail; r++)
		if (t->rail[r].dev == dev)
			return (int)r;
	return -1;
}

static int dma_of(const struct aff_topo *t, int dev)
{
	int r = rail_of(t, dev);
	size_t i;

	if (devkind(&t->dev[dev]) == DK_CX_DMA)
		return dev;
	if (r >= 0 && t->rail[r].via >= 0)
		return t->rail[r].via;
	for (i = 0; devkind(&t->dev[dev]) == DK_NVGPU && i < t->ndev; i++)
		if (devkind(&t->dev[i]) == DK_CX_DMA && dma_beside(t, (int)i, dev))
			return (int)i;
	return -1;
}

static bool same_uuid(const struct aff_dev *a, const struct aff_dev *b)
{
	return a->vpd_uuid && b->vpd_uuid && !strcmp(a->vpd_uuid, b->vpd_uuid);
}

/* The PF whose VPD UUID the DMA function shares; -1. */
static int pf_of(const struct aff_topo *t, int dma)
{
	size_t i;

	for (i = 0; i < t->ndev; i++)
		if (devkind(&t->dev[i]) == DK_CX_NIC && same_uuid(&t->dev[i], &t->dev[dma]))
			return (int)i;
	return -1;
}

static bool has_dma(const struct aff_topo *t)
{
	size_t i;

	for (i = 0; i < t->ndev; i++)
		if (devkind(&t->dev[i]) == DK_CX_DMA)
			return true;
	return false;
}

/* Some GPU is in a complex not classic (rdma_topo's kinds, any of them). */
static bool any_complex(const struct aff_topo *t)
{
	size_t g;

	for (g = 0; g < t->ngpu; g++) {
		int d = t->gpus[g], p = t->dev[d].parent;

		if (dma_of(t, d) >= 0 || (p >= 0 && is_rp(devkind(&t->dev[p]))) ||
		    inline_peer(t, d) >= 0)
			return true;
	}
	return false;
}

static void name_it(const struct aff_topo *t, struct aff_complex_id *c, int top, int dev)
{
	const struct aff_dev *d = &t->dev[top >= 0 ? top : dev];

	snprintf(c->id, sizeof(c->id), "%s:%s", aff_complex_name(c->kind),
		 d->pci[0] ? d->pci : "?");
}

bool aff_complex_of(const struct aff_topo *t, int dev, struct aff_complex_id *c)
{
	int p = t->dev[dev].parent, nic;

	memset(c, 0, sizeof(*c));
	c->dma = c->pf = -1;
	if (!any_complex(t))
		return false;
	c->dma = dma_of(t, dev);
	if (c->dma >= 0) {
		c->kind = AFF_COMPLEX_DMA;
		c->pf = devkind(&t->dev[dev]) == DK_CX_NIC ? dev : pf_of(t, c->dma);
		if (c->pf < 0 && !t->dev[c->dma].vpd_uuid &&
		    (t->dev[c->dma].unreadable & AFF_UNREADABLE_VPD))
			c->undecided = "VPD unreadable";
		name_it(t, c, top_port(t, c->dma), c->dma);
	} else if (p >= 0 && is_rp(devkind(&t->dev[p]))) {
		c->kind = AFF_COMPLEX_NUMA;
		if (devkind(&t->dev[dev]) == DK_CX_NIC) {
			c->pf = dev;
			/* A PF whose DMA function may be any of the node's. */
			if (has_dma(t) && (t->dev[dev].unreadable & AFF_UNREADABLE_VPD))
				c->undecided = "VPD unreadable";
		}
		/* rdma_topo groups a NUMA-based complex by NUMA node. */
		if (t->dev[dev].loc >= 0 && t->loc[t->dev[dev].loc].numa >= 0)
			snprintf(c->id, sizeof(c->id), "numa:%d", t->loc[t->dev[dev].loc].numa);
		else
			name_it(t, c, p, dev);
	} else if ((nic = inline_peer(t, dev)) >= 0) {
		c->kind = AFF_COMPLEX_INLINE;
		c->pf = nic;
		name_it(t, c, top_port(t, nic), nic);
	} else {
		c->kind = AFF_COMPLEX_CLASSIC;
		name_it(t, c, top_port(t, dev), dev);
	}
	return true;
}

void aff_complex_match(struct aff_topo *t)
{
	size_t r, i;

	for (r = 0; r < t->nrail; r++) {
		int dev = t->rail[r].dev;

		if (devkind(&t->dev[dev]) != DK_CX_NIC || !t->dev[dev].vpd_uuid)
			continue;
		for (i = 0; i < t->ndev; i++)
			if (devkind(&t->dev[i]) == DK_CX_DMA && rail_of(t, (int)i) < 0 &&
			    same_uuid(&t->dev[i], &t->dev[dev]))
				t->rail[r].via = (int)i;
	}
}
