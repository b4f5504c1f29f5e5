#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh SECONDS TARGET...: fuzz each target for SECONDS, one after the other.
# Environment: FUZZ_BIN (the binaries), FUZZ_CORPUS (one working corpus per
# target, seeded by seed.sh when missing), FUZZ_ARTIFACTS (crashing inputs),
# TOP, FIXTURES, RAILBIND_TOPOLOGIES (read-only extra seeds when present),
# FUZZ_HWLOC_ASAN (ASAN_OPTIONS of fuzz_hwloc; default full stacks for lsan.supp).
# First every committed reproducer in fuzz/regress/TARGET/ is run once.
# One line per target with its executions, then "N passed, N failed".
set -u
secs=$1
shift
pass=0 fail=0
mkdir -p "$FUZZ_ARTIFACTS"
topos=${RAILBIND_TOPOLOGIES:-}
LSAN_OPTIONS=suppressions=$TOP/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}
export LSAN_OPTIONS TOP FIXTURES
asan=${ASAN_OPTIONS:-}
for t in "$@"; do
	bin=$FUZZ_BIN/fuzz_$t corpus=$FUZZ_CORPUS/$t log=$FUZZ_ARTIFACTS/$t.log
	[ -d "$corpus" ] || sh "$TOP/fuzz/seed.sh" "$t" "$corpus" ||
		{ fail=$((fail + 1)); continue; }
	if [ -d "$TOP/fuzz/regress/$t" ]; then
		if ! "$bin" "$TOP/fuzz/regress/$t"/* > "$log" 2>&1; then
			echo "FAIL $t: a committed reproducer fails again (see $log)"
			fail=$((fail + 1))
			continue
		fi
	fi
	opts="-max_len=4096"
	extra=
	ASAN_OPTIONS=$asan
	case $t in
	nccl) opts="-max_len=16384"
	      for d in aws-ofi-nccl azhpc-images nccl-dumps oci-hpc rccl-topo_expl; do
		      [ -n "$topos" ] && [ -d "$topos/$d" ] && extra="$extra $topos/$d"
	      done ;;
	# Full stacks through hwloc (no frame pointers) for lsan.supp to match.
	hwloc) opts="-max_len=262144"
	       ASAN_OPTIONS=${FUZZ_HWLOC_ASAN:-fast_unwind_on_malloc=0}${asan:+:$asan}
	       for d in hwloc-tests mpibind psmgmt; do
		       [ -n "$topos" ] && [ -d "$topos/$d" ] && extra="$extra $topos/$d"
	       done ;;
	pcicfg) opts="-max_len=4098" ;;
	esac
	export ASAN_OPTIONS
	[ -f "$TOP/fuzz/$t.dict" ] && opts="$opts -dict=$TOP/fuzz/$t.dict"
	# -timeout: one input taking over 10 s is a hang, a finding like a crash.
	# shellcheck disable=SC2086 # opts and extra are word lists
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 $opts \
		-print_final_stats=1 -artifact_prefix="$FUZZ_ARTIFACTS/$t-" \
		"$corpus" $extra > "$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	units=$(find "$corpus" -type f | wc -l)
	if [ $rc -eq 0 ]; then
		echo "ok   $t: ${execs:-?} execs in ${secs}s, $cov, corpus $units"
		pass=$((pass + 1))
	else
		echo "FAIL $t: exit $rc after ${execs:-?} execs; input and log in $FUZZ_ARTIFACTS/"
		grep -m3 -E 'ERROR: |runtime error|invariant failed' "$log" | sed 's/^/     /'
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
