#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Host side of the QEMU tests: boot the guest (TCG only), relay its TAP
to stdout and carry out the QMP commands it asks for ("@@qmp {json}").

QEMU 7.2 itself sometimes dies by a signal (its i6300esb, SIGSEGV, during
PCI remove/rescan), with railbind loaded or not. That is not the guest's
failure: the scenario it died in, and those after it, run again once on a
fresh boot. A guest that stops answering while QEMU lives, a guest that
ends without finishing (a panic powers it off), or QEMU dying twice in a
row in one scenario fails the run (verdict())."""
import argparse
import json
import os
import re
import selectors
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import topology  # noqa: E402


class Qmp:
    """QMP, connected at the guest's first request (a QEMU that never gets
    one, or dies first, costs no wait here)."""

    def __init__(self, path):
        self.sock = None
        self.path = path
        self.buf = b""

    def connect(self, deadline):
        while time.time() < deadline:
            try:
                s = socket.socket(socket.AF_UNIX)
                s.connect(self.path)
                self.sock = s
                self.sock.settimeout(30)
                self._read()  # greeting
                self.cmd({"execute": "qmp_capabilities"})
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("no QMP socket")

    def _read(self):
        while b"\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise RuntimeError("QMP closed")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def cmd(self, obj):
        if self.sock is None:
            self.connect(time.time() + 30)
        self.sock.sendall(json.dumps(obj).encode() + b"\n")
        # device_del only asks the guest to let go: wait until QEMU has
        # really removed it, so that a device_add the guest sends next
        # never meets the old device still in the slot.
        dev = obj.get("arguments", {}).get("id") if obj.get("execute") == "device_del" else None
        deleted = dev is None
        msg = None
        deadline = time.time() + 60
        while msg is None or ("return" in msg and not deleted and time.time() < deadline):
            try:
                m = self._read()
            except socket.timeout:
                break
            if m.get("event") == "DEVICE_DELETED" and m.get("data", {}).get("device") == dev:
                deleted = True
            elif msg is None and ("return" in m or "error" in m):
                msg = m
        return msg or {"error": "no reply"}


def qemu_command(qmp_path, kernel, initrd, cmdline, extra):
    """The guest every test boots: TCG only (nested KVM hangs on the CI
    hosts), two NUMA nodes of one CPU each, tests/vm's PCIe tree
    (topology.py), the serial console on stdio and QMP on @qmp_path."""
    return [
        "qemu-system-x86_64", "-machine", "q35", "-accel", "tcg,thread=multi",
        "-cpu", "max", "-smp", "2,sockets=2,cores=1,threads=1", "-m", "1024",
        "-object", "memory-backend-ram,id=m0,size=512M",
        "-object", "memory-backend-ram,id=m1,size=512M",
        "-numa", "node,nodeid=0,cpus=0,memdev=m0",
        "-numa", "node,nodeid=1,cpus=1,memdev=m1",
        "-nodefaults", "-display", "none", "-no-reboot",
        "-serial", "stdio", "-qmp", "unix:%s,server=on,wait=off" % qmp_path,
        "-kernel", kernel, "-initrd", initrd, "-append", cmdline,
    ] + extra + topology.qemu_devices()


TAP_RESULT = re.compile(r"^(ok|not ok) \d+(.*)$")


class Tap:
    """The guest's TAP stream read off the serial console, one boot's:
    counts, failures, the guest's plan, "@@done", the scenarios it meant to
    run and finished ("@@scenarios", "@@scenario-done"); QMP commands the
    guest asks for are carried out. Results are renumbered from @first, so
    the TAP of several boots reads as one stream; the guest's plan is
    relayed unless @relay_plan is False (the caller prints its own)."""

    def __init__(self, qmp, log, first=1, relay_plan=True):
        self.qmp, self.log = qmp, log
        self.relay_plan = relay_plan
        self.failed = 0
        self.seen = 0
        self.next = first
        self.plan = None
        self.done = None
        self.planned = None
        self.finished = []
        self.current = None

    def line(self, line):
        self.log.write(line + "\n")
        self.log.flush()
        if line.startswith("@@qmp "):
            reply = self.qmp.cmd(json.loads(line[6:]))
            if "error" in reply:
                print("# qmp error: %s" % reply["error"], flush=True)
        elif line.startswith("@@done"):
            self.done = line
        elif line.startswith("@@scenarios "):
            self.planned = [n for n in line.split(" ", 1)[1].split(",") if n]
        elif line.startswith("@@scenario "):
            self.current = line.split(" ", 1)[1]
        elif line.startswith("@@scenario-done "):
            self.finished.append(line.split(" ", 1)[1])
            self.current = None
        elif TAP_RESULT.match(line):
            m = TAP_RESULT.match(line)
            self.seen += 1
            if m.group(1) == "not ok" and "# TODO" not in line:
                self.failed += 1
            print("%s %d%s" % (m.group(1), self.next, m.group(2)), flush=True)
            self.next += 1
        elif line.startswith("1.."):
            self.plan = int(line[3:].split()[0])
            if self.relay_plan:
                print(line, flush=True)
        elif line.startswith(("# ", "Bail out!")):
            print(line, flush=True)
            if line.startswith("Bail out!"):
                self.failed += 1
        elif ("BUG:" in line or "WARNING:" in line or "Oops" in line
              or "Kernel panic" in line or "Call Trace" in line):
            print("# console: " + line, flush=True)

    def relay(self, p, deadline, on_line=None):
        """Until "@@done", QEMU's exit or @deadline (False when that passed).
        @on_line sees each console line first; True from it means handled."""
        sel = selectors.DefaultSelector()
        sel.register(p.stdout, selectors.EVENT_READ)
        pending = b""
        while self.done is None:
            if time.time() > deadline:
                return False
            if not sel.select(timeout=1):
                if p.poll() is not None:
                    break
                continue
            data = os.read(p.stdout.fileno(), 65536)
            if not data:
                break
            pending += data
            while b"\n" in pending:
                raw, pending = pending.split(b"\n", 1)
                line = raw.decode("utf-8", "replace").rstrip("\r")
                if not (on_line and on_line(line)):
                    self.line(line)
        return True


# What a boot's end means (verdict()).
DONE, RETRY, HANG, CRASHED, STOPPED = "done", "retry", "hang", "crashed", "stopped"


def verdict(finished, qemu_rc, timed_out, crashed_before):
    """@finished: the guest printed "@@done"; @qemu_rc: QEMU's exit status
    as Popen reports it before we kill anything (None: still running,
    negative: the signal that killed it); @timed_out: the deadline passed
    first; @crashed_before: QEMU died by a signal in this same scenario on
    the boot before. A guest that finished is done whatever QEMU did next."""
    if finished:
        return DONE
    if qemu_rc is not None and qemu_rc < 0:
        return CRASHED if crashed_before else RETRY
    if timed_out or qemu_rc is None:
        return HANG
    return STOPPED


def signame(rc):
    try:
        return signal.Signals(-rc).name
    except (ValueError, TypeError):
        return "signal %s" % -rc


def boot(cmd, qmp_path, log, timeout, first):
    """One boot of @cmd: its Tap, QEMU's exit status before we killed it
    (None while alive), and whether the deadline passed."""
    if os.path.exists(qmp_path):
        os.unlink(qmp_path)
    start = time.time()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    tap = Tap(Qmp(qmp_path), log, first, relay_plan=False)
    try:
        timed_out = not tap.relay(p, start + timeout)
    except (RuntimeError, OSError) as e:
        # QMP gone with QEMU: what killed it is read below.
        print("# host: %s" % e, flush=True)
        timed_out = False
        p.wait(timeout=10)
    rc = p.poll()
    if rc is None and not timed_out:
        try:
            p.wait(timeout=5)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            pass
    if p.returncode is None:
        p.kill()
        p.wait()
    p.stdin.close()
    p.stdout.close()
    if tap.qmp.sock is not None:
        tap.qmp.sock.close()
    return tap, rc, timed_out, time.time() - start


def remaining(tap, only):
    """The scenarios a retry boot runs, as rb.only names them: the guest's
    plan from the one it died in on ("none": only the topology and the
    final checks); before the guest said its plan, what this boot ran
    (None: everything)."""
    if tap.planned is None:
        return only
    return tap.planned[len(tap.finished):] or ["none"]


def run_boots(make_cmd, qmp_path, log, timeout, label, only=None, out=sys.stdout):
    """Boots until the guest finishes, retrying once per QEMU crash;
    prints the TAP plan last. Returns the exit code."""
    failed, first, crashed_in = 0, 1, None
    while True:
        tap, rc, timed_out, secs = boot(make_cmd(only), qmp_path, log, timeout, first)
        failed += tap.failed
        first = tap.next
        where = tap.current or "startup"
        v = verdict(tap.done is not None, rc, timed_out, crashed_in == where)
        print("# %s: %s in %.0f s, QEMU %s" % (
            label, tap.done or "no result", secs,
            "running" if rc is None else signame(rc) if rc < 0 else "exit %d" % rc), file=out,
            flush=True)
        if v == DONE:
            if tap.plan is None or tap.seen != tap.plan:
                print("not ok %d - %s: %s of %s planned tests reported"
                      % (first, label, tap.seen, tap.plan), file=out, flush=True)
                first += 1
                failed += 1
            break
        if v == RETRY:
            only = remaining(tap, only)
            crashed_in = where
            print("# %s: QEMU died by %s in scenario %s: QEMU's crash, not the guest's; "
                  "scenarios %s again on a fresh boot" % (label, signame(rc), where,
                                                          ",".join(only or ["all"])), file=out,
                  flush=True)
            continue
        why = {HANG: "the guest stopped answering in scenario %s while QEMU ran (%d s)"
               % (where, timeout),
               CRASHED: "QEMU died by %s in scenario %s twice in a row"
               % (signame(rc) if rc else "?", where),
               STOPPED: "the guest ended in scenario %s without finishing (QEMU exit %s)"
               % (where, rc)}[v]
        print("not ok %d - %s: %s" % (first, label, why), file=out, flush=True)
        first += 1
        failed += 1
        break
    print("1..%d" % (first - 1), file=out, flush=True)
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser()
    for opt in ("label", "release", "kernel", "initrd", "top", "work"):
        ap.add_argument("--" + opt, required=True)
    ap.add_argument("--timeout", type=int, default=int(os.environ.get("RAILBIND_VM_TIMEOUT", "900")))
    a = ap.parse_args()

    qmp_path = os.path.join(a.work, "qmp.sock")
    log = open(os.path.join(a.work, "console.log"), "w")
    # Debian builds no lockdep or KASAN kernel; 6.12's KFENCE (off by
    # default) samples allocations for use-after-free and overflows at a
    # cost TCG does not notice, and reports "BUG: KFENCE" in dmesg, which
    # the last scenario checks. 6.1 has no KFENCE and ignores it.
    base = ("console=ttyS0 loglevel=4 panic=1 kfence.sample_interval=100 rb.top=%s rb.label=%s"
            % (a.top, a.label))
    # RAILBIND_VM_ONLY=stress,cli: the topology scenario and these only.
    env_only = [n for n in os.environ.get("RAILBIND_VM_ONLY", "").split(",") if n]

    def make_cmd(only):
        cmdline = base + (" rb.only=" + ",".join(only) if only else "")
        return qemu_command(qmp_path, a.kernel, a.initrd, cmdline, [
            "-fsdev", "local,id=hostfs,path=/,security_model=none,readonly=on,multidevs=remap",
            "-device", "virtio-9p-pci,fsdev=hostfs,mount_tag=hostroot,bus=pcie.0,addr=0x10",
        ])

    rc = run_boots(make_cmd, qmp_path, log, a.timeout, a.label, env_only or None)
    print("# %s: console log of the last boot: %s" % (a.label, os.path.join(a.work, "console.log")))
    return rc


if __name__ == "__main__":
    sys.exit(main())
