"""Score a model on an in-distribution dataset and its OOD variants: Do-GOOD's Table 2.

:func:`evaluate` runs a :class:`~dogood.models.Model` over each dataset and
scores it with the metric the dataset's own paper uses (Do-GOOD, He et al.
2023, Sec. 5 "Implementation Details"): entity-level F1 for FUNSD-style token
classification (with per-label F1 and the Table 3 error rates), accuracy for
RVL-CDIP-style document classification. :class:`EvalReport` lays the scores
out as Table 2 does (ID beside each OOD set) with the absolute drop (ID minus
OOD, in points) and the relative drop (the absolute drop over ID), and writes
markdown, CSV, JSON and a bar chart.

A dataset is named as on the command line (``dogood eval --id ... --ood ...``):

- a dataset folder built by dogood (``out/funsd-l``): every config in it, or
  one with ``out/funsd-l:merge``;
- a Hub dataset id, optionally ``:config`` (read through ``datasets``);
- a source kind, ``funsd`` or ``rvl_cdip``: the original data, read by
  dogood's loaders from where ``dogood build`` would find it.

or, in Python, a ``datasets.Dataset`` object (:func:`as_datasets`).

ID and OOD are compared **paired by document** when every document of the
OOD set is an ID document (a shifted copy: same id): the OOD set is scored on
those documents, and the drop is the ID score on those same documents minus
the OOD score (a warning says how many ID documents it lacks;
``require_same_ids`` refuses instead). An OOD set that holds other documents
(all or some: FUNSD-R-style real-world sets, a FUNSD-layout folder of other
forms) is scored **unpaired**: ID over all its documents, OOD over all its
own, each resampled over its own documents in the bootstrap, and the change's
interval from the two. Every score comes with a bootstrap interval over
documents (:func:`bootstrap_weights`), the drop's included; drops are averaged
per shift family and per OOD dataset; rows whose config's measured factor
table (its build's statistics) changed only what the model cannot see
(``Model.sees``) say so. A model given boxes reads them at its own
convention, and is refused a dataset whose ``bboxes`` are in another.

From the model's confidences, each OOD row also reports how well they tell ID
documents from OOD ones (:mod:`dogood.eval.ood_detection`: AUROC, FPR95, AUPR)
and the expected calibration error on ID and on OOD
(:mod:`dogood.eval.calibration`), with the same bootstrap. ``ablate`` adds rows
of the ID set with an input removed (:mod:`dogood.eval.ablation`, Do-GOOD
Table 1); ``task="ocr"`` scores OCR engines against the pages' exact words
(:mod:`dogood.eval.ocr_task`).

Documents are read and predicted in batches, so a 40,000-page test split is
never held in memory at once.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dogood.core.errors import DogoodError
from dogood.core.schema import RVL_CDIP_CLASSES, iob_tags, ner_tag_names
from dogood.eval import ablation as abl
from dogood.eval import calibration, ocr_task, ood_detection
from dogood.eval.metrics import ANLS_CONVENTIONS, accuracy, anls_scores, entity_error_rates, entity_scores, iob_entities
from dogood.models.predictions import check_against, read_predictions
from dogood.eval.robustness import split_severity
from dogood.models import Model, ModelError, PredictionsFile
from dogood.eval.bootstrap import (DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, nan_interval, bootstrap_values,
                                   percentile_interval, unpaired_values, weight_blocks)
from dogood.eval.datasets import (EvalDataset, EvalError, TASK_METRICS, as_datasets, is_one_dataset, measured_factors,
                                  refuse_copies, refuse_other_boxes)
from dogood.eval.report import EvalReport, FAMILIES, METRIC_CONVENTION


def _batches(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


@dataclass
class Scored:
    """A model's per-document results on one dataset: what every score and bootstrap is computed from."""

    dataset: EvalDataset
    task: str
    ids: list[str]
    gold: dict[str, Any] = field(default_factory=dict)
    pred: dict[str, Any] = field(default_factory=dict)
    kieval: dict[str, dict] = field(default_factory=dict)
    shifts: set[str] = field(default_factory=set)
    anls_official: bool = False
    ocr: dict[str, np.ndarray] = field(default_factory=dict)  # OCR: per document, ocr_task.COUNT_NAMES
    bins: dict[str, np.ndarray] = field(default_factory=dict)  # per document, calibration.document_bins
    doc_conf: dict[str, float] = field(default_factory=dict)  # per document, its confidence (NaN: none)
    no_confidence: str | None = None  # why there are no confidences (the model gave none)

    def stats(self, ids: Sequence[str]) -> np.ndarray:
        """Per document, the counts its score is pooled from.

        ``(tp, n_pred, n_gold)`` entities (token classification), ``(correct,)``
        (document classification), ``(sum of ANLS, questions)`` (QA) or
        :data:`dogood.eval.ocr_task.COUNT_NAMES` (OCR).
        """
        if self.task == "qa":
            return np.array([[sum(self.anls(i)), len(self.gold[i])] for i in ids], dtype=np.float64)
        if self.task == "ocr":
            return np.array([self.ocr[i] for i in ids], dtype=np.int64).reshape(len(ids), len(ocr_task.COUNT_NAMES))
        if self.task == "token":
            out = np.zeros((len(ids), 3), dtype=np.int64)
            for k, i in enumerate(ids):
                gold = set(iob_entities(self.gold[i]))
                pred = set(iob_entities(self.pred[i]))
                out[k] = (len(gold & pred), len(pred), len(gold))
            return out
        return np.array([[self.gold[i] == self.pred[i]] for i in ids], dtype=np.int64)

    def anls(self, doc_id: str) -> list[float]:
        """The ANLS of each question of a document (QA)."""
        gold = self.gold[doc_id]
        try:
            return anls_scores(self.pred[doc_id], [answers for _, answers in gold], official=self.anls_official)
        except ValueError as exc:
            raise EvalError(f"document {doc_id!r} of {self.dataset.name!r}: {exc}") from None


def _predict(model: Model, dataset: EvalDataset, ids: Sequence[str], *, batch_size: int, progress: bool,
             kieval: bool, anls_official: bool = False, task: str | None = None,
             ablate: Sequence[str] = ()) -> Scored:
    """Run ``model`` over documents ``ids`` of ``dataset``; keep gold and predictions per document.

    ``task`` overrides the dataset's (``"ocr"`` on FUNSD-style data); ``ablate`` removes inputs from the
    documents the model is given (:func:`dogood.eval.ablation.ablate`), never from the gold.
    """
    task = task or dataset.task
    if model.task != task:
        hint = " (pass --task ocr to score an OCR engine)" if model.task == "ocr" else ""
        raise ModelError(
            f"model {model.name!r} does {model.task} prediction but dataset {dataset.name!r} needs {task} prediction{hint}"
        )
    if ablate and isinstance(model, PredictionsFile):
        abl.check_supported(model, [ablate])
    scored = Scored(dataset, task, list(ids), anls_official=anls_official)
    mask = getattr(model, "mask_token", None) or abl.DEFAULT_MASK
    file_preds = None
    if isinstance(model, PredictionsFile):
        path = model.file_for(dataset.name)
        file_preds = read_predictions(path, model.task)
        unknown = sorted(set(file_preds) - set(dataset.source.ids()))
        if unknown:
            raise ModelError(f"{path}: predictions for document id(s) not in {dataset.name!r}: {', '.join(unknown[:5])}")
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(ids), desc=dataset.name, unit="doc")
    allowed = _tag_set(dataset) if dataset.task == "token" else None
    for chunk in _batches(list(ids), batch_size):
        docs = [dataset.source.load(doc_id) for doc_id in chunk]
        if file_preds is not None:
            preds = {d.id: file_preds[d.id] for d in docs if d.id in file_preds}
            check_against(preds, docs, model.task, source=str(model.file_for(dataset.name)))
        else:
            preds = model.predict([abl.ablate(d, ablate, mask) for d in docs] if ablate else docs)
        for doc in docs:
            scored.shifts.update(rec.shift for rec in doc.provenance)
            p = preds.get(doc.id)
            if p is None:
                raise ModelError(f"model {model.name!r} returned no prediction for document {doc.id!r} of {dataset.name!r}")
            if task == "ocr":
                index = [k for k, w in enumerate(doc.words) if w.text.strip()]
                gold = [(doc.words[k].text, doc.words[k].box) for k in index]
                words = p.words or ()
                counts, right = ocr_task.ocr_counts(gold, [(t, b) for t, b, _ in words])
                scored.gold[doc.id] = gold
                scored.pred[doc.id] = list(words)
                scored.ocr[doc.id] = counts
                confs = [c for _, _, c in words]
                if words and any(c is None for c in confs):
                    scored.no_confidence = f"model {model.name!r} gives no confidence for some words"
                else:
                    _keep_confidence(scored, doc.id, confs, right, empty=0.0)
            elif task == "token":
                index, tags = iob_tags(doc)
                if p.tags is None or len(p.tags) != len(tags):
                    got = "no" if p.tags is None else len(p.tags)
                    raise ModelError(f"model {model.name!r}: document {doc.id!r} has {len(tags)} tokens but {got} predicted tags")
                try:
                    iob_entities(p.tags)
                except ValueError as exc:
                    raise ModelError(f"model {model.name!r}: document {doc.id!r} of {dataset.name!r}: {exc}") from None
                outside = sorted(set(p.tags) - allowed - set(tags))
                if outside:  # scored, they would only count as errors: a wrong number, not a score
                    raise ModelError(f"model {model.name!r} predicted tag(s) {', '.join(outside[:5])} for document "
                                     f"{doc.id!r} of {dataset.name!r}, outside the data's label set "
                                     f"({', '.join(sorted(allowed))}); map the model's labels to the data's "
                                     "(--labels) or score it on data with its labels")
                scored.gold[doc.id] = list(tags)
                scored.pred[doc.id] = list(p.tags)
                if p.confidences is None:
                    scored.no_confidence = f"model {model.name!r} gives no per-token confidences"
                else:
                    _keep_confidence(scored, doc.id, p.confidences, [a == b for a, b in zip(tags, p.tags)])
                if kieval:
                    scored.kieval[doc.id] = _kieval_document(doc, index, list(p.tags))
            elif dataset.task == "qa":
                if not doc.qa:
                    raise EvalError(f"document {doc.id!r} of {dataset.name!r} has no questions to score")
                answers = p.answers or {}
                scored.gold[doc.id] = [(q.id, list(q.answers)) for q in doc.qa]
                scored.pred[doc.id] = [answers.get(q.id, "") for q in doc.qa]  # an unanswered question scores as ""
                scored.no_confidence = "answers carry no confidence"
            else:
                if doc.label is None:
                    raise EvalError(f"document {doc.id!r} of {dataset.name!r} has no label to score against")
                if p.label not in RVL_CDIP_CLASSES:
                    raise ModelError(f"model {model.name!r} predicted label(s) outside the RVL-CDIP classes: {[p.label]}")
                scored.gold[doc.id] = doc.label
                scored.pred[doc.id] = p.label
                if p.confidence is None:
                    scored.no_confidence = f"model {model.name!r} gives no document confidences"
                else:
                    _keep_confidence(scored, doc.id, [p.confidence], [doc.label == p.label])
        if bar is not None:
            bar.update(len(docs))
    if bar is not None:
        bar.close()
    return scored


def _keep_confidence(scored: Scored, doc_id: str, confs: Sequence[float], right: Sequence[bool],
                     empty: float = math.nan) -> None:
    """A document's calibration bins and its confidence (the mean over its items; ``empty`` when it has none)."""
    try:
        scored.bins[doc_id] = calibration.document_bins(list(confs), list(right))
    except ValueError as exc:
        raise ModelError(f"document {doc_id!r} of {scored.dataset.name!r}: {exc}") from None
    scored.doc_conf[doc_id] = float(np.mean(confs)) if len(confs) else empty


def _tag_set(dataset: EvalDataset) -> set[str]:
    """The IOB tags of a FUNSD-style dataset's entity labels (its source's, else FUNSD's)."""
    labels = None
    entity_labels = getattr(dataset.source, "entity_labels", None)
    if entity_labels is not None:
        try:
            labels = tuple(entity_labels())
        except (DogoodError, ValueError):
            labels = None
    try:
        return set(ner_tag_names(labels))
    except ValueError:
        return set(ner_tag_names(None))


def _kieval_document(doc, index: list[int], tags: list[str]) -> dict:
    """KIEval entity-level result of one document: gold question/answer/header entities vs the predicted chunks."""
    from dogood.eval.kieval import funsd_entities, kieval_entity

    gold = [(label, text) for label, text in funsd_entities(doc) if label != "other"]
    pred = [(t.lower(), " ".join(doc.words[index[k]].text for k in range(s, e))) for t, s, e in iob_entities(tags)]
    return kieval_entity(gold, pred)


def _score_row(scored: Scored, ids: Sequence[str]) -> dict[str, Any]:
    """The scores of ``scored`` restricted to documents ``ids``: a row of the report."""
    ds = scored.dataset
    row: dict[str, Any] = {"dataset": ds.name, "location": ds.location, "config": ds.config, "split": ds.split,
                           "documents": len(ids)}
    gold = [scored.gold[i] for i in ids]
    pred = [scored.pred[i] for i in ids]
    if scored.task == "qa":
        per_question = [x for i in ids for x in scored.anls(i)]
        row.update(anls=sum(per_question) / len(per_question), questions=len(per_question))
        return row
    if scored.task == "ocr":
        row.update(ocr_task.ocr_scores(scored.stats(ids).sum(axis=0)))
        return row
    if scored.task == "token":
        scores = entity_scores(gold, pred)
        errors = entity_error_rates(gold, pred)
        row.update(
            precision=scores["precision"],
            recall=scores["recall"],
            f1=scores["f1"],
            support=scores["support"],
            tokens=sum(len(t) for t in gold),
            per_label=dict(scores["per_label"]),
            error_rates={k: v["error_rate"] for k, v in errors.items()},
        )
        if scored.kieval:
            from dogood.eval.kieval import combine

            k = combine([scored.kieval[i] for i in ids])
            row["kieval"] = {key: k[key] for key in ("f1", "precision", "recall", "aligned", "tp", "fp", "fn", "error")}
    else:
        scores = accuracy(gold, pred, labels=list(RVL_CDIP_CLASSES))
        row.update(accuracy=scores["accuracy"], per_class=scores["per_class"], support=scores["support"])
    return row


def model_sees(model: Any) -> frozenset[str] | None:
    """What the model is given, from its ``sees`` attribute (``text``, ``layout``, ``image``); ``None`` if it does not say."""
    sees = getattr(model, "sees", None)
    if sees is None:
        return None
    sees = frozenset(sees)
    unknown = sees - {"text", "layout", "image"}
    if unknown:
        raise ModelError(f"model {getattr(model, 'name', model)!r}: 'sees' names unknown modalities {sorted(unknown)}")
    return sees


def families_of(shifts: Iterable[str]) -> list[str]:
    """The shift families (``image``, ``text``, ``layout``) of registered shift names, in that order."""
    from dogood.shifts import SHIFTS

    found = {SHIFTS[s].family for s in shifts if s in SHIFTS and getattr(SHIFTS[s], "family", "")}
    return [f for f in FAMILIES if f in found] + sorted(found - set(FAMILIES))


def blind_spot(factors: dict | None, sees: frozenset[str] | None) -> str | None:
    """A note for an OOD row whose config, by its measured factor table (:mod:`dogood.measures.factors`, the
    build's statistics), changed only what the model cannot see: ``None`` when the model sees some change, when it
    does not say what it sees, or when there is no table (a dataset not built by dogood)."""
    from dogood.measures.factors import unseen

    if sees is None or not factors:
        return None
    blind = unseen(factors, sees)
    if not blind:
        return None
    return (f"measured changes only {', '.join(name.replace('_', ' ') for name in blind)}, which the model does not "
            f"see (it sees {', '.join(sorted(sees)) or 'nothing dogood knows of'})")


def evaluate(model: Model, id_dataset: Any, ood_datasets: Any = (), *, split: str = "test", limit: int | None = None,
             batch_size: int = 32, progress: bool = False, require_same_ids: bool = False,
             resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE,
             kieval: bool = False, anls_official: bool = False, reference: Model | None = None,
             reference_note: str | None = None, task: str | None = None, ablate: Sequence[str] = ()) -> EvalReport:
    """Score ``model`` on the ID dataset and on every OOD dataset; the :class:`EvalReport` of all.

    Parameters
    ----------
    model : Model
        Anything with ``name``, ``task`` and ``predict`` (:mod:`dogood.models`);
        an optional ``sees`` (a set of ``text``, ``layout``, ``image``) lets the
        report flag shifts the model cannot see; ``ablations`` (the same names)
        the inputs it can be scored without.
    id_dataset, ood_datasets
        Each an :class:`EvalDataset`, a built folder, ``folder:config``, a Hub
        id (read through ``datasets``), a FUNSD-layout folder, ``funsd`` /
        ``rvl_cdip``, or a ``datasets.Dataset`` (dogood's schema or a plain Hub
        FUNSD / RVL-CDIP one); ``ood_datasets`` may be one of these or a list
        (empty only with ``ablate``). A folder without ``:config`` stands for
        all its configs (as OOD sets; the ID set must be one dataset).
    split : str
        The split read from names and ``DatasetDict`` objects.
    limit : int, optional
        Only the first ``limit`` documents of the ID set (and their OOD
        counterparts; of an unpaired OOD set, its first ``limit`` documents).
    require_same_ids : bool
        Refuse (:class:`EvalError`) when an OOD set's document ids differ from
        the ID set's, instead of scoring it paired on the shared ones (or
        unpaired) with a warning.
    resamples, seed, confidence
        The bootstrap (:func:`bootstrap_weights`); ``resamples=0`` gives no intervals.
    kieval : bool
        Add KIEval entity-level scores (token classification).
    anls_official : bool
        Score DocVQA-style (QA) datasets as the official DocVQA/RRC script does
        (:func:`dogood.eval.metrics.anls`, ``official=True``); default: the paper's formula.
    reference : Model, optional
        The model whose errors the corruption errors of severity-swept configs
        (``<config>@<s>``) are divided by (:mod:`dogood.eval.robustness`); scored on
        the same documents. ``None``: no corruption errors (``reference_note``
        says why in the report).
    task : str, optional
        ``"ocr"``: score an OCR engine (``model.task == "ocr"``) on FUNSD-style
        datasets against their words and boxes (:mod:`dogood.eval.ocr_task`);
        default: the datasets' own task.
    ablate : sequence of str
        Inputs to remove, one ablation row each (``"image"``, ``"layout"``,
        ``"text"`` or ``+``-joined sets; :mod:`dogood.eval.ablation`).

    An OOD set whose documents are all ID documents is scored paired, on those
    documents; the ID score beside it (``id_value``) and the drop are on the
    same documents. One that holds other documents is scored unpaired
    (``row["pairing"] == "unpaired"``): ID on all its documents, OOD on all
    its own. ``EvalReport.warnings`` says which.
    """
    id_sets = as_datasets(id_dataset, split)
    if len(id_sets) != 1:
        raise EvalError(f"the ID dataset names {len(id_sets)} datasets ({', '.join(d.name for d in id_sets)}); "
                        "pick one config (folder:CONFIG)")
    id_set = id_sets[0]
    if is_one_dataset(ood_datasets):
        ood_datasets = [ood_datasets]
    ood_sets = [d for spec in list(ood_datasets) for d in as_datasets(spec, split)]
    combos = abl.parse_ablations(ablate)
    if not ood_sets and not combos:
        raise EvalError("give at least one OOD dataset to compare with the ID dataset (or an input to --ablate)")
    tasks = {d.task for d in [id_set, *ood_sets]}
    if len(tasks) > 1:
        raise EvalError("the ID and OOD datasets ask different tasks: " +
                        ", ".join(f"{d.name} ({d.task})" for d in [id_set, *ood_sets]))
    if task not in (None, id_set.task):
        if task != "ocr":
            raise EvalError(f"unknown task {task!r}: the datasets' own ({id_set.task}) or 'ocr'")
        if id_set.task != "token":
            raise EvalError(f"OCR is scored against exact words and boxes: it needs FUNSD-style datasets, not "
                            f"{id_set.name!r} ({id_set.task})")
    task = task or id_set.task
    if kieval and task != "token":
        raise EvalError("KIEval scores entities: it needs token-classification (FUNSD-style) datasets, "
                        f"not {id_set.name!r} ({task})")
    if resamples < 0:
        raise EvalError(f"the number of bootstrap resamples must be 0 or more, got {resamples}")
    if not 0 < confidence < 1:
        raise EvalError(f"the interval's confidence must be in (0, 1), got {confidence}")
    if combos:
        abl.check_supported(model, combos)
    refuse_other_boxes(model, [id_set, *ood_sets])
    if reference is not None and reference is not model:
        refuse_other_boxes(reference, [id_set, *ood_sets])

    all_id = id_set.source.ids()
    if not all_id:
        raise EvalError(f"dataset {id_set.name!r} has no documents in split {id_set.split!r}")
    id_ids = all_id[:limit] if limit else all_id
    all_id_set = set(all_id)
    warnings: list[str] = []
    if task == "ocr":
        ood_sets = _exact_words_only(id_set, ood_sets, warnings)
    # per OOD set: (its documents, ID documents only in ID, documents only in it); unpaired[j]: scored unpaired
    pairs: list[tuple[list[str], int, int]] = []
    unpaired: list[bool] = []
    for d in ood_sets:
        ood_ids = d.source.ids()
        ood_set = set(ood_ids)
        if require_same_ids and all_id_set != ood_set:
            raise EvalError(f"ID dataset {id_set.name!r} and OOD dataset {d.name!r} hold different documents: "
                            f"{len(all_id_set - ood_set)} id(s) only in {id_set.name!r}, {len(ood_set - all_id_set)} "
                            f"only in {d.name!r} (drop --require-same-ids to score the shared ones)")
        # what this run lost: ID documents it scores (the first --limit) that the OOD set lacks, and OOD documents
        # no ID document pairs with (those beyond --limit are left out on purpose, not lost)
        only_id = sum(1 for i in id_ids if i not in ood_set)
        only_ood = len(ood_set - all_id_set)
        refuse_copies(id_set, d, all_id_set, ood_set)
        if not ood_ids:
            raise EvalError(f"dataset {d.name!r} has no documents in split {d.split!r}")
        if only_ood:
            docs = list(ood_ids[:limit] if limit else ood_ids)
            shared = len(ood_set & all_id_set)
            warnings.append(f"{d.name} holds other documents than {id_set.name} ({only_ood} of its {len(ood_ids)} "
                            f"are not in {id_set.name}{f', {shared} are' if shared else ''}): scored unpaired, "
                            f"{id_set.name} on its {len(id_ids)} documents and {d.name} on its {len(docs)}, each "
                            "resampled over its own documents")
            pairs.append((docs, only_id, only_ood))
            unpaired.append(True)
            continue
        paired = [i for i in id_ids if i in ood_set]
        if not paired:
            raise EvalError(f"ID dataset {id_set.name!r} and OOD dataset {d.name!r} share no document among the "
                            f"first {len(id_ids)} ID documents (--limit): nothing to compare")
        if only_id:
            among = f" of the first {len(id_ids)}" if limit and len(id_ids) < len(all_id) else ""
            warnings.append(f"{d.name} and {id_set.name} hold different documents: scored on the {len(paired)} they share; "
                            f"{only_id} ID document(s){among} are not in {d.name}, {only_ood} of its documents are not "
                            f"in {id_set.name}")
        pairs.append((paired, only_id, only_ood))
        unpaired.append(False)

    sees = model_sees(model)
    needed = set().union(*(p[0] for p, u in zip(pairs, unpaired) if not u))
    if any(unpaired) or combos:
        needed = set(id_ids)
    id_scored_ids = [i for i in id_ids if i in needed]
    kw = dict(batch_size=batch_size, progress=progress, kieval=kieval, anls_official=anls_official, task=task)
    id_scored = _predict(model, id_set, id_scored_ids, **kw)
    boot = resamples > 0
    metric = TASK_METRICS[task][0]

    id_row = _score_row(id_scored, id_scored_ids)
    id_row["calibration"] = _calibration(id_scored, id_scored_ids, resamples, seed, 0, confidence)
    if boot:
        (vals,) = bootstrap_values(task, [id_scored.stats(id_scored_ids)], resamples, seed)
        id_row["ci"] = {"value": percentile_interval(vals, confidence)}
    ood_rows = []
    ood_stats: list[np.ndarray] = []
    ood_scored: list[Scored] = []
    for d, (docs, only_id, only_ood), alone in zip(ood_sets, pairs, unpaired):
        scored = _predict(model, d, docs, **kw)
        ood_scored.append(scored)
        row = _score_row(scored, docs)
        id_docs = id_scored_ids if alone else docs
        ref = id_row if alone else _score_row(id_scored, docs)
        value, id_value = row[metric], ref[metric]
        drop = id_value - value
        row.update(value=value, id_value=id_value, drop=drop, relative_drop=drop / id_value if id_value else math.nan)
        row["pairing"] = "unpaired" if alone else "paired"
        row["paired"] = {"shared": 0 if alone else len(docs), "id_only": only_id, "ood_only": only_ood}
        if alone:
            row["id_documents"] = len(id_docs)
        if "kieval" in ref:
            row["id_kieval"] = ref["kieval"]
        row["shifts"] = sorted(scored.shifts)
        row["families"] = families_of(scored.shifts)
        row["factors"] = measured_factors(d)
        row["note"] = blind_spot(row["factors"], sees)
        if boot:
            if alone:
                (id_vals,), (ood_vals,) = unpaired_values(task, [id_scored.stats(id_docs)], [scored.stats(docs)],
                                                          resamples, seed)
            else:
                id_vals, ood_vals = bootstrap_values(task, [id_scored.stats(docs), scored.stats(docs)], resamples, seed)
            drop_ci = percentile_interval(id_vals - ood_vals, confidence)
            row["ci"] = {"value": percentile_interval(ood_vals, confidence),
                         "id_value": percentile_interval(id_vals, confidence), "drop": drop_ci}
            row["drop_excludes_zero"] = drop_ci[0] > 0 or drop_ci[1] < 0
            ood_stats.append(scored.stats(docs))
        row["calibration"] = _calibration(scored, docs, resamples, seed, 1 if alone else 0, confidence)
        row["id_calibration"] = (id_row["calibration"] if alone else
                                 _calibration(id_scored, docs, resamples, seed, 0, confidence))
        row["ood_detection"] = _detection(id_scored, scored, id_docs, docs, alone, resamples, seed, confidence)
        ood_rows.append(row)

    ablation_rows = []
    for combo in combos:
        scored = _predict(model, id_set, id_scored_ids, **dict(kw, kieval=False), ablate=combo)
        row = _score_row(scored, id_scored_ids)
        row["dataset"] = f"{id_set.name} {abl.ablation_name(combo)}"
        value, id_value = row[metric], id_row[metric]
        drop = id_value - value
        row.update(ablation=list(combo), value=value, id_value=id_value, drop=drop,
                   relative_drop=drop / id_value if id_value else math.nan, note=abl.blind_note(combo, sees))
        if boot:
            id_vals, vals = bootstrap_values(task, [id_scored.stats(id_scored_ids), scored.stats(id_scored_ids)],
                                             resamples, seed)
            drop_ci = percentile_interval(id_vals - vals, confidence)
            row["ci"] = {"value": percentile_interval(vals, confidence), "id_value": percentile_interval(id_vals, confidence),
                         "drop": drop_ci}
            row["drop_excludes_zero"] = drop_ci[0] > 0 or drop_ci[1] < 0
        ablation_rows.append(row)

    if task == "qa":
        conventions = ["ANLS, mean over questions (an unanswered question scores as an empty answer): "
                       + ANLS_CONVENTIONS[anls_official] + (" (dogood.eval.metrics.anls, official=True)." if anls_official else
                                                            " (dogood.eval.metrics.anls; --anls-official for the RRC scorer).")]
    elif task == "ocr":
        conventions = [ocr_task.CONVENTION]
    else:
        conventions = [METRIC_CONVENTION[task]]
    if boot:
        pooled = {"token": " (micro entity F1 from the summed true positives, predicted and gold entities; not a mean "
                           "of per-document F1)",
                  "qa": " (the drawn documents' questions' ANLS summed, over their number of questions)",
                  "ocr": " (the drawn documents' exact words, summed, over their gold words)"}.get(task, "")
        conventions.append(
            f"Intervals: percentile bootstrap, {resamples} resamples drawn with numpy.random.default_rng({seed}); each "
            "resample draws as many documents as were scored, with replacement, and recomputes the metric from the "
            f"drawn documents' pooled counts{pooled}. ID, OOD and the change use the same drawn documents when the OOD "
            "set is paired (its documents are ID documents); an unpaired OOD set (other documents) draws its own "
            f"documents with numpy.random.default_rng([{seed}, 1]), independently of the ID draws, and the change's "
            "resamples are the ID resample minus the OOD resample.")
    if kieval:
        conventions.append("KIEval (Khang et al. 2025, dogood.eval.kieval.kieval_entity, summed over documents): gold "
                           "question/answer/header entities (text of their words, whitespace-normalised, exact match) "
                           "against the predicted IOB chunks; Aligned = TP / (TP + corrections). KIEval Group F1 needs "
                           "predicted question-answer links, which a tagger does not output, so it is not reported.")
    if ood_rows and task != "qa":
        conventions.append(ood_detection.CONVENTION + (" OCR: a page's confidence is the mean of its words' "
                                                       "confidences (0 for a page with no word read)."
                                                       if task == "ocr" else ""))
        conventions.append(calibration.CONVENTION)
    if combos:
        conventions.append(abl.CONVENTION)
    if any(split_severity(d.config)[1] for d in ood_sets):
        from dogood.eval.robustness import CITES, REFERENCE_FLOOR

        conventions.append(
            "Severity configs (<config>@<s>): error = 1 − score; CE, relative CE, mCE and relative mCE as "
            f"{CITES.citation.markdown()} ({CITES.section}) define them, with the reference model's errors in place "
            "of AlexNet's; the relative CE sums each severity's error above the clean (ID) error, and is reported only "
            f"where the reference's own error grows by at least {100 * REFERENCE_FLOOR:g} point(s) per severity on "
            "average (else the ratio divides by noise: n/a). Their intervals: the same paired bootstrap, every "
            "severity, the ID set and the reference drawn on the same documents (none when the severities were "
            "scored on different documents or unpaired).")
    report = EvalReport(
        model=model.name,
        task=task,
        box_level=getattr(model, "box_level", None) if getattr(model, "takes_boxes", False) else None,
        sees=None if sees is None else sorted(sees),
        bootstrap={"resamples": resamples, "seed": seed, "confidence": confidence} if boot else None,
        warnings=warnings,
        conventions=conventions,
        id=id_row,
        ood=ood_rows,
    )
    report.ablations = ablation_rows
    report.model_description = getattr(model, "description", None)
    if boot:
        for kind, groups in zip(("family", "dataset"), report.aggregate_groups()):
            for name, members in groups.items():
                docs = pairs[members[0]][0]
                alone = unpaired[members[0]]
                if any(pairs[j][0] != docs or unpaired[j] != alone for j in members):
                    continue  # configs scored on different documents: no joint resample
                if alone:
                    (id_vals,), vals = unpaired_values(task, [id_scored.stats(id_scored_ids)],
                                                       [ood_stats[j] for j in members], resamples, seed)
                    vals = [id_vals, *vals]
                else:
                    vals = bootstrap_values(task, [id_scored.stats(docs)] + [ood_stats[j] for j in members], resamples,
                                            seed)
                mean_drop = np.mean([vals[0] - v for v in vals[1:]], axis=0)
                report.aggregate_ci[f"{kind}:{name}"] = percentile_interval(mean_drop, confidence)
    report.robustness = _robustness(report, model, ood_sets, pairs, unpaired, id_scored, ood_scored, reference,
                                    reference_note, dict(kw, kieval=False), resamples, seed, confidence)
    return report


def _exact_words_only(id_set: EvalDataset, ood_sets: list[EvalDataset], warnings: list[str]) -> list[EvalDataset]:
    """For ``--task ocr``: the OOD sets whose words are still the source's exact words. A set whose words were
    re-read by OCR (a shift that ``reads_words``, as ``reocr``) holds an engine's output, not ground truth: it is
    left out with a warning; an ID set like that is refused."""
    from dogood.shifts import SHIFTS

    def readers(d: EvalDataset) -> list[str]:
        ids = d.source.ids()
        if not ids:
            return []
        doc = d.source.load(ids[0])
        if d.box_level == "segment" and _segment_boxed(doc):
            raise EvalError(f"dataset {d.name!r}: its words carry their segment's box (segment-level bboxes, no full "
                            "record), not their own: an OCR engine's word boxes cannot be matched against them; "
                            "score OCR on word-level data (a dogood build, or the FUNSD folder)")
        return sorted({r.shift for r in doc.provenance if r.shift in SHIFTS and SHIFTS[r.shift].reads_words})

    found = readers(id_set)
    if found:
        raise EvalError(f"dataset {id_set.name!r}: its words were re-read by OCR ({', '.join(found)}), so they are no "
                        "ground truth to score an OCR engine against")
    kept = []
    for d in ood_sets:
        found = readers(d)
        if found:
            warnings.append(f"{d.name} left out: its words were re-read by OCR ({', '.join(found)}), so they are no "
                            "ground truth to score an OCR engine against")
        else:
            kept.append(d)
    if not kept and ood_sets:
        raise EvalError("every OOD set's words were re-read by OCR: nothing to score an OCR engine against")
    return kept


def _segment_boxed(doc) -> bool:
    """Whether every multi-word entity's words share one box: words read from segment-level ``bboxes``."""
    multi = [e for e in doc.entities if len(e.word_ids) > 1]
    return bool(multi) and all(len({tuple(doc.words[i].box) for i in e.word_ids}) == 1 for e in multi)


def _calibration(scored: Scored, ids: Sequence[str], resamples: int, seed: int, stream: int,
                 confidence: float) -> dict:
    """The ECE of ``scored`` over documents ``ids`` (``value``: None with ``note`` when the model gives no
    confidences), with its bootstrap interval (documents drawn from ``stream``)."""
    if scored.no_confidence or not ids:
        return {"ece": None, "note": scored.no_confidence or "no documents"}
    bins = np.stack([scored.bins[i] for i in ids])
    out: dict[str, Any] = {"ece": calibration.ece_from_bins(bins), "bins": calibration.N_BINS,
                           "items": int(bins[:, calibration.N_BINS, 0].sum())}
    if resamples > 0:
        vals = np.concatenate([calibration.ece_from_bins(bins, w)
                               for w in weight_blocks(len(ids), resamples, seed, stream)])
        out["ci"] = nan_interval(vals, confidence)
    return out


def _detection(id_scored: Scored, ood: Scored, id_ids: Sequence[str], ood_ids: Sequence[str], unpaired: bool,
               resamples: int, seed: int, confidence: float) -> dict:
    """AUROC, FPR95, AUPR-In/Out of telling the ID documents ``id_ids`` from the OOD documents ``ood_ids`` by their
    confidence, with bootstrap intervals (paired: one draw for both sides; unpaired: streams 0 and 1)."""
    why = id_scored.no_confidence or ood.no_confidence
    if why:
        return {"auroc": None, "note": why}
    id_conf = np.array([id_scored.doc_conf[i] for i in id_ids])
    ood_conf = np.array([ood.doc_conf[i] for i in ood_ids])
    id_keep, ood_keep = ~np.isnan(id_conf), ~np.isnan(ood_conf)
    if not id_keep.any() or not ood_keep.any():
        return {"auroc": None, "note": "no document has a confidence (no tokens)"}
    out: dict[str, Any] = {k: float(v) for k, v in
                           ood_detection.detection_scores(id_conf[id_keep], ood_conf[ood_keep]).items()}
    out["id_documents"], out["ood_documents"] = int(id_keep.sum()), int(ood_keep.sum())
    if resamples > 0:
        parts: dict[str, list[np.ndarray]] = {k: [] for k in ("auroc", "fpr95", "aupr_in", "aupr_out")}
        id_blocks = weight_blocks(len(id_ids), resamples, seed, 0)
        ood_blocks = id_blocks if not unpaired else weight_blocks(len(ood_ids), resamples, seed, 1)
        for wi in id_blocks:
            wo = wi if not unpaired else next(ood_blocks)
            res = ood_detection.detection_scores(id_conf[id_keep], ood_conf[ood_keep], wi[:, id_keep], wo[:, ood_keep])
            for k in parts:
                parts[k].append(res[k])
        out["ci"] = {k: nan_interval(np.concatenate(v), confidence) for k, v in parts.items()}
    return out


def _robustness(report: EvalReport, model: Model, ood_sets: list[EvalDataset], pairs: list, unpaired: list[bool],
                id_scored: Scored, ood_scored: list[Scored], reference: Model | None, reference_note: str | None,
                kw: dict, resamples: int, seed: int, confidence: float) -> dict | None:
    """The severity curves, mean relative drops and corruption errors of the severity-swept OOD rows
    (:mod:`dogood.eval.robustness`); ``None`` when no OOD config is named ``<config>@<s>``."""
    from dogood.eval import robustness as rb

    task, metric = report.task, report.metric
    groups: dict[tuple[str, str], dict[int, int]] = {}
    for j, row in enumerate(report.ood):
        base, level = rb.split_severity(row.get("config"))
        if level is not None:
            folder = row["dataset"].rsplit("/", 1)[0]
            groups.setdefault((folder, base), {})[level] = j
    if not groups:
        return None
    ref_name = ref_identity = None
    self_reference = False
    if reference is not None:
        if reference.task != task:
            raise ModelError(f"reference model {reference.name!r} does {reference.task} prediction but the datasets "
                             f"need {task} prediction")
        ref_identity = rb.model_identity(reference)
        ref_name = ref_identity["label"]
        self_reference = reference is model or (ref_identity.get("sha256") is not None
                                                and ref_identity.get("sha256") == rb.model_identity(model).get("sha256"))
    if self_reference:
        # CE and relative CE against oneself are 1 by definition: say so instead of printing rows of 1.000
        reference_note = (f"the model is its own reference ({ref_name}): its corruption errors are 1 by definition, so "
                          "none are shown; pass --reference MODEL to compare with another model")
        reference = ref_name = None
    ref_cache: dict[int, Scored] = {}

    def ref_scored(j: int | None) -> Scored:
        """The reference's results on the ID set (``None``) or on OOD row ``j``: on all the documents scored."""
        if j not in ref_cache:
            if j is None:
                ref_cache[j] = id_scored if reference is model else _predict(reference, id_scored.dataset,
                                                                                  id_scored.ids, **kw)
            else:
                ref_cache[j] = (ood_scored[j] if reference is model else
                                _predict(reference, ood_sets[j], pairs[j][0], **kw))
        return ref_cache[j]

    boot = resamples > 0
    sweeps = []
    for (folder, base), levels in sorted(groups.items()):
        order = sorted(levels)
        rows = [report.ood[levels[s]] for s in order]
        shifts = sorted(set().union(*(r["shifts"] for r in rows)))
        fallback = [f for f in FAMILIES if any(f in (r["families"] or []) for r in rows)]
        family = "+".join(rb.sweep_family(ood_sets[levels[order[0]]].location, [r["config"] for r in rows], shifts,
                                          fallback) or ["unknown"])
        docs = [pairs[levels[s]][0] for s in order]
        same_docs = all(d == docs[0] for d in docs) and not any(unpaired[levels[s]] for s in order)
        sweep: dict[str, Any] = {
            "corruption": f"{folder}/{base}", "dataset": folder, "config": base, "family": family,
            "subfamily": rb.subfamily(shifts), "shifts": shifts, "severities": order, "same_documents": same_docs,
            "id_value": rows[0]["id_value"] if same_docs else None,
            "curve": [{"severity": s, "config": r["config"], "dataset": r["dataset"], "documents": r["documents"],
                       "value": r["value"], "id_value": r["id_value"], "drop": r["drop"],
                       "relative_drop": r["relative_drop"],
                       **({"ci": r["ci"]["value"], "drop_ci": r["ci"]["drop"]} if "ci" in r else {})}
                      for s, r in zip(order, rows)],
        }
        if same_docs and "ci" in rows[0]:
            sweep["id_ci"] = rows[0]["ci"]["id_value"]
        clean = [r["id_value"] for r in rows]
        values = [r["value"] for r in rows]
        sweep["mean_relative_drop"] = rb.mean_relative_drop(clean, values)
        if reference is not None:
            ref_id = ref_scored(None)
            ref_values, ref_clean = [], []
            for s in order:
                j = levels[s]
                ref_values.append(_score_row(ref_scored(j), pairs[j][0])[metric])
                ref_clean.append(_score_row(ref_id, id_scored.ids if unpaired[j] else pairs[j][0])[metric])
            sweep["reference"] = {"model": ref_name, "values": ref_values, "id_values": ref_clean,
                                  "id_value": ref_clean[0] if same_docs else None}
            sweep["ce"] = rb.corruption_error(values, ref_values)
            growth = rb.reference_degradation(ref_values, ref_clean)
            sweep["reference"]["degradation"] = growth
            if growth >= rb.REFERENCE_FLOOR:
                sweep["relative_ce"] = rb.relative_corruption_error(values, clean, ref_values, ref_clean)
            else:
                sweep["relative_ce"] = None
                sweep["relative_ce_note"] = rb.floor_note(growth)
        if boot and same_docs:
            ids = docs[0]
            stats = [id_scored.stats(ids)] + [ood_scored[levels[s]].stats(ids) for s in order]
            if reference is not None:
                stats += [ref_scored(None).stats(ids)] + [ref_scored(levels[s]).stats(ids) for s in order]
            vals = bootstrap_values(task, stats, resamples, seed)
            k = len(order)
            m_id, m_sev = vals[0], vals[1:k + 1]
            ci = {"mean_relative_drop": percentile_interval(rb.mean_relative_drop([m_id] * k, m_sev), confidence)}
            if reference is not None:
                r_id, r_sev = vals[k + 1], vals[k + 2:]
                ce = rb.corruption_error(m_sev, r_sev)
                ci["ce"] = nan_interval(ce, confidence)
                if sweep["relative_ce"] is not None:
                    # a resample whose reference degrades less than the floor has no relative CE either
                    rel = rb.relative_corruption_error(m_sev, [m_id] * k, r_sev, [r_id] * k)
                    growth = rb.reference_degradation(r_sev, [r_id] * k)
                    ci["relative_ce"] = nan_interval(np.where(growth >= rb.REFERENCE_FLOOR, rel, np.nan), confidence)
            sweep["ci"] = ci
        sweeps.append(sweep)
    families: dict[str, list[dict]] = {}
    for sweep in sweeps:
        families.setdefault(sweep["family"], []).append(sweep)
    order = {f: i for i, f in enumerate(FAMILIES)}
    fam = sorted(families, key=lambda f: (order.get(f, 99), f))
    from dogood.eval.robustness import family_file, family_means

    return {
        "reference": ref_name,
        "reference_identity": ref_identity,
        "self_reference": self_reference,
        "reference_floor": rb.REFERENCE_FLOOR,
        "reference_note": reference_note,
        "families": [{"family": f, "plot": family_file(f), **family_means(families[f])} for f in fam],
        "all": family_means(sweeps),
        "sweeps": sweeps,
    }
