"""The evaluation report as data: Do-GOOD Table 2 (ID beside each OOD set, changes with intervals), in percent.

:class:`EvalReport` holds the rows and what was computed from them; :mod:`dogood.eval.writers` writes it
(Markdown, CSV, JSON, plots) through one crash-safe path. Every score is in percent and every change is the OOD
score minus the ID score (negative: worse than ID), in every task, in ``compare``, the CLI, the gallery and the card.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

FAMILIES = ("image", "text", "layout")


@dataclass
class EvalReport:
    """The scores of one model on an ID dataset and its OOD datasets, paired by document, with changes and
    intervals (all in percent)."""

    model: str
    task: str
    id: dict
    ood: list[dict] = field(default_factory=list)
    box_level: str | None = None  # the box convention the model was given (Hugging Face models with boxes)
    sees: list[str] | None = None
    bootstrap: dict | None = None  # {"resamples", "seed", "confidence"}; None: no intervals
    warnings: list[str] = field(default_factory=list)
    conventions: list[str] = field(default_factory=list)
    aggregate_ci: dict[str, list[float]] = field(default_factory=dict)  # "family:image" / "dataset:funsd-l" -> [lo, hi]
    robustness: dict | None = None  # severity curves, mean relative changes, corruption errors
    ablations: list[dict] = field(default_factory=list)  # the ID set with inputs removed (dogood.eval.ablation)
    model_description: str | None = None  # what the model is, when its name does not say (OCR engines)
    model_options: dict | None = None  # the options the model was given (OCR engine options)
    summaries: dict = field(default_factory=dict)  # the task's own figures (RoDLA's for layout)

    @property
    def metric(self) -> str:
        from dogood.eval.tasks import TASKS

        return TASKS[self.task].metric

    @property
    def metric_label(self) -> str:
        from dogood.eval.tasks import TASKS

        return TASKS[self.task].metric_label

    def rows(self) -> list[dict]:
        """ID first, then each OOD dataset, each with ``role``, ``value`` (the headline score), ``change`` (the OOD
        score minus the ID score on the documents this OOD set shares with the ID set) and ``relative_change``
        (the change over that ID score, in percent)."""
        out = [{"role": "id", **self.id, "change": None, "relative_change": None}]
        return out + [{"role": "ood", **row} for row in self.ood]

    def aggregate_groups(self) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
        """The OOD rows (indices) of each shift family and of each OOD dataset whose change the model can see (no
        ``note``: see :func:`dogood.eval.run.blind_spot`)."""
        by_family: dict[str, list[int]] = {}
        by_dataset: dict[str, list[int]] = {}
        for j, r in enumerate(self.ood):
            if r.get("note"):
                continue
            for f in r.get("families") or []:
                by_family.setdefault(f, []).append(j)
            by_dataset.setdefault(_folder(r), []).append(j)
        return by_family, by_dataset

    def aggregates(self) -> dict[str, list[dict]]:
        """Mean change per shift family and per OOD dataset (the folder a config comes from), over the OOD configs
        whose change the model can see; ``blind`` counts those left out (their measured factors are ones the model
        does not read, so a +0.00 there says nothing of robustness).

        A config whose shifts span two families counts in both. ``ci`` (when :func:`dogood.evaluate` could compute
        it: bootstrap on, and every config of the group scored on the same documents) is the interval of the mean
        change, each resample drawing the documents once for all the group's configs.
        """
        by_family, by_dataset = self.aggregate_groups()
        blind_family: dict[str, int] = {}
        blind_dataset: dict[str, int] = {}
        for r in self.ood:
            if r.get("note"):
                for f in r.get("families") or []:
                    blind_family[f] = blind_family.get(f, 0) + 1
                blind_dataset[_folder(r)] = blind_dataset.get(_folder(r), 0) + 1

        def table(groups, blind, key):
            out = []
            for k in list(groups) + [k for k in blind if k not in groups]:
                members = groups.get(k, [])
                entry = {key: k, "configs": len(members), "blind": blind.get(k, 0),
                         "mean_change": float(np.mean([self.ood[j]["change"] for j in members])) if members else None}
                ci = self.aggregate_ci.get(f"{key}:{k}")
                if ci is not None:
                    entry["ci"] = ci
                    entry["change_excludes_zero"] = ci[0] > 0 or ci[1] < 0
                out.append(entry)
            return out

        order = {f: i for i, f in enumerate(FAMILIES)}
        families = sorted(set(by_family) | set(blind_family), key=lambda f: (order.get(f, 99), f))
        return {"family": table({f: by_family[f] for f in families if f in by_family},
                                {f: blind_family[f] for f in families if f in blind_family}, "family"),
                "dataset": table(by_dataset, blind_dataset, "dataset")}

    def severity_plots(self) -> dict[str, str]:
        """Family -> the file name of its severity plot (``severity-<family>.png``)."""
        return {f["family"]: f["plot"] for f in (self.robustness or {}).get("families", [])}

    # -- writers (dogood.eval.writers) --------------------------------------------------------------------------

    def to_markdown(self) -> str:
        """The report as Markdown (``report.md``)."""
        from dogood.eval.writers import to_markdown

        return to_markdown(self)

    def to_csv(self) -> str:
        """One line per dataset and ablation (``report.csv``)."""
        from dogood.eval.writers import to_csv

        return to_csv(self)

    def to_json(self) -> str:
        """Everything, as JSON (``report.json``): what ``dogood gallery`` and the data card read."""
        from dogood.eval.writers import to_json

        return to_json(self)

    def plot(self, path: str | Path) -> Path:
        """The bar chart of every dataset's score (``report.png``)."""
        from dogood.eval.writers import plot

        return plot(self, path)

    def plot_severities(self, family: str, path: str | Path) -> Path:
        """Score against severity for each corruption of ``family`` (``severity-<family>.png``)."""
        from dogood.eval.writers import plot_severities

        return plot_severities(self, family, path)

    def write(self, out_dir: str | Path) -> dict[str, Path]:
        """Write the report folder ``out_dir`` (:func:`dogood.eval.writers.write_report`): ``report.md``,
        ``.csv``, ``.json``, ``.png`` and the severity plots, made whole and renamed into place; a folder dogood
        did not write is never replaced."""
        from dogood.eval.writers import write_report

        return write_report(self, out_dir)


def _folder(row: dict) -> str:
    return row["dataset"].rsplit("/", 1)[0] if row.get("config") else row["dataset"]
