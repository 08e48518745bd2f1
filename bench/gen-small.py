#!/usr/bin/env python3
"""gen-small.py COUNT SIZE OUT.tar - a tar of COUNT regular files of SIZE
bytes, 1,000 to a directory (d0000/f000 ...), written straight as ustar
blocks: Python's tarfile would take minutes for a million entries."""
import sys


def header(name, size, typeflag):
    h = bytearray(512)
    h[0:len(name)] = name.encode()
    h[100:108] = b"0000644\0" if typeflag == b"0" else b"0000755\0"
    h[108:116] = b"0000000\0"
    h[116:124] = b"0000000\0"
    h[124:136] = b"%011o\0" % size
    h[136:148] = b"%011o\0" % 1700000000
    h[148:156] = b"        "
    h[156:157] = typeflag
    h[257:265] = b"ustar\x0000"
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)


def main():
    count, size, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    data = (b"x" * size) + b"\0" * ((512 - size % 512) % 512)
    with open(out, "wb", buffering=1 << 20) as f:
        for i in range(count):
            d, k = divmod(i, 1000)
            if k == 0:
                f.write(header("d%04d/" % d, 0, b"5"))
            f.write(header("d%04d/f%03d" % (d, k), size, b"0"))
            f.write(data)
        f.write(b"\0" * 10240)


main()
