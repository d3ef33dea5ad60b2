"""Checksummed downloads and safe archive extraction into the cache.

Written here rather than taken from ``datasets``' download manager because
that one caches by URL in the HF cache and does not let us pin a sha256 and
extract into a layout we control.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.request
import zipfile
from pathlib import Path, PurePosixPath

from tqdm.auto import tqdm

from dogood.errors import SourceError


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def download(url: str, dest: str | Path, sha256: str | None, *, timeout: float = 60.0) -> Path:
    """Download ``url`` to ``dest`` (atomically) and check its sha256.

    A file already at ``dest`` with the right checksum is reused. A checksum
    mismatch removes the download and raises :class:`SourceError`.
    """
    dest = Path(dest)
    if dest.exists() and (sha256 is None or sha256_file(dest) == sha256):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=dest.name + ".", suffix=".part", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(url, timeout=timeout) as resp:
                    total = int(resp.headers.get("Content-Length") or 0) or None
                    with tqdm(total=total, unit="B", unit_scale=True, desc=f"download {dest.name}", leave=False) as bar:
                        while block := resp.read(1 << 20):
                            out.write(block)
                            bar.update(len(block))
            except OSError as exc:
                raise SourceError(f"cannot download {url}: {exc}") from None
        if sha256 is not None:
            got = sha256_file(tmp)
            if got != sha256:
                raise SourceError(f"checksum mismatch for {url}: expected sha256 {sha256}, got {got}")
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return dest


def extract_zip(archive: str | Path, dest: str | Path) -> Path:
    """Extract a zip into ``dest`` atomically, refusing absolute or ``..`` member paths."""
    archive, dest = Path(archive), Path(dest)
    if dest.exists():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".", suffix=".part", dir=dest.parent))
    try:
        try:
            with zipfile.ZipFile(archive) as zf:
                for member in zf.infolist():
                    name = PurePosixPath(member.filename)
                    if name.is_absolute() or ".." in name.parts or member.filename.startswith(("/", "\\")):
                        raise SourceError(f"{archive}: refusing archive member with an unsafe path {member.filename!r}")
                zf.extractall(tmp)
        except zipfile.BadZipFile as exc:
            raise SourceError(f"{archive}: not a valid zip file ({exc})") from None
        os.replace(tmp, dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return dest
