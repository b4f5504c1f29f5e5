#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What "make install" puts on a node, checked without root or a node:
# install into a scratch DESTDIR, look at every file, uninstall, and check
# the man pages against the binary's --help, the units with systemd-analyze,
# the bash completion, the NHC module and dkms.conf (by building the module
# from the installed DKMS tree the way dkms does). Prints TAP.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
make=${MAKE:-make}
build=${BUILD:-$top/build}
cli=$build/railbind
kdir=${KDIR:-}
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
pass=0
fail=0
n=0

ok() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		pass=$((pass + 1))
		echo "ok $n - $2"
	else
		fail=$((fail + 1))
		echo "not ok $n - $2"
		[ -z "${3:-}" ] || printf '%s\n' "$3" | head -n 20 | sed 's/^/#   /'
	fi
}
skip() {
	n=$((n + 1))
	pass=$((pass + 1))
	echo "ok $n - $1 # SKIP $2"
}

echo "1..14"

# 1-3: install, the files and their modes, uninstall.
out=$($make -s -C "$top" install DESTDIR="$dest/root" PREFIX=/usr 2>&1)
ok $? "make install DESTDIR=... PREFIX=/usr" "$out"
want="/usr/bin/railbind 755
/usr/lib/libaffinity.so.1 755
/usr/lib/libaffinity.a 644
/usr/lib/pkgconfig/libaffinity.pc 644
/usr/include/railbind/affinity.h 644
/usr/share/man/man1/railbind.1 644
/usr/share/man/man8/railbindd.8 644
/usr/share/man/man5/railbind.conf.5 644
/usr/share/bash-completion/completions/railbind 644
/usr/lib/udev/rules.d/60-railbind.rules 644
/usr/lib/systemd/system/railbindd.service 644
/usr/lib/systemd/system/railbindd.socket 644
/usr/lib/modules-load.d/railbind.conf 644
/etc/nhc/scripts/railbind.nhc 644"
bad=$(printf '%s\n' "$want" | while read -r f mode; do
	[ "$(stat -c %a "$dest/root$f" 2>/dev/null)" = "$mode" ] || echo "$f: not there with mode $mode"
done)
[ -L "$dest/root/usr/lib/libaffinity.so" ] || bad="$bad libaffinity.so: no symlink"
grep -qx 'ExecStart=/usr/sbin/railbindd .*' "$dest/root/usr/lib/systemd/system/railbindd.service" ||
	bad="$bad railbindd.service: ExecStart not /usr/sbin/railbindd"
grep -qx 'libdir=/usr/lib' "$dest/root/usr/lib/pkgconfig/libaffinity.pc" ||
	bad="$bad libaffinity.pc: libdir is not the install's"
ok "$([ -z "$bad" ]; echo $?)" "every file installed, with its mode and the install's paths" "$bad"

# The installed library and header build a program (pkg-config, as a user would).
cat >"$dest/t.c" <<'C'
#include <affinity.h>
int main(void) { struct aff_ctx *c = aff_ctx_new(NULL); aff_ctx_unref(c); return 0; }
C
out=$(PKG_CONFIG_PATH=$dest/root/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest/root \
	sh -c 'cc -o "$1/t" "$1/t.c" $(pkg-config --cflags --libs libaffinity) &&
	LD_LIBRARY_PATH="$1/root/usr/lib" "$1/t"' sh "$dest" 2>&1)
ok $? "a program builds and runs against the installed libaffinity.pc, header and library" "$out"

out=$($make -s -C "$top" uninstall DESTDIR="$dest/root" PREFIX=/usr 2>&1)
left=$(find "$dest/root" -type f -o -type l)
ok "$([ -z "$left" ]; echo $?)" "make uninstall removes every installed file" "$out$left"

# 5-7: man pages: groff finds no problem; every command and option the
# binary's --help shows is in railbind(1).
out=$(for p in "$top"/man/*.[158]; do groff -man -ww -z "$p" 2>&1 | sed "s|^|$p: |"; done)
ok "$([ -z "$out" ]; echo $?)" "groff -man -ww renders the three man pages without a warning" "$out"
man1=$(sed 's/\\-/-/g' "$top/man/railbind.1")
cmds=$("$cli" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
missing=
for c in $cmds; do
	printf '%s\n' "$man1" | grep -qE "^\.(B|TP) *$c\b|^\.B railbind $c\b" || missing="$missing $c"
done
ok "$([ -n "$cmds" ] && [ -z "$missing" ]; echo $?)" \
	"railbind(1) documents every command of railbind --help ($(echo $cmds))" "missing:$missing"
missing=
for c in $cmds; do
	for o in $("$cli" "$c" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u); do
		printf '%s\n' "$man1" | grep -qF -- "$o" || missing="$missing $c:$o"
	done
done
ok "$([ -z "$missing" ]; echo $?)" "railbind(1) documents every option of every command's --help" "missing:$missing"

# 8: the units as systemd reads them.
if command -v systemd-analyze >/dev/null; then
	d=$dest/units
	mkdir -p "$d"
	sed 's|@SBINDIR@|/bin|; s|/bin/railbindd|/bin/true|' "$top/udev/railbindd.service.in" >"$d/railbindd.service"
	cp "$top/udev/railbindd.socket" "$d/"
	out=$(cd "$d" && SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no \
		./railbindd.socket ./railbindd.service 2>&1 | grep -v -e 'Failed to .* bus' -e 'Cannot add dependency job')
	ok "$([ -z "$out" ]; echo $?)" "systemd-analyze verify: railbindd.socket and railbindd.service" "$out"
else
	skip "systemd-analyze verify" "systemd-analyze not installed"
fi

# 9: the rules file: every line a comment, blank, or KEY op "value" pairs.
bad=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$top/udev/60-railbind.rules" |
	grep -vE '^(#.*|[[:space:]]*)$' |
	grep -vE '^([A-Z]+(\{[a-zA-Z_]+\})?(==|!=|=|\+=|:=)"[^"]*"(,[[:space:]]*|[[:space:]]*$))+$')
ok "$([ -z "$bad" ]; echo $?)" "60-railbind.rules: every rule is KEY op \"value\", ..." "$bad"

# 10: bash completion, from the binary's own help.
out=$(PATH=$build:$PATH bash -c '. "$1/completions/railbind"
	COMP_WORDS=(railbind p); COMP_CWORD=1; _railbind railbind; echo "${COMPREPLY[*]}"
	COMP_WORDS=(railbind plan --vi); COMP_CWORD=2; _railbind railbind; echo "${COMPREPLY[*]}"' sh "$top" 2>&1)
ok "$([ "$out" = "plan
--visible" ]; echo $?)" "bash completion: commands and options from --help" "$out"

# 11: the NHC module: exit 2 of the audit fails the node, 0/1/3 do not.
out=$(bash -c '
	die() { echo "die $*"; }; log() { echo "log $*"; }
	. "$1/udev/railbind.nhc"
	for rc in 0 1 2 3 9; do
		RAILBIND_AUDIT_CMD=$2/fake; printf "#!/bin/sh\necho \"gpu-nic-path fail x\"\nexit %s\n" $rc >$2/fake; chmod +x $2/fake
		r=$(check_railbind_audit); echo "$rc:$?:${r%% *}"
	done' sh "$top" "$dest" 2>&1 | tr '\n' ' ')
ok "$([ "$out" = "0:0: 1:0:log 2:1:die 3:0:log 9:1:die " ]; echo $?)" \
	"NHC check_railbind_audit fails the node on audit exit 2 only" "$out"

# 12-14: DKMS: the source tree and dkms.conf, and the module built from it
# with dkms.conf's own MAKE line, as dkms would build it.
out=$($make -s -C "$top" dkms-install DESTDIR="$dest/dkms" 2>&1)
src=$(ls -d "$dest"/dkms/usr/src/railbind-* 2>/dev/null)
ok "$([ -n "$src" ] && [ -f "$src/dkms.conf" ] && [ -f "$src/Kbuild" ] && [ -f "$src/kmod/Kbuild" ]; echo $?)" \
	"make dkms-install DESTDIR=... installs /usr/src/railbind-VERSION" "$out"
ver=$(sh -c '. "$1/dkms.conf"; echo "$PACKAGE_NAME $PACKAGE_VERSION ${BUILT_MODULE_NAME[0]:-}"' sh "$src" 2>/dev/null ||
	bash -c '. "$1/dkms.conf"; echo "$PACKAGE_NAME $PACKAGE_VERSION ${BUILT_MODULE_NAME[0]}"' sh "$src")
ok "$([ "$ver" = "railbind ${src##*/railbind-} railbind" ]; echo $?)" "dkms.conf names railbind, the installed version and the module" "$ver"
if [ -n "$kdir" ] && [ -d "$kdir" ]; then
	mkdir -p "$dest/tree/railbind/${src##*/railbind-}"
	cp -r "$src" "$dest/tree/railbind/${src##*/railbind-}/build"
	out=$(bash -c 'kernel_source_dir=$1 dkms_tree=$2; . "$3/dkms.conf"; eval "${MAKE[0]}" -s -j2' \
		sh "$kdir" "$dest/tree" "$src" 2>&1)
	ko=$dest/tree/railbind/${src##*/railbind-}/build/kmod/railbind.ko
	ok "$([ -f "$ko" ]; echo $?)" "dkms.conf's MAKE builds kmod/railbind.ko against $(basename "$kdir")" "$out"
else
	skip "dkms.conf's MAKE builds the module" "no kernel headers (KDIR)"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
