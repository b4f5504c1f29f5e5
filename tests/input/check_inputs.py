#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""No file takes a railbind command down or hangs it (issue 13's "Done when").

Files of its own, written here: hwloc XML that crashes hwloc 2.9.0 (SIGSEGV
with either XML importer; SIGSEGV with the minimal one only; a failed assert,
which prints a line of its own), a FIFO, /dev/zero (as itself and through a
symlink named like a topology), a directory, an empty file, a file over
max-input-size, and the same kinds as --config. Every reading command runs on
each (topo, plan, audit, nccl-topo, run --local), with hwloc's libxml2
importer (when libhwloc-plugins is installed) and with its minimal one
(HWLOC_LIBXML=0). Each run must end by itself, by exit (no signal), with
exit 1 (audit: 3, its documented "could not decide"; run: not 0, and its
command not run), nothing on stdout and exactly one line on stderr naming
the file, within CPU_SECONDS of CPU time (the Done-when's 2 s; CPU, not wall
time, so a loaded machine cannot fail it) and WALL_SECONDS of wall time
(a hang is killed there and fails).

railbind fleet over one directory mixing good snapshots, an audit document
and all the bad files, at --jobs 1, at the default and at --jobs 3: exit 2,
the good nodes compared, every bad file reported unreadable with its reason,
nothing on stderr.

A command whose reader goes away (| head) still ends by SIGPIPE, silently.

Environment: RAILBIND (rbgen beside it), BUILD (fixtures in $BUILD/fixtures), CPU_SECONDS
(default 2), WALL_SECONDS (default 20). Closing line: "N passed, N failed".
"""
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

RAILBIND = os.environ["RAILBIND"]
FIX = os.path.join(os.environ["BUILD"], "fixtures")
CPU_SECONDS = float(os.environ.get("CPU_SECONDS", "2"))
WALL_SECONDS = float(os.environ.get("WALL_SECONDS", "20"))
passed = failed = 0
slowest = (0.0, 0.0, "")

# A machine of two PUs, as hwloc writes one; the bad files are variations.
GOOD = """<?xml version="1.0" encoding="UTF-8"?>
<topology version="2.0">
 <object type="Machine" os_index="0" cpuset="0x3" complete_cpuset="0x3" allowed_cpuset="0x3" nodeset="0x1" complete_nodeset="0x1" allowed_nodeset="0x1" gp_index="1">
  <object type="NUMANode" os_index="0" cpuset="0x3" complete_cpuset="0x3" nodeset="0x1" complete_nodeset="0x1" gp_index="2"/>
  <object type="PU" os_index="0" cpuset="0x1" complete_cpuset="0x1" nodeset="0x1" complete_nodeset="0x1" gp_index="3"/>
  <object type="PU" os_index="1" cpuset="0x2" complete_cpuset="0x2" nodeset="0x1" complete_nodeset="0x1" gp_index="4"/>
 </object>
</topology>
"""
CRASHERS = {
    # NULL dereference in hwloc_topology_load, either importer.
    "no-complete-cpuset.xml": GOOD.replace(
        'os_index="1" cpuset="0x2" complete_cpuset="0x2"', 'os_index="1" cpuset="0x2"'),
    # hwloc_bitmap_sscanf: Assertion `count > 0' failed (SIGABRT, and a line on stderr).
    "assert.xml": GOOD.replace('complete_cpuset="0x3" allowed', 'complete_cpuset=",0x3" allowed'),
    # Not XML: the minimal importer (HWLOC_LIBXML=0) takes it in and crashes.
    "unterminated.xml": '<?xml version="1.0"?>\n<topology version="2.0',
}


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: " + what)


def importers(good):
    """hwloc's XML importers on this machine: the libxml2 plugin only when installed."""
    r = subprocess.run(["lstopo-no-graphics", "-i", good, "--of", "xml"], capture_output=True,
                       text=True, env=dict(os.environ, HWLOC_PLUGINS_VERBOSE="1"))
    have = "hwloc_xml_libxml' ready" in r.stderr
    print("hwloc XML importers: %s" % ("libxml2 (libhwloc-plugins) and minimal" if have else
                                      "minimal only (libhwloc-plugins not installed)"))
    return [("default", None), ("minimal", "0")] if have else [("minimal", "0")]


def run(args, libxml, timeout=None):
    """Run railbind: (returncode, stdout, stderr, cpu seconds, wall seconds)."""
    global slowest
    env = dict(os.environ, RAILBIND_SOCKET="/nonexistent/railbind.sock", LC_ALL="C")
    env.pop("HWLOC_LIBXML", None)
    if libxml is not None:
        env["HWLOC_LIBXML"] = libxml
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    try:
        p = subprocess.run([RAILBIND] + args, capture_output=True, text=True, env=env,
                           stdin=subprocess.DEVNULL, timeout=timeout or WALL_SECONDS)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "hang", e.stdout or "", e.stderr or ""
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if cpu > slowest[0]:
        slowest = (cpu, wall, " ".join(args))
    return rc, out if isinstance(out, str) else out.decode(), \
        err if isinstance(err, str) else err.decode(), cpu, wall


def one_file(tmp, name, path, importer, libxml, config=None):
    """Every reading command on @path (as --input, or as --config)."""
    cmds = [("topo", 1), ("plan", 1), ("audit", 3), ("nccl-topo", 1), ("verify", 3), ("run", None)]
    for cmd, want in cmds:
        if config:
            args = [cmd, "--config", path, "--input", os.path.join(tmp, "good.xml")]
        else:
            args = [cmd, "--input", path]
        if cmd == "run":
            args = ["run", "--local", "--rank", "0"] + args[1:] + [
                "--", "touch", os.path.join(tmp, "ran")]
        rc, out, err, cpu, wall = run(args, libxml)
        what = "%s %s (%s importer): " % (cmd, name, importer)
        check(rc != "hang", what + "still running after %g s (killed)" % WALL_SECONDS)
        if rc == "hang":
            continue
        check(rc >= 0, what + "killed by signal %d" % -rc)
        if want is None:
            check(rc > 0 and not os.path.exists(os.path.join(tmp, "ran")),
                  what + "exit %d, command run: %s" % (rc, os.path.exists(os.path.join(tmp, "ran"))))
        else:
            check(rc == want, what + "exit %d, expected %d" % (rc, want))
        lines = err.splitlines()
        check(len(lines) == 1 and path in lines[0] and not out,
              what + "stderr %r, stdout %d bytes" % (err[:400], len(out)))
        check(cpu <= CPU_SECONDS, what + "%.2f s of CPU (limit %g)" % (cpu, CPU_SECONDS))


def fleet(tmp, bad, importer, libxml):
    d = os.path.join(tmp, "fleet")
    os.makedirs(os.path.join(d, "subdir"))
    for n in ("node1.xml", "node2.xml", "node3.xml"):
        shutil.copy(os.path.join(FIX, "dgx-h100.xml"), os.path.join(d, n))
    rc, out, _, _, _ = run(["audit", "--json", "--input", os.path.join(FIX, "dgx-h100.xml")], libxml)
    with open(os.path.join(d, "node4.json"), "w") as f:
        f.write(out)
    for name, path in bad.items():
        if name.startswith("dir"):
            continue  # a subdirectory is not a node; subdir above checks it is skipped
        dst = os.path.join(d, "bad-" + name)
        if os.path.isfile(path) and not os.path.islink(path):
            shutil.copy(path, dst)
        else:
            os.symlink(path, dst)
    want = sorted("bad-" + n for n in bad if not n.startswith("dir"))
    for jobs in (["--jobs", "1"], [], ["--jobs", "3"]):
        rc, out, err, cpu, wall = run(["fleet", "--json"] + jobs + [d], libxml)
        what = "fleet %s (%s importer): " % (" ".join(jobs) or "(default jobs)", importer)
        check(rc == 2, what + "exit %r, expected 2" % rc)
        check(err == "", what + "stderr %r" % err[:400])
        try:
            doc = json.loads(out)
        except ValueError:
            check(False, what + "no JSON: %r" % out[:200])
            continue
        got = sorted(os.path.basename(u["file"]) for u in doc.get("unreadable", []))
        check(got == want, what + "unreadable %s, expected %s" % (got, want))
        check(all(u.get("error", "").startswith(u["file"] + ":") and "\n" not in u["error"]
                  for u in doc.get("unreadable", [])),
              what + "an unreadable file without its one-line reason: %s" % doc.get("unreadable"))
        check(doc.get("nodes") == 4 and doc.get("status") == "unreadable",
              what + "nodes %s status %s" % (doc.get("nodes"), doc.get("status")))
    shutil.rmtree(d)


def main():
    tmp = tempfile.mkdtemp(prefix="railbind-input.")
    try:
        bad = {}
        for name, text in CRASHERS.items():
            bad[name] = os.path.join(tmp, name)
            with open(bad[name], "w") as f:
                f.write(text)
        with open(os.path.join(tmp, "good.xml"), "w") as f:
            f.write(GOOD)
        bad["fifo.xml"] = os.path.join(tmp, "fifo.xml")
        os.mkfifo(bad["fifo.xml"])
        bad["zero"] = "/dev/zero"
        bad["zero-link.xml"] = os.path.join(tmp, "zero-link.xml")
        os.symlink("/dev/zero", bad["zero-link.xml"])
        bad["dir.xml"] = os.path.join(tmp, "dir.xml")
        os.mkdir(bad["dir.xml"])
        bad["empty.xml"] = os.path.join(tmp, "empty.xml")
        open(bad["empty.xml"], "w").close()
        # Over max-input-size (1M in this config), whatever its content.
        bad["big.xml"] = os.path.join(tmp, "big.xml")
        with open(bad["big.xml"], "w") as f:
            f.write(GOOD + "<!--" + "x" * (1 << 20) + "-->\n")
        conf = os.path.join(tmp, "small-limit.conf")
        with open(conf, "w") as f:
            f.write("max-input-size = 1M\n")

        for importer, libxml in importers(os.path.join(tmp, "good.xml")):
            for name, path in bad.items():
                if name == "big.xml":
                    continue
                one_file(tmp, name, path, importer, libxml)
            # The size limit is the config's: big.xml loads by default, not under 1M.
            rc, _, err, _, _ = run(["topo", "--input", bad["big.xml"]], libxml)
            check(rc == 0, "big.xml (%s importer) under the default limit: exit %r %s" %
                  (importer, rc, err[:200]))
            rc, out, err, cpu, _ = run(["topo", "--config", conf, "--input", bad["big.xml"]], libxml)
            check(rc == 1 and len(err.splitlines()) == 1 and "larger than 1048576 bytes" in err
                  and not out, "big.xml (%s importer) over max-input-size = 1M: exit %r %r" %
                  (importer, rc, err[:300]))
            # The config file is read the same way.
            for name in ("fifo.xml", "zero", "dir.xml"):
                one_file(tmp, "--config " + name, bad[name], importer, libxml, config=True)
            fleet(tmp, {k: v for k, v in bad.items() if k != "big.xml"}, importer, libxml)
        # A reader that goes away (| head) ends the command by SIGPIPE, as
        # before it ran in a child: no "crash" reported for it.
        big = os.path.join(tmp, "g256.xml")
        subprocess.run([os.path.join(os.path.dirname(RAILBIND), "rbgen"), "--gpus", "256", "-o", big],
                       check=True)
        p = subprocess.Popen([RAILBIND, "topo", "--input", big], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        p.stdout.read(100)
        p.stdout.close()
        err = p.stderr.read().decode()
        p.wait()
        check(p.returncode == -13 and err == "",
              "topo | head: exit %r, stderr %r (want SIGPIPE, nothing said)" % (p.returncode, err[:200]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("most CPU: %.2f s (%.2f s wall): railbind %s" % slowest)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
