#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The broker's table of code points a job name may not hold
(broker/railbindd/unicode.c, written by hand) against the Unicode data
itself, every code point: general categories Cc, Cf, Zl, Zp and the
noncharacters from Python's unicodedata, Default_Ignorable_Code_Point from
perl's Unicode tables (DerivedCoreProperties; skipped, and said so, without
perl). Their Unicode must be the table's: a newer Python fails here, so the
table is brought up to date rather than drifting.
Usage: test_unicode.py BROKER_UNICODE_DUMP
"""
import shutil
import subprocess
import sys
import unicodedata

CLASSES = ("Cc", "Cf", "Zl", "Zp")


def noncharacter(cp):
    return 0xFDD0 <= cp <= 0xFDEF or (cp & 0xFFFE) == 0xFFFE


def default_ignorable():
    """Default_Ignorable_Code_Point from perl, with perl's Unicode version; None without perl."""
    if not shutil.which("perl"):
        return None, None
    code = ('use Unicode::UCD; print Unicode::UCD::UnicodeVersion(), "\\n";'
            'for my $c (0..0x10FFFF) { next if $c >= 0xD800 && $c <= 0xDFFF;'
            ' print "$c\\n" if chr($c) =~ /\\p{Default_Ignorable_Code_Point}/ }')
    r = subprocess.run(["perl", "-e", code], capture_output=True, text=True)
    if r.returncode:
        return None, None
    lines = r.stdout.split()
    return lines[0], set(int(x) for x in lines[1:])


def main():
    out = subprocess.run([sys.argv[1]], capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    version = lines[0].split()[1]
    refused = set()
    for line in lines[1:]:
        lo, hi = (int(x, 16) for x in line.split())
        refused.update(range(lo, hi + 1))
    failed = 0
    if unicodedata.unidata_version != version:
        print("FAIL: the table is Unicode %s, Python's unicodedata %s: update "
              "broker/railbindd/unicode.c from the newer data" % (version, unicodedata.unidata_version))
        failed += 1
    pversion, di = default_ignorable()
    if di is None:
        print("SKIP: Default_Ignorable_Code_Point: no perl with Unicode tables here")
    elif pversion != version:
        print("FAIL: the table is Unicode %s, perl's %s" % (version, pversion))
        failed += 1
    want = set()
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        if unicodedata.category(chr(cp)) in CLASSES or noncharacter(cp) or (di and cp in di):
            want.add(cp)
    missing = sorted(want - refused)
    # Without perl, what is refused beyond Python's classes cannot be told apart.
    extra = sorted(refused - want) if di is not None else []

    def show(cps):
        return ", ".join("U+%04X %s" % (c, unicodedata.name(chr(c), "")) for c in cps[:8])
    if missing:
        print("FAIL: %d code points of Cc/Cf/Zl/Zp/DI/noncharacters pass: %s" % (len(missing), show(missing)))
        failed += 1
    if extra:
        print("FAIL: %d code points refused that are none of them: %s" % (len(extra), show(extra)))
        failed += 1
    print("unicode: %d code points refused, Unicode %s; %s" % (len(refused), version,
          "matches" if not failed else "differs"))
    print("%d passed, %d failed" % (0 if failed else 1, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
