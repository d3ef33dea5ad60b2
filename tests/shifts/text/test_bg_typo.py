"""Form-attack text shifts on real FUNSD pages and hand-made forms: what changes, what never does."""

from __future__ import annotations

import numpy as np
from form_attack_checks import BACKGROUND, changed_words, labels_of, levenshtein

from dogood.core.schema import iob_tags
from dogood.language.chars import typo
from dogood.language.selection import background_words
from dogood.shifts import BackgroundTypo


def test_bg_typo_changes_only_background_at_rate_p_by_one_edit(funsd_test):
    shift = BackgroundTypo(p=0.1)
    eligible = changed = 0
    for k, doc in enumerate(funsd_test.load(i) for i in funsd_test.ids()):  # all 50 pages: ~2,800 background words
        out, counts, _ = shift.apply(doc, np.random.default_rng(k))
        idx = changed_words(doc, out)
        labels = labels_of(doc)
        assert all(labels[i] in BACKGROUND for i in idx)
        assert counts["changed"] == len(idx) and counts["eligible"] == len(background_words(doc))
        for i in idx:
            a, b = doc.words[i].text, out.words[i].text
            d = levenshtein(a, b)
            assert d == 1 or (d == 2 and sorted(a) == sorted(b)), (a, b)
        assert iob_tags(out) == iob_tags(doc) and out.entities == doc.entities
        eligible += counts["eligible"]
        changed += counts["changed"] + counts["unchangeable"]
    assert eligible > 2000
    assert abs(changed / eligible - 0.1) <= 0.02  # selected each with probability p (binomial sd ~0.006)


def test_typo_kinds_keep_punctuation():
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(200):
        new, kind = typo("DATE:", rng)
        seen.add(kind)
        assert new.endswith(":") and new != "DATE:"
    assert seen == {"swap", "delete", "add", "replace"}
    assert typo("---", rng) is None
    assert typo("a", rng)[1] in ("add", "replace")  # cannot swap or delete a single letter
