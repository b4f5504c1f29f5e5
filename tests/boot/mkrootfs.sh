#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Build, once, the Debian 12 root filesystem the boot test starts from:
# debootstrap (minbase and tests/boot/packages) plus Debian's kernel
# linux-image-REL (the .deb tests/vm caches) and its headers, for DKMS.
# The result is a tarball in tests/boot/cache/ (gitignored, never
# committed), rebuilt only when this script, the package list or REL
# change. Needs root (debootstrap, chroot) and Debian's mirror, which is
# read from apt's sources (RAILBIND_DEBIAN_MIRROR overrides).
# Usage: mkrootfs.sh REL OUT.tar
set -eu

rel=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
vmcache=$top/tests/vm/cache

die() {
	echo "Bail out! rootfs: $*"
	exit 1
}

stamp="$(grep -v '^#' "$here/packages" | cat - "$here/mkrootfs.sh" | sha256sum | cut -c1-16) $rel"
if [ -f "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$stamp" ]; then
	echo "# rootfs: cached $out"
	exit 0
fi
[ "$(id -u)" -eq 0 ] || die "building the rootfs needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null || die "debootstrap not installed (run ./scripts/setup --all)"

# The mirror apt already uses: URIs of deb822 .sources files or "deb" lines.
uris=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
	/etc/apt/sources.list.d/*.sources 2>/dev/null |
	sed -n -e 's/^URIs:[[:space:]]*//p' -e 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]*\).*/\2/p' |
	tr ' ' '\n')
mirror=${RAILBIND_DEBIAN_MIRROR:-$(echo "$uris" | grep -E '/debian/?$' | head -n 1)}
security=${RAILBIND_DEBIAN_SECURITY:-$(echo "$uris" | grep -E '/debian-security/?$' | head -n 1)}
[ -n "$mirror" ] || die "no Debian mirror in apt's sources (set RAILBIND_DEBIAN_MIRROR)"

# Debian's kernel image, in the cache tests/vm fills (the same file).
mkdir -p "$vmcache" "$(dirname "$out")"
deb=$(ls "$vmcache"/linux-image-"$rel"_*.deb 2>/dev/null | head -n 1 || true)
if [ -z "$deb" ]; then
	(cd "$vmcache" && apt-get download -q "linux-image-$rel" >/dev/null 2>&1) ||
		die "cannot download linux-image-$rel into $vmcache"
	deb=$(ls "$vmcache"/linux-image-"$rel"_*.deb | head -n 1)
fi

start=$(date +%s)
root=$(mktemp -d "$(dirname "$out")/rootfs.XXXXXX")
cleanup() {
	umount "$root/proc" 2>/dev/null || true
	rm -rf "$root"
}
trap cleanup EXIT INT TERM
pkgs=$(grep -v '^#' "$here/packages" | tr '\n' ',' | sed 's/,$//')
echo "# rootfs: debootstrap bookworm from $mirror (a few minutes, once)"
debootstrap --variant=minbase --include="$pkgs" bookworm "$root" "$mirror" \
	>"$out.log" 2>&1 || die "debootstrap failed: see $out.log"

{
	echo "deb $mirror bookworm bookworm-updates main"
	[ -z "$security" ] || echo "deb $security bookworm-security main"
} >"$root/etc/apt/sources.list"
mount -t proc proc "$root/proc"
cp "$deb" "$root/tmp/"
export DEBIAN_FRONTEND=noninteractive
chroot "$root" apt-get update -q >>"$out.log" 2>&1 || die "apt-get update in the rootfs failed: see $out.log"
chroot "$root" apt-get install -y -q --no-install-recommends "/tmp/$(basename "$deb")" \
	"linux-headers-$rel" >>"$out.log" 2>&1 ||
	die "kernel or headers did not install: see $out.log"
chroot "$root" apt-get clean
rm -f "$root/tmp/$(basename "$deb")"
umount "$root/proc"

echo "/dev/vda / ext4 defaults 0 1" >"$root/etc/fstab"
echo railbind-boot >"$root/etc/hostname"
tar -C "$root" --numeric-owner -cf "$out.tmp" .
mv "$out.tmp" "$out"
echo "$stamp" >"$out.stamp"
echo "# rootfs: built $out in $(($(date +%s) - start)) s"
