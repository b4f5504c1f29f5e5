# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 14: railbind's P2P verdict (pair records: map and distance) must
be the kernel's own. The reference is railbind_p2pref.ko: p2pdma.c's
calc_map_type_and_dist() and helpers, copied unchanged out of the Debian
source package of the kernel under test (tests/vm/p2pref). Every GPU x NIC
pair of the QEMU topology is compared here; fakebus.py compares those of
five emulated host bridges with ACS, whitelisted hosts and multifunction
devices, which QEMU cannot make. Uses guest.py's TAP and helpers, passed
in as `g`."""
import os

REF = "/dev/railbind_p2pref"


def verdict(a, b):
    fd = os.open(REF, os.O_RDWR)
    try:
        os.write(fd, ("%s %s" % (a, b)).encode())
        text = os.pread(fd, 128, 0).decode()
    finally:
        os.close(fd)
    return dict(w.split("=", 1) for w in text.split())


def mismatches(recs):
    """Pairs where railbind and the kernel disagree, and how many compared."""
    bad, n = [], 0
    for p in (kv for t, kv in recs if t == "pair"):
        ref = verdict(p["gpu"], p["nic"])
        n += 1
        if (p["map"], p["distance"]) != (ref["map"], ref["distance"]):
            bad.append("%s-%s: railbind map=%s distance=%s, kernel map=%s distance=%s"
                       % (p["gpu"], p["nic"], p["map"], p["distance"], ref["map"],
                          ref["distance"]))
    return bad, n


def scenario(g, top, ep):
    ko = os.path.join(top, "build", "vm", os.uname().release, "p2pref", "railbind_p2pref.ko")
    if not ep or not os.path.exists(ko):
        g.skip("P2P verdict against p2pdma.c", "no reference module (linux-source not installed)")
        return
    try:
        with open(os.path.join(os.path.dirname(ko), "versions")) as f:
            print("# p2p reference: " + f.read().strip(), flush=True)
    except OSError:
        pass
    r = g.run(["insmod", ko])
    if not g.tap(r.returncode == 0, "the p2pdma.c reference module loads", r.stdout):
        return
    try:
        recs = g.parse(g.snapshot())
        bad, n = mismatches(recs)
        g.tap(n and not bad, "railbind's map and distance equal p2pdma.c's for all %d "
              "GPU x NIC pairs of the QEMU topology" % n, "\n".join(bad))
    finally:
        g.run(["rmmod", "railbind_p2pref"])
