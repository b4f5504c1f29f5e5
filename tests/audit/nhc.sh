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

# check_railbind_rails: the node's rails against a reference node's snapshot.
# rails-sym is the reference; rails-asym the same node less one rail; the
# same node with every RDMA device renamed has the same rails.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/railbind-nhc.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
sed 's/"mlx5_/"rdma_rail/g; s/value="mlx5_/value="rdma_rail/g' "$FIX/rails-sym.xml" >"$tmp/renamed.xml"
rtry() {
	DIED= LOGGED=
	check_railbind_rails "$@"
	rc=$?
}
rtry -s "$FIX/rails-sym.xml" "$FIX/rails-sym.xml"
if [ "$rc" -eq 0 ] && [ -z "$DIED" ]; then ok; else bad "rails as the reference's: rc=$rc died=$DIED"; fi
rtry -s "$FIX/rails-asym.xml" "$FIX/rails-sym.xml"
if [ "$rc" -eq 1 ] && [[ "$DIED" == *"rails differ"*"count: 3; majority: 4"* ]]; then ok
else bad "a rail missing: rc=$rc died=$DIED"; fi
if grep -q rdma_rail0 "$tmp/renamed.xml" && ! grep -q mlx5_ "$tmp/renamed.xml"; then
	rtry -s "$tmp/renamed.xml" "$FIX/rails-sym.xml"
	if [ "$rc" -eq 0 ] && [ -z "$DIED" ]; then ok; else bad "rails renamed only: rc=$rc died=$DIED"; fi
else
	bad "the renamed copy of rails-sym still names mlx5_ devices"
fi
rtry -s /nonexistent/node.xml "$FIX/rails-sym.xml"
if [ "$rc" -eq 0 ] && [ -z "$DIED" ] && [[ "$LOGGED" == *"exited 2"* ]]; then ok
else bad "unreadable snapshot: rc=$rc died=$DIED logged=$LOGGED"; fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
