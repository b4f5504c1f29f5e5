#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check-gpu-valgrind: railbind's NVML and ROCm SMI code (with the stand-ins),
# the GPU matrix, UUID and MIG plans and the SVG picture under valgrind: no
# leak, no invalid access. Needs RAILBIND, RBGEN, STUBS, VALGRIND.
set -u
: "${RAILBIND:?}" "${RBGEN:?}" "${STUBS:?}" "${VALGRIND:?}"
HERE=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/railbind-gpuvg.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0
runs=0
vg() { # MACHINE LIB ARGS...
	m=$1 lib=$2
	shift 2
	runs=$((runs + 1))
	# shellcheck disable=SC2086
	if ! HWLOC_XMLFILE=$tmp/$m.xml LD_LIBRARY_PATH=$STUBS/$lib \
	    RB_FAKE_NVML=$tmp/$m.nvml RB_FAKE_RSMI=$tmp/amd.rsmi \
	    $VALGRIND "$RAILBIND" "$@" >/dev/null 2>"$tmp/err"; then
		echo "FAIL: valgrind railbind $* ($m, $lib):"
		cat "$tmp/err"
		fail=1
	fi
}
"$RBGEN" -o "$tmp/pairs.xml" --nvml "$tmp/pairs.nvml" "$HERE/pairs.topo" &&
"$RBGEN" -o "$tmp/dgx.xml" --nvml "$tmp/dgx.nvml" "$HERE/../fixtures/dgx-a100.topo" &&
"$RBGEN" -o "$tmp/amd.xml" --nvml "$tmp/amd.nvml" "$HERE/amd.topo" || exit 1
printf 'dev 0000:0c:00.0 unique=1 minor=128 compute=CPX memory=NPS4\ndev 0000:0c:00.0 partition=1\ndev 0000:15:00.0 unique=2\nxgmi 0000:0c:00.0 0000:15:00.0 1 15\n' \
	>"$tmp/amd.rsmi"
mig=$(sed -n 's/^mig [^ ]* \(MIG-[^ ]*\) 2 0$/\1/p' "$tmp/pairs.nvml")
vg pairs nvml topo --json
vg pairs nvml topo -d
vg pairs nvml-old topo --json
vg pairs nvml plan --json --isolate-gpu --visible "$mig,3"
vg pairs nvml snapshot -o "$tmp/snap.xml"
vg dgx nvml topo --svg "$tmp/dgx.svg"
vg amd rsmi topo --json
runs=$((runs + 1))
$VALGRIND "$RAILBIND" plan --json --input "$tmp/snap.xml" --visible "$mig" >/dev/null 2>"$tmp/err" ||
	{ echo "FAIL: valgrind plan --input snapshot"; cat "$tmp/err"; fail=1; }
[ "$fail" -eq 0 ] && echo "check-gpu-valgrind: $runs runs clean"
exit "$fail"
