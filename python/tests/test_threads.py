"""Extractions in several threads at once, and the GIL let go while the
library works."""
import os
import subprocess
import threading
import time

import safe_extract
from conftest import tar_bytes, tree


def test_concurrent_extractions_into_distinct_destinations(tmp_path):
    archives = []
    for t in range(6):
        p = tmp_path / ("a%d.tar" % t)
        p.write_bytes(tar_bytes([("d", "t%d" % t)] + [
            ("f", "t%d/f%d" % (t, i), os.urandom(20000 + t)) for i in range(40)]))
        archives.append(p)
    refs = []
    for t, p in enumerate(archives):
        d = tmp_path / ("ref%d" % t)
        d.mkdir()
        safe_extract.extract(str(p), str(d))
        refs.append(tree(str(d)))
    results, errors, seen = {}, [], {}

    def work(t):
        try:
            d = tmp_path / ("d%d" % t)
            d.mkdir()
            count = []
            src = [str(archives[t]), bytearray(archives[t].read_bytes()),
                   open(archives[t], "rb")][t % 3]
            r = safe_extract.extract(src, str(d), jobs=1 + t % 2,
                                     on_entry=lambda e: count.append(e.path))
            if hasattr(src, "close"):
                src.close()
            results[t] = (r.status, tree(str(d)))
            seen[t] = len(count)
        except BaseException as e:   # noqa: B902 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    for t in range(6):
        assert results[t] == (0, refs[t])
        assert seen[t] == 41


def test_gil_is_released_while_the_library_waits(tmp_path):
    # The archive arrives through a FIFO a second late: while the library
    # waits for it (in C), a Python thread must keep running.
    data = tar_bytes([("f", "late", "x")])
    (tmp_path / "a.tar").write_bytes(data)
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    writer = subprocess.Popen(
        ["sh", "-c", 'exec 3>"$1"; sleep 1; cat "$2" >&3', "sh", fifo,
         str(tmp_path / "a.tar")])
    ticks = [0]
    stop = threading.Event()

    def counter():
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.001)
    th = threading.Thread(target=counter)
    d = tmp_path / "d"
    d.mkdir()
    th.start()
    try:
        t0 = time.monotonic()
        r = safe_extract.extract(fifo, str(d))
        waited = time.monotonic() - t0
    finally:
        stop.set()
        th.join()
        writer.wait()
    assert r.status == 0 and (d / "late").read_text() == "x"
    assert waited >= 0.8
    # About 1000 ticks a second when the GIL is free; none while held.
    assert ticks[0] > 100, "the counter thread ran %d times in %.1f s" % (ticks[0], waited)
