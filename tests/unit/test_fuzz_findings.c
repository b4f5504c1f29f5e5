// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Regression tests of what the fuzz targets (fuzz/) found in libaffinity,
 * one test per finding, each on the smallest input that showed it.
 */
#include <sys/resource.h>

#include "fixture.h"

static int load_text(const char *text, struct aff_topo **t, char *err, size_t errlen)
{
	char dir[256], path[512];
	int rc;

	fx_mkdtemp(dir, sizeof(dir));
	fx_write(dir, "topo.xml", text, path, sizeof(path));
	rc = fx_load_file(path, t, err, errlen);
	fx_rmdir(dir);
	return rc;
}

/*
 * fuzz_nccl: a GPU listed twice (same busid under two <cpu>) became two GPUs
 * with one PCI address, and the plan gave two ranks the same GPU.
 */
static void test_nccl_duplicate_busid(void **state)
{
	static const char xml[] =
		"<system version=\"1\">\n"
		" <cpu numaid=\"0\" affinity=\"0000ffff\">\n"
		"  <pci busid=\"0000:90:00.0\" class=\"0x030200\" vendor=\"0x10de\"><gpu dev=\"0\"/></pci>\n"
		" </cpu>\n"
		" <cpu numaid=\"1\" affinity=\"ffff0000\">\n"
		"  <pci busid=\"0000:90:00.0\" class=\"0x030200\" vendor=\"0x10de\"><gpu dev=\"1\"/></pci>\n"
		" </cpu>\n"
		"</system>\n";
	struct aff_topo *t = NULL;
	char err[1024] = "";

	(void)state;
	assert_int_equal(load_text(xml, &t, err, sizeof(err)), -EINVAL);
	assert_null(t);
	assert_non_null(strstr(err, "two devices at PCI address 0000:90:00.0"));
}

/* The same GPU once is still fine: the check is on duplicates only. */
static void test_nccl_distinct_busids(void **state)
{
	static const char xml[] =
		"<system version=\"1\">\n"
		" <cpu numaid=\"0\" affinity=\"0000ffff\">\n"
		"  <pci busid=\"0000:90:00.0\" class=\"0x030200\" vendor=\"0x10de\"><gpu dev=\"0\"/></pci>\n"
		" </cpu>\n"
		" <cpu numaid=\"1\" affinity=\"ffff0000\">\n"
		"  <pci busid=\"0000:91:00.0\" class=\"0x030200\" vendor=\"0x10de\"><gpu dev=\"1\"/></pci>\n"
		" </cpu>\n"
		"</system>\n";
	struct aff_topo *t = NULL;
	char err[1024] = "";

	(void)state;
	assert_int_equal(load_text(xml, &t, err, sizeof(err)), 0);
	assert_int_equal(aff_topo_gpu_count(t), 2);
	aff_topo_unref(t);
}

/*
 * The importers hwloc may use: its libxml2 plugin (libhwloc-plugins) when
 * installed, and its built-in minimal one (HWLOC_LIBXML=0), which accepts
 * text that is not even XML. Each hwloc finding is loaded with both.
 */
static const char *const importers[] = { NULL, "0" };

static void use_importer(const char *v)
{
	if (v)
		setenv("HWLOC_LIBXML", v, 1);
	else
		unsetenv("HWLOC_LIBXML");
}

/*
 * A file hwloc 2.9.0 crashes on (SIGSEGV, a failed assert) with either
 * importer: the load fails with one line naming the file, and the caller
 * lives on (the import runs in a child process). Until issue 13 these were
 * refused by a libxml2 pre-check, one crash at a time.
 */
static void assert_hwloc_crash_contained(const char *xml)
{
	struct aff_topo *t = NULL;
	char err[1024];
	size_t i;

	for (i = 0; i < sizeof(importers) / sizeof(importers[0]); i++) {
		use_importer(importers[i]);
		err[0] = '\0';
		assert_int_equal(load_text(xml, &t, err, sizeof(err)), -EINVAL);
		assert_null(t);
		if (!strstr(err, "/topo.xml") || !strstr(err, "hwloc's XML import crashed") ||
		    strchr(err, '\n'))
			fail_msg("HWLOC_LIBXML=%s: %s", importers[i] ? importers[i] : "(unset)", err);
	}
	use_importer(NULL);
}

/* fuzz_hwloc: hwloc 2.9.0 dereferences NULL loading an <object> with a cpuset but no complete_cpuset. */
static void test_hwloc_missing_complete_cpuset(void **state)
{
	(void)state;
	assert_hwloc_crash_contained(
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<topology version=\"2.0\">\n"
		" <object type=\"Machine\" os_index=\"0\" cpuset=\"0x3\" complete_cpuset=\"0x3\" allowed_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\" allowed_nodeset=\"0x1\" gp_index=\"1\">\n"
		"  <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x3\" complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"2\"/>\n"
		"  <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"3\"/>\n"
		"  <object type=\"PU\" os_index=\"1\" cpuset=\"0x2\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"4\"/>\n"
		" </object>\n"
		"</topology>\n");
}

/* fuzz_hwloc: the same crash (in hwloc_bitmap_or) for a nodeset without complete_nodeset. */
static void test_hwloc_missing_complete_nodeset(void **state)
{
	(void)state;
	assert_hwloc_crash_contained(
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<topology version=\"2.0\">\n"
		" <object type=\"Machine\" os_index=\"0\" cpuset=\"0x3\" complete_cpuset=\"0x3\" allowed_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\" allowed_nodeset=\"0x1\" gp_index=\"1\">\n"
		"  <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x3\" complete_cpuset=\"0x3\" nodeset=\"0x1\" gp_index=\"2\"/>\n"
		"  <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"3\"/>\n"
		"  <object type=\"PU\" os_index=\"1\" cpuset=\"0x2\" complete_cpuset=\"0x2\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"4\"/>\n"
		" </object>\n"
		"</topology>\n");
}

/*
 * check-fuzz (issue 13, 45 and 90 executions in on Debian 12 without
 * libhwloc-plugins): text that is not XML, which hwloc's minimal importer
 * takes in and crashes on (SIGSEGV in its parser, or later in
 * hwloc_bitmap_compare_first); its libxml2 importer refuses it. Either
 * way one line, with libxml2's word on where the text stops being XML.
 */
static void test_hwloc_not_xml(void **state)
{
	static const char xml[] = "<?xml version=\"1.0\"?>\n<topology version=\"2.0";
	struct aff_topo *t = NULL;
	char err[1024];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(importers) / sizeof(importers[0]); i++) {
		use_importer(importers[i]);
		err[0] = '\0';
		assert_int_equal(load_text(xml, &t, err, sizeof(err)), -EINVAL);
		assert_null(t);
		if (!strstr(err, "/topo.xml:2: malformed XML") || strchr(err, '\n'))
			fail_msg("HWLOC_LIBXML=%s: %s", importers[i] ? importers[i] : "(unset)", err);
	}
	use_importer(NULL);
}

/*
 * fuzz_hwloc: a PU without os_index made hwloc 2.9.0 allocate 512 MB
 * bitmaps, several times, for seconds. The import's memory limit (1 GiB
 * under ASan, 256 MiB otherwise, over what is mapped) makes those
 * allocations fail, which hwloc survives: the file loads, as no machine.
 */
static void test_hwloc_pu_without_os_index(void **state)
{
	static const char xml[] =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<topology version=\"2.0\">\n"
		" <object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" allowed_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" allowed_nodeset=\"0x1\" gp_index=\"1\">\n"
		"  <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"2\"/>\n"
		"  <object type=\"PU\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"3\"/>\n"
		" </object>\n"
		"</topology>\n";
	struct aff_topo *t = NULL;
	struct rusage ru;
	char err[1024];
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(importers) / sizeof(importers[0]); i++) {
		use_importer(importers[i]);
		err[0] = '\0';
		rc = load_text(xml, &t, err, sizeof(err));
		if (rc == 0)
			assert_int_equal(aff_topo_gpu_count(t), 0);
		else if (rc != -EINVAL || !strstr(err, "/topo.xml"))
			fail_msg("rc %d: %s", rc, err);
		t = aff_topo_unref(t);
	}
	use_importer(NULL);
	/* The children's peak: one such bitmap is 512 MiB. */
	assert_int_equal(getrusage(RUSAGE_CHILDREN, &ru), 0);
	if ((unsigned long long)ru.ru_maxrss * 1024 >= AFF_CHILD_MEM_BASE + (64ull << 20))
		fail_msg("an import child used %ld KiB", ru.ru_maxrss);
}

/*
 * fuzz_hwloc (campaign of 2026-12-01, 10,378 executions): a file declaring
 * encoding="UTF-7" with bytes UTF-7 cannot hold crashed the fuzzer inside
 * glibc's UTF-7 converter, after hwloc's libxml2 plugin had parsed it.
 * Files declaring any encoding but UTF-8/ASCII are refused before a parser
 * runs, hwloc and NCCL files alike; UTF-8, ASCII and none still load.
 */
static void test_xml_encoding(void **state)
{
	static const char *const refused[] = { "UTF-7", "utf-16", "ISO-2022-CN-EXT", "latin1" };
	static const char *const fine[] = { "UTF-8", "utf-8", "US-ASCII", NULL };
	char xml[1024], err[1024];
	struct aff_topo *t = NULL;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		snprintf(xml, sizeof(xml), "<?xml version=\"1.0\" encoding='%s'?>\n"
			 "<topology>\x07\xff\xff\x79</topology>\n", refused[i]);
		err[0] = '\0';
		assert_int_equal(load_text(xml, &t, err, sizeof(err)), -EINVAL);
		assert_null(t);
		assert_non_null(strstr(err, "XML encoding"));
		assert_non_null(strstr(err, refused[i]));
		err[0] = '\0';
		assert_int_equal(aff_load_nccl_mem(NULL, xml, strlen(xml), "mem", err,
						   sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "mem: XML encoding"));
	}
	for (i = 0; i < sizeof(fine) / sizeof(fine[0]); i++) {
		snprintf(xml, sizeof(xml), "<?xml version=\"1.0\"%s%s%s?>\n"
			 "<system version=\"1\"><cpu numaid=\"0\" affinity=\"0000000f\">"
			 "<pci busid=\"0000:01:00.0\" class=\"0x030200\" vendor=\"0x10de\">"
			 "<gpu dev=\"0\"/></pci></cpu></system>\n",
			 fine[i] ? " encoding=\"" : "", fine[i] ? fine[i] : "", fine[i] ? "\"" : "");
		assert_int_equal(load_text(xml, &t, err, sizeof(err)), 0);
		assert_int_equal(aff_topo_gpu_count(t), 1);
		t = aff_topo_unref(t);
	}
}

/*
 * fuzz_hwloc (campaign of 2026-12-01, 27,181 executions): hwloc 2.9.0
 * asserts in hwloc_bitmap_sscanf() (abort: railbind topo --input died) on a
 * set with a leading empty word, ",0x00000001". Whatever hwloc makes of
 * other texts, none takes the caller down; its ",," shorthand for a zero
 * word loads.
 */
static void test_hwloc_bitmap_syntax(void **state)
{
	static const char *const crash[] = { ",0x00000001", ",x00010001" };
	static const char *const other[] = { "0x1,", "1", "0x", "" };
	static const char *const good[] = { "0x00000001", "0x1,,0x0", "0x00000001,0x0" };
	const size_t ncrash = sizeof(crash) / sizeof(crash[0]);
	const size_t nother = sizeof(other) / sizeof(other[0]);
	const size_t ngood = sizeof(good) / sizeof(good[0]);
	char xml[2048], err[1024];
	struct aff_topo *t = NULL;
	size_t i;
	int rc;

	(void)state;
	for (i = 0; i < ncrash + nother + ngood; i++) {
		const char *set = i < ncrash ? crash[i] : i < ncrash + nother ?
				  other[i - ncrash] : good[i - ncrash - nother];

		snprintf(xml, sizeof(xml),
			 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			 "<topology version=\"2.0\">\n"
			 " <object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"%s\" allowed_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" allowed_nodeset=\"0x1\" gp_index=\"1\">\n"
			 "  <object type=\"NUMANode\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"2\"/>\n"
			 "  <object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"3\"/>\n"
			 " </object>\n"
			 "</topology>\n", set);
		if (i < ncrash) {
			assert_hwloc_crash_contained(xml);
			continue;
		}
		err[0] = '\0';
		rc = load_text(xml, &t, err, sizeof(err));
		if (i >= ncrash + nother && rc)
			fail_msg("complete_cpuset=\"%s\" refused: %s", set, err);
		if (rc && (rc != -EINVAL || !strstr(err, "/topo.xml") || strchr(err, '\n')))
			fail_msg("complete_cpuset=\"%s\": rc %d: %s", set, rc, err);
		t = aff_topo_unref(t);
	}
}

/*
 * fuzz_plan_spec: allowed CPUs were read by hwloc_bitmap_list_sscanf(),
 * which took "1,0=" for {1} (dropping CPU 0 and the typo silently) and spun
 * for seconds on "1,009-1,0=" into an inconsistent bitmap. The strict
 * parser refuses both.
 */
static void test_cpulist_strict(void **state)
{
	static const char *const bad[] = {
		"1,0=", "1,009-1,0=", "", ",", "1,", "0-", "-3", "5-3", "0 -3",
		"0,,1", "65536", "99999999999999999999", "0x3", " 1",
	};
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	size_t i;

	(void)state;
	assert_non_null(set);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (aff_parse_cpulist(bad[i], set) != -EINVAL)
			fail_msg("\"%s\" accepted", bad[i]);
	assert_int_equal(aff_parse_cpulist("0-3,8,10-10,65535", set), 0);
	assert_int_equal(hwloc_bitmap_weight(set), 7);
	assert_true(hwloc_bitmap_isset(set, 8) && hwloc_bitmap_isset(set, 65535));
	assert_false(hwloc_bitmap_isset(set, 9));
	hwloc_bitmap_free(set);
}

static void test_plan_allowed_garbage(void **state)
{
	struct aff_topo *t = fx_load("dgx-h100");
	struct aff_plan_spec spec = { .allowed_cpus = "1,0=" };
	struct aff_plan *p = NULL;
	hwloc_bitmap_t allowed, got;
	char err[1024] = "";

	(void)state;
	assert_int_equal(aff_plan_new(t, &spec, &p, err, sizeof(err)), -EINVAL);
	assert_null(p);
	assert_non_null(strstr(err, "allowed CPUs \"1,0=\""));
	/* The same list written right plans, inside it. */
	spec.allowed_cpus = "0-1";
	p = fx_plan(t, &spec);
	allowed = fx_cpus("0-1");
	got = fx_cpus(aff_plan_rank_cpus(p, 0));
	assert_false(hwloc_bitmap_iszero(got));
	assert_true(hwloc_bitmap_isincluded(got, allowed));
	hwloc_bitmap_free(allowed);
	hwloc_bitmap_free(got);
	aff_plan_unref(p);
	aff_topo_unref(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nccl_duplicate_busid),
		cmocka_unit_test(test_nccl_distinct_busids),
		cmocka_unit_test(test_hwloc_missing_complete_cpuset),
		cmocka_unit_test(test_hwloc_missing_complete_nodeset),
		cmocka_unit_test(test_hwloc_not_xml),
		cmocka_unit_test(test_hwloc_pu_without_os_index),
		cmocka_unit_test(test_xml_encoding),
		cmocka_unit_test(test_hwloc_bitmap_syntax),
		cmocka_unit_test(test_cpulist_strict),
		cmocka_unit_test(test_plan_allowed_garbage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
