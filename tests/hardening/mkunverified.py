#!/usr/bin/env python3
"""Compressed tar archives whose stream fails its check after good data.

usage: mkunverified.py DIR

Writes into DIR, from one tar of 40 files f01..f40 of 30,000 random
bytes each (random, so that zstd stores them raw and a changed byte
still decodes):

  two-members.tar.gz   two gzip members split after f20; the second
                       member's CRC32 wrong
  one-member.tar.gz    one gzip member, a data byte of f30 changed
                       (stored deflate blocks: still valid deflate)
  two-frames.tar.zst   two zstd frames with checksums, split after f20;
                       a data byte of the second frame changed (raw
                       blocks: still a valid frame, its checksum wrong)
  one-stream.tar.xz    one xz stream of one block, its CRC64 check wrong
  good.tar.gz          the same tar, undamaged
  many-members.tar.gz  another tar, of 2,000 files of 3,000 bytes with
                       86-byte names, in four gzip members cut across
                       entries (at 1.3, 2.6 and 3.9 MB), the last one's
                       CRC32 wrong.  many-members.first: the first file
                       whose header is in that member.

and DIR/split, the number of files in the first member or frame.
"""
import io
import lzma
import os
import random
import struct
import subprocess
import sys
import tarfile
import zlib

BLOCK = 512
N = 40
SIZE = 30000
SPLIT = 20


def tar_bytes():
    rnd = random.Random(7)
    buf = io.BytesIO()
    offsets = {}
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for i in range(1, N + 1):
            name = "f%02d" % i
            data = bytes(rnd.getrandbits(8) for _ in range(SIZE))
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1700000000
            offsets[name] = buf.tell() + BLOCK
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue(), offsets


def stored_deflate(data):
    out = bytearray()
    for i in range(0, len(data), 65535):
        chunk = data[i:i + 65535]
        last = 1 if i + 65535 >= len(data) else 0
        out += bytes([last]) + struct.pack("<HH", len(chunk), len(chunk) ^ 0xFFFF)
        out += chunk
    if not data:
        out += b"\x01\x00\x00\xff\xff"
    return bytes(out)


def gzip_member(data, crc=None, flip_at=None):
    body = bytearray(stored_deflate(data))
    if flip_at is not None:
        # Stored blocks: byte k of the data is at 5 * (k // 65535 + 1) + k.
        body[5 * (flip_at // 65535 + 1) + flip_at] ^= 0x55
    crc = zlib.crc32(data) if crc is None else crc
    return (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + bytes(body) +
            struct.pack("<II", crc & 0xFFFFFFFF, len(data) & 0xFFFFFFFF))


def zstd_frame(data):
    return subprocess.run(["zstd", "-q", "-c", "--no-progress", "-1", "-C"],
                          input=data, stdout=subprocess.PIPE, check=True).stdout


def varint(b, i):
    v = shift = 0
    while True:
        v |= (b[i] & 0x7F) << shift
        shift += 7
        i += 1
        if not b[i - 1] & 0x80:
            return v, i


def xz_bad_check(data):
    """One xz stream of one block whose CRC64 check is off by one bit.

    The block's size is read from the index (found through the footer's
    backward size): its check is the last 8 bytes of its unpadded size.
    """
    xz = bytearray(lzma.compress(data, preset=0, check=lzma.CHECK_CRC64))
    assert xz[-2:] == b"YZ"
    index_size = (struct.unpack("<I", xz[-8:-4])[0] + 1) * 4
    index = xz[-12 - index_size:-12]
    assert index[0] == 0
    records, i = varint(index, 1)
    assert records == 1, "more than one block"
    unpadded, i = varint(index, i)
    xz[12 + unpadded - 8] ^= 0x01
    return bytes(xz)


def many_members(out):
    """The list of unverified entries as members verify while it grows."""
    rnd = random.Random(11)
    buf = io.BytesIO()
    starts = []
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for i in range(2000):
            info = tarfile.TarInfo("m%04d-" % i + "x" * 80)
            data = rnd.randbytes(3000)
            info.size = len(data)
            info.mtime = 1700000000
            starts.append((buf.tell(), info.name))
            t.addfile(info, io.BytesIO(data))
    data = buf.getvalue()
    # Members of 1.3 MB, more than the decoder reads ahead (a 1 MiB ring
    # with --jobs=2), so that entries wait for each trailer; the last one
    # from 3.9 MB to the end.
    cuts = [0, 1300000, 2600000, 3900000]
    gz = b""
    for i, c in enumerate(cuts):
        last = i == len(cuts) - 1
        part = data[c:] if last else data[c:cuts[i + 1]]
        gz += gzip_member(part, crc=zlib.crc32(part) ^ 1 if last else None)
    first = next(n for s, n in starts if s >= cuts[-1])
    with open(os.path.join(out, "many-members.tar.gz"), "wb") as f:
        f.write(gz)
    with open(os.path.join(out, "many-members.first"), "w") as f:
        f.write(first + "\n")


def many_names(out):
    """More names than the list keeps: 40,000 empty files with 64-byte
    names (2.6 MB of names) in one gzip member whose CRC32 is wrong."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for i in range(40000):
            info = tarfile.TarInfo("n%05d-" % i + "x" * 57)
            info.mtime = 1700000000
            t.addfile(info)
    data = buf.getvalue()
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = c.compress(data) + c.flush()
    with open(os.path.join(out, "many-names.tar.gz"), "wb") as f:
        f.write(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + body +
                struct.pack("<II", (zlib.crc32(data) ^ 1) & 0xFFFFFFFF,
                            len(data) & 0xFFFFFFFF))


def main():
    out = sys.argv[1]
    data, off = tar_bytes()
    cut = off["f%02d" % (SPLIT + 1)] - BLOCK
    flip = off["f30"] + 100

    def write(name, b):
        with open(os.path.join(out, name), "wb") as f:
            f.write(b)

    write("good.tar.gz", gzip_member(data))
    write("two-members.tar.gz",
          gzip_member(data[:cut]) + gzip_member(data[cut:], crc=zlib.crc32(data[cut:]) ^ 1))
    write("one-member.tar.gz", gzip_member(data, flip_at=flip))
    # zstd keeps random data in raw blocks; a byte of them changed is
    # still a frame, whose checksum then fails.
    first, second = zstd_frame(data[:cut]), bytearray(zstd_frame(data[cut:]))
    pos = bytes(second).find(data[flip:flip + 16])
    assert pos > 0, "zstd did not store the data raw"
    second[pos] ^= 0x55
    write("two-frames.tar.zst", first + bytes(second))
    write("one-stream.tar.xz", xz_bad_check(data))
    write("split", b"%d\n" % SPLIT)
    many_members(out)
    many_names(out)


if __name__ == "__main__":
    main()
