self.description = "hostile: a symlink to outside the root, then a file through it"
# inspect: evil

# The package itself plants evil -> OUTSIDE and then ships evil/file.
# Nothing may be written in OUTSIDE.  OUTSIDE comes from the environment
# so that the caller (integrations/pacman/check) can look at it afterwards.
import os
outside = os.path.join(os.environ.get("SE_PACMAN_OUTSIDE", "/tmp/se-pacman-outside"), "1")
os.makedirs(outside, exist_ok=True)

p = pmpkg("evil")
# built by hand: pmpkg.finalize() would refuse evil as both link and dir
p.files = ["evil -> %s" % outside,
           "evil/file"]
p.finalized = True
self.addpkg(p)

self.args = "-U %s" % p.filename()

# an absolute name: the rule looks at the host, not the root
self.addrule("!FILE_EXIST=%s/file" % outside)
