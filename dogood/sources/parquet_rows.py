"""Rows of Parquet shards as documents' raw cells: files listed, rows counted from the footers, rows read by
row group (pyarrow), for the RVL-CDIP source's ``parquet:`` option (:mod:`dogood.sources.rvl_cdip`) and the
``hf`` source's ``streaming: true`` (:mod:`dogood.sources.hf_dataset`).

The files are local paths (a file, a folder, a glob) or any fsspec URL (``hf://datasets/aharley/rvl_cdip/...``
through ``huggingface_hub``'s file system, ``s3://``, ``https://``...). A split's files are those named for it as
the Hub lays them out (``data/test-00000-of-00015.parquet``, ``default/test/0000.parquet``); files that name no
split are all used. Ids are ``<file stem>/<row>``: a lazy sequence (:class:`ParquetIds`) over the row counts,
nothing stored per row. Reading keeps one row group per process (the last read), so loading rows in order reads
each row group once.
"""

from __future__ import annotations

import bisect
import functools
import glob
import itertools
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from dogood.core.errors import DocumentError, SourceError

_SPLIT_NAMES = {"val": ("val", "validation"), "validation": ("val", "validation"), "dev": ("val", "validation", "dev")}
_KNOWN_SPLITS = ("train", "val", "validation", "dev", "test")


def is_url(location: str) -> bool:
    return "://" in location


def looks_like_parquet(location: Any) -> bool:
    """Whether ``--source`` names Parquet shards rather than an RVL-CDIP folder: a URL, a ``.parquet`` file,
    a glob, or a folder without labels that holds ``.parquet`` files."""
    if location is None:
        return False
    text = str(location)
    if is_url(text) or text.endswith(".parquet") or glob.has_magic(text):
        return True
    path = Path(text)
    return (path.is_dir() and not (path / "labels").is_dir() and not (path / "labels.txt").is_file()
            and next(path.rglob("*.parquet"), None) is not None)


def split_of(path: str) -> str | None:
    """The split a Hub-layout file is named for: ``test-00000-of-00015.parquet`` or ``.../test/0000.parquet``."""
    parts = path.replace("\\", "/").split("/")
    match = re.match(r"([A-Za-z]+)[-_.]", parts[-1])
    if match and match.group(1) in _KNOWN_SPLITS:
        return match.group(1)
    if len(parts) > 1 and parts[-2] in _KNOWN_SPLITS:
        return parts[-2]
    return None


#: The extra that brings the fsspec file system of a URL scheme, for the error when it is missing.
_SCHEME_PACKAGES = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs", "az": "adlfs", "abfs": "adlfs",
                    "abfss": "adlfs"}


def url_fs(location: str) -> tuple[Any, str]:
    """``(fsspec file system, path)`` of a URL; every failure (an unknown scheme, a scheme whose file system is
    not installed, a malformed URL) is a :class:`SourceError` naming the URL. fsspec's backends raise errors of
    their own types (aiohttp's, botocore's, ``TypeError`` on some malformed hosts), hence the broad catch."""
    import fsspec

    scheme, sep, rest = location.partition("://")
    if not sep or not scheme or not rest.strip("/"):
        raise SourceError(f"{location!r} is not a URL of a file or folder (scheme://path)")
    try:
        return fsspec.core.url_to_fs(location)
    except ImportError as exc:
        package = _SCHEME_PACKAGES.get(scheme.lower())
        hint = f": pip install {package}" if package else ""
        raise SourceError(f"cannot read {location}: the {scheme}:// file system is not installed ({exc}){hint}") from None
    except ValueError as exc:
        if "Protocol not known" in str(exc):
            raise SourceError(f"cannot read {location}: unknown URL scheme {scheme!r} (fsspec knows "
                              "hf://, https://, s3://, gs://, file:// and others)") from None
        raise SourceError(f"cannot read {location} ({exc})") from None
    except Exception as exc:  # noqa: BLE001 - see the docstring
        raise SourceError(f"cannot read {location} ({type(exc).__name__}: {exc})") from None


def list_parquet(location: str, split: str) -> tuple[Any, list[str]]:
    """``(fsspec file system, sorted file paths)`` of ``split`` at ``location``; :class:`SourceError` when none."""
    import fsspec

    if is_url(location):
        fs, path = url_fs(location)
        try:
            files = ([f for f in fs.find(path) if f.endswith(".parquet")] if fs.isdir(path)
                     else fs.glob(path) if glob.has_magic(path) else [path])
        except Exception as exc:  # noqa: BLE001 - a backend's own error types (see url_fs)
            raise SourceError(f"cannot list the Parquet files at {location} ({type(exc).__name__}: {exc})") from None
    else:
        fs = fsspec.filesystem("file")
        path = Path(location)
        if path.is_dir():
            files = [str(p) for p in path.rglob("*.parquet")]
        elif path.is_file():
            files = [str(path)]
        else:
            files = [p for p in glob.glob(location, recursive=True) if Path(p).is_file()]
    files = sorted(files)
    if not files:
        raise SourceError(f"no Parquet file at {location}")
    wanted = _SPLIT_NAMES.get(split, (split,))
    named = [f for f in files if split_of(f) is not None]
    ours = [f for f in files if split_of(f) in wanted] if named else files
    if not ours:
        found = sorted({split_of(f) for f in named})
        raise SourceError(f"no Parquet file of the {split!r} split at {location} (its files are of {', '.join(found)})")
    return fs, ours


class ParquetIds(Sequence):
    """``<file stem>/<row>`` of every row of the files, in file and row order, from their row counts."""

    def __init__(self, stems: Sequence[str], counts: Sequence[int]):
        self.stems = tuple(stems)
        self.counts = tuple(counts)
        self.starts = tuple(itertools.accumulate(self.counts, initial=0))
        self._file = {stem: n for n, stem in enumerate(self.stems)}

    def __len__(self) -> int:
        return self.starts[-1]

    def locate(self, position: int) -> tuple[int, int]:
        """(file number, row in the file) of a position."""
        f = bisect.bisect_right(self.starts, position) - 1
        return f, position - self.starts[f]

    def __getitem__(self, item):
        if isinstance(item, slice):
            from dogood.sources.ids import IdsView

            return IdsView(self, range(len(self))[item])
        n = item + len(self) if item < 0 else item
        if not 0 <= n < len(self):
            raise IndexError("id index out of range")
        f, row = self.locate(n)
        return f"{self.stems[f]}/{row}"

    def parse(self, doc_id: str) -> tuple[int, int] | None:
        """(file number, row) an id names, or ``None`` when it is none of these ids."""
        stem, _, row = str(doc_id).rpartition("/")
        f = self._file.get(stem)
        if f is None or not row.isdigit() or (row != "0" and row.startswith("0")) or int(row) >= self.counts[f]:
            return None
        return f, int(row)

    def __contains__(self, doc_id) -> bool:
        return self.parse(doc_id) is not None

    def __eq__(self, other) -> bool:
        if isinstance(other, ParquetIds):
            return (self.stems, self.counts) == (other.stems, other.counts)
        return isinstance(other, Sequence) and not isinstance(other, str) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def index(self, doc_id, start: int = 0, stop: int | None = None) -> int:
        found = self.parse(doc_id)
        pos = None if found is None else self.starts[found[0]] + found[1]
        if pos is None or pos < start or (stop is not None and pos >= stop):
            raise ValueError(f"{doc_id!r} is not in the ids")
        return pos


class ParquetRows:
    """The rows of a split's Parquet files: counted from the footers, read a row group at a time."""

    def __init__(self, location: str, split: str, columns: tuple[str, ...] | None,
                 files: Sequence[str] | None = None):
        """``columns`` to read (``None``: all); ``files``, URLs or paths already resolved (the ``hf`` source's
        data files), instead of listing ``split``'s files at ``location``."""
        self.location, self.columns = location, columns
        if files is None:
            self.fs, self.files = list_parquet(location, split)
        else:
            import fsspec

            if not files:
                raise SourceError(f"no Parquet file at {location}")
            opened = [url_fs(f) if is_url(f) else (fsspec.filesystem("file"), f) for f in files]
            self.fs = opened[0][0]
            self.files = [path for _, path in opened]
        self.stamps = [file_stamp(self.fs, f) for f in self.files]
        stems = [Path(f).stem for f in self.files]
        if len(set(stems)) != len(stems):  # the same name in two folders: the path below the common folder
            common = len(os.path.commonpath(self.files))
            stems = [f[common:].lstrip("/").rsplit(".", 1)[0] for f in self.files]
        self.ids = ParquetIds(stems, [self._metadata(n).num_rows for n in range(len(self.files))])

    def __getstate__(self):  # a worker reopens the files: no open handle crosses processes
        return {"location": self.location, "columns": self.columns, "fs": self.fs, "files": self.files,
                "ids": self.ids, "stamps": self.stamps}

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _metadata(self, n: int):
        pf = _parquet_file(self.fs, self.files[n], os.getpid(), self.stamps[n])
        names = pf.schema_arrow.names
        missing = [c for c in self.columns or () if c not in names]
        if missing:
            raise SourceError(f"{self.files[n]}: no column {', '.join(missing)} (its columns: {', '.join(names)})")
        return pf.metadata

    @property
    def schema(self):
        """The first file's Arrow schema."""
        return _parquet_file(self.fs, self.files[0], os.getpid(), self.stamps[0]).schema_arrow

    def column(self, name: str) -> list[Any]:
        """One column's values over every file, in row order (only that column's chunks are read)."""
        values: list[Any] = []
        for path, stamp in zip(self.files, self.stamps):
            try:
                table = _parquet_file(self.fs, path, os.getpid(), stamp).read(columns=[name])
                values += table.column(name).to_pylist()
            except (OSError, ValueError) as exc:
                raise SourceError(f"cannot read column {name!r} of {path} ({exc})") from None
        return values

    def column_arrow(self, name: str, max_value_bytes: int | None = None):
        """One column over every file as an Arrow ``ChunkedArray`` (only that column's chunks are read; no Python
        object per row).

        ``max_value_bytes``: a bound on each value (an id): the footers are checked first (a row group's
        column, uncompressed, at most that per row), then the column is read in batches small enough that a
        batch of the longest value the footer allows stays within 64 MiB, each batch checked as it comes; a
        value beyond the bound is a :class:`SourceError` naming the file and row (before, ids of megabytes that
        compress to nothing took gigabytes for a build of three documents)."""
        import pyarrow as pa

        chunks = []
        for path, stamp in zip(self.files, self.stamps):
            pf = _parquet_file(self.fs, path, os.getpid(), stamp)
            try:
                if max_value_bytes is None:
                    chunks += pf.read(columns=[name]).column(name).chunks
                else:
                    chunks += _bounded_column(pf, path, name, max_value_bytes)
            except (OSError, ValueError) as exc:
                raise SourceError(f"cannot read column {name!r} of {path} ({exc})") from None
        return pa.chunked_array(chunks) if chunks else pa.chunked_array([], type=self.schema.field(name).type)

    def row(self, f: int, row: int) -> dict[str, Any]:
        """One row's cells (``columns``), reading its row group unless it was the last one read."""
        meta = _parquet_file(self.fs, self.files[f], os.getpid(), self.stamps[f]).metadata
        start = 0
        for g in range(meta.num_row_groups):
            size = meta.row_group(g).num_rows
            if row < start + size:
                return _row_group(self.fs, self.files[f], g, self.columns, os.getpid(), self.stamps[f])[row - start]
            start += size
        raise DocumentError(f"{self.files[f]} has no row {row}")

    def rows(self, start: int, stop: int) -> Iterator[tuple[int, int, dict[str, Any]]]:
        """``(file number, row, cells)`` of positions ``start..stop-1``, in one pass over each file's row groups."""
        position, stop = max(0, start), min(stop, len(self.ids))
        while position < stop:
            f, row = self.ids.locate(position)
            last = min(self.ids.counts[f], row + stop - position)  # this file's rows row..last-1
            pf = _parquet_file(self.fs, self.files[f], os.getpid(), self.stamps[f])
            first = 0
            for g in range(pf.metadata.num_row_groups):
                size = pf.metadata.row_group(g).num_rows
                if first < last and first + size > row:
                    cells = _read_group(pf, self.files[f], g, self.columns)
                    for r in range(max(row, first), min(last, first + size)):
                        yield f, r, cells[r - first]
                first += size
            position += last - row


def file_stamp(fs, path: str) -> tuple | None:
    """What identifies a local file's content for the caches below: inode, size, and modification and change
    times (the change time cannot be set back: a file rewritten with its old time is still seen as new);
    ``None`` for a remote file (named by its URL)."""
    protocol = getattr(fs, "protocol", None)
    if "file" not in ((protocol,) if isinstance(protocol, str) else tuple(protocol or ())):
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


@functools.lru_cache(maxsize=64)
def _parquet_file(filesystem, path: str, pid: int, stamp: tuple | None = None):
    """An open Parquet file of this process (``pid`` in the key: a forked worker opens its own handle, never
    sharing a file offset with the driver's; ``stamp``, :func:`file_stamp`: a replaced file is opened anew). A
    local file is opened through the one reader (:func:`dogood.core.fs.open_file`: a regular file, never a FIFO
    waited on); a remote one through its fsspec file system."""
    import pyarrow.parquet as pq

    from dogood.core import fs

    try:
        if stamp is not None:  # a local file (file_stamp gives none for a URL)
            return pq.ParquetFile(fs.open_file(path, max_bytes=1 << 62, what="Parquet file"))
        return pq.ParquetFile(filesystem.open(path, "rb"))
    except fs.FileRefused as exc:
        raise SourceError(f"cannot read Parquet file {path} ({exc.reason})") from None
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise SourceError(f"cannot read Parquet file {path} ({exc})") from None
    except Exception as exc:  # noqa: BLE001 - a remote file system's own error types (see url_fs)
        raise SourceError(f"cannot read Parquet file {path} ({type(exc).__name__}: {exc})") from None


def _bounded_column(pf, path: str, name: str, max_value_bytes: int) -> list:
    """The chunks of column ``name`` of one file, each value at most ``max_value_bytes`` (see
    :meth:`ParquetRows.column_arrow`)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    meta, largest = pf.metadata, 0
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        sizes = [group.column(c).total_uncompressed_size for c in range(group.num_columns)
                 if group.column(c).path_in_schema == name]
        allowed = group.num_rows * (max_value_bytes + 8) + (1 << 20)
        if sizes and sizes[0] > allowed:
            raise SourceError(f"{path}: row group {g} declares {sizes[0]} bytes of {name!r} for {group.num_rows} rows, "
                              f"more than the {max_value_bytes} bytes a value may have (a limit of dogood's: set "
                              "DOGOOD_LIMIT_ID_BYTES to raise it)")
        largest = max(largest, sizes[0] if sizes else 0)
    batch = max(1, min(65536, (64 << 20) // max(largest, 1)))
    chunks, row = [], 0
    for part in pf.iter_batches(batch_size=batch, columns=[name], use_threads=False):
        column = part.column(0)
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type) or pa.types.is_binary(column.type):
            lengths = pc.binary_length(column)
            longest = pc.max(lengths).as_py()
            if longest is not None and longest > max_value_bytes:
                at = row + pc.index(lengths, longest).as_py()
                raise SourceError(f"{path}: row {at} has an {name!r} of {longest} bytes, more than the "
                                  f"{max_value_bytes} it may have (a limit of dogood's: set DOGOOD_LIMIT_ID_BYTES to "
                                  "raise it)")
        chunks.append(column)
        row += len(column)
    return chunks


def _read_group(pf, path: str, group: int, columns: tuple[str, ...] | None) -> list[dict[str, Any]]:
    from dogood.core import fs

    size = pf.metadata.row_group(group).total_byte_size
    limit = fs.limits().parquet_group_bytes
    if size > limit:
        raise SourceError(f"cannot read row group {group} of {path}: it declares {size} bytes uncompressed, more than "
                          f"the {limit} a row group may have (a limit of dogood's: set DOGOOD_LIMIT_PARQUET_GROUP_BYTES "
                          "to raise it)")
    try:
        return pf.read_row_group(group, columns=None if columns is None else list(columns)).to_pylist()
    except (OSError, ValueError) as exc:
        raise SourceError(f"cannot read row group {group} of {path} ({exc})") from None


@functools.lru_cache(maxsize=1)
def _row_group(fs, path: str, group: int, columns: tuple[str, ...] | None, pid: int,
               stamp: tuple | None = None) -> list[dict[str, Any]]:
    """The last row group :meth:`ParquetRows.row` read in this process."""
    return _read_group(_parquet_file(fs, path, pid, stamp), path, group, columns)
