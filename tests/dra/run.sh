#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# resource.kubernetes.io/pcieRoot as Kubernetes computes it
# (GetPCIeRootAttributeByPCIBusID, re-implemented by its rule in k8s_rule.py,
# not by railbind's code) for every GPU and NIC of railbind topo --json:
#  - live, on hwloc's recorded sysfs trees (--root), and on the snapshot
#    railbind takes of each (the model's answer from a file);
#  - from files: every fixture and corpus hwloc XML, against a sysfs tree
#    laid out from the same XML as Linux lays it out;
# and on every file: a GPU and a NIC whose path class is PIX, PXB or PHB
# (one root complex) share it, NODE and SYS (two) do not.
# Needs RAILBIND, FIXTURES (dir), TOPOLOGIES (../shared/topologies, skipped
# when absent); jq, python3, tar.
set -u
: "${RAILBIND:?}" "${FIXTURES:?}" "${TOPOLOGIES:=}"
here=$(cd "$(dirname "$0")" && pwd)
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | head -n 8 | sed 's/^/#   /'; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# same NAME JSON SYSROOT: each device's pcieRoot is the rule's on SYSROOT.
same() {
	local pcis got want
	pcis=$(jq -r '(.gpus[], .nics[]) | .pci // empty' "$2")
	[ -n "$pcis" ] || return 0
	got=$(jq -r '(.gpus[], .nics[]) | select(.pci) | .dra["resource.kubernetes.io/pcieRoot"] // "-"' "$2")
	# shellcheck disable=SC2086
	want=$(python3 "$here/k8s_rule.py" root "$3" $pcis)
	if [ "$got" = "$want" ]; then ok; else
		bad "$1: pcieRoot is Kubernetes' answer" "$(paste <(echo "$pcis") <(echo "$got") <(echo "$want"))"
	fi
}
# shared NAME JSON: one root complex, one pcieRoot; two, two.
shared() {
	local out
	out=$(jq -r '. as $d | range(.gpus | length) as $g | range(.nics | length) as $n |
		($d.paths[$g][$n]) as $p |
		($d.gpus[$g].dra["resource.kubernetes.io/pcieRoot"]) as $a |
		($d.nics[$n].dra["resource.kubernetes.io/pcieRoot"]) as $b |
		select($a != null and $b != null) |
		select((($p == "PIX" or $p == "PXB" or $p == "PHB") and $a != $b) or
		       (($p == "NODE" or $p == "SYS") and $a == $b)) |
		"GPU\($g) NIC\($n) \($p): \($a) \($b)"' "$2")
	if [ -z "$out" ]; then ok; else bad "$1: GPUs and NICs share pcieRoot exactly where they share a root complex" "$out"; fi
}

# 1. Live, on recorded sysfs trees, and on their snapshots.
n=0
for tb in "$TOPOLOGIES"/hwloc-tests/linux/*.tar.bz2; do
	[ -f "$tb" ] || continue
	name=$(basename "$tb" .tar.bz2)
	mkdir -p "$tmp/$name" && tar -xjf "$tb" -C "$tmp/$name" 2>/dev/null || continue
	root=$(find "$tmp/$name" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	[ -d "$root/sys/bus/pci/devices" ] || continue
	"$RAILBIND" topo --json --root "$root" >"$tmp/$name.json" 2>/dev/null || { bad "$name: topo --root"; continue; }
	same "$name (live)" "$tmp/$name.json" "$root"
	"$RAILBIND" snapshot --root "$root" -o "$tmp/$name.xml" 2>/dev/null &&
		"$RAILBIND" topo --json -i "$tmp/$name.xml" >"$tmp/$name.snap.json" 2>/dev/null &&
		same "$name (its snapshot)" "$tmp/$name.snap.json" "$root" || bad "$name: snapshot and topo -i"
	n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "dra: recorded sysfs trees SKIPPED: $TOPOLOGIES/hwloc-tests/linux absent"; }

# 2. From files: the fixtures and the corpus's hwloc XML.
files=$(ls "$FIXTURES"/*.xml 2>/dev/null)
if [ -d "$TOPOLOGIES" ]; then
	files="$files $(find "$TOPOLOGIES" -name '*.xml' -size -4M 2>/dev/null | sort)"
else
	echo "dra: corpus SKIPPED: $TOPOLOGIES absent"
fi
nf=0
for f in $files; do
	grep -q '<topology' "$f" 2>/dev/null || continue
	"$RAILBIND" topo --json -i "$f" >"$tmp/f.json" 2>/dev/null || continue
	[ "$(jq '(.gpus | length) + (.nics | length)' "$tmp/f.json")" -gt 0 ] || continue
	rm -rf "$tmp/tree" && mkdir "$tmp/tree"
	python3 "$here/k8s_rule.py" tree "$f" "$tmp/tree" 2>/dev/null
	case $? in 0) ;; 2) continue ;; *) bad "$f: k8s_rule.py tree"; continue ;; esac
	same "$f" "$tmp/f.json" "$tmp/tree"
	shared "$f" "$tmp/f.json"
	nf=$((nf + 1))
done
# --dra: the same values in a ResourceSlice's typed form.
"$RAILBIND" topo --dra -i "$FIXTURES/p5.xml" >"$tmp/dra.json" && "$RAILBIND" topo --json -i "$FIXTURES/p5.xml" >"$tmp/p5.json"
if [ "$(jq -c '[.devices[] | select(.name | startswith("gpu")) | .attributes | map_values(.string // .int)]' "$tmp/dra.json")" = \
     "$(jq -c '[.gpus[].dra]' "$tmp/p5.json")" ] && [ "$(jq -r .schema "$tmp/dra.json")" = railbind.dra/1 ]; then ok
else bad "topo --dra: the --json attributes, typed"; fi
echo "dra: $n recorded sysfs trees, $nf files"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
