// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The bandwidth NCCL ranks a GPU's NICs by (src/graph/topo.cc,
 * ncclTopoGetLocal: bandwidth first, then path type). NCCL gives each PCIe
 * link a figure per lane and generation, each network port its speed, each
 * link between two sockets a figure per CPU family, and a path the smallest
 * figure along it. The same facts are applied here to what the model knows;
 * what it does not know limits nothing (INFINITY), so an input without link
 * or port speeds ranks by path class alone, as before.
 *
 * Not modelled: GPUDirect being refused (NCCL then stages through the CPU)
 * and NVLink relays (PXN); both change how NCCL moves data, not which NIC is
 * nearest.
 */
#include <math.h>
#include <string.h>

#include "model.h"

/* NCCL's figure per lane, in 100 Mb/s, for a PCIe link speed in GT/s. */
static double per_lane(double gts)
{
	static const struct {
		double gts, per_lane;
	} gens[] = {
		{ 2.5, 15 }, { 5.0, 30 }, { 8.0, 60 }, { 16.0, 120 }, { 32.0, 240 },
		{ 64.0, 480 },
	};
	size_t i;

	for (i = 0; i < sizeof(gens) / sizeof(gens[0]); i++)
		if (fabs(gts - gens[i].gts) < 0.01)
			return gens[i].per_lane;
	/* NCCL takes a speed it does not know for Gen3. */
	return 60;
}

static double pcie_bw(double gts, int lanes)
{
	/* A width of 0 (not reported) is read as x16, as NCCL does. */
	return (lanes > 0 ? lanes : 16) * per_lane(gts) / 80.0;
}

/*
 * The link from device dev up to its parent. NCCL takes the smaller of the
 * device's and its parent port's maximum speed and width: the capabilities,
 * not the current state, which an idle GPU lowers to save power.
 */
double aff_link_bw(const struct aff_topo *t, int dev)
{
	const struct aff_dev *d = &t->dev[dev], *p;
	double speed;
	int width;

	/* A NIC without a PCI device (a VM's) hangs right off the CPU. */
	if (!d->pci[0])
		return INFINITY;
	if (t->src == AFF_SRC_NCCL)
		return d->link_speed > 0 ? pcie_bw(d->link_speed, d->link_width) :
					   INFINITY;
	speed = d->link_speed_cap;
	width = d->link_width_cap;
	if (speed <= 0)
		return INFINITY;
	p = d->parent >= 0 ? &t->dev[d->parent] : NULL;
	if (p && p->type == AFF_DEV_BRIDGE && p->link_speed_cap > 0) {
		speed = aff_fmin(speed, p->link_speed_cap);
		if (p->link_width_cap > 0 && (width <= 0 || p->link_width_cap < width))
			width = p->link_width_cap;
	}
	return pcie_bw(speed, width);
}

double aff_rail_bw(const struct aff_topo *t, int rail)
{
	const struct aff_rail *r = &t->rail[rail];

	/* An NCCL file without a speed leaves it to NCCL's net plugin. */
	return r->rate > 0 ? r->rate / 8 : INFINITY;
}

/* Whether x is on dev's chain of NCCL switches. */
static bool on_chain(const struct aff_topo *t, int dev, int x)
{
	for (dev = t->dev[dev].nccl_up; dev >= 0; dev = t->dev[dev].nccl_up)
		if (dev == x)
			return true;
	return false;
}

/* The links from dev up its NCCL chain, stopping below a switch of other's. */
static double chain_bw(const struct aff_topo *t, int dev, int other)
{
	double bw = aff_link_bw(t, dev);
	int x;

	for (x = t->dev[dev].nccl_up; x >= 0 && !on_chain(t, other, x);
	     x = t->dev[x].nccl_up)
		bw = aff_fmin(bw, aff_link_bw(t, x));
	return bw;
}

double aff_pair_bw(const struct aff_topo *t, int gdev, int rail)
{
	int nic = aff_rail_path_dev(&t->rail[rail]);
	double bw = aff_rail_bw(t, rail);

	bw = aff_fmin(bw, chain_bw(t, gdev, nic));
	bw = aff_fmin(bw, chain_bw(t, nic, gdev));
	if (t->intercpu_bw > 0 && aff_nccl_path_between(t, gdev, nic) == AFF_PATH_SYS)
		bw = aff_fmin(bw, t->intercpu_bw);
	return bw;
}

double aff_intercpu_bw(const char *arch, const char *vendor, int family, int model)
{
	bool x86 = arch ? !strcmp(arch, "x86_64") : vendor != NULL;

	if (arch && (!strncmp(arch, "ppc64", 5) || !strcmp(arch, "power")))
		return 32;
	if (arch && (!strcmp(arch, "aarch64") || !strcmp(arch, "arm64")))
		return 6;
	if (!x86 || !vendor)
		return 0;
	if (!strcmp(vendor, "GenuineIntel")) {
		/* Emerald/Sapphire Rapids, Skylake and later, Broadwell and earlier. */
		if (family == 6 && model >= 0xcf)
			return 40;
		if (family == 6 && model >= 0x8f)
			return 22;
		if (family == 6 && model >= 0x55)
			return 10;
		return 6;
	}
	if (!strcmp(vendor, "AuthenticAMD"))
		return 16;
	if (!strcmp(vendor, "CentaurHauls") || !strcmp(vendor, "  Shanghai  "))
		return family == 7 && model == 0x5b ? 9 : 6;
	return 0;
}
