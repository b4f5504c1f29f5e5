# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 14 on topologies QEMU cannot make, from railbind_fakebus.ko
(tests/vm/fakebus): emulated PCI host bridges the kernel scans, numbers and
adds as real ones.

p2p: five host bridges in domains 0x10000-0x10004 (past 16 bits), on and
off p2pdma's whitelist, ACS on switch ports, a multifunction GPU+NIC, a GPU
whose BAR cannot be assigned. The verdicts are checked against what the
layout implies (worked out by hand below) and, pair by pair, against
p2pdma.c's own code (railbind_p2pref.ko) when it is built.

scale: 8 GPUs behind switches with 16 NIC PFs, then the same PFs with 128
VFs each (2048 VFs, created by the kernel's SR-IOV code): snapshot size and
the cost of one render, measured against reading the same snapshot again.
Uses guest.py's TAP and helpers, passed in as `g`."""
import json
import os
import re
import threading
import time

import p2p
import stress
from modsys import delete_module, finit_module

FB = "railbind_fakebus"
ACS_REDIR = "0x000c"  # RR|CR


def fb_ko(top):
    return os.path.join(top, "build", "vm", os.uname().release, "fakebus", FB + ".ko")


def load(top, params):
    return finit_module(fb_ko(top), params)


def unload():
    return delete_module(FB)


def domain_of(pci):
    return pci.rsplit(":", 2)[0]


def devs_in(recs, dom):
    return [d for t, d in recs if t == "dev" and domain_of(d["pci"]) == dom]


def depth(d):
    return 0 if d["chain"] == "-" else d["chain"].count(",") + 1


def wait_domains(g, doms, timeout=120):
    """A snapshot once every function of the layout is in it."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        recs = g.parse(g.snapshot())
        if all(devs_in(recs, dom) for dom in doms):
            return recs
        time.sleep(0.5)
    return g.parse(g.snapshot())


def layout_p2p(recs):
    """The functions of layout=p2p by their place in it (see railbind_fakebus.c)."""
    a = devs_in(recs, "10000")
    devs = {d["pci"]: d for t, d in recs if t == "dev"}
    gpus = [d for d in a if d["kind"] == "gpu"]
    nics = [d for d in a if d["kind"] == "nic"]
    sw_nics = sorted((d for d in nics if depth(d) == 3), key=lambda d: d["pci"])
    mf_nic = next(d for d in nics if depth(d) == 1)
    mf_gpu = next(d for d in gpus if d["parent"] == mf_nic["parent"])
    one = {}
    for dom in ("10001", "10002", "10003", "10004"):
        for d in devs_in(recs, dom):
            one.setdefault((dom, d["kind"]), d)
    return {
        "a0": next(d for d in gpus if depth(d) == 3),
        "a1": next(d for d in sw_nics if devs[d["parent"]]["acs_ctl"] == ACS_REDIR),
        "a2": next(d for d in sw_nics if devs[d["parent"]]["acs_ctl"] != ACS_REDIR),
        "mfg": mf_gpu, "mfn": mf_nic,
        "lone": [d for d in gpus if depth(d) == 1 and d is not mf_gpu],
        "b0": one[("10001", "nic")], "c0": one[("10002", "gpu")], "c1": one[("10002", "nic")],
        "d0": one[("10003", "gpu")], "e0": one[("10004", "gpu")], "e1": one[("10004", "nic")],
    }


# (gpu, nic): what p2pdma.c must say, derived from the layout by hand.
EXPECTED = [
    ("a0", "a1", {"distance": "4", "redirected": "1", "map": "host"},
     "switch ports, ACS RR|CR on the NIC's: redirected through whitelisted host A"),
    ("a0", "a2", {"distance": "4", "redirected": "0", "map": "bus"},
     "switch ports without ACS: peer-to-peer below the switch"),
    ("mfg", "mfn", {"distance": "2", "redirected": "1", "map": "host"},
     "functions 0 and 1 below a root port with ACS RR|CR"),
    ("a0", "b0", {"distance": "6", "map": "host"},
     "two whitelisted host bridges (8086:09a2)"),
    ("c0", "c1", {"map": "host"}, "8086:3c00 (same host bridge only), same host bridge"),
    ("c0", "a2", {"map": "none"}, "8086:3c00 across host bridges"),
    ("d0", "a2", {"map": "host"}, "no 00.0: the first function, root port 8086:2031 at 02.0"),
    ("e0", "e1", {"distance": "3", "map": "none"},
     "first function an endpoint at 01.0: nothing to whitelist"),
]


def scenario_p2p(g, top, mod):
    if not os.path.exists(fb_ko(top)):
        g.skip("fake host bridges", "railbind_fakebus.ko not built")
        return
    ref = os.path.join(top, "build", "vm", os.uname().release, "p2pref",
                       "railbind_p2pref.ko")
    has_ref = os.path.exists(ref) and g.run(["insmod", ref]).returncode == 0
    try:
        layout_checks(g, top, mod, has_ref)
    finally:
        if has_ref:
            g.run(["rmmod", "railbind_p2pref"])


def layout_checks(g, top, mod, has_ref):
    r = load(top, "layout=p2p")
    if not g.tap(r == 0, "railbind_fakebus layout=p2p loads (5 host bridges)",
                 os.strerror(r) if r else None):
        return
    try:
        doms = ["10000", "10001", "10002", "10003", "10004"]
        recs = wait_domains(g, doms)
        hbs = {h["name"]: h for t, h in recs if t == "hostbridge"}
        want = {"pci%s:00" % d: d for d in doms}
        ok = all(n in hbs and hbs[n]["domain"] == d for n, d in want.items())
        names = [d["pci"] for d in devs_in(recs, "10004")]
        g.tap(ok and names and all(re.match(r"^10004:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$", n)
                                   for n in names),
              "domains 0x10000-0x10004 in full: hostbridge pci1000N:00 domain=1000N, "
              "dev pci=1000N:bb:dd.f", [hbs.get(n) for n in want] + names)
        roots = {d: hbs.get("pci%s:00" % d, {}).get("p2p_root") for d in doms}
        g.tap(roots == {"10000": "0x8086:0x09a2", "10001": "0x8086:0x09a2",
                        "10002": "0x8086:0x3c00", "10003": "0x8086:0x2031",
                        "10004": "-"},
              "p2p_root is the function p2pdma.c matches: 00.0, else a root port first "
              "on the bus, else none", roots)
        try:
            f = layout_p2p(recs)
        except (StopIteration, KeyError) as e:
            g.tap(False, "the layout=p2p functions are all in the snapshot", repr(e))
            return
        pairs = {(p["gpu"], p["nic"]): p for t, p in recs if t == "pair"}
        bad = []
        for gk, nk, want_kv, why in EXPECTED:
            p = pairs.get((f[gk]["pci"], f[nk]["pci"]), {})
            for k, v in want_kv.items():
                if p.get(k) != v:
                    bad.append("%s-%s (%s): %s=%s, want %s" % (gk, nk, why, k, p.get(k), v))
        acs = pairs.get((f["a0"]["pci"], f["a1"]["pci"]), {}).get("acs_port")
        if acs != f["a1"]["parent"]:
            bad.append("a0-a1 acs_port %s, want the NIC's downstream port %s"
                       % (acs, f["a1"]["parent"]))
        g.tap(not bad, "%d pairs worked out by hand from the layout (ACS, whitelist, "
              "same-host rule, root port at any devfn, no root function)" % len(EXPECTED),
              "\n".join(bad))
        if has_ref:
            bad, n = p2p.mismatches(recs)
            g.tap(n and not bad, "railbind's map and distance equal p2pdma.c's for all %d "
                  "GPU x NIC pairs across the five fake host bridges and QEMU's" % n,
                  "\n".join(bad))
        unassigned_bar(g, top, mod, f)
    finally:
        r = unload()
        g.tap(r == 0, "railbind_fakebus unloads (its host bridges removed)",
              os.strerror(r) if r else None)


def unassigned_bar(g, top, mod, f):
    """A GPU whose BAR could not be assigned is credited with nothing: a
    mapping at address 0 (where 0.1.0 put such a BAR) names no GPU."""
    big = None
    for d in f["lone"]:
        with open("/sys/bus/pci/devices/%s/resource" % d["pci"]) as fh:
            start = int(fh.readline().split()[0], 16)
        if start == 0:
            big = d
    prov = os.path.join(top, "build", "vm", os.uname().release, "provider",
                        "railbind_testprov.ko")
    if not big or not os.path.exists(prov):
        g.skip("unassigned BAR not credited", "no unassigned GPU BAR or no test provider")
        return
    mod.unload()
    mod.load(g.topology.KMOD_PARAMS + " peer_provider=railbind_testprov")
    g.run(["insmod", prov])
    try:
        err = (g.prov_cmd("nvmap 40 %s %s 2 0" % (big["pci"], f["a2"]["pci"])) or
               g.prov_cmd("nvmap 41 %s %s 2 0" % (f["a0"]["pci"], f["a2"]["pci"])))
        _, rows, _ = g.peer_view()
        want = {("-", f["a2"]["pci"], "nvidia"), (f["a0"]["pci"], f["a2"]["pci"], "nvidia")}
        g.tap(not err and set(rows) == want,
              "a mapping on %s, whose 8 GB BAR has no place in its window, names no GPU; "
              "one on %s's assigned BAR names it" % (big["pci"], f["a0"]["pci"]),
              "%s %s" % (err, sorted(rows)))
    finally:
        delete_module("railbind_testprov")
        mod.unload()
        mod.load()


def timed_read():
    t = time.perf_counter()
    fd = os.open("/dev/railbind", os.O_RDONLY)
    chunks = []
    while True:
        b = os.read(fd, 1 << 20)
        if not b:
            break
        chunks.append(b)
    os.close(fd)
    return time.perf_counter() - t, b"".join(chunks)


def median(v):
    v = sorted(v)
    return v[len(v) // 2]


def measure(g, port, rounds=5):
    """Median wall time of a read that renders (the ACS control of a fake
    port toggled, so the refresh finds a change) and of the next read of
    the same snapshot, and the snapshot itself."""
    renders, copies, data = [], [], b""
    for i in range(rounds):
        g.run(["setpci", "-s", port, "ECAP0d+6.w=%04x" % (i & 1)])
        time.sleep(1.2)  # refresh_ms
        tr, data = timed_read()
        tc, _ = timed_read()
        renders.append(tr)
        copies.append(tc)
    g.run(["setpci", "-s", port, "ECAP0d+6.w=0000"])
    return median(renders), median(copies), data


def scenario_scale(g, top, mod):
    if not os.path.exists(fb_ko(top)):
        g.skip("scale", "railbind_fakebus.ko not built")
        return
    scale(g, top, mod)


def scale(g, top, mod):
    """Without extra_classes QEMU's virtio GPUs are not GPUs: the GPUs are
    the 8 fake ones; the NICs the fake ones and QEMU's two e1000e."""
    mod.unload()
    mod.load("")
    base = {d["pci"] for t, d in g.parse(g.snapshot()) if t == "dev"}
    qnics = sum(1 for t, d in g.parse(g.snapshot()) if t == "dev" and d["kind"] == "nic")
    results = []
    try:
        for nvfs in (0, 128):
            stop, lat, errs = threading.Event(), [], []

            def reader():
                while not stop.is_set():
                    try:
                        t, data = timed_read()
                        lat.append(t)
                        if not stress.snapshot_whole(data):
                            errs.append(data[-80:])
                    except OSError as e:
                        errs.append(str(e))

            readers = [threading.Thread(target=reader) for _ in range(2)]
            for t in readers:
                t.start()
            t0 = time.time()
            r = load(top, "layout=rails vfs=%d" % nvfs)
            load_s = time.time() - t0
            want_nics = qnics + 16 * (1 + nvfs)
            deadline = time.time() + (300 if r == 0 else 0)
            recs = []
            while time.time() < deadline:
                recs = g.parse(g.snapshot())
                if sum(1 for t, d in recs if t == "dev" and d["kind"] == "nic") >= want_nics:
                    break
                time.sleep(1)
            stop.set()
            for t in readers:
                t.join()
            devs = [d for t, d in recs if t == "dev"]
            gpus = sum(1 for d in devs if d["kind"] == "gpu")
            nics = sum(1 for d in devs if d["kind"] == "nic")
            vfrecs = [d for d in devs if d["kind"] == "nic" and d.get("physfn", "-") != "-"]
            npairs = sum(1 for t, p in recs if t == "pair")
            label = "8 GPUs x %d NICs (%s)" % (nics, "16 PFs, %d VFs" % len(vfrecs)
                                               if nvfs else "16 PFs")
            g.tap(r == 0 and gpus == 8 and nics == want_nics and npairs == gpus * nics and
                  len(vfrecs) == 16 * nvfs and
                  recs[-1][1].get("records") == str(len(recs)),
                  "%s: every function and pair in one whole snapshot" % label,
                  "load %s, %d GPUs, %d NICs, %d VF records, %d pairs"
                  % (os.strerror(r) if r else "ok", gpus, nics, len(vfrecs), npairs))
            g.tap(not errs, "%s: readers got whole snapshots while the functions came "
                  "(%d reads, slowest %.2f s)" % (label, len(lat), max(lat or [0])), errs[:3])
            port = next((d["pci"] for d in devs if domain_of(d["pci"]) == "10000" and
                         d["type"] == "downstream"), None)
            if r or not port:
                break
            render, copy, data = measure(g, port)
            fds = shared_check(g, len(data), label)
            results.append((label, len(data), data.count(b"\n"), render, copy, load_s, fds))
            t0 = time.time()
            r = unload()
            unload_s = time.time() - t0
            deadline = time.time() + 300
            while time.time() < deadline:
                now = {d["pci"] for t, d in g.parse(g.snapshot()) if t == "dev"}
                if now == base:
                    break
                time.sleep(1)
            g.tap(r == 0 and now == base, "%s: unloading the fake bus leaves the devices "
                  "tracked before (%.0f s)" % (label, unload_s), sorted(now ^ base)[:5])
    finally:
        unload()
        mod.unload()
        mod.load()
    for label, size, lines, render, copy, load_s, fds in results:
        print("# scale: %s: snapshot %d bytes, %d records; a read that renders %.1f ms, "
              "a read of the same snapshot %.1f ms (render = %.1f ms, %.1fx a plain read; "
              "medians of 5, TCG); functions added in %.0f s; %s"
              % (label, size, lines, render * 1e3, copy * 1e3, (render - copy) * 1e3,
                 render / copy if copy else 0, load_s, fds), flush=True)


def vmalloc_kb():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("VmallocUsed:"):
                return int(line.split()[1])
    return 0


def shared_check(g, size, label, n=100):
    """n descriptors, each having read the whole snapshot, hold one copy of
    it between them (0.1.0 kept one per descriptor)."""
    v0 = vmalloc_kb()
    fds = []
    try:
        for _ in range(n):
            fd = os.open("/dev/railbind", os.O_RDONLY)
            fds.append(fd)
            while os.read(fd, 1 << 20):
                pass
        grown = vmalloc_kb() - v0
    finally:
        for fd in fds:
            os.close(fd)
    g.tap(grown * 1024 < size + n * 64 * 1024,
          "%s: %d descriptors that read the %d-byte snapshot grew vmalloc by %d kB, not "
          "%d x its size" % (label, n, size, grown, n), grown)
    return "%d open descriptors +%d kB vmalloc" % (n, grown)


FB_PARAMS = "/sys/module/%s/parameters/" % FB


def fb_param(name, value):
    """Set one of railbind_fakebus's run-time parameters (reset_pf and
    vfs_on return once their PFs' VFs are gone and back)."""
    with open(FB_PARAMS + name, "w") as f:
        f.write(str(value))


def fb_read(name):
    with open(FB_PARAMS + name) as f:
        return int(f.read())


def wait_for(cond, timeout=60):
    deadline = time.time() + timeout
    while not cond():
        if time.time() > deadline:
            return False
        time.sleep(0.02)
    return True


def fb_reset(i):
    """Starts the Nth PF's SR-IOV reset; returns a function that waits for
    it to end (False: it did not in a minute)."""
    before = fb_read("resets_done")
    fb_param("reset_pf", i)
    return lambda: wait_for(lambda: fb_read("resets_done") > before)


def fake_devs(recs):
    return [d for t, d in recs if t == "dev" and domain_of(d["pci"]) == "10000"]


def scenario_sriov(g, top, mod):
    if not os.path.exists(fb_ko(top)):
        g.skip("SR-IOV removal from a PF's own path", "railbind_fakebus.ko not built")
        return
    r = load(top, "layout=rails vfs=2")
    if not g.tap(r == 0, "railbind_fakebus layout=rails vfs=2 loads (16 PFs, 32 VFs)",
                 os.strerror(r) if r else None):
        return
    try:
        sriov_reset(g, mod)
        snap_memory(g, mod)
    finally:
        for name, value in (("del_delay_ms", 0), ("rescan_hold", 0)):
            try:
                fb_param(name, value)
            except OSError:
                pass
        mod.unload()
        r = unload()
        mod.load()
        g.tap(r == 0, "railbind_fakebus unloads after the SR-IOV resets",
              os.strerror(r) if r else None)


def vf_problems(devs, where):
    """VF records naming no PF of the snapshot, or one function twice."""
    pfs = {d["pci"] for d in devs if d.get("physfn", "-") == "-"}
    seen, bad = set(), []
    for d in devs:
        if d.get("physfn", "-") != "-" and d["physfn"] not in pfs:
            bad.append("%s: %s physfn=%s names no PF" % (where, d["pci"], d["physfn"]))
        if d["pci"] in seen:
            bad.append("%s: %s tracked twice" % (where, d["pci"]))
        seen.add(d["pci"])
    return bad


def sriov_reset(g, mod, loads=2, hold_ms=2000):
    """A PF's driver disabling SR-IOV from its remove or reset path holds
    the PF's device lock, not the rescan lock. Here a rescan elsewhere
    holds the rescan lock while railbind loads, the first VF's removal is
    notified and held 2 s (still on the bus list), and then the rescan
    lock goes: railbind 0.1.0, which registered its notifier and then took
    the rescan lock for its walk, met that VF after its removal was
    notified and tracked it for as long as it stayed loaded (reading its
    PF through a pointer the VF no longer held)."""
    mod.unload()
    fb_param("del_delay_ms", hold_ms)
    bad, errs = [], []
    for i in range(loads):
        fb_param("rescan_hold", 1)
        if not wait_for(lambda: fb_read("rescan_hold") == 1):
            errs.append("load %d: the rescan lock was not taken" % i)
            break
        loaded = []
        t = threading.Thread(target=lambda: loaded.append(mod.load()))
        t.start()
        # In its init by now, its notifier registered (0.1.0: waiting for
        # the rescan lock).
        wait_for(lambda: os.path.exists("/sys/module/railbind/initstate"))
        time.sleep(1.0)
        dels = fb_read("vf_dels")
        reset = fb_reset(i)
        came = wait_for(lambda: fb_read("vf_dels") != dels)
        fb_param("rescan_hold", 0)
        t.join()
        if not came or not reset() or loaded[0].returncode:
            errs.append("load %d: %s, VF removal %s, the reset %s"
                        % (i, loaded[0].stdout, came, "timed out"))
            break
        bad += vf_problems(fake_devs(g.parse(g.snapshot())), "load %d" % i)
        # And with railbind loaded: the same reset, removals not held.
        fb_param("del_delay_ms", 0)
        fb_reset(i)()
        fb_param("del_delay_ms", hold_ms)
        data = g.snapshot()
        if not stress.snapshot_whole(data.encode()):
            errs.append("load %d: a torn snapshot: %r" % (i, data[-80:]))
        bad += vf_problems(fake_devs(g.parse(data)), "after load %d" % i)
        mod.unload()
    fb_param("rescan_hold", 0)
    fb_param("del_delay_ms", 0)
    mod.load()
    nvf = sum(1 for d in fake_devs(g.parse(g.snapshot())) if d.get("physfn", "-") != "-")
    fb_param("vfs_on", 0)
    devs = fake_devs(g.parse(g.snapshot()))
    bad += ["with every VF off: %s tracked" % d["pci"] for d in devs
            if d.get("physfn", "-") != "-"]
    g.tap(not errs and nvf == 32,
          "%d loads of railbind during a PF's SR-IOV reset, resets after: whole snapshots, "
          "the 32 VFs back" % loads, errs + ["%d VF records" % nvf])
    g.tap(not bad, "no VF removed during a load is tracked after, none twice, each names its "
          "PF (recorded when the VF came)", bad[:10])


# What the helper below does in its own memory cgroup: re-render N times
# (an ACS bit of a fake port toggled; refresh_ms=1), keeping each
# descriptor open, attached to its generation.
SNAP_HELPER = r'''
import errno, json, os, subprocess, sys
cg, port, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(os.path.join(cg, "cgroup.procs"), "w") as f:
    f.write(str(os.getpid()))
def kernel():
    with open(os.path.join(cg, "memory.stat")) as f:
        return dict(l.split() for l in f)["kernel"]
def whole(fd):
    chunks = []
    while True:
        b = os.read(fd, 1 << 20)
        if not b:
            return b"".join(chunks)
        chunks.append(b)
def toggle(i):
    subprocess.run(["setpci", "-s", port, "ECAP0d+6.w=%04x" % (i & 1)], check=True)
toggle(1)
fd = os.open("/dev/railbind", os.O_RDONLY)
size = len(whole(fd))
os.close(fd)
k0 = int(kernel())
fds = []
for i in range(n):
    toggle(i)
    fd = os.open("/dev/railbind", os.O_RDONLY)
    whole(fd)
    fds.append(fd)
k1 = int(kernel())
def pread(fd):
    try:
        return len(os.pread(fd, 16, 1))
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
res = {"size": size, "grown": k1 - k0, "first": pread(fds[0]), "last": pread(fds[-1]),
       "again": len(os.pread(fds[0], 16, 0))}
for fd in fds:
    os.close(fd)
toggle(0)
print(json.dumps(res))
'''


def snap_memory(g, mod, n=32):
    """Descriptors held across re-renders pin at most the current
    snapshot and 4 superseded ones (kmod/railbind_snap.c), measured as the
    kernel memory charged to the renderer's memory cgroup; railbind 0.1.0
    kept every generation a descriptor had attached."""
    cg_root = "/tmp/rbcg"
    os.makedirs(cg_root, exist_ok=True)
    if g.run(["mount", "-t", "cgroup2", "none", cg_root]).returncode:
        g.skip("snapshot memory bounded", "no cgroup2 in the guest")
        return
    cg = os.path.join(cg_root, "railbind-snap")
    try:
        with open(os.path.join(cg_root, "cgroup.subtree_control"), "w") as f:
            f.write("+memory")
        os.makedirs(cg, exist_ok=True)
        mod.unload()
        mod.load(g.topology.KMOD_PARAMS + " refresh_ms=1")
        devs = fake_devs(g.parse(g.snapshot()))
        port = next((d["pci"] for d in devs if d["type"] == "downstream"), None)
        r = g.run(["/usr/bin/python3", "-c", SNAP_HELPER, cg, str(port), str(n)])
        try:
            res = json.loads(r.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            g.tap(False, "snapshot memory helper ran", r.stdout)
            return
        bound = 6 * res["size"] + n * 32768
        g.tap(res["grown"] < bound,
              "%d descriptors held across %d re-renders of a %d-byte snapshot: kernel memory "
              "of the renderer's cgroup +%d bytes (bound: 6 snapshots + 32 kB a descriptor, %d)"
              % (n, n, res["size"], res["grown"], bound), res)
        g.tap(res["first"] == "ESTALE" and res["last"] == 16 and res["again"] == 16,
              "the oldest descriptor's snapshot is gone (read on: ESTALE, from 0: the current "
              "one); the newest reads on", res)
    finally:
        g.run(["rmdir", cg])
        try:
            with open(os.path.join(cg_root, "cgroup.subtree_control"), "w") as f:
                f.write("-memory")
        except OSError:
            pass
        g.run(["umount", cg_root])
        mod.unload()
        mod.load()
