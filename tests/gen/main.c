// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rbgen: writes hwloc v2 XML for a described machine, for railbind's tests.
 *
 *   rbgen [-o OUT] [--nvml ANSWERS] DESC.topo
 *   rbgen --gpus N [--nics-per-gpu K | --gpus-per-nic K] [--numa M]
 *         [--cores-per-numa C] [--smt T] [-o OUT]
 *
 * Exit status: 0 written, 1 usage or I/O error, 2 the description is wrong
 * (message FILE:LINE: ...). With -o nothing is left behind on failure.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "rbgen.h"

static void usage(FILE *f)
{
	fputs("usage: rbgen [-o OUT] [--nvml ANSWERS] DESC.topo\n"
	      "       rbgen --gpus N [--nics-per-gpu K | --gpus-per-nic K] [--numa M]\n"
	      "             [--cores-per-numa C] [--smt T] [-o OUT]\n"
	      "Writes hwloc v2 XML (stdout unless -o) for a machine description\n"
	      "(format: tests/gen/README.md) or for a parametric N-GPU machine.\n"
	      "--nvml ANSWERS also writes what NVML answers there, for the stand-in\n"
	      "libnvidia-ml.so.1 of the tests (tests/gpu/nvml_stub.c).\n"
	      "Exit status: 0 ok, 1 usage or I/O error, 2 bad description.\n", f);
}

static int parse_num(const char *opt, const char *s, int min, int max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "rbgen: %s expects a number from %d to %d, got '%s'\n", opt, min,
			max, s);
		exit(1);
	}
	return (int)v;
}

static int write_out(const struct rb_machine *m, const char *out)
{
	char *tmp;
	mode_t um;
	FILE *f;
	int fd;

	if (!out) {
		if (rb_write_xml(m, stdout) || fflush(stdout)) {
			fprintf(stderr, "rbgen: writing to stdout: %s\n", strerror(errno));
			return 1;
		}
		return 0;
	}
	/* a temporary file beside OUT, renamed over it only once complete */
	tmp = rb_xmalloc(strlen(out) + 16);
	sprintf(tmp, "%s.tmpXXXXXX", out);
	fd = mkstemp(tmp);
	if (fd < 0) {
		fprintf(stderr, "rbgen: creating %s: %s\n", tmp, strerror(errno));
		free(tmp);
		return 1;
	}
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		goto fail;
	}
	um = umask(0);
	umask(um);
	/* mkstemp makes it 0600; a fixture is as readable as any new file */
	if (rb_write_xml(m, f) || fchmod(fd, 0666 & ~um)) {
		fclose(f);
		goto fail;
	}
	if (fclose(f))
		goto fail;
	if (rename(tmp, out))
		goto fail;
	free(tmp);
	return 0;
fail:
	fprintf(stderr, "rbgen: writing %s: %s\n", out, strerror(errno));
	unlink(tmp);
	free(tmp);
	return 1;
}

static int check_nvml(const struct rb_machine *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	if (!f) {
		perror("rbgen");
		return 1;
	}
	rc = rb_write_nvml(m, f);
	fclose(f);
	free(buf);
	return rc == -1 ? RBGEN_EXIT_DESC : 0;
}

static int write_nvml(const struct rb_machine *m, const char *path)
{
	FILE *f = fopen(path, "w");
	int rc;

	if (!f) {
		fprintf(stderr, "rbgen: creating %s: %s\n", path, strerror(errno));
		return 1;
	}
	rc = rb_write_nvml(m, f);
	if (fclose(f) && !rc)
		rc = -2;
	if (rc == -2)
		fprintf(stderr, "rbgen: writing %s: %s\n", path, strerror(errno));
	if (rc)
		unlink(path);
	return rc == -1 ? RBGEN_EXIT_DESC : rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "output", required_argument, NULL, 'o' },
		{ "gpus", required_argument, NULL, 'g' },
		{ "nics-per-gpu", required_argument, NULL, 'k' },
		{ "gpus-per-nic", required_argument, NULL, 'K' },
		{ "numa", required_argument, NULL, 'n' },
		{ "cores-per-numa", required_argument, NULL, 'c' },
		{ "smt", required_argument, NULL, 's' },
		{ "nvml", required_argument, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	struct rb_param p = { .nics_per_gpu = 1, .numa = 2, .cores_per_numa = 8, .smt = 2 };
	bool param_opt = false, k_given = false;
	struct rb_machine m = { 0 };
	const char *out = NULL, *nvml = NULL;
	int c, ret;

	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'o':
			out = optarg;
			break;
		case 'N':
			nvml = optarg;
			break;
		case 'g':
			p.gpus = parse_num("--gpus", optarg, 1, 65536);
			break;
		case 'k':
			p.nics_per_gpu = parse_num("--nics-per-gpu", optarg, 0, 30);
			k_given = true;
			param_opt = true;
			break;
		case 'K':
			p.gpus_per_nic = parse_num("--gpus-per-nic", optarg, 1, 30);
			param_opt = true;
			break;
		case 'n':
			p.numa = parse_num("--numa", optarg, 1, 64);
			param_opt = true;
			break;
		case 'c':
			p.cores_per_numa = parse_num("--cores-per-numa", optarg, 1, 1024);
			param_opt = true;
			break;
		case 's':
			p.smt = parse_num("--smt", optarg, 1, 8);
			param_opt = true;
			break;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (k_given && p.gpus_per_nic) {
		fprintf(stderr, "rbgen: --nics-per-gpu and --gpus-per-nic conflict\n");
		return 1;
	}
	if (p.gpus) {
		if (optind != argc) {
			fprintf(stderr, "rbgen: --gpus builds a machine; no description file expected\n");
			return 1;
		}
		if ((long)p.numa * p.cores_per_numa * p.smt > 65536) {
			fprintf(stderr, "rbgen: more than 65536 PUs\n");
			return 1;
		}
		ret = rb_build_param(&m, &p) ? 1 : rb_layout(&m) ? RBGEN_EXIT_DESC : 0;
	} else {
		FILE *in;

		if (param_opt) {
			fprintf(stderr, "rbgen: --nics-per-gpu, --gpus-per-nic, --numa, --cores-per-numa and --smt need --gpus\n");
			return 1;
		}
		if (optind != argc - 1) {
			usage(stderr);
			return 1;
		}
		in = fopen(argv[optind], "r");
		if (!in) {
			fprintf(stderr, "rbgen: opening %s: %s\n", argv[optind], strerror(errno));
			return 1;
		}
		ret = rb_parse(&m, in, argv[optind]) || rb_layout(&m) ? RBGEN_EXIT_DESC : 0;
		fclose(in);
	}
	/* A description error --nvml would find is found before anything is written. */
	if (!ret && nvml)
		ret = check_nvml(&m);
	if (!ret)
		ret = write_out(&m, out);
	if (!ret && nvml)
		ret = write_nvml(&m, nvml);
	rb_machine_free(&m);
	return ret;
}
