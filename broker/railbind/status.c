// SPDX-License-Identifier: GPL-2.0-or-later
/* railbind status: the broker, the module, the plan's generation and age, leases. */
#include <errno.h>
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

static void print_text(FILE *f, struct json_object *doc, int details)
{
	struct json_object *broker = NULL, *module = NULL, *leases = NULL, *refresh = NULL;
	size_t i, n;

	(void)details;
	json_object_object_get_ex(doc, "broker", &broker);
	json_object_object_get_ex(doc, "module", &module);
	json_object_object_get_ex(doc, "leases", &leases);
	if (broker && json_object_is_type(broker, json_type_object))
		fprintf(f, "broker:     running, pid %s, version %s, socket %s, source %s\n",
		        rb_js(broker, "pid"), rb_js(broker, "version"),
		        rb_js(broker, "socket"), rb_js(broker, "source"));
	else
		fprintf(f, "broker:     not running (%s)\n", rb_js(doc, "error"));
	if (json_object_get_boolean(json_object_object_get(module, "loaded")))
		fprintf(f, "module:     loaded, generation %s\n", rb_js(module, "generation"));
	else
		fprintf(f, "module:     absent: the topology comes from sysfs and hwloc alone\n");
	if (!broker || !json_object_is_type(broker, json_type_object))
		return;
	fprintf(f, "generation: %s\nplan age:   %.1f s\nranks:      %s\n",
	        rb_js(doc, "generation"),
	        json_object_get_double(json_object_object_get(doc, "plan_age_s")),
	        rb_js(doc, "ranks"));
	if (json_object_object_get_ex(doc, "refresh", &refresh) &&
	    json_object_is_type(refresh, json_type_object) && rb_jstr(refresh, "error"))
		fprintf(f, "refresh:    failed (%s): %s; serving the last good plan\n",
		        rb_js(refresh, "reason"), rb_jstr(refresh, "error"));
	n = leases ? json_object_array_length(leases) : 0;
	fprintf(f, "leases:     %zu\n", n);
	if (n)
		fprintf(f, "  %-16s %-5s %-8s %-8s %-13s %s\n", "job", "rank", "pid", "uid", "gpu", "cpus");
	for (i = 0; i < n; i++) {
		struct json_object *l = json_object_array_get_idx(leases, i);

		fprintf(f, "  %-16s %-5s %-8s %-8s %-13s %s\n", rb_js(l, "job"),
		        rb_js(l, "rank"), rb_js(l, "pid"),
		        rb_js(l, "uid"), rb_js(l, "gpu"),
		        rb_js(l, "cpus"));
	}
}

/* What this host says about the module, with or without a broker. */
static struct json_object *module_info(void)
{
	struct json_object *m = json_object_new_object();
	unsigned long long gen;
	int rc = aff_kmod_generation(NULL, &gen);

	json_object_object_add(m, "loaded", json_object_new_boolean(rc == 0 || rc == -EINVAL));
	json_object_object_add(m, "generation", rc == 0 ? json_object_new_int64((int64_t)gen) : NULL);
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

static const struct rb_opt opts[] = {
	{ .val = 's' },
	{ OPT_RELOAD, no_argument, "reload",
	  "      --reload       ask the broker to reload its config and topology (root)\n" },
	{ OPT_WATCH, no_argument, "watch",
	  "      --watch        print a line each time the plan changes, until killed\n" },
	{ .val = 'j' },
	{ .val = 'p' },
	{ .val = 'h' },
	{ 0 }
};

/* --reload and --watch. */
struct request {
	bool reload, watch;
};

static int own_opt(int c, const char *arg, void *data)
{
	struct request *rq = data;

	(void)arg;
	if (c == OPT_RELOAD)
		rq->reload = true;
	else
		rq->watch = true;
	return 0;
}

static const struct rb_verb verb = {
	.name = "status",
	.synopsis = "[OPTIONS]",
	.about = "Show the broker (railbindd), the kernel module, the plan's generation and\n"
		 "age, and the leases: which process holds which local rank of which job.\n"
		 "A user sees their own leases, root sees all.\n",
	.family = RB_PLAIN,
	.opts = opts,
	.opt = own_opt,
	.text = print_text,
};

int cmd_status(int argc, char **argv)
{
	struct request rq = { false, false };
	struct rb_opts o = { 0 };
	struct json_object *doc = NULL, *v;
	const char *path;
	char req[64];
	int c, rc;

	rc = rb_getopt(&verb, argc, argv, &o, &rq);
	if (rc >= 0)
		return rc;
	path = aff_socket_path(o.socket);
	if (rq.watch)
		return watch(path);
	snprintf(req, sizeof(req), "{\"v\":%d,\"op\":\"%s\"}", AFF_PROTO_VERSION,
		 rq.reload ? "reload" : "status");
	rc = aff_broker_call(path, req, 2000, &doc);
	if (rq.reload) {
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
	/* The reply's framing is not the status. */
	json_object_object_del(doc, "v");
	json_object_object_del(doc, "ok");
	json_object_object_del(doc, "id");
	c = rb_emit(&verb, &o, doc, RB_EXIT_OK);
	return rc < 0 ? RB_EXIT_FAIL : c;
}
