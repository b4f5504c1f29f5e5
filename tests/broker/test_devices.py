#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""railbindd's word on a client's GPUs (issue 25): the devices cgroup fails
closed, and under cgroup v2 a client proves its GPUs by passing their opened
device nodes (SCM_RIGHTS).

- cgroup v1 (a devices cgroup of this host's own v1 hierarchy, giving the
  victim GPU 3 alone): a process whose thread-group leader has exited (the
  kernel then shows "/" for every v1 hierarchy) is refused, never served
  another GPU; one seen in the cgroup before and shown in the root one later
  is refused.
- cgroup v2 (a device program attached with bpf(2) to a cgroup of this
  host's v2 hierarchy): the GPUs are stand-ins, character devices of the mem
  driver (1:7, 1:8, 1:9) that the saved topology's GPUs 1-3 have as render
  nodes (a fake sysfs under --root) and that the victim finds at
  /dev/dri/renderD129-131 (mknod in a private mount namespace); the filter
  denies 1:8 and 1:9. railbind run gets GPU 1; without proof, with another
  device, with an O_PATH descriptor, or outside a filtered cgroup, the claim
  is trusted as before (docs/PROTOCOL.md).
- Descriptors sent with no request, or more than the broker takes, cost it
  none.
Needs root, setpriv and unshare (skipped, and said so, otherwise).
Closing line: "N passed, N failed".
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_broker as tb  # noqa: E402
from test_broker import Broker, check, clean_env, wait_for  # noqa: E402
from test_hostile import (ATTACKER, DGX, VICTIM, Attack, as_user, dgx_gpus,  # noqa: E402
                          fd_count, give_only_gpu3, status, stopped, victim_served)

DEVICES = os.environ["DEVICES"]
V1 = "/sys/fs/cgroup/devices"


def fake_root(tmp, gpus, nodes):
    """A --root tree: GPU i's DRM render node renderD(128+i) is @nodes[i] ("MAJ:MIN")."""
    root = os.path.join(tmp, "root")
    for i, dev in nodes.items():
        node = os.path.join(root, "sys/bus/pci/devices", gpus[i], "drm", "renderD%d" % (128 + i))
        os.makedirs(node)
        with open(os.path.join(node, "dev"), "w") as f:
            f.write(dev + "\n")
    os.makedirs(os.path.join(root, "sys/fs"))
    os.symlink("/sys/fs/cgroup", os.path.join(root, "sys/fs/cgroup"))
    return root


def remove_cgroup(cg):
    try:
        os.rmdir(cg)
    except OSError as e:
        print("note: cannot remove %s: %s" % (cg, e))


def ask(prefix, sock, lines, *paths):
    """broker_devices ask as the victim: one reply per request line."""
    r = subprocess.run([*prefix, *as_user(VICTIM, [DEVICES, "ask", sock, *paths])],
                       input="".join(json.dumps(x) + "\n" for x in lines),
                       capture_output=True, text=True, timeout=60)
    return [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")], r.stderr


def gpu_of(reply):
    return reply.get("rank", {}).get("gpu", {}).get("pci") if "ok" in reply else None


def test_v1_fail_closed(tmp):
    if not os.path.exists(os.path.join(V1, "devices.allow")):
        print("SKIP: fail closed: no cgroup v1 devices controller here")
        return
    gpus = dgx_gpus()
    root = fake_root(tmp, gpus, {i: "226:%d" % (128 + i) for i in range(len(gpus))})
    cg = os.path.join(V1, "railbind-devtest-%d" % os.getpid())
    os.mkdir(cg)
    b = Broker(tmp, DGX, "--root", root)
    try:
        give_only_gpu3(cg)
        enter = ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cg]
        plan0 = {"v": 1, "op": "plan", "rank": 0, "job": "lx", "id": 1}
        out, err = ask(enter, b.sock, [{**plan0, "lease": "none"}])
        check(out and gpu_of(out[0]) == gpus[3],
              "in the cgroup, rank 0 is GPU 3, the one it may open: %.200r %s" % (out, err))
        for req, what in ((plan0, "rank 0 with a lease"),
                          ({"v": 1, "op": "plan", "id": 2}, "the whole plan")):
            r = subprocess.run([*enter, *as_user(VICTIM, [DEVICES, "leader-exit", b.sock,
                                                          json.dumps(req)])],
                               capture_output=True, text=True, timeout=60)
            line = next((x for x in r.stdout.splitlines() if x.startswith("{")), "{}")
            reply = json.loads(line)
            check(reply.get("error") == "permission" and "leader" in reply.get("message", ""),
                  "a process whose leader has exited asks %s: permission, saying why: %r"
                  % (what, line[:200]))
        check(not [x for x in status(b)["leases"] if x["job"] == "lx"],
              "and it holds no lease: %r" % status(b)["leases"])
        # Seen in the cgroup, then shown in the root one: refused.
        p = subprocess.Popen([*enter, *as_user(VICTIM, [DEVICES, "ask", b.sock])],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True)
        p.stdin.write(json.dumps({**plan0, "lease": "none"}) + "\n")
        p.stdin.flush()
        first = json.loads(p.stdout.readline())
        with open(os.path.join(V1, "cgroup.procs"), "w") as f:
            f.write("%d\n" % p.pid)
        p.stdin.write(json.dumps({**plan0, "lease": "none"}) + "\n")
        p.stdin.flush()
        second = json.loads(p.stdout.readline())
        p.stdin.close()
        p.wait(timeout=30)
        p.stdout.close()
        check(gpu_of(first) == gpus[3] and second.get("error") == "permission"
              and "devices cgroup" in second.get("message", ""),
              "a process moved from its devices cgroup to the root one is refused: %r, then %r"
              % (str(first)[:200], str(second)[:200]))
    finally:
        stopped(b)
        remove_cgroup(cg)


def cgroup2_mount():
    """The cgroup v2 mount where railbindd looks (hybrid: .../unified), or None."""
    with open("/proc/self/mounts") as f:
        mounts = [line.split()[1] for line in f if line.split()[2] == "cgroup2"]
    return next((m for m in ("/sys/fs/cgroup/unified", "/sys/fs/cgroup") if m in mounts), None)


def test_v2_proof(tmp):
    mnt = cgroup2_mount()
    if not mnt or not shutil.which("unshare"):
        print("SKIP: device proof: no cgroup v2 at /sys/fs/cgroup[/unified], or no unshare")
        return
    gpus = dgx_gpus()
    root = fake_root(tmp, gpus, {1: "1:7", 2: "1:8", 3: "1:9"})
    cg = os.path.join(mnt, "railbind-devtest-%d" % os.getpid())
    os.mkdir(cg)
    b = None
    a = None
    try:
        r = subprocess.run([DEVICES, "filter", cg, "1", "8", "9"], capture_output=True, text=True)
        if r.returncode:
            print("SKIP: device proof: cannot attach a device program: %s" % r.stderr.strip())
            return
        b = Broker(tmp, DGX, "--root", root)
        # A private /dev holding the stand-ins, then the cgroup, then the victim.
        dev = ("mount -t tmpfs -o mode=755 tmpfs /dev && mknod -m 666 /dev/null c 1 3 && "
               "mkdir /dev/dri && mknod -m 666 /dev/dri/renderD129 c 1 7 && "
               "mknod -m 666 /dev/dri/renderD130 c 1 8 && mknod -m 666 /dev/dri/renderD131 c 1 9")
        enter = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                 dev + ' && echo $$ > "$0/cgroup.procs" && exec "$@"', cg]
        outside = ["unshare", "-m", "--propagation", "private", "sh", "-c", dev + ' && exec "$@"',
                   "sh"]
        a = Attack(ATTACKER, "procs", b.sock, 1, 1, 1)
        check(a.n("ok") == 1, "another user holds rank 1 (GPU %s) first, by claim" % gpus[1])
        out = victim_served(b, "a cgroup v2 filter gives the victim GPU 1", rank=0, prefix=enter)
        check(out and all(x.split()[0] == gpus[1] for x in out),
              "railbind run passes its GPU node: rank 0 is GPU 1, the only one it may open: %r"
              % out[:1])
        check(not [x for x in status(b)["leases"] if x["uid"] == ATTACKER],
              "the holder by claim gave GPU 1 up: %r" % status(b)["leases"])
        r = subprocess.run([*enter, *as_user(VICTIM, [
            RAILBIND, "run", "--no-bind", "--rank", "0", "--job", "np", "--no-device-proof",
            "--", "sh", "-c", 'echo "$RAILBIND_GPU"'])], capture_output=True, text=True,
            env=clean_env(RAILBIND_SOCKET=b.sock), timeout=60)
        check(r.returncode == 0 and r.stdout.strip() == gpus[0],
              "--no-device-proof: no proof, the claim is trusted (GPU 0): %r %r"
              % (r.stdout, r.stderr[-200:]))
        for paths, owner in ((["/dev/dri/renderD129"], "devices-cgroup"), ([], "claim")):
            p = subprocess.Popen([*enter, *as_user(VICTIM, [DEVICES, "ask", b.sock, *paths])],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True)
            p.stdin.write(json.dumps({"v": 1, "op": "plan", "rank": 0, "job": "held"}) + "\n")
            p.stdin.flush()
            reply = json.loads(p.stdout.readline())
            held = [x for x in status(b)["leases"] if x["job"] == "held"]
            p.stdin.close()
            p.wait(timeout=30)
            p.stdout.close()
            check(reply.get("ok") and [x["gpu_owner"] for x in held] == [owner],
                  "a lease with %d descriptor(s) rests on %s: %.200r %r"
                  % (len(paths), owner, reply, held))
        plan0 = {"v": 1, "op": "plan", "rank": 0, "lease": "none"}
        for label, where, paths, want in (
                ("GPU 1's node", enter, ["/dev/dri/renderD129"], 1),
                ("GPU 1's node and an O_PATH one of GPU 2", enter,
                 ["/dev/dri/renderD129", "path:/dev/dri/renderD130"], 1),
                ("another device (/dev/null)", enter, ["/dev/null"], 0),
                ("an O_PATH descriptor of GPU 2, which the filter denies", enter,
                 ["path:/dev/dri/renderD130"], 0),
                ("nothing", enter, [], 0),
                ("GPU 1's node, from outside any device filter", outside,
                 ["/dev/dri/renderD129"], 0)):
            out, err = ask(where, b.sock, [plan0], *paths)
            check(out and gpu_of(out[0]) == gpus[want],
                  "a client passing %s gets GPU %d: %.200r %s" % (label, want, out, err.strip()))
        out, err = ask(enter, b.sock, [plan0], "/dev/dri/renderD130")
        check("Operation not permitted" in err and out and gpu_of(out[0]) == gpus[0],
              "the filter is real: GPU 2's node does not open in the cgroup: %r %.200r" % (err, out))
        gpus2 = ask(enter, b.sock, [{"v": 1, "op": "plan", "rank": 1, "lease": "none"}],
                    "/dev/dri/renderD129")[0]
        check(gpus2 and gpus2[0].get("error") == "no-such-rank",
              "with GPU 1 proven, it has one rank: %.200r" % gpus2)
    finally:
        if a:
            a.stop()
        if b:
            stopped(b)
        remove_cgroup(cg)


def test_descriptors_cost_nothing(tmp):
    """More descriptors than the broker takes, descriptors with half a line,
    and a connection closed with them unread: the broker holds none after."""
    b = Broker(tmp, DGX)
    try:
        tb.request(b.sock, {"v": 1, "op": "status"})
        # Settled: the connections of the start and of that request closed.
        counts = []
        wait_for(lambda: counts.append(fd_count(b.p.pid)) or counts[-3:] == [counts[-1]] * 3,
                 timeout=10, step=0.2)
        before = counts[-1]
        nulls = [os.open("/dev/null", os.O_RDONLY) for _ in range(100)]
        try:
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(b.sock)
                socket.send_fds(s, [b'{"v":1,"op":"plan","rank":0,"lease":"none"}\n'], nulls)
                reply = json.loads(tb.read_line(s))
            check(reply.get("ok") and gpu_of(reply) == dgx_gpus()[0],
                  "100 descriptors with a request: answered, no proof taken: %.200r" % reply)
            for tail in (b"{", b"x"):
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(b.sock)
                    socket.send_fds(s, [tail], nulls[:10])
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(b.sock)
                socket.send_fds(s, [b"\n"], nulls[:64])
                socket.send_fds(s, [b"\n"], nulls[:64])
                tb.request(b.sock, {"v": 1, "op": "status"})
        finally:
            for fd in nulls:
                os.close(fd)
        check(wait_for(lambda: fd_count(b.p.pid) == before, timeout=10),
              "the broker holds no descriptor it was sent: %d before, %d after"
              % (before, fd_count(b.p.pid)))
    finally:
        stopped(b)


def main():
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("SKIP: the devices suite needs root and setpriv (a real second uid, cgroups)")
        print("0 passed, 0 failed")
        return 0
    base = tempfile.mkdtemp(prefix="railbind-devices.")
    os.chmod(base, 0o755)
    return tb.run_isolated(base, (test_v1_fail_closed, test_v2_proof,
                                  test_descriptors_cost_nothing), "devices")


RAILBIND = tb.RAILBIND

if __name__ == "__main__":
    sys.exit(main())
