"""Expected calibration error (Guo et al. 2017, "On Calibration of Modern Neural Networks", Sec. 2).

``ECE = sum_m |B_m| / n * |acc(B_m) - conf(B_m)|`` over ``M = 15`` equal-width
bins of the confidence, ``B_m = {i : conf_i in ((m-1)/M, m/M]}`` (left-open,
right-closed, the edges ``numpy.linspace(0, 1, M + 1)``, as the reference
implementation ``_ECELoss`` of gpleiss/temperature_scaling compares them; a
confidence of exactly 0 falls in no bin but counts in ``n``). Empty bins add 0.

An item is a document (document classification: its predicted class's
probability, correct when the class is right), a token (tagging: its predicted
tag's probability, correct when the tag is the gold one) or a predicted word
(OCR: the engine's word confidence, correct when it reads a gold word: the same
text, the boxes half inside each other, :mod:`dogood.eval.tasks.ocr`). Items are resampled with their document in the
bootstrap: :func:`document_bins` sums each document's items per bin, and
:func:`ece_from_bins` weighs the documents (one row per resample).
"""

from __future__ import annotations

import numpy as np

#: Bins of the ECE (Guo et al. 2017 use 15).
N_BINS = 15

CONVENTION = (f"Calibration: expected calibration error over {N_BINS} equal-width confidence bins (Guo et al. 2017; "
              "bins (k-1)/15 < conf <= k/15, as gpleiss/temperature_scaling's _ECELoss), each bin's |accuracy − mean "
              "confidence| weighted by its share of the items. Items: documents (document classification), tokens "
              "(tagging: correct when the predicted tag is the gold one) or predicted words (OCR: correct when they "
              "read a gold word: its text exactly, the boxes half inside each other).")


def bin_index(conf) -> np.ndarray:
    """The bin (0..N_BINS-1) of each confidence, -1 for a confidence of 0 (in no bin)."""
    conf = np.asarray(conf, dtype=np.float64)
    edges = np.linspace(0.0, 1.0, N_BINS + 1)
    return np.searchsorted(edges, conf, side="left") - 1


def document_bins(conf, correct) -> np.ndarray:
    """``(N_BINS + 1, 3)``: per bin the items, their summed confidence and their number correct; the last row
    counts every item (``n``, items in no bin included)."""
    conf = np.asarray(conf, dtype=np.float64)
    correct = np.asarray(correct, dtype=np.float64)
    if conf.shape != correct.shape:
        raise ValueError("one correctness per confidence")
    if conf.size and (np.isnan(conf).any() or conf.min() < 0 or conf.max() > 1):
        raise ValueError("confidences must lie in [0, 1]")
    out = np.zeros((N_BINS + 1, 3))
    b = bin_index(conf)
    keep = b >= 0
    np.add.at(out[:, 0], b[keep], 1.0)
    np.add.at(out[:, 1], b[keep], conf[keep])
    np.add.at(out[:, 2], b[keep], correct[keep])
    out[N_BINS, 0] = conf.size
    return out


def ece_from_bins(bins: np.ndarray, weights=None):
    """ECE from per-document bin sums ``(n_docs, N_BINS + 1, 3)``; ``weights`` ``(B, n_docs)`` gives one per row."""
    bins = np.asarray(bins, dtype=np.float64)
    single = weights is None
    w = np.ones((1, bins.shape[0])) if single else np.atleast_2d(np.asarray(weights, dtype=np.float64))
    summed = np.einsum("bd,dkc->bkc", w, bins)
    n = summed[:, N_BINS, 0]
    gap = np.abs(summed[:, :N_BINS, 2] - summed[:, :N_BINS, 1]).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ece = np.where(n > 0, gap / n, np.nan)
    return float(ece[0]) if single else ece


def expected_calibration_error(conf, correct) -> float:
    """ECE of items with confidences ``conf`` and 0/1 ``correct``, all weighed alike."""
    return ece_from_bins(document_bins(conf, correct)[None])
