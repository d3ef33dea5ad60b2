"""Pages/s of the scan-quality shift (I3) beside the no-op and augraphy's own pipeline, on the same pages, in one run.

    DOGOOD_DATA_DIR=../shared/data taskset -c 0 python bench/bench_scan.py [--pages 10] [--strength 0.6]

Rates are pages per CPU-second of the process. For each kind (and ``mixed``: one kind drawn per page) three
figures on the same decoded FUNSD test pages:

- ``noop``: an empty chain step (seeding, provenance), what every shift pays anyway;
- ``dogood``: ``scan_quality`` (augraphy's augmentations, seeded per page, global random states restored, the page
  re-wrapped; the PNG encoding of the output is not timed);
- ``augraphy``: ``AugraphyPipeline(ink_phase, paper_phase, post_phase)`` with the same augmentation objects in the
  same phases, on the same pixels (augraphy also builds its paper layer and blends ink onto it); for ``mixed``,
  ``OneOf`` all the kinds' augmentations in the post phase.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from dogood.shifts import ScanQuality
from dogood.shifts.image.scan_quality import KINDS, augmentations
from dogood.sources.funsd import FunsdSource

DATA = Path(os.environ.get("DOGOOD_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data")).resolve()
PHASES = {"ink_bleed": "ink", "low_ink": "ink", "noise": "paper", "bleed_through": "post", "dirty_drum": "post",
          "fax": "post"}


def rate(fn, pages) -> float:
    """Pages per second of this process's CPU time (``time.process_time``: on a loaded, shared machine the
    wall clock counts the other jobs' turns; run under ``taskset -c 0`` for one core)."""
    fn(pages[0])  # warm-up (numba, imports)
    start = time.process_time()
    for page in pages:
        fn(page)
    return len(pages) / (time.process_time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--strength", type=float, default=0.6)
    args = parser.parse_args()
    from augraphy import AugraphyPipeline

    os.chdir(tempfile.mkdtemp(prefix="bench-scan-"))  # AugraphyPipeline writes ./augraphy_cache; keep it out of here

    source = FunsdSource(root=DATA / "funsd" / "dataset", split="test")
    docs = [source.load(i) for i in source.ids()[: args.pages]]
    for d in docs:
        d.image.to_array()  # decode once, outside the timing

    class Noop(ScanQuality):
        name = ""  # not registered

        def apply(self, doc, rng):
            return doc

    print(f"{len(docs)} FUNSD test pages, strength {args.strength}, pages per CPU-second; load average "
          f"{os.getloadavg()[0]:.1f}")
    print("| kind | no-op pages/s | dogood pages/s | augraphy pipeline pages/s | dogood / augraphy |")
    print("|---|---|---|---|---|")
    noop = rate(lambda d: Noop()(d, 0), docs)
    for kind in (*KINDS, "mixed"):
        kinds = list(KINDS) if kind == "mixed" else [kind]
        shift = ScanQuality(kinds=kinds, strength=args.strength, pick="one" if kind == "mixed" else "all")
        seeds = iter(range(10**6))
        ours = rate(lambda d: shift(d, next(seeds)), docs)
        if kind == "mixed":  # augraphy's pipeline with one of the kinds' augmentations, chosen per page, as post phase
            from augraphy import OneOf  # augraphy has no Sequential: one augmentation of all the kinds' is drawn

            drawn = OneOf([x for k in KINDS for x in augmentations(k, args.strength)])
            phases = {"ink": [], "paper": [], "post": [drawn]}
        else:
            phases = {p: (augmentations(kind, args.strength) if PHASES[kind] == p else []) for p in ("ink", "paper", "post")}
        pipeline = AugraphyPipeline(ink_phase=phases["ink"], paper_phase=phases["paper"], post_phase=phases["post"],
                                    random_seed=0)
        theirs = rate(lambda d: pipeline(np.asarray(d.image.to_array())), docs)
        print(f"| {kind} | {noop:.0f} | {ours:.1f} | {theirs:.1f} | {ours / theirs:.2f} |", flush=True)


if __name__ == "__main__":
    main()
