#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check-gpu-compare: tests/gpu/compare.sh, which needs NVIDIA GPUs, run here
# against stand-ins: a DGX A100 built by rbgen (hwloc reads it through
# HWLOC_XMLFILE), the stand-in libnvidia-ml.so.1 with rbgen's NVML answers, and
# a stand-in nvidia-smi printing the published DGX A100 `topo -m` capture and,
# from the same answers, UUIDs, minors, MIG modes and NVLinks. It must find
# everything equal; then find each planted difference and exit 1; and exit 2
# where there is no GPU.
# Needs RAILBIND, RBGEN, STUBS, TOPOLOGIES.
set -u
: "${RAILBIND:?}" "${RBGEN:?}" "${STUBS:?}" "${TOPOLOGIES:?}"
HERE=$(cd "$(dirname "$0")" && pwd)
CAPTURE=$TOPOLOGIES/smi/dgx-a100_topo-m_1mcprddgx05.txt
if [ ! -f "$CAPTURE" ]; then
	echo "check-gpu-compare: skipped: $CAPTURE is absent (read from ../shared/topologies, never copied)"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/railbind-compare.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

"$RBGEN" -o "$tmp/dgx.xml" --nvml "$tmp/dgx.nvml" "$HERE/../fixtures/dgx-a100.topo" || exit 1
# compare SMI-ANSWERS CAPTURE OUTDIR: compare.sh on the stand-in node
compare() {
	HWLOC_XMLFILE=$tmp/dgx.xml LD_LIBRARY_PATH=$STUBS/nvml \
	RB_FAKE_NVML=$tmp/dgx.nvml RAILBIND_ROCM_SMI_LIBRARY=none RAILBIND=$RAILBIND \
	NVIDIA_SMI=$HERE/fake-nvidia-smi FAKE_SMI_NVML=$1 FAKE_SMI_TOPO=$2 \
		sh "$HERE/compare.sh" "$3" >"$tmp/log" 2>&1
	rc=$?
}

compare "$tmp/dgx.nvml" "$CAPTURE" "$tmp/same"
r=$tmp/same/report.txt
if [ "$rc" -eq 0 ] && grep -q '^topo -m: 324 of 324 cells equal, NUMA affinity 8 equal, CPU affinity 8 equal, 0 difference' "$r" &&
    grep -q '^nvml uuid: 8 of 8 GPUs equal' "$r" && grep -q '^nvml minor: 8 of 8' "$r" &&
    grep -q '^nvml mig: 8 of 8' "$r" && grep -q '^nvml nvlinks.byuuid: 8 of 8' "$r" &&
    grep -q '^compare: all equal' "$r"; then ok
else bad "the stand-in DGX A100: rc=$rc: $(cat "$tmp/log")"; fi

# nvidia-smi says otherwise about one GPU's UUID and another's minor: both found.
sed -e '0,/uuid=GPU-[0-9a-f]*-/s//uuid=GPU-00000000-/' \
    -e 's/^\(gpu 0000:0f:00.0 .*\)minor=1/\1minor=9/' "$tmp/dgx.nvml" >"$tmp/other.nvml"
compare "$tmp/other.nvml" "$CAPTURE" "$tmp/other"
r=$tmp/other/report.txt
if [ "$rc" -eq 1 ] && grep -q '^  0000:07:00.0 GPU-00000000-' "$r" && grep -q '^  0000:0f:00.0 9 1$' "$r" &&
    grep -q '^compare: DIFFERENCES' "$r"; then ok
else bad "planted NVML differences not found: rc=$rc: $(cat "$tmp/log")"; fi

# nvidia-smi's matrix differs in one cell (GPU0 x NIC0): found, and only it.
awk '!done && $1 == "GPU0" && $10 == "PXB" { $10 = "PIX"; done = 1 } { print }' "$CAPTURE" >"$tmp/capture"
compare "$tmp/dgx.nvml" "$tmp/capture" "$tmp/cell"
r=$tmp/cell/report.txt
if [ "$rc" -eq 1 ] && grep -q '^topo -m: GPU0 x mlx5_0: nvidia-smi PIX, railbind PXB$' "$r" &&
    grep -q '323 of 324 cells equal.*1 difference' "$r"; then ok
else bad "a planted cell difference not found: rc=$rc: $(cat "$tmp/log")"; fi

# No GPU at all.
NVIDIA_SMI=false RAILBIND=$RAILBIND sh "$HERE/compare.sh" "$tmp/none" >"$tmp/log" 2>&1
rc=$?
[ "$rc" -eq 2 ] && grep -q 'no NVIDIA GPU' "$tmp/log" && ok || bad "no GPU: rc=$rc"

echo "check-gpu-compare: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
