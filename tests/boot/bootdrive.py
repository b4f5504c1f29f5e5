#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Host side of the boot test: boot the Debian image with systemd as init
under QEMU TCG (never KVM) on tests/vm's emulated topology, relay the
guest's TAP from the serial console and carry out the QMP commands it asks
for ("@@qmp {json}"), as tests/vm/vmdrive.py does for the initramfs guest."""
import argparse
import json
import os
import selectors
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vm"))
import topology  # noqa: E402
from vmdrive import Qmp  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    for opt in ("kernel", "initrd", "image", "work"):
        ap.add_argument("--" + opt, required=True)
    ap.add_argument("--timeout", type=int,
                    default=int(os.environ.get("RAILBIND_BOOT_TIMEOUT", "600")))
    a = ap.parse_args()

    qmp_path = os.path.join(a.work, "qmp.sock")
    if os.path.exists(qmp_path):
        os.unlink(qmp_path)
    log = open(os.path.join(a.work, "console.log"), "w")
    cmdline = ("root=/dev/vda rw console=ttyS0 loglevel=4 panic=1 "
               "systemd.show_status=0 systemd.log_target=journal")
    # TCG only: nested KVM hangs on the CI hosts. The NUMA layout and the
    # PCIe tree are tests/vm's (topology.py), the disk sits on pcie.0.
    qemu = [
        "qemu-system-x86_64", "-machine", "q35", "-accel", "tcg,thread=multi",
        "-cpu", "max", "-smp", "2,sockets=2,cores=1,threads=1", "-m", "1024",
        "-object", "memory-backend-ram,id=m0,size=512M",
        "-object", "memory-backend-ram,id=m1,size=512M",
        "-numa", "node,nodeid=0,cpus=0,memdev=m0",
        "-numa", "node,nodeid=1,cpus=1,memdev=m1",
        "-nodefaults", "-display", "none", "-no-reboot",
        "-serial", "stdio", "-qmp", "unix:%s,server=on,wait=off" % qmp_path,
        "-kernel", a.kernel, "-initrd", a.initrd, "-append", cmdline,
        "-drive", "if=none,id=root,file=%s,format=raw,cache=unsafe" % a.image,
        "-device", "virtio-blk-pci,drive=root,bus=pcie.0,addr=0x10",
    ] + topology.qemu_devices()
    start = time.time()
    p = subprocess.Popen(qemu, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    qmp = Qmp(qmp_path)
    qmp.connect(start + 30)
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ)
    pending = b""
    failed = 0
    done = None
    plan = None
    seen = 0
    booted = None
    while done is None:
        if time.time() - start > a.timeout:
            print("not ok - the guest did not finish in %d s" % a.timeout)
            failed += 1
            break
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
            log.write(line + "\n")
            log.flush()
            if line.startswith("@@qmp "):
                reply = qmp.cmd(json.loads(line[6:]))
                if "error" in reply:
                    print("# qmp error: %s" % reply["error"], flush=True)
            elif line.startswith("@@booted"):
                booted = time.time() - start
                print("# guest: systemd reached multi-user.target in %.0f s" % booted, flush=True)
            elif line.startswith("@@done"):
                done = line
            elif line.startswith(("ok ", "not ok ")):
                seen += 1
                if line.startswith("not ok") and "# TODO" not in line:
                    failed += 1
                print(line, flush=True)
            elif line.startswith("1.."):
                plan = int(line[3:].split()[0])
                print(line, flush=True)
            elif line.startswith(("# ", "Bail out!")):
                print(line, flush=True)
                if line.startswith("Bail out!"):
                    failed += 1
            elif ("BUG:" in line or "WARNING:" in line or "Oops" in line
                  or "Kernel panic" in line or "Call Trace" in line):
                print("# console: " + line, flush=True)
    try:
        qmp.cmd({"execute": "quit"})
    except (OSError, RuntimeError):
        pass
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    print("# boot: %s in %.0f s (console log: %s)" % (
        done or "no result", time.time() - start, os.path.join(a.work, "console.log")))
    if plan is None or seen != plan:
        print("not ok - %s of %s planned tests reported" % (seen, plan))
        failed += 1
        seen += 1
    print("%d passed, %d failed" % (seen - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
