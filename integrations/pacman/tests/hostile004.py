self.description = "hostile: a directory of the root is swapped with a symlink to outside during the install"
# inspect: data data-link

# A racer (exchange-racer.py, started here in the background) waits for
# the first file of the package to appear in data/, then exchanges data/
# and data-link -> OUTSIDE with renameat2(RENAME_EXCHANGE) in a loop until
# pacman is done.  Nothing may be written in OUTSIDE.
import os
import subprocess
import sys

outside = os.path.join(os.environ.get("SE_PACMAN_OUTSIDE", "/tmp/se-pacman-outside"), "4")
os.makedirs(outside, exist_ok=True)
nfiles = int(os.environ.get("SE_PACMAN_RACE_FILES", "3000"))

self.filesystem = ["data/", "data-link -> %s" % outside]

p = pmpkg("many")
p.files = ["data/"] + ["data/f%05d" % i for i in range(nfiles)]
self.addpkg(p)

self.args = "-U %s" % p.filename()

racer = os.path.join(os.path.dirname(os.path.abspath(self.name)), "exchange-racer.py")
subprocess.Popen([sys.executable, racer, self.root,
                  "var/lib/pacman/local/%s/desc" % p.fullname(), "data", "data-link"])

self.addrule("PKG_EXIST=many")
