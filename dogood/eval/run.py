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

ID and OOD are compared **paired by document**: each OOD set is scored on the
document ids it shares with the ID set, and the drop is the ID score on those
same documents minus the OOD score (a warning says how many ids each side
lost; ``require_same_ids`` refuses instead). Every score comes with a paired
bootstrap interval over documents (:func:`bootstrap_weights`), the drop's
included; drops are averaged per shift family and per OOD dataset; rows whose
config's measured factor table (its build's statistics) changed only what the
model cannot see (``Model.sees``) say so. A model given boxes reads them at
its own convention, and is refused a dataset whose ``bboxes`` are in another.

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
from dogood.eval.metrics import ANLS_CONVENTIONS, accuracy, anls_scores, entity_error_rates, entity_scores, iob_entities
from dogood.models.predictions import check_against, read_predictions
from dogood.eval.robustness import split_severity
from dogood.models import Model, ModelError, PredictionsFile
from dogood.eval.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, nan_interval, bootstrap_values, percentile_interval
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

    def stats(self, ids: Sequence[str]) -> np.ndarray:
        """Per document, the counts its score is pooled from.

        ``(tp, n_pred, n_gold)`` entities (token classification), ``(correct,)``
        (document classification) or ``(sum of ANLS, questions)`` (QA).
        """
        if self.task == "qa":
            return np.array([[sum(self.anls(i)), len(self.gold[i])] for i in ids], dtype=np.float64)
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
             kieval: bool, anls_official: bool = False) -> Scored:
    """Run ``model`` over documents ``ids`` of ``dataset``; keep gold and predictions per document."""
    if model.task != dataset.task:
        raise ModelError(
            f"model {model.name!r} does {model.task} prediction but dataset {dataset.name!r} needs {dataset.task} prediction"
        )
    scored = Scored(dataset, dataset.task, list(ids), anls_official=anls_official)
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
            preds = model.predict(docs)
        for doc in docs:
            scored.shifts.update(rec.shift for rec in doc.provenance)
            p = preds.get(doc.id)
            if p is None:
                raise ModelError(f"model {model.name!r} returned no prediction for document {doc.id!r} of {dataset.name!r}")
            if dataset.task == "token":
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
                if kieval:
                    scored.kieval[doc.id] = _kieval_document(doc, index, list(p.tags))
            elif dataset.task == "qa":
                if not doc.qa:
                    raise EvalError(f"document {doc.id!r} of {dataset.name!r} has no questions to score")
                answers = p.answers or {}
                scored.gold[doc.id] = [(q.id, list(q.answers)) for q in doc.qa]
                scored.pred[doc.id] = [answers.get(q.id, "") for q in doc.qa]  # an unanswered question scores as ""
            else:
                if doc.label is None:
                    raise EvalError(f"document {doc.id!r} of {dataset.name!r} has no label to score against")
                if p.label not in RVL_CDIP_CLASSES:
                    raise ModelError(f"model {model.name!r} predicted label(s) outside the RVL-CDIP classes: {[p.label]}")
                scored.gold[doc.id] = doc.label
                scored.pred[doc.id] = p.label
        if bar is not None:
            bar.update(len(docs))
    if bar is not None:
        bar.close()
    return scored


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


def evaluate(model: Model, id_dataset: Any, ood_datasets: Any, *, split: str = "test", limit: int | None = None,
             batch_size: int = 32, progress: bool = False, require_same_ids: bool = False,
             resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE,
             kieval: bool = False, anls_official: bool = False, reference: Model | None = None,
             reference_note: str | None = None) -> EvalReport:
    """Score ``model`` on the ID dataset and on every OOD dataset, paired by document; the :class:`EvalReport` of all.

    Parameters
    ----------
    model : Model
        Anything with ``name``, ``task`` and ``predict`` (:mod:`dogood.models`);
        an optional ``sees`` (a set of ``text``, ``layout``, ``image``) lets the
        report flag shifts the model cannot see.
    id_dataset, ood_datasets
        Each an :class:`EvalDataset`, a built folder, ``folder:config``, a Hub
        id (read through ``datasets``), ``funsd`` / ``rvl_cdip``, or a
        ``datasets.Dataset`` (dogood's schema or a plain Hub FUNSD / RVL-CDIP
        one); ``ood_datasets`` may be one of these or a list. A folder without
        ``:config`` stands for all its configs (as OOD sets; the ID set must
        be one dataset).
    split : str
        The split read from names and ``DatasetDict`` objects.
    limit : int, optional
        Only the first ``limit`` documents of the ID set (and their OOD counterparts).
    require_same_ids : bool
        Refuse (:class:`EvalError`) when an OOD set's document ids differ from
        the ID set's, instead of scoring the shared ones with a warning.
    resamples, seed, confidence
        The paired bootstrap (:func:`bootstrap_weights`); ``resamples=0`` gives no intervals.
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

    Every OOD set is scored on the documents whose ids it shares with the ID
    set; the ID score beside it (``id_value``) and the drop are on those same
    documents. When the sets differ, ``EvalReport.warnings`` says how many ids
    each side lost.
    """
    id_sets = as_datasets(id_dataset, split)
    if len(id_sets) != 1:
        raise EvalError(f"the ID dataset names {len(id_sets)} datasets ({', '.join(d.name for d in id_sets)}); "
                        "pick one config (folder:CONFIG)")
    id_set = id_sets[0]
    if is_one_dataset(ood_datasets):
        ood_datasets = [ood_datasets]
    ood_sets = [d for spec in list(ood_datasets) for d in as_datasets(spec, split)]
    if not ood_sets:
        raise EvalError("give at least one OOD dataset to compare with the ID dataset")
    tasks = {d.task for d in [id_set, *ood_sets]}
    if len(tasks) > 1:
        raise EvalError("the ID and OOD datasets ask different tasks: " +
                        ", ".join(f"{d.name} ({d.task})" for d in [id_set, *ood_sets]))
    if kieval and id_set.task != "token":
        raise EvalError("KIEval scores entities: it needs token-classification (FUNSD-style) datasets, "
                        f"not {id_set.name!r} ({id_set.task})")
    if resamples < 0:
        raise EvalError(f"the number of bootstrap resamples must be 0 or more, got {resamples}")
    if not 0 < confidence < 1:
        raise EvalError(f"the interval's confidence must be in (0, 1), got {confidence}")
    task = id_set.task
    refuse_other_boxes(model, [id_set, *ood_sets])
    if reference is not None and reference is not model:
        refuse_other_boxes(reference, [id_set, *ood_sets])

    all_id = id_set.source.ids()
    if not all_id:
        raise EvalError(f"dataset {id_set.name!r} has no documents in split {id_set.split!r}")
    id_ids = all_id[:limit] if limit else all_id
    all_id_set = set(all_id)
    warnings: list[str] = []
    pairs: list[tuple[list[str], int, int]] = []  # per OOD set: shared ids (ID order), ids only in ID, only in OOD
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
        paired = [i for i in id_ids if i in ood_set]
        refuse_copies(id_set, d, all_id_set, ood_set)
        if not paired:
            raise EvalError(f"ID dataset {id_set.name!r} and OOD dataset {d.name!r} share no document id: nothing to compare "
                            "(a dataset without an 'id' column has its rows numbered 0, 1, ...)")
        if only_id or only_ood:
            scored = f" of the first {len(id_ids)}" if limit and len(id_ids) < len(all_id) else ""
            warnings.append(f"{d.name} and {id_set.name} hold different documents: scored on the {len(paired)} they share; "
                            f"{only_id} ID document(s){scored} are not in {d.name}, {only_ood} of its documents are not "
                            f"in {id_set.name}")
        pairs.append((paired, only_id, only_ood))

    sees = model_sees(model)
    needed = set().union(*(p[0] for p in pairs))
    id_scored_ids = [i for i in id_ids if i in needed]
    kw = dict(batch_size=batch_size, progress=progress, kieval=kieval, anls_official=anls_official)
    id_scored = _predict(model, id_set, id_scored_ids, **kw)
    boot = resamples > 0

    id_row = _score_row(id_scored, id_scored_ids)
    if boot:
        (vals,) = bootstrap_values(task, [id_scored.stats(id_scored_ids)], resamples, seed)
        id_row["ci"] = {"value": percentile_interval(vals, confidence)}
    ood_rows = []
    ood_stats: list[np.ndarray] = []
    ood_scored: list[Scored] = []
    for d, (paired, only_id, only_ood) in zip(ood_sets, pairs):
        scored = _predict(model, d, paired, **kw)
        ood_scored.append(scored)
        row = _score_row(scored, paired)
        ref = _score_row(id_scored, paired)
        value, id_value = row[TASK_METRICS[task][0]], ref[TASK_METRICS[task][0]]
        drop = id_value - value
        row.update(value=value, id_value=id_value, drop=drop, relative_drop=drop / id_value if id_value else math.nan)
        row["paired"] = {"shared": len(paired), "id_only": only_id, "ood_only": only_ood}
        if "kieval" in ref:
            row["id_kieval"] = ref["kieval"]
        row["shifts"] = sorted(scored.shifts)
        row["families"] = families_of(scored.shifts)
        row["factors"] = measured_factors(d)
        row["note"] = blind_spot(row["factors"], sees)
        if boot:
            id_vals, ood_vals = bootstrap_values(task, [id_scored.stats(paired), scored.stats(paired)], resamples, seed)
            drop_ci = percentile_interval(id_vals - ood_vals, confidence)
            row["ci"] = {"value": percentile_interval(ood_vals, confidence),
                         "id_value": percentile_interval(id_vals, confidence), "drop": drop_ci}
            row["drop_excludes_zero"] = drop_ci[0] > 0 or drop_ci[1] < 0
            ood_stats.append(scored.stats(paired))
        ood_rows.append(row)

    conventions = [METRIC_CONVENTION[task] if task != "qa" else
                   "ANLS, mean over questions (an unanswered question scores as an empty answer): "
                   + ANLS_CONVENTIONS[anls_official] + (" (dogood.eval.metrics.anls, official=True)." if anls_official else
                                                        " (dogood.eval.metrics.anls; --anls-official for the RRC scorer).")]
    if boot:
        pooled = {"token": " (micro entity F1 from the summed true positives, predicted and gold entities; not a mean "
                           "of per-document F1)",
                  "qa": " (the drawn documents' questions' ANLS summed, over their number of questions)"}.get(task, "")
        conventions.append(
            f"Intervals: percentile bootstrap, {resamples} resamples drawn with numpy.random.default_rng({seed}); each "
            "resample draws as many documents as were scored, with replacement, and recomputes the metric from the "
            f"drawn documents' pooled counts{pooled}. ID, OOD and the change use the same drawn documents.")
    if kieval:
        conventions.append("KIEval (Khang et al. 2025, dogood.eval.kieval.kieval_entity, summed over documents): gold "
                           "question/answer/header entities (text of their words, whitespace-normalised, exact match) "
                           "against the predicted IOB chunks; Aligned = TP / (TP + corrections). KIEval Group F1 needs "
                           "predicted question-answer links, which a tagger does not output, so it is not reported.")
    if any(split_severity(d.config)[1] for d in ood_sets):
        from dogood.eval.robustness import CITES

        conventions.append(
            "Severity configs (<config>@<s>): error = 1 − score; CE, relative CE, mCE and relative mCE as "
            f"{CITES.citation.markdown()} ({CITES.section}) define them, with the reference model's errors in place "
            "of AlexNet's; the relative CE sums each severity's error above the clean (ID) error. Their intervals: "
            "the same paired bootstrap, every severity, the ID set and the reference drawn on the same documents "
            "(none when the severities were scored on different documents).")
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
    if boot:
        for kind, groups in zip(("family", "dataset"), report.aggregate_groups()):
            for name, members in groups.items():
                docs = pairs[members[0]][0]
                if any(pairs[j][0] != docs for j in members):
                    continue  # configs scored on different documents: no joint resample
                vals = bootstrap_values(task, [id_scored.stats(docs)] + [ood_stats[j] for j in members], resamples, seed)
                mean_drop = np.mean([vals[0] - v for v in vals[1:]], axis=0)
                report.aggregate_ci[f"{kind}:{name}"] = percentile_interval(mean_drop, confidence)
    report.robustness = _robustness(report, model, ood_sets, pairs, id_scored, ood_scored, reference, reference_note,
                                    dict(kw, kieval=False), resamples, seed, confidence)
    return report


def _robustness(report: EvalReport, model: Model, ood_sets: list[EvalDataset], pairs: list, id_scored: Scored,
                ood_scored: list[Scored], reference: Model | None, reference_note: str | None, kw: dict,
                resamples: int, seed: int, confidence: float) -> dict | None:
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
    ref_name = None
    if reference is not None:
        ref_name = reference.name
        if reference.task != task:
            raise ModelError(f"reference model {reference.name!r} does {reference.task} prediction but the datasets "
                             f"need {task} prediction")
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
        same_docs = all(d == docs[0] for d in docs)
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
                ref_clean.append(_score_row(ref_id, pairs[j][0])[metric])
            sweep["reference"] = {"model": ref_name, "values": ref_values, "id_values": ref_clean,
                                  "id_value": ref_clean[0] if same_docs else None}
            sweep["ce"] = rb.corruption_error(values, ref_values)
            sweep["relative_ce"] = rb.relative_corruption_error(values, clean, ref_values, ref_clean)
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
                rel = rb.relative_corruption_error(m_sev, [m_id] * k, r_sev, [r_id] * k)
                ci["ce"] = nan_interval(ce, confidence)
                ci["relative_ce"] = nan_interval(rel, confidence)
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
        "reference_note": reference_note,
        "families": [{"family": f, "plot": family_file(f), **family_means(families[f])} for f in fam],
        "all": family_means(sweeps),
        "sweeps": sweeps,
    }
