"""What Moradi & Samwald's perturbations share: samples, a per-sample cap, and the document's word budget.

Moradi & Samwald (2021) perturb randomly selected words of a sample (a
sentence); their hyperparameter PPS ("perturbations per sample", 1 to 4)
caps how many perturbations one sample gets. On a document:

- *Sample.* The text of one entity (FUNSD: a header, question, answer or
  other field), made of its eligible token words; for words in no entity
  (RVL-CDIP OCR, or documents without entities) one text line
  (:func:`dogood.language.selection.text_samples`).
- *Fraction.* ``fraction`` is the share of a document's eligible words that
  are changed, the knob every text shift shares (Do-GOOD changes 10% of the
  words). Samples are drawn in random order and each gets up to
  ``per_sample`` perturbations until ``round(fraction * eligible words)``
  words are changed (the last sample gets only as many as are missing); a
  drawn sample none of whose words can be perturbed is counted
  ``unchangeable`` and the next one takes its place
  (:mod:`dogood.language.budget`). ``word_order`` may pass the budget by up to
  ``span - 1`` words per document, since a shuffle moves a whole window.
- *Per sample.* ``per_sample=k`` perturbs up to ``k`` distinct words of each
  drawn sample, one perturbation each (the paper's PPS); a sample with fewer
  perturbable words gets as many as it has and the missing ones are counted
  ``short``.
- *What a word is.* Punctuation around a word (``"Date:"``, ``"(see"``) is
  kept and only the core between it is perturbed. Words whose core has a
  digit (``number``), a letter outside the Latin script (``non_latin``),
  another symbol (``symbol``, e.g. ``"and/or"``), no letter at all
  (``empty``) or more than :attr:`SamplePerturbation.max_word_length`
  characters (``too_long``) are never changed; the words of drawn samples
  left alone for these reasons are counted under those names
  (:func:`dogood.language.words.core_problem`).
- *Layout.* The perturbed word keeps its box, entity and links. The page
  image still shows the original text unless ``render=True``, which redraws
  the changed words and erases deleted ones.

Counts returned with the document: ``eligible`` (token words), ``changed``
(words changed: new text, deleted, repeated or moved), ``samples`` and
``perturbed_samples``, ``unchangeable`` (drawn samples with no perturbable
word), ``perturbations``, ``short`` (perturbations missing to reach ``k`` in
perturbed samples), and the word reasons above.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Sequence
from typing import ClassVar, Literal

import numpy as np
from pydantic import Field

from dogood.core.document import Document
from dogood.language.budget import budget, draw_until
from dogood.language.edits import Edits, apply_edits, kept_tallies, redraw_edits, redraw_guard
from dogood.language.selection import text_samples
from dogood.language.words import MAX_WORD_LENGTH, core_problem, split_word
from dogood.shifts import params
from dogood.shifts.base import KEPT_HELP, Outcome, Shift

#: ``dogood`` (dogood's careful variants) or ``paper`` (the reference scripts' operators: :mod:`._paper_style`).
Style = Literal["dogood", "paper"]
#: The ``style`` parameter (declared last by each subclass, so positional parameters keep their places).
STYLE = Field("dogood", description=(
    "dogood: dogood's careful variants, inspired by the paper; paper: the paper's reference scripts' operators, "
    "selection rules and per-sample counts, bugs fixed (docs/moradi-samwald.md)"))


def perturb_samples(
    doc: Document,
    rng: np.random.Generator,
    *,
    fraction: float,
    per_sample: int,
    labels: Collection[str] | None,
    perturb: Callable[[Sequence[int], int, np.random.Generator, Edits], int],
    max_word_length: int,
    count_problems: bool = True,
    guard=None,
) -> tuple[Edits, dict[str, int]]:
    """Perturb samples, drawn in random order, until ``round(fraction * eligible words)`` words are changed.

    ``perturb(sample, k, rng, edits)`` records at most ``k`` perturbations of
    the words of ``sample`` in ``edits`` and returns how many it made; ``k``
    is ``per_sample``, or fewer for the last sample so as not to pass the
    target. A sample with no perturbation is counted ``unchangeable`` and
    the next one takes its place. A word counts as changed once, whatever
    happened to it (new text, deleted, repeated, moved). ``count_problems``: count the words of drawn samples
    that are left alone for their text (``number``, ``symbol``...; not in ``style: paper``, which has no such rule).
    ``guard`` (:func:`~dogood.language.edits.redraw_guard`, for a shift that redraws its words): a sample's words
    the guard keeps as printed are left out of it, and a perturbation with a new text it cannot draw is undone
    whole.
    """
    samples = text_samples(doc, labels)
    eligible = sum(len(s) for s in samples)
    target = budget(fraction, eligible)
    edits = Edits()
    counts = Counter(eligible=eligible, changed=0, samples=len(samples), perturbed_samples=0,
                     unchangeable=0, perturbations=0, short=0)

    def attempt(s: int) -> bool:
        sample = samples[s]
        for i in sample if count_problems else ():
            problem = core_problem(split_word(doc.words[i].text)[1], max_word_length)
            if problem:
                counts[problem] += 1
        if guard is not None:
            sample = [i for i in sample if guard.kept(i) is None]
            if not sample:
                return False
        k = min(per_sample, target - len(edits.touched()))
        before = dict(edits.replace), {i: list(w) for i, w in edits.insert.items()}, set(edits.delete)
        made = perturb(sample, k, rng, edits)
        if guard is not None and [i for i, text in edits.replace.items()  # every new text asked (the tallies)
                                  if before[0].get(i) != text and not guard.fits(i, text)]:
            # undone whole: a word order's window undone in part would lose one word's text and repeat another's
            edits.replace, edits.insert, edits.delete = before
            made = 0
        if made:
            counts["perturbed_samples"] += 1
            counts["perturbations"] += made
            counts["short"] += k - made
        return bool(made)

    counts["unchangeable"] += draw_until(rng, len(samples), target, attempt, lambda: len(edits.touched()) >= target)
    counts["changed"] = len(edits.touched())
    return edits, dict(counts)


def perturb_words(
    candidates: Sequence[int], k: int, rng: np.random.Generator, attempt: Callable[[int], bool]
) -> int:
    """Try ``attempt(i)`` on the candidates in random order until ``k`` succeed; the number that did."""
    made = 0

    def one(j: int) -> bool:
        nonlocal made
        if attempt(candidates[j]):
            made += 1
            return True
        return False

    draw_until(rng, len(candidates), k, one, lambda: made == k)
    return made


class SamplePerturbation(Shift):
    """Base of ``char_perturbation`` and ``word_perturbation``: :meth:`perturb` one sample, the budget here.

    Subclasses redeclare ``kind`` as a ``Literal`` of their kinds.
    """

    family = "text"
    tallies_help: ClassVar[dict[str, str]] = {"kept": KEPT_HELP}
    factors = frozenset({"text"})
    #: ``render: true`` redraws words: a build tests them for the redrawn-word cue (:mod:`dogood.measures.word_style`).
    render_cues = frozenset({"word_style"})
    max_word_length: ClassVar[int] = MAX_WORD_LENGTH
    #: Severity levels (:mod:`dogood.shifts.levels`): the share of eligible words changed, and the perturbations a
    #: sample may take (the paper's PPS 1 to 4, so that a page's samples do not cap the share); measured by the
    #: share of words whose text changed.
    severities: ClassVar[dict[int, dict]] = {1: {"fraction": 0.05, "per_sample": 1}, 2: {"fraction": 0.1, "per_sample": 1},
                                             3: {"fraction": 0.2, "per_sample": 2}, 4: {"fraction": 0.3, "per_sample": 3},
                                             5: {"fraction": 0.5, "per_sample": 4}}

    #: ``style`` came after the first configs: left out of the seed and provenance at ``dogood``, so they keep
    #: their bytes.
    later_params: ClassVar[dict] = {"style": "dogood"}

    class Params(params.Params):
        kind: params.Text = Field("", description="the perturbation")
        per_sample: params.Integer = Field(1, ge=1, description="perturbations per sample, at most (the paper's PPS: 1 "
                                                                "to 4)")
        fraction: params.Real = Field(0.1, ge=0, le=1, description=(
            "share of the eligible words changed (Do-GOOD: 0.1), reached sample by sample"))
        labels: params.OptionalNames = Field(None, description="entity labels whose words are eligible (null: all words)")
        render: params.Flag = Field(False, description="redraw the changed words in the page image and erase deleted "
                                                       "ones (false: the image keeps the original text)")

    def perturb(self, doc: Document, sample: Sequence[int], k: int, rng: np.random.Generator, edits: Edits) -> int:
        """Record at most ``k`` perturbations of ``sample``'s words in ``edits``; how many were made."""
        raise NotImplementedError

    def plain(self, doc: Document, i: int) -> tuple[str, str, str] | None:
        """Word ``i`` split into ``(prefix, core, suffix)``, or ``None`` when its core must be left alone."""
        parts = split_word(doc.words[i].text)
        return None if core_problem(parts[1], self.max_word_length) else parts

    def replace_cores(self, doc: Document, sample: Sequence[int], k: int, rng: np.random.Generator, edits: Edits,
                      new_core: Callable[[str], str | None]) -> int:
        """Give up to ``k`` words of ``sample`` (drawn in random order) the core ``new_core(core)``, their
        punctuation kept; words left alone or with no new core (``None`` or the same) are passed over."""
        def attempt(i: int) -> bool:
            parts = self.plain(doc, i)
            if parts is None:
                return False
            prefix, core, suffix = parts
            new = new_core(core)
            if new is None or new == core:
                return False
            edits.replace[i] = prefix + new + suffix
            return True

        return perturb_words(sample, k, rng, attempt)

    def apply(self, doc: Document, rng: np.random.Generator) -> Outcome:
        self.prepare()
        guard = redraw_guard(doc, self.render and self.draws())
        edits, counts = perturb_samples(
            doc, rng, fraction=self.fraction, per_sample=self.per_sample, labels=self.labels,
            perturb=lambda sample, k, rng, edits: self.perturb(doc, sample, k, rng, edits),
            max_word_length=self.max_word_length, count_problems=self.style != "paper", guard=guard,
        )
        counts.update(self.extra_counts(edits))
        out, changed = apply_edits(doc, edits)
        if self.render:
            out = redraw_edits(out, doc, edits, changed)
        return Outcome(out, counts, kept_tallies(guard))

    def draws(self) -> bool:
        """Whether the kind draws new text on the page (with ``render``); one that only erases words does not."""
        return True

    def extra_counts(self, edits: Edits) -> dict[str, int]:
        """Counts a subclass adds from the edits (none by default)."""
        return {}
