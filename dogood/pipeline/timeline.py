"""A build's timeline: when each step ran, in the driver and in every worker (``bench/bench_build.py --timeline``).

Off unless a caller records (:func:`recording`): then the driver's steps and each worker's tasks are kept as spans
``{"who", "what", "start", "end"}`` in wall-clock seconds (``time.time()``, one clock for the processes of one
machine), each with the CPU seconds its process spent (``cpu``). A worker's spans travel back with its task's
result (:func:`drain`), so nothing else crosses processes.

:func:`summary` reads a timeline the way Amdahl's law needs it. A *task* span is a worker busy with a unit of
work; the *serial* time is the wall time in which fewer workers are busy than there are tasks left to finish
(up to the number of workers), plus the driver's steps before the first task and after the last. Busy workers
are counted, not CPU time, so the serial share stands on a loaded machine: a task slowed by another program's
load is still a busy worker, and the driver's steps slow alike. Written by hand: no profiler records what
several processes do as one timeline of named steps.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

#: The spans of this process while recording, else ``None`` (nothing is kept, nothing costs).
_SPANS: list[dict[str, Any]] | None = None
#: Who this process is in the spans it records: ``driver``, or ``worker-<pid>`` once :func:`start_worker` ran.
_WHO = ["driver"]

#: The span of a worker busy with one unit of work.
TASK = "task"


@contextmanager
def recording() -> Iterator[list[dict[str, Any]]]:
    """Record the spans of what runs inside the block (this process's, and the workers' brought back)."""
    global _SPANS
    old, _SPANS = _SPANS, []
    try:
        yield _SPANS
    finally:
        _SPANS = old


def is_recording() -> bool:
    return _SPANS is not None


def start_worker(on: bool, started: float | None = None) -> None:
    """In a worker process: record (``on``) as ``worker-<pid>``, with a ``start`` span from ``started`` (when the
    process began its set-up) to now."""
    global _SPANS
    _WHO[0] = f"worker-{os.getpid()}"
    _SPANS = [] if on else None
    if on and started is not None:
        add_span("start", started, time.time())


@contextmanager
def as_worker() -> Iterator[None]:
    """Inside the block this process records as the worker of a build run without a pool (``num_proc=1``): its
    spans are drained into the task's result and come back to the driver's timeline as a pool worker's do."""
    global _SPANS
    saved = _SPANS, _WHO[0]
    _SPANS = [] if saved[0] is not None else None
    _WHO[0] = "worker-0"
    try:
        yield
    finally:
        _SPANS, _WHO[0] = saved


@contextmanager
def span(what: str, **info: Any) -> Iterator[None]:
    """Record the block as a span named ``what`` (with ``info``), when recording."""
    if _SPANS is None:
        yield
        return
    start, cpu = time.time(), time.process_time()
    try:
        yield
    finally:
        add_span(what, start, time.time(), cpu=time.process_time() - cpu, **info)


def bound_span():
    """:func:`span` for another thread of this process: it records into this thread's timeline, as who this
    thread is now (a module-wide state that :func:`as_worker` changes while the driver runs a task itself)."""
    spans, who = _SPANS, _WHO[0]

    @contextmanager
    def record(what: str, **info: Any) -> Iterator[None]:
        if spans is None:
            yield
            return
        start = time.time()
        try:
            yield
        finally:
            spans.append({"who": who, "what": what, "start": start, "end": time.time(), **info})

    return record


def add_span(what: str, start: float, end: float, **info: Any) -> None:
    if _SPANS is not None:
        _SPANS.append({"who": _WHO[0], "what": what, "start": start, "end": end, **info})


def drain() -> list[dict[str, Any]] | None:
    """The spans this process recorded since the last drain (a worker sends them with a task's result)."""
    if _SPANS is None:
        return None
    out = list(_SPANS)
    _SPANS.clear()
    return out


def extend(spans: Iterable[dict[str, Any]] | None) -> None:
    """Add spans a worker sent back to this process's timeline."""
    if _SPANS is not None and spans:
        _SPANS.extend(spans)


def summary(spans: list[dict[str, Any]], workers: int) -> dict[str, Any]:
    """What a timeline says: wall, busy and serial seconds, the serial share, Amdahl's speed-ups, time per step.

    ``wall``: first span's start to last span's end. ``busy``: the tasks' seconds summed. ``serial``: seconds in which
    fewer workers are busy than ``min(workers, tasks not yet finished)``, and every second before the first task
    starts and after the last ends (the driver alone). ``serial_share``: ``serial / wall``, the share of this run.
    ``amdahl_serial``: ``serial / (serial + busy)``, the serial share of the same work done by one process, which
    Amdahl's law takes: ``speedup[n] = 1 / (s + (1 - s) / n)``. ``steps``: per ``who`` kind (driver, worker) and
    step name, seconds summed (nested steps are counted inside their parents too). ``serial_steps``: where the serial
    time went (:func:`serial_steps`). ``cpu``: the tasks' CPU seconds (below ``busy`` on a loaded machine).
    ``startup``: seconds before the first task starts (planning, starting the workers). ``occupancy``: the busy
    seconds over the workers times the first task's start to the last one's end.
    """
    if not spans:
        return {"wall": 0.0, "busy": 0.0, "serial": 0.0, "serial_share": 0.0, "amdahl_serial": 0.0, "tasks": 0,
                "workers": workers, "speedup": {}, "steps": {}}
    t0 = min(s["start"] for s in spans)
    t1 = max(s["end"] for s in spans)
    tasks = sorted((s for s in spans if s["what"] == TASK), key=lambda s: s["start"])
    busy = sum(s["end"] - s["start"] for s in tasks)
    serial = _serial_seconds(tasks, workers, t0, t1)
    wall = t1 - t0
    s = serial / (serial + busy) if serial + busy > 0 else 0.0
    steps: dict[str, float] = {}
    for one in spans:
        kind = "driver" if one["who"] == "driver" else "worker"
        key = f"{kind}: {one['what']}"
        steps[key] = steps.get(key, 0.0) + one["end"] - one["start"]
    return {
        "wall": wall, "busy": busy, "serial": serial, "serial_share": serial / wall if wall > 0 else 0.0,
        "amdahl_serial": s, "tasks": len(tasks), "workers": workers,
        "mean_busy_workers": busy / wall if wall > 0 else 0.0,
        "speedup": {n: 1.0 / (s + (1.0 - s) / n) for n in (2, 4, 8, 16, 64)},
        "steps": dict(sorted(steps.items(), key=lambda kv: -kv[1])),
        "serial_steps": serial_steps(spans, workers),
        "startup": (tasks[0]["start"] - t0) if tasks else wall,
        "occupancy": _occupancy(tasks, workers),
        "cpu": sum(t.get("cpu", 0.0) for t in tasks),
    }


def _occupancy(tasks: list[dict[str, Any]], workers: int) -> float:
    """How busy the workers were from the first task's start to the last one's end: busy seconds over workers times
    that span (start-up, the card and the commit left out: what a build's pages get of its workers)."""
    if not tasks:
        return 0.0
    span = max(t["end"] for t in tasks) - min(t["start"] for t in tasks)
    return sum(t["end"] - t["start"] for t in tasks) / (workers * span) if span > 0 else 1.0


def _serial_intervals(tasks: list[dict[str, Any]], workers: int, t0: float, t1: float) -> list[tuple[float, float]]:
    """The parts of ``[t0, t1]`` with fewer tasks running than ``min(workers, tasks unfinished)``; before the first
    task and after the last, all of it."""
    if not tasks:
        return [(t0, t1)]
    events = sorted([(s["start"], 1) for s in tasks] + [(s["end"], -1) for s in tasks])
    first, last = events[0][0], max(s["end"] for s in tasks)
    out = [(t0, first)] if first > t0 else []
    running = finished = 0
    left = len(tasks)
    previous = first
    for when, step in events:
        if when > previous and running < min(workers, left - finished):
            if out and out[-1][1] == previous:
                out[-1] = (out[-1][0], when)
            else:
                out.append((previous, when))
        previous = max(previous, when)
        if step > 0:
            running += 1
        else:
            running -= 1
            finished += 1
    if t1 > last:
        out.append((last, t1))
    return out


def _serial_seconds(tasks: list[dict[str, Any]], workers: int, t0: float, t1: float) -> float:
    return sum(b - a for a, b in _serial_intervals(tasks, workers, t0, t1))


def serial_steps(spans: list[dict[str, Any]], workers: int) -> dict[str, float]:
    """Where the serial time goes: per driver step (the innermost one running, ``build`` and ``wait`` aside), the
    serial seconds spent in it; ``workers between tasks`` is serial time in none (workers idle between tasks while
    the driver waits for results: handing out, sending back)."""
    if not spans:
        return {}
    t0, t1 = min(s["start"] for s in spans), max(s["end"] for s in spans)
    tasks = [s for s in spans if s["what"] == TASK]
    steps = sorted((s for s in spans if s["who"] == "driver" and s["what"] not in ("build", "wait")),
                   key=lambda s: s["end"] - s["start"])  # innermost (shortest) first
    out: dict[str, float] = {}
    for a, b in _serial_intervals(tasks, workers, t0, t1):
        cuts = sorted({a, b, *(x for s in steps for x in (s["start"], s["end"]) if a < x < b)})
        for x, y in zip(cuts, cuts[1:]):
            mid = (x + y) / 2
            step = next((s["what"] for s in steps if s["start"] <= mid < s["end"]), "workers between tasks")
            out[step] = out.get(step, 0.0) + y - x
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def amdahl_speedup(serial_share: float, n: int) -> float:
    """Amdahl's law: the speed-up of ``n`` processes when ``serial_share`` of one process's time cannot run in
    parallel."""
    return 1.0 / (serial_share + (1.0 - serial_share) / n)


def serial_share_for(speedup: float, n: int) -> float:
    """The largest serial share for which Amdahl's law still gives ``speedup`` at ``n`` processes."""
    return (1.0 / speedup - 1.0 / n) / (1.0 - 1.0 / n)
