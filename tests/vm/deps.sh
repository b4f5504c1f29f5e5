#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Install the Debian 12 packages that the kernel module build, its style
# checks and the QEMU tests need. Idempotent and quiet: packages already
# present are skipped by apt-get itself.
set -eu

PKGS="
build-essential
bc
kmod
cpio
gzip
xz-utils
pciutils
linux-headers-amd64
linux-headers-6.12-amd64
linux-source-6.1
linux-source-6.12
sparse
qemu-system-x86
qemu-utils
busybox-static
libcmocka-dev
pkg-config
python3
"

missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

export DEBIAN_FRONTEND=noninteractive
if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
else
	SUDO=
fi
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
