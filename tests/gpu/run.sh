#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check-gpu: GPUs as NVML and ROCm SMI see them, without GPUs. railbind runs
# on a "live" node whose hardware hwloc reads from an rbgen file
# (HWLOC_XMLFILE) and whose libnvidia-ml.so.1 / librocm_smi64.so.7 are the
# stand-ins of tests/gpu/*_stub.c (LD_LIBRARY_PATH), answering from files:
# NVLink through NVSwitches (DGX A100), in pairs, none; MIG; C2C; UUID and
# MIG visibility in plans; a library that fails to start, one that lacks the
# newer calls, none at all; the driver's own path classes cross-checked;
# snapshots keeping all of it; malformed attributes refused.
# Needs RAILBIND, RBGEN, STUBS and jq.
set -u
: "${RAILBIND:?}" "${RBGEN:?}" "${STUBS:?}"
HERE=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/railbind-gpu.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
check() { # FILE JQ-FILTER WHAT: the filter must yield true
	if jq -e "$2" "$1" >/dev/null 2>&1; then ok; else bad "$3"; fi
}

# live MACHINE ANSWERS LIBDIR railbind ARGS...: railbind on the machine's "live"
# node with that NVML stand-in; output in $tmp/out, stderr in $tmp/err.
live() {
	m=$1 answers=$2 lib=$3
	shift 3
	HWLOC_XMLFILE=$tmp/$m.xml LD_LIBRARY_PATH=$STUBS/$lib \
		RB_FAKE_NVML=$answers RB_FAKE_RSMI=${RSMI_ANSWERS:-/nonexistent} \
		"$RAILBIND" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

for m in pairs amd; do
	"$RBGEN" -o "$tmp/$m.xml" --nvml "$tmp/$m.nvml" "$HERE/$m.topo" || { bad "rbgen $m"; exit 1; }
done
"$RBGEN" -o "$tmp/dgx.xml" --nvml "$tmp/dgx.nvml" "$HERE/../fixtures/dgx-a100.topo" ||
	{ bad "rbgen dgx-a100"; exit 1; }

# --- DGX-like: every GPU's 12 NVLinks go into six NVSwitches ---
live dgx "$tmp/dgx.nvml" nvml topo --json
cp "$tmp/out" "$tmp/dgx.json"
J=$tmp/dgx.json
check "$J" '.gpu_libraries.nvml == "ok 550.54.15"' "dgx: NVML state"
check "$J" '[.gpu_paths[][]] | map(select(. != "X")) | all(. == "NV12") and length == 56' \
	"dgx: NV12 between every two GPUs"
check "$J" '[range(8) as $i | .gpu_paths[$i][$i]] | all(. == "X")' "dgx: X on the diagonal"
check "$J" 'all(.gpus[]; ([.nvlinks[] | select(.type == "switch") | .links] | add) == 12)' \
	"dgx: 12 switch links per GPU"
check "$J" 'all(.gpus[]; [.nvlinks[].remote] | unique | length == 6)' "dgx: six NVSwitches"
check "$J" 'all(.gpus[]; .uuid | test("^GPU-[0-9a-f]{8}-[0-9a-f]{4}-"))' "dgx: UUIDs"
check "$J" '[.gpus[].minor] == [0,1,2,3,4,5,6,7]' "dgx: minors"
check "$J" '.warnings | length == 0' "dgx: no warning (NVML answered, paths agree)"
check "$J" '.paths[0][0] == "PXB" and .nic_paths[8][9] == "PIX" and .nic_paths[0][9] == "SYS"' \
	"dgx: GPU x NIC and NIC x NIC classes"

# --- pairs: NV4 inside each pair, PCIe between them; MIG and C2C ---
live pairs "$tmp/pairs.nvml" nvml topo --json
cp "$tmp/out" "$tmp/pairs.json"
J=$tmp/pairs.json
check "$J" '.gpu_paths == [["X","NV4","SYS","SYS"],["NV4","X","SYS","SYS"],["SYS","SYS","X","NV4"],["SYS","SYS","NV4","X"]]' \
	"pairs: gpu_paths"
check "$J" '.gpus[0].nvlinks == [{"remote":"0000:1c:00.0","type":"gpu","links":4}]' "pairs: GPU0's links"
check "$J" '.gpus[0].mig.mode == "enabled" and (.gpus[0].mig.devices | length) == 2 and
	    .gpus[0].mig.devices[1].gi == 2 and .gpus[1].mig.mode == "disabled" and
	    .gpus[2].mig.mode == "unsupported"' "pairs: MIG modes and instances"
check "$J" '[.gpus[].c2c] == [false,false,true,false]' "pairs: C2C"
check "$J" '.warnings | length == 0' "pairs: no warning"
live pairs "$tmp/pairs.nvml" nvml topo
if [ "$rc" -eq 0 ] && grep -q '^GPU0 *X *NV4 *SYS' "$tmp/out" && grep -q '^NIC1 *SYS *SYS *PIX *PIX *SYS *X' "$tmp/out" &&
    grep -q 'NV# *=' "$tmp/out" && grep -q 'MIG-.*(GPU instance 1, compute instance 0)' "$tmp/out"; then ok
else bad "pairs: topo text (rc=$rc)"; fi

# --- none: a GPU without NVLink answers NOT_SUPPORTED on every link ---
grep -v '^link' "$tmp/pairs.nvml" >"$tmp/none.nvml"
live pairs "$tmp/none.nvml" nvml topo --json
check "$tmp/out" 'all(.gpus[]; .nvlinks == []) and .gpu_paths[0][1] == "PIX" and .gpu_paths[0][2] == "SYS"' \
	"none: no links, PCIe classes"

# --- the driver's classes, cross-checked: one answer made to differ ---
sed 's/^ancestor 0000:1b:00.0 0000:1c:00.0 10/ancestor 0000:1b:00.0 0000:1c:00.0 30/' \
	"$tmp/pairs.nvml" >"$tmp/differ.nvml"
live pairs "$tmp/differ.nvml" nvml topo --json
check "$tmp/out" '[.warnings[] | select(.id == "gpu-path-differs")] | length == 1' "differ: one warning"
check "$tmp/out" '.warnings[0].message | test("GPU0 \\(0000:1b:00.0\\) and GPU1 \\(0000:1c:00.0\\): railbind says PIX, the driver .* says PHB")' \
	"differ: both answers named"

# --- a library that fails to start ---
printf 'init fail 9\n' >"$tmp/fail.nvml"
live pairs "$tmp/fail.nvml" nvml topo --json
check "$tmp/out" '.gpu_libraries.nvml == "failed nvmlInit_v2: Driver Not Loaded"' "fail: state"
check "$tmp/out" '[.warnings[] | select(.id == "gpu-library" and (.message | test("did not answer \\(nvmlInit_v2: Driver Not Loaded\\)")))] | length == 1' \
	"fail: said once"
check "$tmp/out" '.gpu_paths[0][1] == "PIX" and .gpus[0].nvlinks == null and .gpus[0].mig == null' \
	"fail: PCIe classes only, links unknown"
[ "$rc" -eq 0 ] && ok || bad "fail: topo exits $rc"

# --- a library lacking the newer calls (remote type, MIG, C2C) ---
live pairs "$tmp/pairs.nvml" nvml-old topo --json
check "$tmp/out" '.gpu_paths[0][1] == "NV4" and .gpus[0].nvlinks[0].type == "gpu"' \
	"old: NVLink peers from their PCI addresses"
check "$tmp/out" 'all(.gpus[]; .mig == null and .c2c == null)' "old: MIG and C2C unknown"
check "$tmp/out" '[.warnings[] | select(.id == "gpu-library" and (.message | test("could not tell mig,c2c of GPU0, GPU1, GPU2, GPU3")))] | length == 1' \
	"old: what it could not tell, once"
live dgx "$tmp/dgx.nvml" nvml-old topo --json
check "$tmp/out" 'all(.gpus[]; all(.nvlinks[]; .type == "unknown")) and ([.gpu_paths[][]] | all(test("^NV") | not))' \
	"old: links to NVSwitches of unknown type are not GPU links"

# --- no library at all ---
RAILBIND_NVML_LIBRARY=none live pairs "$tmp/pairs.nvml" nvml topo --json
check "$tmp/out" '.gpu_libraries.nvml == "absent" and ([.warnings[] | select(.message | test("is not installed"))] | length == 1)' \
	"absent: said once"
check "$tmp/out" '.gpu_paths[0][1] == "PIX" and .gpus[0].uuid == null' "absent: works as before"
RAILBIND_NVML_LIBRARY=none live pairs "$tmp/pairs.nvml" nvml plan --json
check "$tmp/out" '.ranks | length == 4' "absent: plan as before"

# --- plans by identity: index, PCI address, UUID, UUID prefix: one plan ---
uuid2=$(jq -r '.gpus[2].uuid' "$tmp/pairs.json")
mig0=$(jq -r '.gpus[0].mig.devices[0].uuid' "$tmp/pairs.json")
mig1=$(jq -r '.gpus[0].mig.devices[1].uuid' "$tmp/pairs.json")
# What the live node's plan knows of UUIDs comes from the drivers' files, which
# this machine has not: a snapshot taken with the stand-in carries them.
live pairs "$tmp/pairs.nvml" nvml snapshot -o "$tmp/pairs-snap.xml"
[ "$rc" -eq 0 ] && grep -q 'RailbindNVML" value="ok 550.54.15"' "$tmp/pairs-snap.xml" &&
	grep -q 'name="RailbindNVLink" value="0000:1c:00.0 gpu 4"' "$tmp/pairs-snap.xml" && ok ||
	bad "snapshot: NVML attributes (rc=$rc)"
S=$tmp/pairs-snap.xml
"$RAILBIND" plan --json --input "$S" --visible 2 >"$tmp/by-index.json"
check "$tmp/by-index.json" '.ranks | length == 1 and .[0].gpu.pci == "0000:9b:00.0"' "visible 2"
check "$tmp/by-index.json" ".ranks[0].env.RAILBIND_GPU_UUID == \"$uuid2\" and .ranks[0].gpu.uuid == \"$uuid2\"" \
	"the rank's environment carries the UUID"
for v in 0000:9b:00.0 "$uuid2" "$(echo "$uuid2" | cut -c1-10)" "$(echo "$uuid2" | tr a-f A-F)"; do
	"$RAILBIND" plan --json --input "$S" --visible "$v" >"$tmp/out" 2>"$tmp/err"
	if cmp -s "$tmp/out" "$tmp/by-index.json"; then ok
	else bad "visible $v: not the plan of --visible 2 ($(cat "$tmp/err"))"; fi
done
# On the live node a UUID claim asks NVML.
live pairs "$tmp/pairs.nvml" nvml plan --json --visible "$uuid2"
check "$tmp/out" "(.ranks | length) == 1 and .ranks[0].gpu.pci == \"0000:9b:00.0\" and .ranks[0].env.RAILBIND_GPU_UUID == \"$uuid2\"" \
	"live: visible by UUID"
live pairs "$tmp/pairs.nvml" nvml plan --json --visible GPU-
[ "$rc" -ne 0 ] && grep -q 'GPU-' "$tmp/err" && [ ! -s "$tmp/out" ] && ok || bad "visible GPU- (ambiguous) accepted"
live pairs "$tmp/pairs.nvml" nvml plan --json --visible GPU-00000000-0000-0000-0000-000000000000
[ "$rc" -eq 1 ] && grep -q 'no GPU with UUID' "$tmp/err" && ok || bad "unknown UUID accepted (rc=$rc)"

# --- MIG: a rank per instance named, on the instance's GPU ---
live pairs "$tmp/pairs.nvml" nvml plan --json --isolate-gpu --visible "$mig1"
check "$tmp/out" ".ranks | length == 1 and .[0].gpu.index == 0 and .[0].gpu.mig == \"$mig1\" and
	.[0].env.RAILBIND_MIG_UUID == \"$mig1\" and .[0].env.CUDA_VISIBLE_DEVICES == \"$mig1\"" \
	"MIG UUID: the parent GPU, the instance isolated"
live pairs "$tmp/pairs.nvml" nvml plan --json --visible "$mig1,$mig0,3"
check "$tmp/out" '[.ranks[].gpu.index] == [0,0,3] and (.ranks[0].cpus != .ranks[1].cpus) and .ranks[0].nics[0].name == "mlx5_0"' \
	"two instances of GPU0 and GPU3: three ranks, the instances' CPUs split"
gpu0=$(jq -r '.gpus[0].uuid' "$tmp/pairs.json")
live pairs "$tmp/pairs.nvml" nvml plan --json --visible "MIG-$gpu0/2/0"
check "$tmp/out" ".ranks[0].gpu.mig == \"$mig1\"" "MIG-GPU-UUID/GI/CI names the same instance"

# --- a snapshot keeps what NVML said; plans and runs read it back ---
# Kubernetes' pcieRoot is read from /sys/bus/pci/devices/BDF's link on a live
# node, which this XML-faked one lacks; from a file it is made from the host
# bridge. Everything else must be equal, and the file's pcieRoot that of the
# GPU's host bridge.
RAILBIND_NVML_LIBRARY=none "$RAILBIND" topo --json --input "$tmp/pairs-snap.xml" >"$tmp/snap.json"
noroot='del(.source, .host) | del(.. | objects | ."resource.kubernetes.io/pcieRoot")'
if jq -S "$noroot" "$tmp/snap.json" >"$tmp/a" &&
    jq -S "$noroot" "$tmp/pairs.json" >"$tmp/b" && cmp -s "$tmp/a" "$tmp/b"; then ok
else bad "snapshot: topo --input differs from the live topo"; fi
check "$tmp/snap.json" '[.gpus[] | .dra."resource.kubernetes.io/pcieRoot"] == ["pci0000:18","pci0000:18","pci0000:98","pci0000:98"]' \
	"snapshot: pcieRoot from the GPUs' host bridges"
RAILBIND_NVML_LIBRARY=none "$RAILBIND" plan --json --input "$tmp/pairs-snap.xml" --visible "$mig0" >"$tmp/out"
check "$tmp/out" ".ranks[0].gpu.index == 0 and .ranks[0].gpu.mig == \"$mig0\"" "snapshot: MIG claim"
NVIDIA_VISIBLE_DEVICES=$uuid2 "$RAILBIND" run --socket "$tmp/none.sock" --input "$tmp/pairs-snap.xml" \
	--rank 0 --no-bind -- env >"$tmp/out" 2>"$tmp/err"
if grep -qx 'RAILBIND_GPU=0000:9b:00.0' "$tmp/out" && grep -qx "RAILBIND_GPU_UUID=$uuid2" "$tmp/out"; then ok
else bad "run: NVIDIA_VISIBLE_DEVICES by UUID: $(cat "$tmp/err")"; fi
CUDA_VISIBLE_DEVICES=$mig1 "$RAILBIND" run --socket "$tmp/none.sock" --input "$tmp/pairs-snap.xml" \
	--rank 0 --no-bind -- env >"$tmp/out" 2>"$tmp/err"
if grep -qx 'RAILBIND_GPU=0000:1b:00.0' "$tmp/out" && grep -qx "RAILBIND_MIG_UUID=$mig1" "$tmp/out"; then ok
else bad "run: CUDA_VISIBLE_DEVICES=MIG-...: $(cat "$tmp/err")"; fi

# --- malformed attributes are refused, naming the attribute and the device ---
sed 's/"0000:1c:00.0 gpu 4"/"0000:1c:00.0 gpu many"/' "$tmp/pairs-snap.xml" >"$tmp/bad1.xml"
sed 's/name="RailbindMIG" value="enabled"/name="RailbindMIG" value="maybe"/' "$tmp/pairs-snap.xml" >"$tmp/bad2.xml"
sed 's/\(name="RailbindGPUPath" value="0000:1c:00.0\) PIX/\1 NV4/' "$tmp/pairs-snap.xml" >"$tmp/bad3.xml"
for f in bad1 bad2 bad3; do
	"$RAILBIND" topo --input "$tmp/$f.xml" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq 1 ] && [ ! -s "$tmp/out" ] && grep -q 'Railbind[A-Za-z]*=".*" on 0000:1b:00.0, expected' "$tmp/err"
	then ok; else bad "$f: rc=$rc, $(cat "$tmp/err")"; fi
done

# --- AMD: XGMI between every two GPUs, partitions, ROCR_VISIBLE_DEVICES by UUID ---
cat >"$tmp/amd.rsmi" <<'EOF'
init ok
dev 0000:0c:00.0 unique=a1b2c3d4e5f60001 minor=128 compute=SPX memory=NPS1
dev 0000:15:00.0 unique=a1b2c3d4e5f60002 minor=136 compute=SPX memory=NPS1
dev 0000:9f:00.0 unique=a1b2c3d4e5f60003 minor=144 compute=SPX memory=NPS1
dev 0000:af:00.0 unique=a1b2c3d4e5f60004 minor=152 compute=SPX memory=NPS1
xgmi 0000:0c:00.0 0000:15:00.0 1 15
xgmi 0000:0c:00.0 0000:9f:00.0 1 30
xgmi 0000:0c:00.0 0000:af:00.0 1 15
xgmi 0000:15:00.0 0000:9f:00.0 1 15
xgmi 0000:15:00.0 0000:af:00.0 1 30
xgmi 0000:9f:00.0 0000:af:00.0 1 15
EOF
RSMI_ANSWERS=$tmp/amd.rsmi live amd /nonexistent rsmi topo --json
cp "$tmp/out" "$tmp/amd.json"
check "$tmp/amd.json" '.gpu_libraries.rocm_smi == "ok" and .gpu_libraries.nvml == null' "amd: ROCm SMI state"
check "$tmp/amd.json" '[.gpu_paths[][]] | map(select(. != "X")) | all(. == "XGMI1") and length == 12' \
	"amd: XGMI1 between every two GPUs"
check "$tmp/amd.json" '.gpus[0].xgmi == [{"remote":"0000:15:00.0","hops":1,"weight":15},{"remote":"0000:9f:00.0","hops":1,"weight":30},{"remote":"0000:af:00.0","hops":1,"weight":15}]' \
	"amd: hops and weights"
check "$tmp/amd.json" '.gpus[3].uuid == "GPU-a1b2c3d4e5f60004" and .gpus[3].minor == 152 and .gpus[3].partition == {"compute":"SPX","memory":"NPS1"}' \
	"amd: UUID, render minor, partition modes"
check "$tmp/amd.json" '.warnings | length == 0' "amd: no warning"
RSMI_ANSWERS=$tmp/amd.rsmi live amd /nonexistent rsmi snapshot -o "$tmp/amd-snap.xml"
ROCR_VISIBLE_DEVICES=GPU-a1b2c3d4e5f60003 "$RAILBIND" run --socket "$tmp/none.sock" \
	--input "$tmp/amd-snap.xml" --rank 0 --no-bind --isolate-gpu -- env >"$tmp/out" 2>"$tmp/err"
if grep -qx 'RAILBIND_GPU=0000:9f:00.0' "$tmp/out" && grep -qx 'ROCR_VISIBLE_DEVICES=2' "$tmp/out" &&
    grep -qx 'RAILBIND_GPU_UUID=GPU-a1b2c3d4e5f60003' "$tmp/out"; then ok
else bad "amd: ROCR_VISIBLE_DEVICES by UUID: $(cat "$tmp/err")"; fi
printf 'init fail 8\n' >"$tmp/amd-fail.rsmi"
RSMI_ANSWERS=$tmp/amd-fail.rsmi live amd /nonexistent rsmi topo --json
check "$tmp/out" '(.gpu_libraries.rocm_smi | startswith("failed rsmi_init: RSMI_STATUS_INIT_ERROR")) and .gpu_paths[0][1] == "NODE"' \
	"amd: ROCm SMI failing to start"
RAILBIND_ROCM_SMI_LIBRARY=none live amd /nonexistent rsmi topo --json
check "$tmp/out" '.gpu_libraries.rocm_smi == "absent" and ([.warnings[] | select(.subject | test("ROCm SMI"))] | length == 1)' \
	"amd: no ROCm SMI, said once"

# --- a CPU-only node: no library is even looked for ---
"$RBGEN" --gpus 1 -o "$tmp/one.xml" && sed -i 's/pci_type="0302 \[10de/pci_type="0302 [1234/' "$tmp/one.xml"
HWLOC_XMLFILE=$tmp/one.xml LD_DEBUG=libs RAILBIND_NVML_LIBRARY= \
	"$RAILBIND" topo --json >"$tmp/out" 2>"$tmp/ld"
if ! grep -q 'libnvidia-ml\|librocm_smi' "$tmp/ld" && jq -e '.gpu_libraries.nvml == null' "$tmp/out" >/dev/null
then ok; else bad "a node without NVIDIA or AMD GPUs looked for their libraries"; fi

echo "check-gpu: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
