#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Black-box tests of the railbind command line: exit codes, where messages
# go, bad inputs, JSON schema. Needs RAILBIND (the binary), BUILD (for the
# generated fixtures in $BUILD/fixtures) and jq.
set -u
: "${RAILBIND:?set RAILBIND to the railbind binary}"
: "${BUILD:?set BUILD to the build directory}"
FIX=$BUILD/fixtures
pass=0
fail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/railbind-cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# run ARGS...: exit code in $rc, output in $tmp/out and $tmp/err
run() {
	"$RAILBIND" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}
lines() { wc -l <"$1" | tr -d ' '; }

if ! command -v jq >/dev/null 2>&1; then
	echo "cli: jq not found (apt-get install jq)"
	exit 1
fi
for f in dgx-h100 unknown-numa small; do
	if [ ! -f "$FIX/$f.xml" ]; then
		echo "cli: $FIX/$f.xml missing; run make fixtures"
		exit 1
	fi
done

# --help everywhere: exit 0, text on stdout, nothing on stderr.
for args in "--help" "-h" "topo --help" "plan --help" "topo -h" "plan -h"; do
	# shellcheck disable=SC2086
	run $args
	if [ "$rc" -eq 0 ] && [ -s "$tmp/out" ] && [ ! -s "$tmp/err" ] &&
	    grep -q Usage "$tmp/out"; then ok; else bad "railbind $args: rc=$rc"; fi
done

# Usage errors: exit 2, a message on stderr, nothing on stdout.
for args in "frobnicate" "topo --bogus" "plan --bogus" "--bogus" "" "plan --input"; do
	# shellcheck disable=SC2086
	run $args
	if [ "$rc" -eq 2 ] && [ -s "$tmp/err" ] && [ ! -s "$tmp/out" ]; then ok
	else bad "railbind $args: rc=$rc, expected 2 and stderr only"; fi
done

# Output that cannot be written (a full disk): one line on stderr and the
# command family's error code, 1 for the plain commands, 3 for those that
# judge (audit, verify, fleet), never 0 (rb_emit, the one output path).
unwritable() {
	want=$1
	shift
	"$RAILBIND" "$@" >/dev/full 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq "$want" ] && [ "$(lines "$tmp/err")" -eq 1 ] &&
	    grep -q "cannot write the output: No space left on device" "$tmp/err"; then ok
	else bad "railbind $* >/dev/full: rc=$rc, expected $want and one line: $(cat "$tmp/err")"; fi
}
if [ -w /dev/full ]; then
	unwritable 1 topo -i "$FIX/small.xml"
	unwritable 1 plan --json -i "$FIX/small.xml"
	unwritable 1 plan --pretty -i "$FIX/dgx-h100.xml"
	unwritable 3 audit -i "$FIX/small.xml"
	unwritable 3 audit --json -i "$FIX/small.xml"
	unwritable 3 fleet "$FIX/small.xml" "$FIX/dgx-h100.xml"
fi

# Bad inputs: exit 1, one line on stderr naming the file, empty stdout.
: >"$tmp/empty.xml"
mkdir "$tmp/dir.xml"
head -c 3000 "$FIX/small.xml" >"$tmp/truncated.xml"
printf '<?xml version="1.0"?>\n<html><body/></html>\n' >"$tmp/html.xml"
printf 'GPU0 PIX SYS\nthis is not XML\n' >"$tmp/text.txt"
printf '<?xml version="1.0"?>\n<topology version="2.0">\n<object type="Machine">\n</topology>\n' \
	>"$tmp/mismatched.xml"
for f in "$tmp/empty.xml" "$tmp/dir.xml" "$tmp/missing.xml" "$tmp/truncated.xml" \
	"$tmp/html.xml" "$tmp/text.txt" "$tmp/mismatched.xml"; do
	for cmd in topo plan "plan --json" "topo --json"; do
		# shellcheck disable=SC2086
		run $cmd --input "$f"
		if [ "$rc" -eq 1 ] && [ "$(lines "$tmp/err")" -eq 1 ] &&
		    [ ! -s "$tmp/out" ] && grep -qF "$f" "$tmp/err"; then ok
		else bad "$cmd --input $f: rc=$rc, stderr: $(cat "$tmp/err")"; fi
	done
done

# A valid fixture: exit 0, nothing on stderr but, for plan, one line per
# NIC the plan leaves out (its "excluded" list), and nothing else.
for f in "$FIX"/*.xml; do
	for cmd in topo plan; do
		run $cmd --input "$f" --json
		nexcl=0
		[ "$cmd" = plan ] && nexcl=$(jq '.excluded | length' "$tmp/out" 2>/dev/null)
		if [ "$rc" -eq 0 ] && jq -e . "$tmp/out" >/dev/null 2>&1 &&
		    [ "$(lines "$tmp/err")" = "$nexcl" ] &&
		    ! grep -qv '^railbind: plan: left out (\(port-down\|slow\|config\)): ' "$tmp/err"
		then ok; else bad "$cmd --json --input $f: rc=$rc, invalid JSON or stderr: $(head -c 300 "$tmp/err")"; fi
	done
done

# jq_check FILE FILTER DESCRIPTION: FILTER must yield true.
jq_check() {
	if jq -e "$2" "$1" >/dev/null 2>&1; then ok; else bad "$3"; fi
}

# plan --json schema on dgx-h100 (8 H100s, one own-switch NIC each).
run plan --input "$FIX/dgx-h100.xml" --json
cp "$tmp/out" "$tmp/plan.json"
P=$tmp/plan.json
jq_check "$P" '.schema == "railbind.plan/1"' "plan schema"
jq_check "$P" '.host == "dgx-h100"' "plan host"
jq_check "$P" '.warnings | type == "array"' "plan warnings array"
jq_check "$P" '.ranks | length == 8' "plan has 8 ranks"
jq_check "$P" '[.ranks[] | .local_rank] == [0,1,2,3,4,5,6,7]' "local_rank 0-7"
jq_check "$P" '[.ranks[] | .gpu.index] == [0,1,2,3,4,5,6,7]' "gpu index 0-7"
jq_check "$P" 'all(.ranks[]; .gpu.pci | test("^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]$"))' \
	"gpu pci dddd:bb:dd.f"
jq_check "$P" '[.ranks[] | .gpu.numa] == [0,0,0,0,1,1,1,1]' "gpu numa"
jq_check "$P" '[.ranks[] | .mems] == ["0","0","0","0","1","1","1","1"]' "mems"
jq_check "$P" 'all(.ranks[]; .cpus | type == "string" and test("^[0-9,-]+$"))' "cpus cpulist"
jq_check "$P" 'all(.ranks[].nics[]; has("pci") and has("name") and has("netdev") and has("port") and has("path"))' \
	"nic fields"
jq_check "$P" '[.ranks[] | .nics[0].name] == ["mlx5_0","mlx5_3","mlx5_4","mlx5_5","mlx5_6","mlx5_9","mlx5_10","mlx5_11"]' \
	"each GPU's own-switch NIC"
jq_check "$P" 'all(.ranks[].nics[]; .path == "PIX")' "all PIX"
# One NCCL_IB_HCA for the node, exact form, on every rank (issue 24: NCCL
# needs one view of the node); the storage pair mlx5_1,2,7,8 is no rail.
jq_check "$P" 'all(.ranks[]; .env.NCCL_IB_HCA == "=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1")' \
	"NCCL_IB_HCA: the node's rail ports, exact form, every rank"
jq_check "$P" '.ranks[1].env.RAILBIND_NICS == "mlx5_3"' "RAILBIND_NICS: the rank's own rail"
jq_check "$P" 'all(.ranks[]; .env.UCX_NET_DEVICES == (.env.NCCL_IB_HCA | ltrimstr("=")) and .env.UCX_MAX_RNDV_RAILS == "1")' \
	"UCX: the node's rails, one a transfer (no subnet prefix known)"
jq_check "$P" 'all(.ranks[]; .env.CUDA_DEVICE_ORDER == "PCI_BUS_ID")' "CUDA_DEVICE_ORDER"
jq_check "$P" 'all(.ranks[]; .env | has("CUDA_VISIBLE_DEVICES") | not)' \
	"no CUDA_VISIBLE_DEVICES without --isolate-gpu"

# topo --json schema.
run topo --input "$FIX/dgx-h100.xml" --json
cp "$tmp/out" "$tmp/topo.json"
T=$tmp/topo.json
jq_check "$T" '.schema == "railbind.topo/1"' "topo schema"
jq_check "$T" '.gpus | length == 8' "topo 8 gpus"
jq_check "$T" '.nics | length == 12' "topo 12 nics"
jq_check "$T" 'all(.gpus[]; has("pci") and has("index") and has("numa") and has("cpus"))' "topo gpu fields"
jq_check "$T" 'all(.nics[]; has("pci") and has("name") and has("netdev") and has("numa") and has("rdma"))' \
	"topo nic fields"
jq_check "$T" '.paths | length == 8 and all(.[]; length == 12)' "paths 8x12"
jq_check "$T" 'all(.paths[][]; IN("PIX","PXB","PHB","NODE","SYS"))' "path names"
jq_check "$T" '.paths[0][0] == "PIX" and .paths[0][.paths[0] | length - 1] == "SYS"' \
	"GPU0: own NIC PIX, last NIC (other package) SYS"

# Unknown locality: numa/mems null, a warning.
run plan --input "$FIX/unknown-numa.xml" --json
cp "$tmp/out" "$tmp/unk.json"
jq_check "$tmp/unk.json" 'all(.ranks[]; .gpu.numa == null and .mems == null)' "unknown numa null"
jq_check "$tmp/unk.json" '[.warnings[] | select(.id == "numa-unknown")] | length == 4' \
	"numa-unknown warnings"

# NICs left out: each named once on stderr (exit 0), the GPU that lost its
# nearest one warned with the fix, the live port of a two-port card planned.
run plan --input "$FIX/rail-down.xml"
if [ "$rc" -eq 0 ] && [ "$(lines "$tmp/err")" -eq 2 ] &&
    grep -q '^railbind: plan: left out (port-down): mlx5_0 port 1 (0000:05:00.0) is DOWN, not ACTIVE' "$tmp/err" &&
    grep -q '^railbind: plan: left out (port-down): mlx4_0 port 1 (0000:15:00.0) is DOWN' "$tmp/err" &&
    grep -q '^warning: nic-port-down: GPU 0 (0000:04:00.0): its nearest rail mlx5_0 (PIX) has port 1 DOWN.*ibstat mlx5_0' "$tmp/out" &&
    grep -q ' mlx4_0:2(NODE) ' "$tmp/out" && grep -q ' mlx4_0:2(PIX) ' "$tmp/out"
then ok; else bad "rail-down: rc=$rc, stderr: $(cat "$tmp/err")"; fi
run plan --input "$FIX/rail-down.xml" --json
jq_check "$tmp/out" '[.excluded[] | [.name, .port, .reason]] == [["mlx5_0",1,"port-down"],["mlx4_0",1,"port-down"]]' \
	"rail-down: excluded in plan --json"
jq_check "$tmp/out" '.ranks[0].nics[0] | .name == "mlx4_0" and .port == 2 and .path == "NODE" and .nccl_path == "PHB"' \
	"rail-down: GPU 0 on the live port, NODE here, PHB for NCCL"
# Where the plan's NIC is not NCCL's own pick: one note line saying why.
run plan --input "$FIX/slow-near.xml"
if [ "$rc" -eq 0 ] && [ "$(grep -c '^note: ' "$tmp/out")" -eq 1 ] &&
    grep -q '^note: rank 1 (GPU 0000:84:00.0): NCCL on its own would pick mlx5_2 (PIX, 6.25 GB/s against 6 GB/s for mlx5_1)' "$tmp/out" &&
    grep -q '^warning: slow-rail: GPU 1' "$tmp/out" && [ "$(lines "$tmp/err")" -eq 2 ]
then ok; else bad "slow-near: rc=$rc, note or stderr"; fi
printf 'slow-rails = yes\n' >"$tmp/slow.conf"
run plan --input "$FIX/slow-near.xml" --config "$tmp/slow.conf"
if [ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ] && ! grep -q '^note: ' "$tmp/out" &&
    grep -q '^1  *1  *0000:84:00.0  *mlx5_2(PIX) ' "$tmp/out"
then ok; else bad "slow-near with slow-rails = yes: rc=$rc"; fi
# NCCL's own class where it differs: -d in text, nccl_paths in JSON.
run topo -d --input "$FIX/bcm-switch.xml"
if [ "$rc" -eq 0 ] && grep -q '^  GPU0-NIC0: PIX (here PXB)$' "$tmp/out" &&
    ! grep -q 'GPU1-NIC1' "$tmp/out"; then ok; else bad "topo -d: NCCL's classes"; fi
run topo --json --input "$FIX/bcm-switch.xml"
jq_check "$tmp/out" '.paths == [["PXB","SYS"],["SYS","PXB"]] and .nccl_paths == [["PIX","SYS"],["SYS","PXB"]]' \
	"topo --json: nccl_paths beside paths"

# Text topo: a matrix and a legend naming every class.
run topo --input "$FIX/dgx-h100.xml"
if [ "$rc" -eq 0 ] && grep -q '^Legend' "$tmp/out" &&
    grep -q 'PIX *=' "$tmp/out" && grep -q 'SYS *=' "$tmp/out" &&
    grep -q 'NODE *=' "$tmp/out" && grep -q '^GPU7 ' "$tmp/out"; then ok
else bad "topo text legend"; fi

# --visible: only those GPUs, in PCI order, whatever the order given.
run plan --input "$FIX/dgx-h100.xml" --json --visible 0000:df:00.0,2
jq_check "$tmp/out" '[.ranks[] | .gpu.pci] == ["0000:52:00.0","0000:df:00.0"]' "--visible"
run plan --input "$FIX/dgx-h100.xml" --visible 9
if [ "$rc" -ne 0 ] && [ -s "$tmp/err" ] && [ ! -s "$tmp/out" ]; then ok
else bad "--visible 9 accepted (rc=$rc)"; fi

# --cpus: every rank inside the set.
run plan --input "$FIX/dgx-h100.xml" --json --cpus 0-27,112-139,56-83,168-195
jq_check "$tmp/out" \
	'[.ranks[] | .cpus | split(",")[] | split("-") | map(tonumber) | .[0] as $a | (.[1] // $a) as $b |
	  ($a >= 0 and $b <= 27) or ($a >= 56 and $b <= 83) or ($a >= 112 and $b <= 139) or ($a >= 168 and $b <= 195)] | all' \
	"--cpus respected"
run plan --input "$FIX/dgx-h100.xml" --cpus nonsense
if [ "$rc" -ne 0 ] && [ -s "$tmp/err" ] && [ ! -s "$tmp/out" ]; then ok
else bad "--cpus nonsense accepted (rc=$rc)"; fi

# --isolate-gpu: CUDA_VISIBLE_DEVICES = the GPU index.
run plan --input "$FIX/dgx-h100.xml" --json --isolate-gpu
jq_check "$tmp/out" 'all(.ranks[]; .env.CUDA_VISIBLE_DEVICES == (.gpu.index | tostring))' \
	"--isolate-gpu"

# libxml2 (with ICU and libstdc++) is loaded only to read an XML file: a
# command that reads none must not map it, one that reads a file must work.
LD_DEBUG=libs "$RAILBIND" --help >/dev/null 2>"$tmp/ld"
if grep -q 'libxml2' "$tmp/ld"; then bad "railbind --help loaded libxml2"
elif ! grep -q 'libjson-c' "$tmp/ld"; then bad "LD_DEBUG=libs shows no library load at all"
else ok; fi
LD_DEBUG=libs "$RAILBIND" plan --input "$FIX/small.xml" >"$tmp/out" 2>"$tmp/ld"
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'libxml2' "$tmp/ld" && [ -s "$tmp/out" ]; then ok
else bad "plan --input loads libxml2 and plans (rc=$rc)"; fi

# run --timeout: milliseconds, refused before anything runs when not a number.
run run --timeout 0 -- /bin/echo ran
if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ] && grep -q -- '--timeout' "$tmp/err" && [ ! -s "$tmp/out" ]; then ok
else bad "run --timeout 0 not refused as usage (rc=$rc)"; fi
# A socket path where nobody listens: the plan is computed here, well within the timeout.
run run --timeout 5000 --socket "$tmp/none.sock" --input "$FIX/dgx-h100.xml" --rank 0 --no-bind -v -- /bin/echo ran
if [ "$rc" -eq 0 ] && grep -q '^ran$' "$tmp/out" && grep -q 'source local' "$tmp/err"; then ok
else bad "run --timeout with no broker falls back (rc=$rc)"; fi

# --nccl-rail-ids: NCCL 2.30's HCA:PORT:RAIL, rail k the node's k-th; off by default.
run plan --input "$FIX/dgx-h100.xml" --json --nccl-rail-ids
if [ "$rc" -eq 0 ] && jq -e 'all(.ranks[]; .env.NCCL_IB_HCA == "=mlx5_0:1:0,mlx5_3:1:1,mlx5_4:1:2,mlx5_5:1:3,mlx5_6:1:4,mlx5_9:1:5,mlx5_10:1:6,mlx5_11:1:7")' "$tmp/out" >/dev/null &&
   ! jq -e 'any(.ranks[]; .env.NCCL_IB_HCA | test(":[0-9]+:"))' "$P" >/dev/null; then ok
else bad "plan --nccl-rail-ids: $(jq -c '.ranks[0].env.NCCL_IB_HCA' "$tmp/out" 2>/dev/null) (rc=$rc)"; fi

# railbind run gives the rank the plan's environment: the node's NCCL_IB_HCA.
run run --socket "$tmp/none.sock" --input "$FIX/dgx-h100.xml" --rank 5 --no-bind -- /bin/sh -c 'echo "$NCCL_IB_HCA|$RAILBIND_NICS|$UCX_NET_DEVICES"'
want="$(jq -r '.ranks[5].env | "\(.NCCL_IB_HCA)|\(.RAILBIND_NICS)|\(.UCX_NET_DEVICES)"' "$P")"
if [ "$rc" -eq 0 ] && [ "$(cat "$tmp/out")" = "$want" ] && [ "$want" != "${want#=mlx5_0:1,}" ]; then ok
else bad "run --rank 5: env '$(cat "$tmp/out")', plan's '$want' (rc=$rc)"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
