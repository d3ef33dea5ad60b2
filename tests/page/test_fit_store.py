"""The fit cache's files are never trusted (issue 36): each hostile file is refused without a traceback, within a
bounded memory, removed and written anew, and the redrawn page is what it is without any cache (issue 37)."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest

from dogood.page import fit_store, render
from dogood.page.render import FitCache, _fit_signature, _PageFits, choose_styles

#: What reading a hostile file may allocate (tracemalloc's peak): the bounded file twice, and then some.
MEMORY_BOUND = 4 * (1 << 20)


@pytest.fixture(scope="module")
def page(funsd_test):
    return funsd_test.load(funsd_test.ids()[2])


@pytest.fixture(scope="module")
def words(page):
    known = [i for i, w in enumerate(page.words) if w.text.strip()]
    return known[3:9]


@pytest.fixture(scope="module")
def fitted(page, words, tmp_path_factory):
    """``(the styles without any cache, the bytes of the page's fit file)``."""
    saved = render.FIT_CACHE
    try:
        render.FIT_CACHE = FitCache(max_words=0)
        expected = choose_styles(page, words, page)
        root = tmp_path_factory.mktemp("fits")
        render.FIT_CACHE = FitCache(max_words=200_000, folder=root)
        assert choose_styles(page, words, page) == expected
        (path,) = root.glob("*/*.npz")
        return expected, path.read_bytes(), path.name
    finally:
        render.FIT_CACHE = saved


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """A cache of this test's own, on the folder ``tmp_path/fits``, and the page file's path in it."""
    root = tmp_path / "fits"

    def make():
        cache = FitCache(max_words=200_000, folder=root)
        monkeypatch.setattr(render, "FIT_CACHE", cache)
        return cache
    return make, root


def _page_file(root: Path, name: str) -> Path:
    folder = root / _fit_signature()
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


def _arrays(data: bytes) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        return {k: np.array(z[k]) for k in z.files}


def _npz(arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _read_again(page, words, fitted, fresh, planted: bytes | None = None, plant=None):
    """Plant a file (bytes, or ``plant(path)``), then choose styles with a fresh cache on the folder: the styles
    must be those without a cache, the bad file counted, removed and written anew, and reading it bounded."""
    expected, good, name = fitted
    make, root = fresh
    path = _page_file(root, name)
    if plant is None:
        path.write_bytes(planted)
    else:
        plant(path)
    cache = make()
    tracemalloc.start()
    try:
        cache.page(page.image.to_array())  # reads the file: refused, removed
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert choose_styles(page, words, page) == expected
    assert cache.discarded == 1 and cache.read == 0
    assert path.is_file() and not path.is_symlink()
    assert _PageFits.from_arrays(cache, b"", fit_store.load(path, _PageFits.schema()), page.image.to_array().shape)
    return peak


def test_a_good_file_is_read_and_gives_the_same_styles_without_choosing_again(page, words, fitted, fresh,
                                                                               monkeypatch):
    expected, good, name = fitted
    make, root = fresh
    _page_file(root, name).write_bytes(good)
    cache = make()

    def never(*_):
        raise AssertionError("a run's choice was made again, not read from the file")

    monkeypatch.setattr(render, "_choose", never)
    assert choose_styles(page, words, page) == expected
    assert cache.read == 1 and cache.misses == 0 and cache.discarded == 0


def test_deep_nesting_in_the_texts(page, words, fitted, fresh):
    arrays = _arrays(fitted[1])
    arrays["texts"] = np.frombuffer(b"[" * 200_000 + b"]" * 200_000, np.uint8)  # was a raw RecursionError
    _read_again(page, words, fitted, fresh, _npz(arrays))


def test_texts_that_are_not_a_list_of_strings(page, words, fitted, fresh):
    arrays = _arrays(fitted[1])
    texts = json.loads(arrays["texts"].tobytes())
    arrays["texts"] = np.frombuffer(json.dumps([len(t) for t in texts]).encode(), np.uint8)
    _read_again(page, words, fitted, fresh, _npz(arrays))


def test_a_header_declaring_a_terabyte(page, words, fitted, fresh):
    """A member whose ``.npy`` header declares 2^37 float64 (1 TiB): refused from the header, nothing allocated
    from it (was a MemoryError)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(fitted[1])) as src, zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as out:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "scores.npy":
                header = io.BytesIO()
                np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                              "shape": (1 << 37,)})
                data = header.getvalue() + data[-64:]  # the magic, a header declaring 1 TiB, 64 bytes
            out.writestr(info.filename, data)
    peak = _read_again(page, words, fitted, fresh, buf.getvalue())
    assert peak < MEMORY_BOUND + 2 * len(fitted[1])


def test_a_deflate_bomb(page, words, fitted, fresh):
    """A member deflated from 256 MB of zeros to a fraction of a megabyte: refused unread (was 2.1 GB)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(fitted[1])) as src, zipfile.ZipFile(buf, "w") as out:
        for info in src.infolist():
            if info.filename == "bits.npy":
                header = io.BytesIO()
                np.lib.format.write_array_header_1_0(header, {"descr": "|u1", "fortran_order": False,
                                                              "shape": (256 << 20,)})
                bomb = zipfile.ZipInfo("bits.npy")
                bomb.compress_type = zipfile.ZIP_DEFLATED
                with out.open(bomb, "w", force_zip64=True) as member:
                    member.write(header.getvalue())
                    zero = bytes(1 << 20)
                    for _ in range(256):
                        member.write(zero)
            else:
                out.writestr(info, src.read(info))
    bomb = buf.getvalue()
    assert len(bomb) < 64 << 20
    peak = _read_again(page, words, fitted, fresh, bomb)
    assert peak < MEMORY_BOUND + 2 * len(bomb)


def test_refinements_of_records_that_do_not_exist(page, words, fitted, fresh):
    arrays = _arrays(fitted[1])
    assert len(arrays["refined_record"])
    arrays["refined_record"] = arrays["refined_record"] + 10_000  # was a raw IndexError
    _read_again(page, words, fitted, fresh, _npz(arrays))


def test_reference_boxes_of_no_width(page, words, fitted, fresh):
    arrays = _arrays(fitted[1])
    arrays["geoms"][..., 2] = arrays["geoms"][..., 0]  # was a raw ZeroDivisionError
    _read_again(page, words, fitted, fresh, _npz(arrays))


@pytest.mark.parametrize("value", [np.nan, np.inf, -0.5, 7.0])
def test_scores_that_are_not_finite_or_out_of_range(page, words, fitted, fresh, value):
    """NaN scores silently changed the redrawn page: refused, the page is fitted anew."""
    arrays = _arrays(fitted[1])
    arrays["scores"][0, :, :] = value
    _read_again(page, words, fitted, fresh, _npz(arrays))


def test_ink_masks_of_another_size_or_count(page, words, fitted, fresh):
    arrays = _arrays(fitted[1])
    arrays["inks"][0] += 1
    _read_again(page, words, fitted, fresh, _npz(arrays))
    arrays = _arrays(fitted[1])
    arrays["boxes"][np.flatnonzero(arrays["fitted"])[0], 2] += 1
    _read_again(page, words, fitted, fresh, _npz(arrays))


def test_a_choice_of_a_face_that_does_not_exist(page, words, fitted, fresh):
    arrays = _arrays(fitted[1])
    assert len(arrays["choices"])
    arrays["choices"][0, 0] = len(render.FACES)
    _read_again(page, words, fitted, fresh, _npz(arrays))


@pytest.mark.parametrize("change", ["dtype", "missing", "extra", "truncated", "pickle", "not a zip", "crc"])
def test_files_that_are_not_what_dogood_writes(page, words, fitted, fresh, change):
    arrays = _arrays(fitted[1])
    if change == "dtype":
        arrays["scores"] = arrays["scores"].astype(np.float32)
    elif change == "missing":
        del arrays["edges"]
    elif change == "extra":
        arrays["more"] = np.zeros(3)
    data = _npz(arrays)
    if change == "truncated":
        data = fitted[1][:len(fitted[1]) // 2]
    elif change == "pickle":
        buf = io.BytesIO()
        np.savez(buf, **{**arrays, "texts": np.array([object()], dtype=object)})
        data = buf.getvalue()
    elif change == "not a zip":
        data = b"\x00" * 1000
    elif change == "crc":
        at = fitted[1].index(b"\x93NUMPY", fitted[1].index(b"scores.npy")) + 200
        data = fitted[1][:at] + bytes([fitted[1][at] ^ 0xFF]) + fitted[1][at + 1:]
    _read_again(page, words, fitted, fresh, data)


def test_a_file_past_the_size_bound_is_not_read(page, words, fitted, fresh, monkeypatch):
    monkeypatch.setattr(fit_store, "MAX_FILE_BYTES", len(fitted[1]) + 10)
    opened = []
    real = fit_store._read
    monkeypatch.setattr(fit_store, "_read", lambda path: opened.append(path) or real(path))
    _read_again(page, words, fitted, fresh, fitted[1] + bytes(100))  # a good file and then more
    assert len(opened) == 1  # the file written anew, read back by the test; the big one never opened


def test_a_fifo_is_never_opened(page, words, fitted, fresh):
    """A FIFO in place of the page's file hung the worker: it is passed over, then replaced by the page's file."""
    def alarm(*_):
        raise TimeoutError("the FIFO was opened")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(60)
    try:
        _read_again(page, words, fitted, fresh, plant=os.mkfifo)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_a_link_is_never_followed_and_is_replaced(page, words, fitted, fresh, tmp_path):
    elsewhere = tmp_path / "elsewhere.npz"
    elsewhere.write_bytes(fitted[1])  # even a good file is not read through a link
    _read_again(page, words, fitted, fresh, plant=lambda path: path.symlink_to(elsewhere))
    assert elsewhere.read_bytes() == fitted[1]


def test_a_folder_in_the_way_is_left_and_the_page_kept_in_memory(page, words, fitted, fresh):
    expected, _, name = fitted
    make, root = fresh
    path = _page_file(root, name)
    path.mkdir()
    (path / "mine.txt").write_text("not dogood's")
    make()
    assert choose_styles(page, words, page) == expected
    assert (path / "mine.txt").read_text() == "not dogood's"


def test_leftovers_of_killed_writers_are_removed_when_a_process_opens_the_folder(page, words, fitted, fresh):
    expected, good, name = fitted
    make, root = fresh
    folder = root / _fit_signature()
    folder.mkdir(parents=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    left = folder / f".{name}.{dead_pid}.abc123.partial"
    left.write_bytes(good[:100])
    other = folder / f".{'0' * 32}.npz.{dead_pid}.zz_9.partial"
    other.write_bytes(b"x")
    live = folder / f".{name}.{os.getpid()}.def456.partial"  # a process still writing: kept
    live.write_bytes(b"y")
    mine = folder / "notes.partial"  # not a name dogood writes: kept
    mine.write_bytes(b"z")
    fit_store._swept.clear()
    make()
    assert choose_styles(page, words, page) == expected
    assert not left.exists() and not other.exists()
    assert live.exists() and mine.exists()


def test_the_folder_is_bounded_by_the_files_used_least_recently(tmp_path, monkeypatch):
    root = tmp_path / "fits"
    folder = fit_store.folder_for(root, "0123456789abcdef")
    old_version = root / "fedcba9876543210"
    old_version.mkdir()
    (old_version / f"{'f' * 32}.npz").write_bytes(b"x" * 1000)
    os.utime(old_version / f"{'f' * 32}.npz", (1, 1))
    unrelated = root / "mine"
    unrelated.mkdir()
    (unrelated / f"{'e' * 32}.npz").write_bytes(b"x" * 5000)
    arrays = {"a": np.zeros(1000, np.uint8)}
    paths = []
    for n in range(10):
        path = folder / f"{n:032x}.npz"
        fit_store.save(path, arrays)
        os.utime(path, (100 + n, 100 + n))
        paths.append(path)
    fit_store.touch(paths[0])  # used just now: kept
    size = paths[0].stat().st_size
    removed = fit_store.trim(root, 5 * size)
    assert removed == 7  # the other version's file (oldest), then six of these
    assert paths[0].exists() and all(p.exists() for p in paths[7:])
    assert not any(p.exists() for p in paths[1:7])
    assert not old_version.exists()  # another version's folder, emptied
    assert (unrelated / f"{'e' * 32}.npz").exists()  # not a folder dogood names
    monkeypatch.setenv("DOGOOD_FIT_CACHE_BYTES", "lots")
    from dogood.core.errors import DogoodError
    with pytest.raises(DogoodError, match="DOGOOD_FIT_CACHE_BYTES"):
        fit_store.max_bytes()


def test_saving_bounds_the_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(fit_store, "_written", {})
    folder = fit_store.folder_for(tmp_path / "fits", "0123456789abcdef")
    arrays = {"a": np.zeros(10_000, np.uint8)}
    monkeypatch.setenv("DOGOOD_FIT_CACHE_BYTES", str(40_000))
    for n in range(30):
        fit_store.save(folder / f"{n:032x}.npz", arrays)
    total = sum(p.stat().st_size for p in folder.glob("*.npz"))
    assert total <= 40_000 + 10_200 * 2 and (folder / f"{29:032x}.npz").exists()


def test_a_shared_folder_between_processes_holds_whole_files(page, words, funsd_dir, tmp_path):
    """Two processes writing the same page at once: the file is always whole (rename), no temporary left."""
    root = tmp_path / "fits"
    code = ("import sys; from dogood.page import render; from dogood.sources.funsd import FunsdSource;"
            "render.FIT_CACHE = render.FitCache(max_words=10**6, folder=sys.argv[1]);"
            "doc = FunsdSource(root=sys.argv[2], split='test').load(sys.argv[3]);"
            "render.choose_styles(doc, [int(w) for w in sys.argv[4:]], doc)")
    args = [str(root), str(funsd_dir), page.id, *map(str, words)]
    procs = [subprocess.Popen([sys.executable, "-c", code, *args]) for _ in range(2)]
    assert all(p.wait(timeout=600) == 0 for p in procs)
    (path,) = root.glob("*/*.npz")
    assert not list(root.glob("*/.*"))
    assert fit_store.load(path, _PageFits.schema()) is not None
    shutil.rmtree(root)


@pytest.mark.parametrize("change", ["costs nan", "costs negative", "context word -5", "context hole", "empty group"])
def test_kept_costs_and_contexts_out_of_range(page, words, fitted, fresh, change):
    arrays = _arrays(fitted[1])
    assert len(arrays["costs"]) and len(arrays["contexts"])
    if change == "costs nan":
        arrays["costs"][0, 0] = np.nan
    elif change == "costs negative":
        arrays["costs"][0, 0] = -1.0
    elif change == "context word -5":
        arrays["contexts"][0, 0] = -5
    elif change == "context hole":
        arrays["contexts"][0, :] = -1
        arrays["contexts"][0, 1] = 3
    else:
        arrays["context_groups"][0, :] = -1
    _read_again(page, words, fitted, fresh, _npz(arrays))
