"""Which words a text shift changes: a fraction of the eligible token words, drawn with the shift's generator.

Do-GOOD (section 3.2) and the TextAttack augmenters change a fixed fraction
of a document's words (the paper: 10%); the form-attack paper selects each
background word with probability p. :func:`change_fraction` implements the
first and counts what happened, so a data card can report the measured
fraction: ``eligible`` (token words whose entity label is allowed),
``changed``, and ``unchangeable`` (drawn but the shift could not change
them: no candidate, a non-Latin word, a number with no digits...). A word
that cannot be changed is replaced in the draw by the next one, so the
changed fraction meets the knob whenever enough eligible words can change.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

import numpy as np

from dogood.document import Document

#: Entity labels a text shift may touch when a recipe says nothing.
ALL_LABELS = ("header", "question", "answer", "other")


def word_labels(doc: Document) -> list[str | None]:
    """Each word's entity label (``None`` for a word in no entity)."""
    return [e.label if e is not None else None for e in doc.word_entity()]


def eligible_words(doc: Document, labels: Collection[str] | None = None) -> list[int]:
    """Indices of the token words (non-blank text) whose entity label is in ``labels``.

    ``labels=None`` allows every word, in an entity or not. A document with
    no entities (RVL-CDIP OCR words) has every token word eligible.
    """
    owners = word_labels(doc)
    allowed = None if labels is None or not doc.entities else set(labels)
    return [i for i, w in enumerate(doc.words)
            if w.text.strip() and (allowed is None or owners[i] in allowed)]


def change_fraction(
    doc: Document,
    rng: np.random.Generator,
    fraction: float,
    change: Callable[[int, np.random.Generator], str | None],
    labels: Collection[str] | None = None,
) -> tuple[dict[int, str], dict[str, int]]:
    """Draw ``round(fraction * eligible)`` words to change, in a random order, and change them.

    Parameters
    ----------
    doc : the document.
    rng : the shift's generator (all randomness comes from it).
    fraction : share of the eligible words to change, in [0, 1].
    change : ``change(word_index, rng)`` returns the new text, or ``None``
        when the word cannot be changed (it is counted and the next drawn
        word takes its place).
    labels : entity labels whose words are eligible (``None``: all).

    Returns
    -------
    (changes, counts) : ``{word index: new text}`` and
        ``{"eligible", "changed", "unchangeable"}``.
    """
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must be in [0, 1], got {fraction}")
    candidates = eligible_words(doc, labels)
    target = int(round(fraction * len(candidates)))
    changes: dict[int, str] = {}
    unchangeable = 0
    if target:
        for i in rng.permutation(len(candidates)):
            index = candidates[int(i)]
            new = change(index, rng)
            if new is None or new == doc.words[index].text:
                unchangeable += 1
                continue
            changes[index] = new
            if len(changes) == target:
                break
    return changes, {"eligible": len(candidates), "changed": len(changes), "unchangeable": unchangeable}
