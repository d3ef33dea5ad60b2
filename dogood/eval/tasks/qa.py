"""Question answering (DocVQA-style): ANLS, the mean over questions, under a named convention.

The paper's formula by default, the official DocVQA/RRC scorer's with ``anls_official``
(:func:`dogood.eval.metrics.anls`). An unanswered question scores as an empty answer. A document's counts are
``(sum of its questions' ANLS, questions)``; answers carry no confidence, so QA has no detection section.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dogood.eval.datasets import EvalError
from dogood.eval.metrics import ANLS_CONVENTIONS, anls_scores
from dogood.eval.tasks.base import Scored, Task, register


@register
class QATask(Task):
    name = "qa"
    title = "question answering (DocVQA-style)"
    metric, metric_label = "anls", "ANLS"
    reads = ("qa",)
    model_task = "qa"
    count_names = ("anls_sum", "questions")
    pooled = "the drawn documents' questions' ANLS summed, over their number of questions"
    options = ("anls_official",)
    columns = (("questions", "Questions", "int"),)
    confidences = False
    no_reference = "no default reference model for question answering (pass --reference MODEL)"

    def keep(self, scored: Scored, doc: Any, p: Any) -> None:
        if not doc.qa:
            raise EvalError(f"document {doc.id!r} of {scored.dataset.name!r} has no questions to score")
        answers = p.answers or {}
        gold = [list(q.answers) for q in doc.qa]
        pred = [answers.get(q.id, "") for q in doc.qa]  # an unanswered question scores as ""
        try:
            per_question = anls_scores(pred, gold, official=bool(self.anls_official))
        except ValueError as exc:
            raise EvalError(f"document {doc.id!r} of {scored.dataset.name!r}: {exc}") from None
        scored.gold[doc.id], scored.pred[doc.id] = gold, pred
        scored.counts[doc.id] = np.array([sum(per_question), len(per_question)], np.float64)
        scored.no_confidence = "answers carry no confidence"

    def from_counts(self, sums: np.ndarray) -> np.ndarray:
        sums = np.asarray(sums, np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return 100.0 * (sums[..., 0] / sums[..., 1])

    def scores(self, scored: Scored, ids: Sequence[str]) -> dict[str, Any]:
        stats = self.stats(scored, ids)
        return {"anls": self.value(stats, len(ids)), "questions": int(stats[:, 1].sum())}

    def conventions(self) -> list[str]:
        return ["ANLS, mean over questions (an unanswered question scores as an empty answer): "
                + ANLS_CONVENTIONS[bool(self.anls_official)]
                + (" (dogood.eval.metrics.anls, official=True)." if self.anls_official else
                   " (dogood.eval.metrics.anls; --anls-official for the RRC scorer).")]
