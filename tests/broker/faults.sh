#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# test_faults.py in a private mount namespace, so its tmpfs mounts vanish
# with it: as root `unshare -m`, otherwise a user namespace (`unshare -r -m`)
# when the kernel allows one; else the mount cases skip. Needs RAILBIND,
# RAILBINDD, BUILD, python3.
set -u
: "${RAILBIND:?}" "${RAILBINDD:?}" "${BUILD:?}"
t=$(dirname "$0")/test_faults.py
if [ "$(id -u)" -eq 0 ] && unshare -m --propagation private true 2>/dev/null; then
	exec timeout 120 unshare -m --propagation private python3 "$t"
elif unshare -r -m --propagation private true 2>/dev/null; then
	exec timeout 120 unshare -r -m --propagation private python3 "$t"
fi
exec timeout 120 python3 "$t"
