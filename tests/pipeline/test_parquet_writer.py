"""Shard files (:class:`dogood.pipeline.parquet_writer.ShardFile`): rows arriving as workers' tables, of any size,
make the bytes (and byte counts) of the same rows written one by one in row groups of 100."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dogood.core.schema import document_to_row, features_for
from dogood.pipeline.parquet_writer import ROW_GROUP_SIZE, ShardFile
from dogood.pipeline.worker import rows_table


@pytest.fixture(scope="module")
def rows(funsd_test):
    """253 rows (23 forms, 11 copies each: ids ``<form>#<k>``)."""
    return [document_to_row(funsd_test.load(i).replace(id=f"{i}#{k}"), "funsd", "segment")
            for i in funsd_test.ids()[:23] for k in range(11)]


def _reference(path, rows):
    """The rows written as dogood wrote them before tables: one ``from_pylist`` table per row group of 100."""
    schema = features_for("funsd", None, False).arrow_schema
    writer = pq.ParquetWriter(path, schema)
    nbytes = 0
    for start in range(0, len(rows), ROW_GROUP_SIZE):
        table = pa.Table.from_pylist(rows[start:start + ROW_GROUP_SIZE], schema=schema)
        nbytes += table.nbytes
        writer.write_table(table)
    writer.close()
    return nbytes


@pytest.mark.parametrize("size", [1, 11, 100, 253])
def test_tables_of_any_size_write_the_bytes_of_the_rows(rows, tmp_path, size):
    nbytes = _reference(tmp_path / "ref.parquet", rows)
    f = ShardFile(tmp_path / "data" / "shard.parquet", "funsd")
    for start in range(0, len(rows), size):  # a worker's table: a document's copies, or rows crossing row groups
        f.write_table(rows_table(rows[start:start + size], "funsd"))
    f.close()
    assert (tmp_path / "data" / "shard.parquet").read_bytes() == (tmp_path / "ref.parquet").read_bytes()
    assert f.num_rows == len(rows) and f.num_bytes == nbytes
    meta = pq.ParquetFile(tmp_path / "data" / "shard.parquet").metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [100, 100, 53]


def test_a_row_at_a_time_still_writes_the_same_bytes(rows, tmp_path):
    _reference(tmp_path / "ref.parquet", rows[:120])
    f = ShardFile(tmp_path / "one.parquet", "funsd")
    for row in rows[:120]:
        f.write(row)
    f.close()
    assert (tmp_path / "one.parquet").read_bytes() == (tmp_path / "ref.parquet").read_bytes()
