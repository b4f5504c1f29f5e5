// SPDX-License-Identifier: GPL-2.0-or-later
/* The SPANK plugin's plugstack.conf arguments, --railbind values and claim. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "spank_opts.h"

static int parse(struct rb_spank_conf *c, char *err, size_t len, int argc, ...)
{
	char *argv[16];
	va_list ap;
	int i;

	va_start(ap, argc);
	for (i = 0; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	memset(c, 0, sizeof(*c));
	return rb_spank_parse_args(c, argc, argv, err, len);
}

static void test_args(void **state)
{
	struct rb_spank_conf c;
	char err[512] = "";

	(void)state;
	assert_int_equal(parse(&c, err, sizeof(err), 0), 0);
	assert_false(c.mode.off || c.mode.required || c.mode.verbose || c.mode.isolate);
	assert_null(c.input);
	assert_int_equal(c.broker, RB_SPANK_BROKER_AUTO);
	assert_int_equal(parse(&c, err, sizeof(err), 6, "required", "input=/x/y.xml",
			       "socket=/run/s", "broker=only", "timeout=250", "config=/c"), 0);
	assert_true(c.mode.required);
	assert_false(c.mode.off);
	assert_string_equal(c.input, "/x/y.xml");
	assert_string_equal(c.socket, "/run/s");
	assert_string_equal(c.config, "/c");
	assert_int_equal(c.broker, RB_SPANK_BROKER_ONLY);
	assert_int_equal(c.timeout_ms, 250);
	/* default= keeps an earlier "required". */
	assert_int_equal(parse(&c, err, sizeof(err), 2, "required", "default=off"), 0);
	assert_true(c.mode.off);
	assert_true(c.mode.required);
	assert_int_equal(parse(&c, err, sizeof(err), 1, "default=verbose,isolate"), 0);
	assert_true(c.mode.verbose && c.mode.isolate);
	assert_false(c.mode.off || c.mode.required);
	assert_int_equal(parse(&c, err, sizeof(err), 1, "broker=off"), 0);
	assert_int_equal(c.broker, RB_SPANK_BROKER_OFF);
}

static void test_bad_args(void **state)
{
	static const char *const bad[] = {
		"require", "input", "input=", "broker=maybe", "timeout=0", "timeout=10s",
		"timeout=", "timeout=60001", "default=loud", "default=off,verbose",
		"default=on,", "",
	};
	struct rb_spank_conf c;
	char err[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(parse(&c, err, sizeof(err), 1, bad[i]), -EINVAL);
		/* The message names what was wrong. */
		assert_non_null(strchr(err, '"'));
	}
	parse(&c, err, sizeof(err), 1, "timeout=10s");
	assert_non_null(strstr(err, "10s"));
}

static void test_mode(void **state)
{
	struct rb_spank_mode m = { .off = true, .verbose = true };
	char err[256] = "";

	(void)state;
	/* --railbind alone (no value) means on, and replaces the defaults. */
	assert_int_equal(rb_spank_parse_mode(&m, NULL, err, sizeof(err)), 0);
	assert_false(m.off || m.verbose);
	assert_int_equal(rb_spank_parse_mode(&m, "verbose,isolate,required", err, sizeof(err)), 0);
	assert_true(m.verbose && m.isolate && m.required);
	/* The site's required stays when the user says less. */
	assert_int_equal(rb_spank_parse_mode(&m, "on", err, sizeof(err)), 0);
	assert_true(m.required);
	assert_false(m.verbose || m.isolate);
	assert_int_equal(rb_spank_parse_mode(&m, "off", err, sizeof(err)), 0);
	assert_true(m.off);
	/* A bad value leaves the mode as it was. */
	m = (struct rb_spank_mode){ .verbose = true };
	assert_int_equal(rb_spank_parse_mode(&m, "verbose,loud", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "\"loud\""));
	assert_true(m.verbose);
	assert_int_equal(rb_spank_parse_mode(&m, "off,required", err, sizeof(err)), -EINVAL);
	assert_int_equal(rb_spank_parse_mode(&m, ",on", err, sizeof(err)), -EINVAL);
	assert_int_equal(rb_spank_parse_mode(&m, "on,,verbose", err, sizeof(err)), -EINVAL);
	assert_false(m.off);
}

static const char *fake_env(const char *name, void *data)
{
	const char *const *kv;

	for (kv = data; *kv; kv += 2)
		if (!strcmp(kv[0], name))
			return kv[1];
	return NULL;
}

static void test_claim(void **state)
{
	const char *none[] = { "HOME", "/root", NULL };
	const char *cuda[] = { "CUDA_VISIBLE_DEVICES", "0", "GPU_DEVICE_ORDINAL", "1", NULL };
	const char *both[] = { "CUDA_VISIBLE_DEVICES", "0,1", "SLURM_JOB_GPUS", "4,5",
			       "SLURM_STEP_GPUS", "", NULL };
	const char *ord[] = { "GPU_DEVICE_ORDINAL", "3", NULL };
	const char *from = NULL;

	(void)state;
	assert_null(rb_spank_claim(fake_env, none, &from));
	assert_string_equal(rb_spank_claim(fake_env, cuda, &from), "0");
	assert_string_equal(from, "CUDA_VISIBLE_DEVICES");
	/* Slurm's node-wide indices win over CUDA's; an empty one is unset. */
	assert_string_equal(rb_spank_claim(fake_env, both, &from), "4,5");
	assert_string_equal(from, "SLURM_JOB_GPUS");
	assert_string_equal(rb_spank_claim(fake_env, ord, &from), "3");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_mode),
		cmocka_unit_test(test_claim),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
