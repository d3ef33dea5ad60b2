"""The report's writers: Markdown, CSV, JSON and plots, and the one crash-safe way a report folder is written.

Every task's report is read the same way: scores in percent, each OOD set's change from ID in points (negative:
worse than ID) and relative to ID, the same file names (``report.md``, ``.csv``, ``.json``, ``.png``, and
``severity-<family>.png`` for severity sweeps). A task adds its own columns and sections
(:class:`dogood.eval.tasks.Task`); nothing here depends on which task it is.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np

from dogood.core import fs
from dogood.core.errors import DogoodError
from dogood.core.fs import (
    PARTIAL_MARKER,
    commit_folder,
    is_link,
    partial_folder,
    recover_folder,
    remove_tree,
)
from dogood.eval.formats import (
    csv_number,
    fmt_cell,
    fmt_change,
    fmt_ci,
    fmt_pct,
    fmt_ratio,
    fmt_ratio_ci,
    fmt_rel,
)
from dogood.eval.tasks import make_task

#: The files every report folder holds (``severity-<family>.png`` besides).
REPORT_FILES = ("report.md", "report.csv", "report.json", "report.png")
#: What earlier dogood versions wrote for ``--task layout`` (a folder of them is dogood's to replace).
OLD_LAYOUT_FILES = ("layout_report.json", "layout_report.md")


def _task(report):
    return make_task(report.task)


# -- JSON ---------------------------------------------------------------------------------------------------------

def to_json(report) -> str:
    payload = {"model": report.model, "task": report.task, "metric": report.metric, "scale": "percent",
               "box_level": report.box_level, "sees": report.sees, "bootstrap": report.bootstrap,
               "warnings": report.warnings, "conventions": report.conventions, "datasets": _finite(report.rows()),
               "aggregates": _finite(report.aggregates()), "robustness": _finite(report.robustness),
               "ablations": _finite(report.ablations), "model_description": report.model_description,
               "model_options": report.model_options, "summaries": _finite(report.summaries)}
    return json.dumps(payload, indent=2, default=_json_default, allow_nan=False) + "\n"


def _finite(obj):
    """NaN (nothing to count) as JSON null."""
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    if isinstance(obj, (float, np.floating)) and math.isnan(obj):
        return None
    return obj


def _json_default(obj):
    if hasattr(obj, "item"):
        return obj.item()
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


# -- CSV ----------------------------------------------------------------------------------------------------------

#: OOD detection and calibration columns in the CSV: each value with its interval.
DETECTION_COLUMNS = tuple(c for k in ("auroc", "fpr95", "aupr_in", "aupr_out", "ece", "id_ece")
                          for c in (k, f"{k}_low", f"{k}_high"))


def to_csv(report) -> str:
    task = _task(report)
    rows = report.rows()
    extra = task.csv_columns(rows)
    header = ["model", "dataset", "role", "split", "documents", "metric", "value", "value_low", "value_high",
              "id_value", "id_value_low", "id_value_high", "change", "change_low", "change_high",
              "change_excludes_zero", "relative_change", "families", "note", "pairing", *DETECTION_COLUMNS, *extra]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for r in rows + [{"role": "ablation", **a} for a in report.ablations]:
        ci = r.get("ci") or {}
        line = [report.model, r["dataset"], r["role"], r["split"], r["documents"], report.metric,
                csv_number(r["value"]), *_lohi(ci.get("value")), csv_number(r.get("id_value")),
                *_lohi(ci.get("id_value")), csv_number(r.get("change")), *_lohi(ci.get("change")),
                csv_number(r.get("change_excludes_zero")), csv_number(r.get("relative_change")),
                "+".join(r.get("families") or []), r.get("note") or "", r.get("pairing") or "", *_detection_cells(r)]
        line += [csv_number(v) if not isinstance(v, str) else v for v in task.csv_cells(r, extra)]
        writer.writerow(line)
    return buf.getvalue()


def _lohi(ci) -> list[str]:
    return ["", ""] if not ci else [csv_number(ci[0]), csv_number(ci[1])]


def _detection_cells(r: dict) -> list[str]:
    det = r.get("ood_detection") or {}
    cells: list[str] = []
    for k in ("auroc", "fpr95", "aupr_in", "aupr_out"):
        cells += [csv_number(det.get(k)), *_lohi((det.get("ci") or {}).get(k))]
    for cal in (r.get("calibration") or {}, r.get("id_calibration") or {}):
        cells += [csv_number(cal.get("ece")), *_lohi(cal.get("ci"))]
    return cells


# -- Markdown -----------------------------------------------------------------------------------------------------

def to_markdown(report) -> str:
    task = _task(report)
    rows = report.rows()
    m = report.metric_label
    ci_name = f"{round(100 * report.bootstrap['confidence'])}% CI" if report.bootstrap else None
    lines = [f"# dogood eval: {report.model}", ""]
    for w in report.warnings:
        lines += [f"> **Warning:** {w}", ""]
    lines += [
        f"Task: {task.title}. Metric: {m}, in percent. An OOD set whose documents are ID documents (shifted) is "
        "scored paired: on the documents it shares with the ID set, with the ID score beside it on those same "
        "documents. One that holds other documents is scored unpaired: each set on all its own documents. In "
        "brackets: the change from ID, in points and relative to ID (negative: worse than ID).",
        *([f"Intervals: {ci_name}, bootstrap over documents ({report.bootstrap['resamples']} resamples, seed "
           f"{report.bootstrap['seed']}; paired sets draw the documents once for both sides, unpaired sets each side "
           "over its own); `*` marks a change whose interval excludes 0."] if report.bootstrap else []),
        *([f"Model: {report.model_description}."] if report.model_description else []),
        *([f"Model options: {', '.join(f'{k}={v}' for k, v in report.model_options.items())}."]
          if report.model_options else []),
        *([f"Boxes: {report.box_level} level, the convention the model was trained on and the one of every "
           "dataset's `bboxes` here (dogood eval refuses data in another)."] if report.box_level else []),
        *([f"The model sees: {', '.join(report.sees) or 'nothing dogood knows of'}."] if report.sees is not None
          else []),
        "",
        "## ID vs OOD (Do-GOOD Table 2 layout)",
        "",
        "| Model | " + " | ".join(f"{r['dataset']}{' (ID)' if r['role'] == 'id' else ''}" for r in rows) + " |",
        "|---" * (len(rows) + 1) + "|",
        f"| {report.model} | " + " | ".join(
            fmt_pct(r["value"]) + ("" if r["role"] == "id" else
                                   f" ({fmt_change(r['change'])}{'*' if r.get('change_excludes_zero') else ''}, "
                                   f"{fmt_rel(r['relative_change'])})") for r in rows) + " |",
        *(["", "Where an OOD set holds other documents than the ID set, its change is against the ID score on the "
           "documents both hold, which can differ from the ID column: see the next table."]
          if any(r.get("id_value") != report.id.get("value") for r in report.ood) else []),
    ]
    if report.ood:
        lines += ["", "## Each OOD set against ID", "",
                  "| OOD dataset | Family | Docs | ID | OOD | Change (points) | Relative change | Pairing | Note |",
                  "|---|---|---:|---:|---:|---:|---:|---|---|"]
        for r in rows[1:]:
            ci = r.get("ci") or {}
            alone = r.get("pairing") == "unpaired"
            docs = f"{r['documents']} (ID {r['id_documents']})" if alone and "id_documents" in r else f"{r['documents']}"
            lines.append(
                f"| {r['dataset']} | {', '.join(r.get('families') or []) or '–'} | {docs} | "
                f"{fmt_pct(r['id_value'])}{fmt_ci(ci.get('id_value'))}{' (all ID docs)' if alone else ''} | "
                f"{fmt_pct(r['value'])}{fmt_ci(ci.get('value'))} | "
                f"{fmt_change(r['change'])}{fmt_ci(ci.get('change'), signed=True)}"
                f"{' *' if r.get('change_excludes_zero') else ''} | {fmt_rel(r['relative_change'])} | "
                f"{r.get('pairing') or 'paired'} | {r.get('note') or ''} |")
        lines.append("")
        lines.append("ID: the ID score on the documents the OOD set is scored on (paired), or on all ID documents "
                     "(unpaired).")
    lines += _aggregate_markdown(report)
    lines += _detection_markdown(report) if task.confidences else []
    lines += _ablation_markdown(report)
    lines += _robustness_markdown(report)
    lines += ["", "## Per dataset", "",
              "| Dataset | Role | Split | Docs | " + "".join(f"{label} | " for _, label, _ in task.columns)
              + f"{m}{f' [{ci_name}]' if ci_name else ''} | Change | Relative change |",
              "|---|---|---|---:|" + "---:|" * (len(task.columns) + 3)]
    for r in rows:
        lines.append(f"| {r['dataset']} | {r['role'].upper()} | {r['split']} | {r['documents']} | "
                     + "".join(f"{fmt_cell(r.get(k), kind)} | " for k, _, kind in task.columns)
                     + f"{fmt_pct(r['value'])}{fmt_ci((r.get('ci') or {}).get('value'))} | "
                     f"{fmt_change(r.get('change'))} | {fmt_rel(r.get('relative_change'))} |")
    lines += task.sections(report)
    if report.conventions:
        lines += ["", "## Metric conventions", ""] + [f"- {c}" for c in report.conventions]
    lines += ["", "## Where the data came from", ""]
    for r in rows:
        lines.append(f"- `{r['dataset']}`: {r['location']} (split {r['split']}, {r['documents']} documents scored)")
    return "\n".join(lines) + "\n"


def _aggregate_markdown(report) -> list[str]:
    agg = report.aggregates()
    if not agg["family"] and not agg["dataset"]:
        return []
    lines = ["", "## Mean change (mean of the per-config changes, in points)", "",
             "Over the configs whose change the model can see: a config whose measured factors the model does not "
             "read (its note in the table above) is left out of the means and counted apart.", "",
             "| Over | OOD configs | Left out (not seen) | Mean change |", "|---|---:|---:|---:|"]
    for kind, label in (("family", "{} shifts"), ("dataset", "all of {}")):
        for a in agg[kind]:
            lines.append(f"| {label.format(a[kind])} | {a['configs']} | {a['blind']} | {fmt_change(a['mean_change'])}"
                         f"{fmt_ci(a.get('ci'), signed=True)}{' *' if a.get('change_excludes_zero') else ''} |")
    return lines


def _detection_markdown(report) -> list[str]:
    """The "OOD detection and calibration" section: per OOD set, AUROC, FPR95, AUPR-In/Out and the ECEs."""
    if not report.ood:
        return []
    lines = ["", "## OOD detection and calibration", "",
             "Telling the ID documents from each OOD set's by the model's confidence (ID positive; higher AUROC and "
             "AUPR, lower FPR95 are better; AUROC 50 is chance), and the expected calibration error (15 bins; lower "
             "is better) on the ID documents compared and on the OOD set. In percent; see Metric conventions.", "",
             "| OOD dataset | Pairing | AUROC | FPR95 | AUPR-In | AUPR-Out | ECE ID | ECE OOD | Note |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in report.ood:
        det = r.get("ood_detection") or {}
        ci = det.get("ci") or {}
        cal, id_cal = r.get("calibration") or {}, r.get("id_calibration") or {}
        note = det.get("note") or cal.get("note") or ""
        cells = [f"{fmt_pct(det.get(k))}{fmt_ci(ci.get(k))}" for k in ("auroc", "fpr95", "aupr_in", "aupr_out")]
        lines.append(f"| {r['dataset']} | {r.get('pairing') or 'paired'} | " + " | ".join(cells) + " | "
                     f"{fmt_pct(id_cal.get('ece'))}{fmt_ci(id_cal.get('ci'))} | "
                     f"{fmt_pct(cal.get('ece'))}{fmt_ci(cal.get('ci'))} | {note} |")
    return lines


def _ablation_markdown(report) -> list[str]:
    """The "Modality ablation" section: the ID set with inputs removed, paired with the ID score."""
    if not report.ablations:
        return []
    m = report.metric_label
    lines = ["", "## Modality ablation (Do-GOOD Table 1)", "",
             f"The ID set scored with an input removed (see Metric conventions); {m} in percent, the change paired "
             "by document.", "",
             f"| Input removed | Docs | ID {m} | Without it | Change (points) | Relative change | Note |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for r in report.ablations:
        ci = r.get("ci") or {}
        lines.append(f"| {'+'.join(r['ablation'])} | {r['documents']} | {fmt_pct(r['id_value'])} | "
                     f"{fmt_pct(r['value'])}{fmt_ci(ci.get('value'))} | {fmt_change(r['change'])}"
                     f"{fmt_ci(ci.get('change'), signed=True)}{' *' if r.get('change_excludes_zero') else ''} | "
                     f"{fmt_rel(r['relative_change'])} | {r.get('note') or ''} |")
    return lines


def _robustness_markdown(report) -> list[str]:
    """The "Robustness across severities" section: per family mCE and mean relative change, a plot, and per
    corruption its severity curve."""
    rob = report.robustness
    if not rob:
        return []
    m = report.metric_label
    ci_name = f" [{round(100 * report.bootstrap['confidence'])}% CI]" if report.bootstrap else ""
    ref = rob.get("reference")
    lines = ["", "## Robustness across severities (ImageNet-C summaries)", "",
             f"OOD configs named `<config>@<s>` are severity `s` of one corruption `<config>`, grouped by the family "
             f"of the shift they sweep. Error = 100 − {m}. Mean relative change = mean over severities of "
             "(score − ID) / ID, in percent. "
             + (f"Corruption error against the reference model `{ref}` (scored on the same documents; ImageNet-C's "
                "definitions, see Metric conventions): CE = Σ_s E_s / Σ_s E_s^ref; relative CE = "
                "Σ_s (E_s − E_clean) / Σ_s (E_s^ref − E_clean^ref); below 1: fewer errors (relative: less "
                "degradation) than the reference. mCE and relative mCE: means over corruptions."
                if ref else f"No corruption error: {rob.get('reference_note') or 'no reference model'}.")
             + " The family means leave out corruptions whose measured changes the model does not see.",
             "", "| Family | Corruptions | Left out (not seen) | Mean relative change |"
             + (" mCE | Relative mCE |" if ref else ""),
             "|---|---:|---:|---:|" + ("---:|---:|" if ref else "")]
    for f in [*rob["families"], {"family": "all", **rob["all"]}]:
        lines.append(f"| {f['family']} | {f['corruptions']} | {f.get('blind', 0)} | "
                     f"{fmt_rel(f['mean_relative_change'])} |"
                     + (f" {fmt_ratio(f['mce'])} | {fmt_ratio(f['relative_mce'])} |" if ref else ""))
    for fam in rob["families"]:
        lines += ["", f"### {fam['family']} shifts", "", f"![{fam['family']} shifts by severity]({fam['plot']})"]
        for sw in rob["sweeps"]:
            if sw["family"] != fam["family"]:
                continue
            ci = sw.get("ci") or {}
            lines += ["", f"**{sw['corruption']}** ({', '.join(sw['shifts']) or '–'}"
                          + (f", {sw['subfamily']}" if sw.get("subfamily") else "") + "): "
                          f"mean relative change {fmt_rel(sw['mean_relative_change'])}"
                          + (f" [{fmt_rel(ci['mean_relative_change'][0])}, {fmt_rel(ci['mean_relative_change'][1])}]"
                             if ci.get("mean_relative_change") else "")
                          + (f"; CE {fmt_ratio(sw['ce'])}{fmt_ratio_ci(ci.get('ce'))}, relative CE "
                             + (f"{fmt_ratio(sw['relative_ce'])}{fmt_ratio_ci(ci.get('relative_ce'))}"
                                if not sw.get("relative_ce_note") else sw["relative_ce_note"])
                             if "ce" in sw else "")
                          + (f". Left out of the means: {sw['note']}" if sw.get("note") else "")
                          + ".", "",
                      f"| Severity | Config | Docs | ID on the same docs | {m}{ci_name} | Change (points) | "
                      "Relative change |" + (f" {ref} | {ref} ID |" if "reference" in sw else ""),
                      "|---:|---|---:|---:|---:|---:|---:|" + ("---:|---:|" if "reference" in sw else "")]
            for k, p in enumerate(sw["curve"]):
                lines.append(f"| {p['severity']} | {p['config']} | {p['documents']} | {fmt_pct(p['id_value'])} | "
                             f"{fmt_pct(p['value'])}{fmt_ci(p.get('ci'))} | {fmt_change(p['change'])}"
                             f"{fmt_ci(p.get('change_ci'), signed=True)} | {fmt_rel(p['relative_change'])} |"
                             + (f" {fmt_pct(sw['reference']['values'][k])} | "
                                f"{fmt_pct(sw['reference']['id_values'][k])} |" if "reference" in sw else ""))
    return lines


# -- plots --------------------------------------------------------------------------------------------------------

def _short(name: str, width: int = 40) -> str:
    """A dataset's name for an axis label: at most ``width`` characters, the end kept (the config)."""
    return name if len(name) <= width else "…" + name[-(width - 1):]


def plot(report, path: str | Path) -> Path:
    """Horizontal bars of the score per dataset, ID on top, OOD sets grouped by shift family (a panel per family,
    a vertical line at the ID score), with interval error bars; each OOD bar labelled with its change. The figure
    is 1,100 px wide whatever the number of datasets; it grows in height, about 22 px a dataset."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report.rows()
    groups: dict[str, list[dict]] = {"in-distribution": [rows[0]]}
    for r in rows[1:]:
        families = r.get("families") or []
        groups.setdefault(" + ".join(families) if families else "OOD", []).append(r)
    heights = [len(g) + 0.8 for g in groups.values()]
    fig, axes = plt.subplots(len(groups), 1, figsize=(11.0, 0.9 + 0.22 * sum(heights) + 0.35 * len(groups)),
                             dpi=100, sharex=True, squeeze=False, gridspec_kw={"height_ratios": heights})
    id_value = _zero(rows[0]["value"])
    top = max([100.0] + [_zero(r["value"]) for r in rows])
    for ax, (family, members) in zip(axes[:, 0], groups.items()):
        values = [_zero(r["value"]) for r in members]
        cis = [(r.get("ci") or {}).get("value") for r in members]
        xerr = None
        if all(ci is not None for ci in cis):
            xerr = np.array([[max(0.0, v - ci[0]) for v, ci in zip(values, cis)],
                             [max(0.0, ci[1] - v) for v, ci in zip(values, cis)]])
        colour = "#4c72b0" if family == "in-distribution" else "#dd8452"
        ys = np.arange(len(members))
        ax.barh(ys, values, color=colour, xerr=xerr, capsize=2, error_kw={"elinewidth": 0.8}, height=0.7)
        ax.axvline(id_value, color="#4c72b0", linewidth=0.8, linestyle="--")
        for y, (v, r) in enumerate(zip(values, members)):
            right = v if xerr is None else v + xerr[1][y]
            mark = "*" if r.get("change_excludes_zero") else ""
            text = f"{v:.1f}" if r["role"] == "id" else f"{v:.1f} ({fmt_change(r['change'])}{mark})"
            if r.get("note"):
                text += " (not seen)"
            ax.annotate(text, (right, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
        ax.set_yticks(ys, [_short(r["dataset"]) for r in members], fontsize=8)
        ax.invert_yaxis()
        ax.set_ylim(len(members) - 0.4, -0.6)
        ax.set_title(family if family == "in-distribution" else f"{family} shifts ({len(members)})",
                     fontsize=9, loc="left")
        ax.set_xlim(0, top * 1.18)
    axes[-1, 0].set_xlabel(f"{report.metric_label} (%)")
    title = f"{report.model}: ID vs OOD"
    if report.bootstrap:
        title += f" ({round(100 * report.bootstrap['confidence'])}% bootstrap CI; * the change's interval excludes 0)"
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)
    return path


def _zero(x) -> float:
    return 0.0 if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def plot_severities(report, family: str, path: str | Path) -> Path:
    """Score against severity for each corruption of ``family`` (:func:`dogood.eval.robustness.plot_family`)."""
    from dogood.eval.robustness import plot_family

    sweeps = [s for s in report.robustness["sweeps"] if s["family"] == family]
    return plot_family(path, family, sweeps, report.metric_label, report.model, report.robustness.get("reference"),
                       report.bootstrap["confidence"] if report.bootstrap else None)


# -- the report folder --------------------------------------------------------------------------------------------

def write_report(report, out_dir: str | Path, stem: str = "report") -> dict[str, Path]:
    """Write ``<stem>.md``, ``.csv``, ``.json`` and ``.png`` (and the severity plots) as the folder ``out_dir``;
    returns their paths.

    The report is made whole in a hidden ``.<folder>.partial-<pid>`` folder, marked as dogood's, and renamed into
    place as one folder (:func:`dogood.core.fs.commit_folder`), the mark dropped after: an interrupted write leaves
    the earlier report as it was (put back on the next run if the kill fell between the two renames) and, at
    worst, a marked partial folder the next run removes, never files of two reports. A folder that is not a report
    dogood wrote is never replaced (:func:`check_report_folder`). A write that fails (a full disk) names the file.
    """
    out = Path(out_dir)
    check_report_folder(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DogoodError(f"cannot make the report folder's parent {out.parent}: {exc.strerror or exc}") from None
    recover_folder(out, is_report_folder)
    try:
        tmp = partial_folder(out)
    except OSError as exc:
        raise DogoodError(f"cannot write the report beside {out}: {exc.strerror or exc}") from None
    names = {ext: f"{stem}.{ext}" for ext in ("md", "csv", "json", "png")}
    writers = [(names["md"], lambda p: p.write_text(report.to_markdown(), encoding="utf-8")),
               (names["csv"], lambda p: p.write_text(report.to_csv(), encoding="utf-8")),
               (names["json"], lambda p: p.write_text(report.to_json(), encoding="utf-8")),
               (names["png"], report.plot)]
    for family, name in report.severity_plots().items():
        writers.append((name, lambda p, f=family: report.plot_severities(f, p)))
        names[name] = name
    try:
        for name, write in writers:
            try:
                write(tmp / name)
            except OSError as exc:
                raise DogoodError(f"cannot write the report file {out / name}: {exc.strerror or exc}") from None
        try:
            commit_folder(tmp, out)
        except OSError as exc:
            raise DogoodError(f"cannot put the report in place at {out}: {exc.strerror or exc}") from None
    except BaseException:
        remove_tree(tmp)
        raise
    (out / PARTIAL_MARKER).unlink(missing_ok=True)
    return {key: out / name for key, name in names.items()}


def is_report_folder(folder: Path) -> bool:
    """Whether ``folder`` is a report dogood eval wrote: its ``report.json`` (or an earlier version's
    ``layout_report.json``) is one, and it holds nothing else than a report's files."""
    for name, keys in (("report.json", {"model", "task", "metric", "datasets"}),
                       ("layout_report.json", {"task", "metric", "datasets"})):
        try:
            info = fs.read_json(folder / name, what=name, follow=False)
        except (OSError, fs.FileRefused):
            continue
        if isinstance(info, dict) and keys <= set(info):
            return all(_report_file(p) for p in folder.iterdir())
    return False


def _report_file(path: Path) -> bool:
    name = path.name
    return not is_link(path) and path.is_file() and (
        name in REPORT_FILES or name in OLD_LAYOUT_FILES or name == PARTIAL_MARKER
        or (name.startswith("severity-") and name.endswith(".png")))


def check_report_folder(out: Path) -> None:
    """Refuse, before anything is scored, a report folder that is a file, a link, or a folder holding anything
    dogood eval did not write (``--out`` or the default ``eval/<model>``): the report replaces the folder whole."""
    out = Path(out)
    if is_link(out):
        raise DogoodError(f"report folder {out} is a symbolic link; dogood writes no report through a link: pick "
                          "another --out")
    if out.exists() and not out.is_dir():
        raise DogoodError(f"report folder {out} is a file; the report is a folder (report.md, .csv, .json, .png)")
    try:
        empty = not out.is_dir() or not any(out.iterdir())
    except OSError as exc:
        raise DogoodError(f"report folder {out}: cannot list it ({exc.strerror or exc})") from None
    if empty or is_report_folder(out):
        return
    entries = sorted(p.name for p in out.iterdir())
    theirs = sorted(p.name for p in out.iterdir() if not _report_file(p)) or entries
    raise DogoodError(f"report folder {out} holds {theirs[0]}, which is not a dogood eval report (the report "
                      "replaces the folder whole); refusing to replace it: pick another --out (or move the folder "
                      "away)")


def default_folder(model_name: str) -> Path:
    """``eval/<model name>`` (characters other than letters, digits and ``_.+-`` as ``_``)."""
    import re

    return Path("eval") / re.sub(r"[^A-Za-z0-9_.+-]", "_", model_name)


__all__ = ["REPORT_FILES", "check_report_folder", "default_folder", "is_report_folder", "plot",
           "plot_severities", "to_csv", "to_json", "to_markdown", "write_report"]
