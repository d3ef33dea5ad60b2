"""`paper_texture` per level against real paper: grain contrast and fibre density in the blank areas of real scans.

    DOGOOD_DATA_DIR=../shared/data python bench/measure_paper_texture.py [--docs 50]

Blank areas and figures: :mod:`dogood.measures.paper_grain` (``contrast``: the paper's grain in grey levels;
``fibres``: the share of blank pixels on thin dark structures), taken on the source page.

Real paper: every FUNSD page (train and test, RVL-CDIP scans at about 100 dpi) and the RVL-CDIP TIFFs of the
shared data; median, 90th and 99th percentiles and maximum over pages. Shifted: the FUNSD test pages under
``paper_texture`` at each level (median over pages, and the highest page), measured on the source's blank tiles.
Run with ``PYTHONPATH`` pointing at a checkout to measure that checkout.
"""

from __future__ import annotations

import argparse
import glob
import os
from pathlib import Path

import numpy as np
from PIL import Image

from dogood.measures.paper_grain import blank_tiles, paper_grain
from dogood.shifts import SHIFTS
from dogood.sources.funsd import FunsdSource

DATA = Path(os.environ.get("DOGOOD_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=50)
    args = parser.parse_args()
    real = []
    files = sorted(glob.glob(str(DATA / "funsd/dataset/*/images/*.png"))) + sorted(
        glob.glob(str(DATA / "rvl_cdip/images/*.tif")))
    for path in files:
        luma = np.array(Image.open(path).convert("L"))
        grain = paper_grain(luma)
        if grain.blank >= 0.05:
            real.append(grain[:2])
    real = np.array(real)
    print(f"real pages with 5% blank or more: {len(real)} of {len(files)}")
    print("| pages | contrast (grey levels) | fibres (share of blank pixels) |")
    print("|---|---|---|")
    for name, q in (("real: median", 50), ("real: 90th percentile", 90), ("real: 99th percentile", 99),
                    ("real: highest", 100)):
        print(f"| {name} | {np.percentile(real[:, 0], q):.2f} | {np.percentile(real[:, 1], q):.5f} |")
    source = FunsdSource(root=str(DATA / "funsd/dataset"), split="test")
    cls = SHIFTS["paper_texture"]
    pages = [source.load(i) for i in source.ids()[: args.docs]]
    blanks = [blank_tiles(doc.image.to_array()) for doc in pages]
    for level in sorted(cls.severities):
        shift = cls(**cls.severities[level])
        got = np.array([paper_grain(shift(doc, 0).image.to_array(), blank)[:2] for doc, blank in zip(pages, blanks)
                        if blank.mean() >= 0.05])
        print(f"| paper_texture@{level}: median (highest) | {np.median(got[:, 0]):.2f} ({got[:, 0].max():.2f}) | "
              f"{np.median(got[:, 1]):.5f} ({got[:, 1].max():.5f}) |")


if __name__ == "__main__":
    main()
