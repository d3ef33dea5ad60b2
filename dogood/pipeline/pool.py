"""Run the worker over a build's documents in this process or a local process pool, in task order."""

from __future__ import annotations

import multiprocessing
import sys
import threading
from collections.abc import Iterator, Sequence

from dogood.pipeline.worker import Task, TaskResult, WorkerSpec, init_worker, process_task, release_worker


def tasks_per_chunk(n: int, num_workers: int) -> int:
    """How many tasks a worker takes at a time: about 8 chunks per worker, at most 8 tasks each."""
    return max(1, min(8, n // (num_workers * 8) or 1))


def run_pool(tasks: Sequence[Task], spec: WorkerSpec, num_proc: int) -> Iterator[TaskResult]:
    """Yield :func:`~dogood.pipeline.worker.process_task` of each task, in task order, with ``num_proc`` processes."""
    num_proc = min(num_proc, len(tasks))  # no more workers than documents
    if num_proc <= 1:
        yield from _run_here(tasks, spec)
    else:
        yield from _run_in_pool(tasks, spec, num_proc)


def _run_here(tasks: Sequence[Task], spec: WorkerSpec) -> Iterator[TaskResult]:
    init_worker(spec)
    try:
        yield from map(process_task, tasks)
    finally:
        release_worker()


def _init_pool_worker(spec: WorkerSpec) -> None:
    """A pool worker: one torch thread (when the driver had loaded torch), the shifts prepared, then the spec.

    A child forked from a process whose torch (OpenMP) threads have run hangs at its first parallel tensor
    operation; a Python session that built a text config (its preview runs the masked LM in the driver) and then
    builds again would. One thread per worker also keeps ``num_proc`` workers from oversubscribing the cores.
    """
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    for chain in spec.chains.values():  # a spawned worker got the shifts' parameters only (Shift.__getstate__);
        for shift in chain:  # a forked one inherited what the driver loaded, and prepare() finds it cached
            shift.prepare()
    init_worker(spec)


def _run_in_pool(tasks: Sequence[Task], spec: WorkerSpec, num_proc: int) -> Iterator[TaskResult]:
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    chunk = tasks_per_chunk(len(tasks), num_proc)
    # Backpressure: Pool.imap hands out every task at once, and finished rows (image bytes
    # and all) pile up in the driver when it writes slower than the workers shift. At most
    # `window` tasks are in flight; the pool's feeder thread waits for the driver.
    free = threading.Semaphore(num_proc * chunk * 4)
    stop = threading.Event()

    def feed():
        for task in tasks:
            while not free.acquire(timeout=0.1):
                if stop.is_set():
                    return
            yield task

    with ctx.Pool(num_proc, initializer=_init_pool_worker, initargs=(spec,)) as pool:
        try:
            for result in pool.imap(process_task, feed(), chunksize=chunk):
                free.release()
                yield result
        finally:
            stop.set()  # before the pool terminates: its feeder thread must not wait on the window
