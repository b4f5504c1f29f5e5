#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Copy out of the kernel's drivers/pci/p2pdma.c, unchanged, the code that
decides a P2P verdict: struct pci_p2pdma and everything from
pci_bridge_has_acs_redir() up to pci_p2pdma_distance_many()'s comment
(calc_map_type_and_dist() and the helpers and whitelist it uses). One line
changes: Debian's kernels have no pci_dev->p2pdma (CONFIG_PCI_P2PDMA is
off), and its per-provider cache is not part of the verdict.
Usage: extract.py P2PDMA_C OUT"""
import re
import sys


def main():
    src, out = sys.argv[1], sys.argv[2]
    text = open(src).read()
    m = re.search(r"^struct pci_p2pdma \{\n.*?^\};\n", text, re.S | re.M)
    start = text.find("\nstatic int pci_bridge_has_acs_redir(")
    stop = re.search(r"\n/\*\*\n \* pci_p2pdma_distance_many", text)
    if not m or start < 0 or not stop or "calc_map_type_and_dist(" not in text[start:stop.start()]:
        sys.exit("extract.py: %s does not have the expected p2pdma.c layout" % src)
    body = text[start:stop.start()]
    cache = "rcu_dereference(provider->p2pdma)"
    if body.count(cache) != 1:
        sys.exit("extract.py: %s: expected one %s" % (src, cache))
    body = body.replace(cache, "NULL /* railbind_p2pref: no p2pdma field */")
    with open(out, "w") as f:
        f.write("/* Extracted by tests/vm/p2pref/extract.py from %s: GPL-2.0, see its header. */\n"
                % src)
        f.write(m.group(0))
        f.write(body)


if __name__ == "__main__":
    main()
