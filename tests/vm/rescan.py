# SPDX-License-Identifier: GPL-2.0-or-later
"""Issue 14: PCI remove/rescan of a device whose driver registers a misc
device (QEMU's i6300esb: its watchdog driver calls misc_register() from
probe, under the PCI rescan lock), for 40 s, while four unprivileged users
read /dev/railbind in a loop. railbind 0.1.0 deadlocked here in the first
cycles: open() rendered under misc_mtx and took the rescan lock, rescan
held the rescan lock and waited for misc_mtx. Uses guest.py's TAP and
helpers, passed in as `g`."""
import os
import subprocess
import time

from stress import wait_for

PCIDEVS = "/sys/bus/pci/devices"
HUNG = "/proc/sys/kernel/hung_task_timeout_secs"
WDT = ("0x8086", "0x25ab")  # i6300esb
READERS = 4
# A sysfs write that has not returned by then is stuck (TCG under load
# takes seconds for a rescan, never a minute).
STUCK_S = 90


def find_pci(vendor, device):
    for bdf in sorted(os.listdir(PCIDEVS)):
        try:
            with open(os.path.join(PCIDEVS, bdf, "vendor")) as f:
                v = f.read().strip()
            with open(os.path.join(PCIDEVS, bdf, "device")) as f:
                d = f.read().strip()
        except OSError:
            continue
        if (v, d) == (vendor, device):
            return bdf
    return None


def write_bounded(path, value, timeout=STUCK_S):
    """echo value > path in a child, so that a write stuck in the kernel
    leaves this process free to report it: None, or why it failed."""
    p = subprocess.Popen(["sh", "-c", "echo %s > %s" % (value, path)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.time() + timeout
    while time.time() < deadline:
        if p.poll() is not None:
            out = p.stdout.read().decode(errors="replace").strip()
            return None if p.returncode == 0 else "%s: %s" % (path, out)
        time.sleep(0.05)
    return "%s: still blocked after %d s" % (path, timeout)


def reader_counts():
    """Reads so far per reader; a file caught being rewritten is read again."""
    counts = []
    for i in range(READERS):
        n = 0
        for _ in range(50):
            try:
                with open("/tmp/rb-rescan-reader.%d" % i) as f:
                    n = int(f.read().strip())
                break
            except (OSError, ValueError):
                time.sleep(0.01)
        counts.append(n)
    return counts


def scenario(g, seconds=40, hung_s=10):
    bdf = find_pci(*WDT)
    if not bdf:
        g.skip("remove/rescan under unprivileged readers", "no i6300esb in the guest")
        return True
    drv = os.path.join(PCIDEVS, bdf, "driver")
    if not g.tap(os.path.exists(drv) and os.path.exists("/dev/watchdog"),
                 "the i6300esb (%s) is bound and registered /dev/watchdog" % bdf):
        return True
    with open(HUNG) as f:
        hung0 = f.read().strip()
    with open(HUNG, "w") as f:
        f.write(str(hung_s))
    mark = len(g.run(["dmesg"]).stdout.splitlines())
    readers = []
    for i in range(READERS):
        path = "/tmp/rb-rescan-reader.%d" % i
        with open(path, "w") as f:
            f.write("0")
        os.chmod(path, 0o666)
        readers.append(subprocess.Popen(
            g.NOBODY + ["sh", "-c", "n=0; while cat %s >/dev/null; do n=$((n+1)); "
                        "echo $n >%s; done" % (g.DEV, path)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    time.sleep(1)
    t0 = time.time()
    cycles, fails, lat = 0, [], []
    while time.time() < t0 + seconds:
        t = time.time()
        why = write_bounded(os.path.join(PCIDEVS, bdf, "remove"), 1)
        if not why and not wait_for(lambda: not os.path.exists(os.path.join(PCIDEVS, bdf)), 30):
            why = "%s still present after remove" % bdf
        if not why:
            why = write_bounded("/sys/bus/pci/rescan", 1)
        if not why and not wait_for(lambda: os.path.exists(drv) and
                                  os.path.exists("/dev/watchdog"), 60):
            why = "%s not bound again, or no /dev/watchdog, after rescan" % bdf
        if why:
            fails.append("cycle %d: %s" % (cycles + 1, why))
            break
        cycles += 1
        lat.append(time.time() - t)
    elapsed = time.time() - t0
    c1 = reader_counts()
    time.sleep(2)
    c2 = reader_counts()
    alive = [p.poll() is None for p in readers]
    for p in readers:
        p.terminate()
    gone = 0
    deadline = time.time() + 30
    for p in readers:
        try:
            p.wait(timeout=max(0.1, deadline - time.time()))
            gone += 1
        except subprocess.TimeoutExpired:
            pass
    with open(HUNG, "w") as f:
        f.write(hung0)
    new = g.run(["dmesg"]).stdout.splitlines()[mark:]
    hung = [line for line in new if "blocked for more than" in line or "hung_task" in line]
    if lat:
        print("# rescan: %d remove/rescan cycles in %.0f s (mean %.2f s, max %.2f s), "
              "reads per nobody reader %s" % (cycles, elapsed, sum(lat) / len(lat),
                                               max(lat), c2), flush=True)
    g.tap(not fails and cycles >= 3,
          "%d s of remove/rescan of the i6300esb under %d nobody readers: %d cycles, "
          "/dev/watchdog back after each" % (seconds, READERS, cycles), fails)
    g.tap(all(alive) and all(c > 0 for c in c1) and all(b > a for a, b in zip(c1, c2)),
          "every nobody reader kept reading /dev/railbind (%s, then %s)" % (c1, c2))
    g.tap(gone == READERS, "the readers exit when told (%d/%d)" % (gone, READERS))
    g.tap(not hung, "no hung task (hung_task_timeout_secs=%d)" % hung_s, "\n".join(hung))
    # A wedged kernel would hang every later scenario: stop the run instead.
    return not fails and gone == READERS and not hung

