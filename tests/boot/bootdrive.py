#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Host side of the boot test: boot the Debian image with systemd as init
under QEMU TCG (never KVM) on tests/vm's emulated topology, relay the
guest's TAP from the serial console and carry out the QMP commands it asks
for ("@@qmp {json}"), with tests/vm/vmdrive.py's machine and TAP relay."""
import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vm"))
from vmdrive import Qmp, Tap, qemu_command  # noqa: E402


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
    # tests/vm's machine; the disk sits on pcie.0.
    qemu = qemu_command(qmp_path, a.kernel, a.initrd, cmdline, [
        "-drive", "if=none,id=root,file=%s,format=raw,cache=unsafe" % a.image,
        "-device", "virtio-blk-pci,drive=root,bus=pcie.0,addr=0x10",
    ])
    start = time.time()
    p = subprocess.Popen(qemu, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    qmp = Qmp(qmp_path)
    qmp.connect(start + 30)
    tap = Tap(qmp, log)

    def booted(line):
        if not line.startswith("@@booted"):
            return False
        log.write(line + "\n")
        print("# guest: systemd reached multi-user.target in %.0f s" % (time.time() - start),
              flush=True)
        return True

    if not tap.relay(p, start + a.timeout, booted):
        print("not ok - the guest did not finish in %d s" % a.timeout)
        tap.failed += 1
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
        tap.done or "no result", time.time() - start, os.path.join(a.work, "console.log")))
    if tap.plan is None or tap.seen != tap.plan:
        print("not ok - %s of %s planned tests reported" % (tap.seen, tap.plan))
        tap.failed += 1
        tap.seen += 1
    print("%d passed, %d failed" % (tap.seen - tap.failed, tap.failed))
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
