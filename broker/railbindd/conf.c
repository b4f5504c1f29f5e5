// SPDX-License-Identifier: GPL-2.0-or-later
/* railbindd's command line. The site config (railbind.conf) is the library's. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "railbindd.h"

#ifndef RAILBIND_VERSION
#define RAILBIND_VERSION "0.1"
#endif

struct conf conf = {
	.state_dir = "/run/railbind",
	.limits = CONF_LIMITS_AUTO,
	.request_timeout_ms = 2000,
	.idle_timeout_ms = 60000,
	.max_clients = 4096,
	.max_output = 4u << 20,
};

enum {
	OPT_STATE_DIR = 0x100,
	OPT_ROOT,
	OPT_LIMITS,
	OPT_REQ_TIMEOUT,
	OPT_IDLE_TIMEOUT,
	OPT_MAX_CLIENTS,
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: railbindd [OPTIONS]\n"
		"Serve the node's plan to its ranks over a Unix socket (railbind run, libaffinity).\n\n"
		"  -n, --foreground        stay in the foreground, log to stderr\n"
		"  -d, --debug             log more (repeatable)\n"
		"  -s, --socket PATH       listen on PATH (default: RAILBIND_SOCKET, else\n"
		"                          %s); systemd socket activation wins\n"
		"  -i, --input FILE        serve a saved topology instead of the live node\n"
		"  -c, --config FILE       use FILE instead of /etc/railbind/railbind.conf\n"
		"      --state-dir DIR     keep leases in DIR (default /run/railbind)\n"
		"      --root DIR          read /sys, /proc and /etc under DIR\n"
		"      --limits on|off|auto  narrow each plan to the client's cpuset (auto:\n"
		"                          on for the live node, off for --input)\n"
		"      --request-timeout MS  a request must end within MS (default 2000)\n"
		"      --idle-timeout MS   close silent connections after MS (default 60000)\n"
		"      --max-clients N     refuse connections beyond N (default 4096)\n"
		"  -V, --version           print the version\n"
		"  -h, --help              this help\n", AFF_DEFAULT_SOCKET);
}

static int number(const char *opt, const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || !*s || *end || v <= 0 || v > 100000000) {
		fprintf(stderr, "railbindd: %s \"%s\": expected a positive number\n", opt, s);
		return -EINVAL;
	}
	*out = (int)v;
	return 0;
}

int conf_parse(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "foreground", no_argument, NULL, 'n' },
		{ "debug", no_argument, NULL, 'd' },
		{ "socket", required_argument, NULL, 's' },
		{ "input", required_argument, NULL, 'i' },
		{ "config", required_argument, NULL, 'c' },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "limits", required_argument, NULL, OPT_LIMITS },
		{ "request-timeout", required_argument, NULL, OPT_REQ_TIMEOUT },
		{ "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
		{ "max-clients", required_argument, NULL, OPT_MAX_CLIENTS },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "nds:i:c:Vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			conf.foreground = true;
			break;
		case 'd':
			conf.debug++;
			break;
		case 's':
			conf.socket = optarg;
			break;
		case 'i':
			conf.input = optarg;
			break;
		case 'c':
			conf.config = optarg;
			break;
		case OPT_STATE_DIR:
			conf.state_dir = optarg;
			break;
		case OPT_ROOT:
			conf.root = optarg;
			break;
		case OPT_LIMITS:
			if (!strcmp(optarg, "on"))
				conf.limits = CONF_LIMITS_ON;
			else if (!strcmp(optarg, "off"))
				conf.limits = CONF_LIMITS_OFF;
			else if (!strcmp(optarg, "auto"))
				conf.limits = CONF_LIMITS_AUTO;
			else {
				fprintf(stderr, "railbindd: --limits \"%s\": expected on, off or auto\n",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_REQ_TIMEOUT:
			if (number("--request-timeout", optarg, &conf.request_timeout_ms) < 0)
				return -EINVAL;
			break;
		case OPT_IDLE_TIMEOUT:
			if (number("--idle-timeout", optarg, &conf.idle_timeout_ms) < 0)
				return -EINVAL;
			break;
		case OPT_MAX_CLIENTS:
			if (number("--max-clients", optarg, &conf.max_clients) < 0)
				return -EINVAL;
			break;
		case 'V':
			printf("railbindd %s\n", RAILBIND_VERSION);
			return 1;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "railbindd: unexpected argument \"%s\"\n", argv[optind]);
		return -EINVAL;
	}
	conf.socket = aff_socket_path(conf.socket);
	return 0;
}

bool conf_apply_limits(void)
{
	if (conf.limits == CONF_LIMITS_AUTO)
		return !conf.input;
	return conf.limits == CONF_LIMITS_ON;
}
