"""The one reader of :mod:`dogood.core.fs`: names confined to their folder, regular files only, every container
bounded before it is allocated; and the walk that keeps every reader of the package on it.

Hostile inputs: escapes (``..``, absolute names, links out), FIFOs and devices, a file larger than its limit,
JSON nested deeper than its limit or with a 5000-digit number, ``.npy`` headers declaring 2^40 values, object
arrays, truncated arrays, zip bombs and zip members that leave their folder, pages of too many or too long words.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest

from dogood.core import fs
from dogood.core.errors import DogoodError
from dogood.core.fs import FileRefused, Limits, UnsafeNameError, UnsafePathError


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "data"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "page.txt").write_text("inside\n")
    (tmp_path / "secret.txt").write_text("private\n")
    return root


@pytest.fixture
def small_limits():
    fs.set_limits(Limits(file_bytes=100, json_bytes=200, json_depth=4, npy_bytes=1 << 20, zip_members=3,
                         zip_bytes=1000, page_words=5, word_chars=8))
    yield fs.limits()
    fs.set_limits(None)


# -- confine --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["../secret.txt", "sub/../../secret.txt", "/etc/passwd", "C:/x",
                                  "..\\secret.txt", "", "a\0b", "file:///etc/passwd"])
def test_confine_refuses_names_that_leave_their_folder(folder, name):
    with pytest.raises(UnsafeNameError) as exc:
        fs.confine(name, folder, "image file_name")
    assert isinstance(exc.value, UnsafePathError) and isinstance(exc.value, DogoodError)
    assert "image file_name" in str(exc.value)


def test_confine_refuses_a_link_out_and_keeps_a_link_inside(folder, tmp_path):
    (folder / "out.txt").symlink_to(tmp_path / "secret.txt")
    (folder / "in.txt").symlink_to(folder / "sub" / "page.txt")
    (folder / "zero").symlink_to("/dev/zero")
    for name in ("out.txt", "zero"):
        with pytest.raises(UnsafeNameError, match="outside"):
            fs.confine(name, folder)
    assert fs.read_text("in.txt", root=folder) == "inside\n"
    assert fs.confine("sub/page.txt", folder) == folder / "sub" / "page.txt"


def test_confine_accepts_a_root_that_is_itself_a_link(folder, tmp_path):
    (tmp_path / "alias").symlink_to(folder)
    assert fs.read_text("sub/page.txt", root=tmp_path / "alias") == "inside\n"


# -- regular files only, bounded ------------------------------------------------------------------------------
def test_a_fifo_a_device_and_a_folder_are_refused_without_waiting(folder):
    fifo = folder / "pipe.json"
    os.mkfifo(fifo)  # nobody writes to it: an open without O_NONBLOCK would wait forever
    for path, kind in ((fifo, "a FIFO"), (Path("/dev/zero"), "a device"), (folder / "sub", "a folder")):
        with pytest.raises(FileRefused, match=kind) as exc:
            fs.read_bytes(path, what="annotation")
        assert exc.value.path == str(path)


def test_a_file_over_its_limit_is_refused_before_it_is_read(folder, small_limits):
    big = folder / "big.txt"
    big.write_bytes(b"x" * 101)
    with pytest.raises(FileRefused, match=r"101 bytes, more than the 100 .*DOGOOD_LIMIT_FILE_BYTES"):
        fs.read_bytes(big)
    assert fs.read_bytes(big, max_bytes=101) == b"x" * 101
    with pytest.raises(FileNotFoundError):
        fs.read_bytes(folder / "missing")


def test_a_link_is_refused_when_the_caller_follows_none(folder):
    (folder / "link").symlink_to(folder / "sub" / "page.txt")
    with pytest.raises(FileRefused, match="symbolic link"):
        fs.read_bytes(folder / "link", follow=False)


def test_text_that_is_not_utf8_is_refused_naming_the_file(folder):
    (folder / "bad.txt").write_bytes(b"ok \xff\xfe")
    with pytest.raises(FileRefused, match=r"bad.txt: the labels file is not utf-8 text \(byte 3\)"):
        fs.read_text(folder / "bad.txt", what="labels file")


def test_limits_come_from_the_environment():
    raised = Limits().with_env({"DOGOOD_LIMIT_PAGE_WORDS": "50_000", "OTHER": "1"})
    assert raised.page_words == 50_000 and raised.word_chars == Limits().word_chars
    for bad in ("-1", "0", "lots", "1" * 40):
        with pytest.raises(DogoodError, match="DOGOOD_LIMIT_PAGE_WORDS"):
            Limits().with_env({"DOGOOD_LIMIT_PAGE_WORDS": bad})


# -- JSON -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, depth", [('{"a": [1, {"b": "]]]}}"}]}', 3), ('"\\\\"', 0), ('["\\"[[[", []]', 2),
                                         ("[]", 1), ("7", 0), ('{"x": "\\\\\\"{{"}', 1)])
def test_json_depth_is_counted_outside_strings(text, depth):
    json.loads(text)
    assert fs.json_depth(text.encode()) == depth


def test_json_nested_deeper_than_its_limit_is_refused_before_parsing(folder, small_limits):
    deep = folder / "deep.json"
    deep.write_text("[" * 5 + "]" * 5)
    with pytest.raises(FileRefused, match="nested too deeply: 5 levels, more than the 4"):
        fs.read_json(deep)
    (folder / "ok.json").write_text("[[[[1]]]]")
    assert fs.read_json(folder / "ok.json") == [[[[1]]]]


def test_json_recursion_and_huge_numbers_are_one_error(folder):
    path = folder / "a.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(FileRefused, match="nested too deeply: 100000 levels"):
        fs.read_json(path)
    path.write_text('{"n": ' + "9" * 5000 + "}")
    with pytest.raises(FileRefused, match="malformed JSON"):
        fs.read_json(path)
    path.write_text("{nope")
    with pytest.raises(FileRefused, match="malformed JSON"):
        fs.read_json(path)


# -- .npy -----------------------------------------------------------------------------------------------------
def npy(array) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=True)
    return buf.getvalue()


def declared(shape, dtype="<f8", fortran=False) -> bytes:
    """A ``.npy`` header declaring ``shape`` and no data after it."""
    header = {"descr": dtype, "fortran_order": fortran, "shape": shape}
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, header)
    return buf.getvalue()


def test_npy_round_trips_and_is_read_only():
    for array in (np.arange(12, dtype=np.int32).reshape(3, 4), np.asfortranarray(np.ones((2, 5))),
                  np.array(["ab", "c"]), np.zeros((0, 3))):
        out = fs.parse_npy(npy(array), dtypes="biufU")
        assert np.array_equal(out, array) and out.dtype == array.dtype and not out.flags.writeable


@pytest.mark.parametrize("data, message", [
    (declared((1 << 20, 1 << 20)), r"declares shape \(1048576, 1048576\) of float64 \(8796093022208 bytes\)"),
    (declared((3,)), "holds 0"),
    (npy(np.array([{"a": 1}], dtype=object)), "holds object"),
    (npy(np.zeros(3, dtype=[("a", "<i4")])), "not a plain array"),
    (b"\x93NUMPY\x01\x00junk", "not a valid .npy"),
    (b"not npy at all", "not a valid .npy"),
])
def test_npy_headers_are_checked_before_allocation(data, message):
    with pytest.raises(FileRefused, match=message):
        fs.parse_npy(data, where="model.npy")


def test_a_declared_terabyte_array_is_refused_within_a_small_memory_bound(tmp_path, bounded_run):
    (tmp_path / "huge.npy").write_bytes(declared((1 << 40,)))
    run = bounded_run("from dogood.core import fs\n"
                      "try:\n    fs.load_npy('huge.npy')\nexcept fs.FileRefused as exc:\n    print(exc, file=sys.stderr)\n",
                      address_space_mib=4096)
    assert run.code == 0 and "declares shape (1099511627776,)" in run.last_line, run.err
    assert run.peak_mib < 400, run.peak_mib


# -- zip ------------------------------------------------------------------------------------------------------
def make_zip(path, members, compression=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", compression) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return path


def test_zip_members_and_expanded_size_are_bounded(tmp_path, small_limits):
    bomb = make_zip(tmp_path / "bomb.zip", [("a", b"\0" * 5000)])  # 5000 bytes from a few dozen
    assert bomb.stat().st_size < 200
    with pytest.raises(FileRefused, match="expands to 5000 bytes, more than the 1000"):
        fs.open_zip(bomb)
    many = make_zip(tmp_path / "many.zip", [(f"m{k}", b"x") for k in range(4)])
    with pytest.raises(FileRefused, match="4 members, more than the 3"):
        fs.open_zip(many)
    for name in ("../up", "/abs", "a/../../b"):
        with pytest.raises(FileRefused, match="leaves its folder"):
            fs.open_zip(make_zip(tmp_path / "escape.zip", [(name, b"x")]))


def test_a_member_that_lies_about_its_size_is_refused(tmp_path):
    path = make_zip(tmp_path / "lie.zip", [("m", b"y" * 4000)], compression=zipfile.ZIP_STORED)
    raw = bytearray(path.read_bytes())
    # the central directory says 40 bytes: the member's data runs on beyond them
    central = raw.rindex(b"PK\x01\x02")
    raw[central + 24:central + 28] = (40).to_bytes(4, "little")
    path.write_bytes(bytes(raw))
    with fs.open_zip(path) as zf, pytest.raises(FileRefused, match="member m"):
        fs.read_member(zf, "m", where=path)


# -- words of a page -------------------------------------------------------------------------------------------
def test_pages_of_too_many_or_too_long_words_are_refused(small_limits):
    fs.check_words(["a"] * 5)
    with pytest.raises(FileRefused, match="6 words, more than the 5"):
        fs.check_words(["a"] * 6, where="form.json")
    with pytest.raises(FileRefused, match="word 1 has 9 characters, more than the 8"):
        fs.check_words(["ok", "x" * 9])
    with pytest.raises(FileRefused, match="DOGOOD_LIMIT_COCO_IMAGES"):
        fs.check_count(fs.limits().coco_images + 1, "coco_images", "images")


# -- what must not leave the machine ------------------------------------------------------------------------------
def test_local_scan_finds_file_urls_and_flattened_paths(tmp_path):
    from dogood.core.fs import LocalScan

    scan = LocalScan()
    private = tmp_path / "private" / "secret"
    private.mkdir(parents=True)
    flat = str(private).replace("/", "_")  # what an absolute file name became as a document id
    for text in (f"see file://{tmp_path}/notes.txt", "FILE:///etc/hosts", "file:relative.txt", flat, flat[1:] + "_x",
                 "usr_share_fonts_x"):
        assert scan.find(text), text
    for text in ("82092117", "doc_0001_a", "tmp_x", "http://example.org/a/b", "a_b_c_d", "Date:", "profile_name",
                 "hf://datasets/x/y", "B-QUESTION"):
        assert scan.find(text) is None, text


def test_local_scan_reads_image_metadata_and_parquet_image_cells(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    from PIL import Image, PngImagePlugin

    from dogood.core.fs import LocalScan

    def png(text=None) -> bytes:
        buf, info = io.BytesIO(), PngImagePlugin.PngInfo()
        if text:
            info.add_text("Source", text)
        Image.new("L", (4, 4)).save(buf, format="PNG", pnginfo=info)
        return buf.getvalue()

    scan = LocalScan()
    secret = png(str(tmp_path / "scans" / "page.png"))
    assert scan.scan_image(png()) is None and scan.scan_image(png("a plain note")) is None
    assert scan.scan_image(secret).startswith(str(tmp_path))
    table = pa.table({"id": ["a", "b"], "image": [{"bytes": png(), "path": None}, {"bytes": secret, "path": None}]})
    pq.write_table(table, tmp_path / "rows.parquet")
    where, hit = scan.scan_parquet(tmp_path / "rows.parquet")
    assert where == "row 1, column image (the image's metadata)" and hit.startswith(str(tmp_path))


# -- every reader goes through the policy ----------------------------------------------------------------------
#: Reads outside ``core/fs`` that are allowed, ``(module, function, call): why``. A new ``open(``, ``np.load(``,
#: ``json.load(``, ``Image.open(``, ``.read_bytes(``, ``.read_text(``, ``ZipFile(`` or ``.open(`` anywhere else in
#: the package fails the test below: route it through :mod:`dogood.core.fs` (or, when it truly is not a file that
#: data, a recipe or a user names, add it here with the reason).
ALLOWED_READS = {
    ("dogood/core/document.py", "PageImage.from_file", "Image.open"): "bytes read by fs.read_bytes, or a handle "
                                                                       "fs.open_file opened",
    ("dogood/core/document.py", "PageImage.to_array", "Image.open"): "bytes, or a handle fs.open_file opened",
    ("dogood/page/photos.py", "_decode", "Image.open"): "a handle fs.open_file opened",
    ("dogood/page/ocr.py", "_quiet_leptonica", "open"): "/proc/self/maps: this process's own memory map",
    ("dogood/sources/parquet_rows.py", "_parquet_file", "filesystem.open"): "a remote Parquet file through its "
                                                                            "fsspec file system (local files go "
                                                                            "through fs.open_file)",
}
#: Modules whose owners route their readers when their branches merge (issue 36): allowed until then.
ROUTED_AT_MERGE = ()
WRITE_MODES = set("wax")


def _reads(tree):
    """``(call, enclosing function, line)`` of every call that may read a file."""
    import ast

    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def enclosing(node) -> str:
        names = []
        while node in parents:
            node = parents[node]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.append(node.name)
        return ".".join(reversed(names)) or "<module>"

    def writes(mode) -> bool:
        return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and bool(set(mode.value) & WRITE_MODES)

    def mode_of(node, position: int):
        if len(node.args) > position:
            return node.args[position]
        return next((k.value for k in node.keywords if k.arg == "mode"), None)

    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f, kind = node.func, None
        if isinstance(f, ast.Name) and f.id == "open" and not writes(mode_of(node, 1)):
            kind = "open"
        elif isinstance(f, ast.Name) and f.id == "ZipFile" or (isinstance(f, ast.Attribute) and f.attr == "ZipFile"):
            kind = None if writes(mode_of(node, 1)) else "ZipFile"
        elif isinstance(f, ast.Attribute):
            receiver = ast.unparse(f.value)
            if receiver == "fs":  # dogood.core.fs itself
                continue
            if f.attr == "open" and receiver == "Image":
                first = node.args[0] if node.args else None
                if not (isinstance(first, ast.Call) and ast.unparse(first.func) in ("io.BytesIO", "BytesIO")):
                    kind = "Image.open"
            elif f.attr == "load" and receiver in ("np", "numpy", "json"):
                kind = f"{receiver}.load"
            elif f.attr in ("read_bytes", "read_text"):
                kind = f.attr
            elif f.attr == "open" and receiver not in ("os", "webbrowser") and not writes(mode_of(node, 0)):
                kind = f"{receiver}.open"
        if kind:
            yield kind, enclosing(node), node.lineno


def test_every_reader_of_the_package_goes_through_core_fs():
    import ast

    root = Path(fs.__file__).resolve().parents[2]
    found, used = [], set()
    for path in sorted((root / "dogood").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel == "dogood/core/fs.py" or rel.startswith(ROUTED_AT_MERGE):
            continue
        for kind, function, line in _reads(ast.parse(path.read_text(encoding="utf-8"))):
            key = (rel, function, kind)
            if key in ALLOWED_READS:
                used.add(key)
            else:
                found.append(f"{rel}:{line} {function}: {kind}(...)")
    assert not found, "reads outside dogood.core.fs (route them through it):\n" + "\n".join(found)
    assert used == set(ALLOWED_READS), f"allowed reads no longer there: {set(ALLOWED_READS) - used}"


def test_the_walk_sees_each_kind_of_read():
    import ast

    code = ("import json, numpy as np, zipfile\nfrom PIL import Image\n"
            "def f(p):\n    open(p)\n    open(p, 'w')\n    json.load(p)\n    np.load(p)\n    Image.open(p)\n"
            "    Image.open(io.BytesIO(b''))\n    p.read_text()\n    p.read_bytes()\n    zipfile.ZipFile(p)\n"
            "    zipfile.ZipFile(p, 'w')\n    p.open('rb')\n    fs.read_bytes(p)\n")
    kinds = sorted(kind for kind, function, _ in _reads(ast.parse(code)) if function == "f")
    assert kinds == sorted(["open", "json.load", "np.load", "Image.open", "read_text", "read_bytes", "ZipFile",
                            "p.open"])


def test_a_cache_entry_a_killed_process_left_half_written_is_swept_by_the_next_write(tmp_path):
    """write_atomic (OCR and strength cache entries, shard records) writes through fs.partial_file: the temporary
    file of a process that no longer runs is one of fs.leftovers and goes with the next write beside it."""
    from dogood.core.paths import write_atomic

    entry = tmp_path / "ab" / "abcdef.json"
    entry.parent.mkdir()
    dead = entry.with_name(".abcdef.json.999999999.k_1x.partial")  # no process has that id
    dead.write_text('{"words": [')
    mine = entry.with_name(f".abcdef.json.{os.getpid()}.zz.partial")  # a live writer's: kept
    mine.write_text("{")
    assert fs.leftovers(entry) == [dead]
    write_atomic(entry, '{"words": []}')
    assert json.loads(entry.read_text()) == {"words": []}
    assert sorted(p.name for p in entry.parent.iterdir()) == sorted([entry.name, mine.name])
