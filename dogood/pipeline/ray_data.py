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
    """A Ray actor: prepares the chains once, then writes whole shards into a temporary folder on its node.

    Two calls may run at once (``max_concurrency=2``): the driver copies one shard's files while the
    actor writes the next.
    """

    def __init__(self, spec: WorkerSpec, recipe: str, on_error: str):
        from dogood.pipeline.plan import prepare_chains

        self.spec, self.on_error = spec, on_error
        self.folder = Path(tempfile.mkdtemp(prefix="dogood-ray-"))  # on this node, under its TMPDIR
        self.failure = None
        self.closed = False
        try:
            prepare_chains(recipe, spec.chains)  # models load here, in the actor, once
        except DogoodError as exc:
            self.failure = str(exc)
        init_worker(spec)

    def write(self, split: str, k: int, tasks: list[Task], configs: list[str], schema: str, labels) -> bytes:
        """Write shard ``k`` of ``split``; return its pickled ``(record, errors, (OCR pages, seconds))``,
        ``errors`` being ``(doc_id, (message, traceback))`` of each failed document."""
        from dogood.page.ocr import tesseract_runs
        from dogood.pipeline.parquet_writer import ShardFile
        from dogood.pipeline.shards import close_files, write_rows

        if self.failure is not None:  # a shift that could not prepare on this node
            return pickle.dumps((None, self.failure, None))
        pages, seconds = tesseract_runs()
        folder = self.folder / f"{split}-{k}"
        try:
            shutil.rmtree(folder, ignore_errors=True)
            files = {c: ShardFile(folder / f"{i}.parquet", schema, labels, self.spec.quads) for i, c in enumerate(configs)}
            stats: dict[str, dict[str, Any]] = {c: {} for c in configs}
            errors, documents = [], 0
            for task, doc in _read_documents(self.spec.sources[split], tasks):
                if self.closed:
                    return pickle.dumps((None, "the build was stopped", None))
                _split, _index, doc_id, rows, error, _ocr = process_document(task, doc)
                if error is not None:
                    errors.append((doc_id, error))
                    if self.on_error == "raise":
                        break
                    continue
                write_rows(files, stats, rows)
                documents += 1
            sizes = close_files(files)
        finally:
            if self.closed:  # stopped while writing: leave nothing on the node
                shutil.rmtree(self.folder, ignore_errors=True)
        record = {"documents": documents, "stats": stats, "files": sizes}
        pages_after, seconds_after = tesseract_runs()
        return pickle.dumps((record, errors, (pages_after - pages, seconds_after - seconds)),
                            protocol=pickle.HIGHEST_PROTOCOL)

    def read(self, split: str, k: int, i: int, offset: int) -> bytes:
        """Up to :data:`CHUNK_BYTES` of the shard's file of config number ``i``, from ``offset``."""
        with fs.open_file(self.folder / f"{split}-{k}" / f"{i}.parquet", max_bytes=1 << 62, what="shard") as f:
            f.seek(offset)
            return f.read(CHUNK_BYTES)

    def drop(self, split: str, k: int) -> None:
        shutil.rmtree(self.folder / f"{split}-{k}", ignore_errors=True)

    def close(self) -> None:
        """Remove this actor's folder; a shard being written stops at its next document (and removes it)."""
        self.closed = True
        shutil.rmtree(self.folder, ignore_errors=True)


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
                        address: str | None = None) -> list:
    """Write the shards on Ray actors (see the module docstring); return their records, as
    :func:`dogood.pipeline.shards.write_shards` does.

    ``num_workers`` actors of one CPU each; ``address`` ``None`` starts Ray here (:func:`ensure_ray`), ``"auto"`` or
    ``"ray://host:10001"`` joins a cluster; Ray is left running (``ray.shutdown()`` ends it). The output does
    not depend on either. A failed document stops the build (``on_error="raise"``) or is listed as skipped.
    """
    from dogood.pipeline.parquet_writer import shard_path
    from dogood.pipeline.shards import _skip, write_record

    if not shards:
        return []
    ray = ensure_ray(address, num_cpus=num_workers)
    env = {name: os.environ[name] for name in FORWARDED_ENV if name in os.environ}
    actor_class = ray.remote(num_cpus=1, max_concurrency=2)(_ShardWriter)
    spec = ray.put(plan.worker_spec())  # shifts pickle as their parameters: no model crosses
    options = {"runtime_env": {"env_vars": env}} if env else {}
    actors = [actor_class.options(**options).remote(spec, plan.recipe.name, plan.on_error)
              for _ in range(min(num_workers, len(shards)))]
    todo = iter(shards)
    running: dict = {}  # object ref of a write -> (actor, shard)

    def submit(actor) -> None:
        shard = next(todo, None)
        if shard is not None:
            ref = actor.write.remote(shard.split, shard.k, list(shard.tasks), plan.configs, plan.schema, plan.labels)
            running[ref] = (actor, shard)

    written = []
    try:
        for actor in actors:
            submit(actor)
        while running:
            [ref], _ = ray.wait(list(running), num_returns=1)
            actor, shard = running.pop(ref)
            try:
                record, errors, ocr_run = pickle.loads(ray.get(ref))
            except ray.exceptions.RayError as exc:  # e.g. an actor that died or failed to start on a node
                lines = [line for line in str(exc).splitlines() if line.strip()]
                raise DogoodError(f"the Ray build failed on {shard.split} shard {shard.k}: "
                                  f"{lines[-1].strip() if lines else type(exc).__name__}") from None
            if record is None:
                raise DogoodError(errors)
            skipped = [_skip(plan, shard.split, doc_id, error) for doc_id, error in errors]
            submit(actor)  # the actor writes its next shard while this one's files are copied
            for i, config in enumerate(plan.configs):
                _copy_file(ray, actor, shard, i, shard_path(work, config, shard.split, shard.k, shard.num_shards),
                           record["files"][config]["sha256"])
            actor.drop.remote(shard.split, shard.k)
            record = {"documents": record["documents"], "skipped": skipped, "stats": record["stats"],
                      "files": record["files"]}
            write_record(work, shard.split, shard.k, record)
            written.append((shard.split, shard.k, json.loads(json.dumps(record))))
            progress.update(len(shard))
            ocr[0] += ocr_run[0]
            ocr[1] += ocr_run[1]
    finally:
        closed = [actor.close.remote() for actor in actors]  # also when a document stopped the build
        try:
            ray.wait(list(running) + closed, num_returns=len(running) + len(closed), timeout=60)
        except ray.exceptions.RayError:
            pass  # an actor that died has nothing left to remove
        for actor in actors:
            ray.kill(actor)
    return written


def _copy_file(ray, actor, shard, i: int, path: Path, sha256: str) -> None:
    """Copy the actor's file of config number ``i`` of ``shard`` to ``path``, chunk by chunk, check it against the
    sha256 the actor recorded when it wrote it, then sync it and rename it in."""
    import hashlib

    from dogood.core.fs import replace_durably

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    offset = 0
    digest = hashlib.sha256()
    with open(tmp, "wb") as f:
        while True:
            chunk = ray.get(actor.read.remote(shard.split, shard.k, i, offset))
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
