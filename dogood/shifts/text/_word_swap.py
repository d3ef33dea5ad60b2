"""What the Do-GOOD word swaps share (section 3.2, after TextAttack's augmenters): one word in, one word out.

TextAttack's transformations act on a whole ``AttackedText`` and draw
randomness from Python's ``random`` and numpy's global state. dogood asks a
transformation for *all* candidates of one word (``_get_replacement_words``,
deterministic) and picks one with the shift's ``numpy.random.Generator``
(:func:`dogood.language.chars.pick`), so output depends only on the seed.
:class:`WordSwapShift` does the rest: it splits a word into leading
punctuation, core and trailing punctuation (``"Date:"`` -> ``"Date"`` +
``":"``), swaps the core only, keeps one word in and one word out (boxes and
labels stay), and leaves unchanged, and counts, words it cannot change:
blank, no letter or digit, a non-Latin script, longer than
:attr:`WordSwapShift.max_word_length`, or no candidate.

``style: repo`` does what Do-GOOD's scripts (MAEHCM/Do-GOOD) do instead: each
word alone goes through TextAttack's augmentation loop as the scripts build
it (``Augmenter(transformation, constraints=[RepeatModification(),
StopwordModification()], pct_words_to_swap=p)`` called on the word's text):
TextAttack splits the text into its words (``"12/05/98"`` is three),
``max(int(p * words), 1)`` of them are swapped one after the other, each
among all candidates TextAttack's own transformation gives under those
constraints, until none is left. The draws are the shift's generator's
instead of Python's and numpy's global state (a transformation that draws one
candidate per word, ``random_one``, is asked for all of them and one word,
then one of its candidates, is drawn). The scripts attack every word, so
``style: repo`` configs set ``fraction: 1.0``; the RVL-CDIP script leaves
words of more than 10 characters alone (``max_chars: 10``). What each
script differs in is in docs/do-good.md.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field

from dogood.core.document import Document
from dogood.language.budget import change_fraction
from dogood.language.edits import kept_tallies, redraw_guard, with_texts
from dogood.language.lexicons import import_textattack
from dogood.language.words import MAX_WORD_LENGTH, is_latin, split_word
from dogood.shifts import params
from dogood.shifts.base import KEPT_HELP, Outcome, Shift


class WordSwapShift(Shift):
    """Base of the word swaps: change ``fraction`` of the eligible words, one word at a time.

    Subclasses set ``name``, extend :class:`WordSwapShift.Params` with their
    own parameters and implement :meth:`swap`. :meth:`prepare` imports
    TextAttack (quietly, offline) unless ``uses_textattack`` is false.
    """

    family = "text"
    tallies_help: ClassVar[dict[str, str]] = {"kept": KEPT_HELP}
    factors = frozenset({"text"})
    #: ``render: true`` redraws words: a build tests them for the redrawn-word cue (:mod:`dogood.measures.word_style`).
    render_cues = frozenset({"word_style"})
    max_word_length: ClassVar[int] = MAX_WORD_LENGTH
    uses_textattack: ClassVar[bool] = True
    #: Severity levels (:mod:`dogood.shifts.levels`): the share of eligible words changed; measured by the share of
    #: words whose text changed.
    severities: ClassVar[dict[int, dict]] = {1: {"fraction": 0.05}, 2: {"fraction": 0.1}, 3: {"fraction": 0.2},
                                             4: {"fraction": 0.3}, 5: {"fraction": 0.5}}

    #: ``style: repo``: the transformation the scripts build draws one candidate per word (``random_one``).
    repo_random_one: ClassVar[bool] = False

    class Params(params.Params):
        fraction: params.Real = Field(0.1, ge=0, le=1, description="share of the eligible words changed (paper: 0.1)")
        labels: params.OptionalNames = Field(None, description="entity labels whose words are eligible (null: all words)")
        render: params.Flag = Field(False, description="redraw the changed words in the page image (false: text only)")
        style: Literal["dogood", "repo"] = Field("dogood", description=(
            "dogood: dogood's swap of a word's core; repo: Do-GOOD's scripts (MAEHCM/Do-GOOD): each word alone "
            "through TextAttack's augmenter, its transformation and constraints as the scripts build them"))
        pct_words_to_swap: params.Real = Field(1.0, gt=0, le=1, description=(
            "style repo: TextAttack's pct_words_to_swap for one word's text (Do-GOOD's FUNSD BERT and embedding "
            "script: 0.1; its other scripts: 1.0)"))
        max_chars: Annotated[params.Integer | None, params.Expect("null or an integer")] = Field(None, ge=1, description=(
            "style repo: words longer than this are left alone (Do-GOOD's RVL-CDIP script: 10; null: none)"))

    #: Added with issue 38: at these values a config's seeds and provenance are what they were.
    later_params: ClassVar[dict] = {"style": "dogood", "pct_words_to_swap": 1.0, "max_chars": None}

    def requirements(self) -> tuple[str, ...]:
        needs = super().requirements()
        if self.style == "repo" and "module:textattack[text]" not in needs:
            return (*needs, "module:textattack[text]")
        return needs

    def prepare(self) -> None:
        if self.uses_textattack or self.style == "repo":
            import_textattack()

    def repo_transformation(self, rng: np.random.Generator):
        """``style: repo``: the TextAttack transformation Do-GOOD's scripts build for this attack (all candidates
        of a word; ``rng`` for one that draws values, such as number change)."""
        raise NotImplementedError

    def card_notes(self, schema: str = "funsd") -> list[str]:
        if self.style != "repo":
            return []
        cap = f"; words over {self.max_chars} characters left alone" if self.max_chars is not None else ""
        return [f"`{self.name}`, style `repo`: as Do-GOOD's scripts (MAEHCM/Do-GOOD) attack text: each word alone "
                f"through TextAttack's augmenter (pct_words_to_swap {self.pct_words_to_swap}, RepeatModification and "
                f"StopwordModification), on {self.fraction:.0%} of the words (the scripts: every word){cap}. "
                "Differs in: draws from the config's seed (not the global random state), and "
                + self.repo_differences(schema)]

    def repo_differences(self, schema: str) -> str:
        """``style: repo``: the card's words on what else differs from the scripts (see docs/do-good.md)."""
        return "the words are the source's words (the LayoutLMv3 FUNSD script attacks each word's first BPE piece)."

    def repo_change_word(self, text: str, rng: np.random.Generator) -> str | None:
        """``style: repo``: the word's text after TextAttack's augmentation loop, or ``None`` when it did not change."""
        return repo_augment(text, self.repo_transformation(rng), rng, self.pct_words_to_swap, self.max_chars,
                            self.repo_random_one)

    def change_word(self, text: str, rng: np.random.Generator) -> str | None:
        """The new text of a whole word (punctuation kept), or ``None`` when it cannot change."""
        if self.style == "repo":
            return self.repo_change_word(text, rng)
        if len(text) > self.max_word_length:
            return None
        lead, core, trail = split_word(text)
        if not core or not is_latin(core, ascii_digits=True):
            return None
        new = self.swap(core, rng)
        if not new or new == core:
            return None
        return lead + new + trail

    def apply(self, doc: Document, rng: np.random.Generator) -> Outcome:
        self.prepare()
        guard = redraw_guard(doc, self.render)
        changes, counts = change_fraction(
            doc, rng, self.fraction, lambda i, r: self.change_word(doc.words[i].text, r), self.labels, guard
        )
        return Outcome(with_texts(doc, changes, self.render), counts, kept_tallies(guard))


@lru_cache(maxsize=1)
def _repo_constraints() -> tuple:
    """The pre-transformation constraints of Do-GOOD's scripts: TextAttack's RepeatModification and
    StopwordModification (its default English stopwords)."""
    from textattack.constraints.pre_transformation import RepeatModification, StopwordModification

    return (RepeatModification(), StopwordModification())


def _pick_text(options: list, rng: np.random.Generator, per_word: bool):
    """One of TextAttack's transformed texts, uniformly (``random.choice`` in its augmenter); ``per_word``: a
    modified word first, then one of its candidates, as a ``random_one`` transformation offers one per word."""
    if not per_word:
        return options[int(rng.integers(len(options)))]
    by_word: dict[int, list] = {}
    for option in options:
        key = min(option.attack_attrs.get("newly_modified_indices", {0}) or {0})
        by_word.setdefault(key, []).append(option)
    words = sorted(by_word)
    chosen = by_word[words[int(rng.integers(len(words)))]]
    return chosen[int(rng.integers(len(chosen)))]


def repo_augment(text: str, transformation, rng: np.random.Generator, pct_words_to_swap: float = 1.0,
                 max_chars: int | None = None, per_word: bool = False) -> str | None:
    """One word through TextAttack's augmentation loop as Do-GOOD's scripts run it (``Augmenter.augment`` with
    RepeatModification and StopwordModification), the draws from ``rng``: the new text, or ``None`` when it did
    not change (or is longer than ``max_chars``). ``per_word``: ``transformation`` offers every candidate of a word
    where the scripts' drew one (``random_one``)."""
    if max_chars is not None and len(text) > max_chars:
        return None
    from textattack.shared import AttackedText

    constraints = _repo_constraints()
    current = AttackedText(text)
    target = max(int(pct_words_to_swap * len(current.words)), 1)
    swapped = 0
    while swapped < target:
        options = transformation(current, constraints)
        if not options:
            break
        current = _pick_text(options, rng, per_word)
        swapped = max(len(current.attack_attrs["modified_indices"]), swapped + 1)
    new = current.printable_text()
    return new if new != text and new.strip() else None
