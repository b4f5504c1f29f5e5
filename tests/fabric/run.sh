#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Rails as the fabric sees them. Each case writes a --root sysfs tree with
# the kernel's layout (sysfs-class-infiniband) for audit-ok's four rails
# (mlx5_0..3), healthy or with one fault; KMODFEED annotates audit-ok.xml
# under it as live discovery does and writes a snapshot, which railbind
# audits offline: each fault raises its check (exit code as the audit's),
# the healthy trees raise none. Then the plan (link layer, GID index, the
# NCCL_IB_GID_INDEX rule), the topo legend, the fleet, and the MTUs from a
# stand-in libibverbs (VERBSFEED, VERBS_STUB).
# Needs RAILBIND, BUILD, KMODFEED, VERBSFEED, VERBS_STUB, jq.
set -u
: "${RAILBIND:?}" "${BUILD:?}" "${KMODFEED:?}" "${VERBSFEED:?}" "${VERBS_STUB:?}"
FIX=$BUILD/fixtures
pass=0
fail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/railbind-fabric.XXXXXX") || exit 1
trap '[ -n "${FABRIC_KEEP:-}" ] || rm -rf "$tmp"' EXIT INT TERM
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# port ROOT DEV LINKLAYER STATE PHYS LID SMLID: one port 1 with zeroed counters.
port() {
	p=$1/sys/class/infiniband/$2/ports/1
	mkdir -p "$p/counters" "$p/gids" "$p/gid_attrs/types" "$p/gid_attrs/ndevs"
	echo "$3" >"$p/link_layer"
	echo "$4" >"$p/state"
	echo "$5" >"$p/phys_state"
	echo "$6" >"$p/lid"
	echo "$7" >"$p/sm_lid"
	echo "400 Gb/sec (4X NDR)" >"$p/rate"
	for c in symbol_error link_error_recovery link_downed port_rcv_errors \
		port_rcv_remote_physical_errors port_rcv_switch_relay_errors port_xmit_discards \
		port_xmit_constraint_errors port_rcv_constraint_errors local_link_integrity_errors \
		excessive_buffer_overrun_errors VL15_dropped; do
		echo 0 >"$p/counters/$c"
	done
	echo "28.39.1002" >"$1/sys/class/infiniband/$2/fw_ver"
	echo "MT_0000000838" >"$1/sys/class/infiniband/$2/board_id"
	# The unused rest of the table: zero GIDs whose type file is absent
	# (on a real kernel it fails with EINVAL).
	for i in 4 5 6 7; do
		echo 0000:0000:0000:0000:0000:0000:0000:0000 >"$p/gids/$i"
	done
}
# gid ROOT DEV INDEX GID TYPE NETDEV
gid() {
	p=$1/sys/class/infiniband/$2/ports/1
	echo "$4" >"$p/gids/$3"
	echo "$5" >"$p/gid_attrs/types/$3"
	[ -z "$6" ] || echo "$6" >"$p/gid_attrs/ndevs/$3"
}
# zero ROOT DEV INDEX: an entry emptied (the kernel keeps the file, zero GID).
zero() {
	p=$1/sys/class/infiniband/$2/ports/1
	echo 0000:0000:0000:0000:0000:0000:0000:0000 >"$p/gids/$3"
	rm -f "$p/gid_attrs/types/$3" "$p/gid_attrs/ndevs/$3"
}
netmtu() { mkdir -p "$1/sys/class/net/$2"; echo "$3" >"$1/sys/class/net/$2/mtu"; }

ib_tree() {
	R=$tmp/$1
	for n in 0 1 2 3; do
		port "$R" "mlx5_$n" InfiniBand "4: ACTIVE" "5: LinkUp" "0x$((n + 10))" 0x1
		gid "$R" "mlx5_$n" 0 fe80:0000:0000:0000:0002:c903:0031:7e9$n "IB/RoCE v1" ""
	done
}
roce_tree() {
	R=$tmp/$1
	for n in 0 1 2 3; do
		port "$R" "mlx5_$n" Ethernet "4: ACTIVE" "5: LinkUp" 0x0 0x0
		gid "$R" "mlx5_$n" 0 fe80:0000:0000:0000:0a00:00ff:fe00:000$n "IB/RoCE v1" "eth$n"
		gid "$R" "mlx5_$n" 1 fe80:0000:0000:0000:0a00:00ff:fe00:000$n "RoCE v2" "eth$n"
		gid "$R" "mlx5_$n" 2 0000:0000:0000:0000:0000:ffff:0a00:000$n "IB/RoCE v1" "eth$n"
		gid "$R" "mlx5_$n" 3 0000:0000:0000:0000:0000:ffff:0a00:000$n "RoCE v2" "eth$n"
		netmtu "$R" "eth$n" 9000
	done
}
# audit CASE: snapshot of the tree, audited offline into $tmp/CASE.json; $rc.
audit() {
	if ! "$KMODFEED" "$FIX/audit-ok.xml" "$tmp/$1" "$tmp/$1.xml" >/dev/null 2>"$tmp/$1.feed"; then
		bad "$1: kmodfeed: $(cat "$tmp/$1.feed")"
		rc=99
		return
	fi
	"$RAILBIND" audit --json --input "$tmp/$1.xml" >"$tmp/$1.json" 2>"$tmp/$1.err"
	rc=$?
}
# sev CASE CHECK: the severities of CHECK's findings, sorted, comma-joined.
sev() { jq -r "[.checks[] | select(.id == \"$2\") | .severity] | sort | join(\",\")" "$tmp/$1.json"; }
undecided() { jq -e ".undecided[] | select(.id == \"$2\")" "$tmp/$1.json" >/dev/null; }
FABRIC="ib-subnet-manager rail-link roce-gid rail-mtu rail-errors"
# quiet CASE: every fabric check either passed or was undecided.
quiet() {
	for c in $FABRIC; do
		s=$(sev "$1" "$c")
		[ -z "$s" ] || [ "$s" = ok ] || { echo "$c=$s"; return 1; }
	done
}

# ---- healthy trees: nothing ----
ib_tree ib-ok
audit ib-ok
if [ "$rc" = 0 ] && quiet ib-ok && [ "$(sev ib-ok ib-subnet-manager)" = ok ] &&
   [ "$(sev ib-ok rail-link)" = ok ] && [ "$(sev ib-ok rail-errors)" = ok ] &&
   undecided ib-ok roce-gid && undecided ib-ok rail-mtu; then ok
else bad "ib-ok: rc=$rc $(jq -c .summary "$tmp/ib-ok.json")"; fi

roce_tree roce-ok
audit roce-ok
if [ "$rc" = 0 ] && quiet roce-ok && [ "$(sev roce-ok roce-gid)" = ok ] &&
   [ "$(sev roce-ok rail-mtu)" = ok ] && undecided roce-ok ib-subnet-manager; then ok
else bad "roce-ok: rc=$rc $(jq -c .summary "$tmp/roce-ok.json")"; fi

# The snapshot carries what discovery saw: the attributes, named as fabric.h says.
if grep -q 'name="RailbindPort1LinkLayer" value="Ethernet"' "$tmp/roce-ok.xml" &&
   grep -q 'name="RailbindPort1PhysState" value="5: LinkUp"' "$tmp/roce-ok.xml" &&
   grep -q 'name="RailbindPort1GID" value="3 RoCEv2 0000:0000:0000:0000:0000:ffff:0a00:0000 eth0"' "$tmp/roce-ok.xml" &&
   grep -q 'name="RailbindPort1NetdevMTU" value="9000"' "$tmp/roce-ok.xml" &&
   grep -q 'name="RailbindPort1Counter" value="symbol_error 0 16"' "$tmp/roce-ok.xml" &&
   grep -q 'name="RailbindFirmware" value="28.39.1002"' "$tmp/roce-ok.xml" &&
   [ "$(grep -c 'name="RailbindPort1GID"' "$tmp/roce-ok.xml")" = 16 ]; then ok
else bad "roce-ok snapshot attributes"; fi

# ---- ib-subnet-manager ----
ib_tree sm-none
echo "2: INIT" >"$tmp/sm-none/sys/class/infiniband/mlx5_0/ports/1/state"
echo "0x0" >"$tmp/sm-none/sys/class/infiniband/mlx5_0/ports/1/sm_lid"
audit sm-none
if [ "$rc" = 2 ] && [ "$(sev sm-none ib-subnet-manager)" = fail ] &&
   jq -e '.checks[] | select(.id == "ib-subnet-manager") | select(.subject == "mlx5_0/1" and
	(.message | test("2: INIT with SM LID 0x0: no subnet manager has reached")) and
	.evidence.sm_lid == "0x0" and (.remedy | test("opensm")))' "$tmp/sm-none.json" >/dev/null; then ok
else bad "sm-none: rc=$rc $(jq -c '.checks[] | select(.id == "ib-subnet-manager")' "$tmp/sm-none.json")"; fi

ib_tree sm-seen
echo "3: ARMED" >"$tmp/sm-seen/sys/class/infiniband/mlx5_1/ports/1/state"
audit sm-seen
if [ "$rc" = 2 ] && [ "$(sev sm-seen ib-subnet-manager)" = fail ] &&
   jq -e '.checks[] | select(.id == "ib-subnet-manager") | select(.subject == "mlx5_1/1" and
	(.message | test("3: ARMED although the subnet manager at LID 0x1")) and
	(.remedy | test("P_Key")))' "$tmp/sm-seen.json" >/dev/null; then ok
else bad "sm-seen: rc=$rc $(jq -c '.checks[] | select(.id == "ib-subnet-manager")' "$tmp/sm-seen.json")"; fi

# A RoCE port in INIT with SM LID 0 is no subnet manager's business.
roce_tree roce-init
echo "2: INIT" >"$tmp/roce-init/sys/class/infiniband/mlx5_0/ports/1/state"
audit roce-init
if undecided roce-init ib-subnet-manager; then ok
else bad "roce-init: ib-subnet-manager $(sev roce-init ib-subnet-manager)"; fi

# ---- rail-link ----
ib_tree polling
echo "1: DOWN" >"$tmp/polling/sys/class/infiniband/mlx5_2/ports/1/state"
echo "2: Polling" >"$tmp/polling/sys/class/infiniband/mlx5_2/ports/1/phys_state"
audit polling
if [ "$rc" = 2 ] && [ "$(sev polling rail-link)" = fail ] &&
   jq -e '.checks[] | select(.id == "rail-link") | select(.subject == "mlx5_2/1" and
	(.message | test("2: Polling, not 5: LinkUp \\(state 1: DOWN\\): no link partner")))' \
	"$tmp/polling.json" >/dev/null; then ok
else bad "polling: rc=$rc $(jq -c '.checks[] | select(.id == "rail-link")' "$tmp/polling.json")"; fi

roce_tree disabled
echo "1: DOWN" >"$tmp/disabled/sys/class/infiniband/mlx5_3/ports/1/state"
echo "3: Disabled" >"$tmp/disabled/sys/class/infiniband/mlx5_3/ports/1/phys_state"
audit disabled
if [ "$rc" = 2 ] && [ "$(sev disabled rail-link)" = fail ] &&
   jq -e '.checks[] | select(.id == "rail-link") | select(.subject == "mlx5_3/1" and
	(.remedy | test("ip link set IF up")))' "$tmp/disabled.json" >/dev/null; then ok
else bad "disabled: rc=$rc $(jq -c '.checks[] | select(.id == "rail-link")' "$tmp/disabled.json")"; fi

# Malformed files: one line naming the file, the rest still read.
roce_tree malformed
echo "fe80::1" >"$tmp/malformed/sys/class/infiniband/mlx5_1/ports/1/gids/1"
echo "RoCE v9" >"$tmp/malformed/sys/class/infiniband/mlx5_2/ports/1/gid_attrs/types/3"
# A FIFO where a counter is (never blocks: read as empty) and a huge GID file.
rm "$tmp/malformed/sys/class/infiniband/mlx5_3/ports/1/counters/port_rcv_errors"
mkfifo "$tmp/malformed/sys/class/infiniband/mlx5_3/ports/1/counters/port_rcv_errors"
head -c 1048576 /dev/zero | tr '\0' 'f' >"$tmp/malformed/sys/class/infiniband/mlx5_0/ports/1/gids/1"
audit malformed
if [ "$(sev malformed rail-link)" = warn,warn,warn,warn ] &&
   jq -e '[.checks[] | select(.id == "rail-link") | .message] |
	(map(select(test("mlx5_3/ports/1/counters/port_rcv_errors: not a count"))) | length == 1) and
	(map(select(test("mlx5_0/ports/1/gids/1: not a GID"))) | length == 1)' "$tmp/malformed.json" >/dev/null &&
   jq -e '[.checks[] | select(.id == "rail-link") | .message] |
	(map(select(test("/sys/class/infiniband/mlx5_1/ports/1/gids/1: not a GID"))) | length == 1) and
	(map(select(test("/sys/class/infiniband/mlx5_2/ports/1/gid_attrs/types/3: not"))) | length == 1)' \
	"$tmp/malformed.json" >/dev/null &&
   [ "$(sev malformed roce-gid)" = fail ]; then ok
else bad "malformed: $(jq -c '[.checks[] | select(.id == "rail-link" or .id == "roce-gid") | .message]' "$tmp/malformed.json")"; fi

# ---- roce-gid ----
roce_tree noaddr
zero "$tmp/noaddr" mlx5_2 2
zero "$tmp/noaddr" mlx5_2 3
audit noaddr
if [ "$rc" = 2 ] && [ "$(sev noaddr roce-gid)" = fail ] &&
   jq -e '.checks[] | select(.id == "roce-gid") | select(.subject == "mlx5_2/1" and
	(.message | test("no RoCE v2 GID carrying an address")) and (.evidence.gids | length) == 2 and
	.evidence.netdev == "eth2")' "$tmp/noaddr.json" >/dev/null; then ok
else bad "noaddr: rc=$rc $(jq -c '.checks[] | select(.id == "roce-gid")' "$tmp/noaddr.json")"; fi

roce_tree ipv6
d=$tmp/ipv6/sys/class/infiniband/mlx5_1/ports/1
gid "$tmp/ipv6" mlx5_1 2 2001:0db8:0000:0000:0000:0000:0000:0001 "IB/RoCE v1" eth1
gid "$tmp/ipv6" mlx5_1 3 2001:0db8:0000:0000:0000:0000:0000:0001 "RoCE v2" eth1
audit ipv6
if [ "$rc" = 1 ] && [ "$(sev ipv6 roce-gid)" = warn ] &&
   jq -e '.checks[] | select(.id == "roce-gid") | select(.subject == "mlx5_1/1" and
	(.message | test("IPv6 addresses only")) and (.remedy | test("NCCL_IB_ADDR_FAMILY")))' \
	"$tmp/ipv6.json" >/dev/null; then ok
else bad "ipv6: rc=$rc $(jq -c '.checks[] | select(.id == "roce-gid")' "$tmp/ipv6.json")"; fi

# ---- rail-mtu ----
roce_tree mtu-mixed
netmtu "$tmp/mtu-mixed" eth3 1500
audit mtu-mixed
if [ "$rc" = 1 ] && [ "$(sev mtu-mixed rail-mtu)" = warn ] &&
   jq -e '.checks[] | select(.id == "rail-mtu") | select(.subject == "node" and
	.evidence.mtus["mlx5_3/1"] == 1024 and .evidence.mtus["mlx5_0/1"] == 4096)' \
	"$tmp/mtu-mixed.json" >/dev/null; then ok
else bad "mtu-mixed: rc=$rc $(jq -c '.checks[] | select(.id == "rail-mtu")' "$tmp/mtu-mixed.json")"; fi

# libibverbs' active MTU (a stand-in: mlx5_3 at 1024, mlx5_2 not opened): the
# port that has not followed its netdev's 9000, and the source named.
if RAILBIND_VERBS_LIBRARY=$VERBS_STUB "$VERBSFEED" "$tmp/roce-ok.xml" "$tmp/verbs.xml" 2>"$tmp/verbs.err" &&
   "$RAILBIND" audit --json --input "$tmp/verbs.xml" >"$tmp/verbs.json"; rc=$?;
   grep -q 'name="RailbindVerbs" value="ok"' "$tmp/verbs.xml" &&
   grep -q 'name="RailbindPort1ActiveMTU" value="1024"' "$tmp/verbs.xml" &&
   [ "$(grep -c 'name="RailbindPort1MaxMTU" value="4096"' "$tmp/verbs.xml")" = 3 ] &&
   [ "$rc" = 1 ] && [ "$(sev verbs rail-mtu)" = warn,warn ] &&
   jq -e '.checks[] | select(.id == "rail-mtu" and .subject == "mlx5_3/1") |
	select(.evidence.active_mtu == 1024 and .evidence.active_mtu_source == "verbs" and
	.evidence.expected_mtu == 4096 and .evidence.netdev_mtu == 9000)' "$tmp/verbs.json" >/dev/null; then ok
else bad "verbs: rc=$rc $(cat "$tmp/verbs.err") $(jq -c '.checks[] | select(.id == "rail-mtu")' "$tmp/verbs.json" 2>/dev/null)"; fi
# No library: the MTUs stay unknown and the snapshot says why.
if RAILBIND_VERBS_LIBRARY=none "$VERBSFEED" "$tmp/roce-ok.xml" "$tmp/noverbs.xml" &&
   grep -q 'name="RailbindVerbs" value="absent"' "$tmp/noverbs.xml" &&
   ! grep -q 'ActiveMTU' "$tmp/noverbs.xml"; then ok
else bad "no verbs library"; fi

RAILBIND_VERBS_LIBRARY=none "$VERBSFEED" "$tmp/ib-ok.xml" "$tmp/ib-noverbs.xml"
"$RAILBIND" audit --json --input "$tmp/ib-noverbs.xml" >"$tmp/ib-noverbs.json"
if jq -e '.undecided[] | select(.id == "rail-mtu" and (.reason | test("not installed: rdma-core")))' \
	"$tmp/ib-noverbs.json" >/dev/null; then ok
else bad "no verbs: rail-mtu $(jq -c '.undecided' "$tmp/ib-noverbs.json")"; fi

# ---- rail-errors ----
ib_tree errors
d=$tmp/errors/sys/class/infiniband
echo 65535 >"$d/mlx5_0/ports/1/counters/symbol_error"
echo 150 >"$d/mlx5_1/ports/1/counters/port_xmit_discards"
echo 99 >"$d/mlx5_1/ports/1/counters/port_rcv_remote_physical_errors"
# A 64-bit hw_counter is preferred to the saturated 8-bit one.
echo 255 >"$d/mlx5_2/ports/1/counters/link_error_recovery"
mkdir -p "$d/mlx5_2/ports/1/hw_counters"
echo 300 >"$d/mlx5_2/ports/1/hw_counters/link_error_recovery"
audit errors
if [ "$rc" = 1 ] && [ "$(sev errors rail-errors)" = warn,warn,warn ] &&
   jq -e '[.checks[] | select(.id == "rail-errors")] |
	(map(select(.subject == "mlx5_0/1" and (.message | test("symbol_error saturated at 65535 \\(16 bits\\), rate unknown")))) | length == 1) and
	(map(select(.subject == "mlx5_1/1" and (.evidence.counters | length) == 1 and
		.evidence.counters[0].counter == "port_xmit_discards")) | length == 1) and
	(map(select(.subject == "mlx5_2/1" and .evidence.counters[0].bits == 64 and
		.evidence.counters[0].saturated == false and .evidence.counters[0].value == 300)) | length == 1)' \
	"$tmp/errors.json" >/dev/null; then ok
else bad "errors: rc=$rc $(jq -c '[.checks[] | select(.id == "rail-errors")]' "$tmp/errors.json")"; fi
# railbind.conf's limits: rail-discards = 200 leaves the discards alone.
mkdir -p "$tmp/conf"
echo "rail-discards = 200" >"$tmp/conf/railbind.conf"
"$RAILBIND" audit --config "$tmp/conf/railbind.conf" --json --input "$tmp/errors.xml" >"$tmp/errors2.json" 2>&1
if [ "$(jq -r '[.checks[] | select(.id == "rail-errors") | .subject] | join(",")' "$tmp/errors2.json")" = "mlx5_0/1,mlx5_2/1" ]; then ok
else bad "rail-discards: $(head -c 300 "$tmp/errors2.json")"; fi

# A recorded attribute that does not parse: refused, one line naming it (exit 3).
sed 's/value="3 RoCEv2 0000:0000:0000:0000:0000:ffff:0a00:0000 eth0"/value="3 RoCEv9 ::1 eth0"/' \
	"$tmp/roce-ok.xml" >"$tmp/badattr.xml"
"$RAILBIND" audit --json --input "$tmp/badattr.xml" >"$tmp/badattr.json" 2>"$tmp/badattr.err"
rc=$?
if [ "$rc" = 3 ] && [ "$(wc -l <"$tmp/badattr.err")" = 1 ] &&
   grep -q 'badattr.xml: RailbindPort1GID="3 RoCEv9 ::1 eth0" does not parse on mlx5_0' "$tmp/badattr.err"; then ok
else bad "bad attribute: rc=$rc $(cat "$tmp/badattr.err")"; fi

# ---- offline sees what live saw: the same findings twice ----
"$RAILBIND" audit --json --input "$tmp/errors.xml" >"$tmp/again.json" 2>/dev/null
if [ "$(jq -c .checks "$tmp/again.json")" = "$(jq -c .checks "$tmp/errors.json")" ]; then ok
else bad "audit not repeatable"; fi

# ---- railbind topo's NIC legend: link layer, state, rate, MTU ----
"$RAILBIND" topo --input "$tmp/roce-ok.xml" >"$tmp/topo.txt" 2>&1
"$RAILBIND" topo --input "$tmp/verbs.xml" >"$tmp/topo-verbs.txt" 2>&1
if grep -q '^  NIC0: mlx5_0 .* Ethernet ACTIVE 400 Gb/s netdev MTU 9000$' "$tmp/topo.txt" &&
   grep -q '^  NIC3: mlx5_3 .* Ethernet ACTIVE 400 Gb/s MTU 1024$' "$tmp/topo-verbs.txt" &&
   "$RAILBIND" topo --input "$FIX/audit-ok.xml" | grep -q '^  NIC0: mlx5_0 *0000:05:00.0 ibp5s0$'; then ok
else bad "topo legend: $(grep NIC "$tmp/topo.txt" "$tmp/topo-verbs.txt" | head -4)"; fi

# ---- railbind fleet: the rails' fabric facts compared across nodes ----
mkdir -p "$tmp/fleet"
for n in 1 2 3; do cp "$tmp/roce-ok.xml" "$tmp/fleet/node$n.xml"; done
roce_tree fw-old
echo "28.36.1010" >"$tmp/fw-old/sys/class/infiniband/mlx5_1/fw_ver"
audit fw-old
cp "$tmp/fw-old.xml" "$tmp/fleet/node4.xml"
cp "$tmp/mtu-mixed.xml" "$tmp/fleet/node5.xml"
"$RAILBIND" fleet --json "$tmp/fleet" >"$tmp/fleet.json" 2>"$tmp/fleet.err"
if jq -e '[.groups[].differences[] | select(.aspect == "rails")] |
	(map(select(.subject == "rail 1 firmware" and .value == "28.36.1010" and .majority == "28.39.1002" and
		(.consequence | test("slow node")))) | length == 1) and
	(map(select(.subject == "rail 3 MTU" and .value == "1024" and .majority == "4096")) | length == 1) and
	(map(select(.subject == "rail 3 netdev MTU" and .value == "1500")) | length == 1)' "$tmp/fleet.json" >/dev/null &&
   [ "$(jq '[.groups[].differences[] | select(.aspect == "rails")] | length' "$tmp/fleet.json")" = 3 ]; then ok
else bad "fleet: $(jq -c '[.groups[].differences[]]' "$tmp/fleet.json" 2>/dev/null) $(cat "$tmp/fleet.err")"; fi

# ---- the plan: each rail's link layer and GID index; NCCL_IB_GID_INDEX ----
conf() { echo "nccl-version = $1" >"$tmp/conf/nccl.conf"; }
plan() { "$RAILBIND" plan --json --input "$tmp/$1.xml" ${2:+--config "$tmp/conf/nccl.conf"} >"$tmp/plan.json" 2>"$tmp/plan.err"; }
gidenv() { jq -r '[.ranks[].env.NCCL_IB_GID_INDEX // "none"] | unique | join(",")' "$tmp/plan.json"; }
plan roce-ok
if jq -e '[.ranks[].nics[]] | length > 0 and all(.link_layer == "Ethernet" and .gid_index == 3)' "$tmp/plan.json" >/dev/null &&
   [ "$(gidenv)" = none ] &&
   jq -e '.warnings[] | select(.id == "nccl-gid-index" and (.message | test("NCCL version is unknown")))' "$tmp/plan.json" >/dev/null; then ok
else bad "plan roce-ok: $(jq -c '[.ranks[0].nics, .warnings]' "$tmp/plan.json")"; fi
conf 2.18.3
plan roce-ok conf
if [ "$(gidenv)" = 3 ] && ! jq -e '.warnings[] | select(.id == "nccl-gid-index")' "$tmp/plan.json" >/dev/null; then ok
else bad "plan nccl 2.18: $(gidenv) $(cat "$tmp/plan.err")"; fi
conf 2.21
plan roce-ok conf
if [ "$(gidenv)" = none ] && ! jq -e '.warnings[] | select(.id == "nccl-gid-index")' "$tmp/plan.json" >/dev/null; then ok
else bad "plan nccl 2.21: $(gidenv)"; fi
# Indices that differ across the node's rails: one NCCL_IB_GID_INDEX cannot serve.
roce_tree gid-differ
zero "$tmp/gid-differ" mlx5_1 3
gid "$tmp/gid-differ" mlx5_1 5 0000:0000:0000:0000:0000:ffff:0a00:0001 "RoCE v2" eth1
audit gid-differ
conf 2.18.3
plan gid-differ conf
if [ "$(gidenv)" = none ] &&
   jq -e '.warnings[] | select(.id == "nccl-gid-index" and (.message | test("NCCL 2.18 needs .*differ .*mlx5_0 3, mlx5_1 5")))' "$tmp/plan.json" >/dev/null &&
   [ "$(sev gid-differ roce-gid)" = ok ]; then ok
else bad "plan gid-differ: $(gidenv) $(jq -c .warnings "$tmp/plan.json")"; fi
plan ib-ok
if jq -e '[.ranks[].nics[]] | all(.link_layer == "InfiniBand" and .gid_index == null)' "$tmp/plan.json" >/dev/null &&
   ! jq -e '.warnings[] | select(.id == "nccl-gid-index")' "$tmp/plan.json" >/dev/null; then ok
else bad "plan ib-ok: $(jq -c '[.ranks[0].nics, .warnings]' "$tmp/plan.json")"; fi
# Soft-RoCE on a plain Ethernet NIC (gpu-only's enp4s0): hwloc reports no OS
# device for rxe0 (no device link), its `parent` names the netdev, and the
# NIC becomes an RDMA rail named rxe0 with the port's facts.
R=$tmp/soft
port "$R" rxe0 Ethernet "4: ACTIVE" "5: LinkUp" 0x0 0x0
echo enp4s0 >"$R/sys/class/infiniband/rxe0/parent"
gid "$R" rxe0 0 fe80:0000:0000:0000:5054:00ff:fe12:3456 "IB/RoCE v1" enp4s0
gid "$R" rxe0 1 fe80:0000:0000:0000:5054:00ff:fe12:3456 "RoCE v2" enp4s0
gid "$R" rxe0 2 0000:0000:0000:0000:0000:ffff:0a0b:0002 "IB/RoCE v1" enp4s0
gid "$R" rxe0 3 0000:0000:0000:0000:0000:ffff:0a0b:0002 "RoCE v2" enp4s0
netmtu "$R" enp4s0 1500
"$KMODFEED" "$FIX/gpu-only.xml" "$R" "$tmp/soft.xml" >/dev/null 2>"$tmp/soft.err"
"$RAILBIND" plan --json --input "$tmp/soft.xml" >"$tmp/plan.json" 2>"$tmp/plan.err"
if grep -q 'name="RailbindRDMADevice" value="rxe0"' "$tmp/soft.xml" &&
   jq -e '[.ranks[].nics[]] | length > 0 and all(.name == "rxe0" and .netdev == "enp4s0" and
	.link_layer == "Ethernet" and .gid_index == 3)' "$tmp/plan.json" >/dev/null &&
   jq -e '.ranks[0].env.NCCL_IB_HCA == "=rxe0:1"' "$tmp/plan.json" >/dev/null; then ok
else bad "soft-roce rail: $(cat "$tmp/soft.err") $(jq -c '[.ranks[0].nics, .ranks[0].env.NCCL_IB_HCA]' "$tmp/plan.json")"; fi

# A malformed nccl-version is the config's one-line error.
conf 2.x
if ! plan roce-ok conf && grep -q 'nccl.conf:1: expected nccl-version = MAJOR.MINOR' "$tmp/plan.err"; then ok
else bad "bad nccl-version: $(cat "$tmp/plan.err")"; fi

echo "check-fabric: $pass passed, $fail failed"
[ "$fail" = 0 ]
