"""TextAttack word swaps (Do-GOOD 3.2, Table 4): embedding, homoglyph, number, character deletion.

Outcomes are checked on real FUNSD test pages: the changed share of eligible
words, what each swap does to a word, that boxes and labels stay, and that the
seed alone decides the output. The counter-fitted embedding is built once per
test session, on GloVe's 10,000 most frequent words, into the session's cache.
"""

from __future__ import annotations

import numpy as np
import pytest
from word_swap_checks import VOCAB, changed

from dogood.core.document import Document, PageImage, Word
from dogood.core.paths import cache_dir
from dogood.language.embeddings import (
    ANTONYM_FILES,
    SYNONYM_FILES,
    WordVectors,
    counter_fitted_glove,
    glove_vectors,
    nearest_neighbours,
    read_pairs,
    save_word_vectors,
    similar_pairs,
)
from dogood.language.words import split_word
from dogood.shifts.text.embedding_swap import EmbeddingSwap


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


@pytest.mark.parametrize("old, new", [("intended", "not"), ("may", "result"), ("soon", "today"),
                                      ("possible", "might"), ("cannot", "can"), ("large", "small"),
                                      ("send", "sender")])
def test_meaning_changing_swaps_are_refused(old, new):
    """The swaps seen on FUNSD test before issue 40 (into a negation, out of or into a modal verb, across parts
    of speech) and an antonym are refused; a synonym of the same part of speech is not."""
    from dogood.shifts.text.embedding_swap import keeps_meaning

    assert not keeps_meaning(old, new)
    assert keeps_meaning("error", "mistake") and keeps_meaning("quickly", "rapidly") and keeps_meaning("large", "big")


def test_no_swap_into_or_out_of_negations_and_modals(docs):
    from dogood.language.lexicons import MODALS, NEGATIONS

    guarded = NEGATIONS | MODALS
    shift = EmbeddingSwap(fraction=1.0, vocab_size=VOCAB)
    swaps = 0
    for k, doc in enumerate(docs):
        out = shift(doc, seed=k)
        for i in changed(doc, out):
            old, new = split_word(doc.words[i].text)[1].lower(), split_word(out.words[i].text)[1].lower()
            assert old not in guarded and new not in guarded, (old, new)
            swaps += 1
    assert swaps > 200
    loose = EmbeddingSwap(fraction=1.0, vocab_size=VOCAB, keep_meaning=False)  # the EmbeddingAugmenter's alone
    assert any(split_word(w.text)[1].lower() in guarded for doc in docs for w in loose(doc, seed=0).words
               if split_word(w.text)[1].lower() not in {split_word(v.text)[1].lower() for v in doc.words})
