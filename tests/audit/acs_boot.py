#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A node's boot, as far as ACS goes, on a railbind snapshot (hwloc XML).

  acs_boot.py IN.xml OUT.xml [--reset] [--default] [--cmdline PARAM] [--setpci LINE]...

--reset: ACS control as it powers up, 0 (PCIe base spec: every control bit
defaults to off), what the firmware may leave. --default: the kernel's own ACS on every port that has ACS (SV, RR, CR, UF
on; Vera root ports 10de:2f95/2f96 cannot turn completion redirect on), as
pci_std_enable_acs does at boot. --cmdline: then a pci=config_acs= parameter
(GRUB's quoting undone), as the kernel applies it: '1' on, '0' off, 'x'
unchanged, bit 6 first. --setpci: "setpci -s BDF ECAP0d+6.w=VALUE:MASK"
lines, as setpci writes them. Only RailbindACSCtl values change.
"""
import re
import sys

DEFAULT = "xx111x1"
VERA = "xx101x1"


def apply(ctl, flags):
    for b, c in enumerate(reversed(flags)):
        if c == "1":
            ctl |= 1 << b
        elif c == "0":
            ctl &= ~(1 << b)
    return ctl


def main(argv):
    src, dst, rest = argv[1], argv[2], argv[3:]
    default = reset = False
    flags = {}
    setpci = {}
    i = 0
    while i < len(rest):
        if rest[i] == "--default":
            default = True
        elif rest[i] == "--reset":
            reset = True
        elif rest[i] == "--cmdline":
            i += 1
            param = rest[i].replace('\\"', "").replace('"', "")
            if not param.startswith("pci=config_acs="):
                sys.exit("acs_boot: not a pci=config_acs= parameter: " + rest[i])
            for item in param[len("pci=config_acs="):].split(";"):
                f, bdf = item.split("@")
                if not re.fullmatch(r"[01x]{1,7}", f):
                    sys.exit("acs_boot: bad flags " + f)
                flags[bdf] = f.rjust(7, "x")
        elif rest[i] == "--setpci":
            i += 1
            m = re.fullmatch(r"setpci -s (\S+) ECAP0d\+6\.w=([0-9a-f]{4}):([0-9a-f]{4})", rest[i])
            if not m:
                sys.exit("acs_boot: bad setpci line: " + rest[i])
            setpci[m.group(1)] = (int(m.group(2), 16), int(m.group(3), 16))
        else:
            sys.exit("acs_boot: unknown argument " + rest[i])
        i += 1
    out = []
    bdf = ids = None
    seen = set()
    with open(src, encoding="utf-8") as f:
        for line in f:
            m = re.search(r'<object [^>]*pci_busid="([^"]+)" pci_type="[0-9a-f]{4} \[([0-9a-f]{4}:[0-9a-f]{4})\]', line)
            if m:
                bdf, ids = m.group(1), m.group(2)
            m = re.search(r'<info name="RailbindACSCtl" value="(0x[0-9a-f]+)"/>', line)
            if m and bdf:
                ctl = 0 if reset else int(m.group(1), 16)
                if default:
                    vera = ids in ("10de:2f95", "10de:2f96")
                    ctl = apply(ctl, VERA if vera else DEFAULT)
                if bdf in flags:
                    ctl = apply(ctl, flags[bdf])
                    seen.add(bdf)
                if bdf in setpci:
                    val, mask = setpci[bdf]
                    ctl = (ctl & ~mask) | (val & mask)
                    seen.add(bdf)
                line = line.replace(m.group(1), "0x%04x" % ctl)
            out.append(line)
    missing = (set(flags) | set(setpci)) - seen
    if missing:
        sys.exit("acs_boot: no port with ACS at " + ", ".join(sorted(missing)))
    with open(dst, "w", encoding="utf-8") as f:
        f.writelines(out)


if __name__ == "__main__":
    main(sys.argv)
