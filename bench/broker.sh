#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The broker's benchmarks (issue 5), ratios measured in one run:
#  1. railbind run -- /bin/true with the broker vs taskset -c 0 /bin/true (target <= 1.2x)
#  2. railbind run with no broker vs hwloc-bind pci=<gpu> -- /bin/true on the same
#     topology (target <= 1.0x)
#  3. the broker under 64 concurrent clients: plans/s, p50/p99, peak RSS
#     (targets >= 20000/s, p99 < 2 ms, RSS < 16 MiB)
# The topology is broker-host2.xml, shaped like this 2-CPU machine, so every
# binding is really applied. Needs RAILBIND, RAILBINDD, BROKERBENCH, FIXTURE,
# python3 and hwloc-bind.
set -u
: "${RAILBIND:?}" "${RAILBINDD:?}" "${BROKERBENCH:?}" "${FIXTURE:?}"
N=${BENCH_RUNS:-300}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/railbind-bench.XXXXXX") || exit 1
sock=$tmp/railbind.sock
# The lease file lives in /run, a tmpfs, on a node; keep it on one here too
# (/dev/shm), or each lease pays a disk rename the node never does.
state=$tmp
[ -d /dev/shm ] && state=$(mktemp -d /dev/shm/railbind-bench.XXXXXX)
cleanup() { [ -n "${bpid:-}" ] && kill "$bpid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp" "$state"; }
trap cleanup EXIT INT TERM

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

"$RAILBINDD" --foreground --input "$FIXTURE" --socket "$sock" --state-dir "$state" \
	--limits on 2>"$tmp/broker.log" &
bpid=$!
i=0
until "$RAILBIND" status -s "$sock" >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 100 ] || { echo "bench: the broker did not start"; cat "$tmp/broker.log"; exit 1; }
	sleep 0.05
done
export RAILBIND_SOCKET="$sock"
gpu=$("$RAILBIND" plan --json --input "$FIXTURE" | jq -r '.ranks[0].gpu.pci')

# Interleaved pairs (ABBA), so the other load of a shared machine hits both alike.
L=$(dirname "$0")/broker_launch.py
"$RAILBIND" run --rank 0 -- /bin/true
set -- $(python3 "$L" "$N" "$bpid" :: "$RAILBIND" run --rank 0 -- /bin/true \
	:: taskset -c 0 /bin/true) || exit 1
echo "run, broker:    wall $1 us vs taskset -c 0 $2 us: ratio $(ratio $1 $2); CPU $3 us (broker's share included) vs $4 us: ratio $(ratio $3 $4) (target <= 1.2)"
set -- $(HWLOC_XMLFILE=$FIXTURE HWLOC_THISSYSTEM=1 python3 "$L" "$N" 0 :: \
	"$RAILBIND" run --local --input "$FIXTURE" --rank 0 -- /bin/true \
	:: hwloc-bind "pci=$gpu" -- /bin/true) || exit 1
echo "run, no broker: wall $1 us vs hwloc-bind pci=$gpu $2 us: ratio $(ratio $1 $2); CPU $3 us vs $4 us: ratio $(ratio $3 $4) (target <= 1.0)"
out=$("$BROKERBENCH" "$sock" "$bpid" 64 "${BENCH_SECONDS:-3}" 2) || { echo "bench: brokerbench failed: $out"; exit 1; }
echo "broker, 64 clients: $out (targets >= 20000/s, p99 < 2000 us, rss < 16384 KiB)"
