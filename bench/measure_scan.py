"""The measured effect of each scan-quality (I3) kind and level: pixels changed, ink kept, Tesseract word recall.

Per kind and severity level 1-5 of ``scan_quality``, over FUNSD test forms and the shared RVL-CDIP pages:

- ``changed``: share of page pixels whose grey level moved by more than 32;
- ``contrast lost``: the card's measured effect (:func:`dogood.measures.effects.contrast_under_ink`): the ink's contrast
  against the paper in each word's box, on the source page less on the shifted one, in grey levels (mean over forms);
- ``kept``: median over words of the share of the word's ink still dark (:mod:`dogood.measures.box_ink`);
- ``moved``: share of words whose ink is found 2+ pixels away (the box check; should be ~0);
- ``recall``: share of the source's words (with a letter or digit) that Tesseract reads on the page with the same
  text (case and surrounding punctuation ignored) in a box the word's box covers by at least half (FUNSD's word
  boxes are looser than Tesseract's: the median IoU of matching words is 0.37 on the first form). RVL-CDIP words come
  from Tesseract on the clean page, so their clean recall is 1 by construction.

Usage: ``python bench/measure_scan.py [--forms 10] [--rvl 3] [--kinds fax,noise] [--previews DIR]`` (previews:
``<kind>-level<k>.png``, the top of the first form at full resolution, plus ``strip_<kind>.png``, the five levels).
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

import cv2
import numpy as np

from dogood.measures.box_ink import box_ink
from dogood.measures.effects import contrast_under_ink
from dogood.page.ocr import ocr_words
from dogood.shifts import ScanQuality
from dogood.shifts.image.scan_quality import KINDS
from dogood.sources.funsd import FunsdSource
from dogood.sources.rvl_cdip import RvlCdipSource

DATA = Path(os.environ.get("DOGOOD_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))


def _norm(text: str) -> str:
    return re.sub(r"^\W+|\W+$", "", text.lower())


def recall(doc, page) -> tuple[int, int]:
    """(found, eligible): source words Tesseract reads on ``page``, same text, in a box half covered by theirs."""
    read = ocr_words(page)
    boxes = np.array([w.box for w in read], float).reshape(-1, 4)
    texts = [_norm(w.text) for w in read]
    found = eligible = 0
    for w in doc.words:
        t = _norm(w.text)
        if not re.search(r"\w", t):
            continue
        eligible += 1
        b = np.asarray(w.box, float)
        ix = np.clip(np.minimum(boxes[:, 2], b[2]) - np.maximum(boxes[:, 0], b[0]), 0, None)
        iy = np.clip(np.minimum(boxes[:, 3], b[3]) - np.maximum(boxes[:, 1], b[1]), 0, None)
        inter = ix * iy
        covered = inter / np.maximum((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]), 1)
        found += any(texts[k] == t for k in np.flatnonzero(covered >= 0.5))
    return found, eligible


def measure(docs, shift) -> dict[str, float]:
    changed, lost, kept, moved, found, eligible = [], [], [], [], 0, 0
    for seed, doc in enumerate(docs):
        out = shift(doc, seed) if shift else doc
        before, after = doc.image.to_array(), out.image.to_array()
        changed.append(float((np.abs(after.astype(np.int16) - before) > 32).mean()))
        if shift:
            words, source, ink = contrast_under_ink(doc, out)
            lost.append((source - ink) / max(words, 1))
        check = box_ink(before, after, doc.boxes)
        kept += check.kept[check.has_ink].tolist()
        moved += (np.abs(check.offset[check.has_ink]) > 1).any(axis=1).tolist()
        f, e = recall(doc, out.image)
        found, eligible = found + f, eligible + e
    return {"changed": np.mean(changed), "contrast_lost": np.mean(lost) if lost else 0.0, "kept": np.median(kept), "moved": np.mean(moved), "recall": found / eligible}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--forms", type=int, default=10, help="FUNSD test forms (the first N; 50 = all)")
    parser.add_argument("--rvl", type=int, default=3, help="shared RVL-CDIP pages (the first N; 0 = none)")
    parser.add_argument("--kinds", default=",".join((*KINDS, "mixed")), help="comma-separated kinds (and mixed)")
    parser.add_argument("--previews", type=Path, help="write preview PNGs here")
    args = parser.parse_args()
    funsd = FunsdSource(root=DATA / "funsd" / "dataset", split="test")
    sets = {"funsd": [funsd.load(i) for i in funsd.ids()[: args.forms]]}
    if args.rvl:
        rvl = RvlCdipSource(root=DATA / "rvl_cdip", split="test")
        sets["rvl"] = [rvl.load(i) for i in rvl.ids()[: args.rvl]]
    print(f"FUNSD test: {len(sets['funsd'])} forms; RVL-CDIP: {len(sets.get('rvl', []))} pages")
    print("| kind | level | FUNSD changed | FUNSD contrast lost | FUNSD ink kept | FUNSD moved | FUNSD recall "
          "| RVL changed | RVL recall |")
    print("|---|---|---|---|---|---|---|---|---|")
    clean = {name: measure(docs, None) for name, docs in sets.items()}
    rvl_clean = f"{clean['rvl']['recall']:.3f}" if "rvl" in clean else "–"
    print(f"| clean | 0 | 0 | 0 | 1 | 0 | {clean['funsd']['recall']:.3f} | 0 | {rvl_clean} |", flush=True)
    if args.previews:
        args.previews.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(args.previews / "clean.png"), _crop(sets["funsd"][0].image.to_array()))
    for kind in args.kinds.split(","):
        strip = []
        for level, values in ScanQuality.severities.items():
            shift = ScanQuality(pick="one", **values) if kind == "mixed" else ScanQuality(kinds=[kind], **values)
            f = measure(sets["funsd"], shift)
            r = measure(sets["rvl"], shift) if "rvl" in sets else None
            rvl_cells = f"{r['changed']:.3f} | {r['recall']:.3f}" if r else "– | –"
            print(f"| {kind} | {level} | {f['changed']:.3f} | {f['contrast_lost']:.1f} | {f['kept']:.3f} "
                  f"| {f['moved']:.4f} | {f['recall']:.3f} | {rvl_cells} |", flush=True)
            if args.previews:
                crop = _crop(shift(sets["funsd"][0], 0).image.to_array())
                cv2.imwrite(str(args.previews / f"{kind}-level{level}.png"), crop)
                strip.append(crop)
        if args.previews:
            cv2.imwrite(str(args.previews / f"strip_{kind}.png"), np.vstack(strip))


def _crop(page: np.ndarray) -> np.ndarray:
    """The top of the first form at full resolution (its heading and first fields), as OpenCV writes it."""
    crop = page[:360, :]
    return cv2.cvtColor(crop, cv2.COLOR_RGB2BGR) if crop.ndim == 3 else crop


if __name__ == "__main__":
    main()
