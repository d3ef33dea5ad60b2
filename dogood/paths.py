"""Where dogood finds data on disk: explicit paths, ``DOGOOD_DATA_DIR``, the cache.

``DOGOOD_DATA_DIR`` points at a folder laid out like the project's shared data
(``funsd/dataset``, ``rvl_cdip``, ``coco``, ``nltk_data``, ``glove`` ...); CI
sets it to ``../shared/data``. The cache (``DOGOOD_CACHE``, else
``$XDG_CACHE_HOME/dogood``, else ``~/.cache/dogood``) holds downloads and OCR
results.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


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

    Readers, other processes included, see the old file or the whole new one, never half of it.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:24]}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
