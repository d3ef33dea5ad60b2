"""Scoring an OCR engine against a page's exact words and boxes (``dogood eval --task ocr``).

The gold words are the document's words with non-blank text (its tokens), with
their pixel boxes: on a dogood-shifted page they are exact (an image shift
re-projects every box through the same map as the pixels). A predicted word
*matches* a gold word when their boxes overlap at IoU >= 0.5: pairs are taken
greedily by IoU, highest first, each gold and each predicted word at most once
(ties by gold then predicted order). Then, pooled over documents:

- word recall = matched pairs whose texts are equal / gold words;
- word precision = the same / predicted words; F1 their harmonic mean;
- CER = summed Levenshtein distance over all matched pairs / summed length of
  their gold texts (character error rate of the words the engine found);
- box recall = matched pairs / gold words (text ignored).

Texts are compared exactly after stripping surrounding whitespace (case and
punctuation count). Written by hand: the ICDAR/RRC text-spotting scorers are
scripts over their own zip formats, not libraries, and pycocotools' matcher
knows no text; the edit distance is rapidfuzz's.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rapidfuzz.distance import Levenshtein

#: The IoU at which a predicted word's box matches a gold word's.
IOU_THRESHOLD = 0.5

#: Per-document counts (the columns of :func:`ocr_counts`): the bootstrap sums them.
COUNT_NAMES = ("exact", "predicted", "gold", "box_matched", "edits", "gold_chars")

CONVENTION = ("OCR: gold = the document's words with non-blank text and their exact boxes. A predicted word matches "
              "a gold word when their boxes overlap at IoU ≥ 0.5 (greedy by IoU, one-to-one). Word recall = matched "
              "words with exactly the gold text (surrounding whitespace stripped) / gold words; precision = the same / "
              "predicted words; CER = Levenshtein distance summed over the matched words / their gold characters; "
              "box recall = matched / gold words. Counts pooled over documents.")


def iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of every box of ``a`` (``(n, 4)``, x0 y0 x1 y1) with every box of ``b``; 0 where a union is empty."""
    a = np.asarray(a, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 4)
    ix = np.clip(np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0]), 0, None)
    iy = np.clip(np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1]), 0, None)
    inter = ix * iy
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)


def match_words(gold_boxes, pred_boxes, threshold: float = IOU_THRESHOLD) -> list[tuple[int, int]]:
    """One-to-one ``(gold, predicted)`` index pairs at IoU >= ``threshold``, greedy by IoU (highest first)."""
    iou = iou_matrix(gold_boxes, pred_boxes)
    g, p = np.nonzero(iou >= threshold)
    order = np.lexsort((p, g, -iou[g, p]))
    used_g, used_p, pairs = set(), set(), []
    for k in order:
        gi, pi = int(g[k]), int(p[k])
        if gi in used_g or pi in used_p:
            continue
        used_g.add(gi)
        used_p.add(pi)
        pairs.append((gi, pi))
    return sorted(pairs)


def ocr_counts(gold: Sequence[tuple[str, Sequence[int]]], pred: Sequence[tuple[str, Sequence[int]]]
               ) -> tuple[np.ndarray, np.ndarray]:
    """The counts of one page (:data:`COUNT_NAMES`) and, per predicted word, whether it is right (matched, same text)."""
    gold_text = [t.strip() for t, _ in gold]
    pred_text = [t.strip() for t, _ in pred]
    pairs = match_words([b for _, b in gold], [b for _, b in pred]) if gold and pred else []
    correct = np.zeros(len(pred), dtype=bool)
    edits = chars = 0
    for g, p in pairs:
        if gold_text[g] == pred_text[p]:
            correct[p] = True
        edits += Levenshtein.distance(gold_text[g], pred_text[p])
        chars += len(gold_text[g])
    counts = np.array([int(correct.sum()), len(pred), len(gold), len(pairs), edits, chars], dtype=np.int64)
    return counts, correct


def ocr_scores(counts) -> dict[str, float]:
    """Recall, precision, F1, CER, box recall and box precision from summed :func:`ocr_counts`."""
    exact, n_pred, n_gold, matched, edits, chars = (float(x) for x in np.asarray(counts).reshape(-1)[:6])
    nan = float("nan")
    recall = exact / n_gold if n_gold else nan
    precision = exact / n_pred if n_pred else 0.0
    f1 = 2 * precision * recall / (precision + recall) if n_gold and precision + recall else 0.0
    return {"recall": recall, "precision": precision, "f1": f1, "cer": edits / chars if chars else nan,
            "box_recall": matched / n_gold if n_gold else nan, "box_precision": matched / n_pred if n_pred else 0.0,
            "gold_words": int(n_gold), "predicted_words": int(n_pred)}
