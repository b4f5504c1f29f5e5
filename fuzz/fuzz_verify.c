// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What railbind verify reads of other people's processes and of the broker:
 * a /proc/PID/stat line (the command name is the process's choice), numa_maps,
 * an environ block (the process's own bytes), the broker's lease file and its
 * counters file. The input is five parts separated by the line "%%\n": STAT,
 * NUMA_MAPS, ENVIRON (binary, NUL-separated), LEASES, COUNTERS. Checked:
 *  - aff_vproc_parse(): the command name fits its buffer; every node of the
 *    memory placement is 0..63 and counted once; every policy is a non-empty
 *    string counted once, largest first; an environment value is at most
 *    1024 bytes; a launcher's local rank names the variable it came from;
 *  - aff_vleases_parse(): every lease has a pid > 0 and a job;
 *  - aff_health_parse(): every link's address is a PCI address and is there
 *    once, every port is 1..255 of a named device, there once.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "health.h"
#include "verify.h"

/* The next "%%\n"-ended part of [*p, end), copied with a NUL after it. */
static char *part(const uint8_t **p, const uint8_t *end, size_t *len)
{
	const uint8_t *q = *p, *sep = NULL;
	char *s;

	while (q + 3 <= end) {
		if (q[0] == '%' && q[1] == '%' && q[2] == '\n') {
			sep = q;
			break;
		}
		q++;
	}
	*len = sep ? (size_t)(sep - *p) : (size_t)(end - *p);
	s = fuzz_strdup(*p, *len);
	*p += *len + (sep ? 3 : 0);
	return s;
}

static void check_proc(const char *stat, char *maps, const char *env, size_t envlen)
{
	struct aff_vproc p;
	size_t i, k;

	FUZZ_CHECK(aff_vproc_parse(&p, stat, maps, env, envlen) == 0);
	FUZZ_CHECK(strlen(p.comm) < sizeof(p.comm));
	for (i = 0; i < p.nmem; i++) {
		FUZZ_CHECK(p.mem[i].node >= 0 && p.mem[i].node < 64);
		for (k = 0; k < i; k++)
			FUZZ_CHECK(p.mem[k].node != p.mem[i].node);
	}
	for (i = 0; i < p.npol; i++) {
		FUZZ_CHECK(p.pol[i].policy && *p.pol[i].policy);
		FUZZ_CHECK(!i || p.pol[i - 1].kb >= p.pol[i].kb);
		for (k = 0; k < i; k++)
			FUZZ_CHECK(strcmp(p.pol[k].policy, p.pol[i].policy));
	}
	for (i = 0; i < AFF_VENV_COUNT; i++)
		FUZZ_CHECK(!p.env[i] || strlen(p.env[i]) <= 1024);
	FUZZ_CHECK(!p.env[AFF_VENV_LOCAL_RANK] || p.env_rank_var);
	FUZZ_CHECK(!p.env[AFF_VENV_JOB] || p.env_job_var);
	aff_vproc_clear(&p);
}

static void check_leases(const char *text)
{
	struct aff_vleases ls;
	size_t i;

	if (aff_vleases_parse(text, &ls) < 0)
		return;
	for (i = 0; i < ls.n; i++)
		FUZZ_CHECK(ls.l[i].pid > 0 && ls.l[i].job);
	aff_vleases_clear(&ls);
}

static void check_counters(const char *text)
{
	struct aff_health h;
	unsigned d, b, s, f;
	size_t i, k;
	char c;

	if (aff_health_parse(text, &h) < 0)
		return;
	for (i = 0; i < h.nlink; i++) {
		FUZZ_CHECK(sscanf(h.link[i].pci, "%4x:%2x:%2x.%1x%c", &d, &b, &s, &f, &c) == 4);
		for (k = 0; k < i; k++)
			FUZZ_CHECK(strcmp(h.link[k].pci, h.link[i].pci));
	}
	for (i = 0; i < h.nport; i++) {
		FUZZ_CHECK(h.port[i].port >= 1 && h.port[i].port <= 255 && *h.port[i].name);
		for (k = 0; k < i; k++)
			FUZZ_CHECK(h.port[k].port != h.port[i].port ||
				   strcmp(h.port[k].name, h.port[i].name));
	}
	aff_health_clear(&h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	size_t len, envlen;
	char *stat = part(&p, end, &len), *maps = part(&p, end, &len);
	char *env = part(&p, end, &envlen), *leases = part(&p, end, &len);
	char *counters = part(&p, end, &len);

	check_proc(stat, maps, env, envlen);
	check_leases(leases);
	check_counters(counters);
	free(stat);
	free(maps);
	free(env);
	free(leases);
	free(counters);
	return 0;
}
