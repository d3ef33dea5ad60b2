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

from typing import ClassVar, Literal

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from pydantic import Field

from dogood.core.boxes import boxes_intersect, dilate_box
from dogood.core.document import Document
from dogood.shifts.layout._relayout import with_boxes
from dogood.core.papers import Cites
from dogood.shifts import params
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
    if until_stable:
        return _merge_until_stable(boxes, lambda_x, lambda_y)
    n = len(boxes)
    rect = boxes.copy()  # rect[g]: union box of group g, valid where alive[g]
    alive = np.zeros(n, dtype=bool)
    owner = np.arange(n)  # owner[i]: the group box i was merged into (followed to a live group)
    for i in range(n):
        hits = np.flatnonzero(alive & _touching(boxes[i], rect, lambda_x, lambda_y))
        alive[i] = True
        if hits.size:
            _absorb(i, hits, rect, alive, owner)
    root = owner.copy()
    while True:  # follow merges to the live group
        nxt = owner[root]
        if (nxt == root).all():
            break
        root = nxt
    return _numbered(root, rect)


def _merge_until_stable(boxes: np.ndarray, dx: float, dy: float) -> tuple[np.ndarray, np.ndarray]:
    """The fixed point of Algorithm 1's merging, computed on whole arrays.

    Groups only grow, so two groups that touch once touch forever and every
    order of merges ends in the same partition: the connected components of
    "dilated boxes touch", recomputed on the groups' union boxes until no two
    groups touch.
    """
    group = np.arange(len(boxes))
    rect = boxes
    while True:
        touch = boxes_intersect(dilate_box(rect.T[:, :, None], dx, dy), rect.T[:, None, :])  # (groups, groups)
        k, label = connected_components(csr_matrix(touch), directed=False)
        if k == len(rect):
            break
        group = label[group]
        rect = np.empty((k, 4), dtype=np.int64)
        rect[:, :2] = np.iinfo(np.int64).max
        rect[:, 2:] = np.iinfo(np.int64).min
        np.minimum.at(rect[:, 0], group, boxes[:, 0])
        np.minimum.at(rect[:, 1], group, boxes[:, 1])
        np.maximum.at(rect[:, 2], group, boxes[:, 2])
        np.maximum.at(rect[:, 3], group, boxes[:, 3])
    return _numbered(group, rect, by_index=True)


def _numbered(root: np.ndarray, rect: np.ndarray, by_index: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Renumber groups in order of their first box; ``rect`` indexed by root (or by group id)."""
    roots, first, inverse = np.unique(root, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank[inverse], rect[roots[order]].reshape(-1, 4)


def _absorb(g: int, hits: np.ndarray, rect: np.ndarray, alive: np.ndarray, owner: np.ndarray) -> None:
    """Merge groups ``hits`` into group ``g``."""
    stack = rect[np.append(hits, g)]
    rect[g, :2] = stack[:, :2].min(0)
    rect[g, 2:] = stack[:, 2:].max(0)
    alive[hits] = False
    owner[hits] = g


def _touching(box: np.ndarray, rects: np.ndarray, dx: float, dy: float) -> np.ndarray:
    """Mask of ``rects`` that the dilated ``box`` intersects (closed boxes)."""
    return boxes_intersect(dilate_box(box, dx, dy), rects.T)


class MergeBoxes(Shift):
    """Merge word (or entity) boxes by dilation (Do-GOOD 3.3, Algorithm 1).

    Keeps text, labels, entities, links and pixels; every word takes the box
    of its merged group, which encloses the word's original box. What the
    paper leaves open and what we chose: see the module docstring.

    Parameters: :class:`MergeBoxes.Params`.

    Box conventions (``box_level`` of the build): under ``word`` boxes, use
    ``level="word"``: each token gets its merged block's box (the paper's
    Figure 2e). Under ``segment`` boxes (Do-GOOD's Table 2 models, which use
    cell-level layout), use ``level="entity"``: segments are the units, and
    every token gets the box of its merged group of segments. ``level="word"``
    under ``segment`` boxes is refused: each segment would become the union of
    its words' blocks, a mix of both conventions that the paper never used.
    """

    name = "merge"
    reported_counts = ()
    family = "layout"
    factors = frozenset({"box_position", "box_size"})
    #: Severity levels (:mod:`dogood.shifts.levels`): the dilation (λ1, λ2) in pixels, level 2 the FUNSD-L recipe's;
    #: measured by the mean box displacement (merged boxes grow: their edges move out).
    severities: ClassVar[dict[int, dict]] = {1: {"lambda_x": 5, "lambda_y": 2}, 2: {"lambda_x": 10, "lambda_y": 5},
                                             3: {"lambda_x": 20, "lambda_y": 10}, 4: {"lambda_x": 40, "lambda_y": 20},
                                             5: {"lambda_x": 80, "lambda_y": 40}}
    papers = (Cites("do-good", "3.3, Algorithm 1 (merge boxes by dilation)"),)
    box_levels = {
        "word": "each token gets the box of its merged group (level: word merges word boxes, level: entity segments)",
        "segment": "segments merge (level: entity): each token gets the box of its merged group of segments",
    }

    class Params(params.Params):
        lambda_x: params.Number = Field(10, ge=0, description="horizontal dilation distance λ1, in pixels (the "
                                                              "paper gives none)")
        lambda_y: params.Number = Field(5, ge=0, description="vertical dilation distance λ2, in pixels")
        level: Literal["word", "entity"] = Field("word", description="which boxes are merged: word boxes or "
                                                                     "entity (segment) boxes")
        until_stable: params.Flag = Field(True, description="merge groups that grew into each other (false: "
                                                            "Algorithm 1's single pass)")

    def check_box_level(self, box_level: str) -> None:
        super().check_box_level(box_level)
        if box_level == "segment" and self.level != "entity":
            raise ValueError("merge with level: word merges word boxes, which segment boxes would then re-unite per "
                             "entity; under box_level segment use level: entity (segments merge), or build with "
                             "box_level word")

    def apply(self, doc: Document, rng: np.random.Generator) -> Document:
        if not doc.words:
            raise SkipDocument("no words")
        if self.level == "word":
            unit_of_word = np.arange(len(doc.words))
            unit_boxes = doc.boxes
        else:
            unit_of_word, unit_boxes = _entity_units(doc)
        group, merged = merge_boxes(unit_boxes, self.lambda_x, self.lambda_y, until_stable=self.until_stable)
        return with_boxes(doc, merged[group[unit_of_word]])


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
