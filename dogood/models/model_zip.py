"""Read a dogood model zip (``meta.json`` plus the model's members), every failure a :class:`ModelError` naming it."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Sequence
from pathlib import Path

from dogood.models.base import ModelError


def read_model_zip(path: str | Path, members: Sequence[str], *, what: str, kind: str, hint: str,
                   format_name: str) -> tuple[dict, dict[str, bytes]]:
    """``(meta, member bytes)`` of a dogood model zip (``meta.json`` plus ``members``), checked on the way.

    Every failure is a :class:`ModelError` naming ``path``: missing, not a file, not a zip or damaged, a
    member missing, ``meta.json`` not JSON or not of ``format_name``. ``what`` names the file in messages
    (``"baseline model"``), ``kind`` what it should be (``"baseline"``), ``hint`` how to get one.
    """
    path = Path(path)
    if not path.exists():
        raise ModelError(f"{what} file {path} does not exist: {hint}")
    if not path.is_file():
        raise ModelError(f"{what} {path} is not a file")
    wanted = ["meta.json", *members]
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            missing = [m for m in wanted if m not in names]
            if missing:
                raise ModelError(f"{what} file {path} is not a dogood {kind}: it lacks {', '.join(missing)}")
            raw = {m: zf.read(m) for m in wanted}
    except ModelError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as exc:
        raise ModelError(f"{what} file {path} is not a valid zip file or is corrupt ({exc})") from None
    except Exception as exc:  # zlib.error and friends from a damaged member
        raise ModelError(f"{what} file {path} is corrupt ({type(exc).__name__}: {exc})") from None
    try:
        meta = json.loads(raw.pop("meta.json").decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ModelError(f"{what} file {path}: meta.json is not valid JSON ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != format_name:
        raise ModelError(f"{what} file {path}: meta.json does not describe a {format_name} model")
    return meta, raw
