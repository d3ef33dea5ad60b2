"""What every evaluation task is: one small protocol, a registry by name, and a model's results on one dataset.

A task (:class:`Task`) says what it needs (the datasets it reads, the model kind it scores), keeps what one
document's prediction gives (:meth:`Task.keep`: gold, prediction, per-document counts, confidences), computes its
metrics from the documents' pooled counts (:meth:`Task.values`, :meth:`Task.scores`), and names the columns and
sections it reports. :func:`dogood.evaluate` does everything else the same way for every task: it resolves the
sets, pairs them by document, predicts, bootstraps over documents, ablates, sums severity sweeps, tells ID from
OOD by confidence, and writes one report. Every score a task gives is in percent.

Tasks register by name as shifts do (:func:`register`, :data:`TASKS`); ``dogood eval --task NAME`` and
``evaluate(task=NAME)`` pick one, and a dataset's own task (``token``, ``document``, ``qa``) is the default.
A new task is one module of :mod:`dogood.eval.tasks` and one test file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from dogood.core.errors import DogoodError, ModelError

#: Every registered task: its name (``--task``) -> its class.
TASKS: dict[str, type[Task]] = {}


class TaskError(DogoodError):
    """A task cannot score the datasets or the options it was given."""


def register(cls: type[Task]) -> type[Task]:
    """Register a task class under its ``name`` (a class decorator)."""
    if cls.name in TASKS and TASKS[cls.name] is not cls:
        raise ValueError(f"task {cls.name!r} is registered twice")
    TASKS[cls.name] = cls
    return cls


def make_task(name: str, **options: Any) -> Task:
    """The task ``name`` with its options (each task takes only its own, :attr:`Task.options`; an option left at
    its default, ``None`` or ``False``, is no option)."""
    if name not in TASKS:
        raise TaskError(f"unknown task {name!r}: dogood scores {', '.join(sorted(TASKS))}")
    cls = TASKS[name]
    given = {k: v for k, v in options.items() if v not in (None, False, (), {})}
    foreign = sorted(set(given) - set(cls.options))
    if foreign:
        owners = {k: [t for t, c in sorted(TASKS.items()) if k in c.options] for k in foreign}
        raise TaskError("; ".join(f"{k.replace('_', '-')} applies to the {' or '.join(owners[k]) or 'no'} task, not "
                                  f"to {name} ({cls.title})" for k in foreign))
    return cls(**given)


def pct(x: Any) -> float | None:
    """A share in [0, 1] as a percentage; ``None`` stays ``None`` and NaN stays NaN."""
    return None if x is None else 100.0 * float(x)


@dataclass
class Scored:
    """A model's results on one dataset, per document: what every score and interval of a report comes from.

    ``gold``, ``pred`` and ``extra`` hold what the task keeps of each document; ``counts`` its per-document counts
    (:attr:`Task.count_names`); ``bins`` and ``doc_conf`` the calibration bins and the confidence of each document
    (``no_confidence``: why there are none).
    """

    dataset: Any
    task: Task
    gold: dict[str, Any] = field(default_factory=dict)
    pred: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, np.ndarray] = field(default_factory=dict)
    shifts: set[str] = field(default_factory=set)
    bins: dict[str, np.ndarray] = field(default_factory=dict)
    doc_conf: dict[str, float] = field(default_factory=dict)
    no_confidence: str | None = None

    def stats(self, ids: Sequence[str]) -> Any:
        """What the bootstrap resamples for documents ``ids`` (:meth:`Task.stats`)."""
        return self.task.stats(self, ids)

    def scores(self, ids: Sequence[str]) -> dict[str, Any]:
        """The task's scores over documents ``ids`` (:meth:`Task.scores`), in percent."""
        return self.task.scores(self, ids)

    def keep_confidence(self, doc_id: str, confs: Sequence[float | None], right: Sequence[bool],
                        empty: float = math.nan, why: str | None = None) -> None:
        """A document's calibration bins and its confidence, the mean over its items (``empty`` when it has
        none); a ``None`` among ``confs`` means the model gives none (``why`` says so in the report)."""
        from dogood.eval import calibration

        if any(c is None for c in confs):
            self.no_confidence = why or f"the model gives no confidences for some items of {doc_id!r}"
            return
        try:
            self.bins[doc_id] = calibration.document_bins(list(confs), list(right))
        except ValueError as exc:
            raise ModelError(f"document {doc_id!r} of {self.dataset.name!r}: {exc}") from None
        self.doc_conf[doc_id] = float(np.mean(confs)) if len(confs) else empty


class Task:
    """One evaluation task (see the module docstring); subclasses set the class attributes and override
    :meth:`keep` (and, when the counts are not enough, :meth:`scores`)."""

    #: ``--task`` name; the registry key.
    name: ClassVar[str] = ""
    #: What the report calls it ("token classification (FUNSD-style)").
    title: ClassVar[str] = ""
    #: The headline score's key in a row, and what the report calls it.
    metric: ClassVar[str] = ""
    metric_label: ClassVar[str] = ""
    #: The dataset tasks (:attr:`dogood.eval.datasets.EvalDataset.task`) it can score.
    reads: ClassVar[tuple[str, ...]] = ()
    #: The ``task`` a model must do (``Model.task``).
    model_task: ClassVar[str] = ""
    #: The per-document counts (:attr:`Scored.counts`) the scores are pooled from.
    count_names: ClassVar[tuple[str, ...]] = ()
    #: What a bootstrap draw pools, for the report's conventions.
    pooled: ClassVar[str] = ""
    #: ``evaluate`` options it takes (``kieval``, ``anls_official``, ...).
    options: ClassVar[tuple[str, ...]] = ()
    #: Per dataset, beside the metric: ``(key, label, kind)``, kind ``pct`` (a percentage), ``int`` or ``num``.
    columns: ClassVar[tuple[tuple[str, str, str], ...]] = ()
    #: Whether the model's confidences tell ID from OOD (the detection and calibration section).
    confidences: ClassVar[bool] = True
    #: The model the corruption errors are divided by by default: ``"baseline"``, or ``None`` (say why).
    reference: ClassVar[str | None] = None
    no_reference: ClassVar[str] = "no default reference model for this task (pass --reference MODEL)"
    #: When ``--model baseline`` (the default) cannot do the task: what to give instead.
    model_hint: ClassVar[str | None] = None

    def __init__(self, **options: Any):
        for key in self.options:
            setattr(self, key, options.get(key))

    # -- what it needs -------------------------------------------------------------------------------------------

    def check(self, id_set, ood_sets: list, warnings: list[str]) -> list:
        """Refuse datasets the task cannot score (:class:`TaskError`); return the OOD sets to score (a set left
        out gets a line in ``warnings``)."""
        return ood_sets

    def check_model(self, model: Any, dataset: Any) -> None:
        """Refuse a model of another kind."""
        if getattr(model, "task", None) != self.model_task:
            hint = (" (pass --task ocr to score an OCR engine)" if getattr(model, "task", None) == "ocr" else
                    " (pass --task layout to score region detections)" if getattr(model, "task", None) == "layout"
                    else "")
            raise ModelError(f"model {getattr(model, 'name', model)!r} does {getattr(model, 'task', None)} "
                             f"prediction but dataset {dataset.name!r} needs {self.model_task} prediction{hint}")

    def begin(self, scored: Scored, model: Any) -> None:
        """Before the first document of a dataset (a task reads the dataset's labels here)."""

    # -- one document --------------------------------------------------------------------------------------------

    def keep(self, scored: Scored, doc: Any, prediction: Any) -> None:
        """Keep what one document's ``prediction`` gives: ``scored.gold``, ``.pred``, ``.counts`` and the
        confidences (:meth:`Scored.keep_confidence`); refuse a malformed prediction (:class:`ModelError`)."""
        raise NotImplementedError

    # -- scores ----------------------------------------------------------------------------------------------------

    def stats(self, scored: Scored, ids: Sequence[str]) -> Any:
        """What the bootstrap resamples: by default the ``(documents, counts)`` array of ``ids``."""
        return np.array([scored.counts[i] for i in ids], dtype=np.float64).reshape(len(ids), len(self.count_names))

    def from_counts(self, sums: np.ndarray) -> np.ndarray:
        """The headline score, in percent, from pooled counts (``(..., len(count_names))``, any leading axes)."""
        raise NotImplementedError

    def values(self, stats: Any, weights: np.ndarray) -> np.ndarray:
        """The headline score of each row of ``weights`` (``(draws, documents)``: how many times each document
        is drawn), in percent: the score of the drawn documents' pooled counts."""
        return np.asarray(self.from_counts(np.asarray(weights, np.float64) @ stats), dtype=np.float64).reshape(-1)

    def value(self, stats: Any, n: int) -> float:
        """The headline score of all ``n`` documents of ``stats``."""
        return float(self.values(stats, np.ones((1, n)))[0])

    def scores(self, scored: Scored, ids: Sequence[str]) -> dict[str, Any]:
        """The row of documents ``ids``: the headline score and the :attr:`columns`, in percent."""
        return {self.metric: self.value(self.stats(scored, ids), len(ids))}

    # -- reporting -------------------------------------------------------------------------------------------------

    def conventions(self) -> list[str]:
        """How the scores are computed, for the report's "Metric conventions"."""
        return []

    def sections(self, report: Any) -> list[str]:
        """Markdown sections after the per-dataset table (per-label F1, per-class accuracy, ...)."""
        return []

    def csv_columns(self, rows: list[dict]) -> list[str]:
        """The CSV's columns beside the common ones."""
        return [key for key, _, _ in self.columns]

    def csv_cells(self, row: dict, columns: list[str]) -> list[Any]:
        """One row's cells of :meth:`csv_columns`."""
        return [row.get(key) for key in columns]

    def summaries(self, context: Any) -> dict[str, Any]:
        """Figures the task adds after the rows (RoDLA's for layout); ``context`` holds the sets and results."""
        return {}

    def reference_spec(self, level: str | None) -> tuple[str | None, dict]:
        """The default reference model (``--reference auto``): a spec and its load options, or ``None``."""
        return (self.reference, {}) if self.reference else (None, {})


def kept_labels(source: Any, docs: Sequence[Any] = ()) -> tuple[str, ...]:
    """A FUNSD-style source's entity labels (:meth:`entity_labels`), else FUNSD's when ``docs`` fit them, else the
    labels ``docs`` use, sorted."""
    from dogood.core.schema import FUNSD_LABELS

    labels = getattr(source, "entity_labels", None)
    if callable(labels):
        try:
            found = tuple(labels())
        except (DogoodError, ValueError):
            found = ()
        if found:
            return found
    used = {e.label for d in docs for e in d.entities}
    return FUNSD_LABELS if used <= set(FUNSD_LABELS) else tuple(sorted(used))
