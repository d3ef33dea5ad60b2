"""Bootstrap intervals over documents: resample weights, resampled metrics, percentile intervals.

Paired sets (OOD documents that are ID documents shifted) draw the documents
once for ID and OOD; unpaired sets (other documents) draw each side over its
own documents, from two independent streams (:func:`bootstrap_weights`,
``stream``), and the change's interval comes from the two draws
(:func:`unpaired_values`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

#: Bootstrap defaults: resamples and seed (``dogood eval --bootstrap``, ``--seed``).
DEFAULT_RESAMPLES = 1000


DEFAULT_SEED = 0


DEFAULT_CONFIDENCE = 0.95


def bootstrap_weights(n: int, resamples: int, seed: int, stream: int = 0) -> Iterator[np.ndarray]:
    """The resampling scheme of every interval ``dogood eval`` reports.

    ``rng = numpy.random.default_rng(seed)`` (``stream`` 0: the ID set and the
    OOD sets paired with it) or ``numpy.random.default_rng([seed, stream])``
    (``stream`` 1: the documents of unpaired OOD sets, drawn independently of
    the ID documents); then, ``resamples`` times, ``rng.integers(0, n, size=n)``
    draws ``n`` documents with replacement. Each draw is yielded as
    ``numpy.bincount(draw, minlength=n)``: how many times each document is in
    the resample.
    """
    rng = np.random.default_rng(seed if stream == 0 else [seed, stream])
    for _ in range(resamples):
        yield np.bincount(rng.integers(0, n, size=n), minlength=n)


def weight_blocks(n: int, resamples: int, seed: int, stream: int = 0, block: int = 256) -> Iterator[np.ndarray]:
    """:func:`bootstrap_weights` stacked ``block`` resamples at a time: ``(rows, n)`` arrays, in the same order."""
    rows: list[np.ndarray] = []
    for w in bootstrap_weights(n, resamples, seed, stream):
        rows.append(w)
        if len(rows) == block:
            yield np.stack(rows)
            rows = []
    if rows:
        yield np.stack(rows)


def _task(task: Any):
    """A task object, or the registered task of that name."""
    if isinstance(task, str):
        from dogood.eval.tasks import make_task

        return make_task(task)
    return task


def bootstrap_values(task: Any, stats: Sequence[Any], resamples: int, seed: int, stream: int = 0) -> list[np.ndarray]:
    """The headline score of each bootstrap resample, for one or several aligned per-document results.

    ``task`` is a :class:`~dogood.eval.tasks.Task` (or its name) and each of ``stats`` what its
    :meth:`~dogood.eval.tasks.Task.stats` gives for the same documents in the same order (ID and OOD results of
    paired documents): each resample draws the documents once (:func:`bootstrap_weights`) and recomputes every
    one's score from the drawn documents (:meth:`~dogood.eval.tasks.Task.values`), so a change is computed on the
    very same resampled documents.
    """
    task = _task(task)
    n = len(stats[0])
    out: list[list[np.ndarray]] = [[] for _ in stats]
    for block in weight_blocks(n, resamples, seed, stream):
        for k, s in enumerate(stats):
            out[k].append(task.values(s, block))
    return [np.concatenate(v) if v else np.empty(0) for v in out]


def unpaired_values(task: Any, id_stats: Sequence[Any], ood_stats: Sequence[Any], resamples: int,
                    seed: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Resampled scores of ID and OOD sets that hold different documents: the ID documents drawn from stream 0
    (the same draws as the ID score's own interval), the OOD documents from stream 1, independently; a change's
    resamples are ``ood[b] - id[b]``. Several OOD results over the same documents share their draws."""
    return (bootstrap_values(task, id_stats, resamples, seed, 0),
            bootstrap_values(task, ood_stats, resamples, seed, 1))


def percentile_interval(values: np.ndarray, confidence: float) -> list[float]:
    """``[low, high]``: the percentile bootstrap interval (numpy's default linear interpolation)."""
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(values, [tail, 100 - tail])
    return [float(low), float(high)]


def nan_interval(values: np.ndarray, confidence: float) -> list[float] | None:
    """The percentile interval of resampled ratios, ``None`` when some resample's ratio is undefined."""
    values = np.asarray(values, dtype=np.float64)
    return None if np.isnan(values).any() else percentile_interval(values, confidence)
