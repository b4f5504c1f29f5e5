#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# railbind slurm-gres and the audit's slurm-gres check on the alt-numbering
# fixture (OS CPUs dealt alternately across two sockets of four cores): the
# expected lines are read off the fixture's description, not the code.
# Needs RAILBIND, FIXTURE (alt-numbering.xml); with RBGEN and STUBS (the
# NVML stand-in's directory) also File= and Links= from NVML; with
# TOPOLOGIES (../shared/topologies) --nics on a recorded sysfs tree. No root.
set -u
: "${RAILBIND:?}" "${FIXTURE:?}"
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; [ -z "${2:-}" ] || printf '%s\n' "$2" | head -n 12 | sed 's/^/#   /'; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

out=$("$RAILBIND" slurm-gres -i "$FIXTURE")
[ "$(printf '%s\n' "$out" | grep '^Name=' | cut -f1)" = "Name=gpu File=/dev/nvidia0 Cores=0-3
Name=gpu File=/dev/nvidia1 Cores=4-7" ] && ok "slurm-gres: Core L# 0-3 and 4-7, not the OS CPUs 0,2,4,6 and 1,3,5,7" ||
	bad "slurm-gres: Core L# 0-3 and 4-7" "$out"
"$RAILBIND" slurm-gres -i "$FIXTURE" --numa | grep -q '^# slurm.conf needs SlurmdParameters=numa_node_as_socket' &&
	ok "slurm-gres --numa names numa_node_as_socket" || bad "slurm-gres --numa names numa_node_as_socket"
"$RAILBIND" slurm-gres -i "$FIXTURE" --numa --l3 >/dev/null 2>&1
[ $? -eq 2 ] && ok "--numa --l3: usage error (2)" || bad "--numa --l3: usage error (2)"

# audit NAME GRES-TEXT: slurm-gres's severity on it into $sev, remedy in $remedy.
audit() {
	printf '%s\n' "$2" >"$tmp/$1.conf"
	printf 'slurm-gres-conf = %s\n' "$tmp/$1.conf" >"$tmp/$1.rb"
	"$RAILBIND" audit -i "$FIXTURE" -c "$tmp/$1.rb" --json >"$tmp/$1.json"
	sev=$(jq -r '[.checks[] | select(.id == "slurm-gres") | .severity] | join(",")' "$tmp/$1.json")
	[ -n "$sev" ] || sev=undecided
	remedy=$(jq -r '.checks[] | select(.id == "slurm-gres") | .remedy // ""' "$tmp/$1.json")
}
audit right "$out"
[ "$sev" = ok ] && ok "audit: railbind's own lines pass" || bad "audit: railbind's own lines pass" "$(cat "$tmp/right.json")"
audit ranged "NodeName=alt-numbering Name=gpu File=/dev/nvidia[0-1] Cores=0-3
NodeName=other Name=gpu File=/dev/nvidia[0-7] Cores=0-63"
[ "$sev" = fail ] && ok "audit: one line for both GPUs with one socket's cores fails" || bad "audit: File=[0-1] Cores=0-3 fails" "$sev"
# What a person writes from lscpu's NUMA node0 CPU(s): 0,2,4,6 (OS CPUs).
audit oscpus "Name=gpu File=/dev/nvidia0 Cores=0,2,4,6
Name=gpu File=/dev/nvidia1 Cores=1,3,5,7"
[ "$sev" = fail ] && printf '%s\n' "$remedy" | grep -q '^Name=gpu File=/dev/nvidia0 Cores=0-3' &&
	ok "audit: Cores= written as OS CPUs fails, the remedy has Cores=0-3" || bad "audit: Cores= as OS CPUs fails" "$sev $remedy"
audit order "Name=gpu File=/dev/nvidia1 Cores=4-7
Name=gpu File=/dev/nvidia0 Cores=0-3"
[ "$sev" = fail ] && ok "audit: GPUs out of PCI order fail" || bad "audit: GPUs out of PCI order fail" "$sev"
audit absent ""
rm -f "$tmp/absent.conf"
"$RAILBIND" audit -i "$FIXTURE" -c "$tmp/absent.rb" --json >"$tmp/absent.json"
[ "$(jq -r '.checks[] | select(.id == "slurm-gres") | .severity' "$tmp/absent.json")" = ok ] &&
	ok "audit: no gres.conf: ok (Slurm binds nothing)" || bad "audit: no gres.conf: ok"
audit garbage "Name=gpu File=/dev/nvidia0 Cores=zero"
[ "$sev" = undecided ] && jq -r '.undecided[] | select(.id == "slurm-gres") | .reason' "$tmp/garbage.json" | grep -q 'line 1: Cores=zero' &&
	ok "audit: Cores=zero: undecided, naming the line" || bad "audit: Cores=zero: undecided naming the line" "$(jq -c .undecided "$tmp/garbage.json")"
# NFD: the node's rails and their rate (two, 400 Gb/s: rbgen's default).
nfd=$("$RAILBIND" audit --nfd -i "$FIXTURE")
printf '%s\n' "$nfd" | grep -qx 'railbind.rails=2' && printf '%s\n' "$nfd" | grep -qx 'railbind.rail-rate-gbps=400' &&
	ok "audit --nfd: railbind.rails=2, railbind.rail-rate-gbps=400" || bad "audit --nfd: rails and rate" "$nfd"

# File= from the device minor and Links= from NVML: the "live" node of
# gres-links.topo with the NVML stand-in (tests/gpu/nvml_stub.c).
if [ -n "${RBGEN:-}" ] && [ -n "${STUBS:-}" ]; then
	"$RBGEN" -o "$tmp/links.xml" --nvml "$tmp/links.nvml" "$(dirname "$0")/gres-links.topo" &&
		out=$(HWLOC_XMLFILE=$tmp/links.xml LD_LIBRARY_PATH=$STUBS/nvml RB_FAKE_NVML=$tmp/links.nvml \
			RB_FAKE_RSMI=/nonexistent "$RAILBIND" slurm-gres)
	want="Name=gpu File=/dev/nvidia3 Cores=0-3 Links=-1,6,0,0
Name=gpu File=/dev/nvidia2 Cores=0-3 Links=6,-1,0,0
Name=gpu File=/dev/nvidia1 Cores=4-7 Links=0,0,-1,6
Name=gpu File=/dev/nvidia0 Cores=4-7 Links=0,0,6,-1"
	[ "$(printf '%s\n' "$out" | grep '^Name=' | cut -f1)" = "$want" ] &&
		! printf '%s\n' "$out" | grep -q 'minor was not known' &&
		ok "slurm-gres: File= from the GPUs' minors, Links= from NVML" || bad "slurm-gres: File= and Links= from NVML" "$out"
fi
# --nics on a recorded sysfs tree (hwloc's tests, in ../shared/topologies):
# each RDMA device's uverbs node, read off the tree itself.
tb=${TOPOLOGIES:-}/hwloc-tests/linux/40intel64-2g2n4c+pcilocality.tar.bz2
if [ -f "$tb" ] && mkdir "$tmp/tree" && tar -xjf "$tb" -C "$tmp/tree"; then
	root=$(find "$tmp/tree" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	want=$(cd "$root/sys/class/infiniband" && for d in *; do
		printf 'Name=nic File=/dev/infiniband/%s\n' "$(ls "$d/device/infiniband_verbs")"; done)
	got=$("$RAILBIND" slurm-gres --nics --root "$root" 2>&1 | grep '^Name=nic' | cut -f1)
	[ -n "$want" ] && [ "$got" = "$want" ] && ok "slurm-gres --nics: $got" ||
		bad "slurm-gres --nics on a recorded tree" "got: $got want: $want"
else
	echo "slurm-gres --nics on a recorded tree: SKIPPED ($tb absent)"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
