"""TextAttack word swaps (Do-GOOD 3.2, Table 4): embedding, homoglyph, number, character deletion.

Outcomes are checked on real FUNSD test pages: the changed share of eligible
words, what each swap does to a word, that boxes and labels stay, and that the
seed alone decides the output. The counter-fitted embedding is built once per
test session, on GloVe's 10,000 most frequent words, into the session's cache.
"""

from __future__ import annotations

import random
import re
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dogood.core.errors import SourceError  # noqa: E402
from dogood.language.lexicons import import_textattack  # noqa: E402

try:
    import_textattack()  # quietly, offline; needs NLTK's stopwords (NLTK_DATA or $DOGOOD_DATA_DIR/nltk_data)
except SourceError as exc:
    pytest.skip(f"TextAttack cannot be used here: {exc}", allow_module_level=True)

from dogood.core.document import Document, Entity, PageImage, Word  # noqa: E402
from dogood.language.embeddings import (  # noqa: E402
    ANTONYM_FILES,
    SYNONYM_FILES,
    counter_fitted_glove,
    glove_vectors,
    WordVectors,
    nearest_neighbours,
    read_pairs,
    save_word_vectors,
    similar_pairs,
)
from dogood.core.paths import cache_dir  # noqa: E402
from dogood.shifts import SHIFTS, make_shift  # noqa: E402
from dogood.language.words import split_word  # noqa: E402
from dogood.shifts.text.char_deletion import CharacterDeletion  # noqa: E402
from dogood.shifts.text.embedding_swap import EmbeddingSwap  # noqa: E402
from dogood.shifts.text.homoglyph_swap import HOMOGLYPHS, HomoglyphSwap  # noqa: E402
from dogood.shifts.text.number_swap import NumberSwap  # noqa: E402
from dogood.language.selection import word_labels  # noqa: E402

VOCAB = 10_000
NAMES = ("embedding_swap", "homoglyph_swap", "number_swap", "char_deletion")


def make(name: str, **params):
    if name == "embedding_swap":
        params.setdefault("vocab_size", VOCAB)
    return SHIFTS[name](**params)


@pytest.fixture(scope="session")
def docs(funsd_test):
    return [funsd_test.load(i) for i in funsd_test.ids()[:10]]


@pytest.fixture(scope="session")
def vectors(data_dir):
    return counter_fitted_glove(VOCAB)


def changed(before: Document, after: Document) -> list[int]:
    return [i for i, (a, b) in enumerate(zip(before.words, after.words)) if a.text != b.text]


def test_registered_with_their_parameters():
    for name, cls in [("embedding_swap", EmbeddingSwap), ("homoglyph_swap", HomoglyphSwap),
                      ("number_swap", NumberSwap), ("char_deletion", CharacterDeletion)]:
        assert SHIFTS[name] is cls and cls.family == "text"
        shift = make_shift({"shift": name, "fraction": 0.2, "labels": ["question"]})
        assert shift.fraction == 0.2 and shift.params()["labels"] == ["question"]
    assert EmbeddingSwap().params() == {
        "fraction": 0.1, "labels": None, "max_candidates": 50, "min_cos_sim": 0.8, "skip_stopwords": True,
        "embedding": "counter-fitted-glove", "vocab_size": None, "render": False,
    }
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


def test_number_swap_fraction_is_capped_by_the_numbers_on_the_page(funsd_test):
    shift = NumberSwap(fraction=0.1)
    rich = np.zeros(2, dtype=int)
    for k, doc_id in enumerate(funsd_test.ids()):
        doc = funsd_test.load(doc_id)
        out = shift(doc, seed=k)
        counts = out.provenance[-1].counts
        target = round(0.1 * counts["eligible"])
        numbers = sum(bool(re.search(r"(?<![^\W_])\d+(?![^\W_])", w.text)) for w in doc.words)
        assert counts["changed"] <= target
        if numbers >= 2 * target:
            assert counts["changed"] == target
            rich += (counts["changed"], counts["eligible"])
    assert rich[1] > 1000 and abs(rich[0] / rich[1] - 0.1) <= 0.02


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


def _maps_back(glyph: str, original: str) -> bool:
    """True when NFKC folds ``glyph`` to ``original`` or Unicode lists them as confusable."""
    if unicodedata.normalize("NFKC", glyph) == original:
        return True
    confusables = pytest.importorskip("confusable_homoglyphs.confusables")
    found = confusables.is_confusable(glyph, greedy=True, preferred_aliases=[])
    return bool(found) and original in {h["c"] for h in found[0]["homoglyphs"]}


def test_homoglyph_table_is_non_ascii_look_alikes():
    assert set(HOMOGLYPHS) == set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    for plain, glyph in HOMOGLYPHS.items():
        assert len(glyph) == 1 and not glyph.isascii() and _maps_back(glyph, plain), (plain, glyph)


def test_homoglyph_swap_writes_look_alikes(docs):
    for k, doc in enumerate(docs):
        out = HomoglyphSwap(fraction=0.2)(doc, seed=k)
        for i in changed(doc, out):
            old, new = doc.words[i].text, out.words[i].text
            assert old.isascii() and not new.isascii() and len(new) == len(old)
            diff = [(a, b) for a, b in zip(old, new) if a != b]
            assert len(diff) == 1 and _maps_back(diff[0][1], diff[0][0])


def test_number_swap_changes_numbers_only(funsd_test):
    from word2number import w2n

    seen = 0
    for k, doc_id in enumerate(funsd_test.ids()[:20]):
        doc = funsd_test.load(doc_id)
        out = NumberSwap(fraction=0.3)(doc, seed=k)
        for i in changed(doc, out):
            old, new = doc.words[i].text, out.words[i].text
            if re.search(r"\d", old):
                assert re.search(r"\d", new)
                # only one digit run changed; separators and letters stay
                assert re.sub(r"\d+", "#", old) == re.sub(r"\d+", "#", new)
                assert sum(a != b for a, b in zip(re.findall(r"\d+", old), re.findall(r"\d+", new))) == 1
                seen += 1
            else:
                assert w2n.word_to_num(split_word(old)[1].lower()) != w2n.word_to_num(split_word(new)[1].lower())
    assert seen > 100


def test_number_swap_word_cases():
    shift, rng = NumberSwap(), np.random.default_rng(0)
    assert shift.change_word("05", rng) in {f"{v:02d}" for v in range(1, 11)} - {"05"}
    assert shift.change_word("(212)", rng).startswith("(")
    for word in ("A221", "2", "0", "phone", "☐", "12345678901234567890123"):
        assert shift.change_word(word, rng) is None
    date = shift.change_word("12/05/98", rng)
    assert re.fullmatch(r"\d+/\d+/\d+", date) and date != "12/05/98"
    assert shift.change_word("Twenty", rng)[0].isupper()
    assert NumberSwap(number_words=False).change_word("twenty", rng) is None


def test_char_deletion_removes_exactly_one_character(docs):
    for k, doc in enumerate(docs):
        out = CharacterDeletion(fraction=0.2)(doc, seed=k)
        for i in changed(doc, out):
            old, new = doc.words[i].text, out.words[i].text
            assert len(new) == len(old) - 1
            assert any(old[:j] + old[j + 1 :] == new for j in range(len(old)))
            lead, core, trail = split_word(old)
            assert new.startswith(lead) and new.endswith(trail)  # punctuation around the word stays


def test_char_deletion_can_keep_first_and_last_characters():
    shift, rng = CharacterDeletion(skip_first_char=True, skip_last_char=True), np.random.default_rng(0)
    for _ in range(20):
        new = shift.change_word("house:", rng)
        assert new[0] == "h" and new[-2:] == "e:" and len(new) == 5
    assert shift.change_word("ab", rng) is None


def test_embedding_swap_picks_near_neighbours(docs, vectors):
    shift = EmbeddingSwap(fraction=0.3, vocab_size=VOCAB)
    seen = 0
    for k, doc in enumerate(docs):
        out = shift(doc, seed=k)
        for i in changed(doc, out):
            (lead, old, trail), (lead2, new, trail2) = split_word(doc.words[i].text), split_word(out.words[i].text)
            assert (lead, trail) == (lead2, trail2)
            assert new.lower() in vectors.nearest(old.lower(), shift.max_candidates)
            assert vectors.cos(old.lower(), new.lower()) >= shift.min_cos_sim
            if old.isupper() and len(old) > 1:
                assert new.isupper()
            elif old.islower():
                assert new.islower()
            seen += 1
    assert seen > 100


def test_counter_fitting_pushes_antonyms_apart_and_pulls_synonyms_together(vectors, data_dir):
    glove = glove_vectors(VOCAB)
    assert glove.words == vectors.words
    antonyms = read_pairs([data_dir / p for p in ANTONYM_FILES], glove.index)
    synonyms = read_pairs([data_dir / p for p in SYNONYM_FILES], glove.index)
    assert len(antonyms) > 1000 and len(synonyms) > 1000

    def mean_cos(vs, pairs):
        return float(np.mean(np.sum(vs[pairs[:, 0]] * vs[pairs[:, 1]], axis=1)))

    assert mean_cos(vectors.vectors, antonyms) < mean_cos(glove.vectors, antonyms) - 0.2
    assert mean_cos(vectors.vectors, synonyms) > mean_cos(glove.vectors, synonyms) + 0.1
    apart = np.sum(glove.vectors[antonyms[:, 0]] * glove.vectors[antonyms[:, 1]], axis=1) > np.sum(
        vectors.vectors[antonyms[:, 0]] * vectors.vectors[antonyms[:, 1]], axis=1)
    assert apart.mean() > 0.75
    # pairs from the constraints file
    listed = {(glove.words[a], glove.words[b]) for a, b in antonyms}
    assert {("cheap", "expensive"), ("increase", "decrease")} <= listed
    assert glove.cos("cheap", "expensive") > 0.8 and vectors.cos("cheap", "expensive") < 0.2
    assert "expensive" not in vectors.nearest("cheap", 50)
    assert vectors.cos("increase", "decrease") < glove.cos("increase", "decrease")


def test_embedding_is_cached_atomically(vectors):
    folder = cache_dir() / "embeddings"
    assert vectors.path.parent == folder and vectors.path.is_file()
    assert not list(folder.glob("*.part"))
    again = counter_fitted_glove(VOCAB)
    assert again.path == vectors.path and np.array_equal(again.vectors, vectors.vectors)
    assert np.array_equal(again.neighbours, vectors.neighbours)
    assert again.neighbours.shape == (len(vectors), 51) and (again.neighbours[:, 0] == np.arange(len(vectors))).all()


def test_neighbours_and_similar_pairs_match_brute_force():
    rng = np.random.default_rng(0)
    unit = rng.normal(size=(300, 8)).astype(np.float32)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    sim = unit @ unit.T
    np.fill_diagonal(sim, -np.inf)
    nn = nearest_neighbours(unit, 10, block=64)
    assert (nn[:, 0] == np.arange(300)).all()
    assert (nn[:, 1:] == np.argsort(-sim, axis=1, kind="stable")[:, :10]).all()
    pairs, sims = similar_pairs(unit, 0.6, block=64)
    rows, cols = np.nonzero(sim >= 0.6)
    assert set(map(tuple, pairs.tolist())) == set(zip(rows.tolist(), cols.tolist()))
    assert np.allclose(sims, sim[pairs[:, 0], pairs[:, 1]], atol=1e-5)


def _awkward_doc() -> Document:
    texts = ["", "   ", "日本語", "Привет", "☐", "x" * 100, "1,234.56", "12/05/98", "a", ":", "Date:",
             "house", "(212)", "café", "Ünïcode", "TELEPHONE", "co-operate", "42"]
    words = tuple(Word(t, (10 * i, 0, 10 * i + 8, 10)) for i, t in enumerate(texts))
    entities = (Entity(0, "question", tuple(range(0, 9))), Entity(1, "answer", tuple(range(9, len(texts)))))
    return Document("awkward", PageImage.from_array(np.full((20, 400), 255, np.uint8)), words, entities)


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


def test_embedding_from_a_vectors_file(tmp_path):
    words = ("house", "home", "dwelling", "car", "vehicle", "banana")
    vecs = np.array([[1, 0.1, 0], [1, 0.2, 0], [1, 0, 0.2], [0, 1, 0.1], [0.1, 1, 0], [0, 0, 1]], np.float32)
    path = save_word_vectors(WordVectors(words, vecs), tmp_path / "tiny.npz")
    doc = Document("tiny", PageImage.from_array(np.full((2, 40), 255, np.uint8)),
                   tuple(Word(t, (i, 0, i + 1, 1)) for i, t in enumerate(["House:", "CAR", "banana", "the"])))
    out = EmbeddingSwap(fraction=1.0, max_candidates=2, min_cos_sim=0.9, embedding=str(path))(doc, seed=0)
    assert out.words[0].text in {"Home:", "Dwelling:"} and out.words[1].text == "VEHICLE"
    assert [w.text for w in out.words[2:]] == ["banana", "the"]  # no close neighbour; a stopword
    assert out.provenance[-1].counts == {"eligible": 4, "changed": 2, "unchangeable": 2}


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
