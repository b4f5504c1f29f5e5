// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The fabric checks, from each rail port's facts (fabric.h), live or from a
 * snapshot:
 *
 *  ib-subnet-manager  an InfiniBand port in INIT or ARMED: SM LID 0 is "no
 *		subnet manager has reached it", another SM LID "the SM saw it and
 *		did not activate it" (RoCE ports have SM LID 0 by design: skipped)
 *  rail-link	a physical state other than 5: LinkUp (2: Polling no link
 *		partner, 3: Disabled, ...); and a port file that did not parse
 *  roce-gid	a RoCE port without a RoCE v2 GID carrying an address (fails),
 *		or with IPv6 ones only (warns: NCCL 2.21+ looks for IPv4)
 *  rail-mtu	a RoCE port whose active MTU is not what its netdev's MTU gives,
 *		and rails of the node whose MTUs differ
 *  rail-errors	error counters at railbind.conf's rail-errors / rail-discards or
 *		more, as counts since they were cleared and rates since boot; a
 *		narrow counter at its maximum is "saturated, rate unknown"
 *		(link_downed is port-flapping's)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "annotate_health.h"
#include "audit.h"
#include "fabric.h"

static const char *const port_state_names[] = {
	"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER",
};

/* "2: INIT" as sysfs writes a logical state, from the name the model keeps. */
static void state_text(const char *name, char *buf, size_t len)
{
	size_t k;

	for (k = 0; name && k < sizeof(port_state_names) / sizeof(port_state_names[0]); k++)
		if (!strcmp(name, port_state_names[k])) {
			snprintf(buf, len, "%zu: %s", k, name);
			return;
		}
	snprintf(buf, len, "%s", name ? name : "unknown");
}

static unsigned port_of(const struct aff_rail *r)
{
	return r->port > 0 ? (unsigned)r->port : 1;
}

static bool is_ib(const struct aff_fabric_port *f)
{
	return f && !strcmp(f->link_layer, "InfiniBand");
}

static bool is_eth(const struct aff_fabric_port *f)
{
	return f && !strcmp(f->link_layer, "Ethernet");
}

static struct json_object *lid_json(long lid)
{
	char buf[24];

	if (lid < 0)
		return NULL;
	snprintf(buf, sizeof(buf), "0x%lx", (unsigned long)lid);
	return json_object_new_string(buf);
}

static int add(struct aff_audit *a, const char *id, enum aff_sev sev, size_t r,
	       struct json_object *ev, const char *remedy, const char *msg)
{
	const struct aff_topo *t = a->topo;
	const char *devs[2] = { t->dev[t->rail[r].dev].pci, NULL };
	char subject[80];

	snprintf(subject, sizeof(subject), "%s/%u", aff_audit_rail_name(t, (int)r),
		 port_of(&t->rail[r]));
	return aff_audit_add(a, id, sev, subject, devs, ev, remedy, "%s", msg);
}

static int check_subnet_manager(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	size_t r, ib = 0;
	int rc = 0;

	for (r = 0; r < t->nrail && !rc; r++) {
		const struct aff_rail *rl = &t->rail[r];
		const struct aff_fabric_port *f = rl->fab;
		struct json_object *ev;
		char state[32], msg[512];
		bool noSM;

		if (!is_ib(f))
			continue;
		ib++;
		if (!rl->port_state || (strcmp(rl->port_state, "INIT") && strcmp(rl->port_state, "ARMED")))
			continue;
		if (f->sm_lid < 0)
			continue;
		noSM = f->sm_lid == 0;
		state_text(rl->port_state, state, sizeof(state));
		ev = json_object_new_object();
		json_object_object_add(ev, "state", json_object_new_string(state));
		json_object_object_add(ev, "phys_state", f->phys_state >= 0 ?
				       json_object_new_string(f->phys_name) : NULL);
		json_object_object_add(ev, "lid", lid_json(f->lid));
		json_object_object_add(ev, "sm_lid", lid_json(f->sm_lid));
		if (noSM) {
			snprintf(msg, sizeof(msg), "InfiniBand port %s/%u is %s with SM LID 0x0: no subnet manager has reached this port, so it never becomes ACTIVE",
				 aff_audit_rail_name(t, (int)r), port_of(rl), state);
			rc = add(a, "ib-subnet-manager", AFF_SEV_FAIL, r, ev,
				 "run a subnet manager on this fabric (opensm on a node, or the switches' or UFM's SM) and check it reaches the port: sminfo, ibstat; a cable to the wrong switch shows the same",
				 msg);
		} else {
			snprintf(msg, sizeof(msg), "InfiniBand port %s/%u is %s although the subnet manager at LID 0x%lx has seen it: the SM did not activate it",
				 aff_audit_rail_name(t, (int)r), port_of(rl), state,
				 (unsigned long)f->sm_lid);
			rc = add(a, "ib-subnet-manager", AFF_SEV_FAIL, r, ev,
				 "read the subnet manager's log for this port's GUID (opensm.log, UFM events): a partition (P_Key) it is not in, a port the SM marked faulty, or a sweep not yet done; ibportstate shows the switch side",
				 msg);
		}
	}
	if (!rc && !ib)
		rc = aff_audit_undecided(a, "ib-subnet-manager",
			"no InfiniBand rail port with a recorded link layer (RoCE ports have no subnet manager; a snapshot of before railbind read the fabric has no link layer)");
	return rc;
}

static const char *phys_remedy(int s)
{
	switch (s) {
	case 2:
		return "no link partner: check the cable and transceiver are seated and the switch port is up (ibstat, mlxlink -d DEVICE, the switch's port state)";
	case 3:
		return "the port is disabled: enable it (ip link set IF up on RoCE, ibportstate LID PORT enable on InfiniBand) or find who disabled it (the switch, the SM)";
	default:
		return "the link is not up: check the cable, the transceiver and the switch port (ibstat, mlxlink -d DEVICE)";
	}
}

static int check_link(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	size_t r, known = 0;
	int rc = 0;

	for (r = 0; r < t->nrail && !rc; r++) {
		const struct aff_rail *rl = &t->rail[r];
		const struct aff_fabric_port *f = rl->fab;
		struct json_object *ev;
		char msg[512], state[32];

		if (!f)
			continue;
		if (f->malformed[0]) {
			ev = json_object_new_object();
			json_object_object_add(ev, "malformed", json_object_new_string(f->malformed));
			snprintf(msg, sizeof(msg), "a file of rail port %s/%u did not parse, its fact is unknown: %s",
				 aff_audit_rail_name(t, (int)r), port_of(rl), f->malformed);
			rc = add(a, "rail-link", AFF_SEV_WARN, r, ev,
				 "report the driver and kernel version with the file's content: sysfs-class-infiniband documents its format",
				 msg);
			if (rc)
				break;
		}
		if (f->phys_state < 0)
			continue;
		known++;
		if (f->phys_state == 5)
			continue;
		state_text(rl->port_state, state, sizeof(state));
		ev = json_object_new_object();
		json_object_object_add(ev, "phys_state", json_object_new_string(f->phys_name));
		json_object_object_add(ev, "phys_state_num", json_object_new_int(f->phys_state));
		json_object_object_add(ev, "state", json_object_new_string(state));
		json_object_object_add(ev, "link_layer", aff_audit_str(f->link_layer));
		snprintf(msg, sizeof(msg), "rail port %s/%u's physical link is %d: %s, not 5: LinkUp (state %s)%s",
			 aff_audit_rail_name(t, (int)r), port_of(rl), f->phys_state, f->phys_name,
			 state, f->phys_state == 2 ? ": no link partner" :
			 f->phys_state == 3 ? ": disabled" : "");
		rc = add(a, "rail-link", f->phys_state == 2 || f->phys_state == 3 ? AFF_SEV_FAIL :
			 AFF_SEV_WARN, r, ev, phys_remedy(f->phys_state), msg);
	}
	if (!rc && !known)
		rc = aff_audit_undecided(a, "rail-link",
			"no physical state recorded for the rail ports (not a railbind snapshot with fabric facts, or no RDMA port in sysfs)");
	return rc;
}

static struct json_object *gid_list(const struct aff_fabric_port *f)
{
	struct json_object *arr = json_object_new_array();
	size_t i;

	for (i = 0; i < f->ngid; i++) {
		struct json_object *g = json_object_new_object();
		char addr[40];

		aff_fabric_format_gid(f->gid[i].raw, addr, sizeof(addr));
		json_object_object_add(g, "index", json_object_new_int((int)f->gid[i].index));
		json_object_object_add(g, "type", json_object_new_string(aff_gid_type_name(f->gid[i].type)));
		json_object_object_add(g, "gid", json_object_new_string(addr));
		json_object_object_add(g, "netdev", aff_audit_str(f->gid[i].netdev));
		json_object_array_add(arr, g);
	}
	return arr;
}

static int check_roce_gid(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	size_t r, roce = 0, i;
	int rc = 0;

	for (r = 0; r < t->nrail && !rc; r++) {
		const struct aff_fabric_port *f = t->rail[r].fab;
		bool v2addr = false, v4 = false;
		struct json_object *ev;
		char msg[512];

		if (!is_eth(f))
			continue;
		roce++;
		for (i = 0; i < f->ngid; i++)
			if (f->gid[i].type == AFF_GID_ROCE_V2 && aff_gid_has_address(f->gid[i].raw)) {
				v2addr = true;
				v4 |= aff_gid_is_ipv4(f->gid[i].raw, NULL, 0);
			}
		if (v4)
			continue;
		ev = json_object_new_object();
		json_object_object_add(ev, "netdev", aff_audit_str(f->netdev));
		json_object_object_add(ev, "gids", gid_list(f));
		if (!v2addr) {
			snprintf(msg, sizeof(msg), "RoCE port %s/%u has no RoCE v2 GID carrying an address (%zu GIDs, none RoCE v2 with an IP): NCCL and UCX find no usable GID on this rail",
				 aff_audit_rail_name(t, (int)r), port_of(&t->rail[r]), f->ngid);
			rc = add(a, "roce-gid", AFF_SEV_FAIL, r, ev,
				 "give the rail's netdev its IP address (ip addr add ADDR dev IF; the kernel then adds the RoCE v2 GID); check with rdma link show and ibv_devinfo -v",
				 msg);
		} else {
			snprintf(msg, sizeof(msg), "RoCE port %s/%u has RoCE v2 GIDs with IPv6 addresses only: NCCL 2.21 and later pick an IPv4 one unless NCCL_IB_ADDR_FAMILY=AF_INET6",
				 aff_audit_rail_name(t, (int)r), port_of(&t->rail[r]));
			rc = add(a, "roce-gid", AFF_SEV_WARN, r, ev,
				 "give the netdev an IPv4 address, or run the jobs with NCCL_IB_ADDR_FAMILY=AF_INET6 (and NCCL_IB_ADDR_RANGE) on every node",
				 msg);
		}
	}
	if (!rc && !roce)
		rc = aff_audit_undecided(a, "roce-gid",
			"no RoCE rail port with a recorded link layer");
	return rc;
}

/* The MTU the port moves RDMA with: verbs' active MTU, else what the netdev gives. */
static int effective_mtu(const struct aff_fabric_port *f)
{
	if (f->active_mtu)
		return f->active_mtu;
	return is_eth(f) && f->netdev_mtu ? aff_roce_mtu_of_netdev(f->netdev_mtu) : 0;
}

static int check_mtu(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	struct json_object *per = json_object_new_object();
	int lo = 0, hi = 0, rc = 0;
	size_t r, known = 0;

	if (!per)
		return -ENOMEM;
	for (r = 0; r < t->nrail && !rc; r++) {
		const struct aff_fabric_port *f = t->rail[r].fab;
		struct json_object *ev;
		char msg[512], key[80];
		int want, eff;

		if (!f || !(eff = effective_mtu(f)))
			continue;
		known++;
		snprintf(key, sizeof(key), "%s/%u", aff_audit_rail_name(t, (int)r), port_of(&t->rail[r]));
		json_object_object_add(per, key, json_object_new_int(eff));
		lo = lo && lo < eff ? lo : eff;
		hi = hi > eff ? hi : eff;
		if (!is_eth(f) || !f->active_mtu || !f->netdev_mtu)
			continue;
		want = aff_roce_mtu_of_netdev(f->netdev_mtu);
		if (f->max_mtu && want > f->max_mtu)
			want = f->max_mtu;
		if (f->active_mtu == want)
			continue;
		ev = json_object_new_object();
		json_object_object_add(ev, "active_mtu", json_object_new_int(f->active_mtu));
		json_object_object_add(ev, "active_mtu_source", json_object_new_string("verbs"));
		json_object_object_add(ev, "max_mtu", f->max_mtu ? json_object_new_int(f->max_mtu) : NULL);
		json_object_object_add(ev, "netdev", aff_audit_str(f->netdev));
		json_object_object_add(ev, "netdev_mtu", json_object_new_int(f->netdev_mtu));
		json_object_object_add(ev, "expected_mtu", json_object_new_int(want));
		snprintf(msg, sizeof(msg), "RoCE port %s/%u's active MTU is %d but its netdev %s's MTU %d gives %d: the port has not followed the netdev",
			 aff_audit_rail_name(t, (int)r), port_of(&t->rail[r]), f->active_mtu,
			 f->netdev, f->netdev_mtu, want);
		rc = add(a, "rail-mtu", AFF_SEV_WARN, r, ev,
			 "set the MTU once on the netdev and every switch port of the path (ip link set IF mtu 9000), then check ibv_devinfo -v's active_mtu follows",
			 msg);
	}
	if (!rc && known && lo != hi) {
		struct json_object *ev = json_object_new_object();

		json_object_object_add(ev, "mtus", per);
		per = NULL;
		rc = aff_audit_add(a, "rail-mtu", AFF_SEV_WARN, "node", NULL, ev,
				   "give every rail the same MTU end to end (netdev, switch ports; on InfiniBand the SM's partition MTU): a collective runs at the smallest, and mixed MTUs across peers can hang it",
				   "the rails of this node move RDMA with different MTUs, %d to %d bytes", lo, hi);
	}
	json_object_put(per);
	if (!rc && !known) {
		hwloc_obj_t root = t->hw ? hwloc_get_root_obj(t->hw) : NULL;
		const char *verbs = root ? hwloc_obj_get_info_by_name(root, AFF_INFO_VERBS) : NULL;

		rc = aff_audit_undecided(a, "rail-mtu",
			"no MTU recorded for the rail ports: the active MTU is libibverbs' (%s), and no RoCE netdev MTU was read",
			!verbs ? "not asked: a snapshot or tree, or a node without RDMA devices" :
			!strcmp(verbs, "absent") ? "not installed: rdma-core's libibverbs.so.1" : verbs);
	}
	return rc;
}

static int check_errors(struct aff_audit *a)
{
	const struct aff_topo *t = a->topo;
	unsigned long lim_err = aff_config_health_limit(&t->ctx->conf, AFF_LIMIT_RAIL_ERRORS);
	unsigned long lim_disc = aff_config_health_limit(&t->ctx->conf, AFF_LIMIT_RAIL_DISCARDS);
	hwloc_obj_t root = t->hw ? hwloc_get_root_obj(t->hw) : NULL;
	const char *up = root ? hwloc_obj_get_info_by_name(root, AFF_INFO_UPTIME) : NULL;
	double uptime_h = up ? strtod(up, NULL) / 3600.0 : 0;
	size_t r, counted = 0, i, k;
	int rc = 0;

	for (r = 0; r < t->nrail && !rc; r++) {
		const struct aff_fabric_port *f = t->rail[r].fab;
		struct json_object *ev, *list;
		char msg[768], what[512] = "";
		size_t nbad = 0;
		bool saturated = false;

		if (!f || !f->nctr)
			continue;
		counted++;
		list = json_object_new_array();
		for (i = 0; i < f->nctr; i++) {
			const struct aff_port_counter *c = &f->ctr[i];
			bool disc = false, sat = c->bits < 64 && c->value == (1ull << c->bits) - 1;
			unsigned long lim;
			struct json_object *o;
			size_t len = strlen(what);

			if (!strcmp(c->name, "link_downed"))
				continue;
			for (k = 0; k < aff_port_error_ncounters; k++)
				if (!strcmp(aff_port_error_counters[k].name, c->name))
					disc = aff_port_error_counters[k].discard;
			lim = disc ? lim_disc : lim_err;
			if (!sat && (!lim || c->value < lim))
				continue;
			nbad++;
			saturated |= sat;
			o = json_object_new_object();
			json_object_object_add(o, "counter", json_object_new_string(c->name));
			json_object_object_add(o, "value", json_object_new_int64((int64_t)c->value));
			json_object_object_add(o, "bits", json_object_new_int((int)c->bits));
			json_object_object_add(o, "saturated", json_object_new_boolean(sat));
			json_object_object_add(o, "limit", json_object_new_int64((int64_t)lim));
			json_object_object_add(o, "per_hour_since_boot", !sat && uptime_h >= 1.0 / 60 ?
					       json_object_new_double((double)c->value / uptime_h) : NULL);
			json_object_array_add(list, o);
			if (sat)
				snprintf(what + len, sizeof(what) - len, "%s%s saturated at %llu (%u bits), rate unknown",
					 len ? ", " : "", c->name, c->value, c->bits);
			else if (uptime_h >= 1.0 / 60)
				snprintf(what + len, sizeof(what) - len, "%s%s %llu (%.1f an hour since boot)",
					 len ? ", " : "", c->name, c->value, (double)c->value / uptime_h);
			else
				snprintf(what + len, sizeof(what) - len, "%s%s %llu", len ? ", " : "",
					 c->name, c->value);
		}
		if (!nbad) {
			json_object_put(list);
			continue;
		}
		ev = json_object_new_object();
		json_object_object_add(ev, "counters", list);
		json_object_object_add(ev, "uptime_s", up ? json_object_new_int64((int64_t)(uptime_h * 3600)) : NULL);
		snprintf(msg, sizeof(msg), "rail port %s/%u's error counters are at railbind.conf's limits or past them: %s",
			 aff_audit_rail_name(t, (int)r), port_of(&t->rail[r]), what);
		rc = add(a, "rail-errors", AFF_SEV_WARN, r, ev, saturated ?
			 "a saturated counter no longer counts: clear the port's counters (perfquery -x -R) and look again after a while; meanwhile check the cable, transceiver and switch port (mlxlink -d DEVICE)" :
			 "check the cable, the transceiver and the switch port (mlxlink -d DEVICE, the switch's counters of its end); clear the counters after a fix (perfquery -x -R) so new errors show",
			 msg);
	}
	if (!rc && !counted)
		rc = aff_audit_undecided(a, "rail-errors",
			"no error counters recorded for the rail ports (not a railbind snapshot with fabric facts, or no counters in sysfs)");
	return rc;
}

int aff_audit_fabric(struct aff_audit *a)
{
	int rc = check_subnet_manager(a);

	if (!rc)
		rc = check_link(a);
	if (!rc)
		rc = check_roce_gid(a);
	if (!rc)
		rc = check_mtu(a);
	if (!rc)
		rc = check_errors(a);
	return rc;
}
