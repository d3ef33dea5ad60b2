"""``dogood eval``: score a model on an ID dataset and its OOD variants; write a report."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from dogood.cli.common import count
from dogood.core.errors import DogoodError

def add_parser(sub) -> None:
    p = sub.add_parser("eval", help="score a model on an ID dataset and its OOD variants; write a report")
    p.add_argument("--model", default="baseline",
                   help="'baseline' (default), a .dogood-model file, a predictions .jsonl file or folder, "
                        "a Hugging Face model folder or Hub id, an OCR engine ('tesseract', 'rapidocr'; with --task "
                        "ocr), or 'pipeline:ENGINE+TAGGER' (OCR, then a tagger: pipeline:tesseract+baseline)")
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
    p.add_argument("--batch-size", type=int, default=8, help="documents per forward pass for Hugging Face models")
    p.add_argument("--box-level", choices=["segment", "word"],
                   help="box convention the model was trained on: a Hugging Face model's (default: segment for token "
                        "classifiers, as the LayoutLMv3 FUNSD data; word for document classifiers); with --model "
                        "baseline, which trained baseline to load (default: the data's). Data whose bboxes are in "
                        "another convention is refused")
    p.add_argument("--require-same-ids", action="store_true",
                   help="refuse OOD sets whose document ids differ from the ID set's (default: score the shared "
                        "documents, with a warning)")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N",
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
    p.add_argument("--task", choices=["auto", "ocr", "layout"], default="auto",
                   help="auto (default): the datasets' task, scored by --model; ocr: score an OCR engine (--model "
                        "tesseract / rapidocr) against the FUNSD-style pages' exact words and boxes; layout: region "
                        "detections read from --predictions, scored with COCO mAP (docs/layout-analysis.md)")
    p.add_argument("--predictions", metavar="FOLDER",
                   help="--task layout: a folder of COCO results JSON files, <config>.json per dataset")
    p.set_defaults(func=cmd_eval)


def _reference_model(args, model, task: str, ood_sets, options: dict):
    """``--reference``: the model the corruption errors are divided by, and a note when there is none.

    Loaded only when some OOD config is a severity config (``<config>@<s>``). ``auto``: the task's baseline
    when it is trained (the CRF for token classification, the document baseline for document classification).
    """
    from dogood.models import default_baseline_path, default_document_baseline_path, load_model
    from dogood.eval.robustness import split_severity

    spec = args.reference
    if spec == "none":
        return None, "--reference none"
    if not any(split_severity(d.config)[1] for d in ood_sets):
        return None, None
    if spec == "auto" and task == "ocr":
        return None, "no default reference for OCR engines (pass --reference tesseract, say)"
    if spec == "auto":
        from dogood.eval.datasets import data_box_level

        level = data_box_level(ood_sets) or "segment"
        path = {"token": lambda: default_baseline_path(level), "document": default_document_baseline_path}.get(task)
        if path is None:
            return None, f"no baseline for {task} datasets to compare with (pass --reference MODEL)"
        if not path().is_file():
            how = "dogood train-baseline" + (" --task document" if task == "document" else f" --box-level {level}")
            return None, f"no trained baseline at {path()} (train one with `{how}`, or pass --reference MODEL)"
        spec = "baseline"
        if task == "token":
            options = {**options, "box_level": level}
    if spec == args.model and (spec != "baseline" or options.get("box_level") == getattr(model, "box_level", None)):
        return model, None
    try:
        return load_model(spec, task=task, **options), None
    except DogoodError as exc:
        raise DogoodError(f"--reference {spec}: {exc}") from None


def cmd_eval(args) -> int:
    from dogood.eval import evaluate, resolve_datasets
    from dogood.eval.report import check_report_folder
    from dogood.models import load_model

    if args.quiet:
        import datasets

        datasets.disable_progress_bars()

    if args.task == "layout":  # its own report files (layout_report.*), written by dogood.eval.layout_task
        from dogood.cli.layout_eval import run_layout_eval

        return run_layout_eval(args)
    if not args.ood and not args.ablate:
        raise DogoodError("give --ood DATASET [DATASET ...] (or --ablate INPUT) to compare with --id")
    if args.out:
        check_report_folder(Path(args.out))
    id_sets = resolve_datasets(args.id_dataset, args.split)
    if len(id_sets) != 1:
        names = ", ".join(d.name for d in id_sets)
        raise DogoodError(f"--id names {len(id_sets)} datasets ({names}); pick one with {args.id_dataset}:CONFIG")
    ood_sets = [d for spec in args.ood for d in resolve_datasets(spec, args.split)]
    task = id_sets[0].task if args.task == "auto" else args.task
    options = {"device": args.device, "batch_size": args.batch_size}
    if args.labels:
        options["labels"] = [x.strip() for x in args.labels.split(",")]
    if args.box_level:
        options["box_level"] = args.box_level
    elif args.model == "baseline":  # the baseline trained at the data's convention
        from dogood.eval.datasets import data_box_level

        options["box_level"] = data_box_level([*id_sets, *ood_sets]) or "segment"
    from dogood.core.hub import HubUnreachable

    try:
        model = load_model(args.model, task=task, **options)
    except HubUnreachable as exc:
        raise HubUnreachable(f"--model: {exc}; pass a local model folder to --model", model=exc.model) from None
    out = Path(args.out) if args.out else Path("eval") / re.sub(r"[^A-Za-z0-9_.+-]", "_", model.name)
    check_report_folder(out)  # the default folder too: a folder dogood eval did not write is never replaced
    reference, reference_note = _reference_model(args, model, task, ood_sets, options)
    report = evaluate(model, id_sets[0], ood_sets, limit=args.limit, progress=not args.quiet,
                      require_same_ids=args.require_same_ids, resamples=args.bootstrap, seed=args.seed,
                      kieval=args.kieval, anls_official=args.anls_official, reference=reference,
                      reference_note=reference_note, task=None if args.task == "auto" else args.task,
                      ablate=args.ablate)
    for warning in report.warnings:
        print(f"dogood: warning: {warning}", file=sys.stderr)
    paths = report.write(out)
    print(report.to_markdown().split("## Per dataset")[0].rstrip())
    print()
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0
