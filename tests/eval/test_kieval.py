"""KIEval (Khang et al., ``kieval-metric.txt``): hand-computed cases, the paper's Fig. 5, properties, FUNSD."""

from __future__ import annotations

import itertools
import math
import random

import pytest

pytest.importorskip("hypothesis")  # the test extra

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from dogood.core.document import Entity
from dogood.eval.kieval import (
    as_entity,
    combine,
    funsd_entities,
    funsd_grouping,
    funsd_groups,
    group_similarity,
    kieval_aligned_tau,
    kieval_entity,
    kieval_group,
    kieval_tradeoff,
    match_groups,
    normalize_text,
)

approx = pytest.approx


def _assert_perfect_entity(r):
    for k in ("precision", "recall", "f1", "aligned"):
        assert r[k] == 1.0, k
    assert r["fp"] == r["fn"] == r["subs"] == r["add"] == r["del"] == r["error"] == 0


# -- data model ---------------------------------------------------------------------------


def test_normalisation_is_whitespace_only():
    assert normalize_text("  John \n\t Smith ") == "John Smith"
    assert as_entity(("question ", " Date:  ")) == ("question", "Date:")
    assert as_entity({"label": "answer", "text": "x"}) == ("answer", "x")
    assert as_entity({"key": "menu.nm", "value": "TEA"}) == ("menu.nm", "TEA")
    # case and punctuation are kept: exact match is the paper's rule (Sec. 2.2)
    assert kieval_entity([("a", "John")], [("a", "john")])["tp"] == 0
    assert kieval_entity([("a", "1,000")], [("a", "1000")])["tp"] == 0
    assert kieval_entity([("a", "John  Smith")], [("a", " John Smith")])["tp"] == 1
    # raw strings on request
    assert kieval_entity([("a", "John  Smith")], [("a", "John Smith")], normalize=None)["tp"] == 0


def test_entity_like_errors():
    with pytest.raises(TypeError):
        as_entity(("a", "b", "c"))
    with pytest.raises(TypeError):
        as_entity(Entity(1, "question", ()))  # a dogood Entity has no text: use funsd_entities
    with pytest.raises(TypeError):
        kieval_entity("ab", [])


# -- entity level, hand-computed ----------------------------------------------------------

GOLD3 = [("question", "Name:"), ("answer", "John"), ("question", "Date:")]


def test_perfect_prediction():
    r = kieval_entity(GOLD3, list(reversed(GOLD3)))
    _assert_perfect_entity(r)
    assert r["tp"] == 3


def test_empty_vs_empty_is_perfect_and_empty_prediction_is_zero():
    _assert_perfect_entity(kieval_entity([], []))
    r = kieval_entity(GOLD3, [])
    assert (r["precision"], r["recall"], r["f1"], r["aligned"]) == (0.0, 0.0, 0.0, 0.0)
    assert r["add"] == 3


def test_one_substitution():
    pred = [("question", "Name:"), ("answer", "Jon"), ("question", "Date:")]
    r = kieval_entity(GOLD3, pred)
    # TP 2 (Name:, Date:), FP 1 (Jon), FN 1 (John): P = R = F1 = 2/3
    assert (r["tp"], r["fp"], r["fn"]) == (2, 1, 1)
    assert r["f1"] == approx(2 / 3)
    # Eq. 8: Subs = min(FP, FN) = 1; Add = FN - Subs = 0; Del = FP - Subs = 0
    assert (r["subs"], r["add"], r["del"], r["error"]) == (1, 0, 0, 1)
    # Eq. 12: Aligned = TP / (TP + Error) = 2 / 3
    assert r["aligned"] == approx(2 / 3)
    assert r["per_label"]["answer"] == {"tp": 0, "fp": 1, "fn": 1, "subs": 1, "add": 0, "del": 0}


def test_one_missing_entity():
    r = kieval_entity(GOLD3, GOLD3[:2])
    # TP 2, FP 0, FN 1: P = 1, R = 2/3, F1 = 2 * (2/3) / (5/3) = 0.8
    assert (r["tp"], r["fp"], r["fn"]) == (2, 0, 1)
    assert (r["precision"], r["recall"], r["f1"]) == (1.0, approx(2 / 3), approx(0.8))
    # Add = 1: Aligned = 2 / (2 + 1)
    assert (r["subs"], r["add"], r["del"]) == (0, 1, 0)
    assert r["aligned"] == approx(2 / 3)


def test_one_extra_entity():
    r = kieval_entity(GOLD3, GOLD3 + [("other", "fax")])
    # TP 3, FP 1, FN 0: P = 3/4, R = 1, F1 = 2 * 0.75 / 1.75 = 6/7
    assert (r["tp"], r["fp"], r["fn"]) == (3, 1, 0)
    assert r["f1"] == approx(6 / 7)
    # Del = 1: Aligned = 3 / (3 + 1)
    assert (r["subs"], r["add"], r["del"]) == (0, 0, 1)
    assert r["aligned"] == approx(3 / 4)


def test_wrong_type_is_a_deletion_plus_an_addition():
    # substitutions are counted per entity type (Eqs. 8-10 are per e)
    r = kieval_entity([("question", "Date:")], [("answer", "Date:")])
    assert (r["tp"], r["fp"], r["fn"]) == (0, 1, 1)
    assert (r["subs"], r["add"], r["del"], r["error"]) == (0, 1, 1, 2)
    assert r["aligned"] == 0.0


def test_fig3_scenarios_cost_the_same_but_f1_differs():
    """Fig. 3: missing, wrong and extra information each cost one correction; F1 punishes 'wrong' twice."""
    two = [("k", "a"), ("k", "b")]
    missing = kieval_entity(two + [("k", "c")], two)  # fill one value
    wrong = kieval_entity(two + [("k", "c")], two + [("k", "x")])  # replace one value
    extra = kieval_entity(two, two + [("k", "x")])  # delete one value
    for r in (missing, wrong, extra):
        assert r["tp"] == 2 and r["error"] == 1
        assert r["aligned"] == approx(2 / 3)
    assert missing["f1"] == approx(0.8) and extra["f1"] == approx(0.8)
    assert wrong["f1"] == approx(2 / 3)  # FP + FN = 2 for a single correction


def test_multiset_counts():
    # gold has the value twice, the prediction three times and once wrong
    r = kieval_entity([("a", "1"), ("a", "1"), ("a", "2")], [("a", "1"), ("a", "1"), ("a", "1"), ("a", "3")])
    # TP 2; FP 2 (third "1", "3"); FN 1 ("2"): Subs 1, Del 1
    assert (r["tp"], r["fp"], r["fn"], r["subs"], r["add"], r["del"]) == (2, 2, 1, 1, 0, 1)


# -- group level: the paper's Fig. 5 ------------------------------------------------------

# Fig. 5 (top) of the paper is an image whose contents the text does not give; it
# reports, for "Prediction 2" (well-extracted entities, wrong grouping), Entity F1 =
# 1.0, KIEval Entity F1 = 1/3 and KIEval Group F1 = 0, and for "Prediction 1" (right
# entities, right groups) 1.0 everywhere. The smallest receipt that gives exactly those
# numbers: three menu lines of three fields, predicted as a Latin square (every
# predicted line shares exactly one field with every true line).
FIG5_GOLD = [
    [("menu.nm", "AMERICANO"), ("menu.cnt", "1"), ("menu.price", "4,500")],
    [("menu.nm", "LATTE"), ("menu.cnt", "2"), ("menu.price", "10,000")],
    [("menu.nm", "MOCHA"), ("menu.cnt", "3"), ("menu.price", "16,500")],
]
FIG5_PRED1 = [list(reversed(g)) for g in reversed(FIG5_GOLD)]
FIG5_PRED2 = [
    [("menu.nm", "AMERICANO"), ("menu.cnt", "2"), ("menu.price", "16,500")],
    [("menu.nm", "LATTE"), ("menu.cnt", "3"), ("menu.price", "4,500")],
    [("menu.nm", "MOCHA"), ("menu.cnt", "1"), ("menu.price", "10,000")],
]


def test_fig5_prediction1_is_perfect():
    r = kieval_group(FIG5_GOLD, FIG5_PRED1)
    _assert_perfect_entity(r["entity"])
    _assert_perfect_entity(r["plain"])
    assert r["group"] == {"tp": 3, "fp": 0, "fn": 0, "precision": 1.0, "recall": 1.0, "f1": 1.0}


def test_fig5_prediction2_wrong_grouping():
    r = kieval_group(FIG5_GOLD, FIG5_PRED2)
    # plain Entity F1: all 9 (type, value) pairs are right
    assert r["plain"]["f1"] == 1.0
    # KIEval Entity F1: each matched pair of lines shares one entity -> TP 3 of 9,
    # FP 6, FN 6, P = R = F1 = 1/3
    assert (r["entity"]["tp"], r["entity"]["fp"], r["entity"]["fn"]) == (3, 6, 6)
    assert r["entity"]["f1"] == approx(1 / 3)
    # KIEval Group F1: no line is right -> TP 0, FP 3, FN 3
    assert r["group"]["f1"] == 0.0
    assert (r["group"]["tp"], r["group"]["fp"], r["group"]["fn"]) == (0, 3, 3)
    # correction cost: 2 substitutions per line (e.g. cnt 2 -> 1, price 16,500 -> 4,500)
    assert (r["entity"]["subs"], r["entity"]["add"], r["entity"]["del"]) == (6, 0, 0)
    assert r["entity"]["aligned"] == approx(3 / 9)
    assert [s for _, _, s in r["matching"]] == [1, 1, 1]


# -- group level, hand-computed -----------------------------------------------------------

LINE_A = [("nm", "A"), ("price", "1")]
LINE_B = [("nm", "B"), ("price", "2")]


def test_group_one_wrong_value():
    r = kieval_group([LINE_A, LINE_B], [[("nm", "B"), ("price", "3")], LINE_A])
    # matching: pred 1 <-> gold 0 (S = 2), pred 0 <-> gold 1 (S = 1)
    assert r["matching"] == [(0, 1, 2), (1, 0, 1)]
    # entity: TP 3, FP 1, FN 1 -> F1 = 3/4; Subs 1 -> Aligned 3/4
    e = r["entity"]
    assert (e["tp"], e["fp"], e["fn"], e["subs"]) == (3, 1, 1, 1)
    assert e["f1"] == approx(0.75) and e["aligned"] == approx(0.75)
    # group: TP 1 (line A), FP 1, FN 1 -> F1 1/2
    assert r["group"]["f1"] == approx(0.5)


def test_group_missing_line():
    r = kieval_group([LINE_A, LINE_B], [LINE_A])
    # the unmatched gold line is two additions (Eq. 11, "Add unmatched gt")
    e = r["entity"]
    assert (e["tp"], e["fn"], e["add"], e["error"]) == (2, 2, 2, 2)
    assert e["aligned"] == approx(0.5)
    # group: TP 1, FP 0, FN 1 -> P 1, R 1/2, F1 2/3
    assert (r["group"]["precision"], r["group"]["recall"], r["group"]["f1"]) == (1.0, 0.5, approx(2 / 3))


def test_group_extra_line():
    r = kieval_group([LINE_A], [LINE_A, [("nm", "Z")]])
    assert (r["entity"]["del"], r["entity"]["aligned"]) == (1, approx(2 / 3))
    assert (r["group"]["tp"], r["group"]["fp"], r["group"]["fn"]) == (1, 1, 0)


def test_zero_overlap_pairs_are_matched_and_substituted():
    # |G| = min(N, M): the pair is matched with S = 0, so the error is one substitution
    r = kieval_group([[("nm", "A")]], [[("nm", "X")]])
    assert r["matching"] == [(0, 0, 0)]
    assert (r["entity"]["subs"], r["entity"]["add"], r["entity"]["del"]) == (1, 0, 0)
    assert r["group"]["f1"] == 0.0


@pytest.mark.parametrize("order", [0, 1])
def test_ties_are_broken_independently_of_order(order):
    # S = 0 for both gold groups: matching the prediction with the nm group gives one
    # substitution + one addition (2 corrections); with the price group one deletion + two
    # additions (3). The cheaper matching must win whatever the order.
    gold = [[("nm", "A")], [("price", "1")]]
    if order:
        gold = gold[::-1]
    r = kieval_group(gold, [[("nm", "X")]])
    assert (r["entity"]["subs"], r["entity"]["add"], r["entity"]["del"]) == (1, 1, 0)


@pytest.mark.parametrize("order", [0, 1])
def test_ties_prefer_identical_groups(order):
    gold = [[("q", "a")], [("q", "a"), ("ans", "b")]]
    if order:
        gold = gold[::-1]
    r = kieval_group(gold, [[("q", "a")]])
    assert r["group"]["tp"] == 1


def test_non_group_entities_count_at_entity_level_only():
    r = kieval_group(
        [LINE_A],
        [LINE_A],
        gold_ungrouped=[("total", "10"), ("store", "Cafe")],
        pred_ungrouped=[("total", "11"), ("store", "Cafe")],
    )
    # Eq. 6: the non-group pair is left out of Group F1
    assert r["group"]["f1"] == 1.0 and r["group"]["tp"] == 1
    # entity: TP 3 (A, 1, Cafe), one substitution on total: P = R = 3/4
    assert (r["entity"]["tp"], r["entity"]["subs"]) == (3, 1)
    assert r["entity"]["f1"] == approx(0.75)
    assert r["plain"]["f1"] == approx(0.75)


def test_empty_groups_are_dropped():
    r = kieval_group([LINE_A, []], [[], LINE_A])
    assert r["group"]["f1"] == 1.0 and r["group"]["tp"] == 1
    assert r["matching"] == [(0, 1, 2)]
    _assert_perfect_entity(kieval_group([], [])["entity"])


def test_group_similarity_and_match_groups():
    assert group_similarity(LINE_A + [("nm", "A")], [("nm", "A"), ("nm", "A"), ("price", "9")]) == 2
    assert match_groups(FIG5_GOLD, FIG5_PRED1) == [(0, 2, 3), (1, 1, 3), (2, 0, 3)]


def test_combine_is_a_micro_average():
    r1 = kieval_entity(GOLD3, GOLD3[:2])  # TP 2, FN 1
    r2 = kieval_entity(GOLD3, GOLD3 + [("other", "fax")])  # TP 3, FP 1
    c = combine([r1, r2])
    assert (c["tp"], c["fp"], c["fn"], c["add"], c["del"]) == (5, 1, 1, 1, 1)
    assert c["f1"] == approx(5 / 6) and c["aligned"] == approx(5 / 7)
    g = combine([kieval_group(FIG5_GOLD, FIG5_PRED1), kieval_group(FIG5_GOLD, FIG5_PRED2)])
    # entity TP 9 + 3 of 18 each side; group TP 3 of 6
    assert g["entity"]["f1"] == approx(12 / 18) and g["group"]["f1"] == approx(0.5) and g["plain"]["f1"] == 1.0


# -- automation trade-off (Appendix C) ----------------------------------------------------

TAU_GOLD = [("q", "Name"), ("a", "John"), ("q", "Date"), ("a", "5")]
TAU_PRED = [("q", "Name"), ("a", "Jon"), ("q", "Dat"), ("o", "junk")]
TAU_CONF = [0.9, 0.4, 0.95, 0.2]


def _tau(tau, gold=TAU_GOLD, pred=TAU_PRED, conf=TAU_CONF):
    return kieval_aligned_tau([], [], [], tau, gold_ungrouped=gold, pred_ungrouped=pred, pred_ungrouped_confidences=conf)


def test_aligned_tau_hand_computed():
    # Without review: TP 1 (Name). a: FP {Jon}, FN {John, 5} -> Subs 1, Add 1.
    # q: FP {Dat}, FN {Date} -> Subs 1. o: Del 1. Error 4 -> Aligned = 1 / 5.
    base = kieval_entity(TAU_GOLD, TAU_PRED)
    assert (base["subs"], base["add"], base["del"]) == (2, 1, 1)
    assert base["aligned"] == approx(1 / 5)

    r = _tau(0.0)  # nothing below tau: no review
    assert r["auto_rate"] == 1.0
    # Eq. 14 = 1 - (2 + 1 + 1) / (4 + 1) = 1/5 = Aligned
    assert r["aligned"] == approx(base["aligned"])

    r = _tau(0.5)  # Jon (0.4) and junk (0.2) are reviewed
    # Jon is rewritten to John, junk deleted; Dat (0.95) stays a substitution; 5 stays missing.
    # Subs^tau 1, Del^tau 0, Add 1, N(PR*) = 4 - 1 = 3: 1 - (1 + 0 + 1) / (3 + 1) = 1/2
    assert (r["subs"], r["del"], r["add"], r["n_pred_after"]) == (1, 0, 1, 3)
    assert r["aligned"] == approx(0.5)
    assert r["auto_rate"] == approx(0.5)  # 1 - 2/4

    r = _tau(math.inf)  # everything reviewed: 1 - 1 / (3 + 1) = (TP + Subs) / (TP + Subs + Add)
    assert r["auto_rate"] == 0.0
    assert r["aligned"] == approx(3 / 4)


def test_aligned_tau_most_confident_copy_is_the_correct_one():
    # one gold value, two predicted copies: the 0.1 copy is the extra one
    r = _tau(0.5, gold=[("a", "X")], pred=[("a", "X"), ("a", "X")], conf=[0.1, 0.9])
    assert (r["del"], r["n_deleted"], r["aligned"], r["auto_rate"]) == (0, 1, 1.0, 0.5)


def test_aligned_tau_reviewed_prediction_takes_the_substitution_slot():
    # one missing value, two wrong predictions: the reviewed one is rewritten into it,
    # the automated one is left as a deletion: 1 - 1 / (2 + 0)
    r = _tau(0.5, gold=[("a", "X")], pred=[("a", "Y"), ("a", "Z")], conf=[0.2, 0.8])
    assert (r["subs"], r["del"], r["n_fixed"], r["n_pred_after"]) == (0, 1, 1, 2)
    assert r["aligned"] == approx(0.5)


def test_aligned_tau_with_groups_and_sweep():
    conf = [[0.9, 0.8, 0.7], [0.6, 0.5, 0.4], [0.3, 0.2, 0.1]]
    curve = kieval_tradeoff(FIG5_GOLD, FIG5_PRED2, conf)
    assert [p["tau"] for p in curve] == approx([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, math.inf])
    assert curve[0]["auto_rate"] == 1.0 and curve[0]["aligned"] == approx(kieval_group(FIG5_GOLD, FIG5_PRED2)["entity"]["aligned"])
    assert curve[-1]["auto_rate"] == 0.0 and curve[-1]["aligned"] == 1.0  # all 6 substitutions fixed, nothing missing
    assert all(a["aligned"] <= b["aligned"] for a, b in zip(curve, curve[1:]))
    # a corpus curve: same taus, points summed
    corpus = [combine(points) for points in zip(curve, curve)]
    assert [p["aligned"] for p in corpus] == approx([p["aligned"] for p in curve])


def test_aligned_tau_checks_confidence_shapes():
    with pytest.raises(ValueError):
        kieval_aligned_tau([LINE_A], [LINE_A], [[0.5]], 0.5)
    with pytest.raises(ValueError):
        kieval_aligned_tau([], [], [], 0.5, pred_ungrouped=[("a", "b")])
    with pytest.raises(ValueError):
        kieval_aligned_tau([LINE_A], [LINE_A], [[0.5, float("nan")]], 0.5)


# -- properties ---------------------------------------------------------------------------

entity_st = st.tuples(st.sampled_from(["k1", "k2", "k3"]), st.sampled_from(["a", "b", "c", " a", "a b"]))
group_st = st.lists(entity_st, min_size=0, max_size=4)
groups_st = st.lists(group_st, min_size=0, max_size=5)
conf_st = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def _numbers(r, prefix=""):
    """All numeric leaves of a result, with the matching indices left out."""
    out = {}
    for k, v in r.items():
        if k == "matching":
            continue
        if isinstance(v, dict):
            out.update(_numbers(v, f"{prefix}{k}."))
        else:
            out[prefix + k] = v
    return out


def _shuffled(groups, rng):
    out = [rng.sample(g, len(g)) for g in groups]
    rng.shuffle(out)
    return out


@settings(max_examples=150, deadline=None)
@given(groups_st, groups_st, group_st, group_st, st.randoms(use_true_random=False))
def test_property_ranges_perfection_and_permutation(gold, pred, gold_ng, pred_ng, rng):
    r = kieval_group(gold, pred, gold_ungrouped=gold_ng, pred_ungrouped=pred_ng)
    for part in ("entity", "group", "plain"):
        for k in ("precision", "recall", "f1"):
            assert 0.0 <= r[part][k] <= 1.0
    assert 0.0 <= r["entity"]["aligned"] <= 1.0 and 0.0 <= r["plain"]["aligned"] <= 1.0
    # KIEval Entity F1 never exceeds the plain one: grouping can only remove true positives
    assert r["entity"]["tp"] <= r["plain"]["tp"]
    # Error = FP + FN - Subs
    e = r["entity"]
    assert e["error"] == e["fp"] + e["fn"] - e["subs"]

    perfect = kieval_group(gold, _shuffled(gold, rng), gold_ungrouped=gold_ng, pred_ungrouped=gold_ng[::-1])
    for part in ("entity", "group", "plain"):
        assert perfect[part]["f1"] == 1.0
    assert perfect["entity"]["aligned"] == 1.0

    permuted = kieval_group(
        _shuffled(gold, rng), _shuffled(pred, rng), gold_ungrouped=gold_ng[::-1], pred_ungrouped=pred_ng[::-1]
    )
    assert _numbers(permuted) == _numbers(r)


@settings(max_examples=100, deadline=None)
@given(st.lists(group_st, max_size=4), st.lists(group_st, max_size=4))
def test_property_hungarian_reaches_the_best_total_score(gold, pred):
    g = [x for x in gold if x]
    p = [x for x in pred if x]
    best = 0
    if g and p:
        k = min(len(g), len(p))
        for gi in itertools.permutations(range(len(g)), k):
            for pi in itertools.combinations(range(len(p)), k):
                best = max(best, sum(group_similarity(g[a], p[b]) for a, b in zip(gi, pi)))
    m = match_groups(gold, pred)
    assert len(m) == min(len(g), len(p))
    assert sum(s for _, _, s in m) == best


@settings(max_examples=100, deadline=None)
@given(st.data(), groups_st, groups_st)
def test_property_tradeoff(data, gold, pred):
    conf = [[data.draw(conf_st) for _ in g] for g in pred]
    curve = kieval_tradeoff(gold, pred, conf, [-math.inf, 0.25, 0.5, 0.75, math.inf])
    base = kieval_group(gold, pred)["entity"]
    for p in curve:
        assert 0.0 <= p["aligned"] <= 1.0 and 0.0 <= p["auto_rate"] <= 1.0
    assert curve[0]["aligned"] == approx(base["aligned"]) and curve[0]["auto_rate"] == 1.0
    done = base["tp"] + base["subs"]
    assert curve[-1]["aligned"] == approx(done / (done + base["add"]) if done + base["add"] else 1.0)
    for a, b in zip(curve, curve[1:]):
        assert a["aligned"] <= b["aligned"] + 1e-12
        assert a["auto_rate"] >= b["auto_rate"]


# -- FUNSD --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def funsd_doc(funsd_test):
    return funsd_test.load(funsd_test.ids()[0])


def _single_answer_question(doc):
    """A question linked to exactly one answer that no other question links to: (question id, answer id)."""
    by_id = {e.id: e for e in doc.entities}
    qa = {
        (a, b)
        for e in doc.entities
        for a, b in e.links
        if by_id[a].label == "question" and by_id[b].label == "answer"
        and doc.entity_text(by_id[a]).strip() and doc.entity_text(by_id[b]).strip()
    }
    for q, a in sorted(qa):
        if sum(1 for x, _ in qa if x == q) == 1 and sum(1 for _, y in qa if y == a) == 1:
            return q, a
    raise AssertionError("no single-answer question in the document")


def test_funsd_adapter_shapes(funsd_doc):
    groups = funsd_groups(funsd_doc)
    qa, ungrouped = funsd_grouping(funsd_doc)
    assert groups == qa + [[e] for e in ungrouped]
    assert qa and all(g[0][0] == "question" and len(g) >= 2 for g in qa)
    assert all(lab == "answer" for g in qa for lab, _ in g[1:])
    # the groups partition the (non-empty) entities
    flat = sorted(e for g in groups for e in g)
    assert flat == sorted(funsd_entities(funsd_doc))
    assert all(normalize_text(t) for _, t in flat)


def test_funsd_gold_against_itself(funsd_doc):
    groups = funsd_groups(funsd_doc)
    r = kieval_group(groups, groups)
    for part in ("entity", "group", "plain"):
        assert r[part]["f1"] == 1.0
    assert r["entity"]["aligned"] == 1.0
    qa, ungrouped = funsd_grouping(funsd_doc)
    r = kieval_group(qa, qa, gold_ungrouped=ungrouped, pred_ungrouped=ungrouped)
    assert r["entity"]["f1"] == r["group"]["f1"] == 1.0


def test_funsd_removed_link_lowers_group_f1_only(funsd_doc):
    q, a = _single_answer_question(funsd_doc)
    entities = [e.__class__(e.id, e.label, e.word_ids, tuple(p for p in e.links if p != (q, a))) for e in funsd_doc.entities]
    broken = funsd_doc.replace(entities=entities)
    gold, pred = funsd_groups(funsd_doc), funsd_groups(broken)
    assert len(pred) == len(gold) + 1  # the question's group split into the question and a lone answer
    r = kieval_group(gold, pred)
    # plain Entity F1 is blind to the lost link
    assert kieval_entity(funsd_entities(funsd_doc), funsd_entities(broken))["f1"] == 1.0
    assert r["plain"]["f1"] == 1.0
    # Group F1: one matched pair differs (question alone vs question + answer) and the lone
    # answer is an extra group: TP = |gold| - 1, FP = 2, FN = 1
    n = len(gold)
    assert (r["group"]["tp"], r["group"]["fp"], r["group"]["fn"]) == (n - 1, 2, 1)
    assert r["group"]["f1"] < 1.0
    # KIEval Entity F1 sees it too: the answer sits in the wrong group
    assert (r["entity"]["tp"], r["entity"]["fp"], r["entity"]["fn"]) == (len(funsd_entities(funsd_doc)) - 1, 1, 1)
    # with the link removed on a copy, shuffling the groups changes nothing
    rng = random.Random(0)
    assert _numbers(kieval_group(_shuffled(gold, rng), _shuffled(pred, rng))) == _numbers(r)
