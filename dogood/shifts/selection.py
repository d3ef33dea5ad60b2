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
    no entities (RVL-CDIP OCR words) has every token word eligible. Words
    that spell an answer of one of the document's questions are never
    eligible (DocVQA-T shifts the text around the answers, not the answers).
    """
    owners = word_labels(doc)
    allowed = None if labels is None or not doc.entities else set(labels)
    protected = answer_words(doc)
    return [i for i, w in enumerate(doc.words)
            if w.text.strip() and i not in protected and (allowed is None or owners[i] in allowed)]


def _norm(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def answer_words(doc: Document) -> set[int]:
    """Indices of the words that spell an answer of any of the document's questions.

    An answer matches a run of words whose texts, lower-cased and without
    punctuation, equal the answer's whitespace-separated parts (words that
    are only punctuation are passed over, and protected when inside the
    run); every occurrence on the page is protected (the grader accepts any).
    """
    if not doc.qa:
        return set()
    spelled = [(i, n) for i, n in ((i, _norm(w.text)) for i, w in enumerate(doc.words)) if n]
    norms = [n for _, n in spelled]
    found: set[int] = set()
    for qa in doc.qa:
        for answer in qa.answers:
            parts = [p for p in (_norm(t) for t in answer.split()) if p]
            if not parts:
                continue
            k = len(parts)
            for start in range(len(norms) - k + 1):
                if norms[start] == parts[0] and norms[start : start + k] == parts:
                    found.update(range(spelled[start][0], spelled[start + k - 1][0] + 1))
    return found


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
