#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Kubernetes' pcieRoot, by its own rule, for railbind's DRA test.

  k8s_rule.py root SYSROOT BDF...   GetPCIeRootAttributeByPCIBusID's answer for
      each address under SYSROOT (a --root tree): the first component below
      /sys/devices of the cleaned target of /sys/bus/pci/devices/BDF, which
      must start with /sys/devices/pci and end in BDF; "-" where it errors.
  k8s_rule.py tree XML SYSROOT      a sysfs tree of the hwloc XML's PCI devices
      as Linux lays it out: /sys/devices/pciDDDD:BB (a host bridge's domain
      and secondary bus, from hwloc's bridge_pci) / each bridge / device,
      and the /sys/bus/pci/devices links to them; exit 2 for an XML that
      names one address twice, which no sysfs can.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET


def rule(sysroot, bdf):
    if not re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]", bdf):
        return "-"
    link = os.path.join(sysroot, "sys/bus/pci/devices", bdf)
    try:
        target = os.readlink(link)
    except OSError:
        return "-"
    # The tree stands for /: the rule runs on the path as seen from it.
    if not os.path.isabs(target):
        target = os.path.normpath(os.path.join("/sys/bus/pci/devices", target))
    if not target.startswith("/sys/devices/pci") or os.path.basename(target) != bdf:
        return "-"
    return target[len("/sys/devices/"):].split("/")[0]


def busid(o):
    a = o.get("pci_busid")
    return a.lower() if a else None


def tree(xml, sysroot):
    root = ET.parse(xml).getroot()

    def walk(o, path):
        for c in o.findall("object"):
            t = c.get("type")
            if t == "Bridge" and c.get("bridge_type", "").startswith("0-"):
                m = re.fullmatch(r"([0-9a-f]{4}):\[([0-9a-f]{2})-[0-9a-f]{2}\]",
                                 c.get("bridge_pci", "").lower())
                if not m:
                    walk(c, path)
                    continue
                walk(c, ["pci%s:%s" % (m.group(1), m.group(2))])
            elif t in ("Bridge", "PCIDev") and path:
                b = busid(c)
                if not b:
                    walk(c, path)
                    continue
                p = path + [b]
                os.makedirs(os.path.join(sysroot, "sys/devices", *p), exist_ok=True)
                links = os.path.join(sysroot, "sys/bus/pci/devices")
                os.makedirs(links, exist_ok=True)
                try:
                    os.symlink(os.path.join("../../../devices", *p), os.path.join(links, b))
                except FileExistsError:
                    # One address twice (hwloc's synthetic tests): no sysfs.
                    sys.exit(2)
                walk(c, p)
            else:
                walk(c, path)

    walk(root, [])


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "root":
        for b in sys.argv[3:]:
            print(rule(sys.argv[2], b))
    elif len(sys.argv) == 4 and sys.argv[1] == "tree":
        tree(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
