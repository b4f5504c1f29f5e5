#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Launch cost of two commands, interleaved: wall time and CPU time per launch.

Usage: broker_launch.py N BROKER_PID :: CMD_A... :: CMD_B...
CPU time is the launched processes' (RUSAGE_CHILDREN) plus, when BROKER_PID
is not 0, what the broker spent meanwhile: on a shared machine CPU time is
the steadier measure, wall time the one a job launcher sees. Prints
"A_wall_us B_wall_us A_cpu_us B_cpu_us".
"""
import os
import resource
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def broker_cpu(pid):
    if pid == "0":
        return 0.0
    with open("/proc/%s/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main():
    n = int(sys.argv[1])
    pid = sys.argv[2]
    rest = sys.argv[4:]
    split = rest.index("::")
    cmds = [rest[:split], rest[split + 1:]]
    wall = [0.0, 0.0]
    cpu = [0.0, 0.0]
    null = open(os.devnull, "w")
    for i in range(n * 2):
        k = i % 2 if (i // 2) % 2 == 0 else 1 - i % 2   # ABBA order
        c0, b0, t0 = child_cpu(), broker_cpu(pid), time.perf_counter()
        rc = subprocess.call(cmds[k], stdout=null, stderr=null)
        wall[k] += time.perf_counter() - t0
        cpu[k] += child_cpu() - c0 + (broker_cpu(pid) - b0 if k == 0 else 0)
        if rc:
            print("failed: %s" % " ".join(cmds[k]), file=sys.stderr)
            return 1
    print("%.0f %.0f %.0f %.0f" % tuple(x / n * 1e6 for x in (*wall, *cpu)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
