self.description = "hostile: an absolute symlink in the root points outside"
# inspect: etc/evil etc/evil/file

# etc/evil -> OUTSIDE is in the root (planted, or left by an
# administrator); a package ships etc/evil/file.  With the root resolved
# as '/', the file must land under the root's own OUTSIDE path, never in
# the host's.
import os
outside = os.path.join(os.environ.get("SE_PACMAN_OUTSIDE", "/tmp/se-pacman-outside"), "3")
os.makedirs(outside, exist_ok=True)

self.filesystem = ["etc/evil -> %s" % outside]

p = pmpkg("evil")
p.files = ["etc/", "etc/evil/file"]
p.finalized = True
self.addpkg(p)

self.args = "-U %s" % p.filename()

# an absolute name: the rule looks at the host, not the root
self.addrule("!FILE_EXIST=%s/file" % outside)
