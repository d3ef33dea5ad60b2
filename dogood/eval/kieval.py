"""KIEval: entity- and group-level scores for key information extraction, and their correction cost.

Khang, Jung, Park and Hong, *KIEval: Evaluation Metric for Document Key
Information Extraction* (ICDAR 2025; ``kieval-metric.txt`` in the papers
folder). Section numbers below are the paper's.

Data model (Sec. 4.1)
---------------------
An **entity** is a pair ``(entity_type, value)``: its key class and its text.
A **group** is a multiset of entities that belong together (a CORD menu line;
a FUNSD question with its answers). A document's prediction and its ground
truth are each a list of groups, plus optionally the *non-group* entities
(the paper's "1-st group": ``company.name``, a receipt's total, ...).

Entities match only **exactly**: same type and same value after
:func:`normalize_text`. The paper insists on exact match (Sec. 2.2: "Pear" vs
"Pea", "7000" vs "1000") and defines no normalisation; we only make
whitespace canonical (strip, and collapse runs of whitespace to one space),
because a value's spacing is an artefact of how words are joined, not part of
what was read. Case, punctuation and digits are kept: ``"john"`` does not match
``"John"``. Pass ``normalize=`` to any scoring function for another rule
(``normalize=str`` for raw strings).

The scores
----------
* :func:`kieval_entity` -- entity level without grouping: TP/FP/FN per type,
  precision/recall/F1 (the conventional *Entity F1*), the correction cost
  (Eqs. 8-10) and *KIEval_Aligned* (Eq. 12).
* :func:`kieval_group` -- group matching with the Hungarian algorithm
  (Eq. 1), *KIEval Entity F1* under that matching (Eqs. 2-5), *KIEval Group
  F1* (Eqs. 6-7), the correction cost over matched and unmatched groups
  (Eq. 11) and *KIEval_Aligned* (Eq. 12).
* :func:`kieval_aligned_tau` and :func:`kieval_tradeoff` -- the automation
  trade-off of Sec. 7 / Appendix C: *auto-rate^tau* (Eq. 13) and
  *KIEval_Aligned^tau* (Eq. 14).
* :func:`combine` -- sum the counts of several documents and recompute the
  ratios (the paper's dataset-level numbers are micro-averages).
* :func:`funsd_groups`, :func:`funsd_grouping`, :func:`funsd_entities` --
  FUNSD documents in this data model.

Where the paper is unclear
--------------------------
Every choice below is documented again where it is made.

1. *Substitution is per entity type* (Eqs. 8-10 are written per type ``e``):
   a prediction with the right value but the wrong type is one deletion plus
   one addition, never a substitution. Within one type (and one matched group
   pair) ``Subs = min(FP, FN)``, ``Add = FN - Subs``, ``Del = FP - Subs``.
2. *Zero-overlap pairs are matched.* The paper states ``|G| = min(N, M)``:
   the Hungarian matching pairs every group it can, including pairs with
   ``S = 0``; their mismatched entities are substitutions, not
   additions plus deletions.
3. *Ties in the Hungarian matching.* Eq. 1 maximises ``sum S`` only; several
   matchings can reach it and give different substitution and group counts,
   so results would depend on the order of the groups. We break ties
   lexicographically: most identical group pairs, then most substitutions
   (fewest corrections). All three sums are then fixed by the optimum, so
   every score is invariant to permuting groups; the assignment is solved on
   the groups sorted by content, so the per-type breakdown is invariant too.
4. *Non-group entities* form the paper's "1-st group", which is excluded from
   Group F1 (Eq. 6). Here they are passed separately (``gold_ungrouped`` /
   ``pred_ungrouped``) and always paired with each other, outside the
   Hungarian matching; they count at entity level only.
5. *Group F1 counts.* "FN and FP are calculated by counting the remaining
   ground-truth and predicted groups": ``FP = N' - TP``, ``FN = M' - TP``, so a
   matched but non-identical pair is one FP and one FN. Groups with no
   entities carry no information and are dropped before counting.
6. *Empty denominators.* A ratio ``x / 0`` is 1.0 when there is nothing to find
   and nothing was predicted (an empty prediction of an empty document is
   perfect) and 0.0 otherwise; F1 is 0.0 when precision + recall is 0.
7. *Appendix C* (Eq. 14) is read as follows, with an example in
   :func:`kieval_aligned_tau`: predictions with confidence ``< tau`` are
   reviewed by a flawless human who substitutes or deletes but never adds;
   reviewed predictions keep first claim on a group's substitution slots
   (the human rewrites a wrong value into a missing one), automated ones take
   the remaining slots (``Subs^tau``) or are deletions (``Del^tau``); ``Add`` is
   the addition count of Eq. 11 (unchanged: nobody adds); ``N(PR*)`` is the
   number of predictions left after the review. Among identical predicted
   copies of one value, the most confident copies are the correct ones.
8. *Fig. 5* is an image; the text only gives its scores (Entity F1 1.0,
   KIEval Entity F1 1/3, KIEval Group F1 0 for well-extracted entities in
   wrong groups). ``tests/eval/test_kieval.py`` rebuilds the smallest receipt with
   exactly those scores: three menu lines of three fields regrouped as a Latin
   square (see the example in :func:`kieval_group`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

__all__ = [
    "normalize_text",
    "as_entity",
    "group_similarity",
    "match_groups",
    "kieval_entity",
    "kieval_group",
    "kieval_aligned_tau",
    "kieval_tradeoff",
    "combine",
    "funsd_entities",
    "funsd_grouping",
    "funsd_groups",
]

EntityT = tuple[str, str]
Normalizer = Callable[[str], str]


# ---------------------------------------------------------------------------
# data model
# ---------------------------------------------------------------------------


def normalize_text(text: str) -> str:
    """Canonical whitespace: strip, and collapse every run of whitespace to one space.

    The paper (Sec. 2.2, 4.1) matches values exactly and defines no
    normalisation; this is the only relaxation applied by default. Case,
    punctuation and characters are kept.

    Examples
    --------
    >>> normalize_text("  John \\n  Smith ")
    'John Smith'
    """
    return " ".join(str(text).split())


def as_entity(item: Any, normalize: Normalizer | None = normalize_text) -> EntityT:
    """An entity-like object as a normalised ``(entity_type, value)`` pair.

    Accepted forms: a 2-sequence ``(label, text)``; a mapping with ``label`` (or
    ``key`` / ``type``) and ``text`` (or ``value``); an object with a ``label``
    attribute and a ``text`` or ``value`` attribute. The type is stripped of
    surrounding whitespace; the value goes through ``normalize`` (identity
    when ``None``).
    """
    label: Any
    value: Any
    if isinstance(item, Mapping):
        label = _first_key(item, ("label", "key", "type"))
        value = _first_key(item, ("text", "value"))
    elif isinstance(item, Sequence) and not isinstance(item, (str, bytes)):
        if len(item) != 2:
            raise TypeError(f"an entity is a (label, text) pair, got {item!r}")
        label, value = item
    elif hasattr(item, "label") and (hasattr(item, "text") or hasattr(item, "value")):
        label = item.label
        value = item.text if hasattr(item, "text") else item.value
    else:
        raise TypeError(
            f"cannot read an entity from {item!r}: expected (label, text), a mapping with "
            "label/text or an object with .label and .text"
        )
    if label is None or value is None:
        raise TypeError(f"an entity needs a label and a text, got {item!r}")
    value = str(value)
    return (str(label).strip(), normalize(value) if normalize is not None else value)


def _first_key(m: Mapping, keys: Sequence[str]) -> Any:
    for k in keys:
        if k in m:
            return m[k]
    raise TypeError(f"entity mapping {dict(m)!r} has none of the keys {', '.join(keys)}")


def _entities(items: Iterable[Any], normalize: Normalizer | None) -> list[EntityT]:
    if isinstance(items, (str, bytes)):
        raise TypeError("expected a list of entities, got a string")
    return [as_entity(x, normalize) for x in items]


def _groups(groups: Iterable[Iterable[Any]], normalize: Normalizer | None) -> list[list[EntityT]]:
    if isinstance(groups, (str, bytes)):
        raise TypeError("expected a list of groups, got a string")
    return [_entities(g, normalize) for g in groups]


# ---------------------------------------------------------------------------
# counting helpers
# ---------------------------------------------------------------------------

_COUNT_KEYS = ("tp", "fp", "fn", "subs", "add", "del")


def _ratio(num: int, den: int, *, empty: bool) -> float:
    """``num / den``; for ``den == 0`` 1.0 when the whole problem is empty, else 0.0 (choice 6)."""
    if den:
        return num / den
    return 1.0 if empty else 0.0


def _prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    empty = tp + fp + fn == 0
    p = _ratio(tp, tp + fp, empty=empty)
    r = _ratio(tp, tp + fn, empty=empty)
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def _entity_scores(counts: Mapping[str, int], per_label: Mapping[str, Mapping[str, int]]) -> dict[str, Any]:
    """Precision/recall/F1, correction cost and KIEval_Aligned from summed counts (Eqs. 3-5, 11, 12)."""
    tp, fp, fn = counts["tp"], counts["fp"], counts["fn"]
    subs, add, dele = counts["subs"], counts["add"], counts["del"]
    p, r, f = _prf(tp, fp, fn)
    error = subs + add + dele
    out: dict[str, Any] = {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": p,
        "recall": r,
        "f1": f,
        "subs": subs,
        "add": add,
        "del": dele,
        "error": error,
        # Eq. 12: KIEval_Aligned = TP / (TP + Error)
        "aligned": _ratio(tp, tp + error, empty=tp + fp + fn == 0),
        "per_label": {k: dict(v) for k, v in sorted(per_label.items())},
    }
    return out


def _new_counts() -> dict[str, int]:
    return dict.fromkeys(_COUNT_KEYS, 0)


def _add_cell(counts: dict[str, int], per_label: dict[str, dict[str, int]], label: str, cell: Mapping[str, int]) -> None:
    bucket = per_label.setdefault(label, _new_counts())
    for k in _COUNT_KEYS:
        counts[k] += cell[k]
        bucket[k] += cell[k]


def _cells(gold: Counter, pred: Counter) -> dict[str, dict[str, int]]:
    """Eqs. 2 and 8-10 for one matched pair: per entity type, TP/FP/FN and Subs/Add/Del.

    ``TP^e = S^e`` (identical entities of type ``e``), ``FN^e = N_e(gt) - S^e``,
    ``FP^e = N_e(pr) - S^e``; ``Subs^e = min(FP^e, FN^e)``, ``Add^e = FN^e - Subs^e``,
    ``Del^e = FP^e - Subs^e``. A wrong type is therefore never a substitution
    (choice 1).
    """
    inter = gold & pred
    n_gold: Counter = Counter()
    n_pred: Counter = Counter()
    n_tp: Counter = Counter()
    for (label, _), c in gold.items():
        n_gold[label] += c
    for (label, _), c in pred.items():
        n_pred[label] += c
    for (label, _), c in inter.items():
        n_tp[label] += c
    out = {}
    for label in n_gold.keys() | n_pred.keys():
        tp = n_tp[label]
        fn = n_gold[label] - tp
        fp = n_pred[label] - tp
        subs = min(fp, fn)
        out[label] = {"tp": tp, "fp": fp, "fn": fn, "subs": subs, "add": fn - subs, "del": fp - subs}
    return out


def _unmatched_cells(group: Counter, *, gold: bool) -> dict[str, dict[str, int]]:
    """Eq. 11's last two terms: every entity of an unmatched gold group is an addition, of a predicted one a deletion."""
    by_label: Counter = Counter()
    for (label, _), c in group.items():
        by_label[label] += c
    if gold:
        return {k: {"tp": 0, "fp": 0, "fn": c, "subs": 0, "add": c, "del": 0} for k, c in by_label.items()}
    return {k: {"tp": 0, "fp": c, "fn": 0, "subs": 0, "add": 0, "del": c} for k, c in by_label.items()}


# ---------------------------------------------------------------------------
# entity level without grouping
# ---------------------------------------------------------------------------


def kieval_entity(gold: Iterable[Any], pred: Iterable[Any], *, normalize: Normalizer | None = normalize_text) -> dict[str, Any]:
    """Entity-level scores and correction cost of a flat prediction (Sec. 2.2, 4.2).

    Every entity is matched exactly (type and normalised value) against the
    ground truth as a multiset: ``TP`` counts identical pairs, ``FP`` the
    remaining predictions, ``FN`` the remaining ground truth. This is the
    conventional *Entity F1* (Sec. 2.2), and also KIEval Entity F1 of a
    document without groups, where the whole document is the non-group
    "1-st group" (Sec. 4.1).

    The correction cost follows Eqs. 8-10 per entity type ``e``:
    ``Subs^e = min(FP^e, FN^e)`` (a wrong value rewritten into a missing one of
    the same type), ``Add^e = FN^e - Subs^e`` and ``Del^e = FP^e - Subs^e``. A
    right value with the wrong type is one deletion plus one addition.
    ``aligned`` is KIEval_Aligned, Eq. 12: ``TP / (TP + Subs + Add + Del)``.

    Parameters
    ----------
    gold, pred : iterables of entity-likes (see :func:`as_entity`).
    normalize : value normaliser (default :func:`normalize_text`; ``None`` = raw).

    Returns
    -------
    dict
        ``tp, fp, fn, precision, recall, f1, subs, add, del, error, aligned``
        and ``per_label`` (the six counts per entity type). With nothing to
        find and nothing predicted every score is 1.0.

    Examples
    --------
    One substitution: TP 1, FP 1, FN 1, so F1 = 0.5, but a single correction,
    so Aligned = 1 / (1 + 1) = 0.5 too.

    >>> r = kieval_entity([("q", "Name"), ("a", "John")], [("q", "Name"), ("a", "Jon")])
    >>> (r["f1"], r["subs"], r["add"], r["del"], r["aligned"])
    (0.5, 1, 0, 0, 0.5)
    """
    g = Counter(_entities(gold, normalize))
    p = Counter(_entities(pred, normalize))
    counts, per_label = _new_counts(), {}
    for label, cell in _cells(g, p).items():
        _add_cell(counts, per_label, label, cell)
    return _entity_scores(counts, per_label)


# ---------------------------------------------------------------------------
# group matching
# ---------------------------------------------------------------------------


def group_similarity(gold_group: Iterable[Any], pred_group: Iterable[Any], *, normalize: Normalizer | None = normalize_text) -> int:
    """The matching score ``S_(n,m)`` of Sec. 4.1: the number of identical entities of two groups.

    Groups are multisets: a value predicted twice but present once counts once.
    """
    return sum((Counter(_entities(gold_group, normalize)) & Counter(_entities(pred_group, normalize))).values())


def _hungarian(gold: Sequence[Counter], pred: Sequence[Counter]) -> list[tuple[int, int]]:
    """Eq. 1 with order-free tie-breaking (choice 3); returns ``(gold_index, pred_index)`` pairs.

    The objective is lexicographic: ``sum S`` first (the paper's), then the
    number of identical pairs, then the number of substitutions. It is folded
    into one integer weight ``S*K1 + identical*K2 + subs`` with ``K2`` above any
    total of substitutions and ``K1`` above any total of the two lower terms,
    so one linear assignment solves it exactly.
    """
    m, n = len(gold), len(pred)
    if m == 0 or n == 0:
        return []
    # Solve on the groups sorted by content, so that even the remaining ties (which
    # only move counts between entity types in ``per_label``) do not depend on order.
    go = sorted(range(m), key=lambda i: sorted(gold[i].items()))
    po = sorted(range(n), key=lambda j: sorted(pred[j].items()))
    pairs = _hungarian_sorted([gold[i] for i in go], [pred[j] for j in po])
    return sorted((go[r], po[c]) for r, c in pairs)


def _hungarian_sorted(gold: Sequence[Counter], pred: Sequence[Counter]) -> list[tuple[int, int]]:
    m, n = len(gold), len(pred)
    size_g = sum(sum(c.values()) for c in gold)
    size_p = sum(sum(c.values()) for c in pred)
    k2 = min(size_g, size_p) + 1
    k1 = k2 * (min(m, n) + 1)
    labels_g = [{lab for lab, _ in c} for c in gold]
    labels_p = [{lab for lab, _ in c} for c in pred]
    weight = np.zeros((m, n), dtype=np.float64)
    for i, gc in enumerate(gold):
        for j, pc in enumerate(pred):
            if labels_g[i].isdisjoint(labels_p[j]):
                continue  # no shared type: S = 0, no substitution, not identical (groups are non-empty)
            cells = _cells(gc, pc)
            s = sum(c["tp"] for c in cells.values())
            subs = sum(c["subs"] for c in cells.values())
            identical = int(gc == pc)
            weight[i, j] = s * k1 + identical * k2 + subs
    rows, cols = linear_sum_assignment(weight, maximize=True)
    return [(int(r), int(c)) for r, c in zip(rows, cols)]


def match_groups(
    gold_groups: Iterable[Iterable[Any]],
    pred_groups: Iterable[Iterable[Any]],
    *,
    normalize: Normalizer | None = normalize_text,
) -> list[tuple[int, int, int]]:
    """The group matching ``G`` of Eq. 1 as ``(gold_index, pred_index, S)`` triples, sorted by gold index.

    The Hungarian algorithm (``scipy.optimize.linear_sum_assignment``) maximises
    the total matching score ``S`` (:func:`group_similarity`); ``|G| = min(N, M)``
    so pairs with ``S = 0`` are matched too (choice 2). Ties are broken by the
    number of identical pairs, then of substitutions (choice 3). Empty groups
    are never matched (choice 5).
    """
    g = _groups(gold_groups, normalize)
    p = _groups(pred_groups, normalize)
    gi = [i for i, x in enumerate(g) if x]
    pi = [j for j, x in enumerate(p) if x]
    gc = [Counter(g[i]) for i in gi]
    pc = [Counter(p[j]) for j in pi]
    out = []
    for r, c in _hungarian(gc, pc):
        out.append((gi[r], pi[c], sum((gc[r] & pc[c]).values())))
    return sorted(out)


# ---------------------------------------------------------------------------
# group level
# ---------------------------------------------------------------------------


def kieval_group(
    gold_groups: Iterable[Iterable[Any]],
    pred_groups: Iterable[Iterable[Any]],
    *,
    gold_ungrouped: Iterable[Any] = (),
    pred_ungrouped: Iterable[Any] = (),
    normalize: Normalizer | None = normalize_text,
) -> dict[str, Any]:
    """KIEval Entity F1, KIEval Group F1 and KIEval_Aligned of a grouped prediction (Sec. 4.1, 4.2).

    1. Groups are matched with the Hungarian algorithm on ``S_(n,m)``, the
       number of identical entities (Eq. 1; :func:`match_groups`).
    2. *KIEval Entity F1* (Eqs. 2-5): ``TP`` sums the identical entities of the
       matched pairs (and of the non-group entities); ``FN`` / ``FP`` are all
       ground-truth / predicted entities minus ``TP``. An entity predicted in
       the wrong group is not a true positive: this is what separates it from
       the plain Entity F1 (Fig. 5).
    3. *KIEval Group F1* (Eqs. 6-7): a matched pair is a true positive when the
       two groups are identical multisets; ``FP = N' - TP`` and ``FN = M' - TP``
       count the remaining predicted and ground-truth groups. Non-group
       entities never count here (Eq. 6).
    4. Correction cost (Eqs. 8-11): per matched pair and type
       ``Subs = min(FP, FN)``, ``Add = FN - Subs``, ``Del = FP - Subs``; every
       entity of an unmatched gold group is an addition, of an unmatched
       predicted group a deletion. ``aligned`` = ``TP / (TP + Error)`` (Eq. 12).

    Parameters
    ----------
    gold_groups, pred_groups : lists of groups; a group is a list of entity-likes
        (see :func:`as_entity`), compared as a multiset. Empty groups are dropped.
    gold_ungrouped, pred_ungrouped : the non-group entities (the paper's
        "1-st group"). They are always paired with each other, outside the
        Hungarian matching, and count at entity level only (choice 4).
    normalize : value normaliser (default :func:`normalize_text`).

    Returns
    -------
    dict
        ``entity``: the keys of :func:`kieval_entity` under the group matching
        (``f1`` is KIEval Entity F1, ``aligned`` KIEval_Aligned);
        ``group``: ``tp, fp, fn, precision, recall, f1`` (KIEval Group F1);
        ``plain``: :func:`kieval_entity` of all entities with the grouping
        ignored (the conventional Entity F1);
        ``matching``: ``(gold_index, pred_index, S)`` triples.

    Examples
    --------
    Fig. 5 (top), reconstructed: every entity right, every group wrong.

    >>> gold = [[("nm", "A"), ("cnt", "1"), ("price", "10")],
    ...         [("nm", "B"), ("cnt", "2"), ("price", "20")],
    ...         [("nm", "C"), ("cnt", "3"), ("price", "30")]]
    >>> pred = [[("nm", "A"), ("cnt", "2"), ("price", "30")],
    ...         [("nm", "B"), ("cnt", "3"), ("price", "10")],
    ...         [("nm", "C"), ("cnt", "1"), ("price", "20")]]
    >>> r = kieval_group(gold, pred)
    >>> r["plain"]["f1"], round(r["entity"]["f1"], 4), r["group"]["f1"]
    (1.0, 0.3333, 0.0)
    """
    g_all = _groups(gold_groups, normalize)
    p_all = _groups(pred_groups, normalize)
    gi = [i for i, x in enumerate(g_all) if x]  # empty groups are dropped (choice 5)
    pi = [j for j, x in enumerate(p_all) if x]
    g = [g_all[i] for i in gi]
    p = [p_all[j] for j in pi]
    g_ng = _entities(gold_ungrouped, normalize)
    p_ng = _entities(pred_ungrouped, normalize)
    gc = [Counter(x) for x in g]
    pc = [Counter(x) for x in p]

    pairs = _hungarian(gc, pc)
    counts, per_label = _new_counts(), {}
    # the non-group "1-st group" pair (n1, m1): entity level only
    for label, cell in _cells(Counter(g_ng), Counter(p_ng)).items():
        _add_cell(counts, per_label, label, cell)
    group_tp = 0
    matching = []
    for i, j in pairs:
        cells = _cells(gc[i], pc[j])
        for label, cell in cells.items():
            _add_cell(counts, per_label, label, cell)
        group_tp += int(gc[i] == pc[j])  # Eq. 7: S^e = N_e(gt) = N_e(pr) for all e
        matching.append((i, j, sum(c["tp"] for c in cells.values())))
    matched_g = {i for i, _ in pairs}
    matched_p = {j for _, j in pairs}
    for i, c in enumerate(gc):
        if i not in matched_g:
            for label, cell in _unmatched_cells(c, gold=True).items():
                _add_cell(counts, per_label, label, cell)
    for j, c in enumerate(pc):
        if j not in matched_p:
            for label, cell in _unmatched_cells(c, gold=False).items():
                _add_cell(counts, per_label, label, cell)

    group_counts = {"tp": group_tp, "fp": len(p) - group_tp, "fn": len(g) - group_tp}
    flat_g = [e for grp in g for e in grp] + g_ng
    flat_p = [e for grp in p for e in grp] + p_ng
    return {
        "entity": _entity_scores(counts, per_label),
        "group": _group_scores(group_counts),
        "plain": kieval_entity(flat_g, flat_p, normalize=None),
        "matching": sorted((gi[i], pi[j], s) for i, j, s in matching),  # indices into the caller's lists
    }


def _group_scores(c: Mapping[str, int]) -> dict[str, Any]:
    p, r, f = _prf(c["tp"], c["fp"], c["fn"])
    return {"tp": c["tp"], "fp": c["fp"], "fn": c["fn"], "precision": p, "recall": r, "f1": f}


# ---------------------------------------------------------------------------
# automation trade-off (Sec. 7, Appendix C)
# ---------------------------------------------------------------------------


class _TauCells:
    """Everything Eq. 14 needs, computed once per document, then evaluated for any ``tau``.

    ``confidences``: every prediction's confidence (for Eq. 13). ``cells``:
    one per (matched pair or non-group pair or unmatched predicted group,
    entity type): the confidences of its *wrong* predictions and its number of
    substitution slots. ``add``: the additions of Eq. 11 (fixed: humans do not add).
    """

    def __init__(self, gold_groups, pred_groups, pred_confidences, gold_ungrouped, pred_ungrouped, pred_ungrouped_confidences, normalize):
        g = _groups(gold_groups, normalize)
        p = _groups(pred_groups, normalize)
        pconf = [list(c) for c in pred_confidences]
        if len(pconf) != len(p) or any(len(a) != len(b) for a, b in zip(pconf, p)):
            raise ValueError("pred_confidences must have one confidence per predicted entity, group by group")
        g_ng = _entities(gold_ungrouped, normalize)
        p_ng = _entities(pred_ungrouped, normalize)
        ng_conf = list(pred_ungrouped_confidences)
        if p_ng and not ng_conf:
            raise ValueError("pred_ungrouped needs pred_ungrouped_confidences, one per entity")
        if len(ng_conf) != len(p_ng):
            raise ValueError("pred_ungrouped_confidences must have one confidence per non-group predicted entity")
        all_conf = [c for grp in pconf for c in grp] + ng_conf
        for c in all_conf:
            if isinstance(c, bool) or not isinstance(c, (int, float, np.integer, np.floating)) or math.isnan(c):
                raise ValueError(f"confidences must be numbers, got {c!r}")
        self.confidences = np.asarray(all_conf, dtype=np.float64)

        keep_g = [x for x in g if x]
        keep_p = [(x, [float(v) for v in c]) for x, c in zip(p, pconf) if x]
        gc = [Counter(x) for x in keep_g]
        pc = [Counter(x) for x, _ in keep_p]
        pairs = _hungarian(gc, pc)

        self.cells: list[tuple[np.ndarray, int]] = []
        self.add = 0
        self._pair(Counter(g_ng), list(zip(p_ng, (float(v) for v in ng_conf))))
        for i, j in pairs:
            x, c = keep_p[j]
            self._pair(gc[i], list(zip(x, c)))
        matched_g = {i for i, _ in pairs}
        matched_p = {j for _, j in pairs}
        for i, c in enumerate(gc):
            if i not in matched_g:
                self.add += sum(c.values())
        for j, (x, c) in enumerate(keep_p):
            if j not in matched_p:
                self.cells.append((np.asarray(c, dtype=np.float64), 0))  # all deletions

    def _pair(self, gold: Counter, pred: list[tuple[EntityT, float]]) -> None:
        """One matched pair: which predictions are wrong, and how many substitution slots each type has."""
        by_entity: dict[EntityT, list[float]] = {}
        for ent, c in pred:
            by_entity.setdefault(ent, []).append(c)
        wrong: dict[str, list[float]] = {}
        n_gold: Counter = Counter()
        n_tp: Counter = Counter()
        for (label, _), k in gold.items():
            n_gold[label] += k
        for ent, confs in by_entity.items():
            confs.sort(reverse=True)
            k = min(gold.get(ent, 0), len(confs))  # the most confident copies are the correct ones
            n_tp[ent[0]] += k
            wrong.setdefault(ent[0], []).extend(confs[k:])
        for label in n_gold.keys() | wrong.keys():
            w = wrong.get(label, [])
            fn = n_gold[label] - n_tp[label]
            subs = min(len(w), fn)
            self.add += fn - subs
            if w:
                self.cells.append((np.asarray(w, dtype=np.float64), subs))

    def at(self, tau: float) -> dict[str, Any]:
        n_pred = int(self.confidences.size)
        n_review = int(np.count_nonzero(self.confidences < tau))
        subs_tau = del_tau = removed = fixed = 0
        for confs, slots in self.cells:
            low = int(np.count_nonzero(confs < tau))
            high = confs.size - low
            low_subs = min(low, slots)  # reviewed predictions are rewritten first
            high_subs = slots - low_subs  # <= high since slots <= low + high
            subs_tau += high_subs
            del_tau += high - high_subs
            removed += low - low_subs  # reviewed and deleted
            fixed += low_subs
        n_after = n_pred - removed
        err = subs_tau + del_tau + self.add
        den = n_after + self.add
        return {
            "tau": float(tau),
            # Eq. 13: auto-rate^tau = 1 - |PR^{<tau}| / |PR|
            "auto_rate": 1.0 - n_review / n_pred if n_pred else 1.0,
            # Eq. 14: 1 - (Subs^tau + Del^tau + Add) / (N(PR*) + Add)
            "aligned": 1.0 - err / den if den else 1.0,
            "subs": subs_tau,
            "del": del_tau,
            "add": self.add,
            "n_pred": n_pred,
            "n_reviewed": n_review,
            "n_fixed": fixed,
            "n_deleted": removed,
            "n_pred_after": n_after,
        }


def kieval_aligned_tau(
    gold_groups: Iterable[Iterable[Any]],
    pred_groups: Iterable[Iterable[Any]],
    pred_confidences: Iterable[Iterable[float]],
    tau: float,
    *,
    gold_ungrouped: Iterable[Any] = (),
    pred_ungrouped: Iterable[Any] = (),
    pred_ungrouped_confidences: Iterable[float] = (),
    normalize: Normalizer | None = normalize_text,
) -> dict[str, Any]:
    """KIEval_Aligned^tau and auto-rate^tau: the RPA trade-off of Sec. 7 and Appendix C (Eqs. 13-14).

    Predictions with confidence ``>= tau`` are automated; those below ``tau``
    (``PR^{<tau}``) go to a human, assumed flawless, who substitutes or
    deletes wrong values but never adds missing ones (Appendix C).

    * ``auto_rate = 1 - |PR^{<tau}| / |PR|`` (Eq. 13; 1.0 with no predictions).
    * ``aligned = 1 - (Subs^tau + Del^tau + Add) / (N(PR*) + Add)`` (Eq. 14),
      where ``Subs^tau`` / ``Del^tau`` are the substitutions / deletions still
      needed by automated predictions, ``Add`` the additions of Eq. 11 and
      ``N(PR*)`` the number of predictions after the review.

    The text of Appendix C leaves open which wrong prediction of a group
    pair and type claims a substitution slot (``min(FP, FN)`` of them). We let
    reviewed predictions claim them first: the reviewer rewrites a wrong value
    into a missing one rather than deleting it. Automated wrong predictions
    take the slots left (``Subs^tau``); the rest are ``Del^tau``. When several
    predicted copies of one value exist and fewer are in the ground truth, the
    most confident copies count as correct. The group matching is the one of
    :func:`kieval_group` and ignores confidences.

    With this reading ``aligned`` equals KIEval_Aligned (Eq. 12) when nothing is
    reviewed (``tau`` at or below every confidence), is
    ``(TP + Subs) / (TP + Subs + Add)`` when everything is, and never decreases
    as ``tau`` grows.

    Parameters
    ----------
    gold_groups, pred_groups : as in :func:`kieval_group`.
    pred_confidences : one list per predicted group, one confidence per entity.
    tau : the confidence threshold.
    gold_ungrouped, pred_ungrouped, pred_ungrouped_confidences : non-group
        entities and the confidences of the predicted ones.
    normalize : value normaliser.

    Returns
    -------
    dict
        ``tau, auto_rate, aligned, subs, del, add, n_pred, n_reviewed,
        n_fixed`` (reviewed and rewritten), ``n_deleted`` (reviewed and
        removed), ``n_pred_after`` (``N(PR*)``).

    Examples
    --------
    Gold: (q, Name), (a, John), (q, Date). Predictions: (q, Name) at 0.9 is
    right; (a, Jon) at 0.4 and (q, Dat) at 0.95 are substitutions; (o, junk)
    at 0.2 is a deletion. Plain KIEval_Aligned = 1 / (1 + 3) = 0.25. At
    tau = 0.5 a human sees Jon (rewrites it to John) and junk (deletes it);
    Dat stays wrong: Subs^tau = 1, Del^tau = 0, Add = 0, N(PR*) = 4 - 1 = 3, so
    Aligned^tau = 1 - 1/3 and auto-rate = 1 - 2/4.

    >>> gold = [("q", "Name"), ("a", "John"), ("q", "Date")]
    >>> pred = [("q", "Name"), ("a", "Jon"), ("q", "Dat"), ("o", "junk")]
    >>> r = kieval_aligned_tau([], [], [], 0.5, gold_ungrouped=gold, pred_ungrouped=pred,
    ...                        pred_ungrouped_confidences=[0.9, 0.4, 0.95, 0.2])
    >>> round(r["aligned"], 4), r["auto_rate"]
    (0.6667, 0.5)
    """
    cells = _TauCells(
        gold_groups, pred_groups, pred_confidences, gold_ungrouped, pred_ungrouped, pred_ungrouped_confidences, normalize
    )
    return cells.at(float(tau))


def kieval_tradeoff(
    gold_groups: Iterable[Iterable[Any]],
    pred_groups: Iterable[Iterable[Any]],
    pred_confidences: Iterable[Iterable[float]],
    taus: Iterable[float] | None = None,
    *,
    gold_ungrouped: Iterable[Any] = (),
    pred_ungrouped: Iterable[Any] = (),
    pred_ungrouped_confidences: Iterable[float] = (),
    normalize: Normalizer | None = normalize_text,
) -> list[dict[str, Any]]:
    """The trade-off curve of Fig. 7: :func:`kieval_aligned_tau` for every ``tau`` in ``taus``.

    ``taus`` defaults to every distinct confidence (ascending) followed by
    ``inf``: the first point reviews nothing (auto-rate 1), the last
    everything (auto-rate 0). The matching is computed once.

    For a curve over many documents pass the same ``taus`` for each and sum
    the points with :func:`combine`::

        curves = [kieval_tradeoff(g, p, c, taus) for g, p, c in docs]
        corpus = [combine(points) for points in zip(*curves)]
    """
    cells = _TauCells(
        gold_groups, pred_groups, pred_confidences, gold_ungrouped, pred_ungrouped, pred_ungrouped_confidences, normalize
    )
    if taus is None:
        taus = [*np.unique(cells.confidences).tolist(), math.inf]
    return [cells.at(float(t)) for t in taus]


# ---------------------------------------------------------------------------
# corpus level
# ---------------------------------------------------------------------------


def combine(results: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Sum per-document results and recompute their ratios (micro-average over a corpus).

    Accepts a list of results of one kind: all from :func:`kieval_entity`, all
    from :func:`kieval_group` (``matching`` is dropped) or all from
    :func:`kieval_aligned_tau` at one ``tau``.
    """
    results = list(results)
    if not results:
        raise ValueError("combine needs at least one result")
    first = results[0]
    if "group" in first and "entity" in first:
        return {
            "entity": combine([r["entity"] for r in results]),
            "group": _group_scores({k: sum(r["group"][k] for r in results) for k in ("tp", "fp", "fn")}),
            "plain": combine([r["plain"] for r in results]),
        }
    if "auto_rate" in first:
        taus = {r["tau"] for r in results}
        if len(taus) != 1:
            raise ValueError(f"combine the results of one tau at a time, got {sorted(taus)}")
        keys = ("subs", "del", "add", "n_pred", "n_reviewed", "n_fixed", "n_deleted", "n_pred_after")
        s = {k: sum(r[k] for r in results) for k in keys}
        den = s["n_pred_after"] + s["add"]
        return {
            "tau": first["tau"],
            "auto_rate": 1.0 - s["n_reviewed"] / s["n_pred"] if s["n_pred"] else 1.0,
            "aligned": 1.0 - (s["subs"] + s["del"] + s["add"]) / den if den else 1.0,
            **s,
        }
    counts, per_label = _new_counts(), {}
    for r in results:
        for label, cell in r["per_label"].items():
            _add_cell(counts, per_label, label, cell)
    return _entity_scores(counts, per_label)


# ---------------------------------------------------------------------------
# FUNSD
# ---------------------------------------------------------------------------


def funsd_entities(doc, *, drop_empty: bool = True) -> list[EntityT]:
    """Every entity of a FUNSD document as ``(label, text)``, text = its words joined by spaces.

    Entities whose text is empty after :func:`normalize_text` are left out when
    ``drop_empty`` (the default): they have nothing a model could extract, and
    the dataset writer leaves empty words out of the model inputs.
    """
    out = []
    for ent in doc.entities:
        text = doc.entity_text(ent)
        if drop_empty and not normalize_text(text):
            continue
        out.append((ent.label, text))
    return out


def funsd_grouping(doc, *, drop_empty: bool = True) -> tuple[list[list[EntityT]], list[EntityT]]:
    """FUNSD's question-answer groups and the entities outside them: ``(groups, ungrouped)``.

    A group is a question followed by the answers it links to (``Entity.links``
    pairs ``(question_id, answer_id)``, read from every entity's links; the
    reverse direction is accepted too). Only question-answer links make groups;
    header-question and other links are ignored. A question without answers
    and every header, other or unlinked answer is *ungrouped*.

    FUNSD links some answers to several questions (16 answers in the test
    split, 323 in the training split, typically table cells). To keep the
    groups a partition of the entities, such an answer joins only the group of
    the first of its questions in document order; its other links are not
    represented. Empty-text entities are left out as in :func:`funsd_entities`.

    Use ``kieval_group(groups, pred_groups, gold_ungrouped=ungrouped, ...)`` to
    score the ungrouped entities as the paper's non-group "1-st group"
    (entity level only); :func:`funsd_groups` makes them singleton groups
    instead. The paper itself (Sec. 5.1) treats all FUNSD entities as non-group.
    """
    by_id = {e.id: e for e in doc.entities}
    order = {e.id: k for k, e in enumerate(doc.entities)}
    text = {e.id: doc.entity_text(e) for e in doc.entities}
    keep = {i for i in by_id if not drop_empty or normalize_text(text[i])}

    questions_of: dict[int, set[int]] = {}
    for ent in doc.entities:
        for a, b in ent.links:
            la, lb = by_id[a].label, by_id[b].label
            if la == "question" and lb == "answer":
                q, ans = a, b
            elif la == "answer" and lb == "question":
                q, ans = b, a
            else:
                continue
            if q in keep and ans in keep:
                questions_of.setdefault(ans, set()).add(q)
    answers_of: dict[int, list[int]] = {}
    for ans, qs in questions_of.items():
        q = min(qs, key=order.__getitem__)
        answers_of.setdefault(q, []).append(ans)

    groups: list[list[EntityT]] = []
    grouped: set[int] = set()
    for ent in doc.entities:
        if ent.id in answers_of:
            members = [ent.id, *sorted(answers_of[ent.id], key=order.__getitem__)]
            groups.append([(by_id[i].label, text[i]) for i in members])
            grouped.update(members)
    ungrouped = [(e.label, text[e.id]) for e in doc.entities if e.id in keep and e.id not in grouped]
    return groups, ungrouped


def funsd_groups(doc, *, drop_empty: bool = True) -> list[list[EntityT]]:
    """A FUNSD document as KIEval groups: question-answer groups, then every other entity as a singleton group.

    A group is a question with its linked answers (:func:`funsd_grouping`);
    headers, others, unlinked questions and unlinked answers each become a
    group of one, in document order. Singletons make every entity count at
    group level, so a correctly extracted header is a correct group and a
    broken question-answer link costs a group (the answer turns into an extra
    singleton). This differs from the paper, which scores FUNSD without groups
    (Sec. 5.1); pass the ungrouped entities as ``gold_ungrouped`` to
    :func:`kieval_group` for the non-group treatment.
    """
    groups, ungrouped = funsd_grouping(doc, drop_empty=drop_empty)
    return groups + [[e] for e in ungrouped]
