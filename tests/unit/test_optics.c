// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Transceivers: images of each memory map written by tests/optics/eeprom_gen.h
 * from the specifications, through the decoders (optics_*.c); every expected
 * value below was worked out by hand from the specification's units (1/256 C,
 * 100 uV, 0.1 uW, 2 uA), not taken from the decoder. Then the snapshot's
 * attributes (optics_info.c), discovery's undecided cases on a recorded tree
 * (annotate_optics.c: an InfiniBand port, no module to read), and the audit's
 * transceiver check on the audit-ok fixture with each rail's module planted.
 */
#include <errno.h>
#include <math.h>
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
#include <hwloc.h>
#include <hwloc/export.h>
#include <json-c/json.h>

#include "affinity.h"
#include "audit.h"
#include "optics.h"
#include "optics_history.h"
#include "optics_info.h"
#include "optics_read.h"
#include "source_live.h"
#include "../optics/eeprom_gen.h"

#define near(x, want) assert_true(fabs((x) - (want)) < 1e-6)

static int decode(const struct gen_module *m, struct aff_optics *o, char *why, size_t len)
{
	static struct gen_image im;
	struct aff_optics_image img;

	gen_image(m, &im);
	img.data = im.data;
	img.len = im.len;
	return aff_optics_decode(aff_optics_image_read, &img, o, why, len);
}

static void sff8472_internal(void **state)
{
	struct gen_module m = gen_healthy(GEN_SFF8472);
	struct aff_optics o;

	(void)state;
	assert_int_equal(decode(&m, &o, NULL, 0), 0);
	assert_int_equal(o.kind, AFF_OPTICS_SFF8472);
	assert_false(o.ext_cal);
	assert_int_equal(o.lanes, 1);
	near(o.temp_c, 40.0);		/* 10240 / 256 */
	near(o.vcc_v, 3.3);		/* 33000 x 100 uV */
	near(o.rx_mw[0], 0.5);		/* 5000 x 0.1 uW */
	near(o.tx_mw[0], 0.6);
	near(o.bias_ma[0], 7.0);	/* 3500 x 2 uA */
	assert_int_equal(o.has_thresh, 0x1f);
	near(o.thresh[AFF_OQ_TEMP].high_alarm, 75.0);
	near(o.thresh[AFF_OQ_TEMP].low_alarm, -5.0);	/* 0xfb00 signed */
	near(o.thresh[AFF_OQ_VCC].low_warn, 3.1);
	near(o.thresh[AFF_OQ_RX].low_warn, 0.1);
	near(o.thresh[AFF_OQ_RX].low_alarm, 0.05);
	near(o.thresh[AFF_OQ_BIAS].high_alarm, 15.0);
}

static void sff8472_no_ddm(void **state)
{
	struct gen_module m = gen_healthy(GEN_SFF8472);
	struct aff_optics o;
	char why[160];

	(void)state;
	m.ddm = false;
	assert_int_equal(decode(&m, &o, why, sizeof(why)), -ENODATA);
	assert_non_null(strstr(why, "byte 92"));
}

static void sff8472_external(void **state)
{
	struct gen_module m = gen_healthy(GEN_SFF8472);
	struct aff_optics o;

	(void)state;
	m.ext_cal = true;
	/* A/D counts and the constants that turn them into the common units. */
	m.temp = 1000;
	m.slope[GEN_TEMP] = 0x0280;	/* 2.5 */
	m.offset[GEN_TEMP] = 256;	/* +1 C */
	m.vcc = 16500;
	m.slope[GEN_VCC] = 0x0200;	/* 2.0 */
	m.lane[GEN_BIAS][0] = 1000;
	m.slope[GEN_BIAS] = 0x0380;	/* 3.5 */
	m.offset[GEN_BIAS] = -100;
	m.lane[GEN_TX][0] = 3000;
	m.slope[GEN_TX] = 0x0200;
	m.lane[GEN_RX][0] = 100;
	m.rx_poly[0] = 1000.0f;
	m.rx_poly[1] = 40.0f;
	m.rx_poly[2] = 0.5f;
	m.th[GEN_TEMP][0] = 7000;
	m.th[GEN_RX][3] = 10;
	assert_int_equal(decode(&m, &o, NULL, 0), 0);
	assert_true(o.ext_cal);
	near(o.temp_c, 10.765625);	/* (2.5 x 1000 + 256) / 256 */
	near(o.vcc_v, 3.3);		/* 2 x 16500 = 33000 */
	near(o.bias_ma[0], 6.8);	/* 3.5 x 1000 - 100 = 3400 x 2 uA */
	near(o.tx_mw[0], 0.6);		/* 2 x 3000 = 6000 x 0.1 uW */
	near(o.rx_mw[0], 1.0);		/* 1000 + 40 x 100 + 0.5 x 100^2 = 10000 */
	near(o.thresh[AFF_OQ_TEMP].high_alarm, 69.359375);	/* (17500 + 256) / 256 */
	near(o.thresh[AFF_OQ_RX].low_warn, 0.145);	/* 1000 + 400 + 50 = 1450 */
}

static void sff8636_paged(void **state)
{
	struct gen_module m = gen_healthy(GEN_SFF8636);
	struct aff_optics o;

	(void)state;
	m.lane[GEN_RX][2] = 1234;
	m.lane[GEN_BIAS][3] = 4000;
	m.temp = (int16_t)-640;
	assert_int_equal(decode(&m, &o, NULL, 0), 0);
	assert_int_equal(o.kind, AFF_OPTICS_SFF8636);
	assert_false(o.flat);
	assert_int_equal(o.lanes, 4);
	near(o.temp_c, -2.5);
	near(o.rx_mw[0], 0.5);
	near(o.rx_mw[2], 0.1234);
	near(o.bias_ma[3], 8.0);
	near(o.tx_mw[1], 0.6);
	assert_int_equal(o.has_thresh, 0x1f);
	near(o.thresh[AFF_OQ_TEMP].high_warn, 70.0);
	near(o.thresh[AFF_OQ_VCC].low_alarm, 3.0);
	near(o.thresh[AFF_OQ_RX].high_alarm, 2.0);
	near(o.thresh[AFF_OQ_BIAS].low_warn, 3.0);
	near(o.thresh[AFF_OQ_TX].low_alarm, 0.05);
}

static void sff8636_flat(void **state)
{
	struct gen_module m = gen_healthy(GEN_SFF8636);
	struct aff_optics o;

	(void)state;
	m.flat = true;
	assert_int_equal(decode(&m, &o, NULL, 0), 0);
	assert_true(o.flat);
	assert_int_equal(o.has_thresh, 0);
	near(o.temp_c, 40.0);
	near(o.rx_mw[3], 0.5);
}

static void cmis_paged(void **state)
{
	struct gen_module m = gen_healthy(GEN_CMIS);
	struct aff_optics o;

	(void)state;
	m.bias_scale = 1;		/* x2 */
	m.lane[GEN_RX][7] = 777;
	m.th[GEN_TX][0] = 25000;	/* only TX power's high alarm differs from RX's */
	assert_int_equal(decode(&m, &o, NULL, 0), 0);
	assert_int_equal(o.kind, AFF_OPTICS_CMIS);
	assert_int_equal(o.lanes, 8);
	near(o.temp_c, 40.0);
	near(o.vcc_v, 3.3);
	near(o.rx_mw[7], 0.0777);
	near(o.rx_mw[0], 0.5);
	near(o.tx_mw[4], 0.6);
	near(o.bias_ma[5], 14.0);	/* 3500 x 2 uA x 2 */
	near(o.thresh[AFF_OQ_BIAS].high_alarm, 30.0);
	near(o.thresh[AFF_OQ_TX].high_alarm, 2.5);
	near(o.thresh[AFF_OQ_RX].high_alarm, 2.0);
	near(o.thresh[AFF_OQ_VCC].high_warn, 3.5);
	m.lanes = 4;			/* a DR4: four media lanes of eight */
	assert_int_equal(decode(&m, &o, NULL, 0), 0);
	assert_int_equal(o.lanes, 4);
}

static void cmis_flat(void **state)
{
	struct gen_module m = gen_healthy(GEN_CMIS);
	struct aff_optics o;

	(void)state;
	m.flat = true;
	m.temp = 45 * 256 + 128;
	assert_int_equal(decode(&m, &o, NULL, 0), 0);
	assert_true(o.flat);
	near(o.temp_c, 45.5);
	assert_int_equal(o.has, 1u << AFF_OQ_TEMP | 1u << AFF_OQ_VCC);
	assert_int_equal(o.has_thresh, 0);
}

static void unknown_identifier(void **state)
{
	struct gen_module m = gen_healthy(GEN_SFF8636);
	static struct gen_image im;
	struct aff_optics_image img;
	struct aff_optics o;
	char why[160];

	(void)state;
	gen_image(&m, &im);
	im.data[4] = 0x7e;
	img.data = im.data;
	img.len = im.len;
	assert_int_equal(aff_optics_decode(aff_optics_image_read, &img, &o, why, sizeof(why)),
			 -EPROTONOSUPPORT);
	assert_non_null(strstr(why, "0x7e"));
	img.len = 0;
	assert_int_equal(aff_optics_decode(aff_optics_image_read, &img, &o, NULL, 0), -EIO);
}

/*
 * The old ioctl's flat buffer, laid out as ethtool's uapi documents it (not
 * as optics_read.c maps it): SFF-8472 A0h at 0, A2h at 256; SFF-8636 lower
 * page at 0, upper page 00h at 128, upper pages 01h-03h at 256, 384, 512.
 */
static void to_flat(const struct gen_module *m, struct aff_optics_flat *f)
{
	static struct gen_image im;
	size_t at;

	gen_image(m, &im);
	memset(f, 0, sizeof(*f));
	f->type = m->kind == GEN_SFF8472 ? 2 : 3;	/* ETH_MODULE_SFF_8472, _8636 */
	f->len = m->kind == GEN_SFF8472 ? 512 : 640;
	for (at = 0; at < im.len; at += GEN_RECORD) {
		const uint8_t *r = im.data + at;	/* I2C address, page, bank, half */
		size_t to;

		if (m->kind == GEN_SFF8472)
			to = (r[0] == 0x51 ? 256 : 0) + 128 * (size_t)r[3];
		else
			to = r[1] ? 256 + 128 * ((size_t)r[1] - 1) : 128 * (size_t)r[3];
		memcpy(f->data + to, r + 4, 128);
	}
}

static void ioctl_layout(void **state)
{
	struct gen_module m = gen_healthy(GEN_SFF8636);
	static struct aff_optics_flat f;
	struct aff_optics o;

	(void)state;
	m.lane[GEN_RX][3] = 1500;
	to_flat(&m, &f);
	assert_int_equal(aff_optics_decode(aff_optics_flat_read, &f, &o, NULL, 0), 0);
	near(o.rx_mw[3], 0.15);
	near(o.thresh[AFF_OQ_RX].low_warn, 0.1);	/* page 03h, from byte 512 */
	near(o.thresh[AFF_OQ_TEMP].high_alarm, 75.0);
	f.len = 256;			/* a driver that gives page 00h only: no thresholds */
	assert_int_equal(aff_optics_decode(aff_optics_flat_read, &f, &o, NULL, 0), 0);
	assert_int_equal(o.has_thresh, 0);
	near(o.temp_c, 40.0);
	m = gen_healthy(GEN_SFF8472);
	m.lane[GEN_TX][0] = 4321;
	to_flat(&m, &f);
	assert_int_equal(aff_optics_decode(aff_optics_flat_read, &f, &o, NULL, 0), 0);
	near(o.tx_mw[0], 0.4321);
	near(o.thresh[AFF_OQ_BIAS].low_alarm, 2.0);
}

/* ---- On the audit-ok fixture: its NICs 05, 15, 85 and 95:00.0 ---- */

static const char *const nic_pci[4] = { "05", "15", "85", "95" };

static hwloc_topology_t fixture(void)
{
	hwloc_topology_t t;

	assert_int_equal(hwloc_topology_init(&t), 0);
	hwloc_topology_set_all_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
	assert_int_equal(hwloc_topology_set_xml(t, BUILD "/fixtures/audit-ok.xml"), 0);
	assert_int_equal(hwloc_topology_load(t), 0);
	return t;
}

static hwloc_obj_t nic(hwloc_topology_t t, int i)
{
	hwloc_obj_t o = hwloc_get_pcidev_by_busid(t, 0, (unsigned)strtoul(nic_pci[i], NULL, 16),
						  0, 0);

	assert_non_null(o);
	return o;
}

static void plant(hwloc_topology_t t, int i, const struct gen_module *m)
{
	struct aff_optics o;

	assert_int_equal(decode(m, &o, NULL, 0), 0);
	assert_int_equal(aff_optics_info_write(nic(t, i), "eth0", &o), 0);
}

/* The audit of @t: its document (put it), and the exit code. */
static struct json_object *audit(hwloc_topology_t t, int *code)
{
	struct aff_ctx *ctx = aff_ctx_new(NULL);
	struct aff_topo *topo;
	struct aff_audit *a;
	struct json_object *doc;
	char err[512], *xml;
	int len;

	assert_non_null(ctx);
	assert_int_equal(hwloc_topology_export_xmlbuffer(t, &xml, &len, 0), 0);
	assert_int_equal(aff_topo_load_buffer(ctx, "planted.xml", xml, (size_t)len - 1, 0, &topo,
					      err, sizeof(err)), 0);
	hwloc_free_xmlbuffer(t, xml);
	assert_int_equal(aff_audit_run(topo, NULL, 0, &a, err, sizeof(err)), 0);
	doc = aff_audit_to_json(a);
	*code = aff_audit_exit_code(a);
	aff_audit_unref(a);
	aff_topo_unref(topo);
	aff_ctx_unref(ctx);
	return doc;
}

static const char *jstr(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : NULL;
}

/* The transceiver findings of @doc that are not "ok": how many, and the first. */
static int findings(struct json_object *doc, struct json_object **first)
{
	struct json_object *checks;
	size_t i;
	int n = 0;

	*first = NULL;
	assert_true(json_object_object_get_ex(doc, "checks", &checks));
	for (i = 0; i < json_object_array_length(checks); i++) {
		struct json_object *c = json_object_array_get_idx(checks, i);

		if (strcmp(jstr(c, "id"), "transceiver") || !strcmp(jstr(c, "severity"), "ok"))
			continue;
		if (!n++)
			*first = c;
	}
	return n;
}

static const char *summary(struct json_object *doc)
{
	struct json_object *s;

	assert_true(json_object_object_get_ex(doc, "summary", &s));
	return jstr(s, "transceiver");
}

/* Every rail healthy but rail @bad, which gets @m. */
static struct json_object *audit_with(const struct gen_module *m, int *code)
{
	struct gen_module ok = gen_healthy(GEN_CMIS);
	hwloc_topology_t t = fixture();
	struct json_object *doc;
	int i;

	plant(t, 0, m);
	for (i = 1; i < 4; i++)
		plant(t, i, &ok);
	doc = audit(t, code);
	hwloc_topology_destroy(t);
	return doc;
}

static void audit_healthy(void **state)
{
	struct gen_module m = gen_healthy(GEN_SFF8636);
	struct json_object *doc, *c, *optics, *lanes;
	int code;

	(void)state;
	doc = audit_with(&m, &code);
	assert_int_equal(code, 0);
	assert_string_equal(summary(doc), "ok");
	assert_int_equal(findings(doc, &c), 0);
	/* The readings, for --prom: four rails, the first with its four lanes. */
	assert_true(json_object_object_get_ex(doc, "optics", &optics));
	assert_int_equal(json_object_array_length(optics), 4);
	assert_true(json_object_object_get_ex(json_object_array_get_idx(optics, 0), "lanes", &lanes));
	assert_int_equal(json_object_array_length(lanes), 4);
	json_object_put(doc);
}

/* The audit of a node whose first rail has @m: exit @code, one finding of @sev saying @msg. */
static void expect_one(const struct gen_module *m, int code, const char *sev, const char *msg)
{
	struct json_object *doc, *c;
	int got;

	doc = audit_with(m, &got);
	assert_int_equal(got, code);
	assert_string_equal(summary(doc), sev);
	assert_int_equal(findings(doc, &c), 1);
	assert_string_equal(jstr(c, "severity"), sev);
	assert_string_equal(jstr(c, "subject"), "mlx5_0");
	assert_non_null(strstr(jstr(c, "message"), msg));
	json_object_put(doc);
}

static void audit_rx_low_warning(void **state)
{
	struct gen_module m = gen_healthy(GEN_SFF8636);

	(void)state;
	m.lane[GEN_RX][1] = 800;	/* 0.08 mW: under the 0.1 warning, over the 0.05 alarm */
	expect_one(&m, 1, "warn", "lane 2 RX power 0.08 mW under the module's low warning 0.1");
}

static void audit_dark_lane(void **state)
{
	struct gen_module m = gen_healthy(GEN_CMIS);

	(void)state;
	m.lane[GEN_RX][5] = 0;
	expect_one(&m, 2, "fail", "lane 6 dark (0 mW received)");
}

static void audit_hot(void **state)
{
	struct gen_module m = gen_healthy(GEN_SFF8472);

	(void)state;
	m.temp = 80 * 256;		/* over the 75 C alarm */
	expect_one(&m, 2, "fail", "temperature 80 C over the module's high alarm 75");
}

/* A reason of the transceiver check's undecided entry, or NULL. */
static const char *undecided(struct json_object *doc)
{
	struct json_object *u;
	size_t i;

	assert_true(json_object_object_get_ex(doc, "undecided", &u));
	for (i = 0; i < json_object_array_length(u); i++)
		if (!strcmp(jstr(json_object_array_get_idx(u, i), "id"), "transceiver"))
			return jstr(json_object_array_get_idx(u, i), "reason");
	return NULL;
}

static void audit_unprivileged(void **state)
{
	hwloc_topology_t t = fixture();
	struct json_object *doc;
	int i, code;

	(void)state;
	for (i = 0; i < 4; i++)
		assert_int_equal(aff_optics_info_undecided(nic(t, i), "eth0",
			"needs CAP_NET_ADMIN (reading a module EEPROM is privileged: run the audit or snapshot as root)"), 0);
	doc = audit(t, &code);
	hwloc_topology_destroy(t);
	assert_int_equal(code, 0);	/* the rest of audit-ok is healthy */
	assert_string_equal(summary(doc), "unknown");
	assert_non_null(undecided(doc));
	assert_non_null(strstr(undecided(doc), "all 4 rails: needs CAP_NET_ADMIN"));
	json_object_put(doc);
}

/* @rel under @root, its directories made first (mkdir -p), holding @text. */
static void write_file(const char *root, const char *rel, const char *text)
{
	char path[512];
	size_t i, n = (size_t)snprintf(path, sizeof(path), "%s/%s", root, rel);
	FILE *f;

	for (i = strlen(root) + 1; i < n; i++)
		if (path[i] == '/') {
			path[i] = '\0';
			assert_true(mkdir(path, 0755) == 0 || errno == EEXIST);
			path[i] = '/';
		}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A recorded tree: ibp5s0 is an InfiniBand port (type 32), ibp21s0 Ethernet. */
static void discover_recorded_tree(void **state)
{
	char root[] = "/tmp/test_optics.XXXXXX", path[256];
	hwloc_topology_t t = fixture();
	struct json_object *doc;
	const char *why;
	int code;

	(void)state;
	assert_non_null(mkdtemp(root));
	write_file(root, "sys/class/net/ibp5s0/type", "32\n");
	write_file(root, "sys/class/net/ibp21s0/type", "1\n");
	assert_int_equal(aff_discover_optics(t, root, NULL), 0);
	why = hwloc_obj_get_info_by_name(nic(t, 0), AFF_INFO_XCVR_UNDECIDED);
	assert_non_null(why);
	assert_non_null(strstr(why, "InfiniBand port"));
	assert_non_null(strstr(why, "MADs"));
	why = hwloc_obj_get_info_by_name(nic(t, 1), AFF_INFO_XCVR_UNDECIDED);
	assert_non_null(why);
	assert_non_null(strstr(why, "no module EEPROM"));
	doc = audit(t, &code);
	hwloc_topology_destroy(t);
	assert_string_equal(summary(doc), "unknown");
	assert_non_null(strstr(undecided(doc), "mlx5_0: an InfiniBand port"));
	json_object_put(doc);
	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	assert_int_equal(system(path), 0);
}

static void info_round_trip(void **state)
{
	struct gen_module m = gen_healthy(GEN_CMIS);
	hwloc_topology_t t = fixture();
	struct aff_optics o, back;
	const char *why;
	char buf[160];

	(void)state;
	m.lane[GEN_BIAS][2] = 1234;
	assert_int_equal(decode(&m, &o, NULL, 0), 0);
	assert_int_equal(aff_optics_info_write(nic(t, 2), "eth2", &o), 0);
	assert_string_equal(hwloc_obj_get_info_by_name(nic(t, 2), "RailbindXcvrBias"),
			    "7.0000,7.0000,2.4680,7.0000,7.0000,7.0000,7.0000,7.0000");
	assert_string_equal(hwloc_obj_get_info_by_name(nic(t, 2), "RailbindXcvrTempThresholds"),
			    "75.0000,-5.0000,70.0000,0.0000");
	assert_int_equal(aff_optics_info_read(nic(t, 2), &back, &why, buf, sizeof(buf)), 0);
	assert_int_equal(back.lanes, 8);
	assert_int_equal(back.has, o.has);
	assert_int_equal(back.has_thresh, o.has_thresh);
	near(back.bias_ma[2], 2.468);
	assert_int_equal(aff_optics_info_read(nic(t, 3), &back, &why, buf, sizeof(buf)), -ENOENT);
	/* A hand-edited snapshot: refused with the attribute named. */
	hwloc_obj_add_info(nic(t, 3), "RailbindXcvrType", "cmis");
	hwloc_obj_add_info(nic(t, 3), "RailbindXcvrLanes", "4");
	hwloc_obj_add_info(nic(t, 3), "RailbindXcvrRxPower", "0.5,0.5,nan,0.5");
	assert_int_equal(aff_optics_info_read(nic(t, 3), &back, &why, buf, sizeof(buf)), -EINVAL);
	assert_non_null(strstr(why, "RailbindXcvrRxPower"));
	hwloc_topology_destroy(t);
}

/* The earlier temperatures, as root-run reads keep them (optics_history.c). */
static void history_file(void **state)
{
	char dir[] = "/tmp/railbind-hist.XXXXXX", path[64], link[64], err[256];
	struct json_object *doc;
	hwloc_topology_t t = fixture();
	struct aff_optics o = { .has = 1u << AFF_OQ_TEMP, .temp_c = 58 }, back;
	const char *why;
	char buf[200];
	FILE *f;
	int i;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/optics.json", dir);
	snprintf(link, sizeof(link), "%s/link.json", dir);
	/* Planted: one sample from two days ago, three hourly ones, one bad, one from the future. */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"schema\":\"railbind.optics/1\",\"modules\":{\"0000:05:00.0\":[[1699800000,20],[1700000000,40.0],[1700003600,46.0],[\"x\",1],[1700007200,52.0],[1700099999,9]],\"0000:15:00.0\":[[1700000000,30]]}}",
	      f);
	fclose(f);
	assert_int_equal(aff_optics_history_load(path, &doc), 0);
	assert_int_equal(aff_optics_history_take(doc, "0000:05:00.0", 1700010800, &o), 0);
	assert_int_equal(o.when, 1700010800);
	assert_int_equal(o.nhist, 3);
	assert_int_equal(o.hist_t[0], 1700000000);
	near(o.hist_c[2], 52.0);
	assert_int_equal(aff_optics_history_save(doc, path, err, sizeof(err)), 0);
	json_object_put(doc);
	/* Read back: the reading just taken is the newest sample, the rest dropped. */
	assert_int_equal(aff_optics_history_load(path, &doc), 0);
	o.temp_c = 59;
	assert_int_equal(aff_optics_history_take(doc, "0000:05:00.0", 1700014400, &o), 0);
	assert_int_equal(o.nhist, 4);
	assert_int_equal(o.hist_t[3], 1700010800);
	near(o.hist_c[3], 58.0);
	/* The attributes carry it into a snapshot and back. */
	o.kind = AFF_OPTICS_SFF8636;
	o.lanes = 1;
	assert_int_equal(aff_optics_info_write(nic(t, 0), "eth0", &o), 0);
	assert_string_equal(hwloc_obj_get_info_by_name(nic(t, 0), "RailbindXcvrTempHistory"),
			    "1700000000:40.00,1700003600:46.00,1700007200:52.00,1700010800:58.00");
	assert_string_equal(hwloc_obj_get_info_by_name(nic(t, 0), "RailbindXcvrTime"), "1700014400");
	assert_int_equal(aff_optics_info_read(nic(t, 0), &back, &why, buf, sizeof(buf)), 0);
	assert_int_equal(back.when, 1700014400);
	assert_int_equal(back.nhist, 4);
	assert_int_equal(back.hist_t[1], 1700003600);
	near(back.hist_c[3], 58.0);
	json_object_put(doc);
	/* Never more than AFF_OPTICS_HIST_MAX kept, the newest. */
	assert_int_equal(aff_optics_history_load(path, &doc), 0);
	for (i = 0; i < 40; i++)
		assert_int_equal(aff_optics_history_take(doc, "0000:15:00.0", 1700020000 + i * 60LL, &o), 0);
	assert_int_equal(o.nhist, AFF_OPTICS_HIST_MAX - 1);
	assert_int_equal(o.hist_t[AFF_OPTICS_HIST_MAX - 2], 1700020000 + 38 * 60LL);
	json_object_put(doc);
	/* A symbolic link, garbage, another schema: an empty history, not an error. */
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(aff_optics_history_load(link, &doc), 0);
	assert_int_equal(aff_optics_history_take(doc, "0000:05:00.0", 1700014400, &o), 0);
	assert_int_equal(o.nhist, 0);
	json_object_put(doc);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"schema\":\"railbind.counters/1\",\"modules\":{}}", f);
	fclose(f);
	assert_int_equal(aff_optics_history_load(path, &doc), 0);
	assert_int_equal(aff_optics_history_take(doc, "0000:05:00.0", 1700014400, &o), 0);
	assert_int_equal(o.nhist, 0);
	json_object_put(doc);
	unlink(link);
	unlink(path);
	rmdir(dir);
	hwloc_topology_destroy(t);
}

/* Vendor name and part number, where each specification keeps them. */
static void identity_fields(void **state)
{
	static const enum gen_kind kinds[] = { GEN_SFF8472, GEN_SFF8636, GEN_CMIS };
	hwloc_topology_t t = fixture();
	struct aff_optics o, back;
	const char *why;
	char buf[200];
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct gen_module m = gen_healthy(kinds[k]);

		m.vendor = " ACME OPTICS";
		m.part = "QSFP-100G-SR4";
		assert_int_equal(decode(&m, &o, NULL, 0), 0);
		assert_string_equal(o.vendor, "ACME OPTICS");
		assert_string_equal(o.part, "QSFP-100G-SR4");
		/* Left zero (no name): none, not an empty or garbage one. */
		m.vendor = NULL;
		m.part = NULL;
		assert_int_equal(decode(&m, &o, NULL, 0), 0);
		assert_string_equal(o.vendor, "");
		assert_string_equal(o.part, "");
	}
	/* A byte that is not printable ASCII: the field is not given. */
	aff_optics_ascii((const uint8_t *)"ACME\x01OPTICS     ", 16, buf);
	assert_string_equal(buf, "");
	aff_optics_ascii((const uint8_t *)"                ", 16, buf);
	assert_string_equal(buf, "");
	{
		struct gen_module m = gen_healthy(GEN_SFF8636);

		m.vendor = "ACME";
		m.part = "Q28-LR4";
		assert_int_equal(decode(&m, &o, NULL, 0), 0);
	}
	assert_int_equal(aff_optics_info_write(nic(t, 1), "eth1", &o), 0);
	assert_string_equal(hwloc_obj_get_info_by_name(nic(t, 1), "RailbindXcvrVendor"), "ACME");
	assert_string_equal(hwloc_obj_get_info_by_name(nic(t, 1), "RailbindXcvrPart"), "Q28-LR4");
	assert_int_equal(aff_optics_info_read(nic(t, 1), &back, &why, buf, sizeof(buf)), 0);
	assert_string_equal(back.vendor, "ACME");
	assert_string_equal(back.part, "Q28-LR4");
	/* Hand-edited: a blank at an end, or too long, is refused, naming it. */
	hwloc_obj_add_info(nic(t, 3), "RailbindXcvrType", "cmis");
	hwloc_obj_add_info(nic(t, 3), "RailbindXcvrLanes", "4");
	hwloc_obj_add_info(nic(t, 3), "RailbindXcvrPart", "A-PART-NUMBER-OF-20C");
	assert_int_equal(aff_optics_info_read(nic(t, 3), &back, &why, buf, sizeof(buf)), -EINVAL);
	assert_non_null(strstr(why, "RailbindXcvrPart=\"A-PART-NUMBER-OF-20C\", expected 1 to 16"));
	hwloc_topology_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sff8472_internal),
		cmocka_unit_test(sff8472_no_ddm),
		cmocka_unit_test(sff8472_external),
		cmocka_unit_test(sff8636_paged),
		cmocka_unit_test(sff8636_flat),
		cmocka_unit_test(cmis_paged),
		cmocka_unit_test(cmis_flat),
		cmocka_unit_test(unknown_identifier),
		cmocka_unit_test(ioctl_layout),
		cmocka_unit_test(info_round_trip),
		cmocka_unit_test(audit_healthy),
		cmocka_unit_test(audit_rx_low_warning),
		cmocka_unit_test(audit_dark_lane),
		cmocka_unit_test(audit_hot),
		cmocka_unit_test(audit_unprivileged),
		cmocka_unit_test(discover_recorded_tree),
		cmocka_unit_test(history_file),
		cmocka_unit_test(identity_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
