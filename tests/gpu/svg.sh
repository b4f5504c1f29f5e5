#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check-gpu-svg: railbind topo --svg on every fixture, a DGX A100 with its
# NVSwitches, NVLink pairs, 8 GPUs x 32 NICs and an audit that fails: the file
# is well-formed XML (xmllint), has a box per GPU and NIC, each rank's GPU and
# primary NIC in one colour (and the ranks' colours differ), failed pairs in
# red and only those, NVLink drawn where NVML told of it, hostile names
# escaped; and it renders (rsvg-convert) to $OUT/*.png, kept for people to look at.
# Needs RAILBIND, RBGEN, STUBS, FIXTURES, OUT, jq, xmllint, rsvg-convert.
set -u
: "${RAILBIND:?}" "${RBGEN:?}" "${STUBS:?}" "${FIXTURES:?}" "${OUT:?}"
HERE=$(cd "$(dirname "$0")" && pwd)
for t in jq xmllint rsvg-convert; do
	command -v "$t" >/dev/null 2>&1 || { echo "check-gpu-svg: $t not found (./scripts/setup)"; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/railbind-svg.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$OUT" || exit 1
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# xp FILE XPATH: the value of an XPath 1 expression over the SVG (its namespace ignored)
xp() { xmllint --xpath "$2" "$1" 2>/dev/null; }
el() { echo "//*[local-name()='$1']"; }	# an element of any namespace
cls() { echo "[contains(concat(' ', @class, ' '), ' $1 ')]"; }

# draw NAME RAILBIND-ARGS...: $OUT/NAME.svg and .png, the same run's topo and plan JSON
draw() {
	name=$1
	shift
	if ! "$RAILBIND" topo "$@" --svg "$OUT/$name.svg" 2>"$tmp/err"; then
		bad "$name: topo --svg: $(cat "$tmp/err")"
		return 1
	fi
	"$RAILBIND" topo "$@" --json >"$tmp/$name.topo.json" 2>/dev/null
	"$RAILBIND" plan "$@" --json >"$tmp/$name.plan.json" 2>/dev/null ||
		echo '{"ranks":[]}' >"$tmp/$name.plan.json"
	if ! xmllint --noout "$OUT/$name.svg" 2>"$tmp/err"; then
		bad "$name: not well-formed: $(head -3 "$tmp/err")"
		return 1
	fi
	if ! rsvg-convert -o "$OUT/$name.png" "$OUT/$name.svg" 2>"$tmp/err" || [ ! -s "$OUT/$name.png" ]; then
		bad "$name: rsvg-convert: $(cat "$tmp/err")"
		return 1
	fi
	f=$OUT/$name.svg
	ng=$(jq '.gpus | length' "$tmp/$name.topo.json")
	nn=$(jq '.nics | length' "$tmp/$name.topo.json")
	[ "$(xp "$f" "count($(el rect)$(cls gpu))")" = "$ng" ] && ok || bad "$name: not $ng GPU boxes"
	[ "$(xp "$f" "count($(el rect)$(cls nic))")" = "$nn" ] && ok || bad "$name: not $nn NIC boxes"
	return 0
}

# pairs_coloured NAME: each rank's GPU box is filled in its primary NIC's colour,
# and no two ranks on different GPUs share a colour (up to 16 ranks)
pairs_coloured() {
	f=$OUT/$1.svg
	jq -r '.ranks[] | "\(.local_rank) \(.gpu.pci) \(.nics[0].pci // "-")"' "$tmp/$1.plan.json" |
	while read -r k gpu nic; do
		gs=$(xp "$f" "string($(el rect)$(cls gpu)[@data-pci='$gpu']/@fill)")
		[ "$nic" = "-" ] && continue
		ns=$(xp "$f" "string($(el rect)$(cls nic)[@data-pci='$nic']/@fill)")
		if [ "$gs" != "$ns" ] &&
		    [ "$(xp "$f" "string($(el rect)$(cls nic)[@data-pci='$nic']/@data-rank)")" = "$k" ]; then
			echo "rank $k: GPU $gpu $gs, NIC $nic $ns"
		fi
	done >"$tmp/colours"
	[ ! -s "$tmp/colours" ] && ok || bad "$1: pair colours differ: $(cat "$tmp/colours")"
	n=$(xp "$f" "count($(el rect)$(cls gpu)[@data-rank != '-1'])")
	d=$(xp "$f" "$(el rect)$(cls gpu)[@data-rank != '-1']/@fill" | tr ' ' '\n' | grep -c . )
	u=$(xp "$f" "$(el rect)$(cls gpu)[@data-rank != '-1']/@fill" | tr ' ' '\n' | grep . | sort -u | wc -l)
	if [ "$n" -le 16 ] && [ "$d" -ne "$u" ]; then bad "$1: two ranks share a colour"; else ok; fi
}

# Every fixture draws, parses, renders, with a box per GPU and NIC.
for x in "$FIXTURES"/*.xml; do
	name=$(basename "$x" .xml)
	draw "$name" --input "$x" && pairs_coloured "$name"
done

# 8 GPUs x 32 NICs: four NICs under each GPU's switch (AWS p5-like), still one column each.
"$RBGEN" --gpus 8 --nics-per-gpu 4 -o "$tmp/8x32.xml"
if draw 8x32 --input "$tmp/8x32.xml"; then
	pairs_coloured 8x32
	w=$(xp "$OUT/8x32.svg" "string(/*/@width)")
	[ "${w%.*}" -le 2400 ] && ok || bad "8x32: $w pixels wide, not readable on one screen"
	[ "$(xp "$OUT/8x32.svg" "count($(el text)[.='+r0'])")" = 3 ] && ok || bad "8x32: rank 0's further rails"
fi

# An audit that fails: red boxes and lines for those pairs, and only those.
if draw audit-cross-red --input "$FIXTURES/audit-cross.xml"; then
	f=$OUT/audit-cross-red.svg
	failed=$("$RAILBIND" audit --json --input "$FIXTURES/audit-cross.xml" |
		jq -r '[.checks[] | select(.severity == "fail" and .id == "gpu-nic-path") | .devices[0]] | sort | join(" ")')
	drawn=$(xp "$f" "$(el rect)$(cls gpu)$(cls failed)/@data-pci" | tr ' ' '\n' | sed -n 's/^data-pci="\(.*\)"$/\1/p' | sort | tr '\n' ' ' | sed 's/ $//')
	[ -n "$failed" ] && [ "$drawn" = "$failed" ] && ok || bad "audit-cross: red GPUs '$drawn', audit fails '$failed'"
	[ "$(xp "$f" "count($(el path)$(cls failed-pair))")" = "$(echo "$failed" | wc -w)" ] && ok ||
		bad "audit-cross: one red line per failed pair"
	[ "$(xp "$f" "count($(el rect)$(cls failed)[@stroke!='#d62728'])")" = 0 ] && ok || bad "audit-cross: failed not red"
fi
if draw audit-ok-clean --input "$FIXTURES/audit-ok.xml"; then
	[ "$(xp "$OUT/audit-ok-clean.svg" "count(//*[contains(@class, 'failed')])")" = 0 ] && ok ||
		bad "audit-ok: something drawn failed"
fi

# NVLink where NVML told of it: a DGX A100's NVSwitch fabric, a machine's NVLink pairs.
for m in dgx-a100 pairs; do
	desc=$HERE/$m.topo
	[ -f "$desc" ] || desc=$HERE/../fixtures/$m.topo
	"$RBGEN" -o "$tmp/$m.xml" --nvml "$tmp/$m.nvml" "$desc" || { bad "rbgen $m"; continue; }
	HWLOC_XMLFILE=$tmp/$m.xml LD_LIBRARY_PATH=$STUBS/nvml RB_FAKE_NVML=$tmp/$m.nvml \
		"$RAILBIND" snapshot -o "$tmp/$m-snap.xml" 2>/dev/null
	draw "$m-nvlink" --input "$tmp/$m-snap.xml" || continue
	f=$OUT/$m-nvlink.svg
	case $m in
	dgx-a100)
		[ "$(xp "$f" "count($(el rect)$(cls nvswitch))")" = 1 ] &&
		[ "$(xp "$f" "count($(el line)$(cls nvswitch-link))")" = 8 ] &&
		[ "$(xp "$f" "count($(el text)[.='NV12'])")" = 8 ] && ok || bad "dgx-a100: NVSwitch fabric not drawn"
		[ "$(xp "$f" "count($(el text)$(cls numa))")" = 5 ] && ok || bad "dgx-a100: not 5 NUMA boxes"
		[ "$(xp "$f" "count($(el text)$(cls socket))")" = 2 ] && ok || bad "dgx-a100: not 2 sockets" ;;
	pairs)
		[ "$(xp "$f" "count($(el path)$(cls gpulink))")" = 2 ] &&
		[ "$(xp "$f" "count($(el text)[.='NV4'])")" = 2 ] && ok || bad "pairs: NVLink pairs not drawn"
		[ "$(xp "$f" "count($(el rect)$(cls nvswitch))")" = 0 ] && ok || bad "pairs: an NVSwitch drawn" ;;
	esac
done

# Names from a hostile file are text, not markup.
sed 's/name="mlx5_0"/name="mlx\&lt;5\&amp;0\&quot;"/' "$FIXTURES/small.xml" >"$tmp/hostile.xml"
if draw hostile --input "$tmp/hostile.xml"; then
	[ "$(xp "$OUT/hostile.svg" "count($(el text)[starts-with(., 'mlx<5&0\"')])")" = 1 ] && ok ||
		bad "hostile: the name is not drawn as it is"
fi

# Errors: an unwritable place, --svg with --json.
"$RAILBIND" topo --input "$FIXTURES/small.xml" --svg "$tmp/no/such/dir/x.svg" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q 'no/such/dir' "$tmp/err" && [ ! -s "$tmp/out" ] && ok || bad "unwritable --svg: rc=$rc"
"$RAILBIND" topo --input "$FIXTURES/small.xml" --svg "$tmp/x.svg" --json >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] && [ ! -s "$tmp/out" ] && [ ! -e "$tmp/x.svg" ] && ok || bad "--svg --json: rc=$rc"

echo "check-gpu-svg: $pass passed, $fail failed (pictures in $OUT)"
[ "$fail" -eq 0 ]
