#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""railbindd under faults: a full and a read-only state directory, wall-clock jumps.

State directory: a small tmpfs mounted in a private mount namespace (run.sh
starts this script under `unshare -m`, or `unshare -r -m` when not root; the
cases are skipped, and said so, when no mount is possible). Asserted: leases
are still served, the save error is logged once and not per lease, the last
good leases.json stays whole (a restart reads it), and the file is written
again once space returns.

Clock: libfaketime (LD_PRELOAD, its timestamp file re-read on every call)
moves the broker's wall clock a year forward and back while it holds leases,
an idle connection and a half-sent request: none of them may end early or
late. A control run with the monotonic clock moved too shows the jump
reaches the broker's clock reads (else the test proves nothing).
Closing line: "N passed, N failed".
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_broker as tb  # noqa: E402  (the same Broker, request, run helpers)
from test_broker import (Broker, check, clean_env, connect, read_line, request,  # noqa: E402
                         wait_for)

RAILBIND = tb.RAILBIND
SAVE_ERR = "cannot save the leases"
FAKETIME_LIBS = ("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
                 "/usr/lib/faketime/libfaketime.so.1")


def leases(b):
    return sorted((l["job"], l["rank"], l["pid"])
                  for l in request(b.sock, {"v": 1, "op": "status"})["leases"])


def hold(sock, job, rank):
    return subprocess.Popen([RAILBIND, "run", "--no-bind", "--job", job, "--rank", str(rank),
                             "--", "sleep", "120"], env=clean_env(RAILBIND_SOCKET=sock))


def log_count(tmp, text):
    with open(os.path.join(tmp, "broker.log"), errors="replace") as f:
        return f.read().count(text)


def fill(path):
    """Fill the filesystem of @path: write until ENOSPC."""
    fd = os.open(os.path.join(path, "fill"), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while os.write(fd, b"\0" * 4096) > 0:
            pass
    except OSError:
        pass
    os.close(fd)


def can_mount(tmp):
    d = os.path.join(tmp, "probe")
    os.mkdir(d)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", d],
                       capture_output=True)
    if r.returncode == 0:
        subprocess.run(["umount", d])
    return r.returncode == 0


def test_state_full(tmp):
    if not can_mount(tmp):
        print("SKIP: no mount namespace here (run through tests/broker/faults.sh)")
        return
    mnt = os.path.join(tmp, "run")
    os.mkdir(mnt)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0755", "tmpfs", mnt], check=True)
    state = os.path.join(mnt, "railbind")
    os.mkdir(state, 0o755)
    lf = os.path.join(state, "leases.json")
    holders = []
    b = Broker(tmp, tb.DGX, "--state-dir", state)
    try:
        holders.append(hold(b.sock, "f", 0))
        check(wait_for(lambda: len(leases(b)) == 1), "a lease is taken before the disk fills")
        with open(lf, "rb") as f:
            good = f.read()
        check(json.loads(good)["leases"][0]["rank"] == 0, "leases.json holds it")
        fill(mnt)
        holders += [hold(b.sock, "f", 1), hold(b.sock, "f", 2)]
        check(wait_for(lambda: len(leases(b)) == 3),
              "disk full: new leases are still served (%r)" % leases(b))
        env = clean_env(RAILBIND_SOCKET=b.sock)
        for i in range(5):  # each takes a lease and gives it back: 10 saves
            r = tb.run(["run", "--no-bind", "--job", "g", "--rank", str(i), "--", "true"], env=env)
            check(r.returncode == 0, "disk full: railbind run %d succeeds: %r" % (i, r.stderr))
        check(log_count(tmp, SAVE_ERR) == 1,
              "disk full: the error is logged once, not per lease (%d)" % log_count(tmp, SAVE_ERR))
        with open(lf, "rb") as f:
            check(f.read() == good, "disk full: the last good leases.json is untouched")
        check(not os.path.exists(lf + ".tmp"), "disk full: no partial copy left behind")
        # A restart (kill -9, still full) reads the last good state.
        b.p.kill()
        b.p.wait()
        b.log.close()
        b = Broker(tmp, tb.DGX, "--state-dir", state)
        check(leases(b) == [("f", 0, holders[0].pid)],
              "restart on a full disk: the last good state is read back (%r)" % leases(b))
        os.unlink(os.path.join(mnt, "fill"))
        holders.append(hold(b.sock, "f", 3))

        def saved():
            try:
                with open(lf) as f:
                    return sorted(l["rank"] for l in json.load(f)["leases"]) == [0, 3]
            except (OSError, ValueError):
                return False
        check(wait_for(saved, 5), "space back: leases.json is written again with the new lease")
        check(log_count(tmp, "saved the leases") >= 1, "space back: the recovery is logged")
        # Read-only: the same, then writable again.
        subprocess.run(["mount", "-o", "remount,ro", mnt], check=True)
        before = log_count(tmp, SAVE_ERR)
        with open(lf, "rb") as f:
            good = f.read()
        holders.append(hold(b.sock, "f", 4))
        check(wait_for(lambda: len(leases(b)) == 3), "read-only: leases still served")
        for i in range(3):
            tb.run(["run", "--no-bind", "--job", "g", "--rank", str(i), "--", "true"], env=env)
        check(log_count(tmp, SAVE_ERR) - before == 1 and log_count(tmp, "Read-only") == 1,
              "read-only: one error line (%d)" % (log_count(tmp, SAVE_ERR) - before))
        with open(lf, "rb") as f:
            check(f.read() == good, "read-only: leases.json untouched")
        subprocess.run(["mount", "-o", "remount,rw", mnt], check=True)

        def saved4():
            try:
                with open(lf) as f:
                    return sorted(l["rank"] for l in json.load(f)["leases"]) == [0, 3, 4]
            except (OSError, ValueError):
                return False
        check(wait_for(saved4, 5), "writable again: leases.json catches up")
    finally:
        for h in holders:
            h.kill()
            h.wait()
        b.stop()
        subprocess.run(["umount", "-l", mnt])


def faketime_env(tmp, monotonic):
    lib = next((l for l in FAKETIME_LIBS if os.path.exists(l)), None)
    if not lib:
        return None, None
    stamp = os.path.join(tmp, "faketime")
    with open(stamp, "w") as f:
        f.write("+0\n")
    env = dict(os.environ, LD_PRELOAD=lib, FAKETIME_TIMESTAMP_FILE=stamp, FAKETIME_NO_CACHE="1")
    if not monotonic:
        env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
    return env, stamp


def jump(stamp, offset):
    with open(stamp + ".new", "w") as f:
        f.write(offset + "\n")
    os.rename(stamp + ".new", stamp)


def is_open(s):
    """True while the broker keeps @s open (nothing to read, no EOF)."""
    s.settimeout(0.05)
    try:
        return s.recv(1, socket.MSG_PEEK) != b""
    except socket.timeout:
        return True
    except OSError:
        return False


def test_clock_jumps(tmp):
    env, stamp = faketime_env(tmp, monotonic=False)
    if not env:
        print("SKIP: libfaketime not found (apt-get install faketime)")
        return
    b = Broker(tmp, tb.DGX, "--idle-timeout", "3000", "--request-timeout", "2000", env=env)
    holder = hold(b.sock, "c", 0)
    try:
        check(wait_for(lambda: len(leases(b)) == 1), "clock: a pid lease is held")
        conn = connect(b.sock, timeout=5)
        conn.sendall(b'{"v":1,"op":"plan","rank":1,"lease":"conn"}\n')
        check(json.loads(read_line(conn)).get("lease", {}).get("until") == "close",
              "clock: a connection lease is held")
        idle = connect(b.sock)
        half = connect(b.sock)
        t0 = time.time()
        half.sendall(b'{"v":1,"op":')
        time.sleep(0.2)
        jump(stamp, "+365d")
        time.sleep(0.8)
        check(is_open(idle) and is_open(half),
              "a year forward on the wall clock: no idle or request timeout fires early")
        check(len(leases(b)) == 2, "a year forward: both leases still held")
        jump(stamp, "-365d")
        check(len(leases(b)) == 2 and is_open(conn),
              "a year back: both leases still held (%r)" % leases(b))
        half.settimeout(5)
        line = read_line(half)
        waited = time.time() - t0
        check(b'"timeout"' in line and 1.9 < waited < 3.5,
              "a year back: the half request still times out on time (%.2fs)" % waited)
        check(wait_for(lambda: not is_open(idle), 3.0) and time.time() - t0 < 5.0,
              "a year back: the idle connection still closes on time (%.2fs)" % (time.time() - t0))
        # The lease connection was as silent: the idle timeout closes it and
        # its lease with it, on the monotonic clock too.
        conn.close()
        check(wait_for(lambda: len(leases(b)) == 1), "the connection lease ends with its connection")
        holder.kill()
        holder.wait()
        check(wait_for(lambda: not leases(b)), "the pid lease ends with its process")
    finally:
        holder.kill()
        holder.wait()
        b.stop()
    # Control: the monotonic clock moved as well must close the idle
    # connection at once, or the jump never reached the broker.
    env, stamp = faketime_env(tmp, monotonic=True)
    b = Broker(tmp, tb.DGX, "--idle-timeout", "30000", env=env)
    try:
        idle = connect(b.sock)
        time.sleep(0.3)
        jump(stamp, "+1d")
        check(wait_for(lambda: not is_open(idle), 3.0),
              "control: a monotonic jump does reach the broker (the idle connection closes)")
    finally:
        jump(stamp, "+0")
        b.stop()


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_out_of_fds(tmp):
    """More clients than descriptors: the broker sizes its client count to its
    descriptor limit (so accept() and /proc reads never fail for lack of one),
    refuses the rest with one "overloaded" line instead of spinning or
    hanging, keeps serving, and takes new clients once others leave."""
    b = Broker(tmp, tb.DGX, wrap=("prlimit", "--nofile=32:32", "--"))
    conns, lines = [], []
    try:
        for _ in range(60):
            conns.append(connect(b.sock))
        time.sleep(0.3)
        c0 = cpu_seconds(b.p.pid)
        time.sleep(1.5)
        used = cpu_seconds(b.p.pid) - c0
        check(used < 0.5, "out of fds: broker used %.2f s CPU in 1.5 s (a spin uses ~1.5)" % used)
        check(log_count(tmp, "open files limited to 32") == 1,
              "out of fds: the smaller client count is said once at start (%d)"
              % log_count(tmp, "open files limited to 32"))
        check(log_count(tmp, "accept:") == 0,
              "out of fds: accept() never ran out (%d logged)" % log_count(tmp, "accept:"))
        for s in conns:
            s.settimeout(0.2)
            try:
                lines.append(s.recv(4096))
            except socket.timeout:
                lines.append(None)    # accepted: nothing to say until asked
        taken = [s for s, line in zip(conns, lines) if line is None]
        refused = [line for line in lines if line is not None]
        check(taken and refused and all(b'"overloaded"' in line and b"--max-" in line
                                        for line in refused),
              "out of fds: %d taken, %d refused with one overloaded line each (%r)"
              % (len(taken), len(refused), refused[:1]))
        s = taken[0]
        s.settimeout(3.0)
        s.sendall(b'{"v":1,"op":"status"}\n')
        check(json.loads(read_line(s)).get("ok") is True, "out of fds: an accepted client is served")
        for s in conns:
            s.close()
        check(wait_for(lambda: request(b.sock, {"v": 1, "op": "status"}).get("ok") is True),
              "out of fds: a new client is served once the others left")
    finally:
        for s in conns:
            s.close()
        check(b.stop() == 0, "out of fds: clean exit")


def main():
    logs = os.path.join(tb.BUILD, "logs")
    os.makedirs(logs, exist_ok=True)
    base = tempfile.mkdtemp(prefix="faults.", dir=logs)
    os.chmod(base, 0o755)
    return tb.run_isolated(base, (test_state_full, test_clock_jumps, test_out_of_fds), "faults")


if __name__ == "__main__":
    sys.exit(main())
