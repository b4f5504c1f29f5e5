#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh SECONDS TARGET...: fuzz each target for SECONDS, one after the other.
# run.sh -runs N TARGET...: each target N executions from seed FUZZ_SEED
#   (default 1): the same inputs on every run, for make check (check-fuzz).
# Environment: FUZZ_BIN (the binaries), FUZZ_CORPUS (one working corpus per
# target, seeded by seed.sh when missing), FUZZ_ARTIFACTS (crashing inputs),
# TOP, FIXTURES, RAILBIND_TOPOLOGIES (read-only extra seeds when present),
# FUZZ_HWLOC_ASAN (ASAN_OPTIONS of fuzz_hwloc; default full stacks for lsan.supp),
# FUZZ_RUNS_hwloc (-runs for hwloc, whose every input forks).
# First every committed reproducer in fuzz/regress/TARGET/ is run once.
# Target hwloc-minimal is fuzz_hwloc with hwloc's built-in minimal XML
# importer (HWLOC_LIBXML=0) instead of its libxml2 plugin.
# An input hwloc crashes on is no finding of fuzz_hwloc's: railbind contains
# it (fuzz/fuzz_hwloc.c says how the target tells the two apart).
# One line per target with its executions, then "N passed, N failed".
set -u
runs=
if [ "$1" = -runs ]; then
	runs=$2
	shift
fi
secs=$1
shift
pass=0 fail=0
mkdir -p "$FUZZ_ARTIFACTS"
topos=${RAILBIND_TOPOLOGIES:-}
LSAN_OPTIONS=suppressions=$TOP/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}
export LSAN_OPTIONS TOP FIXTURES
asan=${ASAN_OPTIONS:-}
for t in "$@"; do
	corpus=$FUZZ_CORPUS/$t log=$FUZZ_ARTIFACTS/$t.log
	# hwloc-minimal: fuzz_hwloc with hwloc's minimal XML importer.
	src=${t%-minimal}
	bin=$FUZZ_BIN/fuzz_$src
	unset HWLOC_LIBXML
	[ "$t" = hwloc-minimal ] && export HWLOC_LIBXML=0
	[ -d "$corpus" ] || sh "$TOP/fuzz/seed.sh" "$src" "$corpus" ||
		{ fail=$((fail + 1)); continue; }
	if [ -d "$TOP/fuzz/regress/$src" ]; then
		if ! "$bin" "$TOP/fuzz/regress/$src"/* > "$log" 2>&1; then
			echo "FAIL $t: a committed reproducer fails again (see $log)"
			fail=$((fail + 1))
			continue
		fi
	fi
	opts="-max_len=4096"
	extra=
	ASAN_OPTIONS=$asan
	case $src in
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
	nccllog) opts="-max_len=16384" ;;
	esac
	export ASAN_OPTIONS
	[ -f "$TOP/fuzz/$src.dict" ] && opts="$opts -dict=$TOP/fuzz/$src.dict"
	how="-max_total_time=$secs"
	took="in ${secs}s"
	if [ -n "$runs" ]; then
		n=$runs
		[ "$src" = hwloc ] && n=${FUZZ_RUNS_hwloc:-$runs}
		how="-runs=$n -seed=${FUZZ_SEED:-1}"
		took="(seed ${FUZZ_SEED:-1})"
	fi
	# -timeout: one input taking over 10 s is a hang, a finding like a crash;
	# fuzz_hwloc's import child has its own CPU limit (60 s), and under ASan on
	# a loaded machine one at its memory limit took over 10 s (4.5 s alone).
	timeout=10
	[ "$src" = hwloc ] && timeout=60
	# shellcheck disable=SC2086 # opts, how and extra are word lists
	"$bin" $how -timeout=$timeout -rss_limit_mb=2048 $opts \
		-print_final_stats=1 -artifact_prefix="$FUZZ_ARTIFACTS/$t-" \
		"$corpus" $extra > "$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
	units=$(find "$corpus" -type f | wc -l)
	if [ $rc -eq 0 ]; then
		echo "ok   $t: ${execs:-?} execs $took, $cov, corpus $units"
		pass=$((pass + 1))
	else
		echo "FAIL $t: exit $rc after ${execs:-?} execs; input and log in $FUZZ_ARTIFACTS/"
		grep -m3 -E 'ERROR: |runtime error|invariant failed' "$log" | sed 's/^/     /'
		fail=$((fail + 1))
	fi
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
