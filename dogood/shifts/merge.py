"""Merge boxes by dilation: Do-GOOD section 3.3, Algorithm 1 (layout shift).

Each box is dilated by ``lambda_x`` horizontally and ``lambda_y`` vertically;
a dilated box that intersects merged boxes already traversed joins them, and
every word then takes its merged group's box. Text, labels and pixels do not
change: only the layout moves from fine-grained (word) to coarse (block).

What the paper leaves open, and what we chose:

- *What is stored in S.* The paper adds the dilated box to S. We dilate only
  to test intersection and store the union of the undilated member boxes, so
  a merged box encloses exactly its words and stays inside the page.
- *A box touching several groups.* The paper merges "the two bounding boxes";
  we merge the new box with every group it touches, so chains of boxes merge
  transitively (A-B-C with B bridging gives one group).
- *Groups that grow into each other.* One pass can leave a grown group
  overlapping a group built before it. With ``until_stable=True`` (default)
  groups whose dilated boxes touch keep merging until none do, so the result
  does not depend on reading order; ``False`` gives the single pass.
- *Touching.* Boxes are closed: dilated boxes that share an edge intersect.
- *Units.* ``level="word"`` merges word boxes (the paper's Figure 2e);
  ``level="entity"`` merges entity boxes (the union of an entity's words),
  with words outside any entity as units of their own.
- *Parameters* are in pixels of the page (the paper gives no values; the
  FUNSD-L recipe uses 10 and 5 on ~1000 px-tall FUNSD pages).
"""

from __future__ import annotations

import numpy as np

from dogood.document import Document, Word
from dogood.shifts.base import Shift, SkipDocument


def merge_boxes(
    boxes: np.ndarray, lambda_x: float, lambda_y: float, *, until_stable: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1 on an ``(n, 4)`` array of boxes, traversed in row order.

    Parameters
    ----------
    boxes : ``(n, 4)`` boxes ``x0, y0, x1, y1``.
    lambda_x, lambda_y : horizontal and vertical dilation distances (λ1, λ2).
    until_stable : keep merging groups whose dilated boxes touch (see module doc).

    Returns
    -------
    group : ``(n,)`` index of each box's merged group, numbered in order of
        each group's first box.
    merged : ``(k, 4)`` merged boxes, one per group (union of its members).
    """
    boxes = np.asarray(boxes, dtype=np.int64).reshape(-1, 4)
    rects: list[np.ndarray] = []  # union box of each live group
    members: list[list[int]] = []
    for i, box in enumerate(boxes):
        hits = _touching(box, np.array(rects).reshape(-1, 4), lambda_x, lambda_y)
        if hits.size == 0:
            rects.append(box.copy())
            members.append([i])
            continue
        keep = int(hits[0])
        rect = np.concatenate([box[None], np.array([rects[h] for h in hits])])
        rects[keep] = np.concatenate([rect[:, :2].min(0), rect[:, 2:].max(0)])
        members[keep] = sorted([i, *(m for h in hits for m in members[h])])
        for h in sorted(hits[1:], reverse=True):
            del rects[h], members[h]
    changed = until_stable
    while changed:
        changed = False
        for g in range(len(rects)):
            others = np.array(rects).reshape(-1, 4)
            hits = _touching(rects[g], others, lambda_x, lambda_y)
            hits = hits[hits != g]
            if hits.size:
                group = [g, *hits.tolist()]
                stack = np.array([rects[h] for h in group])
                rects[g] = np.concatenate([stack[:, :2].min(0), stack[:, 2:].max(0)])
                members[g] = sorted(m for h in group for m in members[h])
                for h in sorted(hits.tolist(), reverse=True):
                    del rects[h], members[h]
                changed = True
                break
    order = sorted(range(len(members)), key=lambda g: members[g][0])
    group = np.empty(len(boxes), dtype=np.int64)
    for new, g in enumerate(order):
        group[members[g]] = new
    merged = np.array([rects[g] for g in order], dtype=np.int64).reshape(-1, 4)
    return group, merged


def _touching(box: np.ndarray, rects: np.ndarray, dx: float, dy: float) -> np.ndarray:
    """Indices of ``rects`` that the dilated ``box`` intersects (closed boxes)."""
    if rects.shape[0] == 0:
        return np.empty(0, dtype=np.int64)
    x0, y0, x1, y1 = box[0] - dx, box[1] - dy, box[2] + dx, box[3] + dy
    hit = (x0 <= rects[:, 2]) & (rects[:, 0] <= x1) & (y0 <= rects[:, 3]) & (rects[:, 1] <= y1)
    return np.flatnonzero(hit)


class MergeBoxes(Shift):
    """Merge word (or entity) boxes by dilation (Do-GOOD 3.3, Algorithm 1).

    Keeps text, labels, entities, links and pixels; every word takes the box
    of its merged group, which encloses the word's original box.

    Parameters
    ----------
    lambda_x : horizontal dilation distance λ1, in pixels (>= 0).
    lambda_y : vertical dilation distance λ2, in pixels (>= 0).
    level : ``"word"`` or ``"entity"``: which boxes are merged.
    until_stable : merge groups that grew into each other (default) or make one pass.
    """

    name = "merge"
    family = "layout"

    def __init__(self, lambda_x: float = 10, lambda_y: float = 5, level: str = "word", until_stable: bool = True):
        if lambda_x < 0 or lambda_y < 0:
            raise ValueError(f"dilation distances must be >= 0, got lambda_x={lambda_x}, lambda_y={lambda_y}")
        if level not in ("word", "entity"):
            raise ValueError(f"level must be 'word' or 'entity', got {level!r}")
        self.lambda_x = lambda_x
        self.lambda_y = lambda_y
        self.level = level
        self.until_stable = bool(until_stable)

    def apply(self, doc: Document, rng: np.random.Generator) -> Document:
        if not doc.words:
            raise SkipDocument("no words")
        if self.level == "word":
            unit_of_word = np.arange(len(doc.words))
            unit_boxes = doc.boxes
        else:
            unit_of_word, unit_boxes = _entity_units(doc)
        group, merged = merge_boxes(unit_boxes, self.lambda_x, self.lambda_y, until_stable=self.until_stable)
        new_boxes = merged[group[unit_of_word]]
        words = tuple(Word(w.text, tuple(int(v) for v in b)) for w, b in zip(doc.words, new_boxes))
        return doc.replace(words=words)


def _entity_units(doc: Document) -> tuple[np.ndarray, np.ndarray]:
    """Map words to units (entities in document order, then loose words) and unit boxes."""
    boxes = doc.boxes
    unit_of_word = np.full(len(doc.words), -1, dtype=np.int64)
    unit_boxes = []
    for ent in doc.entities:
        if ent.word_ids:
            ids = list(ent.word_ids)
            unit_of_word[ids] = len(unit_boxes)
            b = boxes[ids]
            unit_boxes.append([b[:, 0].min(), b[:, 1].min(), b[:, 2].max(), b[:, 3].max()])
    for i in np.flatnonzero(unit_of_word < 0):
        unit_of_word[i] = len(unit_boxes)
        unit_boxes.append(boxes[i].tolist())
    return unit_of_word, np.array(unit_boxes, dtype=np.int64).reshape(-1, 4)
