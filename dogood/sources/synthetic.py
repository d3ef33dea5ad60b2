"""Synthetic RVL-CDIP-sized pages, generated from (seed, split, page index): for scale and memory tests.

No file is read. Page ``i`` of a split is drawn from its own random generator,
seeded with ``(seed, split, i)``, so any page can be made alone, in any
process and in any order, and is the same every time. A page is an 8-bit
grayscale image (754 x 1000 by default, the size of an RVL-CDIP page) of
off-white paper with smooth shading and scanner specks, on which 150-250
words (by default) are drawn with OpenCV's Hershey fonts (``cv2.putText``,
anti-aliased): a title, then either paragraphs of prose or key-value lines
in two columns, depending on the page's class. Each word is drawn alone on a
scratch canvas and cropped to its ink (:func:`word_sprite`, cached for
vocabulary words), then blended into the paper where the layout puts it, so
its box is the exact half-open extent ``[x0, x1) x [y0, y1)`` of its ink:
boxes enclose their ink and nothing else.

The page class is one of the 16 RVL-CDIP classes (:data:`RVL_CDIP_CLASSES`),
drawn uniformly. With ``entities=True`` the words are grouped as FUNSD
entities (title: ``header``; key: ``question``; value: ``answer``, linked to
its key; prose line: ``other``), and ``questions=N`` adds up to ``N``
question/answer pairs whose answers are words of the page. ``schema`` picks
the output columns (``rvl_cdip`` by default; ``funsd`` turns entities on;
``docvqa`` wants ``questions``).

The source keeps nothing per page: ids are computed from the index
(:class:`PageIds`, a lazy sequence), and a page's pixels exist only while its
document does. The image is handed over as encoded bytes (OpenCV's encoder) with
its pixels attached: PackBits TIFF by default, as RVL-CDIP's own files (2 ms a
page; PNG takes about 15 ms). An unshifted page is written as these bytes, not
re-encoded, and a shift reads the pixels without decoding.

Recipe::

    source: {kind: synthetic, pages: 1000, size: [754, 1000], seed: 0}
"""

from __future__ import annotations

import functools
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import cv2
import numpy as np

from dogood.core.document import Document, Entity, PageImage, QAPair, Word
from dogood.core.errors import DocumentError, SourceError
from dogood.core.schema import RVL_CDIP_CLASSES, SCHEMAS

#: Bumped whenever the pages a (seed, split, index) gives change.
GENERATOR_VERSION = 1

_FONTS = (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_COMPLEX, cv2.FONT_HERSHEY_TRIPLEX)
#: encoding -> (OpenCV extension, parameters, Pillow format name).
_ENCODERS = {
    "tiff": (".tif", [cv2.IMWRITE_TIFF_COMPRESSION, 32773], "TIFF"),  # PackBits
    "png": (".png", [cv2.IMWRITE_PNG_COMPRESSION, 1], "PNG"),
    "jpeg": (".jpg", [cv2.IMWRITE_JPEG_QUALITY, 95], "JPEG"),
}
#: Classes laid out as key-value lines; the others as prose.
_FORM_CLASSES = frozenset({"form", "budget", "invoice", "specification", "questionnaire", "file folder"})

_VOCABULARY = tuple(
    """
    the of and to in for is on that by with this be are from at as or an was will all have not which
    report company product research study results data sample test tobacco smoke cigarette brand market
    sales price cost total amount budget invoice order number date account payment department office
    letter memo meeting project program plan review approval request response information please
    attached following enclosed regarding subject copy distribution committee board members president
    manager director division group staff employee public health medical science scientific laboratory
    analysis method procedure standard specification quality material paper filter package label
    advertising campaign media news article journal page volume issue annual quarterly monthly weekly
    new first second final current previous additional further general special national international
    federal state regional local central north south east west year month week day time period schedule
    contract agreement terms conditions service services development production manufacturing plant
    equipment system systems process control level levels rate rates increase decrease change changes
    effect effects response evaluation summary conclusion discussion background objective purpose scope
    questionnaire survey consumer consumers customer customers retail store stores distribution shipment
    delivery address telephone fax phone street avenue suite city county received sent signed reviewed
    prepared approved revised proposed estimated actual net gross unit units each per cent percent value
    values item items description quantity charge charges tax discount balance due paid credit note
    notes record records file files folder reference code section table figure chart presentation
    resume experience education university college school degree member association society council
    """.split()
)
_KEYS = tuple(
    """
    Date Name Address Company Account Order Invoice Amount Total Price Quantity Brand Product Code
    Project Department Phone Fax Reference Subject Region Budget Cost Approved Signed Received Sample
    Test Period Unit Item Rate Contract Customer Store Division Manager Status Category Number
    """.split()
)


class PageIds(Sequence):
    """The ids of a synthetic split, computed from the page index (nothing is stored per page).

    A read-only sequence over a ``range``: indexing gives ``"<split>-<index>"``
    (zero-padded to the width of the largest index), slicing gives another
    :class:`PageIds`, ``in`` and :meth:`index` parse the id back.
    """

    def __init__(self, split: str, indices: range, width: int):
        self.split, self.indices, self.width = split, indices, width

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, item):
        if isinstance(item, slice):
            return PageIds(self.split, self.indices[item], self.width)
        return f"{self.split}-{self.indices[item]:0{self.width}d}"

    def page_index(self, doc_id: str) -> int | None:
        """The page index an id names, or ``None`` when it is not one of these ids."""
        prefix, _, number = str(doc_id).rpartition("-")
        if prefix != self.split or len(number) != self.width or not number.isdigit():
            return None
        index = int(number)
        return index if index in self.indices else None

    def __contains__(self, doc_id) -> bool:
        return self.page_index(doc_id) is not None

    def index(self, doc_id, start: int = 0, stop: int | None = None) -> int:
        page = self.page_index(doc_id)
        if page is None:
            raise ValueError(f"{doc_id!r} is not in the ids")
        pos = self.indices.index(page)
        if pos < start or (stop is not None and pos >= stop):
            raise ValueError(f"{doc_id!r} is not in the ids")
        return pos

    def __eq__(self, other) -> bool:
        if isinstance(other, PageIds):
            return (self.split, self.width) == (other.split, other.width) and self.indices == other.indices
        return isinstance(other, Sequence) and not isinstance(other, str) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PageIds({self.split!r}, {self.indices!r})"


class SyntheticPage(NamedTuple):
    """What one generated page holds: pixels, words, class label, entities and question/answer pairs."""

    pixels: np.ndarray
    words: tuple[Word, ...]
    label: str
    entities: tuple[Entity, ...]
    qa: tuple[QAPair, ...]


def page_rng(seed: int, split: str, index: int) -> np.random.Generator:
    """The random generator of page ``index`` of ``split``: depends on these three values only."""
    return np.random.default_rng([GENERATOR_VERSION, int(seed) % (1 << 64), zlib.crc32(split.encode("utf-8")), int(index)])


def make_paper(rng: np.random.Generator, width: int, height: int) -> np.ndarray:
    """Off-white paper: a page tone, smooth low-frequency shading and sparse dark scanner specks."""
    tone = float(rng.uniform(236, 252))
    coarse = rng.normal(tone, 2.5, (height // 40 + 2, width // 40 + 2))
    paper = cv2.resize(np.clip(np.rint(coarse), 0, 255).astype(np.uint8), (width, height),
                       interpolation=cv2.INTER_LINEAR)
    n = int(rng.integers(width * height // 4000, width * height // 1000))
    ys = rng.integers(0, height, n)
    xs = rng.integers(0, width, n)
    paper[ys, xs] = rng.integers(120, 220, n).astype(np.uint8)
    return paper


#: Body text sizes: font scales are drawn from these, so that word images can be cached.
_SCALES = (0.40, 0.45, 0.50)
_TITLE_SCALES = (0.64, 0.72, 0.80, 0.88)


class Sprite(NamedTuple):
    """A word drawn alone: its ink (tight, anti-aliased coverage 0-255) and where that lies from the pen."""

    ink: np.ndarray  # h x w uint8, read-only; every border row and column holds ink
    dx: int  # ink's left column minus the pen's x
    dy: int  # ink's top row minus the baseline's y
    advance: int  # OpenCV's advance width of the text


def word_sprite(text: str, font: int, scale: float, thickness: int) -> Sprite:
    """``text`` drawn by ``cv2.putText`` (anti-aliased) on a blank canvas, cropped to its ink.

    The canvas leaves a text height of room on every side, far more than
    Hershey glyphs reach beyond OpenCV's text size. Words without digits are
    cached (at most 16,384 images, under 30 MB): most words of a page are vocabulary
    words at one of a few sizes. A text without ink gives an empty sprite.
    """
    if _HAS_DIGIT(text):
        return _draw_sprite(text, font, scale, thickness)
    return _cached_sprite(text, font, scale, thickness)


def _draw_sprite(text: str, font: int, scale: float, thickness: int) -> Sprite:
    (w, h), _ = cv2.getTextSize(text, font, scale, thickness)
    ox, oy = h + 2, 2 * h + 2
    canvas = np.zeros((3 * h + 4, w + 2 * h + 4), np.uint8)
    cv2.putText(canvas, text, (ox, oy), font, scale, 255, thickness, cv2.LINE_AA)
    rows = np.flatnonzero(canvas.any(axis=1))
    if rows.size == 0:
        ink = np.zeros((0, 0), np.uint8)
        ink.flags.writeable = False
        return Sprite(ink, 0, 0, w)
    cols = np.flatnonzero(canvas.any(axis=0))
    ink = canvas[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1].copy()
    ink.flags.writeable = False
    return Sprite(ink, int(cols[0]) - ox, int(rows[0]) - oy, w)


_HAS_DIGIT = re.compile(r"\d").search
_cached_sprite = functools.lru_cache(maxsize=16384)(_draw_sprite)


class _Pen:
    """Lays words out on a line (:meth:`fits`, :meth:`add`), then puts the line's ink on the page (:meth:`line`).

    Each word is its :func:`word_sprite` placed at the pen, so its box is exactly
    its ink's extent; words are :attr:`gap` pixels apart beyond their advance
    widths, so their boxes do not touch. The line's ink is blended into the paper
    in one go, in the page's ink tone.
    """

    def __init__(self, page: np.ndarray, font: int, scale: float, tone: int, draw: bool):
        self.page, self.font, self.scale, self.tone, self.draw = page, font, scale, tone, draw
        self.height = cv2.getTextSize("Hg", font, scale, 1)[0][1]
        self.gap = max(5, int(round(0.55 * self.height)))
        self.pending: list[tuple[str, int, Sprite]] = []  # (text, pen x, sprite)
        self.x = 0
        self.line_scale, self.thickness = scale, 1

    def start(self, x: int, scale: float | None = None, thickness: int = 1) -> None:
        self.pending, self.x = [], x
        self.line_scale, self.thickness = scale or self.scale, thickness

    def fits(self, text: str, limit: int) -> Sprite | None:
        """The sprite of ``text`` if it fits before ``limit`` at the current position, else ``None``."""
        sprite = word_sprite(text, self.font, self.line_scale, self.thickness)
        return sprite if self.x + sprite.advance <= limit else None

    def add(self, text: str, sprite: Sprite) -> int:
        """Place ``text`` at the current position; its index among the line's words."""
        self.pending.append((text, self.x, sprite))
        self.x += sprite.advance + self.gap
        return len(self.pending) - 1

    def skip_to(self, x: int) -> None:
        self.x = max(self.x, x)

    def line(self, baseline: int) -> list[Word]:
        """Put the pending words on the page with their baseline at ``baseline``; their :class:`Word` records."""
        if not self.pending:
            return []
        H, W = self.page.shape
        words, placed = [], []
        for text, x, sp in self.pending:
            h, w = sp.ink.shape
            x0, y0 = x + sp.dx, baseline + sp.dy
            if h == 0 or x0 < 0 or y0 < 0 or x0 + w > W or y0 + h > H:  # no ink, or off the page: an empty box
                cx, cy = min(max(x, 0), W), min(max(baseline, 0), H)
                words.append(Word(text, (cx, cy, cx, cy)))
                continue
            words.append(Word(text, (x0, y0, x0 + w, y0 + h)))
            placed.append((x0, y0, sp.ink))
        self.pending = []
        if self.draw and placed:
            top = min(p[1] for p in placed)
            bottom = max(p[1] + p[2].shape[0] for p in placed)
            left = min(p[0] for p in placed)
            right = max(p[0] + p[2].shape[1] for p in placed)
            alpha = np.zeros((bottom - top, right - left), np.uint8)
            for x0, y0, ink in placed:
                region = alpha[y0 - top:y0 - top + ink.shape[0], x0 - left:x0 - left + ink.shape[1]]
                np.maximum(region, ink, out=region)
            paper = self.page[top:bottom, left:right]
            # page = paper - (paper - tone) * alpha / 255, in saturating uint8 arithmetic
            darker = cv2.multiply(cv2.subtract(paper, self.tone), alpha, scale=1.0 / 255)
            paper[...] = cv2.subtract(paper, darker)
        return words


class _Dice:
    """Cheap draws for the layout: uniforms taken in blocks from the page's generator (one numpy call per 1,024)."""

    def __init__(self, rng: np.random.Generator):
        self.rng, self.block, self.i = rng, rng.random(1024).tolist(), 0

    def random(self) -> float:
        if self.i == len(self.block):
            self.block, self.i = self.rng.random(1024).tolist(), 0
        self.i += 1
        return self.block[self.i - 1]

    def integers(self, low: int, high: int | None = None) -> int:
        """An integer in ``[low, high)`` (or ``[0, low)``), as ``numpy``'s ``integers``."""
        if high is None:
            low, high = 0, low
        return min(high - 1, low + int(self.random() * (high - low)))

    def uniform(self, a: float, b: float) -> float:
        return a + (b - a) * self.random()

    def weighted(self, weights: tuple[float, ...]) -> int:
        u, total = self.random() * sum(weights), 0.0
        for k, w in enumerate(weights):
            total += w
            if u < total:
                return k
        return len(weights) - 1


def _token(rng: _Dice, numeric: float) -> str:
    """A word of running text, or (with probability ``numeric``) a number, price, date or code."""
    if rng.random() >= numeric:
        return _VOCABULARY[rng.integers(len(_VOCABULARY))]
    kind = rng.integers(5)
    if kind == 0:
        return str(rng.integers(1, 10000))
    if kind == 1:
        return f"${rng.integers(1, 5000)}.{rng.integers(100):02d}"
    if kind == 2:
        return f"{rng.integers(1, 13):02d}/{rng.integers(1, 29):02d}/{rng.integers(1960, 2000)}"
    if kind == 3:
        return f"{rng.integers(1, 100)}%"
    return f"{chr(65 + rng.integers(26))}-{rng.integers(100, 10000)}"


def render_page(
    seed: int,
    split: str,
    index: int,
    *,
    size: tuple[int, int] = (754, 1000),
    words: tuple[int, int] = (150, 250),
    entities: bool = False,
    questions: int = 0,
    text: bool = True,
) -> SyntheticPage:
    """Generate page ``index`` of ``split`` (see the module docstring).

    ``text=False`` leaves the paper blank but returns the same paper, words and
    boxes (for checking that the boxes enclose the ink).
    """
    width, height = int(size[0]), int(size[1])
    generator = page_rng(seed, split, index)
    page = make_paper(generator, width, height)
    rng = _Dice(generator)
    label = RVL_CDIP_CLASSES[rng.integers(len(RVL_CDIP_CLASSES))]
    target = rng.integers(words[0], words[1] + 1)
    font = _FONTS[rng.weighted((0.4, 0.3, 0.15, 0.15))]
    pen = _Pen(page, font, _SCALES[rng.integers(len(_SCALES))], rng.integers(10, 80), text)
    left = rng.integers(width // 20, width // 10)
    right = width - rng.integers(width // 20, width // 10)
    y = rng.integers(height // 25, height // 12)
    step = int(round(pen.height * rng.uniform(1.7, 2.1)))
    bottom = height - height // 25

    out: list[Word] = []
    groups: list[tuple[str, list[int]]] = []  # (entity label, word indices in ``out``)
    pairs: list[tuple[int, int]] = []  # (key group, value group): the key-value links

    def group(label_: str, line_ids: list[int]) -> int:
        groups.append((label_, [len(out) + i for i in line_ids]))
        return len(groups) - 1

    # Title: 2-5 capitalised words, larger and bold.
    title_scale = _TITLE_SCALES[rng.integers(len(_TITLE_SCALES))]
    y += int(pen.height * title_scale / pen.scale)
    pen.start(left, title_scale, 2)
    ids = []
    for _ in range(rng.integers(2, 6)):
        t = _token(rng, 0.0).capitalize()
        sprite = pen.fits(t, right)
        if sprite is None:
            break
        ids.append(pen.add(t, sprite))
        pen.skip_to(pen.x + pen.gap)
    if ids:
        group("header", ids)
    out.extend(pen.line(y))
    y += 2 * step

    if label in _FORM_CLASSES:  # key-value lines in two columns
        columns = [left, left + (right - left) // 2 + 10]
        key_width = int((right - left) * 0.2)
        while len(out) < target and y + pen.height < bottom:
            pen.start(left)
            for c, cx in enumerate(columns):
                limit = right if c == len(columns) - 1 else columns[c + 1] - 2 * pen.gap
                pen.skip_to(cx)
                key_ids, value_ids = [], []
                n_key = rng.integers(1, 3)
                for k in range(n_key):
                    if len(out) + len(pen.pending) >= target:
                        break
                    t = _KEYS[rng.integers(len(_KEYS))] if k == 0 else _token(rng, 0.0)
                    t = t + ":" if k == n_key - 1 else t
                    sprite = pen.fits(t, limit)
                    if sprite is None:
                        break
                    key_ids.append(pen.add(t, sprite))
                pen.skip_to(cx + key_width)
                for _ in range(rng.integers(1, 4)):
                    if len(out) + len(pen.pending) >= target:
                        break
                    t = _token(rng, 0.6)
                    sprite = pen.fits(t, limit)
                    if sprite is None:
                        break
                    value_ids.append(pen.add(t, sprite))
                if key_ids and value_ids:
                    pairs.append((group("question", key_ids), group("answer", value_ids)))
                elif key_ids or value_ids:
                    group("other", key_ids + value_ids)
            out.extend(pen.line(y))
            y += step
    else:  # paragraphs of prose
        sentence_start = True
        while len(out) < target and y + pen.height < bottom:
            pen.start(left + (3 * pen.gap if sentence_start and rng.random() < 0.5 else 0))
            line_end = right - rng.integers(0, (right - left) // 3) if rng.random() < 0.15 else right
            line_ids = []
            while len(out) + len(line_ids) < target:
                t = _token(rng, 0.08)
                if sentence_start:
                    t, sentence_start = t.capitalize(), False
                if rng.random() < 0.1:
                    t, sentence_start = t + ".", True
                elif rng.random() < 0.05:
                    t += ","
                sprite = pen.fits(t, line_end)
                if sprite is None:
                    break
                line_ids.append(pen.add(t, sprite))
            if line_ids:
                group("other", line_ids)
            out.extend(pen.line(y))
            y += step
            if line_end < right:  # a short line ends a paragraph
                y += step // 2
                sentence_start = True

    def group_text(g: int) -> str:
        return " ".join(out[i].text for i in groups[g][1])

    qa: list[QAPair] = []
    for n in range(questions):
        if pairs:
            q, a = pairs[rng.integers(len(pairs))]
            qa.append(QAPair(f"What is the {group_text(q).rstrip(':')}?", (group_text(a),), f"{split}-{index}-{n}"))
        elif len(out) > 1:
            i = rng.integers(len(out) - 1)
            qa.append(QAPair(f"Which word follows {out[i].text!r}?", (out[i + 1].text,), f"{split}-{index}-{n}"))
    ents: tuple[Entity, ...] = ()
    if entities:
        links: dict[int, list[tuple[int, int]]] = {}
        for q, a in pairs:
            links.setdefault(q, []).append((q, a))
            links.setdefault(a, []).append((q, a))
        ents = tuple(Entity(g, lab, tuple(ids), tuple(links.get(g, ()))) for g, (lab, ids) in enumerate(groups))
    page.flags.writeable = False
    return SyntheticPage(page, tuple(out), label, ents, tuple(qa))


def _pair(value: Any, name: str) -> tuple[int, int]:
    try:
        a, b = (int(v) for v in value)
    except (TypeError, ValueError):
        raise SourceError(f"synthetic source: {name} must be two integers, got {value!r}") from None
    return a, b


@dataclass
class SyntheticSource:
    """``pages`` generated RVL-CDIP-sized pages per split (see the module docstring).

    Parameters
    ----------
    pages : pages in each split.
    size : ``[width, height]`` in pixels (RVL-CDIP: 754 x 1000).
    seed : the generator's seed; with the split and the page index it fixes a page.
    words : ``[min, max]`` words a page aims at (fewer if the page is full).
    entities : group words into FUNSD entities (header, question, answer, other) with links.
    questions : question/answer pairs per page (their answers are words of the page).
    schema : output columns: ``rvl_cdip`` (default), ``funsd`` (implies ``entities``) or ``docvqa``.
    encoding : how the page's bytes are encoded: ``tiff`` (PackBits, as RVL-CDIP's files; the default:
        about 2 ms and 150 KB a page), ``png`` (about 15 ms) or ``jpeg`` (quality 95).
    """

    pages: int = 1000
    size: tuple[int, int] = (754, 1000)
    seed: int = 0
    split: str = "test"
    words: tuple[int, int] = (150, 250)
    entities: bool = False
    questions: int = 0
    schema: str = "rvl_cdip"
    encoding: str = "tiff"
    kind: str = field(default="synthetic", init=False)

    def __post_init__(self):
        if isinstance(self.pages, bool) or not isinstance(self.pages, int) or self.pages < 0:
            raise SourceError(f"synthetic source: pages must be a non-negative integer, got {self.pages!r}")
        self.size = _pair(self.size, "size")
        if min(self.size) < 64:
            raise SourceError(f"synthetic source: size must be at least 64 x 64 pixels, got {list(self.size)}")
        self.words = _pair(self.words, "words")
        if not 0 <= self.words[0] <= self.words[1]:
            raise SourceError(f"synthetic source: words must be [min, max] with 0 <= min <= max, got {list(self.words)}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise SourceError(f"synthetic source: seed must be an integer, got {self.seed!r}")
        if self.schema not in SCHEMAS:
            raise SourceError(f"synthetic source: schema must be one of {', '.join(SCHEMAS)}, got {self.schema!r}")
        if self.encoding not in _ENCODERS:
            raise SourceError(f"synthetic source: encoding must be one of {', '.join(_ENCODERS)}, got {self.encoding!r}")
        self.entities = bool(self.entities) or self.schema == "funsd"
        self.questions = int(self.questions)

    def ids(self) -> PageIds:
        """``<split>-<index>`` for every page, computed on demand (a lazy sequence, not a list)."""
        return PageIds(self.split, range(self.pages), max(5, len(str(max(self.pages - 1, 0)))))

    def load(self, doc_id: str) -> Document:
        index = self.ids().page_index(doc_id)
        if index is None:
            raise DocumentError(f"not a page of this synthetic split ({self.pages} pages, ids {self.split}-NNNNN)",
                                doc_id=doc_id)
        page = render_page(self.seed, self.split, index, size=self.size, words=self.words,
                           entities=self.entities, questions=self.questions)
        ext, params, fmt = _ENCODERS[self.encoding]
        ok, data = cv2.imencode(ext, page.pixels, params)
        if not ok:  # pragma: no cover - OpenCV encodes any uint8 page
            raise DocumentError("OpenCV could not encode the page", doc_id=doc_id)
        # Bytes and pixels together: written as these bytes while unshifted, read without decoding.
        image = PageImage(data=data.tobytes(), array=page.pixels, width=self.size[0], height=self.size[1], format=fmt)
        return Document(id=doc_id, image=image, words=page.words, entities=page.entities, label=page.label,
                        qa=page.qa, source=f"synthetic:seed={self.seed}:{self.split}:{index}")

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "synthetic",
            "split": self.split,
            "name": "synthetic RVL-CDIP-sized pages",
            "pages": self.pages,
            "size": list(self.size),
            "seed": self.seed,
            "words": list(self.words),
            "entities": self.entities,
            "questions": self.questions,
            "encoding": self.encoding,
            "generator_version": GENERATOR_VERSION,
            "classes": list(RVL_CDIP_CLASSES),
            "license": "generated by dogood (no third-party content)",
            "license_name": "dogood-generated",
        }
