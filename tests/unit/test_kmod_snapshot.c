// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit tests of the railbind.ko snapshot parser. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "source_kmod.h"

static const char good[] =
	"railbind format=1 version=0.1.0 generation=7 kernel=6.1.0-57-amd64\n"
	"hostbridge name=pci0000:40 domain=0000 bus=40 numa=1 vendor=- device=-\n"
	"dev pci=0000:41:00.0 kind=gpu vendor=0x1af4 numa=-1 cpus=0-3,8\n"
	"dev pci=0000:42:00.0 kind=nic vendor=0x8086 numa=1 cpus=1\n"
	"pair gpu=0000:41:00.0 nic=0000:42:00.0 distance=4 redirected=0\n"
	"end records=6\n";

static int parse_str(const char *s, struct aff_kmod_snapshot **snap, char *err,
		     size_t errlen)
{
	return aff_kmod_snapshot_parse(s, strlen(s), snap, err, errlen);
}

static void test_good(void **state)
{
	struct aff_kmod_snapshot *snap;
	const struct aff_kmod_rec *rec;
	const char *value;
	char err[128];

	(void)state;
	assert_int_equal(parse_str(good, &snap, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(aff_kmod_snapshot_count(snap), 6);

	rec = aff_kmod_snapshot_rec(snap, 0);
	assert_string_equal(aff_kmod_rec_type(rec), "railbind");
	assert_string_equal(aff_kmod_rec_get(rec, "generation"), "7");
	assert_null(aff_kmod_rec_get(rec, "gen"));

	rec = aff_kmod_snapshot_rec(snap, 2);
	assert_string_equal(aff_kmod_rec_type(rec), "dev");
	assert_string_equal(aff_kmod_rec_get(rec, "numa"), "-1");
	assert_string_equal(aff_kmod_rec_get(rec, "cpus"), "0-3,8");
	assert_int_equal(aff_kmod_rec_nkeys(rec), 5);
	assert_int_equal(aff_kmod_rec_line(rec), 3);
	assert_string_equal(aff_kmod_rec_key(rec, 1, &value), "kind");
	assert_string_equal(value, "gpu");
	assert_null(aff_kmod_rec_key(rec, 5, &value));

	assert_null(aff_kmod_snapshot_rec(snap, 6));
	aff_kmod_snapshot_free(snap);
}

static void test_next(void **state)
{
	struct aff_kmod_snapshot *snap;
	const struct aff_kmod_rec *rec;
	size_t from = 0, n = 0;

	(void)state;
	assert_int_equal(parse_str(good, &snap, NULL, 0), 0);
	while ((rec = aff_kmod_snapshot_next(snap, "dev", &from)) != NULL) {
		n++;
		assert_string_equal(aff_kmod_rec_type(rec), "dev");
	}
	assert_int_equal(n, 2);
	from = 0;
	rec = aff_kmod_snapshot_next(snap, "pair", &from);
	assert_non_null(rec);
	assert_string_equal(aff_kmod_rec_get(rec, "distance"), "4");
	assert_int_equal(from, 5);
	assert_null(aff_kmod_snapshot_next(snap, "nosuch", &from));
	aff_kmod_snapshot_free(snap);
}

/*
 * What railbind.ko writes since issue 14, to an unprivileged reader: view=,
 * p2p_root=, a domain past 16 bits, a VF's physfn=, a suspended port's
 * cfg= with "?" registers, no peer records, and a record type this parser
 * has never heard of (new types may be added before "end").
 */
static const char restricted[] =
	"railbind format=1 version=0.1.0 generation=9 kernel=6.12.117+deb12-amd64 "
	"peer_provider=nvidia peer_state=waiting view=restricted\n"
	"hostbridge name=pci10000:00 domain=10000 bus=00 numa=0 vendor=0x8086 device=0x09a2 "
	"p2p_root=0x8086:0x09a2\n"
	"dev pci=10000:01:00.0 kind=bridge type=root_port acs_cap=? acs_ctl=? acs_redirect=? "
	"link_speed=? cfg=suspended physfn=-\n"
	"dev pci=10000:04:00.3 kind=nic type=endpoint acs_ctl=- physfn=10000:04:00.0 cfg=ok\n"
	"pair gpu=10000:03:00.0 nic=10000:04:00.3 distance=4 redirected=0 map=bus\n"
	"health pci=10000:03:00.0 link_changes=2\n"
	"peerstat maps=4 unmaps=1 freed_without_unmap=0 overflow=0 missed=0 nvidia=waiting "
	"dmabuf=off badversion=0 untracked=0 max_maps=4096\n"
	"end records=8\n";

static void test_restricted(void **state)
{
	struct aff_kmod_snapshot *snap;
	const struct aff_kmod_rec *rec;
	size_t from = 0;

	(void)state;
	assert_int_equal(parse_str(restricted, &snap, NULL, 0), 0);
	assert_string_equal(aff_kmod_rec_get(aff_kmod_snapshot_rec(snap, 0), "view"),
			    "restricted");
	rec = aff_kmod_snapshot_next(snap, "dev", &from);
	assert_non_null(rec);
	assert_string_equal(aff_kmod_rec_get(rec, "pci"), "10000:01:00.0");
	assert_string_equal(aff_kmod_rec_get(rec, "acs_ctl"), "?");
	assert_string_equal(aff_kmod_rec_get(rec, "cfg"), "suspended");
	rec = aff_kmod_snapshot_next(snap, "dev", &from);
	assert_non_null(rec);
	assert_string_equal(aff_kmod_rec_get(rec, "physfn"), "10000:04:00.0");
	from = 0;
	assert_null(aff_kmod_snapshot_next(snap, "peer", &from));
	from = 0;
	rec = aff_kmod_snapshot_next(snap, "health", &from);
	assert_non_null(rec);
	assert_string_equal(aff_kmod_rec_get(rec, "link_changes"), "2");
	aff_kmod_snapshot_free(snap);
}

struct bad_case {
	const char *text;
	int ret;
	const char *msg;	/* expected at the start of the error */
};

static const struct bad_case bad[] = {
	{ "", -EPROTO, "line 1: expected the \"railbind\" header" },
	{ "railbind format=1\nend records=2", -EPROTO, "line 2: expected a newline" },
	{ "railbind format=1\nDev pci=x\nend records=3\n", -EINVAL,
	  "line 2: expected a record type" },
	{ "railbind format=1\ndev pci\nend records=3\n", -EINVAL,
	  "line 2: expected '=' after key \"pci\"" },
	{ "railbind format=1\ndev pci=\nend records=3\n", -EINVAL,
	  "line 2: expected a value for key \"pci\"" },
	{ "railbind format=1\ndev pci=a  numa=1\nend records=3\n", -EINVAL,
	  "line 2: expected a key" },
	{ "railbind format=1\ndev pci=a \nend records=3\n", -EINVAL,
	  "line 2: expected a key" },
	{ "railbind format=1\ndev pci=a pci=b\nend records=3\n", -EINVAL,
	  "line 2: key \"pci\" appears twice" },
	{ "railbind format=1\n\nend records=3\n", -EINVAL,
	  "line 2: expected a record type" },
	{ "dev pci=a\nend records=2\n", -EPROTO,
	  "line 1: expected the \"railbind\" header" },
	{ "railbind version=1\nend records=2\n", -EPROTO,
	  "line 1: expected format=<number>" },
	{ "railbind format=2\nend records=2\n", -EPROTONOSUPPORT,
	  "line 1: format 2 is not supported" },
	{ "railbind format=1\ndev pci=a\n", -EPROTO,
	  "line 2: expected the \"end\" trailer" },
	{ "railbind format=1\nend records=3\n", -EPROTO,
	  "line 2: trailer says 3 records, found 2" },
	{ "railbind format=1\nend records=2x\n", -EPROTO,
	  "line 2: expected records=<number>" },
};

static void test_bad(void **state)
{
	struct aff_kmod_snapshot *snap = (void *)1;
	char err[160];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = parse_str(bad[i].text, &snap, err, sizeof(err));

		if (ret != bad[i].ret || strncmp(err, bad[i].msg, strlen(bad[i].msg)))
			fail_msg("case %zu: got %d \"%s\", expected %d \"%s\"", i, ret, err,
				 bad[i].ret, bad[i].msg);
		assert_null(snap);
	}
}

static void test_nul_and_len(void **state)
{
	static const char text[] = "railbind format=1\nend rec\0rds=2\n";
	struct aff_kmod_snapshot *snap;
	char err[128];

	(void)state;
	assert_int_equal(aff_kmod_snapshot_parse(text, sizeof(text) - 1, &snap, err,
						 sizeof(err)), -EINVAL);
	assert_string_equal(err, "line 2: unexpected NUL byte");
	/* len, not the NUL, bounds the text: a prefix cut mid-line is truncated. */
	assert_int_equal(aff_kmod_snapshot_parse(good, 30, &snap, err, sizeof(err)),
			 -EPROTO);
	assert_int_equal(aff_kmod_snapshot_parse(NULL, 0, &snap, NULL, 0), -EPROTO);
	assert_int_equal(aff_kmod_snapshot_parse(NULL, 5, &snap, NULL, 0), -EINVAL);
	assert_int_equal(aff_kmod_snapshot_parse(good, strlen(good), NULL, NULL, 0),
			 -EINVAL);
}

static void test_bounds(void **state)
{
	struct aff_kmod_snapshot *snap;
	size_t n = AFF_KMOD_MAX_LINE + 64, i, pos;
	char err[128], *text;

	(void)state;
	text = malloc(n + 64);
	assert_non_null(text);
	pos = (size_t)sprintf(text, "railbind format=1 x=");
	for (i = pos; i < AFF_KMOD_MAX_LINE + 1; i++)
		text[i] = 'a';
	pos = i;
	pos += (size_t)sprintf(text + pos, "\nend records=2\n");
	assert_int_equal(aff_kmod_snapshot_parse(text, pos, &snap, err, sizeof(err)),
			 -E2BIG);
	assert_string_equal(err, "line 1: line longer than 4096 bytes");

	pos = (size_t)sprintf(text, "railbind format=1");
	for (i = 0; i <= AFF_KMOD_MAX_KEYS; i++)
		pos += (size_t)sprintf(text + pos, " k%zu=v", i);
	pos += (size_t)sprintf(text + pos, "\nend records=2\n");
	assert_int_equal(aff_kmod_snapshot_parse(text, pos, &snap, err, sizeof(err)),
			 -E2BIG);
	assert_string_equal(err, "line 1: more than 64 keys");
	free(text);
}

static void test_short_err(void **state)
{
	struct aff_kmod_snapshot *snap;
	char err[8];

	(void)state;
	/* The message is cut to the buffer, never overflows it. */
	assert_int_equal(parse_str("x\n", &snap, err, sizeof(err)), -EPROTO);
	assert_int_equal(strlen(err), sizeof(err) - 1);
	aff_kmod_snapshot_free(NULL);
	assert_int_equal(aff_kmod_snapshot_count(NULL), 0);
	assert_null(aff_kmod_rec_get(NULL, "x"));
}

static void test_read(void **state)
{
	char root[] = "/tmp/test_kmod_snapshot.XXXXXX", path[128];
	struct aff_kmod_snapshot *snap;
	size_t i;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(root));
	/* No module: a clear -ENOENT so callers fall back. */
	assert_int_equal(aff_kmod_snapshot_read(root, &snap, NULL, 0), -ENOENT);
	assert_null(snap);
	snprintf(path, sizeof(path), "%s/dev", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/dev/railbind", root);
	f = fopen(path, "w");
	assert_non_null(f);
	/* Bigger than the first read buffer, so the growth path runs; record i+1 is dev i. */
	fputs("railbind format=1\n", f);
	for (i = 0; i < 3000; i++)
		fprintf(f, "dev pci=0000:%02zx:%02zx.0 kind=nic numa=-1\n", i / 32, i % 32);
	fputs("end records=3002\n", f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(aff_kmod_snapshot_read(root, &snap, NULL, 0), 0);
	assert_int_equal(aff_kmod_snapshot_count(snap), 3002);
	assert_string_equal(aff_kmod_rec_get(aff_kmod_snapshot_rec(snap, 3000), "pci"),
			    "0000:5d:17.0");
	aff_kmod_snapshot_free(snap);
	unlink(path);
	snprintf(path, sizeof(path), "%s/dev", root);
	rmdir(path);
	rmdir(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_next),
		cmocka_unit_test(test_restricted),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_nul_and_len),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_short_err),
		cmocka_unit_test(test_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
