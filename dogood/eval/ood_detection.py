"""Telling ID documents from OOD ones by the model's confidence: AUROC, FPR at 95% TPR, AUPR.

The convention (Hendrycks & Gimpel 2017's baseline, as ODIN and the energy-OOD
papers use it): **ID is the positive class and the score is the model's
confidence** (higher: more in-distribution). A document's confidence is the
model's own (document classification: the probability of its predicted class)
or, for token tagging, the mean over the document's tokens of each token's
confidence (the probability of its predicted tag).

- AUROC: area under the ROC curve (trapezoidal), as
  :func:`sklearn.metrics.roc_auc_score`; 0.5 is chance, below 0.5 the model is
  *more* confident on the OOD documents.
- FPR95: the share of OOD documents accepted as ID at the largest threshold
  that keeps at least 95% of the ID documents (TPR >= 0.95); lower is better.
  It is ``fpr[argmax(tpr >= 0.95)]`` on :func:`sklearn.metrics.roc_curve`
  with ``drop_intermediate=False``.
- AUPR-In (ID positive, score = confidence) and AUPR-Out (OOD positive, score =
  minus the confidence): average precision, the step-wise sum
  ``sum_n (R_n - R_{n-1}) P_n`` of :func:`sklearn.metrics.average_precision_score`.

Every function takes optional per-item weights, one row per bootstrap resample
(how many times each document was drawn), and computes all resamples at once:
the weighted curves equal scikit-learn's with ``sample_weight`` (the tests check
every metric against scikit-learn on the same inputs). Written with numpy
because scikit-learn computes one weighting per call, which is a thousand calls
per OOD set for an interval.
"""

from __future__ import annotations

import numpy as np

#: The TPR at which the FPR is read.
TPR_LEVEL = 0.95

CONVENTION = ("OOD detection: ID documents are the positive class, the score is the model's confidence (document "
              "classification: the probability of the predicted class; token tagging: the mean over the document's "
              "tokens of the probability of each predicted tag). AUROC as sklearn.metrics.roc_auc_score; FPR95 = the "
              "share of OOD documents scored at or above the largest threshold that keeps at least 95% of ID "
              "documents; AUPR-In (ID positive) and AUPR-Out (OOD positive, score negated) as "
              "sklearn.metrics.average_precision_score.")


def _curve(scores: np.ndarray, positive: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative weighted true and false positives at each distinct threshold, scores descending.

    ``weights`` is ``(B, n)``; returns two ``(B, k)`` arrays (``k`` distinct scores).
    """
    order = np.argsort(-scores, kind="mergesort")
    s = scores[order]
    last = np.r_[np.flatnonzero(np.diff(s) != 0), len(s) - 1]  # the last item of each tie group
    w = weights[:, order].astype(np.float64)
    pos = positive[order].astype(np.float64)
    tps = np.cumsum(w * pos, axis=1)[:, last]
    fps = np.cumsum(w * (1.0 - pos), axis=1)[:, last]
    return tps, fps


def _prepare(scores, positive, weights) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    scores = np.asarray(scores, dtype=np.float64)
    positive = np.asarray(positive, dtype=bool)
    if scores.shape != positive.shape or scores.ndim != 1:
        raise ValueError("scores and labels must be 1-D arrays of the same length")
    if np.isnan(scores).any():
        raise ValueError("scores hold NaN")
    single = weights is None
    weights = np.ones((1, len(scores))) if single else np.atleast_2d(np.asarray(weights, dtype=np.float64))
    if weights.shape[1] != len(scores):
        raise ValueError(f"weights have {weights.shape[1]} columns for {len(scores)} scores")
    return scores, positive, weights, single


def _out(values: np.ndarray, single: bool):
    return float(values[0]) if single else values


def roc_auc(scores, positive, weights=None):
    """AUROC of ``scores`` for the ``positive`` items (weighted per row of ``weights``); NaN without both classes."""
    scores, positive, weights, single = _prepare(scores, positive, weights)
    tps, fps = _curve(scores, positive, weights)
    P, N = tps[:, -1:], fps[:, -1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr = np.hstack([np.zeros_like(P), tps / P])
        fpr = np.hstack([np.zeros_like(N), fps / N])
        auc = np.sum(np.diff(fpr, axis=1) * (tpr[:, 1:] + tpr[:, :-1]) / 2, axis=1)
    auc[(P[:, 0] <= 0) | (N[:, 0] <= 0)] = np.nan
    return _out(auc, single)


def fpr_at_tpr(scores, positive, weights=None, level: float = TPR_LEVEL):
    """The false-positive rate at the first threshold (scores descending) where the TPR reaches ``level``."""
    scores, positive, weights, single = _prepare(scores, positive, weights)
    tps, fps = _curve(scores, positive, weights)
    P, N = tps[:, -1:], fps[:, -1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        tpr, fpr = tps / P, fps / N
    # the tolerance absorbs float error in the cumulative sums (a TPR of exactly 0.95 counts as reached)
    first = np.argmax(tpr >= level - 1e-12, axis=1)
    out = fpr[np.arange(len(fpr)), first]
    out[(P[:, 0] <= 0) | (N[:, 0] <= 0)] = np.nan
    return _out(out, single)


def average_precision(scores, positive, weights=None):
    """Average precision ``sum_n (R_n - R_{n-1}) P_n`` over the distinct thresholds (scores descending)."""
    scores, positive, weights, single = _prepare(scores, positive, weights)
    tps, fps = _curve(scores, positive, weights)
    P = tps[:, -1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        recall = tps / P
        precision = tps / (tps + fps)
    step = np.diff(np.hstack([np.zeros_like(P), recall]), axis=1)
    ap = np.sum(np.where(step > 0, step * np.nan_to_num(precision), 0.0), axis=1)
    ap[P[:, 0] <= 0] = np.nan
    return _out(ap, single)


def detection_scores(id_scores, ood_scores, id_weights=None, ood_weights=None) -> dict:
    """AUROC, FPR95, AUPR-In and AUPR-Out of telling ``id_scores`` (positive) from ``ood_scores``.

    With weights (``(B, n_id)`` and ``(B, n_ood)``, rows aligned: one resample
    each), every value is an array of ``B``; without, a float.
    """
    id_scores = np.asarray(id_scores, dtype=np.float64)
    ood_scores = np.asarray(ood_scores, dtype=np.float64)
    scores = np.concatenate([id_scores, ood_scores])
    positive = np.r_[np.ones(len(id_scores), bool), np.zeros(len(ood_scores), bool)]
    weights = None
    if id_weights is not None or ood_weights is not None:
        iw = np.ones((1, len(id_scores))) if id_weights is None else np.atleast_2d(id_weights)
        ow = np.ones((1, len(ood_scores))) if ood_weights is None else np.atleast_2d(ood_weights)
        rows = max(len(iw), len(ow))
        weights = np.hstack([np.broadcast_to(iw, (rows, iw.shape[1])), np.broadcast_to(ow, (rows, ow.shape[1]))])
    return {"auroc": roc_auc(scores, positive, weights),
            "fpr95": fpr_at_tpr(scores, positive, weights),
            "aupr_in": average_precision(scores, positive, weights),
            "aupr_out": average_precision(-scores, ~positive, weights)}
