#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# railbind nccl-topo: the command's contract, then the round trip. Every
# fixture (build/fixtures/*.xml) and every corpus machine railbind loads
# ($RAILBIND_TOPOLOGIES) is exported as NCCL topology XML, checked with
# xmllint, read back, and its railbind.topo/1 and railbind.plan/1 compared
# with the original's, less what norm.jq removes (fields NCCL XML cannot
# hold, and NODE, which NCCL calls PHB). inexact.txt lists the inputs that
# lose more, and why.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$HERE/../.." && pwd)
BUILD=${BUILD:-$top/build}
RAILBIND=${RAILBIND:-$BUILD/railbind}
corpus=${RAILBIND_TOPOLOGIES:-$top/../shared/topologies}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export RAILBIND HERE TMP
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
fx=$BUILD/fixtures/dgx-h100.xml

# The command line.
"$RAILBIND" nccl-topo --help > "$TMP/help" && grep -q "^Usage: .*nccl-topo" "$TMP/help" && ok || bad "--help"
"$RAILBIND" nccl-topo --json -i "$fx" > /dev/null 2>&1; [ $? -eq 2 ] && ok || bad "--json is not an option: exit 2"
"$RAILBIND" nccl-topo -i "$fx" extra > /dev/null 2>&1; [ $? -eq 2 ] && ok || bad "an argument: exit 2"
"$RAILBIND" nccl-topo -i "$TMP/none.xml" > "$TMP/out" 2> "$TMP/err"
[ $? -eq 1 ] && [ ! -s "$TMP/out" ] && [ "$(wc -l < "$TMP/err")" -eq 1 ] && ok || bad "a missing input: exit 1, one line"
"$RAILBIND" nccl-topo -i "$fx" > "$TMP/stdout.xml" && "$RAILBIND" nccl-topo -i "$fx" -o - > "$TMP/dash.xml" &&
	"$RAILBIND" nccl-topo -i "$fx" -o "$TMP/file.xml" && cmp -s "$TMP/stdout.xml" "$TMP/dash.xml" &&
	cmp -s "$TMP/stdout.xml" "$TMP/file.xml" && ok || bad "no -o, -o - and -o FILE write the same"
# Whole or not at all: an unwritable place leaves the old file and no temporary.
echo old > "$TMP/file.xml"
"$RAILBIND" nccl-topo -i "$fx" -o "$TMP/nodir/x.xml" 2> "$TMP/err"
[ $? -eq 1 ] && grep -q "nodir/x.xml" "$TMP/err" && ok || bad "-o into a missing directory: exit 1 naming it"
[ "$(ls "$TMP" | grep -c '\.tmp\.')" -eq 0 ] && ok || bad "a temporary file was left behind"
# The shape NCCL reads: GPUs in <pci><gpu>, rails in <nic><net>, switches nested.
n=$(xmllint --xpath 'count(/system/cpu//pci/gpu)' "$TMP/stdout.xml")
g=$(jq '.gpus | length' < "$("$RAILBIND" topo --json -i "$fx" > "$TMP/t.json"; echo "$TMP/t.json")")
[ "$n" = "$g" ] && ok || bad "dgx-h100: $n <gpu> for $g GPUs"
[ "$(xmllint --xpath 'count(/system/cpu/pci[@class="0x060400"]/pci/nic/net)' "$TMP/stdout.xml")" = \
  "$(jq '.nics | length' "$TMP/t.json")" ] && ok || bad "dgx-h100: every rail below its switch"

# The round trips.
: > "$TMP/list"
# The project's fixtures (tests/fixtures/*.topo), not whatever else build/fixtures holds.
for t in "$top"/tests/fixtures/*.topo; do
	n=$(basename "$t" .topo)
	if [ -f "$BUILD/fixtures/$n.xml" ]; then
		echo "$BUILD/fixtures/$n.xml fixtures/$n.xml" >> "$TMP/list"
	else
		bad "$BUILD/fixtures/$n.xml missing (make fixtures)"
	fi
done
if [ -d "$corpus" ]; then
	find "$corpus" -type f \( -name '*.xml' -o -name '*.txt' \) | sort |
		while read -r f; do echo "$f ${f#"$corpus"/}"; done >> "$TMP/list"
else
	echo "ncclexport: $corpus not found, corpus skipped (set RAILBIND_TOPOLOGIES)"
fi
# Two at a time: the machine has two cores.
xargs -P 2 -L 1 sh "$HERE/one.sh" < "$TMP/list" > "$TMP/results"
skipped=$(grep -c '^skip ' "$TMP/results")
inexact=$(grep -c '^inexact ' "$TMP/results")
exact=$(grep -c '^ok ' "$TMP/results")
pass=$((pass + exact + inexact))
grep '^inexact ' "$TMP/results" | sed 's/^/  /'
if grep -q '^FAIL' "$TMP/results"; then
	fail=$((fail + $(grep -c '^FAIL' "$TMP/results")))
	grep -v '^ok \|^skip \|^inexact ' "$TMP/results"
fi
echo "ncclexport: $exact exact round trips, $inexact inexact as documented, $skipped inputs railbind refuses (skipped)"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
