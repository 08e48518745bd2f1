self.description = "hostile: upgrade a backup file under an absolute symlink in the root"
# inspect: srv srv/foo.conf srv/foo.conf.pacnew

# pacman's own steps after extraction: the existence check, the MD5 of the
# installed backup file, the rename of NAME.pacnew over NAME.  The root's
# srv is an absolute symlink whose target is the root's own directory
# (ROOT/OUTSIDE/6/), holding foo.conf as the old package installed it.
# Resolved as if the root were '/', every step happens in ROOT/OUTSIDE/6/;
# the host's OUTSIDE/6/ stays empty.
import os
import pmfile
outside = os.path.join(os.environ.get("SE_PACMAN_OUTSIDE", "/tmp/se-pacman-outside"), "6")
os.makedirs(outside, exist_ok=True)
inroot = outside.lstrip("/")

# foo.conf as installed from the old package (pactest's content for a
# file is its name and a newline; the local database holds its MD5)
self.filesystem = [pmfile.pmfile("%s/foo.conf" % inroot, "srv/foo.conf\n"),
                   "srv -> %s" % outside]

lp = pmpkg("foo")
lp.files = ["srv/foo.conf"]
lp.backup = ["srv/foo.conf"]
lp.install_package = lambda root: None    # its file is the one above
lp.finalized = True                       # srv/ is the root's, not foo's
self.addpkg2db("local", lp)

p = pmpkg("foo", "1.0-2")
p.files = ["srv/foo.conf*"]
p.backup = ["srv/foo.conf"]
p.finalized = True                        # no srv/ entry either
self.addpkg(p)

self.args = "-U %s" % p.filename()

self.addrule("PACMAN_RETCODE=0")
self.addrule("PKG_VERSION=foo|1.0-2")
self.addrule("FILE_TYPE=srv|link")
# unchanged since installed: the new version replaced it, no .pacnew left
self.addrule("FILE_CONTENTS=%s/foo.conf|srv/foo.conf*\n" % inroot)
self.addrule("!FILE_EXIST=%s/foo.conf.pacnew" % inroot)
# absolute names: the rules look at the host, not the root
self.addrule("!FILE_EXIST=%s/foo.conf" % outside)
self.addrule("!FILE_EXIST=%s/foo.conf.pacnew" % outside)
