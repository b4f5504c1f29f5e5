#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# railbind nccl-check, black box: logs and nccl-tests output of each version's
# format written by gen.sh for the audit-ok machine (4 GPUs, each with its own
# 400 Gb/s NIC behind one PCIe Gen4 x16 switch: a bound of 16 lanes x 1.5 GB/s
# = 24 GB/s per GPU, NCCL's figure for Gen4), healthy and with one fault
# planted each, judged in JSON with the exit code; malformed and truncated
# input; files that are FIFOs; a log of 1024 ranks and tens of MB read in a
# bounded address space. Needs RAILBIND, BUILD (build/fixtures), jq.
set -u
: "${RAILBIND:?set RAILBIND to the railbind binary}"
: "${BUILD:?set BUILD to the build directory}"
here=$(cd "$(dirname "$0")" && pwd)
OK=$BUILD/fixtures/audit-ok.xml
NOPEER=$BUILD/fixtures/audit-no-peermem.xml
for f in "$OK" "$NOPEER"; do
	[ -f "$f" ] || { echo "nccllog: $f missing; run make fixtures"; exit 1; }
done
mkdir -p "${TMPDIR:-/tmp}"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/railbind-nccllog.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
gen() { sh "$here/gen.sh" "$@"; }
# A sanitizer's report must not pass for an exit code a case expects.
sanitizer() { grep -q 'ERROR: AddressSanitizer\|runtime error:\|LeakSanitizer' "$tmp/err"; }

# case NAME RC JQ-FILTER -- ARGS...: railbind nccl-check --json ARGS exits RC
# and its document passes the jq filter.
case_() {
	name=$1 want=$2 filter=$3
	shift 4
	"$RAILBIND" nccl-check --json "$@" > "$tmp/out" 2> "$tmp/err" < /dev/null
	rc=$?
	if sanitizer; then
		bad "$name: sanitizer: $(head -3 "$tmp/err")"
	elif [ $rc -ne "$want" ]; then
		bad "$name: exit $rc, expected $want: $(head -c 300 "$tmp/err")"
	elif ! jq -e "$filter" "$tmp/out" > /dev/null 2>&1; then
		bad "$name: $filter on $(jq -c '[.status, .summary, [.checks[] | select(.severity != "ok") | .message], .undecided]' "$tmp/out" 2>/dev/null | head -c 900)"
	else
		ok
	fi
}

# The findings that are not "ok", by id.
bad_of() { printf '[.checks[] | select(.severity != "ok" and .id == "%s")]' "$1"; }
no_finding='([.checks[] | select(.severity != "ok")] | length == 0)'

# ---- healthy: each version's form, no finding ----
gen table all_reduce_perf 2 22 > "$tmp/ok.txt"
for v in 2.18 2.21 2.30; do
	gen log $v node-0 node-1 > "$tmp/ok-$v.log"
	case_ "healthy $v" 0 "$no_finding and .status == \"ok\" and (.ranks | length) == 8
		and ([.ranks[] | select(.nics == [.planned_nic] and .gdr == \"on\")] | length) == 8
		and .summary[\"nccl-nic\"] == \"ok\" and .summary[\"nccl-gdr\"] == \"ok\"
		and .summary[\"nccl-rail-set\"] == \"ok\" and .summary[\"nccl-busbw\"] == \"ok\"
		and .input.unattributed_channels == 0
		and (.tests[0] | .bound == 24 and .ratio == 0.92 and .busbw == 22)" \
		-- --algo Ring -i "$OK" "$tmp/ok-$v.log" "$tmp/ok.txt"
done
# The log and the table in one file, as users save them; the algorithm from the log.
ALGO=Ring gen log 2.30 node-0 node-1 > "$tmp/both.log"
cat "$tmp/ok.txt" >> "$tmp/both.log"
case_ "log and table in one file" 0 "$no_finding and .tests[0].algo == \"Ring\"" -- -i "$OK" "$tmp/both.log"
# Standard input.
"$RAILBIND" nccl-check --json -i "$OK" - < "$tmp/ok-2.21.log" > "$tmp/out" 2>&1
if jq -e '(.ranks | length) == 8' "$tmp/out" > /dev/null 2>&1; then ok; else bad "stdin read"; fi

# ---- a rank on the wrong NIC ----
for v in 2.18 2.21 2.30; do
	WRONG=node-1:2 gen log $v node-0 node-1 > "$tmp/wrong-$v.log"
	case_ "wrong NIC $v" 2 "$(bad_of nccl-nic) | length == 1 and
		(.[0].subject | startswith(\"node-1 rank 6/8\")) and (.[0].devices == [\"0000:84:00.0\"]) and
		(.[0].message | contains(\"sent through mlx5_3:1\") and contains(\"rail is mlx5_2:1 (PIX)\")
		 and contains(\"listed the rail but chose another\"))" -- -i "$OK" "$tmp/wrong-$v.log"
done

# ---- GDR off: peer memory missing ----
NOGDR=1 gen log 2.30 node-0 node-1 > "$tmp/nogdr.log"
case_ "GDR off, NCCL says why" 2 "$(bad_of nccl-gdr) | length == 8 and
	all(.[]; .message | contains(\"staged through host memory\") and contains(\"GPU Direct RDMA Disabled for HCA\"))
	and ([.[].remedy | contains(\"nvidia_peermem\")] | all)" -- -i "$NOPEER" "$tmp/nogdr.log"
grep -v 'GPU Direct RDMA Disabled' "$tmp/nogdr.log" > "$tmp/nogdr-quiet.log"
case_ "GDR off, the node has no peer memory" 2 "$(bad_of nccl-gdr) | length == 8 and
	all(.[]; .message | contains(\"no peer-memory module\"))" -- -i "$NOPEER" "$tmp/nogdr-quiet.log"
case_ "GDR off, cause unknown" 2 "$(bad_of nccl-gdr) | length == 8 and
	all(.[]; .message | contains(\"cause not in the log\"))" -- -i "$OK" "$tmp/nogdr-quiet.log"

# ---- a rail missing from one node (NCCL_IB_HCA excluded it there) ----
for v in 2.18 2.30; do
	MISSING=node-1:mlx5_3 gen log $v node-0 node-1 > "$tmp/miss-$v.log"
	case_ "rail missing on one node $v" 2 "($(bad_of nccl-rail-set) | length == 2 and
		(.[0].message | contains(\"mlx5_3:1 missing on node-1\")) and
		(.[1].message | contains(\"NCCL_IB_HCA differs across nodes\"))) and
		($(bad_of nccl-nic) | length == 1 and (.[0].message | contains(\"NCCL_IB_HCA excluded the rail\")
		 and contains(\"^mlx5_3\")) and (.[0].subject | startswith(\"node-1 rank 7/8\")))" \
		-- -i "$OK" "$tmp/miss-$v.log"
done
MIXED=1 gen log 2.30 node-0 node-1 > "$tmp/mixed.log"
case_ "mixed local Net device counts" 2 "$(bad_of nccl-rail-set) | length == 1 and
	(.[0].message | contains(\"min 3 max 4\"))" -- -i "$OK" "$tmp/mixed.log"
printf 'node-0:1:1 [0] NCCL INFO Detected mixed local Net device counts across ranks (min 1, max 2). Ignoring due to NCCL_IGNORE_NET_MISMATCH.\n' > "$tmp/mixed-ignored.log"
case_ "mixed counts ignored by NCCL" 2 "$(bad_of nccl-rail-set) | length == 1 and
	(.[0].message | contains(\"min 1 max 2\") and contains(\"Detected mixed\"))" -- -i "$OK" "$tmp/mixed-ignored.log"
# PXN: one rank's channels through another rank's NIC, by design.
PXN=1 gen log 2.21 node-0 node-1 > "$tmp/pxn.log"
case_ "PXN is no finding" 0 "$no_finding and ([.ranks[] | select(.pxn_channels > 0)] | length) == 1" \
	-- -i "$OK" "$tmp/pxn.log"

# ---- nccl-tests: busbw against the bound, #wrong ----
gen table all_reduce_perf 2 12 > "$tmp/half.txt"
case_ "busbw at 50% of the bound" 2 "$(bad_of nccl-busbw) | length == 1 and .[0].severity == \"fail\" and
	(.[0].message | contains(\"0.50 of the 24.00 GB/s bound\") and contains(\"PCIe path\"))" \
	-- --algo Ring -i "$OK" "$tmp/half.txt"
case_ "busbw ratio in the tests list" 2 ".tests[0].ratio == 0.5 and .tests[0].bound == 24 and .tests[0].nodes == 2 and .tests[0].size == 8589934592" \
	-- --algo Ring -i "$OK" "$tmp/half.txt"
case_ "busbw 50% with --expect 0.5" 0 "$no_finding" -- --algo ring -i "$OK" --expect 0.5 "$tmp/half.txt"
gen table all_reduce_perf 2 16.8 > "$tmp/low.txt"
case_ "busbw at 70%: a warning" 1 "$(bad_of nccl-busbw) | length == 1 and .[0].severity == \"warn\"" \
	-- --algo Tree -i "$OK" "$tmp/low.txt"
"$RAILBIND" nccl-check --prom --algo Ring -i "$OK" "$tmp/half.txt" > "$tmp/prom" 2> "$tmp/err"
if [ $? -eq 2 ] && grep -q '^railbind_nccl_busbw_ratio{collective="all_reduce_perf",file=".*half.txt",line="16",algo="Ring"} 0.50$' "$tmp/prom" &&
	grep -q '^railbind_nccl_check_status 2$' "$tmp/prom"; then ok; else bad "prom: $(cat "$tmp/prom" "$tmp/err")"; fi
NCCL_ALGO=Ring "$RAILBIND" nccl-check --json -i "$OK" "$tmp/half.txt" > "$tmp/out" 2>&1
if jq -e '.tests[0].ratio == 0.5 and .tests[0].algo == "Ring"' "$tmp/out" > /dev/null 2>&1; then ok; else bad "NCCL_ALGO from the environment"; fi
case_ "algorithm unknown" 0 "(.undecided | map(select(.id == \"nccl-busbw\")) | .[0].reason | contains(\"algorithm is unknown\"))
	and .summary[\"nccl-busbw\"] == \"unknown\"" -- -i "$OK" "$tmp/half.txt"
ALGO=NVLS gen log 2.30 node-0 node-1 > "$tmp/nvls.log"
cat "$tmp/half.txt" >> "$tmp/nvls.log"
case_ "NVLS is not judged" 0 "(.undecided | map(select(.id == \"nccl-busbw\")) | .[0].reason | contains(\"NVLS from NCCL_ALGO in the log\"))" \
	-- -i "$OK" "$tmp/nvls.log"
{ cat "$tmp/half.txt"; echo "node-0:1000:2000 [0] NCCL INFO AllReduce: 8589934592 Bytes -> Algo Ring proto SIMPLE channel{Lo..Hi}={0..31}"; } > "$tmp/tuned.log"
case_ "algorithm from NCCL's tuning line" 2 ".tests[0].algo == \"Ring\" and .tests[0].ratio == 0.5" -- -i "$OK" "$tmp/tuned.log"
gen table all_reduce_perf 1 12 > "$tmp/one-node.txt"
case_ "single node: NVLink bound" 0 "(.undecided | map(select(.id == \"nccl-busbw\")) | .[0].reason | contains(\"NVLink\"))" \
	-- --algo Ring -i "$OK" "$tmp/one-node.txt"
gen table alltoall_perf 2 12 > "$tmp/a2a.txt"
case_ "alltoall is not judged" 0 "(.undecided | map(select(.id == \"nccl-busbw\")) | .[0].reason | contains(\"point-to-point\"))" \
	-- --algo Ring -i "$OK" "$tmp/a2a.txt"
gen table all_reduce_perf 2 22 3 iter > "$tmp/wrong.txt"
case_ "#wrong non-zero" 2 "$(bad_of nccl-wrong) | length == 2 and
	(.[0].message | contains(\"3 wrong elements\") and contains(\"line 19\")) and
	(.[1].message | contains(\"Out of bounds values 3\"))" -- --algo Ring -i "$OK" "$tmp/wrong.txt"
gen table all_reduce_perf 2 22 0 nc > "$tmp/nc.txt"
case_ "-c 0: #wrong undecided" 0 ".summary[\"nccl-wrong\"] == \"unknown\" and .summary[\"nccl-busbw\"] == \"ok\"" \
	-- --algo Ring -i "$OK" "$tmp/nc.txt"
gen table all_reduce_perf 2 12 4 old > "$tmp/old.txt"
case_ "old table (error column, no name)" 2 "($(bad_of nccl-wrong) | length == 2) and
	(.undecided | map(select(.id == \"nccl-busbw\")) | .[0].reason | contains(\"which collective\"))" \
	-- --algo Ring -i "$OK" "$tmp/old.txt"
# nccl-tests -J.
cat > "$tmp/run.json" <<'EOF'
{"version":1,"start_time":"2026-12-03 07:00:00","args":["/opt/nccl-tests/build/all_reduce_perf","-b","8","-e","8G"],
 "env":["NCCL_ALGO=Ring","PATH=/bin"],"nccl_version":23007,
 "config":{"nthreads":1,"ngpus":1},
 "devices":[{"rank":0,"hostname":"node-0"},{"rank":1,"hostname":"node-0"},{"rank":2,"hostname":"node-1"},{"rank":3,"hostname":"node-1"}],
 "results":[{"size":8,"count":2,"type":"float","redop":"sum","root":"-1","out_of_place":{"time":20.1,"alg_bw":0,"bus_bw":0,"nwrong":0},"in_place":{"time":20,"alg_bw":0,"bus_bw":0,"nwrong":0}},
  {"size":8589934592,"count":2147483648,"type":"float","redop":"sum","root":"-1","out_of_place":{"time":9e5,"alg_bw":8,"bus_bw":12.0,"nwrong":0},"in_place":{"time":9e5,"alg_bw":8,"bus_bw":11.5,"nwrong":2}}],
 "out_of_bounds":{"count":0,"okay":true},"average_bus_bandwidth":{"bandwidth":6,"okay":"unchecked"}}
EOF
case_ "nccl-tests -J" 2 ".tests[0].ratio == 0.5 and .tests[0].nodes == 2 and .tests[0].algo == \"Ring\" and
	($(bad_of nccl-wrong) | length == 1) and ($(bad_of nccl-busbw) | length == 1)" -- -i "$OK" "$tmp/run.json"
printf '{"results": [{"size": 8, ' > "$tmp/cut.json"
case_ "-J cut short" 1 "$(bad_of nccl-log) | length == 1 and (.[0].subject | endswith(\"cut.json:1\"))" -- -i "$OK" "$tmp/cut.json"

# ---- malformed and truncated input: the line and what was expected ----
{ sed -n 1,5p "$tmp/ok-2.21.log"; echo "0: node-0:1000:2000 [0] NCCL INFO Channel 00/0 : 0[0] -> 4[0] [send] via NET/IB/"; } > "$tmp/cut.log"
case_ "channel line cut" 1 "($(bad_of nccl-log) | map(select(.subject == \"$tmp/cut.log:6\" and (.message | contains(\"expected \\\"Channel NN/N\")))) | length == 1) and
	($(bad_of nccl-log) | map(select(.message | contains(\"Init START without its Init COMPLETE\"))) | length == 1)" -- -i "$OK" "$tmp/cut.log"
printf 'h:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/999/GDRDMA\nh:1:1 [0] NCCL INFO comm 0x1 rank x nranks 2 - Init COMPLETE\n' > "$tmp/bad.log"
case_ "bad numbers" 1 "$(bad_of nccl-log) | length == 2 and (.[0].subject | endswith(\"bad.log:1\")) and
	(.[0].message | contains(\"expected 0 to 127\")) and (.[1].subject | endswith(\"bad.log:2\")) and
	(.[1].message | contains(\"expected \\\"rank R nranks N cudaDev D busId HEX\"))" -- -i "$OK" "$tmp/bad.log"
sed '/Avg bus bandwidth/,$d' "$tmp/ok.txt" > "$tmp/nofooter.txt"
case_ "table without its footer" 1 "$(bad_of nccl-log) | length == 1 and (.[0].subject | endswith(\"nofooter.txt:16\")) and
	(.[0].message | contains(\"Avg bus bandwidth\"))" -- --algo Ring -i "$OK" "$tmp/nofooter.txt"
{ sed -n 1,18p "$tmp/ok.txt"; echo "   268435456      67108864     float     sum      -1    100.0"; sed -n '19,$p' "$tmp/ok.txt"; } > "$tmp/short.txt"
case_ "table row too short" 1 "$(bad_of nccl-log) | length == 1 and (.[0].subject | endswith(\"short.txt:19\")) and
	(.[0].message | contains(\"expected 13 columns\") and contains(\"got 6\"))" -- --algo Ring -i "$OK" "$tmp/short.txt"
: > "$tmp/empty"
case_ "empty input" 3 ".status == \"unknown\" and .input.lines == 0" -- -i "$OK" "$tmp/empty"
printf 'some\x00binary\377\376 line\nnode-0:1:1 [0] NCCL INFO \n' > "$tmp/junk.log"
case_ "unknown lines ignored" 0 "$no_finding and .input.lines == 2" -- -i "$OK" "$tmp/junk.log"
awk 'BEGIN { s = "x"; while (length(s) < 20000) s = s s; print s; print "node-0:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB" }' > "$tmp/long.log"
case_ "a line over 16 KiB skipped" 0 ".input.long_lines == 1 and .input.nccl_lines == 1" -- -i "$OK" "$tmp/long.log"

# nccl-tests -g 4: one process, each communicator created on a thread of its own,
# the connections made later on the main thread: the line's [cudaDev] names the GPU.
awk 'BEGIN {
	split("04 14 84 94", bus, " ")
	for (h = 0; h < 2; h++) {
		m = "node-" h ":4242:4242 [0] NCCL INFO "
		print m "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [RO]; OOB ib0:10.0.0.1<0>"
		for (g = 0; g < 4; g++) {
			p = "node-" h ":4242:" (5000 + g) " [" g "] NCCL INFO "
			print p "ncclCommInitAll comm 0x" g " rank " (h * 4 + g) " nranks 8 cudaDev " g " nvmlDev " g " busId " bus[g + 1] "000 commId 0x9 - Init START"
			print p "ncclCommInitAll comm 0x" g " rank " (h * 4 + g) " nranks 8 cudaDev " g " nvmlDev " g " busId " bus[g + 1] "000 commId 0x9 - Init COMPLETE"
		}
		for (g = 0; g < 4; g++)
			print "node-" h ":4242:4242 [" g "] NCCL INFO Channel 00/0 : " (h * 4 + g) "[" g "] -> " ((h + 1) % 2 * 4 + g) "[" g "] [send] via NET/IB/" g "/GDRDMA"
	} }' > "$tmp/g4.log"
case_ "one process, four GPUs" 0 "$no_finding and (.ranks | length) == 8 and
	([.ranks[] | select(.nics == [.planned_nic] and .channels == 1)] | length) == 8" -- -i "$OK" "$tmp/g4.log"

# A third-party net plugin (aws-ofi-nccl) prints no "NET/IB : Using" list: the NIC
# is not decided, GPUDirect still is.
sed -e 's|NET/IB/|NET/Libfabric/|' -e 's|Using network IB|Using network Libfabric|' -e '/NET\/IB : Using/d' "$tmp/ok-2.21.log" > "$tmp/ofi.log"
case_ "net plugin without a device list" 0 ".summary[\"nccl-nic\"] == \"unknown\" and .summary[\"nccl-gdr\"] == \"ok\" and
	(.undecided[0].reason | contains(\"NET/Libfabric/0 is not in a\")) and .ranks[0].net == \"Libfabric\"" -- -i "$OK" "$tmp/ofi.log"

# ---- a DGX H100: NCCL's net indices are not the mlx5 numbers ----
# Ranks 0-7 on GPUs 1b..df; NCCL lists the compute rails mlx5_{0,3,4,5,6,9,10,11} as
# NET/IB/0-7. Healthy: rank i through NET/IB/i. Then rank 1 through NET/IB/1 on a
# node whose list lacks mlx5_3 (NCCL_IB_HCA=mlx5_0,mlx5_1,...: the index means mlx5_4 there).
dgx_log() {
	awk -v host="$1" -v list="$2" -v hca="$3" 'BEGIN {
		split("1b 43 52 61 9d c3 d1 df", bus, " ")
		for (g = 0; g < 8; g++) {
			p = host ":" (100 + g) ":" (100 + g) " [" g "] NCCL INFO "
			if (hca != "") print p "NCCL_IB_HCA set to " hca
			print p "NET/IB : Using " list " [RO]; OOB ibp24s0:10.0.0.1<0>"
			print p "comm 0x1 rank " g " nranks 8 cudaDev " g " nvmlDev " g " busId " bus[g + 1] "000 commId 0x2 - Init START"
			print p "Channel 00/0 : " g "[" g "] -> " (g + 8) % 16 "[" g "] [send] via NET/IB/" g "/GDRDMA"
			print p "comm 0x1 rank " g " nranks 8 cudaDev " g " nvmlDev " g " busId " bus[g + 1] "000 commId 0x2 - Init COMPLETE"
		} }'
}
DGX=$BUILD/fixtures/dgx-h100.xml
all8="[0]mlx5_0:1/IB [1]mlx5_3:1/IB [2]mlx5_4:1/IB [3]mlx5_5:1/IB [4]mlx5_6:1/IB [5]mlx5_9:1/IB [6]mlx5_10:1/IB [7]mlx5_11:1/IB"
dgx_log dgx-a "$all8" "" > "$tmp/dgx.log"
case_ "DGX H100, NET/IB/i is rank i's rail" 0 "$no_finding and ([.ranks[] | select(.nics == [.planned_nic])] | length) == 8 and
	(.ranks[1].nics == [\"mlx5_3:1\"])" -- -i "$DGX" "$tmp/dgx.log"
no3="[0]mlx5_0:1/IB [1]mlx5_4:1/IB [2]mlx5_5:1/IB [3]mlx5_6:1/IB [4]mlx5_9:1/IB [5]mlx5_10:1/IB [6]mlx5_11:1/IB [7]mlx5_1:1/IB"
dgx_log dgx-b "$no3" "mlx5_0,mlx5_1,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11" >> "$tmp/dgx.log"
case_ "DGX H100, a node without mlx5_3" 2 "($(bad_of nccl-nic) | length == 7 and
	(.[0].message | startswith(\"dgx-b rank 1/8\") and contains(\"sent through mlx5_4:1\") and
	 contains(\"NCCL_IB_HCA excluded the rail\")) and
	(.[1].message | contains(\"listed the rail but chose another\")) and
	(.[6].message | contains(\"sent through mlx5_1:1, its plan's rail is mlx5_11:1\"))) and
	($(bad_of nccl-rail-set) | length == 2)" -- -i "$DGX" "$tmp/dgx.log"

# ---- files that are not files; the command line ----
mkfifo "$tmp/fifo"
if timeout 20 "$RAILBIND" nccl-check -i "$OK" "$tmp/fifo" > "$tmp/out" 2> "$tmp/err"; then
	bad "a FIFO was read"
elif [ $? -ne 3 ] || ! grep -q 'fifo: not a regular file' "$tmp/err"; then
	bad "a FIFO: $(cat "$tmp/err")"
else ok; fi
"$RAILBIND" nccl-check -i "$OK" "$tmp/absent" > /dev/null 2> "$tmp/err"
if [ $? -eq 3 ] && grep -q 'absent: No such file' "$tmp/err"; then ok; else bad "absent file: $(cat "$tmp/err")"; fi
"$RAILBIND" nccl-check -i "$OK" > /dev/null 2> "$tmp/err"
if [ $? -eq 3 ] && grep -q 'expected at least one FILE' "$tmp/err"; then ok; else bad "no FILE: $(cat "$tmp/err")"; fi
"$RAILBIND" nccl-check --expect 2 -i "$OK" "$tmp/ok.txt" > /dev/null 2> "$tmp/err"
if [ $? -eq 3 ] && grep -q 'expect 2: expected a fraction' "$tmp/err"; then ok; else bad "--expect 2: $(cat "$tmp/err")"; fi
"$RAILBIND" nccl-check -i "$OK" "$tmp/ok.txt" --json > /dev/null 2> "$tmp/err"
if [ $? -eq 3 ] && grep -q -- '--json after a FILE: options go before the files' "$tmp/err"; then ok; else bad "option after FILE: $(cat "$tmp/err")"; fi
if "$RAILBIND" nccl-check --help | grep -q -- '--expect F'; then ok; else bad "--help"; fi
"$RAILBIND" nccl-check -i "$OK" "$tmp/wrong-2.21.log" > "$tmp/text" 2>&1
if [ $? -eq 2 ] && grep -q '^Failures:' "$tmp/text" && grep -q '\[nccl-nic\] node-1 rank 6/8' "$tmp/text" &&
	grep -q '^Status: fail' "$tmp/text"; then ok; else bad "text: $(cat "$tmp/text")"; fi

# ---- 1024 ranks, tens of MB, in a bounded address space ----
awk 'BEGIN {
	for (h = 0; h < 256; h++) for (g = 0; g < 4; g++) {
		r = h * 4 + g; p = "node-" h ":" (1000 + g) ":" (2000 + g) " [" g "] NCCL INFO "
		bus = substr("04148494", g * 2 + 1, 2)
		print p "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB [RO]; OOB ib0:10.0.0.1<0>"
		print p "ncclCommInitRank comm 0x1 rank " r " nranks 1024 cudaDev " g " nvmlDev " g " busId " bus "000 commId 0x2 - Init START"
		for (c = 0; c < 120; c++)
			print p "Channel " sprintf("%02d", c % 32) "/0 : " r "[" g "] -> " (r + 4) % 1024 "[" g "] [send] via NET/IB/" g "/GDRDMA"
		print p "ncclCommInitRank comm 0x1 rank " r " nranks 1024 cudaDev " g " nvmlDev " g " busId " bus "000 commId 0x2 - Init COMPLETE"
	} }' > "$tmp/big.log"
size=$(wc -c < "$tmp/big.log")
if [ "$size" -lt 10000000 ]; then bad "big log only $size bytes"; fi
# Address space for the program and its libraries, not the log; none under
# ASan (check-asan sets ASAN_OPTIONS), whose shadow memory needs terabytes.
lim="ulimit -v 262144;"
case "${ASAN_OPTIONS:-}" in *exitcode*) lim= ;; esac
sh -c "$lim exec \"\$0\" nccl-check --json -i \"\$1\" \"\$2\"" "$RAILBIND" "$OK" "$tmp/big.log" > "$tmp/out" 2> "$tmp/err"
rc=$?
if [ $rc -eq 0 ] && jq -e '(.ranks | length) == 1024 and .input.unattributed_channels == 0 and
	([.ranks[] | select(.channels == 120)] | length) == 1024 and .summary["nccl-rail-set"] == "ok"' "$tmp/out" > /dev/null 2>&1; then
	ok
else
	bad "1024 ranks ($size bytes${lim:+, $lim}): exit $rc $(head -c 300 "$tmp/err")"
fi

echo "nccllog: $pass passed, $fail failed"
[ $fail -eq 0 ]
