#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# contrib/nhc/railbind.nhc with NHC's die and log stubbed: a failing audit
# fails the node naming its checks, warnings only with -w, "could not
# decide" never. Needs RAILBIND and BUILD (generated fixtures).
set -u
: "${RAILBIND:?}" "${BUILD:?}"
here=$(cd "$(dirname "$0")" && pwd)
FIX=$BUILD/fixtures
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
DIED=
LOGGED=
die() { DIED="$2"; }
log() { LOGGED="$1"; }
# shellcheck source=/dev/null
. "$here/../../contrib/nhc/railbind.nhc"

try() {
	DIED= LOGGED=
	check_railbind_audit "$@"
	rc=$?
}

try -- --input "$FIX/audit-ok.xml"
if [ "$rc" -eq 0 ] && [ -z "$DIED" ]; then ok; else bad "healthy node: rc=$rc died=$DIED"; fi
try -- --input "$FIX/audit-acs.xml"
if [ "$rc" -eq 1 ] && [[ "$DIED" == *"acs-redirect=fail"* ]] && [[ "$DIED" != *"status="* ]]; then ok
else bad "failing node: rc=$rc died=$DIED"; fi
try -- --input "$FIX/audit-no-peermem.xml"
if [ "$rc" -eq 0 ] && [ -z "$DIED" ] && [[ "$LOGGED" == *"peer-memory=warn"* ]]; then ok
else bad "warnings without -w: rc=$rc died=$DIED logged=$LOGGED"; fi
try -w --input "$FIX/audit-no-peermem.xml"
if [ "$rc" -eq 1 ] && [[ "$DIED" == *"peer-memory=warn"* ]]; then ok
else bad "warnings with -w: rc=$rc died=$DIED"; fi
try --input /nonexistent/railbind.xml
if [ "$rc" -eq 0 ] && [ -z "$DIED" ] && [[ "$LOGGED" == *"could not decide"*"/nonexistent/railbind.xml"* ]]; then ok
else bad "unreadable input: rc=$rc died=$DIED logged=$LOGGED"; fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
