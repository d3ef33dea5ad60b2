"""Value Location Augment: key-value pairs trade places on the page (form-attack paper, field-value augmentation)."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from dogood.core.document import Document, PageImage
from dogood.core.papers import Cites
from dogood.shifts import params
from dogood.shifts.base import Outcome, Shift, SkipDocument
from dogood.shifts.layout._relayout import changed_boxes, derangement, key_value_pairs, paste_words, with_boxes


class ValueLocationAugment(Shift):
    """Value Location Augment: key-value pairs trade places on the page (form-attack paper).

    Pairs are one-to-one linked key (``question``) and value (``answer``)
    entities (:func:`~dogood.shifts.layout._relayout.key_value_pairs`). As the paper does, only pairs with
    the same number of key words and the same number of value words trade:
    pairs are grouped by (key word count, value word count) and, within each
    group of two or more, permuted with no pair left in place (a random
    derangement). A pair moving to another's place gives its ``k``-th key
    word the box of that pair's ``k``-th key word, and likewise for value
    words, so the set of boxes is unchanged and the background stays as it
    is. The word order, texts, entity ids, labels and links are kept (the
    paper swaps box locations only).

    The paper edits OCR output and never the image; here, with
    ``move_pixels=True`` (default), each moved word's crop of the original
    page is pasted into its new box (resized with OpenCV when the boxes
    differ in size), so image and boxes agree. Moved words trade boxes, so
    every old box is covered by a pasted crop and no separate erasing is
    needed; ink reaching outside a box (FUNSD boxes are sometimes a few
    pixels tight) stays where it was. ``move_pixels=False`` changes the
    boxes only. Counts: ``pairs``, ``eligible`` (pairs in groups of two or
    more), ``moved`` (pairs that changed place), ``changed`` (words moved).

    No severity levels (:mod:`dogood.shifts.levels`): no parameter sets how much moves (every pair in a group of two
    or more trades places; ``move_pixels`` only says whether the pixels follow).

    Parameters: :class:`ValueLocationAugment.Params`.
    """

    name = "value_location_augment"
    reported_counts = ("pairs", "eligible", "moved", "changed")
    family = "layout"
    factors = frozenset({"box_position", "box_size", "ink"})
    papers = (Cites("form-attacks", "Field-value augmentation: Value Location Augment",
                    inspired_by="the paper swaps OCR box locations only; with move_pixels the words' pixels are "
                                "pasted into their new boxes too"),)

    label_params = ("key_labels", "value_labels")

    class Params(params.Params):
        key_labels: params.Names = Field(("question",), description="entity labels that are keys")
        value_labels: params.Names = Field(("answer",), description="entity labels that are values")
        move_pixels: params.Flag = Field(True, description="move the words' pixels with their boxes")

    def apply(self, doc: Document, rng: np.random.Generator):
        if not doc.words:
            raise SkipDocument("no words")
        pairs = key_value_pairs(doc, self.key_labels, self.value_labels)
        ents = doc.entities
        groups: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for k, v in pairs:
            groups.setdefault((len(ents[k].word_ids), len(ents[v].word_ids)), []).append((k, v))
        old = doc.boxes
        new = old.copy()
        eligible = moved = 0
        for members in groups.values():
            if len(members) < 2:
                continue
            eligible += len(members)
            for (k, v), to in zip(members, derangement(len(members), rng)):
                tk, tv = members[int(to)]
                for a, b in ((k, tk), (v, tv)):
                    new[list(ents[a].word_ids)] = old[list(ents[b].word_ids)]
                moved += 1
        counts = {"pairs": len(pairs), "eligible": eligible, "moved": moved, "changed": changed_boxes(old, new)}
        if not moved:
            return Outcome(doc, counts)
        changes = {}
        if self.move_pixels:
            source = doc.image.to_array()
            pixels = np.array(source)
            paste_words(pixels, source, [(old[i], new[i]) for i in np.flatnonzero((old != new).any(axis=1))])
            changes["image"] = PageImage.from_array(pixels)
        return Outcome(with_boxes(doc, new, **changes), counts)
