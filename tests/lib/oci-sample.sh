# oci-sample.sh - sourced by the image tests after common.sh: builds, offline
# with Debian's umoci, the sample OCI image layout $I those tests unpack.
#   t1  a set-id file, a hardlink pair, owners other than root, fixed
#       mtimes, an absolute symlink var/run -> /run
#   t2  + a whiteout of a file the first layer made
#   t3  + a layer umoci repack computes: a directory tree and one name of
#       the hardlink pair deleted, a file with another owner, a new dir
#   t4  + a whiteout of the symlink
#   t5  + an opaque directory (made by tests/lib/oci-edit.py: umoci 0.4.7
#       writes `insert --opaque` layers truncated)
#   nested  an image index holding t5's manifest for this machine and,
#       first, for plan9/mips
# Sets I, EDIT (tests/lib/oci-edit.py), PLATFORM, and $T_TMP/opq.tar (the
# opaque layer, an uncompressed tar).

I=$T_TMP/img
SRC=$T_TMP/src
EDIT="$PY $TLIB/oci-edit.py"
export SOURCE_DATE_EPOCH=1600000000

step() {
	"$@" >"$T_TMP/umoci.out" 2>&1 && return 0
	sed 's/^/#   step: /' "$T_TMP/umoci.out"
	bail "failed: $*"
}

mkdir -p "$SRC/etc" "$SRC/usr/bin" "$SRC/opt/app/sub" "$SRC/opt/opq/old" "$SRC/var" "$SRC/run"
echo root >"$SRC/etc/passwd"
ln "$SRC/etc/passwd" "$SRC/etc/passwd-hard"
echo tool >"$SRC/usr/bin/tool"
chmod 4755 "$SRC/usr/bin/tool"
echo old >"$SRC/opt/app/old"
chown 1000:1001 "$SRC/opt/app/old"
echo s >"$SRC/opt/app/sub/s"
chmod 0600 "$SRC/opt/app/sub/s"
echo lower >"$SRC/opt/opq/old/f"
echo lower >"$SRC/opt/opq/keep-not"
ln -s /run "$SRC/var/run"
find "$SRC" -exec touch -h -d @1500000000 {} +

step umoci init --layout "$I"
step umoci new --image "$I:t"
step umoci insert --image "$I:t" "$SRC" /
step umoci tag --image "$I:t" t1
step umoci insert --image "$I:t" --whiteout /opt/app/old
step umoci tag --image "$I:t" t2
step umoci unpack --image "$I:t" "$T_TMP/work"
W=$T_TMP/work/rootfs
rm -rf "$W/opt/app/sub" "$W/etc/passwd-hard"
echo changed >"$W/etc/motd"
chown 1000:1000 "$W/etc/motd"
mkdir "$W/usr/bin/tool.d"
echo x >"$W/usr/bin/tool.d/x"
touch -h -d @1600000000 "$W/etc/motd" "$W/usr/bin/tool.d/x"
step umoci repack --image "$I:t" "$T_TMP/work"
step umoci tag --image "$I:t" t3
step umoci insert --image "$I:t" --whiteout /var/run
step umoci tag --image "$I:t" t4
# An opaque directory: opt/opq keeps only what this layer puts there.
"$PY" "$TLIB/mkar.py" "$T_TMP/opq.tar" pax <<'EOF' || bail "cannot build the opaque layer"
d opt/opq mode=0755 mtime=1600000000
f opt/opq/.wh..wh..opq "" mode=0644 mtime=1600000000
f opt/opq/new "new\n" mode=0644 mtime=1600000000
EOF
step $EDIT "$I" append t4 t5 "$T_TMP/opq.tar"
PLATFORM=$(uname -m)
case $PLATFORM in
x86_64) PLATFORM=linux/amd64 ;;
aarch64) PLATFORM=linux/arm64 ;;
*) PLATFORM=linux/$PLATFORM ;;
esac
step $EDIT "$I" nest t5 nested "$PLATFORM"

