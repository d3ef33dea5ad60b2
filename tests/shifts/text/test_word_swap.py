"""TextAttack word swaps (Do-GOOD 3.2, Table 4): embedding, homoglyph, number, character deletion.

Outcomes are checked on real FUNSD test pages: the changed share of eligible
words, what each swap does to a word, that boxes and labels stay, and that the
seed alone decides the output. The counter-fitted embedding is built once per
test session, on GloVe's 10,000 most frequent words, into the session's cache.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from word_swap_checks import NAMES, VOCAB, changed, make

from dogood.core.document import Document, Entity, PageImage, Word
from dogood.language.selection import word_labels
from dogood.language.words import split_word
from dogood.shifts import SHIFTS, make_shift
from dogood.shifts.text.char_deletion import CharacterDeletion
from dogood.shifts.text.embedding_swap import EmbeddingSwap
from dogood.shifts.text.homoglyph_swap import HomoglyphSwap
from dogood.shifts.text.number_swap import NumberSwap


def _awkward_doc() -> Document:
    texts = ["", "   ", "日本語", "Привет", "☐", "x" * 100, "1,234.56", "12/05/98", "a", ":", "Date:",
             "house", "(212)", "café", "Ünïcode", "TELEPHONE", "co-operate", "42"]
    words = tuple(Word(t, (10 * i, 0, 10 * i + 8, 10)) for i, t in enumerate(texts))
    entities = (Entity(0, "question", tuple(range(0, 9))), Entity(1, "answer", tuple(range(9, len(texts)))))
    return Document("awkward", PageImage.from_array(np.full((20, 400), 255, np.uint8)), words, entities)


def test_registered_with_their_parameters():
    for name, cls in [("embedding_swap", EmbeddingSwap), ("homoglyph_swap", HomoglyphSwap),
                      ("number_swap", NumberSwap), ("char_deletion", CharacterDeletion)]:
        assert SHIFTS[name] is cls and cls.family == "text"
        shift = make_shift({"shift": name, "fraction": 0.2, "labels": ["question"]})
        assert shift.fraction == 0.2 and shift.params()["labels"] == ["question"]
    assert EmbeddingSwap().params() == {
        "fraction": 0.1, "labels": None, "max_candidates": 50, "min_cos_sim": 0.8, "skip_stopwords": True,
        "embedding": "counter-fitted-glove", "vocab_size": None, "keep_meaning": True, "render": False,
        "style": "dogood", "pct_words_to_swap": 1.0, "max_chars": None,
    }
    assert "style" not in EmbeddingSwap().recorded_params()  # old configs keep their seeds
    for bad in ({"fraction": 1.5}, {"fraction": -0.1}):
        with pytest.raises(ValueError):
            HomoglyphSwap(**bad)
    with pytest.raises(ValueError):
        NumberSwap(max_change=0)
    with pytest.raises(ValueError):
        EmbeddingSwap(max_candidates=0)


@pytest.mark.parametrize("name", ["embedding_swap", "homoglyph_swap", "char_deletion"])
def test_changes_the_fraction_of_eligible_words(name, docs, vectors):
    shift = make(name)
    totals = np.zeros(2, dtype=int)
    for k, doc in enumerate(docs):
        out = shift(doc, seed=k)
        counts = out.provenance[-1].counts
        assert len(changed(doc, out)) == counts["changed"]
        assert counts["changed"] == round(0.1 * counts["eligible"])  # enough changeable words on every page
        totals += (counts["changed"], counts["eligible"])
    assert abs(totals[0] / totals[1] - 0.1) <= 0.02


@pytest.mark.parametrize("name", NAMES)
def test_keeps_boxes_entities_and_labels(name, docs, vectors):
    shift = make(name, fraction=0.3)
    for k, doc in enumerate(docs[:5]):
        out = shift(doc, seed=k)
        assert changed(doc, out)
        assert len(out.words) == len(doc.words)
        assert [w.box for w in out.words] == [w.box for w in doc.words]
        assert out.entities == doc.entities and word_labels(out) == word_labels(doc)
        assert out.image is doc.image
        assert all(w.text.strip() for i, w in enumerate(out.words) if doc.words[i].text.strip())


@pytest.mark.parametrize("name", NAMES)
def test_the_seed_alone_decides(name, docs, vectors):
    shift = make(name)
    doc = docs[0]
    random.seed(1)
    np.random.seed(1)
    first = shift(doc, seed=7)
    random.seed(2)
    np.random.seed(2)
    again = make(name)(doc, seed=7)
    assert [w.text for w in first.words] == [w.text for w in again.words]
    assert first.provenance == again.provenance
    other = shift(doc, seed=8)
    assert [w.text for w in other.words] != [w.text for w in first.words]


@pytest.mark.parametrize("name", NAMES)
def test_labels_limit_the_eligible_words(name, docs, vectors):
    shift = make(name, fraction=0.5, labels=["question"])
    total = 0
    for k, doc in enumerate(docs[:5]):
        out = shift(doc, seed=k)
        labels = word_labels(doc)
        assert all(labels[i] == "question" for i in changed(doc, out))
        total += len(changed(doc, out))
        questions = sum(1 for w, lab in zip(doc.words, labels) if lab == "question" and w.text.strip())
        assert out.provenance[-1].counts["eligible"] == questions
    assert total > 10


@pytest.mark.parametrize("name", NAMES)
def test_awkward_words_never_crash_and_are_counted(name, vectors):
    doc = _awkward_doc()
    out = make(name, fraction=1.0)(doc, seed=0)
    counts = out.provenance[-1].counts
    assert counts["eligible"] == len(doc.words) - 2  # the blank words are not tokens
    assert counts["changed"] + counts["unchangeable"] == counts["eligible"]
    assert counts["changed"] == len(changed(doc, out)) > 0
    keep = {"", "   ", "日本語", "Привет", "☐", "x" * 100, ":"}
    assert all(out.words[i].text == w.text for i, w in enumerate(doc.words) if w.text in keep)


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.text(max_size=14), min_size=1, max_size=10),
    seed=st.integers(0, 2**32 - 1),
    name=st.sampled_from(NAMES),
)
def test_any_text_keeps_words_boxes_and_labels(texts, seed, name, vectors):
    words = tuple(Word(t, (i, 0, i + 1, 1)) for i, t in enumerate(texts))
    entities = (Entity(0, "answer", tuple(range(0, len(texts), 2))),)
    doc = Document("any", PageImage.from_array(np.full((2, 20), 255, np.uint8)), words, entities)
    out = make(name, fraction=1.0)(doc, seed=seed)
    counts = out.provenance[-1].counts
    assert [w.box for w in out.words] == [w.box for w in doc.words] and out.entities == doc.entities
    assert counts["eligible"] == sum(1 for t in texts if t.strip())
    assert counts["changed"] + counts["unchangeable"] == counts["eligible"]
    assert len(changed(doc, out)) == counts["changed"]
    assert all(doc.words[i].text.strip() and out.words[i].text.strip() for i in changed(doc, out))


def test_empty_document_is_counted_not_skipped():
    doc = Document("empty", PageImage.from_array(np.full((20, 20), 255, np.uint8)))
    for name in ("homoglyph_swap", "number_swap", "char_deletion"):
        out = make(name)(doc, seed=0)
        assert out.provenance[-1].counts == {"eligible": 0, "changed": 0, "unchangeable": 0}


def test_render_redraws_only_changed_words(docs, monkeypatch):
    import dogood.page.render

    calls = []

    def fake_render(doc, indices, original=None):
        calls.append((list(indices), original))
        return doc

    monkeypatch.setattr(dogood.page.render, "render_words", fake_render)
    doc = docs[0]
    out = HomoglyphSwap(render=True)(doc, seed=0)
    assert calls == [(changed(doc, out), doc)]
    HomoglyphSwap()(doc, seed=0)
    assert len(calls) == 1


def test_split_word_keeps_punctuation():
    assert split_word("Date:") == ("", "Date", ":")
    assert split_word("(212)") == ("(", "212", ")")
    assert split_word("12/05/98") == ("", "12/05/98", "")
    assert split_word("☐") == ("☐", "", "")
    assert split_word("") == ("", "", "")


# -- style: repo (Do-GOOD's scripts) ---------------------------------------------------------------------------
def _repo_augmenter(transformation, pct=1.0):
    """TextAttack's Augmenter as Do-GOOD's scripts build it (test/ner/text_shift/generate_textattack_funsd.py,
    test/dic/demo_cdip_v1.py): the transformation alone, RepeatModification and StopwordModification."""
    from textattack.augmentation import Augmenter
    from textattack.constraints.pre_transformation import RepeatModification, StopwordModification
    from textattack.transformations import CompositeTransformation

    return Augmenter(transformation=CompositeTransformation([transformation]),
                     constraints=[RepeatModification(), StopwordModification()],
                     pct_words_to_swap=pct, transformations_per_example=1)


def _repo_loop(augmenter, words, seed=0, max_chars=None):
    """The scripts' per-word loop: every non-blank word alone through ``augmenter.augment``, seeded as a script
    run would be (Python's and numpy's global state); which words changed."""
    random.seed(seed)
    np.random.seed(seed)
    out = []
    for text in words:
        if max_chars is not None and len(text) > max_chars:
            out.append(False)
            continue
        out.append(augmenter.augment(text)[0] != text)
    return out


@pytest.fixture(scope="module")
def funsd_words(funsd_test):
    pages = [funsd_test.load(i) for i in funsd_test.ids()]
    return pages, [w.text for d in pages for w in d.words if w.text.strip()]


def _repo_changed(name, pages, **params):
    shift = make(name, style="repo", fraction=1.0, **params)
    shift.prepare()
    flags = []
    for k, doc in enumerate(pages):
        out = shift(doc, k)
        flags += [a.text != b.text for a, b in zip(doc.words, out.words) if a.text.strip()]
    return np.array(flags)


def test_repo_char_deletion_changes_what_the_scripts_loop_changes_on_funsd_test(funsd_words):
    from textattack.transformations import WordSwapRandomCharacterDeletion

    pages, words = funsd_words
    ours = _repo_changed("char_deletion", pages)
    theirs = np.array(_repo_loop(_repo_augmenter(WordSwapRandomCharacterDeletion()), words))
    assert len(ours) == len(theirs) == 8707
    assert int(ours.sum()) == int(theirs.sum()) == 6832  # 78.5%: one deletion a word, stopwords and 1-letter words kept
    assert (ours == theirs).all()  # the same words (whether a word can change does not depend on the draws)


def test_repo_homoglyph_and_number_swaps_change_the_share_the_scripts_loop_changes(funsd_words):
    from textattack.transformations import WordSwapChangeNumber

    from dogood.shifts.text.homoglyph_swap import _textattack_homoglyphs

    pages, words = funsd_words
    homoglyph = _textattack_homoglyphs().transformations[0]  # TextAttack's own table (its file read aside)
    ours, theirs = _repo_changed("homoglyph_swap", pages), np.array(_repo_loop(_repo_augmenter(homoglyph), words))
    assert (ours == theirs).all() and 0.45 < ours.mean() < 0.55
    ours = _repo_changed("number_swap", pages)
    runs = [np.array(_repo_loop(_repo_augmenter(WordSwapChangeNumber()), words, seed)) for seed in (0, 1)]
    # a draw equal to the number leaves the word unchanged, so a few words differ from run to run; the share agrees
    # within its sampling error (binomial over ~1,100 numbers)
    for theirs in runs:
        assert abs(int(ours.sum()) - int(theirs.sum())) <= 3 * np.sqrt(theirs.sum()), (ours.sum(), theirs.sum())
        assert (ours ^ theirs).sum() < 0.06 * theirs.sum()  # small numbers (range {1, 2}) often come back equal


def test_repo_embedding_swap_changes_the_share_the_scripts_loop_changes(funsd_words, vectors):
    from dogood.shifts.text.embedding_swap import _tools

    pages, words = funsd_words
    ours = _repo_changed("embedding_swap", pages, pct_words_to_swap=0.1)
    # the FUNSD script's augmenter (pct 0.1, WordSwapEmbedding's 15 neighbours) over the same vectors
    from textattack.transformations import WordSwapEmbedding

    swap = WordSwapEmbedding(max_candidates=15, embedding=_tools("counter-fitted-glove", VOCAB, 15).transformation.embedding)
    theirs = np.array(_repo_loop(_repo_augmenter(swap, pct=0.1), words))
    assert (ours == theirs).all() and 0.3 < ours.mean() < 0.8


def test_repo_style_edits_as_textattack_does():
    doc = _awkward_doc()
    shift = make("char_deletion", style="repo", fraction=1.0)
    shift.prepare()
    out = shift(doc, 3)
    new = {a.text: b.text for a, b in zip(doc.words, out.words)}
    assert new["a"] == "a" and new[":"] == ":" and new["42"] in ("4", "2")
    assert len(new["Date:"]) == 4 and new["Date:"].endswith(":")  # TextAttack's word is "Date"; ":" stays
    # each of its three TextAttack words loses one character
    assert new["12/05/98"].count("/") == 2 and len(new["12/05/98"]) == len("12/05/98") - 3
    capped = make("char_deletion", style="repo", fraction=1.0, max_chars=10)
    out = capped(doc, 3)
    assert out.words[5].text == "x" * 100 and out.words[15].text != "TELEPHONE"
    # the draws come from the seed alone
    assert [w.text for w in shift(doc, 3).words] == [w.text for w in make(
        "char_deletion", style="repo", fraction=1.0)(doc, 3).words]
    assert shift.recorded_params()["style"] == "repo" and "repo" in shift.card_notes()[0]
