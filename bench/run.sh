#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# railbind's benchmarks (bench/README.md): every time is reported as a ratio
# to hwloc measured in the same run on the same file, never on its own,
# since this machine's speed and load say nothing about railbind.
#  1. railbind plan --json vs lstopo-no-graphics --of xml on the largest
#     real topologies of the corpus;
#  2. the same, and the planner alone (planbench), on generated machines of
#     8 to 4096 GPUs, with the growth exponent of railbind's cost.
# Prints a table and writes it to bench/results/latest.txt.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
RAILBIND=${RAILBIND:-$top/build/railbind}
RBGEN=${RBGEN:-$top/build/rbgen}
ALT=${ALT:-$top/build/bench/alt}
PLANBENCH=${PLANBENCH:-$top/build/bench/planbench}
LSTOPO=${LSTOPO:-lstopo-no-graphics}
corpus=${RAILBIND_TOPOLOGIES:-$top/../shared/topologies}
# Seconds of alternating runs per measurement (each has a minimum count too).
secs=${BENCH_SECONDS:-2}
max_gpus=${BENCH_MAX_GPUS:-4096}
target_ratio=1.3
target_exp=1.5

for tool in "$RAILBIND" "$RBGEN" "$ALT" "$PLANBENCH"; do
	if [ ! -x "$tool" ]; then
		echo "bench: $tool not built (run make bench)" >&2
		exit 1
	fi
done
command -v "$LSTOPO" > /dev/null || { echo "bench: $LSTOPO not found (Debian package hwloc)" >&2; exit 1; }

mkdir -p "${BENCH_TMP:-/tmp}"
tmp=$(mktemp -d "${BENCH_TMP:-/tmp}/bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$here/results"
out=$here/results/latest.txt

# get KEY LINE: the value of KEY=... in a line of alt or planbench.
get() { echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
# ratio A B, exponent T1 T2 N1 N2, within X LIMIT -> ok / MISS
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }
exponent() { awk -v a="$1" -v b="$2" -v m="$3" -v n="$4" 'BEGIN { printf "%.2f", log(b / a) / log(n / m) }'; }
within() { awk -v x="$1" -v l="$2" 'BEGIN { print x <= l ? "ok" : "MISS" }'; }
root_of() { head -c 4096 "$1" | grep -o -m1 '<topology\|<system' | head -n1 | tr -d '<'; }
misses=0
# verdict X LIMIT: sets $v to ok / MISS and counts misses (not in $(...): a
# subshell's count is lost, and the summary said 0 misses after a MISS).
verdict() { v=$(within "$1" "$2"); [ "$v" = ok ] || misses=$((misses + 1)); }

{
echo "railbind benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1), $(uname -sr)"
echo "railbind: $(cd "$top" && git describe --always --dirty 2>/dev/null || echo unknown); hwloc: $("$LSTOPO" --version 2>&1 | head -n1)"
echo "ratios are medians of per-pair ratios of alternating runs; wall = elapsed, cpu = user+sys"
echo "target: railbind/hwloc <= $target_ratio, growth exponent 256->4096 GPUs <= $target_exp"
echo

echo "== 1. corpus: railbind plan --input F --json vs $LSTOPO -i F --of xml"
if [ ! -d "$corpus" ]; then
	echo "corpus $corpus not found, skipped (set RAILBIND_TOPOLOGIES)"
else
	# The largest files railbind plans and hwloc loads; NCCL files only
	# need to plan (hwloc cannot read them).
	find "$corpus" -type f -name '*.xml' -printf '%s %p\n' | sort -rn > "$tmp/files"
	nh=0
	nn=0
	: > "$tmp/hwloc"
	: > "$tmp/nccl"
	while read -r size f; do
		[ $nh -ge 5 ] && [ $nn -ge 3 ] && break
		kind=$(root_of "$f")
		"$RAILBIND" plan --input "$f" --json > "$tmp/plan.json" 2> /dev/null || continue
		gpus=$(jq '.ranks | length' "$tmp/plan.json")
		if [ "$kind" = topology ] && [ $nh -lt 5 ] &&
		   "$LSTOPO" -i "$f" --of xml > /dev/null 2>&1; then
			echo "$size $gpus $f" >> "$tmp/hwloc"
			nh=$((nh + 1))
		elif [ "$kind" = system ] && [ $nn -lt 3 ]; then
			echo "$size $gpus $f" >> "$tmp/nccl"
			nn=$((nn + 1))
		fi
	done < "$tmp/files"
	printf '%-48s %8s %5s %10s %10s %s\n' file KiB gpus ratio_wall ratio_cpu target
	while read -r size gpus f; do
		r=$("$ALT" -t "$secs" -- "$RAILBIND" plan --input "$f" --json -- \
			"$LSTOPO" -i "$f" --of xml)
		w=$(get ratio_wall "$r")
		verdict "$w" $target_ratio
		printf '%-48s %8d %5d %10s %10s %s\n' "${f#"$corpus"/}" $((size / 1024)) "$gpus" \
			"$w" "$(get ratio_cpu "$r")" "$v"
	done < "$tmp/hwloc"
	ref=$(head -n1 "$tmp/hwloc" | cut -d' ' -f3)
	if [ -s "$tmp/nccl" ] && [ -n "$ref" ]; then
		echo "NCCL files: hwloc cannot read them, so no same-file peer exists;"
		echo "the peer is $LSTOPO on the largest file above, ${ref#"$corpus"/} (informative, no target)"
		while read -r size gpus f; do
			r=$("$ALT" -t "$secs" -- "$RAILBIND" plan --input "$f" --json -- \
				"$LSTOPO" -i "$ref" --of xml)
			printf '%-48s %8d %5d %10s %10s %s\n' "${f#"$corpus"/}" $((size / 1024)) "$gpus" \
				"$(get ratio_wall "$r")" "$(get ratio_cpu "$r")" -
		done < "$tmp/nccl"
	fi
fi
echo

echo "== 2. generated machines (rbgen --gpus N, one NIC per GPU)"
echo "cli = railbind plan --json / $LSTOPO --of xml (processes, same file)"
echo "load, plan, json = aff_topo_load (in-process import, as in the command's child), aff_plan_new,"
echo "  aff_plan_json / hwloc_topology_load (planbench, one process); contained = aff_topo_load as the"
echo "  library runs it for in-process callers, hwloc's import in a child process"
printf '%6s %8s %9s %9s %8s %8s %8s %9s %s\n' gpus KiB cli_wall cli_cpu load plan json contained target
n=8
while [ $n -le "$max_gpus" ]; do
	f=$tmp/gen-$n.xml
	"$RBGEN" --gpus $n -o "$f"
	r=$("$ALT" -t "$secs" -- "$RAILBIND" plan --input "$f" --json -- "$LSTOPO" -i "$f" --of xml)
	p=$("$PLANBENCH" -t "$secs" "$f")
	h=$(get hwloc "$p")
	w=$(get ratio_wall "$r")
	verdict "$w" $target_ratio
	printf '%6d %8d %9s %9s %8s %8s %8s %9s %s\n' $n $(($(stat -c %s "$f") / 1024)) \
		"$w" "$(get ratio_cpu "$r")" "$(ratio "$(get load "$p")" "$h")" \
		"$(ratio "$(get plan "$p")" "$h")" "$(ratio "$(get json "$p")" "$h")" \
		"$(ratio "$(get contained "$p")" "$h")" "$v"
	# Absolute times stay in the temporary directory, for the exponents only.
	echo "$n $(get a_wall "$r") $(get b_wall "$r") $(get plan "$p") $h $(get load "$p")" >> "$tmp/times"
	rm -f "$f"
	n=$((n * 2))
done
echo
if grep -q '^256 ' "$tmp/times" && grep -q '^4096 ' "$tmp/times"; then
	set -- $(grep '^256 ' "$tmp/times")
	c1=$2 l1=$3 p1=$4 h1=$5 m1=$6
	set -- $(grep '^4096 ' "$tmp/times")
	e_cli=$(exponent "$c1" "$2" 256 4096)
	e_plan=$(exponent "$p1" "$4" 256 4096)
	echo "growth exponent, 256 -> 4096 GPUs (log(t4096/t256)/log 16):"
	verdict "$e_cli" $target_exp
	echo "  railbind plan --json (process):  $e_cli  $v"
	echo "  aff_topo_load (in process):      $(exponent "$m1" "$6" 256 4096)"
	verdict "$e_plan" $target_exp
	echo "  aff_plan_new (planner alone):    $e_plan  $v"
	echo "  peers: lstopo $(exponent "$l1" "$3" 256 4096), hwloc_topology_load $(exponent "$h1" "$5" 256 4096)"
else
	echo "growth exponent: needs 256 and 4096 GPUs (BENCH_MAX_GPUS=$max_gpus)"
fi
echo
echo "targets missed: $misses"
} | tee "$out"
echo "written to $out"
