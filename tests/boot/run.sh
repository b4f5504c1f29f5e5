#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The boot test: a Debian 12 root filesystem (debootstrap, cached by
# mkrootfs.sh), railbind's .debs installed into it with dpkg (make deb:
# their maintainer scripts have DKMS build the module for the guest's
# kernel and enable the broker's units), booted under QEMU TCG with systemd
# as init on tests/vm's emulated topology; guest.sh runs the scenarios,
# then purges the packages and looks for anything left, and bootdrive.py
# relays their TAP. Needs root on the host (debootstrap, chroot, image
# ownership). Usage: run.sh KDIR DEBDIR
set -eu

kdir=${1:-}
debdir=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
rel=$(basename "$kdir" | sed 's/^linux-headers-//')
base=$here/cache/bookworm-$rel.tar
work=$top/build/boot/$rel
root=$work/rootfs

die() {
	echo "Bail out! $*"
	echo "0 passed, 1 failed"
	exit 1
}

# Root builds the image (debootstrap, chroot, file ownership in it): CI and
# "./scripts/setup --all" run as root; a user's "make check" skips, saying so.
if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP the boot test needs root on the host (debootstrap, chroot)"
	echo "0 passed, 0 failed"
	exit 0
fi
[ -n "$kdir" ] && [ -d "$kdir" ] || die "no kernel headers '$kdir' (run ./scripts/setup --all)"
ls "$debdir"/railbind_*.deb >/dev/null 2>&1 || die "no railbind .debs in '$debdir' (make deb)"
for tool in qemu-system-x86_64 mkfs.ext4 chroot /usr/bin/python3; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool not installed (run ./scripts/setup --all)"
done

t0=$(date +%s)
"$here/mkrootfs.sh" "$rel" "$base" || die "no root filesystem"

# A fresh copy of the cached rootfs every run: the image is what a node
# gets from installing the packages, nothing left from an earlier run.
rm -rf "$work"
mkdir -p "$root"
tar -C "$root" -xf "$base"

# The packages as a node installs them (dpkg -i, as apt does once they
# are in a repository): railbind-dkms's postinst has DKMS build the module
# inside the guest's own userspace (its gcc, its headers) for the guest's
# kernel, as on a node; railbind's enables the broker's socket and service.
# Nothing is started or loaded: this is a chroot, the running kernel the
# host's. Not the dbgsym packages.
mkdir -p "$root/tmp/railbind-debs"
cp $(ls "$debdir"/*.deb | grep -v -e '-dbgsym_') "$root/tmp/railbind-debs/"
mount -t proc proc "$root/proc"
trap 'umount "$root/proc" 2>/dev/null || true' EXIT
# (Without the outer make's jobserver, which DKMS's make cannot reach.)
chroot "$root" env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL sh -c 'dpkg -i /tmp/railbind-debs/*.deb' \
	>"$work/install.log" 2>&1 ||
	die "dpkg -i of the packages failed: see $work/install.log"
umount "$root/proc"
trap - EXIT
rm -rf "$root/tmp/railbind-debs"

# The test's own additions, never part of a package: the module and
# railbind told that virtio-gpu stands in for a GPU and e1000e for a rail
# (as tests/vm does), the guest half of the test and its unit.
echo "options railbind extra_classes=gpu=1af4:0380" >"$root/etc/modprobe.d/railbind-test.conf"
mkdir -p "$root/etc/railbind" "$root/opt/railbind-test"
printf 'accelerator = 1af4:1050\nethernet-rails = yes\n' >"$root/etc/railbind/railbind.conf"
cp "$here/guest.sh" "$root/opt/railbind-test/"
/usr/bin/python3 -B -c "
import sys; sys.path.insert(0, '$top/tests/vm'); import topology as t
print('HOTPLUG_PORT=%s' % t.HOTPLUG['pciehp'])" >"$root/opt/railbind-test/test.env"
cp "$here/railbind-boottest.service" "$root/etc/systemd/system/"
chroot "$root" systemctl enable railbind-boottest.service >/dev/null 2>&1
chroot "$root" systemctl mask serial-getty@ttyS0.service >/dev/null 2>&1

cp "$root/boot/vmlinuz-$rel" "$root/boot/initrd.img-$rel" "$work/"
size=$(du -sm "$root" | cut -f1)
mkfs.ext4 -q -F -L root -d "$root" "$work/root.img" "$((size + 512))M" >/dev/null ||
	die "mkfs.ext4 -d failed"
rm -rf "$root"
echo "# boot: image ready in $(($(date +%s) - t0)) s"

exec /usr/bin/python3 -B "$here/bootdrive.py" --kernel "$work/vmlinuz-$rel" \
	--initrd "$work/initrd.img-$rel" --image "$work/root.img" --work "$work"
