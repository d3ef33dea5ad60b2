"""Evaluation metrics for the benchmarks dogood builds (FUNSD, RVL-CDIP, DocVQA).

Plain functions in the scikit-learn style: gold first, prediction second,
plain Python containers in, plain ``dict`` / ``float`` out. The Do-GOOD paper
(He et al. 2023, ``do-good-benchmark.txt``, Sec. 5 "Implementation Details")
evaluates each task with "the evaluation metrics [...] used in the original
dataset paper": entity-level F1 for FUNSD and its variants, accuracy for
RVL-CDIP, ANLS for DocVQA; its Table 3 adds per-category error rates on
FUNSD-L. The FUNSD paper (Jaume et al. 2019, ``funsd-dataset.txt``, Sec. III-C)
defines word grouping (ARI) and entity linking (precision / recall / F1).

================================  ================================================
:func:`entity_scores`             entity-level P/R/F1 from IOB tags (seqeval's default)
:func:`entity_error_rates`        Do-GOOD Table 3: Other / QA / Header error rates
:func:`accuracy`                  overall and per-class accuracy (RVL-CDIP)
:func:`anls`                      DocVQA ANLS (paper formula, or ``official=True``: the RRC scorer)
:func:`linking_scores`            FUNSD entity-linking P/R/F1 of one document
:func:`linking_scores_many`       the same, micro-averaged over documents
:func:`word_grouping_ari`         FUNSD word grouping (adjusted Rand index)
:func:`iob_entities`              the entity chunks of one IOB tag sequence
:func:`levenshtein`               edit distance between two strings
:func:`document_iob`              IOB tags of a document's token words
:func:`document_links`            a document's directed entity links (all, or question -> answer)
:func:`word_groups`               a document's word-to-entity assignment
:func:`funsd_entity_scores`       :func:`entity_scores` over documents and predictions by id
:func:`funsd_entity_error_rates`  :func:`entity_error_rates` over documents and predictions by id
:func:`funsd_linking_scores`      :func:`linking_scores_many` over documents, all links or question -> answer
================================  ================================================

Where a denominator is zero, precision / recall / F1 are ``0.0`` (as
seqeval's and scikit-learn's ``zero_division`` default, without the warning);
error rates and per-class accuracies with nothing to count are ``nan``.

seqeval is not needed at run time: the chunking is reimplemented here and the
tests compare it with seqeval itself.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rapidfuzz.distance import Levenshtein

if TYPE_CHECKING:
    from dogood.core.document import Document

__all__ = [
    "accuracy",
    "anls",
    "anls_scores",
    "document_iob",
    "document_links",
    "entity_error_rates",
    "entity_scores",
    "funsd_entity_error_rates",
    "funsd_entity_scores",
    "funsd_linking_scores",
    "iob_entities",
    "levenshtein",
    "linking_scores",
    "linking_scores_many",
    "word_groups",
    "word_grouping_ari",
]

#: Do-GOOD Table 3's entity categories, by FUNSD IOB entity type ("other" is the ``O`` words).
DOGOOD_ERROR_GROUPS: Mapping[str, tuple[str, ...]] = {"qa": ("QUESTION", "ANSWER"), "header": ("HEADER",)}


# -- entity chunks --------------------------------------------------------------------------------------


def _check_tag(tag: Any, where: str) -> None:
    if tag == "O" or (isinstance(tag, str) and tag[:2] in ("B-", "I-") and len(tag) > 2):
        return
    raise ValueError(f"{where}: tag {tag!r} is not 'O', 'B-<type>' or 'I-<type>'")


def _as_tags(tags: Any, where: str) -> list:
    if isinstance(tags, str) or not isinstance(tags, Iterable):
        raise ValueError(f"{where}: expected a sequence of tags, got {type(tags).__name__}")
    return list(tags)


def _chunks(tags: Sequence[str], where: str) -> list[tuple[str, int, int]]:
    """Validate ``tags`` (naming ``where`` on error) and return ``(type, start, end)`` chunks, end exclusive."""
    tags = _as_tags(tags, where)
    chunks: list[tuple[str, int, int]] = []
    current: str | None = None  # type of the open chunk
    start = 0
    for i, tag in enumerate(tags):
        _check_tag(tag, f"{where}, position {i}")
        if tag == "O":
            if current is not None:
                chunks.append((current, start, i))
                current = None
            continue
        prefix, type_ = tag[0], tag[2:]
        # B- always opens a chunk; I- continues only an open chunk of the same type (seqeval's default,
        # lenient IOB2: an I- after O or after another type opens a new chunk).
        if prefix == "B" or current != type_:
            if current is not None:
                chunks.append((current, start, i))
            current, start = type_, i
    if current is not None:
        chunks.append((current, start, len(tags)))
    return chunks


def iob_entities(tags: Sequence[str]) -> list[tuple[str, int, int]]:
    """The entity chunks of one IOB tag sequence, as seqeval's default chunking reads them.

    A ``B-X`` tag always starts a chunk of type ``X``; an ``I-X`` tag continues
    the open chunk when it has type ``X`` and otherwise starts a new one (after
    ``O``, or after a chunk of another type), as ``seqeval.metrics.sequence_labeling
    .get_entities`` does (the chunking behind ``seqeval.metrics.f1_score`` in its
    default mode, i.e. without ``mode="strict"``).

    Parameters
    ----------
    tags : sequence of str
        ``"O"``, ``"B-<type>"`` or ``"I-<type>"`` per token.

    Returns
    -------
    list of (str, int, int)
        ``(type, start, end)`` in order, ``end`` exclusive: ``tags[start:end]``
        is the chunk. (seqeval's ``get_entities`` gives the end inclusive.)

    Raises
    ------
    ValueError
        For a tag that is not ``O``, ``B-<type>`` or ``I-<type>`` (IOBES ``E-``/``S-``
        tags included), naming its position.

    Examples
    --------
    >>> iob_entities(["B-QUESTION", "I-QUESTION", "O", "I-ANSWER", "I-HEADER"])
    [('QUESTION', 0, 2), ('ANSWER', 3, 4), ('HEADER', 4, 5)]
    """
    return _chunks(tags, "tags")


def _check_pairs(
    y_true: Iterable, y_pred: Iterable, what: str = "sequences", names: tuple[str, str] = ("y_true", "y_pred")
) -> tuple[list, list]:
    """Both arguments as lists of equal length (strings and non-iterables refused)."""
    out = []
    for name, y in zip(names, (y_true, y_pred)):
        if isinstance(y, str) or not isinstance(y, Iterable):
            raise ValueError(f"{name} must be a list of {what}, got {type(y).__name__}")
        out.append(list(y))
    if len(out[0]) != len(out[1]):
        raise ValueError(f"{names[0]} has {len(out[0])} {what} but {names[1]} has {len(out[1])}")
    return out[0], out[1]


def _doc_chunks(
    y_true: Sequence[Sequence[str]], y_pred: Sequence[Sequence[str]]
) -> Iterable[tuple[Sequence[str], Sequence[str], list, list]]:
    """Per document: gold tags, predicted tags, gold chunks, predicted chunks (validated)."""
    y_true, y_pred = _check_pairs(y_true, y_pred)
    for k, (t, p) in enumerate(zip(y_true, y_pred)):
        doc = f"document {k}"
        t, p = _as_tags(t, f"{doc} y_true"), _as_tags(p, f"{doc} y_pred")
        gold = _chunks(t, f"{doc} y_true")
        pred = _chunks(p, f"{doc} y_pred")
        if len(t) != len(p):
            raise ValueError(f"{doc}: y_true has {len(t)} tags but y_pred has {len(p)}")
        yield t, p, gold, pred


def _prf(tp: int, n_pred: int, n_gold: int) -> tuple[float, float, float]:
    precision = tp / n_pred if n_pred else 0.0
    recall = tp / n_gold if n_gold else 0.0
    denom = precision + recall
    f1 = 2 * precision * recall / denom if denom else 0.0  # seqeval's formula, so values agree to the last bit
    return precision, recall, f1


def _entity_scores(docs: Iterable[tuple[Any, Any, list, list]]) -> dict:
    tp: Counter[str] = Counter()
    n_gold: Counter[str] = Counter()
    n_pred: Counter[str] = Counter()
    for _, _, gold, pred in docs:
        gold_set, pred_set = set(gold), set(pred)
        n_gold.update(c[0] for c in gold_set)
        n_pred.update(c[0] for c in pred_set)
        tp.update(c[0] for c in gold_set & pred_set)
    per_label = {}
    for label in sorted(n_gold.keys() | n_pred.keys()):
        p, r, f = _prf(tp[label], n_pred[label], n_gold[label])
        per_label[label] = {"precision": p, "recall": r, "f1": f, "support": n_gold[label]}
    total_tp, total_pred, total_gold = sum(tp.values()), sum(n_pred.values()), sum(n_gold.values())
    p, r, f = _prf(total_tp, total_pred, total_gold)
    return {"precision": p, "recall": r, "f1": f, "support": total_gold, "per_label": per_label}


def entity_scores(y_true: Sequence[Sequence[str]], y_pred: Sequence[Sequence[str]]) -> dict:
    """Entity-level precision, recall and F1 from IOB tag sequences (seqeval's default).

    The FUNSD score of Do-GOOD (He et al. 2023, Sec. 5 "Implementation
    Details", Tables 2-4: "F1" for FUNSD and its OOD variants) is the
    entity-level F1 that the fine-tuning scripts of LayoutLM, LayoutLMv2/v3,
    LiLT and BROS compute with ``seqeval.metrics.f1_score`` on word-level IOB
    tags. This function gives the same numbers without depending on seqeval:
    entities are chunked as :func:`iob_entities` (seqeval's default, lenient
    IOB2 mode), a predicted entity counts when its type, start and end all
    match a gold entity, and the counts are pooled over all documents
    (micro-average; a chunk never crosses from one document into the next).

    Parameters
    ----------
    y_true, y_pred : list of list of str
        One IOB tag sequence per document (``"O"``, ``"B-<type>"``, ``"I-<type>"``),
        gold and predicted, of equal lengths.

    Returns
    -------
    dict
        ``precision``, ``recall``, ``f1`` (micro-averaged over all entity
        types, as ``seqeval.metrics.precision_score`` / ``recall_score`` /
        ``f1_score``), ``support`` (number of gold entities) and ``per_label``:
        ``{type: {"precision", "recall", "f1", "support"}}`` for every type
        seen in the gold or the prediction, sorted (as seqeval's
        ``classification_report``). A ratio with a zero denominator is ``0.0``.

    Raises
    ------
    ValueError
        When the numbers of documents differ, when a document's two sequences
        differ in length, or for a tag that is not ``O`` / ``B-X`` / ``I-X``;
        the message names the document index (and the position of a bad tag).

    Examples
    --------
    >>> s = entity_scores([["B-QUESTION", "I-QUESTION", "B-ANSWER"]], [["B-QUESTION", "I-QUESTION", "O"]])
    >>> s["precision"], s["recall"], s["per_label"]["ANSWER"]["support"]
    (1.0, 0.5, 1)
    """
    return _entity_scores(_doc_chunks(y_true, y_pred))


def _entity_error_rates(docs: Iterable[tuple[Any, Any, list, list]], groups: Mapping[str, Iterable[str]]) -> dict:
    groups = {name: frozenset(types) for name, types in groups.items()}
    if "other" in groups:
        raise ValueError("'other' is the O words' category; it cannot also be a group name")
    group_of: dict[str, str] = {}
    for name, types in groups.items():
        for t in types:
            if t in group_of:
                raise ValueError(f"entity type {t!r} is in groups {group_of[t]!r} and {name!r}")
            group_of[t] = name
    errors: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for true_tags, pred_tags, gold, pred in docs:
        for t, p in zip(true_tags, pred_tags):
            if t == "O":
                total["other"] += 1
                errors["other"] += p != "O"
        pred_set = set(pred)
        for chunk in gold:
            name = group_of.get(chunk[0])
            if name is not None:
                total[name] += 1
                errors[name] += chunk not in pred_set
    out = {}
    for name in ("other", *groups):
        n = total[name]
        out[name] = {"error_rate": errors[name] / n if n else math.nan, "errors": errors[name], "total": n}
    return out


def entity_error_rates(
    y_true: Sequence[Sequence[str]],
    y_pred: Sequence[Sequence[str]],
    groups: Mapping[str, Iterable[str]] = DOGOOD_ERROR_GROUPS,
) -> dict:
    """Per-category entity error rates, as Do-GOOD's Table 3 reports on FUNSD-L.

    He et al. 2023 (``do-good-benchmark.txt``, Sec. 5 "Results on FUNSD-L
    Dataset", Table 3) report, beside F1, "Other Error, QA Error and Header
    Error", defined only as the "error rate of entities whose labels are
    other, question or answer, and header respectively" (in percent, lower is
    better). The paper gives no formula; this function reads it as follows.

    * **QA and Header.** A gold entity (a chunk of the gold IOB tags, read as
      :func:`iob_entities`) is an error unless the prediction has the very same
      chunk: same type, start and end. The rate is errors / gold entities,
      pooled over documents. Questions and answers are pooled into one "QA"
      rate (the table has one column for both), so QA error is
      ``1 - recall`` over QUESTION and ANSWER entities together and Header
      error is ``1 - recall(HEADER)`` of :func:`entity_scores`: the paper's
      F1 is exact-match entity F1, and this keeps the error rates in the same
      terms.
    * **Other.** In the FUNSD IOB tagging the models are trained on (the Hub's
      loaders, and dogood's ``funsd`` schema), words of ``other`` entities are
      ``O``, so their entity boundaries are gone. Each gold ``O`` word is
      therefore one unit, an error when it is predicted as anything but
      ``O``. (Every FUNSD word belongs to an entity, so gold ``O`` words are
      exactly the words of ``other`` entities; words in no entity would count
      here too.)

    Left unclear by the paper, and chosen here: exact match rather than
    partial overlap or majority label; pooled (micro) rates rather than
    per-document averages; whether FUNSD-L's rates cover only the moved
    entities or all of them (here: all gold units given; pass a subset of
    documents or tags to restrict). Rates are fractions in [0, 1], not
    percent.

    Parameters
    ----------
    y_true, y_pred : list of list of str
        One IOB tag sequence per document, gold and predicted.
    groups : mapping of str to iterable of str, default ``{"qa": ("QUESTION", "ANSWER"), "header": ("HEADER",)}``
        Category name -> the entity types it pools. Gold entities of types in
        no group are not counted. ``"other"`` is reserved for the ``O`` words.

    Returns
    -------
    dict
        ``{"other": {...}, <group>: {...}, ...}`` with ``error_rate`` (``nan``
        when the category has no gold unit), ``errors`` and ``total`` (number
        of gold units) per category.

    Raises
    ------
    ValueError
        As :func:`entity_scores` (naming the document index), or when a type
        is in two groups.

    Examples
    --------
    >>> r = entity_error_rates([["B-HEADER", "O", "O"]], [["B-HEADER", "O", "B-ANSWER"]])
    >>> r["header"]["error_rate"], r["other"]["error_rate"]
    (0.0, 0.5)
    """
    return _entity_error_rates(_doc_chunks(y_true, y_pred), groups)


# -- classification ---------------------------------------------------------------------------------


def accuracy(y_true: Sequence[Hashable], y_pred: Sequence[Hashable], labels: Sequence[Hashable] | None = None) -> dict:
    """Overall and per-class accuracy of document classification (RVL-CDIP).

    Do-GOOD reports "Accuracy" for RVL-CDIP and its OOD variants (He et al.
    2023, Sec. 5 "Implementation Details", Tables 2 and 5). The per-class
    accuracy of class ``c`` is the fraction of documents of class ``c`` that
    are predicted ``c``, i.e. the recall of ``c`` (scikit-learn's
    ``recall_score(average=None)``), which shows which classes a shift hurts.

    Parameters
    ----------
    y_true, y_pred : list of str (or any hashable labels)
        Gold and predicted class of each document.
    labels : list, optional
        The classes to report, in this order (e.g. ``dogood.core.schema.RVL_CDIP_CLASSES``).
        Default: the classes in ``y_true``, sorted. A listed class with no
        gold document has per-class accuracy ``nan``.

    Returns
    -------
    dict
        ``accuracy`` (fraction of all documents predicted right),
        ``per_class`` ``{label: accuracy}`` and ``support`` ``{label: number of gold documents}``.

    Raises
    ------
    ValueError
        When the lists are empty or differ in length, or when ``labels`` is
        given and ``y_true`` has a class not in it (a misspelt class would
        otherwise vanish from the report).

    Examples
    --------
    >>> accuracy(["form", "memo", "memo"], ["form", "form", "memo"])["per_class"]
    {'form': 1.0, 'memo': 0.5}
    """
    y_true, y_pred = _check_pairs(y_true, y_pred, "labels")
    if not y_true:
        raise ValueError("accuracy of no documents is undefined: y_true is empty")
    support = Counter(y_true)
    correct = Counter(t for t, p in zip(y_true, y_pred) if t == p)
    if labels is None:
        labels = sorted(support)
    else:
        labels = list(labels)
        unknown = set(support) - set(labels)
        if unknown:
            raise ValueError(f"y_true has classes not in labels: {sorted(map(repr, unknown))}")
    return {
        "accuracy": sum(correct.values()) / len(y_true),
        "per_class": {c: correct[c] / support[c] if support[c] else math.nan for c in labels},
        "support": {c: support[c] for c in labels},
    }


# -- DocVQA -------------------------------------------------------------------------------------------


def levenshtein(a: str, b: str) -> int:
    """Levenshtein edit distance (insertions, deletions, substitutions, each cost 1), by ``rapidfuzz``.

    Examples
    --------
    >>> levenshtein("kitten", "sitting")
    3
    """
    return Levenshtein.distance(a, b)


def _anls_normalise(s: str) -> str:
    return " ".join(s.lower().split())


#: The two ANLS conventions :func:`anls` implements, as named in ``dogood eval`` reports.
ANLS_CONVENTIONS = {
    False: "paper formula (Biten et al. 2019): 1 - NL kept when NL < 0.5, lengths of the normalised strings",
    True: "official DocVQA/RRC scorer: 1 - NL kept when 1 - NL >= 0.5, lengths of the raw strings",
}


def anls(predictions: Sequence[str], gold_answers: Sequence[Sequence[str]], threshold: float = 0.5, *,
         official: bool = False) -> float:
    """Average Normalised Levenshtein Similarity (ANLS), DocVQA's metric.

    Defined by Biten et al. 2019 (ST-VQA, ICCV) and used by DocVQA (Mathew et
    al. 2021) and by Do-GOOD for DocVQA-T (He et al. 2023, Sec. 5
    "Implementation Details": "ANLS for DocVQA and its variants"). For
    question ``i`` with prediction ``o_i`` and gold answers ``a_ij``::

        NL(a, o)  = Lev(a, o) / max(|a|, |o|)
        s(a, o)   = 1 - NL(a, o)   if NL(a, o) < threshold   else 0
        ANLS      = mean_i  max_j  s(a_ij, o_i)

    Strings are compared lower-cased, with leading and trailing whitespace
    removed and inner runs of whitespace made one space. Two empty strings
    have ``NL = 0``.

    Two conventions, which differ only at the edges:

    ``official=False`` (default): the paper's formula as written. ``|a|`` and
    ``|o|`` are the lengths of the normalised strings, and a distance exactly
    at the threshold scores 0 (``NL < threshold``).

    ``official=True``: the scoring of the DocVQA / InfographicVQA evaluation
    script distributed through docvqa.org and the RRC portal (rrc.cvc.uab.es,
    challenge 17); compared, rule by rule, against its ``evaluate_method``
    (the InfographicVQA release, whose per-question rule is the DocVQA one;
    earlier ST-VQA-era copies skip the whitespace normalisation and take the
    distance of the merely lower-cased strings). Per question it
    takes ``1 - min_j NL_j`` and keeps it when it is ``>= threshold`` (so
    ``NL == 0.5`` scores 0.5, not 0); the distance is between the normalised
    strings (``" ".join(s.strip().lower().split())``) but it is divided by the
    larger length of the *raw* strings (``len(s.upper())``, before any
    normalisation), and a zero length gives ``NL = 0``. Consequences: an
    answer ``" ab "`` against an empty prediction has distance 2 over length
    4, i.e. 0.5, and scores 0.5; ``"Hello  World"`` against ``"hello world"``
    has distance 0 and scores 1 under both conventions.

    Parameters
    ----------
    predictions : list of str
        One predicted answer per question.
    gold_answers : list of list of str
        The accepted answers of each question (at least one each).
    threshold : float, default 0.5
        ``tau`` in (0, 1].
    official : bool, default False
        Score as the official DocVQA/RRC script does (see above).

    Returns
    -------
    float
        ANLS in [0, 1].

    Raises
    ------
    ValueError
        When the lists are empty or differ in length, when a question has no
        gold answer (naming the question index), or for a threshold outside (0, 1].

    Examples
    --------
    >>> anls(["helo", "xyz"], [["Hello"], ["abc"]])  # (0.8 + 0) / 2
    0.4
    >>> anls(["ab"], [["abcd"]]), anls(["ab"], [["abcd"]], official=True)  # NL = 0.5 exactly
    (0.0, 0.5)
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    if isinstance(predictions, str) or isinstance(gold_answers, str):
        raise ValueError("predictions and gold_answers must be lists (one entry per question)")
    if len(predictions) != len(gold_answers):
        raise ValueError(f"{len(predictions)} predictions but {len(gold_answers)} gold answer lists")
    if not predictions:
        raise ValueError("ANLS of no questions is undefined: predictions is empty")
    return sum(anls_scores(predictions, gold_answers, threshold, official=official)) / len(predictions)


def anls_scores(predictions: Sequence[str], gold_answers: Sequence[Sequence[str]], threshold: float = 0.5, *,
                official: bool = False) -> list[float]:
    """The per-question scores whose mean is :func:`anls` (same arguments, same conventions)."""
    if len(predictions) != len(gold_answers):
        raise ValueError(f"{len(predictions)} predictions but {len(gold_answers)} gold answer lists")
    out = []
    for i, (pred, answers) in enumerate(zip(predictions, gold_answers)):
        if isinstance(answers, str) or not answers:
            raise ValueError(f"question {i}: gold answers must be a non-empty list of strings, got {answers!r}")
        o = _anls_normalise(pred)
        if official:
            nls = []
            for answer in answers:
                length = max(len(answer.upper()), len(pred.upper()))
                nls.append(levenshtein(_anls_normalise(answer), o) / length if length else 0.0)
            best = 1 - min(nls)
            out.append(best if best >= threshold else 0.0)
            continue
        best = 0.0
        for answer in answers:
            a = _anls_normalise(answer)
            length = max(len(a), len(o))
            nl = levenshtein(a, o) / length if length else 0.0
            if nl < threshold:
                best = max(best, 1.0 - nl)
        out.append(best)
    return out


# -- FUNSD linking and grouping -------------------------------------------------------------------------


def _link_set(links: Iterable[Sequence[int]], directed: bool, name: str) -> set[tuple[int, int]]:
    out = set()
    for link in links:
        if isinstance(link, str) or len(link) != 2:
            raise ValueError(f"{name}: a link is a pair (from_id, to_id), got {link!r}")
        a, b = int(link[0]), int(link[1])
        out.add((a, b) if directed else (min(a, b), max(a, b)))
    return out


def _link_counts(gold_links, pred_links, directed: bool) -> tuple[int, int, int]:
    gold = _link_set(gold_links, directed, "gold_links")
    pred = _link_set(pred_links, directed, "pred_links")
    return len(gold & pred), len(pred), len(gold)


def _link_result(tp: int, n_pred: int, n_gold: int) -> dict:
    p, r, f = _prf(tp, n_pred, n_gold)
    return {"precision": p, "recall": r, "f1": f, "tp": tp, "n_pred": n_pred, "n_gold": n_gold}


def linking_scores(
    gold_links: Iterable[tuple[int, int]], pred_links: Iterable[tuple[int, int]], *, directed: bool = True
) -> dict:
    """Entity-linking precision, recall and F1 of one document (FUNSD).

    Jaume et al. 2019 (``funsd-dataset.txt``, Sec. III-C3 "Entity linking")
    score linking as binary classification of entity pairs: "the metric [...]
    verifies whether the predicted links exist among all the semantic entities
    correctly identified and labeled", then computes precision, recall and
    F1. Links are pairs of entity ids of the *gold* entities: a system that
    predicts its own entities must first map them to the gold ids (e.g. by
    exact word sets), which is what "correctly identified" asks.

    Direction: FUNSD's links "are directed and formatted as [id_from, id_to]"
    (Sec. II-C): question -> answer and header -> question. In the FUNSD test
    split no pair appears in both directions, so by default ``(q, a)`` and
    ``(a, q)`` are different links and predicting the reverse is an error.
    Pass ``directed=False`` to score unordered pairs (many linking heads
    predict pairs without a direction). Duplicates count once (FUNSD lists
    each link in both of its entities' ``linking``).

    Parameters
    ----------
    gold_links, pred_links : iterable of (int, int)
        ``(from_id, to_id)`` entity-id pairs.
    directed : bool, default True
        Whether ``(a, b)`` and ``(b, a)`` are different links.

    Returns
    -------
    dict
        ``precision``, ``recall``, ``f1`` (``0.0`` with a zero denominator),
        and the counts ``tp``, ``n_pred``, ``n_gold`` for pooling.

    Examples
    --------
    >>> linking_scores({(0, 1), (2, 3)}, {(0, 1), (3, 2)})["f1"]
    0.5
    >>> linking_scores({(0, 1), (2, 3)}, {(0, 1), (3, 2)}, directed=False)["f1"]
    1.0
    """
    return _link_result(*_link_counts(gold_links, pred_links, directed))


def linking_scores_many(
    pairs: Iterable[tuple[Iterable[tuple[int, int]], Iterable[tuple[int, int]]]], *, directed: bool = True
) -> dict:
    """Entity-linking scores pooled over documents (micro-average).

    Sums the true positives, predicted and gold links of each document's
    ``(gold_links, pred_links)`` (see :func:`linking_scores`, Jaume et al.
    2019 Sec. III-C3) before dividing, so documents with many links weigh
    more, as a single F1 over the test set does. Entity ids are per document.

    Parameters
    ----------
    pairs : iterable of (gold_links, pred_links)
        One pair of link sets per document.
    directed : bool, default True
        As in :func:`linking_scores`.

    Returns
    -------
    dict
        As :func:`linking_scores`, over all documents.
    """
    tp = n_pred = n_gold = 0
    for k, pair in enumerate(pairs):
        try:
            gold, pred = pair
        except (TypeError, ValueError):
            raise ValueError(f"document {k}: expected a (gold_links, pred_links) pair") from None
        try:
            t, p, g = _link_counts(gold, pred, directed)
        except ValueError as exc:
            raise ValueError(f"document {k}: {exc}") from None
        tp, n_pred, n_gold = tp + t, n_pred + p, n_gold + g
    return _link_result(tp, n_pred, n_gold)


def word_grouping_ari(gold_groups: Sequence[Hashable], pred_groups: Sequence[Hashable]) -> float:
    """Word grouping score of FUNSD: the adjusted Rand index of word-to-entity assignments.

    Jaume et al. 2019 (``funsd-dataset.txt``, Sec. III-C1 "Word grouping")
    evaluate word grouping "as a clustering problem, where words are the data
    points and clusters are the semantic entities", scored by the adjusted
    Rand index (Hubert & Arabie 1985): 1 for a perfect grouping, about 0 for
    a random one (it can be negative). Computed with
    ``sklearn.metrics.adjusted_rand_score``. Cluster ids are arbitrary labels:
    only which words share one matters. Following the paper, words the
    detector missed (IoU < 0.5) should be put, by the caller, into one extra
    artificial cluster of ``pred_groups``.

    Parameters
    ----------
    gold_groups, pred_groups : list of int (or any hashable)
        The cluster of each word (same words, same order), e.g. from :func:`word_groups`.

    Returns
    -------
    float
        The adjusted Rand index.

    Raises
    ------
    ValueError
        When the lists differ in length or are empty.

    Examples
    --------
    >>> word_grouping_ari([0, 0, 1, 1], [5, 5, 7, 7])
    1.0
    """
    gold_groups, pred_groups = _check_pairs(gold_groups, pred_groups, "words", ("gold_groups", "pred_groups"))
    if not gold_groups:
        raise ValueError("word grouping of no words is undefined: gold_groups is empty")
    from sklearn.metrics import adjusted_rand_score

    return float(adjusted_rand_score(gold_groups, pred_groups))


# -- documents ----------------------------------------------------------------------------------------


def document_iob(doc: Document) -> list[str]:
    """The IOB tags of a document's token words (``dogood.core.schema.iob_tags``).

    Token words are the words with non-blank text, in order, as in the
    ``funsd`` schema's ``tokens`` / ``ner_tags``; ``other`` entities and words
    in no entity are ``O``.
    """
    from dogood.core.schema import (
        iob_tags,  # imported here: dogood.core.schema pulls in `datasets`
    )

    return list(iob_tags(doc)[1])


#: Which links :func:`document_links` gives: every directed link, or question -> answer pairs only.
LINK_KINDS = ("all", "question-answer")


def document_links(doc: Document, kind: str = "all") -> set[tuple[int, int]]:
    """A document's entity links as directed ``(from_id, to_id)`` pairs, each once (for :func:`linking_scores`).

    ``kind="all"`` (default): every link FUNSD lists, as given (1,064 directed
    links in FUNSD test). ``kind="question-answer"``: only the links between a
    question and an answer entity, turned into ``(question_id, answer_id)``
    whatever their listed direction, and without the entities that have no
    token word (FUNSD entities with empty text, which no tagger can output).
    This is the relation set that unilm's LayoutLM-family relation-extraction
    scoring on FUNSD/XFUND uses (key -> value pairs only, header links left
    out): 823 pairs in FUNSD test.
    """
    if kind not in LINK_KINDS:
        raise ValueError(f"kind must be one of {', '.join(LINK_KINDS)}, got {kind!r}")
    links = {(a, b) for ent in doc.entities for a, b in ent.links}
    if kind == "all":
        return links
    return _question_answer(links, doc)


def _question_answer(links: Iterable[tuple[int, int]], doc: Document, keep_others: bool = False) -> set[tuple[int, int]]:
    label = {e.id: e.label for e in doc.entities}
    blank = {e.id for e in doc.entities if not any(doc.words[w].text.strip() for w in e.word_ids)}
    out = set()
    for a, b in links:
        kinds = (label.get(a), label.get(b))
        if kinds == ("question", "answer") and a not in blank and b not in blank:
            out.add((a, b))
        elif kinds == ("answer", "question") and a not in blank and b not in blank:
            out.add((b, a))
        elif keep_others:
            out.add((a, b))
    return out


def funsd_linking_scores(
    gold_docs: Iterable[Document], pred_links_by_id: Mapping[str, Iterable[tuple[int, int]]], *, kind: str = "all"
) -> dict:
    """:func:`linking_scores_many` of predicted links against documents' gold links.

    ``kind="all"`` scores every directed link (:func:`document_links`);
    ``kind="question-answer"`` scores question -> answer pairs only, as
    unilm's relation extraction does: predicted links between a question and
    an answer are turned to ``(question, answer)`` (a relation head has no
    direction of its own), any other predicted link stays as it is and, having
    no gold counterpart, counts as a false positive. Documents without an
    entry in ``pred_links_by_id`` predicted no link.
    """
    if kind not in LINK_KINDS:
        raise ValueError(f"kind must be one of {', '.join(LINK_KINDS)}, got {kind!r}")
    pairs = []
    for doc in gold_docs:
        pred = _link_set(pred_links_by_id.get(doc.id, ()), True, f"document {doc.id!r} predicted links")
        if kind == "question-answer":
            pred = _question_answer(pred, doc, keep_others=True)
        pairs.append((document_links(doc, kind), pred))
    return linking_scores_many(pairs)


def word_groups(doc: Document) -> list[int]:
    """The entity of each of a document's words, as cluster ids for :func:`word_grouping_ari`.

    A word's cluster is its entity's id; a word in no entity gets a cluster of
    its own (ids above all entity ids). All words count, blank ones included.
    """
    owner = doc.word_entity()
    next_id = max((e.id for e in doc.entities), default=-1) + 1
    groups = []
    for ent in owner:
        if ent is None:
            groups.append(next_id)
            next_id += 1
        else:
            groups.append(ent.id)
    return groups


def _docs_with_predictions(gold_docs: Iterable[Document], pred_tags_by_id: Mapping[str, Sequence[str]]):
    seen: set[str] = set()
    for doc in gold_docs:
        if doc.id in seen:
            raise ValueError(f"document {doc.id!r} appears twice in gold_docs")
        seen.add(doc.id)
        if doc.id not in pred_tags_by_id:
            raise ValueError(f"document {doc.id!r} has no predicted tags")
        gold, pred = document_iob(doc), pred_tags_by_id[doc.id]
        where = f"document {doc.id!r}"
        pred = _as_tags(pred, f"{where} predicted tags")
        gold_chunks = _chunks(gold, f"{where} gold")
        pred_chunks = _chunks(pred, f"{where} predicted tags")
        if len(gold) != len(pred):
            raise ValueError(f"{where}: {len(gold)} token words but {len(pred)} predicted tags")
        yield gold, pred, gold_chunks, pred_chunks


def funsd_entity_scores(gold_docs: Iterable[Document], pred_tags_by_id: Mapping[str, Sequence[str]]) -> dict:
    """:func:`entity_scores` of predicted tags against documents' gold IOB tags.

    Parameters
    ----------
    gold_docs : iterable of Document
        The gold documents; their tags are :func:`document_iob`.
    pred_tags_by_id : mapping of str to list of str
        Document id -> predicted IOB tag per token word. Ids of documents not
        in ``gold_docs`` are ignored.

    Returns
    -------
    dict
        As :func:`entity_scores`.

    Raises
    ------
    ValueError
        Naming the document id, when a document has no predictions, when its
        numbers of tags differ, for a bad tag, or for a document id given twice.
    """
    return _entity_scores(_docs_with_predictions(gold_docs, pred_tags_by_id))


def funsd_entity_error_rates(
    gold_docs: Iterable[Document],
    pred_tags_by_id: Mapping[str, Sequence[str]],
    groups: Mapping[str, Iterable[str]] = DOGOOD_ERROR_GROUPS,
) -> dict:
    """:func:`entity_error_rates` (Do-GOOD Table 3) of predicted tags against documents' gold tags.

    Parameters and errors as :func:`funsd_entity_scores`; ``groups`` and the
    result as :func:`entity_error_rates`.
    """
    return _entity_error_rates(_docs_with_predictions(gold_docs, pred_tags_by_id), groups)
