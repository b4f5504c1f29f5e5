#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""railbindd against hostile local users (issue 15).

The broker runs as root on a 0666 socket, as on a node. Attackers are real
other uids (setpriv --reuid): ATTACKER and ATTACKER2, running
broker_hostile (tests/broker/hostile.c). The victim is a third uid running
`railbind run` as a rank would. Under each attack the victim must be
served by the broker ten times out of ten, each run within 3 s; the attack
must also show that it met the limit meant for it (its counts), so a
test that did not attack cannot pass.

Attacks: connection slots and watchers (and a full broker, where the
heaviest user gives way); leases by the thousand from one process and from
hundreds (descriptors, state writes); 300 half-closed clients that never
read (RSS bound); a reused pid (nothing of the victim's may reach the
attacker); a truncated topology and a reload; plan-cache busting; control
characters in job names, a planted temp-file symlink, a forged lease file,
a FIFO and a device as the lease file, a FIFO as --input with SIGTERM;
GPU ownership between users (gpu-sharing, the devices cgroup); issue 25's:
invisible characters and lenient JSON, lease churn against the log, and
processes with a huge environment asking with GPU claims.
Needs root and setpriv (skipped, and said so, otherwise).
Closing line: "N passed, N failed".
"""
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_broker as tb  # noqa: E402  (the same Broker, request, check helpers)
from test_broker import (Broker, check, clean_env, connect, read_line, request,  # noqa: E402
                         wait_for)

RAILBIND = tb.RAILBIND
RAILBINDD = tb.RAILBINDD
HOSTILE = os.environ["HOSTILE"]
DGX = tb.DGX
VICTIM, ATTACKER, ATTACKER2 = 64101, 64102, 64103
# What 300 half-closed flooders may cost the broker in all: its own ~10 MiB,
# the per-user limit of unread replies (4 MiB), their 256 connections'
# buffers (4 KiB of request each, reply buffers that held at most 64 KiB).
RSS_BOUND_KB = 32 * 1024
VICTIM_RUNS, VICTIM_SECONDS = 10, 3.0


def as_user(uid, cmd):
    return ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups", "--", *cmd]


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return -1


def fd_count(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def log_text(tmp):
    with open(os.path.join(tmp, "broker.log"), errors="replace") as f:
        return f.read()


def stopped(b):
    """SIGTERM: the broker must exit 0 (a sanitizer's report or a crash would not)."""
    rc = b.stop()
    check(rc == 0, "the broker survived and exits 0 on SIGTERM (%s)" % rc)


def status(b):
    return request(b.sock, {"v": 1, "op": "status"}, timeout=5)


def user(b, uid):
    return next((u for u in status(b)["users"] if u["uid"] == uid), {})


class Attack:
    """broker_hostile MODE SOCKET ARGS as @uid; its counts once it is ready."""

    def __init__(self, uid, mode, sock, *args):
        self.p = subprocess.Popen(as_user(uid, [HOSTILE, mode, sock, *map(str, args)]),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.line = self.p.stdout.readline().strip()
        words = self.line.split()
        self.counts = {words[i]: words[i + 1] for i in range(0, len(words) - 1, 2)}

    def n(self, key):
        return int(self.counts.get(key, -1))

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
        try:
            self.p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.p.stdout.close()
        self.p.stderr.close()


def victim_served(b, label, rank=0, env_extra=None, prefix=()):
    """VICTIM_RUNS runs of `railbind run` as the victim: each served by the
    broker (not the fallback), exit 0, within VICTIM_SECONDS."""
    env = clean_env(RAILBIND_SOCKET=b.sock, **(env_extra or {}))
    bad, slowest, out = [], 0.0, []
    for i in range(VICTIM_RUNS):
        t0 = time.time()
        r = subprocess.run([*prefix, *as_user(VICTIM, [
            RAILBIND, "run", "--no-bind", "--rank", str(rank), "--job", "victim", "--input", DGX,
            "-v", "--", "sh", "-c", 'echo "$RAILBIND_GPU $RAILBIND_CPUS"'])],
            capture_output=True, text=True, env=env, timeout=60)
        dt = time.time() - t0
        slowest = max(slowest, dt)
        out.append(r.stdout.strip())
        if r.returncode or dt > VICTIM_SECONDS or "source broker" not in r.stderr:
            bad.append("run %d: exit %d in %.2fs: %s" % (i, r.returncode, dt, r.stderr.strip()[-160:]))
    check(not bad, "%s: the victim is served by the broker %d/%d, each within %gs (slowest %.2fs) %s"
          % (label, VICTIM_RUNS - len(bad), VICTIM_RUNS, VICTIM_SECONDS, slowest, bad[:2]))
    return out


def test_connection_slots(tmp):
    """1: every slot a user can take. Two users open 4,096 connections each
    and try to watch on all of them, against a broker under systemd's
    descriptor limit; then a broker whose --max-clients they fill between
    them."""
    b = Broker(tmp, DGX, wrap=("prlimit", "--nofile=4160:4160", "--"))
    attacks = []
    try:
        attacks = [Attack(ATTACKER, "conns", b.sock, 4096, "watch"),
                   Attack(ATTACKER2, "conns", b.sock, 4096)]
        a, a2 = attacks
        check(0 < a.n("connected") <= 256 and a.n("refused") >= 4096 - 256
              and 0 < a.n("watching") <= 16 and a.n("watch_refused") > 0,
              "4,096 watch connections: 256 taken, 16 watching, the rest refused (%s)" % a.line)
        check(0 < a2.n("connected") <= 256 and a2.n("refused") >= 4096 - 256,
              "a second user: 256 of 4,096 taken (%s)" % a2.line)
        check(user(b, ATTACKER).get("clients", 0) <= 256 and fd_count(b.p.pid) < 4160 - 64,
              "the broker keeps descriptors to spare: %d open" % fd_count(b.p.pid))
        victim_served(b, "connection and watcher flood")
    finally:
        for x in attacks:
            x.stop()
        stopped(b)
    # A full broker: the user with the most connections gives way.
    tmp2 = os.path.join(tmp, "full")
    os.mkdir(tmp2, 0o755)
    b = Broker(tmp2, DGX, "--max-clients", "300")
    attacks = []
    try:
        attacks = [Attack(ATTACKER, "conns", b.sock, 300), Attack(ATTACKER2, "conns", b.sock, 300)]
        st = status(b)
        held = {u["uid"]: u["clients"] for u in st["users"]}
        check(st["broker"]["clients"] >= 299 and held.get(ATTACKER2, 0) >= 40,
              "--max-clients 300 filled by two users, the second not shut out: %r" % held)
        victim_served(b, "a broker full of two users' connections")
        check("closing uid" in log_text(tmp2), "the broker says whose connection gave way")
    finally:
        for x in attacks:
            x.stop()
        stopped(b)


def test_leases(tmp):
    """2: leases by the thousand. One process asks 4,300 (distinct jobs, on
    every rank, the victim's GPU included); another user's 300 processes one
    each. Descriptors stay few, the state file is not rewritten per lease,
    the victim is served on a GPU they hold (nothing assigns GPUs here, so
    their leases lock nobody out: test_gpu_ownership), and the service is
    back at once when the attackers go."""
    b = Broker(tmp, DGX, wrap=("prlimit", "--nofile=4160:4160", "--"))
    attacks = []
    try:
        fds0 = fd_count(b.p.pid)
        a = Attack(ATTACKER, "leases", b.sock, 4300, 0, 7)
        attacks.append(a)
        check(a.n("ok") == 256 and a.n("overloaded") == 4300 - 256,
              "one process, 4,300 leases: 256 granted (--max-user-leases), the rest overloaded (%s)"
              % a.line)
        check(fd_count(b.p.pid) <= fds0 + 2,
              "256 leases of one process cost one descriptor, not 256 (%d -> %d)"
              % (fds0, fd_count(b.p.pid)))
        a2 = Attack(ATTACKER2, "procs", b.sock, 300, 0, 7)
        attacks.append(a2)
        check(a2.n("ok") == 256 and a2.n("overloaded") == 300 - 256,
              "300 processes of another user: 256 leases, 44 overloaded (%s)" % a2.line)
        st = status(b)
        check(st["broker"]["watched_processes"] == 257 and fd_count(b.p.pid) < fds0 + 300,
              "one pidfd per process (%d watched, %d descriptors)"
              % (st["broker"]["watched_processes"], fd_count(b.p.pid)))
        victim_served(b, "4,556 leases held by two users")
        def saved():
            with open(os.path.join(tmp, "leases.json")) as f:
                return len(json.load(f)["leases"])
        check(wait_for(lambda: saved() == 512), "leases.json holds the 512 pid leases (%d)" % saved())
        for x in attacks:
            x.stop()
        attacks = []
        t0 = time.time()
        gone = wait_for(lambda: not status(b)["leases"], 5)
        check(gone and time.time() - t0 < 3,
              "the attackers' 512 leases end with their processes (%.2fs)" % (time.time() - t0))
        victim_served(b, "right after the lease holders exit")
    finally:
        for x in attacks:
            x.stop()
        stopped(b)


def test_memory(tmp):
    """3: 300 connections each send 310 audit requests, half-close and never
    read. The broker's RSS stays under RSS_BOUND_KB and the flooders are
    closed after the reply timeout."""
    b = Broker(tmp, DGX)
    a = None
    try:
        rss0 = rss_kb(b.p.pid)
        a = Attack(ATTACKER, "flood", b.sock, 300, 310)
        check(a.n("half_closed") == 256,
              "300 half-closed flooders: 256 connected (the per-user limit) (%s)" % a.line)
        peak = rss_kb(b.p.pid)
        victim_served(b, "300 half-closed flooders")
        for _ in range(10):
            peak = max(peak, rss_kb(b.p.pid))
            time.sleep(0.1)
        print("memory: broker RSS %d KiB before, %d KiB at most under 300 half-closed flooders"
              % (rss0, peak))
        check(peak < RSS_BOUND_KB, "RSS under the flood: %d KiB (from %d; bound %d KiB)"
              % (peak, rss0, RSS_BOUND_KB))
        check(user(b, ATTACKER).get("queued_bytes", 0) <= 4 * 1024 * 1024 + 65536,
              "the flooder's unread replies stay within --max-user-queued (%r)" % user(b, ATTACKER))
        check(wait_for(lambda: not user(b, ATTACKER).get("clients"), 10),
              "clients that take no reply are closed after --reply-timeout (%r)" % user(b, ATTACKER))
    finally:
        if a:
            a.stop()
        stopped(b)


def test_pid_reuse(tmp):
    """4: a client connects and exits; a victim process gets its pid. The
    attacker's socket must get nothing of the victim's: no environment, no
    plan from its CPUs, no lease on its pid. With SO_PEERPIDFD and with the
    pid+start-time pinning of older kernels (--no-peer-pidfd)."""
    secret = "7,5"
    for extra in ((), ("--no-peer-pidfd",)):
        name = "pidfd" if not extra else "start time"
        d = os.path.join(tmp, name.replace(" ", "-"))
        os.mkdir(d, 0o755)
        b = Broker(d, DGX, "--limits", "on", *extra)
        try:
            r = subprocess.run([HOSTILE, "pidreuse", b.sock, str(VICTIM), str(ATTACKER), secret],
                               capture_output=True, text=True, timeout=60)
            if r.returncode == 2 and "cannot start a process as pid" in r.stderr:
                print("SKIP: pid reuse (%s): clone3 set_tid refused here: %s" % (name, r.stderr.strip()))
                continue
            lines = r.stdout.splitlines()
            replies = [json.loads(x) for x in lines if x.startswith("{")]
            victim = int(lines[-1].split()[1]) if lines and lines[-1].startswith("victim_pid") else -1
            check(r.returncode == 0 and len(replies) == 4 and victim > 0,
                  "pid reuse (%s): the attack ran (%r %r)" % (name, lines[:1], r.stderr[-200:]))
            check(secret not in r.stdout and secret not in log_text(d),
                  "pid reuse (%s): the victim's CUDA_VISIBLE_DEVICES reaches neither the attacker nor the log" % name)
            check(all(x.get("error") == "permission" for x in replies[:3]),
                  "pid reuse (%s): no plan and no lease for the reused pid: %r" % (name, replies[:3]))
            st = status(b)
            check(not [l for l in st["leases"] if l["pid"] == victim or l["uid"] == ATTACKER],
                  "pid reuse (%s): no lease ties the victim's pid to the attacker: %r"
                  % (name, st["leases"]))
            check(len(replies) == 4 and replies[3].get("ok") and replies[3]["leases"] == [],
                  "pid reuse (%s): status still answers the attacker, with none of it" % name)
        finally:
            stopped(b)


def test_reload(tmp):
    """5: a truncated --input and SIGHUP: the last good plan is served, the
    failure is in status and in the log; a good file and SIGHUP recover."""
    inp = os.path.join(tmp, "node.xml")
    shutil.copy(DGX, inp)
    b = Broker(tmp, inp)
    try:
        before = victim_served(b, "before the bad reload")
        with open(DGX, "rb") as f:
            data = f.read()
        with open(inp + ".new", "wb") as f:
            f.write(data[:len(data) // 3])
        os.rename(inp + ".new", inp)
        os.kill(b.p.pid, signal.SIGHUP)
        check(wait_for(lambda: status(b)["refresh"]["ok"] is False),
              "a truncated topology: status says the refresh failed")
        st = status(b)
        check(st["ranks"] == 8 and inp in (st["refresh"]["error"] or "")
              and st["refresh"]["reason"] == "SIGHUP",
              "status names the file and keeps the 8 ranks: %r" % st["refresh"])
        check("keeping the last good one" in log_text(tmp), "the log says the last good plan is kept")
        after = victim_served(b, "after a truncated topology and SIGHUP")
        check(after == before, "the victim gets the same plan as before the bad reload")
        r = tb.run(["status", "--reload", "-s", b.sock])
        check(r.returncode == 1 and "keeping" in r.stderr,
              "railbind status --reload says the reload failed: %r" % r.stderr)
        shutil.copy(DGX, inp + ".new")
        os.rename(inp + ".new", inp)
        os.kill(b.p.pid, signal.SIGHUP)
        check(wait_for(lambda: status(b)["refresh"]["ok"] is True),
              "a good file and SIGHUP: the refresh is ok again")
    finally:
        stopped(b)


def test_cache_busting(tmp):
    """6: two users ask plans as fast as they can, cycling through the 255
    sets of GPUs, each written in a new way ("7,3,7"). One set of GPUs is
    one cache entry, new plans are rationed per connection and per user,
    requests per user: the victim's latency holds."""
    b = Broker(tmp, DGX)
    attacks = []
    try:
        attacks = [Attack(ATTACKER, "bust", b.sock, 8), Attack(ATTACKER2, "bust", b.sock, 8)]
        victim_served(b, "plan-cache busting by two users")
        res = []
        for x in attacks:
            out = x.p.stdout.readline().split()
            res.append({out[i]: out[i + 1] for i in range(0, len(out) - 1, 2)})
        check(all(int(r.get("overloaded", 0)) > 0 and int(r.get("requests", 0)) > 500 for r in res),
              "the busters asked fast and were rationed: %r" % res)
        # --max-user-rate 2000 a second, 4000 saved up: the rest waited.
        check(all(int(r.get("requests", 0)) <= 8 * 2000 + 4000 + 500 for r in res),
              "each buster was read at most 2,000 requests a second: %r" % res)
    finally:
        for x in attacks:
            x.stop()
        stopped(b)


def test_strings_and_files(tmp):
    """7: job names with control characters; a symlink planted as the
    temporary lease file; a forged lease file; a FIFO and a device as the
    lease file; a FIFO as --input and SIGTERM during start."""
    sdir = os.path.join(tmp, "state")
    os.mkdir(sdir, 0o755)
    target = os.path.join(tmp, "target")
    with open(target, "w") as f:
        f.write("precious\n")
    os.symlink(target, os.path.join(sdir, "leases.json.tmp"))
    b = Broker(tmp, DGX, "--state-dir", sdir)
    holder = None
    try:
        for job in ("a\nrailbindd: forged line", "\x1b[31mred", "rtl\u202eexe.txt", "x" * 129):
            r = request(b.sock, {"v": 1, "op": "plan", "rank": 0, "job": job, "lease": "conn"})
            check(r.get("error") == "invalid", "job %r is refused: %r" % (job[:20], r))
        # Issue 25: invisible characters by class (Cf, Default_Ignorable,
        # noncharacters), each one the hand-picked list let pass.
        for ch in ("\u061c", "\u00ad", "\u115f", "\u180e", "\ufff9", "\uffff", "\u200b"):
            r = request(b.sock, {"v": 1, "op": "plan", "rank": 0, "job": "def%sault" % ch,
                                 "lease": "conn"})
            check(r.get("error") == "invalid", "job def U+%04X ault is refused: %r" % (ord(ch), r))
        # Issue 25: lenient JSON, as raw lines: json-c took each as a request.
        for line in (b"{'v':1,'op':'plan','rank':0,'lease':'none'}",
                     b'{"v":1,"op":"plan","rank":0,"lease":"none",}',
                     b'/* x */{"v":1,"op":"plan","rank":0,"lease":"none"}',
                     b'{"v":1,"op":"plan","rank":0,"lease":"none"}/* x */',
                     b'{"v":1,"op":"plan","rank":0,"lease":"conn","job":"a\\ud800b"}',
                     b'{"v":1,"op":"plan","rank":0,"lease":"conn","job":"a\\udfffb"}'):
            r = request(b.sock, line)
            check(r.get("error") == "malformed", "lenient JSON %r is malformed: %r" % (line[:40], r))
        check(not status(b)["leases"], "no lease came of a refused request")
        check("forged line" not in log_text(tmp) and "\x1b" not in log_text(tmp),
              "nothing of a refused job name reaches the log")
        holder = subprocess.Popen([RAILBIND, "run", "--no-bind", "--job", "real", "--rank", "0",
                                   "--", "sleep", "60"], env=clean_env(RAILBIND_SOCKET=b.sock))
        check(wait_for(lambda: os.path.exists(os.path.join(sdir, "leases.json")) and
                       "real" in open(os.path.join(sdir, "leases.json")).read()),
              "a lease is saved beside the planted symlink")
        with open(target) as f:
            check(f.read() == "precious\n", "the planted leases.json.tmp symlink is not followed")
        mode = os.stat(os.path.join(sdir, "leases.json")).st_mode
        check(stat.S_IMODE(mode) == 0o600, "leases.json is the broker's alone (%o)" % stat.S_IMODE(mode))
        stopped(b)
        # A forged lease file: the live lease, and records no client could send.
        with open(os.path.join(sdir, "leases.json")) as f:
            good = json.load(f)["leases"][0]
        bad = [dict(good, job="a\x07b"), dict(good, job="x" * 200), dict(good, pid=-5),
               dict(good, uid="root"), dict(good, rank=10 ** 9), dict(good, gpu="\u202e" * 3),
               dict(good, cpus="0-3;rm"), "not an object"]
        records = [json.dumps(x).encode() for x in [good] + bad]
        # A surrogate in raw bytes: no JSON library writes one, a forger can.
        records.append(json.dumps(dict(good, job="BADUTF8")).encode()
                       .replace(b"BADUTF8", b"\xed\xa0\x80"))
        with open(os.path.join(sdir, "leases.json"), "wb") as f:
            f.write(b'{"schema":"railbind.leases/1","leases":[' + b",".join(records) + b"]}\n")
        b = Broker(tmp, DGX, "--state-dir", sdir)
        r = subprocess.run([RAILBIND, "status", "--json", "-s", b.sock], capture_output=True)
        try:
            st = json.loads(r.stdout.decode("utf-8", errors="strict"))
            kept = [(l["job"], l["pid"]) for l in st["leases"]]
        except (ValueError, KeyError) as e:
            kept = repr(e)
        check(kept == [("real", holder.pid)],
              "a forged lease file: only the well-formed live lease is kept: %r" % (kept,))
        check("malformed" in log_text(tmp), "the dropped records are logged, counted")
        stopped(b)
        holder.kill()
        holder.wait()
        holder = None
        # Not a file: a FIFO, a device. The start goes on, and says why.
        lf = os.path.join(sdir, "leases.json")
        for kind in ("fifo", "device"):
            os.unlink(lf)
            if kind == "fifo":
                os.mkfifo(lf, 0o600)
            else:
                os.mknod(lf, 0o600 | stat.S_IFCHR, os.makedev(1, 5))   # /dev/zero
            t0 = time.time()
            b = Broker(tmp, DGX, "--state-dir", sdir)
            dt = time.time() - t0
            check(dt < 3 and rss_kb(b.p.pid) < 64 * 1024,
                  "leases.json as a %s: started in %.2fs, RSS %d KiB" % (kind, dt, rss_kb(b.p.pid)))
            stopped(b)
            check(log_text(tmp).count("not a regular file") >= (1 if kind == "fifo" else 2),
                  "leases.json as a %s: the log says it is not a regular file" % kind)
        os.unlink(lf)
    finally:
        if holder:
            holder.kill()
            holder.wait()
        if b.p.poll() is None:
            stopped(b)
    # --input FIFO: whatever the reader does with it, SIGTERM ends the start.
    fifo = os.path.join(tmp, "input.fifo")
    os.mkfifo(fifo)
    log = open(os.path.join(tmp, "fifo.log"), "wb")
    p = subprocess.Popen([RAILBINDD, "--foreground", "--input", fifo, "--socket",
                          os.path.join(tmp, "fifo.sock"), "--state-dir", tmp], stderr=log)
    time.sleep(0.5)
    p.terminate()
    try:
        p.wait(timeout=2)
        ended = True
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        ended = False
    log.close()
    check(ended, "--input FIFO: SIGTERM ends the broker while it starts")


def test_watcher_overflow(tmp):
    """A watcher that never reads, of a user over --max-user-queued: one
    error line, then closed (not dropped silently)."""
    inp = os.path.join(tmp, "node.xml")
    shutil.copy(DGX, inp)
    b = Broker(tmp, inp, "--max-user-queued", "16K", "--reply-timeout", "30000")
    a = None
    try:
        a = Attack(ATTACKER, "overflow", b.sock, 400)
        check(a.n("sent") > 0 and wait_for(lambda: user(b, ATTACKER).get("queued_bytes", 0) >= 16384),
              "the attacker leaves more than 16K unread (%s, %r)" % (a.line, user(b, ATTACKER)))
        shutil.copy(tb.SMALL, inp + ".new")
        os.rename(inp + ".new", inp)
        os.kill(b.p.pid, signal.SIGHUP)
        lines = [a.p.stdout.readline().strip() for _ in range(2)]
        check(lines[0].startswith("got {") and '"overloaded"' in lines[0] and "unread" in lines[0]
              and lines[1] == "end",
              "the watcher gets one overloaded line, then the end: %r" % [x[:120] for x in lines])
        check(wait_for(lambda: user(b, ATTACKER).get("watchers", 0) == 0),
              "and the watcher is gone: %r" % user(b, ATTACKER))
        victim_served(b, "a user over its unread-bytes limit")
    finally:
        if a:
            a.stop()
        stopped(b)


def test_log_budget(tmp):
    """Issue 25: 5 s of lease churn by one user (a process after another
    takes a pid lease and exits: two lines each) writes under 1,000 broker
    log lines, one of them saying how many were suppressed; another user's
    lease lines meanwhile are not suppressed."""
    b = Broker(tmp, DGX)
    a = None
    try:
        before = log_text(tmp).count("\n")
        a = Attack(ATTACKER, "churn", b.sock, 5)
        victim_served(b, "lease churn by another user")
        out = a.p.stdout.readline().split()
        res = {out[i]: out[i + 1] for i in range(0, len(out) - 1, 2)}
        a.stop()
        a = None
        check(int(res.get("ok", 0)) >= 500,
              "the churn took at least 500 leases in 5 s (1,000 lines unbounded): %r" % res)
        said = "uid %d: " % ATTACKER
        check(wait_for(lambda: said in log_text(tmp) and "lines suppressed" in log_text(tmp), 15),
              "the broker says how many of uid %d's lines it suppressed" % ATTACKER)
        text = log_text(tmp)
        lines = text.count("\n") - before
        summaries = [l for l in text.splitlines() if l.startswith("railbindd: " + said)]
        print("log budget: %s leases churned, %d log lines, %r" % (res.get("ok"), lines, summaries))
        check(lines < 1000, "5 s of lease churn: %d broker log lines (bound 1,000)" % lines)
        check(len(summaries) == 1 and int(summaries[0].split()[3]) > 0,
              "one suppression line for the churning uid: %r" % summaries)
        check(text.count("uid %d holds job victim" % VICTIM) >= VICTIM_RUNS,
              "the victim's own lease lines are all there (%d)"
              % text.count("uid %d holds job victim" % VICTIM))
    finally:
        if a:
            a.stop()
        stopped(b)


# Another user's plans, on one connection, while an attack runs: latencies (ms).
PLAN_TIMER = r"""
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile("rb")
req = json.dumps({"v": 1, "op": "plan", "rank": 0, "lease": "none", "visible": "0"}).encode() + b"\n"
lat, bad, end = [], [], time.time() + float(sys.argv[2])
while time.time() < end:
    t0 = time.perf_counter(); s.sendall(req); r = json.loads(f.readline())
    lat.append((time.perf_counter() - t0) * 1000)
    if not r.get("ok"): bad.append(r)
    time.sleep(0.005)
lat.sort()
print(json.dumps({"n": len(lat), "p50": lat[len(lat) // 2], "p99": lat[int(len(lat) * 0.99)],
                  "bad": bad[:2]}))
"""
# A loose bound for a loaded 2-core CI machine; the old broker took ~2 s (bench/: the real numbers).
PLAN_P99_MS = 50


def test_environ_flood(tmp):
    """Issue 25: a user whose processes have a huge environment (63 MiB by
    prctl where root may, else the kernel's 6 MiB under an unlimited stack),
    20 of them at a time, each a plan with a GPU claim. The broker used to
    read each one's whole environment in its loop, uncharged: another
    user's plans took seconds and their railbind run fell back. Now each
    read is bounded and charged: the attacker is told overloaded, another
    user is served by the broker, within a loose bound."""
    b = Broker(tmp, DGX)
    p = None
    try:
        # Niced: its 20 forking processes would otherwise take the CPUs from
        # the broker and the other user alike, which no broker can help.
        p = subprocess.Popen(["nice", "-n", "19", HOSTILE, "bigenv", b.sock, str(ATTACKER), "8",
                              "20", "63"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ready = p.stdout.readline().strip()
        print("environment flood: %s" % ready)
        check(ready.endswith("ready") and int(ready.split()[1]) >= 5 * 1024,
              "the attacker's processes have an environment of 5 MiB or more: %r" % ready)
        t = subprocess.run(as_user(VICTIM, [sys.executable, "-c", PLAN_TIMER, b.sock, "3"]),
                           capture_output=True, text=True, env=clean_env(CUDA_VISIBLE_DEVICES="0"),
                           timeout=60)
        lat = json.loads(t.stdout) if t.returncode == 0 else {"error": t.stderr[-300:]}
        print("environment flood: another user's plans %r" % lat)
        check(lat.get("n", 0) >= 20 and not lat.get("bad"),
              "another user's plans are answered during the flood: %r" % lat)
        check(lat.get("p99", 1e9) < PLAN_P99_MS,
              "another user's plan p99 %.1f ms under the flood (bound %d ms)"
              % (lat.get("p99", -1), PLAN_P99_MS))
        victim_served(b, "processes with a huge environment, 20 at a time",
                      env_extra={"CUDA_VISIBLE_DEVICES": "0"})
        out = p.stdout.readline().split()
        res = {out[i]: out[i + 1] for i in range(0, len(out) - 1, 2)}
        print("environment flood: the attacker's %r" % res)
        check(int(res.get("overloaded", 0)) > 0 and int(res.get("ok", 0)) == 0,
              "the attacker is told overloaded (and never served a claim it cannot prove): %r" % res)
        check(int(res.get("permission", 0)) > 0,
              "a claim against an environment past the broker's bound is refused: %r" % res)
    finally:
        if p:
            if p.poll() is None:
                p.terminate()
            p.communicate(timeout=30)
        stopped(b)


def dgx_gpus():
    return [g["pci"] for g in json.loads(tb.run(["topo", "--json", "--input", DGX]).stdout)["gpus"]]


def give_only_gpu3(cg):
    """The v1 devices cgroup @cg denies every device but the tty and memory
    ones and GPU 3's render node 226:131 (a fake sysfs under --root)."""
    with open(os.path.join(cg, "devices.deny"), "w") as f:
        f.write("a\n")
    for rule in ("c 1:* rwm", "c 5:* rwm", "c 136:* rwm", "c 226:131 rw"):
        with open(os.path.join(cg, "devices.allow"), "w") as f:
            f.write(rule + "\n")


def test_gpu_ownership(tmp):
    """One GPU, two users' jobs. Where nothing assigns GPUs (no devices
    cgroup) the second user's lease is granted and told so (gpu-sharing =
    auto: refusing would let the first to ask lock the others out);
    gpu-sharing = no refuses it, yes grants it silently; the same user's jobs
    may share; where a devices cgroup gives a GPU to the one asking and not
    to the holder, the cgroup decides."""
    gpus = dgx_gpus()
    env = clean_env()

    def victim_run(b):
        env["RAILBIND_SOCKET"] = b.sock
        return subprocess.run(as_user(VICTIM, [RAILBIND, "run", "--no-bind", "--rank", "1",
                                               "--job", "v", "-v", "--", "true"]),
                              capture_output=True, text=True, env=env)

    for policy in ("auto", "no", "yes"):
        d = os.path.join(tmp, "sharing-" + policy)
        os.mkdir(d, 0o755)
        conf = os.path.join(d, "railbind.conf")
        with open(conf, "w") as f:
            f.write("gpu-sharing = %s\n" % policy)
        b = Broker(d, DGX, "--config", conf)
        a = None
        try:
            a = Attack(ATTACKER, "procs", b.sock, 1, 1, 1)
            check(a.n("ok") == 1, "%s: another user holds rank 1 (GPU %s)" % (policy, gpus[1]))
            r = victim_run(b)
            told = "leased to another user's job too" in r.stderr
            if policy == "no":
                check(r.returncode == 1 and "leased to another user's job" in r.stderr,
                      "no: the victim's lease of the same GPU is refused: %r" % r.stderr)
            else:
                check(r.returncode == 0 and "source broker" in r.stderr and told == (policy == "auto"),
                      "%s: the victim runs on the held GPU, %s: %r"
                      % (policy, "and is told" if policy == "auto" else "silently", r.stderr))
            if policy == "auto":
                st = status(b)
                check(st["broker"]["limits"]["gpu_sharing_policy"] == "auto",
                      "status says the policy: %r" % st["broker"]["limits"])
                check("which another user's job holds too" in log_text(d),
                      "the broker logs the shared GPU")
            a2 = Attack(ATTACKER, "procs", b.sock, 1, 1, 1)
            check(a2.n("ok") == 1, "%s: the same user's second job shares its own GPU (%s)"
                  % (policy, a2.line))
            a2.stop()
            victim_served(b, "gpu-sharing = %s: another user holding GPU 1" % policy,
                          rank=0 if policy == "no" else 1)
        finally:
            if a:
                a.stop()
            stopped(b)
    devices = "/sys/fs/cgroup/devices"
    if not os.path.exists(os.path.join(devices, "devices.allow")):
        print("SKIP: GPU ownership by the devices cgroup: no cgroup v1 devices controller here")
        return
    # A node whose GPUs have DRM render nodes 226:128+i (a fake sysfs under
    # --root) and a devices cgroup giving the victim GPU 3 alone.
    root = os.path.join(tmp, "root")
    for i, pci in enumerate(gpus):
        node = os.path.join(root, "sys/bus/pci/devices", pci, "drm", "renderD%d" % (128 + i))
        os.makedirs(node)
        with open(os.path.join(node, "dev"), "w") as f:
            f.write("226:%d\n" % (128 + i))
    os.makedirs(os.path.join(root, "sys/fs"))
    os.symlink("/sys/fs/cgroup", os.path.join(root, "sys/fs/cgroup"))
    cg = os.path.join(devices, "railbind-test-%d" % os.getpid())
    os.mkdir(cg)
    d = os.path.join(tmp, "cgroup")
    os.mkdir(d, 0o755)
    b = Broker(d, DGX, "--root", root)
    a = None
    try:
        give_only_gpu3(cg)
        a = Attack(ATTACKER, "procs", b.sock, 1, 3, 3)
        check(a.n("ok") == 1, "another user holds rank 3 (GPU %s) first, by claim" % gpus[3])
        enter = ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cg]
        out = victim_served(b, "a devices cgroup gives the victim GPU 3", rank=0, prefix=enter)
        check(out and all(line.split()[0] == gpus[3] for line in out),
              "in the cgroup, rank 0 is GPU 3, the only one it may open: %r" % out[:1])
        st = status(b)
        check(not [l for l in st["leases"] if l["uid"] == ATTACKER],
              "the holder without the cgroup's word gave GPU 3 up: %r" % st["leases"])
        r = subprocess.run([*enter, *as_user(VICTIM, [
            RAILBIND, "run", "--no-bind", "--rank", "0", "--no-lease", "--", "true"])],
            capture_output=True, text=True,
            env=clean_env(RAILBIND_SOCKET=b.sock, CUDA_VISIBLE_DEVICES=gpus[5]))
        check(r.returncode == 1 and "devices cgroup" in r.stderr,
              "a claim of a GPU the cgroup does not give is refused: %r" % r.stderr)
    finally:
        if a:
            a.stop()
        stopped(b)
        try:
            os.rmdir(cg)
        except OSError as e:
            print("note: cannot remove %s: %s" % (cg, e))


def main():
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("SKIP: the hostile-user suite needs root and setpriv (real second and third uids)")
        print("0 passed, 0 failed")
        return 0
    for f in (DGX, tb.SMALL, HOSTILE):
        if not os.path.exists(f):
            print("hostile: %s missing" % f)
            return 1
    base = tempfile.mkdtemp(prefix="railbind-hostile.")
    os.chmod(base, 0o755)   # the other uids must reach the socket
    return tb.run_isolated(base, (test_connection_slots, test_leases, test_memory, test_pid_reuse,
                                  test_reload, test_cache_busting, test_strings_and_files,
                                  test_watcher_overflow, test_gpu_ownership, test_log_budget,
                                  test_environ_flood),
                         "hostile")


if __name__ == "__main__":
    sys.exit(main())
