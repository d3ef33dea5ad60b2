"""Does `natural_background`'s readability guard draw the word boxes? And does the text still read? (FUNSD test)

    DOGOOD_DATA_DIR=../shared/data python bench/measure_guard_halo.py [--docs 50] [--guards off box ink]
        [--ocr] [--ocr-scale 3] [--cache DIR] [--workers 2] [--timing]

For each page (seed = page index) the shift's own photo and crop are drawn,
then the background is guarded three ways and the ink composited and JPEG
encoded as the shift does: ``off`` (no guard), ``box`` (the guard before
issue 14: weights painted over each word box grown by half its height,
feathered by a small Gaussian; kept here for comparison) and ``ink`` (the
shift's guard: before issue 25, weights laid on the ink, dilated by three
word heights and feathered by one; since, a fade over the text's region,
weights spread seven word heights and feathered by two: the figures below
are the earlier guard's; ``bench/measure_natural.py`` measures the current
one per severity level).

Halo: :func:`dogood.measures.halo.edge_steps` at every word box and at one random
rectangle of the same size per word (:func:`dogood.measures.halo.random_rectangles`,
seeded; it leaves out the pixels its word leaves out), ink pixels and a
4-pixel rim left out, pooled over all pages; reported: the medians, their
ratio, the two-sided Mann-Whitney U p-value and the one-sided one (word
boxes have stronger edges than random rectangles: a box cue). Variants
(:data:`KINDS`): ``background edge t`` on the guarded photo before the
ink is put on it (the guard's own output: the test), and on the published
page (decoded JPEG) ``edge t``, ``edge grey`` (in grey levels, not
normalised) and ``step t`` (the plain step across the side, no detrending).
A box cue shows as a ratio well above 1 and a tiny p. Lightening a region
also weakens its texture, which lowers the page's figures at words, while
JPEG noise does not weaken with it: a ratio a little below 1 on the
published page is that, not a box.

``--ocr``: Tesseract reads the original and each guarded page, upscaled 3x
(bicubic, boxes scaled back; FUNSD is ~100 dpi) as `measure_distort_iou.py`
does; a FUNSD word is read when Tesseract reads a word with the same text
(case-insensitive) whose box has IoU > 0.5 with it.

``--timing``: median ms per page on one core of the guard alone and of the
whole shift (JPEG encoding left out), for ``box`` and ``ink``.

Figures, 2026-11-24, all 50 pages (8,973 words; ``--ocr --timing``; a
2-core machine shared with other jobs, so times are indicative):

- ``off``: background edge t ratio 1.028 (two-sided p 0.0019); page edge t
  0.999 (p 0.80); Tesseract reads 956 words (0.107).
- ``box`` (before): background 1.482 (p 6e-232; one-sided, word boxes have
  more edges, 3e-232); page 1.409 (p 2e-188); 2,529 words (0.282).
- ``ink`` (now): background 0.979 (p 0.056; one-sided 0.97); page 0.948
  (p 5e-7; one-sided 1.0); 2,760 words (0.308).

Original pages: Tesseract reads 4,662 words (0.520). ``off``'s background
figure is the photos' own unevenness (text sits in the middle of a page, a
photo's subject too); ``ink``'s page figure below 1 is the flatter texture
of the lightened region (``edge grey`` 0.869), no edge: the one-sided p
(word boxes have more edges) is 1. Guard alone 3.2 ms (box) vs 11.6 ms
(ink); the whole shift 14.4 vs 22.2 ms.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure_distort_iou import best_iou, read_page  # noqa: E402

from dogood.core.document import PageImage  # noqa: E402
from dogood.measures.halo import edge_steps, halo_test, random_rectangles  # noqa: E402
from dogood.page.ink import composite, gray, ink_matte  # noqa: E402
from dogood.shifts.image.natural_background import (  # noqa: E402
    MATTE_REGION,
    NaturalBackground,
    fit_photo,
    guard_needs,
    readability_guard,
)
from dogood.sources.funsd import FunsdSource  # noqa: E402


def box_guard(background, boxes, ink_level, has_ink, min_contrast):
    """The guard before issue 14 (for comparison): weights painted over grown word boxes, lightly feathered."""
    h, w = background.shape[:2]
    grow = np.maximum((boxes[:, 3] - boxes[:, 1]) // 2, 2)
    gx0, gy0 = np.clip(boxes[:, 0] - grow, 0, w - 1), np.clip(boxes[:, 1] - grow, 0, h - 1)
    gx1, gy1 = np.clip(boxes[:, 2] + grow, gx0 + 1, w), np.clip(boxes[:, 3] + grow, gy0 + 1, h)
    f = 4
    sh, sw = (h + f - 1) // f, (w + f - 1) // f
    x0, y0 = gx0 // f, gy0 // f
    x1, y1 = np.maximum(-(-gx1 // f), x0 + 1), np.maximum(-(-gy1 // f), y0 + 1)
    dark, weight = guard_needs(background, boxes, ink_level, has_ink, min_contrast)
    todo = np.flatnonzero(weight > 0)
    if not len(todo):
        return background, 0
    out = background
    for lighten in (True, False):
        idx = todo[dark[todo] == lighten]
        if not len(idx):
            continue
        wmap = np.zeros((sh, sw), np.float32)
        for i in idx:
            region = wmap[y0[i] : y1[i], x0[i] : x1[i]]
            np.maximum(region, weight[i], out=region)
        sigma = float(max(np.median(grow[idx]) / (2 * f), 0.5))
        wmap = np.maximum(wmap, cv2.GaussianBlur(wmap, (0, 0), sigma))
        w8 = cv2.resize(np.rint(wmap * 255).astype(np.uint8), (w, h), interpolation=cv2.INTER_LINEAR)
        if out.ndim == 3:
            w8 = cv2.cvtColor(w8, cv2.COLOR_GRAY2RGB)
        if lighten:
            out = cv2.add(out, cv2.multiply(cv2.bitwise_not(out), w8, scale=1 / 255))
        else:
            out = cv2.subtract(out, cv2.multiply(out, w8, scale=1 / 255))
    return out, int(len(todo))


#: The statistic's variants: on the guarded photo before the ink is put on it and the page JPEG encoded
#: (the guard's own output), edges (steps less the local trend) as t-values; on the published page (decoded
#: JPEG), the same, edges in grey levels, and plain steps across the sides (a smooth ramp counts too) as t-values.
KINDS = {
    "background edge t": {"detrend": True, "normalise": True},
    "edge t": {"detrend": True, "normalise": True},
    "edge grey": {"detrend": True, "normalise": False},
    "step t": {"detrend": False, "normalise": True},
}


def guarded_page(doc, seed: int, guard: str, shift: NaturalBackground | None = None):
    """The shift's page for (doc, seed) with the given guard: (decoded RGB pixels, ink matte, photo background)."""
    shift = shift or NaturalBackground()
    pixels = doc.image.to_array()
    boxes = doc.boxes
    matte = ink_matte(pixels, boxes, region=MATTE_REGION[shift.region])
    rng = np.random.default_rng(seed)
    pool = shift.pool
    photo = pool.choose(rng)
    background = fit_photo(pool.load(photo), doc.width, doc.height, shift.fit, rng)
    if guard == "box":
        background, _ = box_guard(background, boxes, matte.level, matte.has_ink, shift.min_contrast)
    elif guard == "ink":
        background, _ = readability_guard(background, matte, boxes, shift.min_contrast)
    out = composite(background, matte)
    data = PageImage.from_array(out, encoding="jpeg").encoded_bytes()
    return np.array(Image.open(io.BytesIO(data)).convert("RGB")), matte, background


def measure_page(args) -> dict:
    root, doc_id, seed, guards, ocr, cache, scale = args
    cv2.setNumThreads(1)
    doc = FunsdSource(root=root, split="test").load(doc_id)
    boxes = doc.boxes
    randoms, paired = random_rectangles(boxes, (doc.height, doc.width), np.random.default_rng(1000 + seed))
    result = {"words": len(doc.words)}
    if ocr:
        original = read_page(doc.image, "", cache, scale)
        result["read_original"] = sum(best_iou(w.text, w.box, original) > 0.5 for w in doc.words)
    for guard in guards:
        page, matte, background = guarded_page(doc, seed, guard)
        ink = cv2.dilate((matte.alpha_image() > 0).astype(np.uint8), np.ones((9, 9), np.uint8)) > 0
        r = {}
        for kind, options in KINDS.items():
            luma = gray(background if kind.startswith("background") else page)
            r[kind] = (edge_steps(luma, boxes, exclude=ink, **options),
                       edge_steps(luma, randoms, exclude=ink, exclude_at=boxes[paired], **options))
        if ocr:
            read = read_page(PageImage.from_array(page), "", cache, scale)
            r["read"] = sum(best_iou(w.text, w.box, read) > 0.5 for w in doc.words)
        result[guard] = r
    return result


def timing(source: FunsdSource, ids) -> dict[str, float]:
    """Median ms per page, one core: each guard alone and the whole shift (without JPEG encoding)."""
    cv2.setNumThreads(1)
    shift = NaturalBackground()
    times: dict[str, list[float]] = {"box guard": [], "ink guard": [], "shift (box)": [], "shift (ink)": []}
    for k, doc_id in enumerate(ids):
        doc = source.load(doc_id)
        pixels = doc.image.to_array()
        boxes = doc.boxes
        for _ in range(2):  # the first round warms caches; the second is kept
            t = {}
            start = time.perf_counter()
            matte = ink_matte(pixels, boxes, region="connected")
            rng = np.random.default_rng(k)
            photo = shift.pool.choose(rng)
            background = fit_photo(shift.pool.load(photo), doc.width, doc.height, shift.fit, rng)
            base = time.perf_counter() - start
            for name, fn in (("box", lambda: box_guard(background, boxes, matte.level, matte.has_ink, 60)),
                             ("ink", lambda: readability_guard(background, matte, boxes, 60))):
                start = time.perf_counter()
                guarded, _ = fn()
                t[f"{name} guard"] = time.perf_counter() - start
                start = time.perf_counter()
                composite(guarded, matte)
                t[f"shift ({name})"] = base + t[f"{name} guard"] + time.perf_counter() - start
        for name, value in t.items():
            times[name].append(value * 1000)
    return {name: statistics.median(v) for name, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_root = Path(os.environ.get("DOGOOD_DATA_DIR", Path(__file__).resolve().parents[2] / "shared/data"))
    parser.add_argument("--source", default=str(default_root / "funsd/dataset"))
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--guards", nargs="+", default=["off", "box", "ink"])
    parser.add_argument("--ocr", action="store_true")
    parser.add_argument("--ocr-scale", type=float, default=3.0)
    parser.add_argument("--cache", default=None, help="OCR cache folder (default: a fresh temporary one)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timing", action="store_true")
    args = parser.parse_args()

    source = FunsdSource(root=args.source, split="test")
    ids = source.ids()[: args.docs]
    cache = args.cache or tempfile.mkdtemp(prefix="dogood-halo-ocr-")
    jobs = [(args.source, doc_id, k, args.guards, args.ocr, cache, args.ocr_scale) for k, doc_id in enumerate(ids)]
    start = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        pages = list(pool.map(measure_page, jobs))
    words = sum(p["words"] for p in pages)
    print(f"{len(pages)} FUNSD test pages, {words} words; {time.perf_counter() - start:.0f} s")
    if args.ocr:
        read = sum(p["read_original"] for p in pages)
        print(f"Tesseract words read, original pages: {read} ({read / words:.3f})")
    for guard in args.guards:
        line = [f"guard={guard}:"]
        for kind in KINDS:
            a = np.concatenate([p[guard][kind][0] for p in pages])
            b = np.concatenate([p[guard][kind][1] for p in pages])
            r = halo_test(a, b)
            line.append(f"{kind}: median at words {r['median_words']:.2f} vs random {r['median_random']:.2f}, "
                        f"ratio {r['ratio']:.3f}, Mann-Whitney p {r['p']:.3g} (one-sided, words > random: "
                        f"{r['p_greater']:.3g}; n {r['n_words']}/{r['n_random']});")
        if args.ocr:
            read = sum(p[guard]["read"] for p in pages)
            line.append(f"Tesseract words read {read} ({read / words:.3f})")
        print("\n    ".join(line))
    if args.timing:
        stages = timing(source, ids)
        print("ms per page, one core (median): " + ", ".join(f"{k} {v:.1f}" for k, v in stages.items()))


if __name__ == "__main__":
    main()
