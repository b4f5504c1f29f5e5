#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check-gpu-smi: for machines whose `nvidia-smi topo -m` was published
# (../shared/topologies/smi/, read where it is, never copied), rbgen builds the
# machine (tests/fixtures/NAME.topo) and what its NVML answers; railbind topo,
# on that "live" node with the stand-in libnvidia-ml.so.1, must print the same
# cells, the same NUMA (and CPU) affinity; and again when read back from the
# snapshot railbind takes there, with no NVML at all.
# Needs RAILBIND, RBGEN, STUBS (the stand-in libraries' directory), TOPOLOGIES.
set -u
: "${RAILBIND:?}" "${RBGEN:?}" "${STUBS:?}" "${TOPOLOGIES:?}"
HERE=$(cd "$(dirname "$0")" && pwd)
FIXTURES=$HERE/../fixtures
SMI=$TOPOLOGIES/smi
if [ ! -d "$SMI" ]; then
	echo "check-gpu-smi: skipped: $SMI is absent (the published nvidia-smi matrices are read from ../shared/topologies)"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/railbind-smi.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0

# check NAME SMI-FILE [AWK OPTIONS...]
check() {
	name=$1 smi=$SMI/$2
	shift 2
	if [ ! -f "$smi" ]; then
		echo "check-gpu-smi: $name: skipped: $smi is absent"
		return
	fi
	if ! "$RBGEN" -o "$tmp/$name.xml" --nvml "$tmp/$name.nvml" "$FIXTURES/$name.topo"; then
		echo "FAIL: $name: rbgen"
		fail=1
		return
	fi
	awk -v tool=smi -f "$HERE/matrix.awk" "$smi" >"$tmp/$name.smi"
	# The live node: hwloc reads the machine from the file, NVML is the stand-in.
	if ! HWLOC_XMLFILE=$tmp/$name.xml LD_LIBRARY_PATH=$STUBS/nvml \
	    RB_FAKE_NVML=$tmp/$name.nvml RAILBIND_ROCM_SMI_LIBRARY=none \
	    "$RAILBIND" topo >"$tmp/$name.live.txt" 2>"$tmp/$name.err"; then
		echo "FAIL: $name: railbind topo: $(cat "$tmp/$name.err")"
		fail=1
		return
	fi
	if ! HWLOC_XMLFILE=$tmp/$name.xml LD_LIBRARY_PATH=$STUBS/nvml \
	    RB_FAKE_NVML=$tmp/$name.nvml RAILBIND_ROCM_SMI_LIBRARY=none \
	    "$RAILBIND" snapshot -o "$tmp/$name.snap.xml" 2>/dev/null ||
	    ! RAILBIND_NVML_LIBRARY=none "$RAILBIND" topo --input "$tmp/$name.snap.xml" \
	    >"$tmp/$name.snap.txt"; then
		echo "FAIL: $name: snapshot and topo --input"
		fail=1
		return
	fi
	for how in live snap; do
		awk -v tool=railbind -f "$HERE/matrix.awk" "$tmp/$name.$how.txt" >"$tmp/$name.$how"
		awk -v name="$name ($how)" "$@" -f "$HERE/cells.awk" "$tmp/$name.smi" "$tmp/$name.$how" ||
			fail=1
	done
}

check dgx-a100 dgx-a100_topo-m_1mcprddgx05.txt -v cpus=1
# Captured with `srun -n 1` in a one-CPU cgroup: CPU Affinity shows that CPU only,
# and NODE stands where the sockets differ (EXPECTED.md: ignore its NODE-vs-SYS).
check hgx-h200 hgx-h200_nchc-nano4_topo-m.txt -v cpus=0 -v nodesys=1
[ "$fail" -eq 0 ] && echo "check-gpu-smi: passed"
exit "$fail"
