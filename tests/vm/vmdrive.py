#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Host side of the QEMU tests: boot the guest (TCG only), relay its TAP
to stdout and carry out the QMP commands it asks for ("@@qmp {json}")."""
import argparse
import json
import os
import selectors
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import topology  # noqa: E402


class Qmp:
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


class Tap:
    """The guest's TAP stream read off the serial console: counts, failures,
    the plan, "@@done"; QMP commands the guest asks for are carried out."""

    def __init__(self, qmp, log):
        self.qmp, self.log = qmp, log
        self.failed = 0
        self.seen = 0
        self.plan = None
        self.done = None

    def line(self, line):
        self.log.write(line + "\n")
        self.log.flush()
        if line.startswith("@@qmp "):
            reply = self.qmp.cmd(json.loads(line[6:]))
            if "error" in reply:
                print("# qmp error: %s" % reply["error"], flush=True)
        elif line.startswith("@@done"):
            self.done = line
        elif line.startswith(("ok ", "not ok ")):
            self.seen += 1
            if line.startswith("not ok") and "# TODO" not in line:
                self.failed += 1
            print(line, flush=True)
        elif line.startswith("1.."):
            self.plan = int(line[3:].split()[0])
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


def main():
    ap = argparse.ArgumentParser()
    for opt in ("label", "release", "kernel", "initrd", "top", "work"):
        ap.add_argument("--" + opt, required=True)
    ap.add_argument("--timeout", type=int, default=int(os.environ.get("RAILBIND_VM_TIMEOUT", "900")))
    a = ap.parse_args()

    qmp_path = os.path.join(a.work, "qmp.sock")
    if os.path.exists(qmp_path):
        os.unlink(qmp_path)
    log = open(os.path.join(a.work, "console.log"), "w")
    cmdline = "console=ttyS0 loglevel=4 panic=1 rb.top=%s rb.label=%s" % (a.top, a.label)
    # RAILBIND_VM_ONLY=stress,cli: the topology scenario and these only.
    if os.environ.get("RAILBIND_VM_ONLY"):
        cmdline += " rb.only=" + os.environ["RAILBIND_VM_ONLY"]
    qemu = qemu_command(qmp_path, a.kernel, a.initrd, cmdline, [
        "-fsdev", "local,id=hostfs,path=/,security_model=none,readonly=on,multidevs=remap",
        "-device", "virtio-9p-pci,fsdev=hostfs,mount_tag=hostroot,bus=pcie.0,addr=0x10",
    ])
    start = time.time()
    p = subprocess.Popen(qemu, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    qmp = Qmp(qmp_path)
    qmp.connect(start + 30)
    tap = Tap(qmp, log)
    if not tap.relay(p, start + a.timeout):
        print("not ok - %s: the VM did not finish in %d s" % (a.label, a.timeout))
        tap.failed += 1
    try:
        p.kill()
    except OSError:
        pass
    p.wait()
    print("# %s: %s in %.0f s (console log: %s)" % (
        a.label, tap.done or "no result", time.time() - start,
        os.path.join(a.work, "console.log")))
    if tap.plan is None or tap.seen != tap.plan:
        print("not ok - %s: %s of %s planned tests reported" % (a.label, tap.seen, tap.plan))
        tap.failed += 1
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
