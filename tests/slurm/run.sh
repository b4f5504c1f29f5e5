#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The SPANK plugin in a real Slurm: munged, slurmctld and slurmd started here
# (as root, in a scratch directory with their own slurm.conf, plugstack.conf,
# state and ports; one node, this host), then srun steps whose tasks report
# their CPU affinity and environment, compared with `railbind plan --json`
# for the same fixture and rank. Stopped and removed at the end, failure
# included. Needs RAILBIND, RAILBINDD, SPANK_SO, FIXTURE (a topology shaped
# like this host: 2 CPUs, one NUMA node), LOGDIR; slurmd, slurmctld, srun,
# munged, jq and python3 (./scripts/setup).
#
# What works in a container without systemd or a writable cgroup tree:
# ProctrackType=proctrack/linuxproc, TaskPlugin=task/none (task/affinity
# would re-bind the tasks after the plugin), daemons in the foreground (-D)
# with their own pid files; munged with its own key and socket (AuthInfo).
set -u
: "${RAILBIND:?}" "${RAILBINDD:?}" "${SPANK_SO:?}" "${FIXTURE:?}" "${LOGDIR:?}"
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
	# slurmd must run as root to launch tasks as their user: outside the
	# project, so skipped (CI and the build box run make check as root).
	echo "slurm: SKIPPED: slurmd needs root (run make check-slurm as root)"
	echo "0 passed, 0 failed"
	exit 0
fi
for p in slurmd slurmctld srun sinfo munged jq python3; do
	command -v "$p" >/dev/null || {
		echo "slurm: $p not found: run ./scripts/setup"
		echo "0 passed, 1 failed"
		exit 1
	}
done

# Short paths: Unix socket names must fit in 108 bytes.
tmp=$(mktemp -d /tmp/railbind-slurm.XXXXXX) || exit 1
chmod 755 "$tmp"
logs=$LOGDIR/slurm
rm -rf "$logs"
mkdir -p "$logs" "$tmp/ctld" "$tmp/spool" "$tmp/munge" "$tmp/out"
chmod 700 "$tmp/munge"
pids=
cleanup() {
	local p
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do
		# Bounded: a daemon that ignores TERM for 5 s gets KILL.
		for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
		kill -9 "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Nothing of the caller's may reach the tasks: srun passes its environment on.
unset RAILBIND_SOCKET CUDA_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES GPU_DEVICE_ORDINAL \
	LOCAL_RANK RAILBIND_LOG
for v in $(env | sed -n 's/^\(SLURM_[A-Z_]*\|RAILBIND_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done

# Two free TCP ports for slurmctld and slurmd (several trees may test at once).
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
pids="$pids $!"

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
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
PlugStackConfig=$tmp/plugstack.conf
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$tmp/slurm.conf
plugstack() { printf '%s\n' "optional $SPANK_SO $*" >"$tmp/plugstack.conf"; }
plugstack "input=$FIXTURE broker=off"

for _ in $(seq 50); do [ -S "$tmp/munge/sock" ] && break; sleep 0.1; done
slurmctld -D -i -f "$tmp/slurm.conf" >"$logs/slurmctld.out" 2>&1 &
pids="$pids $!"
slurmd -D -f "$tmp/slurm.conf" -N "$host" >"$logs/slurmd.out" 2>&1 &
pids="$pids $!"
state=
for _ in $(seq 60); do
	state=$(timeout 5 sinfo -h -n "$host" -o %T 2>/dev/null)
	[ "$state" = idle ] && break
	sleep 0.5
done
if [ "$state" != idle ]; then
	bad "slurmctld and slurmd up within 30 s (node state \"$state\"; logs in $logs)" \
		"$(tail -n 5 "$logs"/*.log "$logs"/*.out 2>/dev/null)"
	finish
fi
ok "slurmctld and slurmd up, node $host idle"

# The task: its affinity and environment, one file per local task id.
cat >"$tmp/task.sh" <<'EOF'
id=$SLURM_LOCALID
grep "^Cpus_allowed_list:" /proc/self/status | cut -f2 >"$OUT/cpus.$id"
env >"$OUT/env.$id"
EOF
# step NAME SRUN-ARGS...: run `srun ARGS sh task.sh` (bounded), results in
# $tmp/out/NAME/, rc in $rc, stderr in $err, seconds in $secs.
step() {
	local name=$1 start
	shift
	mkdir -p "$tmp/out/$name"
	start=$(date +%s%N)
	OUT=$tmp/out/$name timeout 60 srun -t 1 "$@" sh "$tmp/task.sh" \
		>"$tmp/out/$name/stdout" 2>"$tmp/out/$name/stderr"
	rc=$?
	secs=$((($(date +%s%N) - start) / 1000000000))
	err=$(cat "$tmp/out/$name/stderr")
	cp "$tmp/out/$name/stderr" "$logs/$name.stderr"
}
norm() { python3 -c '
import sys
s = set()
for part in sys.argv[1].split(","):
    a, _, b = part.partition("-")
    s.update(range(int(a), int(b or a) + 1))
print(",".join(map(str, sorted(s))))' "$1"; }
all_cpus=$(norm "$(grep '^Cpus_allowed_list:' /proc/self/status | cut -f2)")

# bound NAME RANK PLAN-JSON: task RANK of step NAME has the plan's CPUs and
# every variable of the plan's environment for that rank.
bound() {
	local d=$tmp/out/$1 r=$2 want got missing
	want=$(jq -r ".ranks[$r].cpus" "$3")
	got=$(cat "$d/cpus.$r" 2>/dev/null)
	if [ -z "$got" ] || [ "$(norm "$want")" != "$(norm "$got")" ]; then
		bad "$1: task $r runs on the plan's CPUs $want" "Cpus_allowed_list: $got"
		return
	fi
	missing=$(jq -r ".ranks[$r].env | to_entries[] | \"\(.key)=\(.value)\"" "$3" |
		while IFS= read -r kv; do grep -qxF -- "$kv" "$d/env.$r" || echo "$kv"; done)
	if [ "$(jq ".ranks[$r].env | length" "$3")" -lt 3 ] || [ -n "$missing" ]; then
		bad "$1: task $r has the plan's environment" "missing: $missing"
		return
	fi
	ok "$1: task $r on CPUs $want with the plan's environment ($(jq -r ".ranks[$r].env.RAILBIND_NICS" "$3"))"
}
# unbound NAME RANK: task RANK of step NAME ran, untouched by railbind.
unbound() {
	local d=$tmp/out/$1 r=$2
	if [ -f "$d/env.$r" ] && [ "$(norm "$(cat "$d/cpus.$r")")" = "$all_cpus" ] &&
	    ! grep -q '^RAILBIND_' "$d/env.$r"; then
		ok "$1: task $r ran unbound (CPUs $all_cpus, no RAILBIND_*)"
	else
		bad "$1: task $r ran unbound" "cpus: $(cat "$d/cpus.$r" 2>/dev/null); $(grep '^RAILBIND_' "$d/env.$r" 2>/dev/null)"
	fi
}
expect() {	# expect WHAT CONDITION-RC
	if [ "$2" -eq 0 ]; then ok "$1"; else bad "$1" "rc=$rc, ${secs}s, stderr: $err"; fi
}

"$RAILBIND" plan --input "$FIXTURE" --json >"$tmp/plan.json" || bad "railbind plan --input $FIXTURE"
"$RAILBIND" plan --input "$FIXTURE" --isolate-gpu --json >"$tmp/plan-isolate.json"
"$RAILBIND" plan --input "$FIXTURE" --visible 1 --json >"$tmp/plan-visible1.json"
[ "$(jq '.ranks | length' "$tmp/plan.json")" -eq 2 ] &&
	[ "$(jq -r '.ranks[0].cpus' "$tmp/plan.json")" != "$(jq -r '.ranks[1].cpus' "$tmp/plan.json")" ]
expect "the fixture's plan has two ranks on different CPUs" $?

# 1. --railbind=verbose: every task bound to its rank's plan, one line each.
step verbose -n 2 --railbind=verbose
expect "srun -n 2 --railbind=verbose succeeds" $rc
bound verbose 0 "$tmp/plan.json"
bound verbose 1 "$tmp/plan.json"
# One NCCL_IB_HCA for the node in both tasks, the plan's (issue 24), and a
# claim of one GPU does not change it.
h0=$(sed -n 's/^NCCL_IB_HCA=//p' "$tmp/out/verbose/env.0" 2>/dev/null)
h1=$(sed -n 's/^NCCL_IB_HCA=//p' "$tmp/out/verbose/env.1" 2>/dev/null)
[ "$h0" = "=mlx5_1:1,mlx5_0:1" ] && [ "$h1" = "$h0" ] &&
	[ "$(jq -r '.ranks[0].env.NCCL_IB_HCA' "$tmp/plan-visible1.json")" = "$h0" ]
expect "both tasks get the node's NCCL_IB_HCA =mlx5_1:1,mlx5_0:1 (got '$h0', '$h1')" $?
n=$(printf '%s\n' "$err" | grep -c '^railbind: task [01] of 2: rank [01] gpu .* source local')
expect "--railbind=verbose: one line per task on srun's stderr" $(($n != 2))

# 2. No option: bound all the same, and quiet.
step default -n 2
bound default 0 "$tmp/plan.json"
bound default 1 "$tmp/plan.json"
expect "without --railbind: nothing on stderr" $([ -z "$err" ]; echo $?)

# 3. --railbind=off leaves the tasks alone.
step off -n 2 --railbind=off
expect "srun --railbind=off succeeds" $rc
unbound off 0
unbound off 1

# 4. A bad value is refused by srun itself, before anything runs.
step badvalue -n 1 --railbind=loud
expect "--railbind=loud: srun refuses it, naming the value" \
	$([ "$rc" -ne 0 ] && [ ! -f "$tmp/out/badvalue/env.0" ] &&
		printf '%s' "$err" | grep -q '"loud"'; echo $?)

# 5. isolate: CUDA_VISIBLE_DEVICES too, as railbind plan --isolate-gpu says.
step isolate -n 2 --railbind=isolate
bound isolate 0 "$tmp/plan-isolate.json"
bound isolate 1 "$tmp/plan-isolate.json"

# 6. Slurm's GPU allocation is the claim: with GPU 1 only, rank 0 gets it.
CUDA_VISIBLE_DEVICES=1 step claim -n 1 --export=ALL
bound claim 0 "$tmp/plan-visible1.json"
expect "claim CUDA_VISIBLE_DEVICES=1: rank 0 is GPU 0000:24:00.0 (the plan's)" \
	$(grep -qx "RAILBIND_GPU=$(jq -r '.ranks[0].gpu.pci' "$tmp/plan-visible1.json")" \
		"$tmp/out/claim/env.0"; echo $?)

# 7. A binding that fails: a warning and the task runs, unless required.
plugstack "input=$tmp/missing.xml broker=off"
step warn -n 1
expect "no topology: srun succeeds" $rc
unbound warn 0
expect "no topology: a warning naming the file reaches srun" \
	$(printf '%s' "$err" | grep -q "railbind: warning: task 0 of job .*missing.xml.*running unbound"; echo $?)
step required -n 1 --railbind=required
expect "no topology, --railbind=required: the task fails" \
	$([ "$rc" -ne 0 ] && [ ! -f "$tmp/out/required/env.0" ]; echo $?)
expect "--railbind=required: srun shows why" \
	$(printf '%s' "$err" | grep -q "railbind: task 0 of job .*missing.xml.*the task fails"; echo $?)
plugstack "required input=$tmp/missing.xml broker=off"
step required-conf -n 1
expect "no topology, plugstack.conf required: the task fails" \
	$([ "$rc" -ne 0 ] && [ ! -f "$tmp/out/required-conf/env.0" ]; echo $?)
step required-off -n 1 --railbind=off
expect "plugstack.conf required, --railbind=off: the task runs" $rc

# 8. The broker: railbindd serves the fixture; the tasks' own fallback could
# not plan (the live host has no GPU), so a binding proves the broker's.
sock=$tmp/railbind.sock
mkdir -p "$tmp/state"
"$RAILBINDD" --foreground --input "$FIXTURE" --socket "$sock" --state-dir "$tmp/state" \
	>"$logs/railbindd.log" 2>&1 &
bpid=$!
pids="$pids $bpid"
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
plugstack "socket=$sock"
step broker -n 2 --railbind=verbose
bound broker 0 "$tmp/plan.json"
bound broker 1 "$tmp/plan.json"
n=$(printf '%s\n' "$err" | grep -c '^railbind: task [01] of 2: .* source broker')
expect "broker: both tasks' plans came from railbindd" $(($n != 2))
kill "$bpid"

# 9. A broker that accepts and never answers: bounded, then the fallback.
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1]); s.listen(16)
held = []
while True:
    held.append(s.accept()[0])' "$tmp/hung.sock" &
pids="$pids $!"
for _ in $(seq 50); do [ -S "$tmp/hung.sock" ] && break; sleep 0.1; done
plugstack "socket=$tmp/hung.sock input=$FIXTURE timeout=500"
step hung -n 2 --railbind=verbose
expect "hung broker: srun ends in ${secs}s (< 15)" $([ "$rc" -eq 0 ] && [ "$secs" -lt 15 ]; echo $?)
bound hung 0 "$tmp/plan.json"
bound hung 1 "$tmp/plan.json"
expect "hung broker: the tasks say they planned locally, and why" \
	$(printf '%s' "$err" | grep -q "source local: no broker at $tmp/hung.sock"; echo $?)
plugstack "socket=$tmp/hung.sock input=$FIXTURE timeout=500 broker=only required"
step hung-required -n 2
expect "hung broker, broker=only required: the tasks fail in ${secs}s (< 15)" \
	$([ "$rc" -ne 0 ] && [ "$secs" -lt 15 ] && [ ! -f "$tmp/out/hung-required/env.0" ]; echo $?)

# 10. A dead socket path (a socket file nobody listens on).
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$tmp/dead.sock"
plugstack "socket=$tmp/dead.sock broker=only"
step dead -n 1
expect "dead broker, broker=only: srun succeeds in ${secs}s" $([ "$rc" -eq 0 ] && [ "$secs" -lt 15 ]; echo $?)
unbound dead 0
plugstack "socket=$tmp/dead.sock input=$FIXTURE"
step dead-fallback -n 2
bound dead-fallback 0 "$tmp/plan.json"
bound dead-fallback 1 "$tmp/plan.json"

# 11. sbatch --railbind=verbose: the option reaches the job's steps.
plugstack "input=$FIXTURE broker=off"
mkdir -p "$tmp/out/sbatch"
OUT=$tmp/out/sbatch timeout 60 sbatch -Q --wait -t 1 -n 2 --railbind=verbose \
	-o "$tmp/out/sbatch/stdout" -e "$tmp/out/sbatch/stderr" \
	--wrap "srun sh $tmp/task.sh" >/dev/null 2>"$logs/sbatch.err"
rc=$?
err=$(cat "$tmp/out/sbatch/stderr" "$logs/sbatch.err" 2>/dev/null)
expect "sbatch --wait --railbind=verbose -n 2 --wrap \"srun ...\" succeeds" $rc
bound sbatch 0 "$tmp/plan.json"
bound sbatch 1 "$tmp/plan.json"
n=$(printf '%s\n' "$err" | grep -c '^railbind: task [01] of 2: ')
expect "sbatch --railbind=verbose: one line per task in the job's stderr" $(($n != 2))

# 12. A bad plugstack.conf argument: the plugin refuses to load, saying why.
plugstack "input=$FIXTURE frobnicate"
step badarg -n 1
expect "plugstack.conf argument frobnicate: named in the message" \
	$(grep -q 'plugstack.conf argument "frobnicate"' "$tmp/out/badarg/stderr"; echo $?)
unbound badarg 0

finish
