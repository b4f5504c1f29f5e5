#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Build a busybox initramfs that loads the virtio/9p modules of a Debian
# kernel image tree and hands over to tests/vm/init. Usage: IMG REL OUT
set -eu

img=$1
rel=$2
out=$3
here=$(cd "$(dirname "$0")" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

mkdir -p "$stage/bin" "$stage/proc" "$stage/sys" "$stage/dev" "$stage/mnt" "$stage/lib/modules"
cp /bin/busybox "$stage/bin/busybox"
cp "$here/init" "$stage/init"
chmod +x "$stage/init"

# Modules in dependency order; built-in ones (6.12's virtio) are skipped.
dep=$img/lib/modules/$rel/modules.dep
# virtio_net: the NIC hotplugged as a rail (tests/vm/stress.py) gets a netdev;
# i6300esb: the watchdog rescanned under readers (tests/vm/rescan.py).
want="virtio_pci 9pnet_virtio 9p virtio_net i6300esb"
: >"$stage/lib/modules/order"
resolve() {
	local line path name d
	line=$(grep -E "(^|/)$1\.ko(\.[a-z]+)?:" "$dep" || true)
	[ -n "$line" ] || return 0
	path=${line%%:*}
	for d in ${line#*:}; do
		resolve "$(basename "$d" | sed 's/\.ko.*//')"
	done
	name=$(basename "$path" | sed 's/\.ko.*//')
	grep -qx "$name" "$stage/lib/modules/order" && return 0
	case $path in
	*.xz) xz -dc "$img/lib/modules/$rel/$path" >"$stage/lib/modules/$name.ko" ;;
	*.zst) zstd -qdc "$img/lib/modules/$rel/$path" >"$stage/lib/modules/$name.ko" ;;
	*) cp "$img/lib/modules/$rel/$path" "$stage/lib/modules/$name.ko" ;;
	esac
	echo "$name" >>"$stage/lib/modules/order"
}
for m in $want; do
	resolve "$m"
done
(cd "$stage" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out"
