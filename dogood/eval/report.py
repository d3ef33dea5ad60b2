"""The evaluation report: Do-GOOD Table 2 (ID beside each OOD set, drops with intervals) as markdown, CSV, JSON and a plot."""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dogood.core.errors import DogoodError
from dogood.core.fs import commit_folder, is_link, partial_folder, recover_folder, remove_tree, seal_partial
from dogood.core.schema import RVL_CDIP_CLASSES
from dogood.eval.datasets import TASK_METRICS


#: What a model must see for a shift family to reach it: (modality in ``Model.sees``, what to call it).
FAMILY_INPUT = {"image": ("image", "pixels"), "text": ("text", "words"), "layout": ("layout", "boxes")}


FAMILIES = ("image", "text", "layout")


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
    ablations: list[dict] = field(default_factory=list)  # the ID set with inputs removed (dogood.eval.ablation)
    model_description: str | None = None  # what the model is, when its name does not say (OCR engines)

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
                   "aggregates": _finite(self.aggregates()), "robustness": _finite(self.robustness),
                   "ablations": _finite(self.ablations), "model_description": self.model_description}
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
        elif self.task == "ocr":
            extra = list(OCR_COLUMNS)
        else:
            extra = [f"accuracy_{c}" for c in RVL_CDIP_CLASSES]
        header = ["model", "dataset", "role", "split", "documents", "metric", "value", "value_low", "value_high",
                  "id_value", "id_value_low", "id_value_high", "drop", "drop_low", "drop_high", "drop_excludes_zero",
                  "relative_drop", "families", "note", "pairing", *DETECTION_COLUMNS, *extra]
        rows = rows + [{"role": "ablation", **r} for r in self.ablations]
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(header)
        for r in rows:
            ci = r.get("ci") or {}
            line = [self.model, r["dataset"], r["role"], r["split"], r["documents"], self.metric, _num(r["value"]),
                    *_lohi(ci.get("value")), _num(r.get("id_value")), *_lohi(ci.get("id_value")), _num(r["drop"]),
                    *_lohi(ci.get("drop")), "" if r.get("drop_excludes_zero") is None else str(r["drop_excludes_zero"]).lower(),
                    _num(r["relative_drop"]), "+".join(r.get("families") or []), r.get("note") or "",
                    r.get("pairing") or "", *_detection_cells(r)]
            if self.task == "token":
                line += [_num(r["precision"]), _num(r["recall"])]
                line += [_num(r["per_label"].get(k, {}).get("f1")) for k in labels]
                line += [_num(r["error_rates"].get(g)) for g in groups]
                if kie:
                    line += [_num(r.get("kieval", {}).get("f1")), _num(r.get("kieval", {}).get("aligned"))]
            elif self.task == "qa":
                line += [r["questions"]]
            elif self.task == "ocr":
                line += [_num(r.get(k)) if k not in ("gold_words", "predicted_words") else r.get(k, "") for k in OCR_COLUMNS]
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
            "An OOD set whose documents are ID documents (shifted) is scored paired: on the documents it shares "
            "with the ID set, with the ID score beside it on those same documents. One that holds other documents "
            "is scored unpaired: each set on all its own documents. In brackets: the change from ID, in points and "
            "relative to ID (negative: worse than ID).",
            *([f"Intervals: {ci_name}, bootstrap over documents ({self.bootstrap['resamples']} resamples, "
               f"seed {self.bootstrap['seed']}; paired sets draw the documents once for both sides, unpaired sets "
               "each side over its own); `*` marks a change whose interval excludes 0."] if self.bootstrap else []),
            *([f"Model: {self.model_description}."] if self.model_description else []),
            *([f"Boxes: {self.box_level} level, the convention the model was trained on and the one of every "
               "dataset's `bboxes` here (dogood eval refuses data in another)."] if self.box_level else []),
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
            "## Each OOD set against ID",
            "",
            "| OOD dataset | Family | Docs | ID (paired: on the same docs) | OOD | Change (points) | Relative change | "
            "Pairing | Note |",
            "|---|---|---:|---:|---:|---:|---:|---|---|",
        ]
        for r in rows[1:]:
            ci = r.get("ci") or {}
            docs = (f"{r['documents']} (ID {r['id_documents']})" if r.get("pairing") == "unpaired" and "id_documents" in r
                    else f"{r['documents']}")
            lines.append(
                f"| {r['dataset']} | {', '.join(r.get('families') or []) or '–'} | {docs} | "
                f"{_pct(r['id_value'])}{_ci(ci.get('id_value'))} | {_pct(r['value'])}{_ci(ci.get('value'))} | "
                f"{_signed(r['drop'])}{_ci(ci.get('drop'), negate=True)}{' *' if r.get('drop_excludes_zero') else ''} | "
                f"{_signed_pct(r['relative_drop'])} | {r.get('pairing') or 'paired'} | {r.get('note') or ''} |")
        agg = self.aggregates()
        if agg["family"] or len(agg["dataset"]) > 0:
            lines += ["", "## Mean change (mean of the per-config changes, in points)", "",
                      "| Over | OOD configs | Mean change |", "|---|---:|---:|"]
            for kind, label in (("family", "{} shifts"), ("dataset", "all of {}")):
                for a in agg[kind]:
                    lines.append(f"| {label.format(a[kind])} | {a['configs']} | {_signed(a['mean_drop'])}"
                                 f"{_ci(a.get('ci'), negate=True)}{' *' if a.get('drop_excludes_zero') else ''} |")
        lines += self._detection_markdown()
        lines += self._ablation_markdown()
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
        elif self.task == "ocr":
            lines += [f"| Dataset | Role | Split | Docs | Gold words | Words read | Word recall{f' [{ci_name}]' if ci_name else ''} | "
                      "Precision | F1 | CER | Box recall | Change | Relative change |",
                      "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
            for r in rows:
                lines.append(f"| {r['dataset']} | {r['role'].upper()} | {r['split']} | {r['documents']} | "
                             f"{r['gold_words']} | {r['predicted_words']} | "
                             f"{_pct(r['recall'])}{_ci((r.get('ci') or {}).get('value'))} | {_pct(r['precision'])} | "
                             f"{_pct(r['f1'])} | {_pct(r['cer'])} | {_pct(r['box_recall'])} | {_signed(r['drop'])} | "
                             f"{_signed_pct(r['relative_drop'])} |")
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

    def _detection_markdown(self) -> list[str]:
        """The "OOD detection and calibration" section: per OOD set, AUROC, FPR95, AUPR-In/Out and the ECEs."""
        if not self.ood:
            return []
        lines = ["", "## OOD detection and calibration", "",
                 "Telling the ID documents from each OOD set's by the model's confidence (ID positive; higher AUROC and "
                 "AUPR, lower FPR95 are better; AUROC 50 is chance), and the expected calibration error (15 bins; lower "
                 "is better) on the ID documents compared and on the OOD set. In percent; see Metric conventions.", "",
                 "| OOD dataset | Pairing | AUROC | FPR95 | AUPR-In | AUPR-Out | ECE ID | ECE OOD | Note |",
                 "|---|---|---:|---:|---:|---:|---:|---:|---|"]
        for r in self.ood:
            det = r.get("ood_detection") or {}
            ci = det.get("ci") or {}
            cal, id_cal = r.get("calibration") or {}, r.get("id_calibration") or {}
            note = det.get("note") or cal.get("note") or ""
            cells = [f"{_pct(det.get(k))}{_ci(ci.get(k))}" for k in ("auroc", "fpr95", "aupr_in", "aupr_out")]
            lines.append(f"| {r['dataset']} | {r.get('pairing') or 'paired'} | " + " | ".join(cells) + " | "
                         f"{_pct(id_cal.get('ece'))}{_ci(id_cal.get('ci'))} | {_pct(cal.get('ece'))}{_ci(cal.get('ci'))} | "
                         f"{note} |")
        return lines

    def _ablation_markdown(self) -> list[str]:
        """The "Modality ablation" section: the ID set with inputs removed, paired with the ID score."""
        if not self.ablations:
            return []
        m = self.metric_label
        lines = ["", "## Modality ablation (Do-GOOD Table 1)", "",
                 f"The ID set scored with an input removed (see Metric conventions); {m} in percent, the change paired "
                 "by document.", "",
                 f"| Input removed | Docs | ID {m} | Without it | Change (points) | Relative change | Note |",
                 "|---|---:|---:|---:|---:|---:|---|"]
        for r in self.ablations:
            ci = r.get("ci") or {}
            lines.append(f"| {'+'.join(r['ablation'])} | {r['documents']} | {_pct(r['id_value'])} | "
                         f"{_pct(r['value'])}{_ci(ci.get('value'))} | {_signed(r['drop'])}"
                         f"{_ci(ci.get('drop'), negate=True)}{' *' if r.get('drop_excludes_zero') else ''} | "
                         f"{_signed_pct(r['relative_drop'])} | {r.get('note') or ''} |")
        return lines

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
                                 + (f"{_ratio_text(sw['relative_ce'])}{_ratio_ci(ci.get('relative_ce'))}"
                                    if not sw.get("relative_ce_note") else sw["relative_ce_note"])
                                 if "ce" in sw else "")
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
        """Score against severity for each corruption of ``family`` (:func:`dogood.eval.robustness.plot_family`)."""
        from dogood.eval.robustness import plot_family

        sweeps = [s for s in self.robustness["sweeps"] if s["family"] == family]
        return plot_family(path, family, sweeps, self.metric_label, self.model, self.robustness.get("reference"),
                           self.bootstrap["confidence"] if self.bootstrap else None)

    def plot(self, path: str | Path) -> Path:
        """Horizontal bars of the metric per dataset, ID on top, OOD sets grouped by shift family (a panel per family,
        a vertical line at the ID score), with interval error bars; each OOD bar labelled with its change. The
        figure is 1,100 px wide whatever the number of datasets; it grows in height, about 22 px a dataset."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        rows = self.rows()
        groups: dict[str, list[dict]] = {"in-distribution": [rows[0]]}
        for r in rows[1:]:
            families = r.get("families") or []
            groups.setdefault(" + ".join(families) if families else "OOD", []).append(r)
        heights = [len(g) + 0.8 for g in groups.values()]
        fig, axes = plt.subplots(len(groups), 1, figsize=(11.0, 0.9 + 0.22 * sum(heights) + 0.35 * len(groups)),
                                 dpi=100, sharex=True, squeeze=False, gridspec_kw={"height_ratios": heights})
        id_value = 100 * rows[0]["value"]
        top = max([100.0] + [100 * r["value"] for r in rows])
        for ax, (family, members) in zip(axes[:, 0], groups.items()):
            values = [100 * r["value"] for r in members]
            cis = [(r.get("ci") or {}).get("value") for r in members]
            xerr = None
            if all(ci is not None for ci in cis):
                xerr = np.array([[max(0.0, v - 100 * ci[0]) for v, ci in zip(values, cis)],
                                 [max(0.0, 100 * ci[1] - v) for v, ci in zip(values, cis)]])
            colour = "#4c72b0" if family == "in-distribution" else "#dd8452"
            ys = np.arange(len(members))
            ax.barh(ys, values, color=colour, xerr=xerr, capsize=2, error_kw={"elinewidth": 0.8}, height=0.7)
            ax.axvline(id_value, color="#4c72b0", linewidth=0.8, linestyle="--")
            for y, (v, r) in enumerate(zip(values, members)):
                right = v if xerr is None else v + xerr[1][y]
                mark = "*" if r.get("drop_excludes_zero") else ""
                text = f"{v:.1f}" if r["role"] == "id" else f"{v:.1f} ({_signed(r['drop'])}{mark})"
                ax.annotate(text, (right, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
            ax.set_yticks(ys, [_short(r["dataset"]) for r in members], fontsize=8)
            ax.invert_yaxis()
            ax.set_ylim(len(members) - 0.4, -0.6)
            ax.set_title(family if family == "in-distribution" else f"{family} shifts ({len(members)})",
                         fontsize=9, loc="left")
            ax.set_xlim(0, top * 1.18)
        axes[-1, 0].set_xlabel(f"{self.metric_label} (%)")
        title = f"{self.model}: ID vs OOD"
        if self.bootstrap:
            title += f" ({round(100 * self.bootstrap['confidence'])}% bootstrap CI; * the change's interval excludes 0)"
        fig.suptitle(title, fontsize=10)
        fig.tight_layout()
        path = Path(path)
        fig.savefig(path, metadata={"Software": None})
        plt.close(fig)
        return path

    def write(self, out_dir: str | Path, stem: str = "report") -> dict[str, Path]:
        """Write ``<stem>.md``, ``.csv``, ``.json`` and ``.png`` (and the severity plots) as the folder ``out_dir``;
        returns their paths.

        The report is made whole in a hidden ``.<folder>.partial-<pid>`` folder and renamed into place as one
        folder (:func:`dogood.core.fs.commit_folder`): an interrupted write leaves the earlier report as it was
        (put back on the next run if the kill fell between the two renames), never files of two reports. A folder
        that is not a report dogood wrote is never replaced (:func:`check_report_folder`).
        """
        out = Path(out_dir)
        check_report_folder(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        recover_folder(out, is_report_folder)
        tmp = partial_folder(out)
        names = {ext: f"{stem}.{ext}" for ext in ("md", "csv", "json", "png")}
        severity = self.severity_plots()
        try:
            (tmp / names["md"]).write_text(self.to_markdown(), encoding="utf-8")
            (tmp / names["csv"]).write_text(self.to_csv(), encoding="utf-8")
            (tmp / names["json"]).write_text(self.to_json(), encoding="utf-8")
            self.plot(tmp / names["png"])
            for family, name in severity.items():
                self.plot_severities(family, tmp / name)
                names[name] = name
            seal_partial(tmp)
            commit_folder(tmp, out)
        except BaseException:
            remove_tree(tmp)
            raise
        return {key: out / name for key, name in names.items()}


#: The files ``dogood eval`` writes in a report folder (``severity-<family>.png`` besides).
REPORT_FILES = ("report.md", "report.csv", "report.json", "report.png")


def is_report_folder(folder: Path) -> bool:
    """Whether ``folder`` is a report dogood eval wrote: its ``report.json`` is one, and it holds nothing else
    than a report's files."""
    try:
        info = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    if not (isinstance(info, dict) and {"model", "task", "metric", "datasets"} <= set(info)):
        return False
    return all(_report_file(p) for p in folder.iterdir())


def _report_file(path: Path) -> bool:
    name = path.name
    return not is_link(path) and path.is_file() and (
        name in REPORT_FILES or (name.startswith("severity-") and name.endswith(".png")))


def check_report_folder(out: Path) -> None:
    """Refuse, before anything is scored, a report folder that is a file, a link, or a folder holding anything
    dogood eval did not write (``--out`` or the default ``eval/<model>``): the report replaces the folder whole."""
    if is_link(out):
        raise DogoodError(f"report folder {out} is a symbolic link; dogood writes no report through a link: pick "
                          "another --out")
    if out.exists() and not out.is_dir():
        raise DogoodError(f"report folder {out} is a file; the report is a folder (report.md, .csv, .json, .png)")
    if not out.is_dir() or not any(out.iterdir()) or is_report_folder(out):
        return
    theirs = sorted(p.name for p in out.iterdir() if not _report_file(p)) or sorted(p.name for p in out.iterdir())
    raise DogoodError(f"report folder {out} holds {theirs[0]}, which is not a dogood eval report "
                      "(the report replaces the folder whole); refusing to replace it: pick another --out (or move the folder away)")


_TASK_NAMES = {"token": "token classification (FUNSD-style)", "document": "document classification (RVL-CDIP-style)",
               "qa": "question answering (DocVQA-style)", "ocr": "OCR against the pages' exact words and boxes"}

#: The OCR task's columns in the CSV (dogood.eval.ocr_task.ocr_scores).
OCR_COLUMNS = ("precision", "f1", "cer", "box_recall", "box_precision", "gold_words", "predicted_words")

#: OOD detection and calibration columns in the CSV: each value with its interval.
DETECTION_COLUMNS = tuple(c for k in ("auroc", "fpr95", "aupr_in", "aupr_out", "ece", "id_ece")
                          for c in (k, f"{k}_low", f"{k}_high"))


def _detection_cells(r: dict) -> list[str]:
    det = r.get("ood_detection") or {}
    cells: list[str] = []
    for k in ("auroc", "fpr95", "aupr_in", "aupr_out"):
        cells += [_num(det.get(k)), *_lohi((det.get("ci") or {}).get(k))]
    for cal in (r.get("calibration") or {}, r.get("id_calibration") or {}):
        cells += [_num(cal.get("ece")), *_lohi(cal.get("ci"))]
    return cells


METRIC_CONVENTION = {
    "token": "Entity F1: exact-match entity chunks of word-level IOB tags (seqeval's default, lenient IOB2), "
             "counts pooled over documents (micro F1), as the LayoutLM-family FUNSD scripts and Do-GOOD report it.",
    "document": "Accuracy: share of documents whose predicted RVL-CDIP class is the gold one.",
}


def _short(name: str, width: int = 40) -> str:
    """A dataset's name for an axis label: at most ``width`` characters, the end kept (the config)."""
    return name if len(name) <= width else "…" + name[-(width - 1):]


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
