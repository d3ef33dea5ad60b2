"""`paper_texture` per level against real paper: grain contrast and fibre density in the blank areas of real scans.

    DOGOOD_DATA_DIR=../shared/data python bench/measure_paper_texture.py [--docs 50]

Blank areas: 32-pixel tiles of a page with no ink (nothing 60 grey levels darker than a 15-pixel closing within 4
pixels) and a mean grey above 150, taken on the source page. On them:

- ``contrast``: the standard deviation of the grey levels once the page's slow variation is taken off (the page
  minus its Gaussian blur of sigma 6): the paper's grain, in grey levels;
- ``fibres``: the share of blank pixels on a thin dark structure (a 5-pixel black top-hat of 12 grey levels or
  more): fibres, hairs, specks.

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

import cv2
import numpy as np
from PIL import Image

from dogood.shifts import SHIFTS
from dogood.sources.funsd import FunsdSource

DATA = Path(os.environ.get("DOGOOD_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))
TILE = 32


def blank_tiles(luma: np.ndarray) -> np.ndarray:
    """Boolean mask of the blank tiles of a page (see the module doc)."""
    h, w = luma.shape
    closed = cv2.morphologyEx(luma, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (15, 15)))
    ink = cv2.dilate((cv2.subtract(closed, luma) >= 60).astype(np.uint8), np.ones((9, 9), np.uint8)) > 0
    out = np.zeros((h, w), bool)
    for y in range(0, h - TILE + 1, TILE):
        for x in range(0, w - TILE + 1, TILE):
            if not ink[y : y + TILE, x : x + TILE].any() and luma[y : y + TILE, x : x + TILE].mean() > 150:
                out[y : y + TILE, x : x + TILE] = True
    return out


def figures(luma: np.ndarray, blank: np.ndarray) -> tuple[float, float]:
    """``(contrast, fibres)`` of ``luma`` over ``blank``."""
    f = luma.astype(np.float32)
    grain = f - cv2.GaussianBlur(f, (0, 0), 6)
    closed = cv2.morphologyEx(luma, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (5, 5)))
    tophat = cv2.subtract(closed, luma)
    return float(grain[blank].std()), float((tophat[blank] >= 12).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=50)
    args = parser.parse_args()
    real = []
    files = sorted(glob.glob(str(DATA / "funsd/dataset/*/images/*.png"))) + sorted(
        glob.glob(str(DATA / "rvl_cdip/images/*.tif")))
    for path in files:
        luma = np.array(Image.open(path).convert("L"))
        blank = blank_tiles(luma)
        if blank.mean() >= 0.05:
            real.append(figures(luma, blank))
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
        got = np.array([figures(shift(doc, 0).image.to_array(), blank) for doc, blank in zip(pages, blanks)
                        if blank.mean() >= 0.05])
        print(f"| paper_texture@{level}: median (highest) | {np.median(got[:, 0]):.2f} ({got[:, 0].max():.2f}) | "
              f"{np.median(got[:, 1]):.5f} ({got[:, 1].max():.5f}) |")


if __name__ == "__main__":
    main()
