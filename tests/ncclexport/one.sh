#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# One round trip (run.sh runs it for every file): FILE -> railbind nccl-topo
# -> NCCL's rules (nccl_rules.py) -> re-import; prints one line:
# "ok|inexact|skip|FAIL <label> <why>".
# Needs RAILBIND, HERE, TMP, and LABEL (the name in inexact.txt) set.
set -u
f=$1
label=$2
d=$TMP/$(echo "$label" | tr '/' '_')
mkdir -p "$d"
norm() { jq -S -f "$HERE/norm.jq" "$1"; }

if ! "$RAILBIND" topo --json -i "$f" > "$d/a.json" 2> /dev/null; then
	echo "skip $label refused by railbind"
	exit 0
fi
if ! "$RAILBIND" nccl-topo -i "$f" -o "$d/x.xml" 2> "$d/err"; then
	echo "FAIL $label export: $(head -c 300 "$d/err")"
	exit 0
fi
if ! xmllint --noout "$d/x.xml" 2> "$d/err" ||
   [ "$(xmllint --xpath 'string(/system/@version)' "$d/x.xml")" != 1 ]; then
	echo "FAIL $label export is not well-formed <system version=\"1\">: $(head -c 300 "$d/err")"
	exit 0
fi
# What NCCL requires of the file, and keeps from an NCCL input (nccl_rules.py).
if ! python3 "$HERE/nccl_rules.py" "$f" "$d/x.xml" > "$d/rules" 2>&1; then
	echo "FAIL $label export breaks NCCL's rules: $(head -3 "$d/rules" | tr '\n' ';')"
	exit 0
fi
if ! "$RAILBIND" topo --json -i "$d/x.xml" > "$d/b.json" 2> "$d/err"; then
	echo "FAIL $label re-import: $(head -c 300 "$d/err")"
	exit 0
fi
"$RAILBIND" plan --json -i "$f" > "$d/pa.json" 2> /dev/null
pa=$?
"$RAILBIND" plan --json -i "$d/x.xml" > "$d/pb.json" 2> /dev/null
pb=$?
if [ $pa -ne $pb ]; then
	echo "FAIL $label plan exits $pa on the original, $pb on the re-import"
	exit 0
fi
exact=yes
norm "$d/a.json" > "$d/an" && norm "$d/b.json" > "$d/bn" && cmp -s "$d/an" "$d/bn" || exact=no
if [ $pa -eq 0 ]; then
	norm "$d/pa.json" > "$d/pan" && norm "$d/pb.json" > "$d/pbn" && cmp -s "$d/pan" "$d/pbn" || exact=no
fi
why=$(awk -v l="$label" '$1 == l { $1 = ""; print substr($0, 2) }' "$HERE/inexact.txt")
if [ $exact = yes ]; then
	if [ -n "$why" ]; then
		echo "FAIL $label round-trips exactly but inexact.txt lists it: remove it there"
	else
		echo "ok $label"
	fi
	exit 0
fi
if [ -z "$why" ]; then
	echo "FAIL $label differs after the round trip (diff of topo, then plan):"
	diff "$d/an" "$d/bn" | head -20
	[ $pa -eq 0 ] && diff "$d/pan" "$d/pbn" | head -20
	exit 0
fi
# A documented loss: what remains must still hold (same GPUs in the same
# order, same rails but the ports that are not ACTIVE, which NCCL's files
# never list, each rank on the same GPU).
same() { [ "$(jq -c "$1" "$2")" = "$(jq -c "$1" "$3")" ]; }
if same '[.gpus[].pci]' "$d/a.json" "$d/b.json" &&
   same '[.nics[] | select(.excluded != "port-down") | [.pci, .name]]' "$d/a.json" "$d/b.json" &&
   { [ $pa -ne 0 ] || same '[.ranks[].gpu.pci]' "$d/pa.json" "$d/pb.json"; }; then
	echo "inexact $label ($why)"
else
	echo "FAIL $label: GPUs, rails or ranks' GPUs differ (beyond: $why)"
fi
