"""Robustness summaries over severity-swept OOD configs, in the ImageNet-C tradition.

A recipe's ``severities:`` key names the configs of a sweep ``<config>@<s>``
(s = 1..5). ``dogood eval`` groups its OOD rows by the config name before
``@`` (one *corruption*, in ImageNet-C's words) and by the family of the
swept shift, and reports per corruption:

- the severity curve: the score at each severity (in percent), with its paired bootstrap interval;
- the mean relative change, ``100 * mean_s (score_s - ID_s) / ID_s`` (``ID_s``: the ID
  score on the documents severity ``s`` was scored on; negative: worse than ID);
- the corruption error against a reference model's errors (Hendrycks & Dietterich
  2019, section "ImageNet-C Metrics"), error being ``100 - score`` (scores in percent; the ratios do not
  depend on the scale):
  ``CE = sum_s E_s / sum_s E_s^ref`` and the relative CE
  ``sum_s (E_s - E_clean) / sum_s (E_s^ref - E_clean^ref)`` (the sum over
  severities of each severity's error above the clean error); mCE and relative
  mCE are their means over corruptions.

Trustworthy summaries: the relative CE divides by the reference's own
degradation, which a robust or weak reference may barely have; it is reported
only where the reference's error grows by at least :data:`REFERENCE_FLOOR` points per
severity on average (else ``None``, with the reason). Family means (mCE, relative mCE, mean relative change)
leave out the corruptions whose every severity changed only what the model does not see (the measured factor
table, :func:`dogood.eval.run.blind_spot`), and say how many. The reference is named by
its file name and content hash (:func:`model_identity`), and a model scored
against itself gets a note instead of corruption errors of 1.

The formulas take floats or numpy arrays (one value per bootstrap resample)
alike; an undefined ratio (a zero denominator: the reference's errors do not
grow) is NaN. Written by hand: no maintained library computes ImageNet-C's
metrics from given scores (``hendrycks/robustness`` prints unnormalised errors
from a torchvision model's loop).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dogood.core import fs
from dogood.core.papers import Cites
from dogood.eval.datasets import build_record

#: Where the corruption-error formulas come from (the paper's paragraph defining CE, mCE and relative mCE).
CITES = Cites("imagenet-c", 'paragraph "ImageNet-C Metrics" (Corruption Error, mCE, Relative mCE)')
#: A severity config's name: ``<config>@<level>``, level 1..5.
SEVERITY_CONFIG = re.compile(r"\A(?P<base>.+)@(?P<level>[1-5])\Z")


#: The least mean growth of the reference's error over the severities (points of the metric, in percent) for which
#: a relative CE is reported.
REFERENCE_FLOOR = 1.0


def reference_degradation(ref_scores: Sequence, ref_clean: Sequence):
    """``mean_s (E_s^ref - E_clean^ref)``: how much the reference's error grows per severity, on average."""
    gaps = [c - s for s, c in zip(ref_scores, ref_clean)]
    return sum(gaps) / len(gaps)


def floor_note(growth: float) -> str:
    """Why a relative CE is not reported."""
    return (f"n/a: the reference's error grows by {growth:.2f} points per severity on average, below the "
            f"{REFERENCE_FLOOR:g}-point floor (the ratio would divide by noise)")


def content_sha256(path: str | Path) -> str | None:
    """sha256 of a file, or of a folder's files (each relative path and its sha256, sorted); ``None`` if unreadable."""
    path = Path(path)
    try:
        if path.is_file():
            return fs.sha256_file(path)
        if path.is_dir():
            digest = hashlib.sha256()
            for f in sorted(q for q in path.rglob("*") if q.is_file() and not q.is_symlink()):
                digest.update(f.relative_to(path).as_posix().encode("utf-8") + b"\0" + fs.sha256_file(f).encode() + b"\n")
            return digest.hexdigest()
    except (OSError, fs.FileRefused):
        return None
    return None


def model_identity(model: Any) -> dict[str, Any]:
    """What names a model in a report: its name, the file (or folder) it was loaded from, by name only (no local
    path is published), and that file's content hash; ``label`` is what the report prints."""
    name = str(getattr(model, "name", model))
    where = getattr(model, "source", None) or getattr(model, "path", None)
    hf = getattr(model, "name_or_path", None)
    if where is None and hf is not None and Path(str(hf)).exists():
        where = hf
    if where is None or not Path(str(where)).exists():
        label = getattr(model, "description", None) or (str(hf) if hf else name)
        return {"name": name, "file": None, "sha256": None, "label": label}
    where = Path(str(where))
    digest = content_sha256(where)
    label = f"{where.name} (sha256 {digest[:12]}…)" if digest else where.name
    return {"name": name, "file": where.name, "sha256": digest, "label": label}


def split_severity(config: str | None) -> tuple[str | None, int | None]:
    """``("merge", 3)`` for ``"merge@3"``; ``(config, None)`` for a config outside a sweep."""
    m = SEVERITY_CONFIG.match(config or "")
    return (m["base"], int(m["level"])) if m else (config, None)


def _ratio(num, den):
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(den != 0, num / np.where(den != 0, den, 1.0), np.nan)
    return float(out) if out.ndim == 0 else out


def errors(scores: Sequence) -> list:
    """``100 - score`` for each severity (scores in percent): the error ImageNet-C sums."""
    return [100 - s for s in scores]


def corruption_error(scores: Sequence, ref_scores: Sequence):
    """``CE = sum_s E_s / sum_s E_s^ref`` with ``E = 1 - score`` (ImageNet-C's CE, any reference)."""
    return _ratio(sum(errors(scores)), sum(errors(ref_scores)))


def relative_corruption_error(scores: Sequence, clean: Sequence, ref_scores: Sequence, ref_clean: Sequence):
    """``sum_s (E_s - E_clean) / sum_s (E_s^ref - E_clean^ref)``; ``clean``: the clean (ID) score per severity."""
    gaps = [e - c for e, c in zip(errors(scores), errors(clean))]
    ref_gaps = [e - c for e, c in zip(errors(ref_scores), errors(ref_clean))]
    return _ratio(sum(gaps), sum(ref_gaps))


def mean_relative_change(clean: Sequence, scores: Sequence):
    """``100 * mean_s (score_s - ID_s) / ID_s``: the mean over severities of the relative change, in percent
    (negative: worse than ID)."""
    rel = [_ratio(s - c, c) for c, s in zip(clean, scores)]
    return 100 * (sum(rel) / len(rel))


def sweep_family(location: str, configs: Sequence[str], shifts: Iterable[str], fallback: Sequence[str]) -> list[str]:
    """The families of the shift(s) a sweep varies.

    From the build record (``dogood_build.json`` ``chains``) when ``location`` is a
    dogood folder: the chain steps whose parameters differ across the severity
    configs; else the row's shifts that declare severity levels; else ``fallback``
    (the families of every shift the rows' documents went through).
    """
    from dogood.shifts import SHIFTS

    swept: set[str] = set()
    record = build_record(location)
    if record is not None:
        chains = (record.get("chains") if isinstance(record, dict) else None) or {}
        if not isinstance(chains, dict):
            chains = {}
        steps = [chains.get(c) for c in configs]
        if len(configs) > 1 and all(isinstance(s, list) for s in steps) and len({len(s) for s in steps}) == 1:
            for position in zip(*steps):
                if any(p != position[0] for p in position) and all(isinstance(p, dict) for p in position):
                    swept.update(str(p.get("shift")) for p in position)
    if not swept:
        swept = {s for s in shifts if s in SHIFTS and SHIFTS[s].severities}
    found = {SHIFTS[s].family for s in swept if s in SHIFTS and SHIFTS[s].family}
    if not found:
        return list(fallback)
    order = ("image", "text", "layout")
    return [f for f in order if f in found] + sorted(found - set(order))


def subfamily(shifts: Iterable[str]) -> str | None:
    """The ``subfamily`` (``capture``, ``scan``) the shifts share, if they declare one."""
    from dogood.shifts import SHIFTS

    subs = {getattr(SHIFTS[s], "subfamily", None) for s in shifts if s in SHIFTS}
    subs.discard(None)
    return subs.pop() if len(subs) == 1 else None


def family_file(family: str) -> str:
    """The plot file of a family: ``severity-<family>.png``."""
    return f"severity-{re.sub(r'[^A-Za-z0-9_.-]+', '-', family)}.png"


def _nan_mean(values: Sequence[float]) -> float:
    good = [v for v in values if v is not None and not math.isnan(v)]
    return float(np.mean(good)) if good else math.nan


def family_means(sweeps: Sequence[dict]) -> dict[str, Any]:
    """mCE, relative mCE and the mean of the mean relative changes over the ``sweeps`` the model sees (NaN ratios
    left out); ``blind``: how many sweeps were left out because they change only what the model does not see."""
    seen = [s for s in sweeps if not s.get("note")]
    return {"corruptions": len(seen), "blind": len(sweeps) - len(seen),
            "mce": _nan_mean([s["ce"] for s in seen if "ce" in s]) if any("ce" in s for s in seen) else None,
            "relative_mce": (_nan_mean([s["relative_ce"] for s in seen if "relative_ce" in s])
                             if any("relative_ce" in s for s in seen) else None),
            "mean_relative_change": _nan_mean([s["mean_relative_change"] for s in seen]) if seen else None}


def plot_family(path: str | Path, family: str, sweeps: Sequence[dict], metric_label: str, model: str,
                reference: str | None, confidence: float | None) -> Path:
    """Score against severity for each corruption of ``family`` (ID at severity 0), interval bars; the reference
    model's curve dashed beside each."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.6, 3.8), dpi=120)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    top = 0.0
    for k, sweep in enumerate(sweeps):
        colour = colours[k % len(colours)]
        xs = [0] + [p["severity"] for p in sweep["curve"]]
        ys = [sweep["curve"][0]["id_value"] if sweep["id_value"] is None else sweep["id_value"]]
        ys += [p["value"] for p in sweep["curve"]]
        cis = [sweep.get("id_ci")] + [p.get("ci") for p in sweep["curve"]]
        yerr = None
        if all(ci is not None for ci in cis):
            yerr = np.array([[max(0.0, y - ci[0]) for y, ci in zip(ys, cis)],
                             [max(0.0, ci[1] - y) for y, ci in zip(ys, cis)]])
            top = max(top, max(ci[1] for ci in cis))
        top = max(top, max(ys))
        label = sweep["corruption"] + (" (the model does not see it)" if sweep.get("note") else "")
        ax.errorbar(xs, ys, yerr=yerr, marker="o", capsize=3, color=colour, label=label, linewidth=1.4)
        if sweep.get("reference"):
            ref = sweep["reference"]
            rys = [ref["id_values"][0] if ref["id_value"] is None else ref["id_value"]] + list(ref["values"])
            top = max(top, max(rys))
            ax.plot(xs, rys, linestyle="--", marker=".", color=colour, alpha=0.6, linewidth=1,
                    label=f"{sweep['corruption']}, reference {reference}")
    levels = sorted({p["severity"] for s in sweeps for p in s["curve"]})
    ax.set_xticks([0, *levels], ["ID", *map(str, levels)])
    ax.set_xlabel("severity")
    ax.set_ylabel(f"{metric_label} (%)")
    ax.set_ylim(0, max(100.0, top * 1.05))
    title = f"{model}: {family} shifts by severity"
    if confidence:
        title += f" ({round(100 * confidence)}% bootstrap CI)"
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, format="png", metadata={"Software": None})
    plt.close(fig)
    return path


def severity_sweeps(ctx: Any, reference: Any, reference_note: str | None) -> dict | None:
    """The severity curves, mean relative changes and corruption errors of the severity-swept OOD rows of
    ``ctx.report`` (a :class:`dogood.eval.scoring.Context`), any task; ``None`` when no OOD config is named
    ``<config>@<s>``. ``reference``: the model the corruption errors are divided by (``None``: none, and
    ``reference_note`` says why)."""
    from dogood.core.errors import ModelError
    from dogood.eval.bootstrap import (
        bootstrap_values,
        nan_interval,
        percentile_interval,
    )
    from dogood.eval.scoring import predict, score_row

    report, task, model = ctx.report, ctx.task, ctx.model
    groups: dict[tuple[str, str], dict[int, int]] = {}
    for j, row in enumerate(report.ood):
        base, level = split_severity(row.get("config"))
        if level is not None:
            folder = row["dataset"].rsplit("/", 1)[0]
            groups.setdefault((folder, base), {})[level] = j
    if not groups:
        return None
    ref_name = ref_identity = None
    self_reference = False
    if reference is not None:
        if reference.task != task.model_task:
            raise ModelError(f"reference model {reference.name!r} does {reference.task} prediction but the datasets "
                             f"need {task.model_task} prediction")
        ref_identity = model_identity(reference)
        ref_name = ref_identity["label"]
        self_reference = reference is model or (ref_identity.get("sha256") is not None
                                                and ref_identity.get("sha256") == model_identity(model).get("sha256"))
    if self_reference:
        # CE and relative CE against oneself are 1 by definition: say so instead of printing rows of 1.000
        reference_note = (f"the model is its own reference ({ref_name}): its corruption errors are 1 by definition, so "
                          "none are shown; pass --reference MODEL to compare with another model")
        reference = ref_name = None
    ref_cache: dict[int | None, Any] = {}
    kw = {"batch_size": ctx.batch_size, "progress": ctx.progress}

    def ref_scored(j: int | None):
        """The reference's results on the ID set (``None``) or on OOD row ``j``: on all the documents scored."""
        if j not in ref_cache:
            if j is None:
                ref_cache[j] = predict(reference, task, ctx.id_set, ctx.id_ids, **kw)
            else:
                ref_cache[j] = predict(reference, task, ctx.ood_sets[j], ctx.pairs[j].docs, **kw)
        return ref_cache[j]

    boot = ctx.resamples > 0
    sweeps = []
    for (folder, base), levels in sorted(groups.items()):
        order = sorted(levels)
        rows = [report.ood[levels[s]] for s in order]
        shifts = sorted(set().union(*(r["shifts"] for r in rows)))
        fallback = [f for f in ("image", "text", "layout") if any(f in (r["families"] or []) for r in rows)]
        family = "+".join(sweep_family(ctx.ood_sets[levels[order[0]]].location, [r["config"] for r in rows], shifts,
                                       fallback) or ["unknown"])
        docs = [ctx.pairs[levels[s]].docs for s in order]
        same_docs = all(d == docs[0] for d in docs) and not any(ctx.pairs[levels[s]].unpaired for s in order)
        notes = {r.get("note") for r in rows}
        sweep: dict[str, Any] = {
            "corruption": f"{folder}/{base}", "dataset": folder, "config": base, "family": family,
            "subfamily": subfamily(shifts), "shifts": shifts, "severities": order, "same_documents": same_docs,
            "id_value": rows[0]["id_value"] if same_docs else None,
            "note": rows[0].get("note") if len(notes) == 1 else None,
            "curve": [{"severity": s, "config": r["config"], "dataset": r["dataset"], "documents": r["documents"],
                       "value": r["value"], "id_value": r["id_value"], "change": r["change"],
                       "relative_change": r["relative_change"],
                       **({"ci": r["ci"]["value"], "change_ci": r["ci"]["change"]} if "ci" in r else {})}
                      for s, r in zip(order, rows)],
        }
        if same_docs and "ci" in rows[0]:
            sweep["id_ci"] = rows[0]["ci"]["id_value"]
        clean = [r["id_value"] for r in rows]
        values = [r["value"] for r in rows]
        sweep["mean_relative_change"] = mean_relative_change(clean, values)
        if reference is not None:
            ref_values, ref_clean = [], []
            for s in order:
                j = levels[s]
                ref_values.append(score_row(ref_scored(j), ctx.pairs[j].docs)["value"])
                ref_clean.append(score_row(ref_scored(None), ctx.id_ids if ctx.pairs[j].unpaired
                                           else ctx.pairs[j].docs)["value"])
            sweep["reference"] = {"model": ref_name, "values": ref_values, "id_values": ref_clean,
                                  "id_value": ref_clean[0] if same_docs else None}
            sweep["ce"] = corruption_error(values, ref_values)
            growth = reference_degradation(ref_values, ref_clean)
            sweep["reference"]["degradation"] = growth
            if growth >= REFERENCE_FLOOR:
                sweep["relative_ce"] = relative_corruption_error(values, clean, ref_values, ref_clean)
            else:
                sweep["relative_ce"] = None
                sweep["relative_ce_note"] = floor_note(growth)
        if boot and same_docs:
            ids = docs[0]
            stats = [ctx.id_scored.stats(ids)] + [ctx.ood_scored[levels[s]].stats(ids) for s in order]
            if reference is not None:
                stats += [ref_scored(None).stats(ids)] + [ref_scored(levels[s]).stats(ids) for s in order]
            vals = bootstrap_values(task, stats, ctx.resamples, ctx.seed)
            k = len(order)
            m_id, m_sev = vals[0], vals[1:k + 1]
            ci = {"mean_relative_change": percentile_interval(mean_relative_change([m_id] * k, m_sev),
                                                              ctx.confidence)}
            if reference is not None:
                r_id, r_sev = vals[k + 1], vals[k + 2:]
                ci["ce"] = nan_interval(corruption_error(m_sev, r_sev), ctx.confidence)
                if sweep["relative_ce"] is not None:
                    # a resample whose reference degrades less than the floor has no relative CE either
                    rel = relative_corruption_error(m_sev, [m_id] * k, r_sev, [r_id] * k)
                    growth = reference_degradation(r_sev, [r_id] * k)
                    ci["relative_ce"] = nan_interval(np.where(growth >= REFERENCE_FLOOR, rel, np.nan), ctx.confidence)
            sweep["ci"] = ci
        sweeps.append(sweep)
    families: dict[str, list[dict]] = {}
    for sweep in sweeps:
        families.setdefault(sweep["family"], []).append(sweep)
    rank = {f: i for i, f in enumerate(("image", "text", "layout"))}
    fam = sorted(families, key=lambda f: (rank.get(f, 99), f))
    return {
        "reference": ref_name,
        "reference_identity": ref_identity,
        "self_reference": self_reference,
        "reference_floor": REFERENCE_FLOOR,
        "reference_note": reference_note,
        "families": [{"family": f, "plot": family_file(f), **family_means(families[f])} for f in fam],
        "all": family_means(sweeps),
        "sweeps": sweeps,
    }
