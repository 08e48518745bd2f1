#!/usr/bin/env python3
"""Describe a directory tree, one sorted line per object, for comparisons.

usage: tree.py DIR [--mtime] [--dir-mtime] [--now-since=T] [--owner] [--no-mode]
                   [--xattrs]

Each line: relative path, type, mode, and per type the size and SHA-256 of
a file's content, a symlink's target, or a device's numbers.  Hard links
show as the group of paths sharing an inode (by the first path's name).
--xattrs adds every extended attribute a listing shows, sorted, with its
value.  --now-since=T shows every mtime from T (seconds since the epoch)
on as "now": a time the extraction set (tar -m), which two runs a second
apart would otherwise show differently.  Nothing is followed.
"""
import hashlib
import os
import stat
import sys


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def main():
    root = sys.argv[1]
    flags = set(a for a in sys.argv[2:] if not a.startswith("--now-since="))
    since = [int(a.split("=", 1)[1]) for a in sys.argv[2:] if a.startswith("--now-since=")]
    now = since[0] if since else None

    def mtime(st):
        if now is not None and st.st_mtime >= now:
            return "mtime=now"
        return "mtime=%d" % st.st_mtime
    rows = []
    first_of_inode = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            m = st.st_mode
            if stat.S_ISREG(m):
                kind = "file %d %s" % (st.st_size, digest(full))
                if st.st_nlink > 1:
                    key = (st.st_dev, st.st_ino)
                    first = first_of_inode.setdefault(key, rel)
                    kind += " link-group=%s" % first
            elif stat.S_ISDIR(m):
                kind = "dir"
            elif stat.S_ISLNK(m):
                kind = "symlink -> %r" % os.readlink(full)
            elif stat.S_ISFIFO(m):
                kind = "fifo"
            elif stat.S_ISCHR(m) or stat.S_ISBLK(m):
                kind = "%s %d,%d" % ("chr" if stat.S_ISCHR(m) else "blk",
                                     os.major(st.st_rdev),
                                     os.minor(st.st_rdev))
            else:
                kind = "other"
            fields = [repr(rel), kind]
            if "--no-mode" not in flags and not stat.S_ISLNK(m):
                fields.append("mode=%04o" % stat.S_IMODE(m))
            if "--owner" in flags:
                fields.append("owner=%d:%d" % (st.st_uid, st.st_gid))
            if "--mtime" in flags and not stat.S_ISDIR(m):
                fields.append(mtime(st))
            if "--dir-mtime" in flags and stat.S_ISDIR(m):
                fields.append(mtime(st))
            if "--xattrs" in flags:
                for x in sorted(os.listxattr(full, follow_symlinks=False)):
                    fields.append("xattr:%s=%r" % (
                        x, os.getxattr(full, x, follow_symlinks=False)))
            rows.append(" ".join(fields))
    # Hard-link groups depend on walk order only through the first name,
    # which os.walk visits in sorted order: stable across runs.
    for r in sorted(rows):
        print(r)


if __name__ == "__main__":
    main()
