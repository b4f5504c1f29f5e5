#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `railbind slurm-gres` in a real Slurm (root; about 30 s): munged, slurmctld
# and slurmd started here as tests/slurm/run.sh starts them, the node told
# it has two sockets of one core (config_overrides: this host has two CPUs,
# one socket) and two GPUs, gres.conf written by railbind slurm-gres from
# FIXTURE (a GPU per socket). Two `srun --gres=gpu:1` jobs at once: each must
# be given by slurmctld the cores gres.conf gives its GPU (scontrol's CPU_IDs
# and GRES IDX), and its task bound by the SPANK plugin to its GPU's socket.
# Then the same with the Cores= swapped by hand: the jobs follow the file
# (Slurm really reads Cores=, so the first half can fail). The GPUs are
# stand-in device files (mknod c 195 N, or plain files where mknod is not
# allowed): slurmd does not open them with task/none.
# Needs RAILBIND, SPANK_SO, FIXTURE, LOGDIR.
set -u
: "${RAILBIND:?}" "${SPANK_SO:?}" "${FIXTURE:?}" "${LOGDIR:?}"
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() {
	fail=$((fail + 1))
	echo "FAIL - $1"
	[ -z "${2:-}" ] || printf '%s\n' "$2" | head -n 15 | sed 's/^/#   /'
}
finish() {
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit
}
if [ "$(id -u)" -ne 0 ]; then
	echo "slurm-gres: SKIPPED: slurmd needs root (run make check-slurm-gres as root)"
	echo "0 passed, 0 failed"
	exit 0
fi
for p in slurmd slurmctld srun sinfo scontrol munged python3; do
	command -v "$p" >/dev/null || { echo "slurm-gres: $p not found: run ./scripts/setup"; echo "0 passed, 1 failed"; exit 1; }
done
[ "$(nproc)" -ge 2 ] || { echo "slurm-gres: SKIPPED: needs 2 CPUs"; echo "0 passed, 0 failed"; exit 0; }

tmp=$(mktemp -d /tmp/railbind-gres.XXXXXX) || exit 1
chmod 755 "$tmp"
logs=$LOGDIR/slurm-gres
rm -rf "$logs"
mkdir -p "$logs" "$tmp/ctld" "$tmp/spool" "$tmp/munge" "$tmp/dev"
chmod 700 "$tmp/munge"
pids=
stop() {
	local p
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
		kill -9 "$p" 2>/dev/null
	done
	pids=
}
trap 'stop; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
unset RAILBIND_SOCKET CUDA_VISIBLE_DEVICES LOCAL_RANK RAILBIND_LOG
for v in $(env | sed -n 's/^\(SLURM_[A-Z_]*\|RAILBIND_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done

for n in 0 1; do
	mknod "$tmp/dev/nvidia$n" c 195 "$n" 2>/dev/null || : >"$tmp/dev/nvidia$n"
done
"$RAILBIND" slurm-gres --input "$FIXTURE" >"$tmp/railbind-gres.conf" ||
	{ bad "railbind slurm-gres --input $FIXTURE"; finish; }
cp "$tmp/railbind-gres.conf" "$logs/"
# The fixture's answer, read from its description: GPU 0 on socket 0 (core
# 0), GPU 1 on socket 1 (core 1).
lines=$(grep -c '^Name=gpu File=/dev/nvidia[01] Cores=[01]\b' "$tmp/railbind-gres.conf")
[ "$lines" = 2 ] && grep -q '^Name=gpu File=/dev/nvidia1 Cores=1\b' "$tmp/railbind-gres.conf"
[ $? -eq 0 ] && ok "slurm-gres: GPU 0 Cores=0, GPU 1 Cores=1" ||
	bad "slurm-gres: GPU 0 Cores=0, GPU 1 Cores=1" "$(cat "$tmp/railbind-gres.conf")"

read -r cport dport < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])')
host=$(hostname -s)
head -c 1024 /dev/urandom >"$tmp/munge/key"
chmod 600 "$tmp/munge/key"
munged -F -f --socket="$tmp/munge/sock" --key-file="$tmp/munge/key" \
	--pid-file="$tmp/munge/pid" --seed-file="$tmp/munge/seed" \
	--log-file="$logs/munged.log" 2>>"$logs/munged.log" &
munge_pid=$!
trap 'stop; kill $munge_pid 2>/dev/null; rm -rf "$tmp"' EXIT
cat >"$tmp/slurm.conf" <<EOF
ClusterName=railbind
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$cport
SlurmdPort=$dport
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/sock
CredType=cred/munge
StateSaveLocation=$tmp/ctld
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$logs/slurmctld.log
SlurmdLogFile=$logs/slurmd.log
SlurmdDebug=debug
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
PlugStackConfig=$tmp/plugstack.conf
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 Sockets=2 CoresPerSocket=1 ThreadsPerCore=1 Gres=gpu:2 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf
printf '%s\n' "optional $SPANK_SO input=$FIXTURE broker=off" >"$tmp/plugstack.conf"
for _ in $(seq 50); do [ -S "$tmp/munge/sock" ] && break; sleep 0.1; done

# The task: its CPUs, its GPU as Slurm gave it, and slurmctld's allocation.
cat >"$tmp/task.sh" <<'EOF'
grep "^Cpus_allowed_list:" /proc/self/status | cut -f2 >"$OUT/cpus"
echo "${CUDA_VISIBLE_DEVICES:-}" >"$OUT/cuda"
scontrol show job -d "$SLURM_JOB_ID" | grep -o 'CPU_IDs=[^ ]* .*IDX:[0-9]*' >"$OUT/alloc"
sleep 3
EOF

# round NAME GRES-FILE: daemons up on that gres.conf, two gpu:1 jobs at once;
# prints "IDX CPU_IDS TASK_CPUS CUDA_VISIBLE_DEVICES" per job into $tmp/NAME.
round() {
	local name=$1 state
	sed "s|/dev/nvidia|$tmp/dev/nvidia|" "$2" >"$tmp/gres.conf"
	cp "$tmp/gres.conf" "$logs/$name.gres.conf"
	slurmctld -D -i -f "$tmp/slurm.conf" >"$logs/$name.slurmctld.out" 2>&1 &
	pids="$pids $!"
	slurmd -D -f "$tmp/slurm.conf" -N "$host" >"$logs/$name.slurmd.out" 2>&1 &
	pids="$pids $!"
	for _ in $(seq 60); do
		state=$(timeout 5 sinfo -h -n "$host" -o %T 2>/dev/null)
		[ "$state" = idle ] && break
		sleep 0.5
	done
	if [ "$state" != idle ]; then
		bad "$name: slurmd up with gres.conf (node \"$state\")" \
			"$(tail -n 8 "$logs"/*.log 2>/dev/null)"
		stop
		return 1
	fi
	ok "$name: slurmctld and slurmd up on the gres.conf, node idle"
	: >"$tmp/$name"
	for j in a b; do
		mkdir -p "$tmp/$name.$j"
		OUT=$tmp/$name.$j timeout 60 srun -t 1 -n 1 --gres=gpu:1 sh "$tmp/task.sh" \
			>"$logs/$name.$j.out" 2>&1 &
		sleep 0.5
	done
	wait_jobs=$(jobs -p | tr '\n' ' ')
	for p in $wait_jobs; do case " $pids $munge_pid " in *" $p "*) ;; *) wait "$p" ;; esac; done
	for j in a b; do
		python3 - "$tmp/$name.$j" >>"$tmp/$name" <<'EOF'
import re, sys
d = sys.argv[1]
try:
    alloc = open(d + "/alloc").read()
    cpus = open(d + "/cpus").read().strip()
    cuda = open(d + "/cuda").read().strip() or "unset"
except OSError:
    print("none none none none"); sys.exit()
m = re.search(r"CPU_IDs=(\S+).*IDX:(\d+)", alloc)
print(m.group(2), m.group(1), cpus, cuda) if m else print("none none", cpus, cuda)
EOF
	done
	stop
	# slurmctld keeps no state across rounds.
	rm -rf "${tmp:?}/ctld/"* "${tmp:?}/spool/"*
}

# check NAME CORES0 CORES1: each job's GPU came with the cores the file
# gives it, and its task ran there.
check() {
	local got want=("$2" "$3") idx cpu task n=0
	got=$(cat "$tmp/$1")
	while read -r idx cpu task cuda; do
		case $idx in 0 | 1) ;; *) bad "$1: a gpu:1 job ran and saw its allocation" "$got"; continue ;; esac
		n=$((n + 1))
		if [ "$cpu" = "${want[$idx]}" ]; then
			ok "$1: the job given GPU $idx got core $cpu, as its Cores= says"
		else
			bad "$1: the job given GPU $idx got the cores its Cores= says (${want[$idx]})" "CPU_IDs=$cpu"
		fi
		if [ "$4" = bind ]; then
			[ "$cuda" = "$idx" ] && ok "$1: Slurm gave the task GPU $idx (CUDA_VISIBLE_DEVICES=$cuda)" ||
				bad "$1: Slurm gave the task GPU $idx" "CUDA_VISIBLE_DEVICES=$cuda"
			[ "$task" = "$idx" ] && ok "$1: its task is bound to CPU $task, GPU $idx's socket" ||
				bad "$1: its task is bound to GPU $idx's socket (CPU $idx)" "Cpus_allowed_list: $task"
		fi
	done <<<"$got"
	[ "$n" = 2 ] && [ "$(cut -d' ' -f1 "$tmp/$1" | sort | tr -d '\n')" = 01 ] &&
		ok "$1: two jobs at once, one per GPU" || bad "$1: two jobs at once, one per GPU" "$got"
}

round railbind "$tmp/railbind-gres.conf" && check railbind 0 1 bind
# The control: Cores= swapped (what a gres.conf written from the wrong
# socket says): Slurm follows the file, so the check above can fail.
sed 's/nvidia0 Cores=0/nvidia0 Cores=X/; s/nvidia1 Cores=1/nvidia1 Cores=0/; s/Cores=X/Cores=1/' \
	"$tmp/railbind-gres.conf" >"$tmp/swapped.conf"
round swapped "$tmp/swapped.conf" && check swapped 1 0 nobind
# The audit catches the swapped file, with the corrected lines.
sed "s|$tmp/dev/nvidia|/dev/nvidia|" "$tmp/swapped.conf" >"$tmp/audit-gres.conf"
printf 'slurm-gres-conf = %s\n' "$tmp/audit-gres.conf" >"$tmp/railbind.conf"
"$RAILBIND" audit --input "$FIXTURE" -c "$tmp/railbind.conf" --json >"$tmp/audit.json"
python3 - "$tmp/audit.json" <<'EOF' && ok "audit: slurm-gres fails the swapped gres.conf, remedy GPU 0 Cores=0" || bad "audit: slurm-gres fails the swapped gres.conf" "$(cat "$tmp/audit.json" | head -c 600)"
import json, sys
d = json.load(open(sys.argv[1]))
c = [c for c in d["checks"] if c["id"] == "slurm-gres"]
sys.exit(not (c and c[0]["severity"] == "fail" and "nvidia0 Cores=0" in (c[0]["remedy"] or "")))
EOF
finish
