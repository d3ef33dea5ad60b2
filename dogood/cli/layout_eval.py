"""``dogood eval --task layout``: region predictions scored with COCO mAP (:mod:`dogood.eval.layout_task`)."""

from __future__ import annotations

from pathlib import Path

from dogood.core.errors import DogoodError


def run_layout_eval(args) -> int:
    from dogood.eval import resolve_datasets
    from dogood.eval.layout_task import evaluate_layout

    if not args.predictions:
        raise DogoodError("--task layout needs --predictions FOLDER (COCO results JSON, <config>.json per dataset)")
    if not Path(args.predictions).is_dir():
        raise DogoodError(f"--predictions {args.predictions} is not a folder")
    id_sets = resolve_datasets(args.id_dataset, args.split)
    if len(id_sets) != 1:
        names = ", ".join(d.name for d in id_sets)
        raise DogoodError(f"--id names {len(id_sets)} datasets ({names}); pick one with {args.id_dataset}:CONFIG")
    ood_sets = [d for spec in args.ood for d in resolve_datasets(spec, args.split)]
    report = evaluate_layout(id_sets[0], ood_sets, args.predictions, resamples=args.bootstrap, seed=args.seed,
                             limit=args.limit)
    out = Path(args.out) if args.out else Path("eval") / "layout"
    paths = report.write(out)
    print(report.to_markdown().rstrip())
    print()
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0
