"""Word boxes from segment boxes: where each word of a segment lies, found from the segment's ink.

Rows in the segment convention (``nielsr/funsd-layoutlmv3``, what LayoutLMv3's
FUNSD recipe trains on) give every word its segment's box, so a shift that needs
each word's own box (redrawing a changed word, ``render: true``; jittering word
boxes, ``box_stretch``, ``center_shift``) cannot act on them. :func:`word_boxes`
places a segment's words in its box:

1. the segment's ink: Otsu's threshold in the box
   (:func:`dogood.page.render.ink_threshold`), form rules (runs of ink
   across or down longer than :data:`RULE` times the print's height) and
   one-pixel specks left out;
2. its lines: bands of rows with ink, split where no row has any, merged
   (closest first) until there are no more lines than words; the words go to
   the lines in reading order, as many to each as makes its share of the
   characters closest to its share of the ink's width;
3. within a line, the words' edges: the gaps between inked columns, chosen in
   order where the words' text lengths put them (a word's share of the line
   is its share of the characters, a space counted as one), wide gaps
   preferred over the narrow ones between letters (dynamic programming); a
   word with no gap before it is cut where its text length says;
4. each word's box re-fitted to the ink between its edges; the outer edges of
   a line of one band stay the segment's (its box is the union of its words').

A segment without ink (or a word without ink between its edges) is split by
text length alone. Measured against FUNSD's own word boxes on all 50 test
forms (``bench/measure_word_boxes.py``, ``bench/RESULTS.md``); inspired by the
usual projection-profile word segmentation of document analysis, written here
because no library places known words in a known box.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence

import cv2
import numpy as np

Box = tuple[int, int, int, int]

#: When a line's words' edges are placed (:func:`_cuts`): what a cut holds against it per character's width
#: from where the text lengths put it (a space counted as one character), for a gap narrower than
#: :data:`WORD_GAP` characters (in proportion: a gap of no width, :data:`NARROW_GAP`), and for a cut where no gap
#: is (:data:`NO_GAP`); chosen on FUNSD's training forms.
OFF = 0.3
NARROW_GAP = 1.5
WORD_GAP = 0.9
NO_GAP = 1.0
#: Columns of paper a word's re-fitted box keeps beside its ink (FUNSD's word boxes have about that much).
PAD = 1
#: A run of ink this many times the print's height (the median height of its pieces), across or down, is a rule.
RULE = 2.5
#: Pieces of ink whose centres are within this many print heights of a line's centre are on that line.
SAME_LINE = 0.6
#: A piece of ink of less than this share of the print's height squared is a speck, no part of a word.
SPECK = 0.08


def word_boxes(pixels: np.ndarray, segment: Box, texts: Sequence[str]) -> list[Box]:
    """The box of each of ``texts`` (a segment's words, in reading order) inside ``segment`` on the page
    ``pixels``, from the segment's ink (see the module docstring). Boxes are within ``segment``; a segment of
    one word keeps its box."""
    n = len(texts)
    if n == 0:
        return []
    height, width = pixels.shape[:2]
    x0, y0, x1, y1 = _clip(segment, width, height)
    if n == 1 or x1 - x0 < 2 or y1 - y0 < 2:
        return [(x0, y0, x1, y1)] if n == 1 else _by_length((x0, y0, x1, y1), texts)
    found = _ink(pixels, (x0, y0, x1, y1))
    if found is None:
        return _by_length((x0, y0, x1, y1), texts)
    labels, stats, glyph = found
    lines = _lines(labels, stats, glyph, n)
    one = len(lines) == 1
    lengths, space = _widths(texts)
    masks = [np.isin(labels, members) for members in lines]
    bands = [(int(stats[m, cv2.CC_STAT_TOP].min()),
              int((stats[m, cv2.CC_STAT_TOP] + stats[m, cv2.CC_STAT_HEIGHT]).max())) for m in lines]
    if one:
        bands = [(0, y1 - y0)]  # one line: the segment's height is the union of its words'
    else:
        bands[0], bands[-1] = (0, bands[0][1]), (bands[-1][0], y1 - y0)
    extents = [(0, x1 - x0)] if one else [_extent(mask) for mask in masks]
    profiles = [mask[:, a:b].any(axis=0) for mask, (a, b) in zip(masks, extents)]
    out: list[Box] = []
    for j, c0, c1 in _place(profiles, lengths, space):
        mask, (left, right), (a, b) = masks[j], extents[j], bands[j]
        c0, c1 = left + c0, left + c1
        cols = np.flatnonzero(mask[:, c0:c1].any(axis=0))
        if len(cols):  # re-fitted to its ink, PAD columns kept beside it; a line's outer edges stay the line's
            ink0, ink1 = c0 + int(cols[0]), c0 + int(cols[-1]) + 1
            c0 = c0 if c0 == left else max(left, ink0 - PAD)
            c1 = c1 if c1 == right else min(right, ink1 + PAD)
        out.append((x0 + c0, y0 + a, x0 + max(c1, c0 + 1), y0 + b))
    return out


#: Pages whose words' boxes :func:`page_word_boxes` keeps (the same pages come back every epoch).
KEPT_PAGES = 4096
_kept: OrderedDict[bytes, list[Box]] = OrderedDict()
_lock = threading.Lock()


def segments(boxes: Sequence[Box]) -> list[tuple[int, int]]:
    """The segments of a segment-level row: runs ``[first, last)`` of consecutive words with the same box."""
    out: list[tuple[int, int]] = []
    for i, box in enumerate(boxes):
        if out and tuple(boxes[out[-1][0]]) == tuple(box):
            out[-1] = (out[-1][0], i + 1)
        else:
            out.append((i, i + 1))
    return out


def page_word_boxes(pixels: np.ndarray, boxes: Sequence[Box], texts: Sequence[str]) -> list[Box]:
    """Each word's own box on a page whose words carry their segment's box (:func:`segments`): :func:`word_boxes`
    of each segment; kept for the :data:`KEPT_PAGES` pages seen last (by their pixels, boxes and texts)."""
    digest = hashlib.blake2b(repr((pixels.shape, pixels.dtype.str, [tuple(b) for b in boxes], list(texts)))
                             .encode(), digest_size=16)
    digest.update(np.ascontiguousarray(pixels).data)
    key = digest.digest()
    with _lock:
        found = _kept.get(key)
        if found is not None:
            _kept.move_to_end(key)
            return list(found)
    out: list[Box] = []
    for first, last in segments(boxes):
        out += word_boxes(pixels, boxes[first], texts[first:last])
    with _lock:
        _kept[key] = out
        while len(_kept) > KEPT_PAGES:
            _kept.popitem(last=False)
    return list(out)


def _clip(box: Box, width: int, height: int) -> Box:
    x0, y0, x1, y1 = (int(v) for v in box)
    x0, x1 = max(0, min(width, x0)), max(0, min(width, x1))
    y0, y1 = max(0, min(height, y0)), max(0, min(height, y1))
    return x0, y0, max(x0, x1), max(y0, y1)


def _ink(pixels: np.ndarray, box: Box) -> tuple[np.ndarray, np.ndarray, int] | None:
    """The segment's pieces of ink (box-sized labels, their stats, the print's height: the median height of the
    pieces), without form rules (runs of ink longer than :data:`RULE` times the print's height, across or
    down) and one-pixel specks; ``None`` without ink."""
    from dogood.page.render import _gray, ink_threshold

    x0, y0, x1, y1 = box
    crop = pixels[y0:y1, x0:x1]
    threshold = ink_threshold(crop)
    if threshold is None:
        return None
    ink = (_gray(crop) <= threshold).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    if count <= 1:
        return None
    heights, areas = stats[1:, cv2.CC_STAT_HEIGHT], stats[1:, cv2.CC_STAT_AREA]
    glyph = int(np.median(heights[areas >= 4])) if (areas >= 4).any() else int(np.median(heights))
    long = max(12, int(RULE * glyph))
    rules = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((1, long), np.uint8))
    rules |= cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((long, 1), np.uint8))
    ink[rules > 0] = 0
    count, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    glyph = max(1, glyph)
    small = stats[:, cv2.CC_STAT_AREA] < max(2, SPECK * glyph * glyph)
    small[0] = True
    if small.all():
        return None
    labels[small[labels]] = 0  # specks: no part of a word's ink
    return labels, stats, glyph


def _lines(labels: np.ndarray, stats: np.ndarray, glyph: int, most: int) -> list[np.ndarray]:
    """The pieces of ink (labels) of each line of print, top to bottom: pieces whose centres lie within
    :data:`SAME_LINE` print heights of a line's centre join it; a line of less than a tenth of the ink of the
    others (dots, commas, the ends of strokes) joins the nearest; the closest lines join until there are no
    more than ``most``."""
    pieces = np.flatnonzero(np.bincount(labels.ravel(), minlength=len(stats))[1:]) + 1
    centre = stats[pieces, cv2.CC_STAT_TOP] + stats[pieces, cv2.CC_STAT_HEIGHT] / 2
    weight = stats[pieces, cv2.CC_STAT_AREA].astype(float)
    order = np.argsort(centre, kind="stable")
    lines: list[list[int]] = []
    at: list[float] = []
    for k in order:
        if lines and centre[k] - at[-1] <= SAME_LINE * glyph:
            lines[-1].append(k)
            members = lines[-1]
            at[-1] = float(np.average(centre[members], weights=weight[members]))
        else:
            lines.append([k])
            at.append(float(centre[k]))
    ink = [float(weight[m].sum()) for m in lines]
    while len(lines) > 1:
        small = [i for i in range(len(lines)) if ink[i] < 0.1 * np.median(ink)]
        if not small and len(lines) <= most:
            break
        gaps = [at[i + 1] - at[i] for i in range(len(lines) - 1)]
        if small:
            i = small[0]
            j = i - 1 if i == len(lines) - 1 or (i > 0 and gaps[i - 1] <= gaps[i]) else i
        else:
            j = int(np.argmin(gaps))
        members = lines[j] + lines[j + 1]
        lines[j:j + 2] = [members]
        at[j:j + 2] = [float(np.average(centre[members], weights=weight[members]))]
        ink[j:j + 2] = [ink[j] + ink[j + 1]]
    return [pieces[m] for m in lines]


def _extent(ink: np.ndarray) -> tuple[int, int]:
    cols = np.flatnonzero(ink.any(axis=0))
    return (int(cols[0]), int(cols[-1]) + 1) if len(cols) else (0, ink.shape[1])


def _place(profiles: list[np.ndarray], lengths: list[float], space: float = 1.0) -> list[tuple[int, int, int]]:
    """Where each word lies: ``(line, first column, end column)``, columns from the line's start.

    The lines (``profiles``: which of a line's columns hold ink) are read as one long line, each line's end a
    cut that must be made (the words go to the lines in reading order), and the words' ``len(lengths) - 1``
    ends are placed on it in order by dynamic programming: a cut is a gap between inked columns (a word ends at
    its start, the next begins at its end) or a cut of no width; it is held against :data:`OFF` per character's
    width from where the words' widths put it (``lengths``, in characters, a space ``space`` of them: see
    :func:`_widths`), and, for a gap narrower than :data:`WORD_GAP` characters, up to :data:`NARROW_GAP` in
    proportion (:data:`NO_GAP` for a cut of no width, made only where the widths put one)."""
    n = len(lengths)
    widths = [len(p) for p in profiles]
    offsets = np.concatenate([[0], np.cumsum(widths)]).astype(int).tolist()
    total = offsets[-1]
    ends = np.cumsum(np.array(lengths, float) + space) - space  # each word's end, in characters
    char = total / max(1e-9, ends[-1])
    expected = char * (ends[:-1] + space / 2)
    gaps: list[tuple[int, int, float, bool]] = []
    for j, profile in enumerate(profiles):
        o = offsets[j]
        if j:
            gaps.append((o, o, 0.0, True))  # a line's end: always a word's end
        edges = np.flatnonzero(np.diff(np.concatenate([[1], profile.astype(np.int8), [1]])))
        for a, b in zip(edges[::2].tolist(), edges[1::2].tolist()):
            if 0 < a and b < len(profile):
                gaps.append((o + a, o + b, NARROW_GAP * max(0.0, 1 - (b - a) / max(1.0, WORD_GAP * char)), False))
    inside = [(a, b) for a, b, _, must in gaps if not must]
    cands = gaps + [(e, e, NO_GAP, False) for e in (int(round(v)) for v in expected)
                    if not any(a < e < b for a, b in inside)]
    cands.sort()
    k, c = n - 1, len(cands)
    must = [g for g, cand in enumerate(cands) if cand[3]]
    if k < len(must) or c < k:
        return _by_lines(profiles, lengths, space)
    inf = float("inf")
    cost = np.full((k, c), inf)
    back = np.full((k, c), -1)
    for i in range(k):
        best, arg = inf, -1
        for g, (a, b, pen, _) in enumerate(cands):
            if i == 0:
                if must and g > must[0]:
                    break  # the first end is no later than the first line's end
                best = 0.0
            elif g > 0:
                if cands[g - 1][3] or cost[i - 1, g - 1] < best:  # past a line's end, the window starts there
                    best, arg = cost[i - 1, g - 1], g - 1
            if best < inf:
                cost[i, g] = best + OFF * abs((a + b) / 2 - expected[i]) / char + pen
                back[i, g] = arg
    last = cost[k - 1, must[-1]:] if must else cost[k - 1]
    g = int(np.argmin(last)) + (must[-1] if must else 0)
    if not np.isfinite(cost[k - 1, g]):
        return _by_lines(profiles, lengths, space)
    chosen = []
    for i in range(k - 1, -1, -1):
        chosen.append(cands[g])
        g = back[i, g]
    chosen.reverse()
    starts = [0] + [b for _, b, _, _ in chosen]
    ends = [a for a, _, _, _ in chosen] + [total]
    out = []
    for start, end in zip(starts, ends):
        j = max(0, int(np.searchsorted(offsets, start, side="right")) - 1)
        j = min(j, len(profiles) - 1)
        out.append((j, start - offsets[j], max(start, min(end, offsets[j + 1])) - offsets[j]))
    return out


def _by_lines(profiles: list[np.ndarray], lengths: list[float], space: float) -> list[tuple[int, int, int]]:
    """:func:`_place` when no placement holds: the words go to the lines by their share of the text's width and
    each line is split by the words' widths."""
    widths = np.array([len(p) for p in profiles], float)
    chars = np.concatenate([[0], np.cumsum(np.array(lengths, float) + space)])
    share = np.concatenate([[0], np.cumsum(widths)]) / widths.sum() * chars[-1]
    out = []
    for i in range(len(lengths)):
        j = min(len(profiles) - 1, int(np.searchsorted(share, (chars[i] + chars[i + 1]) / 2, side="right")) - 1)
        a = (chars[i] - share[j]) / (share[j + 1] - share[j]) * widths[j]
        b = (chars[i + 1] - space - share[j]) / (share[j + 1] - share[j]) * widths[j]
        a, b = int(max(0, min(widths[j] - 1, round(a)))), int(max(0, min(widths[j], round(b))))
        out.append((j, a, max(a + 1, b)))
    return out


def _widths(texts: Sequence[str]) -> tuple[list[float], float]:
    """Each text's width and a space's, in widths of an ``n``, as Liberation Sans sets them (capitals, digits
    and punctuation are wider or narrower than lower case letters: counting characters alone misplaces the
    words of a line in capitals); characters counted, a space as one, when the fonts are missing."""
    try:
        from dogood.page.render import _font

        font = _font("LiberationSans-Regular", 100)
    except Exception:  # noqa: BLE001 (FontError, OSError: no fonts, count characters)
        return [float(max(1, len(t))) for t in texts], 1.0
    unit = font.getlength("n")
    return [max(0.5, font.getlength(t) / unit) for t in texts], font.getlength(" ") / unit


def _by_length(box: Box, texts: Sequence[str]) -> list[Box]:
    """The box split along its width by the words' text lengths (a space counted as one character)."""
    x0, y0, x1, y1 = box
    lengths = np.array([max(1, len(t)) for t in texts], float)
    chars = np.concatenate([[0], np.cumsum(lengths + 1)])
    total = chars[-1] - 1
    starts = x0 + (x1 - x0) * chars[:-1] / total
    ends = x0 + (x1 - x0) * (chars[1:] - 1) / total
    return [(int(round(a)), y0, max(int(round(a)) + 1, int(round(b))), y1) for a, b in zip(starts, ends)]
