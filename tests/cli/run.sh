#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Black-box tests of the railbind command: help, exit codes, errors on bad
# input (one line on stderr naming the file, nothing on stdout), JSON
# documents, and the plan options. Needs RAILBIND and BUILD (fixtures).
set -u
RAILBIND=${RAILBIND:?}
FIX=${BUILD:?}/fixtures
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
check() {	# check DESCRIPTION COMMAND...: the command must succeed
	d=$1
	shift
	if "$@" > /dev/null 2>&1; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $d"; fi
}
run() {	# run ARGS...: railbind with output in $tmp/out, $tmp/err, rc in $rc
	"$RAILBIND" "$@" > "$tmp/out" 2> "$tmp/err"
	rc=$?
}

# Help and usage.
for c in "" topo plan snapshot; do
	run $c --help
	check "railbind $c --help exits 0 with usage on stdout" \
		sh -c "[ $rc -eq 0 ] && grep -q Usage '$tmp/out' && [ ! -s '$tmp/err' ]"
done
run frobnicate
check "unknown command exits 2 with a message" sh -c "[ $rc -eq 2 ] && grep -q frobnicate '$tmp/err'"
run plan --no-such-option
check "unknown option exits 2" sh -c "[ $rc -eq 2 ] && [ -s '$tmp/err' ]"
run
check "no command exits 2" test $rc -eq 2

# Bad inputs: exit 1, one line naming the file, nothing on stdout.
: > "$tmp/empty.xml"
mkdir "$tmp/dir.xml"
printf 'hello, world\n' > "$tmp/text.xml"
printf '<?xml version="1.0"?>\n<graphs>\n</graphs>\n' > "$tmp/root.xml"
head -c 2000 "$FIX/small.xml" > "$tmp/truncated.xml"
printf '<system version="1">\n<cpu numaid="x"/>\n</system>\n' > "$tmp/badnccl.xml"
for f in "$tmp/empty.xml" "$tmp/dir.xml" "$tmp/missing.xml" "$tmp/text.xml" \
	 "$tmp/root.xml" "$tmp/truncated.xml" "$tmp/badnccl.xml"; do
	for c in topo plan; do
		run $c --input "$f"
		check "$c on $(basename "$f"): exit 1, one line naming it, no stdout" \
			sh -c "[ $rc -eq 1 ] && [ ! -s '$tmp/out' ] && [ \$(wc -l < '$tmp/err') -eq 1 ] && grep -qF '$f' '$tmp/err'"
	done
done
run plan --input "$tmp/truncated.xml"
check "truncated XML: the error gives a line number" grep -q "truncated.xml:[0-9]" "$tmp/err"
run plan --input "$tmp/badnccl.xml"
check "bad NCCL attribute: file:line and what was expected" grep -q "badnccl.xml:2: <cpu numaid>" "$tmp/err"

# JSON documents.
run topo --json --input "$FIX/dgx-h100.xml"
check "topo --json: railbind.topo/1, 8 GPUs, 8x12 paths" \
	jq -e '.schema == "railbind.topo/1" and (.gpus | length) == 8 and (.paths | length) == 8 and (.paths[0] | length) == (.nics | length)' "$tmp/out"
run plan --json --input "$FIX/dgx-h100.xml"
check "plan --json: railbind.plan/1 with 8 ranks" \
	jq -e '.schema == "railbind.plan/1" and (.ranks | length) == 8' "$tmp/out"
check "plan: NCCL_IB_HCA in exact-match form" \
	jq -e '.ranks[0].env.NCCL_IB_HCA | test("^=mlx5_[0-9]+:1")' "$tmp/out"
check "plan: no CUDA_VISIBLE_DEVICES unless asked" \
	jq -e '[.ranks[].env | has("CUDA_VISIBLE_DEVICES")] | any | not' "$tmp/out"
run plan --json --isolate-gpu --input "$FIX/dgx-h100.xml"
check "plan --isolate-gpu sets CUDA_VISIBLE_DEVICES to the rank's GPU index" \
	jq -e '[.ranks[] | .env.CUDA_VISIBLE_DEVICES == (.gpu.index | tostring)] | all' "$tmp/out"
run plan --json --visible 3,1 --input "$FIX/dgx-h100.xml"
check "plan --visible 3,1: two ranks, in PCI order" \
	jq -e '[.ranks[].gpu.index] == [1, 3]' "$tmp/out"
run plan --visible 42 --input "$FIX/dgx-h100.xml"
check "plan --visible with no such GPU: exit 1 naming it" sh -c "[ $rc -eq 1 ] && grep -q '\"42\"' '$tmp/err'"
run plan --json --cpus 0-27 --input "$FIX/dgx-h100.xml"
check "plan --cpus 0-27: every rank's CPUs inside 0-27 (or unknown)" \
	jq -e '[.ranks[].cpus | select(. != null) | split(",")[] | split("-") | map(tonumber) | max] | max <= 27' "$tmp/out"
run plan --cpus 5000 --input "$FIX/dgx-h100.xml"
check "plan --cpus outside the node: exit 1" test $rc -eq 1

# Text output.
run topo --input "$FIX/dgx-h100.xml"
check "topo text has the matrix and a legend" \
	sh -c "grep -q '^GPU0 ' '$tmp/out' && grep -q '^Legend:' '$tmp/out' && grep -q 'PIX  =' '$tmp/out'"
run plan --input "$FIX/unknown-numa.xml"
check "plan text warns about unknown NUMA" grep -q "warning: numa-unknown" "$tmp/out"

# Config file errors name the file and line.
printf 'ethernet-rails = yes\nbogus = 1\n' > "$tmp/bad.conf"
run plan --config "$tmp/bad.conf" --input "$FIX/small.xml"
check "bad config: exit 1, FILE:LINE" sh -c "[ $rc -eq 1 ] && grep -q 'bad.conf:2: expected' '$tmp/err'"

# Snapshot: written whole or not at all.
run snapshot -o "$tmp/nodir/snap.xml"
check "snapshot into a missing directory fails, leaves nothing" \
	sh -c "[ $rc -eq 1 ] && [ ! -e '$tmp/nodir' ]"
run snapshot -o "$tmp/snap.xml"
check "snapshot of this node reloads with railbind" "$RAILBIND" topo --json --input "$tmp/snap.xml"

echo "cli: $pass passed, $fail failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
