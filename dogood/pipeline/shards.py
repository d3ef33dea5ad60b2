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

from dogood.core import fs
from dogood.core.errors import DogoodError
from dogood.core.fs import find_links, is_link, portable_text, sha256_file
from dogood.core.paths import write_atomic
from dogood.core.progress import say
from dogood.pipeline import stats as card_stats
from dogood.pipeline import timeline
from dogood.pipeline.parquet_writer import ShardFile, shard_path
from dogood.pipeline.plan import BuildPlan
from dogood.pipeline.safety import OutputError, is_dogood_build
from dogood.pipeline.worker import Task, TaskResult

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
    """``.<out>.partial`` beside ``out``: reused when it was left by a build of the same key, else made anew.

    A work folder holding a symbolic link (``data/<config>`` or ``.shards`` pointing at a folder of the user's)
    is never written through: it is deleted (the links themselves, never what they point to) and made anew."""
    work = out.with_name(f".{out.name}.partial")
    text = json.dumps(key, sort_keys=True, default=str)
    if work.exists() or work.is_symlink():
        ours = not is_link(work) and ((work / KEY_FILE).is_file() or (work / STATE_DIR).is_dir()
                                      or is_dogood_build(work))
        if work.is_symlink() or not work.is_dir() or (not ours and any(work.iterdir())):
            raise OutputError(f"{work} is in the way of the build's work folder and was not left by a dogood "
                              "build; move it away")
        link = next(find_links(work), None)
        try:
            same = link is None and not is_link(work / KEY_FILE) and \
                fs.read_text(work / KEY_FILE, what="build key") == text
        except (OSError, fs.FileRefused):
            same = False
        if link is not None:
            say(f"{work} holds the symbolic link {link}, which dogood does not make; the work folder is made anew "
                "(the link is removed, not followed)")
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
                 progress, ocr: list | None = None, previews: dict[str, bytes] | None = None) -> list[ShardRecord]:
    """Write each shard's rows, in order, from ``results`` (one per task); return their records.

    ``progress`` is updated once per document. A failed document stops the
    build (``on_error="raise"``) or is listed as skipped. ``ocr``, a list
    ``[pages, seconds]``, sums the OCR the tasks ran; ``previews`` gathers the previews the workers drew
    (config -> JPEG bytes).

    A finished shard's files are closed (last row group, sha256, synced, renamed in) and its record written by a
    thread of their own while the next shard's rows come in (:class:`ShardCloser`): the driver's disk waits overlap
    the workers' (and, with one process, its own) shifting.
    """
    closer = ShardCloser(work)
    try:
        for shard in shards:
            files: dict[str, ShardFile] = {}
            try:
                for c in plan.configs:
                    files[c] = ShardFile(shard_path(work, c, shard.split, shard.k, shard.num_shards), plan.schema,
                                         plan.labels, plan.quads)
                stats: dict[str, dict[str, Any]] = {c: {} for c in plan.configs}
                skipped, documents = [], 0
                for _ in range(len(shard)):
                    result = next(results)
                    timeline.extend(result.spans)
                    progress.update(1)
                    if ocr is not None:
                        ocr[0] += result.ocr[0]
                        ocr[1] += result.ocr[1]
                    if result.error is not None:
                        skipped.append(_skip(plan, shard.split, result.doc_id, result.error))
                        continue
                    if previews is not None and result.previews:
                        previews.update(result.previews)
                    with timeline.span("write"):
                        write_rows(files, stats, result.rows)
                    documents += 1
            except BaseException:
                for f in files.values():
                    f.abandon()
                raise
            closer.submit(shard, files, {"documents": documents, "skipped": skipped, "stats": stats})
    except BaseException:
        closer.join(quiet=True)  # the shards finished before the failure keep their files and records (a resume)
        raise
    return closer.join()


class ShardCloser:
    """Closes finished shards' files and writes their records, in order, on one thread beside the driver's loop.

    At most :attr:`AHEAD` shards wait to be closed (the driver waits for the oldest beyond that); a failure (a full
    disk: the shard's files abandoned) is raised by the next :meth:`submit` or by :meth:`join`."""

    AHEAD = 2
    THREADS = 8  # a shard's files are closed on this many threads

    def __init__(self, work: Path):
        from concurrent.futures import ThreadPoolExecutor

        self.work = work
        self.span = timeline.bound_span()
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dogood-shard-closer")
        self.pending: list = []
        self.written: list[ShardRecord] = []

    def submit(self, shard: Shard, files: dict[str, ShardFile], record: dict[str, Any]) -> None:
        while len(self.pending) >= self.AHEAD:
            self._collect(self.pending.pop(0))
        self.pending.append(self.pool.submit(self._close, shard, files, record))

    def _close(self, shard: Shard, files: dict[str, ShardFile], record: dict[str, Any]) -> ShardRecord:
        try:
            with self.span("close"):
                record = {**record, "files": close_files(files, self.THREADS)}
        except BaseException:
            for f in files.values():
                f.abandon()
            raise
        write_record(self.work, shard.split, shard.k, record)
        return shard.split, shard.k, json.loads(json.dumps(record))

    def _collect(self, future) -> None:
        self.written.append(future.result())

    def join(self, quiet: bool = False) -> list[ShardRecord]:
        """Wait for every submitted shard; raise the first failure (unless ``quiet``: the build is failing
        already); the records written, in shard order."""
        error = None
        for future in self.pending:
            try:
                if error is None:
                    self._collect(future)
                else:
                    future.result()
            except BaseException as exc:  # noqa: BLE001 - the first is raised below
                error = error or exc
        self.pending = []
        self.pool.shutdown(wait=True)
        if error is not None and not quiet:
            raise error
        return self.written


def write_rows(files: dict[str, ShardFile], stats: dict[str, dict[str, Any]], rows: dict[str, tuple]) -> None:
    """One document's rows (per config: a table of one row per copy, and each row's statistics) into its shard's
    files; their statistics into the shard's, row by row."""
    for config, (table, row_stats) in rows.items():
        files[config].write_table(table)
        for doc_stats in row_stats:
            card_stats.add(stats[config], doc_stats)


def close_files(files: dict[str, ShardFile], threads: int = 1) -> dict[str, dict[str, Any]]:
    """Close a shard's files (each synced and renamed into place), on up to ``threads`` threads (the disk waits and
    the hashing release the GIL); their rows, bytes and sha256, per config, for the shard's record (a resume checks
    the files against it)."""
    if threads > 1 and len(files) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(threads, len(files))) as pool:
            for _ in pool.map(ShardFile.close, files.values()):
                pass
    else:
        for f in files.values():
            f.close()
    return {c: {"num_rows": f.num_rows, "num_bytes": f.num_bytes, "sha256": f.sha256} for c, f in files.items()}


def _skip(plan: BuildPlan, split: str, doc_id: str, error: tuple[str, str | None]) -> dict[str, str]:
    """The skip entry of a failed document; a :class:`BuildError` naming it when ``on_error`` is ``raise``."""
    message, trace = error
    if plan.on_error == "raise":
        detail = f"\n{trace}" if trace else ""
        raise BuildError(f"{split} document {doc_id!r} failed: {message}{detail}")
    return {"id": doc_id, "split": split, "reason": portable_text(message)}  # the card names no local folder


def drop_empty_shard(work: Path, config: str, split: str, k: int, count: int) -> None:
    """Remove a shard file with no row: ``datasets`` cannot load an empty Parquet file."""
    shard_path(work, config, split, k, count).unlink(missing_ok=True)


def _record_path(work: Path, split: str, k: int) -> Path:
    return work / STATE_DIR / f"{split}-{k:05d}.json"


def read_record(work: Path, split: str, k: int, configs: list[str], count: int) -> dict[str, Any] | None:
    """A finished shard's record, when it is well-formed and each of its Parquet files is there with the sha256
    the record kept; else ``None`` (the shard is written again). A file that does not match (truncated by a
    crash, changed since) is named on the way."""
    path = _record_path(work, split, k)
    if is_link(path) or not path.is_file():
        return None
    try:
        record = fs.read_json(path, what="shard record")
    except (OSError, fs.FileRefused):
        return None
    if not _well_formed(record, configs):
        if isinstance(record, dict):
            say(f"shard record {path} is malformed; writing the shard again")
        return None
    for c in configs:
        shard = shard_path(work, c, split, k, count)
        if record["files"][c]["num_rows"] == 0 and not shard.exists():  # an empty shard file, dropped
            continue
        if is_link(shard) or not shard.is_file():
            return None
        try:
            digest = sha256_file(shard)
        except OSError:
            digest = None
        if digest != record["files"][c]["sha256"]:
            say(f"shard file {shard} does not match the sha256 its record kept (damaged or changed since); "
                "writing the shard again")
            return None
    return record


def _well_formed(record: Any, configs: list[str]) -> bool:
    """Whether a shard record has what :func:`dogood.pipeline.aggregate.aggregate` reads, of the right types."""
    def count(v):
        return type(v) is int and v >= 0

    if not isinstance(record, dict) or not count(record.get("documents")):
        return False
    skipped, stats, files = record.get("skipped"), record.get("stats"), record.get("files")
    if not isinstance(skipped, list) or not all(isinstance(s, dict) and all(isinstance(s.get(k), str)
                                                for k in ("id", "split", "reason")) for s in skipped):
        return False
    if not isinstance(stats, dict) or set(stats) != set(configs) or not all(isinstance(v, dict)
                                                                           for v in stats.values()):
        return False
    if not isinstance(files, dict) or set(files) != set(configs):
        return False
    for info in files.values():
        if not (isinstance(info, dict) and count(info.get("num_rows")) and count(info.get("num_bytes"))
                and isinstance(info.get("sha256"), str) and len(info["sha256"]) == 64):
            return False
    return all(_numbers(v) for v in stats.values())


def _numbers(tree: Any, depth: int = 0) -> bool:
    """Whether every leaf of a statistics mapping is a finite number (what :func:`stats.add` sums)."""
    if isinstance(tree, dict):
        return depth < 8 and all(isinstance(k, str) and _numbers(v, depth + 1) for k, v in tree.items())
    return type(tree) in (int, float) and tree == tree and abs(tree) != float("inf")


def write_record(work: Path, split: str, k: int, record: dict[str, Any]) -> None:
    path = _record_path(work, split, k)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(record, sort_keys=True, default=_jsonable))


def _jsonable(value):
    if isinstance(value, Counter):
        return dict(value)
    raise TypeError(f"cannot store {type(value).__name__} in a shard record")
