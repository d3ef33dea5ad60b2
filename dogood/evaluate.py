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
shifts change only what the model cannot see (``Model.sees``) say so.

Documents are read and predicted in batches, so a 40,000-page test split is
never held in memory at once.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dogood.errors import DogoodError, SourceError
import numpy as np

from dogood.metrics import ANLS_CONVENTIONS, _prf, accuracy, anls_scores, entity_error_rates, entity_scores, iob_entities
from dogood.models import Model, ModelError, PredictionsFile
from dogood.predictions import check_against, read_predictions
from dogood.robustness import split_severity
from dogood.schema import RVL_CDIP_CLASSES, iob_tags

#: The task each dataset schema / source kind asks of a model.
SCHEMA_TASKS = {"funsd": "token", "rvl_cdip": "document", "docvqa": "qa"}
#: The headline metric of each task, as Do-GOOD's Table 2 reports it.
TASK_METRICS = {"token": ("f1", "entity F1"), "document": ("accuracy", "accuracy"), "qa": ("anls", "ANLS")}
SOURCE_KINDS = ("funsd", "rvl_cdip")


class EvalError(DogoodError):
    """A dataset cannot be evaluated as asked."""


@dataclass
class EvalDataset:
    """One dataset to score: a name for the report, where its documents come from, and its task."""

    name: str
    source: Any
    task: str
    split: str
    config: str | None = None
    location: str = ""


def resolve_datasets(spec: str, split: str = "test") -> list[EvalDataset]:
    """The datasets a command-line name stands for (see the module docstring).

    A dogood folder without ``:config`` gives one dataset per config that has
    ``split``; anything else gives one.
    """
    base, config = _split_config(spec)
    path = Path(base).expanduser()
    if not path.exists() and base in SOURCE_KINDS:
        from dogood.sources import open_source

        source = open_source({"kind": base}, split)
        return [EvalDataset(base, source, SCHEMA_TASKS[base], split, None, f"{base} source")]
    if path.is_dir():
        configs = [config] if config else _folder_configs(path, split)
        if not configs:
            configs = [None]
        return [_hf_dataset(str(path), path.name, c, split) for c in configs]
    if path.exists() or base.startswith((".", "/", "~")):
        if not path.exists():
            raise EvalError(f"dataset {spec!r}: {path} does not exist")
        return [_hf_dataset(str(path), path.stem, config, split)]
    return [_hf_dataset(base, base, config, split)]


def _split_config(spec: str) -> tuple[str, str | None]:
    base, sep, config = spec.rpartition(":")
    if not sep or not base or "/" in config or Path(spec).exists():
        return spec, None
    return base, config


def _folder_configs(folder: Path, split: str) -> list[str]:
    data = folder / "data"
    if not data.is_dir():
        return []
    return sorted(d.name for d in data.iterdir() if d.is_dir() and any(d.glob(f"{split}-*.parquet")))


def _hf_dataset(location: str, label: str, config: str | None, split: str) -> EvalDataset:
    from dogood.sources.hf import HFDatasetSource

    try:
        source = HFDatasetSource(name=location, split=split, config=config)
    except SourceError as exc:
        raise EvalError(f"dataset {location!r}: {exc}") from None
    name = f"{label}/{config}" if config else label
    return EvalDataset(name, source, SCHEMA_TASKS[source.schema], split, config, location)


def as_datasets(spec: Any, split: str = "test") -> list[EvalDataset]:
    """Whatever names a dataset, as :class:`EvalDataset` objects.

    ``spec`` is an :class:`EvalDataset`; a string or path as on the command
    line (a built folder, ``folder:config``, a Hub id, ``funsd`` /
    ``rvl_cdip``: see :func:`resolve_datasets`); or a ``datasets.Dataset``
    (``DatasetDict``: its ``split``) in dogood's schema or a plain Hub
    FUNSD / RVL-CDIP schema.
    """
    if isinstance(spec, EvalDataset):
        return [spec]
    if isinstance(spec, (str, Path)):
        return resolve_datasets(str(spec), split)
    try:
        import datasets
    except ImportError:  # pragma: no cover - datasets is a dependency
        datasets = None
    if datasets is not None and isinstance(spec, datasets.DatasetDict):
        if split not in spec:
            raise EvalError(f"the DatasetDict has no split {split!r} (it has {', '.join(spec) or 'none'})")
        spec = spec[split]
    if datasets is not None and isinstance(spec, datasets.Dataset):
        from dogood.sources.hf import HFDatasetSource

        label = (getattr(spec.info, "dataset_name", None) or getattr(spec.info, "config_name", None)
                 or f"dataset@{id(spec):x}")
        config = getattr(spec.info, "config_name", None)
        config = None if config in (None, "default") else config
        try:
            source = HFDatasetSource(name=label, split=split, config=config, dataset=spec)
        except SourceError as exc:
            raise EvalError(f"dataset {label!r}: {exc}") from None
        if source.schema not in SCHEMA_TASKS:
            raise EvalError(f"dataset {label!r}: {source.schema} datasets cannot be scored by dogood eval")
        name = f"{label}/{config}" if config and config != label else label
        return [EvalDataset(name, source, SCHEMA_TASKS[source.schema], split, config, "datasets.Dataset object")]
    raise EvalError(f"cannot read a dataset from a {type(spec).__name__}: give a folder, a Hub id, "
                    "'folder:config', a datasets.Dataset or an EvalDataset")


def _one_dataset(spec: Any) -> bool:
    """Whether ``spec`` names one dataset (or one folder), rather than being a collection of them."""
    if isinstance(spec, (str, Path, EvalDataset)) or not isinstance(spec, Iterable):
        return True
    try:
        import datasets
    except ImportError:  # pragma: no cover
        return False
    return isinstance(spec, (datasets.Dataset, datasets.DatasetDict))


# -- scoring ----------------------------------------------------------------------------------------------

#: Bootstrap defaults: resamples and seed (``dogood eval --bootstrap``, ``--seed``).
DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0
DEFAULT_CONFIDENCE = 0.95
#: What a model must see for a shift family to reach it: (modality in ``Model.sees``, what to call it).
FAMILY_INPUT = {"image": ("image", "pixels"), "text": ("text", "words"), "layout": ("layout", "boxes")}
FAMILIES = ("image", "text", "layout")


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


def metric_from_counts(task: str, sums: np.ndarray, n_docs: int) -> float:
    """The headline metric from pooled per-document counts (see :meth:`Scored.stats`): micro entity F1 or accuracy."""
    if task == "token":
        return _prf(int(sums[0]), int(sums[1]), int(sums[2]))[2]
    if task == "qa":
        return float(sums[0]) / float(sums[1]) if sums[1] else math.nan
    return float(sums[0]) / n_docs


def bootstrap_weights(n: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    """The resampling scheme of every interval ``dogood eval`` reports.

    ``rng = numpy.random.default_rng(seed)``; then, ``resamples`` times,
    ``rng.integers(0, n, size=n)`` draws ``n`` documents with replacement.
    Each draw is yielded as ``numpy.bincount(draw, minlength=n)``: how many
    times each document is in the resample.
    """
    rng = np.random.default_rng(seed)
    for _ in range(resamples):
        yield np.bincount(rng.integers(0, n, size=n), minlength=n)


def bootstrap_values(task: str, stats: Sequence[np.ndarray], resamples: int, seed: int) -> list[np.ndarray]:
    """The metric of each bootstrap resample, for one or several aligned per-document count arrays.

    All arrays describe the same documents in the same order (ID and OOD
    counts of paired documents): each resample draws the documents once
    (:func:`bootstrap_weights`) and recomputes every array's metric from the
    drawn documents' summed counts, so a drop is computed on the very same
    resampled documents.
    """
    n = len(stats[0])
    out = [np.empty(resamples) for _ in stats]
    for b, w in enumerate(bootstrap_weights(n, resamples, seed)):
        for k, s in enumerate(stats):
            out[k][b] = metric_from_counts(task, w @ s, n)
    return out


def percentile_interval(values: np.ndarray, confidence: float) -> list[float]:
    """``[low, high]``: the percentile bootstrap interval (numpy's default linear interpolation)."""
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(values, [tail, 100 - tail])
    return [float(low), float(high)]


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


def _kieval_document(doc, index: list[int], tags: list[str]) -> dict:
    """KIEval entity-level result of one document: gold question/answer/header entities vs the predicted chunks."""
    from dogood.kieval import funsd_entities, kieval_entity

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
            from dogood.kieval import combine

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


def blind_spot(families: Sequence[str], sees: frozenset[str] | None) -> str | None:
    """A note for a row whose shifts change only what the model cannot see (``None`` when it sees something changed)."""
    if sees is None or not families:
        return None
    blind = [f for f in families if f in FAMILY_INPUT and FAMILY_INPUT[f][0] not in sees]
    if not blind:
        return None
    return "; ".join(f"{f} shift: the model sees no {FAMILY_INPUT[f][1]}" for f in blind)


@dataclass
class EvalReport:
    """The scores of one model on an ID dataset and its OOD datasets, paired by document, with drops and intervals."""

    model: str
    task: str
    id: dict
    ood: list[dict] = field(default_factory=list)
    box_level: str | None = None  # the box convention the model was given (Hugging Face models with boxes)
    sees: list[str] | None = None
    bootstrap: dict | None = None  # {"resamples", "seed", "confidence"}; None: no intervals
    warnings: list[str] = field(default_factory=list)
    conventions: list[str] = field(default_factory=list)
    aggregate_ci: dict[str, list[float]] = field(default_factory=dict)  # "family:image" / "dataset:funsd-l" -> [low, high]
    robustness: dict | None = None  # severity curves, mean relative drops, corruption errors (see _robustness)

    @property
    def metric(self) -> str:
        return TASK_METRICS[self.task][0]

    @property
    def metric_label(self) -> str:
        return TASK_METRICS[self.task][1]

    def rows(self) -> list[dict]:
        """ID first, then each OOD dataset, each with ``role``, ``value``, ``drop`` and ``relative_drop``.

        An OOD row's ``drop`` is ``id_value - value``: the ID score on the
        documents this OOD set shares with the ID set, minus the OOD score on
        them.
        """
        out = [{"role": "id", **self.id, "value": self.id[self.metric], "drop": None, "relative_drop": None}]
        for row in self.ood:
            out.append({"role": "ood", **row})
        return out

    def aggregate_groups(self) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
        """The OOD rows (indices) of each shift family and of each OOD dataset."""
        by_family: dict[str, list[int]] = {}
        by_dataset: dict[str, list[int]] = {}
        for j, r in enumerate(self.ood):
            for f in r.get("families") or []:
                by_family.setdefault(f, []).append(j)
            base = r["dataset"].rsplit("/", 1)[0] if r.get("config") else r["dataset"]
            by_dataset.setdefault(base, []).append(j)
        return by_family, by_dataset

    def aggregates(self) -> dict[str, list[dict]]:
        """Mean drop per shift family and per OOD dataset (the folder a config comes from), over OOD configs.

        A config whose shifts span two families counts in both. ``ci`` (when
        :func:`evaluate` could compute it: bootstrap on, and every config of
        the group scored on the same documents) is the interval of the mean
        drop, each resample drawing the documents once for all the group's
        configs.
        """
        by_family, by_dataset = self.aggregate_groups()

        def table(groups, key):
            out = []
            for k, members in groups.items():
                entry = {key: k, "configs": len(members), "mean_drop": float(np.mean([self.ood[j]["drop"] for j in members]))}
                ci = self.aggregate_ci.get(f"{key}:{k}")
                if ci is not None:
                    entry["ci"] = ci
                    entry["drop_excludes_zero"] = ci[0] > 0 or ci[1] < 0
                out.append(entry)
            return out

        order = {f: i for i, f in enumerate(FAMILIES)}
        fam = sorted(by_family.items(), key=lambda kv: (order.get(kv[0], 99), kv[0]))
        return {"family": table(dict(fam), "family"), "dataset": table(by_dataset, "dataset")}

    # -- writers ----------------------------------------------------------------------------------------

    def to_json(self) -> str:
        payload = {"model": self.model, "task": self.task, "metric": self.metric, "box_level": self.box_level,
                   "sees": self.sees, "bootstrap": self.bootstrap, "warnings": self.warnings,
                   "conventions": self.conventions, "datasets": _finite(self.rows()),
                   "aggregates": _finite(self.aggregates()), "robustness": _finite(self.robustness)}
        return json.dumps(payload, indent=2, default=_json_default, allow_nan=False) + "\n"

    def to_csv(self) -> str:
        rows = self.rows()
        extra: list[str] = []
        if self.task == "token":
            labels = sorted({k for r in rows for k in r["per_label"]})
            groups = list(rows[0]["error_rates"])
            extra = ["precision", "recall"] + [f"f1_{k}" for k in labels] + [f"error_rate_{g}" for g in groups]
            kie = any("kieval" in r for r in rows)
            if kie:
                extra += ["kieval_entity_f1", "kieval_aligned"]
        elif self.task == "qa":
            extra = ["questions"]
        else:
            extra = [f"accuracy_{c}" for c in RVL_CDIP_CLASSES]
        header = ["model", "dataset", "role", "split", "documents", "metric", "value", "value_low", "value_high",
                  "id_value", "id_value_low", "id_value_high", "drop", "drop_low", "drop_high", "drop_excludes_zero",
                  "relative_drop", "families", "note", *extra]
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(header)
        for r in rows:
            ci = r.get("ci") or {}
            line = [self.model, r["dataset"], r["role"], r["split"], r["documents"], self.metric, _num(r["value"]),
                    *_lohi(ci.get("value")), _num(r.get("id_value")), *_lohi(ci.get("id_value")), _num(r["drop"]),
                    *_lohi(ci.get("drop")), "" if r.get("drop_excludes_zero") is None else str(r["drop_excludes_zero"]).lower(),
                    _num(r["relative_drop"]), "+".join(r.get("families") or []), r.get("note") or ""]
            if self.task == "token":
                line += [_num(r["precision"]), _num(r["recall"])]
                line += [_num(r["per_label"].get(k, {}).get("f1")) for k in labels]
                line += [_num(r["error_rates"].get(g)) for g in groups]
                if kie:
                    line += [_num(r.get("kieval", {}).get("f1")), _num(r.get("kieval", {}).get("aligned"))]
            elif self.task == "qa":
                line += [r["questions"]]
            else:
                line += [_num(r["per_class"].get(c)) for c in RVL_CDIP_CLASSES]
            writer.writerow(line)
        return buf.getvalue()

    def to_markdown(self) -> str:
        rows = self.rows()
        m = self.metric_label
        ci_name = f"{round(100 * self.bootstrap['confidence'])}% CI" if self.bootstrap else None
        lines = [f"# dogood eval: {self.model}", ""]
        for w in self.warnings:
            lines += [f"> **Warning:** {w}", ""]
        lines += [
            f"Task: {_TASK_NAMES[self.task]}. "
            f"Metric: {m}, in percent"
            + (" (entity-level, seqeval semantics)." if self.task == "token" else "."),
            "Each OOD set is scored on the documents it shares with the ID set, and the ID score beside it is on "
            "those same documents. In brackets: the change from ID, in points and relative to ID (negative: worse than ID).",
            *([f"Intervals: {ci_name}, paired bootstrap over documents ({self.bootstrap['resamples']} resamples, "
               f"seed {self.bootstrap['seed']}); `*` marks a change whose interval excludes 0."] if self.bootstrap else []),
            *([f"Boxes given to the model: {self.box_level} level (`--box-level`; it should be the convention the "
               "model was fine-tuned with)."] if self.box_level else []),
            *([f"The model sees: {', '.join(self.sees) or 'nothing dogood knows of'}."] if self.sees is not None else []),
            "",
            "## ID vs OOD (Do-GOOD Table 2 layout)",
            "",
            "| Model | " + " | ".join(f"{r['dataset']}{' (ID)' if r['role'] == 'id' else ''}" for r in rows) + " |",
            "|---" * (len(rows) + 1) + "|",
            f"| {self.model} | "
            + " | ".join(_pct(r["value"]) + ("" if r["role"] == "id" else
                                             f" ({_signed(r['drop'])}{'*' if r.get('drop_excludes_zero') else ''}, "
                                             f"{_signed_pct(r['relative_drop'])})")
                         for r in rows)
            + " |",
            *(["", "Where an OOD set holds other documents than the ID set, its change is against the ID score on the "
               "documents both hold, which can differ from the ID column: see the next table."]
              if any(r.get("id_value") != self.id.get("value", self.id.get(self.metric)) for r in self.ood) else []),
            "",
            "## Paired by document",
            "",
            "| OOD dataset | Family | Docs | ID on the same docs | OOD | Change (points) | Relative change | Note |",
            "|---|---|---:|---:|---:|---:|---:|---|",
        ]
        for r in rows[1:]:
            ci = r.get("ci") or {}
            lines.append(
                f"| {r['dataset']} | {', '.join(r.get('families') or []) or '–'} | {r['documents']} | "
                f"{_pct(r['id_value'])}{_ci(ci.get('id_value'))} | {_pct(r['value'])}{_ci(ci.get('value'))} | "
                f"{_signed(r['drop'])}{_ci(ci.get('drop'), negate=True)}{' *' if r.get('drop_excludes_zero') else ''} | "
                f"{_signed_pct(r['relative_drop'])} | {r.get('note') or ''} |")
        agg = self.aggregates()
        if agg["family"] or len(agg["dataset"]) > 0:
            lines += ["", "## Mean change (mean of the per-config changes, in points)", "",
                      "| Over | OOD configs | Mean change |", "|---|---:|---:|"]
            for kind, label in (("family", "{} shifts"), ("dataset", "all of {}")):
                for a in agg[kind]:
                    lines.append(f"| {label.format(a[kind])} | {a['configs']} | {_signed(a['mean_drop'])}"
                                 f"{_ci(a.get('ci'), negate=True)}{' *' if a.get('drop_excludes_zero') else ''} |")
        lines += self._robustness_markdown()
        lines += ["", "## Per dataset", ""]
        if self.task == "token":
            lines += [f"| Dataset | Role | Split | Docs | Precision | Recall | F1{f' [{ci_name}]' if ci_name else ''} | Change | Relative change |",
                      "|---|---|---|---:|---:|---:|---:|---:|---:|"]
            for r in rows:
                lines.append(f"| {r['dataset']} | {r['role'].upper()} | {r['split']} | {r['documents']} | {_pct(r['precision'])} | "
                             f"{_pct(r['recall'])} | {_pct(r['f1'])}{_ci((r.get('ci') or {}).get('value'))} | "
                             f"{_signed(r['drop'])} | {_signed_pct(r['relative_drop'])} |")
            labels = sorted({k for r in rows for k in r["per_label"]})
            lines += ["", "## F1 per label", "", "| Dataset | " + " | ".join(labels) + " |", "|---" + "|---:" * len(labels) + "|"]
            for r in rows:
                lines.append(f"| {r['dataset']} | " + " | ".join(_pct(r["per_label"].get(k, {}).get("f1")) for k in labels) + " |")
            groups = list(rows[0]["error_rates"])
            names = {"other": "Other", "qa": "Question+Answer", "header": "Header"}
            lines += ["", "## Entity error rates (Do-GOOD Table 3; lower is better)", "",
                      "| Dataset | " + " | ".join(names.get(g, g) for g in groups) + " |", "|---" + "|---:" * len(groups) + "|"]
            for r in rows:
                lines.append(f"| {r['dataset']} | " + " | ".join(_pct(r["error_rates"].get(g)) for g in groups) + " |")
            if any("kieval" in r for r in rows):
                lines += ["", "## KIEval (entity level)", "",
                          "| Dataset | Entity F1 | KIEval Aligned | TP | FP | FN | Corrections |", "|---|---:|---:|---:|---:|---:|---:|"]
                for r in rows:
                    k = r.get("kieval")
                    if k:
                        lines.append(f"| {r['dataset']} | {_pct(k['f1'])} | {_pct(k['aligned'])} | {k['tp']} | {k['fp']} | "
                                     f"{k['fn']} | {k['error']} |")
        elif self.task == "qa":
            lines += [f"| Dataset | Role | Split | Docs | Questions | ANLS{f' [{ci_name}]' if ci_name else ''} | Change | Relative change |",
                      "|---|---|---|---:|---:|---:|---:|---:|"]
            for r in rows:
                lines.append(f"| {r['dataset']} | {r['role'].upper()} | {r['split']} | {r['documents']} | {r['questions']} | "
                             f"{_pct(r['anls'])}{_ci((r.get('ci') or {}).get('value'))} | "
                             f"{_signed(r['drop'])} | {_signed_pct(r['relative_drop'])} |")
        else:
            lines += [f"| Dataset | Role | Split | Docs | Accuracy{f' [{ci_name}]' if ci_name else ''} | Change | Relative change |",
                      "|---|---|---|---:|---:|---:|---:|"]
            for r in rows:
                lines.append(f"| {r['dataset']} | {r['role'].upper()} | {r['split']} | {r['documents']} | "
                             f"{_pct(r['accuracy'])}{_ci((r.get('ci') or {}).get('value'))} | "
                             f"{_signed(r['drop'])} | {_signed_pct(r['relative_drop'])} |")
            lines += ["", "## Accuracy per class", "", "| Class | " + " | ".join(r["dataset"] for r in rows) + " |",
                      "|---" + "|---:" * len(rows) + "|"]
            for c in RVL_CDIP_CLASSES:
                lines.append(f"| {c} | " + " | ".join(_pct(r["per_class"].get(c)) for r in rows) + " |")
        if self.conventions:
            lines += ["", "## Metric conventions", ""] + [f"- {c}" for c in self.conventions]
        lines += ["", "## Where the data came from", ""]
        for r in rows:
            lines.append(f"- `{r['dataset']}`: {r['location']} (split {r['split']}, {r['documents']} documents scored)")
        return "\n".join(lines) + "\n"

    def _robustness_markdown(self) -> list[str]:
        """The "Robustness across severities" section: per family mCE and mean relative drop, a plot, and per
        corruption its severity curve."""
        rob = self.robustness
        if not rob:
            return []
        m = self.metric_label
        ci_name = f" [{round(100 * self.bootstrap['confidence'])}% CI]" if self.bootstrap else ""
        ref = rob.get("reference")
        lines = ["", "## Robustness across severities (ImageNet-C summaries)", "",
                 f"OOD configs named `<config>@<s>` are severity `s` of one corruption `<config>`, grouped by the "
                 f"family of the shift they sweep. Error = 1 − {m}. Mean relative drop = mean over severities of "
                 "(ID − score) / ID. "
                 + (f"Corruption error against the reference model `{ref}` (scored on the same documents; ImageNet-C's "
                    "definitions, see Metric conventions): CE = Σ_s E_s / Σ_s E_s^ref; relative CE = "
                    "Σ_s (E_s − E_clean) / Σ_s (E_s^ref − E_clean^ref); below 1: fewer errors (relative: less "
                    "degradation) than the reference. mCE and relative mCE: means over corruptions."
                    if ref else f"No corruption error: {rob.get('reference_note') or 'no reference model'}."),
                 "", "| Family | Corruptions | Mean relative drop (ID − score) / ID |" + (" mCE | Relative mCE |" if ref else ""),
                 "|---|---:|---:|" + ("---:|---:|" if ref else "")]
        for f in [*rob["families"], {"family": "all", **rob["all"]}]:
            lines.append(f"| {f['family']} | {f['corruptions']} | {_drop_pct(f['mean_relative_drop'])} |"
                         + (f" {_ratio_text(f['mce'])} | {_ratio_text(f['relative_mce'])} |" if ref else ""))
        for fam in rob["families"]:
            lines += ["", f"### {fam['family']} shifts", "", f"![{fam['family']} shifts by severity]({fam['plot']})"]
            for sw in rob["sweeps"]:
                if sw["family"] != fam["family"]:
                    continue
                ci = sw.get("ci") or {}
                lines += ["", f"**{sw['corruption']}** ({', '.join(sw['shifts']) or '–'}"
                              + (f", {sw['subfamily']}" if sw.get("subfamily") else "") + "): "
                              f"mean relative drop {_drop_pct(sw['mean_relative_drop'])}"
                              + _drop_pct_ci(ci.get("mean_relative_drop"))
                              + (f"; CE {_ratio_text(sw['ce'])}{_ratio_ci(ci.get('ce'))}, relative CE "
                                 f"{_ratio_text(sw['relative_ce'])}{_ratio_ci(ci.get('relative_ce'))}" if "ce" in sw else "")
                              + ".", "",
                          f"| Severity | Config | Docs | ID on the same docs | {m}{ci_name} | Change (points) | "
                          "Relative change |" + (f" {ref} | {ref} ID |" if "reference" in sw else ""),
                          "|---:|---|---:|---:|---:|---:|---:|" + ("---:|---:|" if "reference" in sw else "")]
                for k, p in enumerate(sw["curve"]):
                    lines.append(f"| {p['severity']} | {p['config']} | {p['documents']} | {_pct(p['id_value'])} | "
                                 f"{_pct(p['value'])}{_ci(p.get('ci'))} | {_signed(p['drop'])}"
                                 f"{_ci(p.get('drop_ci'), negate=True)} | {_signed_pct(p['relative_drop'])} |"
                                 + (f" {_pct(sw['reference']['values'][k])} | {_pct(sw['reference']['id_values'][k])} |"
                                    if "reference" in sw else ""))
        return lines

    def severity_plots(self) -> dict[str, str]:
        """Family -> the file name of its severity plot (``severity-<family>.png``)."""
        return {f["family"]: f["plot"] for f in (self.robustness or {}).get("families", [])}

    def plot_severities(self, family: str, path: str | Path) -> Path:
        """Score against severity for each corruption of ``family`` (:func:`dogood.robustness.plot_family`)."""
        from dogood.robustness import plot_family

        sweeps = [s for s in self.robustness["sweeps"] if s["family"] == family]
        return plot_family(path, family, sweeps, self.metric_label, self.model, self.robustness.get("reference"),
                           self.bootstrap["confidence"] if self.bootstrap else None)

    def plot(self, path: str | Path) -> Path:
        """A bar chart of the metric per dataset (ID first), with interval error bars; each OOD bar labelled with its change."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        rows = self.rows()
        names = [r["dataset"] for r in rows]
        values = [100 * r["value"] for r in rows]
        colours = ["#4c72b0" if r["role"] == "id" else "#dd8452" for r in rows]
        yerr = None
        cis = [(r.get("ci") or {}).get("value") for r in rows]
        if all(ci is not None for ci in cis):
            yerr = np.array([[max(0.0, v - 100 * ci[0]) for v, ci in zip(values, cis)],
                             [max(0.0, 100 * ci[1] - v) for v, ci in zip(values, cis)]])
        fig, ax = plt.subplots(figsize=(max(4.0, 1.3 * len(rows) + 1.5), 3.6), dpi=120)
        bars = ax.bar(range(len(rows)), values, color=colours, yerr=yerr, capsize=3, error_kw={"elinewidth": 0.8})
        for k, (bar, r) in enumerate(zip(bars, rows)):
            top = bar.get_height() if yerr is None else bar.get_height() + yerr[1][k]
            mark = "*" if r.get("drop_excludes_zero") else ""
            text = f"{100 * r['value']:.1f}" if r["role"] == "id" else f"{100 * r['value']:.1f}\n({_signed(r['drop'])}{mark})"
            ax.annotate(text, (bar.get_x() + bar.get_width() / 2, top), ha="center", va="bottom", fontsize=8)
        ax.set_xticks(range(len(rows)), names, rotation=20, ha="right", fontsize=8)
        ax.set_ylabel(f"{self.metric_label} (%)")
        ax.set_ylim(0, max(100.0, max(values) * 1.15))
        title = f"{self.model}: ID vs OOD"
        if self.bootstrap:
            title += f" ({round(100 * self.bootstrap['confidence'])}% bootstrap CI)"
        ax.set_title(title, fontsize=10)
        fig.tight_layout()
        path = Path(path)
        fig.savefig(path, metadata={"Software": None})
        plt.close(fig)
        return path

    def write(self, out_dir: str | Path, stem: str = "report") -> dict[str, Path]:
        """Write ``<stem>.md``, ``.csv``, ``.json`` and ``.png`` into ``out_dir``; returns their paths.

        All four are written under temporary names first and renamed into place together, so an
        interrupted write leaves the earlier report (if any) as it was, never half of a new one.
        """
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {ext: out / f"{stem}.{ext}" for ext in ("md", "csv", "json", "png")}
        tmp = {ext: out / f".{stem}.{os.getpid()}.tmp.{ext}" for ext in paths}
        severity = self.severity_plots()
        for family, name in severity.items():
            paths[name] = out / name
            tmp[name] = out / f".{name}.{os.getpid()}.tmp.png"
        try:
            tmp["md"].write_text(self.to_markdown(), encoding="utf-8")
            tmp["csv"].write_text(self.to_csv(), encoding="utf-8")
            tmp["json"].write_text(self.to_json(), encoding="utf-8")
            self.plot(tmp["png"])
            for family, name in severity.items():
                self.plot_severities(family, tmp[name])
            for ext, path in paths.items():
                os.replace(tmp[ext], path)
            for stale in out.glob("severity-*.png"):  # an earlier report's plots of families this one lacks
                if stale.name not in severity.values():
                    stale.unlink(missing_ok=True)
        finally:
            for path in tmp.values():
                path.unlink(missing_ok=True)
        return paths


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
        (:func:`dogood.metrics.anls`, ``official=True``); default: the paper's formula.
    reference : Model, optional
        The model whose errors the corruption errors of severity-swept configs
        (``<config>@<s>``) are divided by (:mod:`dogood.robustness`); scored on
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
    if _one_dataset(ood_datasets):
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
        only_id = len(all_id_set - ood_set)
        only_ood = len(ood_set - all_id_set)
        if require_same_ids and (only_id or only_ood):
            raise EvalError(f"ID dataset {id_set.name!r} and OOD dataset {d.name!r} hold different documents: "
                            f"{only_id} id(s) only in {id_set.name!r}, {only_ood} only in {d.name!r} "
                            "(drop --require-same-ids to score the shared ones)")
        paired = [i for i in id_ids if i in ood_set]
        _refuse_copies(id_set, d, all_id_set, ood_set)
        if not paired:
            raise EvalError(f"ID dataset {id_set.name!r} and OOD dataset {d.name!r} share no document id: nothing to compare "
                            "(a dataset without an 'id' column has its rows numbered 0, 1, ...)")
        if only_id or only_ood:
            warnings.append(f"{d.name} and {id_set.name} hold different documents: scored on the {len(paired)} they share; "
                            f"{only_id} ID document(s) are not in {d.name}, {only_ood} of its documents are not in {id_set.name}")
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
        row["note"] = blind_spot(row["families"], sees)
        if boot:
            id_vals, ood_vals = bootstrap_values(task, [id_scored.stats(paired), scored.stats(paired)], resamples, seed)
            drop_ci = percentile_interval(id_vals - ood_vals, confidence)
            row["ci"] = {"value": percentile_interval(ood_vals, confidence),
                         "id_value": percentile_interval(id_vals, confidence), "drop": drop_ci}
            row["drop_excludes_zero"] = drop_ci[0] > 0 or drop_ci[1] < 0
            ood_stats.append(scored.stats(paired))
        ood_rows.append(row)

    conventions = [_METRIC_CONVENTION[task] if task != "qa" else
                   "ANLS, mean over questions (an unanswered question scores as an empty answer): "
                   + ANLS_CONVENTIONS[anls_official] + (" (dogood.metrics.anls, official=True)." if anls_official else
                                                        " (dogood.metrics.anls; --anls-official for the RRC scorer).")]
    if boot:
        pooled = {"token": " (micro entity F1 from the summed true positives, predicted and gold entities; not a mean "
                           "of per-document F1)",
                  "qa": " (the drawn documents' questions' ANLS summed, over their number of questions)"}.get(task, "")
        conventions.append(
            f"Intervals: percentile bootstrap, {resamples} resamples drawn with numpy.random.default_rng({seed}); each "
            "resample draws as many documents as were scored, with replacement, and recomputes the metric from the "
            f"drawn documents' pooled counts{pooled}. ID, OOD and the change use the same drawn documents.")
    if kieval:
        conventions.append("KIEval (Khang et al. 2025, dogood.kieval.kieval_entity, summed over documents): gold "
                           "question/answer/header entities (text of their words, whitespace-normalised, exact match) "
                           "against the predicted IOB chunks; Aligned = TP / (TP + corrections). KIEval Group F1 needs "
                           "predicted question-answer links, which a tagger does not output, so it is not reported.")
    if any(split_severity(d.config)[1] for d in ood_sets):
        from dogood.robustness import CITES

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
    (:mod:`dogood.robustness`); ``None`` when no OOD config is named ``<config>@<s>``."""
    from dogood import robustness as rb

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
                ci["ce"] = _nan_interval(ce, confidence)
                ci["relative_ce"] = _nan_interval(rel, confidence)
            sweep["ci"] = ci
        sweeps.append(sweep)
    families: dict[str, list[dict]] = {}
    for sweep in sweeps:
        families.setdefault(sweep["family"], []).append(sweep)
    order = {f: i for i, f in enumerate(FAMILIES)}
    fam = sorted(families, key=lambda f: (order.get(f, 99), f))
    from dogood.robustness import family_file, family_means

    return {
        "reference": ref_name,
        "reference_note": reference_note,
        "families": [{"family": f, "plot": family_file(f), **family_means(families[f])} for f in fam],
        "all": family_means(sweeps),
        "sweeps": sweeps,
    }


def _nan_interval(values: np.ndarray, confidence: float) -> list[float] | None:
    """The percentile interval of resampled ratios, ``None`` when some resample's ratio is undefined."""
    values = np.asarray(values, dtype=np.float64)
    return None if np.isnan(values).any() else percentile_interval(values, confidence)


_TASK_NAMES = {"token": "token classification (FUNSD-style)", "document": "document classification (RVL-CDIP-style)",
               "qa": "question answering (DocVQA-style)"}

_METRIC_CONVENTION = {
    "token": "Entity F1: exact-match entity chunks of word-level IOB tags (seqeval's default, lenient IOB2), "
             "counts pooled over documents (micro F1), as the LayoutLM-family FUNSD scripts and Do-GOOD report it.",
    "document": "Accuracy: share of documents whose predicted RVL-CDIP class is the gold one.",
}


# -- formatting -------------------------------------------------------------------------------------------


def _refuse_copies(id_set: EvalDataset, ood: EvalDataset, id_ids: set[str], ood_ids: set[str]) -> None:
    """Refuse an OOD set built with ``copies: k`` (ids ``DOC#j``) against an ID set of plain ids: pairing is one
    row per document, and k shifted copies of one document are not k documents (their intervals would be too
    narrow). Such sets are for training; build the test set without ``--copies``."""
    for d in (id_set, ood):
        k = _built_copies(d)
        if k > 1:
            raise EvalError(f"dataset {d.name!r} was built with {k} copies of each document (ids DOC#0..DOC#{k - 1}): "
                            "dogood eval pairs one row per document; score a test set built without --copies")
    copies = {i for i in ood_ids - id_ids if i.rpartition("#")[0] in id_ids and i.rpartition("#")[2].isdigit()}
    if copies:
        example = min(copies)
        raise EvalError(f"OOD dataset {ood.name!r} holds several shifted copies of each document (ids such as "
                        f"{example!r}, from a build with --copies) and ID dataset {id_set.name!r} one row per "
                        "document: dogood eval pairs one row per document; score a test set built without --copies")


def _built_copies(dataset: EvalDataset) -> int:
    """The ``copies`` a dogood folder's ``dogood_build.json`` states (1 when it states none or is no such folder)."""
    if not dataset.location or not Path(dataset.location).is_dir():
        return 1
    try:
        record = json.loads((Path(dataset.location) / "dogood_build.json").read_text(encoding="utf-8"))
        return int(record.get("copies", 1)) if isinstance(record, dict) else 1
    except (OSError, ValueError, TypeError, RecursionError):
        return 1


def _bad(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _pct(x) -> str:
    return "–" if _bad(x) else f"{100 * x:.2f}"


def _signed(x) -> str:
    return "–" if _bad(x) else f"{-100 * x + 0.0:+.2f}"


def _signed_pct(x) -> str:
    return "–" if _bad(x) else f"{-100 * x + 0.0:+.1f}%"


def _ci(ci, negate: bool = False) -> str:
    """`` [low, high]`` in percent (as a change from ID when ``negate``), or nothing without an interval."""
    if not ci:
        return ""
    low, high = (-100 * ci[1] + 0.0, -100 * ci[0] + 0.0) if negate else (100 * ci[0], 100 * ci[1])
    fmt = "{:+.2f}" if negate else "{:.2f}"
    return f" [{fmt.format(low)}, {fmt.format(high)}]"


def _drop_pct(x) -> str:
    """A relative drop (positive: below ID), in percent."""
    return "–" if _bad(x) else f"{100 * x:.1f}%"


def _drop_pct_ci(ci) -> str:
    return f" [{_drop_pct(ci[0])}, {_drop_pct(ci[1])}]" if ci else ""


def _ratio_text(x) -> str:
    return "–" if _bad(x) else f"{x:.3f}"


def _ratio_ci(ci) -> str:
    return f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""


def _lohi(ci) -> list[str]:
    return ["", ""] if not ci else [_num(ci[0]), _num(ci[1])]


def _num(x) -> str:
    return "" if _bad(x) else repr(float(x))


def _finite(obj):
    """NaN (nothing to count) as JSON null."""
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite(v) for v in obj]
    return None if isinstance(obj, float) and math.isnan(obj) else obj


def _json_default(obj):
    if hasattr(obj, "item"):
        return obj.item()
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")
