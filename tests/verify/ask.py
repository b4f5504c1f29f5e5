#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""ask.py SOCKET REQUEST...: send each request line to railbindd on one
connection and print each reply line (tests/verify/run.sh)."""
import socket
import sys


def main():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(sys.argv[1])
    f = s.makefile("rwb")
    for req in sys.argv[2:]:
        f.write(req.encode() + b"\n")
        f.flush()
        sys.stdout.write(f.readline().decode())
    s.close()


if __name__ == "__main__":
    main()
