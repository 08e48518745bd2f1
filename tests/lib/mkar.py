#!/usr/bin/env python3
"""Build a tar archive from a small spec: hostile names and links included.

usage: mkar.py OUT [gnu|pax|ustar] < SPEC

Each spec line is split like a shell line; '#' starts a comment.  The first
word is the entry type, the second the name, exactly as stored (the escapes
\\xNN, \\n, \\t and \\\\ give any byte):

  f NAME [CONTENT]          regular file (CONTENT defaults to NAME + newline)
  z NAME SIZE               regular file of SIZE bytes of a fixed pattern
  d NAME                    directory
  l NAME TARGET             symbolic link, target stored verbatim
  h NAME TARGET             hard link to TARGET
  p NAME                    FIFO
  c NAME MAJOR MINOR        character device
  b NAME MAJOR MINOR        block device

then any of mode=OCTAL mtime=SECONDS uid=N gid=N uname=S gname=S, and
xattr=NAME=VALUE (repeatable; a pax SCHILY.xattr record, so only in a pax
archive).
OUT '-' writes to standard output.
"""
import codecs
import io
import os
import shlex
import sys
import tarfile

TYPES = {"f": tarfile.REGTYPE, "z": tarfile.REGTYPE, "d": tarfile.DIRTYPE,
         "l": tarfile.SYMTYPE, "h": tarfile.LNKTYPE, "p": tarfile.FIFOTYPE,
         "c": tarfile.CHRTYPE, "b": tarfile.BLKTYPE}
FORMATS = {"gnu": tarfile.GNU_FORMAT, "pax": tarfile.PAX_FORMAT,
           "ustar": tarfile.USTAR_FORMAT}


def raw(word):
    """The spec word's escapes turned into bytes, then into a str that
    tarfile encodes back to exactly those bytes."""
    b = codecs.escape_decode(word.encode("utf-8"))[0]
    return b.decode("utf-8", "surrogateescape")


def pattern(size):
    block = bytes(range(256)) * 32
    out = bytearray()
    while len(out) < size:
        out += block
    return bytes(out[:size])


def entry(words):
    kind, name, rest = words[0], raw(words[1]), words[2:]
    opts = {}
    args = []
    xattrs = {}
    for w in rest:
        key, eq, val = w.partition("=")
        if eq and key == "xattr":
            xname, _, xvalue = val.partition("=")
            xattrs["SCHILY.xattr." + xname] = xvalue
        elif eq and key in ("mode", "mtime", "uid", "gid", "uname", "gname"):
            opts[key] = val
        else:
            args.append(w)
    ti = tarfile.TarInfo(name)
    ti.type = TYPES[kind]
    ti.mtime = int(opts.get("mtime", 1600000000))
    ti.uid = int(opts.get("uid", 0))
    ti.gid = int(opts.get("gid", 0))
    ti.uname = opts.get("uname", "")
    ti.gname = opts.get("gname", "")
    ti.mode = int(opts.get("mode", {"d": "755", "l": "777"}.get(kind, "644")), 8)
    if xattrs:
        ti.pax_headers = xattrs
    data = None
    if kind == "f":
        data = raw(args[0]).encode("utf-8", "surrogateescape") if args \
            else name.encode("utf-8", "surrogateescape") + b"\n"
    elif kind == "z":
        data = pattern(int(args[0]))
    elif kind in ("l", "h"):
        ti.linkname = raw(args[0])
    elif kind in ("c", "b"):
        ti.devmajor, ti.devminor = int(args[0]), int(args[1])
    if data is not None:
        ti.size = len(data)
        return ti, io.BytesIO(data)
    return ti, None


def main():
    out = sys.argv[1]
    fmt = FORMATS[sys.argv[2] if len(sys.argv) > 2 else "gnu"]
    sink = sys.stdout.buffer if out == "-" else open(out, "wb")
    with tarfile.open(fileobj=sink, mode="w|", format=fmt,
                      encoding="utf-8", errors="surrogateescape") as tf:
        for line in sys.stdin:
            words = shlex.split(line, comments=True, posix=True)
            if not words:
                continue
            ti, data = entry(words)
            tf.addfile(ti, data)
    if out != "-":
        sink.close()


if __name__ == "__main__":
    main()
