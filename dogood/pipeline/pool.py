"""Run the worker over a build's documents in this process or a local process pool, results in document order.

With several processes the work is handed out in units of one document and one group of configs
(:func:`config_groups`, groups of about equal estimated cost, the costliest first), so a build of few documents
and many configs (FUNSD's 50 forms and ``funsd-p``'s 65 configs) keeps every worker busy to the end; a build of
many documents hands out whole documents (each page read once). The units' results are merged back per document,
in document order: the output does not depend on the number of processes or on the grouping.

Each worker process starts once for the whole build and loads its resources once (the driver prepared the shifts
before forking; a spawned worker prepares them in its initialiser), and runs with one thread per library (OpenCV,
numba, BLAS and OpenMP, torch), so ``num_proc`` workers do not fight over ``num_proc`` cores.
"""

from __future__ import annotations

import gc
import math
import multiprocessing
import os
import pickle
import queue
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext

import pyarrow as pa

from dogood.core import fs
from dogood.core.errors import DogoodError
from dogood.pipeline import timeline
from dogood.pipeline.worker import Task, TaskResult, WorkerSpec, init_worker, process_task, release_worker

#: Units of work handed out per worker, at least, when a build has few documents: the last unit then keeps one
#: worker busy for about 1/16 of the build's time per worker at most.
UNITS_PER_WORKER = 16
#: A group of configs costs at least this many times the reading of a page (each group reads the page again).
GROUP_OVER_READ = 10
#: Units in flight (handed out, or finished and not yet written) per worker, at most.
WINDOW_PER_WORKER = 4
#: Units a pool worker holds at most: the one it runs. Its next is handed to it as its result comes back (on the
#: pool's result thread, whatever the driver is doing), so a worker idles only for the hand-off, and at the end of
#: a build no worker holds units queued while the others have none left.
QUEUED_PER_WORKER = 1
#: Environment variables that cap a library's threads; a worker sets each to 1 (for libraries loaded after).
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                    "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS")


def config_groups(costs: dict[str, float], documents: int, num_proc: int, read_ms: float
                  ) -> tuple[tuple[str, ...], ...]:
    """The configs split into groups for the pool's units (``()``: one unit per document, every config).

    ``costs``: each config's estimated CPU ms per page (:func:`dogood.pipeline.cpu_costs.config_ms`). Groups are
    made when ``documents`` alone give fewer than :data:`UNITS_PER_WORKER` units per worker, and only as many as
    keep each group's cost :data:`GROUP_OVER_READ` times ``read_ms`` (each group reads the page again); configs go
    costliest first to the cheapest group (longest processing time first), each group keeps the configs in their
    recipe order, and the groups are listed costliest first (a document's costliest unit is handed out first)."""
    if num_proc <= 1 or len(costs) <= 1 or documents <= 0:
        return ()
    total = sum(costs.values())
    wanted = math.ceil(UNITS_PER_WORKER * num_proc / documents)
    affordable = int(total // (GROUP_OVER_READ * max(read_ms, 1e-9)))
    count = max(1, min(len(costs), wanted, affordable))
    if count == 1:
        return ()
    order = {name: k for k, name in enumerate(costs)}
    bins: list[list[str]] = [[] for _ in range(count)]
    loads = [0.0] * count
    for name in sorted(costs, key=lambda c: (-costs[c], order[c])):
        k = min(range(count), key=lambda i: (loads[i], i))
        bins[k].append(name)
        loads[k] += costs[name]
    groups = [(loads[k], tuple(sorted(b, key=order.__getitem__))) for k, b in enumerate(bins) if b]
    return tuple(group for _, group in sorted(groups, key=lambda lg: (-lg[0], order[lg[1][0]])))


def run_pool(tasks: Sequence[Task], spec: WorkerSpec, num_proc: int) -> Iterator[TaskResult]:
    """Yield :func:`~dogood.pipeline.worker.process_task` of each task (a document), in task order, with
    ``num_proc`` processes; with ``spec.groups``, each document's units merged into its one result."""
    num_proc = min(num_proc, len(tasks))  # no more workers than documents
    if num_proc <= 1:
        yield from _run_here(tasks, spec)
    else:
        yield from _run_in_pool(tasks, spec, num_proc)


def _run_here(tasks: Sequence[Task], spec: WorkerSpec) -> Iterator[TaskResult]:
    start_method()  # numba's fork-safe threads, before they start here: a later build's pool may fork
    init_worker(spec)
    try:
        for task in tasks:
            units = [(*task, g) for g in range(len(spec.groups))] if spec.groups else [task]
            results = []
            for unit in units:
                with timeline.as_worker():
                    results.append(process_task(unit))
            yield merge_units(results)
    finally:
        release_worker()


def merge_units(results: list[TaskResult]) -> TaskResult:
    """One document's result from its units' (in group order): rows and previews together, OCR added up; the
    first failure fails the document (every config of it, as one unit would)."""
    if len(results) == 1:
        return results[0]
    first = results[0]
    error = next((r.error for r in results if r.error is not None), None)
    rows: dict | None = None
    if error is None:
        rows = {}
        for r in results:
            rows.update(r.rows)
    previews = {k: v for r in results for k, v in (r.previews or {}).items()} or None
    spans = [s for r in results for s in (r.spans or [])] or None
    ocr = (sum(r.ocr[0] for r in results), sum(r.ocr[1] for r in results))
    return TaskResult(first.split, first.index, first.doc_id, rows, error, ocr, previews, spans)


def cap_threads() -> None:
    """One thread per library in a fresh worker process (spawned, or a Ray actor): OpenCV, the BLAS and OpenMP
    pools (threadpoolctl), numba and torch, and the variables that libraries loaded later read. A forked worker
    inherits the driver's caps instead (:func:`capped_threads`): OpenCV hangs when a child of a process whose
    OpenCV threads ran asks for a new thread count."""
    for name in THREAD_VARIABLES:
        os.environ[name] = "1"
    import cv2

    cv2.setNumThreads(1)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:  # pragma: no cover - scikit-learn brings it
        pass
    _cap_numba_and_torch()


def _cap_numba_and_torch() -> None:
    numba = sys.modules.get("numba")
    if numba is not None:
        try:
            numba.set_num_threads(1)
        except Exception:  # noqa: BLE001 - a threading layer that cannot start here: numba's loops run serially
            pass
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


@contextmanager
def capped_threads() -> Iterator[None]:
    """In the driver, while its pool's workers are forked: OpenCV's, BLAS's and OpenMP's threads capped at one,
    which the children inherit (the driver only writes Parquet meanwhile); as they were after the block."""
    import cv2

    before = cv2.getNumThreads()
    cv2.setNumThreads(1)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - scikit-learn brings it
        limits = nullcontext()
    else:
        limits = threadpool_limits(1)
    try:
        with limits:
            yield
    finally:
        cv2.setNumThreads(before)


def start_method() -> str:
    """``fork`` where it is safe, else ``forkserver`` (or ``spawn``, where there is no fork).

    numba's parallel loops (augraphy's, under ``scan_quality``) run on GNU OpenMP by default, and a process that
    forks after running one kills its children ("fork() called from a process already using GNU OpenMP"): before
    numba starts its threads, dogood picks its ``workqueue`` layer, which forks safely (unless the user chose a
    layer); once OpenMP threads have run in this process, workers start from a fork server instead."""
    methods = multiprocessing.get_all_start_methods()
    if "fork" not in methods:
        return "spawn"
    numba = sys.modules.get("numba")
    if numba is None:
        return "fork"
    try:
        layer = numba.threading_layer()  # ValueError until a parallel function has run
    except ValueError:
        if numba.config.THREADING_LAYER == "default":
            numba.config.THREADING_LAYER = "workqueue"
        return "fork"
    return "fork" if layer != "omp" else ("forkserver" if "forkserver" in methods else "spawn")


def _init_pool_worker(spec: WorkerSpec, forked: bool, handoff: str) -> None:
    """A pool worker: one thread per library, the shifts prepared, then the spec.

    A child forked from a process whose torch (OpenMP) threads have run hangs at its first parallel tensor
    operation; a Python session that built a text config (its preview runs the masked LM in the driver) and then
    builds again would. One thread per library also keeps ``num_proc`` workers from oversubscribing the cores.
    """
    started = time.time()
    _HANDOFF[:] = [handoff]
    try:
        if forked:  # OpenCV and the BLAS and OpenMP pools: capped by the driver before the fork (capped_threads)
            for name in THREAD_VARIABLES:
                os.environ[name] = "1"
            _cap_numba_and_torch()
        else:
            cap_threads()
        for chain in spec.chains.values():  # a spawned worker got the shifts' parameters only (Shift.__getstate__);
            for shift in chain:  # a forked one inherited what the driver loaded, and prepare() finds it cached
                shift.prepare()
    except Exception as exc:  # noqa: BLE001 - a pool respawns a worker whose initialiser raises, forever
        _INIT_FAILURE[:] = [f"a worker process could not start: {type(exc).__name__}: {exc}"]
    init_worker(spec)
    timeline.start_worker(spec.timeline, started)


#: The folder a pool's workers leave their results in (:func:`_pool_task`), set in each worker.
_HANDOFF: list[str] = []
#: Why this worker could not start (its first task raises it: the build stops, naming it), if it could not.
_INIT_FAILURE: list[str] = []


def _pool_task(unit) -> tuple[str, list | None]:
    """:func:`~dogood.pipeline.worker.process_task` in a pool worker, its result written into a file of the pool's
    hand-off folder (the ``serialise`` step of the timeline, which the task's span then covers): only the file's
    name crosses the pipe, so a worker never waits for the driver to read a page's rows."""
    if _INIT_FAILURE:
        raise DogoodError(_INIT_FAILURE[0])
    result = process_task(unit)
    spans = result.spans
    start = time.time()
    fd, path = tempfile.mkstemp(dir=_HANDOFF[0], suffix=".result")
    with os.fdopen(fd, "wb") as f:
        _write_result(f, result._replace(spans=None))
    if spans is not None:
        end = time.time()
        spans = [{**s, "end": end} if s["what"] == timeline.TASK else s for s in spans]
        spans.append({"who": spans[-1]["who"], "what": "serialise", "start": start, "end": end})
    return path, spans


def _write_result(f, result: TaskResult) -> None:
    """A task's result into a hand-off file: its rows' tables as Arrow IPC streams (buffers written as they are,
    read back without copying or rebuilding each array in Python as pickling a table does), the rest pickled
    after them; the file ends with the pickle's length."""
    rows = None
    if result.rows is not None:
        rows = {}
        for config, (table, stats) in result.rows.items():
            start = f.tell()
            with pa.ipc.new_stream(f, table.schema) as writer:
                writer.write_table(table)
            rows[config] = ((start, f.tell()), stats)
    rest = pickle.dumps(result._replace(rows=rows), protocol=pickle.HIGHEST_PROTOCOL)
    f.write(rest)
    f.write(len(rest).to_bytes(8, "little"))


def _received(path: str) -> TaskResult:
    """A result a worker left in the hand-off folder (:func:`_write_result`), read and removed."""
    try:
        data = pa.py_buffer(fs.read_bytes(path, max_bytes=1 << 62, what="worker's result", follow=False))
    finally:
        os.unlink(path)
    size = int.from_bytes(data[-8:].to_pybytes(), "little")
    result = pickle.loads(data[len(data) - 8 - size:len(data) - 8])
    if result.rows is None:
        return result
    rows = {config: (pa.ipc.open_stream(data[start:end]).read_all(), stats)
            for config, ((start, end), stats) in result.rows.items()}
    return result._replace(rows=rows)


def _units(tasks: Sequence[Task], groups: int) -> Iterator[tuple]:
    for task in tasks:
        if groups:
            for g in range(groups):
                yield (*task, g)
        else:
            yield task


def _indexed_task(item: tuple[int, tuple]) -> tuple[int, str, list | None]:
    """:func:`_pool_task` of a numbered unit, its number sent back with it (results come back as they finish)."""
    number, unit = item
    return (number, *_pool_task(unit))


def _run_in_pool(tasks: Sequence[Task], spec: WorkerSpec, num_proc: int) -> Iterator[TaskResult]:
    """``num_proc`` processes: ``num_proc - 1`` pool workers and this one. The driver's own steps (receiving,
    writing, closing shards) leave its core idle most of the time, so whenever no worker's result is waiting the
    driver shifts the next unit itself. Results come back as they finish and are put in unit order here."""
    method = start_method()
    ctx = multiprocessing.get_context(method)
    per_task = max(1, len(spec.groups))
    units = list(_units(tasks, len(spec.groups)))
    # Units are handed out one at a time (chunksize 1): a unit (a page through its configs) costs far more than
    # handing it out, and a worker holding a chunk of several at the end would keep the others waiting.
    # Backpressure: at most `window` units are handed out and not yet written (finished rows, image bytes and
    # all, would otherwise pile up in the driver when it writes slower than the workers shift), a slot freed when
    # its unit's result is written; of them, at most QUEUED_PER_WORKER per worker in the pool, freed as its result
    # comes back. The feeder thread waits for both; the driver takes a unit when there is room and no worker's
    # result is waiting.
    free = threading.Semaphore(num_proc * WINDOW_PER_WORKER)
    queued = threading.Semaphore((num_proc - 1) * QUEUED_PER_WORKER)
    stop = threading.Event()
    lock = threading.Lock()
    handed = [0]  # units handed out so far, to the pool or to the driver, in unit order

    def take() -> int | None:
        """The next unit's number (None: every unit is handed out)."""
        with lock:
            if handed[0] >= len(units):
                return None
            handed[0] += 1
            return handed[0] - 1

    def wait_for(slots: threading.Semaphore) -> bool:
        while not slots.acquire(timeout=0.1):
            if stop.is_set():
                return False
        return True

    arrived: queue.SimpleQueue = queue.SimpleQueue()  # workers' results (or failures), as they come back

    def came_back(sent) -> None:  # on the pool's result thread: the worker may take its next unit at once
        queued.release()
        arrived.put(sent)

    def feed(pool) -> None:  # a thread of the driver: hands units to the pool as there is room
        while wait_for(queued):
            if not wait_for(free):
                return
            number = take()
            if number is None or stop.is_set():
                free.release()
                return
            try:
                pool.apply_async(_indexed_task, ((number, units[number]),), callback=came_back,
                                 error_callback=came_back)
            except ValueError:  # the pool was closed: the build stopped (a failure the driver reports)
                return

    def driver_takes() -> int | None:
        if not free.acquire(blocking=False):
            return None
        number = take()
        if number is None:
            free.release()
        return number

    handoff = tempfile.TemporaryDirectory(prefix="dogood-pool-")  # this machine's temporary folder, removed after
    # Forked workers get the driver's objects frozen: their garbage collections never walk them, so they neither
    # spend the time nor touch (and copy) the pages they share with the driver; the driver unfreezes its own.
    frozen = method == "fork"
    if frozen:
        gc.freeze()
    try:
        with capped_threads(), timeline.span("pool start"):
            pool = ctx.Pool(num_proc - 1, initializer=_init_pool_worker, initargs=(spec, frozen, handoff.name))
    finally:
        if frozen:
            gc.unfreeze()
    done: dict[int, TaskResult] = {}
    with handoff, pool, _driver_working(spec):
        try:
            threading.Thread(target=feed, args=(pool,), name="dogood-pool-feeder", daemon=True).start()
            for first in range(0, len(units), per_task):
                for wanted in range(first, first + per_task):
                    while wanted not in done:
                        try:  # a worker's result, if one is waiting
                            sent = arrived.get_nowait()
                        except queue.Empty:
                            number = driver_takes()
                            if number is not None:  # none waiting: the driver shifts the next unit itself
                                with timeline.as_worker():
                                    done[number] = process_task(units[number])
                                continue
                            with timeline.span("wait"):  # every unit handed out, or no room: wait for one
                                sent = arrived.get()
                        if isinstance(sent, BaseException):
                            raise sent
                        with timeline.span("receive"):
                            done[sent[0]] = _received(sent[1])._replace(spans=sent[2])
                result = merge_units([done.pop(n) for n in range(first, first + per_task)])
                for _ in range(per_task):
                    free.release()
                yield result
        finally:
            stop.set()  # before the pool terminates: its feeder thread must not wait on the window


@contextmanager
def _driver_working(spec: WorkerSpec) -> Iterator[None]:
    """The driver as one of a pool's workers: the spec loaded, OpenCV, BLAS, OpenMP and torch at one thread (as
    its workers run; numba's loops, which only ``scan_quality`` runs, left as they are: asking numba for its
    thread count starts its threads), all as they were after the block."""
    init_worker(spec)
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch else None
    try:
        with capped_threads():
            if torch:
                torch.set_num_threads(1)
            yield
    finally:
        if torch:
            torch.set_num_threads(before)
        release_worker()
