#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# mkfleet.sh BASE.topo N OUTDIR: N node snapshots OUTDIR/node0001.xml ..., copies
# of BASE (an rbgen description, tests/gen) with faults planted in a few, and
# OUTDIR.planted: "NAME FAULT" for each faulty node. Needs RBGEN (the rbgen
# binary). rbgen runs once per variant, then one awk process writes all N
# files (a thousand in well under a second), each with its own HostName;
# every tenth file has none, so its node is named after the file.
#
# Faults, each made from BASE by editing its lines:
#   swap   the first NIC and the first NIC of the second half exchange PCI
#          positions (their name= and netdev=), so the first GPU's rail,
#          PIX before, is now across the machine
#   x8     the first GPU trained to x8 of x16
#   acs    ACS SV|RR|CR|UF (0x001d) on the first switch's ports
#   nogpu  the last GPU missing
# Where (N >= 40): swap node 3; x8 nodes N/4, N/4+1, N/2+7; acs N/3, 2N/3;
# nogpu node N.
set -eu
: "${RBGEN:?set RBGEN to the rbgen binary}"
if [ $# -ne 3 ] || [ "$2" -lt 40 ]; then
	echo "usage: RBGEN=rbgen $0 BASE.topo N OUTDIR (N >= 40)" >&2
	exit 1
fi
base=$1 n=$2 out=$3
tmpl=$out/.variants
rm -rf "$out" "$out.planted"
mkdir -p "$tmpl"

nics=$(awk '$1 == "nic"' "$base" | wc -l)
awk -v half=$((nics / 2 + 1)) '
	function rest(l) { sub(/^[ \t]*nic [^ ]+ /, "", l); return l }
	NR == FNR { if ($1 == "nic" && ++k == 1) a = $0; if ($1 == "nic" && k == half) b = $0; next }
	$1 == "nic" && ++m == 1 { sub(/nic [^ ]+ .*/, "nic " $2 " " rest(b)); print; next }
	$1 == "nic" && m == half { sub(/nic [^ ]+ .*/, "nic " $2 " " rest(a)); print; next }
	{ print }' "$base" "$base" >"$tmpl/swap.topo"
awk '$1 == "gpu" && !done { $0 = $0 " link=16.0/8 linkcap=16.0/16"; done = 1 } { print }' \
	"$base" >"$tmpl/x8.topo"
awk '$1 == "switch" && !done { sub(/ acs=[^ ]*/, ""); $0 = $0 " acs=0x001d"; done = 1 } { print }' \
	"$base" >"$tmpl/acs.topo"
last=$(awk '$1 == "gpu" { k = NR } END { print k }' "$base")
awk -v last="$last" 'NR != last' "$base" >"$tmpl/nogpu.topo"
cp "$base" "$tmpl/ok.topo"
for v in ok swap x8 acs nogpu; do
	"$RBGEN" -o "$tmpl/$v.xml" "$tmpl/$v.topo"
done

awk -v n="$n" -v out="$out" -v tmpl="$tmpl" '
	function load(v,   line, k) {
		k = 0
		while ((getline line < (tmpl "/" v ".xml")) > 0)
			text[v, ++k] = line
		close(tmpl "/" v ".xml")
		len[v] = k
	}
	BEGIN {
		load("ok"); load("swap"); load("x8"); load("acs"); load("nogpu")
		plant[3] = "swap"
		plant[int(n / 4)] = "x8"; plant[int(n / 4) + 1] = "x8"; plant[int(n / 2) + 7] = "x8"
		plant[int(n / 3)] = "acs"; plant[int(2 * n / 3)] = "acs"
		plant[n] = "nogpu"
		for (i = 1; i <= n; i++) {
			v = (i in plant) ? plant[i] : "ok"
			name = sprintf("node%04d", i)
			f = out "/" name ".xml"
			for (k = 1; k <= len[v]; k++) {
				line = text[v, k]
				if (line ~ /<info name="HostName"/) {
					if (i % 10 == 0)
						continue
					sub(/value="[^"]*"/, "value=\"" name "\"", line)
				}
				print line > f
			}
			close(f)
			if (v != "ok")
				print name, v > (out ".planted")
		}
	}'
