self.description = "hostile: an administrator's directory symlink is kept"
# inspect: lib usr/lib/foo lib/foo

# The root is usrmerged by hand: lib -> usr/lib belongs to no package.
# A package ships lib/foo (and no lib/ entry, so no file conflict is
# raised): the file must go to usr/lib/foo and lib must stay a symlink.
import os
outside = os.path.join(os.environ.get("SE_PACMAN_OUTSIDE", "/tmp/se-pacman-outside"), "2")
os.makedirs(outside, exist_ok=True)

self.filesystem = ["usr/lib/", "lib -> usr/lib"]

p = pmpkg("libfoo")
p.files = ["lib/foo"]
p.finalized = True
self.addpkg(p)

self.args = "-U %s" % p.filename()

self.addrule("PACMAN_RETCODE=0")
self.addrule("PKG_EXIST=libfoo")
self.addrule("FILE_TYPE=lib|link")
self.addrule("FILE_TYPE=usr/lib|dir")
self.addrule("FILE_TYPE=usr/lib/foo|file")
