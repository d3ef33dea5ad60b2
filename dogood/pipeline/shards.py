"""The resumable work folder ``.<out>.partial`` and the Parquet shards written into it.

Each shard's rows go to one Parquet file per config; a finished shard leaves a
record (``.shards/<split>-<k>.json``: documents, skips, statistics, file sizes),
so a build killed halfway keeps the shards it finished when run again with the
same key (:meth:`dogood.pipeline.plan.BuildPlan.key`).
"""

from __future__ import annotations

import bisect
import itertools
import json
import shutil
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dogood.pipeline import stats as card_stats
from dogood.core.errors import DogoodError
from dogood.core.paths import write_atomic
from dogood.pipeline.plan import BuildPlan
from dogood.pipeline.worker import Task, TaskResult
from dogood.pipeline.safety import OutputError, is_dogood_build
from dogood.pipeline.parquet_writer import ShardFile, shard_path

KEY_FILE = ".dogood-build-key.json"
STATE_DIR = ".shards"


class BuildError(DogoodError):
    """A document failed and ``on_error`` was ``raise``, or a split has no document to write."""


@dataclass
class Shard:
    """Shard ``k`` of ``num_shards`` of a split: the documents at positions ``start..stop-1`` of ``ids``."""

    split: str
    k: int
    num_shards: int
    ids: Sequence[str]  # the split's ids (a lazy sequence: not copied per shard)
    start: int
    stop: int

    def __len__(self) -> int:
        return self.stop - self.start

    @property
    def tasks(self) -> Iterator[Task]:
        """``(split, index, doc_id)`` of each document, made as they are asked for."""
        ids, split = self.ids, self.split
        return ((split, i, ids[i]) for i in range(self.start, self.stop))


class ShardTasks(Sequence):
    """The tasks of several shards, in order, as one sequence made on demand (never a list of every task)."""

    def __init__(self, shards: list[Shard]):
        self.shards = shards
        self.starts = list(itertools.accumulate((len(s) for s in shards), initial=0))

    def __len__(self) -> int:
        return self.starts[-1]

    def __getitem__(self, item):
        if isinstance(item, slice):
            return [self[i] for i in range(*item.indices(len(self)))]
        n = item + len(self) if item < 0 else item
        if not 0 <= n < len(self):
            raise IndexError("task index out of range")
        j = bisect.bisect_right(self.starts, n) - 1
        shard = self.shards[j]
        i = shard.start + n - self.starts[j]
        return shard.split, i, shard.ids[i]

    def __iter__(self) -> Iterator[Task]:
        for shard in self.shards:
            yield from shard.tasks


#: ``(split, k, record)`` of a finished shard
ShardRecord = tuple[str, int, dict[str, Any]]


def num_shards(n: int, shard_size: int) -> int:
    """Shards of a split of ``n`` documents (one, empty, when there are none)."""
    return max(1, -(-n // shard_size))


def work_folder(out: Path, key: dict[str, Any]) -> Path:
    """``.<out>.partial`` beside ``out``: reused when it was left by a build of the same key, else made anew."""
    work = out.with_name(f".{out.name}.partial")
    text = json.dumps(key, sort_keys=True, default=str)
    if work.exists() or work.is_symlink():
        ours = (work / KEY_FILE).is_file() or (work / STATE_DIR).is_dir() or is_dogood_build(work)
        if work.is_symlink() or not work.is_dir() or (not ours and any(work.iterdir())):
            raise OutputError(f"{work} is in the way of the build's work folder and was not left by a dogood "
                              "build; move it away")
        try:
            same = (work / KEY_FILE).read_text(encoding="utf-8") == text
        except OSError:
            same = False
        if not same:
            shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    if not (work / KEY_FILE).exists():
        write_atomic(work / KEY_FILE, text)
    return work


def seal_work_folder(work: Path) -> None:
    """Drop the shard records and the key: the folder is a finished dataset, no longer resumable."""
    shutil.rmtree(work / STATE_DIR, ignore_errors=True)
    (work / KEY_FILE).unlink(missing_ok=True)


def is_resumable(work: Path) -> bool:
    """Whether ``work`` still has its key (a build of the same key may keep its finished shards)."""
    return (work / KEY_FILE).exists()


def list_shards(plan: BuildPlan, work: Path) -> tuple[list[ShardRecord], list[Shard]]:
    """(the shards an earlier build of the same key finished, the shards still to write), in split order.

    A shard to write is a range of the split's ids; its tasks are made as they are run."""
    done, todo = [], []
    for split in plan.recipe.splits:
        ids = plan.ids[split]
        size = plan.shard_size(split)
        count = num_shards(len(ids), size)
        for k in range(count):
            record = read_record(work, split, k, plan.configs, count)
            if record is not None:
                done.append((split, k, record))
            else:
                todo.append(Shard(split, k, count, ids, k * size, min((k + 1) * size, len(ids))))
    return done, todo


def write_shards(plan: BuildPlan, work: Path, shards: list[Shard], results: Iterator[TaskResult],
                 progress, ocr: list | None = None) -> list[ShardRecord]:
    """Write each shard's rows, in order, from ``results`` (one per task); return their records.

    ``progress`` is updated once per document. A failed document stops the
    build (``on_error="raise"``) or is listed as skipped. ``ocr``, a list
    ``[pages, seconds]``, sums the OCR the tasks ran.
    """
    written = []
    for shard in shards:
        files = {c: ShardFile(shard_path(work, c, shard.split, shard.k, shard.num_shards), plan.schema,
                           plan.labels, plan.quads)
                 for c in plan.configs}
        stats: dict[str, dict[str, Any]] = {c: {} for c in plan.configs}
        skipped, documents = [], 0
        for _ in range(len(shard)):
            _split, _index, doc_id, rows, error, (pages, seconds) = next(results)
            progress.update(1)
            if ocr is not None:
                ocr[0] += pages
                ocr[1] += seconds
            if error is not None:
                skipped.append(_skip(plan, shard.split, doc_id, error))
                continue
            write_rows(files, stats, rows)
            documents += 1
        record = {"documents": documents, "skipped": skipped, "stats": stats, "files": close_files(files)}
        write_record(work, shard.split, shard.k, record)
        written.append((shard.split, shard.k, json.loads(json.dumps(record))))
    return written


def write_rows(files: dict[str, ShardFile], stats: dict[str, dict[str, Any]], rows: dict[str, list]) -> None:
    """One document's rows (per config, one per copy) into its shard's files; their statistics into the shard's."""
    for config, copies in rows.items():
        for row, doc_stats in copies:
            files[config].write(row)
            card_stats.add(stats[config], doc_stats)


def close_files(files: dict[str, ShardFile]) -> dict[str, dict[str, int]]:
    """Close a shard's files (each renamed into place); their rows and bytes, per config, for the shard's record."""
    for f in files.values():
        f.close()
    return {c: {"num_rows": f.num_rows, "num_bytes": f.num_bytes} for c, f in files.items()}


def _skip(plan: BuildPlan, split: str, doc_id: str, error: tuple[str, str | None]) -> dict[str, str]:
    """The skip entry of a failed document; a :class:`BuildError` naming it when ``on_error`` is ``raise``."""
    message, trace = error
    if plan.on_error == "raise":
        detail = f"\n{trace}" if trace else ""
        raise BuildError(f"{split} document {doc_id!r} failed: {message}{detail}")
    return {"id": doc_id, "split": split, "reason": message}


def drop_empty_shard(work: Path, config: str, split: str, k: int, count: int) -> None:
    """Remove a shard file with no row: ``datasets`` cannot load an empty Parquet file."""
    shard_path(work, config, split, k, count).unlink(missing_ok=True)


def _record_path(work: Path, split: str, k: int) -> Path:
    return work / STATE_DIR / f"{split}-{k:05d}.json"


def read_record(work: Path, split: str, k: int, configs: list[str], count: int) -> dict[str, Any] | None:
    """A finished shard's record, when it and all its Parquet files are there; else ``None`` (write it again)."""
    try:
        record = json.loads(_record_path(work, split, k).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    if not all(shard_path(work, c, split, k, count).is_file() for c in configs):
        return None
    if set(record.get("stats", {})) != set(configs):
        return None
    return record


def write_record(work: Path, split: str, k: int, record: dict[str, Any]) -> None:
    path = _record_path(work, split, k)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(record, sort_keys=True, default=_jsonable))


def _jsonable(value):
    if isinstance(value, Counter):
        return dict(value)
    raise TypeError(f"cannot store {type(value).__name__} in a shard record")
