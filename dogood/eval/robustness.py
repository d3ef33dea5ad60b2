"""Robustness summaries over severity-swept OOD configs, in the ImageNet-C tradition.

A recipe's ``severities:`` key names the configs of a sweep ``<config>@<s>``
(s = 1..5). ``dogood eval`` groups its OOD rows by the config name before
``@`` (one *corruption*, in ImageNet-C's words) and by the family of the
swept shift, and reports per corruption:

- the severity curve: the score at each severity, with its paired bootstrap interval;
- the mean relative drop, ``mean_s (ID_s - score_s) / ID_s`` (``ID_s``: the ID
  score on the documents severity ``s`` was scored on);
- the corruption error against a reference model's errors (Hendrycks & Dietterich
  2019, section "ImageNet-C Metrics"), error being ``1 - score``:
  ``CE = sum_s E_s / sum_s E_s^ref`` and the relative CE
  ``sum_s (E_s - E_clean) / sum_s (E_s^ref - E_clean^ref)`` (the sum over
  severities of each severity's error above the clean error); mCE and relative
  mCE are their means over corruptions.

Trustworthy summaries: the relative CE divides by the reference's own
degradation, which a robust or weak reference may barely have; it is reported
only where the reference's error grows by at least :data:`REFERENCE_FLOOR` per
severity on average (else ``None``, with the reason). The reference is named by
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

from dogood.core.papers import Cites

#: Where the corruption-error formulas come from (the paper's paragraph defining CE, mCE and relative mCE).
CITES = Cites("imagenet-c", 'paragraph "ImageNet-C Metrics" (Corruption Error, mCE, Relative mCE)')
#: A severity config's name: ``<config>@<level>``, level 1..5.
SEVERITY_CONFIG = re.compile(r"\A(?P<base>.+)@(?P<level>[1-5])\Z")


#: The least mean growth of the reference's error over the severities (1 point of the metric) for which a
#: relative CE is reported.
REFERENCE_FLOOR = 0.01


def reference_degradation(ref_scores: Sequence, ref_clean: Sequence):
    """``mean_s (E_s^ref - E_clean^ref)``: how much the reference's error grows per severity, on average."""
    gaps = [c - s for s, c in zip(ref_scores, ref_clean)]
    return sum(gaps) / len(gaps)


def floor_note(growth: float) -> str:
    """Why a relative CE is not reported."""
    return (f"n/a: the reference's error grows by {100 * growth:.2f} points per severity on average, below the "
            f"{100 * REFERENCE_FLOOR:g}-point floor (the ratio would divide by noise)")


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def content_sha256(path: str | Path) -> str | None:
    """sha256 of a file, or of a folder's files (each relative path and its sha256, sorted); ``None`` if unreadable."""
    path = Path(path)
    try:
        if path.is_file():
            return _file_sha256(path)
        if path.is_dir():
            digest = hashlib.sha256()
            for f in sorted(q for q in path.rglob("*") if q.is_file() and not q.is_symlink()):
                digest.update(f.relative_to(path).as_posix().encode("utf-8") + b"\0" + _file_sha256(f).encode() + b"\n")
            return digest.hexdigest()
    except OSError:
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
    """``1 - score`` for each severity: the error ImageNet-C sums."""
    return [1 - s for s in scores]


def corruption_error(scores: Sequence, ref_scores: Sequence):
    """``CE = sum_s E_s / sum_s E_s^ref`` with ``E = 1 - score`` (ImageNet-C's CE, any reference)."""
    return _ratio(sum(errors(scores)), sum(errors(ref_scores)))


def relative_corruption_error(scores: Sequence, clean: Sequence, ref_scores: Sequence, ref_clean: Sequence):
    """``sum_s (E_s - E_clean) / sum_s (E_s^ref - E_clean^ref)``; ``clean``: the clean (ID) score per severity."""
    gaps = [e - c for e, c in zip(errors(scores), errors(clean))]
    ref_gaps = [e - c for e, c in zip(errors(ref_scores), errors(ref_clean))]
    return _ratio(sum(gaps), sum(ref_gaps))


def mean_relative_drop(clean: Sequence, scores: Sequence):
    """``mean_s (ID_s - score_s) / ID_s``: the mean over severities of the relative drop."""
    rel = [_ratio(c - s, c) for c, s in zip(clean, scores)]
    return sum(rel) / len(rel)


def sweep_family(location: str, configs: Sequence[str], shifts: Iterable[str], fallback: Sequence[str]) -> list[str]:
    """The families of the shift(s) a sweep varies.

    From the build record (``dogood_build.json`` ``chains``) when ``location`` is a
    dogood folder: the chain steps whose parameters differ across the severity
    configs; else the row's shifts that declare severity levels; else ``fallback``
    (the families of every shift the rows' documents went through).
    """
    from dogood.shifts import SHIFTS

    swept: set[str] = set()
    record = Path(location) / "dogood_build.json" if location else None
    if record is not None and record.is_file():
        import json

        try:
            chains = json.loads(record.read_text(encoding="utf-8")).get("chains") or {}
        except (OSError, ValueError, AttributeError, RecursionError):
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
    """mCE, relative mCE and the mean of the mean relative drops over ``sweeps`` (NaN ratios left out)."""
    return {"corruptions": len(sweeps),
            "mce": _nan_mean([s["ce"] for s in sweeps if "ce" in s]) if any("ce" in s for s in sweeps) else None,
            "relative_mce": (_nan_mean([s["relative_ce"] for s in sweeps if "relative_ce" in s])
                             if any("relative_ce" in s for s in sweeps) else None),
            "mean_relative_drop": _nan_mean([s["mean_relative_drop"] for s in sweeps])}


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
        ys = [100 * sweep["id_value"]] + [100 * p["value"] for p in sweep["curve"]]
        cis = [sweep.get("id_ci")] + [p.get("ci") for p in sweep["curve"]]
        yerr = None
        if all(ci is not None for ci in cis):
            yerr = np.array([[max(0.0, y - 100 * ci[0]) for y, ci in zip(ys, cis)],
                             [max(0.0, 100 * ci[1] - y) for y, ci in zip(ys, cis)]])
            top = max(top, max(100 * ci[1] for ci in cis))
        top = max(top, max(ys))
        ax.errorbar(xs, ys, yerr=yerr, marker="o", capsize=3, color=colour, label=sweep["corruption"], linewidth=1.4)
        if sweep.get("reference"):
            ref = sweep["reference"]
            rys = [100 * ref["id_value"]] + [100 * v for v in ref["values"]]
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
