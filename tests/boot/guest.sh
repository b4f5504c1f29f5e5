#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The boot test, inside the booted Debian guest (run by
# railbind-boottest.service once multi-user.target is reached). Prints TAP
# on the serial console; asks the host for QMP commands with "@@qmp {json}".
# Scenarios of issue 6: (1) module, units, permissions at boot; (2) an
# unprivileged user's audit and run; (3) NIC hotplug; (4) broker restart
# and rmmod/modprobe; (5, issue 33) the packages removed and purged,
# nothing of them left. What needs railbindd, "railbind run/status" or
# "railbind audit" is skipped, naming what is missing, until they exist.
set -u
. /opt/railbind-test/test.env
PATH=/usr/sbin:/usr/bin:/sbin:/bin
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
GEN=/sys/class/misc/railbind/generation
n=0
failed=0

tap() { # tap RC DESCRIPTION [DIAGNOSTIC]
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2"
		[ -z "${3:-}" ] || printf '%s\n' "$3" | head -n 15 | sed 's/^/#   /'
	fi
}
skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}
t() { # t DESCRIPTION CMD...: the command's status is the result
	d=$1
	shift
	out=$("$@" 2>&1)
	tap $? "$d" "$out"
}
qmp() {
	echo "@@qmp $1"
	sleep 1
}
wait_for() { # wait_for SECONDS CMD...
	w=$1
	shift
	i=0
	while [ $i -lt $((w * 5)) ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}
loaded() { grep -q '^railbind ' /proc/modules; }
gen() { cat $GEN 2>/dev/null || echo none; }
has_cmd() { railbind --help 2>/dev/null | grep -q "^  $1 "; }

broker=
[ -x /usr/sbin/railbindd ] || broker="railbindd not installed (the broker, issue 5, is not on main yet)"
has_cmd audit && audit= || audit="railbind audit not on main yet (issue 3)"
has_cmd run && has_cmd status && runst= || runst="railbind run/status not on main yet (issue 5)"
# What the broker scenarios miss, in one reason.
brk=$(printf '%s\n' "$broker" "$runst" | grep . | paste -sd ';' | sed 's/;/; /g')

echo "@@booted"
echo "1..30"
echo "# guest: $(uname -r), $(systemctl is-system-running 2>&1)"

# --- 1. at boot: the module, its device, the units --------------------------
t "railbind.ko loaded at boot" loaded
path=$(modinfo -n railbind 2>&1)
case $path in
/lib/modules/$(uname -r)/updates/dkms/railbind.ko* | /usr/lib/modules/$(uname -r)/updates/dkms/railbind.ko*) r=0 ;;
*) r=1 ;;
esac
tap $r "the module is DKMS's build for $(uname -r)" "$path
$(dkms status 2>&1)"
out=$(journalctl -b -o short-monotonic 2>&1 | grep -e 'modules-load' -e 'Inserted module' -e 'kmod' | head -n 15)
printf '%s\n' "$out" | grep -q "Inserted module 'railbind'"
tap $? "systemd-modules-load loaded it (modules-load.d/railbind.conf)" "$out"
st=$(stat -c '%a %U %F' /dev/railbind 2>&1)
first=$($NOBODY head -n 1 /dev/railbind 2>&1)
[ "$st" = "444 root character special file" ] && [ -n "$first" ]
tap $? "/dev/railbind is 0444 root and an unprivileged user reads it" "$st / $first"
t "systemd follows /dev/railbind (dev-railbind.device active)" systemctl is-active dev-railbind.device
s=$(stat -c '%a %F' /run/railbind/railbind.sock 2>&1)
d=$(stat -c '%a %U' /run/railbind 2>&1)
a=$(systemctl is-active railbindd.socket 2>&1)
[ "$a" = active ] && [ "$s" = "666 socket" ] && [ "$d" = "755 root" ]
tap $? "railbindd.socket listening on /run/railbind/railbind.sock, 0666 in a 0755 dir" "$a / $s / $d"
if [ -n "$broker" ]; then
	skip "railbindd.service active (Type=notify)" "$broker"
	skip "railbindd runs with CAP_SYS_ADMIN, CAP_DAC_READ_SEARCH, CAP_SYS_PTRACE, CAP_NET_ADMIN only" "$broker"
else
	wait_for 30 systemctl is-active railbindd.service
	t "railbindd.service active (Type=notify)" systemctl is-active railbindd.service
	pid=$(systemctl show -p MainPID --value railbindd.service)
	bnd=$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/"$pid"/status 2>&1)
	# CAP_NET_ADMIN (bit 12) since 570da76: BPF_PROG_QUERY of a client's
	# cgroup v2 device program (the unit's comment).
	tap "$([ "$bnd" = 0000000000281004 ]; echo $?)" \
		"railbindd runs with CAP_SYS_ADMIN, CAP_DAC_READ_SEARCH, CAP_SYS_PTRACE, CAP_NET_ADMIN only" "CapBnd $bnd"
fi

# The unit's sandbox, with a probe in place of the broker: the [Service]
# hardening lines of the installed unit, as systemd-run properties.
props=$(sed -n '/^\[Service\]/,/^\[/p' /usr/lib/systemd/system/railbindd.service |
	grep -E '^(Capability|Ambient|NoNewPriv|Protect|Private|Device|Restrict|IPAddress|Lock|Memory|SystemCall|UMask)' |
	sed "s/^/-p '/; s/\$/'/" | tr '\n' ' ')
cat >/run/railbind-probe.sh <<PROBE
head -c 1 /dev/railbind >/dev/null && echo dev
[ "\$(cat $(ls -d /sys/bus/pci/devices/*/config | head -n 1) | wc -c)" -gt 64 ] && echo config
head -n 1 /proc/1/status >/dev/null && echo proc
ls /sys/class/net >/dev/null && echo net
touch /etc/railbind-probe 2>/dev/null || echo etc-ro
grep ^CapEff: /proc/self/status
PROBE
out=$(eval systemd-run --quiet --wait --pipe --collect "$props" -- /bin/sh /run/railbind-probe.sh 2>&1)
exp=$(printf 'dev\nconfig\nproc\nnet\netc-ro\nCapEff:\t0000000000281004')
tap "$([ "$out" = "$exp" ]; echo $?)" \
	"railbindd.service's sandbox reads /dev/railbind, all PCI config space, /proc, /sys; /etc read-only; its four capabilities only" \
	"$props
$out"

# udev loads the module when an RDMA NIC appears: a Soft-RoCE device on
# the e1000e NIC is one.
nic=$(for d in /sys/class/net/*; do
	[ "$(cat "$d/device/vendor" 2>/dev/null)" = 0x8086 ] && basename "$d"
done | head -n 1)
if [ -z "$nic" ] || ! modprobe -n rdma_rxe 2>/dev/null; then
	skip "udev loads railbind when an RDMA device appears" "no e1000e netdev or no rdma_rxe"
else
	ip link set "$nic" up
	modprobe -r railbind
	r1=$(loaded && echo loaded || echo unloaded)
	out=$(rdma link add rxe0 type rxe netdev "$nic" 2>&1)
	udevadm settle -t 30
	wait_for 10 loaded
	r=$?
	tap "$([ "$r1" = unloaded ] && [ $r -eq 0 ]; echo $?)" \
		"udev loads railbind when an RDMA device appears (rxe0 on $nic)" "before: $r1; $out"
	rdma link delete rxe0 >/dev/null 2>&1
	loaded || modprobe railbind
fi

# --- 2. an unprivileged user: audit, run --------------------------------------
if [ -n "$audit" ]; then
	skip "nobody runs railbind audit --json" "$audit"
else
	out=$($NOBODY railbind audit --json 2>&1)
	rc=$?
	sch=$(printf '%s' "$out" | jq -r .schema 2>/dev/null)
	tap "$([ "$rc" -le 2 ] && [ "$sch" = railbind.audit/1 ]; echo $?)" \
		"nobody runs railbind audit --json (exit $rc)" "$out"
fi
if [ -n "$brk" ]; then
	skip "nobody's railbind run gets rank 0's CPUs from the broker" "$brk"
else
	want=$($NOBODY railbind plan --json | jq -r '.ranks[0].cpus')
	out=$($NOBODY railbind run --rank 0 --verbose -- sh -c 'sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status' 2>&1)
	got=$(printf '%s\n' "$out" | tail -n 1)
	printf '%s\n' "$out" | grep -qi broker && [ "$got" = "$want" ]
	tap $? "nobody's railbind run gets rank 0's CPUs ($want) from the broker" "$out"
fi

# --- 3. NIC hotplug: module generation, plan, broker --------------------------
g0=$(gen)
before=$(ls /sys/bus/pci/devices)
qmp '{"execute": "device_add", "arguments": {"driver": "e1000e", "id": "hpnic", "bus": "'"$HOTPLUG_PORT"'", "romfile": ""}}'
wait_for 30 sh -c "[ \"\$(ls /sys/bus/pci/devices | wc -l)\" -gt $(echo "$before" | wc -l) ]"
udevadm settle -t 30
new=$(ls /sys/bus/pci/devices | grep -vxF "$before" | head -n 1)
g1=$(gen)
tap "$([ -n "$new" ] && [ "$g1" != none ] && [ "$g1" -gt "$g0" ]; echo $?)" \
	"hotplugged NIC $new: the module's generation moves ($g0 -> $g1)"
out=$(railbind topo --json 2>&1)
printf '%s' "$out" | jq -e --arg p "$new" '[.nics[].pci] | index($p) != null' >/dev/null 2>&1
tap $? "railbind topo sees the hotplugged NIC" "$out"
if [ -n "$brk" ]; then
	skip "the broker replans: railbind status shows the new generation" "$brk"
else
	wait_for 5 sh -c "railbind status --json | jq -e '.. | numbers | select(. == $g1)'"
	t "the broker replans: railbind status shows generation $g1" \
		sh -c "railbind status --json | jq -e '.. | numbers | select(. == $g1)'"
fi
qmp '{"execute": "device_del", "arguments": {"id": "hpnic"}}'
wait_for 30 sh -c "[ ! -e /sys/bus/pci/devices/$new ]"
udevadm settle -t 30
g2=$(gen)
tap "$([ ! -e "/sys/bus/pci/devices/$new" ] && [ "$g2" -gt "$g1" ]; echo $?)" \
	"unplugged: the NIC is gone and the generation moves again ($g1 -> $g2)"

# --- 4. restart keeps leases; rmmod/modprobe under the broker -----------------
if [ -n "$brk" ]; then
	skip "systemctl restart railbindd keeps a live rank's lease" "$brk"
else
	$NOBODY railbind run --rank 0 -- sleep 120 &
	lp=$!
	wait_for 10 sh -c "railbind status --json | jq -e '.. | objects | select(.pid? == $lp)'"
	systemctl restart railbindd.service
	wait_for 20 systemctl is-active railbindd.service
	t "systemctl restart railbindd keeps a live rank's lease (pid $lp)" \
		sh -c "railbind status --json | jq -e '.. | objects | select(.pid? == $lp)'"
	kill $lp 2>/dev/null
fi
out=$(modprobe -r railbind 2>&1)
gone=$([ ! -e /dev/railbind ] && ! loaded; echo $?)
tap "$gone" "modprobe -r railbind: module and /dev/railbind gone" "$out"
if [ -n "$brk" ]; then
	skip "without the module the broker degrades to sysfs and says so" "$brk"
	skip "the broker keeps serving plans without the module" "$brk"
else
	wait_for 5 sh -c 'railbind status | grep -qi sysfs'
	t "without the module the broker degrades to sysfs and says so" sh -c 'railbind status | grep -i sysfs'
	t "the broker keeps serving plans without the module" systemctl is-active railbindd.service
fi
modprobe railbind
udevadm settle -t 30
st=$(stat -c '%a' /dev/railbind 2>&1)
t "modprobe railbind: /dev/railbind back, 0444 again" test "$st" = 444
if [ -n "$brk" ]; then
	skip "the broker goes back to the module on modprobe" "$brk"
else
	wait_for 10 sh -c "railbind status --json | jq -e '.. | numbers | select(. == $(gen))'"
	t "the broker goes back to the module on modprobe (generation $(gen))" \
		sh -c "railbind status --json | jq -e '.. | numbers | select(. == $(gen))'"
fi

# --- 5. the packages removed and purged: nothing of them left ---------------
# railbind first: its prerm stops the broker, which holds /dev/railbind,
# so that railbind-dkms's prerm can unload the module.
PKGS="slurm-wlm-railbind-plugin libaffinity-dev railbind libaffinity1 railbind-dkms"
installed=$(dpkg-query -W -f='${db:Status-Status} ${Package}\n' $PKGS 2>/dev/null | grep -c '^installed ')
if [ "$installed" -ne 5 ]; then
	for d in "dpkg --purge of the five packages" "none of them installed or half-removed" \
		"the module unloaded, DKMS's builds gone" "no railbindd unit left, none active" \
		"no file of the packages left" "nothing named railbind left in / and /run"; do
		skip "$d" "$installed of the five packages installed (not a package install)"
	done
else
	files=$(dpkg -L $PKGS 2>/dev/null | while read -r f; do [ -d "$f" ] || echo "$f"; done)
	out=$(dpkg --purge $PKGS 2>&1)
	tap $? "dpkg --purge of the five packages" "$out"
	left=$(dpkg-query -W -f='${db:Status-Status} ${Package}\n' $PKGS 2>/dev/null | grep -v '^not-installed ')
	tap "$([ -z "$left" ]; echo $?)" "none of them installed or half-removed" "$left"
	ko=$(find /lib/modules -name 'railbind.ko*' 2>&1)
	# (dkms status says "write error: Broken pipe" on stderr when empty)
	dk=$(dkms status railbind 2>/dev/null)
	! loaded && [ ! -e /dev/railbind ] && [ -z "$ko" ] && [ -z "$dk" ] && [ ! -e /var/lib/dkms/railbind ]
	tap $? "the module unloaded, DKMS's builds gone" "$(grep '^railbind ' /proc/modules)
$ko
$dk
$(ls -d /var/lib/dkms/railbind 2>&1)"
	# This test's own unit orders itself After=railbindd.service, so
	# systemd keeps an inactive "not-found" stub of it: that is no unit.
	units=$(systemctl list-units --all --plain --no-legend 'railbindd*' 2>&1 |
		awk '!($2 == "not-found" && $3 == "inactive")'
		systemctl list-unit-files --plain --no-legend 'railbindd*' 2>&1)
	tap "$([ -z "$units" ]; echo $?)" "no railbindd unit left, none active" "$units"
	kept=$(for f in $files; do [ -e "$f" ] || [ -L "$f" ] && echo "$f"; done)
	tap "$([ -n "$files" ] && [ -z "$kept" ]; echo $?)" \
		"no file of the packages left ($(echo "$files" | wc -l) were installed)" "$kept"
	# Names only the test gave: its unit, guest half, module options,
	# railbind.conf and sandbox probe.
	found=$(find / /run -xdev -name '*railbind*' 2>/dev/null | grep -v -x \
		-e '/opt/railbind-test.*' -e '/etc/modprobe.d/railbind-test.conf' \
		-e '/etc/railbind' -e '/etc/railbind/railbind.conf' -e '/run/railbind-probe.sh' \
		-e '/etc/systemd/system/railbind-boottest.service' \
		-e '/etc/systemd/system/multi-user.target.wants/railbind-boottest.service' \
		-e '/run/systemd/.*railbind-boottest.*' -e '/sys/.*')
	tap "$([ -z "$found" ]; echo $?)" "nothing named railbind left in / and /run" "$found"
fi

# --- the whole boot ----------------------------------------------------------
fl=$(systemctl --failed --plain --no-legend 2>&1 | awk '{print $1}' |
	grep -v -x railbind-boottest.service)
tap "$([ -z "$fl" ]; echo $?)" "no failed unit" "$fl"
bad=$(dmesg | grep -E 'BUG:|WARNING:|Oops|Call Trace')
tap "$([ -z "$bad" ]; echo $?)" "no WARNING/BUG/Oops in dmesg" "$bad"
echo "@@done failed=$failed"
