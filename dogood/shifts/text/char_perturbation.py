"""Character-level perturbations of Moradi & Samwald (2021), section 4.1 and Table 2 (text shift).

The seven kinds (:func:`dogood.language.chars.perturb_core`):

- ``insertion``: a random letter inserted at a random inner position (never
  first or last), in a word of at least three characters.
- ``deletion``: one inner character deleted (never the first or last), in a
  word of at least three characters.
- ``replacement``: one letter replaced by a neighbouring key on a QWERTY
  keyboard (same row left/right, and the two touching keys of the rows above
  and below), keeping its case.
- ``swap``: one character swapped with its left or right neighbour (a pair of
  two different characters, so the word changes).
- ``repetition``: one inner character (not first or last) doubled.
- ``misspelling``: a word found in :data:`~dogood.language.chars.MISSPELLINGS`
  replaced by one of its common misspellings, keeping its case pattern.
- ``letter_case``: the case of the first character, or of all characters,
  toggled (``swapcase``), each with probability 1/2.

What a sample is on a document, how ``fraction`` and ``per_sample`` (the
paper's PPS) work, which words are left alone and what is counted:
:mod:`dogood.shifts.text._samples`.

``style: paper`` runs the paper's reference scripts' operators instead
(:mod:`dogood.shifts.text._paper_style`): tokens of three characters or
more, digits and punctuation included; insertion of a lower-case letter,
deletion and repetition at an inner position; replacement by a same-row
neighbour key at an inner letter; swap at any position; letter case of the
first or all ASCII letters; up to ``per_sample`` common misspellings
(the scripts: 3), matched as whole tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import Field

from dogood.core.document import Document
from dogood.core.papers import Cites
from dogood.language.chars import CHAR_KINDS, perturb_core
from dogood.language.edits import Edits
from dogood.language.lexicons import require
from dogood.shifts.text import _paper_style
from dogood.shifts.text._samples import STYLE, SamplePerturbation, Style


class CharPerturbation(SamplePerturbation):
    """Character-level perturbations inspired by Moradi & Samwald (2021), section 4.1 and Table 2.

    Keeps boxes, labels, entities and links; changes the text of up to
    ``per_sample`` words in each drawn sample (see the module docstring for
    the kinds). Inspired by, not a port of, the paper's code: ``replacement``
    uses dogood's own QWERTY adjacency table (letters only), and
    ``misspelling`` a hand-written table of common misspellings rather than
    Wikipedia's list.

    ``style: paper`` reproduces the paper's reference scripts instead (see the module docstring).

    Parameters: :class:`CharPerturbation.Params`.
    """

    name = "char_perturbation"
    reported_counts = ("eligible", "changed", "unchangeable", "samples", "perturbed_samples", "perturbations", "short", "empty", "number", "non_latin", "symbol", "too_long")
    papers = (Cites("moradi", "4.1, Table 2", inspired_by=(
        "in style dogood (style paper runs the reference scripts' operators), the replacement kind uses dogood's "
        "own QWERTY adjacency table (letters only) and the misspelling kind a hand-written table of common misspellings instead of Wikipedia's list; the other kinds follow the paper's "
        "description. A sample is an entity or a text line, and a document-level fraction caps the words changed")),)

    class Params(SamplePerturbation.Params):
        kind: Literal[CHAR_KINDS] = Field("insertion", description="the character perturbation (the paper's Table 2)")
        style: Style = STYLE

    def prepare(self) -> None:
        if self.style == "paper":
            require(f"style 'paper' (kind {self.kind!r})", "nltk")

    def card_notes(self, schema: str = "funsd") -> list[str]:
        return [_paper_style.style_note(self.style, self.kind, self.per_sample)]

    def perturb(self, doc: Document, sample: Sequence[int], k: int, rng: np.random.Generator, edits: Edits) -> int:
        if self.style == "paper":
            return _paper_style.perturb_chars(self.kind, doc, sample, k, rng, edits)
        return self.replace_cores(doc, sample, k, rng, edits, lambda core: perturb_core(core, self.kind, rng))
