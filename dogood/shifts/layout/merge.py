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
  FUNSD-L recipe uses 10 and 5 on ~1000 px-tall FUNSD pages), or in
  LayoutLM's 0-1000 units with ``units="normalized"``.
- *Entity units* are the union of an entity's non-blank words, the segment
  box the output's ``bboxes`` give its tokens; an entity of blank words only
  (no token in the output) takes no part. Before funsd-l 2.1 blank words
  counted too: 152 FUNSD test tokens (1.7%) changed box at λ = 0 without
  merging with anything, and 62 invisible entities could bridge others.

``rule="repo"`` is what Do-GOOD's code does instead (MAEHCM/Do-GOOD:
``merge_layout.py`` on Tesseract word boxes in pixels, ±10/±5; ``aug_layout``
of the RVL-CDIP evaluation scripts on token boxes in 0-1000 units, ±70/±30):
boxes are read in order; each marks its region dilated by ``lambda_x`` and
``lambda_y``, *half-open* (``[x0 - λx, x1 + λx) x [y0 - λy, y1 + λy)``), with
its group's number, a later mark overwriting an earlier one; a box whose
corner ``(x0, y0)``, ``(x0, y1)``, ``(x1, y0)`` or ``(x1, y1)`` (tested in that
order) lies in a marked region joins the group marked there, else it starts
a group. One pass; groups are never united; every word takes the union of
its group's (undilated) boxes. The repo's bugs are fixed, not reproduced:

- *the last step* assigns word ``i`` the union box listed at position
  ``i`` of the group-ordered list (``merge_layout.py``; ``aug_layout``:
  position ``i - 1``), so only 59% of word boxes (44% of entity boxes on
  FUNSD test) would end with their own group's union; here each word takes
  its own group's;
- *a region near the left or top edge* (``x0 < λx`` or ``y0 < λy``) is a
  slice with a negative start, which marks nothing in the repo's flag array;
  here it is marked;
- *a box touching the right or bottom edge* has a corner outside the flag
  array (``IndexError`` in ``merge_layout.py``; ``aug_layout`` instead puts
  every box with ``x >= 970`` or ``y = 1000`` in the latest group without
  marking it); here such corners are tested like any other;
- *numpy >= 2* refuses the flag array's ``uint8`` fill of 100000
  (``OverflowError``); here no flag array is needed.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
from pydantic import Field
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from dogood.core.boxes import boxes_intersect, dilate_box, normalize_boxes
from dogood.core.document import Document
from dogood.core.papers import Cites
from dogood.shifts import params
from dogood.shifts.base import Shift, SkipDocument
from dogood.shifts.layout._relayout import with_boxes


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


def merge_boxes_repo(boxes: np.ndarray, lambda_x: float, lambda_y: float) -> tuple[np.ndarray, np.ndarray]:
    """Do-GOOD's code's single pass (``rule="repo"``, module docstring) on an ``(n, 4)`` array of boxes, in row order.

    Returns ``group`` (each box's group, numbered in order of creation, which is the order of each group's first
    box) and ``merged`` (the union of each group's boxes), as :func:`merge_boxes`.
    """
    boxes = np.asarray(boxes, dtype=np.int64).reshape(-1, 4)
    n = len(boxes)
    # the marked regions, half-open, in the order they were marked (a later one overwrites an earlier one)
    rx0, ry0 = boxes[:, 0] - lambda_x, boxes[:, 1] - lambda_y
    rx1, ry1 = boxes[:, 2] + lambda_x, boxes[:, 3] + lambda_y
    group = np.zeros(n, dtype=np.int64)
    groups = 0
    for i in range(n):
        x0, y0, x1, y1 = boxes[i]
        found = -1
        for cx, cy in ((x0, y0), (x0, y1), (x1, y0), (x1, y1)):
            inside = np.flatnonzero((rx0[:i] <= cx) & (cx < rx1[:i]) & (ry0[:i] <= cy) & (cy < ry1[:i]))
            if inside.size:
                found = int(group[inside[-1]])  # the last region marked over the corner
                break
        if found < 0:
            found, groups = groups, groups + 1
        group[i] = found
    return group, _unions(boxes, group)


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
                                                            "Algorithm 1's single pass; rule dogood only)")
        rule: Literal["dogood", "repo"] = Field("dogood", description=(
            "dogood: closed boxes, any intersection; repo: Do-GOOD's code (a corner inside a half-open dilated "
            "region, one pass, the group marked last there), its bugs fixed"))
        units: Literal["pixels", "normalized"] = Field("pixels", description=(
            "what lambda_x and lambda_y measure: pixels of the page, or LayoutLM's 0-1000 units (Do-GOOD's "
            "RVL-CDIP evaluation: 70 and 30)"))

    #: Added in 0.x with issue 38; at these values a config's seeds and provenance are what they were.
    later_params: ClassVar[dict] = {"rule": "dogood", "units": "pixels"}

    def card_notes(self, schema: str = "funsd") -> list[str]:
        unit = "in 0-1000 units" if self.units == "normalized" else "in pixels"
        if self.rule != "repo":
            return [] if self.units == "pixels" else [f"`merge`: dilation {self.lambda_x}/{self.lambda_y} {unit}."]
        return [f"`merge`, rule `repo`: Do-GOOD's code's merge loop (MAEHCM/Do-GOOD `merge_layout.py`, `aug_layout`), "
                f"dilation {self.lambda_x}/{self.lambda_y} {unit}: a box joins the group marked at the first of its "
                "corners inside a half-open dilated region, one pass. Matches the repo's groups; differs where the "
                "repo has bugs (each word takes its own group's union, not the one its last step's permutation "
                "gives; regions at the page's left or top edge are marked; boxes at the right or bottom edge are "
                "merged like any other), see docs/do-good.md."]

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
            active = slice(None)
        else:
            unit_of_word, unit_boxes, shown = _entity_units(doc)
            active = np.flatnonzero(shown)
        boxes = unit_boxes[active]
        scaled = boxes
        if self.units == "normalized":  # monotone, so groups found on 0-1000 boxes take unions of pixel boxes
            scaled = np.asarray(normalize_boxes(boxes, doc.width, doc.height), dtype=np.int64).reshape(-1, 4)
        if self.rule == "repo":
            group, merged = merge_boxes_repo(scaled, self.lambda_x, self.lambda_y)
        else:
            group, merged = merge_boxes(scaled, self.lambda_x, self.lambda_y, until_stable=self.until_stable)
        if scaled is not boxes:
            merged = _unions(boxes, group)
        final = unit_boxes.copy()
        final[active] = merged[group]
        new = final[unit_of_word]
        if self.level == "entity":  # a blank word is no token: it keeps its box
            blank = [i for i, w in enumerate(doc.words) if not w.text.strip()]
            new[blank] = doc.boxes[blank]
        return with_boxes(doc, new)


def _unions(boxes: np.ndarray, group: np.ndarray) -> np.ndarray:
    """The union of each group's ``boxes`` (groups numbered 0..k-1)."""
    k = int(group.max()) + 1 if len(group) else 0
    out = np.empty((k, 4), dtype=np.int64)
    out[:, :2] = np.iinfo(np.int64).max
    out[:, 2:] = np.iinfo(np.int64).min
    np.minimum.at(out[:, 0], group, boxes[:, 0])
    np.minimum.at(out[:, 1], group, boxes[:, 1])
    np.maximum.at(out[:, 2], group, boxes[:, 2])
    np.maximum.at(out[:, 3], group, boxes[:, 3])
    return out


def _entity_units(doc: Document) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Map words to units (entities in document order, then loose words); the unit boxes; which units are shown.

    An entity's unit box is the union of its non-blank words (the segment box of
    :func:`dogood.core.schema.token_boxes`). An entity whose words are all blank has no token in the output and
    takes no part in merging; neither do loose blank words. (Blank words keep their own boxes.)
    """
    boxes = doc.boxes
    unit_of_word = np.full(len(doc.words), -1, dtype=np.int64)
    unit_boxes, shown = [], []
    for ent in doc.entities:
        if ent.word_ids:
            ids = list(ent.word_ids)
            unit_of_word[ids] = len(unit_boxes)
            visible = [i for i in ids if doc.words[i].text.strip()]
            b = boxes[visible or ids]
            unit_boxes.append([b[:, 0].min(), b[:, 1].min(), b[:, 2].max(), b[:, 3].max()])
            shown.append(bool(visible))
    for i in np.flatnonzero(unit_of_word < 0):
        unit_of_word[i] = len(unit_boxes)
        unit_boxes.append(boxes[i].tolist())
        shown.append(bool(doc.words[i].text.strip()))
    return unit_of_word, np.array(unit_boxes, dtype=np.int64).reshape(-1, 4), np.array(shown, dtype=bool)
