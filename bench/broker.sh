#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The broker's benchmarks (issue 5), ratios measured in one run:
#  1. railbind run -- /bin/true with the broker vs taskset -c 0 /bin/true (target <= 1.2x)
#  2. railbind run with no broker vs hwloc-bind pci=<gpu> -- /bin/true on the same
#     topology (target <= 1.0x)
#  3. the broker under 64 concurrent clients: plans/s, p50/p99, peak RSS
#     (targets >= 20000/s, p99 < 2 ms, RSS < 16 MiB)
#  4. an honest client (4 connections) while another uid floods a broker
#     serving the DGX fixture (tests/broker/hostile.c: connections and
#     watchers, leases, half-closed clients that never read, plan-cache
#     busting, processes with a huge environment asking plans with a GPU
#     claim 20 at a time), beside the same client with no flood just before, the
#     median of ROUNDS (3) rounds (root and setpriv needed; said and skipped
#     otherwise); FLOOD_KINDS picks floods ("bigenv" alone, say)
# The topology is broker-host2.xml, shaped like this 2-CPU machine, so every
# binding is really applied. Needs RAILBIND, RAILBINDD, BROKERBENCH, FIXTURE,
# python3 and hwloc-bind.
set -u
: "${RAILBIND:?}" "${RAILBINDD:?}" "${BROKERBENCH:?}" "${FIXTURE:?}"
HOSTILE=${HOSTILE:-}
N=${BENCH_RUNS:-300}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/railbind-bench.XXXXXX") || exit 1
chmod 755 "$tmp"	# the flooding uid must reach the socket
sock=$tmp/railbind.sock
# The lease file lives in /run, a tmpfs, on a node; keep it on one here too
# (/dev/shm), or each lease pays a disk rename the node never does.
state=$tmp
[ -d /dev/shm ] && state=$(mktemp -d /dev/shm/railbind-bench.XXXXXX)
cleanup() {
	[ -n "${fpid:-}" ] && kill "$fpid" 2>/dev/null
	[ -n "${bpid:-}" ] && kill "$bpid" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp" "$state"
}
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

# 4. An honest client while another uid floods, on a second broker serving
# the 8-GPU DGX fixture (255 GPU sets to bust the cache with). The machine is
# shared: each flood is measured ROUNDS times, each round the same client
# with no flood just before, and the median of the rounds is printed.
load() { cut -d' ' -f1-3 /proc/loadavg; }
field() { echo "$1" | awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }'; }
median() { tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null 2>&1 || [ -z "$HOSTILE" ] ||
   [ -z "${FIXTURE_DGX:-}" ]; then
	echo "honest client under a flood: skipped (needs root, setpriv, HOSTILE and FIXTURE_DGX)"
	exit 0
fi
kill "$bpid"
wait "$bpid" 2>/dev/null
"$RAILBINDD" --foreground --input "$FIXTURE_DGX" --socket "$sock" --state-dir "$state" \
	2>"$tmp/broker2.log" &
bpid=$!
i=0
until "$RAILBIND" status -s "$sock" >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 100 ] || { echo "bench: the DGX broker did not start"; exit 1; }
	sleep 0.05
done
S=${FLOOD_SECONDS:-2}
honest() { "$BROKERBENCH" "$sock" "$bpid" 4 "$S" 8 | sed "s/\/s/ \/s/"; }
# exec: the background job is the flooder itself, and kill reaches it.
flooder() { exec setpriv --reuid=64102 --regid=64102 --clear-groups -- "$HOSTILE" "$@"; }
exec_bigenv() { exec "$HOSTILE" bigenv "$sock" 64102 3600 20 63; }
echo "honest client, 4 connections, ${S} s a round, ${ROUNDS:=3} rounds a flood; another uid floods; load average before: $(load)"
for kind in ${FLOOD_KINDS:-conns leases flood bust bigenv}; do
	rates="" p99s="" base_rates="" base_p99s="" rss=0
	for round in $(seq "$ROUNDS"); do
		base=$(honest) || { echo "bench: brokerbench failed: $base"; exit 1; }
		case $kind in
		conns) flooder conns "$sock" 4096 watch >"$tmp/flood.out" & ;;
		leases) flooder leases "$sock" 4300 0 7 >"$tmp/flood.out" & ;;
		flood) flooder flood "$sock" 300 310 >"$tmp/flood.out" & ;;
		bust) flooder bust "$sock" 3600 >"$tmp/flood.out" & ;;
		# Root sets the environment up (63 MiB by prctl where it may, else
		# 6 MiB by exec), then drops to the uid itself.
		bigenv) exec_bigenv >"$tmp/flood.out" 2>/dev/null & ;;
		esac
		fpid=$!
		i=0
		until grep -q ready "$tmp/flood.out" 2>/dev/null || [ $i -ge 200 ]; do
			sleep 0.05
			i=$((i + 1))
		done
		under=$(honest) || { echo "bench: brokerbench failed under $kind: $under"; exit 1; }
		kill "$fpid" 2>/dev/null
		wait "$fpid" 2>/dev/null
		fpid=
		sleep 2	# the flood's leases and connections go, and the broker settles
		rates="$rates $(field "$under" rate)" p99s="$p99s $(field "$under" p99)"
		base_rates="$base_rates $(field "$base" rate)" base_p99s="$base_p99s $(field "$base" p99)"
		rss=$(field "$under" rss)
	done
	r1=$(echo $rates | median) p1=$(echo $p99s | median)
	r0=$(echo $base_rates | median) p0=$(echo $base_p99s | median)
	printf '%-6s (%s): %s plans/s p99 %s us; no flood %s plans/s p99 %s us: rate ratio %s, p99 ratio %s; broker peak RSS %s KiB\n' \
		"$kind" "$(head -1 "$tmp/flood.out" | cut -c1-72)" "$r1" "$p1" "$r0" "$p0" \
		"$(ratio "$r1" "$r0")" "$(ratio "$p1" "$p0")" "$rss"
done
echo "load average after: $(load)"
