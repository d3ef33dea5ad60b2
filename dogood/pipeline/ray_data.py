"""Process a build's documents on a Ray cluster with Ray Data (``pip install 'ray[data]'``).

:func:`run_ray` has the contract of :func:`dogood.pipeline.pool.run_pool`: it yields
what :func:`dogood.pipeline.worker.process_task` returns for each task, in task
order, so a build that consumes it writes the same bytes as a local build. Each result crosses
Ray as one pickled ``bytes`` cell: Arrow would turn tuples into lists, Counters
into structs and fill missing keys with nulls.

On a cluster every node needs dogood (same version) and the source data at the
same path (shared storage, or a copy at the same path on each node): sources are
shipped as paths, not pixels, and each actor reads its documents itself.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterator

from dogood.errors import DogoodError
from dogood.pipeline.pool import tasks_per_chunk
from dogood.pipeline.worker import Task, TaskResult, WorkerSpec, init_worker, process_task

#: Object store of a Ray instance that :func:`run_ray` starts itself (bytes): results are
#: streamed to the driver with backpressure, so a small store is enough.
OBJECT_STORE_BYTES = 200 * 1024**2

#: Environment variables that dogood reads; forwarded to the actors when set on the driver.
FORWARDED_ENV = ("DOGOOD_DATA_DIR", "DOGOOD_CACHE", "NLTK_DATA", "HF_HOME", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE",
                 "TA_CACHE_DIR", "XDG_CACHE_HOME")


def _import_ray():
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise DogoodError(f"distributed builds need Ray Data: pip install 'ray[data]' ({exc})") from None
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


class _WorkerArgs:
    """:func:`init_worker`'s argument, with a short ``repr``: Ray Data keys actors by the repr of their arguments."""

    def __init__(self, spec: WorkerSpec):
        self.spec = spec

    def __repr__(self) -> str:
        return f"<dogood worker arguments {id(self):#x}>"


class _Worker:
    """A Ray Data actor: one dogood worker, initialised once, processing tasks one by one."""

    def __init__(self, args: _WorkerArgs):
        for chain in args.spec.chains.values():
            for shift in chain:
                shift.prepare()  # a no-op when the driver's prepared state came along
        init_worker(args.spec)

    def __call__(self, batch):
        import pyarrow as pa

        tasks = zip(batch["split"].to_pylist(), batch["index"].to_pylist(), batch["doc_id"].to_pylist())
        results = [pickle.dumps(process_task(task), protocol=pickle.HIGHEST_PROTOCOL) for task in tasks]
        return pa.table({"k": batch["k"], "result": pa.array(results, type=pa.large_binary())})


def run_ray(tasks: list[Task], spec: WorkerSpec, num_workers: int,
            address: str | None = None) -> Iterator[TaskResult]:
    """Yield :func:`~dogood.pipeline.worker.process_task` of each task, in task order, computed by Ray actors.

    Parameters
    ----------
    tasks : ``(split, index, doc_id)`` tuples, as :func:`dogood.pipeline.pool.run_pool` takes.
    spec : what each worker is initialised with.
    num_workers : actors in the pool, one CPU each; the output does not depend on it.
    address : ``None`` starts Ray locally (if not already initialised) with
        ``num_workers`` CPUs; ``"auto"`` or a ``ray://`` URL joins a cluster.
        Ray is left running; call ``ray.shutdown()`` when done.

    A document that fails comes back as its error tuple, as with ``run_pool``. Closing
    the generator early stops the pipeline and frees its actors.
    """
    if num_workers < 1:
        raise DogoodError(f"num_workers must be at least 1, got {num_workers}")
    tasks = list(tasks)
    if not tasks:
        return
    ray = ensure_ray(address, num_cpus=num_workers)
    items = [{"k": k, "split": s, "index": i, "doc_id": d} for k, (s, i, d) in enumerate(tasks)]
    per_block = tasks_per_chunk(len(tasks), num_workers)
    ds = ray.data.from_items(items, override_num_blocks=-(-len(items) // per_block))
    options = ds.context.execution_options  # this pipeline's own copy of the DataContext
    options.preserve_order = True
    ds.context.enable_progress_bars = False
    ds.context.print_on_execution_start = False
    env = {name: os.environ[name] for name in FORWARDED_ENV if name in os.environ}
    ds = ds.map_batches(
        _Worker,
        fn_constructor_args=(_WorkerArgs(spec),),
        batch_size=1,
        batch_format="pyarrow",
        compute=ray.data.ActorPoolStrategy(size=num_workers),  # a fixed pool (``concurrency=`` is deprecated)
        num_cpus=1,
        **({"runtime_env": {"env_vars": env}} if env else {}),
    )
    batches = iter(ds.iter_batches(batch_size=None, batch_format="pyarrow", prefetch_batches=1))
    expected = 0
    try:
        while True:
            try:
                batch = next(batches)
            except StopIteration:
                break
            except ray.exceptions.RayError as exc:  # e.g. an actor that failed to start on a node
                raise DogoodError(f"the Ray build failed: {exc}") from exc
            for k, blob in zip(batch["k"].to_pylist(), batch["result"].to_pylist()):
                if k != expected:  # never write a row in another document's place
                    raise DogoodError(f"Ray returned task {k} where task {expected} was expected")
                expected += 1
                yield pickle.loads(blob)
    finally:
        close = getattr(batches, "close", None)
        if close is not None:
            close()  # stops the pipeline and releases the actors when the caller stops early
    if expected != len(tasks):
        raise DogoodError(f"Ray returned {expected} of {len(tasks)} documents")
