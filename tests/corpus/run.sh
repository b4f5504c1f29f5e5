#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The corpus test: railbind against real machines' topologies written by
# others (../shared/topologies, never copied into the project).
#  1. every file loads, or is refused with one line naming it; no crash;
#  2. for each machine of expected-pairs.txt (from EXPECTED.md), the plan
#     gives each GPU that primary rail, at that class, on that NUMA node,
#     tied rails are shared out evenly, and ranks' CPU sets are disjoint
#     and inside the GPU's NUMA node;
#  3. on every file, each rank's primary rail is one NCCL ranks best for its
#     GPU on its own (the plan's nccl.nics), or the plan says why not in
#     one line naming a virtual interface; no rail the plan leaves out is
#     planned; every left-out NIC is named once on stderr;
#  4. on every file and every fixture (tests/fixtures, built), every rank
#     carries the same NCCL_IB_HCA, naming exactly the plan's rail ports by
#     verbs name and port; NCCL's own selection rule applied to it
#     (env-check.jq) selects each GPU's rails and picks its planned NIC,
#     or the plan's note says why not; no NCCL_SOCKET_IFNAME names an RDMA
#     device. Named machines' strings are checked by hand below.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
RAILBIND=${RAILBIND:-$top/build/railbind}
corpus=${RAILBIND_TOPOLOGIES:-$top/../shared/topologies}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
fixtures=${RAILBIND_FIXTURES:-$(dirname "$RAILBIND")/fixtures}
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# 4. The environment of the plan in $2 (of file $1), as NCCL reads it.
env_check() {
	if ! "$RAILBIND" topo --json -i "$1" > "$tmp/envtopo.json" 2>/dev/null; then
		bad "topo $1 fails where plan did not"
		return
	fi
	jq -r --slurpfile topo "$tmp/envtopo.json" -f "$here/env-check.jq" "$2" > "$tmp/envres" 2>&1
	if [ $? -eq 0 ] && [ ! -s "$tmp/envres" ]; then
		ok
	else
		bad "env $1: $(head -n 3 "$tmp/envres" | tr '\n' ';')"
	fi
}

nfix=0
for f in "$fixtures"/*.xml; do
	[ -f "$f" ] || continue
	nfix=$((nfix + 1))
	"$RAILBIND" plan --json -i "$f" > "$tmp/fix.json" 2>/dev/null || continue
	env_check "$f" "$tmp/fix.json"
done
[ $nfix -gt 0 ] || bad "no fixture in $fixtures (make fixtures)"

if [ ! -d "$corpus" ]; then
	echo "corpus: $corpus not found, skipping it (set RAILBIND_TOPOLOGIES)"
	echo "$pass passed, $fail failed, 1 skipped"
	[ $fail -eq 0 ]
	exit
fi

# 1. Load or refuse clearly, never crash.
find "$corpus" -type f \( -name '*.xml' -o -name '*.txt' -o -name '*.console' \) | sort > "$tmp/files"
while read -r f; do
	for cmd in topo plan; do
		"$RAILBIND" $cmd --json -i "$f" > "$tmp/out" 2> "$tmp/err"
		rc=$?
		if [ $rc -eq 0 ]; then
			nexcl=0
			[ $cmd = plan ] && nexcl=$(jq '.excluded | length' "$tmp/out" 2>/dev/null)
			if jq -e '.schema | startswith("railbind.")' "$tmp/out" > /dev/null 2>&1 &&
			   [ "$(wc -l < "$tmp/err")" -eq "$nexcl" ] &&
			   ! grep -qv '^railbind: plan: left out (' "$tmp/err"; then
				ok
			else
				bad "$cmd $f: exit 0 without a railbind JSON document, or stderr: $(head -c 300 "$tmp/err")"
			fi
			[ $cmd = plan ] || continue
			# 3. NCCL's own choice, or a note; never a left-out NIC.
			jq -r '.ranks[] | select(.nics | length > 0) |
				select([.nics[0].pci, .nics[0].name, .nics[0].port] as $n |
					(.nccl.nics | map([.pci, .name, .port]) | index([$n])) == null) |
				select((.nccl.note // "") | test("virtual interface with no PCI device") | not) |
				"GPU \(.gpu.pci): \(.nics[0].name // .nics[0].pci) is not NCCL'"'"'s \(.nccl.nics | map(.name // .pci)) and no note says why"' \
				"$tmp/out" > "$tmp/nccl"
			jq -r '(.excluded | map([.name, .port])) as $x | .ranks[] | .nics[] |
				[.name // .pci, .port] as $n | select($x | index([$n])) |
				"\($n[0]) is left out but planned"' "$tmp/out" >> "$tmp/nccl"
			if [ -s "$tmp/nccl" ]; then
				bad "plan $f: $(head -n 3 "$tmp/nccl" | tr '\n' ';')"
			else
				ok
			fi
			env_check "$f" "$tmp/out"
		elif [ $rc -eq 1 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l < "$tmp/err")" -eq 1 ] &&
		     grep -qF "$f" "$tmp/err"; then
			ok
		else
			bad "$cmd $f: exit $rc, stderr: $(head -c 300 "$tmp/err")"
		fi
	done
done < "$tmp/files"

# 4, by hand. A dual-port ConnectX-7's second function, written port="2" by
# NCCL (its real-port index added), is verbs port 1; ConnectX-8 Data Direct
# nets are written <dev>_dma, NCCL_IB_HCA takes the verbs name.
hca_of() {
	"$RAILBIND" plan --json -i "$corpus/$1" 2>/dev/null | jq -r '[.ranks[].env.NCCL_IB_HCA] | unique | .[]'
}
if [ -f "$corpus/oci-hpc/H100-topology.xml" ]; then
	h=$(hca_of oci-hpc/H100-topology.xml)
	case ",${h#=}," in
	*,mlx5_0:1,mlx5_1:1,*) case "$h" in *:2*) bad "H100-topology.xml: a :2 port in $h" ;; *) ok ;; esac ;;
	*) bad "H100-topology.xml: NCCL_IB_HCA $h lacks mlx5_0:1,mlx5_1:1" ;;
	esac
fi
if [ -f "$corpus/oci-hpc/GB300MP.xml" ]; then
	h=$(hca_of oci-hpc/GB300MP.xml)
	[ "$h" = "=rdma_vf_rail1:1,rdma_vf_rail0:1,rdma_vf_rail3:1,rdma_vf_rail2:1" ] && ok ||
		bad "GB300MP.xml: NCCL_IB_HCA $h, expected the four rdma_vf_rail ports without _dma"
fi

# hwloc's Port1GID0 gives each port's subnet prefix; all on the default
# fe80:: tells no rail-only fabric from one fabric: UCX gets the node's
# rails and one rail a transfer.
f="$corpus/psmgmt/topo.jwb0004.xml"
if [ -f "$f" ]; then
	"$RAILBIND" topo --json -i "$f" 2>/dev/null | jq -e '[.nics[].subnet] == ["fe80:0000:0000:0000","fe80:0000:0000:0000","fe80:0000:0000:0000","fe80:0000:0000:0000"]' > /dev/null &&
	"$RAILBIND" plan --json -i "$f" 2>/dev/null | jq -e 'all(.ranks[]; .env.UCX_NET_DEVICES == "mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1" and .env.UCX_MAX_RNDV_RAILS == "1")' > /dev/null && ok ||
		bad "topo.jwb0004.xml: subnet prefixes or UCX_NET_DEVICES not the node's"
fi

# An NCCL file's link attributes are the maxima: the audit says so rather
# than that the file has none.
if [ -f "$corpus/oci-hpc/H100-topology.xml" ]; then
	"$RAILBIND" audit --json -i "$corpus/oci-hpc/H100-topology.xml" 2>/dev/null |
		jq -e '[.. | objects | select(.id? == "link-downtrained") | .reason // ""] |
			any(test("maximum")) and (any(test("has no PCIe link")) | not)' > /dev/null && ok ||
		bad "audit H100-topology.xml: link-downtrained does not say the links are maxima"
fi

# 2. Pairings of EXPECTED.md.
grep -v '^#' "$here/expected-pairs.txt" | awk '{print $1}' | sort -u > "$tmp/machines"
while read -r m; do
	f="$corpus/$m"
	if ! "$RAILBIND" plan --json -i "$f" > "$tmp/plan.json" 2> "$tmp/err"; then
		bad "plan $m: $(cat "$tmp/err")"
		continue
	fi
	jq -r '.ranks[] | [.gpu.pci, (.nics[0].name // "-"), (.nics[0].pci // "-"),
		(.nics[0].path // "-"), (.gpu.numa // "-" | tostring)] | @tsv' \
		"$tmp/plan.json" > "$tmp/got"
	grep -v '^#' "$here/expected-pairs.txt" | awk -v m="$m" '$1 == m' |
	while read -r _ gpu nic class numa; do
		line=$(awk -v g="$gpu" '$1 == g' "$tmp/got")
		if [ -z "$line" ]; then
			echo "FAIL: $m: no rank for GPU $gpu"
			continue
		fi
		set -- $line
		matched=no
		for alt in $(echo "$nic" | tr '|' ' '); do
			[ "$alt" = "$2" ] || [ "$alt" = "$3" ] && matched=yes
		done
		[ $matched = yes ] || echo "FAIL: $m: GPU $gpu primary rail $2 ($3), expected $nic"
		[ "$4" = "$class" ] || echo "FAIL: $m: GPU $gpu path $4, expected $class"
		[ "$5" = "$numa" ] || echo "FAIL: $m: GPU $gpu NUMA $5, expected $numa"
		case "$nic" in
		*"|"*) echo "TIE $nic $2 $3" ;;
		esac
	done > "$tmp/res"
	# Tied rails: each must be primary for as many of its GPUs as the others.
	grep '^TIE' "$tmp/res" | awk '{n = split($2, a, "|"); for (i = 1; i <= n; i++) if (a[i] == $3 || a[i] == $4) c[$2 SUBSEP a[i]]++; else c[$2 SUBSEP a[i]] += 0}
		END {for (k in c) {split(k, p, SUBSEP); if (!(p[1] in lo) || c[k] < lo[p[1]]) lo[p[1]] = c[k]; if (c[k] > hi[p[1]]) hi[p[1]] = c[k]}
		     for (t in lo) if (hi[t] - lo[t] > 1) print "FAIL: tie " t " not shared evenly"}' >> "$tmp/res"
	# CPU sets: disjoint across ranks of known locality.
	jq -r '.ranks[] | select(.mems != null) | .cpus' "$tmp/plan.json" | tr ',' '\n' |
		awk -F- '{hi = NF > 1 ? $2 : $1; for (c = $1; c <= hi; c++) if (seen[c]++) {print "FAIL: CPU " c " in two ranks"; exit}}' >> "$tmp/res"
	# CPU sets: inside the GPU's own NUMA node (its locality in topo).
	"$RAILBIND" topo --json -i "$f" > "$tmp/topo.json" 2>/dev/null
	jq -r --slurpfile t "$tmp/topo.json" '.ranks[] | select(.mems != null) |
		.gpu.pci as $g | [$g, .cpus, ($t[0].gpus[] | select(.pci == $g) | .cpus)] |
		@tsv' "$tmp/plan.json" |
	awk -F'\t' 'function expand(s, set,   n, i, a, r) {n = split(s, a, ",");
			for (i = 1; i <= n; i++) {split(a[i], r, "-"); if (!(2 in r)) r[2] = r[1];
				for (c = r[1]; c <= r[2]; c++) set[c] = 1; delete r}}
		{delete mine; delete node; expand($2, mine); expand($3, node);
		 for (c in mine) if (!(c in node)) {print "FAIL: GPU " $1 " has CPU " c " outside its NUMA node " $3; break}}' >> "$tmp/res"
	if grep -q FAIL "$tmp/res"; then
		grep FAIL "$tmp/res" | sed "s|^FAIL: |FAIL: $m: |"
		fail=$((fail + 1))
	else
		pass=$((pass + 1))
	fi
done < "$tmp/machines"

echo "corpus: $pass passed, $fail failed"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
