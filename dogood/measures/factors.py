"""What a chain changed, factor by factor: the fixed vocabulary shifts declare, and one measure per factor.

Do-GOOD's promise is that an OOD set differs from its source by one named factor. Every shift declares the
factors it may change (:attr:`dogood.shifts.base.Shift.factors`, from :data:`FACTORS`); every build measures every
factor of every config against the source, per document, as whole numbers that add up over documents in any order
(``{"text": {"changed": 9, "of": 120}, ...}``, summed into the build's statistics like its counts), and the card
sets the measured shares beside the declarations. A factor measured beyond its tolerance (:data:`TOLERANCE`) that
no step of the config declares is a build warning.

The factors and how each is measured (:func:`measure_factors`; the unit of each share in brackets):

``text`` [paired words]
    the word's text differs from its source word's.
``word_order`` [paired words]
    the word left its place in the order of the word sequence (the tokens a model reads): the paired words not in
    a longest run of words kept in source order (a longest increasing subsequence), so a dropped or inserted word
    moves no other word.
``word_set`` [source words and inserted words]
    words removed (a source word with no counterpart) or inserted (an output word with none).
``box_position`` [paired words]
    the box's centre moved by a pixel or more on the page (in the page's pixels; every box of a padded or warped
    page moves).
``box_size`` [paired words]
    the box's size and looseness: its area over the area of its word's ink changed by more than 10% either way.
    Where the page's geometry is unchanged the word's ink is where it was, so this is the box's area ratio; on a
    page whose geometry changed it is the looseness (box area over the bounding box of the ink inside it, by
    Otsu within the box: :func:`dogood.measures.box_ink.looseness`'s ratio, read off the ink cores the other
    measures share) on the shifted page over the one on the source page.
``reading_order`` [entities kept]
    the entity structure a reader of entities and relations sees, as opposed to the word sequence: an entity's
    place in the order of the entities, the order of its kept words within it, and its links to the other kept
    entities. Shuffling the word sequence (``global_shuffle``) leaves it alone: each entity keeps its words in
    their order; OCR that regroups the words (``reocr``) changes it.
``ink`` [paired words]
    the pixels inside the word's box differ from the source's by more than 8 grey levels on average: compared where
    the box now is when it kept its size (a word whose box and ink moved together, ``move`` or ``margin_padding``,
    keeps its ink), where it was when it was resized on a page whose geometry is unchanged (``merge``, ``reocr``:
    the pixels stayed), and scaled to the source box's size on a warped page.
``background`` [pixels]
    the pixels outside every word box (source and shifted boxes, grown by 2 pixels) that changed by more than 32
    grey levels, on pages whose pixels can be laid over the source's (the same size, or padded: every word moved
    by one offset); margins a page gained are geometry, not background.
``geometry`` [pages]
    the page's size changed, or its content was displaced: at least half of the page's inked tiles (192 pixels
    square) match the source best at an offset of 2 pixels or more (OpenCV's normalised cross-correlation,
    searched 48 pixels around) and most of the words' full ink is no longer where it was (more than 64 grey
    levels off), as a warp or a photograph of the page does. (A page whose background was replaced keeps its
    words' ink in place, even where its tiles no longer match anything; on a page without word ink, a displaced
    tile must match with a correlation above 0.5.)
``quality`` [pages]
    the page was imaged differently (blur, noise, contrast, fading): the median over the page's words (with 8
    pixels of full ink or more, and whose box stayed as it was unless the page's geometry changed: a word moved
    or resized by a layout shift is that shift's) of the mean change of the source's full ink (the pixels as dark
    as the word's ink, :func:`dogood.page.ink.ink_full_mask`) in the word's box crop exceeds 12 grey levels. A change of most words' ink is a property of the page, not of some
    words: redrawing a tenth of the words, or replacing the paper around the ink, leaves it alone. On a page
    whose geometry changed the crops cannot be laid pixel for pixel over each other, so quality reads as changed
    there too (warping a page also resamples it).

Written by hand: no library measures what a document shift changed, factor by factor.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dogood.core.document import Document

#: The factors a shift may change, in the order the card shows them.
FACTORS = ("text", "word_order", "word_set", "box_position", "box_size", "reading_order", "ink", "background",
           "geometry", "quality")

#: What each factor is, in a few words (the card's column heads and ``dogood describe``).
FACTOR_HELP = {
    "text": "word text",
    "word_order": "order of the word sequence",
    "word_set": "words removed or inserted",
    "box_position": "box positions",
    "box_size": "box size and looseness (box area over its ink's)",
    "reading_order": "entity order, the words' order within entities, links",
    "ink": "pixels inside word boxes",
    "background": "pixels outside word boxes",
    "geometry": "page geometry (size, warp)",
    "quality": "image quality (blur, noise, contrast)",
}

#: The unit each factor's share counts.
UNITS = {"text": "paired words", "word_order": "paired words", "word_set": "source and inserted words",
         "box_position": "paired words", "box_size": "paired words", "reading_order": "entities kept",
         "ink": "paired words", "background": "pixels outside boxes", "geometry": "pages", "quality": "pages"}

#: A factor changed when the share of its units that changed exceeds this.
TOLERANCE = {"text": 0.001, "word_order": 0.001, "word_set": 0.001, "box_position": 0.001, "box_size": 0.005,
             "reading_order": 0.001, "ink": 0.005, "background": 0.005, "geometry": 0.02, "quality": 0.02}

#: What a model must be given to see a change of the factor (``Model.sees``: ``text``, ``layout``, ``image``).
#: ``reading_order`` changes which words form an entity, so the gold tags: every model meets it.
SEEN_WITH = {"text": {"text"}, "word_order": {"text", "layout"}, "word_set": {"text", "layout"},
             "box_position": {"layout"}, "box_size": {"layout"}, "reading_order": {"text", "layout", "image"},
             "ink": {"image"}, "background": {"image"}, "geometry": {"image"}, "quality": {"image"}}

# thresholds of the measures (module docstring)
BOX_SIZE_RATIO = 1.1
INK_LEVELS = 8
BACKGROUND_LEVELS = 32
QUALITY_LEVELS = 12
TILE = 192
TILE_REACH = 48
TILE_SHIFT = 2
MIN_CORE = 8


def check_factors(names: Iterable[str], where: str = "") -> frozenset[str]:
    """``names`` as a frozenset, refusing a name outside :data:`FACTORS` (``ValueError`` naming ``where``; a
    string: ``TypeError``)."""
    if isinstance(names, str):
        raise TypeError(f"{where}factors must be a set of factor names, not the string {names!r}")
    out = frozenset(names)
    unknown = sorted(out - set(FACTORS))
    if unknown:
        raise ValueError(f"{where}unknown factor(s) {', '.join(unknown)}; the factors are {', '.join(FACTORS)}")
    return out


# -- pairing the words ------------------------------------------------------------------------------------------------

@dataclass
class Pairing:
    """Which output word is which source word: ``pairs`` ``(source index, output index)`` in source order, the
    source words with no counterpart (``removed``) and the output words with none (``inserted``)."""

    pairs: list[tuple[int, int]]
    removed: list[int]
    inserted: list[int]


def pair_words(original: Document, shifted: Document) -> Pairing:
    """Pair the output's words with the source's (the record keeps no correspondence through a chain).

    Two readings are made and the one that explains the output with fewer changes wins (:func:`_cost`: a text or
    box changed, a word removed or inserted, twice a word out of place in the sequence):

    - by content (each word only with one of its own entity, which shifts keep): words equal in text and box pair first (whatever their place: a shuffle), then words whose text
      is gone from the other side pair by box (their text changed in place), words whose box is gone pair by text
      (they moved), and words that traded texts or boxes with each other (both are still on the other side) by
      text, or by box where that costs less (a word keeps its box when texts trade over boxes);
    - by sequence (only when the first leaves a few words out of place in an otherwise ordered sequence, at most
      a tenth: a shuffle's order is its own): :class:`difflib.SequenceMatcher` runs of equal
      texts (and entities) pair in place first (words of equal text that traded boxes keep their place), the rest as above.

    What is left pairs by position within the runs difflib aligns, within each entity; unpaired words were removed or inserted. In a
    sequence whose order was kept (at most a tenth of the pairs out of place), a pair that is changed, out of place
    and went from a box no output word keeps to a box no source word had is read as a word removed and another
    inserted (``negation`` deletes one "not" and inserts another).
    """
    a, b = original.words, shifted.words
    if len(a) == len(b) and all(x == y for x, y in zip(a, b)):
        return Pairing([(i, i) for i in range(len(a))], [], [])
    ea, eb = _entity_of(original), _entity_of(shifted)
    exact = _match(range(len(a)), range(len(b)), lambda i: (a[i].text, a[i].box, ea[i]),
                   lambda j: (b[j].text, b[j].box, eb[j]))
    oa, ob = _place_in_entity(original), _place_in_entity(shifted)
    best = _pair_rest(a, b, ea, eb, exact, oa, ob)
    if 0 < _out_of_place(best) <= len(best) / 10:  # a few crossings in an ordered sequence (not a shuffle)
        from difflib import SequenceMatcher

        matcher = SequenceMatcher(None, [(w.text, e) for w, e in zip(a, ea)], [(w.text, e) for w, e in zip(b, eb)],
                                  autojunk=False)
        runs = {i0 + k: j0 + k for i0, j0, n in matcher.get_matching_blocks() for k in range(n)}
        other = _pair_rest(a, b, ea, eb, runs, oa, ob)
        if _cost(a, b, other) <= _cost(a, b, best):
            best = other
    out_of_place = _out_of_place(best)
    if 0 < out_of_place <= len(best) / 10:  # an ordered sequence: a word out of place that went from a box no word
        keep = _increasing_members([(i, best[i]) for i in sorted(best)])  # keeps to a fresh one was removed, another
        boxes_a, boxes_b = {w.box for w in a}, {w.box for w in b}          # inserted (not a trade of boxes)
        best = {i: j for i, j in best.items()
                if i in keep or a[i] == b[j] or a[i].box in boxes_b or b[j].box in boxes_a}
    used = set(best.values())
    return Pairing(sorted(best.items()), [i for i in range(len(a)) if i not in best],
                   [j for j in range(len(b)) if j not in used])


def _place_in_entity(doc: Document) -> dict[int, int]:
    return {i: k for ent in doc.entities for k, i in enumerate(ent.word_ids)}


def _entity_of(doc: Document) -> list[int | None]:
    owner: list[int | None] = [None] * len(doc.words)
    for ent in doc.entities:
        for i in ent.word_ids:
            owner[i] = ent.id
    return owner


def _pair_rest(a, b, ea, eb, pairs: dict[int, int], order_a: dict[int, int], order_b: dict[int, int]
               ) -> dict[int, int]:
    """``pairs`` completed by the content rules of :func:`pair_words` (within an entity: ``ea``, ``eb`` the entity
    of each word; ``order_a``, ``order_b`` each word's place in its entity), then by position in difflib's runs."""
    pairs = dict(pairs)
    taken = set(pairs.values())
    # each side in its entities' own word order (which shuffles keep), so equal keys pair in that order
    rest_a = sorted((i for i in range(len(a)) if i not in pairs), key=lambda i: order_a.get(i, i))
    rest_b = sorted((j for j in range(len(b)) if j not in taken), key=lambda j: order_b.get(j, j))
    by_text = (lambda i: (a[i].text, ea[i]), lambda j: (b[j].text, eb[j]))
    by_box = (lambda i: (a[i].box, ea[i]), lambda j: (b[j].box, eb[j]))
    # words whose text is gone from the other side changed their text in place; words whose box is gone moved
    for (key_a, key_b), (other_a, other_b) in ((by_box, by_text), (by_text, by_box)):
        seen_a, seen_b = {other_a(i) for i in rest_a}, {other_b(j) for j in rest_b}
        found = _match([i for i in rest_a if other_a(i) not in seen_b], [j for j in rest_b if other_b(j) not in seen_a],
                       key_a, key_b)
        pairs.update(found)
        used = set(found.values())
        rest_a = [i for i in rest_a if i not in found]
        rest_b = [j for j in rest_b if j not in used]
    # words that traded texts or boxes with each other: by text, unless by box costs less
    trials = []
    for keys in ((by_text, by_box), (by_box, by_text)):
        trial = dict(pairs)
        left_a, left_b = rest_a, rest_b
        for key_a, key_b in keys:
            found = _match(left_a, left_b, key_a, key_b)
            trial.update(found)
            used = set(found.values())
            left_a = [i for i in left_a if i not in found]
            left_b = [j for j in left_b if j not in used]
        trials.append((trial, left_a, left_b))
    (by_texts, *_), (by_boxes, *_) = trials
    chosen = trials[1] if _cost(a, b, by_boxes) < _cost(a, b, by_texts) else trials[0]
    pairs, rest_a, rest_b = chosen
    if rest_a and rest_b:
        from difflib import SequenceMatcher

        for entity in dict.fromkeys(ea[i] for i in rest_a):  # an entity's words in its own order (kept by shuffles)
            mine = sorted((i for i in rest_a if ea[i] == entity), key=lambda i: order_a.get(i, i))
            theirs = sorted((j for j in rest_b if eb[j] == entity), key=lambda j: order_b.get(j, j))
            matcher = SequenceMatcher(None, [a[i].text for i in mine], [b[j].text for j in theirs], autojunk=False)
            for _op, i0, i1, j0, j1 in matcher.get_opcodes():
                for i, j in zip(range(i0, i1), range(j0, j1)):
                    pairs[mine[i]] = theirs[j]
    return pairs


def _out_of_place(pairs: dict[int, int]) -> int:
    """Paired words outside a longest run kept in source order."""
    return len(pairs) - _longest_increasing([pairs[i] for i in sorted(pairs)])


def _cost(a, b, pairs: dict[int, int]) -> float:
    """How much a pairing says changed: texts and boxes changed, words removed and inserted, and twice the words
    out of place."""
    changed = sum((a[i].text != b[j].text) + (a[i].box != b[j].box) for i, j in pairs.items())
    return changed + (len(a) - len(pairs)) + (len(b) - len(pairs)) + 2 * _out_of_place(pairs)


def _match(left, right, key_a, key_b) -> dict[int, int]:
    """Pair ``left`` with ``right`` items of equal key, each key's items in order."""
    waiting: dict[Any, list[int]] = defaultdict(list)
    for j in right:
        waiting[key_b(j)].append(j)
    found = {}
    for i in left:
        queue = waiting.get(key_a(i))
        if queue:
            found[i] = queue.pop(0)
    return found


def _longest_increasing(values: list[int]) -> int:
    """Length of the longest strictly increasing subsequence of ``values`` (patience sorting)."""
    tails: list[int] = []
    for v in values:
        k = bisect_left(tails, v)
        if k == len(tails):
            tails.append(v)
        else:
            tails[k] = v
    return len(tails)


# -- the pages ------------------------------------------------------------------------------------------------------

class SourcePage:
    """What the measures read of a source page, computed once per document however many configs are compared with
    it: the page in grey, its ink cores (:func:`dogood.page.ink.ink_core_mask`) and its full ink
    (:func:`dogood.page.ink.ink_full_mask`: the pixels as dark as their word's ink, which no compositing of the
    paper touches)."""

    def __init__(self, original: Document):
        self.original = original
        self._gray = self._core = self._deep = self._outside = self._bounds = None

    @property
    def gray(self) -> np.ndarray:
        if self._gray is None:
            from dogood.page.ink import gray

            self._gray = gray(self.original.image.to_array())
        return self._gray

    @property
    def core(self) -> np.ndarray:
        """The source's ink cores (:func:`dogood.page.ink.ink_core_mask`)."""
        if self._core is None:
            self._masks()
        return self._core

    def outside_boxes(self, boxes: np.ndarray, offset: tuple[int, int]) -> np.ndarray:
        """The source page's pixels outside its word boxes and ``boxes`` (of the shifted page, laid back by
        ``offset``), all grown by 2 pixels."""
        if self._outside is None:
            self._outside = _outside(self.gray.shape, self.original.boxes, (0, 0))
        boxes = np.asarray(boxes, np.int64).reshape(-1, 4) - np.array([*offset, *offset])
        own = {tuple(b) for b in self.original.boxes.tolist()}
        extra = [b for b in boxes.tolist() if tuple(b) not in own]
        return self._outside if not extra else self._outside & _outside(self.gray.shape, extra, (0, 0))

    def ink_bounds(self) -> np.ndarray:
        """Per source word, the bounds of its ink cores (:func:`dogood.page.warp.ink_bounds`), computed once for
        every config."""
        if self._bounds is None:
            from dogood.page.warp import ink_bounds

            self._bounds = ink_bounds(self.core, self.original.boxes)
        return self._bounds

    @property
    def deep(self) -> np.ndarray:
        """The source's full ink (:func:`dogood.page.ink.ink_full_mask`)."""
        if self._deep is None:
            self._masks()
        return self._deep

    def _masks(self) -> None:
        from dogood.page.ink import ink_full_mask

        if self.original.words:
            self._core, self._deep = ink_full_mask(self.gray, self.original.boxes)
        else:
            self._core = self._deep = np.zeros(self.gray.shape, bool)


class Comparison:
    """A source document and its shifted copy, with what the measures share: the word pairing, the pages in grey,
    the offset that lays the shifted page over the source's, the per-word pixel changes. Built lazily, once."""

    def __init__(self, original: Document, shifted: Document, source: SourcePage | None = None):
        self.original, self.shifted = original, shifted
        self.source = source if source is not None and source.original is original else SourcePage(original)
        self._pairing: Pairing | None = None
        self._pixels: dict[str, Any] | None = None
        self._changed: bool | None = None
        self._geometry: bool | None = None
        self._words: dict[tuple[int, int], tuple[float, float, int]] | None = None
        #: The pairs whose box stayed as it was (laid over by the page's offset), found by :meth:`word_changes`.
        self.kept_boxes: set[tuple[int, int]] = set()

    @property
    def pairing(self) -> Pairing:
        if self._pairing is None:
            self._pairing = pair_words(self.original, self.shifted)
        return self._pairing

    @property
    def image_changed(self) -> bool:
        """Whether the shifted page's pixels differ from the source's."""
        if self._changed is None:
            a, b = self.original.image, self.shifted.image
            if a is b:
                self._changed = False
            elif (a.width, a.height) != (b.width, b.height):
                self._changed = True
            elif not a.modified and not b.modified and a.path is not None and a.path == b.path:
                self._changed = False
            else:
                self._changed = not np.array_equal(a.to_array(), b.to_array())
        return self._changed

    @property
    def pixels(self) -> dict[str, Any]:
        """``g0``, ``g1`` (grey pages), ``offset`` (where the source's origin lies on the shifted page, or ``None``
        when no one offset lays them over each other), ``size_changed``, ``diff`` (the absolute difference of the
        pages laid over each other; ``None`` without an offset)."""
        if self._pixels is None:
            import cv2

            from dogood.page.ink import gray

            g0 = self.source.gray
            g1 = gray(self.shifted.image.to_array())
            size_changed = g0.shape != g1.shape
            offset = (0, 0) if not size_changed else self._translation(g0.shape, g1.shape)
            diff = None
            if offset is not None:
                h, w = g0.shape
                diff = cv2.absdiff(g0, np.ascontiguousarray(g1[offset[1]:offset[1] + h, offset[0]:offset[0] + w]))
            self._pixels = {"g0": g0, "g1": g1, "offset": offset, "size_changed": size_changed, "diff": diff}
        return self._pixels

    def _translation(self, shape0, shape1) -> tuple[int, int] | None:
        """The one offset by which nine in ten paired words moved with their box's size kept (a padded page)."""
        moves = Counter()
        a, b = self.original.words, self.shifted.words
        for i, j in self.pairing.pairs:
            (x0, y0, x1, y1), (u0, v0, u1, v1) = a[i].box, b[j].box
            if (x1 - x0, y1 - y0) == (u1 - u0, v1 - v0):
                moves[(u0 - x0, v0 - y0)] += 1
        if not moves:
            return None
        (dx, dy), n = moves.most_common(1)[0]
        h0, w0 = shape0
        h1, w1 = shape1
        if n < 0.9 * len(self.pairing.pairs) or dx < 0 or dy < 0 or dx + w0 > w1 or dy + h0 > h1:
            return None
        return dx, dy

    def word_changes(self) -> dict[tuple[int, int], tuple[float, float, int]]:
        """Per pair of words with boxes: the mean absolute change of the box's pixels, the mean absolute change of
        the source's full ink in it, and how many such pixels there are. A box of the source's size is compared
        where it now is (a word moved with its pixels); a box resized on a page whose geometry did not change is
        compared where the source's was (the pixels stayed, the box changed); on a warped page the shifted box's
        crop is scaled to the source box's size."""
        if self._words is None:
            import cv2

            p = self.pixels
            a, b = self.original.words, self.shifted.words
            deep = self.source.deep
            out: dict[tuple[int, int], tuple[float, float, int]] = {}
            in_place, elsewhere = [], []
            off = p["offset"]
            for i, j in self.pairing.pairs:
                (x0, y0, x1, y1), (u0, v0, u1, v1) = a[i].box, b[j].box
                if x1 <= x0 or y1 <= y0 or u1 <= u0 or v1 <= v0:
                    continue
                if off is not None and (u0 - x0, v0 - y0, u1 - x1, v1 - y1) == (off[0], off[1], off[0], off[1]):
                    in_place.append((i, j))
                    self.kept_boxes.add((i, j))
                elif off is not None and (u1 - u0, v1 - v0) != (x1 - x0, y1 - y0) and not geometry_changed(self):
                    in_place.append((i, j))  # a box resized on a page that was not warped: its pixels stayed
                else:
                    elsewhere.append((i, j))
            diff = p["diff"]
            for i, j in in_place:
                x0, y0, x1, y1 = a[i].box
                d = diff[y0:y1, x0:x1]
                core = deep[y0:y1, x0:x1]
                n = int(np.count_nonzero(core))
                out[(i, j)] = (float(d.mean()), float(d[core].mean()) if n else 0.0, n)
            for i, j in elsewhere:
                (x0, y0, x1, y1), (u0, v0, u1, v1) = a[i].box, b[j].box
                c0 = p["g0"][y0:y1, x0:x1]
                c1 = p["g1"][v0:v1, u0:u1]
                if c1.shape != c0.shape:
                    shrink = c1.size > c0.size
                    c1 = cv2.resize(np.ascontiguousarray(c1), (c0.shape[1], c0.shape[0]),
                                    interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)
                d = cv2.absdiff(np.ascontiguousarray(c0), c1)
                core = deep[y0:y1, x0:x1]
                n = int(core.sum())
                out[(i, j)] = (float(d.mean()), float(d[core].mean()) if n else 0.0, n)
            self._words = out
        return self._words


# -- one measure per factor: (changed, of) ----------------------------------------------------------------------------

def measure_text(c: Comparison) -> tuple[int, int]:
    a, b = c.original.words, c.shifted.words
    pairs = c.pairing.pairs
    return sum(a[i].text != b[j].text for i, j in pairs), len(pairs)


def measure_word_order(c: Comparison) -> tuple[int, int]:
    pairs = c.pairing.pairs
    return len(pairs) - _longest_increasing([j for _, j in pairs]), len(pairs)


def measure_word_set(c: Comparison) -> tuple[int, int]:
    p = c.pairing
    return len(p.removed) + len(p.inserted), len(c.original.words) + len(p.inserted)


def measure_box_position(c: Comparison) -> tuple[int, int]:
    pairs = c.pairing.pairs
    if not pairs:
        return 0, 0
    i, j = np.array(pairs, np.int64).T
    b0, b1 = c.original.boxes[i], c.shifted.boxes[j]
    centres = np.abs((b1[:, :2] + b1[:, 2:]) - (b0[:, :2] + b0[:, 2:]))  # twice the centres' moves
    return int((centres >= 2).any(axis=1).sum()), len(pairs)


def measure_box_size(c: Comparison) -> tuple[int, int]:
    pairs = c.pairing.pairs
    if not pairs:
        return 0, 0
    i, j = np.array(pairs, np.int64).T
    b0, b1 = c.original.boxes[i], c.shifted.boxes[j]
    area0 = (np.maximum(b0[:, 2] - b0[:, 0], 0) * np.maximum(b0[:, 3] - b0[:, 1], 0)).astype(np.float64)
    area1 = (np.maximum(b1[:, 2] - b1[:, 0], 0) * np.maximum(b1[:, 3] - b1[:, 1], 0)).astype(np.float64)
    ratio = (area1 + 1) / (area0 + 1)
    if c.image_changed and geometry_changed(c):  # the looseness: box area over its ink's, on each page
        from dogood.page.ink import ink_full_mask
        from dogood.page.warp import ink_bounds

        ink0 = _bounds_area(c.source.ink_bounds()[i])
        ink = _bounds_area(ink_bounds(ink_full_mask(c.pixels["g1"], c.shifted.boxes)[0], b1))
        ok = (ink0 > 0) & (ink > 0)
        ratio[ok] = (area1[ok] / ink[ok]) / np.maximum(area0[ok] / ink0[ok], 1e-9)
    return int(((ratio < 1 / BOX_SIZE_RATIO) | (ratio > BOX_SIZE_RATIO)).sum()), len(pairs)


def measure_reading_order(c: Comparison) -> tuple[int, int]:
    src, out = c.original, c.shifted
    if not src.entities:
        return 0, 0
    where = {j: i for i, j in c.pairing.pairs}  # output word -> source word
    after = {e.id: e for e in out.entities}
    kept = [e for e in src.entities if e.id in after and any(w in where for w in after[e.id].word_ids)]
    if not kept:
        return 0, 0
    kept_ids = {e.id for e in kept}
    rank = {e.id: k for k, e in enumerate(e for e in out.entities if e.id in kept_ids)}
    in_place = _longest_increasing([rank[e.id] for e in kept])
    ordered = set()
    if in_place == len(kept):
        ordered = kept_ids
    else:  # which entities are out of place: those outside one longest increasing run
        ordered = _increasing_members([(e.id, rank[e.id]) for e in kept])
    changed = 0
    for e in kept:
        mine = [w for w in e.word_ids]
        theirs = [where[w] for w in after[e.id].word_ids if w in where]
        paired_src = set(where.values())
        mine = [w for w in mine if w in paired_src]
        links0 = {tuple(p) for p in e.links if p[0] in kept_ids and p[1] in kept_ids}
        links1 = {tuple(p) for p in after[e.id].links if p[0] in kept_ids and p[1] in kept_ids}
        changed += e.id not in ordered or mine != theirs or links0 != links1
    return changed, len(kept)


def measure_ink(c: Comparison) -> tuple[int, int]:
    pairs = c.pairing.pairs
    if not pairs:
        return 0, 0
    i, j = np.array(pairs, np.int64).T
    b0, b1 = c.original.boxes[i], c.shifted.boxes[j]
    boxed = int(((b0[:, 2] > b0[:, 0]) & (b0[:, 3] > b0[:, 1]) & (b1[:, 2] > b1[:, 0]) & (b1[:, 3] > b1[:, 1])).sum())
    if not c.image_changed:
        return 0, boxed
    return sum(mean > INK_LEVELS for mean, _, _ in c.word_changes().values()), boxed


def measure_background(c: Comparison) -> tuple[int, int]:
    import cv2

    if not c.image_changed:
        return 0, int(c.source.outside_boxes(c.shifted.boxes, (0, 0)).sum())
    p = c.pixels
    if p["offset"] is None:
        return 0, 0
    mask = c.source.outside_boxes(c.shifted.boxes, p["offset"])
    return int(cv2.countNonZero(((p["diff"] > BACKGROUND_LEVELS) & mask).view(np.uint8))), int(mask.sum())


def measure_geometry(c: Comparison) -> tuple[int, int]:
    return int(c.image_changed and geometry_changed(c)), 1


def measure_quality(c: Comparison) -> tuple[int, int]:
    if not c.image_changed:
        return 0, 1
    words = c.word_changes()
    every = geometry_changed(c)  # on a warped page every box moved with its word; elsewhere, the words left alone
    changes = [core for key, (_, core, n) in words.items() if n >= MIN_CORE and (every or key in c.kept_boxes)]
    return int(bool(changes) and float(np.median(changes)) > QUALITY_LEVELS), 1


#: The measuring function of each factor.
MEASURES = {"text": measure_text, "word_order": measure_word_order, "word_set": measure_word_set,
            "box_position": measure_box_position, "box_size": measure_box_size,
            "reading_order": measure_reading_order, "ink": measure_ink, "background": measure_background,
            "geometry": measure_geometry, "quality": measure_quality}


def measure_factors(original: Document, shifted: Document, source: SourcePage | None = None,
                    bboxes: tuple | None = None) -> dict[str, dict[str, Any]]:
    """Every factor's ``{"changed": n, "of": m}`` for one document (the module docstring says what each counts).

    ``source``: the :class:`SourcePage` of ``original``, to share its work between the configs of a build.
    ``bboxes``: the ``bboxes`` column of the source's row and of the shifted row as written (0-1000, one box per
    token word, in the build's convention); then ``out["bboxes"]`` holds :data:`COLUMN_FACTORS` measured on them
    (:func:`column_factors`), what a user reading that column sees change."""
    c = Comparison(original, shifted, source)
    out: dict[str, dict[str, Any]] = {}
    for name in FACTORS:
        changed, of = MEASURES[name](c)
        out[name] = {"changed": int(changed), "of": int(of)}
    if bboxes is not None:
        out["bboxes"] = column_factors(c, *bboxes)
    return out


#: The factors measured again on the ``bboxes`` column as built (:func:`column_factors`).
COLUMN_FACTORS = ("box_position", "box_size")


def column_factors(c: Comparison, before, after) -> dict[str, dict[str, int]]:
    """``box_position`` and ``box_size`` on the ``bboxes`` column as a row carries it (0-1000, the build's
    convention: at segment level each token has its entity's box, so a word moved inside its entity's box changes
    nothing there), over the paired token words: the box's centre moved by a unit or more; its area (plus one)
    changed by more than 10% either way."""
    from dogood.core.schema import token_index

    tok0 = {w: k for k, w in enumerate(token_index(c.original))}
    tok1 = {w: k for k, w in enumerate(token_index(c.shifted))}
    pairs = [(tok0[i], tok1[j]) for i, j in c.pairing.pairs if i in tok0 and j in tok1]
    if not pairs or len(before) != len(tok0) or len(after) != len(tok1):
        return {name: {"changed": 0, "of": 0} for name in COLUMN_FACTORS}
    i, j = np.array(pairs, np.int64).T
    b0 = np.asarray(before, np.int64).reshape(-1, 4)[i]
    b1 = np.asarray(after, np.int64).reshape(-1, 4)[j]
    moved = int((np.abs((b1[:, :2] + b1[:, 2:]) - (b0[:, :2] + b0[:, 2:])) >= 2).any(axis=1).sum())
    area0 = (np.maximum(b0[:, 2] - b0[:, 0], 0) * np.maximum(b0[:, 3] - b0[:, 1], 0)).astype(np.float64)
    area1 = (np.maximum(b1[:, 2] - b1[:, 0], 0) * np.maximum(b1[:, 3] - b1[:, 1], 0)).astype(np.float64)
    ratio = (area1 + 1) / (area0 + 1)
    resized = int(((ratio < 1 / BOX_SIZE_RATIO) | (ratio > BOX_SIZE_RATIO)).sum())
    return {"box_position": {"changed": moved, "of": len(pairs)}, "box_size": {"changed": resized, "of": len(pairs)}}


def geometry_changed(c: Comparison) -> bool:
    """Whether the page's size changed or at least half its inked tiles moved (``measure_geometry``)."""
    if c._geometry is None:
        p = c.pixels
        if p["size_changed"]:
            c._geometry = True
        else:
            deep = c.source.deep
            n = int(np.count_nonzero(deep))
            if n:  # most of the words' full ink still where it was (a background replaced, not a page displaced)
                c._geometry = (2 * int(np.count_nonzero(p["diff"][deep] <= 64)) <= n
                               and _tiles_displaced(p["g0"], p["g1"]))
            else:  # no word ink to follow: displaced content must be found elsewhere, not merely lost
                c._geometry = _tiles_displaced(p["g0"], p["g1"], found=0.5)
    return c._geometry


def _tiles_displaced(g0: np.ndarray, g1: np.ndarray, found: float = -1.0) -> bool:
    """Whether at least half of the inked tiles of ``g0`` match ``g1`` best away from their own place (with a
    correlation above ``found``)."""
    import cv2

    s = 2  # tiles are matched at half resolution
    small0 = cv2.resize(g0, (g0.shape[1] // s, g0.shape[0] // s), interpolation=cv2.INTER_AREA).astype(np.float32)
    small1 = cv2.resize(g1, (small0.shape[1], small0.shape[0]), interpolation=cv2.INTER_AREA).astype(np.float32)
    t, r = TILE // s, TILE_REACH // s
    h, w = small0.shape
    inked = moved = 0
    for y in range(r, h - t - r + 1, t):
        for x in range(r, w - t - r + 1, t):
            tile = small0[y:y + t, x:x + t]
            if (tile < 128).mean() < 0.01 or tile.std() < 1:
                continue
            scores = cv2.matchTemplate(small1[y - r:y + t + r, x - r:x + t + r], tile, cv2.TM_CCOEFF_NORMED)
            _, best, _, (bx, by) = cv2.minMaxLoc(scores)
            inked += 1
            if np.hypot(bx - r, by - r) * s >= TILE_SHIFT and best > max(scores[r, r] + 0.05, found):
                moved += 1
    return inked > 0 and 2 * moved >= inked


def _bounds_area(bounds: np.ndarray) -> np.ndarray:
    """Per row of :func:`dogood.page.warp.ink_bounds`, the bounds' area (0 where the box holds no ink)."""
    area = (bounds[:, 2] - bounds[:, 0]) * (bounds[:, 3] - bounds[:, 1])
    return np.where(bounds[:, 0] >= 0, area, 0).astype(np.float64)


def _outside(shape, boxes, offset) -> np.ndarray:
    """The pixels of a page of ``shape`` outside ``boxes`` (laid back by ``offset``) grown by 2 pixels."""
    h, w = shape
    inside = np.zeros((h, w), bool)
    dx, dy = offset
    for x0, y0, x1, y1 in np.asarray(boxes, np.int64).reshape(-1, 4).tolist():
        inside[max(0, y0 - dy - 2):max(0, y1 - dy + 2), max(0, x0 - dx - 2):max(0, x1 - dx + 2)] = True
    return ~inside


def _increasing_members(items: list[tuple[Any, int]]) -> set:
    """The keys of one longest strictly increasing run of ``items`` ``(key, value)`` (by value)."""
    tails: list[int] = []
    tail_at: list[int] = []
    back = [-1] * len(items)
    for k, (_, v) in enumerate(items):
        pos = bisect_left(tails, v)
        if pos == len(tails):
            tails.append(v)
            tail_at.append(k)
        else:
            tails[pos] = v
            tail_at[pos] = k
        back[k] = tail_at[pos - 1] if pos else -1
    out = set()
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        out.add(items[k][0])
        k = back[k]
    return out


# -- reading a build's statistics ------------------------------------------------------------------------------------

def shares(factors: Mapping[str, Mapping[str, int]] | None, names: Iterable[str] = FACTORS
           ) -> dict[str, float | None]:
    """Each factor's measured share (changed over units) from summed statistics; ``None`` where nothing was
    measured (no units). ``shares(factors["bboxes"], COLUMN_FACTORS)``: the shares on the ``bboxes`` column."""
    factors = factors or {}
    out: dict[str, float | None] = {}
    for name in names:
        f = factors.get(name) or {}
        of = f.get("of", 0)
        out[name] = f.get("changed", 0) / of if of else None
    return out


def changed_factors(factors: Mapping[str, Mapping[str, int]] | None) -> list[str]:
    """The factors measured beyond their tolerance, in :data:`FACTORS` order."""
    return [name for name, share in shares(factors).items() if share is not None and share > TOLERANCE[name]]


def undeclared(factors: Mapping[str, Mapping[str, int]] | None, declared: Iterable[str]) -> list[str]:
    """The factors measured beyond tolerance that ``declared`` does not name."""
    declared = set(declared)
    return [name for name in changed_factors(factors) if name not in declared]


def unseen(factors: Mapping[str, Mapping[str, int]] | None, sees: Iterable[str]) -> list[str] | None:
    """When every factor measured beyond tolerance is one a model given ``sees`` cannot see, those factors (what
    the model is blind to); ``None`` when it sees some change, or when nothing changed or nothing was measured."""
    changed = changed_factors(factors)
    sees = set(sees)
    if not changed or any(SEEN_WITH[name] & sees for name in changed):
        return None
    return changed
