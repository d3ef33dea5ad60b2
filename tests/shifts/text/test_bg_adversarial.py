"""Form-attack text shifts on real FUNSD pages and hand-made forms: what changes, what never does."""

from __future__ import annotations

import numpy as np
from form_attack_checks import BACKGROUND, changed_words, form, is_paper_value, labels_of

from dogood.core.schema import iob_tags
from dogood.language.selection import background_words, value_neighbours
from dogood.language.values import data_type
from dogood.shifts import BackgroundAdversarial


def test_bg_adversarial_values_follow_the_paper_and_spare_value_neighbours(pages):
    shift = BackgroundAdversarial(p=0.5)
    kinds = set()
    for k, doc in enumerate(pages):
        out, counts, _ = shift.apply(doc, np.random.default_rng(k))
        idx = changed_words(doc, out)
        labels = labels_of(doc)
        tokens = [i for i, w in enumerate(doc.words) if w.text.strip()]
        near = set()
        for ent in doc.entities:
            if ent.label != "answer" or not ent.word_ids:
                continue
            x0, y0, x1, y1 = doc.entity_box(ent)
            dx, dy = 0.02 * doc.width, 0.02 * doc.height
            for i, w in enumerate(doc.words):
                bx0, by0, bx1, by1 = w.box
                if bx0 <= x1 + dx and bx1 >= x0 - dx and by0 <= y1 + dy and by1 >= y0 - dy:
                    near.add(i)
            ks = [tokens.index(i) for i in ent.word_ids if i in tokens]
            if ks:
                near.update(tokens[max(0, min(ks) - 2):min(ks)] + tokens[max(ks) + 1:max(ks) + 3])
        assert not near & set(idx)
        assert counts["protected"] == len([i for i in background_words(doc) if i in near])
        for i in idx:
            assert labels[i] in BACKGROUND
            new = out.words[i].text
            assert is_paper_value(new), new
            kinds.add(data_type(new))
        assert iob_tags(out) == iob_tags(doc)
    assert kinds == {"date", "number", "money"}


def test_bg_adversarial_on_a_hand_made_form():
    doc = form()
    out, counts, _ = BackgroundAdversarial(p=1.0).apply(doc, np.random.default_rng(0))
    # The keys touch their values' zones; "INVOICE" is two words before the date and "Please remit" two
    # words after the money in the word order; "promptly" and "thanks" are neither (the blank word is no token).
    assert value_neighbours(doc) == {0, 1, 5, 8, 9}
    assert changed_words(doc, out) == [10, 11]
    assert counts == {"eligible": 2, "changed": 2, "unchangeable": 0, "protected": 3}
    assert value_neighbours(doc, n=0) == {1, 5}


def test_with_render_values_the_pages_own_print_spells_are_preferred(funsd_test):
    """With ``render: true``, a word takes the first of up to PRINTED_TRIES random values that the page's own print
    spells (pieced from its letters, not drawn: drawn digits give themselves away more easily); the values are
    still the paper's dates, numbers and money. Without render the first value is written, as before."""
    from dogood.page.render import Redraw
    from dogood.shifts.text.bg_adversarial import PRINTED_TRIES

    assert PRINTED_TRIES > 1
    docs = [funsd_test.load(i) for i in funsd_test.ids()[:50]]
    shares, kinds = {}, set()
    for render in (False, True):
        shift = BackgroundAdversarial(fraction=0.1, render=render)
        changed = pieced = 0
        for k, doc in enumerate(docs):
            out, counts, _ = shift.apply(doc, np.random.default_rng(k))
            guard = Redraw(doc)
            for i in changed_words(doc, out):
                new = out.words[i].text
                assert is_paper_value(new), new
                changed += 1
                pieced += guard.pieced(i, new)
                if render:
                    kinds.add(data_type(new))
        shares[render] = pieced / changed
    assert kinds == {"date", "number", "money"}
    assert shares[False] < 0.05 and shares[True] > 0.1
