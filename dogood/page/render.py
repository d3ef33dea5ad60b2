"""Re-rendering changed words into the page image, so text and pixels agree.

A text shift changes what a word says; the scan still shows the old word.
:func:`render_words` makes the two agree again, one word box at a time, and
changes nothing but the words it names: the new text is drawn in the face,
size, weight, width and baseline of the print it replaces.

1. **Choose the style** (:func:`choose_styles`, before any pixel changes).
   The old ink in a box is found (pixels darker than an Otsu threshold
   computed in the box; form rules and one-pixel specks left out). The
   word's *original* text is rasterised in each of twelve candidate faces
   (Liberation Serif, Sans and Mono, metric twins of Times, Arial/Helvetica
   and Courier, each regular, bold, italic and bold italic) and scaled in x
   and y so that its ink box lands on the old ink's box (or on that box
   without specks or cut-off rule ends above or below the line, whichever
   fits better). Its
   coverage is cut at three edge levels (strokes bolder or thinner than the
   font's own, as toner and scanning spread print) and each candidate
   scores the IoU of that mask with the old ink. The faces best at this
   start are then refined: each side of their box moves by 1 and 0.4 pixel
   steps while the IoU rises. The style is chosen per *run of print*: an
   entity (FUNSD's runs of one kind of print; a word in no entity goes
   with the words beside it on its line), at most the 12 words nearest the
   word, whose text the ink shows. Its font family (Serif, Sans, Mono) is
   the one best on the run's words and, at half the weight per pixel of
   ink, the 16 words nearest it: at a dozen pixels a few digits or a short
   word fit two families nearly alike (a blurred bold sans takes serifs),
   and the print around them tells them apart. Within the family, face
   (weight and slant) and edge level are the run's own: the highest
   ink-weighted score, where a score is the IoU less a little for squeezing
   or widening the face (``0.1 * |log stretch|``) and for a slanted face
   (0.06), so an upright face at its own width wins near ties. Size and
   width are the run's (the median of its words' fits), so a changed word
   is drawn like its neighbours; its left edge is each word's own, its
   baseline the median of its own and those of the run's words beside it
   on its line. A word whose old text is unknown (no ``original``) or that had no
   ink takes the run's size and width and the baseline of those on its
   line; with nothing to borrow, the face is :data:`DEFAULT_FACE` and the
   cap-top-to-descender height fills the box. The choice is a
   :class:`Style` per word, so it can be inspected, and passed back with
   ``styles=``.
2. **Erase.** The old ink (grown by one pixel for the anti-aliased rim) is
   filled in by OpenCV's Telea inpainting from the surrounding paper, so form
   lines and paper texture continue through the hole. With ``margin``,
   strokes that reach out of the box are erased up to that many pixels
   beyond it.
3. **Draw.** The current text is drawn in the chosen style: its ink starts
   where the old ink started and sits on the fitted baseline (the width
   stretch kept within 1/2 to 2, in case the old text was fitted to ink that
   showed something else). Text wider than the box first moves left, then
   is squeezed down to 75% of its fitted width, then drawn smaller; text
   taller than the box is shrunk into it, and text reaching more than a
   quarter of its height above or below the box is moved in (less is
   clipped, as FUNSD's tight boxes cut the old print too). Below 80% of
   its size a text is a smear (twelve digits where a ``3`` was)
   (:func:`legible`). A text shift that re-renders asks :class:`Redraw`
   first, which takes a new text only at its run's own size, squeezed to
   :data:`FIT_SQUEEZE` of its width at most (further, its strokes give
   it away), and the shift changes another word or draws another value
   (``value_text_augment``), since a box that grew to hold the text would
   change the layout, a factor the text shift does not name.
   Where the page prints the new text's letters, it is not drawn but pieced
   from the scan (:mod:`dogood.page.splice`: the old word's own letters in
   their order, the others cut from the nearest word that prints them in
   the same size, weight, darkness and slant), so its ink is the page's own.
   Glyphs are rasterised by FreeType (Pillow) at 48 px or more and reduced
   to the page by exact area averaging, so sub-pixel sizes and positions
   are kept; the coverage is then bent so that the chosen edge level
   becomes the half-ink edge (:data:`WEIGHT_EDGES`: the level whose ink is
   as bold as the old word's). Nothing is drawn outside the box.
4. **Colour.** The ink colour is the median of the darker half of the old ink
   pixels (per channel on RGB pages), so grey scans get grey ink; a box with
   no ink gets near-black.

Why by hand: font-matching libraries identify a typeface from a clean, high
resolution sample (or from a PDF's font table); FUNSD's scans are ~100 dpi
binarised-looking print a dozen pixels high, with the font unnamed. Fitting
the known text in a few metric-compatible faces and comparing ink masks is
small, deterministic and needs only FreeType.

Fonts come from the Debian package ``fonts-liberation2``
(``/usr/share/fonts/truetype/liberation2``; ``$DOGOOD_FONT_DIR`` names another
folder holding the same ``Liberation*.ttf`` files). When they are missing,
drawing raises :class:`FontError` naming the package; erasing alone (blank
text) needs no fonts. There is no fallback to another font, so output is the
same wherever the same fonts and Pillow build are installed. Text is laid out
by HarfBuzz (libraqm, which Pillow's wheels bundle) with the fonts' kerning;
a Pillow built without libraqm falls back to its basic layout, without GPOS
kerning, and its output differs slightly (IoU on FUNSD ~0.01 lower).

A box is the half-open pixel region ``[x0, x1) x [y0, y1)``; with the
default ``margin=0`` no pixel outside the re-rendered boxes changes. Blank text only
erases (used to remove dropped words from the page). Glyphs the fonts lack
(non-Latin scripts) are drawn as the font's missing-glyph boxes. Grayscale (``L``)
and RGB pages are supported; the result is a new :class:`Document` whose image
is :meth:`PageImage.from_array` pixels. Everything is deterministic.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont, features

from dogood.core import fs
from dogood.core.document import Document, PageImage
from dogood.core.errors import DogoodError
from dogood.page import splice

#: Pixels of paper around a box that inpainting looks at (they are read, never written).
CONTEXT = 6
#: A box whose grey levels span less than this has no ink.
MIN_CONTRAST = 40
#: Narrowest squeeze that keeps a text a little too wide for its box starting where the old print started; past it
#: the text moves left.
ROOM_SQUEEZE = 0.95
#: Narrowest horizontal squeeze (of the fitted width) before the font gets smaller instead.
MIN_SQUEEZE = 0.75
#: Narrowest squeeze a text shift's new text may need to be drawn (:meth:`Redraw.fits`), at its run's own size:
#: squeezed further, or drawn smaller, its strokes' edges and its x-height give the redrawn word away (the
#: redrawn-word cue, :mod:`dogood.measures.word_style`; ``bench/RESULTS.md`` (af)).
FIT_SQUEEZE = 0.95
#: Smallest share of its style's size a text is drawn at and still reads (:func:`legible`).
MIN_SCALE = 0.8
#: Widest horizontal stretch (and narrowest, its inverse) text is drawn with.
MAX_STRETCH = 2.0
#: Share of the text's height that may stay outside the box (clipped) before the text is moved into it.
OVERHANG = 0.25
#: Share of a stroke's pixels (within the reach of a box) that must lie in the box for it to be the word's, erased
#: whole; a stroke mostly outside the box is a neighbour's (a hyphen between two words), kept whole.
OWN_SHARE = 0.5
#: Grey pixels beside erased ink that are erased too: those darker than the paper by this share of the way from
#: the paper to the ink threshold.
RIM = 0.2
#: Ink colour (grey level) for a box that had no ink to copy.
DEFAULT_INK = 30

#: The Debian package the fonts come from.
FONT_PACKAGE = "fonts-liberation2"
#: Where that package puts them.
FONT_DIR = "/usr/share/fonts/truetype/liberation2"
#: The font families, metric twins of Times, Arial/Helvetica and Courier.
FAMILIES = ("Serif", "Sans", "Mono")
#: Candidate faces (file names without ``.ttf``), family by family, in the order ties are broken.
FACES = tuple(f"Liberation{family}-{style}" for family in FAMILIES
              for style in ("Regular", "Bold", "Italic", "BoldItalic"))
#: The face for a word with nothing to fit it to.
DEFAULT_FACE = "LiberationSerif-Regular"
#: Coverage levels tried as the stroke edge: below 0.5 draws bolder than the font, above thinner.
EDGES = (0.3, 0.5, 0.7)
#: Font size (pixels) at which glyphs are rasterised before being reduced to the page (at least twice the drawn size).
REF_SIZE = 48
#: Font size (pixels) at which the candidates are rasterised for fitting.
FIT_SIZE = 32
#: Faces (the best at the starting fit) whose fit is refined before the choice.
REFINE_FACES = 2
#: Rounds of refinement, and the step (pixels) a box side moves by.
REFINE_ROUNDS = 2
STEPS = (1.0, 0.4)
#: Score held against a face per unit of log horizontal stretch, and against slanted faces.
STRETCH_COST = 0.1
ITALIC_COST = 0.06
#: Weight of the words around a run of print in the choice of its font family (per pixel of ink, against the
#: run's own).
CONTEXT_WEIGHT = 0.5
#: How many of the nearest words of about the same height (within this factor) make those surroundings.
CONTEXT_WORDS = 16
SAME_SIZE = 1.2
#: A word's baseline is the median of its own and those of the words of its run on its line within this many
#: words of it (a skewed scan drifts along a line).
BASELINE_WORDS = 2
#: A word's own width (its old text's fit) is drawn when within this factor of its run's, else the run's is.
OWN_WIDTH = 1.25
#: Fits below this IoU do not vote on a run's size and width (unless no fit reaches it).
MIN_FIT_IOU = 0.3
#: Most words (the word and its nearest entity mates) a face is chosen from.
MAX_GROUP = 12
#: Fewest ink pixels for a word to be fitted.
MIN_INK = 6
#: Most choices of a run's face kept per page (:class:`FitCache`).
MAX_CHOICES = 4096
#: Pixels of the binary scan per page pixel that redrawn print is drawn at (:func:`print_quality`): FUNSD's and
#: RVL-CDIP's pages are binary scans of about 300 dpi resized to about 90 dpi.
SCAN = 2.5
#: How far (page pixels, a Gaussian's sigma) the print's edges are spread before they are cut, so that the cut
#: level makes strokes bolder or thinner by up to about that much on each side.
SPREAD = 0.4
#: Standard deviation of the noise that roughens the cut edges of redrawn print (coverage units, at the scan's
#: resolution).
ROUGHNESS = 0.1
#: Pieces of a roughened cut smaller than this many page pixels are specks the roughening made, and go.
SPECK = 3
#: Coverage levels at which the scan's print is cut (:func:`print_quality` picks the one whose strokes look like
#: the old ink's): below 0.5 bolder than the font, above thinner.
CUTS = (0.15, 0.25, 0.35, 0.45, 0.55, 0.65)
#: Blurs (page pixels, a Gaussian's sigma) tried on the resized print (:func:`print_quality`).
BLURS = (0.0, 0.3, 0.45, 0.6)
#: A word whose old text fits its ink with no face better than this IoU (nor its run of print, ink-weighted, better
#: than :data:`KEEP_RUN_IOU`) is not print the fonts can match (handwriting, a stamp, a logo): it is kept.
KEEP_IOU = 0.4
KEEP_RUN_IOU = 0.45
#: Below this IoU an unmatched word is counted as handwriting (FUNSD test, by eye: nearly all are).
HANDWRITING_IOU = 0.3
#: A box at least this many times as tall as it is wide, with two characters or more, may hold vertical print:
#: it does when its text fits the ink turned a quarter better, by this IoU, than upright.
UPRIGHT = 1.5
TURN_MARGIN = 0.05
#: Paper darker than this (median grey level around the word), or with a grain this strong (standard deviation
#: of its grey levels), is a shaded, screened or dark ground that erasing cannot restore: the word is kept.
MIN_PAPER = 190
MAX_GRAIN = 24
#: Share of the paper around a word (outside its box) covered by dots of 3 pixels or fewer above which it is a
#: halftone screen.
SCREEN = 0.05
#: A box whose grey levels span less than this is blank paper (drawn as its run says), not faint ink (kept).
BLANK = 8
#: Why a word is kept as the page printed it rather than redrawn (:func:`print_kinds`).
KEPT = {
    "handwriting": "the old text fits its ink in no face, far from it (IoU under 0.3): handwriting, mostly",
    "unmatched": "the old text fits its ink in no face (letter-spaced capitals, small capitals, dot-matrix or "
                 "typewritten print the faces do not match, a stamp, a word's run of print in handwriting)",
    "vertical": "vertical print that fits no face turned either way",
    "background": "print on a shaded, screened or dark ground, which erasing would leave as a blank patch",
    "glyph": "characters the fonts have no glyph for (a script, a check box)",
    "faint": "ink too faint, or too little of it, to match",
}
#: Shares of the measured grain tried, strongest first, until the ink stays as dark as the old (within
#: :data:`DARK_SLACK` grey levels).
GRAIN_SHARES = (1.0, 0.5, 0.25, 0.0)
#: The most grain (grey levels) given to new ink: more is the old ink's thin strokes, not noise.
MAX_GRAIN_INK = 20.0
DARK_SLACK = 3.0
#: Most words of a run whose old ink its print quality is measured on (the best fitted).
QUALITY_WORDS = 4


class FontError(DogoodError):
    """The fonts that re-rendering draws with are not installed."""


@dataclass(frozen=True)
class Style:
    """How a word's text is drawn, in page pixels.

    ``face``: a :data:`FACES` name; ``size``: the font size (em height);
    ``stretch``: horizontal scale against the font's own width; ``baseline``:
    page row of the baseline; ``left``: page column where the ink starts;
    ``edge``: the coverage level drawn as the half-ink edge (:data:`EDGES`);
    ``iou``: for a word fitted to its own old ink, the IoU of its original text
    drawn in its own fit (face and edge level as here, its own size and width)
    with that ink (``None``: size and baseline borrowed or taken from the box).

    The print quality (:func:`print_quality`, measured on the old ink of the
    run): ``scan``, the pixels of the binary scan per page pixel (the text is
    drawn at that resolution, cut at ``edge`` coverage with edges roughened by
    noise of ``roughness``, and reduced to the page by area averaging, as a
    binary scan resized to the page was; ``0``: coverage drawn directly,
    ``edge`` bending it); ``blur``, the sigma (page pixels) of the Gaussian
    blur of the resized print (a resize filter wider than a pixel, or a grey
    scanner's optics); ``grain``, the standard deviation (grey levels) of the
    noise in the ink's strokes; ``ink``, the ink's colour at full coverage (``None``:
    the old ink's, :func:`ink_colour`); ``noise``, the standard deviation of
    the paper's grain added to the pixels redrawn.
    """

    face: str
    size: float
    stretch: float
    baseline: float
    left: float
    edge: float = 0.5
    iou: float | None = None
    scan: float = 0.0
    roughness: float = 0.0
    ink: tuple[int, ...] | int | None = None
    noise: float = 0.0
    blur: float = 0.0
    grain: float = 0.0


def render_words(doc: Document, indices: Iterable[int], original: Document | None = None, *,
                 margin: int | None = None, styles: Mapping[int, Style] | None = None) -> Document:
    """``doc`` with the pixels of words ``indices`` erased and their current text drawn in their boxes.

    Parameters
    ----------
    doc : the document whose words' text is now right and whose image is not.
    indices : word indices (in ``doc``) to re-render; out-of-range indices
        raise ``IndexError``, repeated ones are rendered once.
    original : the same document before its texts changed (same words, same
        order). When given, a word whose text equals its original text is
        left untouched, and the original texts are what the old ink is
        fitted to (:func:`choose_styles`). Without it, the words not in
        ``indices`` are taken to show their text, and the re-rendered ones
        borrow their entity's style.
    margin : pixels around each box where the old word's strokes that reach
        out of it are erased too (FUNSD boxes are often a pixel or two tighter
        than the glyphs, which would leave slivers of the old word); never
        inside another word's box. ``None`` (the default): a third of the
        box's height (:func:`reach`); ``0`` changes no pixel outside the
        boxes. The new text is always drawn inside the box.
    styles : the :class:`Style` of each word to draw (default:
        :func:`choose_styles`); a word missing from it gets one from
        :func:`box_style`.

    Returns
    -------
    ``doc`` with a new image (only pixels inside the re-rendered boxes,
    grown by ``margin`` and outside every other word's box, differ), or
    ``doc`` itself when nothing needed drawing.

    Raises
    ------
    FontError : a word has text to draw and the fonts are not installed.
    """
    if margin is not None and margin < 0:
        raise ValueError(f"margin must be >= 0, got {margin}")
    todo = _todo(doc, indices, original)
    if not todo:
        return doc
    drawn = [i for i in todo if doc.words[i].text.strip()]
    turns: dict[int, int] = {}
    if drawn and styles is None:
        known = original if original is not None else None
        kinds = print_kinds(doc, drawn, known) if known is not None else {}
        kept = {i for i, kind in kinds.items() if kind.reason is not None}
        todo = [i for i in todo if i not in kept]
        drawn = [i for i in drawn if i not in kept]
        turns = {i: kinds[i].turn for i in drawn if i in kinds and kinds[i].turn}
        upright = [i for i in drawn if i not in turns]
        styles = choose_styles(doc, upright, original) if upright else {}
    elif styles is None:
        styles = {}
    pixels = np.array(doc.image.to_array())  # writable copy
    boxes = np.array([w.box for w in doc.words], np.int64).reshape(-1, 4)
    letters = _PagePrint(doc, original, pixels.copy(), boxes, margin, todo)  # the print before any word changes
    for i in todo:
        if i in turns:
            continue
        box = doc.words[i].box
        style = styles.get(i)
        pasted = letters.spliced(i, style) if style is not None and doc.words[i].text.strip() else None
        render_box(pixels, box, doc.words[i].text, margin=margin, style=style,
                   avoid=_others(boxes, i, box, reach(box) if margin is None else margin), pieces=pasted)
    for i, k in sorted(turns.items()):  # vertical print: drawn on the page turned upright, then turned back
        pixels = _render_turned(pixels, doc, original, i, k, margin, boxes)
    return doc.replace(image=PageImage.from_array(pixels))


#: Edge levels a drawn text is cut at (:func:`render_box`): the one whose ink is as bold as the old print's
#: (ink pixels per edge pixel) is kept.
WEIGHT_EDGES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
#: How much larger or smaller than the new text's run (font size) an untouched word may be printed and still lend
#: its letters (:class:`_PagePrint`).
LEND_SIZE = 1.08
#: How much bolder or thinner (ink pixels per edge pixel) than the old word an untouched word may be printed and
#: still lend its letters; its fitted face must be as bold (Bold or not) too.
LEND_WEIGHT = 1.12
#: How much darker or lighter (grey levels, the darker half of the ink) than the old word an untouched word may be
#: printed and still lend its letters.
LEND_DARK = 20.0
#: The IoU of its fit a word needs to lend its letters: print the faces fit, not handwriting.
LEND_IOU = 0.5
#: Fewest columns a space between pieced words takes.
MIN_SPACE = 1


class _PagePrint:
    """The page's own print as :func:`render_words` pieces new texts from it (:mod:`dogood.page.splice`):
    ``source``, the pixels before any word changed; each word's :class:`~dogood.page.splice.Letters` and strokes,
    found once. A word lends the letters of the text its old ink shows (``original``'s; without it, the words
    not redrawn, ``todo``), when its print fits a face (:data:`LEND_IOU`)."""

    def __init__(self, doc: Document, original: Document | None, source: np.ndarray, boxes: np.ndarray,
                 margin: int | None, todo: Iterable[int]):
        self.doc, self.original, self.source, self.boxes, self.margin = doc, original, source, boxes, margin
        self.todo = set(todo)
        self.inks: dict[int, np.ndarray | None] = {}
        self.letters: dict[int, splice.Letters | None] = {}
        self.strokes: dict[int, _Strokes | None] = {}
        self.weights: dict[int, float] = {}
        self.darkness: dict[int, float] = {}
        self.inked: dict[int, np.ndarray] = {}  # each lending word's page columns that hold ink
        self.lenders: list[tuple[int, Style, str]] | None = None

    def _box(self, j: int) -> tuple[int, int, int, int]:
        height, width = self.source.shape[:2]
        return _clip(self.doc.words[j].box, width, height)

    def _grow(self, box) -> int:
        return reach(box) if self.margin is None else self.margin

    def _ink(self, j: int) -> np.ndarray | None:
        """Word ``j``'s old ink (:func:`old_ink`, box-sized) on the page before any change, found once."""
        if j not in self.inks:
            box = self._box(j)
            self.inks[j] = old_ink(self.source, box) if box[2] > box[0] and box[3] > box[1] else None
        return self.inks[j]

    def _letters(self, j: int, text: str, style: Style) -> splice.Letters | None:
        if j not in self.letters:
            box = self._box(j)
            ink = self._ink(j)
            if ink is None or not _drawable(text).strip():
                self.letters[j] = None
            else:
                edges = letter_edges(text, style)
                columns = ink.sum(axis=0)
                self.inked[j] = np.flatnonzero(columns) + box[0]
                cuts = splice.letter_cuts(edges, columns, box[0], style.size)
                clean = tuple(not (0 <= c - box[0] < len(columns) and columns[c - box[0]]) for c in cuts)
                self.letters[j] = splice.Letters(text, cuts, style.baseline, j, clean,
                                                 _whole_letters(text, style, ink, box, cuts, clean))
        return self.letters[j]

    def _darkness(self, j: int) -> float:
        """How dark word ``j``'s print is: the median grey level of the darker half of its ink (the redrawn-word
        cue's ``ink_level``), on the page before any change; 255 without ink."""
        if j not in self.darkness:
            box = self._box(j)
            ink = self._ink(j)
            values = np.sort(_gray(self.source[box[1]:box[3], box[0]:box[2]])[ink]) if ink is not None else ()
            self.darkness[j] = float(np.median(values[:max(1, len(values) // 2)])) if len(values) else 255.0
        return self.darkness[j]

    def _weight(self, j: int) -> float:
        """How bold word ``j``'s print is: its ink pixels per pixel of the ink's edge (as the redrawn-word cue's
        ``stroke_width`` counts them), on the page before any change; 0 without ink."""
        if j not in self.weights:
            ink = self._ink(j)
            self.weights[j] = 0.0 if ink is None else _weight(ink)
        return self.weights[j] or 1e-6

    def _strokes(self, j: int) -> _Strokes | None:
        if j not in self.strokes:
            box = self._box(j)
            threshold = ink_threshold(self.source[box[1]:box[3], box[0]:box[2]])
            self.strokes[j] = None if threshold is None else _strokes(
                self.source, box, threshold, self._grow(box), _others(self.boxes, j, box, self._grow(box)))
        return self.strokes[j]

    def _lenders(self) -> list[tuple[int, Style, str]]:
        """The words that may lend letters, with their styles and the texts their ink shows (fitted once, on first
        need)."""
        if self.lenders is None:
            words = self.doc.words
            if self.original is not None:  # every word's old print, changed or not (the page before any change)
                shown = self.original
                ok = [j for j in range(min(len(words), len(shown.words))) if shown.words[j].text.strip()]
            else:  # the words not redrawn show their text; the redrawn ones' old text is unknown
                shown = self.doc.replace(words=tuple(replace(w, text="") if j in self.todo else w
                                                     for j, w in enumerate(words)))
                ok = [j for j in range(len(words)) if j not in self.todo and words[j].text.strip()]
            styles = choose_styles(self.doc, ok, shown, quality=False) if ok else {}
            self.lenders = [(j, s, shown.words[j].text) for j, s in sorted(styles.items())
                            if s.iou is not None and s.iou >= LEND_IOU]
        return self.lenders

    def spliced(self, i: int, style: Style, text: str | None = None) -> Pasted | None:
        """Word ``i``'s new text pieced from the page's print, to be drawn in ``style`` (:func:`render_box`'s
        ``pieces``), or ``None`` when a letter is missing or the pieces would not fit its box."""
        box = self._box(i)
        if box[2] <= box[0] or box[3] <= box[1]:
            return None
        text = self.doc.words[i].text if text is None else text
        own = None
        if self.original is not None and i < len(self.original.words) and style.iou is not None:
            old = self.original.words[i].text
            if old.strip():
                own = self._letters(i, old, style)
        space = max(MIN_SPACE, int(round(_space_width(style))))
        pieces = splice.plan(text, own, (), space)
        if pieces is None:
            centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
            near = sorted(self._lenders(), key=lambda js: (
                abs((self.boxes[js[0], 0] + self.boxes[js[0], 2]) / 2 - centre[0])
                + abs((self.boxes[js[0], 1] + self.boxes[js[0], 3]) / 2 - centre[1]), js[0]))
            weight = self._weight(i) if own is not None else None
            dark = self._darkness(i) if own is not None else None
            italic, bold = "Italic" in style.face, "Bold" in style.face
            others = [letters for j, s, shown in near if j != i and ("Italic" in s.face) == italic
                      and ("Bold" in s.face) == bold  # small print's weight (ink per edge) hides a bold face
                      and (s.face == style.face if weight is None else
                           abs(math.log(self._weight(j) / weight)) <= math.log(LEND_WEIGHT)
                           and abs(self._darkness(j) - dark) <= LEND_DARK)
                      and abs(math.log(s.size / style.size)) <= math.log(LEND_SIZE)
                      and (letters := self._letters(j, shown, s)) is not None]
            pieces = splice.plan(text, own, others, space)
            if pieces is None:
                return None
        return self._paste(i, box, style, own, pieces, text)

    def _paste(self, i: int, box, style: Style, own: splice.Letters | None, pieces: list[splice.Piece],
               text: str | None = None) -> Pasted | None:
        height, width = self.source.shape[:2]
        layout = letter_edges(self.doc.words[i].text if text is None else text, style)
        places, cursor, trail = [], None, 0
        for piece in pieces:  # where each piece goes: the old word's own letters one after the other, as printed;
            # another word's letter where the face lays it out, its ink no nearer the last piece's than a pixel
            size = piece.stop - piece.start
            if piece.source < 0:
                lead = last = size
            else:
                inked = self.inked[piece.source]
                inside = inked[(inked >= piece.start) & (inked < piece.stop)]
                lead, last = (int(inside[0] - piece.start), int(piece.stop - 1 - inside[-1])) if len(inside) else \
                    (size, size)
            if cursor is None:
                x = own.cuts[0] if own is not None and piece.source == i else int(round(layout[piece.at][0])) - lead
            elif piece.source < 0 or piece.source == i:
                x = cursor
            else:
                x = max(int(round(layout[piece.at][0])) - lead, cursor - trail - lead + 1)
            places.append(x)
            cursor, trail = x + size, last
        over = cursor - trail - box[2]  # ink beyond the box's right edge: moved left, not beyond its left edge
        if over > 1:
            first = places[0] + (pieces[0].stop - pieces[0].start if pieces[0].source < 0 else 0)
            if first - over < box[0] - 1:
                return None
            places = [x - over for x in places]
        grow = self._grow(box)
        area = (max(0, box[0] - grow), max(0, box[1] - grow), min(width, box[2] + grow), min(height, box[3] + grow))
        ax0, ay0, ax1, ay1 = area
        values = np.zeros(self.source[ay0:ay1, ax0:ax1].shape, self.source.dtype)
        mask = np.zeros(values.shape[:2], bool)
        mine = self._strokes(i)
        if mine is not None and mine.area == area:  # ink that is not the word's (rules, neighbours' strokes): kept
            kept = (mine.gray <= mine.threshold) & ~mine.erase
        else:
            kept = np.zeros(mask.shape, bool)
        if own is not None and places[0] == own.cuts[0]:  # what lies before and after its letters comes along
            if pieces[0].source == i and pieces[0].start == own.cuts[0]:
                pieces = [pieces[0]._replace(start=ax0)] + pieces[1:]
                places = [ax0] + places[1:]
            if pieces[-1].source == i and pieces[-1].stop == own.cuts[-1]:
                pieces = pieces[:-1] + [pieces[-1]._replace(stop=ax1)]
        order = sorted(range(len(pieces)), key=lambda n: pieces[n].source != i)  # its own first, others' over them
        for n in order:
            piece, x = pieces[n], places[n]
            if piece.source >= 0:
                strokes = self._strokes(piece.source)
                if strokes is None:
                    return None
                sx0, sy0, sx1, sy1 = strokes.area
                taken = strokes.erase
                if piece.source == i:  # its own print: every pixel of its box (its paper too) but others' ink
                    dy = 0
                    taken = taken.copy()
                    bx0, by0, bx1, by1 = box
                    taken[by0 - sy0:by1 - sy0, bx0 - sx0:bx1 - sx0] = True
                    if kept.shape == taken.shape:
                        taken &= ~kept
                else:  # another word's: its strokes, standing on this word's baseline
                    dy = int(round(self.letters[piece.source].baseline - style.baseline))
                shift = piece.start - x  # source column = target column + shift
                tc0, tc1 = max(x, ax0, sx0 - shift), min(x + piece.stop - piece.start, ax1, sx1 - shift)
                tr0, tr1 = max(ay0, sy0 - dy), min(ay1, sy1 - dy)
                if tc1 > tc0 and tr1 > tr0:
                    took = taken[tr0 + dy - sy0:tr1 + dy - sy0, tc0 + shift - sx0:tc1 + shift - sx0]
                    got = self.source[tr0 + dy:tr1 + dy, tc0 + shift:tc1 + shift]
                    values[tr0 - ay0:tr1 - ay0, tc0 - ax0:tc1 - ax0][took] = got[took]
                    mask[tr0 - ay0:tr1 - ay0, tc0 - ax0:tc1 - ax0] |= took
        return Pasted(area, values, mask & ~kept)


#: How far (pixels, and a share of the font size) a letter's ink may lie from where its face draws it, and still
#: be lent (:func:`_whole_letters`).
LEND_SLACK = (1.5, 0.15)


def _whole_letters(text: str, style: Style, ink: np.ndarray, box, cuts: tuple[int, ...],
                   clean: tuple[bool, ...]) -> tuple[bool, ...]:
    """Per letter of ``text``: whether its ink (``ink``, the word box's mask) lies between its ``cuts``, both
    ``clean``, and spans the columns and rows its face draws it in (within :data:`LEND_SLACK`)."""
    x0, y0 = box[0], box[1]
    ref_size = max(REF_SIZE, int(math.ceil(2 * style.size)))
    font = _font(style.face, ref_size)
    sy = style.size / ref_size
    sx = sy * min(max(style.stretch, 1 / MAX_STRETCH), MAX_STRETCH)
    slack = LEND_SLACK[0] + LEND_SLACK[1] * style.size
    out = []
    for k, char in enumerate(_drawable(text)):
        c0, c1 = cuts[k] - x0, cuts[k + 1] - x0
        left, top, right, bottom = font.getbbox(char, anchor="ls")
        if right <= left or c0 < 0 or c1 > ink.shape[1] or c1 <= c0 or not (clean[k] and clean[k + 1]):
            out.append(False)
            continue
        part = ink[:, c0:c1]
        rows, cols = np.flatnonzero(part.any(axis=1)), np.flatnonzero(part.any(axis=0))
        if not len(rows):
            out.append(False)
            continue
        width = (right - left) * sx
        top_row, bottom_row = style.baseline + top * sy - y0, style.baseline + bottom * sy - y0
        out.append(abs((cols[-1] + 1 - cols[0]) - width) <= slack and abs(rows[0] - top_row) <= slack
                   and abs(rows[-1] + 1 - bottom_row) <= slack)
    return tuple(out)


def _space_width(style: Style) -> float:
    """Page columns of a space in ``style``."""
    ref_size = max(REF_SIZE, int(math.ceil(2 * style.size)))
    sx = style.size / ref_size * min(max(style.stretch, 1 / MAX_STRETCH), MAX_STRETCH)
    return _font(style.face, ref_size).getlength(" ") * sx


def _others(boxes: np.ndarray, i: int, box, grow: int) -> list[tuple[int, int, int, int]]:
    """The boxes of the words other than ``i`` within ``grow`` pixels of ``box``."""
    near = np.flatnonzero((boxes[:, 0] < box[2] + grow) & (boxes[:, 2] > box[0] - grow)
                          & (boxes[:, 1] < box[3] + grow) & (boxes[:, 3] > box[1] - grow))
    return [tuple(boxes[j].tolist()) for j in near if j != i]


def _render_turned(pixels: np.ndarray, doc: Document, original: Document | None, i: int, k: int,
                   margin: int | None, boxes: np.ndarray) -> np.ndarray:
    """``pixels`` with word ``i`` (vertical print) redrawn as upright print on the page turned ``k`` quarter turns,
    fitted to its own old ink alone, and turned back. The fit is made on ``doc``'s page as it came, turned (not
    on ``pixels``, which hold this call's other new words): the same page :class:`Redraw` and :func:`fit_page`
    fit, so a fit kept on disk is found again."""
    height, width = pixels.shape[:2]
    turned = np.ascontiguousarray(np.rot90(pixels, k))
    came = PageImage.from_array(np.ascontiguousarray(np.rot90(doc.image.to_array(), k)))
    box = _turn_box(doc.words[i].box, k, height, width)
    word = doc.words[i]
    one = Document(doc.id, came, (type(word)(word.text, box),))
    old = None if original is None else Document(doc.id, came, (type(word)(original.words[i].text, box),))
    style = choose_styles(one, [0], old, per="word").get(0)
    others = np.array([_turn_box(b, k, height, width) for b in boxes.tolist()], np.int64).reshape(-1, 4)
    render_box(turned, box, word.text, margin=margin, style=style,
               avoid=_others(others, i, box, reach(box) if margin is None else margin))
    return np.ascontiguousarray(np.rot90(turned, -k))


def _todo(doc: Document, indices: Iterable[int], original: Document | None) -> list[int]:
    todo = []
    for i in sorted(set(int(i) for i in indices)):
        if not 0 <= i < len(doc.words):
            raise IndexError(f"document {doc.id!r} has no word {i} ({len(doc.words)} words)")
        if original is not None and i < len(original.words) and original.words[i].text == doc.words[i].text:
            continue
        x0, y0, x1, y1 = doc.words[i].box
        if x1 > x0 and y1 > y0:
            todo.append(i)
    return todo


def choose_styles(doc: Document, indices: Iterable[int], original: Document | None = None, *,
                  per: str = "entity", quality: bool = True) -> dict[int, Style]:
    """The :class:`Style` each of words ``indices`` is drawn in, fitted to the ink of ``doc``'s image.

    ``original`` gives the texts the ink shows (default: ``doc``'s own texts
    for the words not in ``indices``; the words in ``indices`` then show
    unknown text). ``per="entity"`` chooses face and edge level per entity
    (or, for a word in no entity, with the words beside it on its line);
    ``per="word"`` chooses them from the word alone. Words with empty boxes
    are left out. ``quality=False`` leaves the print quality out (:func:`print_quality`: the styles draw as
    the coverage of the faces' outlines), for a caller that needs only sizes and widths. Raises
    :class:`FontError` when the fonts are missing.
    """
    if per not in ("entity", "word"):
        raise ValueError(f"per must be 'entity' or 'word', got {per!r}")
    todo = sorted(set(int(i) for i in indices))
    for i in todo:
        if not 0 <= i < len(doc.words):
            raise IndexError(f"document {doc.id!r} has no word {i} ({len(doc.words)} words)")
    font_paths()  # fail early, and before any work, when the fonts are missing
    pixels = doc.image.to_array()
    page = FIT_CACHE.page(pixels)
    if FIT_CACHE.whole_pages and original is not None and not page.whole and per == "entity" and todo:
        page.whole = True  # first: every run of print on the page, fitted and refined once for all later choices
        known = [j for j in range(min(len(doc.words), len(original.words))) if original.words[j].text.strip()]
        _choose_styles(doc, known, original, per, page, pixels, False)  # runs chosen after others (refinements)
        for j in known:  # and each run chosen first, before any other
            _choose_styles(doc, [j], original, per, page, pixels, False)
    styles = _choose_styles(doc, todo, original, per, page, pixels, quality)
    FIT_CACHE.keep(page)
    return styles


def _choose_styles(doc: Document, todo: list[int], original: Document | None, per: str, page: _PageFits,
                   pixels: np.ndarray, quality: bool = True) -> dict[int, Style]:
    height, width = pixels.shape[:2]
    changing = set(todo)

    def shown(j: int) -> str | None:
        if original is not None and j < len(original.words):
            return original.words[j].text
        return None if j in changing else doc.words[j].text

    entity_of: dict[int, tuple[int, ...]] = {}
    for entity in doc.entities:
        mates = tuple(k for k in entity.word_ids if 0 <= k < len(doc.words))
        for j in mates:
            entity_of.setdefault(j, mates)
    fits: dict[int, _Fit | None] = {}

    def fit(j: int) -> _Fit | None:
        if j not in fits:
            text = shown(j)
            record = page.record(pixels, _clip(doc.words[j].box, width, height), text) if text and text.strip() else None
            fits[j] = None if record is None else _Fit(record, page)
        return fits[j]

    styles = {}
    chosen: dict[tuple[int, ...], tuple[int, int]] = {}  # per run of print: face and edge level
    qualities: dict[tuple[int, ...], dict] = {}  # per run of print: its print quality
    boxes = np.array([w.box for w in doc.words], np.float64).reshape(-1, 4)
    known = np.array([bool((t := shown(j)) and t.strip()) for j in range(len(doc.words))], bool)
    layout = hashlib.blake2b(boxes.tobytes() + known.tobytes(), digest_size=16).digest()  # what a context depends on
    for i in todo:
        box = _clip(doc.words[i].box, width, height)
        if box[2] <= box[0] or box[3] <= box[1]:
            continue
        if per == "word":
            group = (i,)
        else:  # the word and its nearest entity mates in reading order
            group = sorted(entity_of.get(i) or _line_neighbours(doc, i), key=lambda j: (abs(j - i), j))
            group = tuple(sorted(group[:MAX_GROUP]))
        fitted = [(j, f) for j in group if (f := fit(j)) is not None]
        if not fitted:
            styles[i] = box_style(pixels, box)
            continue
        if group not in chosen:
            context = () if per == "word" else page.context(layout, group, lambda: _nearest(
                boxes, group, CONTEXT_WORDS, known & _alike(boxes, group)))
            chosen[group] = page.choose([f for _, f in fitted], [f for j in context if (f := fit(j)) is not None])
        face_k, edge_k = chosen[group]
        fitted_styles = [f.style(face_k, edge_k) for _, f in fitted]
        good = [s for s in fitted_styles if s.iou >= MIN_FIT_IOU] or fitted_styles
        if not quality:
            run_quality = {}
        elif group not in qualities:
            run_quality = qualities[group] = page.quality(pixels, [(tuple(doc.words[j].box), shown(j), s) for
                                                                   (j, _), s in zip(fitted, fitted_styles)])
        else:
            run_quality = qualities[group]
        size = _median([s.size for s in good])  # one size for the whole run of print
        stretch = _median([s.size * s.stretch for s in good]) / size
        # the baseline of the run's line: its words beside it (a digit or two place their baseline loosely)
        beside = [s.baseline for (j, _), s in zip(fitted, fitted_styles)
                  if j != i and _same_line(doc.words[j].box, box) and abs(j - i) <= BASELINE_WORDS]
        own = fit(i)
        if own is not None:  # its own width: how wide its old text's ink was, at the run's size
            mine = own.style(face_k, edge_k)
            own_stretch = mine.size * mine.stretch / size
            if abs(math.log(max(own_stretch, 1e-6) / stretch)) > math.log(OWN_WIDTH):  # a fit astray (a short word)
                own_stretch = stretch
            styles[i] = replace(Style(mine.face, size, own_stretch, _median([mine.baseline] + beside), mine.left,
                                      mine.edge, mine.iou), **run_quality)
            continue
        same_line = [s.baseline for (j, _), s in zip(fitted, fitted_styles) if _same_line(doc.words[j].box, box)]
        base = box_style(pixels, box, face=FACES[face_k], size=size)
        baseline = _median(same_line) if same_line else base.baseline
        styles[i] = replace(Style(FACES[face_k], size, stretch, baseline, base.left, EDGES[edge_k], None),
                            **run_quality)
    return styles


def print_quality(pixels: np.ndarray, words: list[tuple[tuple[int, int, int, int], str, Style]]) -> dict:
    """The print quality of a run of print, measured on its words' old ink: ``scan``, ``edge``, ``roughness`` and
    ``ink`` for :class:`Style` (an empty dict when no word has ink to measure).

    ``words`` are ``(box, the text its ink shows, the style fitted to that ink)``. Each word's old ink (as
    :func:`old_ink` finds it) is described by how much of it is stroke core (pixels left after a 3x3 erosion),
    how many grey pixels lie along its edges and how densely it fills its bounding box; the same text is drawn
    in its fitted style at the :data:`SCAN` resolution, cut at each of :data:`CUTS`, and the level whose
    drawings are described most alike (summed over the run's best fitted words) is the run's. The ink colour at
    full coverage is then the one that gives the drawn words the old ink's darkness (the median of the darker
    half of the ink pixels), per channel on RGB pages.
    """
    height, width = pixels.shape[:2]
    gray = _gray(pixels)
    measured = []
    for box, text, style in sorted(words, key=lambda w: -(w[2].iou or 0.0))[:QUALITY_WORDS]:
        box = _clip(box, width, height)
        ink = old_ink(pixels, box)
        if ink is None or not text or not text.strip():
            continue
        x0, y0, x1, y1 = box
        crop = gray[y0:y1, x0:x1]
        paper = crop[~(cv2.dilate(ink.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0)]
        if paper.size < 4:
            continue
        measured.append((box, text, style, ink, float(np.median(paper)), _stroke_stats(crop, ink)))
    if not measured:
        return {}
    darkness = []
    for box, _, _, ink, paper, _ in measured:
        x0, y0, x1, y1 = box
        values = np.sort(gray[y0:y1, x0:x1][ink].astype(np.float64))
        darkness.append((float(np.median(values[:max(1, len(values) // 2)])), paper))
    best, best_cost, covers = (CUTS[0], BLURS[0]), math.inf, {}
    costs = dict.fromkeys([(cut, blur) for cut in CUTS for blur in BLURS], 0.0)
    for n, (box, text, style, _, _, seen) in enumerate(measured):
        drawn_at = replace(style, scan=SCAN, roughness=ROUGHNESS, blur=0.0)
        fine = text_cover(text, box, drawn_at, cut=False)  # drawn once, cut at each level
        shape = (box[3] - box[1], box[2] - box[0])
        for cut in CUTS:
            sharp = _cut(fine, replace(drawn_at, edge=cut), shape) if fine.shape != shape else fine
            for blur in BLURS:
                cover = covers[n, cut, blur] = cv2.GaussianBlur(sharp, (0, 0), blur) if blur > 0 else sharp
                drawn = np.rint((1.0 - cover) * 255).astype(np.uint8)
                threshold = ink_threshold(drawn)
                if threshold is None:
                    costs[cut, blur] += 9.0
                    continue
                got = _stroke_stats(drawn, drawn <= threshold)
                costs[cut, blur] += sum(((a - b) / scale) ** 2 for a, b, scale in zip(got, seen, STAT_SCALES))
                # as dark as the old ink, with ink no darker than black?
                level, paper = darkness[n]
                reach = paper * (1.0 - _depth(cover))
                costs[cut, blur] += (max(0.0, reach - level) / max(paper - level, 1.0) / DARK_SCALE) ** 2
    for key, cost in costs.items():
        if cost < best_cost - 1e-12:
            best, best_cost = key, cost
    colours = []
    for n, (box, text, style, ink, paper, _) in enumerate(measured):
        depth = _depth(covers[(n,) + best])
        if not depth:
            continue
        x0, y0, x1, y1 = box
        old = pixels[y0:y1, x0:x1][ink].reshape(len(np.flatnonzero(ink)), -1).astype(np.float64)
        dark = old[_gray(pixels[y0:y1, x0:x1])[ink] <= np.median(_gray(pixels[y0:y1, x0:x1])[ink])]
        level = np.median(dark, axis=0)
        paper_rgb = np.median(pixels[y0:y1, x0:x1][~ink].reshape(-1, level.size).astype(np.float64), axis=0)
        colours.append(np.clip(paper_rgb - (paper_rgb - level) / max(depth, 0.5), 0, level))
    out = {"scan": SCAN, "edge": best[0], "blur": best[1], "roughness": ROUGHNESS}
    if colours:
        colour = np.rint(np.median(np.array(colours), axis=0)).astype(int)
        out["ink"] = int(colour[0]) if pixels.ndim == 2 else tuple(int(v) for v in colour)
        # the strokes' unevenness: what the old ink's cores vary by beyond what the drawing's do
        grains = []
        level = float(np.mean(colour))
        cross = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], np.uint8)
        for n, (box, _, _, ink, paper, _) in enumerate(measured):
            x0, y0, x1, y1 = box
            old_core = cv2.erode(ink.astype(np.uint8), cross) > 0
            drawn = paper - (paper - level) * covers[(n,) + best]
            threshold = ink_threshold(np.rint(drawn).astype(np.uint8))
            if threshold is None or old_core.sum() < 4:
                continue
            new_core = cv2.erode((drawn <= threshold).astype(np.uint8), cross) > 0
            if new_core.sum() < 4:
                continue
            seen, got = float(gray[y0:y1, x0:x1][old_core].std()), float(drawn[new_core].std())
            grains.append(math.sqrt(max(0.0, seen * seen - got * got)))
        if grains:
            # noise on black ink can only lighten it: the ink is darkened by what the noise lightens its darker
            # half, and where it cannot be (black already) the noise is weakened until the ink is as dark as the old
            full = min(MAX_GRAIN_INK, float(np.median(grains)))
            for share in GRAIN_SHARES:
                grain = full * share
                shifts = []
                for n, (box, text, _, ink, paper, _) in enumerate(measured):
                    cover = covers[(n,) + best]
                    drawn = np.clip(paper - (paper - level) * cover + _noise((text, box, "grain"), cover.shape)
                                    * np.float32(grain) * (cover > 0.5), 0, 255)
                    threshold = ink_threshold(np.rint(drawn).astype(np.uint8))
                    if threshold is None:
                        continue
                    values = np.sort(drawn[drawn <= threshold])
                    shifts.append(float(np.median(values[:max(1, len(values) // 2)])) - darkness[n][0])
                shift = max(0.0, float(np.median(shifts))) if shifts else 0.0
                if shift <= level + DARK_SLACK or not grain:
                    break
            darker = np.clip(colour - shift, 0, 255).astype(int)
            out["ink"] = int(darker[0]) if pixels.ndim == 2 else tuple(int(v) for v in darker)
            out["grain"] = grain
    return out


def _depth(cover: np.ndarray) -> float:
    """The median coverage of the darker half of a drawing's ink (its pixels of at least half its most)."""
    drawn = cover >= 0.5 * max(float(cover.max()), 1e-6)
    if not drawn.any():
        return 0.0
    values = np.sort(cover[drawn])[::-1]
    return float(np.median(values[:max(1, len(values) // 2)]))


#: How far (a share of the contrast) a drawing may fall short of the old ink's darkness for the same cost as a
#: typical difference in :func:`_stroke_stats`.
DARK_SCALE = 0.03
#: Typical spreads of :func:`_stroke_stats` over a page's words, which weigh their differences.
STAT_SCALES = (0.08, 0.15, 0.08)


def _stroke_stats(gray: np.ndarray, ink: np.ndarray) -> tuple[float, float, float]:
    """How ``ink`` (a mask over the grey crop ``gray``) is printed: the share of its pixels that are stroke core
    (left after a 3x3 cross erosion), the grey pixels (between a fifth and four fifths of the way from the ink's
    level to the paper's) per edge pixel, and how much of its bounding box it fills."""
    n_ink = int(np.count_nonzero(ink))
    if not n_ink:
        return 0.0, 0.0, 0.0
    eroded = cv2.erode(ink.astype(np.uint8), np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], np.uint8)) > 0
    edge = max(1, n_ink - int(np.count_nonzero(eroded)))
    values = np.sort(gray[ink].astype(np.float64))
    level = float(np.median(values[:max(1, len(values) // 2)]))
    paper_px = gray[~ink]
    paper = float(np.median(paper_px)) if paper_px.size else 255.0
    norm = (gray.astype(np.float64) - level) / max(paper - level, 1.0)
    mid = int(np.count_nonzero((norm > 0.2) & (norm < 0.8)))
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    area = (rows[-1] - rows[0] + 1) * (cols[-1] - cols[0] + 1)
    return float(np.count_nonzero(eroded)) / n_ink, mid / edge, n_ink / area


class Kind(NamedTuple):
    """What a word's box holds, for redrawing: ``reason`` is ``None`` for print the fonts can match, else why the
    word is kept (a :data:`KEPT` key); ``turn`` is the quarter turns (``numpy.rot90``'s ``k``) that make its
    print upright (0, or 1 and 3 for vertical print); ``iou`` the best fit of its old text to its ink."""

    reason: str | None
    turn: int = 0
    iou: float | None = None


def print_kinds(doc: Document, indices: Iterable[int], original: Document | None = None) -> dict[int, Kind]:
    """The :class:`Kind` of words ``indices`` of ``doc``, judged on its image and the texts it shows
    (``original``'s, else ``doc``'s own).

    A word is kept, never drawn wrong, when its box holds ink too faint or too little to match (``faint``; blank
    paper is drawn on, as its run says); its text has characters the fonts lack (``glyph``); the paper around it is dark or screened (``background``); its old text fits its ink in no
    face with an IoU of :data:`KEEP_IOU`, or its run of print (its entity's words) with an ink-weighted IoU of
    :data:`KEEP_RUN_IOU` (at a dozen pixels a short handwritten word can fit a face by chance, its run cannot):
    ``handwriting`` below :data:`HANDWRITING_IOU`, else ``unmatched``. A box :data:`UPRIGHT` times as tall as wide with two characters or more is fitted turned a
    quarter each way: the better turn is its ``turn`` (or it is kept as ``vertical``). Fits come from
    :data:`FIT_CACHE`, so redrawing the same page later refits nothing.
    """
    pixels = doc.image.to_array()
    height, width = pixels.shape[:2]
    page = FIT_CACHE.page(pixels)
    gray = _gray(pixels)
    todo = sorted(set(int(i) for i in indices))
    for i in todo:
        if not 0 <= i < len(doc.words):
            raise IndexError(f"document {doc.id!r} has no word {i} ({len(doc.words)} words)")
    source = original if original is not None and len(original.words) == len(doc.words) else doc

    def shown(j: int) -> str:
        return source.words[j].text

    ious: dict[int, tuple[float, int] | None] = {}

    def fitted(j: int) -> tuple[float, int] | None:  # best IoU and ink of word j's upright fit
        if j not in ious:
            box, text = _clip(doc.words[j].box, width, height), shown(j)
            record = page.record(pixels, box, text) if text.strip() and box[2] > box[0] and box[3] > box[1] else None
            ious[j] = None if record is None else (float(record.scores.max()), record.ink)
        return ious[j]

    entity_of: dict[int, tuple[int, ...]] = {}
    for entity in doc.entities:
        mates = tuple(k for k in entity.word_ids if 0 <= k < len(doc.words))
        for j in mates:
            entity_of.setdefault(j, mates)
    out = {}
    for i in todo:
        box = _clip(doc.words[i].box, width, height)
        text = shown(i)
        if box[2] <= box[0] or box[3] <= box[1] or not text.strip():
            out[i] = Kind(None)  # nothing to match (an empty box draws nothing)
            continue
        if not drawable(text):
            out[i] = Kind("glyph")
            continue
        x0, y0, x1, y1 = box
        crop = gray[y0:y1, x0:x1]
        threshold = ink_threshold(crop)
        if threshold is None:  # blank paper draws as the box and its run say; ink too faint to match is kept
            out[i] = Kind(None) if int(crop.max()) - int(crop.min()) < BLANK else Kind("faint")
            continue
        if _ground(gray, box, threshold) is not None:
            out[i] = Kind("background")
            continue
        own = fitted(i)
        if (y1 - y0) >= UPRIGHT * (x1 - x0) and len(text.strip()) >= 2:  # vertical print, or a short word
            best, k = max((_turned_iou(pixels, box, text, k), k) for k in (1, 3))
            if best > (own[0] if own else 0.0) + TURN_MARGIN:
                out[i] = Kind(None, k, best) if best >= KEEP_IOU else Kind("vertical", 0, best)
                continue
        if own is None:
            out[i] = Kind("faint")
            continue
        run = [f for j in sorted(entity_of.get(i, (i,)), key=lambda j: (abs(j - i), j))[:MAX_GROUP]
               if (f := fitted(j)) is not None and not _tall(doc.words[j].box)]
        run_iou = sum(f[0] * f[1] for f in run) / max(1, sum(f[1] for f in run)) if run else own[0]
        if own[0] < KEEP_IOU or run_iou < KEEP_RUN_IOU:
            out[i] = Kind("handwriting" if own[0] < HANDWRITING_IOU else "unmatched", 0, own[0])
        else:
            out[i] = Kind(None, 0, own[0])
    FIT_CACHE.keep(page)
    return out


def _tall(box) -> bool:
    return (box[3] - box[1]) >= UPRIGHT * (box[2] - box[0])


def _ground(gray: np.ndarray, box: tuple[int, int, int, int], threshold: float) -> str | None:
    """``"dark"`` or ``"grain"`` when the paper around ``box`` (its non-ink pixels, in the box grown by half its
    height) is darker than :data:`MIN_PAPER` or rougher than :data:`MAX_GRAIN`, else ``None``."""
    height, width = gray.shape
    x0, y0, x1, y1 = box
    grow = max(2, (y1 - y0) // 2)
    region = gray[max(0, y0 - grow):min(height, y1 + grow), max(0, x0 - grow):min(width, x1 + grow)]
    dark = region <= threshold
    if dark.mean() > 0.5 or (gray[y0:y1, x0:x1] <= threshold).mean() > 0.5:  # light print on a dark ground
        return "dark"
    ink = cv2.dilate(dark.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    paper = region[~ink]
    if paper.size < 8:
        return "dark"
    if float(np.median(paper)) < MIN_PAPER:
        return "dark"
    if float(paper.std()) > MAX_GRAIN:
        return "grain"
    # a halftone screen: dots as dark as the print, many and tiny (outside the box, where no glyph is)
    outside = np.ones(region.shape, bool)
    oy, ox = y0 - max(0, y0 - grow), x0 - max(0, x0 - grow)
    outside[oy:oy + (y1 - y0), ox:ox + (x1 - x0)] = False
    count, labels, stats, _ = cv2.connectedComponentsWithStats(dark.astype(np.uint8), connectivity=8)
    tiny = np.flatnonzero(stats[1:, cv2.CC_STAT_AREA] <= 3) + 1
    dots = int(np.count_nonzero(np.isin(labels[outside], tiny)))
    if outside.any() and dots > SCREEN * np.count_nonzero(outside):
        return "grain"
    return None


def _turn_box(box, k: int, height: int, width: int) -> tuple[int, int, int, int]:
    """``box`` on a ``height`` x ``width`` page as it lies on ``numpy.rot90(page, k)``."""
    x0, y0, x1, y1 = box
    k %= 4
    if k == 0:
        return x0, y0, x1, y1
    if k == 1:  # counter-clockwise: (y, x) -> (W - 1 - x, y)
        return y0, width - x1, y1, width - x0
    if k == 2:
        return width - x1, height - y1, width - x0, height - y0
    return height - y1, x0, height - y0, x1  # clockwise: (y, x) -> (x, H - 1 - y)


def _turned_iou(pixels: np.ndarray, box, text: str, k: int) -> float:
    """The best IoU of ``text`` fitted to the ink of ``box`` on the page turned ``k`` quarter turns (0 if none)."""
    height, width = pixels.shape[:2]
    turned = np.rot90(pixels, k)
    page = FIT_CACHE.page(turned)
    record = page.record(turned, _turn_box(box, k, height, width), text)
    FIT_CACHE.keep(page)
    return 0.0 if record is None else float(record.scores.max())


def drawable(text: str) -> bool:
    """Whether every character of ``text`` has a glyph in the fonts (spaces and controls aside)."""
    return all(_has_glyph(c) for c in text if not c.isspace() and unicodedata.category(c)[0] != "C")


@lru_cache(maxsize=4096)
def _has_glyph(char: str) -> bool:
    """Whether :data:`DEFAULT_FACE` draws ``char`` as its own glyph, not as the missing-glyph box (every face has
    the same character set)."""
    font = _font(DEFAULT_FACE, FIT_SIZE)
    return bytes(font.getmask(char)) != _missing_mask() or char == "\U0010fffd"


@lru_cache(maxsize=1)
def _missing_mask() -> bytes:
    return bytes(_font(DEFAULT_FACE, FIT_SIZE).getmask("\U0010fffd"))


def _median(values: list[float]) -> float:
    """The median of a few floats, as :func:`numpy.median` gives it (the mean of the middle two for an even
    count), without its overhead."""
    ordered = sorted(values)
    half = len(ordered) // 2
    return float(ordered[half]) if len(ordered) % 2 else float((ordered[half - 1] + ordered[half]) / 2)


def _clip(box, width: int, height: int) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = (int(v) for v in box)
    return max(0, x0), max(0, y0), min(width, x1), min(height, y1)


def _same_line(a, b) -> bool:
    """Boxes ``a`` and ``b`` overlap vertically by at least half the lower one's height."""
    overlap = min(a[3], b[3]) - max(a[1], b[1])
    return overlap >= 0.5 * max(1, min(a[3] - a[1], b[3] - b[1]))


def _alike(boxes: np.ndarray, group: tuple[int, ...]) -> np.ndarray:
    """Which words' boxes are about as tall as ``group``'s (within 20%): print of the same size."""
    heights = boxes[:, 3] - boxes[:, 1]
    mine = float(np.median(heights[list(group)]))
    return (heights >= mine / SAME_SIZE) & (heights <= mine * SAME_SIZE)


def _nearest(boxes: np.ndarray, group: tuple[int, ...], k: int, known: np.ndarray) -> list[int]:
    """The ``k`` words nearest to the words of ``group`` (gap between boxes, vertical gaps counting double: the
    line first), outside it, whose text is ``known``; nearest first."""
    if not len(boxes):
        return []
    mine = boxes[list(group)]
    dx = np.maximum(0, np.maximum(mine[:, None, 0] - boxes[None, :, 2], boxes[None, :, 0] - mine[:, None, 2]))
    dy = np.maximum(0, np.maximum(mine[:, None, 1] - boxes[None, :, 3], boxes[None, :, 1] - mine[:, None, 3]))
    distance = np.hypot(dx, 2 * dy).min(axis=0)
    distance[list(group)] = np.inf
    distance[~known] = np.inf
    order = np.argsort(distance, kind="stable")[:k]
    return [int(j) for j in order if np.isfinite(distance[j])]


def _line_neighbours(doc: Document, i: int) -> tuple[int, ...]:
    """Word ``i`` and the words on its line within three box heights of it (for words in no entity)."""
    box = doc.words[i].box
    reach = 3 * max(1, box[3] - box[1])
    out = []
    for j, word in enumerate(doc.words):
        b = word.box
        if _same_line(b, box) and b[0] - box[2] <= reach and box[0] - b[2] <= reach:
            out.append(j)
    return tuple(out)


def text_width(text: str, style: Style) -> float:
    """Width (page pixels) of ``text``'s ink drawn in ``style``, before any fitting into a box."""
    ref_size = max(REF_SIZE, int(math.ceil(2 * style.size)))
    ref = _reference(style.face, text, ref_size)
    if ref is None:
        return 0.0
    _, (rx0, _, rx1, _), _ = ref
    return (rx1 - rx0) * style.size / ref_size * min(max(style.stretch, 1 / MAX_STRETCH), MAX_STRETCH)


def legible(text: str, box: tuple[int, int, int, int], style: Style) -> bool:
    """Whether ``text`` in ``style`` fits ``box`` without being drawn below :data:`MIN_SCALE` of its size (after
    the squeeze to :data:`MIN_SQUEEZE` of its width): smaller, a long text in a short box (twelve digits where
    a ``3`` was) would be a smear. (A text shift that re-renders asks the stricter :meth:`Redraw.fits`.)"""
    return text_width(text, style) * MIN_SQUEEZE * MIN_SCALE <= box[2] - box[0]


class Redraw:
    """What redrawing can do on one page, asked before a text shift picks its words (with ``render: true``): which
    words it keeps as printed (:meth:`kept`) and whether a new text fits a word's box (:meth:`fits`). Every word
    kept or text turned down is counted in :meth:`tallies` (``{"kept": {reason: n}}``, the provenance's
    ``kept: handwriting`` and so on), so a shift that asks draws another word in its place and says why.

    ``doc`` is the page before the shift: its texts are what its ink shows.
    """

    def __init__(self, doc: Document):
        self.doc = doc
        self.kinds: dict[int, Kind] = {}
        self.styles: dict[int, Style | None] = {}
        self.counts: dict[str, int] = {}
        self.print: _PagePrint | None = None

    def kind(self, i: int) -> Kind:
        if i not in self.kinds:
            self.kinds.update(print_kinds(self.doc, [i], self.doc))
        return self.kinds[i]

    def kept(self, i: int) -> str | None:
        """Why word ``i`` is kept as printed (a :data:`KEPT` key, counted), or ``None`` when it can be redrawn."""
        reason = self.kind(i).reason
        if reason is not None:
            self.counts[reason] = self.counts.get(reason, 0) + 1
        return reason

    def fits(self, i: int, text: str, count: bool = True) -> bool:
        """Whether ``text`` can be drawn in word ``i``'s box: its glyphs are in the fonts, and it fits the box
        at its run's size, squeezed to :data:`FIT_SQUEEZE` of its width at most (print squeezed or shrunk further
        is told from the page's own by its strokes). With ``count``, a text turned down is counted (``too long``,
        or ``glyph`` for a missing glyph)."""
        if not text.strip():
            return True
        if not drawable(text):
            if count:
                self.counts["glyph"] = self.counts.get("glyph", 0) + 1
            return False
        style = self.style(i)
        if style is None:
            return True
        kind = self.kind(i)
        box = self.doc.words[i].box
        room = (box[3] - box[1]) if kind.turn else (box[2] - box[0])
        if text_width(text, style) * FIT_SQUEEZE > room:
            if count:
                self.counts["too long"] = self.counts.get("too long", 0) + 1
            return False
        return True

    def style(self, i: int) -> Style | None:
        """The style word ``i``'s new text would be drawn in (``None`` when none can be chosen)."""
        if i not in self.styles:
            kind = self.kind(i)
            if kind.turn:
                pixels = self.doc.image.to_array()
                height, width = pixels.shape[:2]
                turned = np.ascontiguousarray(np.rot90(pixels, kind.turn))
                word = self.doc.words[i]
                one = Document(self.doc.id, PageImage.from_array(turned),
                               (type(word)(word.text, _turn_box(word.box, kind.turn, height, width)),))
                self.styles[i] = choose_styles(one, [0], one, per="word", quality=False).get(0)
            else:
                self.styles[i] = choose_styles(self.doc, [i], self.doc, quality=False).get(i)
        return self.styles[i]

    def pieced(self, i: int, text: str) -> bool:
        """Whether ``text`` can be pieced in word ``i``'s box from the page's own print (:meth:`_PagePrint.spliced`:
        the old word's letters and those of words printed alike) rather than drawn; upright print only."""
        style = self.style(i)
        if style is None or not text.strip() or self.kind(i).turn:
            return False
        if self.print is None:
            boxes = np.array([w.box for w in self.doc.words], np.int64).reshape(-1, 4)
            self.print = _PagePrint(self.doc, self.doc, np.array(self.doc.image.to_array()), boxes, None, ())
        return self.print.spliced(i, style, text) is not None

    def tallies(self) -> dict[str, dict[str, int]]:
        """What was kept or turned down, by reason: ``{"kept": {reason: n}}`` (empty when nothing was)."""
        return {"kept": dict(sorted(self.counts.items()))} if self.counts else {}


def render_box(pixels: np.ndarray, box: tuple[int, int, int, int], text: str, margin: int | None = None,
               style: Style | None = None, avoid: Iterable[tuple[int, int, int, int]] = (),
               pieces: Pasted | None = None) -> None:
    """Erase the ink in ``box`` of ``pixels`` (``HxW`` or ``HxWx3`` uint8, changed in place) and draw ``text`` there.

    ``text`` is drawn in ``style`` (default: :func:`box_style`). Ink within
    ``margin`` pixels of the box (default: :func:`reach`) is erased too when it
    belongs to a stroke that lies mostly in the box (a letter or a comma that
    a tight box cuts), but never inside the boxes ``avoid`` (the other words');
    a stroke that lies mostly outside the box is a neighbour's and is kept
    whole (with ``margin=0``, every ink pixel in the box is erased). Form
    rules through the box are kept. With ``pieces`` (:meth:`_PagePrint.spliced`), the
    new text is those pieces of the page's own print, pasted where the old
    ink was erased, instead of drawn.
    """
    height, width = pixels.shape[:2]
    x0, y0, x1, y1 = _clip(box, width, height)
    if x1 <= x0 or y1 <= y0:
        return
    if text.strip():
        font_paths()  # nothing changes when the fonts are missing
        if style is None:
            style = box_style(pixels, (x0, y0, x1, y1))
    if margin is None:
        margin = reach((x0, y0, x1, y1))
    crop = pixels[y0:y1, x0:x1]
    threshold = ink_threshold(crop)
    core = _gray(crop) <= threshold if threshold is not None else np.zeros(crop.shape[:2], dtype=bool)
    colour = ink_colour(crop, core)
    tones = None
    old = old_ink(pixels, (x0, y0, x1, y1)) if core.any() and text.strip() and pieces is None else None
    if core.any():
        strokes = _strokes(pixels, (x0, y0, x1, y1), threshold, margin, avoid)
        ex0, ey0, ex1, ey1 = strokes.area
        # the old ink's tones, darkest first: what the new ink's pixels will take, rank for rank
        inked = strokes.erase & strokes.rim
        below = strokes.below
        if int(inked.sum()) >= MIN_INK:
            region = pixels[ey0:ey1, ex0:ex1]
            order = np.argsort(strokes.gray[inked], kind="stable")
            tones = region[inked][order]
        _inpaint(pixels, strokes.area, strokes.erase, threshold)
    if pieces is not None:  # the new text pieced from the page's own print (:mod:`dogood.page.splice`)
        _paste(pixels, (x0, y0, x1, y1), pieces, avoid)
        return
    if not text.strip():
        return
    weight = _weight(old) if old is not None else None
    if weight is None:
        drawn = _drawn(pixels, (x0, y0, x1, y1), text, text_cover(text, (x0, y0, x1, y1), style, spill=margin),
                       style, colour, tones, below if tones is not None else 0.0, margin, avoid)
    else:  # as bold as the old print: the edge level whose new ink's weight is nearest the old ink's
        fine = text_cover(text, (x0, y0, x1, y1), style, spill=margin, cut=False) if style.scan > 0 else None
        shape = (max(0, y1 - y0 + 2 * margin), max(0, x1 - x0 + 2 * margin))
        drawn, gap = None, math.inf
        for edge in (style.edge,) + tuple(e for e in WEIGHT_EDGES if e != style.edge):
            if style.scan <= 0:
                cover = text_cover(text, (x0, y0, x1, y1), replace(style, edge=edge), spill=margin)
            else:
                cover = _cut(fine, replace(style, edge=edge), shape) if fine is not None else np.zeros(shape, np.float32)
            got = _drawn(pixels, (x0, y0, x1, y1), text, cover, style, colour, tones,
                         below if tones is not None else 0.0, margin, avoid)
            if got is None:
                break
            new = _drawn_weight(got, (x0, y0, x1, y1), threshold)
            off = abs(math.log(max(new, 1e-6) / weight))
            if off < gap - 1e-9:
                drawn, gap = got, off
    if drawn is not None:
        blended, (gx0, gy0) = drawn
        pixels[gy0:gy0 + blended.shape[0], gx0:gx0 + blended.shape[1]] = blended.astype(np.uint8)


def _drawn(pixels: np.ndarray, box: tuple[int, int, int, int], text: str, a: np.ndarray, style: Style, colour,
           tones: np.ndarray | None, below: float, margin: int, avoid) -> tuple[np.ndarray, tuple[int, int]] | None:
    """The pixels of ``box`` grown by ``margin`` (clipped to the page; never on another word's box beyond ``box``)
    with the coverage ``a`` of ``text`` drawn over them, and where they start (column, row); ``None`` without ink."""
    height, width = pixels.shape[:2]
    x0, y0, x1, y1 = box
    if margin:  # glyph parts beyond the box: on the page, never on another word's box
        keep = np.zeros(a.shape, bool)
        keep[margin:margin + (y1 - y0), margin:margin + (x1 - x0)] = True
        ax0, ay0 = x0 - margin, y0 - margin
        free = np.ones(a.shape, bool)
        for bx0, by0, bx1, by1 in avoid:
            free[max(0, by0 - ay0):max(0, by1 - ay0), max(0, bx0 - ax0):max(0, bx1 - ax0)] = False
        a = np.where(keep | free, a, 0.0)
        cy0, cx0 = max(0, -ay0), max(0, -ax0)
        a = a[cy0:cy0 + min(height, y1 + margin) - max(0, ay0), cx0:cx0 + min(width, x1 + margin) - max(0, ax0)]
        gx0, gy0 = max(0, ax0), max(0, ay0)
    else:
        gx0, gy0 = x0, y0
    if not a.any():
        return None
    if style.ink is not None:
        colour = style.ink if pixels.ndim == 3 or isinstance(style.ink, int) else int(np.mean(style.ink))
        if pixels.ndim == 3 and isinstance(colour, int):
            colour = (colour,) * pixels.shape[2]
    gy1, gx1 = gy0 + a.shape[0], gx0 + a.shape[1]
    region = pixels[gy0:gy1, gx0:gx1].astype(np.float32)
    if style.grain > 0:  # the ink's own unevenness (toner, the scan's noise), where there is ink
        region_noise = _noise((text, (x0, y0, x1, y1), "grain"), a.shape) * np.float32(style.grain) * (a > 0.5)
    else:
        region_noise = None
    cover = a
    if region.ndim == 3:
        a = a[..., None]
    blended = region * (1.0 - a) + np.asarray(colour, np.float32) * a
    if region_noise is not None:
        blended = blended + (region_noise[..., None] if blended.ndim == 3 else region_noise)
    blended = np.clip(np.rint(blended), 0, 255)
    if tones is not None:  # the new ink in the old ink's own tones (darkness, grey edges, grain), rank for rank
        _take_tones(blended, cover, tones, below, (text, (x0, y0, x1, y1), "tones"))
    return blended, (gx0, gy0)


def _weight(ink: np.ndarray) -> float:
    """How bold print is: its ink pixels per pixel of the ink's edge (the redrawn-word cue's ``stroke_width``)."""
    core = cv2.erode(ink.astype(np.uint8), np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], np.uint8)) > 0
    return float(ink.sum()) / max(1, int((ink & ~core).sum()))


def _drawn_weight(drawn: tuple[np.ndarray, tuple[int, int]], box: tuple[int, int, int, int], threshold: float) -> float:
    """:func:`_weight` of the ink (darker than ``threshold``) that ``drawn`` (:func:`_drawn`) leaves in ``box``."""
    blended, (gx0, gy0) = drawn
    x0, y0, x1, y1 = box
    inside = blended[y0 - gy0:y1 - gy0, x0 - gx0:x1 - gx0]
    return _weight(_gray(inside.astype(np.uint8)) <= threshold)


class Pasted(NamedTuple):
    """A new text pieced from the page's print (:meth:`_PagePrint.spliced`): over ``area`` (page columns and rows
    ``x0, y0, x1, y1``), the pixel ``values`` to paste where ``mask`` is set."""

    area: tuple[int, int, int, int]
    values: np.ndarray
    mask: np.ndarray


def _paste(pixels: np.ndarray, box: tuple[int, int, int, int], pieces: Pasted,
           avoid: Iterable[tuple[int, int, int, int]]) -> None:
    """Paste ``pieces`` into ``pixels`` in place: in ``box``, and beyond it only where none of the boxes
    ``avoid`` is."""
    ax0, ay0, ax1, ay1 = pieces.area
    x0, y0, x1, y1 = box
    mask = pieces.mask.copy()
    free = np.ones(mask.shape, bool)
    for bx0, by0, bx1, by1 in avoid:
        free[max(0, by0 - ay0):max(0, by1 - ay0), max(0, bx0 - ax0):max(0, bx1 - ax0)] = False
    free[max(0, y0 - ay0):max(0, y1 - ay0), max(0, x0 - ax0):max(0, x1 - ax0)] = True
    mask &= free
    region = pixels[ay0:ay1, ax0:ax1]
    region[mask] = pieces.values[mask]


def letter_edges(text: str, style: Style) -> list[tuple[float, float]]:
    """Each character's ink ``[left, right)`` in page columns, ``text`` laid out in ``style`` (its ink starting
    at ``style.left``; a character without ink is an empty span where it stands)."""
    ref_size = max(REF_SIZE, int(math.ceil(2 * style.size)))
    font = _font(style.face, ref_size)
    text = _drawable(text)
    sx = style.size / ref_size * min(max(style.stretch, 1 / MAX_STRETCH), MAX_STRETCH)
    start = font.getbbox(text, anchor="ls")[0]
    edges = []
    for k, char in enumerate(text):
        advance = font.getlength(text[:k]) if k else 0.0
        left, _, right, _ = font.getbbox(char, anchor="ls")
        if right <= left:
            left = right = 0.0
        edges.append((style.left + (advance + left - start) * sx, style.left + (advance + right - start) * sx))
    return edges


class _Strokes(NamedTuple):
    """A word's strokes around its box (:func:`_strokes`): ``area``, the box grown by the margin (page
    coordinates); over it, ``erase`` (the word's ink and its grey rim, no form rule, no other word's ink),
    ``gray`` and ``rim`` (pixels darker than ``below``, the paper less :data:`RIM` of its contrast); ``threshold``,
    the ink's."""

    area: tuple[int, int, int, int]
    erase: np.ndarray
    gray: np.ndarray
    rim: np.ndarray
    below: float
    threshold: float = 0.0


def _strokes(pixels: np.ndarray, box: tuple[int, int, int, int], threshold: float, margin: int,
             avoid: Iterable[tuple[int, int, int, int]]) -> _Strokes:
    """The strokes of the word in ``box`` (clipped to the page) that :func:`render_box` erases: the ink darker
    than ``threshold`` in the box and, within ``margin`` pixels of it, the strokes that lie mostly in the box
    where none of the boxes ``avoid`` is, with their grey rim; form rules through the box are left out."""
    height, width = pixels.shape[:2]
    x0, y0, x1, y1 = box
    ex0, ey0 = max(0, x0 - margin), max(0, y0 - margin)
    ex1, ey1 = min(width, x1 + margin), min(height, y1 + margin)
    gray = _gray(pixels[ey0:ey1, ex0:ex1])
    rules = form_lines(pixels, (x0, y0, x1, y1), threshold, (ex0, ey0, ex1, ey1), ragged=True)
    around = (gray <= threshold) & ~rules
    inner = np.zeros(around.shape, dtype=bool)
    inner[y0 - ey0:y1 - ey0, x0 - ex0:x1 - ex0] = True
    allowed = inner.copy()
    if margin:  # the strokes that lie mostly in the box, where no other word is
        count, labels = cv2.connectedComponents(around.astype(np.uint8), connectivity=8)
        total = np.bincount(labels.ravel(), minlength=count)
        within = np.bincount(labels[inner], minlength=count)
        mostly = within >= OWN_SHARE * total
        mostly[0] = False
        free = np.ones(around.shape, dtype=bool)
        for ax0, ay0, ax1, ay1 in avoid:
            free[max(0, ay0 - ey0):max(0, ay1 - ey0), max(0, ax0 - ex0):max(0, ax1 - ex0)] = False
        around &= mostly[labels] & (inner | free)  # a stroke mostly outside is another word's: kept whole
        allowed |= (cv2.dilate(around.astype(np.uint8), np.ones((5, 5), np.uint8)) > 0) & free  # and its rim
    erase = (cv2.dilate((around & ~rules).astype(np.uint8), np.ones((3, 3), np.uint8)) > 0) & ~rules
    # the rim of grey around the strokes, wider than a pixel on a blurred scan
    clear = ~(cv2.dilate((gray <= threshold).astype(np.uint8), np.ones((5, 5), np.uint8)) > 0)
    paper = float(np.median(gray[clear])) if clear.any() else 255.0
    rim = gray < paper - RIM * max(paper - threshold, 1.0)
    erase |= (cv2.dilate(erase.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0) & rim & ~rules
    erase &= allowed & ~((gray <= threshold) & ~around & ~rules)  # never another word's ink
    return _Strokes((ex0, ey0, ex1, ey1), erase, gray, rim, paper - RIM * max(paper - threshold, 1.0), threshold)


def _take_tones(blended: np.ndarray, cover: np.ndarray, tones: np.ndarray, below: float, key) -> None:
    """Give the drawn ink (the pixels of ``blended`` the text covers, darker than ``below`` as the old ink's were
    chosen) the old
    ink's ``tones`` (its pixels' values, darkest first) by rank, in place: the most covered pixel takes the
    darkest tone, the least the lightest, ties ordered by noise seeded by ``key``; so the new ink is as dark, as
    grey at its edges and as grainy as the old."""
    gray = blended if blended.ndim == 2 else blended.mean(axis=2)
    drawn = (gray < below) & (cover > 0)
    n = int(drawn.sum())
    if not n:
        return
    jitter = _noise(key, cover.shape)[drawn] * np.float32(1e-3)
    order = np.argsort(-(cover[drawn] + jitter), kind="stable")
    picks = np.minimum((np.arange(n) * len(tones)) // n, len(tones) - 1)  # the rank's share of the old tones
    values = np.empty((n,) + tones.shape[1:], np.float32)
    values[order] = tones[picks]
    blended[drawn] = values


def _noise(key, shape: tuple[int, int]) -> np.ndarray:
    """Standard normal noise of ``shape`` from a generator seeded by ``key`` (the same word, the same noise)."""
    seed = hashlib.blake2b(repr(key).encode(), digest_size=8).digest()
    return np.random.default_rng(int.from_bytes(seed, "little")).standard_normal(shape).astype(np.float32)


def reach(box: tuple[int, int, int, int]) -> int:
    """How far (pixels) beyond a word's box its strokes are erased: a third of its height, at least 2."""
    return max(2, int(round((box[3] - box[1]) / 3)))


def form_lines(pixels: np.ndarray, box: tuple[int, int, int, int], threshold: float,
               region: tuple[int, int, int, int], ragged: bool = False) -> np.ndarray:
    """Mask over ``region`` of the form rules near ``box``: ink runs too long to be glyph strokes.

    Horizontal runs of at least ``max(15, 1.5 h)`` pixels and vertical runs
    of at least ``1.5 h`` (``h`` the box height), looked for in the box grown
    by ``max(4, h / 2)``: underlines and table borders that cross a word box
    are kept, not erased. A horizontal run within the box that glyph ink
    stands on along most of its length is the word's baseline, not a rule.
    With ``ragged``, the ink beside a rule that continues it for at least
    ``max(6, h)`` pixels (gaps of a pixel bridged: a row of a thick rule broken
    by one lighter pixel) is the rule's too, so erasing leaves no notch in it.
    """
    height, width = pixels.shape[:2]
    x0, y0, x1, y1 = box
    rx0, ry0, rx1, ry1 = region
    box_h = y1 - y0
    ext = max(4, box_h // 2)
    cx0, cy0 = max(0, min(x0 - ext, rx0)), max(0, min(y0 - ext, ry0))
    cx1, cy1 = min(width, max(x1 + ext, rx1)), min(height, max(y1 + ext, ry1))
    ink = (_gray(pixels[cy0:cy1, cx0:cx1]) <= threshold).astype(np.uint8)
    long_h, long_v = max(15, int(1.5 * box_h)), max(6, int(1.5 * box_h))
    rules = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((1, long_h), np.uint8))
    # The letters of a bold word can stand on one unbroken row of ink ("Gas"): a run that stays within the box
    # with glyph ink on top along most of it is the word's own baseline, erased with the word, not a rule.
    count, labels, stats, _ = cv2.connectedComponentsWithStats(rules, connectivity=8)
    for k in range(1, count):
        left, top, run = stats[k, cv2.CC_STAT_LEFT], stats[k, cv2.CC_STAT_TOP], stats[k, cv2.CC_STAT_WIDTH]
        if top > 0 and left >= x0 - cx0 - 1 and left + run <= x1 - cx0 + 1 and ink[top - 1, left:left + run].mean() > 0.5:
            rules[labels == k] = 0
    rules = rules > 0
    upright = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((long_v, 1), np.uint8)) > 0
    if ragged:  # the rows (columns) beside a rule that continue it are the rule's too
        run = max(6, box_h)
        along = cv2.morphologyEx(cv2.morphologyEx(ink, cv2.MORPH_CLOSE, np.ones((1, 3), np.uint8)), cv2.MORPH_OPEN,
                                 np.ones((1, run), np.uint8)) > 0
        rules |= (cv2.dilate(rules.astype(np.uint8), np.ones((3, 1), np.uint8)) > 0) & along & (ink > 0)
        down = cv2.morphologyEx(cv2.morphologyEx(ink, cv2.MORPH_CLOSE, np.ones((3, 1), np.uint8)), cv2.MORPH_OPEN,
                                np.ones((long_v, 1), np.uint8)) > 0
        upright |= (cv2.dilate(upright.astype(np.uint8), np.ones((1, 3), np.uint8)) > 0) & down & (ink > 0)
    rules |= upright
    return rules[ry0 - cy0:ry1 - cy0, rx0 - cx0:rx1 - cx0]


def ink_threshold(crop: np.ndarray) -> float | None:
    """Grey level at or below which a box's pixels are ink (Otsu), or ``None`` for a box without ink.

    A crop whose grey levels span less than :data:`MIN_CONTRAST` (2nd to 98th
    percentile) has no ink.
    """
    gray = _gray(crop)
    if not gray.size:
        return None
    if _low_contrast(gray):
        return None
    threshold, _ = cv2.threshold(np.ascontiguousarray(gray), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    return float(threshold)


def ink_colour(crop: np.ndarray, core: np.ndarray) -> tuple[int, ...] | int:
    """The old ink's colour: median of the darker half of the ``core`` ink pixels (grey level or RGB)."""
    if not core.any():
        return DEFAULT_INK if crop.ndim == 2 else (DEFAULT_INK,) * 3
    gray = _gray(crop)[core]
    dark = gray <= _median_u8(gray)
    values = crop[core][dark]
    if crop.ndim == 2:
        return int(_median_u8(values))
    return tuple(int(_median_u8(values[:, c])) for c in range(values.shape[1]))


def _order_stats(values: np.ndarray, ranks) -> list[int]:
    """The values of a uint8 array at ``ranks`` of its sorted order, from a histogram (no sort)."""
    ends = np.cumsum(np.bincount(values.ravel(), minlength=256))
    return np.searchsorted(ends, np.asarray(ranks), side="right").tolist()


def _median_u8(values: np.ndarray) -> float:
    """:func:`numpy.median` of a non-empty uint8 array (the mean of the middle two for an even count), exactly."""
    n = values.size
    if n % 2:
        return float(_order_stats(values, [n // 2])[0])
    a, b = _order_stats(values, [n // 2 - 1, n // 2])
    return (a + b) / 2


def _low_contrast(gray: np.ndarray) -> bool:
    """Whether the 2nd to 98th percentile of ``gray`` (uint8) span less than :data:`MIN_CONTRAST`, as
    ``np.percentile(gray, [2, 98])`` says: a percentile lies between the values at the ranks around it, so a
    histogram decides all but spans within a grey level of the bound, which numpy's own percentile decides."""
    n = gray.size
    lo_rank, hi_rank = int((n - 1) * 0.02), int((n - 1) * 0.98)
    ranks = [max(0, lo_rank - 1), min(n - 1, lo_rank + 2), max(0, hi_rank - 1), min(n - 1, hi_rank + 2)]
    lo_min, lo_max, hi_min, hi_max = _order_stats(gray, ranks)
    if hi_max - lo_min < MIN_CONTRAST:
        return True
    if hi_min - lo_max >= MIN_CONTRAST:
        return False
    lo, hi = np.percentile(gray, [2, 98])
    return bool(hi - lo < MIN_CONTRAST)


def font_paths() -> dict[str, str]:
    """Path of each :data:`FACES` font file; :class:`FontError` naming the package when any is missing.

    The folder is ``$DOGOOD_FONT_DIR`` when set, else :data:`FONT_DIR`.
    """
    folder = os.environ.get("DOGOOD_FONT_DIR") or FONT_DIR
    return _font_paths(folder)


@lru_cache(maxsize=8)  # a failure is not cached: the next call looks again
def _font_paths(folder: str) -> dict[str, str]:
    paths = {face: str(Path(folder) / f"{face}.ttf") for face in FACES}
    missing = [face for face, path in paths.items() if not os.path.isfile(path)]
    if missing:
        raise FontError(
            f"re-rendering words (render: true) draws with the Liberation fonts, and {len(missing)} of "
            f"{len(FACES)} are missing from {folder} ({', '.join(f + '.ttf' for f in missing[:3])}"
            f"{', ...' if len(missing) > 3 else ''}): install the Debian package {FONT_PACKAGE} "
            f"(apt-get install {FONT_PACKAGE}), or set DOGOOD_FONT_DIR to a folder holding them")
    return paths


@lru_cache(maxsize=64)
def _font(face: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(font_paths()[face], size=max(1, int(size)), layout_engine=_layout())


@lru_cache(maxsize=1)
def _layout() -> int:
    """HarfBuzz (through libraqm, in Pillow's wheels) when Pillow has it: it applies the fonts' GPOS kerning,
    as typesetting did; Pillow's basic layout does not (``AV`` stays wide)."""
    return ImageFont.Layout.RAQM if features.check_feature("raqm") else ImageFont.Layout.BASIC


@lru_cache(maxsize=2048)
def _reference(face: str, text: str, size: int = REF_SIZE) -> tuple[np.ndarray, tuple[int, int, int, int], int] | None:
    """``text`` rasterised in ``face`` at ``size``: coverage (float32 0-1), ink box (coverage >= 0.5), baseline row.

    ``None`` when the text has no ink.
    """
    font = _font(face, size)
    text = _drawable(text)
    left, top, right, bottom = font.getbbox(text, anchor="ls")
    if right <= left or bottom <= top:
        return None
    pad = 2
    canvas = Image.new("L", (right - left + 2 * pad, bottom - top + 2 * pad), 0)
    ImageDraw.Draw(canvas).text((pad - left, pad - top), text, fill=255, font=font, anchor="ls")
    cover = np.asarray(canvas, dtype=np.float32) / 255.0
    ink = cover >= 0.5
    if not ink.any():
        return None
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    cover.flags.writeable = False
    return cover, (int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1), pad - top


def _drawable(text: str) -> str:
    """``text`` with control characters (line breaks, tabs) as spaces and lone surrogates as U+FFFD: one line
    that the layout engine accepts."""
    return "".join(" " if unicodedata.category(c) == "Cc" else "\ufffd" if unicodedata.category(c) == "Cs" else c
                   for c in text)


def _running_sum(cover: np.ndarray) -> np.ndarray:
    """``cover``'s running sum along its first axis, starting at 0 (one row more than ``cover``)."""
    total = np.zeros((cover.shape[0] + 1,) + cover.shape[1:], dtype=np.float32)
    np.cumsum(cover, axis=0, out=total[1:])
    return total


def _resample(total: np.ndarray, n_out: int, scale: float, offset: float) -> np.ndarray:
    """The rows whose running sum is ``total`` (:func:`_running_sum`), scaled by ``scale`` and moved by
    ``offset`` onto ``n_out`` rows: each output row is the exact mean over its extent (the difference of the
    linearly interpolated running sum)."""
    n_in = total.shape[0] - 1
    edges = (np.arange(n_out + 1, dtype=np.float64) - offset) / scale
    np.maximum(edges, 0, out=edges)
    np.minimum(edges, n_in, out=edges)
    whole = np.minimum(edges.astype(np.int64), n_in - 1)
    frac = (edges - whole).astype(np.float32).reshape((-1,) + (1,) * (total.ndim - 1))
    low = total[whole]
    at = low + frac * (total[whole + 1] - low)
    return (at[1:] - at[:-1]) * np.float32(scale)


def _warp(cover: np.ndarray, sx: float, sy: float, ox: float, oy: float, shape: tuple[int, int]) -> np.ndarray:
    """``cover`` scaled by ``(sx, sy)`` and moved by ``(ox, oy)`` onto a ``shape`` grid, by exact area averaging."""
    rows = _resample(_running_sum(cover), shape[0], sy, oy)
    return np.clip(_resample(_running_sum(rows.T), shape[1], sx, ox).T, 0.0, 1.0)


class _FitRecord:
    """What fitting a word's original text to its old ink found, computed once and kept for its page
    (:data:`FIT_CACHE`): the ink mask (bits), each face's ink box and baseline at :data:`FIT_SIZE`, the starting
    fit (``scores``, ``edges``: see :class:`_Fit`) and each face's refinement, filled in as they are asked for.
    Never changed but for adding a refinement, which depends on the starting fit alone."""

    __slots__ = ("box", "text", "bits", "shape", "ink", "geoms", "scores", "edges", "refined", "_costs", "index")

    def __init__(self, box, text: str, mask: np.ndarray, refs: list):
        self.box, self.text, self.shape = box, text, mask.T.shape
        self.index = -1  # its place among its page's records (:class:`_PageFits`), which a run's choice is keyed by
        self.bits = np.packbits(mask.T, axis=None)
        self.ink = int(np.count_nonzero(mask))
        self.geoms = np.array([ref_box + (base,) for _, ref_box, base in refs], np.int32)  # arrays: a record is kept
        scorer = _Scorer(self, refs, mask.T)
        starts = _ink_boxes(mask)
        edges, scores = [], []
        for k in range(len(refs)):
            tried = [(scorer.score(k, start), start) for start in starts]
            best = max(range(len(tried)), key=lambda n: tried[n][0].max())
            scores.append(tried[best][0])
            edges.append(tried[best][1])
        self.scores = np.array(scores)
        self.scores.flags.writeable = False
        self.edges = np.array(edges, np.float64)  # exact: they are floats
        self.refined: dict[int, np.ndarray] = {}
        self._costs: np.ndarray | None = None

    def cost(self, k: int, edges) -> float:
        """What a choice holds against face ``k`` with its ink box on ``edges``: :data:`STRETCH_COST` per unit of
        log stretch, and :data:`ITALIC_COST` for a slanted face (see :func:`_choose`)."""
        rx0, ry0, rx1, ry1, _ = self.geoms[k].tolist()
        x0, y0, x1, y1 = edges
        stretch = ((x1 - x0) / (rx1 - rx0)) / ((y1 - y0) / (ry1 - ry0))
        return STRETCH_COST * abs(math.log(stretch)) + (ITALIC_COST if "Italic" in FACES[k] else 0.0)

    def costs(self) -> np.ndarray:
        """:meth:`cost` of every face at the starting fit."""
        if self._costs is None:
            costs = np.array([self.cost(k, edges) for k, edges in enumerate(self.edges.tolist())])
            costs.flags.writeable = False
            self._costs = costs
        return self._costs

    def mask(self) -> np.ndarray:
        """The ink mask, transposed (columns first), as :meth:`_Scorer.score` compares with it."""
        return np.unpackbits(self.bits, count=self.shape[0] * self.shape[1]).reshape(self.shape).astype(bool)


class _Scorer:
    """Scores a face's text drawn with its ink box on given edges against a word's ink (the running sums the
    scoring needs are made here, per use, and not kept with the :class:`_FitRecord`)."""

    __slots__ = ("refs", "mask", "ink", "sums", "columns")

    def __init__(self, record: _FitRecord, refs: list | None = None, mask: np.ndarray | None = None):
        self.refs = refs if refs is not None else [_reference(face, record.text, FIT_SIZE) for face in FACES]
        self.mask = mask if mask is not None else record.mask()
        self.ink = record.ink
        self.sums: dict[int, np.ndarray] = {}
        self.columns: dict = {}  # (face, top, bottom) -> running sum over x of the rows at that height

    def score(self, k: int, edges) -> np.ndarray:
        """IoU with the ink, per edge level, of face ``k`` with its ink box on ``edges``."""
        _, (rx0, ry0, rx1, ry1), _ = self.refs[k]
        sx, sy = (edges[2] - edges[0]) / (rx1 - rx0), (edges[3] - edges[1]) / (ry1 - ry0)
        key = (k, edges[1], edges[3])
        columns = self.columns.get(key)
        if columns is None:  # moving a left or right side reuses the rows resampled for this height
            if len(self.columns) > 64:
                self.columns.clear()
            if k not in self.sums:
                self.sums[k] = _running_sum(self.refs[k][0])
            rows = _resample(self.sums[k], self.mask.shape[1], sy, edges[1] - ry0 * sy)
            columns = self.columns[key] = _running_sum(rows.T)
        drawn = _resample(columns, self.mask.shape[0], sx, edges[0] - rx0 * sx)  # transposed, like mask
        out = np.zeros(len(EDGES))
        for e, level in enumerate(EDGES):
            mask = drawn >= level
            both = np.count_nonzero(mask & self.mask)
            out[e] = both / (np.count_nonzero(mask) + self.ink - both)  # ink > 0: the union is never empty
        return out


class _Fit:
    """A word's original text fitted to its old ink in every face, as one choice of styles sees it.

    ``scores[k, e]``: IoU of face ``k`` cut at edge level ``e`` with the ink;
    ``edges[k]``: where face ``k``'s ink box lands (columns and rows in the
    word box, fractional). Every face starts on the ink's bounding box;
    :meth:`refine` then moves the four sides of one face's box by sub-pixel
    steps while that raises the IoU. Each choice starts from the starting
    fit of its :class:`_FitRecord` (the same whether the record was just
    made or comes from :data:`FIT_CACHE`), so a choice never depends on
    another's refinements; a refinement is computed once per record.
    """

    __slots__ = ("record", "page", "box", "ink", "scores", "edges", "refined", "_scorer", "_costs", "_weighted")

    def __init__(self, record: _FitRecord, page: _PageFits | None = None):
        self.record, self.page, self.box, self.ink = record, page, record.box, record.ink
        self.scores = record.scores  # the record's own (read-only) until a face is refined: then a copy
        self.edges: dict[int, tuple] = {}  # refined faces' edges; the others' are the record's
        self.refined: set[int] = set()
        self._scorer: _Scorer | None = None
        self._costs: np.ndarray | None = None
        self._weighted: np.ndarray | None = None

    def weighted(self) -> np.ndarray:
        """Every face's and edge level's score less its :meth:`costs`, times the ink (what :func:`_choose` sums)."""
        if self._weighted is None:
            self._weighted = self.ink * (self.scores - self.costs(slice(None))[:, None])
        return self._weighted

    def refine(self, k: int) -> None:
        """Move face ``k``'s box sides by +-:data:`STEP` pixels, one at a time, while the best IoU rises."""
        if k in self.refined:
            return
        self.refined.add(k)
        done = self.record.refined.get(k)
        if done is None:  # kept as one array: 3 scores, then 4 edges
            scores, edges = self._refined(k)
            done = self.record.refined[k] = np.concatenate([scores, edges])
            if self.page is not None:
                self.page.dirty = True
        if self.scores is self.record.scores:
            self.scores = np.array(self.scores)
        self.scores[k], self.edges[k] = done[:len(EDGES)], tuple(done[len(EDGES):].tolist())
        self._weighted = None
        if self._costs is not None:
            self._costs[k] = self.record.cost(k, self.edges[k])

    def _refined(self, k: int) -> tuple[np.ndarray, tuple]:
        """Face ``k``'s refined scores and edges, from the record's starting fit."""
        if self._scorer is None:
            self._scorer = _Scorer(self.record)
        edges, best = self.record.edges[k].tolist(), self.record.scores[k]
        for size in STEPS:
            for _ in range(REFINE_ROUNDS):
                improved = False
                for side in range(4):
                    for step in (-size, size):
                        trial = list(edges)
                        trial[side] += step
                        if trial[2] - trial[0] < 1 or trial[3] - trial[1] < 1:
                            continue
                        got = self._scorer.score(k, trial)
                        if got.max() > best.max() + 1e-9:
                            best, edges, improved = got, trial, True
                if not improved:
                    break
        return best, tuple(edges)

    def costs(self, faces: list[int]) -> np.ndarray:
        """What the choice holds against each of ``faces`` (see :func:`_choose`)."""
        if self._costs is None:
            if not self.refined:
                return self.record.costs()[faces]
            self._costs = self.record.costs().copy()
            for k in self.refined:
                self._costs[k] = self.record.cost(k, self.edges[k])
        return self._costs[faces]

    def style(self, k: int, e: int) -> Style:
        """Face ``k`` at edge level ``e`` where it fits this word, in page pixels."""
        rx0, ry0, rx1, ry1, base = self.record.geoms[k].tolist()
        x0, y0, x1, y1 = self.edges[k] if k in self.edges else self.record.edges[k].tolist()
        sx, sy = (x1 - x0) / (rx1 - rx0), (y1 - y0) / (ry1 - ry0)
        return Style(FACES[k], FIT_SIZE * sy, sx / sy, self.box[1] + y0 + (base - ry0) * sy, self.box[0] + x0,
                     EDGES[e], float(self.scores[k, e]))


def _ink_boxes(mask: np.ndarray) -> list[tuple[float, float, float, float]]:
    """Where the text's ink box may lie: the bounding box of all ``mask``, and those of the strokes without
    the smaller pieces (under a tenth, or under three tenths, of the largest piece) that reach above or below
    the band of the larger ones: specks and cut-off ends of rules (and also commas; every start is scored, so
    a start that leaves out a real stroke loses)."""
    def bounds(m):
        rows, cols = np.flatnonzero(m.any(axis=1)), np.flatnonzero(m.any(axis=0))
        return float(cols[0]), float(rows[0]), float(cols[-1] + 1), float(rows[-1] + 1)

    boxes = [bounds(mask)]
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    area, top = stats[1:, cv2.CC_STAT_AREA], stats[1:, cv2.CC_STAT_TOP]
    bottom = top + stats[1:, cv2.CC_STAT_HEIGHT]
    for share in (0.1, 0.3):
        big = area >= share * area.max()
        band = top[big].min(), bottom[big].max()
        keep = big | ((top >= band[0]) & (bottom <= band[1]))
        box = bounds(np.isin(labels, 1 + np.flatnonzero(keep)))
        if box not in boxes:
            boxes.append(box)
    return boxes


def old_ink(pixels: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray | None:
    """Mask (box-sized) of the print in ``box``: Otsu ink without form rules and one-pixel specks; ``None`` if too little."""
    x0, y0, x1, y1 = box
    crop = pixels[y0:y1, x0:x1]
    threshold = ink_threshold(crop)
    if threshold is None:
        return None
    ink = _gray(crop) <= threshold
    ink &= ~form_lines(pixels, box, threshold, box)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    keep = stats[:, cv2.CC_STAT_AREA] >= 2
    keep[0] = False
    ink = keep[labels]
    return ink if int(ink.sum()) >= MIN_INK else None


def fit_word(pixels: np.ndarray, box: tuple[int, int, int, int], text: str) -> _Fit | None:
    """``text`` fitted in every face to the old ink in ``box``; ``None`` when the box has no ink or the text none."""
    record = _fit_record(pixels, box, text)
    return None if record is None else _Fit(record)


def _fit_record(pixels: np.ndarray, box: tuple[int, int, int, int], text: str) -> _FitRecord | None:
    if box[2] <= box[0] or box[3] <= box[1] or not text.strip():
        return None
    ink = old_ink(pixels, box)
    if ink is None:
        return None
    refs = [_reference(face, text, FIT_SIZE) for face in FACES]
    if any(ref is None for ref in refs):
        return None
    return _FitRecord(box, text, ink, refs)


class FitCache:
    """The word fits (:class:`_FitRecord`) of the pages seen last, so a page's print is fitted once whatever
    text shift, epoch or config redraws its words.

    Keyed by the page's content (BLAKE2b of its pixels, shape and type), then by the word's box and the text its
    ink shows: a record depends on nothing else, and a choice of styles starts from a record's starting fit
    whether it was just made or kept, so output is the same with or without the cache. Pages are forgotten,
    oldest first, past ``max_words`` records (about 3 KB each; :envvar:`DOGOOD_FIT_CACHE_WORDS`, default
    30,000, about 100 MB: all of FUNSD; 0 keeps nothing). Per process: each DataLoader worker has its own.

    With ``whole_pages`` (set by :func:`dogood.transform` while its steps that redraw words run, as the same
    pages come back every epoch: :meth:`whole_pages_kept`), the first choice on a page fits every word whose text is known
    and refines every run of print's faces, so later epochs, whatever words they change, find them all.
    """

    def __init__(self, max_words: int | None = None, folder: str | os.PathLike | None = None):
        self._max_words = max_words  # None: $DOGOOD_FIT_CACHE_WORDS, read at first use (not at import)
        self.folder = folder if folder is not None else os.environ.get("DOGOOD_FIT_CACHE_DIR") or None
        self.whole_pages = False
        self._pages: OrderedDict[bytes, _PageFits] = OrderedDict()
        self._lock = threading.Lock()
        self.words = self.hits = self.misses = 0
        self.read = self.discarded = 0  # pages read from the folder, and bad files found there (removed)

    @property
    def max_words(self) -> int:
        if self._max_words is None:
            value = os.environ.get("DOGOOD_FIT_CACHE_WORDS", "30000")
            try:
                self._max_words = int(value)
            except ValueError:
                raise DogoodError(f"DOGOOD_FIT_CACHE_WORDS must be a whole number of words, got {value!r}") from None
        return self._max_words

    @max_words.setter
    def max_words(self, value: int) -> None:
        self._max_words = value

    def page(self, pixels: np.ndarray) -> _PageFits:
        """The records of the page showing ``pixels`` (an empty, unkept set when the cache keeps nothing)."""
        if self.max_words <= 0:
            unkept = _PageFits(None)
            unkept.whole = True  # nothing is kept: fitting the whole page would be for nothing
            return unkept
        digest = hashlib.blake2b(repr((pixels.shape, pixels.dtype.str)).encode(), digest_size=16)
        digest.update(np.ascontiguousarray(pixels).data)
        key = digest.digest()
        with self._lock:
            found = self._pages.get(key)
            if found is None:
                found = self._pages[key] = self._stored(key, pixels.shape[:2]) or _PageFits(self, key)
                self.words += len(found.records)
            self._pages.move_to_end(key)
            self._trim()
            return found

    @contextmanager
    def whole_pages_kept(self, folder: str | os.PathLike | bool | None = None):
        """Within the block, fit pages whole (``whole_pages``) and, with ``folder``, keep them there too
        (``False``: in memory only; ``None``: in the cache's own folder, if any)."""
        saved = self.whole_pages, self.folder
        self.whole_pages = True
        if folder is not None:
            self.folder = folder or None
        try:
            yield self
        finally:
            self.whole_pages, self.folder = saved

    def _store(self):
        """The folder of this version's fit files (:mod:`dogood.page.fit_store`), or ``None``."""
        if not self.folder:
            return None
        from dogood.page import fit_store

        return fit_store.folder_for(self.folder, _fit_signature())

    def _stored(self, key: bytes, size: tuple[int, int]) -> _PageFits | None:
        """The page's fits from the folder, or ``None``: absent, or a file that is not what dogood writes for a
        page of ``size`` (``(height, width)``), which is removed (:func:`dogood.page.fit_store.load`)."""
        store = self._store()
        if store is None:
            return None
        from dogood.page import fit_store

        path = fit_store.page_path(store, key)
        try:
            arrays = fit_store.load(path, _PageFits.schema())
        except fit_store.BadFile:
            self.discarded += 1
            return None
        if arrays is None:
            return None
        page = _PageFits.from_arrays(self, key, arrays, size)
        if page is None:
            self.discarded += 1
            fit_store.discard(path)
            return None
        self.read += 1
        fit_store.touch(path)
        return page

    def keep(self, page: _PageFits) -> None:
        """Write ``page``'s fits to the folder, when there is one and they grew since read or written."""
        store = self._store() if page.cache is self and page.grew() else None
        if store is not None:
            from dogood.page import fit_store

            fit_store.save(fit_store.page_path(store, page.key), page.to_arrays())
            page.dirty, page.written = False, len(page.choices)

    def _trim(self) -> None:
        while len(self._pages) > 1 and self.words > self.max_words:
            self.words -= len(self._pages.popitem(last=False)[1].records)

    def clear(self) -> None:
        with self._lock:
            self._pages.clear()
            self.words = self.hits = self.misses = 0


class _PageFits:
    """One page's records, by (box, text), and its runs' choices (``cache``: ``None`` for a page not kept)."""

    __slots__ = ("cache", "key", "records", "whole", "choices", "dirty", "contexts", "qualities", "written")

    def __init__(self, cache: FitCache | None, key: bytes = b""):
        self.cache, self.key, self.records, self.whole, self.dirty = cache, key, {}, False, False
        self.choices: dict[bytes, tuple[int, int, list[int]]] = {}
        self.contexts: dict[tuple, list[int]] = {}
        self.qualities: dict[bytes, dict] = {}
        self.written = 0  # choices in the page's file when it was last read or written

    def grew(self) -> bool:
        """Whether the page's file is worth writing again: new records or refinements, or half again as many runs'
        choices as it holds (a worker forked anew then finds them; rewriting for every new choice would cost
        more than it saves)."""
        return self.dirty or len(self.choices) >= self.written * 3 // 2 + 16

    def quality(self, pixels: np.ndarray, words: list) -> dict:
        """:func:`print_quality` of a run's ``words``, kept: it depends on nothing but the page and them."""
        key = hashlib.blake2b(repr(words).encode(), digest_size=16).digest()
        found = self.qualities.get(key)
        if found is None:
            if len(self.qualities) > MAX_CHOICES:
                self.qualities.clear()
            found = self.qualities[key] = print_quality(pixels, words)
        return found

    def context(self, layout: bytes, group: tuple[int, ...], find) -> list[int]:
        """The words around run ``group`` (``find()``), kept by the page's word boxes and known texts
        (``layout``)."""
        key = (layout, group)
        found = self.contexts.get(key)
        if found is None:
            if len(self.contexts) > MAX_CHOICES:
                self.contexts.clear()
            found = self.contexts[key] = find()
        return found

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The records as arrays (:mod:`dogood.page.fit_store`'s file): keys, then each fitted record's parts,
        then each refinement (record, face, 3 scores and 4 edges)."""
        keys = list(self.records)
        fitted = [r for r in self.records.values() if r is not None]
        index = {id(r): n for n, r in enumerate(fitted)}
        refined = [(index[id(r)], k, v) for r in fitted for k, v in sorted(r.refined.items())]
        texts = json.dumps([text for _, text in keys]).encode("utf-8")
        return {
            "whole": np.array(self.whole),
            "boxes": np.array([box for box, _ in keys], np.int64).reshape(-1, 4),
            "texts": np.frombuffer(texts, np.uint8),
            "fitted": np.array([r is not None for r in self.records.values()], bool),
            "shapes": np.array([r.shape for r in fitted], np.int64).reshape(-1, 2),
            "inks": np.array([r.ink for r in fitted], np.int64),
            "bits": np.concatenate([r.bits for r in fitted]) if fitted else np.zeros(0, np.uint8),
            "geoms": np.array([r.geoms for r in fitted], np.int32).reshape(-1, len(FACES), 5),
            "scores": np.array([r.scores for r in fitted], np.float64).reshape(-1, len(FACES), len(EDGES)),
            "edges": np.array([r.edges for r in fitted], np.float64).reshape(-1, len(FACES), 4),
            "refined_record": np.array([n for n, _, _ in refined], np.int64),
            "refined_face": np.array([k for _, k, _ in refined], np.int64),
            "refined": np.array([v for _, _, v in refined], np.float64).reshape(-1, len(EDGES) + 4),
            "choice_keys": np.frombuffer(b"".join(self.choices), np.uint8).reshape(-1, 16),
            "choices": np.array([[k, e] + best + [-1] * (REFINE_FACES - len(best))
                                 for k, e, best in self.choices.values()], np.int64).reshape(-1, 2 + REFINE_FACES),
            "costs": np.array([r.costs() for r in fitted], np.float64).reshape(-1, len(FACES)),
            "context_keys": np.frombuffer(b"".join(layout for layout, _ in self.contexts), np.uint8).reshape(-1, 16),
            "context_groups": np.array([list(group) + [-1] * (MAX_GROUP - len(group)) for _, group in self.contexts],
                                       np.int64).reshape(-1, MAX_GROUP),
            "contexts": np.array([found + [-1] * (CONTEXT_WORDS - len(found)) for found in self.contexts.values()],
                                 np.int64).reshape(-1, CONTEXT_WORDS),
        }

    @staticmethod
    def schema() -> dict[str, tuple[str, tuple[int | None, ...]]]:
        """Each array of :meth:`to_arrays`: its dtype and shape (``None``: any length), as
        :func:`dogood.page.fit_store.load` checks a file before making any array."""
        faces, edges = len(FACES), len(EDGES)
        return {"whole": ("|b1", ()), "boxes": ("<i8", (None, 4)), "texts": ("|u1", (None,)),
                "fitted": ("|b1", (None,)), "shapes": ("<i8", (None, 2)), "inks": ("<i8", (None,)),
                "bits": ("|u1", (None,)), "geoms": ("<i4", (None, faces, 5)),
                "scores": ("<f8", (None, faces, edges)), "edges": ("<f8", (None, faces, 4)),
                "refined_record": ("<i8", (None,)), "refined_face": ("<i8", (None,)),
                "refined": ("<f8", (None, edges + 4)), "choice_keys": ("|u1", (None, 16)),
                "choices": ("<i8", (None, 2 + REFINE_FACES)), "costs": ("<f8", (None, faces)),
                "context_keys": ("|u1", (None, 16)), "context_groups": ("<i8", (None, MAX_GROUP)),
                "contexts": ("<i8", (None, CONTEXT_WORDS))}

    @classmethod
    def from_arrays(cls, cache: FitCache, key: bytes, a: dict[str, np.ndarray],
                    size: tuple[int, int] | None = None) -> _PageFits | None:
        """The page :meth:`to_arrays` wrote, or ``None`` when the arrays do not make one for a page of ``size``
        (``(height, width)``): lengths that disagree, boxes off the page, ink masks of another size or ink
        count, scores that are not finite or outside [0, 1], fitted edges that do not hold the ink box's
        neighbourhood or reference boxes of no size (what fitting makes; nothing else is read)."""
        try:
            if not _valid_fits(a, size):
                return None
            texts = json.loads(a["texts"].tobytes().decode("utf-8"))
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                return None
            boxes, fitted = a["boxes"].tolist(), a["fitted"]
            shapes = a["shapes"].tolist()
            sizes = [(h * w + 7) // 8 for h, w in shapes]
            keys = [(tuple(box), text) for box, text in zip(boxes, texts)]
            if len(texts) != len(boxes) or len(set(keys)) != len(keys):
                return None
            page = cls(cache, key)
            page.whole = bool(a["whole"])
            records, start = [], 0
            places = np.flatnonzero(fitted).tolist()  # each record's place among the page's records
            for m, (h, w) in enumerate(shapes):
                record = _FitRecord.__new__(_FitRecord)
                record.index = places[m]
                record.shape, record.ink = (h, w), int(a["inks"][m])
                record.bits = a["bits"][start:start + sizes[m]]
                start += sizes[m]
                record.geoms, record.scores, record.edges = a["geoms"][m], a["scores"][m], a["edges"][m]
                record.refined, record._costs = {}, a["costs"][m]  # read-only, as costs() makes them
                records.append(record)
            for m, k, v in zip(a["refined_record"].tolist(), a["refined_face"].tolist(), a["refined"]):
                records[m].refined[k] = v
            made = iter(records)
            for (box, text), ok in zip(keys, fitted.tolist()):
                record = next(made) if ok else None
                if record is not None:
                    record.box, record.text = box, text
                page.records[(box, text)] = record
            for key, (k, e, *best) in zip(a["choice_keys"], a["choices"].tolist()):
                page.choices[key.tobytes()] = (k, e, [face for face in best if face >= 0])
            for layout, group, found in zip(a["context_keys"], a["context_groups"].tolist(), a["contexts"].tolist()):
                page.contexts[(layout.tobytes(), tuple(j for j in group if j >= 0))] = [j for j in found if j >= 0]
            page.written = len(page.choices)
            return page
        except (KeyError, ValueError, TypeError, IndexError, UnicodeDecodeError, StopIteration, RecursionError):
            return None

    def choose(self, fits: list[_Fit], context: list[_Fit]) -> tuple[int, int]:
        """:func:`_choose` for a run of print, kept: the choice depends only on the fits' records and which of
        their faces are refined, so the same run in the same state is chosen once (and its refinements are
        replayed on ``fits``, as :func:`_choose` would make them)."""
        key = hashlib.blake2b(repr((
            [(f.record.index, sorted(f.refined)) for f in fits],
            [(f.record.index, sorted(f.refined)) for f in context])).encode(), digest_size=16).digest()
        found = self.choices.get(key)
        if found is None:
            if len(self.choices) > MAX_CHOICES:
                self.choices.clear()
            found = self.choices[key] = _choose(fits, context)
        k, e, best = found
        for face in best:
            for f in fits:
                f.refine(face)
        return k, e

    def record(self, pixels: np.ndarray, box: tuple[int, int, int, int], text: str) -> _FitRecord | None:
        key = (box, text)
        if key in self.records:
            if self.cache is not None:
                self.cache.hits += 1
            return self.records[key]
        if self.cache is not None:
            self.cache.misses += 1
            self.cache.words += 1
        self.dirty = True
        found = self.records[key] = _fit_record(pixels, box, text)
        if found is not None:
            found.index = len(self.records) - 1
        return found


def _valid_fits(a: dict[str, np.ndarray], size: tuple[int, int] | None) -> bool:
    """Whether the arrays of a fit file (dtypes and shapes already checked: :func:`dogood.page.fit_store.load`) hold
    what fitting makes for a page of ``size``: see :meth:`_PageFits.from_arrays`."""
    boxes, fitted, shapes, inks = a["boxes"], a["fitted"], a["shapes"], a["inks"]
    n, m = len(boxes), int(np.count_nonzero(a["fitted"]))
    if len(fitted) != n or not (len(shapes) == len(inks) == len(a["geoms"]) == len(a["scores"]) == len(a["edges"])
                                == m):
        return False
    if len(a["refined_record"]) != len(a["refined_face"]) or len(a["refined_record"]) != len(a["refined"]):
        return False
    height, width = size if size is not None else (np.iinfo(np.int32).max,) * 2
    x0, y0, x1, y1 = boxes.T if n else (np.zeros(0, np.int64),) * 4
    if n and ((x0 < 0) | (y0 < 0) | (x1 > width) | (y1 > height)).any():
        return False
    fx0, fy0, fx1, fy1 = x0[fitted], y0[fitted], x1[fitted], y1[fitted]
    if m and (((fx1 - fx0) != shapes[:, 0]) | ((fy1 - fy0) != shapes[:, 1]) | (shapes <= 0).any(axis=1)).any():
        return False  # a record's mask is its box's crop, transposed
    sizes = (shapes[:, 0] * shapes[:, 1] + 7) // 8
    if int(sizes.sum()) != len(a["bits"]):
        return False
    if m:
        ones = np.bitwise_count(a["bits"]).astype(np.int64)
        if not np.array_equal(np.add.reduceat(ones, np.concatenate([[0], np.cumsum(sizes)[:-1]])), inks) \
                or (inks < MIN_INK).any():
            return False
    geoms = a["geoms"]
    if m and ((geoms[..., 2] <= geoms[..., 0]) | (geoms[..., 3] <= geoms[..., 1])).any():
        return False
    scores = a["scores"]
    if not np.isfinite(scores).all() or (scores < 0).any() or (scores > 1).any():
        return False
    slack = REFINE_ROUNDS * sum(STEPS) + 1e-6  # how far refining moves a side of the ink box

    def edges_hold(edges: np.ndarray, w: np.ndarray, h: np.ndarray) -> bool:
        if not np.isfinite(edges).all():
            return False
        ex0, ey0, ex1, ey1 = np.moveaxis(edges, -1, 0)
        return not (((ex1 - ex0) < 1 - 1e-9) | ((ey1 - ey0) < 1 - 1e-9) | (ex0 < -slack) | (ey0 < -slack)
                    | (ex1 > w + slack) | (ey1 > h + slack)).any()

    if m and not edges_hold(a["edges"], shapes[:, 0, None].astype(float), shapes[:, 1, None].astype(float)):
        return False
    record, face, refined = a["refined_record"], a["refined_face"], a["refined"]
    if len(record):
        if (record < 0).any() or (record >= m).any() or (face < 0).any() or (face >= len(FACES)).any():
            return False
        if len(set(zip(record.tolist(), face.tolist()))) != len(record):
            return False
        got = refined[:, :len(EDGES)]
        if not np.isfinite(got).all() or (got < 0).any() or (got > 1).any():
            return False
        if not edges_hold(refined[:, len(EDGES):], shapes[record, 0].astype(float), shapes[record, 1].astype(float)):
            return False
    costs = a["costs"]
    if len(costs) != m or not np.isfinite(costs).all() or (costs < 0).any() or (costs > MAX_COST).any():
        return False
    groups, contexts = a["context_groups"], a["contexts"]
    if not (len(a["context_keys"]) == len(groups) == len(contexts)) or len(groups) > MAX_CHOICES + 1:
        return False
    for table in (groups, contexts):  # word indices, then -1 padding (a group is never empty)
        if len(table) and ((table < -1).any() or (table >= MAX_WORDS).any()
                           or ((table[:, 1:] >= 0) & (table[:, :-1] < 0)).any()):
            return False
    if len(groups) and (groups[:, 0] < 0).any():
        return False
    if len({(k.tobytes(), g.tobytes()) for k, g in zip(a["context_keys"], groups)}) != len(groups):
        return False
    keys, choices = a["choice_keys"], a["choices"]
    if len(keys) != len(choices) or len(keys) > MAX_CHOICES + 1 or len({k.tobytes() for k in keys}) != len(keys):
        return False
    if len(choices):
        face, edge, best = choices[:, 0], choices[:, 1], choices[:, 2:]
        if (face < 0).any() or (face >= len(FACES)).any() or (edge < 0).any() or (edge >= len(EDGES)).any():
            return False
        if (best < -1).any() or (best >= len(FACES)).any() or not (best == face[:, None]).any(axis=1).all():
            return False  # the face chosen is one of those refined
    return True


#: The largest cost a face's starting fit can hold (:meth:`_FitRecord.cost`: a stretch of e^30, slanted), and
#: the most words a page's file may name in its runs' contexts: what a fit file's values are checked against.
MAX_COST = STRETCH_COST * 30 + ITALIC_COST
MAX_WORDS = 1 << 20


def default_fit_folder() -> str:
    """Where :func:`dogood.transform` keeps word fits on disk by default: ``$DOGOOD_FIT_CACHE_DIR``, else
    ``<dogood's cache>/fits`` (:func:`dogood.core.paths.cache_dir`)."""
    value = os.environ.get("DOGOOD_FIT_CACHE_DIR")
    if value:
        return value
    from dogood.core.paths import cache_dir

    return str(cache_dir() / "fits")


def warm() -> None:
    """Load once what redrawing words needs in every process (the fonts at the fitting and drawing sizes, the fit
    files' version), so DataLoader workers forked from this process start with them; raises :class:`FontError`
    when the fonts are missing."""
    font_paths()
    for face in FACES:
        _font(face, FIT_SIZE)
        _font(face, REF_SIZE)
    _fit_signature()


def fit_page(doc: Document, folder: str | os.PathLike | bool | None = None) -> bool:
    """Fit ``doc``'s print whole into :data:`FIT_CACHE` (and ``folder``): what the first redraw of a word of it at
    training time does (every word whose text is known, every run of print), paid ahead
    (:meth:`dogood.augment.Transform.prepare`). ``False`` when the page has no word with text."""
    known = [j for j, w in enumerate(doc.words) if w.text.strip()]
    if not known:
        return False
    with FIT_CACHE.whole_pages_kept(folder):
        choose_styles(doc, known[:1], doc)
        guard = Redraw(doc)  # vertical print is fitted turned upright, as a page of its own (Redraw.style)
        for j in known:
            if guard.kind(j).turn:
                guard.style(j)
    return True


@lru_cache(maxsize=1)
def _fit_signature() -> str:
    """What word fits and a run's choice of face depend on besides the page and the text: code, libraries,
    constants and the fonts' bytes (the tag changes with the file's layout or the code that fits or chooses)."""
    from dogood.version import __version__

    digest = hashlib.blake2b(repr((
        "fit-3", __version__, Image.__version__, np.__version__, _layout(), FACES, FIT_SIZE, EDGES, STEPS,
        REFINE_ROUNDS, MIN_INK, MIN_CONTRAST, STRETCH_COST, ITALIC_COST, CONTEXT_WEIGHT, REFINE_FACES)).encode(),
        digest_size=8)
    for face in FACES:
        digest.update(fs.read_bytes(font_paths()[face], what="font"))
    return digest.hexdigest()


#: The process's :class:`FitCache`.
FIT_CACHE = FitCache()


def _choose(fits: list[_Fit], context: list[_Fit] = ()) -> tuple[int, int, list[int]]:
    """Face and edge level (and the faces refined on ``fits``) for the words of ``fits`` (one run of print), helped by ``context`` (the words
    nearest to them) for the family alone.

    A word's score is its IoU less :data:`STRETCH_COST` times how far (log) the fit squeezes or widens the
    face, and :data:`ITALIC_COST` for a slanted face (an upright face at its own width wins a near tie). The
    family (Serif, Sans, Mono) is the one whose best face has the highest score averaged, weighted by ink,
    over ``fits`` and, at :data:`CONTEXT_WEIGHT` the weight, ``context``: at a dozen pixels a word fits two
    families nearly alike (a blurred bold sans takes serifs), and the print around it, mostly of one family,
    tells them apart; a long run outweighs its surroundings. Within that family the :data:`REFINE_FACES` faces
    best at the starting fit are refined on every word of ``fits`` and the best face and edge level win: the
    weight and slant are the run's own."""
    def total(group, faces):  # summed in order, as sum() of the fits' arrays would (bit for bit)
        return np.add.reduce(np.stack([f.weighted() for f in group]), axis=0)[faces]

    everything = list(range(len(FACES)))
    first = total(fits, everything).max(axis=1)
    pooled = first + (CONTEXT_WEIGHT * total(context, everything).max(axis=1) if context else 0)
    family = int(np.argmax(pooled.reshape(len(FAMILIES), -1).max(axis=1)))
    ours = [k for k in everything if FACES[k].startswith(f"Liberation{FAMILIES[family]}-")]
    best = [ours[int(n)] for n in np.argsort(-first[ours], kind="stable")[:REFINE_FACES]]
    for k in best:
        for f in fits:
            f.refine(k)
    k, e = np.unravel_index(int(np.argmax(total(fits, best))), (len(best), len(EDGES)))
    return best[int(k)], int(e), best


def box_style(pixels: np.ndarray, box: tuple[int, int, int, int], *, face: str = DEFAULT_FACE,
              size: float | None = None) -> Style:
    """A style from the box alone: ``face`` at ``size`` (default: cap top to descender of ``"Hg"`` fills the
    box height), that extent centred in the box, starting where the old ink starts (or at the box's left)."""
    x0, y0, x1, y1 = box
    ref = _reference(face, "Hg")
    _, (_, top, _, bottom), base = ref
    if size is None:
        size = REF_SIZE * (y1 - y0) / (bottom - top)
    s = size / REF_SIZE
    baseline = y0 + ((y1 - y0) - (bottom - top) * s) / 2 + (base - top) * s
    left = 0
    crop = pixels[y0:y1, x0:x1]
    threshold = ink_threshold(crop) if crop.size else None
    if threshold is not None:
        cols = np.flatnonzero((_gray(crop) <= threshold).any(axis=0))
        left = int(cols[0]) if cols.size else 0
    return Style(face, float(size), 1.0, float(baseline), float(x0 + left))


def text_alpha(text: str, box: tuple[int, int, int, int], style: Style) -> np.ndarray:
    """Coverage (0-255, box-sized) of ``text`` drawn in ``style`` and kept inside ``box`` (see the module docstring)."""
    return np.rint(text_cover(text, box, style) * 255).astype(np.uint8)


def text_cover(text: str, box: tuple[int, int, int, int], style: Style, spill: int = 0,
               cut: bool = True) -> np.ndarray:
    """Coverage (float32, 0-1) of ``text`` drawn in ``style`` and placed inside ``box``: box-sized, or, with
    ``spill``, the box grown by that many pixels on each side, where the parts of glyphs that reach out of the
    box (as a tight box cuts the old print's) are drawn rather than cut. ``cut=False`` (with ``style.scan``):
    the spread and roughened coverage at the scan's resolution, before :func:`_cut` (``None`` without ink)."""
    x0, y0, x1, y1 = box
    box_w, box_h = x1 - x0, y1 - y0
    out = np.zeros((max(0, box_h + 2 * spill), max(0, box_w + 2 * spill)), dtype=np.float32)
    if box_w <= 0 or box_h <= 0 or not text.strip():
        return out
    scan = max(1.0, style.scan)
    ref_size = max(REF_SIZE, int(math.ceil(2 * style.size * scan)))  # rasterise at least twice the drawn size
    ref = _reference(style.face, text, ref_size)
    if ref is None:
        return out
    cover, (rx0, ry0, rx1, ry1), base = ref
    sy = style.size / ref_size
    sx = sy * min(max(style.stretch, 1 / MAX_STRETCH), MAX_STRETCH)  # a fit to the wrong text can be extreme
    left, baseline = style.left - x0, style.baseline - y0
    if (ry1 - ry0) * sy > box_h:  # too tall: smaller
        shrink = box_h / ((ry1 - ry0) * sy)
        sx, sy = sx * shrink, sy * shrink
    width = (rx1 - rx0) * sx
    room = box_w - max(0.0, min(left, box_w / 4))  # from where the old print started to the box's end
    if width > room:  # a little too wide: squeezed a little, its left margin kept
        squeeze = max(ROOM_SQUEEZE, room / width)
        sx, width = sx * squeeze, width * squeeze
    if left + width > box_w:
        left = max(0.0, box_w - width)
    if width > box_w:  # too wide: squeeze, then smaller
        squeeze = max(MIN_SQUEEZE, box_w / width)
        sx, width = sx * squeeze, width * squeeze
        if width > box_w:
            shrink = box_w / width
            sx, sy, width = sx * shrink, sy * shrink, box_w
        left = 0.0
    top, bottom = baseline + (ry0 - base) * sy, baseline + (ry1 - base) * sy
    over = OVERHANG * (bottom - top)  # tight boxes cut ascenders and descenders on the scan too
    if top < -over:
        baseline -= top + over
    elif bottom > box_h + over:
        baseline -= bottom - box_h - over
    ox, oy = left - rx0 * sx + spill, baseline - base * sy + spill
    box_h, box_w = out.shape
    if style.scan <= 0:
        drawn = _warp(cover, sx, sy, ox, oy, (box_h, box_w))
        if style.edge != 0.5:
            drawn = drawn ** (math.log(0.5) / math.log(style.edge))
        return drawn.astype(np.float32)
    # as a binary scan resized to the page: drawn at the scan's resolution, spread and roughened, cut at the edge
    # level, then reduced to the page by area averaging
    shape = (int(math.ceil(box_h * scan)), int(math.ceil(box_w * scan)))
    fine = _warp(cover, sx * scan, sy * scan, ox * scan, oy * scan, shape)
    fine = cv2.GaussianBlur(fine, (0, 0), SPREAD * scan)  # ink spread and the scanner's optics: where to cut
    if style.roughness > 0:
        near = (fine > 0.1) & (fine < 0.9)  # the edges: no speck where no stroke is
        fine = fine + _roughness(text, box, style, shape) * near
    return _cut(fine, style, (box_h, box_w)) if cut else fine


def _cut(fine: np.ndarray, style: Style, shape: tuple[int, int]) -> np.ndarray:
    """The coverage ``fine`` (at the scan's resolution) cut at ``style.edge``, reduced to the page's ``shape`` by area
    averaging and blurred by ``style.blur``; with roughened edges, pieces under :data:`SPECK` page pixels go."""
    scan = max(1.0, style.scan)
    cut = (fine >= style.edge).astype(np.uint8)
    if style.roughness > 0:
        count, labels, stats, _ = cv2.connectedComponentsWithStats(cut, connectivity=8)
        small = stats[:, cv2.CC_STAT_AREA] < SPECK * scan * scan
        small[0] = False
        if small.any():
            cut[small[labels]] = 0
    drawn = _warp(cut.astype(np.float32), 1 / scan, 1 / scan, 0.0, 0.0, shape)
    return cv2.GaussianBlur(drawn, (0, 0), style.blur) if style.blur > 0 else drawn


def _roughness(text: str, box, style: Style, shape: tuple[int, int]) -> np.ndarray:
    """Smooth noise (standard deviation ``style.roughness``, about a scan pixel wide) that makes the cut strokes'
    edges ragged as a scanner's are; drawn from a generator seeded by the text, box and style, so the same word
    is drawn the same way every time."""
    seed = hashlib.blake2b(repr((text, tuple(box), style.face, style.size, style.stretch, style.baseline,
                                 style.left, style.scan)).encode(), digest_size=8).digest()
    rng = np.random.default_rng(int.from_bytes(seed, "little"))
    noise = rng.standard_normal(shape).astype(np.float32)
    noise = cv2.GaussianBlur(noise, (0, 0), 0.6)
    return noise * np.float32(style.roughness / max(float(noise.std()), 1e-6))


def _inpaint(pixels: np.ndarray, box: tuple[int, int, int, int], erase: np.ndarray, threshold: float) -> None:
    """Fill ``erase`` (a mask over ``box``) by Telea inpainting from the paper around it, in place.

    Every ink pixel near the box (darker than ``threshold``: neighbouring
    words, form rules, strokes beyond the box), and the grey rim around it,
    is masked too, so only paper feeds the fill and no stroke is smeared
    into the hole; only the ``erase`` pixels are written.
    """
    height, width = pixels.shape[:2]
    x0, y0, x1, y1 = box
    cx0, cy0 = max(0, x0 - CONTEXT), max(0, y0 - CONTEXT)
    cx1, cy1 = min(width, x1 + CONTEXT), min(height, y1 + CONTEXT)
    region = np.ascontiguousarray(pixels[cy0:cy1, cx0:cx1])
    hole = np.zeros(region.shape[:2], dtype=np.uint8)
    hole[y0 - cy0:y1 - cy0, x0 - cx0:x1 - cx0] = erase
    gray = _gray(region)
    ink = (gray <= threshold).astype(np.uint8)
    dark = cv2.dilate(ink, np.ones((3, 3), np.uint8))
    clean = (dark == 0) & (hole == 0)
    if clean.any():  # the grey rim around ink (a blurred scan's) is no paper either: it would tint the fill
        paper = float(np.median(gray[clean]))
        rim = (gray < paper - max(4.0, RIM * (paper - threshold))) & (cv2.dilate(ink, np.ones((5, 5), np.uint8)) > 0)
        dark = dark | rim.astype(np.uint8)
    mask = hole | dark
    if mask.mean() > 0.9:  # hardly any paper in sight: fill from whatever is there
        mask = hole
    filled = cv2.inpaint(region, mask, 3, cv2.INPAINT_TELEA)
    clean = (mask == 0)
    if clean.sum() >= 8:  # on flat paper (a binarised scan's), the fill is that paper, not a grey level off it
        paper = region[clean]
        level = np.median(paper, axis=0)
        if float(np.abs(paper.astype(np.float32) - level).mean()) < 0.5:
            near = np.abs(filled.astype(np.int16) - level.astype(np.int16)) <= 3
            if filled.ndim == 3:
                near = near.all(axis=2, keepdims=True)
            filled = np.where(near, level.astype(np.uint8), filled)
    inside = erase if pixels.ndim == 2 else erase[..., None]
    pixels[y0:y1, x0:x1] = np.where(inside, filled[y0 - cy0:y1 - cy0, x0 - cx0:x1 - cx0], pixels[y0:y1, x0:x1])


def _gray(crop: np.ndarray) -> np.ndarray:
    if crop.ndim == 2:
        return crop
    return cv2.cvtColor(np.ascontiguousarray(crop), cv2.COLOR_RGB2GRAY)

