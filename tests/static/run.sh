#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Static analysis of the userspace C: cppcheck, then clang-tidy (checks in
# .clang-tidy) on each file. Suppressions live inline next to the code, each
# with its reason. Environment: TOP, CFLAGS_TIDY (the compile flags), FILES.
# Prints one line per tool, then "N passed, N failed".
set -u
cd "$TOP" || exit 1
pass=0 fail=0
log=${STATIC_LOG:-/tmp/railbind-static.$$}
# shellcheck disable=SC2086 # FILES and CFLAGS_TIDY are word lists
if cppcheck -q --std=c11 --enable=warning,style,performance,portability \
	--inline-suppr --error-exitcode=1 -D_GNU_SOURCE -Ilibaffinity -Ibroker \
	-Itests/gen --suppress=missingIncludeSystem \
	--suppress=variableScope \
	-Djson_object_object_foreach\(o,k,v\)='for (char *k = 0, *v = 0; o;)' \
	--template='{file}:{line}: {severity} {id}: {message}' $FILES > "$log" 2>&1; then
	echo "ok   cppcheck: $(echo $FILES | wc -w) files clean"
	pass=$((pass + 1))
else
	echo "FAIL cppcheck:"
	sed 's/^/     /' "$log"
	fail=$((fail + 1))
fi
bad=0
for f in $FILES; do
	# shellcheck disable=SC2086
	if ! clang-tidy -quiet "$f" -- $CFLAGS_TIDY > "$log" 2>&1; then
		echo "FAIL clang-tidy $f:"
		grep -E 'error:|warning:' "$log" | sed 's/^/     /'
		bad=$((bad + 1))
	fi
done
if [ $bad -eq 0 ]; then
	echo "ok   clang-tidy: $(echo "$FILES" | wc -w) files clean"
	pass=$((pass + 1))
else
	fail=$((fail + 1))
fi
rm -f "$log"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
