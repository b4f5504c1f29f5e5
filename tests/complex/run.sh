#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# GPU-NIC complexes (model_complex.c), black box: on rbgen's fixtures of each
# kind (here and tests/audit/acs/) and the corpus's GB300/B300 NCCL files,
# every GPU names its complex in topo and plan --json and is paired with its
# complex's NIC, the path class is the DMA function's; an unreadable VPD
# leaves the PF undecided; BlueField DPUs are no rails beside other NICs
# unless include-nic names them; Grace ranks get their socket's CPUs and
# never a CPU-less node; classic nodes name no complex (their output as it
# was). Needs RAILBIND, RBGEN, BUILD, jq; RAILBIND_TOPOLOGIES (default
# ../shared/topologies).
set -u
: "${RAILBIND:?set RAILBIND to the railbind binary}"
: "${RBGEN:?set RBGEN to the rbgen binary}"
: "${BUILD:?set BUILD to the build directory}"
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
corpus=${RAILBIND_TOPOLOGIES:-$top/../shared/topologies}
pass=0
fail=0
skip=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/railbind-complex.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
gen() { "$RBGEN" -o "$tmp/$1.xml" "$2" || bad "rbgen $2"; }
# rank's GPU, its complex id and kind, its first NIC, that NIC's complex id, pf, path, nccl_path
ranks() {
	"$RAILBIND" plan --json -i "$@" 2>"$tmp/err" | jq -r '.ranks[] |
		"\(.gpu.pci) \(.gpu.complex.kind) \(.nics[0].name) \(.gpu.complex.id == .nics[0].complex.id) \(.gpu.complex.pf) \(.nics[0].path) \(.nics[0].nccl_path)"'
}

# GB300 tray, VPD read: each GPU with the PF its DMA function's UUID names
# (numbered against the GPU order), PXB to the DMA function, not NODE to the PF.
gen gb300 "$here/gb300.topo"
ranks "$tmp/gb300.xml" >"$tmp/got"
cat >"$tmp/want" <<'W'
0008:06:00.0 dma mlx5_1 true 0001:01:00.0 PXB PXB
0009:06:00.0 dma mlx5_0 true 0000:01:00.0 PXB PXB
0018:06:00.0 dma mlx5_3 true 0011:01:00.0 PXB PXB
0019:06:00.0 dma mlx5_2 true 0010:01:00.0 PXB PXB
W
if cmp -s "$tmp/want" "$tmp/got"; then ok; else bad "gb300: $(diff "$tmp/want" "$tmp/got" | tr '\n' ' ')"; fi
"$RAILBIND" topo --json -i "$tmp/gb300.xml" >"$tmp/topo" 2>/dev/null
if jq -e '[.gpus[].complex | .kind == "dma" and (.id | startswith("dma:")) and .dma != null and .undecided == null] | all and length == 4' "$tmp/topo" >/dev/null &&
    jq -e '.gpus[0].complex.id == "dma:0008:00:01.0" and .gpus[0].complex.dma == "0008:03:00.0" and
	([.nics[] | select(.name == "mlx5_1")][0].complex == .gpus[0].complex)' "$tmp/topo" >/dev/null &&
    jq -e '.paths[0] as $p | [.nics[].name] | index("mlx5_1") as $i | $p[$i] == "PXB"' "$tmp/topo" >/dev/null
then ok; else bad "gb300 topo --json complexes: $(jq -c '[.gpus[].complex]' "$tmp/topo")"; fi
# Grace: each rank on its socket's cores, memory its socket's node, never CPU-less.
if [ "$("$RAILBIND" plan --json -i "$tmp/gb300.xml" 2>/dev/null | jq -r '[.ranks[] | "\(.cpus)/\(.mems)"] | join(" ")')" = "0-35/0 36-71/0 72-107/1 108-143/1" ] &&
    [ "$("$RAILBIND" plan --json -i "$tmp/gb300.xml" 2>/dev/null | jq -r '[.ranks[].env.NCCL_IB_HCA] | unique | join(" ")')" = "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1" ]
then ok; else bad "gb300: CPUs and memory per rank"; fi
# The BlueField-3 is north-south: named, no rank's rail.
"$RAILBIND" plan --json -i "$tmp/gb300.xml" >"$tmp/plan" 2>/dev/null
if jq -e '[.excluded[] | select(.name == "mlx5_bf" and .reason == "north-south")] | length == 1' "$tmp/plan" >/dev/null &&
    ! jq -e 'any(.ranks[].nics[]; .name == "mlx5_bf")' "$tmp/plan" >/dev/null &&
    jq -e '.nics[] | select(.name == "mlx5_bf") | .excluded == "north-south"' "$tmp/topo" >/dev/null
then ok; else bad "gb300: mlx5_bf not left out as north-south"; fi

# VPD unreadable (unprivileged discovery): the complexes stay, the PF undecided.
sed -E 's/vpd=[0-9a-f-]+/vpd=unreadable/' "$here/gb300.topo" >"$tmp/gb300-novpd.topo"
gen gb300-novpd "$tmp/gb300-novpd.topo"
"$RAILBIND" topo --json -i "$tmp/gb300-novpd.xml" >"$tmp/topo" 2>/dev/null
if jq -e '[.gpus[].complex | .kind == "dma" and .pf == null and .undecided == "VPD unreadable"] | all and length == 4' "$tmp/topo" >/dev/null &&
    jq -e '[.nics[] | select(.excluded == null) | .complex.undecided == "VPD unreadable"] | all and length == 4' "$tmp/topo" >/dev/null &&
    "$RAILBIND" topo -i "$tmp/gb300-novpd.xml" 2>/dev/null | grep -q 'undecided: VPD unreadable: the Data Direct DMA functions of GPU0, GPU1, GPU2, GPU3'
then ok; else bad "gb300 without VPD: $(jq -c '[.gpus[].complex]' "$tmp/topo")"; fi

# include-nic makes the DPU a rail again.
printf 'include-nic = mlx5_bf\n' >"$tmp/conf"
if "$RAILBIND" topo --json -c "$tmp/conf" -i "$tmp/gb300.xml" 2>/dev/null |
    jq -e '.nics[] | select(.name == "mlx5_bf") | .excluded == null' >/dev/null
then ok; else bad "include-nic = mlx5_bf still leaves it out"; fi

# GB200 tray (NUMA-based): GPU0,1 on CPUs 0-71, GPU2,3 on 72-143 as nvidia-smi
# topo -m says, memory on nodes 0 and 1, none of the 32 CPU-less nodes; the
# two BlueField-3s no rails.
gen gb200 "$here/gb200.topo"
"$RAILBIND" topo --json -i "$tmp/gb200.xml" >"$tmp/topo" 2>/dev/null
"$RAILBIND" plan --json -i "$tmp/gb200.xml" >"$tmp/plan" 2>/dev/null
if [ "$(jq -r '[.gpus[] | "\(.cpus)/\(.numa)/\(.complex.kind)"] | join(" ")' "$tmp/topo")" = "0-71/0/numa 0-71/0/numa 72-143/1/numa 72-143/1/numa" ] &&
    [ "$(jq -r '[.ranks[] | "\(.nics[0].name):\(.mems)"] | join(" ")' "$tmp/plan")" = "mlx5_0:0 mlx5_1:0 mlx5_2:1 mlx5_3:1" ] &&
    jq -e '[.excluded[] | select(.reason == "north-south") | .name] == ["mlx5_4", "mlx5_5"]' "$tmp/plan" >/dev/null &&
    jq -e '.ranks | all(.gpu.complex.kind == "numa" and .nics[0].complex.kind == "numa")' "$tmp/plan" >/dev/null
then ok; else bad "gb200: $(jq -c '[.ranks[] | [.cpus, .mems, .nics[0].name]]' "$tmp/plan")"; fi

# The ACS fixtures' kinds (tests/audit/acs/): inline pairs the NIC under the GPU's
# ConnectX switch, numa the Grace root ports', dma without VPD names no PF.
for fk in inline:inline:0000:03:00.0 numa:numa:null dma:dma:null; do
	f=${fk%%:*}
	r=${fk#*:}
	kind=${r%%:*}
	pf=${r#*:}
	gen "acs-$f" "$top/tests/audit/acs/$f.topo"
	got=$("$RAILBIND" topo --json -i "$tmp/acs-$f.xml" 2>/dev/null | jq -r '.gpus[0].complex | "\(.kind) \(.pf)"')
	if [ "$got" = "$kind $pf" ]; then ok; else bad "acs/$f.topo: complex '$got', want '$kind $pf'"; fi
done

# Classic nodes name no complex: every rbgen fixture of tests/fixtures.
n=0
for f in "$BUILD"/fixtures/*.xml; do
	for c in topo plan; do
		"$RAILBIND" $c --json -i "$f" 2>/dev/null | jq -e '[.. | objects | has("complex")] | any' >/dev/null && { bad "$f: $c names a complex"; n=-1; }
	done
	[ $n -lt 0 ] && break
	n=$((n + 1))
done
[ $n -gt 10 ] && ok

# The corpus: NCCL's own dumps of GB300 (net under the DMA function, "_dma")
# and B300 (ConnectX-8 inline) nodes.
if [ -f "$corpus/oci-hpc/GB300MP.xml" ]; then
	ranks "$corpus/oci-hpc/GB300MP.xml" >"$tmp/got"
	cat >"$tmp/want" <<'W'
0008:06:00.0 dma rdma_vf_rail1_dma true null PXB PXB
0009:06:00.0 dma rdma_vf_rail0_dma true null PXB PXB
0018:06:00.0 dma rdma_vf_rail3_dma true null PXB PXB
0019:06:00.0 dma rdma_vf_rail2_dma true null PXB PXB
W
	if cmp -s "$tmp/want" "$tmp/got"; then ok; else bad "GB300MP.xml: $(diff "$tmp/want" "$tmp/got" | tr '\n' ' ')"; fi
	# The environment names verbs devices, never the "_dma" net.
	hca=$("$RAILBIND" plan --json -i "$corpus/oci-hpc/GB300MP.xml" 2>/dev/null | jq -r '[.ranks[].env.NCCL_IB_HCA] | unique | join(" ")')
	if [ "$hca" = "=rdma_vf_rail1:1,rdma_vf_rail0:1,rdma_vf_rail3:1,rdma_vf_rail2:1" ]; then ok; else bad "GB300MP.xml: NCCL_IB_HCA $hca"; fi
	ranks "$corpus/oci-hpc/B300MP.xml" >"$tmp/got"
	# EXPECTED.md's pairs, each GPU's complex naming its NIC as the PF.
	for p in 14:11:0 32:2f:1 49:46:2 60:5d:3 8e:8b:4 ad:aa:5 c5:c2:6 dd:da:7; do
		g=${p%%:*}; r=${p#*:}; n=${r%%:*}
		echo "0000:$g:00.0 inline rdma_vf_rail${r#*:} true 0000:$n:00.0 PXB PXB"
	done >"$tmp/want"
	if cmp -s "$tmp/want" "$tmp/got"; then ok; else bad "B300MP.xml: $(diff "$tmp/want" "$tmp/got" | tr '\n' ' ')"; fi
else
	skip=$((skip + 1))
fi

echo "check-complex: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
