#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_hostile.py: railbindd against hostile local users. Real uids need root
# and setpriv; elsewhere the suite says it skipped. Needs RAILBIND, RAILBINDD,
# BUILD, HOSTILE (tests/broker/hostile.c) and python3.
set -u
: "${RAILBIND:?}" "${RAILBINDD:?}" "${BUILD:?}" "${HOSTILE:?}"
exec timeout 900 python3 "$(dirname "$0")/test_hostile.py"
