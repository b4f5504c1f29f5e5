// SPDX-License-Identifier: GPL-2.0-or-later
/* railbindd's command line. The site config (railbind.conf) is the library's. */
#include <ctype.h>
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
	.reply_timeout_ms = 5000,
	.max_clients = 4096,
	.max_user_clients = 256,
	.max_user_watchers = 16,
	.max_user_leases = 256,
	.max_leases = 8192,
	.max_watched = 1024,
	.miss_rate = 20,
	.max_user_rate = 2000,
	.max_output = 4u << 20,
	.max_user_queued = 4u << 20,
	.memory_budget = 64u << 20,
};

enum {
	OPT_STATE_DIR = 0x100,
	OPT_ROOT,
	OPT_LIMITS,
	OPT_REQ_TIMEOUT,
	OPT_IDLE_TIMEOUT,
	OPT_MAX_CLIENTS,
	OPT_REPLY_TIMEOUT,
	OPT_MAX_USER_CLIENTS,
	OPT_MAX_USER_WATCHERS,
	OPT_MAX_USER_LEASES,
	OPT_MAX_LEASES,
	OPT_MAX_WATCHED,
	OPT_MISS_RATE,
	OPT_MAX_USER_RATE,
	OPT_MAX_USER_QUEUED,
	OPT_MEMORY_BUDGET,
	OPT_NO_PEER_PIDFD,
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
		"Bounds (each user's share of the broker; docs/PROTOCOL.md):\n"
		"      --request-timeout MS  a request must end within MS (default 2000)\n"
		"      --idle-timeout MS   close silent connections after MS (default 60000)\n"
		"      --reply-timeout MS  close a client that takes no reply for MS (5000)\n"
		"      --max-clients N     connections in all (default 4096)\n"
		"      --max-user-clients N  connections of one user (default 256)\n"
		"      --max-user-watchers N  watch connections of one user (default 16)\n"
		"      --max-user-leases N  leases of one user (default 256)\n"
		"      --max-leases N      leases in all (default 8192)\n"
		"      --max-watched N     processes watched with a pidfd (default 1024;\n"
		"                          the others are checked once a second)\n"
		"      --miss-rate N       plans computed a second for one connection\n"
		"                          (default 20; a user: four times that)\n"
		"      --max-user-rate N   requests read a second of one user, not root\n"
		"                          (default 2000; the rest wait)\n"
		"      --max-user-queued BYTES  unread replies of one user (default 4M)\n"
		"      --memory-budget BYTES  unread replies of all users (default 64M)\n"
		"      --no-peer-pidfd     pin clients by pid and start time, as on kernels\n"
		"                          before 6.5 (for tests)\n"
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

/* A byte count: digits, then K, M or G (powers of 1024); 4 KiB to 64 GiB. */
static int bytes(const char *opt, const char *s, size_t *out)
{
	unsigned long long v, mult = 1;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end == 'K' || *end == 'k')
		mult = 1ull << 10;
	else if (*end == 'M' || *end == 'm')
		mult = 1ull << 20;
	else if (*end == 'G' || *end == 'g')
		mult = 1ull << 30;
	if (mult > 1)
		end++;
	if (errno || !isdigit((unsigned char)*s) || *end || v > (64ull << 30) / mult ||
	    v * mult < 4096) {
		fprintf(stderr, "railbindd: %s \"%s\": expected a size such as 65536, 512K or 64M (at least 4K)\n",
			opt, s);
		return -EINVAL;
	}
	*out = (size_t)(v * mult);
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
		{ "reply-timeout", required_argument, NULL, OPT_REPLY_TIMEOUT },
		{ "max-user-clients", required_argument, NULL, OPT_MAX_USER_CLIENTS },
		{ "max-user-watchers", required_argument, NULL, OPT_MAX_USER_WATCHERS },
		{ "max-user-leases", required_argument, NULL, OPT_MAX_USER_LEASES },
		{ "max-leases", required_argument, NULL, OPT_MAX_LEASES },
		{ "max-watched", required_argument, NULL, OPT_MAX_WATCHED },
		{ "miss-rate", required_argument, NULL, OPT_MISS_RATE },
		{ "max-user-rate", required_argument, NULL, OPT_MAX_USER_RATE },
		{ "max-user-queued", required_argument, NULL, OPT_MAX_USER_QUEUED },
		{ "memory-budget", required_argument, NULL, OPT_MEMORY_BUDGET },
		{ "no-peer-pidfd", no_argument, NULL, OPT_NO_PEER_PIDFD },
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
		case OPT_REPLY_TIMEOUT:
			if (number("--reply-timeout", optarg, &conf.reply_timeout_ms) < 0)
				return -EINVAL;
			break;
		case OPT_MAX_USER_CLIENTS:
			if (number("--max-user-clients", optarg, &conf.max_user_clients) < 0)
				return -EINVAL;
			break;
		case OPT_MAX_USER_WATCHERS:
			if (number("--max-user-watchers", optarg, &conf.max_user_watchers) < 0)
				return -EINVAL;
			break;
		case OPT_MAX_USER_LEASES:
			if (number("--max-user-leases", optarg, &conf.max_user_leases) < 0)
				return -EINVAL;
			break;
		case OPT_MAX_LEASES:
			if (number("--max-leases", optarg, &conf.max_leases) < 0)
				return -EINVAL;
			break;
		case OPT_MAX_WATCHED:
			if (number("--max-watched", optarg, &conf.max_watched) < 0)
				return -EINVAL;
			break;
		case OPT_MISS_RATE:
			if (number("--miss-rate", optarg, &conf.miss_rate) < 0)
				return -EINVAL;
			break;
		case OPT_MAX_USER_RATE:
			if (number("--max-user-rate", optarg, &conf.max_user_rate) < 0)
				return -EINVAL;
			break;
		case OPT_MAX_USER_QUEUED:
			if (bytes("--max-user-queued", optarg, &conf.max_user_queued) < 0)
				return -EINVAL;
			break;
		case OPT_MEMORY_BUDGET:
			if (bytes("--memory-budget", optarg, &conf.memory_budget) < 0)
				return -EINVAL;
			break;
		case OPT_NO_PEER_PIDFD:
			conf.no_peer_pidfd = true;
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
