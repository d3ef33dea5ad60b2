"""The share of words a text shift changes, and the words a shift that redraws may not take."""

from __future__ import annotations

import numpy as np

from dogood.core.document import Document, PageImage, Word
from dogood.language.budget import change_fraction, change_words


def page(n=20):
    words = tuple(Word(f"word{k}", (10 + 30 * k, 10, 35 + 30 * k, 20)) for k in range(n))
    return Document("b", PageImage.from_array(np.full((40, 40 + 30 * n), 250, np.uint8)), words)


class Guard:
    """Keeps the even words as printed; turns down new texts longer than 6 characters."""

    def __init__(self):
        self.asked = []

    def kept(self, i):
        self.asked.append(i)
        return "handwriting" if i % 2 == 0 else None

    def fits(self, i, text):
        return len(text) <= 6


def test_the_budget_is_met_from_the_words_a_guard_lets_change():
    doc = page()
    guard = Guard()
    changes, counts = change_fraction(doc, np.random.default_rng(0), 0.25, lambda i, rng: f"w{i}", guard=guard)
    assert len(changes) == 5 and counts["changed"] == 5  # round(0.25 * 20), all from the odd words
    assert all(i % 2 for i in changes)
    assert counts["unchangeable"] == sum(1 for i in guard.asked if i % 2 == 0)
    too_long, _ = change_words(doc, np.random.default_rng(0), 0.25, lambda i, rng: f"longer{i}", range(20), guard)
    assert too_long == {}  # every new text turned down


def test_without_a_guard_the_draws_are_as_before():
    doc = page()
    plain, counts = change_fraction(doc, np.random.default_rng(3), 0.25, lambda i, rng: f"w{i}")
    again, _ = change_words(doc, np.random.default_rng(3), 0.25, lambda i, rng: f"w{i}", list(range(20)), None)
    assert plain == again and counts == {"eligible": 20, "changed": 5, "unchangeable": 0}
