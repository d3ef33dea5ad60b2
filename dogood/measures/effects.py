"""What a severity level did to the data, measured per document and summed per config (the card's effects).

A shift declares its levels in its own file (:attr:`dogood.shifts.base.Shift.severities`: level -> the values
of some of its parameters). A recipe's top-level ``severities: [1, 2, 3, 4, 5]`` (or a subset) turns every
config whose chain has a shift with levels into configs ``<config>@<s>``, in which each such step takes level
``s``'s values over the config's own (:func:`expand_severities`); other configs stay as they are.

A level is defined by what it does to the data, not by its knob alone, so a build measures each severity
config on every document (:func:`effects`, summed into the card's statistics like any count) and the card
states, per level (:func:`measured`):

- ``text_changed``: the share of words whose text changed (text shifts);
- ``box_shift``: the mean box displacement, in page widths: each word's four edges' mean move, over the
  source page's width (layout shifts; for a warp, its displacement sampled at the words);
- ``contrast_lost``: how much of the ink's contrast against what lies under it the page lost, in grey levels:
  in each word's box, the mean luma off the ink minus on it (the source page's ink, by Otsu within the box), on
  the source page less on the shifted one, where the words keep their boxes and the page changed (image shifts
  that replace the background: the photo's contrast under the ink; ``scan_quality``: the ink faded by low ink or
  fax binarisation, bled into the paper, or buried in noise, bleed-through and toner streaks);
- ``words_dropped``: the share of the source page's words missing from the output (drop shifts);
- ``words_reordered``: the share of words whose place in the word order another word took, where the output's
  words are the source's, each with its own text and box, in another order (shuffle shifts);
- ``ssim``, ``ms_ssim``: the page's image quality against the source (:mod:`dogood.measures.quality`: SSIM and
  MS-SSIM in luma), where the page changed and kept its size; ``aligned_ssim``, ``aligned_ms_ssim``: the same
  after bringing the page back onto the source's frame by the best similarity between the word boxes' centres
  (where the words correspond one to one), so that a page that only shrank or turned as a whole scores near 1.

A document whose words were only dropped or only reordered counts no text change and no box move: no word that
stayed changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from dogood.core.document import Document

#: ``box_shift`` is summed in these parts of a page width (whole numbers add up the same in any order).
BOX_SHIFT_UNIT = 10_000
#: Contrasts are summed in these parts of a grey level.
CONTRAST_UNIT = 100
#: Image-quality values (SSIM, MS-SSIM) are summed in these parts of 1.
QUALITY_UNIT = 10_000


def effects(original: Document, shifted: Document, text_changed: int = 0) -> dict[str, int]:
    """What a chain did to one document, as whole numbers that add up over documents (see the module doc):
    ``box_words`` and ``box_shift`` (words compared one to one, and their summed edge moves in
    1/:data:`BOX_SHIFT_UNIT` page widths), ``ink_words``, ``source_contrast`` and ``ink_contrast`` (words with ink
    measured on a changed page with unchanged boxes, and the summed contrast of their ink against what lies under
    it on the source page and on the shifted one, in 1/:data:`CONTRAST_UNIT` grey levels), ``source_words`` and
    ``dropped_words`` (the source's words, and how many fewer the output has), ``reordered_words`` (in an output
    that only reorders the source's words, the places another word took) and ``spurious_texts`` (in an output
    that only reorders or only drops the source's words, the text changes that the card's word statistics,
    comparing words by place or aligning texts, count all the same: ``text_changed``, the count of
    :func:`dogood.pipeline.stats.word_changes`, for a drop).

    An output that only drops words (the rest in order, unchanged) or only reorders them counts its words as
    not moved (``box_shift`` 0) and no contrast. A changed page adds its image quality (:func:`image_quality`)."""
    n = len(original.words)
    out = {"box_words": 0, "box_shift": 0, "ink_words": 0, "source_contrast": 0, "ink_contrast": 0,
           "source_words": n, "dropped_words": max(0, n - len(shifted.words)), "reordered_words": 0,
           "spurious_texts": 0}
    if shifted.image is not original.image:
        out.update(image_quality(original, shifted))
    if not original.words:
        return out
    if len(shifted.words) < n:
        if _subsequence(shifted.words, original.words):  # dropped only: the words left kept text and box
            out.update(box_words=len(shifted.words), spurious_texts=text_changed)
        return out
    if n != len(shifted.words):
        return out
    moved = [a != b for a, b in zip(original.words, shifted.words)]
    if any(moved) and sorted(map(_word_key, original.words)) == sorted(map(_word_key, shifted.words)):
        out.update(box_words=n, reordered_words=sum(moved),  # the same words in another order
                   spurious_texts=sum(a.text != b.text for a, b in zip(original.words, shifted.words)))
        return out
    before, after = original.boxes.astype(np.float64), shifted.boxes.astype(np.float64)
    moves = np.abs(after - before).mean(axis=1) / max(1, original.width)
    out["box_words"] = len(moves)
    out["box_shift"] = int(round(float(moves.sum()) * BOX_SHIFT_UNIT))
    if np.array_equal(before, after) and shifted.image is not original.image:
        n, source, ink = contrast_under_ink(original, shifted)
        out.update(ink_words=n, source_contrast=int(round(source * CONTRAST_UNIT)),
                   ink_contrast=int(round(ink * CONTRAST_UNIT)))
    return out


#: The image-quality sums :func:`image_quality` adds (in 1/:data:`QUALITY_UNIT`), by the pages they count.
QUALITY_SUMS = {"quality_pages": ("ssim", "ms_ssim"), "aligned_pages": ("aligned_ssim", "aligned_ms_ssim")}


def image_quality(original: Document, shifted: Document) -> dict[str, int]:
    """The shifted page's quality against the source's (:func:`dogood.measures.quality.page_quality`) as sums:
    ``quality_pages`` with ``ssim`` and ``ms_ssim`` (pages of the source's size), ``aligned_pages`` with
    ``aligned_ssim`` and ``aligned_ms_ssim`` (pages whose words correspond one to one); in 1/:data:`QUALITY_UNIT`."""
    from dogood.measures.quality import page_quality

    same = len(original.words) == len(shifted.words)
    q = page_quality(original.image.to_array(), shifted.image.to_array(),
                     original.boxes if same else None, shifted.boxes if same else None)._asdict()
    out: dict[str, int] = {}
    for pages, names in QUALITY_SUMS.items():
        if q[names[0]] is not None:
            out[pages] = 1
            out.update({name: int(round(q[name] * QUALITY_UNIT)) for name in names})
    return out


def _word_key(word) -> tuple:
    return word.text, tuple(word.box)


def _subsequence(short, long) -> bool:
    """Whether the words ``short`` are ``long`` with some words left out (same texts and boxes, same order)."""
    rest = iter(long)
    return all(any(w == v for v in rest) for w in short)


def contrast_under_ink(original: Document, shifted: Document) -> tuple[int, float, float]:
    """``(words, summed contrast on the source page, summed contrast on the shifted page)`` over the words whose
    box holds ink on the source page: in each box, the mean luma off the source's ink minus on it (absolute), in
    grey levels."""
    from dogood.page.ink import gray
    from dogood.page.warp import ink_mask

    mask = ink_mask(original.image.to_array(), original.boxes)
    before = gray(original.image.to_array()).astype(np.float64)
    after = gray(shifted.image.to_array()).astype(np.float64)
    if after.shape != mask.shape:
        return 0, 0.0, 0.0
    n, source, ink = 0, 0.0, 0.0
    for x0, y0, x1, y1 in original.boxes.tolist():
        on = mask[y0:y1, x0:x1]
        if not on.any() or on.all():
            continue
        n += 1
        for luma, total in ((before, "source"), (after, "ink")):
            values = luma[y0:y1, x0:x1]
            contrast = abs(float(values[~on].mean()) - float(values[on].mean()))
            if total == "source":
                source += contrast
            else:
                ink += contrast
    return n, source, ink


def measured(stats: Mapping[str, Any]) -> dict[str, float | None]:
    """A config's measured effects from its statistics (:mod:`dogood.pipeline.stats`): ``text_changed`` (share of words),
    ``box_shift`` (page widths), ``source_contrast``, ``ink_contrast`` and ``contrast_lost`` (grey levels, means
    over words), ``words_dropped`` and ``words_reordered`` (shares of the source's words), ``ssim``, ``ms_ssim``,
    ``aligned_ssim`` and ``aligned_ms_ssim`` (means over pages); ``None`` where nothing was measured."""
    e = stats.get("effects") or {}
    words = stats.get("words") or 0
    box_words, ink_words, source_words = e.get("box_words", 0), e.get("ink_words", 0), e.get("source_words", 0)
    return {
        "text_changed": (stats.get("text_changed", 0) - e.get("spurious_texts", 0)) / words if words else None,
        "box_shift": e.get("box_shift", 0) / BOX_SHIFT_UNIT / box_words if box_words else None,
        "source_contrast": e.get("source_contrast", 0) / CONTRAST_UNIT / ink_words if ink_words else None,
        "ink_contrast": e.get("ink_contrast", 0) / CONTRAST_UNIT / ink_words if ink_words else None,
        "contrast_lost": ((e.get("source_contrast", 0) - e.get("ink_contrast", 0)) / CONTRAST_UNIT / ink_words
                          if ink_words else None),
        "words_dropped": e.get("dropped_words", 0) / source_words if source_words else None,
        "words_reordered": e.get("reordered_words", 0) / source_words if source_words else None,
        **{name: e.get(name, 0) / QUALITY_UNIT / e[pages] if e.get(pages) else None
           for pages, names in QUALITY_SUMS.items() for name in names},
    }
