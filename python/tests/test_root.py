"""safe_extract.Root: the library's scoped calls for a program's own
steps after extraction."""
import errno
import os
import stat

import pytest

import safe_extract


@pytest.fixture
def tree_with_links(sandbox):
    d = sandbox.dest
    os.makedirs(os.path.join(d, "usr/lib"))
    os.makedirs(os.path.join(d, "etc"))
    with open(os.path.join(d, "etc/app.conf"), "w") as f:
        f.write("admin\n")
    os.symlink("usr/lib", os.path.join(d, "lib"))
    os.symlink("../../outside", os.path.join(d, "up"))
    os.symlink(sandbox.outside, os.path.join(d, "abs"))
    sandbox.before = sandbox.snapshot()
    return sandbox


def test_lstat(tree_with_links):
    with safe_extract.Root(tree_with_links.dest) as root:
        st = root.lstat("etc/app.conf")
        assert stat.S_ISREG(st.st_mode) and st.st_size == 6
        assert stat.S_ISLNK(root.lstat("lib").st_mode)
        assert stat.S_ISDIR(root.lstat("usr/lib").st_mode)
        with pytest.raises(FileNotFoundError, match="cannot lstat 'nope'"):
            root.lstat("nope")


@pytest.mark.parametrize("path,err", [
    ("../s/flag", None), ("up/victim", errno.ELOOP), ("abs/victim", errno.ELOOP),
    ("lib/x", errno.ELOOP)])
def test_strict_root_refuses_ways_out(tree_with_links, path, err):
    with safe_extract.Root(tree_with_links.dest) as root:
        with pytest.raises(OSError) as ei:
            root.lstat(path)
        if err is not None:
            assert ei.value.errno == err
        with pytest.raises(OSError):
            root.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        with pytest.raises(OSError):
            root.unlink(path)
    assert tree_with_links.changed_outside() == []


def test_in_root_follows_links_inside_only(tree_with_links):
    d = tree_with_links.dest
    with safe_extract.Root(d, in_root=True) as root:
        fd = root.open("lib/x.so", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, b"elf")
        os.close(fd)
        assert open(os.path.join(d, "usr/lib/x.so")).read() == "elf"
        # up -> ../../outside resolves inside the root (as if it were /):
        # d/outside, which does not exist; abs -> an absolute path
        # outside is taken relative to the root too.
        with pytest.raises(FileNotFoundError):
            root.lstat("up/victim")
        with pytest.raises(FileNotFoundError):
            root.lstat("abs/victim")
    assert tree_with_links.changed_outside() == []


def test_replace_a_file_the_safe_way(tree_with_links):
    d = tree_with_links.dest
    with safe_extract.Root(d) as root:
        fd = root.open("etc/app.conf.new", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        assert os.get_inheritable(fd) is False
        os.write(fd, b"packaged\n")
        os.close(fd)
        with pytest.raises(FileExistsError, match="cannot rename 'etc/app.conf.new'"):
            root.rename("etc/app.conf.new", "etc/app.conf", noreplace=True)
        root.rename("etc/app.conf", "etc/app.conf.old")
        root.rename("etc/app.conf.new", "etc/app.conf")
        root.rename("etc/app.conf", "etc/app.conf.old", exchange=True)
        assert open(os.path.join(d, "etc/app.conf")).read() == "admin\n"
        root.unlink("etc/app.conf.old")
        assert not os.path.exists(os.path.join(d, "etc/app.conf.old"))
        with pytest.raises(IsADirectoryError):
            root.unlink("usr/lib")
        os.mkdir(os.path.join(d, "empty"))
        root.rmdir("empty")
        assert not os.path.exists(os.path.join(d, "empty"))
        with pytest.raises(OSError) as ei:
            root.rmdir("usr")
        assert ei.value.errno == errno.ENOTEMPTY


def test_unlink_of_a_symlink_removes_the_link_not_its_target(tree_with_links):
    with safe_extract.Root(tree_with_links.dest) as root:
        root.unlink("up")
    assert os.path.exists(os.path.join(tree_with_links.outside, "victim"))
    assert not os.path.lexists(os.path.join(tree_with_links.dest, "up"))


def test_open_does_not_follow_the_last_component(tree_with_links):
    os.symlink(os.path.join(tree_with_links.outside, "victim"),
               os.path.join(tree_with_links.dest, "etc/trap"))
    tree_with_links.before = tree_with_links.snapshot()
    with safe_extract.Root(tree_with_links.dest) as root:
        with pytest.raises(OSError) as ei:
            root.open("etc/trap", os.O_WRONLY | os.O_TRUNC)
        assert ei.value.errno == errno.ELOOP
    assert tree_with_links.changed_outside() == []


def test_backend_and_closed_root(dest):
    root = safe_extract.Root(dest)
    assert root.backend in ("openat2", "at", "walk")
    assert root.is_userspace == (root.backend == "walk")
    assert "Root" in repr(root)
    root.close()
    root.close()
    assert "closed" in repr(root)
    with pytest.raises(ValueError, match="closed"):
        root.lstat("x")


def test_root_errors(tmp_path, dest):
    with pytest.raises(FileNotFoundError, match="cannot open the destination"):
        safe_extract.Root(str(tmp_path / "missing"))
    with pytest.raises(NotADirectoryError):
        (tmp_path / "file").write_text("x")
        safe_extract.Root(str(tmp_path / "file"))
    with pytest.raises(TypeError):
        safe_extract.Root(dest, in_root="yes")
    with safe_extract.Root(dest) as root:
        with pytest.raises(TypeError):
            root.open(3, os.O_RDONLY)
        with pytest.raises(TypeError):
            root.open("x", "r")
        with pytest.raises(ValueError, match="NUL"):
            root.unlink("a\0b")
