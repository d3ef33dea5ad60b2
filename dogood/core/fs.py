"""One policy for names, paths and links: what dogood reads from data never becomes a path unchecked, every file
it reads is a bounded regular file inside its folder, it never follows a link it did not make inside its own
folders, and nothing local leaves the machine.

- **The one reader** (read this first when a module opens a file): every file dogood opens because data, a recipe
  or a user's folder named it goes through :func:`open_file` / :func:`read_bytes` / :func:`read_text` (a regular
  file, never a FIFO, device or folder; bounded in bytes), :func:`confine` (a name read from data stays inside
  its folder: no ``..``, no absolute name, no link out) and the container readers :func:`read_json` /
  :func:`parse_json` (bytes and nesting), :func:`load_npy` / :func:`parse_npy` (dtype and shape checked against
  the bytes before allocation), :func:`open_zip` / :func:`read_member` (members, expanded size, names) and
  :func:`check_words` / :func:`check_count` (words and boxes of a page, entries of a COCO file). Their bounds are
  declared once in :class:`Limits` (raised by a user with ``DOGOOD_LIMIT_<FIELD>``); every refusal is a
  :class:`FileRefused` naming the file and the limit. ``tests/core/test_fs.py`` walks the package for any other
  ``open(``, ``np.load(``, ``json.load(``, ``Image.open(``, ``read_bytes(``, ``read_text(`` or ``ZipFile(``.
- :func:`check_name`: the one check of every name read from a recipe or from data (a recipe, a split, a config)
  before it becomes a folder or file name: ``\\A...\\Z`` patterns (``$`` would let ``"name\\n"`` through), never
  ``.`` or ``..``, never a path.
- :func:`create_no_follow`, :func:`find_links`, :func:`check_no_links`: dogood's own folders (output, work,
  lock, staging, export, cache) hold no link it did not make; a planted one is refused or removed, never
  followed.
- :func:`sha256_file`, :func:`replace_durably`: checksums recorded when a file is written, and the file and its
  folder synced before the rename that publishes it (a power loss leaves the old file or the whole new one).
- :func:`partial_folder`, :func:`remove_leftovers`: a command's temporary ``.<name>.partial-<pid>`` folders and
  files, marked as dogood's, so the next run removes those of a process that no longer runs.
- :func:`recorded_path`: a path-valued parameter as records show it, its last part and a content hash.
- :class:`LocalScan`: what must not leave the machine (absolute local paths, the home folder, the user name),
  found in text and in Parquet cells.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import functools
import getpass
import hashlib
import io
import json
import os
import re
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from dogood.core.errors import DogoodError

#: A recipe or split name, and so a folder name: letters, digits, ``-``, ``_``, ``.``; not starting with ``.``.
NAME = re.compile(r"\A[A-Za-z0-9_-][A-Za-z0-9_.-]*\Z")
#: A config name: as :data:`NAME`, ``@`` allowed (severity levels, ``merge@3``), starting with a letter or digit.
CONFIG_NAME = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.@-]*\Z")
#: The longest name :func:`check_name` accepts (a file name has at most 255 bytes).
MAX_NAME = 200
#: The file inside a ``.partial`` folder that marks it as dogood's, with the id of the process writing it.
PARTIAL_MARKER = ".dogood-partial"


class UnsafePathError(DogoodError):
    """A name or a path that dogood refuses to write to or read from: it would leave the folder named, or a link
    it did not make is in the way."""


# -- names -------------------------------------------------------------------------------------------------
def check_name(name: Any, what: str = "recipe name", *, config: bool = False) -> str:
    """``name`` when it is a safe folder name, else a :class:`DogoodError` saying what it must be.

    ``config``: the pattern of config names (:data:`CONFIG_NAME`, which allows ``@``); else :data:`NAME`."""
    pattern = CONFIG_NAME if config else NAME
    if (not isinstance(name, str) or not pattern.match(name) or name in (".", "..") or len(name) > MAX_NAME):
        allowed = "letters, digits, '-', '_', '.' or '@'" if config else "letters, digits, '-', '_' or '.'"
        raise DogoodError(f"{what} {_short(name)} must be {allowed}, not starting with '.' and at most {MAX_NAME} "
                          "characters (it names a folder)")
    return name


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


# -- links -------------------------------------------------------------------------------------------------
def is_link(path: str | Path) -> bool:
    """Whether ``path`` itself is a symbolic link (never following it)."""
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def find_links(folder: str | Path) -> Iterator[Path]:
    """The symbolic links at or below ``folder``, never following one (a link to a folder is listed, not
    entered)."""
    folder = Path(folder)
    if is_link(folder):
        yield folder
        return
    for root, dirs, files in os.walk(folder, followlinks=False):
        for name in [*dirs, *files]:
            path = Path(root) / name
            if is_link(path):
                yield path


def check_no_links(folder: str | Path, what: str) -> None:
    """Refuse ``folder`` when it is or holds a symbolic link (which dogood never makes in its folders)."""
    link = next(find_links(folder), None)
    if link is not None:
        raise UnsafePathError(f"{what} {folder} holds the symbolic link {link}, which dogood did not make; it "
                              "follows no link in its own folders: remove the link (or copy what it points to)")


def create_no_follow(path: str | Path, mode: int = 0o644) -> int:
    """Open (creating it if needed) the regular file ``path`` for reading and writing without following a link:
    a link planted at ``path`` is an :class:`UnsafePathError`, never a file made where it points."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePathError(f"{path} is a symbolic link dogood did not make; remove it") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise UnsafePathError(f"{path} is not a regular file; dogood uses that name for its own file: remove it")
    return fd


def remove_tree(path: str | Path) -> None:
    """Delete the folder ``path`` dogood made (a link there is removed itself, never what it points to)."""
    path = Path(path)
    if is_link(path) or path.is_file():
        path.unlink(missing_ok=True)
    elif path.exists():
        shutil.rmtree(path, ignore_errors=True)  # rmtree removes links inside, never follows them


# -- checksums and durable writes -------------------------------------------------------------------------------
def sha256_file(path: str | Path) -> str:
    """The sha256 of a regular file's bytes, read in 1 MiB pieces (a FIFO or a device is a :class:`FileRefused`,
    never a wait or an endless read)."""
    digest = hashlib.sha256()
    with open_file(path, max_bytes=1 << 62, what="file") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def fsync_folder(folder: str | Path) -> None:
    """Sync a folder's entries (a rename in it survives a power loss); a file system that cannot is skipped."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def fsync_file(path: str | Path) -> None:
    """Sync a file's bytes to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_durably(tmp: str | Path, dest: str | Path) -> None:
    """``os.replace(tmp, dest)`` after syncing ``tmp``, then sync the folder: after a power loss ``dest`` is the
    old file or the whole new one, never a renamed file whose bytes were not yet written."""
    fsync_file(tmp)
    os.replace(tmp, dest)
    fsync_folder(Path(dest).parent)


@contextlib.contextmanager
def naming(path: str | Path) -> Iterator[None]:
    """Inside, an ``OSError`` that names no file (a write on a full disk names none) is raised again naming
    ``path``, so the one error line says which file could not be written."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None and exc.errno is not None:
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from None
        raise


def sync_tree(folder: str | Path) -> None:
    """Sync every file and folder below ``folder`` (cheap for files already synced), links never followed."""
    for root, dirs, files in os.walk(folder, followlinks=False):
        for name in files:
            path = Path(root) / name
            if not is_link(path):
                try:
                    fsync_file(path)
                except OSError:
                    pass
        fsync_folder(root)


# -- replacing a folder ---------------------------------------------------------------------------------------
def glob_escape(name: str) -> str:
    return re.sub(r"([*?[])", r"[\1]", name)


def _old_folders(out: Path) -> list[Path]:
    return sorted(out.parent.glob(f".{glob_escape(out.name)}.old-*")) if out.parent.is_dir() else []


def commit_folder(tmp: str | Path, out: str | Path) -> None:
    """Move the finished folder ``tmp`` to ``out``: the old ``out`` stays until the new one is in place.

    Old -> ``.<name>.old-PID``, new -> ``out``, then the old one is deleted. A crash between the
    renames leaves the old folder in the ``.old`` folder, and :func:`recover_folder` puts it back.
    """
    tmp, out = Path(tmp), Path(out)
    if out.exists() or is_link(out):
        old = out.with_name(f".{out.name}.old-{os.getpid()}")
        os.replace(out, old)
        try:
            os.replace(tmp, out)
        except BaseException:
            if not out.exists():
                os.replace(old, out)
            raise
        fsync_folder(out.parent)
        remove_tree(old)
    else:
        os.replace(tmp, out)
        fsync_folder(out.parent)


def recover_folder(out: str | Path, ours) -> Path | None:
    """Undo a replacement a crash interrupted: when ``out`` is missing and ``.<name>.old-PID`` holds the
    previous folder (a real folder, never a link, for which ``ours(folder)`` is true), it is put back; old
    folders of finished replacements are removed. Returns the folder put back, if any."""
    out = Path(out)
    olds = [p for p in _old_folders(out) if not is_link(p) and p.is_dir() and ours(p)]
    restored = None
    if olds and not out.exists() and not is_link(out):
        newest = max(olds, key=lambda p: p.stat().st_mtime)
        os.replace(newest, out)
        olds.remove(newest)
        restored = out
    for p in olds:
        shutil.rmtree(p, ignore_errors=True)
    return restored


# -- leftovers of killed runs ------------------------------------------------------------------------------------
def partial_folder(dest: str | Path) -> Path:
    """A new ``.<name>.partial-<pid>`` folder beside ``dest``, marked as dogood's (:data:`PARTIAL_MARKER`);
    the leftovers of killed runs of the same ``dest`` are removed first (:func:`remove_leftovers`)."""
    dest = Path(dest)
    remove_leftovers(dest)
    tmp = dest.with_name(f".{dest.name}.partial-{os.getpid()}")
    remove_tree(tmp)
    tmp.mkdir(parents=True)
    (tmp / PARTIAL_MARKER).write_text(f"{os.getpid()}\n", encoding="utf-8")
    return tmp


def seal_partial(tmp: str | Path) -> None:
    """Drop the marker before the folder is renamed into place."""
    (Path(tmp) / PARTIAL_MARKER).unlink(missing_ok=True)


def partial_file(dest: str | Path) -> tuple[int, str]:
    """``(fd, path)`` of a new temporary file ``.<name>.<pid>.<random>.partial`` beside ``dest`` (leftovers of
    killed runs removed first)."""
    dest = Path(dest)
    remove_leftovers(dest)
    return tempfile.mkstemp(prefix=f".{dest.name[:100]}.{os.getpid()}.", suffix=".partial", dir=dest.parent)


def pid_running(pid: int) -> bool:
    """Whether a process with this id runs (on this machine)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def leftovers(dest: str | Path) -> list[Path]:
    """The temporary folders and files that killed dogood runs writing ``dest`` left beside it: a
    ``.<name>.partial-<pid>`` folder marked as dogood's, or a ``.<name>.<pid>.<random>.partial`` file, of a
    process that no longer runs. Links are never listed (nor followed)."""
    dest = Path(dest)
    parent = dest.parent
    if not parent.is_dir():
        return []
    found = []
    folder = re.compile(r"\A\." + re.escape(dest.name) + r"\.partial-(\d+)\Z")
    file = re.compile(r"\A\." + re.escape(dest.name[:100]) + r"\.(\d+)\.[A-Za-z0-9_]+\.partial\Z")
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return []
    for entry in entries:
        if entry.is_symlink():
            continue
        m = folder.match(entry.name)
        if m and entry.is_dir(follow_symlinks=False) and not pid_running(int(m.group(1))):
            if (Path(entry.path) / PARTIAL_MARKER).is_file():
                found.append(Path(entry.path))
            continue
        m = file.match(entry.name)
        if m and entry.is_file(follow_symlinks=False) and not pid_running(int(m.group(1))):
            found.append(Path(entry.path))
    return sorted(found)


def remove_leftovers(dest: str | Path) -> list[Path]:
    """Remove :func:`leftovers` of ``dest``; return what was removed."""
    gone = leftovers(dest)
    for path in gone:
        remove_tree(path)
    return gone


# -- path-valued parameters ------------------------------------------------------------------------------------
def looks_like_path(value: Any) -> bool:
    """Whether a parameter value names a local file or folder: absolute, ``~``-relative, ``./``-relative, or
    relative with a separator and present here (a Hub id such as ``owner/model`` that is not a local folder is
    not a path)."""
    if not isinstance(value, str) or not value or "\n" in value or "://" in value:
        return False
    if os.path.isabs(value) or value.startswith(("~", "./", "../")):
        return True
    return os.sep in value and os.path.exists(value)


def recorded_path(value: str) -> str:
    """How a record (card, ``dogood_build.json``, provenance, seeds) shows a path-valued parameter: its last part
    and the sha256 of its content (a file's bytes; a folder's files' names and bytes), ``name#sha256:<16 hex>``.
    The same content gives the same record wherever it lies; no folder of this machine is named."""
    path = Path(os.path.expanduser(value))
    try:
        digest = _content_sha256(str(path.resolve()), *_stamp(path))
    except OSError:
        digest = "missing"
    name = path.name or path.resolve().name or "path"
    return f"{name}#sha256:{digest[:16]}" if digest != "missing" else f"{name}#missing"


def recorded_value(value: Any) -> Any:
    """``value`` with every path-valued string (:func:`looks_like_path`) as :func:`recorded_path` shows it."""
    if isinstance(value, (list, tuple)):
        return type(value)(recorded_value(v) for v in value)
    if isinstance(value, dict):
        return {k: recorded_value(v) for k, v in value.items()}
    return recorded_path(value) if looks_like_path(value) else value


def _stamp(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns


@functools.lru_cache(maxsize=64)
def _content_sha256(resolved: str, size: int, mtime_ns: int) -> str:
    """sha256 of a file, or of a folder's files (relative names and bytes, in sorted order, links not followed);
    once per process and (path, size, time)."""
    path = Path(resolved)
    if path.is_file():
        return sha256_file(path)
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(path, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            file = Path(root) / name
            try:
                if not stat.S_ISREG(os.lstat(file).st_mode):
                    continue  # links are not followed; FIFOs, sockets and devices are not content
            except OSError:
                continue
            digest.update(file.relative_to(path).as_posix().encode("utf-8", "surrogateescape") + b"\0")
            digest.update(sha256_file(file).encode("ascii"))
    return digest.hexdigest()


# -- what must not leave the machine ----------------------------------------------------------------------------
_ANY_ABS = re.compile(r"(?<![\w.~:/-])(?:~[\w.-]*)?/(?:[^/\s:'\"`]+/)+([^/\s:'\"`,;)]+)")


def portable_text(text: str) -> str:
    """``text`` (a message) with every absolute or ``~`` path cut to its last part: what a card may say about a
    file (``document 'x', file 0001.json: ...``) without naming a folder of this machine."""
    return _ANY_ABS.sub(lambda m: m.group(1), text)


class LocalScan:
    """Finds what would name this machine in published text: absolute paths of folders that exist here, the
    home folder, the working and data folders, the user name as a path part (``/me/``, ``~me``), any ``file:``
    URL, and absolute paths flattened into a name (``tmp_pytest-of-me_x_secret``, ``/`` written as ``_``: a
    document id made of a local path).

    ``extra``: more folders that must not appear (a build folder)."""

    #: A ``file:`` URL names a file of the machine it was written on, whatever follows.
    _FILE_URL = re.compile(r"(?i)(?<![A-Za-z0-9+.-])file:(?://)?[^\s)'\"`<>]*")
    #: A run of ``_``-joined parts, where a flattened path could hide.
    _FLAT = re.compile(r"(?:[A-Za-z0-9.@+-]+_){2,}[A-Za-z0-9.@+-]+")

    #: An absolute POSIX path of at least two parts, not part of a longer word or URL.
    _ABS = re.compile(r"(?<![\w.~:/-])(/[\w.@+-]+(?:/[\w.@+ -]*[\w.@+-])+)")

    _URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s)'\"`<>]+")

    def __init__(self, extra: Iterable[str | Path] = ()):
        places = {str(Path.home()), str(Path.cwd().resolve())}
        shared = os.environ.get("DOGOOD_DATA_DIR")  # dogood.core.paths.data_dir (which imports this module)
        if shared and Path(shared).is_dir():
            places.add(str(Path(shared).resolve()))
        places.update(str(Path(p).resolve()) for p in extra)
        self.places = sorted((p for p in places if len(p) > 1 and p.count("/") >= 1 and p != "/"),
                             key=len, reverse=True)
        try:
            user = getpass.getuser()
        except Exception:  # noqa: BLE001 - no user name known: nothing to look for
            user = ""
        self.user = user if len(user) >= 2 else ""
        self._user = (re.compile(r"(?:(?<=[/\\~])" + re.escape(self.user) + r"(?=[/\\]|\Z|[^\w.-]))")
                      if self.user else None)
        try:  # the top-level folders of this machine: where a flattened path starts
            self._roots = frozenset(e.name for e in os.scandir("/") if e.is_dir(follow_symlinks=False))
        except OSError:
            self._roots = frozenset()

    def find(self, text: str) -> str | None:
        """The first local thing ``text`` names, as found, or ``None``."""
        if not text:
            return None
        if "_" in text:
            flat = self._flattened(text)
            if flat is not None:
                return flat
        if "/" not in text and "\\" not in text and "~" not in text and ":" not in text:
            return None
        m = self._FILE_URL.search(text)
        if m:
            return m.group(0)
        if "/" not in text and "\\" not in text and "~" not in text:
            return None
        for place in self.places:
            if re.search(r"(?<![\w.-])" + re.escape(place) + r"(?![\w.-])", text):
                return place
        for m in self._ABS.finditer(text):
            candidate = m.group(1)
            parts = candidate.split("/")
            if len(parts) >= 3 and os.path.isdir("/" + parts[1] + "/" + parts[2]):
                return candidate
        if self._user is not None:  # URLs aside: a Hub repo of the same name as the user is not a local path
            m = self._user.search(self._URL.sub(" ", text))
            if m:
                start = max(0, m.start() - 20)
                return text[start:m.end() + 20]
        return None

    def _flattened(self, text: str) -> str | None:
        """An absolute path written with ``_`` for ``/`` (``_tmp_pytest-of-me_x_secret``): a run of ``_``-joined
        parts whose first two, as ``/first/second``, are a folder of this machine below one of its top-level
        folders, with more parts after them."""
        for m in self._FLAT.finditer(text):
            parts = m.group(0).split("_")
            for i in range(len(parts) - 2):
                if parts[i] in self._roots and parts[i + 1] and os.path.isdir(f"/{parts[i]}/{parts[i + 1]}"):
                    return "_".join(parts[i:])
        return None

    def scan_image(self, data: bytes) -> str | None:
        """What an image's metadata names of this machine (PNG text chunks, EXIF, comments, XMP: every text an
        image carries besides its pixels), or ``None``; bytes that are no image are scanned as text."""
        from PIL import Image

        texts: list[str] = []
        try:
            with Image.open(io.BytesIO(data)) as im:
                for key, value in im.info.items():
                    texts += [str(key), value.decode("latin-1") if isinstance(value, bytes) else str(value)]
                for value in im.getexif().values():
                    texts.append(value.decode("latin-1") if isinstance(value, bytes) else str(value))
        except Exception:  # noqa: BLE001 - not an image Pillow reads: its bytes are scanned as text
            texts = [bytes(data[:1 << 20]).decode("latin-1")]
        for text in texts:
            hit = self.find(text)
            if hit:
                return hit
        return None

    def scan_value(self, value: Any, field: str) -> tuple[str, str] | None:
        """``(field path, what was found)`` of the first string in a nested value that names something local."""
        if isinstance(value, str):
            hit = self.find(value)
            return (field, hit) if hit is not None else None
        if isinstance(value, dict):
            for k, v in value.items():
                found = self.scan_value(v, f"{field}.{k}" if field else str(k))
                if found:
                    return found
        if isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                found = self.scan_value(v, f"{field}[{i}]")
                if found:
                    return found
        return None

    def scan_parquet(self, path: str | Path) -> tuple[str, str] | None:
        """``(where, what)`` of the first string cell (nested ones included; an image cell's ``path``; the file's
        key-value metadata) of a Parquet file that names something local, or of the first image cell whose
        metadata does (:meth:`scan_image`: its pixels are not text)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        with open_file(path, max_bytes=1 << 62, what="Parquet file") as fh:
            pf = pq.ParquetFile(fh)
            for key, value in (pf.schema_arrow.metadata or {}).items():
                hit = self.find(value.decode("utf-8", "replace"))
                if hit:
                    return f"schema metadata {key.decode('utf-8', 'replace')}", hit
            schema = pf.schema_arrow
            strings = [name for name in schema.names if _has_strings(schema.field(name).type, pa)]
            images = [name for name in schema.names if pa.types.is_struct(schema.field(name).type)
                      and schema.field(name).type.get_field_index("bytes") >= 0
                      and pa.types.is_binary(schema.field(name).type.field("bytes").type)]
            row0 = 0
            for g in range(pf.metadata.num_row_groups):
                if strings:
                    table = pf.read_row_group(g, columns=strings)
                    for name in strings:
                        for r, cell in enumerate(_strings_only(table.column(name), pa).to_pylist()):
                            found = self.scan_value(cell, name)
                            if found:
                                return f"row {row0 + r}, column {found[0]}", found[1]
                for name in images:
                    cells = pf.read_row_group(g, columns=[f"{name}.bytes"]).column(0)
                    for r, cell in enumerate(cells.combine_chunks().field("bytes") if pa.types.is_struct(cells.type)
                                             else cells.combine_chunks()):
                        data = cell.as_buffer()
                        hit = self.scan_image(data.to_pybytes()) if data is not None else None
                        if hit:
                            return f"row {row0 + r}, column {name} (the image's metadata)", hit
                row0 += pf.metadata.row_group(g).num_rows
        return None


def _has_strings(t, pa) -> bool:
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return True
    if pa.types.is_struct(t):
        return any(_has_strings(t.field(i).type, pa) for i in range(t.num_fields))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _has_strings(t.value_type, pa)
    return False


def _strings_only(column, pa):
    """A column with the binary children of its structs left out (an image's bytes are not text)."""
    t = column.type
    if pa.types.is_struct(t):
        keep = [t.field(i) for i in range(t.num_fields) if _has_strings(t.field(i).type, pa)]
        chunks = []
        for chunk in column.chunks:
            arrays = [_strings_only(pa.chunked_array([chunk.field(f.name)], type=f.type), pa) for f in keep]
            chunks.append(pa.StructArray.from_arrays([a.combine_chunks() for a in arrays],
                                                     names=[f.name for f in keep]))
        return pa.chunked_array(chunks) if chunks else column
    return column


# -- reading what data, a recipe or a user names: one reader, bounded ------------------------------------------
#
# Every file dogood opens because data, a recipe or a user's folder named it goes through the functions below
# (tests/core/test_fs.py walks the package for any other ``open(``, ``np.load(``, ``json.load(``, ``Image.open(``):
#
# - :func:`confine`: a name read from data (a COCO ``file_name``, a labels file's path) as a path inside the folder
#   it belongs to: no ``..``, no absolute name, no link leading out;
# - :func:`open_file`, :func:`read_bytes`, :func:`read_text`: a regular file only (a FIFO, a device, a folder or,
#   unless ``follow`` is given, a link is refused before anything waits on it), never more than its limit;
# - :func:`read_json` / :func:`parse_json`, :func:`load_npy` / :func:`parse_npy`, :func:`open_zip`: each container
#   checked against its declared limits (:class:`Limits`: bytes, nesting, shapes, members) before the memory it
#   describes is allocated;
# - :func:`check_words`, :func:`check_count`: the words and boxes of one page, and the entries of a container.
#
# Every refusal is a :class:`FileRefused` naming the file (or field) and the limit, which a caller reraises as its
# own error (a DocumentError with the document's id) or lets the command line print as ``dogood: error: ...``.

MiB = 1 << 20


@dataclasses.dataclass(frozen=True)
class Limits:
    """The declared bounds of what dogood reads from files it did not write, each checked before the memory it
    bounds is allocated. Real data stays far inside them (the comments say by how much); a user whose data does
    not raises one with the environment variable ``DOGOOD_LIMIT_<FIELD>`` (``DOGOOD_LIMIT_PAGE_WORDS=50000``),
    read at first use (:func:`limits`)."""

    #: A file read whole that has no limit of its own (a labels list, a recipe's text file, a dogood record).
    file_bytes: int = 64 * MiB
    #: An encoded page image (an uncompressed RGB TIFF at Pillow's 89.5-megapixel limit is 268 MB).
    image_bytes: int = 320 * MiB
    #: A recipe (YAML); the shipped ones are under 20 kB.
    recipe_bytes: int = 1 * MiB
    #: A JSON file: a FUNSD annotation (under 100 kB), a DocVQA QA file (the val split: 11 MB), meta.json.
    json_bytes: int = 256 * MiB
    #: How deep JSON arrays and objects nest (FUNSD's annotations: 5; COCO's: 4; dogood's own records: under 10).
    json_depth: int = 64
    #: A COCO annotation file (PubLayNet's train.json, the largest known: about 1.3 GB).
    coco_bytes: int = 4096 * MiB
    #: Images, annotations (regions) and categories of one COCO file (PubLayNet train: 336k images, 3.3M regions).
    coco_images: int = 4_000_000
    coco_annotations: int = 40_000_000
    coco_categories: int = 10_000
    #: A JSON-lines file (predictions: one line per document; 400,000 pages of OCR words: about 2 GB).
    jsonl_bytes: int = 4096 * MiB
    #: One ``.npy`` array, expanded (GloVe's 400k x 300 float32 vectors: 480 MB).
    npy_bytes: int = 2048 * MiB
    #: Members of a ``.npz`` archive, and of a zip (FUNSD's dataset.zip: 400).
    npz_members: int = 64
    zip_members: int = 200_000
    #: All members of a zip, expanded (FUNSD's dataset.zip: 36 MB).
    zip_bytes: int = 16384 * MiB
    #: A CRFsuite model (FUNSD's baseline: 1.5 MB); its labels (the tagger allocates labels x labels per word)
    #: and attributes.
    crf_bytes: int = 256 * MiB
    crf_labels: int = 1024
    crf_attributes: int = 1 << 24
    #: A document id read from data, in UTF-8 bytes (FUNSD's: 13; RVL-CDIP's paths: about 40).
    id_bytes: int = 1024
    #: One row group of a Parquet file, uncompressed, as its footer declares it (a Hub RVL-CDIP shard's: about
    #: 10 MB; ``datasets`` writes 100 image rows a group).
    parquet_group_bytes: int = 1024 * MiB
    #: Words (or regions) on one page (FUNSD: at most 700; a dense RVL-CDIP page through Tesseract: about 3,000).
    page_words: int = 10_000
    #: Characters in one word (FUNSD's longest: 41; a URL: a few hundred).
    word_chars: int = 1_000

    def with_env(self, environ=None) -> Limits:
        """These limits with every ``DOGOOD_LIMIT_<FIELD>`` of ``environ`` applied (a positive whole number)."""
        environ = os.environ if environ is None else environ
        changes = {}
        for f in dataclasses.fields(self):
            name = f"DOGOOD_LIMIT_{f.name.upper()}"
            if name in environ:
                text = environ[name].strip().replace("_", "")
                if not text.isdigit() or int(text) <= 0 or len(text) > 30:
                    raise DogoodError(f"{name}={environ[name]!r} must be a positive whole number")
                changes[f.name] = int(text)
        return dataclasses.replace(self, **changes) if changes else self


_LIMITS: Limits | None = None


def limits() -> Limits:
    """The limits in force: :class:`Limits` with the ``DOGOOD_LIMIT_*`` variables applied (read once)."""
    global _LIMITS
    if _LIMITS is None:
        _LIMITS = Limits().with_env()
    return _LIMITS


def set_limits(new: Limits | None) -> None:
    """Replace the limits in force (``None``: read them again from the environment); for tests and embedders."""
    global _LIMITS
    _LIMITS = new


def _limit_hint(field: str) -> str:
    return f"a limit of dogood's: set DOGOOD_LIMIT_{field.upper()} to raise it"


class FileRefused(DogoodError):
    """A file (or a field of one) dogood refuses to read: it leaves its folder, is not a regular file, is larger
    or deeper than its declared limit, or is not the container it should be. ``path`` names the file, ``reason``
    says why (the message is ``path: reason``)."""

    def __init__(self, path: str | Path | None, reason: str):
        self.path = None if path is None else str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}" if self.path else reason)


class UnsafeNameError(FileRefused, UnsafePathError):
    """A name read from data that would leave the folder it belongs to (``..``, an absolute name, a link out)."""


def relative_name(name: Any, what: str = "file name", folder: str = "its folder") -> str:
    """``name`` when, as written, it stays inside the folder it is read in: a non-empty relative name without
    ``..``, NUL, a drive or a URL scheme (a name is never expanded: ``~x`` is a file name); else an :class:`UnsafeNameError` naming ``what`` (no file system
    access: :func:`confine` also follows links)."""
    if not isinstance(name, str) or not name or "\0" in name:
        raise UnsafeNameError(None, f"{what} {_short(name)} is not a file name")
    pure = name.replace("\\", "/")
    if pure.startswith("/") or os.path.isabs(name) or re.match(r"\A[A-Za-z]:", pure):
        raise UnsafeNameError(None, f"{what} {_short(name)} is an absolute name; dogood opens only files inside "
                                    f"{folder} that data names, by relative names")
    if ".." in pure.split("/") or "://" in pure:
        raise UnsafeNameError(None, f"{what} {_short(name)} leaves {folder}; dogood opens only files inside it that "
                                    "data names")
    return name


def confine(name: Any, root: str | Path, what: str = "file name") -> Path:
    """``root / name`` for a ``name`` read from data, refused (:class:`UnsafeNameError`) unless it stays inside
    ``root``: a :func:`relative_name` whose existing part does not resolve through a link to outside ``root``
    (``root`` itself may be a link: a data folder often is). What is returned is the path as named (messages
    show it); :func:`open_file` opens it."""
    root = Path(root)
    relative_name(name, what, root.name or str(root))
    path = root / name
    try:
        real_root = root.resolve()
        real = path.resolve()
    except (OSError, RuntimeError) as exc:  # a link loop
        raise UnsafeNameError(path, f"{what} {_short(name)} cannot be resolved ({exc})") from None
    if real != real_root and real_root not in real.parents:
        raise UnsafeNameError(path, f"{what} {_short(name)} is a link to {real.name}, outside {root.name or root}; "
                                    "dogood follows no link out of the folder the data lives in")
    return path


def open_file(path: str | Path, *, limit: str = "file_bytes", max_bytes: int | None = None, what: str = "file",
              follow: bool = True, root: str | Path | None = None) -> io.BufferedReader:
    """A regular file opened for reading (binary), after checking what it is without waiting on it.

    Refused with a :class:`FileRefused` naming the file: a FIFO, a device, a socket or a folder (opened with
    ``O_NONBLOCK``, so a FIFO never hangs the caller), a link when ``follow`` is false, larger than the
    :class:`Limits` field ``limit`` (or ``max_bytes`` when given). A missing file is the usual
    ``FileNotFoundError`` (callers tell it apart). ``root``: ``path`` is a name read from data, first
    :func:`confine`-d to that folder."""
    if root is not None:
        path = confine(str(path), root, what)
    try:  # a device or a FIFO is refused before it is opened at all (opening some devices acts on them)
        mode = (os.stat if follow else os.lstat)(path).st_mode
    except FileNotFoundError:
        raise
    except OSError:
        mode = stat.S_IFREG  # let the open below say what is wrong
    if not stat.S_ISREG(mode) and not (stat.S_ISLNK(mode) and not follow):
        raise FileRefused(path, f"the {what} is {_kind(mode)}; dogood reads regular files only")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            raise FileRefused(path, f"the {what} is a symbolic link, which dogood does not follow here") from None
        if exc.errno in (errno.ENXIO, errno.EISDIR):
            raise FileRefused(path, f"the {what} is not a regular file") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # replaced since the check above
            raise FileRefused(path, f"the {what} is {_kind(st.st_mode)}; dogood reads regular files only")
        bound = getattr(limits(), limit) if max_bytes is None else max_bytes
        if st.st_size > bound:
            raise FileRefused(path, f"the {what} is {st.st_size} bytes, more than the {bound} it may be"
                                    + (f" ({_limit_hint(limit)})" if max_bytes is None else ""))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    fh.dogood_limit = bound  # type: ignore[attr-defined]  (what read_bytes holds a file that grows to)
    return fh


def _kind(mode: int) -> str:
    return ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "not a regular file")


def read_bytes(path: str | Path, *, limit: str = "file_bytes", max_bytes: int | None = None, what: str = "file",
               follow: bool = True, root: str | Path | None = None) -> bytes:
    """The bytes of a regular file (:func:`open_file`), never more than its limit even when the file grows while
    it is read."""
    with open_file(path, limit=limit, max_bytes=max_bytes, what=what, follow=follow, root=root) as fh:
        bound = fh.dogood_limit  # type: ignore[attr-defined]
        data = fh.read(min(bound, os.fstat(fh.fileno()).st_size))  # what its size says, at most the bound
        more = fh.read(1)
        if more:  # it grew while it was read: read on, in pieces, to one byte past the bound
            parts, total = [data, more], len(data) + 1
            while total <= bound and (chunk := fh.read(min(1 << 24, bound + 1 - total))):
                parts.append(chunk)
                total += len(chunk)
            data = b"".join(parts)
    if len(data) > bound:
        raise FileRefused(path, f"the {what} grew beyond the {bound} bytes it may be while it was read")
    return data


def read_text(path: str | Path, *, limit: str = "file_bytes", max_bytes: int | None = None, what: str = "file",
              encoding: str = "utf-8", follow: bool = True, root: str | Path | None = None) -> str:
    """The text of a regular file (:func:`read_bytes`); text that is not valid ``encoding`` is refused naming the
    file."""
    data = read_bytes(path, limit=limit, max_bytes=max_bytes, what=what, follow=follow, root=root)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise FileRefused(path, f"the {what} is not {encoding} text (byte {exc.start})") from None


# JSON nesting, counted without parsing: escapes dropped, then only quotes and brackets kept (all in C).
_KEEP_QUOTES_AND_BRACKETS = bytes(range(256)).translate(None, b'[]{}"')


def json_depth(data: bytes) -> int:
    """How deep the arrays and objects of a JSON text nest, found without parsing it, in C and NumPy at about
    ten times the speed of parsing: escaped backslashes and quotes are dropped (``bytes.replace``), all but
    quotes and brackets dropped (``bytes.translate``), brackets inside strings (between quotes) left out, the
    rest added up."""
    import numpy as np

    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    kept = data.translate(None, _KEEP_QUOTES_AND_BRACKETS)
    if not kept:
        return 0
    codes = np.frombuffer(kept, dtype=np.uint8)
    outside = np.bitwise_xor.accumulate((codes == ord('"')).view(np.uint8)) == 0
    opens = ((codes == ord("[")) | (codes == ord("{"))) & outside
    closes = ((codes == ord("]")) | (codes == ord("}"))) & outside
    return int(np.cumsum(opens.view(np.int8) - closes.view(np.int8), dtype=np.int64).max(initial=0))


class MalformedFile(FileRefused):
    """A file that is not the container it should be (not JSON, not UTF-8, a number too long to convert);
    ``detail`` is the parser's own words."""

    def __init__(self, path: str | Path | None, reason: str, detail: str):
        super().__init__(path, reason)
        self.detail = detail


def parse_json(data: bytes | str, *, where: str | Path | None = None, what: str = "JSON file",
               max_depth: int | None = None) -> Any:
    """JSON text (UTF-8, as JSON files are) parsed after its nesting is checked against ``max_depth`` (default
    :attr:`Limits.json_depth`); malformed JSON, text that is not UTF-8 and numbers too long to convert are a
    :class:`MalformedFile` naming ``where``."""
    depth_limit = limits().json_depth if max_depth is None else max_depth
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    depth = json_depth(raw)
    if depth > depth_limit:
        raise FileRefused(where, f"the {what} is nested too deeply: {depth} levels, more than the {depth_limit} "
                                 f"it may have ({_limit_hint('json_depth')})")
    try:
        return json.loads(data if isinstance(data, str) else raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError, a 5000-digit integer
        raise MalformedFile(where, f"the {what} is malformed JSON ({exc})", str(exc)) from None


def read_json(path: str | Path, *, limit: str = "json_bytes", max_bytes: int | None = None,
              max_depth: int | None = None, what: str = "JSON file", follow: bool = True,
              root: str | Path | None = None) -> Any:
    """A JSON file (:func:`read_bytes`, :func:`parse_json`): at most the :class:`Limits` field ``limit`` bytes
    (:attr:`Limits.json_bytes`; or ``max_bytes``), nested at most ``max_depth`` deep."""
    data = read_bytes(path, limit=limit, max_bytes=max_bytes, what=what, follow=follow, root=root)
    return parse_json(data, where=path, what=what, max_depth=max_depth)


def parse_npy(data: bytes, *, where: str | Path | None = None, what: str = "array",
              max_bytes: int | None = None, dtypes: str = "biuf", ndim: int | tuple[int, ...] | None = None):
    """A ``.npy`` array from its bytes, its header checked first: a plain numeric type (kinds ``dtypes``; never
    objects, so never a pickle), ``ndim`` dimensions when given, a shape whose values fit both ``max_bytes``
    (default :attr:`Limits.npy_bytes`) and the bytes that follow the header. The array is read-only, a view of ``data``."""
    import numpy as np

    limit = limits().npy_bytes if max_bytes is None else max_bytes
    fh = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(fh, max_header_size=10_000)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(fh, max_header_size=10_000)
        else:
            raise ValueError(f"npy format version {version}")
    except Exception as exc:  # noqa: BLE001 - numpy parses a hostile header with ast and tokenize: many types
        raise FileRefused(where, f"the {what} is not a valid .npy array ({type(exc).__name__}: {exc})") from None
    if dtype.kind not in dtypes or dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None:
        raise FileRefused(where, f"the {what} holds {dtype}, not a plain array of the kinds {dtypes!r}")
    if ndim is not None and len(shape) not in ((ndim,) if isinstance(ndim, int) else ndim):
        raise FileRefused(where, f"the {what} has shape {shape}, not {ndim} dimensions")
    count = 1
    for n in shape:
        count *= n
    size = count * dtype.itemsize
    if size > limit:
        raise FileRefused(where, f"the {what} declares shape {shape} of {dtype} ({size} bytes), more than the {limit} "
                                 f"an array may be ({_limit_hint('npy_bytes')})")
    start = fh.tell()
    if len(data) - start != size:
        raise FileRefused(where, f"the {what} declares shape {shape} of {dtype} ({size} bytes) but holds "
                                 f"{len(data) - start}")
    flat = np.frombuffer(data, dtype=dtype, count=count, offset=start)  # read-only, over the bytes given
    return flat.reshape(shape[::-1]).T if fortran else flat.reshape(shape)


def load_npy(path: str | Path, *, max_bytes: int | None = None, what: str = "array", dtypes: str = "biuf",
             ndim: int | tuple[int, ...] | None = None, root: str | Path | None = None):
    """A ``.npy`` file (:func:`read_bytes`, :func:`parse_npy`): the header is checked before the array's memory
    is allocated."""
    limit = limits().npy_bytes if max_bytes is None else max_bytes
    data = read_bytes(path, max_bytes=limit + 10_016, what=what, root=root)  # the array and its header
    return parse_npy(data, where=path, what=what, max_bytes=limit, dtypes=dtypes, ndim=ndim)


def load_npz(path: str | Path, *, what: str = "arrays", dtypes: str = "biufU", max_members: int | None = None,
             max_bytes: int | None = None) -> dict[str, Any]:
    """The arrays of a ``.npz`` file (``name -> array``, read-only): the archive checked by :func:`open_zip` (at
    most ``max_members``, default :attr:`Limits.npz_members`; expanded at most ``max_bytes``, default
    :attr:`Limits.npy_bytes`), each member by :func:`parse_npy` before its array is allocated; never a pickle."""
    current = limits()
    total = current.npy_bytes if max_bytes is None else max_bytes
    with open_zip(path, what=what, max_members=current.npz_members if max_members is None else max_members,
                  max_bytes=total) as zf:
        out = {}
        for name in zf.namelist():
            key = name[:-4] if name.endswith(".npy") else name
            out[key] = parse_npy(read_member(zf, name, where=path, what=what), where=f"{path}: {name}",
                                 what=f"member {name}", max_bytes=total, dtypes=dtypes)
    return out


def open_zip(path: str | Path | io.BytesIO, *, where: str | Path | None = None, what: str = "zip file",
             max_members: int | None = None, max_bytes: int | None = None, max_file_bytes: int | None = None,
             max_member_bytes: int | None = None):
    """A :class:`zipfile.ZipFile` whose central directory was checked before any member is read: at most
    ``max_members`` members (default :attr:`Limits.zip_members`), each expanding to at most ``max_member_bytes``
    (when given) and all together to at most ``max_bytes`` (default :attr:`Limits.zip_bytes`), no member name
    that leaves the archive's folder; the file itself at most ``max_file_bytes`` (default: ``max_bytes``). Read
    members with :func:`read_member`, which holds each to the size it declares."""
    current = limits()
    members = current.zip_members if max_members is None else max_members
    total_limit = current.zip_bytes if max_bytes is None else max_bytes
    shown = where if where is not None else (path if not isinstance(path, io.BytesIO) else None)
    source = path if isinstance(path, io.BytesIO) else open_file(
        path, max_bytes=total_limit if max_file_bytes is None else max_file_bytes, what=what)
    try:
        zf = _ZipOfFile(source)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as exc:
        source.close()
        raise FileRefused(shown, f"the {what} is not a valid zip file ({exc})") from None
    try:
        infos = zf.infolist()
        if len(infos) > members:
            raise FileRefused(shown, f"the {what} has {len(infos)} members, more than the {members} it may have "
                                     f"({_limit_hint('zip_members')})")
        big = [i for i in infos if max_member_bytes is not None and i.file_size > max_member_bytes]
        if big:
            raise FileRefused(shown, f"member {_short(big[0].filename)} of the {what} expands to {big[0].file_size} "
                                     f"bytes, more than the {max_member_bytes} a member may")
        total = sum(i.file_size for i in infos)
        if total > total_limit:
            raise FileRefused(shown, f"the {what} expands to {total} bytes, more than the {total_limit} it may "
                                     f"({_limit_hint('zip_bytes')})")
        for info in infos:
            name = info.filename.replace("\\", "/")
            if name.startswith("/") or ".." in name.split("/") or re.match(r"\A[A-Za-z]:", name) or "\0" in name:
                raise UnsafeMember(shown, f"the {what} has the member {_short(info.filename)}, which leaves its "
                                          "folder", info.filename)
    except BaseException:
        zf.close()
        source.close()
        raise
    return zf


class UnsafeMember(FileRefused):
    """A zip member whose name leaves the archive's folder (``..``, an absolute name); ``member`` is the name."""

    def __init__(self, path, reason: str, member: str):
        super().__init__(path, reason)
        self.member = member


class _ZipOfFile(zipfile.ZipFile):
    """A zip read from a handle :func:`open_file` opened: closing the zip closes the handle too."""

    def close(self):
        try:
            super().close()
        finally:
            self.fp_given.close()

    def __init__(self, source):
        self.fp_given = source
        super().__init__(source)


def read_member(zf, member: str, *, where: str | Path | None = None, what: str = "zip file") -> bytes:
    """A member's bytes, never more than the size it declares (a member whose data runs on is refused by
    zipfile's length and CRC checks first, and by this bound in any case); damage is a :class:`FileRefused`."""
    import zlib

    try:
        declared = zf.getinfo(member).file_size
        out = bytearray()
        with zf.open(member) as fh:
            while chunk := fh.read(min(1 << 20, declared + 1 - len(out)) or 1):
                out += chunk
                if len(out) > declared:
                    raise FileRefused(where, f"member {member} of the {what} expands beyond the {declared} bytes it "
                                             "declares")
    except FileRefused:
        raise
    except KeyError:
        raise FileRefused(where, f"the {what} has no member {member}") from None
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, NotImplementedError) as exc:
        raise FileRefused(where, f"member {member} of the {what} is damaged ({exc})") from None
    return bytes(out)


def check_count(count: int, field: str, what: str, where: str | Path | None = None) -> None:
    """Refuse ``count`` things (``what``: "regions", "images") beyond the :class:`Limits` ``field``."""
    limit = getattr(limits(), field)
    if count > limit:
        raise FileRefused(where, f"{count} {what}, more than the {limit} dogood reads ({_limit_hint(field)})")


def check_words(texts, where: str | Path | None = None, what: str = "words") -> None:
    """Refuse a page of more than :attr:`Limits.page_words` words (or regions), or a word of more than
    :attr:`Limits.word_chars` characters, before any record, feature or drawing is made of them; ``texts``
    holds the words' texts (anything else than a string is left to the caller's checks)."""
    current = limits()
    if len(texts) > current.page_words:
        raise FileRefused(where, f"the page has {len(texts)} {what}, more than the {current.page_words} of a page "
                                 f"({_limit_hint('page_words')})")
    try:
        longest = max(map(len, texts), default=0)  # in C: texts are strings
    except TypeError:  # something else among them: left to the caller's checks
        longest = max((len(t) for t in texts if isinstance(t, str)), default=0)
    if longest > current.word_chars:
        k = next(k for k, t in enumerate(texts) if isinstance(t, str) and len(t) == longest)
        raise FileRefused(where, f"word {k} has {longest} characters, more than the {current.word_chars} of a word "
                                 f"({_limit_hint('word_chars')})")
