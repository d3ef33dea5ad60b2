"""Read a dogood model zip (``meta.json`` plus the model's members), every failure a :class:`ModelError` naming it.

A model file is untrusted input (it may come from anywhere): before any member is parsed, the zip must be of a
bounded size, with a bounded number of members, none of which expands beyond :data:`MAX_MEMBER_BYTES` (a zip bomb
of a few megabytes would otherwise expand to gigabytes in memory), and each member must have the sha256 that
``meta.json`` records for it (:func:`member_checksums`, written by dogood's ``save``). Models saved before the
checksums were recorded carry none; they are read, but parsed as untrusted (the CRF in a child process). The zip
is read through :func:`dogood.core.fs.open_zip` and :func:`~dogood.core.fs.read_member` (a regular file only, its
directory checked before any member is read) with the bounds below.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from dogood.core import fs
from dogood.models.base import ModelError

#: The largest model file read (bytes on disk).
MAX_FILE_BYTES = 2 << 30
#: The most members a model zip may have.
MAX_MEMBERS = 64
#: The most bytes one member may expand to, and all of them together.
MAX_MEMBER_BYTES = 256 << 20
MAX_TOTAL_BYTES = 512 << 20
#: The key of ``meta.json`` that records each member's sha256.
CHECKSUMS = "sha256"


def member_checksums(members: Sequence[tuple[str, bytes]]) -> dict[str, str]:
    """``{member: sha256}`` of a model's members (all but ``meta.json``), for ``meta.json``."""
    return {name: hashlib.sha256(data).hexdigest() for name, data in members if name != "meta.json"}


def read_model_zip(path: str | Path, members: Sequence[str], *, what: str, kind: str, hint: str,
                   format_name: str) -> tuple[dict, dict[str, bytes]]:
    """``(meta, member bytes)`` of a dogood model zip (``meta.json`` plus ``members``), checked on the way.

    Every failure is a :class:`ModelError` naming ``path``: missing, not a file, too large, not a zip or
    damaged, too many members, a member missing or expanding beyond the limits, ``meta.json`` not JSON or not of
    ``format_name``, a member whose sha256 is not the one ``meta.json`` records. ``what`` names the file in
    messages (``"baseline model"``), ``kind`` what it should be (``"baseline"``), ``hint`` how to get one.
    """
    path = Path(path)
    if not path.exists():
        raise ModelError(f"{what} file {path} does not exist: {hint}")
    if not path.is_file():
        raise ModelError(f"{what} {path} is not a file")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ModelError(f"{what} file {path} is {path.stat().st_size} bytes, more than a dogood model may be "
                         f"({MAX_FILE_BYTES})")
    wanted = ["meta.json", *members]
    try:
        with fs.open_zip(path, what=what, max_members=MAX_MEMBERS, max_bytes=MAX_TOTAL_BYTES,
                         max_member_bytes=MAX_MEMBER_BYTES, max_file_bytes=MAX_FILE_BYTES) as zf:
            names = set(zf.namelist())
            missing = [m for m in wanted if m not in names]
            if missing:
                raise ModelError(f"{what} file {path} is not a dogood {kind}: it lacks {', '.join(missing)}")
            raw = {m: fs.read_member(zf, m, where=path, what=what) for m in wanted}
    except fs.FileRefused as exc:
        if "not a valid zip" in exc.reason or "damaged" in exc.reason:
            raise ModelError(f"{what} file {path} is not a valid zip file or is corrupt ({exc.reason})") from None
        raise ModelError(f"{what} file {path}: {exc.reason} (a dogood {kind} has {len(wanted)} members of at most "
                         f"{MAX_MEMBER_BYTES} bytes, {MAX_TOTAL_BYTES} in all)") from None
    try:
        meta = fs.parse_json(raw.pop("meta.json"), where=path, what="meta.json")
    except fs.MalformedFile as exc:
        raise ModelError(f"{what} file {path}: meta.json is not valid JSON ({exc.detail})") from None
    except fs.FileRefused as exc:
        raise ModelError(f"{what} file {path}: {exc.reason}") from None
    if not isinstance(meta, dict) or meta.get("format") != format_name:
        raise ModelError(f"{what} file {path}: meta.json does not describe a {format_name} model")
    recorded = meta.pop(CHECKSUMS, None)  # the model's meta is what it was saved with; save records them anew
    if recorded is not None:
        if not isinstance(recorded, dict) or set(recorded) != set(members):
            raise ModelError(f"{what} file {path}: meta.json's {CHECKSUMS} must give the sha256 of "
                             f"{', '.join(members)}")
        for m in members:
            if hashlib.sha256(raw[m]).hexdigest() != recorded[m]:
                raise ModelError(f"{what} file {path}: member {m} does not match the sha256 meta.json records: "
                                 "the file is corrupt or was changed since it was saved")
    return meta, raw
