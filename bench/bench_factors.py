"""What measuring the factors costs a build (issue 25): the same build with and without the factor measures.

One recipe of seven configs, one per kind of work the measures do (a text shift, a box-only layout shift, a pixel
shift keeping boxes, a warp, a scan degradation, a turn of the page, a blur), built on the first ``--pages`` FUNSD test forms in this process
(``num_proc=1``), alternately with the measures and with them replaced by a no-op, ``--rounds`` times; the ratio
of the medians of the process's CPU time is the measures' cost (CPU time: the machine is shared). Then the measures alone per config (their CPU time per page, a shared
:class:`~dogood.measures.factors.SourcePage` per document as a build shares it). Ratios only are meaningful::

    python bench/bench_factors.py --pages 10 --rounds 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("DOGOOD_DATA_DIR") or ROOT.parent / "shared" / "data")
CONFIGS = {
    "char_deletion": [{"shift": "char_deletion", "fraction": 0.1}],
    "merge": [{"shift": "merge", "level": "entity"}],
    "natural": [{"shift": "natural_background"}],
    "distort": [{"shift": "distort"}],
    "scan_noise": [{"shift": "scan_quality", "kinds": ["noise"]}],
    "rotate": [{"shift": "rotate"}],
    "motion_blur": [{"shift": "motion_blur"}],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--funsd", default=str(DATA / "funsd" / "dataset"))
    args = parser.parse_args(argv)
    os.environ.setdefault("DOGOOD_DATA_DIR", str(DATA))

    import yaml

    import dogood.pipeline.stats as stats
    from dogood.measures.factors import SourcePage, measure_factors
    from dogood.pipeline.build import build
    from dogood.pipeline.recipe import load_recipe
    from dogood.pipeline.worker import apply_chain
    from dogood.shifts import make_shift
    from dogood.sources.funsd import FunsdSource

    real = stats.measure_factors
    times: dict[str, list[float]] = {"with": [], "without": []}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench-factors.yaml"
        path.write_text(yaml.safe_dump({"name": "bench-factors", "version": "1.0.0", "source": {"kind": "funsd"},
                                        "splits": ["test"], "seed": 0, "configs": CONFIGS}), encoding="utf-8")
        recipe = load_recipe(str(path))
        build(recipe, Path(tmp) / "warm", source_path=args.funsd, limit=1, progress=False)  # photos, fonts loaded
        for k in range(args.rounds):
            for mode in ("with", "without"):
                stats.measure_factors = real if mode == "with" else (lambda *a, **kw: {})
                start = time.process_time()
                build(recipe, Path(tmp) / f"{mode}{k}", source_path=args.funsd, limit=args.pages, progress=False)
                times[mode].append(time.process_time() - start)
        stats.measure_factors = real
    with_, without = statistics.median(times["with"]), statistics.median(times["without"])
    print(f"build of {len(CONFIGS)} configs on {args.pages} FUNSD test forms, median of {args.rounds}: "
          f"{with_ / without:.3f}x the build without the factor measures "
          f"(with {with_:.1f} s, without {without:.1f} s of CPU, this machine)")

    source = FunsdSource(root=args.funsd, split="test")
    docs = [source.load(i) for i in source.ids()[:args.pages]]
    chains = {name: [make_shift(s) for s in spec] for name, spec in CONFIGS.items()}
    for chain in chains.values():
        for shift in chain:
            shift.prepare()
    shifted = {name: [apply_chain(d, chain, 0) for d in docs] for name, chain in chains.items()}
    spent = dict.fromkeys(CONFIGS, 0.0)
    for k, doc in enumerate(docs):
        page = SourcePage(doc)
        for name in CONFIGS:
            start = time.process_time()
            measure_factors(doc, shifted[name][k], page)
            spent[name] += time.process_time() - start
    print("measures alone, CPU ms per page (the source page's ink masks counted once per document, in the first "
          "config that needs them):")
    for name, seconds in spent.items():
        print(f"  {name}: {1000 * seconds / len(docs):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
