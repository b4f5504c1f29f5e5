# SPDX-License-Identifier: GPL-2.0-or-later
"""The emulated topology: one table read by the host (to build QEMU's
command line) and by the guest (to know what the snapshot must show)."""

# Two NUMA nodes, one CPU each. pcie.0 has no _PXM (numa -1); the
# pxb-pcie root complex sits on node 1 at bus 0x40.
NUMA_CPUS = {0: "0", 1: "1"}
PXB_BUS = 0x40

# Each endpoint: (qemu id, role, driver, port path from the root complex).
# A port path names QEMU devices from the root port down; the guest checks
# the snapshot's chain against the port *types* along it.
PORTS = [
    # id, driver, parent bus, extra properties
    ("rp1", "pcie-root-port", "pcie.0", "chassis=1,slot=1,addr=0x2"),
    ("rp2", "pcie-root-port", "pcie.0", "chassis=2,slot=2,addr=0x3,x-speed=8,x-width=4"),
    ("up1", "x3130-upstream", "rp2", ""),
    ("dn1", "xio3130-downstream", "up1", "chassis=3,slot=0"),
    ("dn2", "xio3130-downstream", "up1", "chassis=4,slot=1"),
    ("dn3", "xio3130-downstream", "up1", "chassis=9,slot=2"),
    ("rp3", "pcie-root-port", "pcie.0", "chassis=5,slot=5,addr=0x5"),
    ("pxb1", "pxb-pcie", "pcie.0", "bus_nr=%d,numa_node=1,addr=0x8" % PXB_BUS),
    ("rp4", "pcie-root-port", "pxb1", "chassis=6,slot=6,addr=0x0"),
    ("rp5", "pcie-root-port", "pxb1", "chassis=7,slot=7,addr=0x1"),
    ("rp6", "pcie-root-port", "pxb1", "chassis=8,slot=8,addr=0x2"),
]

GPU = ("virtio-gpu-pci", "")
NIC = ("e1000e", "romfile=")

ENDPOINTS = [
    # id, role, bus
    ("gpu0", "gpu", "rp1"),
    ("gpu1", "gpu", "dn1"),
    ("nic0", "nic", "dn2"),
    ("gpu2", "gpu", "rp4"),
    ("nic1", "nic", "rp5"),
]

# Other devices, tracked by no one: (qemu id, driver, bus, properties).
# The i6300esb's driver registers a misc device (the watchdog) from probe,
# which a PCI rescan runs under its lock (tests/vm/rescan.py).
OTHERS = [
    ("wdt0", "i6300esb", "pcie.0", "addr=0x9"),
]

# Empty ports that take a hotplugged NIC: native pciehp, ACPI, and a switch
# port next to gpu1 (a rail closer to it than nic0 is not possible, one as
# close is).
HOTPLUG = {"pciehp": "rp6", "acpi": "rp3", "switch": "dn3"}

PORT_TYPE = {
    "pcie-root-port": "root_port",
    "x3130-upstream": "upstream",
    "xio3130-downstream": "downstream",
}

# What the kernel module must be told to treat virtio-gpu as a GPU.
KMOD_PARAMS = "extra_classes=gpu=1af4:0380"


def parent_of(bus):
    for pid, drv, parent, _ in PORTS:
        if pid == bus:
            return drv, parent
    return None, None


def chain_types(bus):
    """Port types from the root port down to the endpoint's bus, and the
    root complex ("pcie.0" or "pxb1")."""
    types = []
    while True:
        drv, parent = parent_of(bus)
        if drv is None or drv == "pxb-pcie":
            return list(reversed(types)), bus
        types.append(PORT_TYPE[drv])
        bus = parent


def ports_of(bus):
    """QEMU ids of the ports from the root port down."""
    ids = []
    while True:
        drv, parent = parent_of(bus)
        if drv is None or drv == "pxb-pcie":
            return list(reversed(ids))
        ids.append(bus)
        bus = parent


def qemu_devices():
    args = []
    for pid, drv, parent, extra in PORTS:
        opt = "%s,id=%s,bus=%s" % (drv, pid, parent)
        if extra:
            opt += "," + extra
        args += ["-device", opt]
    for eid, role, bus in ENDPOINTS:
        drv, extra = GPU if role == "gpu" else NIC
        opt = "%s,id=%s,bus=%s" % (drv, eid, bus)
        if extra:
            opt += "," + extra
        args += ["-device", opt]
    for oid, drv, bus, extra in OTHERS:
        args += ["-device", "%s,id=%s,bus=%s,%s" % (drv, oid, bus, extra)]
    return args
