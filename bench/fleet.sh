#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/fleet.sh: the cost per node of `railbind fleet` over N generated node
# snapshots (tests/fleet/mkfleet.sh), against peers measured in the same run
# on the same files: hwloc reading each file (lstopo-no-graphics -i F --of
# xml, one process per file, as a script would), the script railbind fleet
# replaces (railbind audit --json -i F per file), and cat (the I/O floor).
# Two node sizes: tests/fleet/node.topo (8 GPUs, 16 PUs) and the DGX H100
# fixture (8 GPUs, 10 NICs, 224 PUs). Median of BENCH_REPS (default 3)
# alternating runs; wall and CPU (user + system) time.
#   RAILBIND=build/railbind RBGEN=build/rbgen sh bench/fleet.sh [N]
set -eu
: "${RAILBIND:?set RAILBIND to the railbind binary}"
: "${RBGEN:?set RBGEN to the rbgen binary}"
TOP=$(cd "$(dirname "$0")/.." && pwd)
N=${1:-1000}
REPS=${BENCH_REPS:-3}
TMP=${BENCH_TMP:-$TOP/build/bench/fleet}
LSTOPO=${LSTOPO:-lstopo-no-graphics}
export RBGEN
mkdir -p "$TMP"

# timed NAME CMD...: append "NAME wall user system" (seconds) to $TMP/times.raw
timed() {
	name=$1
	shift
	/usr/bin/time -f "$name %e %U %S" -a -o "$TMP/times.raw" "$@" >/dev/null 2>&1 ||
		grep -q "^$name " "$TMP/times.raw" || { echo "bench: $name failed" >&2; exit 1; }
}
# /usr/bin/time runs programs, not shell functions: the loops are sh -c scripts.
EACH_LSTOPO='for f in "$1"/*.xml; do "$2" -i "$f" --of xml - || exit 1; done'
EACH_AUDIT='for f in "$1"/*.xml; do "$2" audit --json -i "$f"; done; exit 0'
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# stat NAME wall|cpu: the median over the runs, in seconds
stat() {
	awk -v n="$1" -v k="$2" '$1 == n { print (k == "wall" ? $2 : $3 + $4) }' "$TMP/times.raw" | median
}

printf 'railbind fleet, %s nodes, %s runs each (median); %s CPUs online; hwloc %s\n' \
	"$N" "$REPS" "$(nproc)" "$(pkg-config --modversion hwloc 2>/dev/null || echo '?')"
for base in "$TOP/tests/fleet/node.topo" "$TOP/tests/fixtures/dgx-h100.topo"; do
	dir=$TMP/$(basename "$base" .topo)
	sh "$TOP/tests/fleet/mkfleet.sh" "$base" "$N" "$dir" >/dev/null
	kib=$(du -k "$dir/node0001.xml" | cut -f1)
	: >"$TMP/times.raw"
	r=0
	while [ "$r" -lt "$REPS" ]; do
		timed fleet1 "$RAILBIND" fleet --jobs 1 "$dir"
		timed lstopo sh -c "$EACH_LSTOPO" sh "$dir" "$LSTOPO"
		timed fleet "$RAILBIND" fleet "$dir"
		timed audit sh -c "$EACH_AUDIT" sh "$dir" "$RAILBIND"
		timed cat cat "$dir"/*.xml
		r=$((r + 1))
	done
	echo
	echo "== $(basename "$base" .topo): $N snapshots of $kib KiB"
	printf '%-46s %9s %9s %9s %9s\n' "" "ms/node" "cpu ms" "x lstopo" "cpu x"
	lw=$(stat lstopo wall)
	lc=$(stat lstopo cpu)
	for m in "fleet1:railbind fleet --jobs 1" "fleet:railbind fleet (default jobs)" \
	    "lstopo:lstopo -i F --of xml, per file" "audit:railbind audit --json -i F, per file" \
	    "cat:cat of the files"; do
		k=${m%%:*}
		w=$(stat "$k" wall)
		c=$(stat "$k" cpu)
		awk -v l="${m#*:}" -v w="$w" -v c="$c" -v lw="$lw" -v lc="$lc" -v n="$N" 'BEGIN {
			printf "%-46s %9.2f %9.2f %9.2f %9.2f\n", l, 1000 * w / n, 1000 * c / n,
				(lw > 0 ? w / lw : 0), (lc > 0 ? c / lc : 0) }'
	done
done
