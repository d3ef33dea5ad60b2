"""Two models on the same documents: the change in score with a paired bootstrap interval.

Do-GOOD's Figure 6 (He et al. 2023, section 5) compares a model trained on FUNSD train with one trained on FUNSD
train plus shifted data, on the same OOD test sets. :func:`compare` scores both models on each dataset and gives the
second's change over the first, its interval drawn from the same resampled documents for both models
(:func:`dogood.eval.bootstrap.bootstrap_values`), as ``dogood eval`` pairs ID and OOD.
"""

from __future__ import annotations

from typing import Any

from dogood.eval.bootstrap import (DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, bootstrap_values,
                                   metric_from_counts, percentile_interval)
from dogood.eval.datasets import as_datasets
from dogood.eval.run import _predict


def compare(before: Any, after: Any, datasets: Any, *, split: str = "test", resamples: int = DEFAULT_RESAMPLES,
            seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE,
            batch_size: int = 32) -> dict[str, dict[str, Any]]:
    """``after``'s change over ``before`` on each dataset, paired by document.

    ``datasets`` are what :func:`dogood.evaluate` takes (a built folder stands for all its configs). Returns, per
    dataset name, ``{"before": score, "after": score, "change": after - before, "ci": [low, high] or None,
    "documents": n}``; the interval is the percentile bootstrap of the change, both models' scores recomputed on
    each resample of the documents.
    """
    sets = [d for spec in (datasets if isinstance(datasets, (list, tuple)) else [datasets])
            for d in as_datasets(spec, split)]
    out: dict[str, dict[str, Any]] = {}
    for dataset in sets:
        ids = list(dataset.source.ids())
        stats = [_predict(model, dataset, ids, batch_size=batch_size, progress=False, kieval=False).stats(ids)
                 for model in (before, after)]
        b, a = (metric_from_counts(dataset.task, s.sum(axis=0), len(ids)) for s in stats)
        ci = None
        if resamples:
            rb, ra = bootstrap_values(dataset.task, stats, resamples, seed)
            ci = percentile_interval(ra - rb, confidence)
        out[dataset.config or dataset.name] = {"before": b, "after": a, "change": a - b, "ci": ci,
                                               "documents": len(ids)}
    return out
