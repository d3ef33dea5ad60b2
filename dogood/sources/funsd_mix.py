"""Do-GOOD's synthetic FUNSD-L: layout-only form pages assembled from a FUNSD split's entities (``kind: funsd_mix``).

Do-GOOD's own FUNSD-L (MAEHCM/Do-GOOD, ``gen_ood_mix.py``; He et al. 2023,
section 4.2) is not FUNSD's pages with moved boxes but 50 synthetic
documents: FUNSD test entities, sorted by how strongly their text alone says
what they are, are placed in a fixed form layout where the layout suggests
one thing and, for the *weak* entities, the text another. What the script
does, per document (written down from reading it; its draws come from
Python's unseeded ``random``):

1. **Header.** A box ``w x h`` with ``w`` uniform in 500..700 and ``h`` in
   50..80 pixels, centred horizontally at ``y = 50`` of an 800 x 1000 canvas,
   holds one entity of the *weak header* library (``weak_other_map``: entities
   not labelled header that the scorer nearly calls header). The entity is
   found from a random *token* of the library, so it is drawn with
   probability proportional to its number of words.
2. **Orientation.** A coin (``top_q``): questions in the table's first row
   (answers below them), or in its first column (answers to their right).
3. **Table.** ``rows`` uniform in 8..10 and 2 columns of *strong* cells,
   ringed by one row and column of *weak* cells on every side
   (``weak_padding = 1``): ``(rows + 2) x 4`` cells, each column 150..200
   pixels wide and each row 20..30 high (drawn per column and per row), the
   whole table centred on the canvas.
4. **Strong cells** (walked row by row): the question row or column takes a
   *strong question* (``strong_question_map``), every other strong cell a
   *strong answer*; these are drawn uniformly per entity (a random token is
   redrawn until it begins an entity).
5. **Weak cells.** With ``top_q``: the top ring row and the ring cells of the
   question row are *weak question* cells; the bottom ring row and the ring
   cells of the last strong row are *weak answer* cells; the ring cells of
   the rows between take nothing. Otherwise the left ring column and the
   ring cells of the question column are weak question cells, the right ring
   column and the ring cells of the answer column weak answer cells. Each
   weak cell is filled with probability ``weak_prob = 0.3`` by an entity of
   the *weak question* (``weak_Q_map``) or *weak answer* (``weak_A_map``)
   library, drawn in proportion to its words. Both libraries hold entities
   labelled *other* only.
6. Every word of an entity keeps its **gold label** (IOB tag) and takes its
   cell's box. The header and weak entities are thus labelled what they are
   in FUNSD (mostly ``other``), wherever the layout puts them: the set asks
   whether a model reads the text or the place.

So a document has 1 header entity; with questions in a row, 2 strong
questions, ``2 (rows - 1)`` strong answers, 6 weak question cells and 6 weak
answer cells; with questions in a column, ``rows`` strong questions,
``rows`` strong answers, ``rows + 4`` weak question cells and ``rows + 4``
weak answer cells (:meth:`MixLayout.counts`).

What dogood does differently, and why:

- **The libraries** (*inspired by*). The repo's five entity libraries come
  from a fine-tuned model's predictions over 30 shuffled layouts of FUNSD
  test (``test/ner/map_v3_funsd_L.py``; :mod:`dogood.shifts.layout.move`'s
  ``style: repo`` scores strength that way). A source sits below the models
  (an import-linter layer), and a dataset source must not depend on which
  model a user trained, so the default library (``library: text``) sorts
  entities by what their text alone says, deterministically:

  * strong question: a ``question`` whose text ends with ``:``;
  * strong answer: an ``answer`` with a digit (dates, amounts, codes);
  * weak question: an ``other`` of at most 4 words, the first capitalised,
    no digit (reads as a field name);
  * weak answer: an ``other`` of at most 4 words with a digit (reads as a value);
  * weak header: an entity not labelled ``header``, of at most 8 words, whose
    letters (3 or more) are all capitals (reads as a title).

  On FUNSD test these give 386, 429, 56, 100 and 655 entities (entities with a
  word the face cannot draw left out: :meth:`FunsdMixSource.libraries`).
  ``library: repo`` with ``maps: FOLDER`` reads the repo's own five files
  (``strong_question_map``, ``strong_answer_map``, ``weak_Q_map``,
  ``weak_A_map``, ``weak_other_map``: lines ``token<TAB>tag<TAB>entity``), as
  published by Do-GOOD or made by its script for another model.
- **Pixels.** The repo writes tokens and boxes only (its ``visualize`` draws
  the cells' rectangles). dogood draws each entity's words on white paper, in
  one face (:data:`dogood.page.render.DEFAULT_FACE`, Liberation Serif, the
  metric twin of Times) and ink grey, left-aligned and wrapped within its cell
  (2 px inside it), at the largest size up to 12 px (20 px in the header box)
  at which all its words fit; every word's box is the exact half-open extent
  of its ink, so a token's segment box (the entity's words' union) lies
  inside the repo's cell box, not equal to it. No rule or frame is drawn:
  the layout is the words' places only.
- **Links.** The repo's output has none. dogood links each strong question to
  the strong answers of its column (questions in a row) or row (questions in a
  column), as a form's key-value pairs; header and weak entities have none.
- **Seeds.** Document ``i`` is drawn from its own generator, seeded with
  ``(seed, split, i)`` (numpy's ``default_rng``), so any document can be made
  alone, in any process, and is the same every time.

Bugs of the repo's scripts, fixed:

- With ``random`` unseeded, the 50 documents differ on every run, so no two
  papers' FUNSD-L sets are the same; here they are a function of
  ``(seed, split, index)``.
- ``visualize=True`` (its default) writes ``/{e}.png`` at the file system's
  root; dogood writes nothing.
- Its weak and header library files (``map_v3_funsd_L.py``) number entities by
  comparing each token's segment box with the previous token's in the list
  *before* it is filtered by label, so two listed entities in a row with the
  same box would share a number (and be drawn as one). The ``text`` libraries
  take FUNSD's own entities; ``library: repo`` reads the files' numbers as
  they are, since they are the repo's libraries.

Recipe::

    source: {kind: funsd_mix, documents: 50, seed: 0}
"""

from __future__ import annotations

import functools
import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from dogood.core import fs
from dogood.core.document import Document, Entity, PageImage, Word
from dogood.core.errors import DocumentError, SourceError
from dogood.core.schema import FUNSD_LABELS
from dogood.page.render import DEFAULT_FACE, DEFAULT_INK, Style, text_alpha, text_width
from dogood.sources.synthetic import PageIds

#: Bumped whenever the documents a (seed, split, index) gives change.
GENERATOR_VERSION = 1

#: The libraries, in the repo's file names' order: slot kind -> the repo's file.
LIBRARY_FILES = {
    "strong_question": "strong_question_map",
    "strong_answer": "strong_answer_map",
    "weak_question": "weak_Q_map",
    "weak_answer": "weak_A_map",
    "header": "weak_other_map",
}
#: Slot kinds whose entity is drawn in proportion to its words (the repo picks a random token of the library).
BY_WORDS = frozenset({"weak_question", "weak_answer", "header"})
#: Largest font size (pixels) in a table cell and in the header box; smallest tried.
CELL_SIZE, HEADER_SIZE, MIN_SIZE = 12.0, 20.0, 2.0
#: Pixels kept free inside a cell on every side.
PAD = 2
#: Baseline-to-baseline distance and the gap between words, per pixel of font size.
LINE_SPACING, WORD_GAP = 1.25, 0.3
#: Most bytes read from one library file.
MAX_MAP_BYTES = 64 << 20


class LibraryEntity(NamedTuple):
    """An entity of a library: its words' texts, its label, and where it came from (document id, entity id)."""

    texts: tuple[str, ...]
    label: str
    origin: tuple[str, int]


class Slot(NamedTuple):
    """A place of a document's layout: its kind, its box (the repo's cell) and the library entity put there."""

    kind: str  # "header", "strong_question", "strong_answer", "weak_question", "weak_answer"
    box: tuple[int, int, int, int]
    entity: LibraryEntity | None  # None: a weak cell left empty (probability 1 - weak_prob)


class MixLayout(NamedTuple):
    """What document ``i`` was drawn from: orientation, table size and every slot, in drawing order."""

    top_q: bool
    rows: int
    columns: int
    slots: tuple[Slot, ...]

    def counts(self) -> dict[str, int]:
        """Filled slots by kind, and the weak cells (filled or not) by kind (``weak_question_cells``, ...)."""
        out = {kind: 0 for kind in LIBRARY_FILES}
        for slot in self.slots:
            if slot.entity is not None:
                out[slot.kind] += 1
            if slot.kind.startswith("weak"):
                out[f"{slot.kind}_cells"] = out.get(f"{slot.kind}_cells", 0) + 1
        return out


def _tag_label(tag: str) -> str:
    """FUNSD's label of an IOB tag (``O`` is ``other``)."""
    return "other" if tag in ("O", "") else (tag[2:] if tag[:2] in ("B-", "I-") else tag).lower()


def text_library(docs: Sequence[Document]) -> dict[str, tuple[LibraryEntity, ...]]:
    """The five libraries of ``docs``' entities sorted by what their text alone says (the module docstring's
    rules); an entity may be in two (a capitalised question ending with ``:`` is a strong question and a weak
    header). Entities without non-blank words are left out."""
    out: dict[str, list[LibraryEntity]] = {kind: [] for kind in LIBRARY_FILES}
    for doc in docs:
        for ent in doc.entities:
            texts = tuple(doc.words[i].text.strip() for i in ent.word_ids if doc.words[i].text.strip())
            if not texts:
                continue
            item = LibraryEntity(texts, ent.label, (doc.id, ent.id))
            text = " ".join(texts)
            digit = any(c.isdigit() for c in text)
            letters = [c for c in text if c.isalpha()]
            if ent.label == "question" and text.endswith(":"):
                out["strong_question"].append(item)
            if ent.label == "answer" and digit:
                out["strong_answer"].append(item)
            if ent.label == "other" and len(texts) <= 4:
                if digit:
                    out["weak_answer"].append(item)
                elif texts[0][:1].isupper():
                    out["weak_question"].append(item)
            if ent.label != "header" and len(texts) <= 8 and len(letters) >= 3 and all(c.isupper() for c in letters):
                out["header"].append(item)
    return {kind: tuple(items) for kind, items in out.items()}


def repo_library(folder: str | Path) -> dict[str, tuple[LibraryEntity, ...]]:
    """The repo's five library files in ``folder`` (lines ``token<TAB>tag<TAB>entity number``), read through
    :mod:`dogood.core.fs`: an entity is the run of lines with one entity number; its label is its first tag's."""
    out = {}
    for kind, name in LIBRARY_FILES.items():
        path = Path(folder) / name
        try:
            text = fs.read_text(path, max_bytes=MAX_MAP_BYTES, what="Do-GOOD library file")
        except FileNotFoundError:
            raise SourceError(f"{path}: missing; a Do-GOOD library folder holds "
                              f"{', '.join(LIBRARY_FILES.values())}") from None
        except OSError as exc:
            raise SourceError(f"{path}: cannot read it ({exc})") from None
        entities: list[LibraryEntity] = []
        run: list[str] = []
        tag, number = "", None
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != 3:
                raise SourceError(f"{path}, line {n}: expected token<TAB>tag<TAB>entity, got {line[:80]!r}")
            if parts[2] != number and run:
                entities.append(LibraryEntity(tuple(run), _tag_label(tag), (name, len(entities))))
                run = []
            if not run:
                tag, number = parts[1], parts[2]
            number = parts[2]
            if parts[0].strip():
                run.append(parts[0].strip())
        if run:
            entities.append(LibraryEntity(tuple(run), _tag_label(tag), (name, len(entities))))
        out[kind] = tuple(entities)
    return out


def draw_layout(library: dict[str, tuple[LibraryEntity, ...]], rng: np.random.Generator, *,
                size: tuple[int, int] = (800, 1000), weak_prob: float = 0.3, rows: tuple[int, int] = (8, 10),
                columns: tuple[int, int] = (2, 2), cell_width: tuple[int, int] = (150, 200),
                cell_height: tuple[int, int] = (20, 30), header_width: tuple[int, int] = (500, 700),
                header_height: tuple[int, int] = (50, 80), padding: int = 1) -> MixLayout:
    """One document's layout, drawn as ``gen_ood_mix.py`` draws it (the module docstring, steps 1-5; ranges
    inclusive), from ``rng``."""
    width, height = size
    weights = {kind: _weights(items) if kind in BY_WORDS else None for kind, items in library.items()}

    def pick(kind: str) -> LibraryEntity:
        items = library[kind]
        return items[int(rng.choice(len(items), p=weights[kind]))]

    def between(bounds: tuple[int, int]) -> int:
        return int(rng.integers(bounds[0], bounds[1], endpoint=True))

    hw, hh = between(header_width), between(header_height)
    hx = (width - hw) // 2
    slots = [Slot("header", (hx, 50, hx + hw, 50 + hh), pick("header"))]
    top_q = bool(rng.integers(0, 2))
    n_rows, n_cols = between(rows), between(columns)
    total_rows, total_cols = n_rows + 2 * padding, n_cols + 2 * padding
    col_w = [between(cell_width) for _ in range(total_cols)]
    row_h = [between(cell_height) for _ in range(total_rows)]
    x_init, y_init = (width - sum(col_w)) // 2, (height - sum(row_h)) // 2
    first, last = padding, padding + n_rows - 1  # strong rows
    first_c, last_c = padding, padding + n_cols - 1  # strong columns
    for r in range(total_rows):
        for c in range(total_cols):
            x0, y0 = x_init + sum(col_w[:c]), y_init + sum(row_h[:r])
            box = (x0, y0, x0 + col_w[c], y0 + row_h[r])
            if first <= r <= last and first_c <= c <= last_c:
                kind = "strong_question" if (r == first if top_q else c == first_c) else "strong_answer"
                slots.append(Slot(kind, box, pick(kind)))
                continue
            along, lo, hi = (r, first, last) if top_q else (c, first_c, last_c)
            if along in (0, lo):
                kind = "weak_question"
            elif along in (hi, hi + padding):
                kind = "weak_answer"
            else:
                continue
            filled = rng.uniform() < weak_prob
            slots.append(Slot(kind, box, pick(kind) if filled else None))
    return MixLayout(top_q, n_rows, n_cols, tuple(slots))


def _weights(items: Sequence[LibraryEntity]) -> np.ndarray | None:
    if not items:
        return None
    counts = np.array([len(item.texts) for item in items], dtype=np.float64)
    return counts / counts.sum()


class _Sprite(NamedTuple):
    ink: np.ndarray  # coverage 0-255, cropped to the ink (every border row and column holds ink), or 0 x 0
    dx: int  # ink's left minus the pen's x
    dy: int  # ink's top minus the baseline's y
    width: int  # the ink's width (the advance used for layout)


@functools.lru_cache(maxsize=8192)
def word_sprite(text: str, size: float, face: str = DEFAULT_FACE) -> _Sprite:
    """``text`` drawn by :func:`dogood.page.render.text_alpha` in ``face`` at ``size`` pixels, cropped to its ink."""
    style = Style(face, size, 1.0, 0.0, 0.0)
    slot_w = int(math.ceil(text_width(text, style) + 2 * size)) + 8
    slot_h = int(math.ceil(2.6 * size)) + 8
    baseline, left = int(math.ceil(1.5 * size)) + 4, 4
    alpha = text_alpha(text, (0, 0, slot_w, slot_h), Style(face, size, 1.0, float(baseline), float(left)))
    rows, cols = np.flatnonzero(alpha.any(axis=1)), np.flatnonzero(alpha.any(axis=0))
    if not rows.size:
        return _Sprite(np.zeros((0, 0), np.uint8), 0, 0, max(1, int(round(text_width(text, style)))))
    ink = alpha[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1].copy()
    ink.flags.writeable = False
    return _Sprite(ink, int(cols[0]) - left, int(rows[0]) - baseline, ink.shape[1])


def _unit_width(text: str) -> float:
    return text_width(text, Style(DEFAULT_FACE, 1.0, 1.0, 0.0, 0.0))


def fit_entity(texts: Sequence[str], box: tuple[int, int, int, int], largest: float) -> list[tuple[int, int, _Sprite]]:
    """Where each word's ink goes (top-left corner and sprite) so that ``texts`` fill ``box`` less :data:`PAD`
    left-aligned, wrapped, vertically centred, at the largest size from ``largest`` down (whole pixels, then
    halves below 6) at which they fit; at :data:`MIN_SIZE` they are placed even if they overflow."""
    x0, y0, x1, y1 = box
    inner_w, inner_h = (x1 - x0) - 2 * PAD, (y1 - y0) - 2 * PAD
    unit = [_unit_width(t) for t in texts]
    sizes = [float(s) for s in range(int(largest), 5, -1)] + [s / 2 for s in range(11, int(2 * MIN_SIZE) - 1, -1)]
    placed = None
    for size in sizes:
        gap = WORD_GAP * size
        if _wrap([u * size for u in unit], gap, inner_w) is None:  # a cheap estimate first
            continue
        placed = _place(texts, size, inner_w, inner_h)
        if placed is not None:
            break
    if placed is None:
        placed = _place(texts, sizes[-1], inner_w, inner_h, force=True)
    return [(x0 + PAD + x, y0 + PAD + y, sprite) for x, y, sprite in placed]


def _wrap(widths: Sequence[float], gap: float, room: float) -> list[list[int]] | None:
    """Words per line (greedy), or ``None`` when a line cannot hold its words."""
    lines: list[list[int]] = []
    used = 0.0
    for i, w in enumerate(widths):
        if lines and used + gap + w <= room:
            lines[-1].append(i)
            used += gap + w
        else:
            if w > room:
                return None
            lines.append([i])
            used = w
    return lines


def _place(texts, size, inner_w, inner_h, force=False):
    sprites = [word_sprite(t, size) for t in texts]
    gap = WORD_GAP * size
    # at the smallest size (force), a word wider than the room takes a line of its own and overflows
    lines = _wrap([min(s.width, inner_w) if force else s.width for s in sprites], gap, inner_w)
    if lines is None:
        return None
    pitch = LINE_SPACING * size
    inked = [s for s in sprites if s.ink.size]
    top = min((s.dy for s in inked), default=-size)
    bottom = max((s.dy + s.ink.shape[0] for s in inked), default=0)
    block = (len(lines) - 1) * pitch + (bottom - top)
    if block > inner_h and not force:
        return None
    base0 = max(0.0, (inner_h - block) / 2) - top
    out = []
    for n, line in enumerate(lines):
        pen = 0.0
        baseline = base0 + n * pitch
        for i in line:
            s = sprites[i]
            out.append((int(round(pen)) + s.dx, int(round(baseline)) + s.dy, s))
            pen += s.width + gap
    order = {i: k for k, i in enumerate(j for line in lines for j in line)}
    return [out[order[i]] for i in range(len(texts))]


def render_mix(layout: MixLayout, size: tuple[int, int] = (800, 1000)) -> tuple[np.ndarray, tuple[Word, ...],
                                                                              tuple[Entity, ...]]:
    """The page of ``layout``: white RGB pixels with every filled slot's words drawn in it, the words (boxes: the
    exact half-open extent of their ink, clipped to the page) and the entities with their gold labels and links."""
    width, height = size
    page = np.full((height, width), 255.0, dtype=np.float32)
    words: list[Word] = []
    entities: list[Entity] = []
    cells: list[tuple[int, str, int, int]] = []  # entity id, kind, row key, column key
    for slot in layout.slots:
        if slot.entity is None:
            continue
        largest = HEADER_SIZE if slot.kind == "header" else CELL_SIZE
        ids = []
        for text, (x, y, sprite) in zip(slot.entity.texts, fit_entity(slot.entity.texts, slot.box, largest)):
            h, w = sprite.ink.shape
            if h and w:
                cx0, cy0, cx1, cy1 = max(0, x), max(0, y), min(width, x + w), min(height, y + h)
                a = sprite.ink[cy0 - y:cy1 - y, cx0 - x:cx1 - x].astype(np.float32) / 255.0
                page[cy0:cy1, cx0:cx1] = page[cy0:cy1, cx0:cx1] * (1.0 - a) + DEFAULT_INK * a
                rows, cols = np.flatnonzero(a.any(axis=1)), np.flatnonzero(a.any(axis=0))
                box = ((cx0 + int(cols[0]), cy0 + int(rows[0]), cx0 + int(cols[-1]) + 1, cy0 + int(rows[-1]) + 1)
                       if rows.size else (cx0, cy0, cx0, cy0))
            else:  # no glyph drawn (a character the face lacks): an empty box at the pen
                box = (min(max(0, x), width), min(max(0, y), height), min(max(0, x), width), min(max(0, y), height))
            ids.append(len(words))
            words.append(Word(text, box))
        ent_id = len(entities)
        entities.append(Entity(ent_id, slot.entity.label, tuple(ids)))
        cells.append((ent_id, slot.kind, slot.box[1], slot.box[0]))
    links: dict[int, list[tuple[int, int]]] = {}
    questions = [c for c in cells if c[1] == "strong_question"]
    for a_id, kind, y, x in cells:
        if kind != "strong_answer":
            continue
        for q_id, _, qy, qx in questions:
            if (qx == x) if layout.top_q else (qy == y):
                links.setdefault(q_id, []).append((q_id, a_id))
                links.setdefault(a_id, []).append((q_id, a_id))
    entities = [e if e.id not in links else Entity(e.id, e.label, e.word_ids, tuple(links[e.id])) for e in entities]
    pixels = np.clip(np.rint(page), 0, 255).astype(np.uint8)
    return np.repeat(pixels[..., None], 3, axis=2), tuple(words), tuple(entities)


@dataclass
class FunsdMixSource:
    """Do-GOOD's synthetic FUNSD-L documents (``gen_ood_mix.py``), drawn from a FUNSD split's entities.

    Parameters
    ----------
    split : the name of the split made (ids ``mix-NN``; part of every document's seed).
    documents : how many documents (the repo: 50).
    seed : the documents' seed (with the split and the document's index).
    library : ``text`` (default: entities sorted by their text, from FUNSD ``library_split``) or ``repo`` (the
        repo's five library files in ``maps``).
    root : the FUNSD ``dataset`` folder the ``text`` library is read from (found as the ``funsd`` source finds it).
    library_split : the FUNSD split the ``text`` library comes from (the repo: ``test``).
    maps : the folder of the repo's library files, for ``library: repo``.
    weak_prob : the chance that a weak cell is filled (the repo: 0.3).
    rows : the range (inclusive) of the number of strong rows (the repo: 8 to 10).
    """

    split: str = "test"
    documents: int = 50
    seed: int = 0
    library: str = "text"
    root: str | Path | None = None
    library_split: str = "test"
    maps: str | Path | None = None
    weak_prob: float = 0.3
    rows: tuple[int, int] = (8, 10)
    kind: str = field(default="funsd_mix", init=False)
    schema: str = field(default="funsd", init=False)

    def __post_init__(self):
        if isinstance(self.documents, bool) or not isinstance(self.documents, int) or not 1 <= self.documents <= 10**6:
            raise SourceError(f"funsd_mix: documents must be a whole number from 1 to 1000000, got {self.documents!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise SourceError(f"funsd_mix: seed must be a whole number, got {self.seed!r}")
        if self.library not in ("text", "repo"):
            raise SourceError(f"funsd_mix: library must be 'text' or 'repo', got {self.library!r}")
        if (self.library == "repo") != (self.maps is not None):
            raise SourceError("funsd_mix: library: repo reads the repo's files from maps: FOLDER, and maps needs "
                              "library: repo")
        p = self.weak_prob
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise SourceError(f"funsd_mix: weak_prob must be a number from 0 to 1, got {self.weak_prob!r}")
        rows = self.rows
        whole = isinstance(rows, (list, tuple)) and all(isinstance(r, int) and not isinstance(r, bool) for r in rows)
        if not whole or len(rows) != 2 or not 2 <= rows[0] <= rows[1] <= 20:
            raise SourceError(f"funsd_mix: rows must be [low, high] with 2 <= low <= high <= 20, got {rows!r}")
        self.rows = (int(rows[0]), int(rows[1]))
        self._library: dict[str, tuple[LibraryEntity, ...]] | None = None
        self._funsd = None
        if self.library == "text":
            from dogood.sources.funsd import FunsdSource

            self._funsd = FunsdSource(root=self.root, split=self.library_split)
            self.root = self._funsd.root

    def entity_labels(self) -> tuple[str, ...]:
        return FUNSD_LABELS

    def libraries(self) -> dict[str, tuple[LibraryEntity, ...]]:
        """The five libraries (read once per process), each non-empty, else a :class:`SourceError` naming it.

        An entity with a word of which the face draws nothing (FUNSD's ``☑``, a checkbox glyph Liberation lacks)
        is left out, so that every word's box is its own ink."""
        if self._library is None:
            if self._funsd is not None:
                library = text_library([self._funsd.load(i) for i in self._funsd.ids()])
            else:
                library = repo_library(self.maps)
            library = {kind: tuple(e for e in items if all(_unit_width(t) > 0 for t in e.texts))
                       for kind, items in library.items()}  # every word drawable: a box on its own ink
            empty = [kind for kind, items in library.items() if not items]
            if empty:
                raise SourceError(f"funsd_mix: the {', '.join(empty)} library is empty ({self._where()}): no "
                                  "document can be drawn")
            self._library = library
        return self._library

    def _where(self) -> str:
        return f"FUNSD {self.library_split}" if self._funsd is not None else f"maps {self.maps}"

    def ids(self) -> PageIds:
        """``mix-NN`` for every document, computed on demand."""
        return PageIds("mix", range(self.documents), max(2, len(str(self.documents - 1))))

    def rng(self, index: int) -> np.random.Generator:
        """Document ``index``'s generator: depends on the seed, the split and the index only."""
        return np.random.default_rng([GENERATOR_VERSION, self.seed % (1 << 64), zlib.crc32(self.split.encode("utf-8")),
                                      int(index)])

    def layout(self, doc_id: str) -> MixLayout:
        """What document ``doc_id`` is made of: its orientation, table and slots with their library entities."""
        index = self.ids().page_index(doc_id)
        if index is None:
            raise DocumentError(f"not a document of this funsd_mix split ({self.documents} documents, ids "
                                f"{self.ids()[0]}..)", doc_id=doc_id)
        return draw_layout(self.libraries(), self.rng(index), weak_prob=float(self.weak_prob), rows=self.rows)

    def load(self, doc_id: str) -> Document:
        layout = self.layout(doc_id)
        pixels, words, entities = render_mix(layout)
        return Document(id=doc_id, image=PageImage.from_array(pixels), words=words, entities=entities,
                        source=f"funsd_mix:seed={self.seed}:{self.split}:{doc_id}")

    def describe(self) -> dict[str, Any]:
        info = {
            "kind": "funsd_mix",
            "split": self.split,
            "name": "Do-GOOD's synthetic FUNSD-L documents (gen_ood_mix.py), drawn by dogood",
            "documents": self.documents,
            "seed": self.seed,
            "library": self.library,
            "library_split": self.library_split,
            "weak_prob": self.weak_prob,
            "rows": list(self.rows),
            "generator_version": GENERATOR_VERSION,
            "citation": "He et al. Do-GOOD: Towards Distribution Shift Evaluation for Pre-Trained Visual Document "
                        "Understanding Models. SIGIR 2023. Code: https://github.com/MAEHCM/Do-GOOD (gen_ood_mix.py).",
        }
        if self._funsd is not None:
            funsd = self._funsd.describe()
            info.update(library_source=funsd, license=funsd.get("license"), license_name=funsd.get("license_name"))
        else:
            info.update(license="the terms of the library files' owner", license_name="do-good-library")
        return info
