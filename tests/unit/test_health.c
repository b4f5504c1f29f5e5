// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The health counters (libaffinity/health.c) against a fake sysfs the test
 * writes and changes between samples: a GPU behind a root port, a NIC behind
 * another, an RDMA port. Speed changes of the GPU's link are power management
 * (not counted), the NIC's are; width changes always count; a removal and the
 * return count; AER totals survive a removal; port state changes and downs;
 * railbind.counters/1 round trip, another boot's file, files that are not one.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "health.h"

#define GPU "0000:01:00.0"
#define PORT1 "0000:00:01.0"
#define NIC "0000:02:00.0"
#define PORT2 "0000:00:02.0"

static char root[512];

static void put(const char *rel, const char *text)
{
	char path[PATH_MAX], dir[PATH_MAX], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = dir + strlen(root) + 1; (slash = strchr(slash, '/')); slash++) {
		*slash = '\0';
		mkdir(dir, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A PCI function under sys/devices, linked from sys/bus/pci/devices. */
static void device(const char *dirrel, const char *bdf, const char *cls, const char *speed,
		   const char *width)
{
	char rel[PATH_MAX], link[PATH_MAX], target[PATH_MAX];

	snprintf(rel, sizeof(rel), "sys/devices/pci0000:00/%s/class", dirrel);
	put(rel, cls);
	snprintf(rel, sizeof(rel), "sys/devices/pci0000:00/%s/current_link_speed", dirrel);
	put(rel, speed);
	snprintf(rel, sizeof(rel), "sys/devices/pci0000:00/%s/current_link_width", dirrel);
	put(rel, width);
	snprintf(link, sizeof(link), "%s/sys/bus/pci/devices/%s", root, bdf);
	snprintf(target, sizeof(target), "%s/sys/devices/pci0000:00/%s", root, dirrel);
	unlink(link);
	assert_int_equal(symlink(target, link), 0);
}

static void aer(const char *dirrel, unsigned cor, unsigned nonfatal, unsigned fatal)
{
	char rel[PATH_MAX], text[256];

	snprintf(rel, sizeof(rel), "sys/devices/pci0000:00/%s/aer_dev_correctable", dirrel);
	snprintf(text, sizeof(text), "RxErr %u\nBadTLP 0\nBadDLLP 0\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR %u\n",
		 cor, cor);
	put(rel, text);
	snprintf(rel, sizeof(rel), "sys/devices/pci0000:00/%s/aer_dev_nonfatal", dirrel);
	snprintf(text, sizeof(text), "Undefined 0\nDLP 0\nCmpltTO %u\nTOTAL_ERR_NONFATAL %u\n",
		 nonfatal, nonfatal);
	put(rel, text);
	snprintf(rel, sizeof(rel), "sys/devices/pci0000:00/%s/aer_dev_fatal", dirrel);
	snprintf(text, sizeof(text), "Undefined 0\nDLP %u\nTOTAL_ERR_FATAL %u\n", fatal, fatal);
	put(rel, text);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rmtree(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "%s/railbind-health.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root))
		return -1;
	put("proc/sys/kernel/random/boot_id", "11111111-2222-3333-4444-555555555555\n");
	put("sys/bus/pci/devices/.keep", "");
	device(PORT1, PORT1, "0x060400\n", "16.0 GT/s PCIe\n", "16\n");
	device(PORT1 "/" GPU, GPU, "0x030200\n", "16.0 GT/s PCIe\n", "16\n");
	device(PORT2, PORT2, "0x060400\n", "16.0 GT/s PCIe\n", "16\n");
	device(PORT2 "/" NIC, NIC, "0x020700\n", "16.0 GT/s PCIe\n", "16\n");
	aer(PORT2 "/" NIC, 5, 0, 0);
	put("sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static const struct aff_health_link *link_of(const struct aff_health *h, const char *pci)
{
	const struct aff_health_link *l = aff_health_find_link(h, pci);

	assert_non_null(l);
	return l;
}

static void test_counts(void **state)
{
	struct aff_health h = { 0 };
	const struct aff_health_port *p;
	bool changed;

	(void)state;
	assert_int_equal(aff_health_sample(root, &h, &changed), 0);
	assert_true(changed);
	assert_int_equal(h.nlink, 4);
	assert_string_equal(h.boot_id, "11111111-2222-3333-4444-555555555555");
	assert_true(link_of(&h, GPU)->gpu_link);
	assert_true(link_of(&h, PORT1)->gpu_link);
	assert_false(link_of(&h, NIC)->gpu_link);
	assert_false(link_of(&h, PORT2)->gpu_link);
	assert_true(link_of(&h, NIC)->has_aer);
	assert_int_equal(link_of(&h, NIC)->aer[AFF_AER_COR], 5);

	/* Nothing moved: no change. */
	assert_int_equal(aff_health_sample(root, &h, &changed), 0);
	assert_false(changed);

	/* An idle GPU drops to 2.5 GT/s: not counted; the NIC's link retrains to 8 GT/s: counted. */
	device(PORT1 "/" GPU, GPU, "0x030200\n", "2.5 GT/s PCIe\n", "16\n");
	device(PORT1, PORT1, "0x060400\n", "2.5 GT/s PCIe\n", "16\n");
	device(PORT2 "/" NIC, NIC, "0x020700\n", "8.0 GT/s PCIe\n", "16\n");
	assert_int_equal(aff_health_sample(root, &h, &changed), 0);
	assert_true(changed);
	assert_int_equal(link_of(&h, GPU)->changes, 0);
	assert_int_equal(link_of(&h, GPU)->speed_idle, 1);
	assert_int_equal(link_of(&h, PORT1)->changes, 0);
	assert_int_equal(link_of(&h, NIC)->changes, 1);

	/* The GPU's link loses lanes: that counts, GPU or not. */
	device(PORT1 "/" GPU, GPU, "0x030200\n", "2.5 GT/s PCIe\n", "8\n");
	assert_int_equal(aff_health_sample(root, &h, &changed), 0);
	assert_int_equal(link_of(&h, GPU)->changes, 1);

	/* The NIC is removed (a change), then added back with fresh AER totals (another). */
	rmtree("sys/bus/pci/devices/" NIC);
	rmtree("sys/devices/pci0000:00/" PORT2 "/" NIC);
	assert_int_equal(aff_health_sample(root, &h, &changed), 0);
	assert_true(changed);
	assert_false(link_of(&h, NIC)->present);
	assert_int_equal(link_of(&h, NIC)->changes, 2);
	device(PORT2 "/" NIC, NIC, "0x020700\n", "16.0 GT/s PCIe\n", "16\n");
	aer(PORT2 "/" NIC, 1, 0, 0);
	assert_int_equal(aff_health_sample(root, &h, &changed), 0);
	assert_true(link_of(&h, NIC)->present);
	assert_int_equal(link_of(&h, NIC)->changes, 3);
	assert_int_equal(link_of(&h, NIC)->aer[AFF_AER_COR], 1);
	assert_int_equal(link_of(&h, NIC)->aer_base[AFF_AER_COR], 5);

	/* The port goes down and comes back: two changes, one down. */
	put("sys/class/infiniband/mlx5_0/ports/1/state", "1: DOWN\n");
	assert_int_equal(aff_health_sample(root, &h, &changed), 0);
	put("sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
	assert_int_equal(aff_health_sample(root, &h, &changed), 0);
	p = aff_health_find_port(&h, "mlx5_0", 1);
	assert_non_null(p);
	assert_int_equal(p->changes, 2);
	assert_int_equal(p->downs, 1);
	assert_string_equal(p->state, "ACTIVE");
	aff_health_clear(&h);
}

static void test_file(void **state)
{
	struct aff_health h = { 0 }, back;
	char path[PATH_MAX], err[256];
	bool changed;

	(void)state;
	assert_int_equal(aff_health_sample(root, &h, &changed), 0);
	snprintf(path, sizeof(path), "%s/counters.json", root);
	assert_int_equal(aff_health_save(&h, path, err, sizeof(err)), 0);
	assert_int_equal(aff_health_load(path, root, &back), 0);
	assert_int_equal(back.nlink, h.nlink);
	assert_int_equal(back.nport, h.nport);
	assert_string_equal(back.boot_id, h.boot_id);
	assert_string_equal(back.source, "broker");
	assert_int_equal(aff_health_find_link(&back, GPU)->gpu_link, 1);
	assert_int_equal(aff_health_find_link(&back, NIC)->aer[AFF_AER_COR],
			 aff_health_find_link(&h, NIC)->aer[AFF_AER_COR]);
	/* Counting goes on from the file: the same sysfs, no change. */
	assert_int_equal(aff_health_sample(root, &back, &changed), 0);
	assert_false(changed);
	aff_health_clear(&back);

	/* Another boot's counts are not this boot's. */
	put("proc/sys/kernel/random/boot_id", "99999999-2222-3333-4444-555555555555\n");
	assert_int_equal(aff_health_load(path, root, &back), -ESTALE);
	put("proc/sys/kernel/random/boot_id", "11111111-2222-3333-4444-555555555555\n");

	/* Not a counters file, a FIFO, nothing. */
	put("bad.json", "{\"schema\":\"railbind.leases/1\",\"leases\":[]}");
	snprintf(path, sizeof(path), "%s/bad.json", root);
	assert_int_equal(aff_health_load(path, root, &back), -EINVAL);
	snprintf(path, sizeof(path), "%s/fifo", root);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(aff_health_load(path, root, &back), -EINVAL);
	snprintf(path, sizeof(path), "%s/absent.json", root);
	assert_int_equal(aff_health_load(path, root, &back), -ENOENT);
	aff_health_clear(&h);
}

static void test_aer_parse(void **state)
{
	unsigned long long v[AFF_AER_N];
	char dir[PATH_MAX];

	(void)state;
	aer(PORT2 "/" NIC, 3, 2, 1);
	snprintf(dir, sizeof(dir), "%s/sys/bus/pci/devices/" NIC, root);
	assert_int_equal(aff_health_read_aer(dir, v), 0);
	assert_int_equal(v[AFF_AER_COR], 3);
	assert_int_equal(v[AFF_AER_NONFATAL], 2);
	assert_int_equal(v[AFF_AER_FATAL], 1);
	/* A garbled total is not a number of errors. */
	put("sys/devices/pci0000:00/" PORT2 "/" NIC "/aer_dev_fatal", "TOTAL_ERR_FATAL 12x\n");
	assert_int_equal(aff_health_read_aer(dir, v), 0);
	assert_int_equal(v[AFF_AER_FATAL], 0);
	snprintf(dir, sizeof(dir), "%s/sys/bus/pci/devices/" GPU, root);
	assert_int_equal(aff_health_read_aer(dir, v), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_aer_parse),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
