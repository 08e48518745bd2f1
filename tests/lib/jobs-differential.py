#!/usr/bin/env python3
"""Differential test of --jobs: seeded random archives, each extracted with
--jobs=1 and with more threads; the exit status, the report, the messages
and the tree (types, content, modes, link targets, mtimes) must be
identical, and no temporary may remain.

usage: jobs-differential.py SAFE_EXTRACT WORKDIR [--seed N] [--count N]
                            [--jobs 2,4,8] [--modes all] [--workers N]
                            [--keep-failures DIR]

Archives are built from a small set of names so that entries collide:
every entry type on the same names, names under and above each other,
aliases through symlinks (from the archive, and already in DEST for
--keep-directory-symlink), hardlinks to names replaced later, large files
(past the writers' 512 KiB buffer) and sparse ones, data that fails its
check (zip CRC), and archives cut short.  Formats: GNU tar, pax, cpio
(newc) and zip.  Modes: strict, --in-root, --keep-directory-symlink,
--durable, -k, and --oci-layer (without and with --durable) onto a lower
layer, whiteout and opaque names among the names.

Prints one line per failure (seed, format, mode, jobs) and a summary; exits
1 when any outcome differed.  Every archive is a function of its seed, so a
failure is reproduced with --seed S --count 1.
"""
import argparse
import warnings
import io
import os
import random
import shutil
import stat
import struct
import subprocess
import sys
import tarfile
import zipfile
import zlib

NAMES = ["a", "b", "a/b", "a/c", "b/a", "d", "d/x", "d/x/y", "l", "l/x",
         "l/x/y", "e/f", "e/f/g", "m", "m/n",
         # An image layer's markers (plain names in the other modes).
         ".wh.d", "d/.wh.x", ".wh.a", "d/.wh..wh..opq", "e/.wh..wh..opq"]
LINK_TARGETS = ["d", "a", "b", "../x", "/etc", "e/f", "d/x", "l", "nowhere", "."]
MODES = {
    "strict": [],
    "in-root": ["--in-root"],
    "keep-dir": ["--keep-directory-symlink"],
    "durable": ["--durable"],
    "keep-old": ["-k"],
    # Applied onto a lower layer (LOWER, made in DEST first); the
    # archive is --oci-layer's argument.
    "oci-layer": ["--oci-layer"],
    "oci-layer-durable": ["--durable", "--oci-layer"],
}

# oci-layer modes: what DEST holds before the layer (type, name, payload).
LOWER = [("d", "d", None), ("d", "d/x", None), ("f", "d/x/y", b"lower"),
         ("f", "d/z", b"lower"), ("f", "a", b"lower"), ("d", "e", None),
         ("d", "e/f", None), ("f", "e/f/g", b"lower"), ("l", "m", "d"),
         ("f", "e/k", b"lower")]


def rand_data(rng, big=False):
    if big and rng.random() < 0.5:
        n = rng.choice([524287, 524288, 524289, 700000, 1100000])
    else:
        n = rng.choice([0, 1, 7, 100, 513, 4096, 20000])
    seed = rng.getrandbits(32)
    return (seed.to_bytes(4, "little") * (n // 4 + 1))[:n]


def entries(rng):
    """A random list of (type, name, payload) with collisions."""
    out = []
    for _ in range(rng.randint(1, 14)):
        t = rng.choices("fdlhpF", weights=[6, 3, 3, 2, 1, 1])[0]
        name = rng.choice(NAMES)
        if t in "fF":
            out.append(("f", name, rand_data(rng, big=(t == "F"))))
        elif t == "d":
            out.append(("d", name, None))
        elif t == "l":
            out.append(("l", name, rng.choice(LINK_TARGETS + NAMES)))
        elif t == "h":
            out.append(("h", name, rng.choice(NAMES)))
        else:
            out.append(("p", name, None))
    return out


def make_tar(ents, fmt, rng):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tf:
        for t, name, payload in ents:
            ti = tarfile.TarInfo(name)
            ti.mtime = 1000000 + rng.randint(0, 1000)
            ti.mode = rng.choice([0o644, 0o600, 0o755, 0o700])
            data = None
            if t == "f":
                ti.type = tarfile.REGTYPE
                ti.size = len(payload)
                data = io.BytesIO(payload)
            elif t == "d":
                ti.type = tarfile.DIRTYPE
            elif t == "l":
                ti.type = tarfile.SYMTYPE
                ti.linkname = payload
            elif t == "h":
                ti.type = tarfile.LNKTYPE
                ti.linkname = payload
            else:
                ti.type = tarfile.FIFOTYPE
            tf.addfile(ti, data)
    return buf.getvalue()


def make_sparse_tar(rng):
    """A GNU sparse member among small files, made by hand: old GNU sparse
    headers carry up to four (offset, size) pairs."""
    size = rng.choice([600000, 3000000])
    chunks = [(0, 512), (size // 2, 1024)]
    data = b"".join(bytes([rng.randint(1, 255)]) * n for _, n in chunks)
    hdr = bytearray(512)

    def put(off, width, value):
        hdr[off:off + width] = value[:width].ljust(width, b"\0")

    put(0, 100, b"sparse")
    put(100, 8, b"0000644\0")
    put(108, 8, b"0000000\0")
    put(116, 8, b"0000000\0")
    put(124, 12, b"%011o\0" % len(data))
    put(136, 12, b"%011o\0" % 1000000)
    hdr[156] = ord("S")
    put(257, 8, b"ustar  \0")
    for i, (off, n) in enumerate(chunks):
        put(386 + i * 24, 12, b"%011o\0" % off)
        put(398 + i * 24, 12, b"%011o\0" % n)
    put(483, 12, b"%011o\0" % size)
    hdr[148:156] = b" " * 8
    put(148, 8, b"%06o\0 " % sum(hdr))
    body = data + b"\0" * (-len(data) % 512)
    small = make_tar([("f", "a", b"small\n"), ("f", "sparse/after", b"x")],
                     tarfile.GNU_FORMAT, rng)
    return bytes(hdr) + body + small


def newc(name, mode, data, ino, nlink=1):
    name_b = name.encode() + b"\0"
    h = b"070701" + b"".join(b"%08x" % v for v in (
        ino, mode, 0, 0, nlink, 1000000, len(data), 0, 0, 0, 0, len(name_b), 0))
    pad1 = b"\0" * (-(110 + len(name_b)) % 4)
    pad2 = b"\0" * (-len(data) % 4)
    return h + name_b + pad1 + data + pad2


def make_cpio(ents):
    out = b""
    for i, (t, name, payload) in enumerate(ents):
        if t == "f":
            out += newc(name, 0o100644, payload, i + 1)
        elif t == "d":
            out += newc(name, 0o40755, b"", i + 1)
        elif t == "l":
            out += newc(name, 0o120777, payload.encode(), i + 1)
        elif t == "p":
            out += newc(name, 0o10644, b"", i + 1)
        # cpio hardlinks share an inode number: left out here
    return out + newc("TRAILER!!!", 0, b"", 0)


def make_zip(ents, rng):
    buf = io.BytesIO()
    bad = set()
    with zipfile.ZipFile(buf, "w") as zf:
        for i, (t, name, payload) in enumerate(ents):
            if t == "f":
                method = rng.choice([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
                zi = zipfile.ZipInfo(name, date_time=(2000, 1, 1, 0, 0, 0))
                zi.compress_type = method
                zi.external_attr = 0o100644 << 16
                zf.writestr(zi, payload)
                if payload and rng.random() < 0.2:
                    bad.add(name)
            elif t == "d":
                zi = zipfile.ZipInfo(name + "/", date_time=(2000, 1, 1, 0, 0, 0))
                zi.external_attr = 0o40755 << 16
                zf.writestr(zi, b"")
            elif t == "l":
                zi = zipfile.ZipInfo(name, date_time=(2000, 1, 1, 0, 0, 0))
                zi.external_attr = 0o120777 << 16
                zf.writestr(zi, payload)
    data = bytearray(buf.getvalue())
    # Damaged data: the CRC of some members, in both headers.
    for sig, nlen_at, name_at, crc_at in ((b"PK\x03\x04", 26, 30, 14),
                                          (b"PK\x01\x02", 28, 46, 16)):
        pos = 0
        while True:
            off = data.find(sig, pos)
            if off < 0:
                break
            pos = off + 4
            n = struct.unpack_from("<H", data, off + nlen_at)[0]
            if bytes(data[off + name_at:off + name_at + n]).decode(errors="replace") in bad:
                data[off + crc_at] ^= 0x5a
    return bytes(data)


def make_archive(seed):
    rng = random.Random(seed)
    kind = rng.choices(["gnu", "pax", "cpio", "zip", "sparse"],
                       weights=[5, 3, 2, 2, 1])[0]
    ents = entries(rng)
    if kind == "gnu":
        data = make_tar(ents, tarfile.GNU_FORMAT, rng)
    elif kind == "pax":
        data = make_tar(ents, tarfile.PAX_FORMAT, rng)
    elif kind == "cpio":
        data = make_cpio(ents)
    elif kind == "zip":
        data = make_zip(ents, rng)
    else:
        data = make_sparse_tar(rng)
    if kind != "zip" and rng.random() < 0.1:
        data = data[:rng.randint(1, len(data))]
        kind += "-cut"
    return kind, data, rng


def tree(dest):
    lines = []
    for root, dirs, files in os.walk(dest):
        dirs.sort()
        for name in sorted(dirs + files):
            p = os.path.join(root, name)
            rel = os.path.relpath(p, dest)
            st = os.lstat(p)
            m = st.st_mode
            if stat.S_ISLNK(m):
                what = "l " + os.readlink(p)
            elif stat.S_ISDIR(m):
                what = "d"
            elif stat.S_ISREG(m):
                with open(p, "rb") as f:
                    what = "f %08x %d nlink=%d" % (zlib.crc32(f.read()), st.st_size,
                                                  st.st_nlink)
            else:
                what = "o %o" % stat.S_IFMT(m)
            # A directory the archive did not date has the time of the
            # run: only dates from the archive (before 2001) are compared.
            mt = 0 if stat.S_ISLNK(m) else int(st.st_mtime)
            lines.append("%s %s %o %s" % (rel, what, stat.S_IMODE(m),
                                          mt if mt < 1000000000 else "now"))
    return lines


def outcome(se, archive, dest, args, mode, jobs):
    if os.path.lexists(dest):
        subprocess.run(["chmod", "-R", "u+rwX", dest], stderr=subprocess.DEVNULL)
        shutil.rmtree(dest)
    os.mkdir(dest)
    if mode == "keep-dir":
        os.mkdir(os.path.join(dest, "d"))
        os.symlink("d", os.path.join(dest, "l"))
    if mode.startswith("oci-layer"):
        for t, name, payload in LOWER:
            path = os.path.join(dest, name)
            if t == "d":
                os.mkdir(path)
            elif t == "l":
                os.symlink(payload, path)
            else:
                with open(path, "wb") as f:
                    f.write(payload)
    report = dest + ".report"
    p = subprocess.run([se, "--jobs=%d" % jobs, "--report=" + report] + args +
                       [archive, "-C", dest], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    with open(report, "rb") as f:
        rep = f.read().decode(errors="replace")
    err = p.stderr.decode(errors="replace").replace(dest, "DEST")
    temps = [l for l in tree(dest) if ".safe-extract-" in l]
    return "exit %d\n%s\n%s\n%s\ntemporaries %d\n" % (
        p.returncode, rep, err, "\n".join(tree(dest)), len(temps)), len(temps)


def run(args, first, count, out):
    failures = 0
    tap = 0
    work = os.path.join(args.workdir, "w%d" % first)
    os.makedirs(work, exist_ok=True)
    archive = os.path.join(work, "archive")
    jobs = [int(j) for j in args.jobs.split(",")]
    modes = list(MODES) if args.modes == "all" else args.modes.split(",")
    for seed in range(first, first + count):
        kind, data, rng = make_archive(seed)
        with open(archive, "wb") as f:
            f.write(data)
        # The short run tries every mode and every N; the long one a mode
        # and an N drawn from the seed.
        ms = modes if args.every_mode else [rng.choice(modes)]
        js = jobs if args.every_mode else [rng.choice(jobs)]
        before = failures
        for mode in ms:
            one, temps = outcome(args.se, archive, os.path.join(work, "one"),
                                 MODES[mode], mode, 1)
            if temps:
                failures += 1
                out.write("%sseed %d %s %s --jobs=1: %d temporaries left\n" %
                          ("# " if args.tap else "", seed, kind, mode, temps))
            for n in js:
                many, _ = outcome(args.se, archive, os.path.join(work, "many"),
                                  MODES[mode], mode, n)
                if many != one:
                    failures += 1
                    out.write("%sseed %d %s %s --jobs=%d: differs from --jobs=1\n" %
                              ("# " if args.tap else "", seed, kind, mode, n))
                    if args.keep_failures:
                        os.makedirs(args.keep_failures, exist_ok=True)
                        base = os.path.join(args.keep_failures, "seed-%d" % seed)
                        shutil.copy(archive, base + "." + kind)
                        with open(base + ".one", "w") as f:
                            f.write(one)
                        with open(base + ".many-%s-%d" % (mode, n), "w") as f:
                            f.write(many)
                    out.flush()
        if args.tap:
            tap += 1
            out.write("%sok %d - seed %d (%s): --jobs=%s gives --jobs=1's outcome in %s\n" % (
                "not " if failures > before else "", tap, seed, kind,
                ",".join(map(str, js)), ", ".join(ms)))
    if args.tap:
        out.write("1..%d\n" % tap)
    return failures


def main():
    warnings.simplefilter("ignore")
    ap = argparse.ArgumentParser()
    ap.add_argument("se")
    ap.add_argument("workdir")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--jobs", default="2,4,8")
    ap.add_argument("--modes", default="all")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--every-mode", action="store_true",
                    help="every mode and every N for each archive")
    ap.add_argument("--keep-failures")
    ap.add_argument("--tap", action="store_true", help="one TAP line per archive")
    args = ap.parse_args()
    per = (args.count + args.workers - 1) // args.workers
    pids = []
    for w in range(args.workers):
        first = args.seed + w * per
        n = min(per, args.seed + args.count - first)
        if n <= 0:
            break
        if args.workers == 1:
            failures = run(args, first, n, sys.stdout)
            print("%sjobs-differential: %d archives from seed %d, %d differences" %
                  ("# " if args.tap else "", n, first, failures))
            return 1 if failures else 0
        pid = os.fork()
        if pid == 0:
            failures = run(args, first, n, sys.stdout)
            sys.stdout.flush()
            os._exit(1 if failures else 0)
        pids.append(pid)
    bad = 0
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        bad += status != 0
    print("jobs-differential: %d archives from seed %d in %d workers, %d with differences" %
          (args.count, args.seed, len(pids), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
