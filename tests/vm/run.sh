#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Boot Debian's kernel matching the headers in $2 under QEMU (TCG only)
# with the emulated GPU/NIC topology of tests/vm/topology.py and run the
# railbind.ko scenarios in it; prints TAP. Usage: run.sh LABEL KDIR
set -eu

label=$1
kdir=$2
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=$here/cache
rel=$(basename "$kdir" | sed 's/^linux-headers-//')
work=$top/build/vm/$rel

die() {
	echo "Bail out! $*"
	exit 1
}

for tool in qemu-system-x86_64 dpkg-deb depmod cpio /usr/bin/python3; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool not installed (run tests/vm/deps.sh)"
done
[ -x /bin/busybox ] || die "busybox-static not installed (run tests/vm/deps.sh)"
[ -f "$top/build/kmod-$label/kmod/railbind.ko" ] || die "railbind.ko for $label not built"

# Debian's kernel image, fetched once into the (gitignored) cache.
mkdir -p "$cache" "$work"
deb=$(ls "$cache"/linux-image-"$rel"_*.deb 2>/dev/null | head -n 1 || true)
if [ -z "$deb" ]; then
	(cd "$cache" && apt-get download -q "linux-image-$rel" >/dev/null 2>&1) ||
		die "cannot download linux-image-$rel into $cache"
	deb=$(ls "$cache"/linux-image-"$rel"_*.deb | head -n 1)
fi
if [ ! -f "$work/img/boot/vmlinuz-$rel" ] || [ "$deb" -nt "$work/img/boot/vmlinuz-$rel" ]; then
	rm -rf "$work/img"
	dpkg-deb -x "$deb" "$work/img"
	depmod -b "$work/img" "$rel"
fi

# The initramfs: busybox and the modules that reach the host root over 9p.
"$here/mkinitramfs.sh" "$work/img" "$rel" "$work/initrd.gz"

# The test provider module, built for this kernel outside the source tree.
mkdir -p "$work/provider"
cp "$here/provider/Kbuild" "$here/provider/"*.[ch] "$work/provider/"
cp "$top/kmod/railbind_api.h" "$work/provider/"
make -s -C "$kdir" M="$work/provider" W=1 modules >"$work/provider.log" 2>&1 ||
	die "test provider does not build: see $work/provider.log"

# Emulated PCI host bridges (fakebus/): thousands of functions, 32-bit
# domains, p2pdma's whitelisted host bridges; test-only, never installed.
mkdir -p "$work/fakebus"
cp "$here/fakebus/Kbuild" "$here/fakebus/"*.c "$work/fakebus/"
make -s -C "$kdir" M="$work/fakebus" W=1 modules >"$work/fakebus.log" 2>&1 ||
	die "the fake host bridge module does not build: see $work/fakebus.log"

# The kernel's own P2P verdict (p2pref/): calc_map_type_and_dist() copied
# out of drivers/pci/p2pdma.c of the Debian source package of this kernel
# series, when installed (tests/vm/deps.sh); the guest skips without it.
ref=$work/p2pref
src=/usr/src/linux-source-$label.tar.xz
rm -rf "$ref"
if [ -f "$src" ]; then
	mkdir -p "$ref" "$cache"
	if [ ! -f "$cache/p2pdma-$label.c" ] || [ "$src" -nt "$cache/p2pdma-$label.c" ]; then
		tar -xJOf "$src" --wildcards '*/drivers/pci/p2pdma.c' >"$cache/p2pdma-$label.c.new" ||
			die "no drivers/pci/p2pdma.c in $src"
		mv "$cache/p2pdma-$label.c.new" "$cache/p2pdma-$label.c"
	fi
	/usr/bin/python3 -B "$here/p2pref/extract.py" "$cache/p2pdma-$label.c" \
		"$ref/p2pdma_extract.c" || die "cannot extract the P2P verdict from $src"
	cp "$here/p2pref/Kbuild" "$here/p2pref/"*.c "$ref/"
	make -s -C "$kdir" M="$ref" modules >"$work/p2pref.log" 2>&1 ||
		die "the p2pdma.c reference module does not build: see $work/p2pref.log"
	echo "drivers/pci/p2pdma.c of linux-source-$label" \
		"$(dpkg-query -W -f='${Version}' "linux-source-$label" 2>/dev/null)," \
		"kernel $(dpkg-query -W -f='${Version}' "linux-headers-$rel" 2>/dev/null)" >"$ref/versions"
fi

exec /usr/bin/python3 -B "$here/vmdrive.py" --label "$label" --release "$rel" \
	--kernel "$work/img/boot/vmlinuz-$rel" --initrd "$work/initrd.gz" \
	--top "$top" --work "$work"
