"""Look at a document and its shifted copy: word boxes coloured by label, side by side.

Plain functions in the scikit-image style:

- :func:`draw_document` draws one page with every word box outlined in the
  colour of its entity's label (see :data:`PALETTE`) and a small legend;
- :func:`render_preview` puts an original and a shifted page side by side,
  scaled to the same height, each under a caption bar;
- :func:`save_preview` writes that preview as a PNG.

Only Pillow is used (``ImageDraw`` and ``ImageFont.load_default``; font sizes
need Pillow >= 10.1, older versions fall back to the fixed bitmap font).
"""

from __future__ import annotations

import functools
import os
import zlib
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from dogood.core.document import Document

RGB = tuple[int, int, int]

#: Outline colour of each entity label; ``"none"`` is for words in no entity.
PALETTE: Mapping[str, RGB] = MappingProxyType(
    {
        "header": (255, 127, 0),  # orange
        "question": (31, 100, 230),  # blue
        "answer": (20, 160, 40),  # green
        "other": (128, 128, 128),  # grey
        "none": (150, 60, 200),  # purple
    }
)

#: Colours for labels missing from the palette, picked by a stable hash of the label.
EXTRA_COLOURS: tuple[RGB, ...] = (
    (214, 39, 40),  # red
    (23, 190, 207),  # cyan
    (227, 119, 194),  # pink
    (140, 86, 75),  # brown
    (188, 189, 34),  # olive
    (0, 0, 128),  # navy
)

#: Outline of a word a text shift changed (replaced, inserted or deleted), drawn just outside its box.
HIGHLIGHT: RGB = (255, 0, 255)  # magenta: no label's colour

HIGHLIGHT_TEXT: RGB = (170, 0, 170)  # the strip's heading: the highlight's hue, dark enough to read

NO_LABEL = "none"
LEGEND_POSITIONS = ("top-right", "top-left", "bottom-right", "bottom-left")

_CAPTION_BACKGROUND: RGB = (45, 45, 45)
_CAPTION_TEXT: RGB = (255, 255, 255)
_CANVAS: RGB = (255, 255, 255)


# -- colours and fonts -----------------------------------------------------------
def label_colour(label: str | None, palette: Mapping[str, RGB] | None = None) -> RGB:
    """The outline colour of ``label`` (``None`` means a word in no entity).

    Parameters
    ----------
    label : an entity label, looked up case-insensitively; ``None`` gives the
        colour of ``"none"``.
    palette : label -> RGB; :data:`PALETTE` when ``None``. Labels it lacks get
        a fixed colour from :data:`EXTRA_COLOURS` chosen by a hash of the label,
        so the same label has the same colour on every page and every run.
    """
    palette = PALETTE if palette is None else palette
    key = NO_LABEL if label is None else str(label)
    for candidate in (key, key.lower()):
        if candidate in palette:
            return tuple(int(v) for v in palette[candidate])  # type: ignore[return-value]
    return EXTRA_COLOURS[zlib.crc32(key.lower().encode("utf-8")) % len(EXTRA_COLOURS)]


@functools.lru_cache(maxsize=32)
def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    """Pillow's default font at ``size`` pixels (the bitmap font on Pillow < 10.1)."""
    try:
        return ImageFont.load_default(size=max(1, int(size)))
    except TypeError:  # Pillow < 10.1: no size argument
        return ImageFont.load_default()


def _text_size(draw: ImageDraw.ImageDraw, text: str, font) -> tuple[int, int, int]:
    """Width, height and top offset of ``text`` drawn at (0, 0)."""
    x0, y0, x1, y1 = draw.textbbox((0, 0), text, font=font)
    return x1 - x0, y1 - y0, y0


def _fit_text(draw: ImageDraw.ImageDraw, text: str, font, max_width: int) -> str:
    """``text``, cut and ended with ``...`` so that it is at most ``max_width`` wide."""
    if max_width <= 0:
        return ""
    if _text_size(draw, text, font)[0] <= max_width:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # longest prefix that fits with the ellipsis
        mid = (lo + hi + 1) // 2
        if _text_size(draw, text[:mid] + "...", font)[0] <= max_width:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] + "..." if lo else ""


# -- one page ----------------------------------------------------------------------
def _word_labels(doc: Document) -> list[str]:
    return [NO_LABEL if ent is None else ent.label for ent in doc.word_entity()]


def _unique_boxes(doc: Document) -> list[tuple[tuple[int, int, int, int], str, str]]:
    """Distinct word boxes in first-seen order, each with one label and the joined text.

    A box shared by several words (a merge shift gives many words the same box)
    takes the most common label among them, ties going to the label seen first.
    """
    labels = _word_labels(doc)
    groups: dict[tuple[int, int, int, int], list[int]] = {}
    for i, word in enumerate(doc.words):
        groups.setdefault(tuple(word.box), []).append(i)
    out = []
    for box, ids in groups.items():
        counts = Counter(labels[i] for i in ids)
        best = max(counts.values())
        label = next(labels[i] for i in ids if counts[labels[i]] == best)
        text = " ".join(doc.words[i].text for i in ids if doc.words[i].text)
        out.append((box, label, text))
    return out


def _page_rgb(doc: Document, size: tuple[int, int]) -> Image.Image:
    page = Image.fromarray(np.array(doc.image.to_array()))  # own, writable copy
    page = page.convert("RGB")
    if page.size != size:
        page = page.resize(size, Image.Resampling.LANCZOS)
    return page


def _legend_order(labels: Sequence[str], palette: Mapping[str, RGB]) -> list[str]:
    present = list(dict.fromkeys(labels))
    known = [k for k in palette if k in present]
    return known + sorted(label for label in present if label not in known)


def _overlap(rect, boxes: np.ndarray) -> int:
    if not len(boxes):
        return 0
    x0, y0, x1, y1 = rect
    w = np.clip(np.minimum(boxes[:, 2], x1) - np.maximum(boxes[:, 0], x0), 0, None)
    h = np.clip(np.minimum(boxes[:, 3], y1) - np.maximum(boxes[:, 1], y0), 0, None)
    return int((w * h).sum())


def _draw_legend(
    image: Image.Image,
    labels: Sequence[str],
    boxes: np.ndarray,
    position: str,
    palette: Mapping[str, RGB],
    extra: Sequence[tuple[str, RGB | None]] = (),
) -> tuple[int, int, int, int] | None:
    """Draw the legend for ``labels`` (and ``extra`` rows: text and outline colour; ``None``: a box in a box)
    in a corner; return its rectangle."""
    if not labels and not extra:
        return None
    draw = ImageDraw.Draw(image)
    W, H = image.size
    size = max(10, round(min(W, H) / 60))
    font = _font(size)
    pad = max(3, size // 2)
    swatch = size
    rows = []
    for label in [*labels, *(text for text, _ in extra)]:
        tw, th, top = _text_size(draw, label, font)
        rows.append((label, tw, th, top))
    row_h = max(swatch, max(th for _, _, th, _ in rows))
    width = 2 * pad + swatch + pad + max(tw for _, tw, _, _ in rows)
    height = 2 * pad + len(rows) * row_h + (len(rows) - 1) * (pad // 2)
    margin = pad
    corners = {
        "top-left": (margin, margin),
        "top-right": (W - margin - width, margin),
        "bottom-left": (margin, H - margin - height),
        "bottom-right": (W - margin - width, H - margin - height),
    }
    if position == "auto":
        # the corner whose legend would cover the least word-box area (ties: LEGEND_POSITIONS order)
        position = min(
            LEGEND_POSITIONS,
            key=lambda p: _overlap((*corners[p], corners[p][0] + width, corners[p][1] + height), boxes),
        )
    x, y = corners[position]
    rect = (x, y, x + width - 1, y + height - 1)
    draw.rectangle(rect, fill=(255, 255, 255), outline=(0, 0, 0), width=1)
    cy = y + pad
    outlines = dict(extra)
    for k, (label, _tw, th, top) in enumerate(rows):
        sy = cy + (row_h - swatch) // 2
        square = (x + pad, sy, x + pad + swatch - 1, sy + swatch - 1)
        if k < len(labels):
            draw.rectangle(square, fill=label_colour(label, palette))
        elif outlines[label] is not None:
            draw.rectangle(square, outline=outlines[label], width=max(2, swatch // 5))
        else:  # a box holding boxes of other labels
            colours = [label_colour(lab, palette) for lab in labels[:2]] or [(0, 0, 0), (0, 0, 0)]
            draw.rectangle(square, outline=colours[0], width=max(1, swatch // 8))
            q = swatch // 4
            draw.rectangle((square[0] + q, square[1] + q, square[2] - q, square[3] - q), outline=colours[-1],
                           width=max(1, swatch // 8))
        draw.text((x + 2 * pad + swatch, cy + (row_h - th) // 2 - top), label, fill=(0, 0, 0), font=font)
        cy += row_h + pad // 2
    return rect


def draw_document(
    doc: Document,
    *,
    show_text: bool = False,
    line_width: int = 2,
    scale: float = 1.0,
    legend: str | None = "auto",
    palette: Mapping[str, RGB] | None = None,
    highlight: Sequence[int] = (),
    inner_boxes: np.ndarray | None = None,
) -> Image.Image:
    """The page in RGB with every word box outlined in its entity label's colour.

    Parameters
    ----------
    doc : the document to draw; grayscale pages are converted to RGB.
    show_text : also write each box's text (the words sharing it, joined by
        spaces) just above it, in the box's colour.
    line_width : outline width in pixels of the returned image; the outline
        is drawn inside the box, so its outer pixels are the box's edges.
    scale : size of the returned image relative to the page (``1.0``: the
        page's own size). Boxes are scaled with the page, outlines are not.
    legend : corner of the legend of the labels drawn: ``"top-left"``,
        ``"top-right"``, ``"bottom-left"``, ``"bottom-right"``, ``"auto"``
        (the corner covering the least word-box area) or ``None`` for none.
    palette : label -> RGB colour; :data:`PALETTE` (header orange, question
        blue, answer green, other grey, words in no entity purple) when
        ``None``. See :func:`label_colour` for labels the palette lacks.
    highlight : indices of words to mark as changed: a :data:`HIGHLIGHT`
        outline just outside their boxes (the page's pixels are not changed).
    inner_boxes : one box per word (for a merged page: the words' boxes
        before the merge). A box shared by words of several labels then shows
        its label mix: inside it, each entity's own box (the union of its
        words' ``inner_boxes``) outlined in its label's colour.

    Returns
    -------
    PIL.Image.Image : a new ``RGB`` image; ``doc`` is not changed.

    Notes
    -----
    Boxes shared by several words (a merge shift gives many words the same
    box) are drawn once, in the colour of the most common label among those
    words. Boxes are drawn in word order, so a later box's outline covers an
    earlier one's where they overlap.
    """
    if line_width < 1:
        raise ValueError(f"line_width must be at least 1, got {line_width}")
    if not scale > 0:
        raise ValueError(f"scale must be positive, got {scale}")
    if legend is not None and legend != "auto" and legend not in LEGEND_POSITIONS:
        raise ValueError(f"legend must be 'auto', None or one of {LEGEND_POSITIONS}, got {legend!r}")
    palette = PALETTE if palette is None else palette
    size = (max(1, round(doc.width * scale)), max(1, round(doc.height * scale)))
    sx, sy = size[0] / doc.width, size[1] / doc.height
    image = _page_rgb(doc, size)
    draw = ImageDraw.Draw(image)

    items = _unique_boxes(doc)
    scaled = np.array(
        [(round(b[0] * sx), round(b[1] * sy), round(b[2] * sx), round(b[3] * sy)) for b, _, _ in items],
        dtype=np.int64,
    ).reshape(-1, 4)
    for (x0, y0, x1, y1), (_, label, _) in zip(scaled.tolist(), items):
        draw.rectangle((x0, y0, x1, y1), outline=label_colour(label, palette), width=line_width)

    mixed = _mixed_groups(doc, inner_boxes) if inner_boxes is not None else []
    for group_box, parts in mixed:  # inside the merged box's own outline
        gx0, gy0 = round(group_box[0] * sx) + line_width + 1, round(group_box[1] * sy) + line_width + 1
        gx1, gy1 = round(group_box[2] * sx) - line_width - 1, round(group_box[3] * sy) - line_width - 1
        for (x0, y0, x1, y1), label in parts:
            x0, y0 = max(round(x0 * sx), gx0), max(round(y0 * sy), gy0)
            x1, y1 = min(round(x1 * sx), gx1), min(round(y1 * sy), gy1)
            if x1 > x0 and y1 > y0:
                draw.rectangle((x0, y0, x1, y1), outline=label_colour(label, palette), width=max(1, line_width - 1))
    margin = line_width + 1
    for i in sorted(set(highlight)):
        if 0 <= i < len(doc.words):
            x0, y0, x1, y1 = doc.words[i].box
            draw.rectangle((round(x0 * sx) - margin - line_width, round(y0 * sy) - margin - line_width,
                            round(x1 * sx) + margin + line_width, round(y1 * sy) + margin + line_width),
                           outline=HIGHLIGHT, width=line_width)

    if show_text and items:
        heights = scaled[:, 3] - scaled[:, 1]
        font = _font(int(np.clip(np.median(heights) * 0.7, 8, 24)))
        for (x0, y0, x1, _y1), (_, label, text) in zip(scaled.tolist(), items):
            if not text:
                continue
            text = _fit_text(draw, text, font, max(x1 - x0, size[0] // 4))
            tw, th, top = _text_size(draw, text, font)
            ty = y0 - th - 1 if y0 - th - 1 >= 0 else y0 + line_width
            draw.text((x0, ty - top), text, fill=label_colour(label, palette), font=font)

    if legend is not None:
        extra = []
        if mixed:
            extra.append(("boxes inside: labels merged", None))
        if highlight:
            extra.append(("changed word", HIGHLIGHT))
        _draw_legend(image, _legend_order([label for _, label, _ in items], palette), scaled, legend, palette, extra)
    return image


def _mixed_groups(doc: Document, inner_boxes: np.ndarray):
    """Boxes shared by words of more than one label, each with its entities' inner boxes and labels."""
    labels, owner = _word_labels(doc), doc.word_entity()
    groups: dict[tuple[int, int, int, int], list[int]] = {}
    for i, word in enumerate(doc.words):
        groups.setdefault(tuple(word.box), []).append(i)
    out = []
    for box, ids in groups.items():
        if len({labels[i] for i in ids}) < 2:
            continue
        parts: dict[object, list[int]] = {}
        for i in ids:  # one inner box per entity (a word in none is its own)
            parts.setdefault(owner[i].id if owner[i] is not None else ("word", i), []).append(i)
        inner = []
        for members in parts.values():
            b = np.asarray([inner_boxes[i] for i in members])
            inner.append(((int(b[:, 0].min()), int(b[:, 1].min()), int(b[:, 2].max()), int(b[:, 3].max())),
                          labels[members[0]]))
        out.append((box, inner))
    return out


# -- side by side -------------------------------------------------------------------
def _caption(image: Image.Image, title: str, height: int) -> Image.Image:
    """``image`` under a dark bar of ``height`` pixels holding ``title``."""
    out = Image.new("RGB", (image.width, image.height + height), _CAPTION_BACKGROUND)
    out.paste(image, (0, height))
    draw = ImageDraw.Draw(out)
    font = _font(max(8, round(height * 0.6)))
    pad = max(2, height // 5)
    text = _fit_text(draw, title, font, image.width - 2 * pad)
    if text:
        _tw, th, top = _text_size(draw, text, font)
        draw.text((pad, (height - th) // 2 - top), text, fill=_CAPTION_TEXT, font=font)
    return out


def default_title(doc: Document) -> str:
    """The names of the shifts in ``doc.provenance`` joined by ``" + "``, or ``"shifted"``."""
    return " + ".join(record.shift for record in doc.provenance) or "shifted"


def render_preview(
    original: Document,
    shifted: Document,
    *,
    title_left: str = "original",
    title_right: str | None = None,
    max_height: int = 1200,
    show_text: bool = False,
    line_width: int = 2,
    gap: int = 8,
    legend: str | None = "auto",
    palette: Mapping[str, RGB] | None = None,
    changes: bool = True,
    edits_listed: int = 6,
) -> Image.Image:
    """The original and the shifted page, drawn by :func:`draw_document`, side by side.

    Parameters
    ----------
    original, shifted : the two documents; their pages may differ in size.
    title_left : caption above the left (original) page.
    title_right : caption above the right (shifted) page; by default the names
        of the shifts in ``shifted.provenance`` joined by ``" + "`` (``"shifted"``
        when it has none). Captions too wide for their page end in ``...``.
    max_height : both pages are scaled to the same height, the taller page's
        height but at most ``max_height`` pixels, keeping their aspect ratios.
    show_text, line_width, legend, palette : passed to :func:`draw_document`;
        outlines are ``line_width`` pixels wide in the preview, whatever the scale.
    gap : white pixels between the two pages.
    changes : show what the chain changed (:func:`dogood.measures.diff.word_edits`):
        words whose text was replaced, deleted or inserted get a
        :data:`HIGHLIGHT` outline on both pages and a strip under the pages
        lists the first ``edits_listed`` as ``old → new``; on a page whose
        words share boxes (a merge), a box holding several labels shows its
        entities' own boxes inside it, in their labels' colours.

    Returns
    -------
    PIL.Image.Image : an ``RGB`` image ``left + gap + right`` pixels wide and the
        page height plus a caption bar tall (plus the strip of edits, when
        text changed); the caption bar is ``max(16, round(page height / 40))`` pixels.
    """
    if max_height < 1:
        raise ValueError(f"max_height must be positive, got {max_height}")
    if gap < 0:
        raise ValueError(f"gap must not be negative, got {gap}")
    if title_right is None:
        title_right = default_title(shifted)
    page_h = min(int(max_height), max(original.height, shifted.height))
    bar_h = max(16, round(page_h / 40))
    edits, marks, inner = [], ((), ()), None
    if changes:
        from dogood.measures.diff import word_edits

        edits = [e for e in word_edits(original, shifted) if e.text_changed]
        marks = ([e.old_index for e in edits if e.old_index is not None],
                 [e.new_index for e in edits if e.new_index is not None])
        if [w.text for w in original.words] == [w.text for w in shifted.words]:
            inner = original.boxes  # the same words: where each was before the layout changed
    panels = []
    for doc, title, marked, inside in ((original, title_left, marks[0], None), (shifted, title_right, marks[1], inner)):
        drawn = draw_document(
            doc,
            show_text=show_text,
            line_width=line_width,
            scale=page_h / doc.height,
            legend=legend,
            palette=palette,
            highlight=marked,
            inner_boxes=inside,
        )
        panels.append(_caption(drawn, str(title), bar_h))
    left, right = panels
    canvas = Image.new("RGB", (left.width + gap + right.width, max(left.height, right.height)), _CANVAS)
    canvas.paste(left, (0, 0))
    canvas.paste(right, (left.width + gap, 0))
    if edits and edits_listed > 0:
        canvas = _with_edit_strip(canvas, edits, edits_listed, max(12, round(bar_h * 0.8)))
    return canvas


def _strip_font(size: int):
    """Liberation Sans (the font :mod:`dogood.page.render` draws words with), else Pillow's default font."""
    try:
        from dogood.page.render import font_paths

        return ImageFont.truetype(font_paths()["LiberationSans-Regular"], size=size)
    except Exception:  # fonts not installed: the strip still reads
        return _font(size)


def _with_edit_strip(canvas: Image.Image, edits, limit: int, size: int) -> Image.Image:
    """``canvas`` above a white strip listing the first ``limit`` text edits as ``old → new``."""
    from dogood.measures.diff import ARROW

    font = _strip_font(size)
    shown = edits[:limit]
    lines = [f"{len(edits)} word(s) changed" + (f"; the first {len(shown)}:" if len(shown) < len(edits) else ":")]
    for e in shown:
        old = repr(e.old_text) if e.old_text is not None else "(inserted)"
        new = repr(e.new_text) if e.new_text is not None else "(deleted)"
        where = f"word {e.old_index}" if e.old_index is not None else f"new word {e.new_index}"
        lines.append(f"{where}: {old} {ARROW} {new}")
    pad, row = max(4, size // 2), round(size * 1.35)
    out = Image.new("RGB", (canvas.width, canvas.height + 2 * pad + row * len(lines)), _CANVAS)
    out.paste(canvas, (0, 0))
    draw = ImageDraw.Draw(out)
    for k, line in enumerate(lines):
        text = _fit_text(draw, line, font, canvas.width - 2 * pad)
        draw.text((pad, canvas.height + pad + k * row), text, fill=(0, 0, 0) if k else HIGHLIGHT_TEXT, font=font)
    return out


def save_preview(original: Document, shifted: Document, path: str | Path, **kwargs) -> Path:
    """Write :func:`render_preview` of ``original`` and ``shifted`` to ``path`` as PNG.

    Parameters
    ----------
    original, shifted : the two documents.
    path : the file to write (PNG whatever its suffix); missing parent folders
        are created.
    **kwargs : passed to :func:`render_preview` (titles, ``max_height``, ...).

    Returns
    -------
    pathlib.Path : ``path``.
    """
    from dogood.core.fs import partial_file

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    image = render_preview(original, shifted, **kwargs)
    fd, tmp = partial_file(path)  # a killed run's temporary file beside path is removed first
    try:
        with os.fdopen(fd, "wb") as fh:
            image.save(fh, format="PNG")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)  # never a half-written PNG under the final name
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
