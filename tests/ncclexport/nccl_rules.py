#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What NCCL requires of a topology file it reads, as read in NCCL's source
(github.com/NVIDIA/nccl, src/graph/topo.cc and xml.cc/xml.h, 2.2x-2.30),
checked on one `railbind nccl-topo` export; and, when the input was an NCCL
file itself, that the export keeps what NCCL reads from it.

usage: nccl_rules.py SOURCE EXPORT   prints one line per violation, exits 1 if any

The rules, each with where NCCL reads it. xmlGetAttrStr/xmlGetAttrInt (xml.h)
fail ("Attribute %s of node %s not found") on a missing attribute;
xmlGetAttrIntDefault and xmlGetAttr do not.
 - <cpu>: numaid (topo.cc ncclTopoAddCpu: xmlGetAttrInt "numaid"). arch,
   vendor, familyid and modelid are required there too, but NCCL fills them
   from the running CPU before (xml.cc ncclTopoGetXmlFromCpu), so a file
   may leave them out.
 - <pci>: class and busid (ncclTopoAddPci: xmlGetAttrStr), link_width
   (xmlGetAttrInt; 0 is read as x16) and link_speed (xmlGetAttrStr, a key of
   kvDictPciGen or anything else for its 8 GT/s fallback). NCCL fills the two
   link attributes only from NVML or sysfs (xml.cc ncclTopoGetXmlFromSys,
   which fails when sysfs does not describe the device), so they must be in
   the file.
 - <gpu>: dev (ncclTopoAddGpu: xmlGetAttrInt); rank, sm and gdr likewise,
   which NCCL fills for the GPUs of its ranks (NVML, the job); a <gpu>
   without rank is skipped (ncclTopoAddPci: xmlGetAttrIndex "rank" == -1),
   one with rank must have sm and gdr.
 - <net>: dev (ncclTopoAddNet: xmlGetAttrInt "dev"); name, the key NCCL
   matches its plugin's devices by (xml.cc ncclTopoFillNet).
 - <nvlink>: count and tclass (ncclTopoAddNvLinks: xmlGetAttrInt/Str), target
   when tclass is a GPU's (0x03...).
 - <c2c>: count and bw (ncclTopoAddC2c: xmlGetAttrInt).
From an NCCL input: every <gpu> attribute (sm, rank, gdr, ...) and <nvlink>
element of the input, and every net's name and port (NCCL's form: the verbs
port plus the net's index on its PCI device, transport/net_ib/init.cc
props->port = portNum + realPort), are in the export as the input has them.
"""
import sys
import xml.etree.ElementTree as ET

PCI_GEN = {"2.5 GT/s", "5 GT/s", "8 GT/s", "16 GT/s", "32 GT/s", "2.5 GT/s PCIe",
           "5.0 GT/s PCIe", "8.0 GT/s PCIe", "16.0 GT/s PCIe", "32.0 GT/s PCIe",
           "64.0 GT/s PCIe", ""}


def is_int(v):
    try:
        int(v, 0)
        return True
    except (TypeError, ValueError):
        return False


def rules(root, bad):
    for cpu in root.iter("cpu"):
        if not is_int(cpu.get("numaid")):
            bad("<cpu> without an integer numaid")
    for pci in root.iter("pci"):
        b = pci.get("busid")
        for a in ("class", "busid", "link_speed", "link_width"):
            if pci.get(a) is None:
                bad("<pci busid=%s> without %s" % (b, a))
        if pci.get("link_width") is not None and not is_int(pci.get("link_width")):
            bad("<pci busid=%s> link_width=%r is not an integer" % (b, pci.get("link_width")))
        if pci.get("link_speed") not in PCI_GEN and pci.get("link_speed") is not None:
            bad("<pci busid=%s> link_speed=%r is no key of NCCL's kvDictPciGen" % (b, pci.get("link_speed")))
        for gpu in pci.findall("gpu"):
            need = ("dev", "sm", "gdr") if gpu.get("rank") is not None else ("dev",)
            for a in need:
                if not is_int(gpu.get(a)):
                    bad("<gpu> of %s without an integer %s" % (b, a))
            for nv in gpu.findall("nvlink"):
                need = ["count", "tclass"]
                if (nv.get("tclass") or "").startswith("0x03"):
                    need.append("target")
                for a in need:
                    if nv.get(a) is None:
                        bad("<nvlink> of GPU %s without %s" % (b, a))
            for c2c in gpu.findall("c2c"):
                for a in ("count", "bw"):
                    if not is_int(c2c.get(a)):
                        bad("<c2c> of GPU %s without an integer %s" % (b, a))
    for net in root.iter("net"):
        if not is_int(net.get("dev")) or not net.get("name"):
            bad("<net name=%s> without dev or name" % net.get("name"))


def by_busid(root):
    """<pci> by busid, of the first host (host_hash) as railbind plans it."""
    out, first = {}, None
    for cpu in root.findall("cpu"):
        h = cpu.get("host_hash")
        if h is not None and first is None:
            first = h
        if h is not None and h != first:
            continue
        for pci in cpu.iter("pci"):
            out.setdefault(pci.get("busid"), pci)
    return out


def kept(src, exp, bad):
    s, e = by_busid(src), by_busid(exp)
    for busid, sp in s.items():
        for sg in sp.findall("gpu"):
            ep = e.get(busid)
            eg = ep.find("gpu") if ep is not None else None
            if eg is None:
                continue        # a GPU railbind does not plan (another host's)
            for a, v in sg.attrib.items():
                if a != "dev" and eg.get(a) != v:
                    bad("GPU %s: %s=%r in the input, %r in the export" % (busid, a, v, eg.get(a)))
            want = sorted(tuple(sorted(n.attrib.items())) for n in sg.findall("nvlink"))
            have = sorted(tuple(sorted(n.attrib.items())) for n in eg.findall("nvlink"))
            if want != have:
                bad("GPU %s: %d <nvlink> in the input, %d alike in the export" %
                    (busid, len(want), len(set(want) & set(have))))
        enets = {n.get("name"): n for n in (e[busid].iter("net") if busid in e else [])}
        for sn in sp.findall("nic/net"):
            en = enets.get(sn.get("name"))
            if en is None:
                continue        # left out (a port not ACTIVE, exclude-nic)
            if en.get("port") != sn.get("port"):
                bad("net %s: port=%r in the input, %r in the export" %
                    (sn.get("name"), sn.get("port"), en.get("port")))


def main():
    if len(sys.argv) != 3:
        print("usage: nccl_rules.py SOURCE EXPORT", file=sys.stderr)
        return 2
    errors = []
    exp = ET.parse(sys.argv[2]).getroot()
    rules(exp, errors.append)
    try:
        src = ET.parse(sys.argv[1]).getroot()
    except ET.ParseError:
        src = None
    if src is not None and src.tag == "system":
        kept(src, exp, errors.append)
    for e in errors[:5]:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
