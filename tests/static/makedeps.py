#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Every file a recipe uses that make builds is among the rule's prerequisites.

A fragment that names a product before the Makefile defines it gets an empty
prerequisite (slurm.mk once linked railbind.so without libaffinity.a, and
make -j8 from clean failed); a rule that runs a binary without depending on
it works only when something else happened to build it first. Both show in
make's own database (make -pnq): for each rule, the files its recipe names
(simple $(VAR) references expanded with the database's values) that are
themselves targets with a recipe must be reachable through its
prerequisites. Usage: makedeps.py [MAKE ARGS...]; prints each miss, exits 1
if any. Closing line: "makedeps: N rules, N misses".
"""
import re
import subprocess
import sys

REF = re.compile(r"\$[({]([A-Za-z_][A-Za-z0-9_.]*)[)}]")


def database(args):
    out = subprocess.run(["make", "-pnq", "--no-print-directory"] + args,
                         capture_output=True, text=True).stdout
    variables, rules, target, in_files = {}, {}, None, False
    for line in out.splitlines():
        if line.startswith("# Files"):
            in_files = True
            continue
        if not in_files:
            m = re.match(r"^([A-Za-z_][A-Za-z0-9_.]*) :?= (.*)$", line)
            if m:
                variables[m.group(1)] = m.group(2)
            continue
        if line.startswith("\t") and target is not None:
            rules[target]["recipe"].append(line[1:])
            continue
        m = re.match(r"^([^#\s][^:=]*?):{1,2}(?!=)\s*(.*)$", line)
        if m and not line.startswith("#"):
            target = m.group(1).strip()
            prereqs = m.group(2).split("|")[0].split()
            rules.setdefault(target, {"prereqs": [], "recipe": []})
            rules[target]["prereqs"] += prereqs
        elif not line.strip():
            target = None
    return variables, rules


def expand(text, variables, depth=0):
    if depth > 8:
        return text
    return REF.sub(lambda m: expand(variables.get(m.group(1), m.group(0)), variables, depth + 1)
                   if m.group(1) in variables else m.group(0), text)


def closure(target, rules, seen):
    for p in rules.get(target, {}).get("prereqs", []):
        if p not in seen:
            seen.add(p)
            closure(p, rules, seen)
    return seen


def main():
    variables, rules = database(sys.argv[1:])
    built = {t for t, r in rules.items() if r["recipe"] and t.startswith("/")}
    misses = 0
    checked = 0
    for target, rule in sorted(rules.items()):
        if not rule["recipe"]:
            continue
        checked += 1
        words = set(re.split(r"[\s'\"=;|&()<>]+", expand(" ".join(rule["recipe"]), variables)))
        need = {w for w in words if w in built and w != target}
        reach = closure(target, rules, set())
        for w in sorted(need - reach):
            print("makedeps: %s: its recipe uses %s, not among its prerequisites" % (target, w))
            misses += 1
    print("makedeps: %d rules, %d misses" % (checked, misses))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
