#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test-rbgen.sh FIXTURE_DIR BAD_DIR: checks rbgen's XML through hwloc's own
# tools (lstopo-no-graphics, hwloc-calc, hwloc-info) and rbgen-hwcheck (which
# only loads the file with libhwloc and prints what hwloc sees), against what
# each description asks for as expect.awk reads it from the text.
#
# Environment: RBGEN, RBGEN_HWCHECK (the binaries), RBGEN_TMP (scratch dir).
set -u

FIXTURES=$1
BAD=$2
HERE=$(cd "$(dirname "$0")" && pwd)
: "${RBGEN:?set RBGEN to the rbgen binary}"
: "${RBGEN_HWCHECK:?set RBGEN_HWCHECK to the rbgen-hwcheck binary}"
TMP=${RBGEN_TMP:-${TMPDIR:-/tmp}/rbgen-test.$$}
rm -rf "$TMP"
mkdir -p "$TMP" || exit 1
# hwloc asserts its own consistency checks on every load
HWLOC_DEBUG_CHECK=1
export HWLOC_DEBUG_CHECK

pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }
same() { # what expected actual
	if [ "$2" = "$3" ]; then ok; else bad "$1: expected '$2', got '$3'"; fi
}

# hwloc's view of an XML file as the counts expect.awk prints
hwloc_counts() {
	xml=$1
	check=$2
	echo "count pus $(hwloc-calc -i "$xml" --number-of pu machine:0)"
	echo "count numa $(hwloc-calc -i "$xml" --number-of numanode machine:0)"
	echo "count cpuless $(sed -n 's/^cpu .*cpuless=\([0-9]*\).*/\1/p' "$check")"
	echo "count pcidev $(lstopo-no-graphics -i "$xml" --filter io:all --only pcidev | wc -l)"
	echo "count osdev $(lstopo-no-graphics -i "$xml" --filter io:all --only osdev | wc -l)"
	echo "count bridges $(lstopo-no-graphics -i "$xml" --filter io:all --only bridge |
		grep -c PCIBridge)"
	echo "count acs $(grep '^bridge ' "$check" | grep -vc 'acs=none')"
}

# bridges two devices have in common above them (by hwloc's parent chain)
common() { # check-file busid1 busid2
	a=$(grep "^pci $2 " "$1" | sed 's/.*chain=//')
	b=$(grep "^pci $3 " "$1" | sed 's/.*chain=//')
	echo "$a" "$b" | awk '{ n = split($1, x, ","); m = split($2, y, ",");
		for (i = 1; i <= n && i <= m && x[i] == y[i]; i++);
		print i - 1 }'
}

info() { # xml object name
	hwloc-info -i "$1" "$2" 2>/dev/null | sed -n "s/^ info $3 = //p"
}

# --- every fixture generates, loads and matches its description ---
for topo in "$FIXTURES"/*.topo; do
	name=$(basename "$topo" .topo)
	xml=$TMP/$name.xml
	if ! "$RBGEN" -o "$xml" "$topo" 2>"$TMP/$name.err"; then
		bad "$name: rbgen failed: $(cat "$TMP/$name.err")"
		continue
	fi
	if ! lstopo-no-graphics -i "$xml" >"$TMP/$name.lstopo" 2>"$TMP/$name.lerr" ||
	   [ -s "$TMP/$name.lerr" ]; then
		bad "$name: lstopo-no-graphics -i failed: $(head -3 "$TMP/$name.lerr")"
		continue
	fi
	ok
	if ! "$RBGEN_HWCHECK" "$xml" >"$TMP/$name.check" 2>"$TMP/$name.cerr"; then
		bad "$name: hwloc cannot load or check it: $(head -3 "$TMP/$name.cerr")"
		continue
	fi
	awk -f "$HERE/expect.awk" "$topo" | sort | awk -f "$HERE/number-gpus.awk" \
		>"$TMP/$name.expect"
	{
		hwloc_counts "$xml" "$TMP/$name.check"
		grep '^machine ' "$TMP/$name.check"
		grep '^pci ' "$TMP/$name.check" | sed 's/ chain=.*//'
	} | sort >"$TMP/$name.actual"
	if diff -u "$TMP/$name.expect" "$TMP/$name.actual" >"$TMP/$name.diff"; then
		ok
	else
		bad "$name: hwloc's view differs from the description (- asked, + hwloc):"
		sed 's/^/    /' "$TMP/$name.diff" >&2
	fi
done

# --- fixture-specific facts, from the machines they model ---
chk=$TMP/dgx-h100.check
if [ -f "$chk" ]; then
	# DGX H100: GPU i pairs with mlx5_{0,3,4,5,6,9,10,11} below one switch
	set -- 1b:18 43:40 52:4f 61:5e 9d:9a c3:c0 d1:ce df:dc
	for pair in "$@"; do
		g=0000:${pair%%:*}:00.0
		n=0000:${pair##*:}:00.0
		same "dgx-h100 $g and $n share root port and switch" 3 "$(common "$chk" "$g" "$n")"
	done
	same "dgx-h100 GPU0 and mlx5_3 share no root complex" 0 \
		"$(common "$chk" 0000:1b:00.0 0000:40:00.0)"
	same "dgx-h100 NIC below GPU0's switch" mlx5_0 \
		"$(grep '^pci 0000:18:00.0 ' "$chk" | sed 's/.*osdevs=[^,]*,\([^ ]*\).*/\1/')"
	same "dgx-h100 GPU7's NIC" mlx5_11 \
		"$(grep '^pci 0000:dc:00.0 ' "$chk" | sed 's/.*osdevs=[^,]*,\([^ ]*\).*/\1/')"
	same "dgx-h100 root port ACS" 0x001d \
		"$(grep '^bridge 0000:15:01.0 ' "$chk" | sed 's/.*acs=\([^ ]*\).*/\1/')"
fi
chk=$TMP/nested-switch.check
if [ -f "$chk" ]; then
	g0=$(common "$chk" 0000:07:00.0 0000:0c:00.0)
	g1=$(common "$chk" 0000:0f:00.0 0000:0c:00.0)
	same "nested-switch GPU0-mlx5_0 share the sub-switch (PIX)" 5 "$g0"
	same "nested-switch GPU1-mlx5_0 share only the top switch (PXB)" 3 "$g1"
fi
xml=$TMP/faulty.xml
if [ -f "$xml" ]; then
	same "faulty GPU link width" 8 "$(info "$xml" pci=0000:04:00.0 RailbindLinkWidth)"
	same "faulty GPU link width cap" 16 "$(info "$xml" pci=0000:04:00.0 RailbindLinkWidthCap)"
	same "faulty IOMMU" DMA "$(info "$xml" pci=0000:04:00.0 RailbindIOMMUGroupType)"
	same "faulty default IOMMU" identity \
		"$(info "$xml" pci=0000:14:00.0 RailbindIOMMUGroupType)"
	same "faulty port DOWN" 1 "$(info "$xml" os=mlx5_1 Port1State)"
	same "faulty port ACTIVE" 4 "$(info "$xml" os=mlx5_0 Port1State)"
	same "faulty port rate" 400 "$(info "$xml" os=mlx5_0 RailbindPort1Rate)"
fi
xml=$TMP/p4d.xml
if [ -f "$xml" ]; then
	same "p4d EFA rate" 100 "$(info "$xml" os=rdmap16s27 RailbindPort1Rate)"
	same "p4d link" 8.0 "$(info "$xml" pci=0000:10:1c.0 RailbindLinkSpeed)"
fi

# --- bad descriptions: FILE:LINE: message, exit 2, no output left behind ---
for topo in "$BAD"/*.topo; do
	name=$(basename "$topo" .topo)
	line=$(sed -n 's/^# expect-line: //p' "$topo")
	dir=$TMP/bad-$name
	mkdir -p "$dir"
	"$RBGEN" -o "$dir/out.xml" --nvml "$dir/out.nvml" "$topo" >"$dir/stdout" 2>"$dir/stderr"
	rc=$?
	same "bad/$name exit status" 2 "$rc"
	first=$(head -1 "$dir/stderr")
	case $first in
	"$topo:$line: "?*) ok ;;
	*) bad "bad/$name: expected '$topo:$line: ...', got '$first'" ;;
	esac
	same "bad/$name leaves nothing in the output dir" "stderr stdout" \
		"$(ls "$dir" | tr '\n' ' ' | sed 's/ $//')"
	same "bad/$name writes nothing to stdout" "" "$(cat "$dir/stdout")"
done

# a failed run leaves an existing output file as it was
echo previous >"$TMP/keep.xml"
"$RBGEN" -o "$TMP/keep.xml" "$BAD/overlap.topo" 2>/dev/null
same "failed run keeps the old output" previous "$(cat "$TMP/keep.xml")"

# --- command line ---
"$RBGEN" --help >"$TMP/help" 2>&1
same "--help exit status" 0 $?
grep -q '^usage: rbgen' "$TMP/help" && ok || bad "--help prints no usage"
"$RBGEN" >/dev/null 2>&1
same "no arguments exit status" 1 $?
"$RBGEN" --gpus 4 --nics-per-gpu 2 --gpus-per-nic 2 >/dev/null 2>&1
same "conflicting options exit status" 1 $?
"$RBGEN" "$TMP/does-not-exist.topo" >/dev/null 2>&1
same "missing file exit status" 1 $?

# --- parametric machines ---
xml=$TMP/param-4096.xml
start=$(date +%s%N)
if "$RBGEN" --gpus 4096 -o "$xml"; then
	end=$(date +%s%N)
	ms=$(((end - start) / 1000000))
	echo "rbgen --gpus 4096: ${ms} ms"
	# well under a second on an idle machine; allow for a loaded CI box
	[ "$ms" -lt 5000 ] && ok || bad "--gpus 4096 took ${ms} ms"
	if "$RBGEN_HWCHECK" "$xml" >"$TMP/param-4096.check"; then
		c=$TMP/param-4096.check
		same "4096: GPUs" 4096 "$(grep -c '^pci [^ ]* 0302 ' "$c")"
		same "4096: NICs" 4096 "$(grep -c '^pci [^ ]* 0207 ' "$c")"
		same "4096: GPUs on NUMA 0" 2048 "$(grep '^pci [^ ]* 0302 ' "$c" | grep -c 'local=0 ')"
		same "4096: GPUs on NUMA 1" 2048 "$(grep '^pci [^ ]* 0302 ' "$c" | grep -c 'local=1 ')"
		same "4096: distinct NIC names" 4096 "$(grep '^pci [^ ]* 0207 ' "$c" |
			sed 's/.*osdevs=[^,]*,\([^ ]*\).*/\1/' | sort -u | wc -l)"
		# NIC names must not follow bus order (mlx5_i at the i-th NIC)
		inorder=$(grep '^pci [^ ]* 0207 ' "$c" | sort -k2 |
			sed 's/.*osdevs=[^,]*,mlx5_\([0-9]*\).*/\1/' |
			awk '$1 == NR - 1 { n++ } END { print n + 0 }')
		[ "$inorder" -lt 4096 ] && ok || bad "4096: NIC names are in bus order"
		same "4096: PUs" 32 "$(hwloc-calc -i "$xml" --number-of pu machine:0)"
	else
		bad "4096: hwloc cannot load it"
	fi
else
	bad "rbgen --gpus 4096 failed"
fi
xml=$TMP/param-shared.xml
if "$RBGEN" --gpus 10 --gpus-per-nic 4 --numa 4 --cores-per-numa 4 --smt 1 -o "$xml" &&
   "$RBGEN_HWCHECK" "$xml" >"$TMP/param-shared.check"; then
	c=$TMP/param-shared.check
	same "gpus-per-nic: GPUs" 10 "$(grep -c '^pci [^ ]* 0302 ' "$c")"
	same "gpus-per-nic: NICs" 3 "$(grep -c '^pci [^ ]* 0207 ' "$c")"
	same "gpus-per-nic: PUs" 16 "$(hwloc-calc -i "$xml" --number-of pu machine:0)"
	same "gpus-per-nic: NUMA nodes" 4 "$(hwloc-calc -i "$xml" --number-of numanode machine:0)"
else
	bad "rbgen --gpus 10 --gpus-per-nic 4 failed"
fi

echo "test-rbgen: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && rm -rf "$TMP"
[ "$fail" -eq 0 ]
