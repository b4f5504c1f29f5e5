#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# railbind audit's transceiver check, black box: snapshots of the audit-ok
# node with each rail's module readings planted as discovery records them
# (RailbindXcvr* on the NIC's PCI object; the values here are written by
# hand), in JSON, text, Prometheus and NFD, with the exit codes NHC acts on
# and NHC's check itself;
# malformed attributes; then this host: a snapshot records, for each of its
# PCI netdevs, its module or why none was read (root: "no module EEPROM" on
# a virtual NIC; unprivileged: "needs CAP_NET_ADMIN"), skipped where the
# host has none. Needs RAILBIND, BUILD, jq.
set -u
: "${RAILBIND:?set RAILBIND to the railbind binary}"
: "${BUILD:?set BUILD to the build directory}"
FIX=$BUILD/fixtures
pass=0
fail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/railbind-optics.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
run() {
	"$RAILBIND" audit "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}
[ -f "$FIX/audit-ok.xml" ] || { echo "optics: $FIX/audit-ok.xml missing; run make fixtures"; exit 1; }

# plant OUT RX0 TEMP0 [WHEN HISTORY]: a QSFP28 on every rail (4 lanes at
# 0.5 mW, 40 C), the first rail's lane RX powers and temperature replaced by
# RX0 and TEMP0, and given WHEN (RailbindXcvrTime) and the earlier
# temperatures HISTORY (RailbindXcvrTempHistory), as root-run reads record them.
plant() {
	awk -v rx0="$2" -v t0="$3" -v when="${4:-}" -v hist="${5:-}" '
		{ print }
		/<object type="PCIDev"[^>]*pci_busid="0000:(05|15|85|95):00.0"/ {
			first = index($0, "0000:05:00.0") > 0
			printf "<info name=\"RailbindXcvrNetdev\" value=\"eth%d\"/>\n", n++
			print "<info name=\"RailbindXcvrType\" value=\"sff8636\"/>"
			print "<info name=\"RailbindXcvrMemory\" value=\"paged\"/>"
			print "<info name=\"RailbindXcvrLanes\" value=\"4\"/>"
			printf "<info name=\"RailbindXcvrTemp\" value=\"%s\"/>\n", first ? t0 : "40.0000"
			print "<info name=\"RailbindXcvrTempThresholds\" value=\"75,-5,70,0\"/>"
			printf "<info name=\"RailbindXcvrRxPower\" value=\"%s\"/>\n", first ? rx0 : "0.5,0.5,0.5,0.5"
			print "<info name=\"RailbindXcvrRxPowerThresholds\" value=\"2,0.05,1.5,0.1\"/>"
			print "<info name=\"RailbindXcvrBias\" value=\"7,7,7,7\"/>"
			if (first && when != "")
				printf "<info name=\"RailbindXcvrTime\" value=\"%s\"/>\n", when
			if (first && hist != "")
				printf "<info name=\"RailbindXcvrTempHistory\" value=\"%s\"/>\n", hist
		}' "$FIX/audit-ok.xml" >"$tmp/$1.xml"
}

plant healthy 0.5,0.5,0.5,0.5 40.0000
run --json -i "$tmp/healthy.xml"
if [ "$rc" -eq 0 ] && [ "$(jq -r .summary.transceiver "$tmp/out")" = ok ] &&
    [ "$(jq '.optics | length' "$tmp/out")" = 4 ] &&
    [ "$(jq -c '.optics[0].lanes[2]' "$tmp/out")" = '{"lane":3,"rx_power_mw":0.5,"tx_power_mw":null,"bias_ma":7}' ] &&
    [ "$(jq '[.checks[] | select(.id == "transceiver" and .severity != "ok")] | length' "$tmp/out")" = 0 ]
then ok; else bad "healthy: rc=$rc $(jq -c .summary.transceiver "$tmp/out")"; fi

# name  RX powers  temperature  severity  exit  message
while read -r name rx temp sev code msg; do
	plant "$name" "$rx" "$temp"
	run --json -i "$tmp/$name.xml"
	if [ "$rc" -eq "$code" ] && [ "$(jq -r .summary.transceiver "$tmp/out")" = "$sev" ] &&
	    jq -e --arg m "$msg" '[.checks[] | select(.id == "transceiver" and .subject == "mlx5_0" and (.message | contains($m)))] | length == 1' "$tmp/out" >/dev/null
	then ok; else bad "$name: rc=$rc $(jq -c '[.checks[] | select(.id == "transceiver")]' "$tmp/out")"; fi
done <<'EOF'
rx-low-warning 0.5,0.08,0.5,0.5 40 warn 1 lane 2 RX power 0.08 mW under the module's low warning 0.1
rx-low-alarm 0.5,0.5,0.5,0.04 40 fail 2 lane 4 RX power 0.04 mW under the module's low alarm 0.05
dark-lane 0.5,0.5,0,0.5 40 fail 2 lane 3 dark (0 mW received)
hot 0.5,0.5,0.5,0.5 76.5 fail 2 temperature 76.5 C over the module's high alarm 75
warm 0.5,0.5,0.5,0.5 71 warn 1 temperature 71 C over the module's high warning 70
EOF

# A temperature rising across samples (planted: three hourly reads before this one).
T=1700010800
plant rising 0.5,0.5,0.5,0.5 58 $T 1700000000:40.00,1700003600:46.00,1700007200:52.00
run --json -i "$tmp/rising.xml"
if [ "$rc" -eq 1 ] && [ "$(jq -r .summary.transceiver "$tmp/out")" = warn ] &&
    jq -e '[.checks[] | select(.id == "transceiver" and .subject == "mlx5_0" and .severity == "warn" and (.message | contains("temperature 58 C rising 6.0 C/h over 3.0 h (more than transceiver-temp-rise-per-hour 5): over the module'"'"'s high warning 70 C in 2.0 h at this rate")))] | length == 1' "$tmp/out" >/dev/null &&
    [ "$(jq -c '.optics[0] | [.read_at, .temperature_samples, .temperature_rise_c_per_hour]' "$tmp/out")" = "[$T,4,6]" ] &&
    [ "$(jq -c '.optics[1] | [.read_at, .temperature_samples, .temperature_rise_c_per_hour]' "$tmp/out")" = '[null,1,null]' ]
then ok; else bad "rising: rc=$rc $(jq -c '[.checks[] | select(.id == "transceiver")], .optics[0]' "$tmp/out")"; fi
# Quiet: stable; rising under the limit; samples older than a day; too close
# together; the limit raised or turned off in railbind.conf.
mkdir -p "$tmp/conf"
printf 'transceiver-temp-rise-per-hour = 10\n' >"$tmp/conf/ten.conf"
printf 'transceiver-temp-rise-per-hour = 0\n' >"$tmp/conf/off.conf"
while read -r name temp hist conf; do
	plant "$name" 0.5,0.5,0.5,0.5 "$temp" $T "$hist"
	if [ "$conf" = - ]; then run --json -i "$tmp/$name.xml"
	else run --config "$tmp/conf/$conf" --json -i "$tmp/$name.xml"; fi
	if [ "$rc" -eq 0 ] && [ "$(jq -r .summary.transceiver "$tmp/out")" = ok ]; then ok
	else bad "$name: rc=$rc $(jq -c '[.checks[] | select(.id == "transceiver")], .optics[0]' "$tmp/out")"; fi
done <<EOF
stable 40.25 1700000000:40.00,1700003600:40.50,1700007200:40.00 -
slow 52 1700000000:40.00,1700003600:44.00,1700007200:48.00 -
stale 58 1699900000:20.00,1699910000:30.00 -
close 58 1700010500:40.00 -
limit-ten 58 1700000000:40.00,1700003600:46.00,1700007200:52.00 ten.conf
limit-off 58 1700000000:40.00,1700003600:46.00,1700007200:52.00 off.conf
EOF
# Already over the warning: the threshold says so, the trend adds nothing.
plant hot-rising 0.5,0.5,0.5,0.5 71 $T 1700000000:40.00,1700007200:60.00
run --json -i "$tmp/hot-rising.xml"
if [ "$rc" -eq 1 ] && [ "$(jq -r '.checks[] | select(.id == "transceiver" and .subject == "mlx5_0") | .message | contains("rising")' "$tmp/out")" = false ]
then ok; else bad "hot-rising: rc=$rc $(jq -c '[.checks[] | select(.id == "transceiver")]' "$tmp/out")"; fi
# A history that does not parse, or is not before the read: bad input, one line.
while read -r name hist; do
	plant "$name" 0.5,0.5,0.5,0.5 40 $T "$hist"
	run --json -i "$tmp/$name.xml"
	if [ "$rc" -eq 3 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
	    grep -q "RailbindXcvrTempHistory=\"$hist\", expected up to 16 EPOCH:CELSIUS, oldest first, before RailbindXcvrTime" "$tmp/err"
	then ok; else bad "$name: rc=$rc $(cat "$tmp/err")"; fi
done <<'EOF'
hist-garbage 1700000000:forty
hist-after 1700020000:40.00
hist-order 1700007200:40.00,1700000000:41.00
EOF

# Prometheus: per-lane gauges and thresholds; NFD: the check's state; text: the finding.
run --prom -i "$tmp/dark-lane.xml"
if [ "$rc" -eq 2 ] &&
    grep -qx 'railbind_transceiver_rx_power_mw{nic="mlx5_0",nic_pci="0000:05:00.0",netdev="eth0",lane="3"} 0' "$tmp/out" &&
    grep -qx 'railbind_transceiver_rx_power_mw{nic="mlx5_3",nic_pci="0000:95:00.0",netdev="eth3",lane="4"} 0.5' "$tmp/out" &&
    grep -qx 'railbind_transceiver_temperature_celsius{nic="mlx5_1",nic_pci="0000:15:00.0",netdev="eth1"} 40' "$tmp/out" &&
    grep -qx 'railbind_transceiver_threshold{nic="mlx5_0",nic_pci="0000:05:00.0",netdev="eth0",quantity="rx_power_mw",level="low_warn"} 0.1' "$tmp/out" &&
    grep -qx 'railbind_audit_check_status{check="transceiver"} 2' "$tmp/out" &&
    ! grep -q 'tx_power_mw{' "$tmp/out"
then ok; else bad "--prom: rc=$rc $(grep transceiver "$tmp/out" | head -3)"; fi
run --nfd -i "$tmp/rx-low-warning.xml"
if [ "$rc" -eq 1 ] && grep -qx 'railbind.audit.transceiver=warn' "$tmp/out"; then ok
else bad "--nfd: rc=$rc"; fi
run -i "$tmp/hot.xml"
if [ "$rc" -eq 2 ] && grep -q '\[transceiver\] rail mlx5_0 transceiver (eth0, sff8636): temperature 76.5 C' "$tmp/out" &&
    grep -q 'fix: drain the node' "$tmp/out"; then ok
else bad "text: rc=$rc"; fi

# NHC (contrib/nhc/railbind.nhc, die stubbed): a rail at alarm drains the node, naming the check.
top=$(cd "$(dirname "$0")/../.." && pwd)
if command -v bash >/dev/null; then
	died=$(RAILBIND=$RAILBIND bash -c 'die() { echo "$2"; }; log() { :; }; . "$1"; check_railbind_audit --input "$2"' \
		_ "$top/contrib/nhc/railbind.nhc" "$tmp/dark-lane.xml")
	case $died in *"transceiver=fail"*) ok ;; *) bad "NHC on a dark lane: died=$died" ;; esac
	died=$(RAILBIND=$RAILBIND bash -c 'die() { echo "$2"; }; log() { :; }; . "$1"; check_railbind_audit --input "$2"' \
		_ "$top/contrib/nhc/railbind.nhc" "$tmp/warm.xml")
	if [ -z "$died" ]; then ok; else bad "NHC on a warning: died=$died"; fi
fi

# A hand-edited attribute is bad input, as every Railbind* value: exit 3, one line naming it.
sed '0,/name="RailbindXcvrRxPower" value="0.5,0.5,0.5,0.5"/s||name="RailbindXcvrRxPower" value="0.5,0.5"|' \
	"$tmp/healthy.xml" >"$tmp/short.xml"
run --json -i "$tmp/short.xml"
if [ "$rc" -eq 3 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
    grep -q 'RailbindXcvrRxPower="0.5,0.5", expected 4 comma-separated numbers on 0000:05:00.0' "$tmp/err"
then ok; else bad "malformed RailbindXcvrRxPower: rc=$rc $(cat "$tmp/err")"; fi
# Undecided on every rail: the check is, with the reason once.
sed -e '/name="RailbindXcvrType"/d' -e 's|name="RailbindXcvrNetdev" value="\([^"]*\)"|&/><info name="RailbindXcvrUndecided" value="needs CAP_NET_ADMIN (reading a module EEPROM is privileged: run the audit or snapshot as root)"|' \
	"$tmp/healthy.xml" >"$tmp/unpriv.xml"
run --json -i "$tmp/unpriv.xml"
if [ "$rc" -eq 0 ] && [ "$(jq -r .summary.transceiver "$tmp/out")" = unknown ] &&
    jq -e '.undecided[] | select(.id == "transceiver") | .reason | startswith("all 4 rails: needs CAP_NET_ADMIN")' "$tmp/out" >/dev/null
then ok; else bad "unprivileged snapshot: rc=$rc $(jq -c .undecided "$tmp/out")"; fi

# This host's own PCI netdevs, read for real.
netdevs=
for d in /sys/class/net/*; do
	# On a network PCI function (class 0x02xx), the objects discovery annotates;
	# a virtio NIC's device is the virtio device, the function its parent.
	class=$(cat "$d/device/class" 2>/dev/null || cat "$d/device/../class" 2>/dev/null)
	case $class in 0x02*) netdevs="$netdevs ${d##*/}" ;; esac
done
if [ -z "$netdevs" ]; then
	echo "optics: this host has no PCI netdev, skipping the live part"
elif [ "$(id -u)" -ne 0 ]; then
	echo "optics: not root, skipping the live part (it compares root and nobody)"
else
	"$RAILBIND" snapshot -o "$tmp/live.xml" 2>"$tmp/err"
	for n in $netdevs; do
		if grep -A1 "name=\"RailbindXcvrNetdev\" value=\"$n\"" "$tmp/live.xml" |
		    grep -q 'RailbindXcvrType\|RailbindXcvrUndecided'
		then ok; else bad "live snapshot: no transceiver record for $n"; fi
	done
	# A virtual NIC (virtio, e1000e, veth) has no module: said so, not an error.
	grep -o 'name="RailbindXcvrUndecided" value="[^"]*"' "$tmp/live.xml" | sort -u | sed 's/^/optics: live: /'
	# A virtio-net NIC, as the QEMU guests of tests/vm have: exactly this reason,
	# and the audit of the snapshot says it undecided, not failed.
	for n in $netdevs; do
		case $(readlink "/sys/class/net/$n/device/driver" 2>/dev/null) in
		*/virtio_net) ;;
		*) continue ;;
		esac
		if grep -A1 "name=\"RailbindXcvrNetdev\" value=\"$n\"" "$tmp/live.xml" |
		    grep -q 'name="RailbindXcvrUndecided" value="no module EEPROM (the driver reports no pluggable module)"'
		then ok; else bad "live snapshot: virtio-net $n: $(grep -A1 "RailbindXcvrNetdev\" value=\"$n\"" "$tmp/live.xml" | tail -1)"; fi
		"$RAILBIND" audit --json -i "$tmp/live.xml" >"$tmp/live.json" 2>"$tmp/err"
		if jq -e '[.checks[] | select(.id == "transceiver" and .severity != "ok")] | length == 0' "$tmp/live.json" >/dev/null &&
		    { [ "$(jq -r '.summary.transceiver // empty' "$tmp/live.json")" != fail ]; }
		then ok; else bad "audit of the live snapshot: $(jq -c '[.checks[] | select(.id == "transceiver")]' "$tmp/live.json")"; fi
		echo "optics: live: virtio-net $n: no module EEPROM, as in the QEMU guests"
	done
	if command -v setpriv >/dev/null; then
		setpriv --reuid=65534 --regid=65534 --clear-groups "$RAILBIND" snapshot -o - \
			>"$tmp/nobody.xml" 2>"$tmp/err"
		if [ "$(grep -c 'name="RailbindXcvrUndecided" value="needs CAP_NET_ADMIN' "$tmp/nobody.xml")" -ge 1 ] &&
		    ! grep -q 'name="RailbindXcvrType"' "$tmp/nobody.xml"; then ok
		else bad "live snapshot as nobody: $(grep -o 'RailbindXcvrUndecided" value="[^"]*' "$tmp/nobody.xml" | head -2)"; fi
	fi
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
