"""Score a model on an in-distribution dataset and its OOD variants: Do-GOOD's Table 2, for every task.

:func:`evaluate` resolves the datasets, picks the task (:mod:`dogood.eval.tasks`: the datasets' own, or ``ocr``
or ``layout``), predicts, pairs ID and OOD by document, bootstraps over documents and returns an
:class:`~dogood.eval.report.EvalReport`: each score in percent, each OOD set's change from ID in points (negative:
worse), its relative change, intervals, means per shift family and per OOD dataset over the configs the model can
see, OOD detection and calibration from the model's confidences (:mod:`dogood.eval.ood_detection`,
:mod:`dogood.eval.calibration`), modality ablations (:mod:`dogood.eval.ablation`, Do-GOOD Table 1), severity
sweeps (:mod:`dogood.eval.robustness`) and the task's own figures. The metric is the one the dataset's paper uses
(Do-GOOD, He et al. 2023, Sec. 5 "Implementation Details"): entity F1 for FUNSD-style token classification,
accuracy for RVL-CDIP-style document classification, ANLS for DocVQA-style QA.

A dataset is named as on the command line (``dogood eval --id ... --ood ...``): a dataset folder built by dogood
(``out/funsd-l``: every config in it, or one with ``out/funsd-l:merge``), a Hub dataset id (optionally
``:config``), a FUNSD-layout folder, or a source kind (``funsd``, ``rvl_cdip``); in Python also a
``datasets.Dataset``. OOD sets of shifted ID documents are scored paired, sets of other documents unpaired
(:mod:`dogood.eval.pairing`). A model given boxes reads them at its own convention, and is refused a dataset whose
``bboxes`` are in another. Documents are read and predicted in batches, so a 40,000-page test split is never held
in memory at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dogood.core.errors import ModelError
from dogood.eval import ablation as abl
from dogood.eval import calibration, ood_detection
from dogood.eval.bootstrap import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    bootstrap_values,
    percentile_interval,
    unpaired_values,
)
from dogood.eval.datasets import (
    EvalDataset,
    EvalError,
    as_datasets,
    data_box_level,
    is_one_dataset,
    measured_factors,
    refuse_other_boxes,
)
from dogood.eval.pairing import id_documents, pair_sets, training_overlap
from dogood.eval.report import FAMILIES, EvalReport
from dogood.eval.robustness import severity_sweeps
from dogood.eval.scoring import (
    Context,
    add_change,
    add_interval,
    calibration_of,
    detection_of,
    predict,
    score_row,
)
from dogood.eval.tasks import Scored, Task, make_task


def evaluate(model: Any, id_dataset: Any, ood_datasets: Any = (), *, split: str = "test", limit: int | None = None,
             batch_size: int = 32, progress: bool = False, require_same_ids: bool = False,
             resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE,
             kieval: bool = False, anls_official: bool = False, reference: Any = None,
             reference_note: str | None = None, task: str | None = None, ablate: Sequence[str] = ()) -> EvalReport:
    """Score ``model`` on the ID dataset and on every OOD dataset; the :class:`EvalReport` of all, in percent.

    Parameters
    ----------
    model
        A model object (``name``, ``task``, ``predict``; optionally ``sees``, ``ablations``) or what
        :func:`dogood.models.load_model` takes: ``"baseline"`` (the CRF baseline of the data's box convention,
        trained on FUNSD train on first use), a model file or folder, a predictions file or folder.
    id_dataset, ood_datasets
        Each a built folder (all its configs), ``folder:config``, a Hub id, a FUNSD-layout folder, ``funsd`` /
        ``rvl_cdip``, a ``datasets.Dataset`` or an :class:`EvalDataset`; ``ood_datasets`` one or a list.
    split
        The split read from names and ``DatasetDict`` objects.
    limit
        Only the first ``limit`` ID documents (and their OOD counterparts; of an unpaired set, its first).
    batch_size, progress
        Documents per ``predict`` call; a progress bar.
    require_same_ids
        Refuse OOD sets whose documents differ from the ID set's (instead of a warning).
    resamples, seed, confidence
        The bootstrap over documents (0 resamples: no intervals).
    kieval, anls_official
        KIEval entity scores (``token`` task); ANLS as the official DocVQA scorer (``qa`` task).
    reference, reference_note
        The model the corruption errors of severity configs (``<config>@<s>``) are divided by; without one, why.
    task
        A registered task (:data:`dogood.eval.tasks.TASKS`): ``ocr``, ``layout``; default: the datasets' own.
    ablate
        Inputs to remove, one ablation row each: ``image``, ``layout``, ``text`` or ``+``-joined sets.
    """
    id_set, ood_sets = _resolve_sets(id_dataset, ood_datasets, split)
    job = make_task(task or id_set.task, kieval=kieval, anls_official=anls_official)
    model, reference = (resolve_model(m, [id_set, *ood_sets], job) for m in (model, reference))
    combos = abl.parse_ablations(ablate)
    _check_request(job, model, reference, id_set, ood_sets, combos, resamples, confidence)
    warnings: list[str] = []
    ood_sets = job.check(id_set, ood_sets, warnings)
    id_ids, pairs = pair_sets(id_set, ood_sets, limit, require_same_ids, warnings)
    warnings += [w for d, p in zip(ood_sets, pairs) if (w := training_overlap(model, d, p.docs))]
    kw = {"batch_size": batch_size, "progress": progress}
    boot = (resamples, seed, confidence)
    sees = model_sees(model)
    scored_ids = id_documents(id_ids, pairs, whole=bool(combos))
    id_scored = predict(model, job, id_set, scored_ids, **kw)
    id_row = score_row(id_scored, scored_ids)
    id_row["calibration"] = calibration_of(id_scored, scored_ids, resamples, seed, 0, confidence)
    if resamples:
        (vals,) = bootstrap_values(job, [id_scored.stats(scored_ids)], resamples, seed)
        id_row["ci"] = {"value": percentile_interval(vals, confidence)}
    ood_scored = [predict(model, job, d, p.docs, **kw) for d, p in zip(ood_sets, pairs)]
    ood_rows = [_ood_row(job, id_scored, scored_ids, id_row, s, d, p, sees, *boot)
                for s, d, p in zip(ood_scored, ood_sets, pairs)]
    report = EvalReport(
        model=model.name, task=job.name, id=id_row, ood=ood_rows, sees=None if sees is None else sorted(sees),
        box_level=getattr(model, "box_level", None) if getattr(model, "takes_boxes", False) else None,
        bootstrap={"resamples": resamples, "seed": seed, "confidence": confidence} if resamples else None,
        warnings=warnings, conventions=_conventions(job, resamples, seed, bool(ood_rows), combos, ood_sets),
        ablations=[_ablation_row(model, job, id_set, id_scored, scored_ids, id_row, combo, sees, kw, *boot)
                   for combo in combos],
        model_description=getattr(model, "description", None), model_options=getattr(model, "options", None) or None)
    ctx = Context(model, job, id_set, ood_sets, pairs, scored_ids, id_scored, ood_scored, report, *boot, **kw)
    report.aggregate_ci = _aggregate_intervals(ctx)
    report.robustness = severity_sweeps(ctx, reference, reference_note)
    report.summaries = job.summaries(ctx)
    return report


def _resolve_sets(id_dataset: Any, ood_datasets: Any, split: str) -> tuple[EvalDataset, list[EvalDataset]]:
    """The ID set (one dataset) and the OOD sets, from whatever names them."""
    id_sets = as_datasets(id_dataset, split)
    if len(id_sets) != 1:
        raise EvalError(f"the ID dataset names {len(id_sets)} datasets ({', '.join(d.name for d in id_sets)}); "
                        "pick one config (folder:CONFIG)")
    if is_one_dataset(ood_datasets):
        ood_datasets = [ood_datasets]
    return id_sets[0], [d for spec in list(ood_datasets) for d in as_datasets(spec, split)]


def resolve_model(model: Any, datasets: Sequence[EvalDataset], task: Task, **options: Any) -> Any:
    """A model object from what :func:`dogood.models.load_model` takes (a model object is returned as it is).

    ``"baseline"`` is the task's baseline at the datasets' box convention; the token baseline is trained on FUNSD
    train and saved where ``dogood train-baseline`` saves it when it is missing (5-15 s), as ``dogood build``
    trains the Move shift's scorer."""
    if not isinstance(model, (str, Path)):
        return model
    from dogood.models import load_model

    if str(model) == "baseline":
        _, extra = task.reference_spec(data_box_level(datasets))
        options = {**extra, **options}
        if options.get("box_level"):  # a CRF baseline, of a box convention: FUNSD train is there to train it
            _train_missing_baseline(options["box_level"])
    return load_model(model, task=task.model_task, **options)


def _train_missing_baseline(level: str) -> None:
    """Train the token baseline at ``level`` on FUNSD train and save it at its default path, when it is missing."""
    from dogood.core.progress import one_time_step
    from dogood.models import default_baseline_path

    path = default_baseline_path(level)
    if path.is_file():
        return
    from dogood.models.baseline import train_baseline
    from dogood.sources.funsd import FunsdSource

    source = FunsdSource(split="train")
    with one_time_step(f"no {level}-level baseline at {path}: training it on the {len(source.ids())} FUNSD train "
                       "forms", cached_in=path.parent):
        train_baseline([source.load(i) for i in source.ids()], box_level=level).save(path)


def _check_request(task: Task, model: Any, reference: Any, id_set: EvalDataset, ood_sets: list[EvalDataset],
                   combos: list, resamples: int, confidence: float) -> None:
    """Refuse what cannot be scored as asked, before any document is read."""
    if not ood_sets and not combos:
        raise EvalError("give at least one OOD dataset to compare with the ID dataset (or an input to --ablate)")
    asked = {d.task for d in [id_set, *ood_sets]}
    if len(asked) > 1:
        raise EvalError("the ID and OOD datasets ask different tasks: " +
                        ", ".join(f"{d.name} ({d.task})" for d in [id_set, *ood_sets]))
    if id_set.task not in task.reads:
        raise EvalError(f"the {task.name} task ({task.title}) scores {' or '.join(task.reads)} datasets, not "
                        f"{id_set.name!r} ({id_set.task})")
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 0:
        raise EvalError(f"the number of bootstrap resamples must be 0 or more, got {resamples!r}")
    if not 0 < confidence < 1:
        raise EvalError(f"the interval's confidence must be in (0, 1), got {confidence}")
    if combos:
        abl.check_supported(model, combos)
    refuse_other_boxes(model, [id_set, *ood_sets])
    if reference is not None and reference is not model:
        refuse_other_boxes(reference, [id_set, *ood_sets])


def _ood_row(task: Task, id_scored: Scored, id_ids: list[str], id_row: dict, scored: Scored, d: EvalDataset,
             pair, sees, resamples: int, seed: int, confidence: float) -> dict:
    """One OOD set's row: its scores, the change from ID on the same documents (all ID documents when unpaired),
    the interval, what its shifts are and whether the model can see them, calibration and OOD detection."""
    docs, alone = pair.docs, pair.unpaired
    row = score_row(scored, docs)
    ref = id_row if alone else score_row(id_scored, docs)
    add_change(row, ref["value"])
    row["pairing"] = "unpaired" if alone else "paired"
    row["paired"] = {"shared": 0 if alone else len(docs), "id_only": pair.id_only, "ood_only": pair.ood_only}
    if alone:
        row["id_documents"] = len(id_ids)
    if "kieval" in ref:
        row["id_kieval"] = ref["kieval"]
    row["shifts"] = sorted(scored.shifts)
    row["families"] = families_of(scored.shifts)
    row["factors"] = measured_factors(d)
    row["note"] = blind_spot(row["factors"], sees)
    if resamples:
        add_interval(row, task, id_scored.stats(id_ids if alone else docs), scored.stats(docs), alone, resamples,
                     seed, confidence)
    row["calibration"] = calibration_of(scored, docs, resamples, seed, 1 if alone else 0, confidence)
    row["id_calibration"] = (id_row["calibration"] if alone else
                             calibration_of(id_scored, docs, resamples, seed, 0, confidence))
    row["ood_detection"] = detection_of(id_scored, scored, id_ids if alone else docs, docs, alone, resamples, seed,
                                        confidence)
    return row


def _ablation_row(model: Any, task: Task, id_set: EvalDataset, id_scored: Scored, ids: list[str], id_row: dict,
                  combo: tuple[str, ...], sees, kw: dict, resamples: int, seed: int, confidence: float) -> dict:
    """The ID set scored without the inputs ``combo``, paired by document with the ID score."""
    scored = predict(model, task, id_set, ids, ablate=combo, **kw)
    row = score_row(scored, ids)
    row["dataset"] = f"{id_set.name} {abl.ablation_name(combo)}"
    add_change(row, id_row["value"])
    row.update(ablation=list(combo), note=abl.blind_note(combo, sees))
    if resamples:
        add_interval(row, task, id_scored.stats(ids), scored.stats(ids), False, resamples, seed, confidence)
    return row


def _conventions(task: Task, resamples: int, seed: int, has_ood: bool, combos: list,
                 ood_sets: list[EvalDataset]) -> list[str]:
    """The report's "Metric conventions": the task's, then the intervals', detection's, ablation's, severities'."""
    out = list(task.conventions())
    if resamples:
        out.append(
            f"Intervals: percentile bootstrap, {resamples} resamples drawn with numpy.random.default_rng({seed}); each "
            "resample draws as many documents as were scored, with replacement, and recomputes the score from the "
            f"drawn documents ({task.pooled}). ID, OOD and the change use the same drawn documents when the OOD set "
            "is paired (its documents are ID documents); an unpaired OOD set (other documents) draws its own "
            f"documents with numpy.random.default_rng([{seed}, 1]), independently of the ID draws, and the change's "
            "resamples are the OOD resample minus the ID resample.")
    if has_ood and task.confidences:
        out += [ood_detection.CONVENTION, calibration.CONVENTION]
    if combos:
        out.append(abl.CONVENTION)
    if any(d.config and "@" in d.config for d in ood_sets):
        from dogood.eval.robustness import CITES, REFERENCE_FLOOR

        out.append(
            "Severity configs (<config>@<s>): error = 100 − score; CE, relative CE, mCE and relative mCE as "
            f"{CITES.citation.markdown()} ({CITES.section}) define them, with the reference model's errors in place "
            "of AlexNet's; the relative CE sums each severity's error above the clean (ID) error, and is reported only "
            f"where the reference's own error grows by at least {REFERENCE_FLOOR:g} point(s) per severity on "
            "average (else the ratio divides by noise: n/a). Their intervals: the same paired bootstrap, every "
            "severity, the ID set and the reference drawn on the same documents (none when the severities were "
            "scored on different documents or unpaired). Family means leave out corruptions the model cannot see.")
    return out


def _aggregate_intervals(ctx: Context) -> dict[str, list[float]]:
    """The interval of each family's and OOD dataset's mean change (the configs the model can see), where its
    configs were all scored on the same documents: each resample draws them once for all the group's configs."""
    report, pairs = ctx.report, ctx.pairs
    out: dict[str, list[float]] = {}
    if not ctx.resamples:
        return out
    for kind, groups in zip(("family", "dataset"), report.aggregate_groups()):
        for name, members in groups.items():
            docs, alone = pairs[members[0]].docs, pairs[members[0]].unpaired
            if any(pairs[j].docs != docs or pairs[j].unpaired != alone for j in members):
                continue  # configs scored on different documents: no joint resample
            stats = [ctx.ood_scored[j].stats(docs) for j in members]
            if alone:
                (id_vals,), vals = unpaired_values(ctx.task, [ctx.id_scored.stats(ctx.id_ids)], stats, ctx.resamples,
                                                   ctx.seed)
            else:
                id_vals, *vals = bootstrap_values(ctx.task, [ctx.id_scored.stats(docs), *stats], ctx.resamples,
                                                  ctx.seed)
            out[f"{kind}:{name}"] = percentile_interval(np.mean([v - id_vals for v in vals], axis=0), ctx.confidence)
    return out


def model_sees(model: Any) -> frozenset[str] | None:
    """What the model is given, from its ``sees`` attribute (``text``, ``layout``, ``image``); ``None`` if it does
    not say."""
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


def blind_spot(factors: dict | None, sees: frozenset[str] | None) -> str | None:
    """A note for an OOD row whose config, by its measured factor table (:mod:`dogood.measures.factors`, the
    build's statistics), changed only what the model cannot see: ``None`` when the model sees some change, when it
    does not say what it sees, or when there is no table (a dataset not built by dogood). Rows with a note are left
    out of the family and dataset means."""
    from dogood.measures.factors import unseen

    if sees is None or not factors:
        return None
    blind = unseen(factors, sees)
    if not blind:
        return None
    return (f"measured changes only {', '.join(name.replace('_', ' ') for name in blind)}, which the model does not "
            f"see (it sees {', '.join(sorted(sees)) or 'nothing dogood knows of'})")
