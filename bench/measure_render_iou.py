"""How closely re-rendered words match the print they replace (FUNSD test): ink-mask IoU of *unchanged* words.

    DOGOOD_DATA_DIR=../shared/data python bench/measure_render_iou.py [--docs 50] [--per entity word]
        [--legacy] [--words-per-page N] [--faces]

Every word of a page with text and a non-empty box is re-rendered with its
own (unchanged) text: styles are chosen from the original page
(:func:`dogood.page.render.choose_styles` with ``original`` = the page, so each
word's text is what its ink shows), then :func:`dogood.page.render.render_words`
erases and redraws the words. For each word whose box has ink, the ink masks
of the original and the re-rendered box (Otsu threshold computed in the box
on each, as :func:`dogood.page.render.ink_threshold`; form rules kept in both) are
compared by IoU (a re-rendered box with no ink scores 0).

Printed per mode: the number of words, the median IoU (the acceptance
criterion: >= 0.6), the share of words with IoU >= 0.6, the mean, and the
milliseconds per word on one core (choosing the style, and choosing plus
erasing and drawing; CPU time of this process, so other load on the
machine counts less). ``--legacy`` adds the renderer this replaced (Pillow's
bundled Aileron at the size whose ``"Hg"`` fills the box height, centred,
starting at the old ink's left edge), redrawn here for comparison.
``--faces`` prints how often each face was chosen.

One run (2026-11-24, 2 shared cores, Pillow 13.0 with libraqm, fonts-liberation2 2.1.5):

    FUNSD test, 50 pages, 8707 words re-rendered with their own text
    mode          words  median IoU  >= 0.6   mean  ms/word choose  ms/word all
    legacy         8706       0.213    0.3%  0.230            0.00         2.50
    per entity     8706       0.688   75.1%  0.657            6.65         7.97
    per word       8706       0.697   77.8%  0.667            5.18         6.32

``per entity`` is what :func:`dogood.page.render.render_words` does.
"""

from __future__ import annotations

import argparse
import collections
import os
import time
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from dogood.page import render
from dogood.sources.funsd import FunsdSource


def ink(crop: np.ndarray) -> np.ndarray | None:
    threshold = render.ink_threshold(crop)
    return None if threshold is None else render._gray(crop) <= threshold


def mask_iou(a: np.ndarray, b: np.ndarray | None) -> float:
    if b is None:
        return 0.0
    union = np.count_nonzero(a | b)
    return np.count_nonzero(a & b) / union if union else 0.0


def legacy_alpha(text: str, box_w: int, box_h: int, left: int) -> np.ndarray:
    """The replaced renderer's coverage: Aileron, "Hg" height = box height, squeezed to 75% then smaller."""
    def font(size):
        return ImageFont.load_default(size=max(1, int(size)))

    def extent(size):
        _, top, _, bottom = font(size).getbbox("Hg", anchor="ls")
        return top, bottom

    top, bottom = extent(100)
    size = max(1, int(100 * box_h / max(1, bottom - top)))
    while size > 1 and extent(size)[1] - extent(size)[0] > box_h:
        size -= 1
    l, _, r, _ = font(size).getbbox(text, anchor="ls")
    text_w = max(1, r - l)
    if text_w * 0.75 > box_w:
        size = max(1, int(size * box_w / (text_w * 0.75)))
        l, _, r, _ = font(size).getbbox(text, anchor="ls")
        text_w = max(1, r - l)
    top, bottom = extent(size)
    baseline = (box_h - (bottom - top)) // 2 - top
    canvas = Image.new("L", (text_w, box_h), 0)
    ImageDraw.Draw(canvas).text((-l, baseline), text, fill=255, font=font(size), anchor="ls")
    alpha = np.asarray(canvas)
    if text_w > box_w:
        alpha = cv2.resize(alpha, (box_w, box_h), interpolation=cv2.INTER_AREA)
    out = np.zeros((box_h, box_w), dtype=np.uint8)
    start = max(0, min(left, box_w - alpha.shape[1]))
    out[:, start:start + alpha.shape[1]] = alpha[:, : box_w - start]
    return out


def legacy_render(doc, indices) -> np.ndarray:
    pixels = np.array(doc.image.to_array())
    for i in indices:
        x0, y0, x1, y1 = doc.words[i].box
        crop = pixels[y0:y1, x0:x1]
        mask = ink(crop)
        left = int(np.flatnonzero(mask.any(axis=0))[0]) if mask is not None and mask.any() else 0
        colour = render.ink_colour(crop, mask if mask is not None else np.zeros(crop.shape[:2], bool))
        render.render_box(pixels, (x0, y0, x1, y1), "")  # erase only
        a = legacy_alpha(doc.words[i].text, x1 - x0, y1 - y0, left).astype(np.float32) / 255
        region = pixels[y0:y1, x0:x1].astype(np.float32)
        pixels[y0:y1, x0:x1] = np.clip(np.rint(region * (1 - a) + colour * a), 0, 255).astype(np.uint8)
    return pixels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_root = Path(os.environ.get("DOGOOD_DATA_DIR", Path(__file__).resolve().parents[2] / "shared/data"))
    parser.add_argument("--source", default=str(default_root / "funsd/dataset"))
    parser.add_argument("--docs", type=int, default=50)
    parser.add_argument("--per", nargs="+", default=["entity", "word"], choices=["entity", "word"])
    parser.add_argument("--legacy", action="store_true", help="also measure the replaced renderer")
    parser.add_argument("--faces", action="store_true", help="print how often each face was chosen")
    args = parser.parse_args()
    cv2.setNumThreads(1)
    source = FunsdSource(root=args.source, split="test")
    modes = (["legacy"] if args.legacy else []) + [f"per {p}" for p in args.per]
    scores = {m: [] for m in modes}
    seconds = {m: [0.0, 0.0] for m in modes}  # choosing, everything
    faces = {m: collections.Counter() for m in modes}
    words = 0
    for doc_id in source.ids()[: args.docs]:
        doc = source.load(doc_id)
        before = doc.image.to_array()
        todo = [i for i, w in enumerate(doc.words) if w.text.strip() and w.box[2] > w.box[0] and w.box[3] > w.box[1]]
        words += len(todo)
        for mode in modes:
            start = time.process_time()
            if mode == "legacy":
                after = legacy_render(doc, todo)
            else:
                styles = render.choose_styles(doc, todo, original=doc, per=mode.split()[1])
                seconds[mode][0] += time.process_time() - start
                faces[mode].update(s.face for s in styles.values())
                after = render.render_words(doc, todo, styles=styles).image.to_array()
            seconds[mode][1] += time.process_time() - start
            for i in todo:
                x0, y0, x1, y1 = doc.words[i].box
                old = ink(before[y0:y1, x0:x1])
                if old is not None:
                    scores[mode].append(mask_iou(old, ink(after[y0:y1, x0:x1])))
    print(f"FUNSD test, {args.docs} pages, {words} words re-rendered with their own text")
    print(f"{'mode':<12}{'words':>7}{'median IoU':>12}{'>= 0.6':>8}{'mean':>7}{'ms/word choose':>16}{'ms/word all':>13}")
    for mode in modes:
        s = np.asarray(scores[mode])
        print(f"{mode:<12}{len(s):>7}{np.median(s):>12.3f}{(s >= 0.6).mean():>8.1%}{s.mean():>7.3f}"
              f"{1000 * seconds[mode][0] / words:>16.2f}{1000 * seconds[mode][1] / words:>13.2f}")
    if args.faces:
        for mode in modes[1 if args.legacy else 0:]:
            print(mode, ", ".join(f"{face} {n}" for face, n in faces[mode].most_common()))


if __name__ == "__main__":
    main()
