#!/usr/bin/env python3
"""Tar archives whose directory entries carry a body (tests/hardening).

usage: mkdirbody.py DIR

each 'before', then the case, then 'after':

  slash-file.tar        a regular-file header (typeflag 0) named 'weird/'
                        with a 9-byte body
  slash-file-long.tar   the same with a 1,100-byte body (three blocks)
  slash-file-resync.tar the same with a 1,536-byte body whose second
                        block is a valid header for 'smuggled' (a resync
                        block by block would find it)
  dir-body.tar          a directory header (typeflag 5) 'd/' with a
                        1,024-byte body of text (libarchive drops a
                        directory's size)
"""
import os
import sys

BLOCK = 512


def header(name, typeflag, size, mode=0o644):
    h = bytearray(BLOCK)

    def put(off, length, value):
        h[off:off + len(value)] = value[:length]

    put(0, 100, name.encode())
    put(100, 8, b"%07o\0" % mode)
    put(108, 8, b"%07o\0" % 0)
    put(116, 8, b"%07o\0" % 0)
    put(124, 12, b"%011o\0" % size)
    put(136, 12, b"%011o\0" % 1700000000)
    h[148:156] = b" " * 8
    h[156] = ord(typeflag)
    put(257, 6, b"ustar\0")
    put(263, 2, b"00")
    put(148, 8, b"%06o\0 " % sum(h))
    return bytes(h)


def body(data, size=None):
    size = len(data) if size is None else size
    data = data.ljust(size, b"\0")
    return data + b"\0" * (-len(data) % BLOCK)


def member(name, data, typeflag="0", mode=0o644):
    return header(name, typeflag, len(data), mode) + body(data)


def main():
    out = sys.argv[1]
    end = b"\0" * (2 * BLOCK)
    before, after = member("before", b"1\n"), member("after", b"2\n")
    smuggled = member("smuggled", b"from inside a directory's body\n")
    archives = {
        "slash-file.tar": member("weird/", b"body data"),
        "slash-file-long.tar": member("weird/", b"not a header\n" * 84 + b"1234"),
        "slash-file-resync.tar": header("weird/", "0", 1536) +
        body(b"x" * BLOCK + smuggled, 1536),
        "dir-body.tar": header("d/", "5", 1024, 0o755) + body(b"not a header\n" * 40, 1024),
    }
    for name, mid in archives.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(before + mid + after + end)


if __name__ == "__main__":
    main()
