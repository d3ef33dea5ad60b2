"""Token classification (FUNSD-style): entity-level F1 of IOB tags, Do-GOOD's FUNSD score.

The metric the LayoutLM-family FUNSD scripts and Do-GOOD (He et al. 2023, Sec. 5, Tables 2-4) report: exact-match
entity chunks of word-level IOB tags (seqeval's default, :func:`dogood.eval.metrics.entity_scores`), counts pooled
over documents (micro F1), with per-label F1, Do-GOOD Table 3's entity error rates and, with ``kieval``, KIEval's
entity-level scores (:mod:`dogood.eval.kieval`). A document's counts are ``(tp, predicted, gold)`` entities.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from dogood.core.errors import DogoodError, ModelError
from dogood.core.schema import iob_tags, ner_tag_names
from dogood.eval.metrics import entity_error_rates, entity_scores, iob_entities
from dogood.eval.tasks.base import Scored, Task, pct, register

ERROR_GROUPS = {"other": "Other", "qa": "Question+Answer", "header": "Header"}


@register
class TokenTask(Task):
    name = "token"
    title = "token classification (FUNSD-style)"
    metric, metric_label = "f1", "entity F1"
    reads = ("token",)
    model_task = "token"
    count_names = ("tp", "predicted", "gold")
    pooled = "micro entity F1 from the summed true positives, predicted and gold entities; not a mean of per-document F1"
    options = ("kieval",)
    columns = (("precision", "Precision", "pct"), ("recall", "Recall", "pct"))
    reference = "baseline"

    def begin(self, scored: Scored, model: Any) -> None:
        scored.extra["allowed"] = _tag_set(scored.dataset)

    def keep(self, scored: Scored, doc: Any, p: Any) -> None:
        model, name = scored.extra.get("model", "model"), scored.dataset.name
        index, tags = iob_tags(doc)
        if p.tags is None or len(p.tags) != len(tags):
            got = "no" if p.tags is None else len(p.tags)
            raise ModelError(f"model {model!r}: document {doc.id!r} has {len(tags)} tokens but {got} predicted tags")
        try:
            pred_chunks = set(iob_entities(p.tags))
        except ValueError as exc:
            raise ModelError(f"model {model!r}: document {doc.id!r} of {name!r}: {exc}") from None
        allowed = scored.extra["allowed"]
        outside = sorted(set(p.tags) - allowed - set(tags))
        if outside:  # scored, they would only count as errors: a wrong number, not a score
            raise ModelError(f"model {model!r} predicted tag(s) {', '.join(outside[:5])} for document {doc.id!r} of "
                             f"{name!r}, outside the data's label set ({', '.join(sorted(allowed))}); map the model's "
                             "labels to the data's (--labels) or score it on data with its labels")
        gold_chunks = set(iob_entities(tags))
        scored.gold[doc.id], scored.pred[doc.id] = list(tags), list(p.tags)
        scored.counts[doc.id] = np.array([len(gold_chunks & pred_chunks), len(pred_chunks), len(gold_chunks)])
        conf = p.confidences if p.confidences is not None else [None]
        scored.keep_confidence(doc.id, conf, [a == b for a, b in zip(tags, p.tags)],
                               why=f"model {model!r} gives no per-token confidences")
        if self.kieval:
            scored.extra.setdefault("kieval", {})[doc.id] = _kieval_document(doc, index, list(p.tags))

    def from_counts(self, sums: np.ndarray) -> np.ndarray:
        tp, n_pred, n_gold = (np.asarray(sums, np.float64)[..., k] for k in range(3))
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(n_pred > 0, tp / np.where(n_pred > 0, n_pred, 1), 0.0)
            r = np.where(n_gold > 0, tp / np.where(n_gold > 0, n_gold, 1), 0.0)
            f = np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1), 0.0)  # seqeval's formula
        return 100.0 * f

    def scores(self, scored: Scored, ids: Sequence[str]) -> dict[str, Any]:
        gold = [scored.gold[i] for i in ids]
        pred = [scored.pred[i] for i in ids]
        s = entity_scores(gold, pred)
        errors = entity_error_rates(gold, pred)
        row = {"f1": pct(s["f1"]), "precision": pct(s["precision"]), "recall": pct(s["recall"]),
               "support": s["support"], "tokens": sum(len(t) for t in gold),
               "per_label": {k: {"precision": pct(v["precision"]), "recall": pct(v["recall"]), "f1": pct(v["f1"]),
                                 "support": v["support"]} for k, v in s["per_label"].items()},
               "error_rates": {k: pct(v["error_rate"]) for k, v in errors.items()}}
        if "kieval" in scored.extra:
            from dogood.eval.kieval import combine

            k = combine([scored.extra["kieval"][i] for i in ids])
            row["kieval"] = {**{key: pct(k[key]) for key in ("f1", "precision", "recall", "aligned")},
                             **{key: k[key] for key in ("tp", "fp", "fn", "error")}}
        return row

    def conventions(self) -> list[str]:
        out = ["Entity F1: exact-match entity chunks of word-level IOB tags (seqeval's default, lenient IOB2), "
               "counts pooled over documents (micro F1), as the LayoutLM-family FUNSD scripts and Do-GOOD report it."]
        if self.kieval:
            out.append("KIEval (Khang et al. 2025, dogood.eval.kieval.kieval_entity, summed over documents): gold "
                       "question/answer/header entities (text of their words, whitespace-normalised, exact match) "
                       "against the predicted IOB chunks; Aligned = TP / (TP + corrections). KIEval Group F1 needs "
                       "predicted question-answer links, which a tagger does not output, so it is not reported.")
        return out

    def sections(self, report: Any) -> list[str]:
        from dogood.eval.formats import fmt_pct

        rows = report.rows()
        if not all("per_label" in r and "error_rates" in r for r in rows):
            return []
        labels = sorted({k for r in rows for k in r["per_label"]})
        lines = ["", "## F1 per label", "", "| Dataset | " + " | ".join(labels) + " |", "|---" + "|---:" * len(labels) + "|"]
        lines += [f"| {r['dataset']} | " + " | ".join(fmt_pct(r["per_label"].get(k, {}).get("f1")) for k in labels) + " |"
                  for r in rows]
        groups = list(rows[0]["error_rates"])
        lines += ["", "## Entity error rates (Do-GOOD Table 3; lower is better)", "",
                  "| Dataset | " + " | ".join(ERROR_GROUPS.get(g, g) for g in groups) + " |",
                  "|---" + "|---:" * len(groups) + "|"]
        lines += [f"| {r['dataset']} | " + " | ".join(fmt_pct(r["error_rates"].get(g)) for g in groups) + " |"
                  for r in rows]
        if any("kieval" in r for r in rows):
            lines += ["", "## KIEval (entity level)", "",
                      "| Dataset | Entity F1 | KIEval Aligned | TP | FP | FN | Corrections |",
                      "|---|---:|---:|---:|---:|---:|---:|"]
            lines += [f"| {r['dataset']} | {fmt_pct(k['f1'])} | {fmt_pct(k['aligned'])} | {k['tp']} | {k['fp']} | "
                      f"{k['fn']} | {k['error']} |" for r in rows if (k := r.get("kieval"))]
        return lines

    def csv_columns(self, rows: list[dict]) -> list[str]:
        labels = sorted({k for r in rows for k in r.get("per_label") or {}})
        groups = rows[0].get("error_rates") or {}
        out = ["precision", "recall", *(f"f1_{k}" for k in labels), *(f"error_rate_{g}" for g in groups)]
        return out + (["kieval_entity_f1", "kieval_aligned"] if any("kieval" in r for r in rows) else [])

    def csv_cells(self, row: dict, columns: list[str]) -> list[Any]:
        cells = []
        for c in columns:
            if c.startswith("f1_"):
                cells.append((row.get("per_label") or {}).get(c[3:], {}).get("f1"))
            elif c.startswith("error_rate_"):
                cells.append((row.get("error_rates") or {}).get(c[len("error_rate_"):]))
            elif c.startswith("kieval_"):
                cells.append(row.get("kieval", {}).get("f1" if c == "kieval_entity_f1" else "aligned"))
            else:
                cells.append(row.get(c))
        return cells

    def reference_spec(self, level: str | None) -> tuple[str | None, dict]:
        return "baseline", {"box_level": level or "segment"}


def _tag_set(dataset: Any) -> set[str]:
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
    except (ValueError, DogoodError):
        return set(ner_tag_names(None))


def _kieval_document(doc: Any, index: list[int], tags: list[str]) -> dict:
    """KIEval entity-level result of one document: gold question/answer/header entities vs the predicted chunks."""
    from dogood.eval.kieval import funsd_entities, kieval_entity

    gold = [(label, text) for label, text in funsd_entities(doc) if label != "other"]
    pred = [(t.lower(), " ".join(doc.words[index[k]].text for k in range(s, e))) for t, s, e in iob_entities(tags)]
    return kieval_entity(gold, pred)
