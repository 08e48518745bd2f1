"""corpus-adapter.py [--in-root] [--keep-directory-symlink] [--cross-mounts]
    [--strip-components=N] ARCHIVE -C DEST

The hostile corpus runner's extractor (tests/archives/run --extractor)
as safe_extract.extract(): the command's options that the corpus passes
({seopts} {opts}) mapped to the binding's arguments; exit status 0, 1 or
2 as the command's.  Every refused or failed entry is printed (escaped
by the library) for the runner's log.
"""
import sys

import safe_extract


def main(argv):
    kw = {}
    args = []
    it = iter(argv)
    for a in it:
        if a == "--in-root":
            kw["in_root"] = True
        elif a == "--keep-directory-symlink":
            kw["keep_directory_symlinks"] = True
        elif a == "--cross-mounts":
            kw["cross_mounts"] = True
        elif a.startswith("--strip-components="):
            kw["strip_components"] = int(a.split("=", 1)[1])
        elif a == "-C":
            kw["dest"] = next(it)
        elif a.startswith("-"):
            print("corpus-adapter: unknown option %s" % a, file=sys.stderr)
            return 2
        else:
            args.append(a)
    if len(args) != 1 or "dest" not in kw:
        print(__doc__, file=sys.stderr)
        return 2
    dest = kw.pop("dest")
    try:
        r = safe_extract.extract(args[0], dest, **kw)
    except safe_extract.FatalError as e:
        for x in e.entries:
            if x.action not in ("created", "replaced", "skipped"):
                print("%s %s: %s" % (x.action, x.path, x.reason), file=sys.stderr)
        print("fatal: %s" % e.message, file=sys.stderr)
        return e.status
    for x in r.entries:
        if x.action not in ("created", "replaced", "skipped"):
            print("%s %s: %s" % (x.action, x.path, x.reason), file=sys.stderr)
    return r.status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
