#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/verify.sh: `railbind verify --all` over N running ranks against what
# an operator would run for the same answer without it: `ps -eo pid,psr,args`
# once (which CPU each process is on) plus `numastat -p PID` for each rank
# (where its memory is). The ranks are tests/verify/rank.c stand-ins, each
# holding a GPU and a NIC stand-in of a --root tree (rank i on GPU i mod 8 of
# tests/verify/verify8.topo), bound to CPU 0, with 1 MiB touched and one extra
# thread, so verify reads everything it reads on a node: open files, threads,
# numa_maps, environment, cgroup. CPU time is
# user + system of the whole command and its children; median of BENCH_REPS
# (default 3) alternating runs; the ratio is verify's over the peer's.
#   RAILBIND=build/railbind RANK=build/tests/verify-rank \
#   FIXTURE=build/verify/verify8.xml sh bench/verify.sh
set -eu
: "${RAILBIND:?set RAILBIND to the railbind binary}"
: "${RANK:?set RANK to the stand-in rank binary}"
: "${FIXTURE:?set FIXTURE to build/verify/verify8.xml}"
TOP=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-1000}
REPS=${BENCH_REPS:-3}
TMP=${BENCH_TMP:-$TOP/build/bench/verify}
for tool in ps numastat taskset; do
	command -v $tool >/dev/null || { echo "bench: $tool not found (bench/deps.txt)" >&2; exit 1; }
done
rm -rf "$TMP"
mkdir -p "$TMP/ready"
pids=
cleanup() {
	# shellcheck disable=SC2086
	[ -z "$pids" ] || kill $pids 2>/dev/null
	rm -rf "$TMP/root" "$TMP/ready"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
{
	k=0
	for pci in 04 05 14 15 24 25 34 35; do
		echo "gpu $k 0000:$pci:00.0"
		k=$((k + 1))
	done
	k=0
	for pci in 06 07 16 17 26 27 36 37; do
		echo "nic $k mlx5_$k 0000:$pci:00.0"
		k=$((k + 1))
	done
} | sh "$TOP/tests/verify/mkroot.sh" "$TMP/root"

i=0
while [ "$i" -lt "$N" ]; do
	k=$((i % 8))
	taskset -c 0 env LOCAL_RANK=$k "$RANK" --open "$TMP/root/dev/nvidia$k" \
		--open "$TMP/root/dev/nvidia-uvm" --open "$TMP/root/dev/infiniband/uverbs$k" \
		--mem 1 --threads 1 --ready "$TMP/ready/$i" &
	pids="$pids $!"
	i=$((i + 1))
done
t=0
while [ "$(find "$TMP/ready" -type f ! -name '*.tmp' | wc -l)" -lt "$N" ]; do
	sleep 0.2
	t=$((t + 1))
	[ "$t" -lt 600 ] || { echo "bench: the ranks did not start" >&2; exit 1; }
done

# timed NAME CMD...: append "NAME wall user system" (seconds) to $TMP/times.raw
timed() {
	name=$1
	shift
	/usr/bin/time -f "$name %e %U %S" -a -o "$TMP/times.raw" "$@" >/dev/null 2>&1 ||
		grep -q "^$name " "$TMP/times.raw" || { echo "bench: $name failed" >&2; exit 1; }
}
# The peer: one ps, then numastat per rank (a script that reads the same facts).
# shellcheck disable=SC2016
PEER='ps -eo pid,psr,args; for p in $1; do numastat -p "$p"; done'
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
stat() {
	awk -v n="$1" -v k="$2" '$1 == n { print (k == "wall" ? $2 : $3 + $4) }' "$TMP/times.raw" | median
}
: >"$TMP/times.raw"
r=0
while [ "$r" -lt "$REPS" ]; do
	timed verify "$RAILBIND" verify --all --json --no-broker --root "$TMP/root" -i "$FIXTURE"
	timed peer sh -c "$PEER" sh "$pids"
	r=$((r + 1))
done
# The answer must be the one expected: every rank judged, bound right, and
# (N ranks on 8 GPUs) each sharing its GPU, the only finding.
"$RAILBIND" verify --all --nfd --no-broker --root "$TMP/root" -i "$FIXTURE" >"$TMP/nfd" || true
grep -qx "railbind.verify.ranks=$N" "$TMP/nfd" && [ "$(grep -c '=fail$' "$TMP/nfd")" = 2 ] &&
	grep -qx 'railbind.verify.gpu-shared=fail' "$TMP/nfd" ||
	{ echo "bench: verify did not judge the $N ranks as expected:" >&2; cat "$TMP/nfd" >&2; exit 1; }

vw=$(stat verify wall)
vc=$(stat verify cpu)
pw=$(stat peer wall)
pc=$(stat peer cpu)
printf 'railbind verify --all over %s ranks, %s runs each (median); %s CPUs online\n' "$N" "$REPS" "$(nproc)"
printf '%-44s %9s %9s\n' "" "wall s" "cpu s"
printf '%-44s %9s %9s\n' "railbind verify --all --json" "$vw" "$vc"
printf '%-44s %9s %9s\n' "ps -eo pid,psr,args + numastat -p per rank" "$pw" "$pc"
awk -v vw="$vw" -v vc="$vc" -v pw="$pw" -v pc="$pc" 'BEGIN {
	printf "%-44s %9.3f %9.3f\n", "ratio verify / peer (target: cpu < 1)",
		(pw > 0 ? vw / pw : 0), (pc > 0 ? vc / pc : 0) }'
