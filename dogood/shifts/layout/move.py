"""Move entities with strong text semantics to empty parts of the page: Do-GOOD section 3.3 (layout shift).

The paper calls an entity's text semantics *strong* when a fine-tuned
model's prediction for it stays the same while the document's layout is
changed (section 3.3: ten times; section 4.2: boxes shuffled within the
page, 30 inferences), and moves such content "to another location without
textual semantics" (Figure 2e). Figure 4 shows that which model scores
strength matters, so the scorer is a parameter and the data card names it.

What the paper leaves open, and what we chose:

- *Shuffling the layout.* One shuffle gives every word the box of another
  word of the page (a random permutation of all word boxes); text, word
  order and image stay. ``shuffles`` such layouts are scored
  (:func:`entity_strength`).
- *Strength* of an entity: the share of shuffles in which the scorer's label
  for every one of its token words (the tag without its ``B-``/``I-``
  prefix) equals the label it predicts on the real layout. ``threshold=1.0``
  (default) asks for "unchanged" in all shuffles, as the paper says.
- *The scorer* is any token model of :func:`dogood.models.load_model`:
  ``baseline`` (dogood's CRF, trained on FUNSD train and cached on first use
  when missing), a ``.dogood-model`` file, or a Hugging Face model, loaded in
  ``prepare()`` as the declared resource ``token-scorer``
  (:mod:`dogood.shifts.resources`; this module imports no model code). Scores
  are cached per model and document (:func:`strength_cache_path`); the
  shuffles are seeded from ``(score_seed, document id)``, not from the
  shift's seed, so every config and seed shares them.
- *Where to.* An empty place is a rectangle of the size of the moved
  footprint's bounding box (see *Pixels*) that lies inside the page and
  overlaps no other content: no word box and no ink
  (pixels darker than ``ink_threshold``: ruling lines, logos, stamps), both
  grown by ``margin`` pixels. It is drawn uniformly among all such places
  (a summed-area table finds them all at once). The place the entity leaves
  stays occupied, so an entity never moves into a hole left by another,
  and so does the new place (with its margin).
- *Pixels* move with the boxes, and all of the entity's ink with them.
  FUNSD's boxes are often a pixel or three tighter than the glyphs, and
  punctuation such as the ``:`` of ``FAX NUMBER:`` may lie just outside
  them; moving the box crops alone would leave that ink behind. So the
  moved *footprint* is the entity's word boxes plus every ink component of
  the entity. Ink is the pixels darker than ``ink_threshold``; first the
  *rules* are set apart: ink in straight horizontal or vertical runs at
  least twice the page's median word height long (form rules, table lines,
  underscores, underlines), found by a morphological opening. Rules belong
  to the form, never to an entity, and a glyph that touches one (a
  descender crossing an underline) is thus no longer joined to it. The rest
  of the ink is split into 8-connected components, and a component is the
  entity's when it comes within ``ink_margin`` pixels of one of the
  entity's word boxes, unless

  * it also comes within ``ink_margin`` of a box of any other word (shared
    ink, such as touching glyphs of a neighbour: counted as
    ``ink_components_shared``), or
  * its bounding box reaches further than ``max(ink_margin, h / 2)`` pixels
    (``h``: the median height of the entity's word boxes) beyond the
    entity's box: frames, logos, stamps, handwriting that the entity merely
    touches (``ink_components_large``), or
  * the entity sits on texture: more than ``2 + 2 * words`` of its
    components lie wholly outside its boxes. Specks all around an entity
    are the halftone dots of a shaded cell or scanner noise, not its
    punctuation, and its glyphs touch them; then none of its components
    moves, only its box crops (``ink_components_texture``).

  Rules and such components stay where they are, whole, except for their
  part inside the entity's word boxes, which moves with the box crops as
  before (a word crop is moved whole). Each moved component takes its
  one-pixel rim of non-ink pixels along (the anti-aliased edge of its
  strokes), never pixels of other ink or of other words' boxes. The
  footprint is filled with the page's background (the median grey of the
  page's non-ink pixels) and its original pixels are pasted, unscaled, at
  the new place: the pixels inside each moved box equal the original word
  crop, every moved component arrives whole, and none of the entity's ink
  stays at the old place. ``ink_components_moved`` counts the components
  taken along.
- *How many.* Up to ``max_moves`` strong entities per page (the paper gives
  no number), drawn in random order among those with labels in ``labels``.

``style: repo`` scores strength as Do-GOOD's code does (MAEHCM/Do-GOOD
``test/ner/map_v3_funsd_L.py``): a shuffle gives every entity the segment box
of another (a random permutation of the entities' boxes, each of an entity's
tokens taking the same box: :func:`shuffled_entity_layouts`), and an entity is
strong when the scorer's tags for all its tokens equal the *gold* IOB tags in
every shuffle (the script counts changes from the gold tags, then from the
previous shuffle, over 30 shuffles: any change makes the entity weak). Its
strength is the share of shuffles that give the gold tags. The script's
bookkeeping skips the last token of a page (its entity ends one token early);
here every token counts. The repo then builds synthetic pages from the strong
and weak entities (``gen_ood_mix.py``) rather than moving them on the page.

Skipped and counted: entities with no token words (``no_words``), entities
whose box overlaps a word of another entity (``overlapping``: their crop
would carry someone else's ink), strong entities with no empty place
(``no_room``). Words keep their text, order, entity and links; a moved
word's box is shifted by the same offset as its pixels (same size).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import Field

from dogood.core import fs
from dogood.core.boxes import union_boxes
from dogood.core.document import Document, PageImage, Word
from dogood.core.papers import Cites
from dogood.core.paths import cache_dir, write_atomic
from dogood.shifts import params
from dogood.shifts.base import Outcome, Shift, SkipDocument
from dogood.shifts.resources import resource

#: Version of the strength computation: part of every cache key.
STRENGTH_VERSION = 1


def _label(tag: str) -> str:
    return tag[2:] if tag[:2] in ("B-", "I-") else tag


def shuffled_layouts(doc: Document, shuffles: int, rng: np.random.Generator) -> list[Document]:
    """``shuffles`` copies of ``doc`` whose word boxes are permuted among its words (ids ``<id>#shuffle<k>``)."""
    boxes = [w.box for w in doc.words]
    out = []
    for k in range(shuffles):
        order = rng.permutation(len(boxes))
        words = tuple(Word(w.text, boxes[int(j)]) for w, j in zip(doc.words, order))
        out.append(doc.replace(id=f"{doc.id}#shuffle{k}", words=words, provenance=()))
    return out


def shuffled_entity_layouts(doc: Document, shuffles: int, rng: np.random.Generator) -> list[Document]:
    """``shuffles`` copies of ``doc`` in which the entities' segment boxes (the union of their non-blank words) are
    permuted among the entities: every word of an entity takes the box of the entity drawn for it (ids
    ``<id>#shuffle<k>``), as Do-GOOD's ``map_v3_funsd_L.py`` shuffles entity boxes. Loose words and entities of
    blank words only keep their boxes."""
    units = []
    for ent in doc.entities:
        ids = [i for i in ent.word_ids if doc.words[i].text.strip()]
        if ids:
            units.append((list(ent.word_ids), union_boxes(doc.words[i].box for i in ids)))
    out = []
    for k in range(shuffles):
        order = rng.permutation(len(units))
        boxes = [w.box for w in doc.words]
        for (members, _), j in zip(units, order):
            for i in members:
                boxes[i] = units[int(j)][1]
        words = tuple(Word(w.text, b) for w, b in zip(doc.words, boxes))
        out.append(doc.replace(id=f"{doc.id}#shuffle{k}", words=words, provenance=()))
    return out


def entity_strength_repo(doc: Document, model, shuffles: int = 30, seed: int = 0) -> np.ndarray:
    """Each entity's strength as Do-GOOD's code scores it: the share of entity-box shuffles
    (:func:`shuffled_entity_layouts`) in which the model's IOB tags for all its token words equal the gold tags.

    Returns ``(len(doc.entities),)`` floats in [0, 1]; NaN for an entity with no token word.
    """
    from dogood.core.schema import iob_tags
    from dogood.core.seeds import derive_seed

    index, gold = iob_tags(doc)
    token_of = {i: k for k, i in enumerate(index)}
    variants = shuffled_entity_layouts(doc, shuffles, np.random.default_rng(derive_seed("move-strength-repo", seed,
                                                                                         doc.id)))
    preds = model.predict(variants) if variants else {}
    same = np.array([[t == g for t, g in zip(preds[v.id].tags, gold)] for v in variants], dtype=bool)
    same = same.reshape(len(variants), len(gold))
    return _entity_shares(doc, token_of, same, shuffles)


def _entity_shares(doc: Document, token_of: dict[int, int], same: np.ndarray, shuffles: int) -> np.ndarray:
    """Per entity, the share of layouts (rows of ``same``: token labels unchanged) that keep every one of its
    tokens' labels; NaN for an entity with no token word (``token_of``: word index -> token column)."""
    out = np.full(len(doc.entities), np.nan)
    for e, ent in enumerate(doc.entities):
        tokens = [token_of[i] for i in ent.word_ids if i in token_of]
        if tokens:
            out[e] = same[:, tokens].all(axis=1).mean() if shuffles else 1.0
    return out


def entity_strength(doc: Document, model, shuffles: int = 10, seed: int = 0) -> np.ndarray:
    """Each entity's semantic strength: the share of layout shuffles that leave the model's labels for it unchanged.

    Parameters
    ----------
    doc : the document (its entities are scored in order).
    model : a token model (``predict(docs) -> {id: Prediction}`` with ``tags``
        per token word).
    shuffles : layouts scored (Do-GOOD: 10 in section 3.3, 30 in section 4.2).
    seed : seeds the shuffles together with the document id.

    Returns
    -------
    ``(len(doc.entities),)`` float array in [0, 1]; NaN for an entity with no token word.
    """
    from dogood.core.seeds import derive_seed

    token_of = {}
    for i, w in enumerate(doc.words):
        if w.text.strip():
            token_of[i] = len(token_of)
    variants = shuffled_layouts(doc, shuffles, np.random.default_rng(derive_seed("move-strength", seed, doc.id)))
    preds = model.predict([doc] + variants)
    base = [_label(t) for t in preds[doc.id].tags]
    same = np.array([[_label(t) == b for t, b in zip(preds[v.id].tags, base)] for v in variants], dtype=bool)
    same = same.reshape(len(variants), len(base))
    return _entity_shares(doc, token_of, same, shuffles)


def model_fingerprint(model) -> str:
    """A short stable name for a scorer: its weights' hash for the CRF baseline, else its source or name."""
    weights = getattr(model, "model_bytes", None)
    if weights is not None:
        return f"{model.name}-{hashlib.sha256(weights).hexdigest()[:16]}"
    source = str(getattr(model, "source", None) or getattr(model, "name_or_path", None) or model.name)
    slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in source).strip("_")[-80:]
    return f"{slug}-{hashlib.sha256(source.encode()).hexdigest()[:8]}"


def _document_key(doc: Document, shuffles: int, seed: int, style: str = "dogood") -> str:
    content = [STRENGTH_VERSION, shuffles, seed, doc.id, [(w.text, list(w.box)) for w in doc.words],
               [list(e.word_ids) for e in doc.entities], doc.width, doc.height]
    if style != "dogood":  # the repo's test also reads the gold labels
        content += [style, [[e.label, list(e.word_ids)] for e in doc.entities]]
    return hashlib.sha256(json.dumps(content).encode("utf-8")).hexdigest()[:32]


def strength_cache_path(model, doc: Document, shuffles: int, seed: int, style: str = "dogood") -> Path:
    """Where the strengths of ``doc`` under ``model`` are cached: ``<cache>/move-strength/<model>/<key>.json``."""
    key = _document_key(doc, shuffles, seed, style)
    return cache_dir() / "move-strength" / model_fingerprint(model) / f"{key}.json"


def cached_entity_strength(doc: Document, model, shuffles: int = 10, seed: int = 0,
                           style: str = "dogood") -> tuple[np.ndarray, bool]:
    """:func:`entity_strength` (``style="repo"``: :func:`entity_strength_repo`), read from or written to the cache;
    and whether it came from the cache."""
    path = strength_cache_path(model, doc, shuffles, seed, style)
    try:
        values = fs.read_json(path, what="strength cache file")
        if len(values) == len(doc.entities):
            return np.array([np.nan if v is None else v for v in values], dtype=float), True
    except (OSError, ValueError, TypeError, fs.FileRefused):
        pass
    strength = (entity_strength_repo if style == "repo" else entity_strength)(doc, model, shuffles, seed)
    write_atomic(path, json.dumps([None if np.isnan(v) else float(v) for v in strength]))  # workers never read half
    return strength, False


# -- where to: empty places ------------------------------------------------------------------------
def occupied(gray: np.ndarray, boxes: Sequence[Sequence[int]], ink_threshold: int, margin: int) -> np.ndarray:
    """Mask of the page's content: ink (pixels darker than ``ink_threshold``) and word boxes, grown by ``margin``."""
    import cv2

    mask = (gray < ink_threshold).astype(np.uint8) if ink_threshold > 0 else np.zeros(gray.shape, np.uint8)
    for x0, y0, x1, y1 in boxes:
        mask[y0 : max(y1, y0 + 1), x0 : max(x1, x0 + 1)] = 1
    if margin > 0:
        mask = cv2.dilate(mask, np.ones((2 * margin + 1, 2 * margin + 1), np.uint8))
    return mask


def empty_places(mask: np.ndarray, width: int, height: int) -> np.ndarray:
    """Top-left corners ``(x, y)`` of every ``width`` x ``height`` rectangle inside the page that covers no set pixel of ``mask``."""
    import cv2

    rows, cols = mask.shape
    if width > cols or height > rows or width < 1 or height < 1:
        return np.zeros((0, 2), dtype=np.int64)
    table = cv2.integral(mask.astype(np.uint8), sdepth=cv2.CV_32S)  # (rows+1, cols+1)
    sums = (table[height:, width:] - table[:-height, width:] - table[height:, :-width] + table[:-height, :-width])
    ys, xs = np.nonzero(sums == 0)
    return np.stack([xs, ys], axis=1).astype(np.int64)


def _background(pixels: np.ndarray, gray: np.ndarray, ink_threshold: int) -> np.ndarray:
    """The page's paper colour: the median of its non-ink pixels (of all pixels when every one is ink)."""
    paper = gray >= ink_threshold
    if not paper.any():
        paper = np.ones_like(paper)
    return np.median(pixels[paper], axis=0).astype(pixels.dtype)


# -- what moves: the entity's boxes and its ink ------------------------------------------------------
def _grown(box: Sequence[int], by: int, shape: tuple[int, ...]) -> tuple[slice, slice]:
    """Row and column slices of ``box`` grown by ``by`` pixels, clipped to an image of ``shape``."""
    x0, y0, x1, y1 = box
    return (slice(max(0, y0 - by), max(0, min(shape[0], max(y1, y0 + 1) + by))),
            slice(max(0, x0 - by), max(0, min(shape[1], max(x1, x0 + 1) + by))))


def rule_length(boxes: Sequence[Sequence[int]]) -> int:
    """The shortest straight run of ink that is a rule, not a glyph's stroke: twice the median word height, made odd
    (at least 9 px; 25 px with no words). Odd, so that an opening with it keeps whole runs on both sides."""
    heights = [b[3] - b[1] for b in boxes if b[3] > b[1]]
    return (max(8, int(round(2 * float(np.median(heights))))) if heights else 24) | 1


class PageInk:
    """A page's ink, split into rules and glyph components, and the words each component comes near.

    ``ink`` marks pixels darker than ``ink_threshold``; ``rules`` the ink of
    straight horizontal or vertical runs at least :func:`rule_length` long
    (form rules, table lines, underscores: a morphological opening), which
    never counts as any entity's. The rest is split into 8-connected
    components: ``labels`` per pixel (0: none), ``stats`` OpenCV's ``(x, y,
    width, height, area)`` per component, ``near[c]`` the words whose box
    grown by ``ink_margin`` holds a pixel of component ``c``.
    """

    def __init__(self, gray: np.ndarray, boxes: Sequence[Sequence[int]], ink_threshold: int, ink_margin: int):
        import cv2

        self.ink = gray < ink_threshold if ink_threshold > 0 else np.zeros(gray.shape, bool)
        self.boxes = [tuple(int(v) for v in b) for b in boxes]
        length = rule_length(self.boxes)
        ink = self.ink.astype(np.uint8)
        self.rules = (cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((1, length), np.uint8))
                      | cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((length, 1), np.uint8))).astype(bool)
        glyphs = (self.ink & ~self.rules).astype(np.uint8)
        _, self.labels, self.stats, _ = cv2.connectedComponentsWithStats(glyphs, connectivity=8)
        self.ink_margin = int(ink_margin)
        self.near: dict[int, set[int]] = {}
        for i, box in enumerate(self.boxes):
            for c in np.unique(self.labels[_grown(box, self.ink_margin, gray.shape)]).tolist():
                if c:
                    self.near.setdefault(c, set()).add(i)

    def footprint(self, members: Sequence[int]) -> tuple[tuple[int, int, int, int], np.ndarray, dict[str, int]]:
        """The pixels that move with the words ``members`` (one entity), as a mask over a window of the page.

        Returns ``(x0, y0, x1, y1)``, the window (the footprint's bounding
        box), a boolean mask of its shape (the words' boxes, the entity's ink
        components and their one-pixel rims), and the counts of components
        ``ink_components_moved``, ``ink_components_shared``,
        ``ink_components_large`` and ``ink_components_texture`` (see the
        module docstring).
        """
        import cv2

        shape = self.labels.shape
        own = set(members)
        boxes = [self.boxes[i] for i in members]
        ex0, ey0 = min(b[0] for b in boxes), min(b[1] for b in boxes)
        ex1, ey1 = max(b[2] for b in boxes), max(b[3] for b in boxes)
        height = float(np.median([b[3] - b[1] for b in boxes]))
        reach = max(self.ink_margin, int(np.ceil(height / 2)))
        counts = {"ink_components_moved": 0, "ink_components_shared": 0, "ink_components_large": 0,
                  "ink_components_texture": 0}
        taken = []
        for c in sorted({c for c, words in self.near.items() if words & own}):
            x, y, w, h, _ = (int(v) for v in self.stats[c])
            if self.near[c] - own:
                counts["ink_components_shared"] += 1
            elif x < ex0 - reach or y < ey0 - reach or x + w > ex1 + reach or y + h > ey1 + reach:
                counts["ink_components_large"] += 1
            else:
                taken.append(c)
        inside = set()
        for box in boxes:
            inside.update(np.unique(self.labels[box[1] : box[3], box[0] : box[2]]).tolist())
        outside = [c for c in taken if c not in inside]
        if len(outside) > 2 + 2 * len(boxes):  # specks all around: a shaded or dithered background, not the entity's
            counts["ink_components_texture"] = len(taken)
            taken = []
        counts["ink_components_moved"] = len(taken)
        # the window: the entity's box grown by the reach and a rim pixel (every taken component lies inside)
        rows, cols = _grown((ex0, ey0, ex1, ey1), reach + 1, shape)
        oy, ox = rows.start, cols.start
        mask = np.zeros((rows.stop - rows.start, cols.stop - cols.start), bool)
        if taken:
            comps = np.isin(self.labels[rows, cols], taken)
            rim = cv2.dilate(comps.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool) & ~self.ink[rows, cols]
            for j, box in enumerate(self.boxes):  # the rim never reaches into another word's box
                if j not in own:
                    rim[max(0, box[1] - oy) : max(0, box[3] - oy), max(0, box[0] - ox) : max(0, box[2] - ox)] = False
            mask |= comps | rim
        for x0, y0, x1, y1 in boxes:
            mask[max(0, y0 - oy) : max(0, y1 - oy), max(0, x0 - ox) : max(0, x1 - ox)] = True
        ys, xs = np.nonzero(mask)
        if not len(ys):  # empty boxes and no ink: no pixel moves, the boxes do (the window: their union, 1 px at least)
            window = (ex0, ey0, max(ex1, ex0 + 1), max(ey1, ey0 + 1))
            return window, np.zeros((window[3] - window[1], window[2] - window[0]), bool), counts
        y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
        return (ox + int(x0), oy + int(y0), ox + int(x1), oy + int(y1)), mask[y0:y1, x0:x1], counts


class MoveEntities(Shift):
    """Move entities with strong text semantics, pixels and boxes, to empty places of the page (Do-GOOD 3.3, Figure 2e).

    See the module docstring for what strength, an empty place and moving
    the pixels mean here. Do-GOOD 3.3 moves "the text content" of an
    entity; here that is its word boxes and all of its ink, components just
    outside the boxes included, so none of it stays at the old place, while
    rules, other words' ink and large marks stay where they are. Text, word
    order, labels and links are kept; the moved words' boxes shift by the
    same offset as their pixels.

    Inspired by Do-GOOD: strength is scored by dogood's models (the CRF
    baseline by default), not by the paper's fine-tuned models.

    Parameters: :class:`MoveEntities.Params`.
    """

    name = "move"
    requires = ("scorer:scorer",)
    reported_counts = ("entities", "strong", "moved", "no_words", "overlapping", "no_room", "ink_components_moved",
                       "ink_components_shared", "ink_components_large", "ink_components_texture")
    family = "layout"
    #: Moved words take their ink along (their boxes' pixels move with them); ink components near an entity but
    #: outside its boxes move too, which changes pixels outside the boxes. With ``ink_threshold: 0`` only the boxes
    #: move, onto blank paper (:meth:`declared_factors`).
    factors = frozenset({"box_position", "background"})
    factor_notes = ("with ink_threshold: 0, also ink (the boxes move onto blank paper)",)
    papers = (Cites("do-good", "3.3 (moving entities with strong text semantics; Figure 2e), 4.2",
                    inspired_by="strength is scored by a dogood token model (by default its CRF baseline), not by "
                                "the paper's fine-tuned models; the moved entity takes its ink along and lands on a "
                                "place free of words and ink"),)
    counts_help = {
        **Shift.counts_help,
        "entities": "entities on the pages",
        "strong": "entities whose scored strength reached the threshold",
        "moved": "entities moved, pixels and boxes together",
        "no_words": "entities without words (no strength)",
        "overlapping": "strong entities whose box overlaps other words (left in place)",
        "no_room": "strong entities for which no empty place of their size was found",
        "ink_components_moved": "ink components outside an entity's boxes that moved with it",
        "ink_components_shared": "ink components near a moved entity that also touch other words (left in place)",
        "ink_components_large": "ink components near a moved entity that reach far beyond it (left in place)",
        "ink_components_texture": "specks of a shaded background near a moved entity (left in place)",
    }

    #: Severity levels (:mod:`dogood.shifts.levels`): the most entities moved per page (the paper gives no number;
    #: level 3 is the default); measured by the mean box displacement. FUNSD test has about 9 strong entities a
    #: page under the baseline, so every level's cap is reached on most pages.
    severities: ClassVar[dict[int, dict]] = {1: {"max_moves": 1}, 2: {"max_moves": 2}, 3: {"max_moves": 3},
                                             4: {"max_moves": 5}, 5: {"max_moves": 8}}

    path_params = ("scorer",)  # a file or folder this machine reads (recorded by name and content hash)

    class Params(params.Params):
        scorer: params.Text = Field("baseline", description="the model that scores strength: baseline, a "
                                                            ".dogood-model file, a Hugging Face token model name or folder")
        shuffles: params.Integer = Field(10, ge=1, description="layout shuffles per document (paper: 10, or 30 in "
                                                               "section 4.2)")
        threshold: params.Real = Field(1.0, ge=0, le=1, description="least strength (share of unchanged shuffles) "
                                                                    "of a movable entity; 1.0 = unchanged in all")
        max_moves: params.Integer = Field(3, ge=1, description="most entities moved per page")
        labels: params.OptionalNames = Field(None, description="entity labels that may move (null: all)")
        margin: params.Integer = Field(5, ge=0, description="pixels kept free around the moved footprint and other "
                                                            "content")
        ink_threshold: params.Integer = Field(128, ge=0, le=256, description="grey level below which a pixel is ink "
                                                                            "(0: words' boxes only, no ink moves)")
        ink_margin: params.Integer = Field(2, ge=0, description="an ink component within this many pixels of an "
                                                                "entity's word box is the entity's and moves with it")
        score_seed: params.Integer = Field(0, description="seeds the shuffles (with the document id)")
        cache: params.Flag = Field(True, description="read and write the strength cache")
        style: Literal["dogood", "repo"] = Field("dogood", description=(
            "dogood: word boxes shuffled, labels compared with the scorer's on the real layout; repo: Do-GOOD's "
            "code's test (entity boxes shuffled, tags compared with the gold tags; it used 30 shuffles)"))

    #: Added with issue 38: at this value a config's seeds and provenance are what they were.
    later_params: ClassVar[dict] = {"style": "dogood"}

    def setup(self) -> None:
        self._model = None

    def declared_factors(self) -> frozenset[str]:
        return self.factors | ({"ink"} if self.ink_threshold == 0 else frozenset())

    # -- the scorer: loaded once per process (build calls prepare() before starting workers) --------
    def prepare(self) -> None:
        """Load the scorer, the resource ``token-scorer`` (training and caching the baseline first when
        ``scorer='baseline'`` and none exists)."""
        if self._model is None:
            self._model = resource("token-scorer", spec=self.scorer)

    @property
    def model(self):
        self.prepare()
        return self._model

    def card_notes(self, schema: str = "funsd") -> list[str]:
        """What the data card says of this shift: which model scored strength."""
        shown = (model_fingerprint(self.model) if getattr(self.model, "model_bytes", None) is not None
                 else self.params()["scorer"])  # a model folder as its last part and content hash, no local path
        if self.style == "repo":
            return [f"`move`, style `repo`: entity strength scored as Do-GOOD's code does (MAEHCM/Do-GOOD "
                    f"`map_v3_funsd_L.py`) by `{shown}` over {self.shuffles} shuffles of the entities' boxes (the "
                    f"repo: 30, with its fine-tuned LayoutLMv3); entities whose tags equal the gold tags in at least "
                    f"{self.threshold:.0%} of them may move. Differs: the repo builds synthetic pages from such "
                    "entities (`gen_ood_mix.py`) instead of moving them on the page; here they move, pixels and "
                    "boxes together, at most "
                    f"{self.max_moves} a page."]
        return [f"`move`: entity strength scored by `{shown}` over {self.shuffles} "
                f"layout shuffles (boxes permuted among the words); entities unchanged in at least "
                f"{self.threshold:.0%} of them may move."]

    def strength(self, doc: Document) -> tuple[np.ndarray, bool]:
        """Each entity's strength under the scorer, and whether it came from the cache."""
        if self.cache:
            return cached_entity_strength(doc, self.model, self.shuffles, self.score_seed, self.style)
        score = entity_strength_repo if self.style == "repo" else entity_strength
        return score(doc, self.model, self.shuffles, self.score_seed), False

    def apply(self, doc: Document, rng: np.random.Generator) -> Outcome:
        if not doc.entities:
            raise SkipDocument("no entities to move")
        strength, _ = self.strength(doc)  # whether it was cached stays out of the counts: output is the same
        counts = {"entities": len(doc.entities), "strong": 0, "moved": 0,
                  "no_words": int(np.isnan(strength).sum()), "overlapping": 0, "no_room": 0}
        allowed = [e for e, ent in enumerate(doc.entities)
                   if not np.isnan(strength[e]) and (self.labels is None or ent.label in self.labels)]
        strong = [e for e in allowed if strength[e] >= self.threshold]
        counts["strong"] = len(strong)
        if not strong:
            return Outcome(doc, counts)
        pixels = doc.image.to_array()
        gray = pixels if pixels.ndim == 2 else pixels[..., :3].mean(axis=2)
        mask = occupied(gray, [w.box for w in doc.words], self.ink_threshold, self.margin)
        background = _background(pixels, gray, self.ink_threshold)
        page_ink = PageInk(gray, [w.box for w in doc.words], self.ink_threshold, self.ink_margin)
        counts.update(ink_components_moved=0, ink_components_shared=0, ink_components_large=0, ink_components_texture=0)
        owner = doc.word_entity()
        boxes = [list(w.box) for w in doc.words]
        out = pixels.copy()
        pastes = []
        m = self.margin
        for e in (strong[int(k)] for k in rng.permutation(len(strong))):
            if counts["moved"] == self.max_moves:
                break
            ent = doc.entities[e]
            x0, y0, x1, y1 = doc.entity_box(ent)
            members = set(ent.word_ids)
            if any(owner[i] is not ent and _overlap(doc.words[i].box, (x0, y0, x1, y1))
                   for i in range(len(doc.words)) if i not in members):
                counts["overlapping"] += 1
                continue
            (fx0, fy0, fx1, fy1), moving, ink_counts = page_ink.footprint(ent.word_ids)
            places = empty_places(mask, fx1 - fx0 + 2 * m, fy1 - fy0 + 2 * m)
            if not len(places):
                counts["no_room"] += 1
                continue
            px, py = (int(v) for v in places[int(rng.integers(len(places)))])
            dx, dy = px + m - fx0, py + m - fy0
            if moving.any():  # blank the footprint now; its original pixels are pasted, unscaled, after all blanks
                out[fy0:fy1, fx0:fx1][moving] = background
                pastes.append(((fx0, fy0, fx1, fy1), (dx, dy), moving))
                mask[fy0:fy1, fx0:fx1][moving] = 1  # the hole stays occupied (also with margin 0)
            for i in ent.word_ids:
                a0, b0, a1, b1 = doc.words[i].box
                boxes[i] = [a0 + dx, b0 + dy, a1 + dx, b1 + dy]
            mask[py : py + (fy1 - fy0) + 2 * m, px : px + (fx1 - fx0) + 2 * m] = 1
            counts["moved"] += 1
            for key, value in ink_counts.items():
                counts[key] += value
        for (fx0, fy0, fx1, fy1), (dx, dy), moving in pastes:  # no later blank can touch a pasted pixel
            out[fy0 + dy : fy1 + dy, fx0 + dx : fx1 + dx][moving] = pixels[fy0:fy1, fx0:fx1][moving]
        if not counts["moved"]:
            return Outcome(doc, counts)
        words = tuple(w.moved(b, pixels_moved=True) for w, b in zip(doc.words, boxes))
        return Outcome(doc.replace(words=words, image=PageImage.from_array(out)), counts)


def _overlap(a: Sequence[int], b: Sequence[int]) -> bool:
    """Whether two boxes share interior area."""
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])
