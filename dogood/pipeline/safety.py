"""Nothing the user owns is lost: safe YAML, output locks, refusals and crash-safe replacement.

- :func:`load_yaml` reads recipes and publish manifests with one loader: YAML's
  safe subset, no aliases (a few hundred bytes of nested aliases expand to
  gigabytes), no duplicate keys (the second silently wins otherwise).
- :func:`output_lock` holds an exclusive lock on ``.<name>.lock`` beside an
  output folder for a whole build: two builds into one ``--out`` never share
  the work folder.
- :func:`check_out` refuses an output folder that is, contains or lies inside
  a folder the source reads, or that is a folder no dogood build wrote.
- :func:`recover` puts back an output a crash left only in ``.<name>.old-PID``.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import itertools
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from dogood.core import fs
from dogood.core.errors import DogoodError
from dogood.core.fs import (  # noqa: F401
    NAME,
    _old_folders,
    check_name,
    commit_folder,
    create_no_follow,
    glob_escape,
    is_link,
    recover_folder,
)

#: What ``dogood_build.json`` says to mark a folder as written by a dogood build.
BUILD_MARKER = {"written_by": "dogood"}


class OutputError(DogoodError):
    """An output folder that cannot be written without risking what the user owns."""


# -- YAML --------------------------------------------------------------------------------------------
class SafeLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` without aliases and without duplicate mapping keys."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, f"YAML aliases (*{event.anchor}) are not allowed: write the value out", event.start_mark)
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                except TypeError:  # an unhashable key: the base class reports it
                    continue
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping", node.start_mark, f"duplicate key {key!r}", key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """Parse ``text`` with :class:`SafeLoader` (raises ``yaml.YAMLError``; deep nesting and numbers too long to
    convert, such as an integer of 5000 digits, too)."""
    try:
        return yaml.load(text, Loader=SafeLoader)  # noqa: S506 (a SafeLoader subclass)
    except RecursionError:
        raise yaml.YAMLError("nested too deeply") from None
    except (ValueError, OverflowError) as exc:  # int() of more than 4300 digits
        raise yaml.YAMLError(f"a value cannot be read ({exc})") from None


# -- lock ----------------------------------------------------------------------------------------------
def lock_path(out: Path) -> Path:
    return out.with_name(f".{out.name}.lock")


@contextmanager
def output_lock(out: Path, *, wait: bool = False) -> Iterator[Path]:
    """Hold an exclusive ``flock`` on ``.<name>.lock`` beside ``out`` while the block runs.

    The lock file is removed when the block ends (still locked, so a waiting build sees
    it gone and locks a new one: after locking, the file must still be the one at ``path``).
    A second build stops with an :class:`OutputError`, or waits when ``wait``.
    """
    path = lock_path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = create_no_follow(path)  # a link planted at the lock's name is refused, never followed
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            raise OutputError(f"another dogood build is writing {out} (it holds {path}); wait for it to finish, "
                              "or pass --wait to queue behind it") from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # the holder removed it as we waited: lock the new one
    try:
        yield path
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
        os.close(fd)


# -- what a build recorded ----------------------------------------------------------------------------
def read_build_info(folder: str | Path) -> Any:
    """``dogood_build.json`` of a built folder, through the one reader (:func:`dogood.core.fs.read_json`: a regular
    file, bounded in size and nesting); raises ``OSError`` or :class:`~dogood.core.fs.FileRefused`."""
    return fs.read_json(Path(folder) / "dogood_build.json", what="dogood_build.json")


def verify_recorded(built: Path, error: type[DogoodError] = DogoodError, *, extra_ok: bool = False,
                    info: Any = None) -> dict[str, str]:
    """The sha256 of each file of a built folder as its build recorded them (``dogood_build.json``'s ``sha256``),
    checked against the files; an ``error`` naming the first file that is missing, changed or (unless
    ``extra_ok``) extra. What leaves a build (push, export) is what the build wrote."""
    if info is None:
        try:
            info = read_build_info(built)
        except (OSError, fs.FileRefused) as exc:
            raise error(f"{built}/dogood_build.json cannot be read ({getattr(exc, 'reason', exc)})") from None
    recorded = info.get("sha256") if isinstance(info, dict) else None
    if not isinstance(recorded, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in recorded.items()):
        raise error(f"{built} records no checksums of its files (built by an older dogood): build it again")
    if not extra_ok:
        present = {p.relative_to(built).as_posix() for p in built.rglob("*") if p.is_file()}
        present -= {"README.md", "dogood_build.json"}
        extra = sorted(present - set(recorded))
        if extra:
            raise error(f"{built / extra[0]} is not a file its build wrote (not in dogood_build.json's "
                        "checksums); remove it or build again")
    for rel, digest in recorded.items():
        path = built / rel
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            raise error(f"{built}/dogood_build.json names the file {rel!r} outside the folder")
        try:
            actual = fs.sha256_file(path)
        except FileNotFoundError:
            raise error(f"{path} is missing (its build wrote it): build again") from None
        except fs.FileRefused as exc:
            raise error(f"{path}: {exc.reason}") from None
        if actual != digest:
            raise error(f"{path} does not match the sha256 its build recorded (damaged or changed since it "
                        "was written): build again")
    return dict(recorded)


# -- what may be written where ------------------------------------------------------------------------
def is_dogood_build(folder: Path) -> bool:
    """True when ``folder`` holds a ``dogood_build.json`` that a dogood build wrote."""
    try:
        info = read_build_info(folder)
    except (OSError, fs.FileRefused):
        return False
    if not isinstance(info, dict):
        return False
    if all(info.get(k) == v for k, v in BUILD_MARKER.items()):
        return True
    return {"recipe", "version", "chains", "dogood_version", "splits"} <= set(info)  # dogood < 2.1 wrote no marker


def source_paths(sources: Iterable[Any]) -> list[Path]:
    """The local folders and files the sources read."""
    out: list[Path] = []
    for src in sources:
        for attr in ("root", "name", "folder", "labels_path", "parquet_folder"):
            value = getattr(src, attr, None)
            if value is None:
                continue
            try:
                path = Path(str(value))
                if path.exists():
                    out.append(path.resolve())
            except (OSError, ValueError):
                continue
    return out


def check_out(out: Path, sources: Iterable[Any], *, overwrite: bool) -> None:
    """Refuse an ``out`` that overlaps the source or that is not ours to replace; before anything is written."""
    try:
        str(out).encode("utf-8")
    except UnicodeEncodeError:
        raise OutputError(f"--out {str(out)!r} is not a valid UTF-8 file name; pick another") from None
    resolved = out.resolve()
    if resolved == Path(resolved.anchor) or not out.name or out.name in (".", ".."):
        raise OutputError(f"--out {out} names no folder of its own; give a new folder, e.g. out/NAME")
    for src in source_paths(sources):
        if resolved == src or resolved in src.parents or src in resolved.parents:
            raise OutputError(f"--out {out} overlaps the source data {src}; write the dataset somewhere else")
    if resolved == Path.cwd().resolve() or resolved in Path.cwd().resolve().parents:
        raise OutputError(f"--out {out} is the working folder or contains it; give a new folder, e.g. out/NAME")
    if out.exists() or out.is_symlink():
        if not overwrite:
            raise OutputError(f"{out} already exists; pass --overwrite to replace it")
        if out.is_symlink() or not out.is_dir():
            raise OutputError(f"{out} is not a folder; dogood replaces only dataset folders it built")
        if any(out.iterdir()) and not is_dogood_build(out):
            raise OutputError(f"{out} is not a dataset dogood built (no dogood_build.json written by dogood); "
                              "refusing to replace it even with --overwrite: move it away or pick another --out")


def old_folders(out: Path) -> list[Path]:
    return _old_folders(out)


def recover(out: Path) -> Path | None:
    """Undo a replacement a crash interrupted (call with the lock held): :func:`dogood.core.fs.recover_folder`
    of dogood builds (a link named like an old folder is never followed nor put back)."""
    return recover_folder(out, is_dogood_build)


def commit(tmp: Path, out: Path) -> None:
    """Move the finished ``tmp`` to ``out``, the old folder kept until the new one is in place
    (:func:`dogood.core.fs.commit_folder`)."""
    commit_folder(tmp, out)


# -- source content ---------------------------------------------------------------------------------
def hash_files(paths: Iterable[Path]) -> str:
    """sha256 over the names, sizes and bytes of ``paths`` (streamed), in the given order."""
    digest = hashlib.sha256()
    for path in paths:
        path = Path(path)
        digest.update(path.name.encode("utf-8", "surrogateescape") + b"\0")
        try:
            with fs.open_file(path, max_bytes=1 << 62, what="source file") as fh:
                while chunk := fh.read(1 << 20):
                    digest.update(chunk)
        except fs.FileRefused:
            digest.update(b"\0not a regular file")  # a FIFO or a device: never waited on; loading reports it
        except FileNotFoundError:
            digest.update(b"\0missing")
        except OSError as exc:
            digest.update(f"\0error {exc.errno}".encode())
        digest.update(b"\0end\0")
    return digest.hexdigest()


def source_fingerprint(source: Any, ids: Sequence[str]) -> str | None:
    """A sha256 of the content the source reads for ``ids`` (``None`` when it reads no local files).

    The files are hashed as they are listed, one id at a time: no list of every file is made."""
    files = iter(_source_files(source, ids))
    first = next(files, None)
    if first is None:
        return None
    return hash_files(itertools.chain([first], files))


def _source_files(source: Any, ids: Sequence[str]) -> Iterator[Path]:
    """The local files a source reads for ``ids``, in the order they are hashed."""
    if hasattr(source, "fingerprint_files"):  # RVL-CDIP: labels file and images, or the Parquet files holding the ids
        yield from source.fingerprint_files(ids)
    elif hasattr(source, "annotation_path") and hasattr(source, "image_path"):  # FUNSD
        for doc_id in ids:
            yield source.annotation_path(doc_id)
            yield source.image_path(doc_id)
    elif getattr(source, "kind", None) == "docvqa":
        folder = Path(source.folder)
        yield from sorted(p for p in folder.rglob("*") if p.is_file())
    elif getattr(source, "kind", None) == "hf":
        name = Path(str(source.name))
        if name.is_dir():
            yield from sorted(p for p in name.rglob("*") if p.is_file() and ".cache" not in p.parts)
        elif name.is_file():
            yield name
        else:
            import glob

            yield from (Path(p) for p in sorted(glob.glob(str(name))) if Path(p).is_file())


def portable(info: Any) -> Any:
    """``info`` with absolute local paths cut to their last part (a card names no folder of this machine)."""
    if isinstance(info, dict):
        return {k: portable(v) for k, v in info.items()}
    if isinstance(info, list):
        return [portable(v) for v in info]
    if isinstance(info, str) and (os.path.isabs(info) or info.startswith("~")):
        return Path(info).name
    return info


# -- nothing local leaves the machine -------------------------------------------------------------------------
#: Files scanned as text (every other file but Parquet and images is read as text too).
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".tif", ".tiff")


def find_local(folder: Path, *, extra: Iterable[str | Path] = (), names: Iterable[str] | None = None,
               parquet: bool = True) -> tuple[Path, str, str] | None:
    """``(file, field, what)`` of the first thing in ``folder``'s files that names this machine
    (:class:`dogood.core.fs.LocalScan`): JSON files field by field, Parquet files cell by cell (with ``parquet``),
    other text files line by line; images are not text. ``names``: only these files (relative paths)."""
    from dogood.core.fs import LocalScan

    scan = LocalScan(extra=[folder, *extra])
    files = ([folder / n for n in names] if names is not None
             else sorted(p for p in folder.rglob("*") if p.is_file() and not is_link(p)))
    for path in files:
        if not path.is_file():
            continue
        suffix = path.suffix.lower()
        if suffix in _IMAGE_SUFFIXES:  # its pixels are not text; its metadata is
            hit = scan.scan_image(fs.read_bytes(path, limit="image_bytes", what="image file"))
            if hit:
                return path, "the image's metadata", hit
            continue
        if suffix == ".parquet":
            if parquet:
                found = scan.scan_parquet(path)
                if found:
                    return path, found[0], found[1]
            continue
        text = fs.read_bytes(path, max_bytes=1 << 62, what="staged file").decode("utf-8", errors="replace")
        if suffix == ".json":
            try:
                found = scan.scan_value(json.loads(text), "")
            except (ValueError, RecursionError):
                found = None
            if found:
                return path, found[0] or "(top level)", found[1]
        for n, line in enumerate(text.splitlines(), 1):
            hit = scan.find(line)
            if hit:
                return path, f"line {n}", hit
    return None


def check_nothing_local(folder: Path, what: str, **options: Any) -> None:
    """Refuse (an :class:`OutputError`) when :func:`find_local` finds something of this machine in ``folder``."""
    found = find_local(folder, **options)
    if found is not None:
        path, field, hit = found
        raise OutputError(f"{what}: {path.relative_to(folder).as_posix()} ({field}) would name {hit!r}, a path or "
                          "name of this machine; nothing local is published. Pass such values as file names the "
                          "build records by content (--set records a path by its last part and sha256)")
