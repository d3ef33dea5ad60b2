"""dogood.eval.metrics: entity scores against seqeval, Do-GOOD error rates, accuracy, ANLS, linking, ARI."""

from __future__ import annotations

import math
import random
import warnings

import numpy as np
import pytest

pytest.importorskip("hypothesis")  # the test extra

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from dogood.core.document import Document, Entity, PageImage, Word
from dogood.core.schema import FUNSD_NER_TAGS
from dogood.eval.metrics import (
    accuracy,
    anls,
    document_iob,
    document_links,
    entity_error_rates,
    entity_scores,
    funsd_entity_error_rates,
    funsd_entity_scores,
    iob_entities,
    levenshtein,
    linking_scores,
    linking_scores_many,
    word_grouping_ari,
    word_groups,
)

seqeval = pytest.importorskip("seqeval.metrics")
from seqeval.metrics import (  # noqa: E402
    classification_report,
    f1_score,
    precision_score,
    recall_score,
)
from seqeval.metrics.sequence_labeling import get_entities  # noqa: E402

TOL = 1e-12


def close(a: float, b: float) -> bool:
    return abs(float(a) - float(b)) <= TOL


def assert_matches_seqeval(y_true, y_pred):
    """Our entity_scores equal seqeval's micro scores and classification_report to 1e-12."""
    ours = entity_scores(y_true, y_pred)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seqeval's UndefinedMetricWarning / numpy's empty-mean warning
        expected = (precision_score(y_true, y_pred), recall_score(y_true, y_pred), f1_score(y_true, y_pred))
        report = classification_report(y_true, y_pred, output_dict=True)
    assert close(ours["precision"], expected[0]), (ours, expected)
    assert close(ours["recall"], expected[1]), (ours, expected)
    assert close(ours["f1"], expected[2]), (ours, expected)
    assert ours["support"] == report["micro avg"]["support"]
    assert close(ours["f1"], report["micro avg"]["f1-score"])
    labels = {k for k in report if not k.endswith(" avg")}
    assert set(ours["per_label"]) == labels
    for label in labels:
        mine, theirs = ours["per_label"][label], report[label]
        assert close(mine["precision"], theirs["precision"]), label
        assert close(mine["recall"], theirs["recall"]), label
        assert close(mine["f1"], theirs["f1-score"]), label
        assert mine["support"] == theirs["support"], label
    return ours


# -- chunking and entity scores: hand cases ---------------------------------------------------------------


def test_iob_entities_hand_cases():
    # B- opens; I- of the same type continues; I- after O or another type opens (seqeval's lenient default)
    assert iob_entities(["B-Q", "I-Q", "O", "I-A", "I-H"]) == [("Q", 0, 2), ("A", 3, 4), ("H", 4, 5)]
    assert iob_entities(["B-Q", "B-Q", "I-Q"]) == [("Q", 0, 1), ("Q", 1, 3)]
    assert iob_entities(["I-Q", "I-Q"]) == [("Q", 0, 2)]
    assert iob_entities(["O", "O"]) == []
    assert iob_entities([]) == []
    assert iob_entities(["B-FOO-BAR", "I-FOO-BAR"]) == [("FOO-BAR", 0, 2)]  # type is everything after "B-"


def test_entity_scores_hand_case():
    y_true = [["B-Q", "I-Q", "O", "B-A", "I-A"], ["B-H", "O"]]
    y_pred = [["B-Q", "I-Q", "O", "B-A", "O"], ["B-H", "O"]]
    s = assert_matches_seqeval(y_true, y_pred)
    # gold Q[0:2] A[3:5] H[0:1]; predicted Q[0:2] A[3:4] H[0:1]; Q and H match: P = R = 2/3, F1 = 2/3
    assert close(s["precision"], 2 / 3) and close(s["recall"], 2 / 3) and close(s["f1"], 2 / 3)
    assert s["support"] == 3
    assert s["per_label"] == {
        "A": {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 1},
        "H": {"precision": 1.0, "recall": 1.0, "f1": 1.0, "support": 1},
        "Q": {"precision": 1.0, "recall": 1.0, "f1": 1.0, "support": 1},
    }


def test_entity_scores_lenient_chunks_and_extra_prediction():
    y_true = [["B-Q", "I-Q", "O", "B-A", "I-A", "O"]]
    y_pred = [["I-Q", "I-Q", "O", "I-A", "I-A", "I-H"]]
    s = assert_matches_seqeval(y_true, y_pred)
    # predicted Q[0:2] A[3:5] (I- after O opens a chunk) and a spurious H[5:6]:
    # tp = 2, P = 2/3, R = 2/2 = 1, F1 = 2 * (2/3) * 1 / (2/3 + 1) = 0.8
    assert close(s["precision"], 2 / 3) and s["recall"] == 1.0 and close(s["f1"], 0.8)
    assert s["per_label"]["H"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0}


def test_entity_scores_chunks_do_not_cross_documents():
    # the I-Q opening document 1 is a new chunk, not a continuation of document 0's Q
    y_true = [["B-Q"], ["B-Q"]]
    y_pred = [["B-Q"], ["I-Q"]]
    s = assert_matches_seqeval(y_true, y_pred)
    assert s["f1"] == 1.0 and s["support"] == 2


def test_entity_scores_nothing_to_score_is_zero():
    s = assert_matches_seqeval([["O", "O"]], [["O", "O"]])
    assert (s["precision"], s["recall"], s["f1"], s["support"], s["per_label"]) == (0.0, 0.0, 0.0, 0, {})


def test_entity_scores_errors_name_the_document():
    with pytest.raises(ValueError, match=r"document 1: y_true has 2 tags but y_pred has 3"):
        entity_scores([["O"], ["O", "O"]], [["O"], ["O", "O", "O"]])
    with pytest.raises(ValueError, match=r"y_true has 2 sequences but y_pred has 1"):
        entity_scores([["O"], ["O"]], [["O"]])
    with pytest.raises(ValueError, match=r"document 2 y_pred, position 1: tag 'E-Q'"):
        entity_scores([["O"], ["O"], ["O", "O"]], [["O"], ["O"], ["O", "E-Q"]])
    for bad in ("B-", "B", "X-Q", "b-Q", "", None, 3):
        with pytest.raises(ValueError, match=r"document 0 y_true, position 0: tag"):
            entity_scores([[bad]], [["O"]])
    with pytest.raises(ValueError, match=r"document 0 y_true: expected a sequence of tags"):
        entity_scores(["B-Q"], [["B-Q"]])  # a flat list of tags is not a list of documents


# -- entity scores against seqeval: random sequences and real FUNSD tags ------------------------------------

TAG_POOL = ["O", "B-A", "I-A", "B-B", "I-B", "B-C-D", "I-C-D"]


@st.composite
def tag_pairs(draw):
    lengths = draw(st.lists(st.integers(0, 12), min_size=1, max_size=5))
    tags = st.sampled_from(TAG_POOL)
    y_true = [draw(st.lists(tags, min_size=n, max_size=n)) for n in lengths]
    y_pred = [draw(st.lists(tags, min_size=n, max_size=n)) for n in lengths]
    return y_true, y_pred


@settings(max_examples=300, deadline=None)
@given(tag_pairs())
def test_entity_scores_equal_seqeval_on_random_sequences(pair):
    y_true, y_pred = pair
    assert_matches_seqeval(y_true, y_pred)
    for seq in y_true + y_pred:
        assert iob_entities(seq) == [(t, s, e + 1) for t, s, e in get_entities(seq)]


@settings(max_examples=150, deadline=None)
@given(tag_pairs())
def test_error_rates_are_one_minus_recall(pair):
    y_true, y_pred = pair
    s = entity_scores(y_true, y_pred)
    r = entity_error_rates(y_true, y_pred, groups={"ab": ("A", "B"), "cd": ("C-D",)})
    # pooled exact-match recall of a group's types == 1 - its error rate
    for name, types in (("ab", ("A", "B")), ("cd", ("C-D",))):
        support = sum(s["per_label"].get(t, {"support": 0})["support"] for t in types)
        found = [s["per_label"][t] for t in types if t in s["per_label"]]
        hits = sum(round(x["recall"] * x["support"]) for x in found)
        assert r[name]["total"] == support
        if support:
            assert close(r[name]["error_rate"], 1 - hits / support)
        else:
            assert math.isnan(r[name]["error_rate"])


@pytest.fixture(scope="module")
def funsd_docs(funsd_test):
    return [funsd_test.load(i) for i in funsd_test.ids()]


@pytest.mark.parametrize("rate", [0.0, 0.05, 0.2, 0.6])
def test_entity_scores_equal_seqeval_on_corrupted_funsd(funsd_docs, rate):
    rng = random.Random(int(rate * 100))
    y_true = [document_iob(d) for d in funsd_docs]
    y_pred = []
    for tags in y_true:
        pred = list(tags)
        for i in range(len(pred)):
            if rng.random() < rate:
                pred[i] = rng.choice(FUNSD_NER_TAGS)  # relabel, split, merge, or I- without B-
        y_pred.append(pred)
    s = assert_matches_seqeval(y_true, y_pred)
    if rate == 0.0:
        assert s["f1"] == 1.0
    else:
        assert s["f1"] < 1.0


def test_funsd_entity_scores_on_real_documents(funsd_docs):
    perfect = {d.id: document_iob(d) for d in funsd_docs}
    s = funsd_entity_scores(funsd_docs, perfect)
    assert (s["precision"], s["recall"], s["f1"]) == (1.0, 1.0, 1.0)
    # support: the header/question/answer entities with at least one non-blank word (counted without chunking)
    expected = {"HEADER": 0, "QUESTION": 0, "ANSWER": 0}
    for d in funsd_docs:
        for e in d.entities:
            if e.label != "other" and any(d.words[i].text.strip() for i in e.word_ids):
                expected[e.label.upper()] += 1
    assert {k: v["support"] for k, v in s["per_label"].items()} == expected
    # FUNSD paper Table II: 122 headers, 1,077 questions, 821 answers in test, less 3, 7 and 12 whose words are all blank
    assert expected == {"HEADER": 122 - 3, "QUESTION": 1077 - 7, "ANSWER": 821 - 12}
    # everything predicted O: no true positive, recall 0
    all_o = {k: ["O"] * len(v) for k, v in perfect.items()}
    assert funsd_entity_scores(funsd_docs, all_o)["recall"] == 0.0
    r = funsd_entity_error_rates(funsd_docs, all_o)
    assert r["qa"]["error_rate"] == 1.0 and r["header"]["error_rate"] == 1.0 and r["other"]["error_rate"] == 0.0
    assert r["qa"]["total"] == expected["QUESTION"] + expected["ANSWER"]


def test_funsd_entity_scores_errors_name_the_document(funsd_docs):
    docs = funsd_docs[:3]
    preds = {d.id: document_iob(d) for d in docs}
    missing = dict(preds)
    del missing[docs[1].id]
    with pytest.raises(ValueError, match=rf"document '{docs[1].id}' has no predicted tags"):
        funsd_entity_scores(docs, missing)
    short = dict(preds)
    short[docs[2].id] = preds[docs[2].id][:-1]
    n = len(preds[docs[2].id])
    with pytest.raises(ValueError, match=rf"document '{docs[2].id}': {n} token words but {n - 1} predicted tags"):
        funsd_entity_scores(docs, short)
    with pytest.raises(ValueError, match=rf"document '{docs[0].id}' has no predicted tags"):
        funsd_entity_error_rates(docs, {})
    bad = dict(preds)
    bad[docs[0].id] = ["S-HEADER"] + preds[docs[0].id][1:]
    with pytest.raises(ValueError, match=rf"document '{docs[0].id}' predicted tags, position 0: tag 'S-HEADER'"):
        funsd_entity_scores(docs, bad)
    with pytest.raises(ValueError, match=rf"document '{docs[0].id}' appears twice"):
        funsd_entity_scores([docs[0], docs[0]], preds)
    # predictions for documents not evaluated are ignored
    assert funsd_entity_scores(docs[:1], preds)["f1"] == 1.0


# -- Do-GOOD Table 3 error rates -----------------------------------------------------------------------


def test_entity_error_rates_hand_case():
    y_true = [
        ["B-QUESTION", "I-QUESTION", "B-ANSWER", "O", "O", "B-HEADER", "I-HEADER"],
        ["B-ANSWER", "O", "B-QUESTION"],
    ]
    y_pred = [
        ["B-QUESTION", "I-QUESTION", "B-ANSWER", "B-ANSWER", "O", "B-QUESTION", "I-QUESTION"],
        ["B-ANSWER", "O", "O"],
    ]
    r = entity_error_rates(y_true, y_pred)
    # QA units: doc0 Q[0:2] hit, A[2:3] hit; doc1 A[0:1] hit, Q[2:3] missed (predicted O) -> 1/4
    assert r["qa"] == {"error_rate": 0.25, "errors": 1, "total": 4}
    # Header: doc0 H[5:7] predicted as QUESTION -> 1/1
    assert r["header"] == {"error_rate": 1.0, "errors": 1, "total": 1}
    # Other (gold O words): doc0 pos 3 (predicted B-ANSWER: error), pos 4 (O), doc1 pos 1 (O) -> 1/3
    assert r["other"]["errors"] == 1 and r["other"]["total"] == 3 and close(r["other"]["error_rate"], 1 / 3)
    assert list(r) == ["other", "qa", "header"]


def test_entity_error_rates_boundaries_count_as_errors():
    # gold A[0:2] and Q[3:4]; predicted A[0:1] (too short), O at 2 stays O, Q[3:5] (too long, eats an O word)
    y_true = [["B-ANSWER", "I-ANSWER", "O", "B-QUESTION", "O"]]
    y_pred = [["B-ANSWER", "O", "O", "B-QUESTION", "I-QUESTION"]]
    r = entity_error_rates(y_true, y_pred)
    assert r["qa"] == {"error_rate": 1.0, "errors": 2, "total": 2}  # both spans wrong
    assert r["other"] == {"error_rate": 0.5, "errors": 1, "total": 2}  # pos 4 predicted I-QUESTION
    assert math.isnan(r["header"]["error_rate"]) and r["header"]["total"] == 0  # no header: undefined


def test_entity_error_rates_custom_groups_and_errors():
    r = entity_error_rates([["B-X", "B-Y", "B-Z"]], [["B-X", "O", "O"]], groups={"x": ["X"], "y": ["Y"]})
    # Z is in no group and is not counted
    assert list(r) == ["other", "x", "y"]
    assert r["x"] == {"error_rate": 0.0, "errors": 0, "total": 1}
    assert r["y"] == {"error_rate": 1.0, "errors": 1, "total": 1}
    assert r["other"]["total"] == 0 and math.isnan(r["other"]["error_rate"])  # no gold O word: undefined
    with pytest.raises(ValueError, match="in groups 'a' and 'b'"):
        entity_error_rates([["O"]], [["O"]], groups={"a": ["X"], "b": ["X"]})
    with pytest.raises(ValueError, match="'other' is the O words"):
        entity_error_rates([["O"]], [["O"]], groups={"other": ["X"]})
    with pytest.raises(ValueError, match="document 1: y_true has 1 tags but y_pred has 2"):
        entity_error_rates([["O"], ["O"]], [["O"], ["O", "O"]])


# -- accuracy -------------------------------------------------------------------------------------------


def test_accuracy_hand_case():
    r = accuracy(["form", "memo", "memo", "letter"], ["form", "form", "memo", "memo"])
    # 2 of 4 right; form 1/1, letter 0/1, memo 1/2
    assert r == {
        "accuracy": 0.5,
        "per_class": {"form": 1.0, "letter": 0.0, "memo": 0.5},
        "support": {"form": 1, "letter": 1, "memo": 2},
    }


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 5)), min_size=1, max_size=40))
def test_accuracy_equals_sklearn(pairs):
    from sklearn.metrics import accuracy_score, recall_score

    from dogood.core.schema import RVL_CDIP_CLASSES

    y_true = [RVL_CDIP_CLASSES[t] for t, _ in pairs]
    y_pred = [RVL_CDIP_CLASSES[p] for _, p in pairs]
    r = accuracy(y_true, y_pred)
    assert close(r["accuracy"], accuracy_score(y_true, y_pred))
    labels = sorted(set(y_true))
    expected = recall_score(y_true, y_pred, labels=labels, average=None, zero_division=0)
    assert list(r["per_class"]) == labels
    for label, value in zip(labels, expected):
        assert close(r["per_class"][label], value)
    full = accuracy(y_true, y_pred, labels=RVL_CDIP_CLASSES)
    assert list(full["per_class"]) == list(RVL_CDIP_CLASSES)
    for c in RVL_CDIP_CLASSES:
        if full["support"][c] == 0:
            assert math.isnan(full["per_class"][c])
        else:
            assert full["per_class"][c] == r["per_class"][c]


def test_accuracy_errors():
    with pytest.raises(ValueError, match="y_true has 2 labels but y_pred has 1"):
        accuracy(["form", "memo"], ["form"])
    with pytest.raises(ValueError, match="empty"):
        accuracy([], [])
    with pytest.raises(ValueError, match="not in labels.*'scientific_report'"):
        accuracy(["scientific_report"], ["memo"], labels=["memo"])


# -- ANLS -----------------------------------------------------------------------------------------------


def test_levenshtein():
    assert levenshtein("kitten", "sitting") == 3  # k->s, e->i, +g
    assert levenshtein("", "abc") == 3 and levenshtein("abc", "") == 3
    assert levenshtein("hello", "helo") == 1
    assert levenshtein("abc", "abc") == 0
    assert levenshtein("flaw", "lawn") == 2  # -f, +n


@settings(max_examples=200, deadline=None)
@given(st.text("abc", max_size=8), st.text("abc", max_size=8), st.text("abc", max_size=8))
def test_levenshtein_is_a_metric(a, b, c):
    d = levenshtein(a, b)
    assert d == levenshtein(b, a)
    assert (d == 0) == (a == b)
    assert abs(len(a) - len(b)) <= d <= max(len(a), len(b))
    assert levenshtein(a, c) <= d + levenshtein(b, c)


def test_anls_hand_cases():
    assert close(anls(["helo"], [["hello"]]), 0.8)  # NL = 1/5 -> 1 - 0.2
    assert anls(["abc"], [["xyz"]]) == 0.0  # NL = 3/3 >= 0.5
    assert close(anls(["helo", "xyz"], [["Hello"], ["abc"]]), 0.4)  # (0.8 + 0) / 2
    assert anls(["  Hello   World "], [["hello world"]]) == 1.0  # lower-cased, whitespace normalised
    # best of several gold answers: "dr lobo" vs "dr. lobo" NL = 1/8 -> 0.875; vs "dear dr. lobo" NL = 6/13 -> 7/13
    assert close(anls(["Dr Lobo"], [["Dear Dr. Lobo", "Dr. Lobo"]]), 0.875)
    assert close(anls(["Dr Lobo"], [["Dear Dr. Lobo"]]), 7 / 13)
    # threshold is strict: "abcd" vs "abxy" NL = 2/4 = 0.5, not < 0.5 -> 0; "abcd" vs "abcx" NL = 1/4 -> 0.75
    assert anls(["abxy"], [["abcd"]]) == 0.0
    assert close(anls(["abcx"], [["abcd"]]), 0.75)
    assert close(anls(["abxy"], [["abcd"]], threshold=0.6), 0.5)
    assert anls(["abc"], [["xyz"]], threshold=1.0) == 0.0  # NL = 1 is never < 1
    assert anls([""], [[""]]) == 1.0 and anls([""], [["abc"]]) == 0.0


def test_anls_errors():
    with pytest.raises(ValueError, match="question 1: gold answers must be a non-empty list"):
        anls(["a", "b"], [["a"], []])
    with pytest.raises(ValueError, match="question 0: gold answers must be a non-empty list"):
        anls(["a"], ["a"])  # a bare string is not a list of answers
    with pytest.raises(ValueError, match="2 predictions but 1 gold"):
        anls(["a", "b"], [["a"]])
    with pytest.raises(ValueError, match="empty"):
        anls([], [])
    with pytest.raises(ValueError, match="threshold"):
        anls(["a"], [["a"]], threshold=0)


# -- linking ------------------------------------------------------------------------------------------


def test_linking_scores_hand_case():
    gold = {(0, 1), (2, 3), (4, 5)}
    pred = {(0, 1), (3, 2), (6, 7)}
    # directed: only (0, 1) matches -> P = R = F1 = 1/3
    d = linking_scores(gold, pred)
    assert (d["tp"], d["n_pred"], d["n_gold"]) == (1, 3, 3)
    assert close(d["precision"], 1 / 3) and close(d["recall"], 1 / 3) and close(d["f1"], 1 / 3)
    # undirected: (3, 2) also matches (2, 3) -> 2/3 each
    u = linking_scores(gold, pred, directed=False)
    assert u["tp"] == 2 and close(u["f1"], 2 / 3)
    # duplicates count once (FUNSD lists a link in both of its entities)
    assert linking_scores([(0, 1), (0, 1)], [[0, 1]])["f1"] == 1.0
    assert linking_scores(set(), set())["f1"] == 0.0
    with pytest.raises(ValueError, match="pred_links: a link is a pair"):
        linking_scores({(0, 1)}, {(0, 1, 2)})


def test_linking_scores_many_is_micro():
    pairs = [({(0, 1)}, {(0, 1), (1, 2)}), ({(0, 1), (1, 2), (2, 3)}, set())]
    s = linking_scores_many(pairs)
    # tp = 1, predicted = 2, gold = 4: P = 1/2, R = 1/4, F1 = 2 * 1/2 * 1/4 / (3/4) = 1/3
    assert (s["tp"], s["n_pred"], s["n_gold"]) == (1, 2, 4)
    assert s["precision"] == 0.5 and s["recall"] == 0.25 and close(s["f1"], 1 / 3)
    with pytest.raises(ValueError, match="document 1: gold_links: a link is a pair"):
        linking_scores_many([(set(), set()), ({(1,)}, set())])


def test_linking_on_funsd_documents(funsd_docs):
    links = [document_links(d) for d in funsd_docs]
    assert sum(map(len, links)) > 1000  # 1,064 distinct links in FUNSD test
    assert linking_scores_many([(g, g) for g in links])["f1"] == 1.0
    reversed_ = [(g, {(b, a) for a, b in g}) for g in links]
    assert linking_scores_many(reversed_)["tp"] == 0  # no FUNSD link is listed in both directions
    assert linking_scores_many(reversed_, directed=False)["f1"] == 1.0


# -- word grouping ------------------------------------------------------------------------------------


def test_word_grouping_ari_hand_case():
    # gold {0,1,2}{3,4,5}, predicted {0,1}{2,3}{4,5}. Contingency [[2,1,0],[0,1,2]]:
    # sum C(n_ij,2) = 1 + 1 = 2; rows C(3,2)*2 = 6; cols C(2,2)*3 = 3; C(6,2) = 15
    # expected = 6 * 3 / 15 = 1.2; max = (6 + 3) / 2 = 4.5; ARI = (2 - 1.2) / (4.5 - 1.2) = 8/33
    assert close(word_grouping_ari([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 2, 2]), 8 / 33)
    assert word_grouping_ari([3, 3, 9, 9, 4], [0, 0, 1, 1, 2]) == 1.0  # ids are arbitrary
    with pytest.raises(ValueError, match="gold_groups has 2 words but pred_groups has 1"):
        word_grouping_ari([0, 1], [0])
    with pytest.raises(ValueError, match="empty"):
        word_grouping_ari([], [])


def test_word_groups_on_funsd(funsd_docs):
    doc = funsd_docs[0]
    groups = word_groups(doc)
    assert len(groups) == len(doc.words)
    assert word_grouping_ari(groups, groups) == 1.0
    every_word_alone = list(range(len(groups)))
    assert word_grouping_ari(groups, every_word_alone) < 0.5


# -- documents ------------------------------------------------------------------------------------------


def hand_doc() -> Document:
    page = PageImage.from_array(np.full((100, 200), 255, dtype=np.uint8))
    words = (
        Word("Name:", (10, 10, 50, 20)),
        Word("John", (60, 12, 90, 22)),
        Word(" ", (92, 12, 94, 22)),  # blank: not a token
        Word("Smith", (95, 8, 140, 21)),
        Word("Page 1", (10, 60, 40, 70)),
        Word("stray", (10, 80, 40, 90)),
    )
    entities = (
        Entity(0, "question", (0,), ((0, 1),)),
        Entity(1, "answer", (1, 2, 3), ((0, 1),)),
        Entity(5, "other", (4,)),
    )
    return Document(id="hand-1", image=page, words=words, entities=entities)


def test_document_helpers():
    doc = hand_doc()
    assert document_iob(doc) == ["B-QUESTION", "B-ANSWER", "I-ANSWER", "O", "O"]
    assert document_links(doc) == {(0, 1)}
    # words 0..4 in entities 0, 1, 1, 1, 5; the stray word gets a fresh cluster above the entity ids
    assert word_groups(doc) == [0, 1, 1, 1, 5, 6]
    pred = {"hand-1": ["B-QUESTION", "B-ANSWER", "O", "O", "B-HEADER"]}
    s = funsd_entity_scores([doc], pred)
    # gold Q, A[1:3]; predicted Q, A[1:2], H: tp 1, P = 1/3, R = 1/2, F1 = 2 * (1/6) / (5/6) = 0.4
    assert close(s["precision"], 1 / 3) and s["recall"] == 0.5 and close(s["f1"], 0.4)
    r = funsd_entity_error_rates([doc], pred)
    # QA: A missed -> 1/2; other: words "Page 1" (O) and "stray" (predicted B-HEADER) -> 1/2
    assert r["qa"]["error_rate"] == 0.5 and r["other"]["error_rate"] == 0.5
