#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Integration tests of railbindd and its clients, on fixture topologies.

Starts the real broker (railbindd --input F --socket P --foreground) and
talks to it through `railbind run`/`status` and, for the protocol's edges,
through raw sockets. Every assertion is on what the programs printed; the
expected plans come from `railbind plan --json`, computed in-process.
Needs RAILBIND, RAILBINDD, BUILD; root for the `nobody` cases (skipped,
and said so, otherwise). Closing line: "N passed, N failed".
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

RAILBIND = os.environ["RAILBIND"]
RAILBINDD = os.environ["RAILBINDD"]
BUILD = os.environ["BUILD"]
FIX = os.path.join(BUILD, "fixtures")
DGX = os.path.join(FIX, "dgx-h100.xml")
SMALL = os.path.join(FIX, "small.xml")
HOST2 = os.path.join(FIX, "broker-host2.xml")
VALGRIND = os.environ.get("VALGRIND", "")
VALGRIND_WRAP = ("valgrind", "-q", "--leak-check=full", "--errors-for-leak-kinds=definite,indirect",
                 "--error-exitcode=9")

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: " + what, flush=True)
    return cond


def cpulist(s):
    out = set()
    for part in s.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.update(range(int(a), int(b) + 1))
        elif part:
            out.add(int(part))
    return out


class Broker:
    def __init__(self, tmp, inp, *extra, env=None, wrap=()):
        self.sock = os.path.join(tmp, "railbind.sock")
        self.state = tmp
        self.log = open(os.path.join(tmp, "broker.log"), "ab")
        self.args = [*wrap, RAILBINDD, "--foreground", "--input", inp, "--socket",
                     self.sock, "--state-dir", tmp, *extra]
        self.p = subprocess.Popen(self.args, stderr=self.log, env=env)
        try:
            self.wait_ready()
        except Exception:
            # A broker that never answered must not outlive its test.
            self.p.kill()
            self.p.wait()
            self.log.close()
            raise

    def wait_ready(self, timeout=20.0):
        end = time.time() + timeout
        while time.time() < end:
            if self.p.poll() is not None:
                raise RuntimeError("railbindd exited with %d" % self.p.returncode)
            try:
                r = request(self.sock, {"v": 1, "op": "status"}, timeout=0.5)
                if r.get("ok"):
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("railbindd did not answer within %gs" % timeout)

    def stop(self, sig=signal.SIGTERM):
        if self.p.poll() is None:
            self.p.send_signal(sig)
        rc = self.p.wait(timeout=30)
        self.log.close()
        return rc


def wait_for(cond, timeout=5.0, step=0.05):
    """Whether @cond() becomes true within @timeout seconds."""
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(step)
    return cond()


def connect(path, timeout=2.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    return s


def read_line(s):
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    return buf


def request(path, obj, timeout=2.0):
    with connect(path, timeout) as s:
        s.sendall((json.dumps(obj) if not isinstance(obj, (bytes, str)) else obj).encode()
                  if not isinstance(obj, bytes) else obj)
        s.sendall(b"\n")
        line = read_line(s)
    return json.loads(line)


def run(args, env=None, user=None, timeout=30):
    cmd = [RAILBIND, *args]
    if user:
        cmd = ["setpriv", "--reuid=" + user, "--regid=" + user_group(user),
               "--clear-groups", "--", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)


def user_group(user):
    return "nogroup" if user == "nobody" else user


def clean_env(**kw):
    env = {k: v for k, v in os.environ.items()
           if k not in ("LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK",
                        "MPI_LOCALRANKID", "PMI_LOCAL_RANK", "PALS_LOCAL_RANKID",
                        "RAILBIND_SOCKET", "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                        "RAILBIND_JOB", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID",
                        "PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid")}
    env.update(kw)
    return env


def binding_env(out):
    """The rank's environment as `env` printed it: the variables the plan sets."""
    keep = ("RAILBIND_", "NCCL_", "UCX_", "CUDA_", "ROCR_")
    return sorted(line for line in out.splitlines() if line.startswith(keep)
                  and not line.startswith("CUDA_HOME"))


def expected_plan(inp):
    r = run(["plan", "--json", "--input", inp])
    return json.loads(r.stdout)


def test_concurrent(tmp, b):
    """64 clients at once: 8 jobs x 8 ranks, each gets its rank's plan and a lease."""
    plan = expected_plan(DGX)
    ranks = plan["ranks"]
    check(len(ranks) == 8, "dgx-h100 plans 8 ranks")
    env = clean_env(RAILBIND_SOCKET=b.sock)
    procs = []
    release = os.path.join(tmp, "release")
    for job in range(8):
        for rank in range(8):
            procs.append((job, rank, subprocess.Popen(
                # The broker answers in a millisecond; the generous timeout
                # is for a CI machine whose cores a QEMU guest also wants.
                [RAILBIND, "run", "--no-bind", "--job", "j%d" % job, "--rank", str(rank),
                 "--timeout", "20000", "-v", "--", "sh", "-c",
                 'echo "$RAILBIND_LOCAL_RANK|$RAILBIND_GPU|$RAILBIND_CPUS|$NCCL_IB_HCA"; '
                 'while [ ! -e "$0" ]; do sleep 0.05; done', release],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)))
    # Every client has its answer once it printed its line; then all hold leases.
    lines = {}
    for job, rank, p in procs:
        lines[(job, rank)] = p.stdout.readline().strip()
    st = request(b.sock, {"v": 1, "op": "status"})
    held = {(l["job"], l["rank"]) for l in st["leases"]}
    check(len(st["leases"]) == 64 and len(held) == 64,
          "64 live clients hold 64 distinct leases (got %d)" % len(st["leases"]))
    open(release, "w").close()
    errs = []
    for job, rank, p in procs:
        p.wait(timeout=30)
        err = p.stderr.read()
        if p.returncode != 0 or "source broker" not in err:
            errs.append("j%d/%d rc=%d %s" % (job, rank, p.returncode, err.strip()))
    check(not errs, "all 64 clients served by the broker: " + "; ".join(errs[:3]))
    wrong = []
    for (job, rank), line in lines.items():
        r = ranks[rank]
        want = "%d|%s|%s|%s" % (rank, r["gpu"]["pci"], r["cpus"], r["env"].get("NCCL_IB_HCA", ""))
        if line != want:
            wrong.append("j%d/%d: %r, expected %r" % (job, rank, line, want))
    check(not wrong, "each client got its rank's plan: " + "; ".join(wrong[:3]))
    # One NCCL_IB_HCA for the node from the broker, every job and rank: the
    # eight compute rails (issue 24), not a rank's own.
    hcas = {line.split("|")[3] for line in lines.values()}
    check(hcas == {"=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1"},
          "every rank got the node's NCCL_IB_HCA from the broker: %s" % sorted(hcas))
    for job in range(8):
        cpus = [cpulist(lines[(job, r)].split("|")[2]) for r in range(8)]
        gpus = [lines[(job, r)].split("|")[1] for r in range(8)]
        overlap = any(cpus[i] & cpus[j] for i in range(8) for j in range(i + 1, 8))
        if overlap or len(set(gpus)) != 8:
            check(False, "job j%d: plans not disjoint" % job)
            break
    else:
        check(True, "plans within each job are disjoint (CPUs and GPUs)")
    # The leases end with their processes.
    end = time.time() + 5
    while time.time() < end and request(b.sock, {"v": 1, "op": "status"})["leases"]:
        time.sleep(0.05)
    check(not request(b.sock, {"v": 1, "op": "status"})["leases"],
          "leases are released when their processes exit")


def test_busy_and_fallback(tmp, b):
    env = clean_env(RAILBIND_SOCKET=b.sock)
    holder = subprocess.Popen([RAILBIND, "run", "--no-bind", "--job", "busy", "--rank", "2",
                               "--", "sleep", "30"], env=env)
    try:
        end = time.time() + 5
        while time.time() < end and not request(b.sock, {"v": 1, "op": "status"})["leases"]:
            time.sleep(0.02)
        marker = os.path.join(tmp, "ran")
        r = run(["run", "--no-bind", "--job", "busy", "--rank", "2", "--", "touch", marker],
                env=env)
        check(r.returncode == 1 and "held by pid %d" % holder.pid in r.stderr
              and not os.path.exists(marker),
              "a leased rank is refused to another process, before exec: %r" % r.stderr)
        r = run(["run", "--no-bind", "--job", "other", "--rank", "2", "--", "true"], env=env)
        check(r.returncode == 0, "the same rank of another job is free")
    finally:
        holder.kill()
        holder.wait()
    # Identical plans from the broker and in-process, rank by rank.
    diff = []
    for rank in range(8):
        outs = []
        for extra in ([], ["--local", "--input", DGX]):
            r = run(["run", "--no-bind", "--no-lease", "--rank", str(rank), "-v", *extra,
                     "--", "env"], env=env)
            outs.append((r.returncode, binding_env(r.stdout),
                         r.stderr.split(" source ")[0]))
        if outs[0] != outs[1] or outs[0][0] != 0:
            diff.append("rank %d: %r vs %r" % (rank, outs[0], outs[1]))
    check(not diff, "the in-process fallback gives the broker's plan: " + "; ".join(diff[:2]))
    # No broker at all: computed here, and said so.
    r = run(["run", "--no-bind", "--rank", "3", "--input", DGX, "-v", "--", "true"],
            env=clean_env(RAILBIND_SOCKET=os.path.join(tmp, "nothing.sock")))
    check(r.returncode == 0 and "source local: no broker at" in r.stderr,
          "without a broker, run computes the plan and says so: %r" % r.stderr)


def test_cli_errors(tmp, b):
    env = clean_env(RAILBIND_SOCKET=b.sock)
    marker = os.path.join(tmp, "ran")
    cases = [
        (["run", "--no-bind", "--rank", "8", "--", "touch", marker], env, 1, "no rank 8"),
        (["run", "--no-bind", "--rank", "x", "--", "touch", marker], env, 2, "--rank"),
        (["run", "--bogus", "--", "touch", marker], env, 2, "unrecognized"),
        (["run", "--no-bind", "--", "touch", marker], env, 2, "LOCAL_RANK"),
        (["run", "--no-bind", "--rank", "1"], env, 2, "no command"),
        (["run", "--no-bind", "--", "touch", marker], clean_env(RAILBIND_SOCKET=b.sock,
                                                               SLURM_LOCALID="x"), 2, "SLURM_LOCALID"),
    ]
    for args, e, rc, text in cases:
        r = run(args, env=e)
        check(r.returncode == rc and text in r.stderr and not os.path.exists(marker)
              and not r.stdout,
              "railbind %s: exit %d, %r on stderr, no exec (got %d, %r)"
              % (" ".join(args), rc, text, r.returncode, r.stderr))
    for var in ("LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK",
                "MPI_LOCALRANKID", "PMI_LOCAL_RANK", "PALS_LOCAL_RANKID"):
        r = run(["run", "--no-bind", "--no-lease", "--", "sh", "-c", "echo $RAILBIND_LOCAL_RANK"],
                env=clean_env(RAILBIND_SOCKET=b.sock, **{var: "5"}))
        check(r.returncode == 0 and r.stdout.strip() == "5", "local rank from %s" % var)
    r = run(["run", "--no-bind", "--no-lease", "--rank", "1", "--", "sh", "-c",
             "echo $RAILBIND_LOCAL_RANK"], env=clean_env(RAILBIND_SOCKET=b.sock, LOCAL_RANK="4"))
    check(r.stdout.strip() == "1", "--rank wins over LOCAL_RANK")
    r = run(["run", "--no-bind", "--no-lease", "--rank", "1", "--isolate-gpu", "--", "sh", "-c",
             "echo $CUDA_VISIBLE_DEVICES"], env=env)
    check(r.returncode == 0 and r.stdout.strip() != "", "--isolate-gpu sets CUDA_VISIBLE_DEVICES")
    r = run(["run", "--no-bind", "--no-lease", "--rank", "1", "-v", "--", "true"], env=env)
    check(r.returncode == 0 and len(r.stderr.splitlines()) == 1
          and r.stderr.startswith("railbind: rank 1 gpu "),
          "--verbose prints the binding in one line on stderr: %r" % r.stderr)


def test_protocol(tmp, b):
    sock = b.sock
    with connect(sock) as s:
        s.sendall(b"this is not json\n")
        r1 = json.loads(read_line(s))
        s.sendall(b'{"v":1,"op":"status","id":7}\n')
        r2 = json.loads(read_line(s))
    check(r1.get("error") == "malformed" and r2.get("ok") and r2.get("id") == 7,
          "malformed request: an error reply, and the connection still serves")
    r = request(sock, {"op": "status"})
    check(r.get("error") == "unsupported-version", "a request without a version is refused")
    r = request(sock, {"v": 1, "op": "frobnicate", "id": "x"})
    check(r.get("error") == "unknown-op" and r.get("id") == "x", "unknown op: explicit error")
    r = request(sock, {"v": 1, "op": "plan", "rank": "one"})
    check(r.get("error") == "invalid", "a rank that is not a number: invalid")
    r = request(sock, {"v": 1, "op": "plan", "rank": 99, "lease": "none"})
    check(r.get("error") == "no-such-rank", "rank 99: no-such-rank")
    r = request(sock, {"v": 1, "op": "audit"})
    cli = run(["audit", "--json", "--input", DGX])
    want = json.loads(cli.stdout)
    got = r.get("audit", {})
    check(got.get("schema") == "railbind.audit/1" and r.get("exit_code") == cli.returncode
          and got.get("status") == want.get("status")
          and sorted((c["id"], c["severity"], c["subject"]) for c in got.get("checks", []))
          == sorted((c["id"], c["severity"], c["subject"]) for c in want.get("checks", [])),
          "audit: the broker's railbind.audit/1 and exit code are railbind audit's")
    r = request(sock, {"v": 1, "op": "topo"})
    check(r.get("topo", {}).get("schema") == "railbind.topo/1", "topo serves railbind.topo/1")
    r = request(sock, {"v": 1, "op": "plan"})
    check(r.get("plan", {}).get("ranks") == expected_plan(DGX)["ranks"],
          "plan without a rank: the whole railbind.plan/1, as railbind plan computes it")
    # Oversized: an error, then the connection is closed.
    with connect(sock) as s:
        try:
            s.sendall(b"{" + b" " * 8000)
        except OSError:
            pass
        try:
            first = read_line(s)
            rest = s.recv(100)
        except ConnectionResetError:
            first = rest = b"reset before the error reply"
    check(b'"too-large"' in first and rest == b"", "oversized request: too-large, closed")
    # Slow: a half request stalls only its own connection, then times out.
    slow = connect(sock, timeout=5)
    slow.sendall(b'{"v":1,"op":')
    t0 = time.time()
    fast = [request(sock, {"v": 1, "op": "plan", "rank": i % 8, "lease": "none"})
            for i in range(50)]
    dt = time.time() - t0
    check(all(f.get("rank") for f in fast) and dt < 2.0,
          "others are served while a client stalls (%d requests in %.3fs)" % (len(fast), dt))
    line = read_line(slow)
    waited = time.time() - t0
    check(b'"timeout"' in line and slow.recv(10) == b"" and waited < 4,
          "the stalled request gets a timeout error and is closed (%.2fs)" % waited)
    slow.close()
    # A client that asks and never reads is dropped, not waited for.
    greedy = connect(sock)
    greedy.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    try:
        greedy.settimeout(3)
        for _ in range(4000):
            greedy.sendall(b'{"v":1,"op":"topo"}\n')
    except OSError:
        pass
    r = request(sock, {"v": 1, "op": "status"})
    check(r.get("ok"), "a client that does not read does not stall the broker")
    greedy.close()
    # A claim outside the process's own CUDA_VISIBLE_DEVICES is refused.
    code = ("import json,socket,sys;s=socket.socket(socket.AF_UNIX);s.connect(sys.argv[1]);"
            "s.sendall(json.dumps({'v':1,'op':'plan','rank':0,'lease':'none',"
            "'visible':sys.argv[2]}).encode()+b'\\n');print(s.makefile().readline())")
    for claim, ok in (("1", False), ("0", True)):
        out = subprocess.run([sys.executable, "-c", code, sock, claim], capture_output=True,
                             text=True, env=clean_env(CUDA_VISIBLE_DEVICES="0,2")).stdout
        rep = json.loads(out)
        if ok:
            check(rep.get("rank", {}).get("gpu", {}).get("index") == 0,
                  "a claim within CUDA_VISIBLE_DEVICES narrows the plan: %r" % out[:200])
        else:
            check(rep.get("error") == "permission",
                  "a claim outside the process's CUDA_VISIBLE_DEVICES is refused: %r" % out[:200])


def test_watch_and_reload(tmp):
    inp = os.path.join(tmp, "node.xml")
    shutil.copy(DGX, inp)
    b = Broker(tmp, inp)
    try:
        w = connect(b.sock, timeout=5)
        w.sendall(b'{"v":1,"op":"watch"}\n')
        ack = json.loads(read_line(w))
        gen0 = ack.get("generation")
        os.kill(b.p.pid, signal.SIGHUP)
        time.sleep(0.3)
        shutil.copy(SMALL, inp + ".new")
        os.rename(inp + ".new", inp)
        t0 = time.time()
        os.kill(b.p.pid, signal.SIGHUP)
        ev = json.loads(read_line(w))
        dt = time.time() - t0
        check(ack.get("ok") and ev.get("event") == "plan" and ev.get("generation") == gen0 + 1
              and ev.get("ranks") == 2 and dt < 1.0,
              "SIGHUP with a changed topology: one watch event, generation %s -> %s, %.2fs"
              % (gen0, ev.get("generation"), dt))
        st = request(b.sock, {"v": 1, "op": "status"})
        check(st.get("generation") == gen0 + 1 and st.get("ranks") == 2,
              "an unchanged reload keeps the generation; the changed one bumps it once")
        r = run(["status", "--reload", "-s", b.sock])
        check(r.returncode == 0 and "generation: %d" % (gen0 + 1) in r.stdout,
              "root may reload: %r" % r.stderr)
        w.close()
    finally:
        rc = b.stop()
    check(rc == 0 and not os.path.exists(b.sock), "SIGTERM: exit 0, socket removed")


def test_nccl_topo_file(tmp):
    """railbind.conf nccl-topo-file: written on start, rewritten on a new plan."""
    inp = os.path.join(tmp, "node.xml")
    shutil.copy(DGX, inp)
    out = os.path.join(tmp, "nvidia-topologyd", "virtualTopology.xml")
    conf = os.path.join(tmp, "railbind.conf")
    with open(conf, "w") as f:
        f.write("nccl-topo-file = %s\n" % out)

    def export(src):
        return run(["nccl-topo", "--input", src]).stdout

    b = Broker(tmp, inp, "--config", conf)
    try:
        w = connect(b.sock, timeout=5)
        w.sendall(b'{"v":1,"op":"watch"}\n')
        json.loads(read_line(w))
        with open(out) as f:
            first = f.read()
        check(first and first == export(DGX), "nccl-topo-file written on start, as nccl-topo writes it")
        shutil.copy(SMALL, inp + ".new")
        os.rename(inp + ".new", inp)
        os.kill(b.p.pid, signal.SIGHUP)
        ev = json.loads(read_line(w))
        with open(out) as f:
            second = f.read()
        check(ev.get("event") == "plan" and second == export(SMALL) and second != first,
              "nccl-topo-file rewritten when the plan's generation changes")
        left = [n for n in os.listdir(os.path.dirname(out)) if n != "virtualTopology.xml"]
        check(not left, "no temporary file left beside it: %r" % left)
        w.close()
    finally:
        rc = b.stop()
    check(rc == 0, "broker with nccl-topo-file exits 0")


def test_nobody(tmp, b):
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        print("SKIP: the unprivileged cases need root and setpriv")
        return
    env = clean_env(RAILBIND_SOCKET=b.sock)
    root_holder = subprocess.Popen([RAILBIND, "run", "--no-bind", "--job", "r", "--rank", "0",
                                    "--", "sleep", "30"], env=env)
    nobody_holder = subprocess.Popen(["setpriv", "--reuid=nobody", "--regid=nogroup",
                                      "--clear-groups", "--", RAILBIND, "run", "--no-bind",
                                      "--job", "n", "--rank", "1", "--", "sleep", "30"], env=env)
    try:
        end = time.time() + 5
        while time.time() < end and len(request(b.sock, {"v": 1, "op": "status"})["leases"]) < 2:
            time.sleep(0.05)
        r = run(["status", "--json"], env=env, user="nobody")
        mine = json.loads(r.stdout)["leases"] if r.returncode == 0 else None
        check(mine is not None and [(l["job"], l["uid"]) for l in mine] == [("n", 65534)],
              "nobody sees only its own lease: %r %r" % (mine, r.stderr))
        r = run(["status", "--json"], env=env)
        every = sorted(l["job"] for l in json.loads(r.stdout)["leases"])
        check(every == ["n", "r"], "root sees every lease: %r" % every)
        r = run(["status", "--reload"], env=env, user="nobody")
        check(r.returncode == 1 and "reload is root's" in r.stderr,
              "nobody cannot reload: %r" % r.stderr)
    finally:
        for p in (root_holder, nobody_holder):
            p.kill()
            p.wait()


def test_kill9(tmp):
    """kill -9 mid-traffic: clients fall back; a restart keeps live pids' leases."""
    b = Broker(tmp, DGX)
    env = clean_env(RAILBIND_SOCKET=b.sock)
    holders = [subprocess.Popen([RAILBIND, "run", "--no-bind", "--job", "k", "--rank", str(r),
                                 "--", "sleep", "60"], env=env) for r in range(4)]
    try:
        end = time.time() + 5
        while time.time() < end and len(request(b.sock, {"v": 1, "op": "status"})["leases"]) < 4:
            time.sleep(0.05)
        results = []
        stop = threading.Event()

        def traffic():
            while not stop.is_set():
                # A dead broker is refused at once (the fallback); a live one
                # is waited for, however loaded the machine (ASan, QEMU).
                r = run(["run", "--no-bind", "--no-lease", "--rank", "5", "--input", DGX, "-v",
                         "--timeout", "10000", "--", "sh", "-c", "echo $RAILBIND_CPUS"], env=env)
                results.append((r.returncode, r.stdout.strip(),
                                "source broker" in r.stderr, "source local" in r.stderr))
        threads = [threading.Thread(target=traffic) for _ in range(4)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        b.p.kill()
        b.p.wait()
        time.sleep(0.5)
        b2 = Broker(tmp, DGX)
        time.sleep(0.5)
        stop.set()
        for t in threads:
            t.join()
        want = expected_plan(DGX)["ranks"][5]["cpus"]
        bad = [x for x in results if x[0] != 0 or x[1] != want]
        check(results and not bad, "every request across the crash got rank 5's plan "
              "(%d requests, %d failed: %r)" % (len(results), len(bad), bad[:2]))
        check(any(x[3] for x in results) and any(x[2] for x in results),
              "some requests fell back, others reached a broker (%d local, %d broker)"
              % (sum(x[3] for x in results), sum(x[2] for x in results)))
        st = request(b2.sock, {"v": 1, "op": "status"})
        got = sorted((l["job"], l["rank"], l["pid"]) for l in st["leases"])
        check(got == [("k", r, holders[r].pid) for r in range(4)],
              "the restarted broker keeps the 4 live leases: %r" % got)
        r = run(["run", "--no-bind", "--job", "k", "--rank", "0", "--", "true"], env=env)
        check(r.returncode == 1 and "held by pid %d" % holders[0].pid in r.stderr,
              "a kept lease is still enforced")
        holders[0].kill()
        holders[0].wait()
        end = time.time() + 2
        while time.time() < end and len(request(b2.sock, {"v": 1, "op": "status"})["leases"]) > 3:
            time.sleep(0.02)
        check(len(request(b2.sock, {"v": 1, "op": "status"})["leases"]) == 3,
              "a kept lease ends with its process (pidfd)")
        b2.stop()
        # A dead holder's saved lease is dropped on the next start.
        for h in holders[1:]:
            h.kill()
            h.wait()
        b3 = Broker(tmp, DGX)
        check(request(b3.sock, {"v": 1, "op": "status"})["leases"] == [],
              "leases of dead pids are dropped at start")
        b3.stop()
    finally:
        for h in holders:
            h.kill()
            h.wait()


def test_binds(tmp):
    """On a fixture shaped like this 2-CPU host, run really binds."""
    if len(os.sched_getaffinity(0)) < 2 or not os.path.exists("/proc/self/numa_maps"):
        print("SKIP: binding needs 2 CPUs and NUMA support here")
        return
    b = Broker(tmp, HOST2, "--limits", "on")
    try:
        env = clean_env(RAILBIND_SOCKET=b.sock)
        script = ("grep Cpus_allowed_list /proc/self/status | cut -f2; "
                  "grep -m1 -o 'prefer:[0-9]*\\|bind:[0-9]*' /proc/self/numa_maps")
        r = run(["run", "--rank", "1", "--no-lease", "--", "sh", "-c", script], env=env)
        check(r.returncode == 0 and r.stdout.split() == ["1", "prefer:0"],
              "rank 1: the exec'd command runs on CPU 1 and prefers node 0: %r %r"
              % (r.stdout, r.stderr))
        r = subprocess.run(["taskset", "-c", "0", RAILBIND, "run", "--rank", "1", "--no-lease",
                            "-v", "--", "sh", "-c", script], capture_output=True, text=True,
                           env=env)
        check(r.returncode == 0 and r.stdout.split()[:1] == ["0"],
              "a client limited to CPU 0 never gets CPUs outside it: %r %r" % (r.stdout, r.stderr))
    finally:
        b.stop()


def test_broker_path_loads_no_hwloc(tmp):
    """A rank the broker plans for starts without libhwloc (hwloc_lazy.c): the
    dynamic linker names what it loads (LD_DEBUG=libs); a node whose libhwloc
    is broken still starts its ranks, and what needs hwloc says which file."""
    b = Broker(tmp, HOST2)
    try:
        env = clean_env(RAILBIND_SOCKET=b.sock, LD_DEBUG="libs")
        r = run(["run", "--rank", "0", "--no-lease", "--no-bind", "--", "true"], env=env)
        check(r.returncode == 0 and "find library=libjson-c" in r.stderr
              and "libhwloc" not in r.stderr,
              "railbind run through the broker loads no libhwloc: %r" % r.stderr[-600:])
        r = run(["run", "--local", "--input", HOST2, "--rank", "0", "--no-bind", "--", "true"],
                env=env)
        check(r.returncode == 0 and "find library=libhwloc.so.15" in r.stderr,
              "computed in-process, the same run does load it: %r" % r.stderr[-600:])
        lib = os.path.join(tmp, "lib")
        os.mkdir(lib)
        with open(os.path.join(lib, "libhwloc.so.15"), "w") as f:
            f.write("not a library\n")
        env = clean_env(RAILBIND_SOCKET=b.sock, LD_LIBRARY_PATH=lib)
        r = run(["run", "--rank", "0", "--no-lease", "--no-bind", "--", "sh", "-c",
                 "echo $RAILBIND_GPU"], env=env)
        check(r.returncode == 0 and r.stdout.strip() == expected_plan(HOST2)["ranks"][0]["gpu"]["pci"],
              "with libhwloc broken, the broker's rank still starts with its GPU: %r %r"
              % (r.stdout, r.stderr))
        r = run(["plan", "--input", HOST2], env=env)
        lines = r.stderr.strip().splitlines()
        check(r.returncode == 1 and len(lines) == 1 and lines[0].startswith("railbind: " + HOST2)
              and "libhwloc.so.15, which cannot be loaded" in lines[0],
              "with libhwloc broken, plan says so in one line naming its input, exit 1: %d %r"
              % (r.returncode, r.stderr))
    finally:
        b.stop()


def test_sd_notify_and_activation(tmp):
    ns = os.path.join(tmp, "notify")
    n = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    n.bind(ns)
    n.settimeout(10)
    b = Broker(tmp, DGX, env=dict(os.environ, NOTIFY_SOCKET=ns))
    try:
        msg = n.recv(4096).decode()
        check("READY=1" in msg, "sd_notify READY=1: %r" % msg)
    finally:
        b.stop()
        n.close()
    # Socket activation: the listening socket arrives as fd 3.
    path = os.path.join(tmp, "activated.sock")
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ls.bind(path)
    ls.listen(16)
    log = open(os.path.join(tmp, "activated.log"), "ab")

    def child():
        if ls.fileno() != 3:
            os.dup2(ls.fileno(), 3)
        os.set_inheritable(3, True)
        os.environ["LISTEN_FDS"] = "1"
        os.environ["LISTEN_PID"] = str(os.getpid())
    p = subprocess.Popen([RAILBINDD, "--foreground", "--input", DGX, "--state-dir", tmp,
                          "--socket", os.path.join(tmp, "unused.sock")],
                         preexec_fn=child, close_fds=False, stdout=subprocess.DEVNULL,
                         stderr=log)
    ls.close()
    try:
        r = request(path, {"v": 1, "op": "status"}, timeout=10)
        check(r.get("ok") and r["broker"]["pid"] == p.pid
              and not os.path.exists(os.path.join(tmp, "unused.sock")),
              "socket activation: serves on the passed socket")
    finally:
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            check(False, "the activated broker ignored SIGTERM")
        log.close()


def uuid_fixture(tmp):
    """The DGX fixture with GPU identities (as NVML or a snapshot gives them):
    GPU 0 has a UUID and two MIG instances, GPU 1 a UUID."""
    import re
    with open(DGX) as f:
        src = f.read()

    def add(pci, infos):
        m = re.search(r'<object type="PCIDev"[^>]*pci_busid="%s"[^>]*>\n' % re.escape(pci), src)
        return src[:m.end()] + "".join('<info name="%s" value="%s"/>\n' % kv
                                       for kv in infos) + src[m.end():]
    src = add("0000:1b:00.0", [("RailbindGPUUUID", UUID0), ("RailbindMIG", "enabled"),
                               ("RailbindMIGDevice", MIG0 + " 1 0"),
                               ("RailbindMIGDevice", MIG1 + " 2 0")])
    src = add("0000:43:00.0", [("RailbindGPUUUID", UUID1)])
    out = os.path.join(tmp, "uuid.xml")
    with open(out, "w") as f:
        f.write(src)
    return out


UUID0 = "GPU-aaaa1111-0000-0000-0000-000000000000"
UUID1 = "GPU-bbbb2222-0000-0000-0000-000000000000"
MIG0 = "MIG-cccc3333-0000-0000-0000-000000000000"
MIG1 = "MIG-dddd4444-0000-0000-0000-000000000000"


def ask_as(sock, own, reqs):
    """Requests from a process whose CUDA_VISIBLE_DEVICES is @own (None: unset),
    all on one connection: the replies."""
    code = ("import json,socket,sys;s=socket.socket(socket.AF_UNIX);s.connect(sys.argv[1]);"
            "f=s.makefile();out=[]\n"
            "for r in json.loads(sys.argv[2]):\n"
            " s.sendall(json.dumps(r).encode()+b'\\n');out.append(json.loads(f.readline()))\n"
            "print(json.dumps(out))")
    env = clean_env(**({"CUDA_VISIBLE_DEVICES": own} if own is not None else {}))
    r = subprocess.run([sys.executable, "-c", code, sock, json.dumps(reqs)],
                       capture_output=True, text=True, env=env)
    return json.loads(r.stdout) if r.returncode == 0 else [{"error": r.stderr[-200:]}]


def test_claims(tmp):
    """Issue 15 with issue 17's GPU identities: a claim is checked against the
    process's own list by identity (index, PCI address, UUID, MIG instance),
    and one set of GPUs is one cache entry however it is spelled."""
    b = Broker(tmp, uuid_fixture(tmp), "--miss-rate", "1")
    try:
        def plan(claim, rank=0):
            return {"v": 1, "op": "plan", "rank": rank, "lease": "none", "visible": claim}

        def gpu(r):
            return r.get("rank", {}).get("gpu", {}).get("pci") or r.get("error")
        r = ask_as(b.sock, "0,1", [plan(UUID1), plan(UUID0 + ",0000:43:00.0", 1)])
        check([gpu(x) for x in r] == ["0000:43:00.0", "0000:43:00.0"],
              "claims by UUID and PCI address within an index list are taken: %r" % r)
        r = ask_as(b.sock, "1", [plan(UUID0)])
        check(r[0].get("error") == "permission" and "not within" in r[0].get("message", ""),
              "a UUID outside the process's own list is refused: %r" % r)
        r = ask_as(b.sock, "0", [plan(MIG1), plan(MIG1, 1)])
        check(gpu(r[0]) == "0000:1b:00.0" and r[1].get("error") == "no-such-rank",
              "a MIG instance of one's own GPU: one rank, on that GPU: %r" % r)
        # --miss-rate 1: a connection may have 2 new plans at once. Six spellings
        # of GPU 1 are one plan; six other GPUs are six.
        r = ask_as(b.sock, None, [plan(x) for x in ("1", "1,1", "0000:43:00.0", "43:00.0",
                                                     UUID1, UUID1[:12])])
        check([gpu(x) for x in r] == ["0000:43:00.0"] * 6,
              "six spellings of one GPU: one cache entry, no refusal: %r" % [gpu(x) for x in r])
        r = ask_as(b.sock, None, [plan(str(i)) for i in range(2, 8)])
        check(any(x.get("error") == "overloaded" for x in r),
              "six new sets of GPUs on one connection: rationed by --miss-rate: %r"
              % [gpu(x) for x in r])
    finally:
        rc = b.stop()
    check(rc == 0, "the claims broker exits 0")


def ask_with_env(sock, env, reqs, conns=1):
    """@reqs on each of @conns connections of one process whose environment is
    exactly @env (NAME=VALUE strings, in this order): the replies."""
    code = ("import json,socket,sys\nout=[]\n"
            "for k in range(int(sys.argv[3])):\n"
            " s=socket.socket(socket.AF_UNIX);s.connect(sys.argv[1]);f=s.makefile()\n"
            " for r in json.loads(sys.argv[2]):\n"
            "  s.sendall(json.dumps(r).encode()+b'\\n');out.append(json.loads(f.readline()))\n"
            " s.close()\n"
            "print(json.dumps(out))")
    envb = [e.encode() for e in env]
    # Not root, whose reads the broker does not count.
    who = (["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]
           if os.geteuid() == 0 and shutil.which("setpriv") else [])
    py = (shutil.which("python3", path="/usr/bin:/bin") if who else None) or sys.executable
    r = subprocess.run([*who, "env", "-i", *envb, py, "-c", code, sock, json.dumps(reqs),
                        str(conns)], capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else [{"error": r.stderr[-200:]}]


def test_claim_environment(tmp):
    """Issue 25: the process's environment is read for a claim only, at most
    1 MiB of it, once per process: a CUDA_VISIBLE_DEVICES anywhere within the
    bound is found; one past it, in an environment that goes on, cannot be
    checked and the claim is refused (not taken unchecked); the answer is
    kept per process, so forty connections of one process are one read, not
    forty charged to its user."""
    b = Broker(tmp, DGX)
    try:
        pad = ["PAD%d=%s" % (i, "x" * 4000) for i in range(300)]     # about 1.2 MiB

        def plan(claim=None, rank=0):
            r = {"v": 1, "op": "plan", "rank": rank, "lease": "none"}
            if claim is not None:
                r["visible"] = claim
            return r

        def gpu(r):
            return r.get("rank", {}).get("gpu", {}).get("index", r.get("error"))
        r = ask_with_env(b.sock, ["CUDA_VISIBLE_DEVICES=3"] + pad, [plan("3"), plan("4")])
        check([gpu(x) for x in r] == [3, "permission"],
              "CUDA_VISIBLE_DEVICES first in 1.2 MiB: a claim within it is taken, one outside refused: %r"
              % [gpu(x) for x in r])
        r = ask_with_env(b.sock, pad[:200] + ["CUDA_VISIBLE_DEVICES=5"] + pad[200:], [plan("5"), plan("6")])
        check([gpu(x) for x in r] == [5, "permission"],
              "CUDA_VISIBLE_DEVICES at 800 KiB of 1.2 MiB: found: %r" % [gpu(x) for x in r])
        r = ask_with_env(b.sock, pad + ["CUDA_VISIBLE_DEVICES=2"], [plan("2"), plan("7")])
        check(all(x.get("error") == "permission" and "larger than the broker reads" in x.get("message", "")
                  for x in r),
              "CUDA_VISIBLE_DEVICES past 1 MiB: no claim is taken unchecked: %r" % r[:1])
        r = ask_with_env(b.sock, ["CUDA_VISIBLE_DEVICES=1"], [plan(None), plan(None, 1)])
        check([gpu(x) for x in r] == [0, 1],
              "no claim: the environment is not read, the plan is the node's: %r" % [gpu(x) for x in r])
        # The thread-group leader gone (SYS_exit in the main thread), a second
        # thread asks: its environment reads as nothing, and proves nothing.
        code = ("import ctypes,json,os,socket,sys,threading,time\n"
                "def ask():\n"
                " time.sleep(0.3);s=socket.socket(socket.AF_UNIX);s.connect(sys.argv[1])\n"
                " s.sendall(json.dumps({'v':1,'op':'plan','rank':0,'lease':'none','visible':'5'}).encode()+b'\\n')\n"
                " print(s.makefile().readline(),end='',flush=True);os._exit(0)\n"
                "threading.Thread(target=ask).start()\n"
                "ctypes.CDLL(None).syscall(60,0)\n")
        out = subprocess.run([sys.executable, "-c", code, b.sock], capture_output=True, text=True,
                             env=clean_env(CUDA_VISIBLE_DEVICES="0"), timeout=30).stdout
        check('"permission"' in out and "has exited" in out,
              "a claim from a process whose leader has exited is refused: %r" % out[:160])
        # 40 connections of one process, each a claim against 1.2 MiB: one read.
        r = ask_with_env(b.sock, pad + ["CUDA_VISIBLE_DEVICES=2"], [plan("2")], conns=40)
        errs = [x.get("error") for x in r]
        check(len(errs) == 40 and set(errs) == {"permission"},
              "forty connections of one process: its environment read once, never overloaded: %r"
              % sorted(set(errs)))
    finally:
        rc = b.stop()
    check(rc == 0, "the claim-environment broker exits 0")


def test_valgrind(tmp):
    if not shutil.which("valgrind") or os.environ.get("RB_NO_VALGRIND"):
        print("SKIP: valgrind not found, or RB_NO_VALGRIND set (ASan build)")
        return
    b = Broker(tmp, DGX, wrap=VALGRIND_WRAP)
    env = clean_env(RAILBIND_SOCKET=b.sock)
    run(["run", "--no-bind", "--rank", "1", "--", "true"], env=env)
    run(["status"], env=env)
    request(b.sock, b"garbage")
    request(b.sock, {"v": 1, "op": "plan"})
    request(b.sock, {"v": 1, "op": "topo"})
    request(b.sock, {"v": 1, "op": "plan", "rank": 2, "lease": "conn"})
    os.kill(b.p.pid, signal.SIGHUP)
    rc = b.stop()
    check(rc == 0, "railbindd under valgrind: no leak, no invalid access (exit %d)" % rc)


def run_isolated(base, tests, label):
    """Each test in a directory of its own under @base; a test that raises is a
    failure, not the end. The logs stay when something failed."""
    try:
        for t in tests:
            tmp = os.path.join(base, t.__name__)
            os.mkdir(tmp, 0o755)
            t0 = time.time()
            try:
                t(tmp)
            except Exception as e:
                check(False, "%s raised %r" % (t.__name__, e))
            print("%s: %.1fs" % (t.__name__, time.time() - t0), flush=True)
    finally:
        if failed:
            print("%s: logs kept in %s" % (label, base))
        else:
            shutil.rmtree(base, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


def main():
    for f in (DGX, SMALL, HOST2):
        if not os.path.exists(f):
            print("broker: %s missing; run make fixtures" % f)
            return 1
    base = tempfile.mkdtemp(prefix="railbind-broker.")
    os.chmod(base, 0o755)   # nobody must reach the socket
    tests = [test_concurrent, test_busy_and_fallback, test_cli_errors, test_protocol,
             test_nobody]
    later = (test_watch_and_reload, test_nccl_topo_file, test_kill9, test_binds,
             test_broker_path_loads_no_hwloc, test_sd_notify_and_activation, test_claims,
             test_claim_environment, test_valgrind)
    wrap = ()
    if os.environ.get("RB_VALGRIND"):
        # check-broker-valgrind: the main broker under memcheck; its exit code
        # (9) says what memcheck found. valgrind 3.19 has no pidfd_open
        # (ENOSYS): pid leases are left to check-broker-asan.
        tests, later = [test_cli_errors, test_protocol], ()
        wrap = VALGRIND_WRAP
    try:
        tmp = os.path.join(base, "main")
        os.mkdir(tmp, 0o755)
        b = Broker(tmp, DGX, "--request-timeout", "1000", wrap=wrap)
        try:
            for t in tests:
                try:
                    t(tmp, b)
                except Exception as e:  # a crash in one test is a failure, not the end
                    check(False, "%s raised %r" % (t.__name__, e))
        finally:
            rc = b.stop()
            check(rc == 0, "the main broker survived everything and exits 0 (got %s)" % rc)
        for t in later:
            tmp = os.path.join(base, t.__name__)
            os.mkdir(tmp, 0o755)
            try:
                t(tmp)
            except Exception as e:
                check(False, "%s raised %r" % (t.__name__, e))
    finally:
        if failed:
            print("broker: logs kept in " + base)
        else:
            shutil.rmtree(base, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
