#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The packages build.sh made, checked: lintian and rpmlint find nothing
# (debian/*.lintian-overrides and rpmlint.toml say why for each exception);
# debian/changelog, railbind.spec and dkms.conf carry the Makefile's
# version; and each .deb holds the same files as its .rpm, with the same
# modes and the same conffiles, once the two distributions' directories
# are named alike. What only an EL9 machine can check is not checked here:
# that the spec's BuildRequires and Requires (pkgconfig(...), dkms,
# slurm-devel, slurm-slurmd) name EL9/EPEL packages, that %post and %preun
# run as intended, and that the plugin is where EPEL's slurmd looks.
# Usage: check.sh PKGDIR (with deb/ and rpm/ from build.sh). TAP output.
set -u
pkgs=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
here=$top/tests/packages
version=$(sed -n 's/^VERSION := //p' "$top/Makefile")
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/railbind-pkgcheck.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0
failed=0

tap() { # tap RC DESCRIPTION [DIAGNOSTIC]
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2"
		[ -z "${3:-}" ] || printf '%s\n' "$3" | head -n 40 | sed 's/^/#   /'
	fi
}

# The .deb of each .rpm (debian/control, railbind.spec).
PAIRS="railbind:railbind libaffinity1:railbind-libs libaffinity-dev:railbind-devel
railbind-dkms:railbind-dkms slurm-wlm-railbind-plugin:slurm-spank-railbind"

# One name for a directory of both: Debian's /lib (bookworm does not move
# files to /usr, its /lib is /usr/lib merged) and multiarch library
# directory, EL9's lib64; each distribution's Slurm plugin directory;
# compressed man pages by their name.
norm() {
	sed -e 's,^\./,/,' -e 's,^/lib/,/usr/lib/,' \
		-e "s,^/usr/lib/$ma/slurm-wlm/,@SLURMPLUGINDIR@/," -e 's,^/usr/lib64/slurm/,@SLURMPLUGINDIR@/,' \
		-e "s,^/usr/lib/$ma/,@LIBDIR@/," -e 's,^/usr/lib64/,@LIBDIR@/,' \
		-e 's,\.gz$,,'
}
# "MODE PATH" of every file and symlink, not the directories, nor what
# each distribution adds on its own: Debian's changelog, copyright and
# lintian overrides, EL9's build-id links and %doc. A shared object is
# 0644 on Debian (policy 10.9, dh_fixperms) and 0755 on EL9 (rpm's
# dependency generator reads executable ones only): compared as 0644.
listed() {
	while read -r mode path; do
		p=$(echo "$path" | norm)
		case $p in *.so | *.so.[0-9]*) [ "$mode" != -rwxr-xr-x ] || mode=-rw-r--r-- ;; esac
		echo "$mode $p"
	done | grep -v -e ' /usr/share/doc/' -e ' /usr/share/lintian/' -e ' /usr/lib/\.build-id/' | sort
}
deb_files() {
	dpkg-deb --fsys-tarfile "$1" | tar -tvf - | awk '$1 !~ /^d/ { print $1, $6 }' | listed
}
rpm_files() {
	rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$1" | awk '$1 !~ /^d/' | listed
}

# --- lint -------------------------------------------------------------------
out=$(lintian --fail-on error,warning "$pkgs"/deb/*.changes 2>&1)
tap $? "lintian: no error or warning in the .debs" "$out"
out=$(rpmlint -c "$here/rpmlint.toml" "$pkgs"/rpm/*.rpm "$top/railbind.spec" 2>&1)
rc=$?
printf '%s\n' "$out" | grep -q ' 0 errors, 0 warnings'
tap "$([ $rc -eq 0 ] && [ $? -eq 0 ]; echo $?)" "rpmlint: no error or warning in the .rpms and the spec" "$out"

# --- versions ---------------------------------------------------------------
dv=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
sv=$(sed -n 's/^Version:[[:space:]]*//p' "$top/railbind.spec")
kv=$(dpkg-deb --fsys-tarfile "$pkgs"/deb/railbind-dkms_*.deb | tar -xOf - "./usr/src/railbind-$version/dkms.conf" 2>&1 |
	sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p')
[ "${dv%-*}" = "$version" ] && [ "$sv" = "$version" ] && [ "$kv" = "$version" ]
tap $? "debian/changelog ($dv), railbind.spec ($sv) and dkms.conf ($kv) are the Makefile's $version"

# --- the same files in both ---------------------------------------------------
for pair in $PAIRS; do
	d=${pair%%:*}
	r=${pair#*:}
	deb=$(ls "$pkgs"/deb/"${d}"_*.deb 2>/dev/null | head -n 1)
	rpm=$(ls "$pkgs"/rpm/"${r}"-[0-9]*.rpm 2>/dev/null | head -n 1)
	if [ -z "$deb" ] || [ -z "$rpm" ]; then
		tap 1 "$d and $r built" "deb: ${deb:-missing}; rpm: ${rpm:-missing}"
		continue
	fi
	deb_files "$deb" >"$tmp/$d.deb"
	rpm_files "$rpm" >"$tmp/$d.rpm"
	out=$(diff -u "$tmp/$d.deb" "$tmp/$d.rpm")
	tap "$([ -z "$out" ] && [ -s "$tmp/$d.deb" ]; echo $?)" \
		"$d.deb and $r.rpm hold the same $(wc -l <"$tmp/$d.deb") files, modes alike" "$out"
	dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./conffiles 2>/dev/null | norm | sort >"$tmp/$d.dc"
	rpm -qp --configfiles "$rpm" | grep -v '^(contains no files)' | norm | sort >"$tmp/$d.rc"
	out=$(diff -u "$tmp/$d.dc" "$tmp/$d.rc")
	tap "$([ -z "$out" ]; echo $?)" "$d and $r mark the same conffiles ($(paste -sd ' ' "$tmp/$d.dc"))" "$out"
done
# Every package built is one of the pairs (a new one needs its twin).
extra=$(cd "$pkgs" && ls deb/*.deb rpm/*.rpm | sed -e 's,^deb/\([^_]*\)_.*,\1,' \
	-e 's,^rpm/\(.*\)-[0-9][^-]*-[^-]*\.[^.]*\.rpm$,\1,' | grep -v -e '-dbgsym$' |
	grep -vxF "$(echo "$PAIRS" | tr ' :' '\n\n')")
tap "$([ -z "$extra" ]; echo $?)" "every package built has its twin in the other format" "$extra"

echo "1..$n"
echo "$((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
