"""Where dogood finds data on disk: explicit paths, ``DOGOOD_DATA_DIR``, the cache.

``DOGOOD_DATA_DIR`` points at a folder laid out like the project's shared data
(``funsd/dataset``, ``rvl_cdip``, ``coco``, ``nltk_data``, ``glove`` ...); CI
sets it to ``../shared/data``. The cache (``DOGOOD_CACHE``, else
``$XDG_CACHE_HOME/dogood``, else ``~/.cache/dogood``) holds downloads and OCR
results.
"""

from __future__ import annotations

import os
from pathlib import Path

from dogood.core.fs import fsync_folder, partial_file


def data_dir() -> Path | None:
    """The folder named by ``DOGOOD_DATA_DIR``, if set and present."""
    value = os.environ.get("DOGOOD_DATA_DIR")
    if value and Path(value).is_dir():
        return Path(value)
    return None


def cache_dir() -> Path:
    """dogood's cache folder (created on first use)."""
    value = os.environ.get("DOGOOD_CACHE")
    if value:
        path = Path(value)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        path = Path(base) / "dogood"
    path.mkdir(parents=True, exist_ok=True)
    return path


def nltk_module():
    """``nltk``, with ``$DOGOOD_DATA_DIR/nltk_data`` added to its data path when that folder exists.

    ``$NLTK_DATA`` (which NLTK reads itself) still comes first.
    """
    import nltk

    shared = data_dir()
    folder = shared / "nltk_data" if shared is not None else None
    if folder is not None and folder.is_dir() and str(folder) not in nltk.data.path:
        nltk.data.path.append(str(folder))
    return nltk


def write_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a unique temporary file and ``os.replace``.

    Readers, other processes included, see the old file or the whole new one, never half of it; the file
    and its folder are synced, so a power loss does not leave a renamed file whose bytes were never written.
    The temporary file is :func:`dogood.core.fs.partial_file`'s (``.<name>.<pid>.<random>.partial``): one a
    killed process left (an OCR or strength cache entry, a shard record) is removed by the next write beside
    it, the one ``leftovers`` sweep of every cache and output.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = partial_file(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())  # the bytes reach the disk before the rename that publishes them
        os.replace(tmp, path)
        fsync_folder(path.parent)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_zip_atomic(path: str | Path, members: list[tuple[str, bytes]]) -> Path:
    """Write ``members`` (name, bytes) as a zip at ``path``, atomically and reproducibly.

    The zip goes to a temporary file in the same folder, is synced and renamed
    over ``path``, so ``path`` is never half-written. Member timestamps and
    modes are fixed, so the same members give the same bytes. Missing parent
    folders are created. Returns ``path``.
    """
    import zipfile

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = partial_file(path)  # .<name>.<pid>.<random>.partial; a killed run's is removed first
    try:
        with os.fdopen(fd, "wb") as fh:
            with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_DEFLATED) as zf:
                for member, data in members:
                    info = zipfile.ZipInfo(member, date_time=(1980, 1, 1, 0, 0, 0))
                    info.compress_type = zipfile.ZIP_DEFLATED
                    info.external_attr = 0o644 << 16
                    zf.writestr(info, data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a model is an ordinary file
        os.replace(tmp, path)
        fsync_folder(path.parent)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
