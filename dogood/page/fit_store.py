"""Word fits on disk: one ``.npz`` file per page, so DataLoader workers (forked anew each epoch or persistent),
other processes and later runs fit a page's print once.

:class:`dogood.page.render.FitCache` keeps each page's word fits in memory;
with a folder (``dogood.transform``'s default ``<dogood's cache>/fits``,
``fit_cache_dir=...`` or ``$DOGOOD_FIT_CACHE_DIR``) it also reads and writes
them here. Files are named by the page's content hash inside a folder named by
everything the fits depend on (dogood's, Pillow's and NumPy's versions, the
layout engine, the fitting constants and the font files' bytes), so a file is
never read by code or fonts that would fit differently.

A file is never trusted (:func:`load`): it is read only when it is a regular
file (no link, FIFO or device), of at most :data:`MAX_FILE_BYTES`, a zip of
exactly the members the schema names, each stored uncompressed (no deflate
bomb) with its CRC checked, each ``.npy`` header declaring the schema's dtype
and a shape whose bytes are the member's own (sizes are checked before any
array is made; no pickle). :meth:`dogood.page.render._PageFits.from_arrays`
then checks the values (finite, in range, consistent with the page). A file
that fails is removed (:func:`discard`) and the page fitted and written anew.

Writes go to a ``.<name>.<pid>.<random>.partial`` file in the same folder
(:func:`dogood.core.fs.partial_file`), renamed over the old one, so a reader
sees a whole file or none; the leftovers of killed processes are removed by
:func:`dogood.core.fs.remove_leftovers` when a process first opens the folder
(:func:`folder_for`). The folder is bounded (:func:`trim`): past
``$DOGOOD_FIT_CACHE_BYTES`` (default :data:`DEFAULT_MAX_BYTES`) the files
used least recently are removed, and so are the folders of other versions
once empty. Nothing outside the folder is written and no link is followed.

Why by hand: no caching library keys numpy results by content with atomic,
pickle-free, validated files; this is a few lines on NumPy's own ``.npz``.
"""

from __future__ import annotations

import io
import os
import re
import stat
import threading
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from dogood.core import fs
from dogood.core.errors import DogoodError
from dogood.core.fs import is_link, partial_file, remove_leftovers

#: The largest fit file read: about 3 KB a word, so some 20,000 words on one page.
MAX_FILE_BYTES = 64 << 20
#: The default bound of a fit folder's files, all versions together (``$DOGOOD_FIT_CACHE_BYTES``): about 4,000
#: FUNSD pages.
DEFAULT_MAX_BYTES = 2 << 30
#: The longest ``.npy`` header read.
#: A page's file name, and a version folder's name (:func:`dogood.page.render._fit_signature`).
PAGE_FILE = re.compile(r"\A[0-9a-f]{32}\.npz\Z")
VERSION_FOLDER = re.compile(r"\A[0-9a-f]{16}\Z")
LEFTOVER = re.compile(r"\A\.([0-9a-f]{32}\.npz)\.\d+\.[A-Za-z0-9_]+\.partial\Z")

#: A member's expected dtype and shape: ``None`` for a free dimension.
Schema = Mapping[str, tuple[str, tuple[int | None, ...]]]

_swept: set[str] = set()
_lock = threading.Lock()
_written: dict[str, int] = {}  # bytes written per root since its last trim, in this process


def max_bytes() -> int:
    """``$DOGOOD_FIT_CACHE_BYTES`` (default :data:`DEFAULT_MAX_BYTES`); an error naming it when it is not a whole
    number."""
    value = os.environ.get("DOGOOD_FIT_CACHE_BYTES", "")
    if not value.strip():
        return DEFAULT_MAX_BYTES
    try:
        bound = int(value)
    except ValueError:
        bound = -1
    if bound < 0:
        raise DogoodError(f"DOGOOD_FIT_CACHE_BYTES must be a whole number of bytes, got {value!r}")
    return bound


def folder_for(root: str | os.PathLike, signature: str) -> Path:
    """``root/<signature>``, made if missing; an error naming it when it is a link or not a folder. The first
    time a process opens it, the temporary files of killed processes there are removed."""
    root = Path(root)
    sub = root / signature
    try:
        sub.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DogoodError(f"{sub}: cannot make the fit cache folder: {exc.strerror or exc}") from None
    if is_link(root) or is_link(sub) or not sub.is_dir():
        raise DogoodError(f"{sub}: the fit cache folder is a link or not a folder; dogood writes only into "
                          "folders it made")
    key = f"{os.getpid()}:{sub}"
    if key not in _swept:
        _swept.add(key)
        sweep(sub)
    return sub


def sweep(folder: Path) -> list[Path]:
    """Remove the ``.partial`` files that killed processes left in ``folder`` (:func:`dogood.core.fs.leftovers`)."""
    gone: list[Path] = []
    try:
        names = [entry.name for entry in os.scandir(folder)]
    except OSError:
        return gone
    for name in sorted({m.group(1) for n in names if (m := LEFTOVER.match(n))}):
        gone += remove_leftovers(folder / name)
    return gone


def page_path(folder: Path, key: bytes) -> Path:
    return folder / f"{key.hex()}.npz"


class BadFile(Exception):
    """A fit file that is not what dogood writes (removed when it is a regular file; anything else in its place,
    a link, a FIFO, is never opened and is replaced when the page is written)."""


def load(path: Path, schema: Schema) -> dict[str, np.ndarray] | None:
    """The arrays of ``path`` as ``schema`` declares them; ``None`` when it is absent; :class:`BadFile` when it is
    not what dogood writes (a bad regular file is removed first: :func:`discard`). Memory: at most about twice
    the file's size, itself at most :data:`MAX_FILE_BYTES`; nothing is allocated from a size the file declares
    before it is checked."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):  # a link, FIFO, device or folder: never opened; replaced when written
        raise BadFile(f"{path}: not a regular file")
    data = _read(path) if st.st_size <= MAX_FILE_BYTES else None
    arrays = None if data is None else _arrays(data, schema)
    if arrays is None:
        discard(path)
        raise BadFile(f"{path}: not a fit file dogood wrote")
    return arrays


def _read(path: Path) -> bytes | None:
    """The bytes of the regular file ``path``, at most :data:`MAX_FILE_BYTES`, through the one bounded reader
    (:func:`dogood.core.fs.read_bytes`: no link followed, no wait on a FIFO swapped in since it was looked at)."""
    try:
        return fs.read_bytes(path, max_bytes=MAX_FILE_BYTES, what="fit file", follow=False)
    except (OSError, fs.FileRefused):
        return None


def _arrays(data: bytes, schema: Schema) -> dict[str, np.ndarray] | None:
    """The members of the zip ``data``, checked against ``schema`` before any is made (:func:`dogood.core.fs.open_zip`
    and :func:`~dogood.core.fs.parse_npy`, plus stored members only); ``None`` when one fails."""
    try:
        with fs.open_zip(io.BytesIO(data), what="fit file", max_members=len(schema), max_bytes=len(data)) as zf:
            infos = zf.infolist()
            names = [info.filename for info in infos]
            if sorted(names) != sorted(f"{name}.npy" for name in schema) or len(set(names)) != len(names):
                return None
            if any(info.compress_type != zipfile.ZIP_STORED or info.file_size != info.compress_size
                   or info.flag_bits & 0x1 for info in infos):
                return None
            out = {}
            for info in infos:
                name = info.filename[:-4]
                array = _member(fs.read_member(zf, info.filename, what="fit file"), *schema[name])
                if array is None:
                    return None
                out[name] = array
            return out
    except (fs.FileRefused, ValueError, TypeError, KeyError, IndexError, EOFError, OSError, zipfile.BadZipFile,
            RecursionError, UnicodeDecodeError, NotImplementedError, OverflowError, MemoryError):
        return None


def _member(raw: bytes, dtype: str, shape: tuple[int | None, ...]) -> np.ndarray | None:
    """One ``.npy`` member as an array (:func:`dogood.core.fs.parse_npy`): its header must declare ``dtype`` and a
    shape matching ``shape``, C order, whose bytes are exactly those that follow the header."""
    array = fs.parse_npy(raw, what="fit file member", max_bytes=MAX_FILE_BYTES, dtypes=np.dtype(dtype).kind,
                         ndim=len(shape))
    if array.dtype != np.dtype(dtype) or (array.ndim > 1 and not array.flags.c_contiguous):
        return None
    if any(want is not None and n != want for n, want in zip(array.shape, shape)):
        return None
    return array


def discard(path: Path) -> None:
    """Remove the bad fit file ``path`` (a regular file only: a link or anything else is left to be replaced)."""
    try:
        if stat.S_ISREG(os.lstat(path).st_mode):
            os.unlink(path)
    except OSError:
        pass


def touch(path: Path) -> None:
    """Mark ``path`` as used now (the bound removes the files used least recently first)."""
    try:
        os.utime(path, follow_symlinks=False)
    except (OSError, NotImplementedError):
        pass


def save(path: Path, arrays: dict[str, np.ndarray]) -> bool:
    """Write ``arrays`` to ``path`` whole (a new file renamed over it); a failure leaves ``path`` as it was and
    says why, naming it. ``False`` (nothing written) when a folder is in the way."""
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            return False
    except OSError:
        pass
    tmp = None
    try:
        try:
            fd, tmp = partial_file(path)  # named as dogood.core.fs.leftovers() finds a killed run's temporary files
        except FileNotFoundError:  # the folder, emptied, was removed by another version's trim: make it again
            path.parent.mkdir(exist_ok=True)
            if is_link(path.parent):
                raise DogoodError(f"{path.parent}: the fit cache folder is a link; dogood writes only into "
                                  "folders it made") from None
            fd, tmp = partial_file(path)
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
            size = f.tell()
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        raise DogoodError(f"{path}: cannot write the fit cache: {exc.strerror or exc}") from None
    root = str(path.parent.parent)
    with _lock:
        first = root not in _written
        _written[root] = _written.get(root, 0) + size
        due = first or _written[root] >= min(max_bytes() // 16 + 1, 64 << 20)
        if due:
            _written[root] = 0
    if due:
        trim(path.parent.parent, max_bytes(), keep=path)
    return True


def trim(root: Path, bound: int, keep: Path | None = None) -> int:
    """Keep the fit files under ``root`` (every version's folder) within ``bound`` bytes: past it, remove the
    files used least recently until nine tenths of it remain, and other versions' folders once empty. Only
    names dogood writes are touched (:data:`VERSION_FOLDER`/:data:`PAGE_FILE`); no link is followed. Returns
    the number of files removed."""
    files: list[tuple[float, int, Path]] = []
    folders: list[Path] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return 0
    for entry in entries:
        if not VERSION_FOLDER.match(entry.name) or not entry.is_dir(follow_symlinks=False):
            continue
        folders.append(Path(entry.path))
        try:
            inner = list(os.scandir(entry.path))
        except OSError:
            continue
        for page in inner:
            if PAGE_FILE.match(page.name) and page.is_file(follow_symlinks=False):
                try:
                    st = page.stat(follow_symlinks=False)
                except OSError:
                    continue
                files.append((st.st_mtime, st.st_size, Path(page.path)))
    total = sum(size for _, size, _ in files)
    removed = 0
    if total > bound:
        target = bound * 9 // 10
        for _, size, path in sorted(files, key=lambda f: (f[0], str(f[2]))):
            if total <= target:
                break
            if keep is not None and path == keep:
                continue
            try:
                os.unlink(path)
            except OSError:
                continue
            total -= size
            removed += 1
    current = keep.parent if keep is not None else None
    for folder in folders:
        if folder != current:
            try:
                folder.rmdir()  # only when empty
            except OSError:
                pass
    return removed
