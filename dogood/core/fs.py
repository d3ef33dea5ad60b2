"""One policy for names, paths and links: what dogood reads from data never becomes a path unchecked, it never
follows a link it did not make inside its own folders, and nothing local leaves the machine.

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

import errno
import functools
import getpass
import hashlib
import os
import re
import shutil
import stat
import tempfile
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
    """The sha256 of a file's bytes, read in 1 MiB pieces."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
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
            if is_link(file):
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
    home folder, the working and data folders, and the user name as a path part (``/me/``, ``~me``).

    ``extra``: more folders that must not appear (a build folder)."""

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

    def find(self, text: str) -> str | None:
        """The first local thing ``text`` names, as found, or ``None``."""
        if not text or ("/" not in text and "\\" not in text and "~" not in text):
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
        key-value metadata) of a Parquet file that names something local; image bytes are not text and are not
        read as such."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(path)
        for key, value in (pf.schema_arrow.metadata or {}).items():
            hit = self.find(value.decode("utf-8", "replace"))
            if hit:
                return f"schema metadata {key.decode('utf-8', 'replace')}", hit
        strings = [name for name in pf.schema_arrow.names if _has_strings(pf.schema_arrow.field(name).type, pa)]
        if not strings:
            return None
        row0 = 0
        for g in range(pf.metadata.num_row_groups):
            table = pf.read_row_group(g, columns=strings)
            for name in strings:
                for r, cell in enumerate(_strings_only(table.column(name), pa).to_pylist()):
                    found = self.scan_value(cell, name)
                    if found:
                        return f"row {row0 + r}, column {found[0]}", found[1]
            row0 += table.num_rows
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
