#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# load.sh SECONDS [CLIENTS]: railbindd on the DGX fixture under broker_load
# (tests/broker/load.c): CLIENTS (1000) connections for SECONDS, random
# requests and hang-ups; then the broker must exit 0 on SIGTERM. The broker
# keeps its default --max-clients (4096): the limit is unit-sized, not met here.
# Every client is this one user: --max-user-clients is raised to match, or
# all but 256 would be refused (tests/broker/test_hostile.py tests that cap).
# Needs RAILBINDD, BUILD, LOAD (the load program). Logs in $BUILD/logs/load/.
set -u
: "${RAILBINDD:?}" "${BUILD:?}" "${LOAD:?}"
secs=${1:-10} clients=${2:-1000}
dir=$BUILD/logs/load
rm -rf "$dir"
mkdir -p "$dir"
chmod 755 "$dir"
ulimit -n 4096 2>/dev/null || true
"$RAILBINDD" --foreground --input "$BUILD/fixtures/dgx-h100.xml" --socket "$dir/sock" \
	--state-dir "$dir" --max-user-clients 4096 --max-user-leases 4096 2> "$dir/broker.log" &
bpid=$!
i=0
while [ ! -S "$dir/sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
rc=0
"$LOAD" "$dir/sock" "$bpid" "$clients" "$secs" ${LOAD_SEED:+"$LOAD_SEED"} || rc=1
kill -TERM "$bpid"
wait "$bpid"
brc=$?
if [ $brc -ne 0 ]; then
	echo "FAIL: railbindd exited $brc after the load (log: $dir/broker.log)"
	echo "0 passed, 1 failed"
	exit 1
fi
echo "railbindd exited 0; $(grep -c . "$dir/broker.log") log lines"
exit $rc
