"""Word fits on disk: one ``.npz`` file per page, so later runs and other DataLoader workers fit a page's print once.

:class:`dogood.page.render.FitCache` keeps each page's word fits in memory;
with a folder (``dogood.transform(..., fit_cache_dir=...)`` or
``$DOGOOD_FIT_CACHE_DIR``) it also reads and writes them here. Files are named
by the page's content hash inside a folder named by everything the fits depend
on (dogood's, Pillow's and NumPy's versions, the layout engine, the fitting
constants and the font files' bytes), so a file is never read by code or fonts
that would fit differently. Arrays only (``allow_pickle=False``); a file that
cannot be read is treated as absent and written anew. Writes go to a new file
in the same folder, renamed over the old one, so a reader sees a whole file or
none; nothing outside the folder is written and no link is followed.

Why by hand: no caching library keys numpy results by content with atomic,
pickle-free files; this is a few lines on NumPy's own ``.npz``.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import numpy as np

from dogood.core.errors import DogoodError
from dogood.core.fs import create_no_follow, is_link


def folder_for(root: str | os.PathLike, signature: str) -> Path:
    """``root/<signature>``, made if missing; an error naming it when it is a link or not a folder."""
    root = Path(root)
    sub = root / signature
    try:
        sub.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DogoodError(f"{sub}: cannot make the fit cache folder: {exc.strerror or exc}") from None
    if is_link(sub) or not sub.is_dir():
        raise DogoodError(f"{sub}: the fit cache folder is a link or not a folder; dogood writes only into "
                          "folders it made")
    return sub


def page_path(folder: Path, key: bytes) -> Path:
    return folder / f"{key.hex()}.npz"


def load(path: Path) -> dict[str, np.ndarray] | None:
    """The arrays of ``path``, or ``None`` when it is absent, a link, or unreadable."""
    try:
        if is_link(path):
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as f, np.load(f, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None


def save(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` to ``path`` whole (a new file renamed over it); a failure leaves ``path`` as it was and
    says why, naming it."""
    # named as dogood.core.fs.leftovers() finds a killed run's temporary files
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.partial")
    try:
        fd = create_no_follow(tmp)
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise DogoodError(f"{path}: cannot write the fit cache: {exc.strerror or exc}") from None
