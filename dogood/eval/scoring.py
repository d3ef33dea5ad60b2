"""What every task shares when it scores a set: predicting in batches, a row of scores, the change from ID with its
interval, calibration and OOD detection. Task-specific work is the task's (:mod:`dogood.eval.tasks`)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dogood.core.errors import ModelError
from dogood.eval import ablation as abl
from dogood.eval import calibration, ood_detection
from dogood.eval.bootstrap import (
    bootstrap_values,
    nan_interval,
    percentile_interval,
    unpaired_values,
    weight_blocks,
)
from dogood.eval.tasks import Scored, Task
from dogood.eval.tasks.base import pct


def _batches(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def predict(model: Any, task: Task, dataset: Any, ids: Sequence[str], *, batch_size: int = 32,
            progress: bool = False, ablate: Sequence[str] = ()) -> Scored:
    """Run ``model`` over documents ``ids`` of ``dataset`` in batches; the task keeps what each prediction gives.

    ``ablate`` removes inputs from the documents the model is given (:func:`dogood.eval.ablation.ablate`), never
    from the gold. A model reading files (``file_for``: predictions made elsewhere) is given the dataset, and its
    errors name the file.
    """
    task.check_model(model, dataset)
    files = hasattr(model, "file_for")
    if ablate and files:
        abl.check_supported(model, [ablate])
    scored = Scored(dataset, task)
    scored.extra["model"] = getattr(model, "name", str(model))
    task.begin(scored, model)
    mask = getattr(model, "mask_token", None) or abl.DEFAULT_MASK
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(ids), desc=dataset.name, unit="doc")
    for chunk in _batches(list(ids), batch_size):
        docs = [dataset.source.load(doc_id) for doc_id in chunk]
        if files:
            preds = model.predict(docs, dataset=dataset)
        else:
            preds = model.predict([abl.ablate(d, ablate, mask) for d in docs] if ablate else docs)
        for doc in docs:
            scored.shifts.update(rec.shift for rec in doc.provenance)
            p = preds.get(doc.id)
            if p is None:
                raise ModelError(f"model {scored.extra['model']!r} returned no prediction for document {doc.id!r} "
                                 f"of {dataset.name!r}")
            try:
                task.keep(scored, doc, p)
            except ModelError as exc:
                raise ModelError(f"{model.file_for(dataset)}: {exc}" if files else str(exc)) from None
        if bar is not None:
            bar.update(len(docs))
    if bar is not None:
        bar.close()
    return scored


def score_row(scored: Scored, ids: Sequence[str]) -> dict[str, Any]:
    """The scores of ``scored`` over documents ``ids``: a row of the report (``value``: the headline score)."""
    ds = scored.dataset
    row: dict[str, Any] = {"dataset": ds.name, "location": ds.location, "config": ds.config, "split": ds.split,
                           "documents": len(ids)}
    row.update(scored.scores(ids))
    row["value"] = row[scored.task.metric]
    return row


def add_change(row: dict[str, Any], id_value: float) -> dict[str, Any]:
    """``id_value``, ``change`` (the row's score minus ``id_value``: negative when worse) and ``relative_change``
    (the change over ``id_value``, in percent)."""
    change = row["value"] - id_value
    row.update(id_value=id_value, change=change,
               relative_change=100.0 * change / id_value if id_value and not math.isnan(id_value) else math.nan)
    return row


def add_interval(row: dict[str, Any], task: Task, id_stats: Any, stats: Any, unpaired: bool, resamples: int,
                 seed: int, confidence: float) -> None:
    """The row's intervals (``ci``: ``value``, ``id_value``, ``change``) from the same drawn documents (paired) or
    from independent draws (``unpaired``), and whether the change's excludes 0."""
    if unpaired:
        (id_vals,), (vals,) = unpaired_values(task, [id_stats], [stats], resamples, seed)
    else:
        id_vals, vals = bootstrap_values(task, [id_stats, stats], resamples, seed)
    change = percentile_interval(vals - id_vals, confidence)
    row["ci"] = {"value": percentile_interval(vals, confidence), "id_value": percentile_interval(id_vals, confidence),
                 "change": change}
    row["change_excludes_zero"] = change[0] > 0 or change[1] < 0


def calibration_of(scored: Scored, ids: Sequence[str], resamples: int, seed: int, stream: int,
                   confidence: float) -> dict:
    """The ECE (percent) of ``scored`` over documents ``ids`` (``ece``: None with ``note`` when the model gives no
    confidences), with its bootstrap interval (documents drawn from ``stream``)."""
    if scored.no_confidence or not ids:
        return {"ece": None, "note": scored.no_confidence or "no documents"}
    bins = np.stack([scored.bins[i] for i in ids])
    out: dict[str, Any] = {"ece": pct(calibration.ece_from_bins(bins)), "bins": calibration.N_BINS,
                           "items": int(bins[:, calibration.N_BINS, 0].sum())}
    if resamples > 0:
        vals = np.concatenate([calibration.ece_from_bins(bins, w) for w in weight_blocks(len(ids), resamples, seed,
                                                                                        stream)])
        ci = nan_interval(100.0 * vals, confidence)
        out["ci"] = ci
    return out


def detection_of(id_scored: Scored, ood: Scored, id_ids: Sequence[str], ood_ids: Sequence[str], unpaired: bool,
                 resamples: int, seed: int, confidence: float) -> dict:
    """AUROC, FPR95, AUPR-In/Out (percent) of telling the ID documents ``id_ids`` from the OOD documents
    ``ood_ids`` by their confidence, with bootstrap intervals (paired: one draw for both sides; unpaired:
    streams 0 and 1)."""
    why = id_scored.no_confidence or ood.no_confidence
    if why:
        return {"auroc": None, "note": why}
    id_conf = np.array([id_scored.doc_conf[i] for i in id_ids])
    ood_conf = np.array([ood.doc_conf[i] for i in ood_ids])
    id_keep, ood_keep = ~np.isnan(id_conf), ~np.isnan(ood_conf)
    if not id_keep.any() or not ood_keep.any():
        return {"auroc": None, "note": "no document has a confidence (no tokens)"}
    out: dict[str, Any] = {k: pct(v) for k, v in
                           ood_detection.detection_scores(id_conf[id_keep], ood_conf[ood_keep]).items()}
    out["id_documents"], out["ood_documents"] = int(id_keep.sum()), int(ood_keep.sum())
    if resamples > 0:
        parts: dict[str, list[np.ndarray]] = {k: [] for k in ("auroc", "fpr95", "aupr_in", "aupr_out")}
        id_blocks = weight_blocks(len(id_ids), resamples, seed, 0)
        ood_blocks = id_blocks if not unpaired else weight_blocks(len(ood_ids), resamples, seed, 1)
        for wi in id_blocks:
            wo = wi if not unpaired else next(ood_blocks)
            res = ood_detection.detection_scores(id_conf[id_keep], ood_conf[ood_keep], wi[:, id_keep], wo[:, ood_keep])
            for k in parts:
                parts[k].append(res[k])
        out["ci"] = {k: nan_interval(100.0 * np.concatenate(v), confidence) for k, v in parts.items()}
    return out


@dataclass
class Context:
    """One evaluation's sets and results, for what is computed after the rows (severity sweeps, a task's
    summaries)."""

    model: Any
    task: Task
    id_set: Any
    ood_sets: list
    pairs: list  # dogood.eval.pairing.Pairing, one per OOD set
    id_ids: list[str]  # the ID documents scored
    id_scored: Scored
    ood_scored: list[Scored]
    report: Any
    resamples: int
    seed: int
    confidence: float
    batch_size: int = 32
    progress: bool = False
