"""Document classification (RVL-CDIP-style): accuracy, Do-GOOD's RVL-CDIP score, with per-class accuracy.

Do-GOOD (He et al. 2023, Sec. 5, Tables 2 and 5) reports accuracy over RVL-CDIP's 16 classes; per-class accuracy
is each class's recall (:func:`dogood.eval.metrics.accuracy`). A document's counts are ``(right, 1)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dogood.core.errors import ModelError
from dogood.core.schema import RVL_CDIP_CLASSES
from dogood.eval.datasets import EvalError
from dogood.eval.metrics import accuracy
from dogood.eval.tasks.base import Scored, Task, pct, register


@register
class DocumentTask(Task):
    name = "document"
    title = "document classification (RVL-CDIP-style)"
    metric, metric_label = "accuracy", "accuracy"
    reads = ("document",)
    model_task = "document"
    count_names = ("right", "documents")
    pooled = "the drawn documents predicted right over the documents drawn"
    reference = "baseline"

    def keep(self, scored: Scored, doc: Any, p: Any) -> None:
        model = scored.extra.get("model", "model")
        if doc.label is None:
            raise EvalError(f"document {doc.id!r} of {scored.dataset.name!r} has no label to score against")
        if p.label not in RVL_CDIP_CLASSES:
            raise ModelError(f"model {model!r} predicted label(s) outside the RVL-CDIP classes: {[p.label]}")
        scored.gold[doc.id], scored.pred[doc.id] = doc.label, p.label
        scored.counts[doc.id] = np.array([doc.label == p.label, 1])
        scored.keep_confidence(doc.id, [p.confidence], [doc.label == p.label],
                               why=f"model {model!r} gives no document confidences")

    def from_counts(self, sums: np.ndarray) -> np.ndarray:
        sums = np.asarray(sums, np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return 100.0 * (sums[..., 0] / sums[..., 1])

    def scores(self, scored: Scored, ids: Sequence[str]) -> dict[str, Any]:
        s = accuracy([scored.gold[i] for i in ids], [scored.pred[i] for i in ids], labels=list(RVL_CDIP_CLASSES))
        return {"accuracy": pct(s["accuracy"]), "per_class": {c: pct(v) for c, v in s["per_class"].items()},
                "support": s["support"]}

    def conventions(self) -> list[str]:
        return ["Accuracy: share of documents whose predicted RVL-CDIP class is the gold one."]

    def sections(self, report: Any) -> list[str]:
        from dogood.eval.formats import fmt_pct

        rows = report.rows()
        lines = ["", "## Accuracy per class", "", "| Class | " + " | ".join(r["dataset"] for r in rows) + " |",
                 "|---" + "|---:" * len(rows) + "|"]
        return lines + [f"| {c} | " + " | ".join(fmt_pct(r["per_class"].get(c)) for r in rows) + " |"
                        for c in RVL_CDIP_CLASSES]

    def csv_columns(self, rows: list[dict]) -> list[str]:
        return [f"accuracy_{c}" for c in RVL_CDIP_CLASSES]

    def csv_cells(self, row: dict, columns: list[str]) -> list[Any]:
        return [row["per_class"].get(c[len("accuracy_"):]) for c in columns]
