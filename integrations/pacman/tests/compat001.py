self.description = "compat: hard link, set-uid and 0666 modes survive the extraction"
# inspect: usr/bin/foo usr/bin/foo-link usr/bin/su etc/world

# pacman used to chdir() into the root because libarchive resolves hard
# link targets relative to the cwd; libsafe-extract resolves them in the
# root.  Modes must be exact whatever the process umask.
import tarfile

p = pmpkg("compat")
p.files = ["usr/bin/foo|755", "usr/bin/su|4755", "etc/world|666"]
self.addpkg(p)

makepkg_plain = p.makepkg
def makepkg_with_hardlink(path=None, fileobj=None):
    makepkg_plain(path=path, fileobj=fileobj)
    with tarfile.open(p.path, "r:gz") as old:
        members = [(m, old.extractfile(m).read() if m.isfile() else None)
                   for m in old.getmembers()]
    with tarfile.open(p.path, "w:gz", format=tarfile.GNU_FORMAT) as new:
        for m, data in members:
            new.addfile(m, io.BytesIO(data) if data is not None else None)
        link = tarfile.TarInfo("usr/bin/foo-link")
        link.type = tarfile.LNKTYPE
        link.linkname = "usr/bin/foo"
        new.addfile(link)
import io
p.makepkg = makepkg_with_hardlink

self.args = "-U %s" % p.filename()

self.addrule("PACMAN_RETCODE=0")
self.addrule("PKG_EXIST=compat")
self.addrule("FILE_EXIST=usr/bin/foo-link")
self.addrule("FILE_MODE=usr/bin/foo|755")
self.addrule("FILE_MODE=usr/bin/su|4755")
self.addrule("FILE_MODE=etc/world|666")
