"""New texts pieced together from the page's own letters, where the page has them (issue 40).

A redrawn word (:func:`dogood.page.render.render_words`) is drawn in a fitted
face and given the page's print quality; a small classifier still tells some
of them from the page's print (``bench/RESULTS.md`` (af)-(ai)). Most text
shifts, though, only rearrange letters the page already printed: a deleted,
repeated or swapped character, a word repeated beside its twin, a letter whose
case changes where the page prints it in the other case too. This module
plans such a text as *pieces of the page's own print*: each letter of the new
text is cut out of a word that shows it (the old word itself first, in its
own order, then the untouched words of the same face and size), so the new
word's ink is the scan's own ink, with its blur, noise and darkness as
printed. :func:`dogood.page.render.render_box` pastes the pieces; a text with
a letter the page lacks in that print is drawn as before.

Where a letter starts and ends is where the fitted face lays it out
(:func:`dogood.page.render.letter_edges`), each cut moved to the emptiest
column near it (:func:`letter_cuts`), so touching letters are cut between
them rather than through a stroke.

Written by hand: glyph harvesting for document images is described in papers
(e.g. synthetic handwriting from a writer's own glyphs) but no maintained
library takes a scan, word boxes and texts and pieces a word from its letters.
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import NamedTuple

import numpy as np

#: How far (a share of the font size) a cut between two letters may move to find the emptiest column.
CUT_SLACK = 0.08


class Letters(NamedTuple):
    """A printed word's letters on the page: letter ``k`` of ``text`` spans page columns ``[cuts[k], cuts[k + 1])``;
    ``baseline`` is the page row its letters stand on; ``source`` names the word (an index in the document);
    ``clean[k]``: no ink in column ``cuts[k]`` (a cut there cuts no stroke); ``whole[k]``: letter ``k``'s ink lies
    between clean cuts, as wide and as high as its face draws it (a letter another word may take)."""

    text: str
    cuts: tuple[int, ...]
    baseline: float
    source: int
    clean: tuple[bool, ...] = ()
    whole: tuple[bool, ...] = ()


class Piece(NamedTuple):
    """Columns ``[start, stop)`` of word ``source``'s print (a space when ``source`` is ``-1``: ``stop - start``
    columns of paper), spelling the new text from its character ``at`` on."""

    source: int
    start: int
    stop: int
    at: int = 0


def letter_cuts(edges: Sequence[tuple[float, float]], columns: np.ndarray, x0: int, size: float) -> tuple[int, ...]:
    """Page columns between a word's letters: ``edges[k]`` is letter ``k``'s ink ``[left, right)`` (page columns,
    as the fitted face lays it out), ``columns`` the word's ink per column of its box from column ``x0``.

    The first cut is the left of the first letter's ink, the last the right of the last letter's; each cut between
    two letters is the emptiest column within :data:`CUT_SLACK` of the font ``size`` of the middle of their gap (the
    column nearest the middle among equals), kept after the cut before it.
    """
    n = len(edges)
    width = len(columns)
    slack = max(1, int(round(CUT_SLACK * size)))
    first = int(np.floor(edges[0][0]))
    last = int(np.ceil(edges[-1][1]))
    cuts = [first]
    for k in range(1, n):
        middle = (edges[k - 1][1] + edges[k][0]) / 2.0
        lo = max(cuts[-1] + 1, int(np.floor(middle)) - slack)
        hi = max(lo, int(np.floor(middle)) + slack)
        candidates = np.arange(lo, hi + 1)
        inside = (candidates - x0 >= 0) & (candidates - x0 < width)
        ink = np.where(inside, columns[np.clip(candidates - x0, 0, max(0, width - 1))] if width else 0, 0)
        order = np.lexsort((np.abs(candidates + 0.5 - middle), ink))
        cuts.append(int(candidates[order[0]]))
    cuts.append(max(last, cuts[-1] + 1))
    return tuple(cuts)


def plan(new: str, own: Letters | None, others: Sequence[Letters], space: int) -> list[Piece] | None:
    """The pieces that spell ``new``: the letters ``own`` (the old word) shares with it, in its order; then, for
    each stretch of letters still missing, the longest run of letters that ``own`` or one of ``others`` (in order of
    preference) prints with empty columns at both its cuts (a single letter only when printed whole,
    :attr:`Letters.whole`), so no stroke is cut; a space is ``space`` columns of paper. ``None`` when a letter is
    on none of them (the text is drawn instead)."""
    letters: list[tuple[int, int] | None] = [None] * len(new)  # per character: (which source, letter)
    if own is not None:
        matcher = SequenceMatcher(None, own.text, new, autojunk=False)
        for block in matcher.get_matching_blocks():
            for n in range(block.size):
                letters[block.b + n] = (0, block.a + n)
    sources = ([own] if own is not None else []) + list(others)
    position = 0
    while position < len(new):
        if letters[position] is not None or new[position].isspace():
            position += 1
            continue
        end = position
        while end < len(new) and letters[end] is None and not new[end].isspace():
            end += 1
        best = _longest(new[position:end], sources)
        if best is None:
            return None
        s, k, length = best
        for n in range(length):
            letters[position + n] = (s, k + n)
        position += length
    pieces: list[Piece] = []
    last: tuple[int, int] | None = None
    for at, letter in enumerate(letters):
        if letter is None:  # a space
            pieces.append(Piece(-1, 0, space, at))
            last = None
            continue
        s, k = letter
        source = sources[s]
        if last is not None and last == (s, k - 1):  # the next letter of the same print: one piece, no seam
            pieces[-1] = pieces[-1]._replace(stop=source.cuts[k + 1])
        else:
            pieces.append(Piece(source.source, source.cuts[k], source.cuts[k + 1], at))
        last = letter
    return pieces


def _longest(wanted: str, sources: Sequence[Letters]) -> tuple[int, int, int] | None:
    """``(source, first letter, length)`` of the longest start of ``wanted`` that a source prints cleanly (empty
    cut columns at both ends; one letter: whole), the first source among equals; ``None`` when none has its
    first letter."""
    for length in range(len(wanted), 0, -1):
        part = wanted[:length]
        for s, source in enumerate(sources):
            k = source.text.find(part)
            while k >= 0:
                if (source.whole[k] if length == 1 else source.clean[k] and source.clean[k + length]):
                    return s, k, length
                k = source.text.find(part, k + 1)
    return None
