"""OCR (``dogood eval --task ocr``): an engine's words scored against a page's exact words, on what it read.

The gold words are the document's words with non-blank text, with their pixel boxes (on a dogood-shifted page,
re-projected through the same map as the pixels). A predicted word *reads* a gold word when their texts are equal
and one box lies at least half inside the other (their intersection covers half of the smaller box; IoU >= 0.5
implies it). Boxes of real annotations are not drawn to one rule: on clean FUNSD test, Tesseract's box of a word
it read exactly is sometimes much looser than FUNSD's (a text line's height) and sometimes much tighter (FUNSD's
loose boxes), so IoU >= 0.5 alone misses many words read exactly where they are (``bench/RESULTS.md``). A
predicted word of other text pairs with a gold word when their boxes overlap at IoU >= 0.5 (a looser rule would
pair fragments with the words around them). Pairs are taken one-to-one, greedily: first pairs of equal text, then
the others, each by IoU (highest first; ties by gold then predicted order). Then, pooled over documents:

- word recall (the headline) = matched pairs whose texts are equal / gold words;
- word precision = the same / predicted words; F1 their harmonic mean;
- CER = summed Levenshtein distance over all matched pairs / summed length of their gold texts;
- box recall = matched pairs / gold words (text ignored);
- bag-of-words recall = the gold and predicted texts' multiset intersection / gold words (place ignored): the
  most word recall can be, so the two side by side show what placement costs.

Texts are compared exactly after stripping surrounding whitespace (case and punctuation count). Written by hand:
the ICDAR/RRC text-spotting scorers are scripts over their own zip formats, not libraries, and pycocotools'
matcher knows no text; the edit distance is rapidfuzz's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
from rapidfuzz.distance import Levenshtein

from dogood.eval.datasets import EvalError
from dogood.eval.tasks.base import Scored, Task, pct, register

#: The share of the smaller box the two boxes' intersection must cover for a predicted word to read a gold word
#: of the same text.
OVERLAP = 0.5
#: The IoU at which a predicted word of other text pairs with a gold word.
IOU_THRESHOLD = 0.5

#: Per-document counts (the columns of :func:`ocr_counts`): the bootstrap sums them.
COUNT_NAMES = ("exact", "predicted", "gold", "box_matched", "edits", "gold_chars", "bag")

CONVENTION = ("OCR: gold = the document's words with non-blank text and their exact boxes. A predicted word reads "
              "a gold word when their texts are equal and one box lies at least half inside the other (intersection "
              "≥ 0.5 of the smaller box; IoU ≥ 0.5 implies it), which allows for annotations whose boxes are looser "
              "or tighter than the engine's; a word of other text pairs at IoU ≥ 0.5; pairs are taken one-to-one, "
              "those of equal text first, each by IoU. Word recall = "
              "matched words with exactly the gold text (surrounding whitespace stripped) / gold words; precision = "
              "the same / predicted words; CER = Levenshtein distance summed over the matched words / their gold "
              "characters; box recall = matched / gold words; bag-of-words recall = the gold and read texts' "
              "multiset intersection / gold words (place ignored). Counts pooled over documents.")


def _overlaps(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(IoU, intersection over the smaller box)`` of every box of ``a`` with every box of ``b``; 0 where a
    union or the smaller box is empty."""
    a = np.asarray(a, dtype=np.float64).reshape(-1, 4)
    b = np.asarray(b, dtype=np.float64).reshape(-1, 4)
    ix = np.clip(np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0]), 0, None)
    iy = np.clip(np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1]), 0, None)
    inter = ix * iy
    area_a = np.clip(a[:, 2] - a[:, 0], 0, None) * np.clip(a[:, 3] - a[:, 1], 0, None)
    area_b = np.clip(b[:, 2] - b[:, 0], 0, None) * np.clip(b[:, 3] - b[:, 1], 0, None)
    union = area_a[:, None] + area_b[None, :] - inter
    small = np.minimum(area_a[:, None], area_b[None, :])
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)
        inside = np.where(small > 0, inter / np.where(small > 0, small, 1.0), 0.0)
    return iou, inside


def iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of every box of ``a`` (``(n, 4)``, x0 y0 x1 y1) with every box of ``b``; 0 where a union is empty."""
    return _overlaps(a, b)[0]


def match_words(gold_boxes, pred_boxes, gold_texts: Sequence[str] | None = None,
                pred_texts: Sequence[str] | None = None) -> list[tuple[int, int]]:
    """One-to-one ``(gold, predicted)`` index pairs (see the module docstring): words of equal text (when texts
    are given) whose boxes lie half inside each other, first, then any words at IoU >= 0.5, each greedy by IoU
    (highest first)."""
    iou, inside = _overlaps(gold_boxes, pred_boxes)
    same = np.zeros(iou.shape, dtype=bool)
    if gold_texts is not None and pred_texts is not None and iou.size:
        same = np.array([[a == b for b in pred_texts] for a in gold_texts], dtype=bool).reshape(iou.shape)
    g, p = np.nonzero((iou >= IOU_THRESHOLD) | (same & (inside >= OVERLAP)))
    differ = ~same[g, p]
    order = np.lexsort((p, g, -iou[g, p], differ))
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
    pairs = (match_words([b for _, b in gold], [b for _, b in pred], gold_text, pred_text)
             if gold and pred else [])
    correct = np.zeros(len(pred), dtype=bool)
    edits = chars = 0
    for g, p in pairs:
        if gold_text[g] == pred_text[p]:
            correct[p] = True
        edits += Levenshtein.distance(gold_text[g], pred_text[p])
        chars += len(gold_text[g])
    bag = sum((Counter(gold_text) & Counter(pred_text)).values())
    counts = np.array([int(correct.sum()), len(pred), len(gold), len(pairs), edits, chars, bag], dtype=np.int64)
    return counts, correct


def ocr_scores(counts) -> dict[str, float]:
    """Recall, precision, F1, CER, box recall, box precision and bag-of-words recall, in percent, from summed
    :func:`ocr_counts`; the word counts as integers."""
    exact, n_pred, n_gold, matched, edits, chars, bag = (float(x) for x in np.asarray(counts).reshape(-1)[:7])
    nan = float("nan")
    recall = exact / n_gold if n_gold else nan
    precision = exact / n_pred if n_pred else 0.0
    f1 = 2 * precision * recall / (precision + recall) if n_gold and precision + recall else 0.0
    return {"recall": pct(recall), "precision": pct(precision), "f1": pct(f1),
            "cer": pct(edits / chars) if chars else nan, "box_recall": pct(matched / n_gold) if n_gold else nan,
            "box_precision": pct(matched / n_pred) if n_pred else 0.0,
            "bag_recall": pct(bag / n_gold) if n_gold else nan,
            "gold_words": int(n_gold), "predicted_words": int(n_pred)}


@register
class OCRTask(Task):
    name = "ocr"
    title = "OCR against the pages' exact words and boxes"
    metric, metric_label = "recall", "word recall"
    reads = ("token",)
    model_task = "ocr"
    count_names = COUNT_NAMES
    pooled = "the drawn documents' exact words, summed, over their gold words"
    columns = (("gold_words", "Gold words", "int"), ("predicted_words", "Words read", "int"),
               ("bag_recall", "Bag-of-words recall", "pct"), ("precision", "Precision", "pct"), ("f1", "F1", "pct"),
               ("cer", "CER", "pct"), ("box_recall", "Box recall", "pct"))
    no_reference = "no default reference for OCR engines (pass --reference tesseract, say)"
    model_hint = "--task ocr scores an OCR engine: give --model tesseract or rapidocr (or --predictions FILE.jsonl)"

    def check(self, id_set, ood_sets: list, warnings: list[str]) -> list:
        """Only sets whose words are still the source's exact words: a set whose words were re-read by OCR (a
        shift that ``reads_words``, as ``reocr``) holds an engine's output, not ground truth; it is left out with
        a warning (an ID set like that is refused)."""
        found = _readers(id_set)
        if found:
            raise EvalError(f"dataset {id_set.name!r}: its words were re-read by OCR ({', '.join(found)}), so they "
                            "are no ground truth to score an OCR engine against")
        kept = []
        for d in ood_sets:
            found = _readers(d)
            if found:
                warnings.append(f"{d.name} left out: its words were re-read by OCR ({', '.join(found)}), so they are "
                                "no ground truth to score an OCR engine against")
            else:
                kept.append(d)
        if not kept and ood_sets:
            raise EvalError("every OOD set's words were re-read by OCR: nothing to score an OCR engine against")
        return kept

    def keep(self, scored: Scored, doc: Any, p: Any) -> None:
        gold = [(w.text, w.box) for w in doc.words if w.text.strip()]
        words = list(p.words or ())
        counts, right = ocr_counts(gold, [(t, b) for t, b, _ in words])
        scored.gold[doc.id], scored.pred[doc.id] = gold, words
        scored.counts[doc.id] = counts
        scored.keep_confidence(doc.id, [c for _, _, c in words], right, empty=0.0,
                               why=f"model {scored.extra.get('model', 'model')!r} gives no confidence for some words")

    def from_counts(self, sums: np.ndarray) -> np.ndarray:
        sums = np.asarray(sums, np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return 100.0 * (sums[..., 0] / sums[..., 2])

    def scores(self, scored: Scored, ids: Sequence[str]) -> dict[str, Any]:
        return ocr_scores(self.stats(scored, ids).sum(axis=0))

    def conventions(self) -> list[str]:
        return [CONVENTION, "OCR: a page's confidence is the mean of its words' confidences (0 for a page with no "
                            "word read)."]


def _readers(d) -> list[str]:
    """The shifts of a set's first document that re-read its words by OCR; refuse words that carry their
    segment's box (segment-level bboxes, no full record)."""
    from dogood.shifts import SHIFTS

    ids = d.source.ids()
    if not ids:
        return []
    doc = d.source.load(ids[0])
    if d.box_level == "segment" and _segment_boxed(doc):
        raise EvalError(f"dataset {d.name!r}: its words carry their segment's box (segment-level bboxes, no full "
                        "record), not their own: an OCR engine's word boxes cannot be matched against them; "
                        "score OCR on word-level data (a dogood build, or the FUNSD folder)")
    return sorted({r.shift for r in doc.provenance if r.shift in SHIFTS and SHIFTS[r.shift].reads_words})


def _segment_boxed(doc) -> bool:
    """Whether every multi-word entity's words share one box: words read from segment-level ``bboxes``."""
    multi = [e for e in doc.entities if len(e.word_ids) > 1]
    return bool(multi) and all(len({tuple(doc.words[i].box) for i in e.word_ids}) == 1 for e in multi)
