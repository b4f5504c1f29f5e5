#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Lossless RoCE, black box: DCB replies written from the kernel's dcbnl
# layouts (mkdcb), made snapshot attributes by the library's own parser
# (dcbplant), planted on each rail of the audit-ok node, and judged by
# railbind audit's roce-lossless and pause-storm with the ranks'
# environment and railbind.conf in --json, text, --prom and --nfd; a VF, a
# driver without DCB, a malformed attribute, an NCCL file; then this
# host's own netdevs, which have no DCB. Needs RAILBIND, BUILD, MKDCB,
# DCBPLANT, jq.
set -u
: "${RAILBIND:?}" "${BUILD:?}" "${MKDCB:?}" "${DCBPLANT:?}"
FIX=$BUILD/fixtures
pass=0
fail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/railbind-dcb.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# Every run starts from an environment without the variables judged.
run() {
	env -u NCCL_IB_TC -u NCCL_IB_SL -u NCCL_IB_FIFO_TC -u UCX_IB_TRAFFIC_CLASS -u UCX_IB_SL \
		"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}
[ -f "$FIX/audit-ok.xml" ] || { echo "dcb: $FIX/audit-ok.xml missing; run make fixtures"; exit 1; }

# ECN trees: MLNX_OFED's ecn/roce_np|roce_rp/enable/P files, on for PRIOS.
ecn_tree() { # DIR PRIOS
	for pt in roce_np roce_rp; do
		mkdir -p "$1/sys/class/net/eth0/ecn/$pt/enable"
		for p in 0 1 2 3 4 5 6 7; do
			case ",$2," in *",$p,"*) v=1 ;; *) v=0 ;; esac
			echo $v >"$1/sys/class/net/eth0/ecn/$pt/enable/$p"
		done
	done
}
ecn_tree "$tmp/ecn3" 3
ecn_tree "$tmp/ecn4" 4

# plant NAME DCBPLANT-ARGS...: the attributes on every rail of audit-ok.
plant() {
	name=$1; shift
	"$DCBPLANT" "$@" >"$tmp/$name.info" || { bad "dcbplant $name $*"; return; }
	awk -v info="$tmp/$name.info" '
		{ print }
		/<object type="PCIDev"[^>]*pci_busid="0000:(05|15|85|95):00.0"/ {
			while ((getline l < info) > 0) print l
			close(info)
		}' "$FIX/audit-ok.xml" >"$tmp/$name.xml"
}
mk() { n=$1; shift; "$MKDCB" "$tmp/$n.dcb" "$@" || bad "mkdcb $n"; }
conf() { printf '%b' "$2" >"$tmp/$1.conf"; }

mk healthy pfc=3 app=26:3,48:6 tx=0,0,0,100,0,0,0,0 rx=0,0,0,50,0,0,0,0
mk healthy2 pfc=3 app=26:3,48:6 tx=0,0,0,130,0,0,0,0 rx=0,0,0,60,0,0,0,0
mk pfc4 pfc=4 app=26:3
mk pcp pfc=3 app=none
mk std pfc=3 app=std
mk storm2 pfc=3 app=26:3,48:6 tx=0,0,0,5100,0,0,0,0 rx=0,0,0,50,0,0,0,0
mk nodcb err=95
conf fabric 'roce-priority = 3\nroce-trust = dscp\n'
conf lenient 'pause-frames-per-second = 10000\n'

plant healthy "$tmp/healthy.dcb" second="$tmp/healthy2.dcb" ms=1000 ecn="$tmp/ecn3"
plant pfc4 "$tmp/pfc4.dcb" second="$tmp/pfc4.dcb" ms=1000
plant pcp "$tmp/pcp.dcb"
plant std "$tmp/std.dcb" second="$tmp/std.dcb" ms=500
plant storm "$tmp/healthy.dcb" second="$tmp/storm2.dcb" ms=1000
plant ecnoff "$tmp/healthy.dcb" ecn="$tmp/ecn4"
plant nodcb "$tmp/nodcb.dcb"
mkdir -p "$tmp/vf/sys/class/net/eth0/device/physfn"
plant vf vf="$tmp/vf"

# Healthy: NCCL_IB_TC=106 (DSCP 26) -> priority 3, PFC and ECN on there, no storm.
run env NCCL_IB_TC=106 "$RAILBIND" audit -c "$tmp/fabric.conf" --json -i "$tmp/healthy.xml"
if [ "$rc" -eq 0 ] && [ "$(jq -r '.summary["roce-lossless"]' "$tmp/out")" = ok ] &&
    [ "$(jq -r '.summary["pause-storm"]' "$tmp/out")" = ok ] &&
    jq -e '[.checks[] | select(.id == "pause-storm" and (.message | contains("highest PFC rate 30/s over 4 rails (limit 1000/s, railbind'"'"'s default")))] | length == 1' "$tmp/out" >/dev/null
then ok; else bad "healthy: rc=$rc $(jq -c '[.checks[] | select(.id == "roce-lossless" or .id == "pause-storm")], .undecided' "$tmp/out")"; fi

# name  conf  env  check  exit  message
while read -r name cf envs id code msg; do
	c=; [ "$cf" = - ] || c="-c $tmp/$cf.conf"
	e=; [ "$envs" = - ] || e=$(echo "$envs" | tr ';' ' ')
	# shellcheck disable=SC2086
	run env $e "$RAILBIND" audit $c --json -i "$tmp/$name.xml"
	if [ "$rc" -eq "$code" ] && [ "$(jq -r --arg id "$id" '.summary[$id]' "$tmp/out")" = fail ] &&
	    jq -e --arg id "$id" --arg m "$msg" '[.checks[] | select(.id == $id and .subject == "mlx5_0" and (.message | contains($m)))] | length == 1' "$tmp/out" >/dev/null
	then ok; else bad "$name ($envs): rc=$rc $(jq -c --arg id "$id" '[.checks[] | select(.id == $id)][0].message' "$tmp/out")"; fi
done <<'EOF2'
pfc4 - NCCL_IB_TC=106 roce-lossless 2 NCCL (NCCL_IB_TC=106 (DSCP 26)): lands on priority 3 (trust dscp), where PFC is off (PFC on: 4)
pcp - NCCL_IB_TC=106 roce-lossless 2 the NIC trusts PCP, so the DSCP marking is ignored and the traffic lands on priority 0
pcp fabric NCCL_IB_TC=106 roce-lossless 2 the NIC trusts PCP (its APP table has no DSCP entry) while railbind.conf says roce-trust = dscp
std fabric - roce-lossless 2 NCCL (NCCL_IB_TC unset: traffic class 0 (DSCP 0)): lands on priority 0 (trust dscp), not the fabric's lossless priority 3
std - NCCL_IB_TC=106;UCX_IB_TRAFFIC_CLASS=160 roce-lossless 2 UCX (UCX_IB_TRAFFIC_CLASS=160 (DSCP 40)): lands on priority 5 (trust dscp), where PFC is off
healthy fabric NCCL_IB_TC=106;NCCL_IB_FIFO_TC=192 roce-lossless 2 NCCL's CTS FIFO (NCCL_IB_FIFO_TC=192 (DSCP 48)): lands on priority 6 (trust dscp), not the fabric's lossless priority 3
ecnoff - NCCL_IB_TC=106 roce-lossless 2 lands on priority 3 with PFC on, but ECN (DCQCN) is off there (roce_np, roce_rp)
storm - NCCL_IB_TC=106 pause-storm 2 priority 3: 5000 PFC frames/s sent (this host cannot keep up: it pauses the switch) over 1000 ms, limit 1000/s (railbind's default; railbind.conf pause-frames-per-second)
EOF2

# What the environment does not set, NCCL takes from /etc/nccl.conf: so does the audit (--root).
mkdir -p "$tmp/r/etc"
printf '# the site\nNCCL_IB_TC = 106\n' >"$tmp/r/etc/nccl.conf"
run "$RAILBIND" audit --root "$tmp/r" --json -i "$tmp/pfc4.xml"
if [ "$rc" -eq 2 ] && jq -e '[.checks[] | select(.id == "roce-lossless" and (.message | contains("NCCL (NCCL_IB_TC=106 (DSCP 26) from /etc/nccl.conf): lands on priority 3")))] | length == 4' "$tmp/out" >/dev/null
then ok; else bad "nccl.conf: rc=$rc $(jq -c '[.checks[] | select(.id == "roce-lossless")][0].message' "$tmp/out")"; fi
run env NCCL_IB_TC=104 "$RAILBIND" audit --root "$tmp/r" --json -i "$tmp/pfc4.xml"
if jq -e '[.checks[] | select(.id == "roce-lossless" and (.message | contains("NCCL (NCCL_IB_TC=104 (DSCP 26)): lands")))] | length == 4' "$tmp/out" >/dev/null
then ok; else bad "environment over nccl.conf: $(jq -c '[.checks[] | select(.id == "roce-lossless")][0].message' "$tmp/out")"; fi

# The same storm under a higher limit from railbind.conf: quiet, and says whose limit.
run env NCCL_IB_TC=106 "$RAILBIND" audit -c "$tmp/lenient.conf" --json -i "$tmp/storm.xml"
if [ "$(jq -r '.summary["pause-storm"]' "$tmp/out")" = ok ] &&
    jq -e '[.checks[] | select(.id == "pause-storm" and (.message | contains("highest PFC rate 5000/s over 4 rails (limit 10000/s, railbind.conf pause-frames-per-second)")))] | length == 1' "$tmp/out" >/dev/null
then ok; else bad "lenient storm: $(jq -c '[.checks[] | select(.id == "pause-storm")]' "$tmp/out")"; fi

# One sample only (no second reading): pause-storm undecided, roce-lossless judged.
run env NCCL_IB_TC=106 "$RAILBIND" audit --json -i "$tmp/pcp.xml"
if [ "$(jq -r '.undecided[] | select(.id == "pause-storm") | .reason' "$tmp/out")" = "all 4 rails: one sample of the pause counters only" ]
then ok; else bad "one sample: $(jq -c .undecided "$tmp/out")"; fi

# A VF and a driver without DCB: undecided with the reason, never a verdict.
for v in "vf:an SR-IOV virtual function: undecided, configured on the host's PF" \
    "nodcb:the driver has no DCB (no dcbnl ops"; do
	name=${v%%:*} want=${v#*:}
	run env NCCL_IB_TC=106 "$RAILBIND" audit --json -i "$tmp/$name.xml"
	if [ "$(jq -r '.summary["roce-lossless"]' "$tmp/out")" = unknown ] &&
	    jq -e --arg m "all 4 rails: $want" '[.undecided[] | select(.id == "roce-lossless" and (.reason | startswith($m)))] | length == 1' "$tmp/out" >/dev/null &&
	    [ "$(jq -r '.summary["pause-storm"]' "$tmp/out")" = unknown ]
	then ok; else bad "$name: $(jq -c .undecided "$tmp/out")"; fi
done

# A malformed attribute: undecided, naming it.
sed 's|name="RailbindDcbPfcEnable" value="3"|name="RailbindDcbPfcEnable" value="9"|' "$tmp/healthy.xml" >"$tmp/malformed.xml"
run "$RAILBIND" audit --json -i "$tmp/malformed.xml"
if jq -e '[.undecided[] | select(.id == "roce-lossless" and (.reason | contains("malformed RailbindDcbPfcEnable attribute")))] | length == 1' "$tmp/out" >/dev/null
then ok; else bad "malformed: $(jq -c .undecided "$tmp/out")"; fi

# An old snapshot (no attributes): undecided, saying why.
run "$RAILBIND" audit --json -i "$FIX/audit-ok.xml"
if jq -e '[.undecided[] | select(.id == "roce-lossless" and (.reason | contains("no DCB readings")))] | length == 1' "$tmp/out" >/dev/null
then ok; else bad "old snapshot: $(jq -c .undecided "$tmp/out")"; fi

# Prometheus, NFD and text.
run env NCCL_IB_TC=106 "$RAILBIND" audit --prom -i "$tmp/pfc4.xml"
if [ "$rc" -eq 2 ] && grep -qx 'railbind_audit_check_status{check="roce-lossless"} 2' "$tmp/out" &&
    grep -qx 'railbind_audit_check_status{check="pause-storm"} 0' "$tmp/out"
then ok; else bad "--prom: rc=$rc $(grep -e roce -e pause "$tmp/out")"; fi
run env NCCL_IB_TC=106 "$RAILBIND" audit --prom -i "$tmp/storm.xml"
if [ "$rc" -eq 2 ] &&
    grep -qx 'railbind_pfc_frames_total{nic="mlx5_0",nic_pci="0000:05:00.0",netdev="eth0",priority="3",direction="sent"} 5100' "$tmp/out" &&
    grep -qx 'railbind_pfc_frames_total{nic="mlx5_3",nic_pci="0000:95:00.0",netdev="eth0",priority="3",direction="received"} 50' "$tmp/out" &&
    grep -qx 'railbind_pfc_enabled{nic="mlx5_1",nic_pci="0000:15:00.0",netdev="eth0",priority="3"} 1' "$tmp/out" &&
    grep -qx 'railbind_pfc_enabled{nic="mlx5_1",nic_pci="0000:15:00.0",netdev="eth0",priority="4"} 0' "$tmp/out" &&
    grep -qx 'railbind_audit_check_status{check="pause-storm"} 2' "$tmp/out"
then ok; else bad "--prom counters: rc=$rc $(grep pfc_ "$tmp/out" | head -3)"; fi
run env NCCL_IB_TC=106 "$RAILBIND" audit --json -i "$tmp/storm.xml"
if jq -e '(.dcb | length) == 4 and .dcb[0].trust == "dscp" and .dcb[0].pfc_enabled == [3] and
    .dcb[0].dscp_priority == {"26": 3, "48": 6} and .dcb[0].pfc_frames_sent[3] == 5100 and .dcb[0].ecn_np == null' "$tmp/out" >/dev/null
then ok; else bad "--json dcb: $(jq -c '.dcb[0]' "$tmp/out")"; fi
run env NCCL_IB_TC=106 "$RAILBIND" audit --nfd -i "$tmp/storm.xml"
if [ "$rc" -eq 2 ] && grep -qx 'railbind.audit.pause-storm=fail' "$tmp/out" &&
    grep -qx 'railbind.audit.roce-lossless=ok' "$tmp/out"
then ok; else bad "--nfd: rc=$rc $(grep -e roce -e pause "$tmp/out")"; fi
run env NCCL_IB_TC=106 "$RAILBIND" audit -i "$tmp/pfc4.xml"
if [ "$rc" -eq 2 ] && grep -q '\[roce-lossless\] rail mlx5_0 (eth0): NCCL' "$tmp/out" &&
    grep -q 'dcb pfc set dev NETDEV' "$tmp/out"
then ok; else bad "text: rc=$rc $(grep roce "$tmp/out")"; fi

# The picture: the pairs on rails that fail roce-lossless in red, naming it; none on healthy.
run env NCCL_IB_TC=106 "$RAILBIND" topo -i "$tmp/pfc4.xml" --svg "$tmp/pfc4.svg"
if [ "$rc" -eq 0 ] && [ "$(grep -c 'FAIL: roce-lossless' "$tmp/pfc4.svg")" = 4 ]; then ok
else bad "svg: rc=$rc $(grep -c FAIL "$tmp/pfc4.svg" 2>&1)"; fi
run env NCCL_IB_TC=106 "$RAILBIND" topo -c "$tmp/fabric.conf" -i "$tmp/healthy.xml" --svg "$tmp/healthy.svg"
if [ "$rc" -eq 0 ] && ! grep -q 'FAIL: ' "$tmp/healthy.svg"; then ok
else bad "svg healthy: rc=$rc $(grep -o 'FAIL: [a-z-]*' "$tmp/healthy.svg" | head -2)"; fi

# railbind.conf: the new keys are checked, naming file and line.
conf badprio '# fabric\nroce-priority = 8\n'
run "$RAILBIND" audit -c "$tmp/badprio.conf" --json -i "$tmp/healthy.xml"
if [ "$rc" -ne 0 ] && grep -q "badprio.conf:2: expected roce-priority = the fabric's lossless priority, 0 to 7" "$tmp/err"
then ok; else bad "roce-priority = 8: rc=$rc $(cat "$tmp/err")"; fi
conf badtrust 'roce-trust = both\n'
run "$RAILBIND" audit -c "$tmp/badtrust.conf" --json -i "$tmp/healthy.xml"
if [ "$rc" -ne 0 ] && grep -q "badtrust.conf:1: expected roce-trust = dscp|pcp" "$tmp/err"
then ok; else bad "roce-trust = both: rc=$rc $(cat "$tmp/err")"; fi

# railbind verify: a running rank whose NCCL_IB_TC lands on a priority
# without PFC is named; one on the lossless priority is not. Stand-in ranks
# (tests/verify/rank.c) holding a GPU and a rail of a --root tree
# (tests/verify/mkroot.sh), judged against verify8 with PFC on 3 planted.
if [ -x "${RANK:-}" ] && [ -f "${VERIFY8:-}" ]; then
	mk verify pfc=3 app=26:3,34:4
	"$DCBPLANT" "$tmp/verify.dcb" >"$tmp/v.info"
	awk -v info="$tmp/v.info" '
		{ print }
		/<object type="PCIDev"[^>]*pci_busid="0000:(06|07|16|17|26|27|36|37|84):00.0"/ {
			while ((getline l < info) > 0) print l
			close(info)
		}' "$VERIFY8" >"$tmp/v8.xml"
	root=$tmp/root
	sh "$TOPDIR/tests/verify/mkroot.sh" "$root" <<'EOT'
gpu 0 0000:04:00.0
gpu 1 0000:05:00.0
nic 0 mlx5_0 0000:06:00.0
nic 1 mlx5_1 0000:07:00.0
EOT
	D=$root/dev
	pids=
	startrank() { # VAR ENV... + ARGS
		v=$1; shift
		pre=
		while [ "$1" != + ]; do pre="$pre $1"; shift; done
		shift
		rm -f "$tmp/ready.$v"
		# shellcheck disable=SC2086
		env -u NCCL_IB_TC $pre "$RANK" "$@" --ready "$tmp/ready.$v" >/dev/null 2>&1 &
		i=0
		while [ ! -s "$tmp/ready.$v" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
		eval "$v=\$(cat "$tmp/ready.$v")"
		pids="$pids $(cat "$tmp/ready.$v")"
	}
	startrank good LOCAL_RANK=0 NCCL_IB_TC=106 + --open "$D/nvidia0" --open "$D/infiniband/uverbs0"
	startrank wrong LOCAL_RANK=1 NCCL_IB_TC=138 + --open "$D/nvidia1" --open "$D/infiniband/uverbs1"
	startrank unset LOCAL_RANK=0 + --open "$D/nvidia0" --open "$D/infiniband/uverbs0"
	"$RAILBIND" verify --no-broker --root "$root" --json -i "$tmp/v8.xml" --pid "$good" "$wrong" "$unset" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	f() { jq -c --argjson p "$1" '[.processes[] | select(.pid == $p) | .findings[] | select(.id == "roce-lossless")]' "$tmp/out"; }
	if [ "$rc" -eq 2 ] && [ "$(f "$good")" = '[]' ] &&
	    f "$wrong" | jq -e '.[0].severity == "fail" and (.[0].message | contains("on mlx5_1: NCCL (NCCL_IB_TC=138 (DSCP 34)): lands on priority 4 (trust dscp), where PFC is off (PFC on: 3)")) and
		(.[0].message | contains("invisible to verify")) and .[0].evidence.rails[0].priority == 4' >/dev/null &&
	    f "$unset" | jq -e '.[0].severity == "warn" and (.[0].message | contains("on mlx5_0: NCCL (NCCL_IB_TC unset: traffic class 0 (DSCP 0)): DSCP 0 has no entry"))' >/dev/null &&
	    [ "$(jq -r '.summary["roce-lossless"]' "$tmp/out")" = fail ]
	then ok; else bad "verify: rc=$rc $(f "$good") $(f "$wrong") $(f "$unset") $(head -c 300 "$tmp/err")"; fi
	# What the rank's environment does not set, NCCL inside it takes from /etc/nccl.conf.
	mkdir -p "$root/etc"
	echo 'NCCL_IB_TC=138' >"$root/etc/nccl.conf"
	"$RAILBIND" verify --no-broker --root "$root" --json -i "$tmp/v8.xml" --pid "$good" "$unset" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq 2 ] && [ "$(f "$good")" = '[]' ] &&
	    f "$unset" | jq -e '.[0].severity == "fail" and (.[0].message | contains("on mlx5_0: NCCL (NCCL_IB_TC=138 (DSCP 34) from /etc/nccl.conf): lands on priority 4"))' >/dev/null
	then ok; else bad "verify, nccl.conf: rc=$rc $(f "$good") $(f "$unset")"; fi
	for p in $pids; do kill "$p" 2>/dev/null; done
else
	echo "dcb: no RANK or VERIFY8: the verify part skipped"
fi

# This host: each netdev asked through DCB netlink, unprivileged; one
# without DCB ops says so. An Ethernet PCI netdev made a rail: the audit
# says undecided with that reason.
live=0
for d in /sys/class/net/*; do
	[ -e "$d" ] || continue
	n=${d##*/}
	r=$("$DCBPLANT" live "$n")
	case $r in
	ok) ok ;;
	"the driver has no DCB"*) ok; live=1 ;;
	*) bad "live $n: $r" ;;
	esac
done
nd=
for d in /sys/class/net/*; do
	[ -e "$d/device" ] && [ "$(cat "$d/type" 2>/dev/null)" = 1 ] && [ -z "$nd" ] &&
		[ "$("$DCBPLANT" live "${d##*/}")" != ok ] && nd=${d##*/}
done
if [ -n "$nd" ]; then
	conf eth "ethernet-rails = yes\ninclude-nic = $nd\n"
	run "$RAILBIND" audit -c "$tmp/eth.conf" --json
	if jq -e --arg m "$nd: the driver has no DCB" '[.undecided[] | select(.id == "roce-lossless" and (.reason | contains($m)))] | length == 1' "$tmp/out" >/dev/null
	then ok; else bad "live audit ($nd): $(jq -c .undecided "$tmp/out")"; fi
	# A snapshot keeps the reason, and an offline audit of it says the same.
	"$RAILBIND" snapshot -o "$tmp/snap.xml" >/dev/null 2>&1
	run "$RAILBIND" audit -c "$tmp/eth.conf" --json -i "$tmp/snap.xml"
	if grep -q 'name="RailbindDcbUndecided" value="the driver has no DCB' "$tmp/snap.xml" &&
	    jq -e --arg m "$nd: the driver has no DCB" '[.undecided[] | select(.id == "roce-lossless" and (.reason | contains($m)))] | length == 1' "$tmp/out" >/dev/null
	then ok; else bad "live snapshot ($nd): $(jq -c .undecided "$tmp/out")"; fi
else
	echo "dcb: no PCI Ethernet netdev without DCB on this host: live audit skipped"
fi
[ "$live" = 1 ] || echo "dcb: no netdev without DCB here: the live reason not seen"

echo "check-dcb: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
