#!/usr/bin/env python3
"""Archives for tests/hardening/*.test (python3 stdlib only).

usage: mkhard.py COMMAND ARGS...

Each command writes one archive (or stream) described below.  Tar headers
are written by hand here, not by tarfile, so that a test gets exactly the
fields it names (pax records with any bytes, ids past 2**32, a hardlink
entry carrying data).

  race TYPE N OUT          pax: N entries e00000.. of TYPE (symlink fifo chr
                           file dir hardlink), owner 4242:4243, mode 0600
                           (dirs 0700), mtime 1234567890, user.race xattr on
                           files and dirs; hardlink: a file t first
  dirs N [xattr]           to stdout: one ustar directory header 'd/' N times,
                           then the end blocks (nothing is stored); xattr:
                           each with a pax header holding user.k (100 bytes)
  fifo-link-pax OUT        pax: FIFO p, then hardlink h -> p with 5 data bytes
                           (a pax size record: libarchive keeps a hardlink's
                           size only in pax archives)
  fifo-link-cpio OUT       cpio newc: FIFO p (nlink 2), then the same inode
                           as q, carrying 5 data bytes
  link-data-pax OUT NAME TARGET   pax: hardlink NAME -> TARGET, 5 data bytes
  zip-badcrc OUT           zip: stored member f, one data byte changed
  zip-short OUT            zip: deflated member f whose size fields say 1000
                           bytes more than its data
  7z-badcrc IN OUT         copy of the 7z archive IN (made with -mx0) with one
                           byte of its first packed stream changed
  iso OUT NAME             ISO9660 + Rock Ridge: the file NAME (any bytes,
                           \\xNN escapes) whose data extent comes before the
                           root directory's extent
  gzip OUT IN [DAMAGE]      gzip member of the file IN with a stored deflate
                           block; DAMAGE: crc: one data byte inside the block
                           changed; isize: the ISIZE trailer off by one;
                           crcfield: the CRC32 trailer off by one bit;
                           second: two members, the second's CRC32 wrong;
                           second-isize: the same, its ISIZE wrong; two: two
                           good members; padding: 1024 zero bytes after the
                           member; garbage: text after it; cut-trailer: the
                           last 3 bytes gone; cut-data: cut inside the
                           block; flags: a reserved FLG bit set; method: CM
                           7; hcrc, hcrc-ok: FHCRC with a wrong, a right
                           header CRC16
  pax OUT SPEC...          pax archive of file entries; SPEC is
                           NAME:MODE:UID:GID[:KEY=VALUE,...] where KEY=VALUE
                           are pax records (\\xNN escapes in the value)
"""
import codecs
import io
import os
import struct
import sys
import zipfile
import zlib

BLOCK = 512


def unesc(s):
    return codecs.escape_decode(s.encode("utf-8"))[0]


# ---- tar ------------------------------------------------------------------

def octal(value, width):
    """An octal field of WIDTH bytes; too big values get the GNU base-256
    form (pax records carry the real value anyway)."""
    s = b"%0*o" % (width - 1, value)
    if len(s) > width - 1:
        return bytes([0x80]) + value.to_bytes(width - 1, "big")[-(width - 1):]
    return s + b"\0"


def header(name, typeflag, size=0, mode=0o644, uid=0, gid=0,
           mtime=1600000000, linkname=b"", devmajor=0, devminor=0):
    if isinstance(name, str):
        name = name.encode()
    if isinstance(linkname, str):
        linkname = linkname.encode()
    h = bytearray(BLOCK)
    h[0:100] = name[:100].ljust(100, b"\0")
    h[100:108] = octal(mode, 8)
    h[108:116] = octal(min(uid, 0o7777777), 8)
    h[116:124] = octal(min(gid, 0o7777777), 8)
    h[124:136] = octal(size, 12)
    h[136:148] = octal(mtime, 12)
    h[148:156] = b" " * 8
    h[156:157] = typeflag
    h[157:257] = linkname[:100].ljust(100, b"\0")
    h[257:265] = b"ustar\x0000"
    h[329:337] = octal(devmajor, 8)
    h[337:345] = octal(devminor, 8)
    h[148:156] = b"%06o\0 " % (sum(h) & 0o777777)
    return bytes(h)


def pad(data):
    return data + b"\0" * (-len(data) % BLOCK)


def pax_records(records):
    out = b""
    for k, v in records.items():
        if isinstance(k, str):
            k = k.encode()
        if isinstance(v, str):
            v = v.encode()
        body = b" " + k + b"=" + v + b"\n"
        n = len(body) + 1
        while len(b"%d" % n) + len(body) != n:
            n += 1
        out += b"%d" % n + body
    return out


def entry(name, typeflag, data=b"", records=None, **kw):
    out = b""
    if records:
        rec = pax_records(records)
        out += header(b"PaxHeader/" + (name if isinstance(name, bytes)
                                       else name.encode())[:80],
                      b"x", size=len(rec)) + pad(rec)
    kw.setdefault("size", len(data))
    out += header(name, typeflag, **kw)
    if data:
        out += pad(data)
    return out


def end():
    return b"\0" * (2 * BLOCK)


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def cmd_race(kind, n, out):
    n = int(n)
    common = dict(uid=4242, gid=4243, mtime=1234567890)
    xattr = {"SCHILY.xattr.user.race": "1"}
    parts = []
    if kind == "hardlink":
        parts.append(entry("t", b"0", b"t\n", mode=0o600, **common))
    for i in range(n):
        name = "e%05d" % i
        if kind == "symlink":
            parts.append(entry(name, b"2", linkname="target", mode=0o777,
                               **common))
        elif kind == "fifo":
            parts.append(entry(name, b"6", mode=0o600, **common))
        elif kind == "chr":
            parts.append(entry(name, b"3", mode=0o600, devmajor=1,
                               devminor=3, **common))
        elif kind == "file":
            parts.append(entry(name, b"0", b"x\n", records=xattr, mode=0o600,
                               **common))
        elif kind == "dir":
            parts.append(entry(name + "/", b"5", records=xattr, mode=0o700,
                               **common))
        elif kind == "hardlink":
            parts.append(entry(name, b"1", linkname="t", mode=0o600,
                               **common))
        else:
            sys.exit("race: unknown type " + kind)
    parts.append(end())
    write(out, b"".join(parts))


def cmd_dirs(n, xattr=""):
    n = int(n)
    h = header("d/", b"5", mode=0o755)
    if xattr:
        # Each copy with its own pax header carrying a 100-byte xattr.
        rec = pax_records({"SCHILY.xattr.user.k": "v" * 100})
        h = header("PaxHeader/d", b"x", size=len(rec)) + pad(rec) + h
    out = sys.stdout.buffer
    chunk = h * 1024
    while n >= 1024:
        out.write(chunk)
        n -= 1024
    out.write(h * n + end())
    out.flush()


def cmd_fifo_link_pax(out):
    write(out, entry("p", b"6", mode=0o644)
          + entry("h", b"1", b"hello", records={"size": "5"}, linkname="p",
                  size=5) + end())


def cmd_link_data_pax(out, name, target):
    write(out, entry(name, b"1", b"hello", records={"size": "5"},
                     linkname=target, size=5) + end())


def newc(name, ino, mode, nlink, data=b""):
    name = name.encode() + b"\0"
    fields = [ino, mode, 0, 0, nlink, 1600000000, len(data), 0, 0, 0, 0,
              len(name), 0]
    h = b"070701" + b"".join(b"%08X" % f for f in fields)
    h += name
    h += b"\0" * (-len(h) % 4)
    return h + data + b"\0" * (-len(data) % 4)


def cmd_fifo_link_cpio(out):
    data = (newc("p", 5, 0o010644, 2) + newc("q", 5, 0o010644, 2, b"hello")
            + newc("TRAILER!!!", 0, 0, 1))
    write(out, data + b"\0" * (-len(data) % 512))


# ---- zip and 7z -------------------------------------------------------------

def cmd_zip_badcrc(out):
    data = b"hello, world\n" * 64
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("f", data)
    b = bytearray(buf.getvalue())
    i = b.index(data)
    b[i + 100] ^= 0x20
    write(out, bytes(b))


def cmd_zip_short(out):
    data = b"hello, world\n" * 64
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("f", data)
    b = bytearray(buf.getvalue())
    # Local header: sizes at 18 (compressed) and 22 (uncompressed); central
    # directory entry: at 20 and 24.  Only the uncompressed size grows: the
    # deflate stream ends where it ends, short of what the header promised.
    lh = b.index(b"PK\x03\x04")
    cd = b.index(b"PK\x01\x02")
    for off in (lh + 22, cd + 24):
        (v,) = struct.unpack_from("<I", b, off)
        struct.pack_into("<I", b, off, v + 1000)
    write(out, bytes(b))


def cmd_7z_badcrc(src, out):
    b = bytearray(open(src, "rb").read())
    # Signature header: 32 bytes, then the packed streams (-mx0: stored).
    b[32 + 40] ^= 0x20
    write(out, bytes(b))


# ---- ISO9660 ----------------------------------------------------------------

SECTOR = 2048


def both16(v):
    return struct.pack("<H", v) + struct.pack(">H", v)


def both32(v):
    return struct.pack("<I", v) + struct.pack(">I", v)


def dirrec(extent, size, flags, ident, su=b""):
    rec = bytearray()
    rec += b"\0"                      # length, set below
    rec += b"\0"                      # extended attribute length
    rec += both32(extent) + both32(size)
    rec += bytes([120, 1, 1, 0, 0, 0, 0])   # 2020-01-01 00:00:00 GMT
    rec += bytes([flags, 0, 0]) + both16(1)
    rec += bytes([len(ident)]) + ident
    if len(rec) % 2:
        rec += b"\0"
    rec += su
    if len(rec) % 2:
        rec += b"\0"
    rec[0] = len(rec)
    return bytes(rec)


def cmd_iso(out, name):
    name = unesc(name)
    data = b"file data that must not become zeros\n"
    FILE, ROOT, LPT, MPT, TOTAL = 18, 19, 20, 21, 24
    # Root directory: '.', with SUSP SP and RR so Rock Ridge is seen; '..';
    # the file, ISO name F.;1, Rock Ridge NM carrying NAME.
    sp = b"SP\x07\x01\xbe\xef\x00"
    rr = b"RR\x05\x01\x89"
    px_file = b"PX\x24\x01" + both32(0o100644) + both32(1) + both32(0) + both32(0)
    px_dir = b"PX\x24\x01" + both32(0o040755) + both32(2) + both32(0) + both32(0)
    nm = b"NM" + bytes([5 + len(name), 1, 0]) + name
    root = bytearray()
    root += dirrec(ROOT, SECTOR, 2, b"\0", sp + rr + px_dir)
    root += dirrec(ROOT, SECTOR, 2, b"\1", px_dir)
    root += dirrec(FILE, len(data), 0, b"F.;1", rr + px_file + nm)
    root = bytes(root).ljust(SECTOR, b"\0")

    pvd = bytearray(SECTOR)
    pvd[0] = 1
    pvd[1:6] = b"CD001"
    pvd[6] = 1
    pvd[8:40] = b"LINUX".ljust(32)
    pvd[40:72] = b"HARDENING".ljust(32)
    pvd[80:88] = both32(TOTAL)
    pvd[120:124] = both16(1)
    pvd[124:128] = both16(1)
    pvd[128:132] = both16(SECTOR)
    pvd[132:140] = both32(10)
    pvd[140:144] = struct.pack("<I", LPT)
    pvd[148:152] = struct.pack(">I", MPT)
    pvd[156:190] = dirrec(ROOT, SECTOR, 2, b"\0")
    for a, b_ in ((190, 318), (318, 446), (446, 574), (574, 702),
                  (702, 739), (739, 776), (776, 813)):
        pvd[a:b_] = b" " * (b_ - a)
    for off in (813, 830, 847, 864):
        pvd[off:off + 17] = b"0" * 16 + b"\0"
    pvd[881] = 1
    term = bytearray(SECTOR)
    term[0] = 255
    term[1:6] = b"CD001"
    term[6] = 1
    lpt = (bytes([1, 0]) + struct.pack("<I", ROOT) + struct.pack("<H", 1)
           + b"\0\0").ljust(SECTOR, b"\0")
    mpt = (bytes([1, 0]) + struct.pack(">I", ROOT) + struct.pack(">H", 1)
           + b"\0\0").ljust(SECTOR, b"\0")
    img = bytearray(SECTOR * TOTAL)
    img[16 * SECTOR:17 * SECTOR] = pvd
    img[17 * SECTOR:18 * SECTOR] = term
    img[FILE * SECTOR:FILE * SECTOR + len(data)] = data
    img[ROOT * SECTOR:(ROOT + 1) * SECTOR] = root
    img[LPT * SECTOR:(LPT + 1) * SECTOR] = lpt
    img[MPT * SECTOR:(MPT + 1) * SECTOR] = mpt
    write(out, bytes(img))


# ---- gzip -------------------------------------------------------------------

def gzip_member(data, damage=""):
    c = zlib.compressobj(level=0, wbits=-15)
    body = bytearray(c.compress(data) + c.flush())
    crc = zlib.crc32(data) & 0xffffffff
    isize = len(data) & 0xffffffff
    if damage == "crc":
        # A stored block: 1 byte BFINAL/BTYPE, 2 LEN, 2 NLEN, then the
        # bytes as they are.  Byte 600 of the input is in the first tar
        # member's data (the test's first member is larger than 100 bytes):
        # the tar still parses, the data and the CRC disagree.
        body[5 + 600] ^= 0x01
    elif damage == "crcfield":
        crc ^= 0x1
    elif damage == "isize":
        isize = (isize + 1) & 0xffffffff
    method, flg = 8, 0
    if damage == "method":
        method = 7
    elif damage == "flags":
        flg = 0x20          # RFC 1952: bits 5 to 7 reserved, must be zero
    elif damage in ("hcrc", "hcrc-ok"):
        flg = 0x02          # FHCRC
    hdr = bytes([0x1f, 0x8b, method, flg]) + struct.pack("<I", 1600000000) + b"\x00\x03"
    if flg & 0x02:
        hcrc = zlib.crc32(hdr) & 0xffff
        if damage == "hcrc":
            hcrc ^= 0x1
        hdr += struct.pack("<H", hcrc)
    return hdr + bytes(body) + struct.pack("<II", crc, isize)


def cmd_gzip(out, src, damage=""):
    data = open(src, "rb").read()
    if damage in ("second", "second-isize", "two"):
        # Two members, split at a tar block boundary; the second's CRC
        # or ISIZE field wrong, or nothing.
        cut = (len(data) // 2) // BLOCK * BLOCK
        second = {"second": "crcfield", "second-isize": "isize"}.get(damage, "")
        write(out, gzip_member(data[:cut]) + gzip_member(data[cut:], second))
    elif damage == "padding":
        write(out, gzip_member(data) + bytes(1024))
    elif damage == "garbage":
        write(out, gzip_member(data) + b"not a gzip member\n")
    elif damage == "cut-trailer":
        write(out, gzip_member(data)[:-3])
    elif damage == "cut-data":
        member = gzip_member(data)
        write(out, member[:len(member) // 2])
    else:
        write(out, gzip_member(data, damage))


# ---- pax files with records ------------------------------------------------

def cmd_pax(out, *specs):
    parts = []
    for spec in specs:
        fields = spec.split(":", 4)
        name, mode, uid, gid = fields[0], int(fields[1], 8), int(fields[2]), int(fields[3])
        records = {}
        if len(fields) > 4 and fields[4]:
            for kv in fields[4].split(","):
                k, _, v = kv.partition("=")
                records[k] = unesc(v)
        content = (name + "\n").encode()
        parts.append(entry(name, b"0", content, records=records, mode=mode,
                           uid=uid, gid=gid))
    parts.append(end())
    write(out, b"".join(parts))


COMMANDS = {
    "race": cmd_race, "dirs": cmd_dirs, "fifo-link-pax": cmd_fifo_link_pax,
    "fifo-link-cpio": cmd_fifo_link_cpio, "link-data-pax": cmd_link_data_pax,
    "zip-badcrc": cmd_zip_badcrc, "zip-short": cmd_zip_short,
    "7z-badcrc": cmd_7z_badcrc, "iso": cmd_iso, "gzip": cmd_gzip,
    "pax": cmd_pax,
}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    COMMANDS[sys.argv[1]](*sys.argv[2:])
