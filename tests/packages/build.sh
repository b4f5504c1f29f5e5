#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Build railbind's .deb (debian/, dpkg-buildpackage -b) or .rpm
# (railbind.spec, rpmbuild -bb) packages from a clean copy of the tree: the
# files git tracks, and those it would track, as they are now (nothing
# built, nothing ignored). The copy lives in a temporary directory, so the
# tree is left as it was; the packages land in OUTDIR, replaced whole.
# Usage: build.sh deb|rpm OUTDIR
set -eu
kind=$1
out=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
version=$(sed -n 's/^VERSION := //p' "$top/Makefile")

die() {
	echo "$kind: $*" >&2
	exit 1
}
# The outer make's jobserver and command-line variables (BUILD=,
# SANITIZE=, V=) are not the package build's: it runs its own make.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
git -C "$top" rev-parse --git-dir >/dev/null 2>&1 ||
	die "$top is not a git checkout: the clean copy is what git tracks"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/railbind-$kind.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
src=$tmp/railbind-$version
mkdir -p "$src"
# What "git archive" gives, but with the working tree's changes.
(cd "$top" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 sh -c 'for f; do [ -e "$f" ] || [ -L "$f" ] && printf "%s\0" "$f"; done' sh |
	tar --null -T - -cf -) | tar -C "$src" -xf -

case $kind in
deb)
	command -v dpkg-buildpackage >/dev/null || die "dpkg-dev not installed (./scripts/setup --all)"
	(cd "$src" && DEB_BUILD_OPTIONS="parallel=2 ${DEB_BUILD_OPTIONS:-}" \
		dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1 ||
		{ tail -n 40 "$tmp/build.log" >&2; die "dpkg-buildpackage failed"; }
	mkdir -p "$tmp/out"
	mv "$tmp"/*.deb "$tmp"/*.changes "$tmp"/*.buildinfo "$tmp/build.log" "$tmp/out/"
	;;
rpm)
	command -v rpmbuild >/dev/null || die "rpm not installed (./scripts/setup --all)"
	mkdir -p "$tmp/top/SOURCES" "$tmp/rpmtmp"
	tar -C "$tmp" --sort=name --owner=0 --group=0 -czf \
		"$tmp/top/SOURCES/railbind-$version.tar.gz" "railbind-$version"
	# --nodeps: BuildRequires name EL9's packages, which Debian's rpm
	# database does not know. EL9's systemd-rpm-macros define the unit,
	# udev and modules-load.d directories; Debian's rpm does not ship
	# them, so they are given here as EL9 defines them. Debian's
	# brp-compress needs bash (read -d), not its #!/bin/sh.
	post=$(rpm --eval '%{__os_install_post}' |
		sed -e 's,^[[:space:]]*,,; /^$/d; s,^/usr/lib/rpm/brp-compress,bash &,' | paste -sd ';')
	rpmbuild -bb --nodeps --define "_topdir $tmp/top" --define "_tmppath $tmp/rpmtmp" \
		--define "__os_install_post $post" \
		--define "_unitdir /usr/lib/systemd/system" \
		--define "_udevrulesdir /usr/lib/udev/rules.d" \
		--define "_modulesloaddir /usr/lib/modules-load.d" \
		"$src/railbind.spec" >"$tmp/build.log" 2>&1 ||
		{ tail -n 40 "$tmp/build.log" >&2; die "rpmbuild failed"; }
	mkdir -p "$tmp/out"
	mv "$tmp"/top/RPMS/*/*.rpm "$tmp/build.log" "$tmp/out/"
	;;
*)
	die "usage: build.sh deb|rpm OUTDIR"
	;;
esac
rm -rf "$out"
mkdir -p "$(dirname "$out")"
mv "$tmp/out" "$out"
echo "$kind: $(cd "$out" && ls *."$kind" | tr '\n' ' ')"
