#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# railbind verify, black box, with real processes: stand-in ranks (rank.c)
# bound right and wrong with taskset, set_mempolicy, memory touched, threads,
# holding stand-in device files of a --root tree (mkroot.sh) or real device
# nodes that the tree's sysfs numbers stand for; judged against the
# tests/verify/*.topo machines (NUMA node 0 is CPU 0, node 1 is CPU 1 of this
# host). Every verdict in JSON, text, Prometheus and NFD with its exit code;
# leases from the broker's file; `railbind run`'s environment; CUDA_VISIBLE_DEVICES
# by index and UUID; NCCL_IB_HCA; processes that cannot be read (another user,
# hidepid=2), have exited, or hold nothing; bad command lines.
# Needs RAILBIND, BUILD, RANK (the stand-in rank), jq, taskset. WRAP runs railbind
# under a wrapper (valgrind); VERIFY_QUICK=1 runs the first scene only.
set -u
: "${RAILBIND:?set RAILBIND to the railbind binary}"
: "${BUILD:?set BUILD to the build directory}"
: "${RANK:?set RANK to the stand-in rank binary}"
here=$(cd "$(dirname "$0")" && pwd)
FIX=$BUILD/verify
WRAP=${WRAP:-}
pass=0
fail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/railbind-verify.XXXXXX") || exit 1
# Readable by the unprivileged user of the setpriv tests; its ranks write there.
chmod 755 "$tmp"
mkdir -m 1777 "$tmp/ready"
started=
cleanup() {
	for p in $started; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
for f in verify8 two-node; do
	[ -f "$FIX/$f.xml" ] || { echo "verify: $FIX/$f.xml missing; run make $FIX/$f.xml"; exit 1; }
done
if [ "$(getconf _NPROCESSORS_ONLN)" -lt 2 ] || ! taskset -c 1 true 2>/dev/null; then
	echo "verify: needs CPUs 0 and 1 (the fixtures' two NUMA nodes); skipped"
	echo "0 passed, 0 failed"
	exit 0
fi

root=$tmp/root
sh "$here/mkroot.sh" "$root" <<'EOF'
gpu 0 0000:04:00.0
gpu 1 0000:05:00.0
gpu 2 0000:14:00.0
gpu 3 0000:15:00.0
gpu 4 0000:24:00.0
gpu 5 0000:25:00.0 GPU-5e5e5e5e-0000-4000-8000-000000000005
gpu 6 0000:34:00.0
gpu 7 0000:35:00.0
nic 0 mlx5_0 0000:06:00.0
nic 1 mlx5_1 0000:07:00.0
nic 2 mlx5_2 0000:16:00.0
nic 3 mlx5_3 0000:17:00.0
nic 4 mlx5_4 0000:26:00.0
nic 5 mlx5_5 0000:27:00.0
nic 6 mlx5_6 0000:36:00.0
nic 7 mlx5_7 0000:37:00.0
nic 8 mlx5_8 0000:84:00.0
EOF
chmod -R a+rX "$root"
D=$root/dev

# start NAME [words...] + RANK ARGS: a rank in the background, its command line
# led by the words (taskset, env, railbind run ... --); its pid in $NAME once it
# is ready (memory touched, files open).
n=0
start() {
	name=$1
	shift
	n=$((n + 1))
	ready=$tmp/ready/$n
	pre=
	while [ "$1" != + ]; do pre="$pre $1"; shift; done
	shift
	# shellcheck disable=SC2086
	$pre "$RANK" "$@" --ready "$ready" >"$tmp/rank.$n.err" 2>&1 &
	i=0
	while [ ! -s "$ready" ] && [ $i -lt 400 ]; do
		kill -0 $! 2>/dev/null || break
		sleep 0.05
		i=$((i + 1))
	done
	if [ ! -s "$ready" ]; then
		echo "verify: rank $name did not start: $(cat "$tmp/rank.$n.err")"
		exit 1
	fi
	pid=$(cat "$ready")
	started="$started $pid"
	eval "$name=$pid"
}
stop() {
	for p in "$@"; do
		kill "$p" 2>/dev/null
		while kill -0 "$p" 2>/dev/null; do sleep 0.02; done
		started=$(echo "$started" | tr ' ' '\n' | grep -vx "$p" | tr '\n' ' ')
	done
}
V() {
	# shellcheck disable=SC2086
	$WRAP "$RAILBIND" verify --no-broker --root "$root" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}
# The ids of a process's findings, sorted, comma-separated.
ids() { jq -r --argjson p "$1" '[.processes[] | select(.pid == $p) | .findings[].id] | sort | join(",")' "$tmp/out"; }
status_of() { jq -r --argjson p "$1" '.processes[] | select(.pid == $p) | .status' "$tmp/out"; }

# ---- 1. Eight ranks, three mis-bound three ways -------------------------------
# Ranks 0-7 on GPU i and its rail mlx5_i, CPU 0 (their plan). Rank 2 runs on
# CPU 1 (the other NUMA node), rank 5 is not bound at all, rank 6 opened
# mlx5_8 (across the socket) instead of its rail.
for k in 0 1 3 4 7; do
	start r$k taskset -c 0 env LOCAL_RANK=$k + --open "$D/nvidia$k" --open "$D/nvidiactl" \
		--open "$D/nvidia-uvm" --open "$D/infiniband/uverbs$k" --mem 24 --threads 2
done
start r2 taskset -c 1 env LOCAL_RANK=2 + --open "$D/nvidia2" --open "$D/nvidia-uvm" \
	--open "$D/infiniband/uverbs2" --mem 24
start r5 env LOCAL_RANK=5 + --open "$D/nvidia5" --open "$D/nvidia-uvm" \
	--open "$D/infiniband/uverbs5" --mem 24
start r6 taskset -c 0 env LOCAL_RANK=6 + --open "$D/nvidia6" --open "$D/nvidia-uvm" \
	--open "$D/infiniband/uverbs8" --mem 24
# shellcheck disable=SC2154
eight="$r0 $r1 $r2 $r3 $r4 $r5 $r6 $r7"

V --all --json -i "$FIX/verify8.xml"
got=$(jq -r '[.processes[] | select(.status != "ok") | "\(.pid):\(.status):\([.findings[].id] | join("+"))"] | sort | join(" ")' "$tmp/out")
want=$(printf '%s\n' "$r2:fail:cpu-numa" "$r5:fail:unbound" "$r6:fail:nic-not-rail" | sort | tr '\n' ' ' | sed 's/ $//')
if [ "$rc" -eq 2 ] && [ "$got" = "$want" ] &&
    [ "$(jq '[.processes[] | select(.status == "ok")] | length' "$tmp/out")" = 5 ] &&
    [ "$(jq -r .status "$tmp/out")" = fail ] && [ "$(jq -r .schema "$tmp/out")" = railbind.verify/1 ]
then ok; else bad "eight ranks --json: rc=$rc, got '$got', want '$want'"; fi
# Each finding has its evidence and a fix.
if jq -e --argjson a "$r2" --argjson b "$r5" --argjson c "$r6" '
    ([.processes[] | select(.pid == $a) | .findings[0] | .evidence.cpus == "1" and .evidence.far_cpus == "1" and .evidence.target_numa == "0" and .evidence.ran == "1"] == [true]) and
    ([.processes[] | select(.pid == $b) | .findings[0] | .evidence.cpus == "0-1" and .evidence.cpus_numa == "0-1"] == [true]) and
    ([.processes[] | select(.pid == $c) | .findings[0] | .evidence.path == "SYS" and .evidence.planned_path == "PIX" and .evidence.planned_nics == "mlx5_6" and .evidence.used["open devices"] == ["mlx5_8"]] == [true]) and
    ([.processes[].findings[] | .remedy != null and (.message | length) > 0] | all)' "$tmp/out" >/dev/null
then ok; else bad "eight ranks: evidence"; fi
# What each rank is seen to use: GPU, rail, CPUs, threads, memory on node 0, rank.
if jq -e --argjson p "$r3" '.processes[] | select(.pid == $p) |
    .gpus == [{"pci":"0000:15:00.0","index":3,"numa":0,"via":[.gpus[0].via[0]]}] and
    (.gpus[0].via[0] | endswith("/dev/nvidia3")) and .nics[0].name == "mlx5_3" and
    .nics[0].path == "PIX" and .cpus.allowed == "0" and .cpus.ran == "0" and .cpus.threads == 3 and
    .memory.anon_kb["0"] >= 24576 and .memory.far_pct == 0 and .rank.local_rank == 3 and
    .planned.from == "local-rank" and .planned.gpu == "0000:15:00.0" and .planned.nics == ["mlx5_3"] and
    .planned.cpus == "0" and .env.LOCAL_RANK == "3"' "$tmp/out" >/dev/null
then ok; else bad "eight ranks: rank 3's facts"; fi
V --all -i "$FIX/verify8.xml"
if [ "$rc" -eq 2 ] && grep -q '^Status: fail$' "$tmp/out" &&
    awk -v a="$r2" -v b="$r5" -v c="$r6" '
	/^(Failures|Warnings|Not decided):/ { sect = $0; next }
	/^Checks:/ { sect = "" }
	sect == "Failures:" && /^  pid / { n++; seen[$2 " " $0] = 1
		if (($2 == a && index($0, "[cpu-numa]")) || ($2 == b && index($0, "[unbound]")) ||
		    ($2 == c && index($0, "[nic-not-rail]"))) good++ }
	sect == "Warnings:" { warned = 1 }
	END { exit !(n == 3 && good == 3 && !warned) }' "$tmp/out" &&
    [ "$(grep -c ' ok$' "$tmp/out")" = 5 ] && ! grep -q "$(printf '\033')" "$tmp/out"
then ok; else bad "eight ranks text: rc=$rc"; cat "$tmp/out"; fi
V --all --prom -i "$FIX/verify8.xml"
if [ "$rc" -eq 2 ] && grep -qx 'railbind_verify_status 2' "$tmp/out" &&
    grep -qx 'railbind_verify_processes{status="fail"} 3' "$tmp/out" &&
    grep -qx 'railbind_verify_processes{status="ok"} 5' "$tmp/out" &&
    [ "$(grep -c '^railbind_rank_misbound{' "$tmp/out")" = 3 ] &&
    grep -qx "railbind_rank_misbound{pid=\"$r2\",comm=\"verify-rank\",job=\"\",rank=\"2\",gpu=\"0000:14:00.0\",check=\"cpu-numa\",severity=\"fail\"} 2" "$tmp/out" &&
    grep -q "^railbind_rank_misbound{pid=\"$r5\",.*check=\"unbound\",severity=\"fail\"} 2\$" "$tmp/out" &&
    grep -q "^railbind_rank_misbound{pid=\"$r6\",.*check=\"nic-not-rail\",severity=\"fail\"} 2\$" "$tmp/out" &&
    [ "$(grep -c '^railbind_rank_status{.*} 0$' "$tmp/out")" = 5 ] &&
    grep -qx 'railbind_verify_check_status{check="memory-far"} 0' "$tmp/out"
then ok; else bad "eight ranks --prom: rc=$rc"; cat "$tmp/out"; fi
V --all --nfd -i "$FIX/verify8.xml"
if [ "$rc" -eq 2 ] && grep -qx 'railbind.verify.status=fail' "$tmp/out" &&
    grep -qx 'railbind.verify.ranks=8' "$tmp/out" && grep -qx 'railbind.verify.misbound=3' "$tmp/out" &&
    [ "$(grep '=fail$' "$tmp/out" | sort | tr '\n' ' ')" = "railbind.verify.cpu-numa=fail railbind.verify.nic-not-rail=fail railbind.verify.status=fail railbind.verify.unbound=fail " ] &&
    ! grep -qv '^[A-Za-z0-9._/-]*=[A-Za-z0-9._-]*$' "$tmp/out"
then ok; else bad "eight ranks --nfd: rc=$rc"; cat "$tmp/out"; fi
# --prom-file: the same text, written whole.
V --all --prom -i "$FIX/verify8.xml"
cp "$tmp/out" "$tmp/prom.want"
V --all -i "$FIX/verify8.xml" --prom-file "$tmp/ranks.prom"
sed 's/^railbind_verify_processes.*//' "$tmp/prom.want" >"$tmp/a"
if [ "$rc" -eq 2 ] && [ -s "$tmp/ranks.prom" ] && grep -q '^Status: fail$' "$tmp/out" &&
    [ "$(grep -c '^railbind_rank_misbound' "$tmp/ranks.prom")" = 3 ] &&
    [ -z "$(find "$tmp" -name '*ranks.prom?*')" ]; then ok
else bad "--prom-file: rc=$rc"; fi
# --pid judges only those.
V --json -i "$FIX/verify8.xml" --pid "$r2,$r3" "$r4"
if [ "$rc" -eq 2 ] && [ "$(jq -c '[.processes[].pid]' "$tmp/out")" = "$(printf '%s\n' "$r2" "$r3" "$r4" | sort -n | jq -cs .)" ] &&
    [ "$(jq -r .scope "$tmp/out")" = pids ]; then ok; else bad "--pid: rc=$rc"; fi

# Fixed: the two rebound in place (taskset -p), rank 6 restarted on its rail.
taskset -pc 0 "$r2" >/dev/null && taskset -pc 0 "$r5" >/dev/null
stop "$r6"
start r6 taskset -c 0 env LOCAL_RANK=6 + --open "$D/nvidia6" --open "$D/nvidia-uvm" \
	--open "$D/infiniband/uverbs6" --mem 24
V --all --json -i "$FIX/verify8.xml"
if [ "$rc" -eq 0 ] && [ "$(jq '[.processes[] | select(.status == "ok")] | length' "$tmp/out")" = 8 ] &&
    [ "$(jq -r .status "$tmp/out")" = ok ]; then ok
else bad "fixed: rc=$rc $(jq -c '[.processes[] | select(.status != "ok") | .findings]' "$tmp/out")"; fi
for f in --prom --nfd ""; do
	V --all $f -i "$FIX/verify8.xml"
	case $f in
	--prom) grep -qx 'railbind_verify_status 0' "$tmp/out" && ! grep -q '^railbind_rank_misbound{' "$tmp/out" ;;
	--nfd) grep -qx 'railbind.verify.status=ok' "$tmp/out" && grep -qx 'railbind.verify.misbound=0' "$tmp/out" ;;
	*) grep -q '^Status: ok$' "$tmp/out" && ! grep -q '^Failures:' "$tmp/out" ;;
	esac
	if [ $? -eq 0 ] && [ "$rc" -eq 0 ]; then ok; else bad "fixed $f: rc=$rc"; fi
done
if [ "${VERIFY_QUICK:-}" = 1 ]; then
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit
fi

# ---- 2. Two ranks on one GPU ----------------------------------------------------
# Rank 4's twin claims local rank 4 but opened GPU 3 (with rank 4's rail): it
# alone is blamed, twice.
start twin taskset -c 0 env LOCAL_RANK=4 + --open "$D/nvidia3" --open "$D/infiniband/uverbs4"
V --json -i "$FIX/verify8.xml" --pid "$r3" "$twin"
if [ "$rc" -eq 2 ] && [ "$(ids "$twin")" = "gpu-not-planned,gpu-shared" ] &&
    [ "$(status_of "$r3")" = ok ] &&
    jq -e --argjson p "$twin" --argjson o "$r3" '.processes[] | select(.pid == $p) | .findings[] |
	select(.id == "gpu-shared") | .evidence.pids == [$o] and .evidence.gpu == "0000:15:00.0"' "$tmp/out" >/dev/null &&
    jq -e --argjson p "$twin" '.processes[] | select(.pid == $p) | .findings[] |
	select(.id == "gpu-not-planned") | .evidence.planned_gpu == "0000:24:00.0" and .evidence.from == "local-rank"' "$tmp/out" >/dev/null
then ok; else bad "gpu-shared: rc=$rc $(ids "$twin") / $(status_of "$r3")"; fi
# Neither can be told apart (no rank, no lease): both are blamed.
start anon1 taskset -c 0 + --open "$D/nvidia7"
V --json -i "$FIX/verify8.xml" --pid "$anon1" "$r7"
stop "$twin"
# r7 has LOCAL_RANK=7 for GPU 7: rightful; anon1 is blamed alone.
if [ "$rc" -eq 2 ] && [ "$(ids "$anon1")" = gpu-shared ] && [ "$(status_of "$r7")" = ok ]
then ok; else bad "gpu-shared, one rightful: rc=$rc"; fi
start anon2 taskset -c 0 + --open "$D/nvidia7"
V --json -i "$FIX/verify8.xml" --pid "$anon1" "$anon2"
if [ "$rc" -eq 2 ] && [ "$(ids "$anon1")" = gpu-shared ] && [ "$(ids "$anon2")" = gpu-shared ]
then ok; else bad "gpu-shared, none rightful: rc=$rc"; fi
stop "$anon1" "$anon2"

# ---- 3. The broker's lease ------------------------------------------------------
# A lease for rank 2 (GPU 14:00.0, CPU 0) held by a process on GPU 3.
start leased taskset -c 0 env LOCAL_RANK=3 + --open "$D/nvidia3"
start_time=$(awk '{ sub(/.*\) /, ""); split($0, f, " "); print f[20] }' "/proc/$leased/stat")
mkdir -p "$root/run/railbind"
lease() {
	printf '{"schema":"railbind.leases/1","leases":[{"job":"j1","rank":2,"pid":%s,"uid":0,"gpu":"0000:14:00.0","cpus":"0","until":"exit","start":%s}]}\n' \
		"$leased" "$1" >"$root/run/railbind/leases.json"
}
lease "$start_time"
V --json -i "$FIX/verify8.xml" --pid "$leased"
if [ "$rc" -eq 2 ] && [ "$(ids "$leased")" = gpu-not-planned ] &&
    [ "$(jq -r .leases.source "$tmp/out")" = file ] &&
    jq -e --argjson p "$leased" '.processes[] | select(.pid == $p) |
	.lease.job == "j1" and .lease.rank == 2 and .rank.local_rank == 2 and .rank.job == "j1" and
	.planned.from == "lease" and .planned.cpus_from == "lease" and
	(.findings[0].message | contains("its lease (job j1, rank 2)"))' "$tmp/out" >/dev/null
then ok; else bad "lease: rc=$rc $(ids "$leased")"; fi
# The same pid with another start time is another process: no lease.
lease $((start_time + 1))
V --json -i "$FIX/verify8.xml" --pid "$leased"
if [ "$rc" -eq 0 ] && jq -e '.processes[0].lease == null and .leases.count == 1' "$tmp/out" >/dev/null
then ok; else bad "stale lease: rc=$rc"; fi
echo '{"leases": 3}' >"$root/run/railbind/leases.json"
V --json -i "$FIX/verify8.xml" --pid "$leased"
if [ "$rc" -eq 0 ] && [ "$(jq -r .leases.source "$tmp/out")" = none ] &&
    jq -r .leases.from "$tmp/out" | grep -q 'not a railbind.leases/1 file'
then ok; else bad "bad lease file: rc=$rc"; fi
# A FIFO in its place: refused, not waited on.
rm -f "$root/run/railbind/leases.json"
mkfifo "$root/run/railbind/leases.json"
V --json -i "$FIX/verify8.xml" --pid "$leased"
if [ "$rc" -eq 0 ] && jq -r .leases.from "$tmp/out" | grep -q 'a FIFO, expected a regular file'
then ok; else bad "a FIFO for a lease file: rc=$rc"; fi
rm -rf "$root/run"
# A socket nobody listens on: said, then the file (absent) is tried.
"$RAILBIND" verify --root "$root" -s "$tmp/none.sock" --json -i "$FIX/verify8.xml" --pid "$leased" >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 0 ] && jq -r .leases.from "$tmp/out" | grep -q "no broker at $tmp/none.sock"
then ok; else bad "no broker"; fi
stop "$leased"

# ---- 4. railbind run's environment is the reference ---------------------------
start viarun env RAILBIND_SOCKET="$tmp/none.sock" "$RAILBIND" run -i "$FIX/verify8.xml" --rank 3 -- \
	+ --open "$D/nvidia3" --open "$D/infiniband/uverbs3" --mem 24
V --json -i "$FIX/verify8.xml" --pid "$viarun"
if [ "$rc" -eq 0 ] && jq -e '.processes[0] | .planned.from == "railbind-env" and
    .planned.cpus_from == "railbind-env" and .cpus.allowed == "0" and .memory.policy == "prefer:0" and
    .env.RAILBIND_GPU == "0000:15:00.0" and .env.NCCL_IB_HCA == "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_7:1" and .rank.local_rank == 3' \
    "$tmp/out" >/dev/null
then ok; else bad "railbind run: rc=$rc $(jq -c '.processes[0] | [.planned, .memory.policy]' "$tmp/out")"; fi
stop "$viarun"
# The same, but the process opened another GPU than RAILBIND_GPU names.
start viarun env RAILBIND_SOCKET="$tmp/none.sock" "$RAILBIND" run -i "$FIX/verify8.xml" --rank 3 -- \
	+ --open "$D/nvidia0"
V --json -i "$FIX/verify8.xml" --pid "$viarun"
# With the node's NCCL_IB_HCA, NCCL on GPU 0 picks GPU 0's rail, not the
# plan's: the wrong GPU brings the wrong NIC with it.
if [ "$rc" -eq 2 ] && [ "$(ids "$viarun")" = gpu-not-planned,nic-not-rail ] &&
    jq -e '.processes[0].findings[0].message | contains("RAILBIND_GPU")' "$tmp/out" >/dev/null
then ok; else bad "railbind run, wrong GPU: rc=$rc $(ids "$viarun")"; fi
stop "$viarun"

# ---- 5. Which GPU, when it holds them all --------------------------------------
all_gpus="--open $D/nvidia0 --open $D/nvidia1 --open $D/nvidia2 --open $D/nvidia3 --open $D/nvidia4 --open $D/nvidia5 --open $D/nvidia6 --open $D/nvidia7 --open $D/nvidia-uvm"
# shellcheck disable=SC2086
start cvd taskset -c 0 env CUDA_VISIBLE_DEVICES=3 + $all_gpus
# shellcheck disable=SC2086
start uuid taskset -c 0 env CUDA_VISIBLE_DEVICES=GPU-5e5e5e5e-0000-4000-8000-000000000005,1 + $all_gpus
# shellcheck disable=SC2086
start every taskset -c 0 + $all_gpus
start uvmonly taskset -c 0 env CUDA_VISIBLE_DEVICES=6 + --open "$D/nvidia-uvm" --open "$D/nvidiactl"
# A monitor holds every GPU: with a rank of its own it is judged, without not.
# shellcheck disable=SC2086
start everyrank taskset -c 0 env LOCAL_RANK=0 + $all_gpus
V --json -i "$FIX/verify8.xml" --pid "$cvd" "$uuid" "$every" "$uvmonly" "$everyrank"
gpus() { jq -r --argjson p "$1" '[.processes[] | select(.pid == $p) | .gpus[].pci] | join(",")' "$tmp/out"; }
if [ "$rc" -eq 0 ] && [ "$(gpus "$cvd")" = 0000:15:00.0 ] &&
    [ "$(gpus "$uuid")" = 0000:05:00.0,0000:25:00.0 ] && [ "$(gpus "$everyrank" | tr ',' '\n' | wc -l)" = 8 ] &&
    [ "$(status_of "$everyrank")" = ok ] &&
    jq -e --argjson p "$every" '.processes[] | select(.pid == $p) | .state == "not-judged" and
	(.unknown[0].reason | contains("node service"))' "$tmp/out" >/dev/null &&
    [ "$(gpus "$uvmonly")" = 0000:34:00.0 ] &&
    jq -e --argjson p "$cvd" '.processes[] | select(.pid == $p) | .gpus[0].via == [.gpus[0].via[0], "CUDA_VISIBLE_DEVICES"]' "$tmp/out" >/dev/null &&
    jq -e --argjson p "$uvmonly" '.processes[] | select(.pid == $p) | .gpus[0].via == ["CUDA_VISIBLE_DEVICES"]' "$tmp/out" >/dev/null
then ok; else bad "CUDA_VISIBLE_DEVICES: rc=$rc $(gpus "$cvd") / $(gpus "$uuid") / $(gpus "$uvmonly")"; fi
V --all --json -i "$FIX/verify8.xml"
if [ "$(jq --argjson p "$every" '[.processes[] | select(.pid == $p)] | length' "$tmp/out")" = 0 ]
then ok; else bad "--all lists a node service"; fi
stop "$cvd" "$uuid" "$every" "$uvmonly" "$everyrank"

# ---- 6. NCCL_IB_HCA and UCX_NET_DEVICES ----------------------------------------
# Each its own job: ranks of one job with different lists are scene 6b's.
start hca taskset -c 0 env SLURM_JOB_ID=6a LOCAL_RANK=1 NCCL_IB_HCA==mlx5_8:1 + --open "$D/nvidia1" --open "$D/infiniband/uverbs1"
start hcaok taskset -c 0 env SLURM_JOB_ID=6b LOCAL_RANK=2 NCCL_IB_HCA=mlx5_2 UCX_NET_DEVICES=mlx5_2:1 + --open "$D/nvidia2"
start hcanot taskset -c 0 env SLURM_JOB_ID=6c LOCAL_RANK=0 'NCCL_IB_HCA=^mlx5_0,mlx5_1' + --open "$D/nvidia0"
start ucx taskset -c 0 env SLURM_JOB_ID=6d LOCAL_RANK=3 UCX_NET_DEVICES=mlx5_2:1 + --open "$D/nvidia3"
V --json -i "$FIX/verify8.xml" --pid "$hca" "$hcaok" "$hcanot" "$ucx"
if [ "$rc" -eq 2 ] && [ "$(ids "$hca")" = nic-not-rail ] && [ "$(status_of "$hcaok")" = ok ] &&
    [ "$(ids "$hcanot")" = nic-not-rail ] && [ "$(ids "$ucx")" = nic-not-rail ] &&
    jq -e --argjson p "$hca" '.processes[] | select(.pid == $p) | .findings[0] |
	.severity == "fail" and .evidence.used.NCCL_IB_HCA == ["mlx5_8"] and .evidence.used["open devices"] == ["mlx5_1"]' "$tmp/out" >/dev/null &&
    jq -e --argjson p "$hcanot" '.processes[] | select(.pid == $p) | .findings[0] |
	.severity == "fail" and .evidence.path == "NODE" and (.evidence.used.NCCL_IB_HCA | index("mlx5_0") | not)' "$tmp/out" >/dev/null &&
    jq -e --argjson p "$ucx" '.processes[] | select(.pid == $p) | .findings[0] |
	.severity == "warn" and .evidence.used.UCX_NET_DEVICES == ["mlx5_2"] and .evidence.path == "PIX"' "$tmp/out" >/dev/null
then ok; else bad "NCCL_IB_HCA/UCX: rc=$rc $(ids "$hca")/$(status_of "$hcaok")/$(ids "$hcanot")/$(ids "$ucx")"; fi
stop "$hca" "$hcaok" "$hcanot" "$ucx"

# ---- 6b. One job, one NCCL_IB_HCA on every rank of the node ---------------------
# The node-wide list: `railbind plan`'s, the same on every rank (where a plan
# still gives each rank its own, "=" and the union of the ranks' rail ports).
"$RAILBIND" plan --json -i "$FIX/verify8.xml" >"$tmp/plan" 2>"$tmp/err"
NW=$(jq -r 'if ([.ranks[].env.NCCL_IB_HCA] | unique | length) == 1 then .ranks[0].env.NCCL_IB_HCA
	else "=" + ([.ranks[].nics[] | "\(.name):\(.port)"] | unique | join(",")) end' "$tmp/plan")
case $NW in =mlx5_0:1,mlx5_1:1,*) ok ;; *) bad "node-wide NCCL_IB_HCA of verify8: $NW" ;; esac
# Rank 1 carries the per-rank form an older railbind gave (its own rail only);
# ranks 0 and 2 the node's. Rank 3 has NCCL_IB_HCA unset: NCCL opens every port.
start w0 taskset -c 0 env SLURM_JOB_ID=66 LOCAL_RANK=0 NCCL_IB_HCA="$NW" + --open "$D/nvidia0" --open "$D/infiniband/uverbs0"
start w1 taskset -c 0 env SLURM_JOB_ID=66 LOCAL_RANK=1 NCCL_IB_HCA==mlx5_1:1 + --open "$D/nvidia1" --open "$D/infiniband/uverbs1"
start w2 taskset -c 0 env SLURM_JOB_ID=66 LOCAL_RANK=2 NCCL_IB_HCA="$NW" + --open "$D/nvidia2" --open "$D/infiniband/uverbs2"
start w3 taskset -c 0 env SLURM_JOB_ID=66 LOCAL_RANK=3 + --open "$D/nvidia3" --open "$D/infiniband/uverbs3"
# Another job's rank with its own list is no node-mate of these.
start x4 taskset -c 0 env SLURM_JOB_ID=67 LOCAL_RANK=4 NCCL_IB_HCA==mlx5_4:1 + --open "$D/nvidia4"
V --json -i "$FIX/verify8.xml" --pid "$w0" "$w1" "$w2" "$w3" "$x4"
finding() { jq -c --argjson p "$1" --arg id "$2" '.processes[] | select(.pid == $p) | .findings[] | select(.id == $id)' "$tmp/out"; }
if [ "$rc" -eq 2 ] && [ "$(ids "$w1")" = nccl-hca-mismatch ] && [ "$(ids "$w3")" = nccl-hca-mismatch ] &&
    [ "$(status_of "$w0")" = ok ] && [ "$(status_of "$w2")" = ok ] && [ "$(status_of "$x4")" = ok ] &&
    finding "$w1" nccl-hca-mismatch | jq -e --arg nw "$NW" --argjson w0 "$w0" '.severity == "fail" and
	.evidence.cause == "per-rank-railbind" and .evidence.NCCL_IB_HCA == "=mlx5_1:1" and
	.evidence.node_wide == $nw and (.remedy | contains("NCCL_IB_HCA=" + $nw)) and
	(.message | contains("older railbind")) and any(.evidence.mates[]; .pid == $w0 and .NCCL_IB_HCA == $nw)' >/dev/null &&
    finding "$w3" nccl-hca-mismatch | jq -e '.evidence.NCCL_IB_HCA == null and .evidence.cause == null and
	(.message | contains("unset"))' >/dev/null &&
    [ "$(jq '.summary["nccl-hca-mismatch"]' "$tmp/out")" = '"fail"' ]
then ok; else bad "nccl-hca-mismatch, per-rank form planted: rc=$rc $(ids "$w1")/$(ids "$w3")/$(status_of "$w0")/$(status_of "$x4") $(finding "$w1" nccl-hca-mismatch)"; fi
# The text form names the cause.
V -i "$FIX/verify8.xml" --pid "$w0" "$w1"
if [ "$rc" -eq 2 ] && grep -q "nccl-hca-mismatch.*older railbind" "$tmp/out"
then ok; else bad "nccl-hca-mismatch in text: rc=$rc $(head -c 400 "$tmp/out")"; fi
stop "$w1" "$w3"
# Every rank with the node-wide form: nothing to say; NCCL picks each GPU's own rail.
start w1 taskset -c 0 env SLURM_JOB_ID=66 LOCAL_RANK=1 NCCL_IB_HCA="$NW" + --open "$D/nvidia1" --open "$D/infiniband/uverbs1"
V --json -i "$FIX/verify8.xml" --pid "$w0" "$w1" "$w2"
if [ "$rc" -eq 0 ] && [ "$(jq -r '[.processes[].status] | unique | join(",")' "$tmp/out")" = ok ] &&
    [ "$(jq '.summary["nccl-hca-mismatch"]' "$tmp/out")" = '"ok"' ]
then ok; else bad "node-wide NCCL_IB_HCA on every rank: rc=$rc $(ids "$w0")/$(ids "$w1")/$(ids "$w2")"; fi
stop "$w0" "$w1" "$w2" "$x4"
# All ranks agreeing on one wrong list: no mismatch, but NCCL picks another GPU's
# rail (the nearest it may open) and that is nic-not-rail, its fix the node's list.
start y0 taskset -c 0 env SLURM_JOB_ID=68 LOCAL_RANK=0 NCCL_IB_HCA==mlx5_2:1,mlx5_3:1 + --open "$D/nvidia0"
start y2 taskset -c 0 env SLURM_JOB_ID=68 LOCAL_RANK=2 NCCL_IB_HCA==mlx5_2:1,mlx5_3:1 + --open "$D/nvidia2"
V --json -i "$FIX/verify8.xml" --pid "$y0" "$y2"
if [ "$rc" -eq 2 ] && [ "$(ids "$y0")" = nic-not-rail ] && [ "$(status_of "$y2")" = ok ] &&
    finding "$y0" nic-not-rail | jq -e --arg nw "$NW" '.evidence.used.NCCL_IB_HCA != null and
	(.evidence.used.NCCL_IB_HCA | index("mlx5_0") | not) and (.remedy | contains("NCCL_IB_HCA=" + $nw))' >/dev/null
then ok; else bad "one wrong list on every rank: rc=$rc $(ids "$y0")/$(ids "$y2") $(finding "$y0" nic-not-rail)"; fi
stop "$y0" "$y2"

# An RDMA service (no GPU, no rank) is not judged; a CPU-only rank is, against its NIC.
start svc + --open "$D/infiniband/uverbs8"
start cpurank taskset -c 1 env LOCAL_RANK=0 + --open "$D/infiniband/uverbs0" --mem 24
V --json -i "$FIX/verify8.xml" --pid "$svc" "$cpurank"
if [ "$rc" -eq 1 ] && jq -e --argjson p "$svc" '.processes[] | select(.pid == $p) | .state == "not-judged" and
	(.unknown[0].reason | contains("RDMA service"))' "$tmp/out" >/dev/null &&
    [ "$(ids "$cpurank")" = cpu-numa ] && [ "$(status_of "$cpurank")" = warn ]
then ok; else bad "RDMA-only processes: rc=$rc $(ids "$cpurank")"; fi
stop "$svc" "$cpurank"

# ---- 7. Memory: where it is, the policy ------------------------------------------
# two-node: GPU 04:00.0 on node 0 (CPU 0), GPU 84:00.0 on node 1 (CPU 1). This
# host has one memory node (0); its pages are all there, far from node 1.
T=$FIX/two-node.xml
sh "$here/mkroot.sh" "$tmp/root2" <<'EOF'
gpu 0 0000:04:00.0
gpu 1 0000:84:00.0
EOF
# A stand-in counts only inside the tree given: ranks holding the first tree's
# files are nothing to this one.
start other taskset -c 0 + --open "$D/nvidia0" --open "$D/infiniband/uverbs0"
"$RAILBIND" verify --no-broker --root "$tmp/root2" --json -i "$T" --pid "$other" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 3 ] && jq -e '.processes[0].state == "not-judged"' "$tmp/out" >/dev/null
then ok; else bad "another tree's stand-ins: rc=$rc"; fi
stop "$other"
R2=$tmp/root2/dev
start near taskset -c 0 + --open "$R2/nvidia0" --policy bind:0 --mem 24
start far taskset -c 1 + --open "$R2/nvidia1" --mem 24
start farbind taskset -c 1 + --open "$R2/nvidia1" --policy bind:0 --mem 24
start small taskset -c 1 + --open "$R2/nvidia1" --mem 1
# One at a time: three of them share GPU 84:00.0.
M() { "$RAILBIND" verify --no-broker --root "$tmp/root2" --json -i "$T" --pid "$1" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
M "$near"
if [ "$rc" -eq 0 ] && jq -e '.processes[0] | .status == "ok" and .memory.policy == "bind:0" and
    .memory.far_pct == 0 and .memory.anon_kb["0"] >= 24576' "$tmp/out" >/dev/null
then ok; else bad "memory near: rc=$rc"; fi
M "$far"
if [ "$rc" -eq 2 ] && [ "$(ids "$far")" = memory-far ] &&
    jq -e '.processes[0].findings[0] | .evidence.target_numa == "1" and .evidence.far_kb >= 24576 and
	(.message | startswith("100% of its"))' "$tmp/out" >/dev/null
then ok; else bad "memory far: rc=$rc $(ids "$far")"; fi
M "$farbind"
if [ "$rc" -eq 2 ] && [ "$(ids "$farbind")" = memory-far,memory-policy ] &&
    jq -e '.processes[0].findings[] | select(.id == "memory-policy") |
	.evidence.policy == "bind:0" and .severity == "fail"' "$tmp/out" >/dev/null
then ok; else bad "memory bound far: rc=$rc $(ids "$farbind")"; fi
# 1 MiB says nothing yet about where a rank's memory goes.
M "$small"
if [ "$rc" -eq 0 ] && [ "$(status_of "$small")" = ok ]; then ok; else bad "memory small: rc=$rc $(ids "$small")"; fi
stop "$near" "$far" "$farbind" "$small"

# ---- 8. Real device nodes told by their number -----------------------------------
# In this tree uverbs0 is 1:7 (/dev/full) and the NVIDIA major is 1, so
# /dev/zero (1:5) is NVIDIA minor 5, GPU 04:00.0.
maj=$(stat -c '%t' /dev/full)
sh "$here/mkroot.sh" "$tmp/root3" <<EOF
major $((0x$maj)) nvidia-frontend
gpu 5 0000:04:00.0
nic 0 mlx5_0 0000:05:00.0 $((0x$maj)):$((0x$(stat -c '%T' /dev/full)))
EOF
start real taskset -c 0 + --open /dev/zero --open /dev/full
"$RAILBIND" verify --no-broker --root "$tmp/root3" --json -i "$T" --pid "$real" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ] && jq -e '.processes[0] | .gpus[0].pci == "0000:04:00.0" and .gpus[0].via == ["/dev/zero"] and
    .nics[0].name == "mlx5_0" and .nics[0].via == "/dev/full"' "$tmp/out" >/dev/null
then ok; else bad "device numbers: rc=$rc $(jq -c '.processes[0] | [.gpus, .nics, .unknown]' "$tmp/out")"; fi
stop "$real"

# ---- 9. Processes that cannot be judged ------------------------------------------
start plain + --mem 1
sleep 0 &
gone=$!
wait "$gone"
V --json -i "$FIX/verify8.xml" --pid "$plain" "$gone"
if [ "$rc" -eq 3 ] && [ "$(jq -r .status "$tmp/out")" = unknown ] &&
    jq -e --argjson a "$plain" --argjson b "$gone" '
	(.processes[] | select(.pid == $a) | .status == "unknown" and .state == "not-judged" and
	 (.unknown[0].reason | contains("holds no GPU or RDMA device"))) and
	(.processes[] | select(.pid == $b) | .state == "exited" and (.unknown[0].reason | contains("no process")))' "$tmp/out" >/dev/null
then ok; else bad "nothing to judge: rc=$rc"; fi
stop "$plain"
# An empty tree, --all: nothing uses its devices.
mkdir -p "$tmp/empty"
"$RAILBIND" verify --no-broker --root "$tmp/empty" -i "$FIX/verify8.xml" >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 3 ] && grep -q '^No process uses a GPU or an RDMA device.$' "$tmp/out" && [ ! -s "$tmp/err" ]
then ok; else bad "empty --all"; fi
# Another user: as root the tests start nobody's processes and look as nobody.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null &&
    setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$RAILBIND"; then
	NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
	start mine $NOBODY taskset -c 0 env LOCAL_RANK=1 + --open "$D/nvidia1" --open "$D/infiniband/uverbs1"
	$NOBODY "$RAILBIND" verify --no-broker --root "$root" --json -i "$FIX/verify8.xml" --pid "$r0" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq 3 ] && jq -e '.processes[0] | .status == "unknown" and .state == "unreadable" and
	    (.unknown[0].reason | test("cannot read /proc/[0-9]+/fd: Permission denied"))' "$tmp/out" >/dev/null
	then ok; else bad "another user's process: rc=$rc"; fi
	$NOBODY "$RAILBIND" verify --no-broker --root "$root" --json -i "$FIX/verify8.xml" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq 0 ] && [ "$(jq -c '[.processes[].pid]' "$tmp/out")" = "[$mine]" ] &&
	    [ "$(jq .counts.skipped "$tmp/out")" -ge 8 ] && [ "$(jq .uid "$tmp/out")" = 65534 ]
	then ok; else bad "--all as a user: rc=$rc $(jq -c '[.processes[].pid, .counts]' "$tmp/out")"; fi
	# hidepid=2: the process is not even there for nobody.
	if unshare -m sh -c 'mount -t proc -o hidepid=2 proc /proc' 2>/dev/null; then
		unshare -m sh -c "mount -t proc -o hidepid=2 proc /proc && exec $NOBODY $RAILBIND verify --no-broker --root $root --json -i $FIX/verify8.xml --pid $r0" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		if [ "$rc" -eq 3 ] && jq -e '.processes[0] | .state == "exited" and (.unknown[0].reason | contains("hidepid"))' "$tmp/out" >/dev/null
		then ok; else bad "hidepid=2: rc=$rc $(cat "$tmp/err")"; fi
	else
		echo "verify: cannot mount proc with hidepid=2 here; that case skipped"
	fi
	stop "$mine"
else
	echo "verify: not root (or no setpriv): another user's processes and hidepid skipped"
fi

# ---- 10. The broker: its verify op, its leases ----------------------------------
# railbindd serving verify8 (the ranks of scene 1 still run, all where they
# belong); a client asks over the socket (tests/verify/ask.py).
# The system's python3 (a user's shim may be out of another user's reach).
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
if [ -n "${RAILBINDD:-}" ] && [ -n "$PY" ]; then
	mkdir -p "$tmp/state"
	"$RAILBINDD" -n --input "$FIX/verify8.xml" --root "$root" --socket "$tmp/b.sock" \
		--state-dir "$tmp/state" 2>"$tmp/broker.log" &
	bpid=$!
	started="$started $bpid"
	i=0
	while [ ! -S "$tmp/b.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	chmod 755 "$tmp/state"
	ask() { "$PY" "$here/ask.py" "$tmp/b.sock" "$1" >"$tmp/out" 2>"$tmp/err"; }
	ask "{\"v\":1,\"op\":\"verify\",\"id\":7,\"pids\":[$r2,$r3]}"
	if jq -e --argjson a "$r2" --argjson b "$r3" '.ok and .id == 7 and .exit_code == 0 and
	    .verify.schema == "railbind.verify/1" and .verify.scope == "pids" and
	    ([.verify.processes[].pid] | sort) == ([$a, $b] | sort) and
	    ([.verify.processes[].status] | unique) == ["ok"] and .verify.leases.source == "broker"' "$tmp/out" >/dev/null
	then ok; else bad "verify op: $(head -c 300 "$tmp/out")"; fi
	# Another within the second: overloaded, the connection kept. Four in a
	# row, so that a first one slowed past a second by a loaded machine does
	# not let the next through unrefused.
	sleep 1.1
	v='{"v":1,"op":"verify"}'
	"$PY" "$here/ask.py" "$tmp/b.sock" "$v" "$v" "$v" "$v" >"$tmp/out" 2>&1
	if [ "$(jq -s 'length' "$tmp/out")" = 4 ] && jq -s -e '[.[1:][] | select(.error == "overloaded" and
	    (.message | test("one verify a second")))] | length >= 1' "$tmp/out" >/dev/null &&
	    jq -s -e '.[0].ok and (.[0].verify.processes | length) >= 8' "$tmp/out" >/dev/null
	then ok; else bad "verify op twice: $(head -c 300 "$tmp/out")"; fi
	sleep 1.1
	for req in '{"v":1,"op":"verify","pids":[0]}' '{"v":1,"op":"verify","pids":"1"}' \
	    '{"v":1,"op":"verify","pids":[]}' '{"v":1,"op":"verify","pids":[1.5]}'; do
		ask "$req"
		if jq -e '.error == "invalid" and (.message | test("pids"))' "$tmp/out" >/dev/null; then ok
		else bad "verify op, $req: $(cat "$tmp/out")"; fi
	done
	# A user's verify: only their own processes, whatever they ask for.
	if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
		# Another user's process and no process read the same (the broker
		# sees pids hidepid hides): neither its owner nor its command is said.
		sleep 0 &
		nopid=$!
		wait "$nopid"
		setpriv --reuid=65534 --regid=65534 --clear-groups "$PY" "$here/ask.py" "$tmp/b.sock" \
			"{\"v\":1,\"op\":\"verify\",\"pids\":[$r0,$nopid]}" >"$tmp/out" 2>&1
		if jq -e '.exit_code == 3 and .verify.uid == 65534 and
		    ([.verify.processes[] | [.uid, .comm, .state, (.unknown[0].reason | sub("[0-9]+"; "N"))]] | unique | length) == 1 and
		    .verify.processes[0].uid == 65534 and .verify.processes[0].comm == null and
		    (.verify.processes[0].unknown[0].reason | test("another user"))' "$tmp/out" >/dev/null
		then ok; else bad "a user's verify op: $(head -c 600 "$tmp/out")"; fi
	fi
	# A rank started through the broker holds a lease: verify (op and CLI) judge by it.
	start leased2 env RAILBIND_SOCKET="$tmp/b.sock" RAILBIND_JOB=j9 "$RAILBIND" run --rank 4 -- \
		+ --open "$D/nvidia3"
	sleep 1.1
	ask "{\"v\":1,\"op\":\"verify\",\"pids\":[$leased2]}"
	if jq -e '.exit_code == 2 and .verify.processes[0].lease.job == "j9" and
	    .verify.processes[0].lease.rank == 4 and .verify.processes[0].planned.from == "lease" and
	    ([.verify.processes[0].findings[].id] | index("gpu-not-planned"))' "$tmp/out" >/dev/null
	then ok; else bad "a leased rank, verify op: $(head -c 400 "$tmp/out")"; fi
	"$RAILBIND" verify --root "$root" -s "$tmp/b.sock" --json -i "$FIX/verify8.xml" --pid "$leased2" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq 2 ] && jq -e '.leases.source == "broker" and .processes[0].lease.job == "j9" and
	    .processes[0].planned.from == "lease"' "$tmp/out" >/dev/null
	then ok; else bad "a leased rank, railbind verify -s: rc=$rc $(cat "$tmp/err")"; fi
	stop "$leased2" "$bpid"
	# Under ASan+UBSan a report goes to the broker's log.
	if grep -q 'Sanitizer\|runtime error' "$tmp/broker.log"; then bad "broker: $(cat "$tmp/broker.log")"
	else ok; fi
else
	echo "verify: no RAILBINDD or python3: the broker's verify op skipped"
fi

# ---- 11. Bad command lines and inputs: exit 3, one line, nothing on stdout --------
for args in "--pid abc" "--pid 0" "--pid 1,,2" "--pid=" "--all --pid 1" "--json --nfd" "--prom --json" \
    "-i $tmp/missing.xml" "--frob" "-- 12x"; do
	# shellcheck disable=SC2086
	"$RAILBIND" verify --no-broker $args >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq 3 ] && [ ! -s "$tmp/out" ] && [ -s "$tmp/err" ]; then ok
	else bad "bad command line '$args': rc=$rc"; fi
done
"$RAILBIND" verify --help >"$tmp/out" 2>&1
if [ $? -eq 0 ] && grep -q -- '--pid' "$tmp/out" && grep -q -- '--nfd' "$tmp/out"; then ok
else bad "--help"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
