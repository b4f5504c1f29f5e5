#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Health over time through the real broker: railbindd samples a fake sysfs
# (a --root tree shaped like tests/fixtures/audit-ok.topo's PCI devices and
# RDMA ports) every second (health-interval = 1 in the tree's railbind.conf)
# while the test changes it: an idle GPU's link slows (not counted), a NIC's
# link loses lanes and gets them back, a NIC is removed and added back with
# fresh AER totals, a port goes down and up. The counters file must say so;
# discovery (KMODFEED: annotate audit-ok.xml under the tree, as a snapshot of
# that node) must carry the counts, and railbind audit must find exactly
# link-flapping and port-flapping (exit 2). The counts survive a restart of
# the broker in one boot, not into another boot.
# Needs RAILBIND, RAILBINDD, KMODFEED, BUILD (audit-ok.xml), jq.
set -u
: "${RAILBIND:?}" "${RAILBINDD:?}" "${KMODFEED:?}" "${BUILD:?}"
FIX=$BUILD/fixtures
pass=0
fail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/railbind-health.XXXXXX") || exit 1
pid=
cleanup() {
	[ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
R=$tmp/root
C=$R/run/railbind/counters.json

# dev PATH CLASS SPEED WIDTH: a PCI function of the tree, PATH its chain of
# addresses below the host bridge (a port's functions are its subdirectories,
# as in sysfs), linked from sys/bus/pci/devices.
dev() {
	d=$R/sys/devices/pci0000:00/$1
	mkdir -p "$d"
	echo "$2" >"$d/class"
	echo "$3 GT/s PCIe" >"$d/current_link_speed"
	echo "$4" >"$d/current_link_width"
	ln -sfn "$d" "$R/sys/bus/pci/devices/${1##*/}"
}
aer() {
	d=$R/sys/bus/pci/devices/$1
	printf 'RxErr %s\nTOTAL_ERR_COR %s\n' "$2" "$2" >"$d/aer_dev_correctable"
	printf 'TOTAL_ERR_NONFATAL 0\n' >"$d/aer_dev_nonfatal"
	printf 'TOTAL_ERR_FATAL 0\n' >"$d/aer_dev_fatal"
}
port() { echo "$2" >"$R/sys/class/infiniband/$1/ports/1/state"; }
mkdir -p "$R/etc/railbind" "$R/run/railbind" "$R/proc/sys/kernel/random" "$R/sys/bus/pci/devices"
echo "health-interval = 1" >"$R/etc/railbind/railbind.conf"
echo 5ea1ed00-0000-4000-8000-000000000001 >"$R/proc/sys/kernel/random/boot_id"
echo "3600.00 100.00" >"$R/proc/uptime"
# audit-ok's switch A: its downstream ports, the GPU and its rail.
dev 0000:03:00.0 0x060400 16.0 16
dev 0000:03:01.0 0x060400 16.0 16
dev 0000:03:00.0/0000:04:00.0 0x030200 16.0 16
dev 0000:03:01.0/0000:05:00.0 0x020700 16.0 16
aer 0000:05:00.0 3
for n in 0 1 2 3; do
	mkdir -p "$R/sys/class/infiniband/mlx5_$n/ports/1/counters"
	echo 0 >"$R/sys/class/infiniband/mlx5_$n/ports/1/counters/link_downed"
	port "mlx5_$n" "4: ACTIVE"
done

start() {
	"$RAILBINDD" -n --root "$R" --input "$FIX/audit-ok.xml" --socket "$tmp/sock" \
		--state-dir "$R/run/railbind" 2>>"$tmp/broker.log" &
	pid=$!
}
stop() {
	kill "$pid" && wait "$pid"
	pid=
}
# until JQ: wait (at most 20 s) for the counters file to satisfy the jq filter.
until_c() {
	i=0
	while [ $i -lt 200 ]; do
		[ -s "$C" ] && jq -e "$1" "$C" >/dev/null 2>&1 && return 0
		sleep 0.1
		i=$((i + 1))
	done
	echo "counters: $(cat "$C" 2>/dev/null)"
	return 1
}
link() { printf '.links[] | select(.pci == "%s")' "$1"; }

start
if until_c '.schema == "railbind.counters/1" and .boot_id == "5ea1ed00-0000-4000-8000-000000000001" and
    (.links | length) == 4 and (.ports | length) == 4'; then ok; else bad "first sample"; fi
if jq -e "($(link 0000:04:00.0)).gpu_link and ($(link 0000:03:00.0)).gpu_link and
    (($(link 0000:05:00.0)).gpu_link | not) and ($(link 0000:05:00.0)).aer == [3,0,0]" "$C" >/dev/null
then ok; else bad "GPU links and AER: $(cat "$C")"; fi

# An idle GPU slows its link: power management, not counted.
dev 0000:03:00.0/0000:04:00.0 0x030200 2.5 16
dev 0000:03:00.0 0x060400 2.5 16
if until_c "($(link 0000:04:00.0)).speed_idle == 1" &&
    jq -e "($(link 0000:04:00.0)).changes == 0 and ($(link 0000:03:00.0)).changes == 0" "$C" >/dev/null
then ok; else bad "an idle GPU's link counted"; fi

# The NIC's link drops to x8 and comes back: two changes.
dev 0000:03:01.0/0000:05:00.0 0x020700 16.0 8
until_c "($(link 0000:05:00.0)).changes == 1" || bad "x8 not counted"
dev 0000:03:01.0/0000:05:00.0 0x020700 16.0 16
if until_c "($(link 0000:05:00.0)).changes == 2"; then ok; else bad "x16 again not counted"; fi

# The port goes down and comes back.
port mlx5_1 "1: DOWN"
until_c '.ports[] | select(.name == "mlx5_1") | .downs == 1' || bad "port down not seen"
port mlx5_1 "4: ACTIVE"
if until_c '.ports[] | select(.name == "mlx5_1") | .changes == 2 and .downs == 1 and .state == "ACTIVE"'
then ok; else bad "port flap"; fi

# The NIC is removed, and added back with AER totals that start again.
rm "$R/sys/bus/pci/devices/0000:05:00.0"
until_c "($(link 0000:05:00.0)).present == false and ($(link 0000:05:00.0)).changes == 3" ||
	bad "removal not counted"
ln -s "$R/sys/devices/pci0000:00/0000:03:01.0/0000:05:00.0" "$R/sys/bus/pci/devices/0000:05:00.0"
aer 0000:05:00.0 1
if until_c "($(link 0000:05:00.0)).present and ($(link 0000:05:00.0)).changes == 4 and
    ($(link 0000:05:00.0)).aer == [1,0,0] and ($(link 0000:05:00.0)).aer_base == [3,0,0]"
then ok; else bad "return not counted"; fi

# What a snapshot of that node carries, and what the audit finds.
if "$KMODFEED" "$FIX/audit-ok.xml" "$R" "$tmp/snap.xml" >/dev/null 2>"$tmp/feed.err" &&
    grep -q 'name="RailbindCounters" value="broker"' "$tmp/snap.xml"; then ok
else bad "snapshot: $(cat "$tmp/feed.err")"; fi
"$RAILBIND" audit --json -i "$tmp/snap.xml" >"$tmp/audit.json" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ] &&
    [ "$(jq -c '[.checks[] | select(.severity != "ok") | [.id, .subject]] | sort' "$tmp/audit.json")" = \
	'[["link-flapping","0000:05:00.0"],["port-flapping","mlx5_1"]]' ] &&
    jq -e '.checks[] | select(.id == "link-flapping") | .evidence.changes == 4' "$tmp/audit.json" >/dev/null &&
    [ "$(jq -r '.summary["pcie-errors"]' "$tmp/audit.json")" = ok ]
then ok; else bad "audit of the snapshot: rc=$rc $(jq -c '[.checks[] | select(.severity != "ok")]' "$tmp/audit.json")"; fi
# The NIC's AER totals in the snapshot count the ones before its removal too.
if grep -A8 'pci_busid="0000:05:00.0"' "$tmp/snap.xml" | grep -q 'name="RailbindAerCorrectable" value="4"'
then ok; else bad "AER across the removal"; fi

# A restart in the same boot counts on; in another boot it starts again.
stop
start
sleep 1.5
if until_c "($(link 0000:05:00.0)).changes == 4"; then ok; else bad "counts lost on restart"; fi
stop
echo 5ea1ed00-0000-4000-8000-000000000002 >"$R/proc/sys/kernel/random/boot_id"
start
if until_c ".boot_id == \"5ea1ed00-0000-4000-8000-000000000002\" and ($(link 0000:05:00.0)).changes == 0"
then ok; else bad "another boot's counts kept"; fi
stop

# health-interval = 0: the broker counts nothing and writes no file.
rm -f "$C"
echo "health-interval = 0" >"$R/etc/railbind/railbind.conf"
start
i=0
while [ ! -S "$tmp/sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1.5
if [ ! -e "$C" ] && grep -q 'link counters off' "$tmp/broker.log"; then ok
else bad "health-interval = 0 still counts"; fi
stop

# Under ASan+UBSan (check-health-asan) a report goes to the broker's log.
if grep -q 'Sanitizer\|runtime error' "$tmp/broker.log"; then bad "sanitizer: $(cat "$tmp/broker.log")"
else ok; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
