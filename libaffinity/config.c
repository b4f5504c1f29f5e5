// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * railbind.conf(5): the few things a site must be able to say. One
 * "key = value" per line, '#' starts a comment; lists are comma separated
 * and repeated keys add to the list. The text in, struct aff_config out:
 * which file, and reading it, are the context's (ctx.c).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void aff_config_clear(struct aff_config *conf)
{
	size_t i;

	for (i = 0; i < conf->nexclude; i++)
		free(conf->exclude_nic[i]);
	for (i = 0; i < conf->ninclude; i++)
		free(conf->include_nic[i]);
	free(conf->exclude_nic);
	free(conf->include_nic);
	free(conf->accel);
	free(conf->nccl_topo_file);
	free(conf->slurm_gres_conf);
	memset(conf, 0, sizeof(*conf));
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1")) {
		*out = true;
		return 0;
	}
	if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0")) {
		*out = false;
		return 0;
	}
	return -EINVAL;
}

/* "64M": a size in bytes, K/M/G 1024-based; hwloc takes at most an int. */
static int parse_size(const char *v, size_t *out)
{
	unsigned long long n, unit = 1;
	char *end;

	if (!isdigit((unsigned char)*v))
		return -EINVAL;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno)
		return -EINVAL;
	if (*end && strchr("kK", *end))
		unit = 1ull << 10;
	else if (*end && strchr("mM", *end))
		unit = 1ull << 20;
	else if (*end && strchr("gG", *end))
		unit = 1ull << 30;
	if (unit > 1)
		end++;
	if (*end || n > (1ull << 30) / unit || n * unit < (1ull << 20))
		return -EINVAL;
	*out = (size_t)(n * unit);
	return 0;
}

static int parse_hex16(const char *s, int *out)
{
	char *end;
	unsigned long v;

	if (!isxdigit((unsigned char)*s))
		return -EINVAL;
	v = strtoul(s, &end, 16);
	if (*end || v > 0xffff || end - s > 4)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

static int add_accel(struct aff_config *conf, char *item)
{
	struct aff_idmatch m = { .device = -1 };
	char *colon = strchr(item, ':');
	void *p;

	if (colon)
		*colon = '\0';
	if (parse_hex16(item, &m.vendor) < 0)
		return -EINVAL;
	if (colon && strcmp(colon + 1, "*") &&
	    parse_hex16(colon + 1, &m.device) < 0)
		return -EINVAL;
	p = realloc(conf->accel, (conf->naccel + 1) * sizeof(*conf->accel));
	if (!p)
		return -ENOMEM;
	conf->accel = p;
	conf->accel[conf->naccel++] = m;
	return 0;
}

static int add_name(char ***list, size_t *n, const char *item)
{
	char **p = realloc(*list, (*n + 1) * sizeof(**list));

	if (!p)
		return -ENOMEM;
	*list = p;
	p[*n] = strdup(item);
	if (!p[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int parse_list(struct aff_config *conf, const char *key, char *value)
{
	char *item;
	int rc = 0;

	/* strsep, not strtok_r: "a,,b" and an empty value must be refused,
	 * not silently read as "a,b" and nothing. */
	while (!rc && (item = strsep(&value, ",")) != NULL) {
		item = trim(item);
		if (!*item)
			return -EINVAL;
		if (!strcmp(key, "accelerator"))
			rc = add_accel(conf, item);
		else if (!strcmp(key, "exclude-nic"))
			rc = add_name(&conf->exclude_nic, &conf->nexclude, item);
		else
			rc = add_name(&conf->include_nic, &conf->ninclude, item);
	}
	return rc;
}

/*
 * The health limits and their defaults (railbind.conf(5) says where each comes from).
 */
static const struct {
	const char *key;
	unsigned long def;
} health_limits[AFF_LIMIT_N] = {
	[AFF_LIMIT_PCIE_COR_PER_MIN] = { "pcie-correctable-per-minute", 8 },
	[AFF_LIMIT_PCIE_NONFATAL] = { "pcie-nonfatal", 1 },
	[AFF_LIMIT_PCIE_FATAL] = { "pcie-fatal", 1 },
	[AFF_LIMIT_LINK_FLAPPING] = { "link-flapping", 2 },
	[AFF_LIMIT_PORT_FLAPPING] = { "port-flapping", 1 },
	[AFF_LIMIT_HEALTH_INTERVAL] = { "health-interval", 10 },
	/* A link kept paused sends thousands a second; congestion, tens to hundreds. */
	[AFF_LIMIT_PAUSE_PER_SEC] = { "pause-frames-per-second", 1000 },
	[AFF_LIMIT_RAIL_ERRORS] = { "rail-errors", 10 },
	[AFF_LIMIT_RAIL_DISCARDS] = { "rail-discards", 100 },
	/* A module follows its airflow and load by a few degrees; a fan or a fibre failing, faster. */
	[AFF_LIMIT_XCVR_TEMP_RISE] = { "transceiver-temp-rise-per-hour", 5 },
};

unsigned long aff_config_health_limit(const struct aff_config *conf, enum aff_health_limit l)
{
	return conf->health_set & (1u << l) ? conf->health_limit[l] : health_limits[l].def;
}

AFF_EXPORT const char *aff_ctx_nccl_topo_file(const struct aff_ctx *ctx)
{
	return ctx ? ctx->conf.nccl_topo_file : NULL;
}

AFF_EXPORT enum aff_gpu_sharing aff_ctx_gpu_sharing(const struct aff_ctx *ctx)
{
	return ctx ? (enum aff_gpu_sharing)ctx->conf.gpu_sharing : AFF_GPU_SHARING_AUTO;
}

AFF_EXPORT unsigned long aff_ctx_health_interval(const struct aff_ctx *ctx)
{
	return aff_config_health_limit(&ctx->conf, AFF_LIMIT_HEALTH_INTERVAL);
}

const char *aff_config_health_key(enum aff_health_limit l)
{
	return health_limits[l].key;
}

/* 1: a health limit, parsed (or -EINVAL); 0: another key. */
static int parse_health_limit(struct aff_config *conf, const char *key, const char *value,
			      const char **expect)
{
	unsigned long v;
	char *end;
	int l;

	for (l = 0; l < AFF_LIMIT_N; l++)
		if (!strcmp(key, health_limits[l].key))
			break;
	if (l == AFF_LIMIT_N)
		return 0;
	*expect = l == AFF_LIMIT_HEALTH_INTERVAL ?
		  "a whole number of seconds from 0 (off) to 86400" :
		  "a whole number from 0 (off) to 1000000";
	errno = 0;
	v = strtoul(value, &end, 10);
	if (!isdigit((unsigned char)*value) || *end || errno ||
	    v > (l == AFF_LIMIT_HEALTH_INTERVAL ? 86400 : 1000000))
		return -EINVAL;
	conf->health_limit[l] = v;
	conf->health_set |= 1u << l;
	return 1;
}

/* "2.18.3" or "2.21": NCCL_VERSION_CODE's form, major * 10000 + minor * 100 + patch. */
static int parse_nccl_version(struct aff_config *conf, const char *value, const char **expect)
{
	unsigned major, minor, patch = 0;
	int n = -1;

	*expect = "nccl-version = MAJOR.MINOR[.PATCH], e.g. 2.21.5";
	if (!isdigit((unsigned char)*value) ||
	    (sscanf(value, "%3u.%3u%n.%3u%n", &major, &minor, &n, &patch, &n) < 2) || n < 0 ||
	    value[n] || major < 2 || major > 99 || minor > 99 || patch > 99)
		return -EINVAL;
	conf->nccl_version = major * 10000 + minor * 100 + patch;
	return 0;
}

static int parse_line(struct aff_config *conf, char *line, const char **expect)
{
	int rc;

	char *eq, *key, *value;

	*expect = "\"key = value\"";
	eq = strchr(line, '=');
	if (!eq)
		return -EINVAL;
	*eq = '\0';
	key = trim(line);
	value = trim(eq + 1);
	if (!strcmp(key, "accelerator")) {
		*expect = "accelerator = VENDOR[:DEVICE] in hex, e.g. 1da3:1020";
		return parse_list(conf, key, value);
	}
	if (!strcmp(key, "exclude-nic") || !strcmp(key, "include-nic")) {
		*expect = "a comma-separated list of RDMA device names or PCI addresses";
		return parse_list(conf, key, value);
	}
	if (!strcmp(key, "ethernet-rails")) {
		*expect = "ethernet-rails = yes|no";
		return parse_bool(value, &conf->ethernet_rails);
	}
	if (!strcmp(key, "slow-rails")) {
		*expect = "slow-rails = yes|no";
		return parse_bool(value, &conf->slow_rails);
	}
	if (!strcmp(key, "memory-policy")) {
		*expect = "memory-policy = preferred|bind";
		if (!strcmp(value, "preferred") || !strcmp(value, "bind")) {
			conf->mem_bind = !strcmp(value, "bind");
			return 0;
		}
		return -EINVAL;
	}
	if (!strcmp(key, "nccl-topo-file")) {
		/* Absolute: the broker's working directory is nobody's business. */
		*expect = "nccl-topo-file = an absolute path, e.g. /var/run/nvidia-topologyd/virtualTopology.xml";
		if (*value != '/' || conf->nccl_topo_file)
			return -EINVAL;
		conf->nccl_topo_file = strdup(value);
		return conf->nccl_topo_file ? 0 : -ENOMEM;
	}
	if (!strcmp(key, "slurm-gres-conf")) {
		*expect = "slurm-gres-conf = an absolute path, e.g. /etc/slurm/gres.conf";
		if (*value != '/' || conf->slurm_gres_conf)
			return -EINVAL;
		conf->slurm_gres_conf = strdup(value);
		return conf->slurm_gres_conf ? 0 : -ENOMEM;
	}
	if (!strcmp(key, "gpu-sharing")) {
		bool yes;

		*expect = "gpu-sharing = auto|yes|no";
		if (!strcmp(value, "auto")) {
			conf->gpu_sharing = AFF_GPU_SHARING_AUTO;
			return 0;
		}
		if (parse_bool(value, &yes) < 0)
			return -EINVAL;
		conf->gpu_sharing = yes ? AFF_GPU_SHARING_YES : AFF_GPU_SHARING_NO;
		return 0;
	}
	rc = parse_health_limit(conf, key, value, expect);
	if (rc)
		return rc < 0 ? rc : 0;
	if (!strcmp(key, "roce-priority")) {
		*expect = "roce-priority = the fabric's lossless priority, 0 to 7";
		if (value[0] < '0' || value[0] > '7' || value[1])
			return -EINVAL;
		conf->roce_priority = (unsigned)(value[0] - '0');
		conf->roce_priority_set = true;
		return 0;
	}
	if (!strcmp(key, "roce-trust")) {
		*expect = "roce-trust = dscp|pcp";
		if (strcmp(value, "dscp") && strcmp(value, "pcp"))
			return -EINVAL;
		conf->roce_trust = !strcmp(value, "dscp") ? AFF_TRUST_DSCP : AFF_TRUST_PCP;
		return 0;
	}
	if (!strcmp(key, "nccl-version"))
		return parse_nccl_version(conf, value, expect);
	if (!strcmp(key, "max-input-size")) {
		*expect = "max-input-size = bytes, with K, M or G (1024-based), from 1M to 1G, e.g. 64M";
		return parse_size(value, &conf->max_input_size);
	}
	*expect = "one of accelerator, exclude-nic, include-nic, ethernet-rails, slow-rails, memory-policy, nccl-topo-file, slurm-gres-conf, gpu-sharing, max-input-size, pcie-correctable-per-minute, pcie-nonfatal, pcie-fatal, link-flapping, port-flapping, health-interval, roce-priority, roce-trust, pause-frames-per-second, rail-errors, rail-discards, transceiver-temp-rise-per-hour, nccl-version";
	return -EINVAL;
}

int aff_config_parse(struct aff_config *conf, const char *path,
		     const char *text, char *err, size_t errlen)
{
	struct aff_config next = { 0 };
	char *copy = strdup(text), *line, *p;
	unsigned lineno = 0;
	int rc = 0;

	if (!copy)
		return -ENOMEM;
	/* strtok_r would skip empty lines and so miscount them. */
	for (line = copy; line && !rc; line = p) {
		const char *expect = "";
		char *hash;

		lineno++;
		p = strchr(line, '\n');
		if (p)
			*p++ = '\0';
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		line = trim(line);
		if (!*line)
			continue;
		rc = parse_line(&next, line, &expect);
		if (rc == -EINVAL)
			aff_seterr(err, errlen, EINVAL, "%s:%u: expected %s",
				   path, lineno, expect);
	}
	free(copy);
	if (rc) {
		aff_config_clear(&next);
		return rc;
	}
	aff_config_clear(conf);
	*conf = next;
	return 0;
}
