"""Build a recipe's shards on a Ray cluster (``pip install "dogood[distributed]"``).

A build with ``--ray`` runs :func:`write_shards_on_ray`: each actor takes a whole
shard, reads its documents itself (the source's ``read_slice`` when it has one,
else ``load`` by id), writes the shard's Parquet files (one per config) in a
temporary folder on its own node, and returns the shard's record (documents,
statistics, file sizes: one small object). The driver then copies each file
from the actor, in chunks of :data:`CHUNK_BYTES`, to the output: no row or
statistic crosses Ray one by one, and no node needs a disk the driver can see.
The files are the bytes a local build writes (the same rows through the same
:class:`~dogood.pipeline.parquet_writer.ShardFile`), and each shard's record is written when its
files are in place, so a stopped build resumes as a local one does.

Shifts travel as their parameters (:meth:`dogood.shifts.base.Shift.__getstate__`):
each actor loads its models itself, once, in ``prepare()``.

On a cluster every node needs dogood (same version) and must reach the source:
a source is shipped as its description (a path, a Hub id or URL), not pixels.
With no shared disk, use a source that reads from where the data lives, such
as ``kind: hf`` with ``streaming: true`` (the Hub or any ``fsspec`` URL).
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dogood.core import fs
from dogood.core.errors import DogoodError
from dogood.core.extras import install_line
from dogood.pipeline.worker import Task, WorkerSpec, init_worker, process_document

#: Object store of a Ray instance that :func:`ensure_ray` starts itself (bytes): what crosses it is a shard's
#: record and its files in chunks of :data:`CHUNK_BYTES`, one actor's at a time, so a small store is enough.
OBJECT_STORE_BYTES = 200 * 1024**2

#: Environment variables that dogood reads; forwarded to the actors when set on the driver.
FORWARDED_ENV = ("DOGOOD_DATA_DIR", "DOGOOD_CACHE", "NLTK_DATA", "HF_HOME", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE",
                 "TA_CACHE_DIR", "XDG_CACHE_HOME", "HF_ENDPOINT", "HF_HUB_DISABLE_XET", "HF_DATASETS_CACHE")

#: How much of a shard file crosses from an actor to the driver in one object (bytes).
CHUNK_BYTES = 32 * 1024**2


def _import_ray():
    try:
        import ray
    except ImportError as exc:
        raise DogoodError(f"distributed builds need Ray ({exc}): {install_line('distributed')}") from None
    return ray


def ensure_ray(address: str | None = None, num_cpus: int | None = None):
    """Connect to Ray unless it is already initialised; return the ``ray`` module.

    ``address=None`` starts a local instance (``num_cpus`` CPUs, a 200 MB object
    store, no dashboard, worker logs not echoed, no usage stats); ``"auto"`` or
    ``"ray://host:10001"`` joins a cluster. The instance is left running for
    the caller, who ends it with ``ray.shutdown()``.
    """
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray = _import_ray()
    if not ray.is_initialized():
        local = {"num_cpus": num_cpus, "object_store_memory": OBJECT_STORE_BYTES} if address is None else {}
        ray.init(address=address, include_dashboard=False, log_to_driver=False, **local)
    return ray


# -- whole shards: read, shifted and written by the actors -----------------------------------------------------
class _ShardWriter:
    """A Ray actor: prepares the chains once, then writes whole shards (or one group of a shard's configs) into a
    temporary folder on its node.

    Two calls may run at once (``max_concurrency=2``): the driver copies one shard's files while the
    actor writes the next.
    """

    def __init__(self, spec: WorkerSpec, recipe: str, on_error: str):
        import time

        from dogood.pipeline import timeline
        from dogood.pipeline.plan import prepare_chains
        from dogood.pipeline.pool import cap_threads

        started = time.time()
        self.spec, self.on_error = spec, on_error
        self.folder = Path(tempfile.mkdtemp(prefix="dogood-ray-"))  # on this node, under its TMPDIR
        self.failure = None
        self.closed = False
        cap_threads()  # one thread per library: the actor has one CPU
        from dogood.pipeline.parquet_writer import ShardFile  # noqa: F401 - imported with the actor, not at its first shard
        try:
            prepare_chains(recipe, spec.chains)  # models load here, in the actor, once
        except DogoodError as exc:
            self.failure = str(exc)
        init_worker(spec)
        timeline.start_worker(spec.timeline, started)

    def write(self, split: str, k: int, tasks: list[Task], configs: list[str], schema: str, labels,
              group: int | None = None, exclude: tuple[str, ...] = ()) -> bytes:
        """Write shard ``k`` of ``split`` for ``configs`` (every config, or those of ``spec.groups[group]``), one file
        per config (``<i>.parquet``, ``i`` its position in ``configs``), leaving out the documents of ``exclude``;
        return its pickled ``(record, errors, (OCR pages, seconds), previews, spans)``, ``errors`` being
        ``(doc_id, (message, traceback))`` of each failed document."""
        from dogood.page.ocr import tesseract_runs
        from dogood.pipeline import timeline
        from dogood.pipeline.parquet_writer import ShardFile
        from dogood.pipeline.shards import close_files, write_rows

        if self.failure is not None:  # a shift that could not prepare on this node
            return pickle.dumps((None, self.failure, None, None, None))
        pages, seconds = tesseract_runs()
        folder = self.folder / _file_name(split, k, group)
        previews: dict[str, bytes] = {}
        spans: list = []
        try:
            shutil.rmtree(folder, ignore_errors=True)
            files = {c: ShardFile(folder / f"{i}.parquet", schema, labels, self.spec.quads) for i, c in enumerate(configs)}
            stats: dict[str, dict[str, Any]] = {c: {} for c in configs}
            errors, documents = [], 0
            skip = set(exclude)
            for task, doc in _read_documents(self.spec.sources[split], tasks):
                if task[2] in skip:  # failed in another group of the shard's configs: left out of every file
                    continue
                if self.closed:
                    return pickle.dumps((None, "the build was stopped", None, None, None))
                result = process_document(task if group is None else (*task, group), doc)
                spans += result.spans or []
                if result.error is not None:
                    errors.append((result.doc_id, result.error))
                    if self.on_error == "raise":
                        break
                    continue
                previews.update(result.previews or {})
                write_rows(files, stats, result.rows)
                documents += 1
            with timeline.span("close"):
                sizes = close_files(files)
            spans += timeline.drain() or []
        finally:
            if self.closed:  # stopped while writing: leave nothing on the node
                shutil.rmtree(self.folder, ignore_errors=True)
        record = {"documents": documents, "stats": stats, "files": sizes}
        pages_after, seconds_after = tesseract_runs()
        return pickle.dumps((record, errors, (pages_after - pages, seconds_after - seconds), previews or None,
                             spans or None), protocol=pickle.HIGHEST_PROTOCOL)

    def read(self, split: str, k: int, group: int | None, i: int, offset: int) -> bytes:
        """Up to :data:`CHUNK_BYTES` of the shard's file of config number ``i`` (of the group's), from ``offset``."""
        with fs.open_file(self.folder / _file_name(split, k, group) / f"{i}.parquet", max_bytes=1 << 62,
                          what="shard") as f:
            f.seek(offset)
            return f.read(CHUNK_BYTES)

    def drop(self, split: str, k: int, group: int | None = None) -> None:
        shutil.rmtree(self.folder / _file_name(split, k, group), ignore_errors=True)

    def close(self) -> None:
        """Remove this actor's folder; a shard being written stops at its next document (and removes it)."""
        self.closed = True
        shutil.rmtree(self.folder, ignore_errors=True)


def _file_name(split: str, k: int, group: int | None) -> str:
    """The actor's folder of one shard's files (of one group of its configs)."""
    return f"{split}-{k}" if group is None else f"{split}-{k}-g{group}"


def _read_documents(source, tasks: list[Task]) -> Iterator[tuple[Task, Any]]:
    """Each task with its document read by the source's ``read_slice`` (one pass over the shard's contiguous
    positions), or ``None`` where :func:`process_document` must ``load`` it: a source without ``read_slice``,
    or the one document ``read_slice`` failed on (``load`` then names the failure; the pass resumes after it)."""
    read_slice = getattr(source, "read_slice", None)
    if read_slice is None or not tasks:
        yield from ((task, None) for task in tasks)
        return
    start = tasks[0][1]
    position = start
    while position < start + len(tasks):
        try:
            for doc in read_slice(position, start + len(tasks)):
                task = tasks[position - start]
                if doc.id != task[2]:  # a source whose positions disagree with its ids: read this one by id
                    raise LookupError(doc.id)
                yield task, doc
                position += 1
        except Exception:  # noqa: BLE001 - the document at `position` is loaded alone, which reports its error
            yield tasks[position - start], None
            position += 1


def write_shards_on_ray(plan, work: Path, shards: list, progress, ocr: list, num_workers: int,
                        address: str | None = None, previews: dict[str, bytes] | None = None) -> list:
    """Write the shards on Ray actors (see the module docstring); return their records, as
    :func:`dogood.pipeline.shards.write_shards` does.

    ``num_workers`` actors of one CPU each; ``address`` ``None`` starts Ray here (:func:`ensure_ray`), ``"auto"`` or
    ``"ray://host:10001"`` joins a cluster; Ray is left running (``ray.shutdown()`` ends it). The output does
    not depend on either. A failed document stops the build (``on_error="raise"``) or is listed as skipped.

    When there are fewer shards than actors can keep busy, each shard is written in groups of its configs
    (:func:`dogood.pipeline.pool.config_groups`), one unit of work each. A document that fails in one group is
    left out of the shard's every file: a group that wrote it writes the shard again without it.
    ``previews`` gathers the card's previews the actors drew.
    """
    from collections import deque

    from dogood.pipeline import timeline
    from dogood.pipeline.parquet_writer import shard_path
    from dogood.pipeline.shards import _skip, write_record

    if not shards:
        return []
    worker_spec = plan.worker_spec(num_workers, len(shards), preview=previews is not None,
                                   timeline=timeline.is_recording())
    groups = list(range(len(worker_spec.groups))) or [None]
    group_configs = {g: list(plan.configs) if g is None else list(worker_spec.groups[g]) for g in groups}
    ray = ensure_ray(address, num_cpus=num_workers)
    env = {name: os.environ[name] for name in FORWARDED_ENV if name in os.environ}
    actor_class = ray.remote(num_cpus=1, max_concurrency=2)(_ShardWriter)
    spec = ray.put(worker_spec)  # shifts pickle as their parameters: no model crosses
    options = {"runtime_env": {"env_vars": env}} if env else {}
    with timeline.span("actors start"):
        actors = [actor_class.options(**options).remote(spec, plan.recipe.name, plan.on_error)
                  for _ in range(min(num_workers, len(shards) * len(groups)))]
    todo = deque((n, g, ()) for n in range(len(shards)) for g in groups)  # (shard number, group, documents left out)
    outstanding = dict.fromkeys(range(len(shards)), len(groups))  # shard number -> its units to do or running
    running: dict = {}  # object ref of a write -> (actor, shard number, group, left out)
    done: dict[int, dict] = {}  # shard number -> group -> (record, {doc_id: its error, or None: failed elsewhere})

    def submit(actor) -> None:
        if todo:
            n, g, exclude = todo.popleft()
            shard = shards[n]
            ref = actor.write.remote(shard.split, shard.k, list(shard.tasks), group_configs[g], plan.schema,
                                     plan.labels, g, exclude)
            running[ref] = (actor, n, g, exclude)

    written = []
    try:
        for actor in actors:
            submit(actor)
        while running:
            with timeline.span("wait"):
                [ref], _ = ray.wait(list(running), num_returns=1)
            actor, n, g, exclude = running.pop(ref)
            shard = shards[n]
            try:
                record, errors, ocr_run, drawn, spans = pickle.loads(ray.get(ref))
            except ray.exceptions.RayError as exc:  # e.g. an actor that died or failed to start on a node
                lines = [line for line in str(exc).splitlines() if line.strip()]
                raise DogoodError(f"the Ray build failed on {shard.split} shard {shard.k}: "
                                  f"{lines[-1].strip() if lines else type(exc).__name__}") from None
            if record is None:
                raise DogoodError(errors)
            timeline.extend(spans)
            for doc_id, error in errors:
                _skip(plan, shard.split, doc_id, error)  # on_error raise: stops the build, naming the document
            if previews is not None and drawn:
                previews.update(drawn)
            ocr[0] += ocr_run[0]
            ocr[1] += ocr_run[1]
            submit(actor)  # the actor writes its next unit while this one's files are copied
            with timeline.span("copy"):
                for i, config in enumerate(group_configs[g]):
                    _copy_file(ray, actor, shard, g, i, shard_path(work, config, shard.split, shard.k,
                                                                    shard.num_shards),
                               record["files"][config]["sha256"])
            actor.drop.remote(shard.split, shard.k, g)
            done.setdefault(n, {})[g] = (record, {**dict.fromkeys(exclude), **dict(errors)})
            outstanding[n] -= 1
            if not outstanding[n]:
                left_out = {doc_id for _, f in done[n].values() for doc_id in f}
                again = [h for h in groups if set(done[n][h][1]) != left_out]
                if again:  # a document failed in one group: the groups that wrote it write the shard without it
                    todo.extendleft((n, h, tuple(sorted(left_out))) for h in reversed(again))
                    outstanding[n] = len(again)
                else:
                    parts = done.pop(n)
                    written.append(_finish_shard(plan, work, shard, [parts[h] for h in groups], write_record, _skip))
                    progress.update(len(shard))
            for idle in [a for a in actors if not any(r[0] is a for r in running.values())]:
                submit(idle)  # units put back (a shard written again without a failed document)
    finally:
        closed = [actor.close.remote() for actor in actors]  # also when a document stopped the build
        try:
            ray.wait(list(running) + closed, num_returns=len(running) + len(closed), timeout=60)
        except ray.exceptions.RayError:
            pass  # an actor that died has nothing left to remove
        for actor in actors:
            ray.kill(actor)
    return written


def _finish_shard(plan, work: Path, shard, parts: list[tuple[dict, dict]], write_record, skip) -> tuple:
    """A shard's record from its groups' (files and statistics of each config, the documents that failed, in the
    shard's order, each with the first group's message), written once every group's files are in place."""
    failed: dict[str, tuple] = {}
    for _, f in parts:
        for doc_id, error in f.items():
            if error is not None:
                failed.setdefault(doc_id, error)
    order = {doc_id: i for i, (_s, _i, doc_id) in enumerate(shard.tasks)}
    stats, files = {}, {}
    for record, _ in parts:
        stats.update(record["stats"])
        files.update(record["files"])
    record = {"documents": len(shard) - len(failed),
              "skipped": [skip(plan, shard.split, doc_id, failed[doc_id]) for doc_id in sorted(failed, key=order.get)],
              "stats": {c: stats[c] for c in plan.configs}, "files": {c: files[c] for c in plan.configs}}
    write_record(work, shard.split, shard.k, record)
    return shard.split, shard.k, json.loads(json.dumps(record))


def _copy_file(ray, actor, shard, group: int | None, i: int, path: Path, sha256: str) -> None:
    """Copy the actor's file of config number ``i`` of ``shard`` (of the group's configs) to ``path``, chunk by chunk,
    check it against the sha256 the actor recorded when it wrote it, then sync it and rename it in."""
    import hashlib

    from dogood.core.fs import replace_durably

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    offset = 0
    digest = hashlib.sha256()
    with open(tmp, "wb") as f:
        while True:
            chunk = ray.get(actor.read.remote(shard.split, shard.k, group, i, offset))
            f.write(chunk)
            digest.update(chunk)
            offset += len(chunk)
            if len(chunk) < CHUNK_BYTES:
                break
    if digest.hexdigest() != sha256:
        tmp.unlink(missing_ok=True)
        raise DogoodError(f"the copy of {shard.split} shard {shard.k} from its Ray actor does not match the sha256 "
                          f"the actor recorded ({path.name}); run the build again")
    replace_durably(tmp, path)
