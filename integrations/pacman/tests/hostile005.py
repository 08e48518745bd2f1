self.description = "hostile: an absolute symlink in the root whose target exists in the root too"
# inspect: etc/evil etc/evil/file

# As hostile003, but the root has its own directory at the link's target:
# resolved as if the root were '/', etc/evil/file is ROOT/OUTSIDE/file,
# and the host's OUTSIDE stays empty.
import os
outside = os.path.join(os.environ.get("SE_PACMAN_OUTSIDE", "/tmp/se-pacman-outside"), "5")
os.makedirs(outside, exist_ok=True)

self.filesystem = ["%s/" % outside.lstrip("/"), "etc/evil -> %s" % outside]

p = pmpkg("evil")
p.files = ["etc/", "etc/evil/file"]
p.finalized = True
self.addpkg(p)

self.args = "-U %s" % p.filename()

# an absolute name: the rule looks at the host, not the root
self.addrule("!FILE_EXIST=%s/file" % outside)
self.addrule("PACMAN_RETCODE=0")
self.addrule("FILE_TYPE=etc/evil|link")
self.addrule("FILE_TYPE=%s/file|file" % outside.lstrip("/"))
