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
#   norail the last NIC missing
#   slow   the first NIC's port at 200 Gb/s, not 400
#   order  the first NIC moved to the second switch (the next free bus there):
#          in PCI order, NCCL's, rail 1 is now the second switch's
#   rename every RDMA device renamed (mlx5_N is mlx5_1N): the rails as NCCL
#          pairs them are the same
# Where (N >= 40): swap node 3; x8 nodes N/4, N/4+1, N/2+7; acs N/3, 2N/3;
# norail N/2+1, slow N/2+3, order N/2+5, rename 3N/4; nogpu node N.
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
lastnic=$(awk '$1 == "nic" { k = NR } END { print k }' "$base")
awk -v last="$lastnic" 'NR != last' "$base" >"$tmpl/norail.topo"
awk '$1 == "nic" && !done { sub(/ rate=[^ ]*/, ""); $0 = $0 " rate=200"; done = 1 } { print }' \
	"$base" >"$tmpl/slow.topo"
# The first NIC moved from the first switch to the second, on the bus after
# that switch's last NIC: its rails are in another order (NCCL's index 1 is
# now the second switch's).
awk 'function hex(s,   i, v) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1; return v }
	NR == FNR { if ($1 == "switch") sw++; if ($1 == "nic" && !a) a = $0; if ($1 == "nic" && sw == 2) { b = FNR; bus = $2 } next }
	$0 == a { next }
	{ print }
	FNR == b { split(bus, f, ":"); line = a; sub(/nic [^ ]+/, sprintf("nic %02x:00.0", hex(f[1]) + 1), line)
		match($0, /^[ \t]*/); sub(/^[ \t]*/, substr($0, 1, RLENGTH), line); print line }' "$base" "$base" >"$tmpl/order.topo"
sed 's/ name=mlx5_/ name=mlx5_1/' "$base" >"$tmpl/rename.topo"
cp "$base" "$tmpl/ok.topo"
for v in ok swap x8 acs nogpu norail slow order rename; do
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
		load("norail"); load("slow"); load("order"); load("rename")
		plant[3] = "swap"
		plant[int(n / 4)] = "x8"; plant[int(n / 4) + 1] = "x8"; plant[int(n / 2) + 7] = "x8"
		plant[int(n / 3)] = "acs"; plant[int(2 * n / 3)] = "acs"
		plant[int(n / 2) + 1] = "norail"; plant[int(n / 2) + 3] = "slow"
		plant[int(n / 2) + 5] = "order"; plant[int(3 * n / 4)] = "rename"
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
