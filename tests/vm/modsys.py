# SPDX-License-Identifier: GPL-2.0-or-later
"""Module load and unload by system call, for the guest: the errno of
delete_module() itself, and no process to exec per try (slow under TCG)."""
import ctypes
import os

# x86_64. kmod's rmmod would refuse on its own from /sys/module/*/refcnt.
SYS_DELETE_MODULE = 176
SYS_FINIT_MODULE = 313
libc = ctypes.CDLL(None, use_errno=True)


def delete_module(name):
    r = libc.syscall(ctypes.c_long(SYS_DELETE_MODULE), ctypes.c_char_p(name.encode()),
                     ctypes.c_uint(os.O_NONBLOCK))
    return 0 if r == 0 else ctypes.get_errno()


def finit_module(path, params):
    fd = os.open(path, os.O_RDONLY)
    try:
        r = libc.syscall(ctypes.c_long(SYS_FINIT_MODULE), ctypes.c_int(fd),
                         ctypes.c_char_p(params.encode()), ctypes.c_int(0))
        return 0 if r == 0 else ctypes.get_errno()
    finally:
        os.close(fd)
