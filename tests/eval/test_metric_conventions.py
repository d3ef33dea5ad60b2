"""Metric conventions named in eval reports: ANLS (paper formula vs the official DocVQA/RRC scorer), FUNSD linking."""

from __future__ import annotations

import nltk
import pytest

from dogood.eval.metrics import (
    anls,
    anls_scores,
    document_links,
    funsd_linking_scores,
    levenshtein,
)


@pytest.mark.parametrize(
    "pred, answers, paper, official",
    [
        ("", ["abc"], 0.0, 0.0),  # empty prediction: NL = 3/3
        ("ab", [""], 0.0, 0.0),  # empty answer: NL = 2/2
        ("", [""], 1.0, 1.0),  # both empty: NL = 0
        ("  Hello   World ", ["hello world"], 1.0, 1.0),  # case and spaces normalised: distance 0
        ("ABC", ["abc"], 1.0, 1.0),
        ("ab", ["abcd"], 0.0, 0.5),  # NL = 2/4 exactly 0.5: the paper drops it, the official script keeps 1 - NL
        ("abcd", ["  ab  "], 0.0, 2 / 3),  # distance 2; paper: over 4 (normalised) = 0.5; official: over 6 (raw) = 1/3
        ("", [" ab "], 0.0, 0.5),  # official: distance 2 over the raw length 4
        ("Dr Lobo", ["Dear Dr. Lobo", "Dr. Lobo"], 0.875, 0.875),  # several answers: the best, 1 - 1/8
        ("ab", ["xyz", "abcd"], 0.0, 0.5),  # several answers, the best at NL = 0.5
        ("abcx", ["abcd", "abxy"], 0.75, 0.75),
    ],
)
def test_anls_edge_cases_hand_computed(pred, answers, paper, official):
    assert anls([pred], [answers]) == pytest.approx(paper, abs=1e-15)
    assert anls([pred], [answers], official=True) == pytest.approx(official, abs=1e-15)


def test_anls_is_the_mean_over_questions():
    preds, gold = ["ab", "abc", "zzz"], [["abcd"], ["ABC "], ["abc"]]
    assert anls_scores(preds, gold) == [0.0, 1.0, 0.0]
    assert anls_scores(preds, gold, official=True) == [0.5, 1.0, 0.0]
    assert anls(preds, gold, official=True) == pytest.approx(1.5 / 3)
    assert anls(preds, gold, threshold=0.6, official=True) == pytest.approx(1 / 3)  # 0.5 < 0.6 is dropped


def test_levenshtein_agrees_with_nltk():
    pairs = [("kitten", "sitting"), ("", "abc"), ("abc", ""), ("flaw", "lawn"), ("Straße", "strasse"), ("a b", "ab")]
    for a, b in pairs:
        assert levenshtein(a, b) == nltk.edit_distance(a, b)
    assert levenshtein("kitten", "sitting") == 3


def test_funsd_link_counts_all_and_question_answer(funsd_test):
    docs = [funsd_test.load(i) for i in funsd_test.ids()]
    assert sum(len(document_links(d)) for d in docs) == 1064
    qa = {d.id: document_links(d, "question-answer") for d in docs}
    assert sum(len(v) for v in qa.values()) == 823  # unilm's relation-extraction pairs on FUNSD test
    labels = {d.id: {e.id: e.label for e in d.entities} for d in docs}
    assert all(labels[i][q] == "question" and labels[i][a] == "answer" for i, v in qa.items() for q, a in v)
    # every listed link predicted: all question -> answer pairs found; the other links are false positives
    all_links = {d.id: document_links(d) for d in docs}
    s = funsd_linking_scores(docs, all_links, kind="question-answer")
    assert (s["tp"], s["n_gold"], s["recall"]) == (823, 823, 1.0) and s["precision"] < 1.0
    assert funsd_linking_scores(docs, all_links)["f1"] == 1.0
    # question -> answer pairs predicted answer -> question: right for relation extraction, wrong as directed links
    reversed_qa = {i: {(a, q) for q, a in v} for i, v in qa.items()}
    assert funsd_linking_scores(docs, reversed_qa, kind="question-answer")["f1"] == 1.0
    assert funsd_linking_scores(docs, reversed_qa)["tp"] == 0
    with pytest.raises(ValueError, match="kind must be one of"):
        document_links(docs[0], "header-question")
