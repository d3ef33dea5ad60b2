"""The CRF baseline at the data's box convention on FUNSD-L's merge sweep (issue 25, part 2).

Trains the baseline on FUNSD train at ``--box-level`` (default segment, FUNSD-L's convention), builds FUNSD test
(`funsd`) and FUNSD-L's merge configs at that convention, and scores the baseline on them: the ID score with the
`dogood` record column and without it (the model must read the same `tokens` and `bboxes` either way), and each
merge config's score and change from ID, by λ. Prints a Markdown table; takes minutes on two cores::

    python bench/measure_convention.py --out /tmp/convention
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DOGOOD_DATA_DIR") or ROOT.parent / "shared" / "data")
MERGES = ["merge_x0_y0", "merge_x10_y0", "merge_x0_y5", "merge", "merge_x20_y0", "merge_x0_y10", "merge_x20_y10"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder for the builds and the model")
    parser.add_argument("--funsd", default=str(SHARED / "funsd" / "dataset"))
    parser.add_argument("--box-level", default="segment", choices=("segment", "word"))
    parser.add_argument("--num-proc", type=int, default=1)
    args = parser.parse_args(argv)
    os.environ.setdefault("DOGOOD_DATA_DIR", str(SHARED))

    import datasets

    from dogood.eval import evaluate
    from dogood.models.baseline import BaselineTagger, train_baseline
    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import load_recipe
    from dogood.sources.funsd import FunsdSource

    datasets.disable_progress_bars()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model_path = out / f"baseline-{args.box_level}.dogood-model"
    if not model_path.is_file():
        start = time.perf_counter()
        train = FunsdSource(root=args.funsd, split="train")
        train_baseline([train.load(i) for i in train.ids()], box_level=args.box_level).save(model_path)
        print(f"trained on FUNSD train in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    model = BaselineTagger.load(model_path)
    for name, configs in (("funsd", None), ("funsd-l", MERGES)):
        folder = out / f"{name}-{args.box_level}"
        if not (folder / "dogood_build.json").is_file():
            build(load_recipe(name), folder, source_path=args.funsd, configs=configs, box_level=args.box_level,
                  num_proc=args.num_proc, progress=False)
    id_folder, ood_folder = out / f"funsd-{args.box_level}", out / f"funsd-l-{args.box_level}"
    oods = [f"{ood_folder}:{c}" for c in MERGES]
    report = evaluate(model, f"{id_folder}:original", oods, resamples=1000)
    bare = datasets.load_dataset(str(id_folder), "original", split="test").remove_columns("dogood")
    without = evaluate(model, bare, oods[:1], resamples=0)
    lam = {c: c.replace("merge_", "") for c in MERGES}
    lam["merge"] = "x10_y5"
    print(f"Baseline ({args.box_level} boxes, trained on FUNSD train), entity F1 on FUNSD test, 50 forms:")
    print(f"ID with the `dogood` column {report.id['f1']:.2f}, without it {without.id['f1']:.2f}")
    print()
    print("| config | λ1 x λ2 (px) | F1 | change from ID (points) | 95% CI of the change |")
    print("|---|---|---|---|---|")
    for row in report.ood:
        config = row["dataset"].rpartition("/")[2]
        lo, hi = row["ci"]["change"]
        print(f"| `{config}` | {lam[config].replace('x', '').replace('_y', ' x ')} | {row['value']:.2f} | "
              f"{row['change']:+.2f} | [{lo:+.2f}, {hi:+.2f}] |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
