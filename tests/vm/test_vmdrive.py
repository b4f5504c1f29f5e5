#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""vmdrive's boot loop without QEMU: a fake QEMU (this directory's python
playing a guest's console) that prints TAP and scenario markers, then
finishes, kills itself with SIGSEGV as QEMU 7.2's i6300esb does, hangs or
just exits. Checks which of those is retried on a fresh boot, which fails
the run, and that the TAP of several boots reads as one stream."""
import io
import os
import re
import signal
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vmdrive  # noqa: E402

# argv: a file counting boots, the boot scripts (JSON), rb.only or "".
FAKE_QEMU = r'''
import json, os, resource, signal, sys, time
count_file, scripts, only = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
n = int(open(count_file).read() or 0) if os.path.exists(count_file) else 0
open(count_file, "w").write(str(n + 1))
with open(count_file + ".only", "a") as f:
    f.write(only + "\n")
for line in scripts[n]:
    if line == "SEGV":
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.kill(os.getpid(), signal.SIGSEGV)
    elif line == "HANG":
        time.sleep(600)
    elif line == "EXIT":
        sys.exit(0)
    else:
        print(line, flush=True)
'''

GUEST_ALL = ["@@scenario topology", "ok 1 - topology", "@@scenarios acs,rescan,cycles"]


def finished(*names, first=2):
    """A boot that runs @names after the topology and finishes."""
    lines = ["@@scenario topology", "ok 1 - topology", "@@scenarios " + ",".join(names)]
    for i, name in enumerate(names):
        lines += ["@@scenario " + name, "ok %d - %s works" % (first + i, name),
                  "@@scenario-done " + name]
    n = first + len(names)
    return lines + ["ok %d - dmesg clean" % n, "1..%d" % n, "@@done rc=0"]


class Boots(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.count = os.path.join(self.dir.name, "boots")
        self.log = open(os.path.join(self.dir.name, "console.log"), "w")

    def tearDown(self):
        self.log.close()
        self.dir.cleanup()

    def run_boots(self, scripts, timeout=60):
        import json
        script = os.path.join(self.dir.name, "fake_qemu.py")
        with open(script, "w") as f:
            f.write(FAKE_QEMU)

        def make_cmd(only):
            return [sys.executable, "-B", script, self.count, json.dumps(scripts),
                    ",".join(only) if only else ""]

        out = io.StringIO()
        real = sys.stdout
        sys.stdout = out  # Tap relays results to stdout
        try:
            rc = vmdrive.run_boots(make_cmd, os.path.join(self.dir.name, "qmp.sock"),
                                   self.log, timeout, "fake", None, out=out)
        finally:
            sys.stdout = real
        with open(self.count + ".only") as f:
            onlys = f.read().splitlines()
        return rc, out.getvalue(), onlys

    def results(self, text):
        return [line for line in text.splitlines() if re.match(r"^(not )?ok \d", line)]

    def test_finished_boot_passes(self):
        rc, out, onlys = self.run_boots([finished("acs", "rescan")])
        self.assertEqual(rc, 0, out)
        self.assertEqual(onlys, [""])
        self.assertTrue(out.rstrip().endswith("1..4"), out)

    def test_qemu_segv_is_retried_from_its_scenario(self):
        crash = GUEST_ALL + ["@@scenario acs", "ok 2 - acs works", "@@scenario-done acs",
                             "@@scenario rescan", "ok 3 - rescan started", "SEGV"]
        rc, out, onlys = self.run_boots([crash, finished("rescan", "cycles")])
        self.assertEqual(rc, 0, out)
        self.assertIn("QEMU died by SIGSEGV in scenario rescan", out)
        self.assertIn("not the guest's", out)
        # The retry boot runs the scenario QEMU died in and those after it.
        self.assertEqual(onlys, ["", "rescan,cycles"])
        nums = [int(line.split()[2 if line.startswith("not") else 1])
                for line in self.results(out)]
        self.assertEqual(nums, list(range(1, len(nums) + 1)), out)
        self.assertTrue(out.rstrip().endswith("1..%d" % len(nums)), out)
        self.assertEqual(len(nums), 3 + 4)

    def test_second_crash_in_a_row_fails(self):
        crash = GUEST_ALL + ["@@scenario acs", "SEGV"]
        again = ["@@scenario topology", "ok 1 - topology", "@@scenarios acs,rescan,cycles",
                 "@@scenario acs", "SEGV"]
        rc, out, onlys = self.run_boots([crash, again, finished("acs")])
        self.assertEqual(rc, 1, out)
        self.assertIn("QEMU died by SIGSEGV in scenario acs twice in a row", out)
        self.assertEqual(len(onlys), 2, "no third boot")

    def test_crash_in_a_later_scenario_is_retried_again(self):
        first = GUEST_ALL + ["@@scenario acs", "SEGV"]
        second = ["@@scenario topology", "ok 1 - topology", "@@scenarios acs,rescan,cycles",
                  "@@scenario acs", "ok 2 - acs", "@@scenario-done acs", "@@scenario rescan",
                  "SEGV"]
        rc, out, onlys = self.run_boots([first, second, finished("rescan", "cycles")])
        self.assertEqual(rc, 0, out)
        self.assertEqual(onlys, ["", "acs,rescan,cycles", "rescan,cycles"])

    def test_crash_before_the_plan_reruns_everything(self):
        rc, out, onlys = self.run_boots([["@@scenario topology", "SEGV"],
                                         finished("acs")])
        self.assertEqual(rc, 0, out)
        self.assertEqual(onlys, ["", ""])

    def test_guest_hang_with_qemu_alive_fails(self):
        hang = GUEST_ALL + ["@@scenario rescan", "HANG"]
        rc, out, onlys = self.run_boots([hang, finished("rescan")], timeout=3)
        self.assertEqual(rc, 1, out)
        self.assertIn("the guest stopped answering in scenario rescan while QEMU ran", out)
        self.assertEqual(len(onlys), 1, "a hang is not retried")

    def test_guest_that_ends_unfinished_fails(self):
        rc, out, onlys = self.run_boots([GUEST_ALL + ["@@scenario cycles", "EXIT"],
                                         finished("cycles")])
        self.assertEqual(rc, 1, out)
        self.assertIn("ended in scenario cycles without finishing (QEMU exit 0)", out)
        self.assertEqual(len(onlys), 1)

    def test_failed_result_fails_the_run(self):
        lines = finished("acs")
        lines[lines.index("ok 2 - acs works")] = "not ok 2 - acs works"
        rc, out, _ = self.run_boots([lines])
        self.assertEqual(rc, 1, out)
        self.assertIn("not ok 2 - acs works", out)

    def test_plan_mismatch_fails(self):
        lines = finished("acs")
        lines[lines.index("1..3")] = "1..5"
        rc, out, _ = self.run_boots([lines])
        self.assertEqual(rc, 1, out)
        self.assertIn("3 of 5 planned tests reported", out)


class Verdict(unittest.TestCase):
    def test_table(self):
        segv = -signal.SIGSEGV
        cases = [
            ((True, segv, False, False), vmdrive.DONE),
            ((True, None, True, False), vmdrive.DONE),
            ((False, segv, False, False), vmdrive.RETRY),
            ((False, -signal.SIGABRT, False, False), vmdrive.RETRY),
            ((False, segv, False, True), vmdrive.CRASHED),
            ((False, None, True, False), vmdrive.HANG),
            ((False, None, True, True), vmdrive.HANG),
            ((False, 0, False, False), vmdrive.STOPPED),
            ((False, 1, False, True), vmdrive.STOPPED),
        ]
        for args, want in cases:
            self.assertEqual(vmdrive.verdict(*args), want, args)


if __name__ == "__main__":
    unittest.main()
