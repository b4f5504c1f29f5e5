#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Guest side of the QEMU tests: runs as PID 1's child in the chroot of the
host root and checks railbind.ko against the topology QEMU was given
(tests/vm/topology.py) and against the kernel's own sysfs. Prints TAP."""
import argparse
import errno
import glob
import os
import re
import select
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from modsys import delete_module, finit_module  # noqa: E402
import fabric  # noqa: E402
import fakebus  # noqa: E402
import p2p  # noqa: E402
import rescan  # noqa: E402
import stress  # noqa: E402
import topology  # noqa: E402

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
DEV = "/dev/railbind"
SYSGEN = "/sys/class/misc/railbind/generation"
count = 0
failures = 0


def tap(cond, desc, diag=None):
    global count, failures
    count += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", count, desc), flush=True)
    if not cond:
        failures += 1
        if diag:
            for line in str(diag).splitlines()[:20]:
                print("# " + line, flush=True)
    return cond


def skip(desc, why):
    global count
    count += 1
    print("ok %d # SKIP %s (%s)" % (count, why, desc), flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, **kw)


def parse(text):
    recs = []
    for line in text.split("\n")[:-1]:
        words = line.split(" ")
        kv = {}
        for w in words[1:]:
            k, v = w.split("=", 1)
            kv[k] = v
        recs.append((words[0], kv))
    return recs


def snapshot(unpriv=False):
    if unpriv:
        r = run(NOBODY + ["cat", DEV])
        if r.returncode:
            raise RuntimeError("unprivileged read failed: " + r.stdout)
        return r.stdout
    with open(DEV) as f:
        return f.read()


def of(recs, rtype):
    return [kv for t, kv in recs if t == rtype]


def topo_part(text):
    """The records every reader shares: all but the header, peer, peerstat
    and end lines."""
    return [line for line in text.splitlines()[1:]
            if line.split(" ", 1)[0] in ("hostbridge", "dev", "pair")]


def sysattr(bdf, name):
    try:
        with open("/sys/bus/pci/devices/%s/%s" % (bdf, name)) as f:
            return f.read().strip()
    except OSError:
        return None


class Module:
    """railbind.ko (or another module) loaded and unloaded by system call:
    no insmod/rmmod to exec per try, which under TCG cost more than the
    cycle itself. Results look like run()'s."""

    def __init__(self, ko):
        self.ko = ko

    @staticmethod
    def result(err, what):
        return subprocess.CompletedProcess(what, err, "%s: %s" % (what, os.strerror(err))
                                           if err else "")

    def load(self, params=topology.KMOD_PARAMS):
        return self.result(finit_module(self.ko, params), "load " + self.ko)

    def unload(self, name="railbind", tries=1000):
        # Open descriptors pin the module: retry while readers come and go.
        for _ in range(tries):
            err = delete_module(name)
            if err != errno.EAGAIN:
                break
            time.sleep(0.002)
        return self.result(err, "unload " + name)


def chain_types(devs, d):
    if d["chain"] == "-":
        return []
    return [devs[b]["type"] for b in d["chain"].split(",")]


def hb_name(root):
    return "pci0000:00" if root == "pcie.0" else "pci0000:%02x" % topology.PXB_BUS


def find_endpoints(recs):
    """Snapshot dev record of each QEMU endpoint, matched by root complex,
    role and port types along its chain (unique in topology.py)."""
    devs = {d["pci"]: d for d in of(recs, "dev")}
    found = {}
    for eid, role, bus in topology.ENDPOINTS:
        want, root = topology.chain_types(bus)
        hits = [d for d in devs.values()
                if d["kind"] == role and d["hostbridge"] == hb_name(root)
                and chain_types(devs, d) == want]
        if eid == "gpu1" or eid == "nic0":
            # gpu1 and nic0 share the switch: tell them apart by role only.
            hits = [d for d in hits if d["kind"] == role]
        found[eid] = hits
    return devs, found


def scenario_topology(mod, ko_label):
    r = mod.load()
    tap(r.returncode == 0, "insmod railbind.ko (%s)" % ko_label, r.stdout)
    st = os.stat(DEV) if os.path.exists(DEV) else None
    tap(st is not None and (st.st_mode & 0o777) == 0o444,
        "/dev/railbind exists, mode 0444", st and oct(st.st_mode))
    text = snapshot()
    for line in text.splitlines():
        print("## " + line, flush=True)  # console log only, for people
    recs = parse(text)
    head = recs[0][1] if recs and recs[0][0] == "railbind" else {}
    tap(head.get("format") == "1", "snapshot header railbind format=1", text[:200])
    tap(recs and recs[-1][0] == "end" and recs[-1][1].get("records") == str(len(recs)),
        "snapshot ends with end records=<count>", text[-200:])
    nobody = snapshot(unpriv=True)
    tap(topo_part(text) == topo_part(nobody),
        "an unprivileged reader sees the same topology (hostbridge, dev, pair records)")
    nrecs = parse(nobody)
    tap(head.get("view") == "full" and nrecs[0][1].get("view") == "restricted" and
        not of(nrecs, "peer") and len(of(nrecs, "peerstat")) == 1 and
        nrecs[-1][1].get("records") == str(len(nrecs)),
        "root's view is full; nobody's is restricted: no peer records, node-wide peerstat, "
        "whole", nobody[:200] + nobody[-300:])

    # Short reads at odd sizes give the same bytes.
    chunks = []
    with open(DEV, "rb", buffering=0) as f:
        while True:
            b = f.read(7)
            if not b:
                break
            chunks.append(b)
    tap(b"".join(chunks).decode() == text, "7-byte reads reassemble the snapshot")

    with open(SYSGEN) as f:
        sysgen = f.read().strip()
    tap(sysgen == head.get("generation"), "sysfs generation matches the header",
        "%s vs %s" % (sysgen, head.get("generation")))

    devs, found = find_endpoints(recs)
    roles = [d["kind"] for d in devs.values()]
    want_gpus = sum(1 for e in topology.ENDPOINTS if e[1] == "gpu")
    want_nics = sum(1 for e in topology.ENDPOINTS if e[1] == "nic")
    tap(roles.count("gpu") == want_gpus and roles.count("nic") == want_nics,
        "%d GPUs and %d NICs tracked" % (want_gpus, want_nics), text)
    ok = all(len(v) == 1 for v in found.values())
    tap(ok, "each QEMU endpoint found once by root complex and switch chain",
        {k: [d["pci"] for d in v] for k, v in found.items()})
    if not ok:
        return None
    ep = {k: v[0] for k, v in found.items()}

    hbs = {h["name"]: h for h in of(recs, "hostbridge")}
    pxb = hb_name("pxb1")
    tap(set(hbs) == {"pci0000:00", pxb}, "two root complexes: pcie.0 and pxb-pcie", hbs)
    tap(hbs.get(pxb, {}).get("numa") == "1", "pxb-pcie root complex on NUMA node 1")

    for eid, role, bus in topology.ENDPOINTS:
        d = ep[eid]
        if topology.chain_types(bus)[1] == "pxb1":
            tap(d["numa"] == "1" and d["cpus"] == topology.NUMA_CPUS[1],
                "%s (%s) on NUMA 1 with its CPUs" % (eid, d["pci"]), d)

    # Every record against the kernel's own sysfs view.
    bad = []
    for bdf, d in devs.items():
        if d["numa"] != sysattr(bdf, "numa_node"):
            bad.append("%s numa %s vs %s" % (bdf, d["numa"], sysattr(bdf, "numa_node")))
        if d["cpus"] != sysattr(bdf, "local_cpulist"):
            bad.append("%s cpus %s vs %s" % (bdf, d["cpus"], sysattr(bdf, "local_cpulist")))
        up = os.path.basename(os.path.dirname(os.path.realpath("/sys/bus/pci/devices/" + bdf)))
        if d["parent"] != (up if re.match(r"^[0-9a-f]{4}:", up) else "-"):
            bad.append("%s parent %s vs %s" % (bdf, d["parent"], up))
        has_grp = os.path.exists("/sys/bus/pci/devices/%s/iommu_group" % bdf)
        if (d["iommu_group"] != "-") != has_grp:
            bad.append("%s iommu_group %s" % (bdf, d["iommu_group"]))
        for key, attr in (("link_speed", "current_link_speed"),
                          ("link_width", "current_link_width"),
                          ("link_speed_cap", "max_link_speed"),
                          ("link_width_cap", "max_link_width")):
            s = sysattr(bdf, attr)
            if s is None or d[key] == "-":
                continue
            s = s.split(" ")[0]
            if key.startswith("link_speed") and s != "Unknown":
                s = "%.1f" % float(s)
            if d[key] != s:
                bad.append("%s %s %s vs sysfs %s" % (bdf, key, d[key], s))
        pos = run(["setpci", "-s", bdf, "ECAP0d.w"])
        if d["type"] in ("root_port", "downstream", "upstream"):
            hasacs = pos.returncode == 0 and pos.stdout.strip() not in ("", "0000")
            if hasacs != (d["acs_cap"] != "-"):
                bad.append("%s acs_cap %s vs setpci %s" % (bdf, d["acs_cap"], pos.stdout))
    tap(not bad, "numa, cpus, parent, links, IOMMU group and ACS agree with sysfs/setpci",
        "\n".join(bad))

    rp = [devs[b] for b in ep["gpu1"]["chain"].split(",")][0]
    tap(rp["link_speed_cap"] == "8.0" and rp["link_width_cap"] == "4",
        "root port given x-speed=8,x-width=4 shows 8.0 GT/s x4", rp)
    roots = [d for d in devs.values() if d["type"] == "root_port"]
    sw = [d for d in devs.values() if d["type"] in ("upstream", "downstream")]
    tap(roots and all(d["acs_cap"] != "-" for d in roots) and sw and
        all(d["acs_cap"] == "-" for d in sw),
        "root ports carry ACS, QEMU's switch ports do not")

    pairs = {(p["gpu"], p["nic"]): p for p in of(recs, "pair")}
    tap(len(pairs) == want_gpus * want_nics, "one pair record per GPU x NIC")
    bad = []
    for g in (e for e in topology.ENDPOINTS if e[1] == "gpu"):
        for n in (e for e in topology.ENDPOINTS if e[1] == "nic"):
            p = pairs.get((ep[g[0]]["pci"], ep[n[0]]["pci"]))
            gp, np_ = topology.ports_of(g[2]), topology.ports_of(n[2])
            common = [a for a, b in zip(gp, np_) if a == b]
            gr, nr = topology.chain_types(g[2])[1], topology.chain_types(n[2])[1]
            if common:
                dist = (len(gp) - len(common) + 1) + (len(np_) - len(common) + 1)
                cbdf = ep[g[0]]["chain"].split(",")[len(common) - 1]
                want = {"distance": str(dist), "common": cbdf, "map": "bus",
                        "redirected": "0"}
            else:
                want = {"distance": str(len(gp) + 1 + len(np_) + 1), "common": "-",
                        "map": "none", "redirected": "0",
                        "same_hostbridge": "1" if gr == nr else "0"}
            for k, v in want.items():
                if p is None or p.get(k) != v:
                    bad.append("%s-%s %s=%s want %s" % (g[0], n[0], k,
                                                        p and p.get(k), v))
    tap(not bad, "pair distance, common bridge and P2P map follow the QEMU topology",
        "\n".join(bad))
    return ep


def scenario_acs(ep):
    rp = ep["gpu1"]["chain"].split(",")[0]
    r = run(["setpci", "-s", rp, "ECAP0d+6.w=000d"])
    back = run(["setpci", "-s", rp, "ECAP0d+6.w"]).stdout.strip()
    tap(r.returncode == 0 and back == "000d", "setpci plants ACS SV|RR|CR on %s" % rp,
        r.stdout + back)
    # Config space is re-read when a reader asks, at most once per
    # refresh_ms (1 s): the change shows within a few seconds, not at once.
    t0 = time.time()
    d = {}
    while time.time() < t0 + 30:
        recs = parse(snapshot(unpriv=True))
        d = {x["pci"]: x for x in of(recs, "dev")}.get(rp, {})
        if d.get("acs_ctl") == "0x" + back:
            break
        time.sleep(0.2)
    tap(d.get("acs_ctl") == "0x" + back and d.get("acs_redirect") == "1" and
        d.get("cfg") == "ok",
        "unprivileged snapshot shows acs_ctl=0x%s acs_redirect=1 on %s (after %.1f s)"
        % (back, rp, time.time() - t0), d)
    pairs = [p for p in of(recs, "pair") if p["gpu"] == ep["gpu1"]["pci"] and
             p["nic"] == ep["nic0"]["pci"]]
    tap(pairs and pairs[0]["redirected"] == "0",
        "ACS above the switch both sit under does not redirect their P2P", pairs)
    run(["setpci", "-s", rp, "ECAP0d+6.w=0000"])
    t0 = time.time()
    while time.time() < t0 + 30:
        d = {x["pci"]: x for x in of(parse(snapshot()), "dev")}.get(rp, {})
        if d.get("acs_ctl") == "0x0000":
            break
        time.sleep(0.2)
    tap(d.get("acs_ctl") == "0x0000" and d.get("acs_redirect") == "0",
        "clearing ACS control shows again", d)


class Uevents:
    def __init__(self):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 15)
        self.sock.bind((0, 1))
        self.sock.settimeout(0.2)

    def gens(self, until):
        """RAILBIND_GENERATION values of railbind uevents seen until then."""
        seen = []
        while time.time() < until:
            try:
                msg = self.sock.recv(65536)
            except socket.timeout:
                if seen:
                    break
                continue
            fields = msg.split(b"\0")
            if not any(f.startswith(b"DEVPATH=") and f.endswith(b"/railbind") for f in fields):
                continue
            for f in fields:
                if f.startswith(b"RAILBIND_GENERATION="):
                    seen.append(int(f.split(b"=", 1)[1]))
        return seen


def reader_loop(stop, errors, pause=0.0):
    while not stop.is_set():
        time.sleep(pause)
        try:
            fd = os.open(DEV, os.O_RDONLY)
        except OSError:
            time.sleep(0.005)
            continue
        try:
            poll = select.poll()
            poll.register(fd, select.POLLIN)
            poll.poll(1)
            data = b""
            while True:
                b = os.read(fd, 1000)
                if not b:
                    break
                data += b
            if not data.startswith(b"railbind ") or not data.endswith(b"\n"):
                errors.append(data[:80])
        except OSError as e:
            errors.append(str(e))
        finally:
            os.close(fd)


def nics_under(recs, hb):
    return {d["pci"] for d in of(recs, "dev") if d["kind"] == "nic" and d["hostbridge"] == hb}


def scenario_hotplug(kind, port, root):
    ue = Uevents()
    hb = hb_name(root)
    fd = os.open(DEV, os.O_RDONLY)
    before = parse(os.pread(fd, 1 << 20, 0).decode())
    gen0 = int(before[0][1]["generation"])
    stop, errors = threading.Event(), []
    t = threading.Thread(target=reader_loop, args=(stop, errors))
    t.start()
    print('@@qmp {"execute":"device_add","arguments":{"driver":"e1000e","id":"hp%s",'
          '"bus":"%s","romfile":""}}' % (kind, port), flush=True)
    p = select.poll()
    p.register(fd, select.POLLIN)
    woke = p.poll(60000)
    after = parse(os.pread(fd, 1 << 20, 0).decode()) if woke else before
    deadline = time.time() + 60
    while time.time() < deadline and nics_under(after, hb) == nics_under(before, hb):
        time.sleep(0.5)
        after = parse(os.pread(fd, 1 << 20, 0).decode())
    gen1 = int(after[0][1]["generation"])
    new = nics_under(after, hb) - nics_under(before, hb)
    tap(bool(woke), "%s add: poll wakes the open descriptor" % kind)
    tap(len(new) == 1 and gen1 > gen0,
        "%s add: generation %d -> %d, new NIC %s under %s" % (kind, gen0, gen1, new, hb))
    seen = ue.gens(time.time() + 10)
    tap(any(g > gen0 for g in seen), "%s add: KOBJ_CHANGE uevent with RAILBIND_GENERATION" % kind,
        seen)
    newd = {d["pci"]: d for d in of(after, "dev")}.get(next(iter(new), None), {})
    tap(newd.get("chain", "").count(",") == 0 and newd.get("root_port") != "-",
        "%s add: the new NIC sits right below its root port" % kind, newd)
    pairs = [q for q in of(after, "pair") if q["nic"] in new]
    tap(len(pairs) == sum(1 for e in topology.ENDPOINTS if e[1] == "gpu"),
        "%s add: pairs for the new NIC" % kind)

    print('@@qmp {"execute":"device_del","arguments":{"id":"hp%s"}}' % kind, flush=True)
    deadline = time.time() + 90
    cur = after
    while time.time() < deadline and new & nics_under(cur, hb):
        time.sleep(0.5)
        cur = parse(os.pread(fd, 1 << 20, 0).decode())
    gen2 = int(cur[0][1]["generation"])
    tap(not (new & nics_under(cur, hb)) and gen2 > gen1,
        "%s remove: NIC gone, generation %d -> %d" % (kind, gen1, gen2))
    seen = ue.gens(time.time() + 10)
    tap(any(g > gen1 for g in seen), "%s remove: uevent seen" % kind, seen)
    stop.set()
    t.join()
    tap(not errors, "%s: concurrent readers always got whole snapshots" % kind, errors[:3])
    os.close(fd)


def dmesg_problems():
    r = run(["dmesg"])
    return [line for line in r.stdout.splitlines()
            if re.search(r"WARNING:|BUG:|Oops|general protection|Call Trace|refcount_t|"
                         r"list_(add|del) corruption|use-after-free", line)]


def mem_counters():
    with open("/proc/meminfo") as f:
        m = dict((l.split(":")[0], int(l.split()[1])) for l in f)
    objs = 0
    with open("/proc/slabinfo") as f:
        for line in f:
            if line.startswith("kmalloc-"):
                objs += int(line.split()[1])
    return objs, m.get("VmallocUsed", 0)


def scenario_cycles(mod, cycles):
    stop, errors = threading.Event(), []
    threads = [threading.Thread(target=reader_loop, args=(stop, errors, 0.005))
               for _ in range(2)]
    for t in threads:
        t.start()
    for _ in range(5):
        mod.unload()
        mod.load()
    o0, v0 = mem_counters()
    failed = []
    for i in range(cycles):
        r = mod.unload()
        if r.returncode:
            failed.append("rmmod %d: %s" % (i, r.stdout))
            break
        r = mod.load()
        if r.returncode:
            failed.append("insmod %d: %s" % (i, r.stdout))
            break
    stop.set()
    for t in threads:
        t.join()
    o1, v1 = mem_counters()
    tap(not failed, "%d unload/load cycles while 2 readers poll" % cycles, failed)
    tap(not [e for e in errors if not isinstance(e, str)],
        "readers never saw a partial snapshot", errors[:3])
    # A leak per open or per load would be thousands of objects here.
    tap(o1 - o0 < 400 and v1 - v0 < 512,
        "no slab/vmalloc growth (kmalloc objects %+d, vmalloc %+d kB)" % (o1 - o0, v1 - v0))


# kmod/ABI.md, "Bounds": 3 hash buckets of at most 16, or 64 pool entries.
IRQOFF_BOUND = 64


def irqoff():
    """The module's longest interrupts-off section: ns (including time TCG's
    host took the virtual CPU away) and entries looked at."""
    vals = []
    for name in ("irqoff_max_ns", "irqoff_max_steps"):
        try:
            with open("/sys/class/misc/railbind/" + name) as f:
                vals.append(int(f.read()))
        except (OSError, ValueError):
            vals.append(None)
    return vals


PROV = "railbind_testprov"
PROV_DEV = "/dev/railbind_testprov"
PAGE = [4096, 65536, 131072]


def prov_cmd(line):
    try:
        fd = os.open(PROV_DEV, os.O_WRONLY)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)
        return None
    except OSError as e:
        return "%s: %s" % (line, e)


def peer_view():
    recs = parse(snapshot())
    rows = {}
    for p in of(recs, "peer"):
        rows[(p["gpu"], p["nic"], p["route"])] = p
    stat = (of(recs, "peerstat") or [{}])[0]
    return recs[0][1], rows, stat


def expect_rows(want, desc):
    """want: {(gpu, nic, route): (maps, bytes[, attachments])}; every other
    row must be absent."""
    head, rows, stat = peer_view()
    bad = []
    for key, val in want.items():
        r = rows.get(key)
        got = r and (int(r["maps"]), int(r["bytes"])) + (
            (int(r["attachments"]),) if len(val) == 3 else ())
        if got != val:
            bad.append("%s: got %s want %s" % (key, got, val))
    for key in rows:
        if key not in want:
            bad.append("unexpected %s: %s" % (key, rows[key]))
    tap(not bad, desc, "\n".join(bad))
    return stat


def scenario_provider(top, label, mod, ep):
    prov = os.path.join(top, "build", "vm", os.uname().release, "provider", PROV + ".ko")
    if not ep or not os.path.exists(prov):
        skip("peer-memory provider scenario", "provider module or endpoints missing")
        return
    g1, g2 = ep["gpu1"]["pci"], ep["gpu2"]["pci"]
    n0, n1 = ep["nic0"]["pci"], ep["nic1"]["pci"]
    mod.unload()
    params = topology.KMOD_PARAMS + " dmabuf_taps=1 peer_provider=" + PROV
    r = mod.load(params)
    head, _, _ = peer_view()
    tap(r.returncode == 0 and head.get("peer_state") == "waiting",
        "railbind waits for an absent provider", r.stdout + str(head))
    r = run(["insmod", prov])
    head, _, stat0 = peer_view()
    tap(r.returncode == 0 and head.get("peer_state") == "armed",
        "module notifier arms the probes when the provider goes live", r.stdout + str(head))

    # Sizes are entries x page size of the commands below, nothing else.
    errs = [prov_cmd(c) for c in ("nvmap 1 %s %s 16 1" % (g1, n0),
                                  "nvmap 2 %s %s 4 0" % (g1, n0),
                                  "nvmap 3 %s %s 8 2" % (g2, n0),
                                  "nvmap 4 %s %s 2 1" % (g2, n1))]
    tap(not any(errs), "provider maps 4 page tables", errs)
    expect_rows({(g1, n0, "nvidia"): (2, 16 * PAGE[1] + 4 * PAGE[0]),
                 (g2, n0, "nvidia"): (1, 8 * PAGE[2]),
                 (g2, n1, "nvidia"): (1, 2 * PAGE[1])},
                "nvidia_p2p_dma_map_pages counted per GPU/NIC pair with exact bytes")
    # What nobody sees of it: counts that name no GPU, NIC or tenant.
    nob = parse(snapshot(unpriv=True))
    nst = (of(nob, "peerstat") or [{}])[0]
    tap(not of(nob, "peer") and nob[0][1].get("view") == "restricted" and
        int(nst.get("maps", -1)) - int(stat0["maps"]) == 4,
        "nobody sees no peer record, only node-wide counters (maps %s)" % nst.get("maps"),
        nst)
    prov_cmd("nvunmap 2")
    prov_cmd("nvput 3")
    stat = expect_rows({(g1, n0, "nvidia"): (1, 16 * PAGE[1]),
                        (g2, n1, "nvidia"): (1, 2 * PAGE[1])},
                       "unmap and put_pages without unmap both leave exact counts")
    tap(int(stat["unmaps"]) - int(stat0["unmaps"]) == 1 and
        int(stat["freed_without_unmap"]) - int(stat0["freed_without_unmap"]) == 1,
        "peerstat counts one unmap and one free without unmap", stat)

    err = prov_cmd("apimap 10 %s %s 4096" % (g2, n1))
    expect_rows({(g1, n0, "nvidia"): (1, 16 * PAGE[1]),
                 (g2, n1, "nvidia"): (1, 2 * PAGE[1]),
                 (g2, n1, "api"): (1, 4096)},
                "railbind_peer_map() from a provider is counted" + (" (%s)" % err if err else ""))
    prov_cmd("apiunmap 10")
    # The API and the nvidia probes key their records on numbers each picks:
    # the same number from both is two records (railbind 0.1.0 refused the
    # second, or let a probe's replace the API's).
    err = (prov_cmd("nvmap 15 %s %s 2 0" % (g1, n1)) or
           prov_cmd("apialias 16 %s %s 4096 15" % (g1, n1)))
    base = {(g1, n0, "nvidia"): (1, 16 * PAGE[1]), (g2, n1, "nvidia"): (1, 2 * PAGE[1])}
    expect_rows({**base, (g1, n1, "nvidia"): (1, 2 * PAGE[0]), (g1, n1, "api"): (1, 4096)},
                "one cookie from the API and from nvidia_p2p_dma_map_pages: two records"
                + (" (%s)" % err if err else ""))
    prov_cmd("nvunmap 15")
    expect_rows({**base, (g1, n1, "api"): (1, 4096)},
                "the nvidia unmap of that cookie leaves the API's record")
    prov_cmd("apiunmap 16")
    expect_rows(base, "the API's unmap of it leaves nothing behind")

    # A page table of another major version is never read past its version.
    _, _, st = peer_view()
    err = prov_cmd("nvmapv 11 %s %s 4 0 20000" % (g1, n0))
    _, rows, st2 = peer_view()
    tap(not err and int(st2["badversion"]) - int(st["badversion"]) == 1 and
        rows.get((g1, n0, "nvidia"), {}).get("maps") == "1",
        "a page table of version 2.0 is refused, counted in badversion", str(err) + str(st2))
    prov_cmd("nvunmap 11")
    # A peer that is not a tracked NIC (here a GPU) is matched by pointer and ignored.
    err = prov_cmd("nvmap 12 %s %s 4 0" % (g1, g2))
    _, rows, st3 = peer_view()
    tap(not err and int(st3["untracked"]) - int(st2["untracked"]) == 1 and
        not any(k[1] == g2 for k in rows),
        "a map for a peer railbind does not track as a NIC is not counted", str(st3))
    prov_cmd("nvunmap 12")

    err = prov_cmd("dbattach 20 %s %s 65536" % (g1, n1))
    base = {(g1, n0, "nvidia"): (1, 16 * PAGE[1]), (g2, n1, "nvidia"): (1, 2 * PAGE[1])}
    expect_rows({**base, ("-", n1, "dmabuf"): (0, 0, 1)},
                "dma-buf attach by a NIC counted before mapping" + (" (%s)" % err if err else ""))
    prov_cmd("dbmap 20")
    expect_rows({**base, (g1, n1, "dmabuf"): (1, 65536, 1)},
                "dma-buf mapping lands on the GPU whose BAR it points into")
    prov_cmd("dbunmap 20")
    prov_cmd("dbmap 20")
    prov_cmd("dbdetach 20")
    expect_rows(base, "dma-buf detached while mapped leaves no count behind")

    # An API mapping its module never unmaps goes with the module.
    err = prov_cmd("apimap 13 %s %s 8192" % (g1, n1)) or prov_cmd("apileak 13")
    _, rows, _ = peer_view()
    tap(not err and rows.get((g1, n1, "api"), {}).get("bytes") == "8192",
        "an API mapping left behind by its provider is still counted while it is loaded",
        str(err) + str(rows))
    r = mod.unload(PROV)
    head, rows, _ = peer_view()
    tap(r.returncode == 0 and not rows and head.get("peer_state") == "waiting",
        "provider unload drops its mappings (probed and API, unmapped or not) and disarms",
        str(rows) + str(head))
    run(["insmod", prov])
    prov_cmd("nvmap 5 %s %s 1 0" % (g2, n0))
    expect_rows({(g2, n0, "nvidia"): (1, PAGE[0])}, "probes re-arm when the provider returns")
    # Only the module peer_provider names is probed: with the default
    # ("nvidia", absent here) the test provider's nvidia_p2p_* are not.
    mod.unload()
    mod.load(topology.KMOD_PARAMS)
    head, _, st = peer_view()
    err = prov_cmd("nvmap 14 %s %s 1 0" % (g1, n1))
    _, rows, st2 = peer_view()
    tap(not err and head.get("peer_state") == "waiting" and not rows and
        st2["maps"] == st["maps"] and st2.get("dmabuf") == "off",
        "with peer_provider=nvidia, another module's nvidia_p2p_* are never probed; "
        "dma-buf taps are off by default", str(head) + str(st2))
    prov_cmd("nvunmap 14")
    # A provider already live when railbind loads is probed at load; the
    # module loader reads '-' in a name as '_', and so does peer_provider.
    mod.unload()
    r = mod.load(params.replace(PROV, PROV.replace("_", "-")))
    head, _, _ = peer_view()
    tap(r.returncode == 0 and head.get("peer_state") == "armed",
        "railbind loaded after the provider arms at load (peer_provider=%s)"
        % PROV.replace("_", "-"), r.stdout + str(head))
    prov_cmd("nvmap 6 %s %s 3 0" % (g1, n1))
    expect_rows({(g1, n1, "nvidia"): (1, 3 * PAGE[0])},
                "mappings made before railbind loaded are not invented")
    # Caps are reported, not silent: a full registry counts what it drops.
    mod.unload()
    mod.load(params + " max_maps=64")
    errs = [e for e in (prov_cmd("nvmap %d %s %s 1 0" % (20 + i, g1, n0))
                        for i in range(70)) if e]
    _, rows, st = peer_view()
    tap(not errs and rows.get((g1, n0, "nvidia"), {}).get("maps") == "64" and
        st.get("overflow") == "6" and st.get("max_maps") == "64",
        "max_maps=64: 70 mappings give 64 counted and overflow=6", str(errs[:3]) + str(st))
    for i in range(70):
        prov_cmd("nvunmap %d" % (20 + i))
    _, rows, st = peer_view()
    tap(not rows and st.get("unmaps") == "64",
        "their unmaps leave nothing behind (unmaps=64)", str(rows) + str(st))
    ns, steps = irqoff()
    tap(steps is not None and steps <= IRQOFF_BOUND,
        "the peer registry's longest interrupts-off section looked at %s entries "
        "(bound %d; %s ns under TCG)" % (steps, IRQOFF_BOUND, ns))
    mod.unload(PROV)
    mod.unload()
    mod.load()


def scenario_cli(top, ep):
    cli = os.path.join(top, "build", "railbind")
    if not os.access(cli, os.X_OK):
        skip("audit and plan in the guest", "railbind CLI not built")
        return
    if not ep:
        skip("audit and plan in the guest", "endpoints not found")
        return
    import json
    # virtio-gpu (1af4:1050, class 0380) stands in for a GPU and e1000e has
    # no RDMA device: say so in a site config, as an operator would.
    conf = "/tmp/railbind-vm.conf"
    with open(conf, "w") as f:
        # health-interval 1: the broker's link counters see the hotplug below.
        f.write("accelerator = 1af4:1050\nethernet-rails = yes\nhealth-interval = 1\n")
    os.chmod(conf, 0o644)
    rp = ep["gpu1"]["chain"].split(",")[0]
    run(["setpci", "-s", rp, "ECAP0d+6.w=000d"])
    try:
        r = run(NOBODY + [cli, "audit", "--config", conf, "--json"])
        try:
            doc = json.loads(r.stdout)
        except ValueError:
            doc = {}
        acs = [c for c in doc.get("checks", []) if c.get("id") == "acs-redirect"
               and rp in json.dumps(c)]
        tap(r.returncode in (1, 2) and acs and acs[0].get("severity") in ("warn", "fail"),
            "unprivileged audit reports acs-redirect on %s from the module" % rp,
            r.stdout[:800])
    finally:
        run(["setpci", "-s", rp, "ECAP0d+6.w=0000"])
    r = run(NOBODY + [cli, "plan", "--config", conf, "--json"])
    try:
        doc = json.loads(r.stdout)
    except ValueError:
        doc = {}
    ngpu = sum(1 for e in topology.ENDPOINTS if e[1] == "gpu")
    tap(r.returncode == 0 and doc.get("schema") == "railbind.plan/1",
        "unprivileged plan --json runs", r.stdout[:800])
    gpus = sorted(x.get("gpu", {}).get("pci") for x in doc.get("ranks", []))
    want = sorted(ep[e[0]]["pci"] for e in topology.ENDPOINTS if e[1] == "gpu")
    tap(len(gpus) == ngpu and gpus == want, "plan has one rank per emulated GPU",
        "%s vs %s" % (gpus, want))


def scenario_broker(top, ep):
    """railbindd on the live guest: `railbind run` as nobody really binds the
    rank of the GPU on NUMA node 1, and a hotplugged NIC reaches `watch`
    within a second of appearing."""
    import json
    cli = os.path.join(top, "build", "railbind")
    daemon = os.path.join(top, "build", "railbindd")
    if not (os.access(cli, os.X_OK) and os.access(daemon, os.X_OK)):
        skip("broker in the guest", "railbind or railbindd not built")
        return
    if not ep or not ep.get("gpu2"):
        skip("broker in the guest", "endpoints not found")
        return
    conf = "/tmp/railbind-vm.conf"
    with open(conf, "w") as f:
        # health-interval 1: the broker's link counters see the hotplug below.
        f.write("accelerator = 1af4:1050\nethernet-rails = yes\nhealth-interval = 1\n")
    os.chmod(conf, 0o644)
    state = "/tmp/railbindd"
    os.makedirs(state, 0o755, exist_ok=True)
    os.chmod(state, 0o755)
    sock = os.path.join(state, "railbind.sock")
    log = open("/tmp/railbindd.log", "w")
    p = subprocess.Popen([daemon, "--foreground", "-d", "-d", "--config", conf, "--socket", sock,
                          "--state-dir", state], stderr=log)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and run([cli, "status", "-s", sock]).returncode:
            time.sleep(0.2)
        r = run([cli, "plan", "--config", conf, "--json"])
        try:
            ranks = json.loads(r.stdout).get("ranks", [])
        except ValueError:
            ranks = []
        mine = [x for x in ranks if x["gpu"]["pci"] == ep["gpu2"]["pci"]]
        tap(len(mine) == 1 and mine[0]["gpu"]["numa"] == 1 and mine[0]["mems"] == "1",
            "the GPU on the NUMA 1 root complex is planned on node 1", r.stdout[:800])
        if not mine:
            return
        rk = mine[0]
        env = dict(os.environ, RAILBIND_SOCKET=sock)
        r = run(NOBODY + [cli, "run", "--rank", str(rk["local_rank"]), "-v", "--", "sh", "-c",
                          "grep Cpus_allowed_list /proc/self/status; "
                          "grep -m1 -o 'prefer[^ ]*\\|bind[^ ]*' /proc/self/numa_maps"], env=env)
        cpus = re.search(r"Cpus_allowed_list:\s*(\S+)", r.stdout)
        tap(r.returncode == 0 and "source broker" in r.stdout and cpus
            and cpus.group(1) == rk["cpus"] and re.search(r"^prefer[^ ]*:1$", r.stdout, re.M),
            "nobody's railbind run binds to CPUs %s and prefers node 1" % rk["cpus"], r.stdout)
        w = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        w.connect(sock)
        w.sendall(b'{"v":1,"op":"watch"}\n')
        wf = w.makefile("r")
        gen0 = json.loads(wf.readline()).get("generation", 0)
        before = set(os.listdir("/sys/bus/pci/devices"))
        print('@@qmp {"execute":"device_add","arguments":{"driver":"e1000e","id":"hpbroker",'
              '"bus":"%s","romfile":""}}' % topology.HOTPLUG["pciehp"], flush=True)
        appeared = None
        deadline = time.time() + 60
        while time.time() < deadline and appeared is None:
            if set(os.listdir("/sys/bus/pci/devices")) - before:
                appeared = time.time()
            else:
                time.sleep(0.02)
        # The broker re-reads the node after each burst of uevents; its plan
        # (and generation) changes only when the new NIC is a rail: here
        # the e1000e has no driver (no udevd loads one) and no RDMA, so the
        # check is that the re-read came within a second of the device.
        w.settimeout(2.0)
        try:
            ev = json.loads(wf.readline())
        except (OSError, ValueError):
            ev = {}
        asked = time.time()
        st = run([cli, "status", "-s", sock, "--json"])
        try:
            doc = json.loads(st.stdout)
            reread = asked - doc["plan_age_s"]
        except (ValueError, KeyError):
            doc, reread = {}, None
        ok = appeared and reread is not None and -0.1 < reread - appeared < 1.0
        tap(ok, "a hotplugged NIC reaches the broker within a second (re-read %s s after it "
            "appeared; generation %s -> %s)" % ("%.2f" % (reread - appeared) if ok else "never",
                                                 gen0, doc.get("generation")),
            {"event": ev, "appeared": appeared is not None, "status": st.stdout[-400:]})
        w.close()
        added = sorted(set(os.listdir("/sys/bus/pci/devices")) - before)
        print('@@qmp {"execute":"device_del","arguments":{"id":"hpbroker"}}', flush=True)
        deadline = time.time() + 90
        while time.time() < deadline and set(os.listdir("/sys/bus/pci/devices")) - before:
            time.sleep(0.5)
        scenario_counters(sock, state, added, before)
    finally:
        p.terminate()
        try:
            tap(p.wait(timeout=30) == 0, "railbindd stops on SIGTERM")
        except subprocess.TimeoutExpired:
            p.kill()
            tap(False, "railbindd stops on SIGTERM")
        log.close()
        if failures:
            with open("/tmp/railbindd.log") as f:
                for line in f.read().splitlines()[-40:]:
                    print("# railbindd: " + line, flush=True)


def link_counts(state, pci):
    """The broker's count of changes of @pci's link, from its counters file."""
    import json
    try:
        with open(os.path.join(state, "counters.json")) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None, {}
    for link in doc.get("links", []):
        if link.get("pci") == pci:
            return link.get("changes"), link
    return None, doc


def scenario_counters(sock, state, added, before):
    """The broker's health counters (health-interval 1) on a real hotplug: the
    NIC of scenario_broker was removed; put back in the same slot, its link
    has gone and returned, which railbindd counts (the audit's link-flapping
    reads those counts)."""
    if len(added) != 1:
        skip("link counters on hotplug", "the hotplugged NIC was not seen (%s)" % added)
        return
    pci = added[0]
    deadline = time.time() + 20
    gone, link = link_counts(state, pci)
    while time.time() < deadline and not (gone and link.get("present") is False):
        time.sleep(0.5)
        gone, link = link_counts(state, pci)
    tap(gone is not None and gone >= 1 and link.get("present") is False,
        "railbindd counts %s's removal (changes %s)" % (pci, gone), link)
    print('@@qmp {"execute":"device_add","arguments":{"driver":"e1000e","id":"hpbroker",'
          '"bus":"%s","romfile":""}}' % topology.HOTPLUG["pciehp"], flush=True)
    deadline = time.time() + 60
    while time.time() < deadline and pci not in os.listdir("/sys/bus/pci/devices"):
        time.sleep(0.2)
    # Two samples after it is back (1 s apart), and TCG's slowness.
    deadline = time.time() + 30
    back, link = link_counts(state, pci)
    while time.time() < deadline and not (back and gone is not None and back > gone):
        time.sleep(0.5)
        back, link = link_counts(state, pci)
    tap(gone is not None and back is not None and back >= gone + 1,
        "railbindd counts %s's return (changes %s after removal, %s back)"
        % (pci, gone, back), link)
    print('@@qmp {"execute":"device_del","arguments":{"id":"hpbroker"}}', flush=True)
    deadline = time.time() + 90
    while time.time() < deadline and set(os.listdir("/sys/bus/pci/devices")) - before:
        time.sleep(0.5)


def guarded(fn, *args):
    """A scenario that throws is one failed test, and the others still run;
    what the scenario returns is returned."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001
        import traceback
        tap(False, "%s ran to completion" % fn.__name__, traceback.format_exc())
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", required=True)
    ap.add_argument("--label", required=True)
    ap.add_argument("--cycles", type=int, default=100)
    ap.add_argument("--storm-cycles", type=int, default=50)
    ap.add_argument("--unload-cycles", type=int, default=20)
    ap.add_argument("--only", default="",
                    help="comma list of scenarios to run after the topology one (default: all)")
    a = ap.parse_args()
    ko = os.path.join(a.top, "build", "kmod-%s" % a.label, "kmod", "railbind.ko")
    mod = Module(ko)
    print("# kernel %s, module %s" % (os.uname().release, ko), flush=True)
    only = set(filter(None, a.only.split(",")))
    # For vmdrive: where this boot is, and what it runs, so that a QEMU
    # crash is retried from the scenario it happened in.
    print("@@scenario topology", flush=True)
    ep = guarded(scenario_topology, mod, a.label)
    scenarios = [s for s in (
            ("acs", scenario_acs, (ep,)),
            ("p2p", p2p.scenario, (sys.modules[__name__], a.top, ep)),
            ("fakebus", fakebus.scenario_p2p, (sys.modules[__name__], a.top, mod)),
            ("sriov", fakebus.scenario_sriov, (sys.modules[__name__], a.top, mod)),
            ("hotplug", scenario_hotplug, ("pciehp", topology.HOTPLUG["pciehp"], "pxb1")),
            ("hotplug", scenario_hotplug, ("acpi", topology.HOTPLUG["acpi"], "pcie.0")),
            ("provider", scenario_provider, (a.top, a.label, mod, ep)),
            ("rescan", rescan.scenario, (sys.modules[__name__],)),
            ("cycles", scenario_cycles, (mod, a.cycles)),
            ("scale", fakebus.scenario_scale, (sys.modules[__name__], a.top, mod)),
            ("cli", scenario_cli, (a.top, ep)),
            ("broker", scenario_broker, (a.top, ep)),
            ("stress", stress.scenarios, (sys.modules[__name__], a.top, mod, ep,
                                          a.storm_cycles, a.unload_cycles)),
            ("fabric", fabric.scenario, (sys.modules[__name__], a.top)))
                 if not only or s[0] in only]
    print("@@scenarios " + ",".join(s[0] for s in scenarios), flush=True)
    for name, fn, args in scenarios:
        print("@@scenario " + name, flush=True)
        if name == "acs" and not ep:
            skip("ACS scenario", "endpoints not found")
            print("@@scenario-done " + name, flush=True)
            continue
        t = time.time()
        healthy = guarded(fn, *args)
        print("# %s: %.0f s" % (name, time.time() - t), flush=True)
        print("@@scenario-done " + name, flush=True)
        if name == "rescan" and healthy is False:
            # PCI hotplug or misc devices hang from here on: report, stop.
            print("# the kernel is wedged: later scenarios skipped", flush=True)
            print("1..%d" % count, flush=True)
            return 1
    ns, steps = irqoff()
    print("# longest interrupts-off section of this load: %s entries, %s ns (TCG)"
          % (steps, ns), flush=True)
    probs = dmesg_problems()
    tap(not probs, "no kernel warnings, oopses or BUGs in dmesg", "\n".join(probs))
    mod.unload()
    print("1..%d" % count, flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
