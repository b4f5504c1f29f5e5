#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/gpu/compare.sh: on a machine with NVIDIA GPUs, build railbind and
# compare what it says with what NVIDIA's own tools say, cell by cell:
#   - every cell of `nvidia-smi topo -m` (GPU x GPU with NV#, GPU x NIC,
#     NIC x NIC) and each GPU's NUMA and CPU affinity, against
#     `railbind topo --json` (gpu_paths, paths, nic_paths, numa, cpus);
#   - NVML's answers as nvidia-smi prints them: each GPU's UUID
#     (--query-gpu), device minor and MIG mode (-q), active NVLinks
#     (nvlink -s), against railbind's uuid, minor, mig.mode, nvlinks.
# Exit: 0 all equal, 1 differences (each one printed), 2 could not run (no
# NVIDIA GPU or nvidia-smi, build failed, over the time limit).
#
#   tests/gpu/compare.sh [OUTDIR]
# OUTDIR (default: build/gpu-compare) keeps every tool's raw output and the
# report, for RELIABILITY.md. Environment: RAILBIND (a built railbind: skip the
# build), NVIDIA_SMI (default nvidia-smi), LIMIT (seconds, default 300), JOBS.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
OUT=${1:-$TOP/build/gpu-compare}
SMI=${NVIDIA_SMI:-nvidia-smi}
LIMIT=${LIMIT:-300}
start=$(date +%s)
mkdir -p "$OUT" || exit 2
: >"$OUT/report.txt"
say() { echo "$*" | tee -a "$OUT/report.txt"; }
elapsed() { echo $(($(date +%s) - start)); }

for t in jq awk; do
	command -v "$t" >/dev/null 2>&1 || { say "compare: $t not found"; exit 2; }
done
if ! $SMI -L >"$OUT/smi-L.txt" 2>&1 || ! grep -q '^GPU [0-9]' "$OUT/smi-L.txt"; then
	say "compare: no NVIDIA GPU here ($SMI -L: $(head -1 "$OUT/smi-L.txt"))"
	exit 2
fi
if [ -z "${RAILBIND:-}" ]; then
	say "compare: building railbind ($(elapsed) s)"
	if ! make -C "$TOP" -j"${JOBS:-$(nproc)}" all >"$OUT/build.log" 2>&1; then
		say "compare: the build failed: $(tail -5 "$OUT/build.log")"
		exit 2
	fi
	RAILBIND=$TOP/build/railbind
fi
say "compare: railbind $RAILBIND, $(head -1 "$OUT/smi-L.txt" | cut -c1-60)..., $(grep -c '^GPU' "$OUT/smi-L.txt") GPU(s)"

# What each side says, raw.
$SMI topo -m >"$OUT/smi-topo.txt" 2>&1 || { say "compare: $SMI topo -m failed"; exit 2; }
$SMI --query-gpu=pci.bus_id,uuid --format=csv,noheader >"$OUT/smi-query.txt" 2>&1 ||
	{ say "compare: $SMI --query-gpu failed"; exit 2; }
$SMI -q >"$OUT/smi-q.txt" 2>&1 || { say "compare: $SMI -q failed"; exit 2; }
$SMI nvlink -s >"$OUT/smi-nvlink.txt" 2>&1 || : >"$OUT/smi-nvlink.txt"
"$RAILBIND" topo --json >"$OUT/railbind-topo.json" 2>"$OUT/railbind-topo.err" ||
	{ say "compare: railbind topo failed: $(cat "$OUT/railbind-topo.err")"; exit 2; }
"$RAILBIND" topo >"$OUT/railbind-topo.txt" 2>/dev/null

# The matrices, cell by cell (matrix.awk's form on both sides).
awk -v tool=smi -f "$HERE/matrix.awk" "$OUT/smi-topo.txt" >"$OUT/smi.cells"
jq -r '
	[.gpus | keys[] | "GPU\(.)"] as $g
	| [.nics[] | (.name // .pci)] as $n
	| (.gpu_paths | to_entries[] | .key as $r | .value | to_entries[] |
	   "cell \($g[$r]) \($g[.key]) \(.value)"),
	  (.paths | to_entries[] | .key as $r | .value | to_entries[] |
	   "cell \($g[$r]) \($n[.key]) \(.value)\ncell \($n[.key]) \($g[$r]) \(.value)"),
	  (.nic_paths | to_entries[] | .key as $r | .value | to_entries[] |
	   "cell \($n[$r]) \($n[.key]) \(.value)"),
	  (.gpus[] | "numa GPU\(.index) \(.numa // "N/A")", "cpus GPU\(.index) \(.cpus // "N/A")")
' "$OUT/railbind-topo.json" >"$OUT/railbind.cells" || { say "compare: railbind's JSON unreadable"; exit 2; }
awk -v name="topo -m" -v cpus=1 -f "$HERE/cells.awk" "$OUT/smi.cells" "$OUT/railbind.cells" |
	tee -a "$OUT/report.txt"
status=0
[ "$(tail -1 "$OUT/report.txt" | sed -n 's/.* \([0-9]*\) difference(s)$/\1/p')" = 0 ] || status=1

# NVML's answers as nvidia-smi prints them, per GPU by PCI address.
canon() { tr 'A-F' 'a-f' | sed 's/^0000\(....:\)/\1/'; }
awk -F', *' '{ print $1, $2 }' "$OUT/smi-query.txt" | canon | sort >"$OUT/smi.uuid"
awk '/^GPU [0-9A-Fa-f]+:/ { gpu = $2 }
     /Minor Number/ { print gpu, $NF }' "$OUT/smi-q.txt" | canon | sort >"$OUT/smi.minor"
awk '/^GPU [0-9A-Fa-f]+:/ { gpu = $2 }
     /^ *MIG Mode/ { mig = 1; next }
     mig && /Current/ { v = tolower($NF); print gpu, (v == "n/a" ? "unsupported" : v); mig = 0 }' \
	"$OUT/smi-q.txt" | canon | sort >"$OUT/smi.mig"
# nvlink -s names GPUs by index and UUID: map through the UUIDs.
awk '/^GPU [0-9]+:/ { u = $0; sub(/.*UUID: */, "", u); sub(/\).*/, "", u); n[u] = 0; order[++k] = u }
     /Link [0-9]+: [0-9.]+ GB\/s/ { n[u]++ }
     END { for (i = 1; i <= k; i++) print order[i], n[order[i]] }' "$OUT/smi-nvlink.txt" |
	sort >"$OUT/smi.nvlinks.byuuid"
jq -r '.gpus[] | "\(.pci) \(.uuid // "unknown")"' "$OUT/railbind-topo.json" | sort >"$OUT/railbind.uuid"
jq -r '.gpus[] | "\(.pci) \(.minor // "unknown")"' "$OUT/railbind-topo.json" | sort >"$OUT/railbind.minor"
jq -r '.gpus[] | "\(.pci) \(.mig.mode // "unknown")"' "$OUT/railbind-topo.json" | sort >"$OUT/railbind.mig"
jq -r '.gpus[] | "\(.uuid // .pci) \(if .nvlinks then ([.nvlinks[].links] | add // 0) else "unknown" end)"' \
	"$OUT/railbind-topo.json" | sort >"$OUT/railbind.nvlinks.byuuid"
for what in uuid minor mig nvlinks.byuuid; do
	if [ ! -s "$OUT/smi.$what" ]; then
		say "nvml $what: nvidia-smi printed none; not compared"
		continue
	fi
	n=$(wc -l <"$OUT/smi.$what")
	d=$(join -a1 -a2 -e MISSING -o 0,1.2,2.2 "$OUT/smi.$what" "$OUT/railbind.$what" | awk '$2 != $3')
	if [ -z "$d" ]; then
		say "nvml $what: $n of $n GPUs equal"
	else
		say "nvml $what: differences (GPU nvidia-smi railbind):"
		echo "$d" | sed 's/^/  /' | tee -a "$OUT/report.txt"
		status=1
	fi
done
t=$(elapsed)
if [ "$t" -gt "$LIMIT" ]; then
	say "compare: took $t s, over the $LIMIT s limit"
	exit 2
fi
say "compare: $([ "$status" -eq 0 ] && echo "all equal" || echo "DIFFERENCES"), $t s; raw outputs in $OUT"
exit "$status"
