// SPDX-License-Identifier: GPL-2.0-or-later
/* railbind status: the broker, the module, the plan's generation and age, leases. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "client.h"
#include "railbind.h"

enum {
	OPT_RELOAD = 0x200,
	OPT_WATCH,
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: %s status [OPTIONS]\n"
		"Show the broker (railbindd), the kernel module, the plan's generation and\n"
		"age, and the leases: which process holds which local rank of which job.\n"
		"A user sees their own leases, root sees all.\n\n"
		"  -s, --socket PATH  the broker's socket (default: RAILBIND_SOCKET, else\n"
		"                     /run/railbind/railbind.sock)\n"
		"      --reload       ask the broker to reload its config and topology (root)\n"
		"      --watch        print a line each time the plan changes, until killed\n"
		"  -j, --json         machine-readable JSON on stdout\n"
		"  -p, --pretty       indent the JSON\n"
		"  -h, --help         this help\n", rb_prog);
}

static const char *or_dash(const char *s)
{
	return s ? s : "-";
}

static void print_text(struct json_object *doc)
{
	struct json_object *broker = NULL, *module = NULL, *leases = NULL, *refresh = NULL;
	size_t i, n;

	json_object_object_get_ex(doc, "broker", &broker);
	json_object_object_get_ex(doc, "module", &module);
	json_object_object_get_ex(doc, "leases", &leases);
	if (broker && json_object_is_type(broker, json_type_object))
		printf("broker:     running, pid %s, version %s, socket %s, source %s\n",
		       or_dash(rb_jstr(broker, "pid")), or_dash(rb_jstr(broker, "version")),
		       or_dash(rb_jstr(broker, "socket")), or_dash(rb_jstr(broker, "source")));
	else
		printf("broker:     not running (%s)\n", or_dash(rb_jstr(doc, "error")));
	if (json_object_get_boolean(json_object_object_get(module, "loaded")))
		printf("module:     loaded, generation %s\n", or_dash(rb_jstr(module, "generation")));
	else
		printf("module:     absent: the topology comes from sysfs and hwloc alone\n");
	if (!broker || !json_object_is_type(broker, json_type_object))
		return;
	printf("generation: %s\nplan age:   %.1f s\nranks:      %s\n",
	       or_dash(rb_jstr(doc, "generation")),
	       json_object_get_double(json_object_object_get(doc, "plan_age_s")),
	       or_dash(rb_jstr(doc, "ranks")));
	if (json_object_object_get_ex(doc, "refresh", &refresh) &&
	    json_object_is_type(refresh, json_type_object) && rb_jstr(refresh, "error"))
		printf("refresh:    failed (%s): %s; serving the last good plan\n",
		       or_dash(rb_jstr(refresh, "reason")), rb_jstr(refresh, "error"));
	n = leases ? json_object_array_length(leases) : 0;
	printf("leases:     %zu\n", n);
	if (n)
		printf("  %-16s %-5s %-8s %-8s %-13s %s\n", "job", "rank", "pid", "uid", "gpu", "cpus");
	for (i = 0; i < n; i++) {
		struct json_object *l = json_object_array_get_idx(leases, i);

		printf("  %-16s %-5s %-8s %-8s %-13s %s\n", or_dash(rb_jstr(l, "job")),
		       or_dash(rb_jstr(l, "rank")), or_dash(rb_jstr(l, "pid")),
		       or_dash(rb_jstr(l, "uid")), or_dash(rb_jstr(l, "gpu")),
		       or_dash(rb_jstr(l, "cpus")));
	}
}

/* What this host says about the module, with or without a broker. */
static struct json_object *module_info(void)
{
	struct json_object *m = json_object_new_object();
	FILE *f = fopen("/sys/class/misc/railbind/generation", "re");
	unsigned long long gen;

	json_object_object_add(m, "loaded", json_object_new_boolean(f != NULL));
	if (f && fscanf(f, "%llu", &gen) == 1)
		json_object_object_add(m, "generation", json_object_new_int64((int64_t)gen));
	else
		json_object_object_add(m, "generation", NULL);
	if (f)
		fclose(f);
	return m;
}

/* Stream the broker's watch events, one JSON line each, until it goes. */
static int watch(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	static const char req[] = "{\"v\":1,\"op\":\"watch\"}\n";
	char buf[4096];
	ssize_t n;
	int fd;

	if (aff_unix_address(path, &sa) < 0) {
		rb_error("status: socket path too long: %s", path);
		return RB_EXIT_FAIL;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    write(fd, req, sizeof(req) - 1) != (ssize_t)sizeof(req) - 1) {
		rb_error("status: no broker at %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return RB_EXIT_FAIL;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	close(fd);
	return RB_EXIT_OK;
}

int cmd_status(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "reload", no_argument, NULL, OPT_RELOAD },
		{ "watch", no_argument, NULL, OPT_WATCH },
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *socket_opt = NULL, *path;
	struct json_object *doc = NULL, *v;
	bool json = false, pretty = false, reload = false, watching = false;
	char req[64];
	int c, rc;

	while ((c = getopt_long(argc, argv, "+hs:jp", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			socket_opt = optarg;
			break;
		case OPT_RELOAD:
			reload = true;
			break;
		case OPT_WATCH:
			watching = true;
			break;
		case 'p':
			pretty = true;
			/* fall through */
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return RB_EXIT_OK;
		default:
			usage(stderr);
			return RB_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		rb_error("status: unexpected argument \"%s\"", argv[optind]);
		return RB_EXIT_USAGE;
	}
	path = aff_socket_path(socket_opt);
	if (watching)
		return watch(path);
	snprintf(req, sizeof(req), "{\"v\":%d,\"op\":\"%s\"}", AFF_PROTO_VERSION,
		 reload ? "reload" : "status");
	rc = aff_broker_call(path, req, 2000, &doc);
	if (reload) {
		if (rc < 0) {
			rb_error("status: --reload: no broker at %s: %s", path, strerror(-rc));
			return RB_EXIT_FAIL;
		}
		if (json_object_object_get_ex(doc, "error", &v)) {
			rb_error("status: --reload: %s", rb_jstr(doc, "message") ?
				 rb_jstr(doc, "message") : json_object_get_string(v));
			json_object_put(doc);
			return RB_EXIT_FAIL;
		}
		/* The broker keeps serving what it had: say so, and fail. */
		if (json_object_object_get_ex(doc, "refresh", &v) && rb_jstr(v, "error")) {
			rb_error("status: --reload: %s; the broker is keeping the last good plan",
				 rb_jstr(v, "error"));
			json_object_put(doc);
			return RB_EXIT_FAIL;
		}
		json_object_put(doc);
		doc = NULL;
		rc = aff_broker_call(path, "{\"v\":1,\"op\":\"status\"}", 2000, &doc);
	}
	if (rc < 0) {
		char why[512];

		snprintf(why, sizeof(why), "no broker at %s: %s", path, strerror(-rc));
		doc = json_object_new_object();
		json_object_object_add(doc, "schema", json_object_new_string("railbind.status/1"));
		json_object_object_add(doc, "broker", NULL);
		json_object_object_add(doc, "error", json_object_new_string(why));
	} else if (json_object_object_get_ex(doc, "error", &v)) {
		rb_error("status: broker: %s", rb_jstr(doc, "message") ? rb_jstr(doc, "message") :
			 json_object_get_string(v));
		json_object_put(doc);
		return RB_EXIT_FAIL;
	}
	/* The module as this host sees it, whoever answered. */
	if (!json_object_object_get_ex(doc, "module", &v))
		json_object_object_add(doc, "module", module_info());
	if (json) {
		char *s = NULL;

		json_object_object_del(doc, "v");
		json_object_object_del(doc, "ok");
		json_object_object_del(doc, "id");
		c = aff_json_string(doc, pretty ? AFF_JSON_PRETTY : 0, &s);
		c = rb_print_json(c, s);
	} else {
		print_text(doc);
		json_object_put(doc);
		c = fflush(stdout) ? RB_EXIT_FAIL : RB_EXIT_OK;
	}
	return rc < 0 ? RB_EXIT_FAIL : c;
}
