"""Box looseness and image quality per level of the image shifts, on the FUNSD test forms; Markdown tables.

Each form is shifted at each severity level with the seed a ``seed: 0`` build gives a severity config (the unswept
step's key: every level of a config shares its draws).

- ``--looseness`` (geometric shifts: ``distort`` and its one-kind configs, ``capture``): each word's looseness,
  its box's area over the area of the bounding box of the ink inside it
  (:func:`dogood.measures.box_ink.looseness`), on the shifted page over the source's: the median over words, the
  ratio of the mean looseness, and the share of words within +-10%. ``--reproject ink`` measures the tight
  convention instead.
- ``--quality`` (every image shift with levels): SSIM and MS-SSIM in luma against the source page, as is and
  after aligning the page by the best similarity between the word boxes' centres
  (:mod:`dogood.measures.quality`), means over forms; and the cost of measuring them, as a ratio to the shift's
  own time on the same pages in the same run.

    python bench/measure_geometry.py --looseness --quality          # all 50 FUNSD test forms
    python bench/measure_geometry.py --quality --config capture --limit 5
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from dogood.core.seeds import step_seed  # noqa: E402
from dogood.measures.box_ink import looseness  # noqa: E402
from dogood.measures.quality import page_quality  # noqa: E402
from dogood.shifts import SHIFTS, make_shift  # noqa: E402

GEOMETRIC = {
    "distort": {"shift": "distort"},
    "perspective": {"shift": "distort", "kinds": ["perspective"]},
    "curl": {"shift": "distort", "kinds": ["curl"]},
    "fold": {"shift": "distort", "kinds": ["fold", "curve"]},
    "capture": {"shift": "capture"},
}
PIXELS = {
    "natural": {"shift": "natural_background"},
    **{f"scan_{kind}": {"shift": "scan_quality", "kinds": [kind]}
       for kind in ("ink_bleed", "low_ink", "noise", "bleed_through", "dirty_drum", "fax")},
}
CONFIGS = {**GEOMETRIC, **PIXELS}


def run(step: dict, level: int, docs: list, what: set[str]) -> dict[str, float]:
    """Shift ``docs`` at ``level`` and measure what ``what`` asks."""
    cls = SHIFTS[step["shift"]]
    key = make_shift(step).step_key()
    shift = make_shift({**step, **cls.severities[level]})
    shift.prepare()
    ratios, qualities = [], []
    shift_s = measure_s = 0.0
    for doc in docs:
        t = time.process_time()
        out = shift(doc, step_seed(0, doc.id, 0, key))
        shift_s += time.process_time() - t
        before, after = doc.image.to_array(), out.image.to_array()
        if "looseness" in what:
            a, b = looseness(before, doc.boxes), looseness(after, out.boxes)
            ok = np.isfinite(a) & np.isfinite(b)
            ratios.append((a[ok], b[ok]))
        if "quality" in what:
            t = time.process_time()
            qualities.append(page_quality(before, after, doc.boxes, out.boxes))
            measure_s += time.process_time() - t
    out: dict[str, float] = {}
    if ratios:
        a = np.concatenate([r[0] for r in ratios])
        b = np.concatenate([r[1] for r in ratios])
        r = b / a
        out.update(median=float(np.median(r)), mean=float(b.mean() / a.mean()),
                   within=float(np.mean(np.abs(r - 1) <= 0.1)))
    if qualities:
        q = np.array([[np.nan if v is None else v for v in x] for x in qualities], dtype=float)
        out.update(zip(("ssim", "ms_ssim", "aligned_ssim", "aligned_ms_ssim"), np.nanmean(q, axis=0).tolist()))
        out["cost"] = measure_s / shift_s if shift_s else float("nan")
        out["measure_ms"] = 1000 * measure_s / len(docs)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="the first N forms only (default: all 50)")
    parser.add_argument("--config", action="append", choices=list(CONFIGS), help="measure these only")
    parser.add_argument("--looseness", action="store_true", help="box looseness (geometric shifts)")
    parser.add_argument("--quality", action="store_true", help="SSIM and MS-SSIM (every image shift)")
    parser.add_argument("--reproject", default=None, choices=["margins", "ink", "box"],
                        help="the geometric shifts' box convention (default: theirs)")
    args = parser.parse_args(argv)
    what = {k for k in ("looseness", "quality") if getattr(args, k)} or {"looseness", "quality"}
    from dogood.sources.funsd import FunsdSource

    data = Path(os.environ.get("DOGOOD_DATA_DIR") or ROOT.parent / "shared" / "data")
    source = FunsdSource(root=data / "funsd" / "dataset", split="test")
    docs = [source.load(i) for i in source.ids()[: args.limit]]
    print(f"FUNSD test, {len(docs)} forms, seed 0" + (f", reproject: {args.reproject}" if args.reproject else ""))
    names = args.config or list(CONFIGS)
    if "looseness" in what:
        print("\n| config | level | looseness ratio, median over words | ratio of mean looseness | words within ±10% |")
        print("|---|---|---|---|---|")
    rows = []
    for name in names:
        step = dict(CONFIGS[name])
        if args.reproject and name in GEOMETRIC:
            step["reproject"] = args.reproject
        asked = what if name in GEOMETRIC else what - {"looseness"}
        if not asked:
            continue
        for level in sorted(SHIFTS[step["shift"]].severities):
            r = run(step, level, docs, asked)
            rows.append((name, level, r))
            if "median" in r:
                print(f"| `{name}` | {level} | {r['median']:.3f} | {r['mean']:.3f} | {100 * r['within']:.0f}% |",
                      flush=True)
    if "quality" in what:
        print("\n| config | level | SSIM | MS-SSIM | SSIM, aligned | MS-SSIM, aligned | measure / shift CPU |")
        print("|---|---|---|---|---|---|---|")
        for name, level, r in rows:
            if "ssim" in r:
                print(f"| `{name}` | {level} | {r['ssim']:.3f} | {r['ms_ssim']:.3f} | {r['aligned_ssim']:.3f} | "
                      f"{r['aligned_ms_ssim']:.3f} | {r['cost']:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
