// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Discovery against a fake ${root}: the test writes its own sysfs/procfs tree and a
 * small hwloc XML topology (host bridge, two root ports, a GPU, a NIC with an
 * OpenFabrics device), annotates, and checks every Railbind* info and the report.
 * A recorded hwloc test tarball, when present, exercises aff_discover_live() through
 * hwloc's HWLOC_FSROOT machinery.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <hwloc.h>

#include "source_live.h"

static const char topo_xml[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
	"<topology version=\"2.0\">\n"
	" <object type=\"Machine\" os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\""
	" allowed_cpuset=\"0x00000003\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\""
	" allowed_nodeset=\"0x00000001\" gp_index=\"1\">\n"
	"  <object type=\"Package\" os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\""
	" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"2\">\n"
	"   <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\""
	" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" local_memory=\"1073741824\" gp_index=\"3\"/>\n"
	"   <object type=\"Core\" os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\""
	" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"4\">\n"
	"    <object type=\"PU\" os_index=\"0\" cpuset=\"0x00000001\" complete_cpuset=\"0x00000001\""
	" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"5\"/>\n"
	"    <object type=\"PU\" os_index=\"1\" cpuset=\"0x00000002\" complete_cpuset=\"0x00000002\""
	" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" gp_index=\"6\"/>\n"
	"   </object>\n"
	"   <object type=\"Bridge\" gp_index=\"10\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"0000:[00-02]\">\n"
	"    <object type=\"Bridge\" gp_index=\"11\" bridge_type=\"1-1\" depth=\"1\" bridge_pci=\"0000:[01-01]\""
	" pci_busid=\"0000:00:01.0\" pci_type=\"0604 [8086:2f02] [0000:0000] 02\" pci_link_speed=\"0.000000\">\n"
	"     <object type=\"PCIDev\" gp_index=\"12\" pci_busid=\"0000:01:00.0\""
	" pci_type=\"0302 [10de:2330] [10de:16c1] a1\" pci_link_speed=\"63.015625\"/>\n"
	"    </object>\n"
	"    <object type=\"Bridge\" gp_index=\"13\" bridge_type=\"1-1\" depth=\"1\" bridge_pci=\"0000:[02-02]\""
	" pci_busid=\"0000:00:02.0\" pci_type=\"0604 [8086:2f04] [0000:0000] 02\" pci_link_speed=\"0.000000\">\n"
	"     <object type=\"PCIDev\" gp_index=\"14\" pci_busid=\"0000:02:00.0\""
	" pci_type=\"0207 [15b3:1021] [15b3:0041] 00\" pci_link_speed=\"63.015625\">\n"
	"      <object type=\"OSDev\" gp_index=\"15\" name=\"mlx5_0\" subtype=\"OpenFabrics\" osdev_type=\"3\"/>\n"
	"     </object>\n"
	"    </object>\n"
	"   </object>\n"
	"  </object>\n"
	" </object>\n"
	"</topology>\n";

#define PORT1 "0000:00:01.0"
#define PORT2 "0000:00:02.0"
#define GPU "0000:01:00.0"
#define NIC "0000:02:00.0"
#define ACS_CTL 0x001d
#define NV_OPEN_535 "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  535.104.05  Release Build  (dvs-builder@U16-T02-35-3)  Sat Aug 19 01:13:49 UTC 2023\nGCC version:  gcc version 12.2.0\n"
#define NV_OPEN_510 "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  510.39.01  Release Build  (dvs-builder@U16-T02-35-3)\n"
#define NV_PROP_535 "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n"

struct fixture {
	char dir[PATH_MAX];	/* the fake root */
	hwloc_topology_t topo;
};

/* ---- fake tree helpers ---- */

static void mkdirs(const char *path)
{
	char tmp[PATH_MAX];
	char *p;

	assert_true(strlen(path) < sizeof(tmp));
	strcpy(tmp, path);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0)
			assert_int_equal(errno, EEXIST);
		*p = '/';
	}
	if (mkdir(tmp, 0755) < 0)
		assert_int_equal(errno, EEXIST);
}

static void put_bytes(const char *root, const char *rel, const void *data, size_t len)
{
	char path[PATH_MAX];
	char *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	slash = strrchr(path, '/');
	*slash = '\0';
	mkdirs(path);
	*slash = '/';
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void put(const char *root, const char *rel, const char *text)
{
	put_bytes(root, rel, text, strlen(text));
}

static void put_rm(const char *root, const char *rel)
{
	char path[PATH_MAX];

	assert_true(snprintf(path, sizeof(path), "%s/%s", root, rel) < (int)sizeof(path));
	assert_int_equal(unlink(path), 0);
}

static void put_dir(const char *root, const char *rel)
{
	char path[PATH_MAX];

	assert_true(snprintf(path, sizeof(path), "%s/%s", root, rel) < (int)sizeof(path));
	mkdirs(path);
}

static void put_link(const char *root, const char *rel, const char *target)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(symlink(target, path), 0);
}

static void put_pci(const char *root, const char *bdf, const char *file, const char *text)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/%s", bdf, file);
	put(root, rel, text);
}

static void cfg_hdr(uint8_t *cfg, size_t pos, uint16_t id, uint16_t next)
{
	uint32_t v = (uint32_t)id | 1u << 16 | (uint32_t)next << 20;

	cfg[pos] = v & 0xff;
	cfg[pos + 1] = (v >> 8) & 0xff;
	cfg[pos + 2] = (v >> 16) & 0xff;
	cfg[pos + 3] = v >> 24;
}

static void build_tree(const char *root)
{
	uint8_t cfg[4096] = { 0 };
	char rel[256];

	/* Root port 1: everything readable, ACS at the end of a three-entry chain. */
	put_pci(root, PORT1, "current_link_speed", "16.0 GT/s PCIe\n");
	put_pci(root, PORT1, "max_link_speed", "16.0 GT/s PCIe\n");
	put_pci(root, PORT1, "current_link_width", "16\n");
	put_pci(root, PORT1, "max_link_width", "16\n");
	put_pci(root, PORT1, "numa_node", "0\n");
	put(root, "sys/kernel/iommu_groups/7/type", "DMA-FQ\n");
	put_link(root, "sys/bus/pci/devices/" PORT1 "/iommu_group",
		 "../../../../kernel/iommu_groups/7");
	cfg_hdr(cfg, 0x100, 0x0001, 0x148);
	cfg_hdr(cfg, 0x148, 0x0019, 0x220);
	cfg_hdr(cfg, 0x220, 0x000d, 0);
	cfg[0x226] = ACS_CTL & 0xff;
	cfg[0x227] = ACS_CTL >> 8;
	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/config", PORT1);
	put_bytes(root, rel, cfg, sizeof(cfg));

	/* Root port 2: what an unprivileged reader sees (64 bytes), IOMMU type missing. */
	put_pci(root, PORT2, "current_link_speed", "8 GT/s\n");	/* pre-5.x spelling */
	put_pci(root, PORT2, "max_link_speed", "8 GT/s\n");
	put_pci(root, PORT2, "current_link_width", "8\n");
	put_pci(root, PORT2, "max_link_width", "8\n");
	put_pci(root, PORT2, "numa_node", "1\n");
	put_dir(root, "sys/bus/pci/devices/" PORT2 "/iommu_group");
	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/config", PORT2);
	put_bytes(root, rel, cfg, 64);

	/* GPU: downtrained x8 of x16, unknown locality, identity-mapped. */
	put_pci(root, GPU, "current_link_speed", "32.0 GT/s PCIe\n");
	put_pci(root, GPU, "max_link_speed", "32.0 GT/s PCIe\n");
	put_pci(root, GPU, "current_link_width", "8\n");
	put_pci(root, GPU, "max_link_width", "16\n");
	put_pci(root, GPU, "numa_node", "-1\n");
	put_pci(root, GPU, "iommu_group/type", "identity\n");

	/* NIC: link speed unknown, no numa_node file, no IOMMU group. */
	put_pci(root, NIC, "current_link_speed", "Unknown\n");
	put_pci(root, NIC, "max_link_speed", "16.0 GT/s PCIe\n");
	put_pci(root, NIC, "current_link_width", "16\n");
	put_pci(root, NIC, "max_link_width", "16\n");
	put(root, "sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
	put(root, "sys/class/infiniband/mlx5_0/ports/1/rate", "400 Gb/sec (4X NDR)\n");
	put(root, "sys/class/infiniband/mlx5_0/ports/2/state", "1: DOWN\n");
	put(root, "sys/class/infiniband/mlx5_0/ports/2/rate", "2.5 Gb/sec (1X SDR)\n");

	put_dir(root, "sys/module/nvidia_peermem");
	put(root, "sys/module/railbind/version", "0.3.1\n");
	put(root, "proc/sys/kernel/hostname", "gpu-node-17\n");
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	/* chmod back first: a test may leave a read-only directory behind. */
	chmod(path, 0700);
	return remove(path);
}

static void rm_tree(const char *dir)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void make_tmpdir(char *buf, size_t len)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(buf, len, "%s/railbind-discover.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	assert_non_null(mkdtemp(buf));
}

static hwloc_topology_t load_xml(const char *xml, int len)
{
	hwloc_topology_t topo;

	assert_int_equal(hwloc_topology_init(&topo), 0);
	assert_int_equal(hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL), 0);
	assert_int_equal(hwloc_topology_set_xmlbuffer(topo, xml, len), 0);
	assert_int_equal(hwloc_topology_load(topo), 0);
	return topo;
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	make_tmpdir(fx->dir, sizeof(fx->dir));
	build_tree(fx->dir);
	fx->topo = load_xml(topo_xml, (int)sizeof(topo_xml));
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	hwloc_topology_destroy(fx->topo);
	rm_tree(fx->dir);
	free(fx);
	return 0;
}

/* ---- topology helpers ---- */

static hwloc_obj_t pci_obj(hwloc_topology_t topo, const char *busid)
{
	unsigned dom, bus, dev, fn;
	hwloc_obj_t obj;

	assert_int_equal(sscanf(busid, "%x:%x:%x.%x", &dom, &bus, &dev, &fn), 4);
	obj = hwloc_get_pcidev_by_busid(topo, dom, bus, dev, fn);
	if (!obj) {
		for (obj = NULL; (obj = hwloc_get_next_bridge(topo, obj));) {
			struct hwloc_pcidev_attr_s *p = &obj->attr->bridge.upstream.pci;

			if (obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI &&
			    p->domain == dom && p->bus == bus && p->dev == dev && p->func == fn)
				break;
		}
	}
	assert_non_null(obj);
	return obj;
}

static hwloc_obj_t ofed_obj(hwloc_topology_t topo, const char *name)
{
	hwloc_obj_t obj;

	for (obj = NULL; (obj = hwloc_get_next_osdev(topo, obj));)
		if (obj->name && !strcmp(obj->name, name))
			return obj;
	fail_msg("no OS device %s", name);
	return NULL;
}

static const char *info(hwloc_obj_t obj, const char *name)
{
	return hwloc_obj_get_info_by_name(obj, name);
}

static const char *info_or_empty(hwloc_obj_t obj, const char *name)
{
	const char *v = info(obj, name);

	return v ? v : "";
}

static unsigned info_count(hwloc_obj_t obj, const char *name)
{
	unsigned i, n = 0;

	for (i = 0; i < obj->infos_count; i++)
		n += !strcmp(obj->infos[i].name, name);
	return n;
}

static void assert_info(hwloc_obj_t obj, const char *name, const char *want)
{
	const char *got = info(obj, name);

	if (!want) {
		if (got)
			fail_msg("%s: unexpected %s=%s", obj->name ? obj->name : "?", name, got);
		return;
	}
	if (!got)
		fail_msg("%s: missing %s (want %s)", obj->name ? obj->name : "?", name, want);
	assert_string_equal(got, want);
}

/* Every expectation of the fake tree; also used on a reloaded snapshot. */
static void assert_fake_tree_infos(hwloc_topology_t topo)
{
	hwloc_obj_t port1 = pci_obj(topo, PORT1), port2 = pci_obj(topo, PORT2);
	hwloc_obj_t gpu = pci_obj(topo, GPU), nic = pci_obj(topo, NIC);
	hwloc_obj_t ib = ofed_obj(topo, "mlx5_0"), machine = hwloc_get_root_obj(topo);
	hwloc_obj_t hostbridge = hwloc_get_next_bridge(topo, NULL);

	assert_info(port1, AFF_INFO_LINK_SPEED, "16.0");
	assert_info(port1, AFF_INFO_LINK_SPEED_CAP, "16.0");
	assert_info(port1, AFF_INFO_LINK_WIDTH, "16");
	assert_info(port1, AFF_INFO_LINK_WIDTH_CAP, "16");
	assert_info(port1, AFF_INFO_NUMA_NODE, "0");
	assert_info(port1, AFF_INFO_IOMMU_GROUP_TYPE, "DMA-FQ");
	assert_info(port1, AFF_INFO_ACS_CTL, "0x001d");

	assert_info(port2, AFF_INFO_LINK_SPEED, "8.0");
	assert_info(port2, AFF_INFO_LINK_WIDTH_CAP, "8");
	assert_info(port2, AFF_INFO_NUMA_NODE, "1");
	assert_info(port2, AFF_INFO_IOMMU_GROUP_TYPE, NULL);
	assert_info(port2, AFF_INFO_ACS_CTL, NULL);

	assert_info(gpu, AFF_INFO_LINK_SPEED, "32.0");
	assert_info(gpu, AFF_INFO_LINK_SPEED_CAP, "32.0");
	assert_info(gpu, AFF_INFO_LINK_WIDTH, "8");
	assert_info(gpu, AFF_INFO_LINK_WIDTH_CAP, "16");
	assert_info(gpu, AFF_INFO_NUMA_NODE, "-1");
	assert_info(gpu, AFF_INFO_IOMMU_GROUP_TYPE, "identity");
	assert_info(gpu, AFF_INFO_ACS_CTL, NULL);	/* endpoints are not ports */

	assert_info(nic, AFF_INFO_LINK_SPEED, NULL);	/* "Unknown" */
	assert_info(nic, AFF_INFO_LINK_SPEED_CAP, "16.0");
	assert_info(nic, AFF_INFO_LINK_WIDTH, "16");
	assert_info(nic, AFF_INFO_NUMA_NODE, NULL);
	assert_info(nic, AFF_INFO_IOMMU_GROUP_TYPE, NULL);

	assert_info(ib, "RailbindPort1State", "ACTIVE");
	assert_info(ib, "RailbindPort1Rate", "400");
	assert_info(ib, "RailbindPort2State", "DOWN");
	assert_info(ib, "RailbindPort2Rate", "2.5");
	assert_info(ib, "RailbindPort3State", NULL);

	/* The host bridge has no sysfs device: nothing is attached to it. */
	assert_non_null(hostbridge);
	assert_int_equal(hostbridge->attr->bridge.upstream_type, HWLOC_OBJ_BRIDGE_HOST);
	assert_info(hostbridge, AFF_INFO_NUMA_NODE, NULL);

	assert_int_equal(machine->type, HWLOC_OBJ_MACHINE);
	assert_info(machine, AFF_INFO_SNAPSHOT_VERSION, "1");
	assert_info(machine, AFF_INFO_HOSTNAME, "gpu-node-17");
	assert_info(machine, AFF_INFO_KMOD, "0.3.1");
	assert_info(machine, AFF_INFO_PEER_MEMORY, "nvidia_peermem");
}

/* ---- annotate ---- */

static void annotate_all_attributes(void **state)
{
	struct fixture *fx = *state;
	struct aff_discover_report rep;

	memset(&rep, 0xa5, sizeof(rep));
	assert_int_equal(aff_discover_annotate(fx->topo, fx->dir, &rep), 0);
	assert_fake_tree_infos(fx->topo);
	assert_int_equal(rep.acs_unreadable, 1);	/* port 2: 64-byte config */
	assert_int_equal(rep.link_unreadable, 1);	/* NIC: "Unknown" speed */
	assert_int_equal(rep.numa_unreadable, 1);	/* NIC: no numa_node */
	assert_int_equal(rep.iommu_unreadable, 1);	/* port 2: group without type */
	assert_non_null(strstr(rep.note, "ACS"));
	assert_non_null(strstr(rep.note, "NUMA"));
	assert_non_null(memchr(rep.note, '\0', sizeof(rep.note)));
	assert_null(strchr(rep.note, '\n'));
}

static void annotate_trailing_slash_root(void **state)
{
	struct fixture *fx = *state;
	char root[PATH_MAX + 2];

	snprintf(root, sizeof(root), "%s//", fx->dir);
	assert_int_equal(aff_discover_annotate(fx->topo, root, NULL), 0);
	assert_fake_tree_infos(fx->topo);
}

static void annotate_is_idempotent(void **state)
{
	struct fixture *fx = *state;
	struct aff_discover_report rep1, rep2;
	unsigned before[6], i = 0;
	hwloc_obj_t objs[6];

	objs[0] = pci_obj(fx->topo, PORT1);
	objs[1] = pci_obj(fx->topo, PORT2);
	objs[2] = pci_obj(fx->topo, GPU);
	objs[3] = pci_obj(fx->topo, NIC);
	objs[4] = ofed_obj(fx->topo, "mlx5_0");
	objs[5] = hwloc_get_root_obj(fx->topo);

	assert_int_equal(aff_discover_annotate(fx->topo, fx->dir, &rep1), 0);
	for (i = 0; i < 6; i++)
		before[i] = objs[i]->infos_count;
	/* Change a value on disk: the recorded one must stay, not be duplicated. */
	put_pci(fx->dir, GPU, "numa_node", "3\n");
	assert_int_equal(aff_discover_annotate(fx->topo, fx->dir, &rep2), 0);
	for (i = 0; i < 6; i++) {
		unsigned j;

		assert_int_equal(objs[i]->infos_count, before[i]);
		for (j = 0; j < objs[i]->infos_count; j++)
			assert_int_equal(info_count(objs[i], objs[i]->infos[j].name), 1);
	}
	assert_info(objs[2], AFF_INFO_NUMA_NODE, "-1");
	/* What was missing is looked for again, and still missing. */
	assert_int_equal(rep2.numa_unreadable, 1);
	assert_int_equal(rep2.acs_unreadable, 1);
	assert_fake_tree_infos(fx->topo);
}

static void missing_files_counted(void **state)
{
	struct fixture *fx = *state;
	struct aff_discover_report rep;
	hwloc_obj_t gpu;

	rm_tree(fx->dir);	/* the root is gone: nothing at all is readable */
	assert_int_equal(aff_discover_annotate(fx->topo, fx->dir, &rep), 0);
	gpu = pci_obj(fx->topo, GPU);
	assert_info(gpu, AFF_INFO_NUMA_NODE, NULL);
	assert_info(gpu, AFF_INFO_LINK_WIDTH_CAP, NULL);
	assert_info(gpu, AFF_INFO_IOMMU_GROUP_TYPE, NULL);
	assert_int_equal(rep.numa_unreadable, 4);
	assert_int_equal(rep.link_unreadable, 4);
	assert_int_equal(rep.acs_unreadable, 2);
	assert_int_equal(rep.iommu_unreadable, 0);	/* no group: not an error */
	assert_info(hwloc_get_root_obj(fx->topo), AFF_INFO_KMOD, "absent");
	assert_info(hwloc_get_root_obj(fx->topo), AFF_INFO_PEER_MEMORY, "none");
	assert_info(hwloc_get_root_obj(fx->topo), AFF_INFO_HOSTNAME, NULL);
	assert_info(hwloc_get_root_obj(fx->topo), AFF_INFO_SNAPSHOT_VERSION, "1");
	assert_info(ofed_obj(fx->topo, "mlx5_0"), "RailbindPort1State", NULL);
}

static void partial_missing_files(void **state)
{
	struct fixture *fx = *state;
	struct aff_discover_report rep;
	hwloc_obj_t gpu;

	put_rm(fx->dir, "sys/bus/pci/devices/" GPU "/numa_node");
	put_rm(fx->dir, "sys/bus/pci/devices/" GPU "/max_link_width");
	put_pci(fx->dir, PORT1, "current_link_width", "wide\n");
	/* Port 2 as a conventional PCI bridge: no link files at all, nothing to count. */
	put_rm(fx->dir, "sys/bus/pci/devices/" PORT2 "/current_link_speed");
	put_rm(fx->dir, "sys/bus/pci/devices/" PORT2 "/max_link_speed");
	put_rm(fx->dir, "sys/bus/pci/devices/" PORT2 "/current_link_width");
	put_rm(fx->dir, "sys/bus/pci/devices/" PORT2 "/max_link_width");
	assert_int_equal(aff_discover_annotate(fx->topo, fx->dir, &rep), 0);
	assert_info(pci_obj(fx->topo, PORT2), AFF_INFO_LINK_SPEED, NULL);
	assert_info(pci_obj(fx->topo, PORT2), AFF_INFO_LINK_WIDTH_CAP, NULL);
	assert_info(pci_obj(fx->topo, PORT2), AFF_INFO_NUMA_NODE, "1");
	gpu = pci_obj(fx->topo, GPU);
	assert_info(gpu, AFF_INFO_NUMA_NODE, NULL);
	assert_info(gpu, AFF_INFO_LINK_WIDTH_CAP, NULL);
	assert_info(gpu, AFF_INFO_LINK_WIDTH, "8");
	assert_info(pci_obj(fx->topo, PORT1), AFF_INFO_LINK_WIDTH, NULL);
	assert_int_equal(rep.numa_unreadable, 2);	/* GPU + NIC */
	assert_int_equal(rep.link_unreadable, 3);	/* GPU + NIC + port 1 */
}

static void kmod_loaded_without_version(void **state)
{
	struct fixture *fx = *state;

	put_rm(fx->dir, "sys/module/railbind/version");
	assert_int_equal(aff_discover_annotate(fx->topo, fx->dir, NULL), 0);
	assert_info(hwloc_get_root_obj(fx->topo), AFF_INFO_KMOD, "unknown");
}

/* A config space with the PCI Express capability saying @type. */
static void put_port_config(const char *root, const char *bdf, int type, size_t len)
{
	uint8_t cfg[256] = { 0 };
	char rel[256];

	cfg[0] = 0x86;
	cfg[1] = 0x80;
	cfg[0x06] = 0x10;		/* status: capability list */
	cfg[0x0e] = 0x01;		/* PCI-to-PCI bridge header */
	cfg[0x34] = 0x40;
	cfg[0x40] = 0x10;		/* PCI Express */
	cfg[0x42] = (uint8_t)(0x02 | type << 4);
	snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/config", bdf);
	put_bytes(root, rel, cfg, len);
}

static void port_types(void **state)
{
	struct fixture *fx = *state;
	hwloc_obj_t port1, port2, gpu;

	/* Port 1 readable: a root port. Port 2 gives 64 bytes: the module says. */
	put_port_config(fx->dir, PORT1, 0x4, 256);
	put_port_config(fx->dir, PORT2, 0x4, 64);
	put(fx->dir, "dev/railbind",
	    "railbind format=1 version=0.3.1\n"
	    "dev pci=" PORT2 " kind=bridge type=downstream acs_ctl=-\n"
	    "dev pci=" GPU " kind=gpu type=endpoint acs_ctl=-\n"
	    "end records=4\n");
	assert_int_equal(aff_discover_annotate(fx->topo, fx->dir, NULL), 0);
	port1 = pci_obj(fx->topo, PORT1);
	port2 = pci_obj(fx->topo, PORT2);
	gpu = pci_obj(fx->topo, GPU);
	assert_info(port1, AFF_INFO_PORT_TYPE, "root");
	assert_info(port2, AFF_INFO_PORT_TYPE, "downstream");
	/* No config file for the GPU here: the module's word. */
	assert_info(gpu, AFF_INFO_PORT_TYPE, "endpoint");
	/* The NIC: neither config space nor a module record. */
	assert_info(pci_obj(fx->topo, NIC), AFF_INFO_PORT_TYPE, NULL);
}

/*
 * gdr-readiness's facts: Device Control (MPS, MRRS, Relaxed Ordering), the
 * ATS capability where the extended space is readable, BAR1 from
 * "resource", the kernel release and the NVIDIA driver's flavour.
 */
/*
 * The NIC's VPD V3 (its Data Direct pairing key) becomes RailbindVPDUUID; a
 * vpd that cannot be read (root-only: a directory stands for it here, as
 * root reads a mode-0 file) is named in RailbindUnreadable; a GPU's is
 * never read.
 */
static void vpd_uuid(void **state)
{
	struct fixture *fx = *state;
	static const uint8_t vpd[] = {
		0x82, 0x02, 0x00, 'C', 'X',
		0x90, 0x2b, 0x00, 'V', '3', 0x24,
		'1', '2', '3', '4', '5', '6', '7', '8', '-', 'a', 'b', 'c', 'd', '-',
		'0', '0', '0', '0', '-', '1', '1', '1', '1', '-', '9', '9', '9', '9',
		'8', '8', '8', '8', '7', '7', '7', '7', 'R', 'V', 0x01, 0x00,
		0x78,
	};

	put_bytes(fx->dir, "sys/bus/pci/devices/" NIC "/vpd", vpd, sizeof(vpd));
	put_bytes(fx->dir, "sys/bus/pci/devices/" GPU "/vpd", vpd, sizeof(vpd));
	assert_int_equal(aff_discover_annotate(fx->topo, fx->dir, NULL), 0);
	assert_info(pci_obj(fx->topo, NIC), AFF_INFO_VPD_UUID,
		    "12345678-abcd-0000-1111-999988887777");
	assert_info(pci_obj(fx->topo, GPU), AFF_INFO_VPD_UUID, NULL);
	assert_false(strstr(info_or_empty(pci_obj(fx->topo, NIC), AFF_INFO_UNREADABLE), "vpd"));
}

static void vpd_unreadable(void **state)
{
	struct fixture *fx = *state;

	put_dir(fx->dir, "sys/bus/pci/devices/" NIC "/vpd");
	assert_int_equal(aff_discover_annotate(fx->topo, fx->dir, NULL), 0);
	assert_info(pci_obj(fx->topo, NIC), AFF_INFO_VPD_UUID, NULL);
	assert_non_null(strstr(info_or_empty(pci_obj(fx->topo, NIC), AFF_INFO_UNREADABLE), "vpd"));
}

static void gdr_settings(void **state)
{
	struct fixture *fx = *state;
	uint8_t cfg[4096] = { 0x86, 0x80 };
	hwloc_obj_t gpu, nic, port1, machine;

	cfg[0x06] = 0x10;		/* status: capability list */
	cfg[0x34] = 0x40;
	cfg[0x40] = 0x10;		/* PCI Express, an endpoint */
	cfg[0x48] = 0x30;		/* Device Control: RO on, MPS 256 (1 << 5) */
	cfg[0x49] = 0x20;		/* MRRS 512 (2 << 12) */
	put_bytes(fx->dir, "sys/bus/pci/devices/" GPU "/config", cfg, 256);
	put(fx->dir, "sys/bus/pci/devices/" GPU "/resource",
	    "0x00000000fa000000 0x00000000faffffff 0x0000000000040200\n"
	    "0x0000038000000000 0x000003800fffffff 0x000000000014220c\n"
	    "0x0000000000000000 0x0000000000000000 0x0000000000000000\n");
	cfg[0x48] = 0x00;		/* RO off, MPS 128 */
	cfg[0x49] = 0x00;		/* MRRS 128 */
	cfg_hdr(cfg, 0x100, 0x000f, 0);	/* ATS */
	put_bytes(fx->dir, "sys/bus/pci/devices/" NIC "/config", cfg, sizeof(cfg));
	put(fx->dir, "proc/sys/kernel/osrelease", "6.12.9-amd64\n");
	put(fx->dir, "proc/driver/nvidia/version", NV_OPEN_535);
	assert_int_equal(aff_discover_annotate(fx->topo, fx->dir, NULL), 0);
	gpu = pci_obj(fx->topo, GPU);
	nic = pci_obj(fx->topo, NIC);
	port1 = pci_obj(fx->topo, PORT1);
	machine = hwloc_get_root_obj(fx->topo);
	assert_info(gpu, AFF_INFO_MPS, "256");
	assert_info(gpu, AFF_INFO_MRRS, "512");
	assert_info(gpu, AFF_INFO_RELAXED, "1");
	assert_info(gpu, AFF_INFO_ATS, NULL);	/* 256 bytes: the extended space is unknown */
	assert_info(gpu, AFF_INFO_BAR1, "268435456");
	assert_info(nic, AFF_INFO_MPS, "128");
	assert_info(nic, AFF_INFO_MRRS, "128");
	assert_info(nic, AFF_INFO_RELAXED, "0");
	assert_info(nic, AFF_INFO_ATS, "1");
	assert_info(nic, AFF_INFO_BAR1, NULL);	/* not a GPU */
	assert_info(port1, AFF_INFO_MPS, NULL);	/* no PCI Express capability */
	assert_info(machine, AFF_INFO_KERNEL, "6.12.9-amd64");
	assert_info(machine, AFF_INFO_GPU_DRIVER, "open");
}

static void port_type_conventional(void **state)
{
	struct fixture *fx = *state;
	uint8_t cfg[256] = { 0x86, 0x80 };

	/* A bridge header without a capability list: conventional PCI. */
	cfg[0x0e] = 0x01;
	put_bytes(fx->dir, "sys/bus/pci/devices/" PORT1 "/config", cfg, sizeof(cfg));
	assert_int_equal(aff_discover_annotate(fx->topo, fx->dir, NULL), 0);
	assert_info(pci_obj(fx->topo, PORT1), AFF_INFO_PORT_TYPE, "bridge");
}

/* A FIFO planted as a config space reads as empty, at once: the module's word stands. */
static void port_type_fifo_config(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX];

	put_rm(fx->dir, "sys/bus/pci/devices/" PORT2 "/config");
	assert_true(snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/" PORT2 "/config",
			     fx->dir) < (int)sizeof(path));
	assert_int_equal(mkfifo(path, 0644), 0);
	put(fx->dir, "dev/railbind",
	    "railbind format=1 version=0.3.1\n"
	    "dev pci=" PORT2 " kind=bridge type=downstream acs_ctl=-\n"
	    "end records=3\n");
	alarm(5);
	assert_int_equal(aff_discover_annotate(fx->topo, fx->dir, NULL), 0);
	alarm(0);
	assert_info(pci_obj(fx->topo, PORT2), AFF_INFO_PORT_TYPE, "downstream");
}

/*
 * Health: the kernel's AER totals (plus what railbindd counted before a
 * removal), the NIC port's own counters, railbindd's link and port changes of
 * this boot, the uptime; nothing of railbindd's from another boot.
 */
static void annotate_health(void **state)
{
	struct fixture *fx = *state;
	hwloc_obj_t mach = hwloc_get_root_obj(fx->topo), nic = pci_obj(fx->topo, NIC);
	hwloc_obj_t gpu = pci_obj(fx->topo, GPU), ofed = ofed_obj(fx->topo, "mlx5_0");

	put_pci(fx->dir, NIC, "aer_dev_correctable", "RxErr 7\nBadTLP 0\nTOTAL_ERR_COR 7\n");
	put_pci(fx->dir, NIC, "aer_dev_nonfatal", "CmpltTO 1\nTOTAL_ERR_NONFATAL 1\n");
	put_pci(fx->dir, NIC, "aer_dev_fatal", "DLP 0\nTOTAL_ERR_FATAL 0\n");
	put(fx->dir, "sys/class/infiniband/mlx5_0/ports/1/counters/link_downed", "3\n");
	put(fx->dir, "sys/class/infiniband/mlx5_0/ports/1/counters/link_error_recovery", "1\n");
	put(fx->dir, "proc/uptime", "1234.56 789.00\n");
	put(fx->dir, "proc/sys/kernel/random/boot_id", "0b0b0b0b-1111-2222-3333-444444444444\n");
	put(fx->dir, "run/railbind/counters.json",
	    "{\"schema\":\"railbind.counters/1\",\"source\":\"broker\","
	    "\"boot_id\":\"0b0b0b0b-1111-2222-3333-444444444444\",\"since\":1700000000,"
	    "\"updated\":1700000100,\"links\":["
	    "{\"pci\":\"" GPU "\",\"speed\":32.0,\"width\":8,\"gpu_link\":true,"
	    "\"present\":true,\"changes\":4,\"speed_idle\":9},"
	    "{\"pci\":\"" NIC "\",\"speed\":16.0,\"width\":16,\"present\":true,"
	    "\"changes\":0,\"aer\":[7,1,0],\"aer_base\":[2,0,0]}],"
	    "\"ports\":[{\"name\":\"mlx5_0\",\"port\":1,\"state\":\"ACTIVE\","
	    "\"present\":true,\"changes\":2,\"downs\":1}]}\n");
	assert_int_equal(aff_discover_annotate(fx->topo, fx->dir, NULL), 0);
	assert_info(nic, "RailbindAerCorrectable", "9");
	assert_info(nic, "RailbindAerNonFatal", "1");
	assert_info(nic, "RailbindAerFatal", "0");
	assert_info(nic, "RailbindLinkChanges", "0");
	assert_info(gpu, "RailbindAerCorrectable", NULL);
	assert_info(gpu, "RailbindLinkChanges", "4");
	assert_info(ofed, "RailbindPort1LinkDowned", "3");
	assert_info(ofed, "RailbindPort1ErrorRecovery", "1");
	assert_info(ofed, "RailbindPort1Changes", "2");
	assert_info(ofed, "RailbindPort1Downs", "1");
	assert_info(ofed, "RailbindPort2LinkDowned", NULL);
	assert_info(mach, "RailbindUptime", "1234");
	assert_info(mach, "RailbindCounters", "broker");
	assert_info(mach, "RailbindCountersSince", "1700000000");
}

/* railbindd's counters of boot 0b0b0b0b-...: since @since, GPU's link changed @changes times. */
static void put_counters(const char *root, const char *rel, int since, int changes)
{
	char text[512];

	snprintf(text, sizeof(text),
		 "{\"schema\":\"railbind.counters/1\",\"source\":\"broker\","
		 "\"boot_id\":\"0b0b0b0b-1111-2222-3333-444444444444\",\"since\":%d,\"updated\":%d,"
		 "\"links\":[{\"pci\":\"" GPU "\",\"width\":8,\"present\":true,\"changes\":%d}],"
		 "\"ports\":[]}\n", since, since + 1, changes);
	put(root, rel, text);
}

static void annotate_health_other_boot(void **state)
{
	struct fixture *fx = *state;
	hwloc_obj_t gpu = pci_obj(fx->topo, GPU);

	put(fx->dir, "proc/sys/kernel/random/boot_id", "99999999-1111-2222-3333-444444444444\n");
	put_counters(fx->dir, "run/railbind/counters.json", 1, 4);
	assert_int_equal(aff_discover_annotate(fx->topo, fx->dir, NULL), 0);
	assert_info(gpu, "RailbindLinkChanges", NULL);
	assert_info(hwloc_get_root_obj(fx->topo), "RailbindCounters", NULL);
}

/*
 * railbindd.service runs the broker with --state-dir /run/railbind/state,
 * the only directory its sandbox may write: its counters are read there,
 * before those of a broker with the default state directory.
 */
static void annotate_health_unit_state_dir(void **state)
{
	struct fixture *fx = *state;
	hwloc_obj_t gpu = pci_obj(fx->topo, GPU);

	put(fx->dir, "proc/sys/kernel/random/boot_id", "0b0b0b0b-1111-2222-3333-444444444444\n");
	put_counters(fx->dir, "run/railbind/state/counters.json", 5, 6);
	put_counters(fx->dir, "run/railbind/counters.json", 1, 4);
	assert_int_equal(aff_discover_annotate(fx->topo, fx->dir, NULL), 0);
	assert_info(gpu, "RailbindLinkChanges", "6");
	assert_info(hwloc_get_root_obj(fx->topo), "RailbindCountersSince", "5");
}

/* Peer memory decision on a fresh root holding only what each case names. */
static const char *peer_memory_for(const char *const *files)
{
	char dir[PATH_MAX];
	hwloc_topology_t topo = load_xml(topo_xml, (int)sizeof(topo_xml));
	static char result[32];
	const char *v;

	make_tmpdir(dir, sizeof(dir));
	for (; *files; files += 2) {
		if (files[1])
			put(dir, files[0], files[1]);
		else
			put_dir(dir, files[0]);
	}
	assert_int_equal(aff_discover_annotate(topo, dir, NULL), 0);
	v = info(hwloc_get_root_obj(topo), AFF_INFO_PEER_MEMORY);
	assert_non_null(v);
	snprintf(result, sizeof(result), "%s", v);
	hwloc_topology_destroy(topo);
	rm_tree(dir);
	return result;
}


static void peer_memory_decision(void **state)
{
	static const char *const legacy[] = { "sys/module/nv_peer_mem", NULL, NULL };
	static const char *const amd[] = { "sys/module/amdgpu", NULL, "sys/module/ib_uverbs", NULL,
					   "proc/sys/kernel/osrelease", "6.1.0-18-amd64\n", NULL };
	static const char *const amd_old_kernel[] = { "sys/module/amdgpu", NULL,
						      "sys/module/ib_uverbs", NULL,
						      "proc/sys/kernel/osrelease", "5.10.0-28-amd64\n",
						      NULL };
	static const char *const amd_no_verbs[] = { "sys/module/amdgpu", NULL,
						    "proc/sys/kernel/osrelease", "6.1.0\n", NULL };
	static const char *const nv_open[] = { "proc/driver/nvidia/version", NV_OPEN_535,
					       "sys/class/infiniband_verbs", NULL,
					       "proc/sys/kernel/osrelease", "5.15.0-91-generic\n",
					       NULL };
	static const char *const nv_open_old[] = { "proc/driver/nvidia/version", NV_OPEN_510,
						   "sys/module/ib_uverbs", NULL,
						   "proc/sys/kernel/osrelease", "6.1.0\n", NULL };
	static const char *const nv_prop[] = { "proc/driver/nvidia/version", NV_PROP_535,
					       "sys/module/ib_uverbs", NULL,
					       "proc/sys/kernel/osrelease", "6.1.0\n", NULL };
	static const char *const nothing[] = { "sys/module/ib_uverbs", NULL, NULL };

	(void)state;
	assert_string_equal(peer_memory_for(legacy), "nvidia_peermem");
	assert_string_equal(peer_memory_for(amd), "dmabuf");
	assert_string_equal(peer_memory_for(amd_old_kernel), "none");
	assert_string_equal(peer_memory_for(amd_no_verbs), "none");
	assert_string_equal(peer_memory_for(nv_open), "dmabuf");
	assert_string_equal(peer_memory_for(nv_open_old), "none");
	assert_string_equal(peer_memory_for(nv_prop), "none");
	assert_string_equal(peer_memory_for(nothing), "none");
}

static void annotate_bad_args(void **state)
{
	(void)state;
	assert_int_equal(aff_discover_annotate(NULL, "/", NULL), -EINVAL);
}

/* ---- snapshot_write ---- */

static unsigned dir_entries(const char *dir)
{
	struct dirent *d;
	unsigned n = 0;
	DIR *dp = opendir(dir);

	assert_non_null(dp);
	while ((d = readdir(dp)))
		n += strcmp(d->d_name, ".") && strcmp(d->d_name, "..");
	closedir(dp);
	return n;
}

static hwloc_topology_t load_file(const char *path)
{
	hwloc_topology_t topo;

	assert_int_equal(hwloc_topology_init(&topo), 0);
	assert_int_equal(hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL), 0);
	assert_int_equal(hwloc_topology_set_xml(topo, path), 0);
	assert_int_equal(hwloc_topology_load(topo), 0);
	return topo;
}

static void snapshot_roundtrip(void **state)
{
	struct fixture *fx = *state;
	char out[PATH_MAX], path[PATH_MAX + 16], err[256] = "";
	struct stat st;
	hwloc_topology_t back;

	assert_int_equal(aff_discover_annotate(fx->topo, fx->dir, NULL), 0);
	make_tmpdir(out, sizeof(out));
	snprintf(path, sizeof(path), "%s/node.xml", out);
	/* An older file is replaced whole. */
	put(out, "node.xml", "stale");
	assert_int_equal(aff_snapshot_write(fx->topo, path, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(dir_entries(out), 1);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);

	back = load_file(path);
	assert_fake_tree_infos(back);
	/* Annotating the reloaded snapshot against an empty root changes nothing. */
	{
		hwloc_obj_t gpu = pci_obj(back, GPU);
		unsigned n = gpu->infos_count;

		assert_int_equal(aff_discover_annotate(back, out, NULL), 0);
		assert_int_equal(gpu->infos_count, n);
		assert_fake_tree_infos(back);
	}
	hwloc_topology_destroy(back);
	rm_tree(out);
}

static void snapshot_to_stdout(void **state)
{
	struct fixture *fx = *state;
	char out[PATH_MAX], path[PATH_MAX + 16], err[256] = "";
	int saved, fd;
	hwloc_topology_t back;

	assert_int_equal(aff_discover_annotate(fx->topo, fx->dir, NULL), 0);
	make_tmpdir(out, sizeof(out));
	snprintf(path, sizeof(path), "%s/stdout.xml", out);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(saved >= 0 && fd >= 0);
	assert_true(dup2(fd, STDOUT_FILENO) >= 0);
	close(fd);
	assert_int_equal(aff_snapshot_write(fx->topo, "-", err, sizeof(err)), 0);
	assert_true(dup2(saved, STDOUT_FILENO) >= 0);
	close(saved);

	back = load_file(path);
	assert_fake_tree_infos(back);
	hwloc_topology_destroy(back);
	rm_tree(out);
}

static void snapshot_missing_dir(void **state)
{
	struct fixture *fx = *state;
	char out[PATH_MAX], path[PATH_MAX + 32], err[256] = "";

	make_tmpdir(out, sizeof(out));
	snprintf(path, sizeof(path), "%s/no/such/dir/node.xml", out);
	assert_int_equal(aff_snapshot_write(fx->topo, path, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, path));
	assert_null(strchr(err, '\n'));
	assert_int_equal(dir_entries(out), 0);
	rm_tree(out);
}

static void snapshot_readonly_dir(void **state)
{
	struct fixture *fx = *state;
	char out[PATH_MAX], path[PATH_MAX + 16], err[256] = "";
	int ret;

	make_tmpdir(out, sizeof(out));
	assert_int_equal(chmod(out, 0555), 0);
	if (access(out, W_OK) == 0) {
		/*
		 * Running with CAP_DAC_OVERRIDE (root in CI): permission bits do not stop
		 * us, so use a directory in which nobody can create files.
		 */
		snprintf(path, sizeof(path), "/proc/self/node.xml");
		ret = aff_snapshot_write(fx->topo, path, err, sizeof(err));
		assert_true(ret < 0);
		assert_int_not_equal(access(path, F_OK), 0);
	} else {
		snprintf(path, sizeof(path), "%s/node.xml", out);
		ret = aff_snapshot_write(fx->topo, path, err, sizeof(err));
		assert_int_equal(ret, -EACCES);
		assert_int_equal(dir_entries(out), 0);
	}
	assert_non_null(strstr(err, "node.xml"));
	rm_tree(out);
}

/* rename() fails after the temp file was written: the temp file must go. */
static void snapshot_rename_failure_cleans_up(void **state)
{
	struct fixture *fx = *state;
	char out[PATH_MAX], path[PATH_MAX + 16], err[256] = "";

	make_tmpdir(out, sizeof(out));
	put_dir(out, "node.xml/inside");	/* target is a non-empty directory */
	snprintf(path, sizeof(path), "%s/node.xml", out);
	assert_true(aff_snapshot_write(fx->topo, path, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "renam"));
	assert_int_equal(dir_entries(out), 1);
	rm_tree(out);
}

static void snapshot_bad_args(void **state)
{
	struct fixture *fx = *state;
	char err[64] = "";

	assert_int_equal(aff_snapshot_write(NULL, "x.xml", err, sizeof(err)), -EINVAL);
	assert_int_equal(aff_snapshot_write(fx->topo, "", NULL, 0), -EINVAL);
	assert_string_not_equal(err, "");
}

/* ---- live ---- */

static void live_bad_root(void **state)
{
	hwloc_topology_t topo = (hwloc_topology_t)(uintptr_t)1;
	char err[256] = "";

	(void)state;
	assert_int_equal(aff_discover_live("/nonexistent/railbind-root", &topo, NULL, err,
					   sizeof(err)), -ENOENT);
	assert_null(topo);
	assert_non_null(strstr(err, "/nonexistent/railbind-root"));
	assert_int_equal(aff_discover_live("/etc/hostname", &topo, NULL, err, sizeof(err)),
			 -ENOTDIR);
	assert_int_equal(aff_discover_live(NULL, NULL, NULL, NULL, 0), -EINVAL);
}

static int run_tar(const char *tarball, const char *dir)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid) {
		execlp("tar", "tar", "-xjf", tarball, "-C", dir, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

/* The tarball holds one top directory whose name differs from the tarball's. */
static int only_subdir(const char *dir, char *out, size_t len)
{
	struct dirent *d;
	DIR *dp = opendir(dir);
	int n = 0;

	if (!dp)
		return -errno;
	while ((d = readdir(dp))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		snprintf(out, len, "%s/%s", dir, d->d_name);
		n++;
	}
	closedir(dp);
	return n == 1 ? 0 : -ENOENT;
}

/* Read the tarball's numa_node independently of the code under test. */
static int sysfs_numa(const char *root, hwloc_obj_t obj, long *node)
{
	const struct hwloc_pcidev_attr_s *p = obj->type == HWLOC_OBJ_BRIDGE ?
		&obj->attr->bridge.upstream.pci : &obj->attr->pcidev;
	char path[PATH_MAX + 64];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/sys/bus/pci/devices/%04x:%02x:%02x.%x/numa_node", root,
		 p->domain, p->bus, p->dev, p->func);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%ld", node) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

static void check_numa(const char *root, hwloc_obj_t obj, unsigned *with, unsigned *checked)
{
	const char *v = info(obj, AFF_INFO_NUMA_NODE);
	long want;

	if (sysfs_numa(root, obj, &want) < 0) {
		assert_null(v);
		return;
	}
	(*with)++;
	assert_non_null(v);
	assert_int_equal(strtol(v, NULL, 10), want);
	(*checked)++;
}

/* First "model name" of the recorded /proc/cpuinfo, or "" */
static void recorded_cpu_model(const char *root, char *out, size_t len)
{
	char path[PATH_MAX + 320], line[512];
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/proc/cpuinfo", root);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) || !colon)
			continue;
		snprintf(out, len, "%s", colon + 2);
		out[strcspn(out, "\n")] = '\0';
		break;
	}
	fclose(f);
}

static void live_one_tarball(const char *name, const char *tarball)
{
	char tmp[PATH_MAX], root[PATH_MAX + 300], err[256] = "", model[256];
	struct aff_discover_report rep;
	hwloc_topology_t topo;
	unsigned with = 0, checked = 0, pcis = 0;
	hwloc_obj_t obj;

	make_tmpdir(tmp, sizeof(tmp));
	if (run_tar(tarball, tmp) < 0 || only_subdir(tmp, root, sizeof(root)) < 0) {
		rm_tree(tmp);
		fail_msg("could not extract %s", tarball);
	}
	setenv("HWLOC_FSROOT", "/should/be/restored", 1);
	/* pci-conflicts makes hwloc print a long warning on purpose. */
	setenv("HWLOC_HIDE_ERRORS", "2", 1);
	if (aff_discover_live(root, &topo, &rep, err, sizeof(err)) < 0)
		fail_msg("%s: %s", name, err);
	assert_string_equal(getenv("HWLOC_FSROOT"), "/should/be/restored");
	unsetenv("HWLOC_FSROOT");
	unsetenv("HWLOC_HIDE_ERRORS");
	assert_false(hwloc_topology_is_thissystem(topo));

	for (obj = NULL; (obj = hwloc_get_next_pcidev(topo, obj)); pcis++)
		check_numa(root, obj, &with, &checked);
	for (obj = NULL; (obj = hwloc_get_next_bridge(topo, obj));)
		if (obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI)
			check_numa(root, obj, &with, &checked);
	print_message("%s: %u PCI devices, %u numa_node checked; report: %s\n", name, pcis,
		      checked, rep.note[0] ? rep.note : "(all read)");
	assert_true(pcis > 0);
	assert_true(checked > 0);
	assert_int_equal(checked, with);
	assert_info(hwloc_get_root_obj(topo), AFF_INFO_SNAPSHOT_VERSION, "1");
	assert_info(hwloc_get_root_obj(topo), AFF_INFO_KMOD, "absent");
	/* The CPUs are the recorded node's, not this host's (CPUID must not leak in). */
	recorded_cpu_model(root, model, sizeof(model));
	obj = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
	if (model[0] && obj)
		assert_info(obj, "CPUModel", model);
	hwloc_topology_destroy(topo);
	rm_tree(tmp);
}

/* The real root, whatever this machine has; HWLOC_FSROOT must not redirect hwloc. */
static void live_real_root(void **state)
{
	struct aff_discover_report rep;
	hwloc_topology_t topo;
	char err[256] = "";
	unsigned with = 0, checked = 0;
	hwloc_obj_t obj;

	(void)state;
	setenv("HWLOC_FSROOT", "/nonexistent/railbind-root", 1);
	if (aff_discover_live("/", &topo, &rep, err, sizeof(err)) < 0)
		fail_msg("live: %s", err);
	assert_string_equal(getenv("HWLOC_FSROOT"), "/nonexistent/railbind-root");
	unsetenv("HWLOC_FSROOT");
	assert_true(hwloc_topology_is_thissystem(topo));
	assert_info(hwloc_get_root_obj(topo), AFF_INFO_SNAPSHOT_VERSION, "1");
	assert_non_null(info(hwloc_get_root_obj(topo), AFF_INFO_PEER_MEMORY));
	for (obj = NULL; (obj = hwloc_get_next_pcidev(topo, obj));)
		check_numa("", obj, &with, &checked);
	assert_int_equal(checked, with);
	print_message("live: %u PCI numa_node checked; report: %s\n", checked,
		      rep.note[0] ? rep.note : "(all read)");
	hwloc_topology_destroy(topo);
}

static void live_from_hwloc_tarballs(void **state)
{
	static const char *const names[] = {
		"40intel64-2g2n4c+pcilocality",
		"32em64t-2n8c+dax+nvme+mic+dimms",
		"40intel64-4n10c+pci-conflicts",
	};
	const char *topos = getenv("RAILBIND_TOPOLOGIES");
	char tarball[PATH_MAX];
	unsigned i, found = 0;

	(void)state;
	if (!topos || !*topos)
		topos = "../shared/topologies";
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(tarball, sizeof(tarball), "%s/hwloc-tests/linux/%s.tar.bz2", topos,
			 names[i]);
		if (access(tarball, R_OK) < 0)
			continue;
		live_one_tarball(names[i], tarball);
		found++;
	}
	if (!found) {
		print_message("skipped: no hwloc test tarball with PCI under %s/hwloc-tests/linux "
			      "(set RAILBIND_TOPOLOGIES)\n", topos);
		skip();
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(annotate_all_attributes, setup, teardown),
		cmocka_unit_test_setup_teardown(annotate_trailing_slash_root, setup, teardown),
		cmocka_unit_test_setup_teardown(annotate_is_idempotent, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_files_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(partial_missing_files, setup, teardown),
		cmocka_unit_test_setup_teardown(kmod_loaded_without_version, setup, teardown),
		cmocka_unit_test_setup_teardown(port_types, setup, teardown),
		cmocka_unit_test_setup_teardown(gdr_settings, setup, teardown),
		cmocka_unit_test_setup_teardown(vpd_uuid, setup, teardown),
		cmocka_unit_test_setup_teardown(vpd_unreadable, setup, teardown),
		cmocka_unit_test_setup_teardown(port_type_conventional, setup, teardown),
		cmocka_unit_test_setup_teardown(port_type_fifo_config, setup, teardown),
		cmocka_unit_test_setup_teardown(annotate_health, setup, teardown),
		cmocka_unit_test_setup_teardown(annotate_health_other_boot, setup, teardown),
		cmocka_unit_test_setup_teardown(annotate_health_unit_state_dir, setup, teardown),
		cmocka_unit_test(peer_memory_decision),
		cmocka_unit_test(annotate_bad_args),
		cmocka_unit_test_setup_teardown(snapshot_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(snapshot_to_stdout, setup, teardown),
		cmocka_unit_test_setup_teardown(snapshot_missing_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(snapshot_readonly_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(snapshot_rename_failure_cleans_up, setup, teardown),
		cmocka_unit_test_setup_teardown(snapshot_bad_args, setup, teardown),
		cmocka_unit_test(live_bad_root),
		cmocka_unit_test(live_real_root),
		cmocka_unit_test(live_from_hwloc_tarballs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
