#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Tests of railbind fleet: 1,000 generated node snapshots with planted faults
# (tests/fleet/mkfleet.sh) must give exactly the planted nodes, each with its
# kind of difference; audit documents alone and mixed with snapshots; bad
# files; an empty directory; exit codes; the railbind.fleet/1 schema, read
# back with jq. Needs RAILBIND, RBGEN, BUILD, jq (valgrind: optional; not for
# an ASan build: FLEET_VALGRIND=no). FLEET_NODES: how many nodes (default 1000, at least 200).
set -u
: "${RAILBIND:?set RAILBIND to the railbind binary}"
: "${RBGEN:?set RBGEN to the rbgen binary}"
: "${BUILD:?set BUILD to the build directory}"
HERE=$(cd "$(dirname "$0")" && pwd)
N=${FLEET_NODES:-1000}
T=$BUILD/fleet-test
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# check DESCRIPTION COMMAND...: passes when the command succeeds.
check() {
	d=$1
	shift
	if "$@" >/dev/null 2>&1; then ok; else bad "$d"; fi
}
# run ARGS...: exit code in $rc, output in $T/out and $T/err
run() {
	"$RAILBIND" "$@" >"$T/out" 2>"$T/err"
	rc=$?
}
# jqt FILTER DESCRIPTION: FILTER must yield true on $T/out.
jqt() {
	if jq -e "$1" "$T/out" >/dev/null 2>&1; then ok; else bad "$2 ($1)"; fi
}

# The healthy nodes used below (11-35) are clear of the planted ones from 200 on.
if [ "$N" -lt 200 ]; then
	echo "fleet: FLEET_NODES must be at least 200"
	exit 1
fi
if ! command -v jq >/dev/null 2>&1; then
	echo "fleet: jq not found (apt-get install jq)"
	exit 1
fi
rm -rf "$T"
mkdir -p "$T"
if ! sh "$HERE/mkfleet.sh" "$HERE/node.topo" "$N" "$T/nodes" >"$T/gen.log" 2>&1; then
	cat "$T/gen.log"
	echo "fleet: generating $N nodes failed"
	exit 1
fi
V=$T/nodes/.variants

# The schema every document must follow, whatever its content.
SCHEMA='.schema == "railbind.fleet/1" and (.status | IN("ok","outliers","unreadable","unknown"))
	and (.files | type) == "number" and (.nodes | type) == "number"
	and .agree + .outliers == .nodes and (.hosts | length) == .nodes
	and ([.groups[].count] | add // 0) == .outliers
	and all(.groups[]; .count == (.nodes | length) and (.aspects | length) > 0
		and all(.differences[]; (.aspect | IN("devices","rails","paths","numa","checks","links","acs","machine"))
			and (.subject | type) == "string" and (.value != null or .majority != null)))
	and all(.unreadable[]; (.file | type) == "string" and (.error | type) == "string")
	and all(.aspects[]; .majority <= .nodes and (.reference | type) == "object")
	and .files == .nodes + (.unreadable | length)'

# ---- 1,000 snapshots, 7 planted faults ----
run fleet --json "$T/nodes"
if [ "$rc" -eq 1 ]; then ok; else bad "fleet of $N: exit $rc, expected 1 (outliers)"; fi
cp "$T/out" "$T/fleet.json"
jqt "$SCHEMA" "fleet of $N: schema"
jqt ".files == $N and .nodes == $N and .status == \"outliers\"" "fleet of $N: counts"
# Exactly the planted nodes, nothing else.
jq -r '.groups[].nodes[]' "$T/out" | sort >"$T/reported"
cut -d' ' -f1 "$T/nodes.planted" | sort >"$T/expected"
if cmp -s "$T/reported" "$T/expected"; then ok
else bad "reported outliers differ from the planted ones: $(diff "$T/expected" "$T/reported" | tr '\n' ' ')"; fi
# Every node named by its HostName, or (every tenth, which has none) its file.
jq -r '.hosts[] | "\(.name) \(.file | sub(".*/"; "") | sub("\\.xml$"; ""))"' "$T/out" |
	awk '$1 != $2 { bad++ } END { exit bad > 0 || NR != '"$N"' }'
if [ $? -eq 0 ]; then ok; else bad "node names are not their host or file names"; fi
# grp NAME: the group of node NAME
grp() { echo ".groups[.hosts[] | select(.name == \"$1\") | .group - 1]"; }
while read -r name fault; do
	g=$(grp "$name")
	case $fault in
	swap)
		jqt "$g | any(.differences[]; .aspect == \"paths\" and .subject == \"GPU 0000:04:00.0 - mlx5_0\" and .value == \"SYS\" and .majority == \"PIX\")" \
			"$name (swapped NIC): GPU0-mlx5_0 SYS instead of PIX"
		jqt "$g | .aspects | index(\"links\") == null and index(\"checks\") == null" \
			"$name (swapped NIC): no link or check difference"
		;;
	x8)
		jqt "$g | .aspects == [\"checks\",\"links\"] and .count == 3" "$name (x8): checks and links, 3 nodes"
		jqt "$g | any(.differences[]; .aspect == \"links\" and .subject == \"GPU 0000:04:00.0\" and (.value | test(\"x8 \")) and (.majority | test(\"x16 \")))" \
			"$name (x8): the GPU's link x8 where most are x16"
		jqt "$g | any(.differences[]; .subject == \"link-downtrained\" and .value == \"fail\" and .majority == \"ok\")" \
			"$name (x8): link-downtrained fails"
		;;
	acs)
		jqt "$g | .aspects == [\"checks\",\"acs\"] and .count == 2" "$name (ACS): checks and acs, 2 nodes"
		jqt "$g | any(.differences[]; .subject == \"acs-redirect\" and .value == \"fail\")" \
			"$name (ACS): acs-redirect fails"
		jqt "$g | all(.differences[] | select(.aspect == \"acs\"); .value == \"0x001d\" and .majority == \"0x0000\")" \
			"$name (ACS): 0x001d where most have 0x0000"
		;;
	nogpu)
		jqt "$g | .aspects[0] == \"devices\" and any(.differences[]; .subject == \"GPU 0000:95:00.0\" and .value == null and .majority == \"present\") and any(.differences[]; .subject == \"GPUs\" and .value == \"7\" and .majority == \"8\")" \
			"$name (missing GPU): GPU 0000:95:00.0 absent, 7 GPUs of 8"
		jqt "$g | all(.differences[]; .aspect != \"paths\" and .aspect != \"numa\")" \
			"$name (missing GPU): its paths and NUMA are not repeated"
		;;
	norail)
		jqt "$g | any(.differences[]; .aspect == \"rails\" and .subject == \"count\" and .value == \"7\" and .majority == \"8\" and
			(.consequence | test(\"NCCL_IGNORE_NET_MISMATCH=0\") and test(\"hang\")))" \
			"$name (missing rail): 7 rails of 8, a hang by default, a refusal with NCCL_IGNORE_NET_MISMATCH=0"
		jqt "$g | [.differences[] | select(.aspect == \"rails\") | .subject] == [\"count\", \"rail 7\"]" \
			"$name (missing rail): the count and the last rail, nothing else under rails"
		;;
	slow)
		jqt "$g | [.differences[] | select(.aspect == \"rails\") | [.subject, (.value | test(\" 200 Gb/s\")), (.majority | test(\" 400 Gb/s\"))]] == [[\"rail 0\", true, true]]" \
			"$name (slow rail): rail 0 at 200 Gb/s where most run 400"
		;;
	order)
		jqt "$g | [.differences[] | select(.aspect == \"rails\") | [.subject, (.value | test(\"nearest GPU 2 \")), (.majority | test(\"nearest GPU 0 \"))]] == [[\"rail 1\", true, true]]" \
			"$name (rails in another order): NCCL's NIC 1 is GPU 2's, most nodes' GPU 0's"
		;;
	rename)
		jqt "$g | .aspects | index(\"rails\") == null" "$name (RDMA devices renamed): not under rails"
		;;
	*) bad "mkfleet planted an unknown fault $fault" ;;
	esac
done <"$T/nodes.planted"
jqt '(.groups | length) == 8' "8 groups (the 3 x8 nodes and the 2 ACS nodes each listed together)"
# Under rails: exactly the nodes whose rails NCCL would pair differently.
jq -r '.groups[] | select(.aspects | index("rails")) | .nodes[]' "$T/fleet.json" | sort >"$T/rails.reported"
awk '$2 == "norail" || $2 == "slow" || $2 == "order" { print $1 }' "$T/nodes.planted" | sort >"$T/rails.expected"
if [ -s "$T/rails.expected" ] && cmp -s "$T/rails.reported" "$T/rails.expected"; then ok
else bad "nodes under rails: $(tr '\n' ' ' <"$T/rails.reported"), expected $(tr '\n' ' ' <"$T/rails.expected")"; fi
jqt '.aspects.rails.reference.count == "8" and .aspects.rails.majority == '"$((N - 3))" "rails: 8 rails on all but the 3 nodes"

# One process or two: the same document.
run fleet --json --jobs 1 "$T/nodes"
if cmp -s "$T/out" "$T/fleet.json"; then ok; else bad "--jobs 1 and the default give different documents"; fi
run fleet --jobs 2 "$T/nodes"
if [ "$rc" -eq 1 ] && grep -q "^railbind fleet: $N files, $N nodes read, $((N - 11)) agree with the majority, 11 outliers in 8 groups, 0 unreadable$" "$T/out" &&
    grep -q "^  nodes: $(awk '$2 == "x8" { printf "%s%s", s, $1; s = ", " }' "$T/nodes.planted")$" "$T/out" &&
    grep -q '^Status: outliers$' "$T/out"
then ok; else bad "text report of $N nodes: $(head -1 "$T/out")"; fi

# ---- audit documents, alone and mixed with snapshots ----
mkdir -p "$T/audits" "$T/mix"
for i in 0011 0012 0013 0014 0015 0020; do
	"$RAILBIND" audit --json --input "$T/nodes/node$i.xml" >"$T/audits/node$i.json"
	cp "$T/audits/node$i.json" "$T/mix/"
done
for i in 0021 0022 0023 0024 0025 0026 0027 0028; do cp "$T/nodes/node$i.xml" "$T/mix/"; done
run fleet --json "$T/mix"
check "mix of snapshots and audits of healthy nodes: exit 0" test "$rc" -eq 0
jqt "$SCHEMA" "mix: schema"
jqt '.status == "ok" and .nodes == 14 and .agree == 14 and (.groups | length) == 0' "mix: all agree"
jqt '.aspects.checks.nodes == 14 and .aspects.links.nodes == 8 and .aspects.acs.nodes == 8' \
	"mix: links and ACS compared among the 8 snapshots only"
jqt '[.hosts[] | select(.input == "audit")] | length == 6' "mix: 6 audit inputs"
jqt 'any(.hosts[]; .name == "node0020" and .input == "audit")' "mix: an audit without host named by its file"
x8=$(awk '$2 == "x8" { print $1; exit }' "$T/nodes.planted")
"$RAILBIND" audit --json --input "$T/nodes/$x8.xml" >"$T/mix/$x8.json"
run fleet --json "$T/mix"
check "mix with an x8 node's audit: exit 1" test "$rc" -eq 1
jqt ".outliers == 1 and .groups[0].nodes == [\"$x8\"] and .groups[0].aspects == [\"checks\"]" \
	"mix: the x8 audit is the one outlier, by its checks"
run fleet --json "$T/audits"
check "audits only: exit 0" test "$rc" -eq 0
jqt '.nodes == 6 and (.aspects | keys) == ["checks","devices","numa","paths"]' "audits only: the four aspects an audit tells"

# ---- files that cannot be read ----
mkdir -p "$T/bad"
for i in 0031 0032 0033; do cp "$T/nodes/node$i.xml" "$T/bad/"; done
: >"$T/bad/empty.xml"
printf 'GPU0 PIX SYS\n' >"$T/bad/text.txt"
head -c 3000 "$T/nodes/node0034.xml" >"$T/bad/truncated.xml"
printf '{"schema": "railbind.plan/1", "ranks": []}\n' >"$T/bad/plan.json"
head -c 200 "$T/audits/node0011.json" >"$T/bad/cut.json"
printf '{"schema": "railbind.audit/1", "status": "ok"}\n' >"$T/bad/hollow.json"
mkdir "$T/bad/subdir"
: >"$T/bad/.hidden"
cp "$T/nodes/node0035.xml" "$T/bad/node0035.xml.tmp.abc123"
run fleet --json "$T/bad"
check "bad files: exit 2" test "$rc" -eq 2
jqt "$SCHEMA" "bad files: schema"
jqt '.status == "unreadable" and .files == 9 and .nodes == 3 and .agree == 3 and (.unreadable | length) == 6' \
	"bad files: 6 unreadable, the 3 good nodes still compared"
for f in empty.xml text.txt truncated.xml plan.json cut.json hollow.json; do
	jqt "any(.unreadable[]; (.file | endswith(\"/$f\")) and (.error | contains(\"$f\")))" "bad files: $f named with its reason"
done
jqt 'any(.unreadable[]; .error | test("empty file"))' "bad files: the empty file says so"
jqt 'any(.unreadable[]; .error | test("railbind.plan/1"))' "bad files: the wrong schema is named"
run fleet "$T/bad/node0031.xml" "$T/bad/missing.xml"
if [ "$rc" -eq 2 ] && grep -q "missing.xml: No such file" "$T/out"; then ok
else bad "a missing file among good ones: exit $rc, expected 2 and the file named"; fi
run fleet "$T/bad/empty.xml" "$T/bad/text.txt"
if [ "$rc" -eq 3 ] && grep -q '^Status: unknown$' "$T/out"; then ok
else bad "only unreadable files: exit $rc, expected 3"; fi

# ---- nothing to compare, command line ----
mkdir -p "$T/empty"
run fleet --json "$T/empty"
if [ "$rc" -eq 3 ] && grep -q "$T/empty: no snapshot or audit file" "$T/err"; then ok
else bad "empty directory: exit $rc, expected 3 and a message"; fi
jqt "$SCHEMA" "empty directory: schema"
jqt '.status == "unknown" and .files == 0 and .nodes == 0' "empty directory: nothing compared"
for args in "" "--bogus $T/mix" "--jobs 0 $T/mix" "--jobs x $T/mix"; do
	# shellcheck disable=SC2086
	run fleet $args
	if [ "$rc" -eq 3 ] && [ -s "$T/err" ] && [ ! -s "$T/out" ]; then ok
	else bad "railbind fleet $args: exit $rc, expected 3 and stderr only"; fi
done
run fleet --help
if [ "$rc" -eq 0 ] && grep -q Usage "$T/out" && [ ! -s "$T/err" ]; then ok; else bad "fleet --help"; fi
run fleet "$T/nodes/node0001.xml"
check "a single node agrees with itself" test "$rc" -eq 0
run fleet --json "$V/ok.xml" "$V/x8.xml"
jqt '.aspects.links.majority == 1 and .aspects.links.nodes == 2 and .outliers == 1' "two different nodes: no majority, one reference"

# ---- transceivers: a rail at alarm, a module of another kind or part ----
# xcvr NODE OUT KIND0 RX0 [PART0]: node NODE's snapshot with an ACME Q28-SR4
# QSFP28 planted on every NIC (4 lanes at 0.5 mW, 40 C, as a root-run snapshot
# records it), the first NIC's module of kind KIND0 and part PART0 with lane
# RX powers RX0.
xcvr() {
	awk -v k0="$3" -v rx0="$4" -v p0="${5:-Q28-SR4}" '
		{ print }
		/<object type="PCIDev"[^>]*pci_type="020/ {
			first = !n++
			print "<info name=\"RailbindXcvrNetdev\" value=\"eth" n "\"/>"
			print "<info name=\"RailbindXcvrType\" value=\"" (first ? k0 : "sff8636") "\"/>"
			print "<info name=\"RailbindXcvrLanes\" value=\"4\"/>"
			print "<info name=\"RailbindXcvrVendor\" value=\"ACME\"/>"
			print "<info name=\"RailbindXcvrPart\" value=\"" (first ? p0 : "Q28-SR4") "\"/>"
			print "<info name=\"RailbindXcvrTemp\" value=\"40\"/>"
			print "<info name=\"RailbindXcvrRxPower\" value=\"" (first ? rx0 : "0.5,0.5,0.5,0.5") "\"/>"
			print "<info name=\"RailbindXcvrRxPowerThresholds\" value=\"2,0.05,1.5,0.1\"/>"
		}' "$T/nodes/$1.xml" >"$2"
}
mkdir -p "$T/xcvr"
for i in 0011 0012 0013; do xcvr node$i "$T/xcvr/node$i.xml" sff8636 0.5,0.5,0.5,0.5; done
xcvr node0014 "$T/xcvr/node0014.xml" sff8636 0.5,0.5,0,0.5
xcvr node0015 "$T/xcvr/node0015.xml" cmis 0.5,0.5,0.5,0.5
xcvr node0016 "$T/xcvr/node0016.xml" sff8636 0.5,0.5,0.5,0.5 Q28-LR4
"$RAILBIND" audit --json --input "$T/xcvr/node0014.xml" >"$T/xcvr-dark.json"
run fleet --json "$T/xcvr"
check "transceivers: exit 1 (outliers)" test "$rc" -eq 1
jqt "$SCHEMA" "transceivers: schema"
jqt '.outliers == 3 and .aspects.rails.reference["rail 0 transceiver"] == "sff8636 ACME Q28-SR4"' \
	"transceivers: three outliers, the majority's module an ACME Q28-SR4 QSFP28"
jqt "$(grp node0014) | [.differences[] | [.aspect, .subject, .value, .majority]] == [[\"checks\",\"transceiver\",\"fail\",\"ok\"],[\"checks\",\"transceiver mlx5_0\",\"fail\",null]]" \
	"transceivers: node0014's rail mlx5_0 at alarm, under checks only"
jqt "$(grp node0015) | [.differences[] | [.aspect, .subject, .value, .majority, (.consequence | test(\"another vendor or part\"))]] == [[\"rails\",\"rail 0 transceiver\",\"cmis ACME Q28-SR4\",\"sff8636 ACME Q28-SR4\",true]]" \
	"transceivers: node0015's mlx5_0 module of another kind, under rails only"
jqt "$(grp node0016) | [.differences[] | [.aspect, .subject, .value, .majority]] == [[\"rails\",\"rail 0 transceiver\",\"sff8636 ACME Q28-LR4\",\"sff8636 ACME Q28-SR4\"]]" \
	"transceivers: node0016's mlx5_0 module of another part, under rails only"
# The same from the dark node's audit document among the snapshots.
rm "$T/xcvr/node0014.xml"
cp "$T/xcvr-dark.json" "$T/xcvr/node0014.json"
run fleet --json "$T/xcvr"
jqt "$(grp node0014) | [.differences[] | .subject] == [\"transceiver\",\"transceiver mlx5_0\"]" \
	"transceivers: the dark node's audit document says the same under checks"
# A snapshot taken without privilege reads no module: said under rails.
for i in 0011 0012 0013 0015 0016; do rm -f "$T/xcvr/node$i.xml"; done
for i in 0011 0012 0013; do xcvr node$i "$T/xcvr/node$i.xml" sff8636 0.5,0.5,0.5,0.5; done
rm "$T/xcvr/node0014.json"
cp "$T/nodes/node0014.xml" "$T/xcvr/"
run fleet --json "$T/xcvr"
jqt "$(grp node0014) | [.differences[] | select(.aspect == \"rails\") | .subject] | length == 8 and all(.[]; endswith(\" transceiver\"))" \
	"transceivers: a node without readings differs on its 8 modules, under rails"
jqt "$(grp node0014) | all(.differences[] | select(.aspect == \"rails\"); .value == null and (.consequence | test(\"CAP_NET_ADMIN\")))" \
	"transceivers: not read there, and why it may be"

# ---- memory: valgrind over every kind of input, one process and two ----
if [ "${FLEET_VALGRIND:-yes}" = no ]; then
	echo "fleet: FLEET_VALGRIND=no, memory check skipped"
elif command -v valgrind >/dev/null 2>&1; then
	for j in 1 2; do
		valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
			--error-exitcode=9 --trace-children=yes "$RAILBIND" fleet --jobs $j --json \
			"$T/mix" "$T/bad" >/dev/null 2>"$T/vg.err"
		rc=$?
		if [ "$rc" -eq 2 ]; then ok; else bad "valgrind, --jobs $j: exit $rc: $(head -5 "$T/vg.err")"; fi
	done
else
	echo "fleet: valgrind not found, memory check skipped"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
