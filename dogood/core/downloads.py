"""Checksummed downloads (``pooch``) and safe archive extraction into the cache.

:func:`download` fetches one file to a path we choose, checks its sha256 and
reuses a verified copy; :func:`extract_zip` unpacks an archive atomically and
refuses members that would land outside it. Every failure is a
:class:`~dogood.core.errors.SourceError` naming the URL or the file.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import zipfile
import zlib
from pathlib import Path

from tqdm.auto import tqdm

from dogood.core import fs
from dogood.core.errors import SourceError


def sha256_file(path: str | Path) -> str:
    """The sha256 of a file, hex (:func:`dogood.core.fs.sha256_file`: a regular file only)."""
    return fs.sha256_file(path)


def download(url: str, dest: str | Path, sha256: str | None, *, timeout: float = 60.0) -> Path:
    """Download ``url`` to ``dest`` (atomically) and check its sha256.

    A file already at ``dest`` with the right checksum (or any file, when
    ``sha256`` is ``None``) is reused. A checksum mismatch removes the download
    and raises :class:`SourceError`.
    """
    import pooch  # with requests, a tenth of a second to import: only when downloading
    import requests

    dest = Path(dest)
    # total=1: pooch uses a bar only when it is true (total > 0), then sets the total from the response
    bar = tqdm(total=1, unit="B", unit_scale=True, desc=f"download {dest.name}", leave=False, delay=0.5)
    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel("WARNING")  # pooch logs every download and fetch at INFO
    try:
        pooch.retrieve(url, known_hash=f"sha256:{sha256}" if sha256 else None, fname=dest.name, path=dest.parent,
                       downloader=pooch.HTTPDownloader(progressbar=bar, timeout=timeout))
    except requests.HTTPError as exc:
        response = exc.response
        raise SourceError(f"cannot download {url}: HTTP Error {response.status_code}: {response.reason}") from None
    except (requests.RequestException, OSError) as exc:
        raise SourceError(f"cannot download {url}: {exc}") from None
    except ValueError as exc:  # pooch: "... expected sha256:<hex> but got <hex>" (the download is removed)
        got = re.search(r"but got (\w+)", str(exc))
        if got is None:
            raise SourceError(f"cannot download {url}: {exc}") from None
        raise SourceError(f"checksum mismatch for {url}: expected sha256 {sha256}, got {got.group(1)}") from None
    finally:
        logger.setLevel(level)
        bar.close()
    return dest


def extract_zip(archive: str | Path, dest: str | Path) -> Path:
    """Extract a zip into ``dest`` atomically, its directory checked first (:func:`dogood.core.fs.open_zip`:
    absolute or ``..`` member paths, too many members or too many bytes expanded are refused before anything is
    written)."""
    archive, dest = Path(archive), Path(dest)
    if dest.exists():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        zf = fs.open_zip(archive, what="archive")
    except fs.UnsafeMember as exc:
        raise SourceError(f"{archive}: refusing archive member with an unsafe path {exc.member!r}") from None
    except fs.FileRefused as exc:
        reason = exc.reason.replace("the archive is not a valid zip file", "not a valid zip file")
        raise SourceError(f"{archive}: {reason}") from None
    with zf:
        tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", suffix=".part", dir=dest.parent))
        try:
            try:
                zf.extractall(tmp)
            except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
                raise SourceError(f"{archive}: not a valid zip file ({exc})") from None
            os.replace(tmp, dest)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
    return dest
