"""Write documents as a Hugging Face dataset's Parquet shards (the card is :mod:`dogood.pipeline.card`).

The folder is laid out as on the Hub::

    README.md                                   card with ``configs:`` YAML
    data/<config>/<split>-00000-of-00002.parquet
    dogood_build.json                           what was built, from what

so ``datasets.load_dataset(folder, config, split=...)`` loads it offline
exactly as it would from a Hub repo. Parquet files carry the ``datasets``
features in their schema metadata (ClassLabel names, Image). Rows are written
in source order in fixed-size shards and row groups, so the bytes depend only
on the documents, never on worker count.
"""

from __future__ import annotations

import errno
import functools
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from dogood.core.fs import replace_durably, sha256_file
from dogood.core.schema import features_for

ROW_GROUP_SIZE = 100


@functools.lru_cache(maxsize=16)
def arrow_schema(schema: str, labels: tuple[str, ...] | None = None, quads: bool = False) -> pa.Schema:
    """The Arrow schema of a shard file (:func:`dogood.core.schema.features_for`), made once per schema."""
    return features_for(schema, labels, quads).arrow_schema


def shard_path(folder: Path, config: str, split: str, shard: int, num_shards: int) -> Path:
    return Path(folder) / "data" / config / f"{split}-{shard:05d}-of-{num_shards:05d}.parquet"


class ShardFile:
    """One Parquet shard, written under a temporary name and renamed into place by :meth:`close`.

    Rows are written in row groups of ``ROW_GROUP_SIZE``, so the bytes depend
    only on the rows. A shard that was not closed (a killed build) never has
    its final name; a closed one was synced to disk before its rename, and its
    sha256 (:attr:`sha256`) is what the shard's record keeps for a resume to check.
    A failed write (a full disk) is an ``OSError`` naming the shard file, and the
    writer is closed then and there (no second traceback when it is collected).
    """

    def __init__(self, path: Path, schema: str, labels: tuple[str, ...] | None = None, quads: bool = False):
        self.path = Path(path)
        self.tmp = self.path.with_name(f".{self.path.name}.tmp")
        self.arrow_schema = arrow_schema(schema, tuple(labels) if labels is not None else None, quads)
        self._writer = None  # opened with the first row group (a shard of fewer rows: when it is closed)
        self._rows: list[pa.Table] = []  # rows not yet written, as the tables they came in
        self._buffered = 0
        self.num_rows = 0
        self.num_bytes = 0
        self.sha256: str | None = None

    def _open(self) -> None:
        """Create the temporary file and its writer: with the first row group, so that a build's driver creates no
        file while another thread syncs the last shard's (a file system makes a file creation wait for a sync)."""
        def start():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = pq.ParquetWriter(self.tmp, self.arrow_schema)

        self._guard(start)

    def write(self, row: dict[str, Any]) -> None:
        """Add one row (a dict of the output schema)."""
        self.write_table(pa.Table.from_pylist([row], schema=self.arrow_schema))

    def write_table(self, table: pa.Table) -> None:
        """Add the rows of ``table`` (of the output schema, e.g. made by a worker): the file's bytes are those of
        the same rows added one by one, in row groups of :data:`ROW_GROUP_SIZE`."""
        self._rows.append(table)
        self._buffered += table.num_rows
        self.num_rows += table.num_rows
        while self._buffered >= ROW_GROUP_SIZE:
            self._flush(ROW_GROUP_SIZE)

    def close(self) -> None:
        self._flush()
        if self._writer is None:  # no row: the file holds the schema alone (as a build's empty shard, then dropped)
            self._open()
        self._guard(self._writer.close)
        self._writer = None
        self.sha256 = self._guard(lambda: sha256_file(self.tmp))
        self._guard(lambda: replace_durably(self.tmp, self.path))

    def abandon(self) -> None:
        """Close and delete the temporary file of a shard that will not be finished."""
        writer, self._writer = self._writer, None
        if writer is not None:
            try:
                writer.close()
            except (OSError, ValueError):
                writer.is_open = False  # pyarrow's __del__ would close it again, printing a second traceback
                handle = getattr(writer, "file_handle", None)
                try:
                    if handle is not None:
                        handle.close()
                except (OSError, ValueError):
                    pass
        try:
            self.tmp.unlink(missing_ok=True)
        except OSError:
            pass

    def _flush(self, size: int | None = None) -> None:
        """Write the first ``size`` buffered rows (all: ``None``) as one row group."""
        if not self._buffered:
            return
        buffered = pa.concat_tables(self._rows)
        size = self._buffered if size is None else size
        table = buffered.slice(0, size).combine_chunks()  # one chunk, as a table made from the rows at once
        rest = buffered.slice(size)
        self._rows = [rest] if rest.num_rows else []
        self._buffered = rest.num_rows
        self.num_bytes += table.nbytes
        if self._writer is None:
            self._open()
        self._guard(lambda: self._writer.write_table(table))

    def _guard(self, step):
        """Run ``step``; an ``OSError`` (``ENOSPC``...) becomes one naming the shard file, the writer abandoned."""
        try:
            return step()
        except OSError as exc:
            self.abandon()
            code = exc.errno or errno.EIO
            raise OSError(code, exc.strerror or os.strerror(code) if exc.errno else str(exc), str(self.path)) from None


def parquet_sizes(folder: str | Path) -> dict[str, int]:
    """Per config, the total bytes of its Parquet files under ``folder/data/<config>/``."""
    data = Path(folder) / "data"
    if not data.is_dir():
        return {}
    return {d.name: sum(f.stat().st_size for f in sorted(d.glob("*.parquet"))) for d in sorted(data.iterdir())
            if d.is_dir()}


#: The file a build writes beside its card when it used third-party material that needs credit.
