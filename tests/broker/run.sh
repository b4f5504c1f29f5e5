#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Integration tests of railbindd, railbind run and railbind status
# (test_broker.py). Needs RAILBIND, RAILBINDD, BUILD and python3.
set -u
: "${RAILBIND:?}" "${RAILBINDD:?}" "${BUILD:?}"
if ! command -v python3 >/dev/null 2>&1; then
	echo "broker: python3 not found (apt-get install python3)"
	echo "0 passed, 1 failed"
	exit 1
fi
exec timeout 300 python3 "$(dirname "$0")/test_broker.py"
