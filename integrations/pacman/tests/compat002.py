self.description = "compat: a backup file that is a symlink is hashed through it"
# inspect: etc/foo.conf etc/foo.conf.pacnew etc/foo.real

# pacman's MD5 of an installed backup file follows a symlink
# (alpm_compute_md5sum opens the name).  The library's scoped calls never
# follow the last component; the patch follows it inside the root.  The
# link's target holds what the old package installed (pactest's content
# for a file is its name and a newline; the local database holds its
# MD5), so the file counts as unchanged and the new version replaces it.
import pmfile

self.filesystem = [pmfile.pmfile("etc/foo.real", "etc/foo.conf\n")]

lp = pmpkg("foo")
lp.files = ["etc/foo.conf -> foo.real"]
lp.backup = ["etc/foo.conf"]
self.addpkg2db("local", lp)

p = pmpkg("foo", "1.0-2")
p.files = ["etc/foo.conf*"]
p.backup = ["etc/foo.conf"]
self.addpkg(p)

self.args = "-U %s" % p.filename()

self.addrule("PACMAN_RETCODE=0")
self.addrule("PKG_VERSION=foo|1.0-2")
self.addrule("FILE_TYPE=etc/foo.conf|file")
self.addrule("FILE_CONTENTS=etc/foo.conf|etc/foo.conf*\n")
self.addrule("!FILE_EXIST=etc/foo.conf.pacnew")
