"""BG Adversarial (form-attack paper): background words become random dates, numbers or money."""

from __future__ import annotations

import numpy as np
from pydantic import Field

from dogood.core.document import Document
from dogood.core.papers import Cites
from dogood.language.budget import change_words
from dogood.language.edits import kept_tallies, redraw_guard, with_texts
from dogood.language.lexicons import require
from dogood.language.selection import background_words, value_neighbours
from dogood.language.values import faker_for, faker_note, random_value
from dogood.shifts import params
from dogood.shifts.base import Outcome, SkipDocument
from dogood.shifts.text._form_attack import BackgroundWordShift

#: With ``render``, how many random values a word may draw for one the page's own print spells (digits, ``/``, a
#: month's letters pieced from words printed alike, :meth:`dogood.page.render.Redraw.pieced`): drawn digits are
#: told from printed ones more easily than pieced ones (``bench/RESULTS.md`` (ak)).
PRINTED_TRIES = 20


class BackgroundAdversarial(BackgroundWordShift):
    """BG Adversarial: a share ``fraction`` of the background words become random dates, numbers or money (Xue et al. 2021).

    Adds distractors of the values' data types. Background on FUNSD: words of
    ``other`` and ``header`` entities and words in no entity; ``question``
    (key) and ``answer`` (value) words are never touched, and neither are
    the neighbours of values (:func:`dogood.language.selection.value_neighbours`:
    overlapping the value box grown by ``r`` of the page size, or among the
    ``n`` words before or after it), which the paper protects as strong
    indicators; they are counted as ``protected`` and are not eligible. Each
    replacement draws its type uniformly (:func:`dogood.language.values.random_value`):
    a Faker date from 2001-2021 in ``mm/dd/yy``, ``yy-mm-dd``, ``dd/month/yy``
    or ``dd/mon/yy``; a number of 3-12 digits; or money from 1 to 10,000,000
    as ``1,234.56`` with a random ``$``. One word becomes one word in the same box.
    With ``render``, a word takes the first of up to :data:`PRINTED_TRIES`
    values that the page's own print spells (pieced from its letters, not
    drawn), else the first value, drawn: the values keep their kinds and
    formats.

    Parameters: :class:`BackgroundAdversarial.Params`.
    """

    name = "bg_adversarial"
    reported_counts = ("eligible", "changed", "unchangeable", "protected")
    papers = (Cites("form-attacks", "form-level transformations, Background manipulation: BG Adversarial; "
                                    "parameters in Implementation Details"),)

    label_params = ("value_labels",)

    class Params(BackgroundWordShift.Params):
        value_labels: params.Names = Field(("answer",), description="entity labels that are values (their "
                                                                    "neighbours are protected)")
        r: params.Real = Field(0.02, ge=0, description=(
            "neighbour zone growth, as a fraction of the page width/height on each side (paper: 0.02)"))
        n: params.Integer = Field(2, ge=0, description="reading-order neighbours protected on each side of a value "
                                                       "(paper: 2)")

    def prepare(self) -> None:
        require(self.name, "faker")

    def apply(self, doc: Document, rng: np.random.Generator) -> Outcome:
        if not doc.words:
            raise SkipDocument("no words")
        protected = value_neighbours(doc, self.value_labels, self.r, self.n)
        background = background_words(doc, self.labels)
        words = [i for i in background if i not in protected]
        fake = faker_for(rng)
        guard = redraw_guard(doc, self.render)

        def value(i: int, g: np.random.Generator) -> str | None:
            if len(doc.words[i].text) > self.max_word_length:
                return None
            first = random_value(g, fake)
            if guard is None or guard.pieced(i, first):
                return first
            for _ in range(PRINTED_TRIES - 1):  # redrawn: a value the page's own print spells, when one comes
                again = random_value(g, fake)
                if guard.pieced(i, again):
                    return again
            return first

        changes, counts = change_words(doc, rng, self.fraction, value, words, guard)
        counts["protected"] = len(background) - len(words)
        return Outcome(with_texts(doc, changes, self.render), counts, kept_tallies(guard))

    def card_notes(self, schema: str = "funsd") -> list[str]:
        notes = [faker_note(self.name)]
        if self.render:
            notes.append(f"`{self.name}` with `render: true`: of up to {PRINTED_TRIES} random values for a word, the "
                         "first that the page's own print spells (pieced from its letters) is written; when none "
                         "does, the first is drawn.")
        return notes
