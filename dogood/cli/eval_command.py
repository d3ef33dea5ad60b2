"""``dogood eval``: score a model on an ID dataset and its OOD variants, any task; write a report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dogood.cli.common import count
from dogood.core.errors import DogoodError


def _resamples(value: str) -> int:
    """An argparse type: a whole number of at least 0."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {n}")
    return n


def task_names() -> list[str]:
    """The registered tasks, from the module names of :mod:`dogood.eval.tasks` (one module per task, named by it),
    without importing them: ``dogood --help`` stays light."""
    import pkgutil

    import dogood

    folder = Path(dogood.__file__).parent / "eval" / "tasks"
    return sorted(m.name for m in pkgutil.iter_modules([str(folder)]) if m.name != "base")


def add_parser(sub) -> None:
    p = sub.add_parser("eval", help="score a model on an ID dataset and its OOD variants; write a report")
    p.add_argument("--model", default="baseline",
                   help="'baseline' (default; trained on FUNSD train on first use for token classification), a "
                        ".dogood-model file, a predictions .jsonl file or folder, a Hugging Face model folder or Hub "
                        "id, an OCR engine ('tesseract', 'rapidocr'; with --task ocr), 'pipeline:ENGINE+TAGGER' (OCR, "
                        "then a tagger: pipeline:tesseract+baseline), or with --task layout a folder of COCO results")
    p.add_argument("--id", dest="id_dataset", required=True, metavar="DATASET",
                   help="the in-distribution dataset: a built folder[:config], a Hub id[:config], a FUNSD-layout "
                        "folder, or funsd / rvl_cdip")
    p.add_argument("--ood", nargs="+", default=[], metavar="DATASET",
                   help="OOD datasets, named as --id; a built folder without :config means all its configs. Sets of "
                        "shifted ID documents are scored paired, sets of other documents unpaired")
    p.add_argument("--ablate", action="append", default=[], metavar="INPUT",
                   help="also score the ID set without an input: image, layout or text, or several joined by + "
                        "(image+layout: text only); repeatable (Do-GOOD Table 1)")
    p.add_argument("--split", default="test", help="split to score (default: test)")
    p.add_argument("--out", help="report folder (default: eval/<model name>)")
    p.add_argument("--limit", type=count, help="only the first N documents of the ID set (and the OOD documents paired with them)")
    p.add_argument("--labels", help="comma-separated label names in the model's id order (Hugging Face models whose "
                                    "config has generic LABEL_n names)")
    p.add_argument("--device", default="cpu", help="torch device for Hugging Face models (default: cpu)")
    p.add_argument("--batch-size", type=count, default=8, help="documents per forward pass for Hugging Face models")
    p.add_argument("--box-level", choices=["segment", "word"],
                   help="box convention the model was trained on: a Hugging Face model's (default: segment for token "
                        "classifiers, as the LayoutLMv3 FUNSD data; word for document classifiers); with --model "
                        "baseline, which trained baseline to load (default: the data's). Data whose bboxes are in "
                        "another convention is refused")
    p.add_argument("--require-same-ids", action="store_true",
                   help="refuse OOD sets whose document ids differ from the ID set's (default: score the shared "
                        "documents, with a warning)")
    p.add_argument("--bootstrap", type=_resamples, default=1000, metavar="N",
                   help="bootstrap resamples for the intervals (default: 1000; 0: no intervals)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default: 0)")
    p.add_argument("--kieval", action="store_true", help="add KIEval entity-level scores (token classification)")
    p.add_argument("--anls-official", action="store_true",
                   help="DocVQA-style datasets: score ANLS as the official DocVQA/RRC script (default: the paper's formula)")
    p.add_argument("--reference", default="auto", metavar="MODEL",
                   help="the model whose errors the corruption errors of severity configs (<config>@<s>) are divided "
                        "by, named as --model (default: the baseline of the task when one is trained; 'none': no "
                        "corruption errors)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--task", choices=["auto", *task_names()], default="auto",
                   help="auto (default): the datasets' task, scored by --model; ocr: score an OCR engine (--model "
                        "tesseract / rapidocr) against the FUNSD-style pages' exact words and boxes; layout: region "
                        "detections (--model or --predictions: a folder of COCO results), scored with COCO mAP "
                        "(docs/layout-analysis.md)")
    p.add_argument("--predictions", metavar="PATH",
                   help="predictions made elsewhere, instead of --model: a JSONL file or folder, or with --task layout "
                        "a folder of COCO results JSON files, <config>.json per dataset")
    p.add_argument("--ocr-option", action="append", default=[], metavar="KEY=VALUE",
                   help="an OCR engine's option, repeatable, written in the report: Tesseract's psm, oem, lang or any "
                        "-c variable (psm=11); RapidOCR's threads")
    p.set_defaults(func=cmd_eval)


def _reference_model(args, model, task, ood_sets, options: dict):
    """``--reference``: the model the corruption errors are divided by, and a note when there is none.

    Loaded only when some OOD config is a severity config (``<config>@<s>``). ``auto``: the task's baseline when
    it is trained (:meth:`dogood.eval.tasks.Task.reference_spec`).
    """
    from dogood.eval.datasets import data_box_level
    from dogood.eval.robustness import split_severity
    from dogood.models import load_model

    spec = args.reference
    if spec == "none":
        return None, "--reference none"
    if not any(split_severity(d.config)[1] for d in ood_sets):
        return None, None
    if spec == "auto":
        spec, extra = task.reference_spec(data_box_level(ood_sets))
        if spec is None:
            return None, task.no_reference
        options = {**options, **extra}
        try:
            ref = load_model(spec, task=task.model_task, **options)
        except DogoodError as exc:
            return None, f"no trained baseline ({exc}; or pass --reference MODEL)"
        return (model if getattr(ref, "source", None) == getattr(model, "source", 0) else ref), None
    if spec == args.model and (spec != "baseline" or options.get("box_level") == getattr(model, "box_level", None)):
        return model, None
    try:
        return load_model(spec, task=task.model_task, **options), None
    except DogoodError as exc:
        raise DogoodError(f"--reference {spec}: {exc}") from None


def cmd_eval(args) -> int:
    from dogood.core.hub import HubUnreachable
    from dogood.eval import evaluate, resolve_datasets
    from dogood.eval.run import resolve_model
    from dogood.eval.tasks import TASKS, make_task
    from dogood.eval.writers import check_report_folder, default_folder
    from dogood.models.ocr_engine import parse_options

    if args.quiet:
        import datasets

        datasets.disable_progress_bars()
    if not args.ood and not args.ablate:
        raise DogoodError("give --ood DATASET [DATASET ...] (or --ablate INPUT) to compare with --id")
    hint = TASKS[args.task].model_hint if args.task in TASKS else None
    if hint and args.model == "baseline" and not args.predictions:
        raise DogoodError(hint)
    if args.predictions:
        if args.model != "baseline":
            raise DogoodError("give the model's predictions with --predictions or --model, not both")
        if not Path(args.predictions).exists():
            raise DogoodError(f"--predictions {args.predictions} does not exist")
        args.model = args.predictions
    if args.out:
        check_report_folder(Path(args.out))
    id_sets = resolve_datasets(args.id_dataset, args.split)
    if len(id_sets) != 1:
        names = ", ".join(d.name for d in id_sets)
        raise DogoodError(f"--id names {len(id_sets)} datasets ({names}); pick one with {args.id_dataset}:CONFIG")
    ood_sets = [d for spec in args.ood for d in resolve_datasets(spec, args.split)]
    task = make_task(id_sets[0].task if args.task == "auto" else args.task, kieval=args.kieval,
                     anls_official=args.anls_official)
    options = {"device": args.device, "batch_size": args.batch_size}
    if args.labels:
        options["labels"] = [x.strip() for x in args.labels.split(",")]
    if args.box_level:
        options["box_level"] = args.box_level
    if args.ocr_option:
        options["ocr_options"] = parse_options(args.ocr_option)
    try:
        model = resolve_model(args.model, [*id_sets, *ood_sets], task, **options)
    except HubUnreachable as exc:
        raise HubUnreachable(f"--model: {exc}; pass a local model folder to --model", model=exc.model) from None
    if args.ocr_option and not getattr(model, "options", None):
        raise DogoodError(f"--ocr-option applies to OCR engines (--model tesseract, rapidocr or pipeline:...), not "
                          f"to {model.name!r}")
    out = Path(args.out) if args.out else default_folder(model.name)
    check_report_folder(out)  # the default folder too: a folder dogood eval did not write is never replaced
    reference, reference_note = _reference_model(args, model, task, ood_sets, options)
    report = evaluate(model, id_sets[0], ood_sets, limit=args.limit, progress=not args.quiet,
                      require_same_ids=args.require_same_ids, resamples=args.bootstrap, seed=args.seed,
                      kieval=args.kieval, anls_official=args.anls_official, reference=reference,
                      reference_note=reference_note, task=task.name, ablate=args.ablate)
    for warning in report.warnings:
        print(f"dogood: warning: {warning}", file=sys.stderr)
    paths = report.write(out)
    print(report.to_markdown().split("## Per dataset")[0].rstrip())
    print()
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0
