"""BERT-Attack: a masked language model's candidates for a word in its context, offline.

No weights are downloaded: the model is a 1-layer BERT with random weights and
a WordPiece vocabulary made here from FUNSD test words, the NLTK stopwords and
single characters (so words outside it split into sub-words), saved to a
folder and passed as ``model``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from dogood.core.fs import recorded_path

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from dogood.core.document import Document, Entity, PageImage, Word  # noqa: E402
from dogood.core.errors import RecipeError  # noqa: E402
from dogood.language.lexicons import stopwords  # noqa: E402
from dogood.language.selection import word_labels  # noqa: E402
from dogood.language.words import split_word  # noqa: E402
from dogood.models import ModelError  # noqa: E402
from dogood.pipeline.build import BuildError, build  # noqa: E402
from dogood.pipeline.recipe import parse_recipe  # noqa: E402
from dogood.shifts.base import make_shift  # noqa: E402
from dogood.shifts.text import bert_attack as ba  # noqa: E402
from dogood.shifts.text.bert_attack import BertAttack, best_combinations, masked_lm  # noqa: E402

MAX_LENGTH = 64  # the tiny model's limit: long words and long windows are cut to it


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    """Tiny matrices on a shared machine: one thread is many times faster."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def docs(funsd_test):
    return [funsd_test.load(doc_id) for doc_id in funsd_test.ids()[:10]]


@pytest.fixture(scope="module")
def stop():
    try:
        return stopwords()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"NLTK stopwords missing (set NLTK_DATA): {exc}")


@pytest.fixture(scope="module")
def vocab(docs, stop):
    cores = sorted({split_word(w.text)[1].lower() for d in docs for w in d.words} - {""})
    whole = [c for c in cores if c.isascii() and c.isalpha()]
    chars = sorted({c for d in docs for w in d.words for c in w.text.lower() if not c.isspace()} | set("abcdefghijklmnopqrstuvwxyz"))
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(stop) + whole + chars + ["##" + c for c in chars]
    return list(dict.fromkeys(tokens))


@pytest.fixture(scope="module")
def model_dir(vocab, tmp_path_factory):
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-mlm")
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab_file=str(folder / "vocab.txt"), model_max_length=MAX_LENGTH)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=MAX_LENGTH, initializer_range=0.2)
    BertForMaskedLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def _doc(texts, entities=()):
    words = [Word(t, (10 * i, 10, 10 * i + 8, 20)) for i, t in enumerate(texts)]
    return Document("synthetic", PageImage.from_array(np.full((40, 10 * len(texts) + 10), 255, np.uint8)), tuple(words), tuple(entities))


def _pattern(text):
    return "lower" if text.islower() else "upper" if text.isupper() and len(text) > 1 else "capital" if text[:1].isupper() else "other"


# -- candidates ----------------------------------------------------------------------------


def test_candidates_are_whole_vocabulary_words_never_stopwords_nor_the_word(docs, model_dir, vocab, stop):
    shift = BertAttack(model=model_dir, top_k=12)
    doc = docs[0]
    indices = [i for i, w in enumerate(doc.words) if w.text.strip()]
    cands = shift.candidates(doc, indices)
    known = set(vocab)
    n_changeable = 0
    for i in indices:
        lead, core, trail = split_word(doc.words[i].text.strip())
        if not (core.isalpha() and len(core) > 1 and core.lower() not in stop):
            assert cands[i] == []
            continue
        n_changeable += 1
        assert 0 < len(cands[i]) <= 12
        assert len({c.lower() for c in cands[i]}) == len(cands[i])
        for cand in cands[i]:
            c_lead, c_core, c_trail = split_word(cand)
            assert (c_lead, c_trail) == (lead, trail)  # punctuation kept
            assert _pattern(c_core) == _pattern(core) or _pattern(core) == "other"
            word = c_core.lower()
            assert word.isalpha() and "#" not in cand
            assert word in known and not word.startswith("##")  # a one-piece word's candidates are vocabulary words
            assert word not in stop and word != core.lower()
    assert n_changeable > 20


def test_a_word_in_sub_words_gets_whole_word_combinations(model_dir, vocab, stop):
    doc = _doc(["Please", "send", "the", "Zqxvk", "report", "today"])
    tokenizer = masked_lm(model_dir).tokenizer
    assert len(tokenizer.tokenize("zqxvk")) == 5  # not in the vocabulary: five pieces
    cands = BertAttack(model=model_dir, top_k=10).candidates(doc, [3])[3]
    assert cands
    for cand in cands:
        assert cand[0].isupper() and cand[1:].islower()  # "Zqxvk" is Capitalized
        assert cand.isalpha() and cand.lower() not in stop and cand.lower() != "zqxvk"
        pieces = tokenizer.tokenize(cand.lower())
        assert pieces and not pieces[0].startswith("##") and "[UNK]" not in pieces


def test_sub_word_combinations_are_the_best_by_perplexity():
    gen = torch.Generator().manual_seed(1)
    lp = torch.randn(3, 9, generator=gen).log_softmax(-1)
    allowed = [torch.arange(9) % 2 == 0, torch.arange(9) > 2, torch.ones(9, dtype=torch.bool)]
    got = best_combinations(lp, allowed, 5)
    brute = sorted(
        (math.exp(-sum(float(lp[p, t]) for p, t in enumerate(seq)) / 3), list(seq))
        for seq in itertools.product(*[torch.nonzero(a).flatten().tolist() for a in allowed])
    )[:5]
    assert [s for s, _ in got] == [s for _, s in brute]
    assert [p for _, p in got] == pytest.approx([p for p, _ in brute])


# -- context -------------------------------------------------------------------------------


def test_the_same_word_in_two_contexts_gets_different_candidates(model_dir):
    shift = BertAttack(model=model_dir, top_k=20)
    a = _doc(["Please", "enter", "the", "date", "of", "payment", "below"])
    b = _doc(["Total", "amount", "received", "date", "signature", "approved", "manager"])
    alone = _doc(["date"])
    ca, cb, c0 = (shift.candidates(d, [i])[i] for d, i in ((a, 3), (b, 3), (alone, 0)))
    assert ca and cb and c0
    assert ca != cb and ca != c0 and cb != c0


def test_only_words_inside_the_window_are_context(model_dir):
    base = ["Please", "enter", "the", "payment", "amount", "received", "for", "each", "invoice", "number", "given"]
    shift = BertAttack(model=model_dir, top_k=20, window=2)
    target = 5  # "received": context words 3..7
    ref = shift.candidates(_doc(base), [target])[target]
    far = base.copy()
    far[10] = "signature"
    near = base.copy()
    near[6] = "signature"
    assert shift.candidates(_doc(far), [target])[target] == ref
    assert shift.candidates(_doc(near), [target])[target] != ref


def test_entity_context_sees_only_the_entity(model_dir):
    texts = ["Total", "amount", "due", "payment", "received", "today"]
    other = ["Total", "amount", "due", "signature", "approved", "manager"]
    ents = (Entity(0, "question", (0, 1, 2)), Entity(1, "answer", (3, 4, 5)))
    for context, same in (("entity", True), ("page", False)):
        shift = BertAttack(model=model_dir, top_k=20, context=context)
        c1 = shift.candidates(_doc(texts, ents), [1])[1]
        c2 = shift.candidates(_doc(other, ents), [1])[1]
        assert c1 and (c1 == c2) is same


# -- the shift on FUNSD ------------------------------------------------------------------


@pytest.mark.parametrize("fraction", [0.1, 0.3])
def test_changed_fraction_boxes_and_labels_on_funsd(docs, model_dir, fraction):
    shift = BertAttack(fraction=fraction, model=model_dir)
    changed = eligible = 0
    for k, doc in enumerate(docs):
        out, counts, _ = shift.apply(doc, np.random.default_rng(k))
        assert counts["changed"] == round(fraction * counts["eligible"])  # enough candidates: the draw is met
        assert counts["unchangeable"] == sum(counts[r] for r in ba.REASONS)
        changed += counts["changed"]
        eligible += counts["eligible"]
        diff = [i for i, (a, b) in enumerate(zip(doc.words, out.words)) if a.text != b.text]
        assert len(diff) == counts["changed"]
        assert [w.box for w in out.words] == [w.box for w in doc.words]
        assert out.entities == doc.entities and word_labels(out) == word_labels(doc)
        for i in diff:
            before, after = split_word(doc.words[i].text.strip()), split_word(out.words[i].text)
            assert (before[0], before[2]) == (after[0], after[2])
            assert after[1].isalpha() and after[1].lower() != before[1].lower()
    assert abs(changed / eligible - fraction) <= 0.02


def test_same_seed_same_document_and_provenance(docs, model_dir):
    shift = BertAttack(fraction=0.2, model=model_dir)
    one, two = shift(docs[1], 7), shift(docs[1], 7)
    assert [w.text for w in one.words] == [w.text for w in two.words]
    assert one.provenance == two.provenance
    record = one.provenance[-1]
    assert record.shift == "bert_attack" and record.params["model"] == recorded_path(model_dir)  # no local folder
    assert record.counts["changed"] > 0
    other = shift(docs[1], 8)
    assert [w.text for w in other.words] != [w.text for w in one.words]


def test_labels_restrict_the_changes_to_answers(docs, model_dir):
    shift = BertAttack(fraction=0.5, labels=["answer"], model=model_dir)
    touched = 0
    for k, doc in enumerate(docs[:4]):
        out, counts, _ = shift.apply(doc, np.random.default_rng(k))
        labels = word_labels(doc)
        assert counts["eligible"] == sum(1 for w, lab in zip(doc.words, labels) if lab == "answer" and w.text.strip())
        for i, (a, b) in enumerate(zip(doc.words, out.words)):
            if a.text != b.text:
                assert labels[i] == "answer"
                touched += 1
    assert touched > 0


def test_bad_words_stay_and_are_counted(model_dir):
    long_word = "abcdefghij" * 7  # 70 single-letter pieces: more than the model takes
    huge_word = "abcdefghij" * 20  # beyond WordPiece's 100 characters: the unknown token
    texts = ["12345", "Ωμέγα", "R&D", ":", "the", "X", long_word, huge_word, "", "Invoice", "payment:"]
    doc = _doc(texts, (Entity(0, "answer", tuple(range(len(texts)))),))
    out, counts, _ = BertAttack(fraction=1.0, model=model_dir).apply(doc, np.random.default_rng(0))
    assert counts == {"eligible": 10, "changed": 2, "unchangeable": 8, "stopword": 1, "one_letter": 1,
                      "not_alphabetic": 4, "too_long": 1, "unknown_word": 1, "no_candidate": 0}
    assert [w.text for w in out.words[:9]] == texts[:9]
    assert out.words[9].text != "Invoice" and out.words[9].text[0].isupper()
    assert out.words[10].text.endswith(":") and out.words[10].text != "payment:"


def test_unmasked_input_as_li_et_al(docs, model_dir):
    shift = BertAttack(fraction=0.1, model=model_dir, mask=False)
    out, counts, _ = shift.apply(docs[0], np.random.default_rng(0))
    assert counts["changed"] == round(0.1 * counts["eligible"]) > 0
    masked = BertAttack(model=model_dir).candidates(docs[0], [21])[21]
    assert shift.candidates(docs[0], [21])[21] != masked


def test_the_model_loads_once_and_a_document_takes_few_forward_passes(docs, model_dir):
    lm = masked_lm(model_dir)
    assert masked_lm(model_dir) is lm
    calls = []
    handle = lm.model.register_forward_pre_hook(lambda m, args: calls.append(1))
    try:
        _, counts, _ = BertAttack(fraction=0.3, model=model_dir).apply(docs[2], np.random.default_rng(0))
    finally:
        handle.remove()
    assert counts["changed"] >= 2 * ba.BATCH_ROWS
    assert len(calls) <= math.ceil(counts["changed"] * 1.1 / ba.BATCH_ROWS) + 1


def test_render_redraws_only_when_asked(docs, model_dir, monkeypatch):
    import dogood.page.render

    seen = []
    monkeypatch.setattr(dogood.page.render, "render_words", lambda doc, indices, original=None: seen.append(list(indices)) or doc)
    out, counts, _ = BertAttack(model=model_dir).apply(docs[0], np.random.default_rng(0))
    assert seen == []
    out, counts, _ = BertAttack(model=model_dir, render=True).apply(docs[0], np.random.default_rng(0))
    assert seen == [[i for i, (a, b) in enumerate(zip(docs[0].words, out.words)) if a.text != b.text]]


# -- errors and parameters --------------------------------------------------------------


def test_a_missing_model_is_a_model_error_naming_it(docs, tmp_path, monkeypatch):
    import huggingface_hub.constants
    import transformers.utils.hub

    missing = str(tmp_path / "no-such-mlm")
    with pytest.raises(ModelError, match="no-such-mlm"):
        BertAttack(model=missing).apply(docs[0], np.random.default_rng(0))
    # offline, as on a machine without the Hub (the libraries read HF_HUB_OFFLINE when imported)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(transformers.utils.hub, "_is_offline_mode", True)
    with pytest.raises(ModelError, match="'bert-base-uncased'"):
        BertAttack().apply(docs[0], np.random.default_rng(0))


def test_a_build_reports_the_missing_model(funsd_dir, tmp_path):
    recipe = parse_recipe({"name": "funsd-t", "version": "1.0.0", "source": {"kind": "funsd"},
                           "configs": {"bert": [{"shift": "bert_attack", "model": str(tmp_path / "no-such-mlm")}]}})
    with pytest.raises(BuildError, match="no-such-mlm"):
        build(recipe, tmp_path / "out", source_path=funsd_dir, limit=1, progress=False)


def test_recipe_entry_and_bad_parameters(model_dir):
    shift = make_shift({"shift": "bert_attack", "model": model_dir, "fraction": 0.2, "labels": ["answer"], "context": "entity"})
    assert isinstance(shift, BertAttack) and shift.family == "text"
    assert shift.params() == {"fraction": 0.2, "labels": ["answer"], "model": recorded_path(model_dir), "top_k": 48,
                              "context": "entity", "window": 16, "mask": True, "render": False, "device": "cpu",
                              "style": "dogood", "pct_words_to_swap": 1.0, "max_chars": None}
    assert "style" not in shift.recorded_params()
    for bad in ({"context": "line"}, {"fraction": 1.5}, {"top_k": 0}, {"window": 0}):
        with pytest.raises(RecipeError):
            make_shift({"shift": "bert_attack", **bad})


def test_card_note_says_in_context_and_how_do_good_code_differs():
    note = " ".join(BertAttack(model="some/mlm", context="entity").card_notes())
    assert "its entity's text" in note and "`some/mlm`" in note and "BAE" in note and "original words" in note
    assert "redrawn" in BertAttack(model="m", render=True).card_notes()[0]


def test_a_session_that_ran_torch_builds_again_with_a_process_pool(model_dir, funsd_dir, tmp_path):
    """A forked worker of a driver whose torch threads have run (a text config's preview runs the masked LM in
    the driver) used to hang at its first tensor operation; the pool now gives each worker one torch thread."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(f"""
        import torch
        from dogood.pipeline.build import build
        from dogood.pipeline.recipe import parse_recipe
        torch.set_num_threads(2)
        torch.ones(512, 512) @ torch.ones(512, 512)  # the driver's OpenMP threads have run
        recipe = parse_recipe({{"name": "t", "version": "1.0.0", "source": {{"kind": "funsd"}},
                                "configs": {{"bert_attack": [{{"shift": "bert_attack", "model": {model_dir!r}}}]}}}})
        build(recipe, {str(tmp_path / "out")!r}, source_path={str(funsd_dir)!r}, limit=2, num_proc=2, progress=False)
        print("built")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0 and "built" in done.stdout, done.stderr[-2000:]


# -- style: repo (Do-GOOD's scripts) ---------------------------------------------------------------------------
def test_repo_style_changes_the_words_textattacks_augmenter_changes(docs, model_dir):
    """Do-GOOD's FUNSD script: TextAttack's Augmenter(WordSwapMaskedLM(), RepeatModification, StopwordModification,
    pct_words_to_swap=0.1) on every word alone. The same words change (BAE's candidates do not depend on the draws;
    the augmenter drops none of them), and each new word is one of the candidates TextAttack gives for it."""
    import random

    pytest.importorskip("textattack", reason="Do-GOOD's script runs TextAttack's Augmenter: the text extra")
    from textattack.augmentation import Augmenter
    from textattack.constraints.pre_transformation import RepeatModification, StopwordModification
    from textattack.transformations import CompositeTransformation, WordSwapMaskedLM

    from dogood.shifts.text.bert_attack import masked_lm

    lm = masked_lm(model_dir)
    augmenter = Augmenter(CompositeTransformation([WordSwapMaskedLM(masked_language_model=lm.model, tokenizer=lm.tokenizer,
                                                                    max_length=MAX_LENGTH)]),
                          constraints=[RepeatModification(), StopwordModification()], pct_words_to_swap=0.1,
                          transformations_per_example=1)
    shift = BertAttack(model=model_dir, style="repo", fraction=1.0, pct_words_to_swap=0.1)
    random.seed(0)
    np.random.seed(0)
    ours, theirs = [], []
    for k, doc in enumerate(docs[:3]):
        out = shift(doc, k)
        for a, b in zip(doc.words, out.words):
            if a.text.strip():
                ours.append(a.text != b.text)
                theirs.append(augmenter.augment(a.text)[0] != a.text)
                if b.text != a.text:  # the word's TextAttack word replaced by a BAE candidate, punctuation kept
                    assert len(b.text.split()) == 1
    assert ours == theirs and 0 < sum(ours) < len(ours)
    assert out.provenance[-1].params["style"] == "repo" and "style `repo`" in shift.card_notes()[0]
