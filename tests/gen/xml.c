// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rbgen: writes the model as hwloc v2 XML, the way hwloc 2.9's own export
 * lays a Linux machine out: memory children first, then normal children,
 * then I/O; I/O trees under the object whose cpuset is their NUMA node's.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rbgen.h"

struct wr {
	const struct rb_machine *m;
	FILE *out;
	unsigned long gp;
	int nwords;		/* 32-bit words in a PU bitmap */
	int total_cores;
	uint32_t *set;
	char *buf;		/* formatted bitmap */
};

static void indent(struct wr *w, int depth)
{
	for (int i = 0; i < depth; i++)
		fputs("  ", w->out);
}

static void put_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			fputc(*s, out);
		}
	}
}

static void info(struct wr *w, int depth, const char *name, const char *value)
{
	indent(w, depth);
	fprintf(w->out, "<info name=\"%s\" value=\"", name);
	put_escaped(w->out, value);
	fputs("\"/>\n", w->out);
}

static void infof(struct wr *w, int depth, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void infof(struct wr *w, int depth, const char *name, const char *fmt, ...)
{
	char v[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	info(w, depth, name, v);
}

/* hwloc's bitmap syntax: 32-bit words, most significant first. */
static const char *fmt_set(struct wr *w, const uint32_t *set, int nwords)
{
	char *p = w->buf;
	int top = nwords - 1;

	while (top > 0 && !set[top])
		top--;
	if (top == 0 && !set[0])
		return "0x0";
	for (int i = top; i >= 0; i--)
		p += sprintf(p, "%s0x%08x", i == top ? "" : ",", set[i]);
	return w->buf;
}

static const char *fmt_bit(struct wr *w, int bit)
{
	uint32_t *s = w->set;
	int n = bit / 32 + 1;

	memset(s, 0, sizeof(*s) * (size_t)n);
	s[bit / 32] = 1u << (bit % 32);
	return fmt_set(w, s, n);
}

/*
 * The OS number of thread @t of core @c (cores counted package by package).
 * Linear: a package's CPUs are consecutive. Alternate, as some firmware
 * numbers them: core k of package p is CPU k * packages + p, so package 0
 * has the even CPUs of a two-socket machine and hwloc's Core L# is not the
 * CPU number.
 */
static int pu_os(const struct wr *w, int c, int t)
{
	const struct rb_machine *m = w->m;
	int per = w->total_cores / m->packages;

	if (m->alternate)
		c = (c % per) * m->packages + c / per;
	return c + t * w->total_cores;
}

static void cores_set(struct wr *w, int first, int count)
{
	const struct rb_machine *m = w->m;

	memset(w->set, 0, sizeof(*w->set) * (size_t)w->nwords);
	for (int c = first; c < first + count; c++) {
		for (int t = 0; t < m->smt; t++) {
			int pu = pu_os(w, c, t);

			w->set[pu / 32] |= 1u << (pu % 32);
		}
	}
}

/* Writes cpuset/complete_cpuset for cores [first, first+count) and nodesets. */
static void sets(struct wr *w, int first, int count, int numa_first, int numa_count)
{
	const char *s;

	cores_set(w, first, count);
	s = fmt_set(w, w->set, w->nwords);
	fprintf(w->out, " cpuset=\"%s\" complete_cpuset=\"%s\"", s, s);
	memset(w->set, 0, sizeof(*w->set) * (size_t)w->nwords);
	for (int i = numa_first; i < numa_first + numa_count; i++)
		w->set[i / 32] |= 1u << (i % 32);
	s = fmt_set(w, w->set, (numa_first + numa_count + 31) / 32);
	fprintf(w->out, " nodeset=\"%s\" complete_nodeset=\"%s\"", s, s);
}

static double link_gbytes(double gts, int width)
{
	/* 8b/10b up to PCIe 2, 128b/130b from PCIe 3 on, as hwloc computes it */
	return gts * width * (gts < 8.0 ? 0.8 : 128.0 / 130.0) / 8.0;
}

static void pci_infos(struct wr *w, const struct rb_node *n, int d)
{
	infof(w, d, "RailbindLinkSpeed", "%.1f", n->speed);
	infof(w, d, "RailbindLinkWidth", "%d", n->width);
	infof(w, d, "RailbindLinkSpeedCap", "%.1f", n->capspeed);
	infof(w, d, "RailbindLinkWidthCap", "%d", n->capwidth);
	if (n->acs >= 0)
		infof(w, d, "RailbindACSCtl", "0x%04x", (unsigned int)n->acs);
	infof(w, d, "RailbindNumaNode", "%d", n->numa_raw);
	info(w, d, "RailbindIOMMUGroupType", n->iommu);
	if (!w->m->no_port_types && n->ptype)
		info(w, d, "RailbindPortType", n->ptype);
	if (n->mps > 0)
		infof(w, d, "RailbindMPS", "%d", n->mps);
	if (n->mrrs > 0)
		infof(w, d, "RailbindMRRS", "%d", n->mrrs);
	if (n->ro >= 0)
		infof(w, d, "RailbindRelaxedOrdering", "%d", n->ro);
	if (n->ats >= 0)
		infof(w, d, "RailbindATS", "%d", n->ats);
	if (n->bar1 > 0)
		infof(w, d, "RailbindBAR1", "%lld", n->bar1);
	if (n->vpd && !strcmp(n->vpd, "unreadable"))
		info(w, d, "RailbindUnreadable", "vpd");
	else if (n->vpd)
		info(w, d, "RailbindVPDUUID", n->vpd);
}

static void pci_attrs(struct wr *w, const struct rb_node *n)
{
	fprintf(w->out,
		" pci_busid=\"%04x:%02x:%02x.%01x\" pci_type=\"%04x [%04x:%04x] [%04x:%04x] %02x\" pci_link_speed=\"%f\"",
		n->domain, n->bus, n->dev, n->fn, n->class_id, n->vendor, n->device,
		n->subvendor ? n->subvendor : n->vendor, n->subdevice ? n->subdevice : n->device,
		n->rev, link_gbytes(n->speed, n->width));
}

static void gpu_osdev(struct wr *w, const struct rb_node *n, int d)
{
	bool nv = n->vendor == 0x10de;
	char model[64];

	if (!nv && n->vendor != 0x1002)
		return;
	indent(w, d);
	fprintf(w->out, "<object type=\"OSDev\" gp_index=\"%lu\" name=\"%s%d\" subtype=\"%s\" osdev_type=\"1\">\n",
		w->gp++, nv ? "nvml" : "rsmi", n->gpu_index, nv ? "NVML" : "RSMI");
	info(w, d + 1, "Backend", nv ? "NVML" : "RSMI");
	info(w, d + 1, "GPUVendor", nv ? "NVIDIA Corporation" : "AMD");
	snprintf(model, sizeof(model), "rbgen GPU %04x:%04x", n->vendor, n->device);
	info(w, d + 1, "GPUModel", model);
	indent(w, d);
	fputs("</object>\n", w->out);
}

static void nic_osdevs(struct wr *w, const struct rb_node *n, int d)
{
	/* a stable, unique identity derived from the PCI address */
	unsigned long long guid = 0x0c42a10300000000ULL | (unsigned long long)n->domain << 16 |
				  (unsigned int)n->bus << 8 | (unsigned int)n->dev << 3 |
				  (unsigned int)n->fn;
	char key[32];

	if (n->netdev) {
		indent(w, d);
		fprintf(w->out, "<object type=\"OSDev\" gp_index=\"%lu\" name=\"", w->gp++);
		put_escaped(w->out, n->netdev);
		fputs("\" osdev_type=\"2\">\n", w->out);
		if (n->eth)
			infof(w, d + 1, "Address", "02:%02x:%02x:%02x:%02x:%02x",
			      n->domain >> 8, n->domain & 0xff, n->bus, n->dev, n->fn);
		else
			infof(w, d + 1, "Address",
			      "00:00:10:49:fe:80:00:00:00:00:00:00:%02llx:%02llx:%02llx:%02llx:%02llx:%02llx:%02llx:%02llx",
			      guid >> 56, guid >> 48 & 0xff, guid >> 40 & 0xff, guid >> 32 & 0xff,
			      guid >> 24 & 0xff, guid >> 16 & 0xff, guid >> 8 & 0xff, guid & 0xff);
		infof(w, d + 1, "Port", "%d", n->port);
		indent(w, d);
		fputs("</object>\n", w->out);
	}
	if (n->eth)
		return;
	indent(w, d);
	fprintf(w->out, "<object type=\"OSDev\" gp_index=\"%lu\" name=\"", w->gp++);
	put_escaped(w->out, n->name);
	fputs("\" osdev_type=\"3\">\n", w->out);
	infof(w, d + 1, "NodeGUID", "%04llx:%04llx:%04llx:%04llx", guid >> 48,
	      guid >> 32 & 0xffff, guid >> 16 & 0xffff, guid & 0xffff);
	infof(w, d + 1, "SysImageGUID", "%04llx:%04llx:%04llx:%04llx", guid >> 48,
	      guid >> 32 & 0xffff, guid >> 16 & 0xffff, guid & 0xffff);
	for (int p = 0; p < n->nports; p++) {
		snprintf(key, sizeof(key), "Port%dState", n->port + p);
		infof(w, d + 1, key, "%d", n->state[p]);
		snprintf(key, sizeof(key), "RailbindPort%dRate", n->port + p);
		infof(w, d + 1, key, "%d", n->rate[p]);
	}
	indent(w, d);
	fputs("</object>\n", w->out);
}

static void write_io(struct wr *w, const struct rb_node *n, int d)
{
	for (; n; n = n->next) {
		indent(w, d);
		switch (n->kind) {
		case RB_HOSTBRIDGE:
			fprintf(w->out, "<object type=\"Bridge\" gp_index=\"%lu\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"%04x:[%02x-%02x]\">\n",
				w->gp++, n->domain, n->secbus, n->subbus);
			break;
		case RB_BRIDGE:
			fprintf(w->out, "<object type=\"Bridge\" gp_index=\"%lu\" bridge_type=\"1-1\" depth=\"%d\" bridge_pci=\"%04x:[%02x-%02x]\"",
				w->gp++, n->depth, n->domain, n->secbus, n->subbus);
			pci_attrs(w, n);
			fputs(">\n", w->out);
			pci_infos(w, n, d + 1);
			break;
		default:
			fprintf(w->out, "<object type=\"PCIDev\" gp_index=\"%lu\"", w->gp++);
			pci_attrs(w, n);
			fputs(">\n", w->out);
			pci_infos(w, n, d + 1);
			if (n->kind == RB_GPU)
				gpu_osdev(w, n, d + 1);
			else if (n->kind == RB_NIC)
				nic_osdevs(w, n, d + 1);
			break;
		}
		write_io(w, n->child, d + 1);
		indent(w, d);
		fputs("</object>\n", w->out);
	}
}

/* Host bridges local to `numa` (-1: those the machine itself holds). */
static void write_local_io(struct wr *w, int numa, int d)
{
	int ncpu = rb_nr_cpu_numa(w->m);

	for (const struct rb_node *hb = w->m->roots; hb; hb = hb->next) {
		bool at_machine = hb->numa < 0 || hb->numa >= ncpu;

		if (numa < 0 ? at_machine : hb->numa == numa) {
			const struct rb_node *next = hb->next;

			((struct rb_node *)hb)->next = NULL;
			write_io(w, hb, d);
			((struct rb_node *)hb)->next = (struct rb_node *)next;
		}
	}
}

static void write_numanode(struct wr *w, int os, int first, int count, int d)
{
	indent(w, d);
	fprintf(w->out, "<object type=\"NUMANode\" os_index=\"%d\"", os);
	sets(w, first, count, os, 1);
	fprintf(w->out, " gp_index=\"%lu\" local_memory=\"%llu\"/>\n", w->gp++,
		count ? 64ULL << 30 : 96ULL << 30);
}

static void write_core(struct wr *w, int core, int numa, int d)
{
	const struct rb_machine *m = w->m;

	indent(w, d);
	fputs("<object type=\"L2Cache\"", w->out);
	sets(w, core, 1, numa, 1);
	fprintf(w->out, " gp_index=\"%lu\" cache_size=\"2097152\" depth=\"2\" cache_linesize=\"64\" cache_associativity=\"16\" cache_type=\"0\">\n",
		w->gp++);
	indent(w, d + 1);
	fputs("<object type=\"L1Cache\"", w->out);
	sets(w, core, 1, numa, 1);
	fprintf(w->out, " gp_index=\"%lu\" cache_size=\"49152\" depth=\"1\" cache_linesize=\"64\" cache_associativity=\"12\" cache_type=\"1\">\n",
		w->gp++);
	indent(w, d + 2);
	fprintf(w->out, "<object type=\"Core\" os_index=\"%d\"", pu_os(w, core, 0));
	sets(w, core, 1, numa, 1);
	fprintf(w->out, " gp_index=\"%lu\">\n", w->gp++);
	for (int t = 0; t < m->smt; t++) {
		int pu = pu_os(w, core, t);

		indent(w, d + 3);
		fprintf(w->out, "<object type=\"PU\" os_index=\"%d\" cpuset=\"%s\"", pu,
			fmt_bit(w, pu));
		fprintf(w->out, " complete_cpuset=\"%s\"", fmt_bit(w, pu));
		fprintf(w->out, " nodeset=\"%s\"", fmt_bit(w, numa));
		fprintf(w->out, " complete_nodeset=\"%s\" gp_index=\"%lu\"/>\n", fmt_bit(w, numa),
			w->gp++);
	}
	indent(w, d + 2);
	fputs("</object>\n", w->out);
	indent(w, d + 1);
	fputs("</object>\n", w->out);
	indent(w, d);
	fputs("</object>\n", w->out);
}

/* One NUMA node's memory, caches, cores and local I/O, below `d`. */
static void write_numa_contents(struct wr *w, int numa, int d)
{
	const struct rb_machine *m = w->m;
	int C = m->cores_per_numa, K = m->l3_per_numa, first = numa * C;

	write_numanode(w, numa, first, C, d);
	for (int k = 0, c = first; k < K; k++) {
		int count = C / K + (k < C % K);

		indent(w, d);
		fputs("<object type=\"L3Cache\"", w->out);
		sets(w, c, count, numa, 1);
		fprintf(w->out, " gp_index=\"%lu\" cache_size=\"%d\" depth=\"3\" cache_linesize=\"64\" cache_associativity=\"16\" cache_type=\"0\">\n",
			w->gp++, count * 2 * 1024 * 1024);
		for (int i = 0; i < count; i++)
			write_core(w, c + i, numa, d + 1);
		c += count;
		indent(w, d);
		fputs("</object>\n", w->out);
	}
	write_local_io(w, numa, d);
}

static bool any_nvidia(const struct rb_node *n)
{
	for (; n; n = n->next)
		if ((n->kind == RB_GPU && n->vendor == 0x10de) || any_nvidia(n->child))
			return true;
	return false;
}

int rb_write_xml(const struct rb_machine *m, FILE *out)
{
	int N = m->numa_per_package, C = m->cores_per_numa;
	int ncpu = rb_nr_cpu_numa(m), nnuma = rb_nr_numa(m);
	struct wr w = { .m = m, .out = out, .gp = 1 };
	int nwords;

	w.total_cores = ncpu * C;
	nwords = (w.total_cores * m->smt + 31) / 32;
	if ((nnuma + 31) / 32 > nwords)
		nwords = (nnuma + 31) / 32;
	w.nwords = nwords;
	w.set = rb_xmalloc(sizeof(*w.set) * (size_t)nwords);
	w.buf = rb_xmalloc((size_t)nwords * 11 + 8);

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	      "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
	      "<topology version=\"2.0\">\n", out);
	fputs("  <object type=\"Machine\" os_index=\"0\"", out);
	sets(&w, 0, w.total_cores, 0, nnuma);
	cores_set(&w, 0, w.total_cores);
	fprintf(out, " allowed_cpuset=\"%s\"", fmt_set(&w, w.set, nwords));
	memset(w.set, 0, sizeof(*w.set) * (size_t)nwords);
	for (int i = 0; i < nnuma; i++)
		w.set[i / 32] |= 1u << (i % 32);
	fprintf(out, " allowed_nodeset=\"%s\" gp_index=\"%lu\">\n", fmt_set(&w, w.set, nwords),
		w.gp++);
	info(&w, 2, "HostName", m->hostname);
	if (m->cpu_vendor)
		info(&w, 2, "Architecture", "x86_64");
	info(&w, 2, "RailbindGenerator", "rbgen");
	info(&w, 2, "RailbindPeerMemory", m->peer_memory ? m->peer_memory :
				any_nvidia(m->roots) ? "nvidia_peermem" : "none");
	info(&w, 2, "RailbindKmod", m->kmod ? m->kmod : "absent");
	if (m->kernel)
		info(&w, 2, "RailbindKernel", m->kernel);
	if (m->gpu_driver)
		info(&w, 2, "RailbindGPUDriver", m->gpu_driver);

	/* CPU-less NUMA nodes (CXL, GPU memory) hang off the machine, as on Linux */
	for (int i = ncpu; i < nnuma; i++)
		write_numanode(&w, i, 0, 0, 2);
	for (int p = 0; p < m->packages; p++) {
		fprintf(out, "    <object type=\"Package\" os_index=\"%d\"", p);
		sets(&w, p * N * C, N * C, p * N, N);
		fprintf(out, " gp_index=\"%lu\">\n", w.gp++);
		info(&w, 3, "CPUModel", "rbgen synthetic CPU");
		if (m->cpu_vendor) {
			info(&w, 3, "CPUVendor", m->cpu_vendor);
			infof(&w, 3, "CPUFamilyNumber", "%d", m->cpu_family);
			infof(&w, 3, "CPUModelNumber", "%d", m->cpu_model);
		}
		for (int n = p * N; n < (p + 1) * N; n++) {
			if (N == 1) {
				write_numa_contents(&w, n, 3);
				continue;
			}
			/* several NUMA nodes per package: hwloc's memory Group */
			fputs("      <object type=\"Group\"", out);
			sets(&w, n * C, C, n, 1);
			fprintf(out, " gp_index=\"%lu\" kind=\"1001\" subkind=\"0\">\n", w.gp++);
			write_numa_contents(&w, n, 4);
			fputs("      </object>\n", out);
		}
		fputs("    </object>\n", out);
	}
	write_local_io(&w, -1, 2);
	fputs("  </object>\n</topology>\n", out);
	free(w.set);
	free(w.buf);
	return ferror(out) ? -1 : 0;
}
