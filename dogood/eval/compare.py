"""Two models on the same documents: the change in score with a paired bootstrap interval, in percent.

Do-GOOD's Figure 6 (He et al. 2023, section 5) compares a model trained on FUNSD train with one trained on FUNSD
train plus shifted data, on the same OOD test sets. :func:`compare` scores both models on each dataset and gives the
second's change over the first, its interval drawn from the same resampled documents for both models
(:func:`dogood.eval.bootstrap.bootstrap_values`), as ``dogood eval`` pairs ID and OOD. It takes the models and the
datasets as :func:`dogood.evaluate` does, and the same options with the same defaults (those that score one set).
"""

from __future__ import annotations

from typing import Any

from dogood.eval.bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    bootstrap_values,
    percentile_interval,
)
from dogood.eval.datasets import EvalError, as_datasets, is_one_dataset
from dogood.eval.run import resolve_model
from dogood.eval.scoring import predict, score_row
from dogood.eval.tasks import make_task


def compare(before: Any, after: Any, datasets: Any, *, split: str = "test", limit: int | None = None,
            batch_size: int = 32, progress: bool = False, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
            confidence: float = DEFAULT_CONFIDENCE, kieval: bool = False, anls_official: bool = False,
            task: str | None = None) -> dict[str, dict[str, Any]]:
    """``after``'s change over ``before`` on each dataset, paired by document, in percent.

    ``before`` and ``after`` are model objects or what :func:`dogood.evaluate` takes (``"baseline"``, a model file
    or folder, a predictions file); ``datasets`` what it takes for OOD sets (a built folder stands for all its
    configs; one name or a list). The options are :func:`dogood.evaluate`'s. Returns, per dataset (its config, or
    its name), ``{"metric": name, "before": score, "after": score, "change": after - before, "ci": [low, high] or
    None, "documents": n}``; the interval is the percentile bootstrap of the change, both models' scores
    recomputed on each resample of the documents.
    """
    specs = [datasets] if is_one_dataset(datasets) else list(datasets)
    sets = [d for spec in specs for d in as_datasets(spec, split)]
    if not sets:
        raise EvalError("give at least one dataset to compare the two models on")
    job = make_task(task or sets[0].task, kieval=kieval, anls_official=anls_official)
    models = [resolve_model(m, sets, job) for m in (before, after)]
    if resamples < 0:
        raise EvalError(f"the number of bootstrap resamples must be 0 or more, got {resamples}")
    out: dict[str, dict[str, Any]] = {}
    for dataset in sets:
        ids = list(dataset.source.ids())
        ids = ids[:limit] if limit else ids
        scored = [predict(model, job, dataset, ids, batch_size=batch_size, progress=progress) for model in models]
        b, a = (score_row(s, ids)["value"] for s in scored)
        stats = [s.stats(ids) for s in scored]
        ci = None
        if resamples:
            rb, ra = bootstrap_values(job, stats, resamples, seed)
            ci = percentile_interval(ra - rb, confidence)
        out[dataset.config or dataset.name] = {"metric": job.metric, "before": b, "after": a, "change": a - b,
                                               "ci": ci, "documents": len(ids)}
    return out
