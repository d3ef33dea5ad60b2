"""Which words a text shift may change: by entity label, role (key, value, background), answer, neighbourhood.

Only token words (non-blank text) are ever eligible, and never a word that
spells an answer of one of the document's questions (DocVQA-T shifts the
text around the answers). On FUNSD the form-attack paper's roles are:
**background** words of ``other`` and ``header`` entities and words in no
entity (a document with no entities, e.g. RVL-CDIP OCR words, is all
background), **keys** ``question`` entities, **values** ``answer`` entities.
How many of them change is :mod:`dogood.language.budget`'s business.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from dogood.core.document import Document

#: Entity labels whose words are background on FUNSD (words in no entity are background too).
BACKGROUND_LABELS = ("other", "header")


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


def background_words(doc: Document, labels: Collection[str] = BACKGROUND_LABELS) -> list[int]:
    """Token words (non-blank) that are background: in an entity labelled one of ``labels``, or in no entity."""
    owners = word_labels(doc)
    allowed = set(labels)
    return [i for i, w in enumerate(doc.words) if w.text.strip() and (owners[i] is None or owners[i] in allowed)]


def value_neighbours(doc: Document, value_labels: Collection[str] = ("answer",), r: float = 0.02, n: int = 2) -> set[int]:
    """Words that are neighbours of a value (not the value words themselves); form-attack paper, Neighbor Shuffle.

    A word is a neighbour of a value entity when its box overlaps the value's
    box (the union of its words) grown on every side by ``r`` times the page
    width (horizontally) and height (vertically), or when it is one of the
    ``n`` token words just before or after the value in the word order. The
    paper asks for IoU > 0.5 with the grown box; a word rarely has that much
    IoU with a zone larger than itself, so any overlap counts here, which
    protects at least the paper's neighbours. The word order stands in for
    the paper's Tesseract reading order (FUNSD's order follows its entities).
    """
    boxes = doc.boxes
    tokens = [i for i, w in enumerate(doc.words) if w.text.strip()]
    place = {i: k for k, i in enumerate(tokens)}
    dx, dy = r * doc.width, r * doc.height
    found: set[int] = set()
    value_words: set[int] = set()
    for ent in doc.entities:
        if ent.label not in value_labels or not ent.word_ids:
            continue
        value_words.update(ent.word_ids)
        x0, y0, x1, y1 = doc.entity_box(ent)
        hit = (boxes[:, 0] <= x1 + dx) & (boxes[:, 2] >= x0 - dx) & (boxes[:, 1] <= y1 + dy) & (boxes[:, 3] >= y0 - dy)
        found.update(int(i) for i in np.flatnonzero(hit))
        ks = [place[i] for i in ent.word_ids if i in place]
        if ks and n > 0:
            lo, hi = min(ks), max(ks)
            found.update(tokens[max(0, lo - n):lo])
            found.update(tokens[hi + 1:hi + 1 + n])
    return found - value_words


def text_samples(doc: Document, labels: Collection[str] | None = None) -> list[list[int]]:
    """The document's samples (Moradi & Samwald's sentences): lists of eligible token word indices, in reading order.

    One sample per entity with eligible words (its words in entity order);
    eligible words in no entity form one sample per text line: consecutive
    words that share a line (vertical overlap of at least half the smaller
    height, no step back to the left).
    """
    eligible = eligible_words(doc, labels)
    allowed = set(eligible)
    samples: list[list[int]] = []
    in_entity: set[int] = set()
    for ent in doc.entities:
        ids = [i for i in ent.word_ids if i in allowed]
        in_entity.update(ent.word_ids)
        if ids:
            samples.append(ids)
    line: list[int] = []
    for i in eligible:
        if i in in_entity:
            continue
        if line and not _same_line(doc.words[line[-1]].box, doc.words[i].box):
            samples.append(line)
            line = []
        line.append(i)
    if line:
        samples.append(line)
    return samples


def _same_line(a, b) -> bool:
    overlap = min(a[3], b[3]) - max(a[1], b[1])
    smaller = min(a[3] - a[1], b[3] - b[1])
    return b[0] >= a[0] and overlap >= 0.5 * max(smaller, 1)
