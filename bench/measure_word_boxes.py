"""Word boxes derived from segment boxes (:mod:`dogood.page.word_boxes`) against FUNSD's own word boxes.

    DOGOOD_DATA_DIR=../shared/data python bench/measure_word_boxes.py [--split test] [--limit 50]

For every FUNSD form of the split, each entity with text is a segment: its box
the union of its words' boxes (what a segment-level row gives every word,
``nielsr/funsd-layoutlmv3``'s convention), its words' texts in order. The
derived box of each word is compared with FUNSD's own box for it: IoU per word
(words with text), reported as the median, the mean, the share at IoU >= 0.5
and >= 0.7, over all words and over the words of multi-word segments (a
one-word segment keeps its box, IoU 1); beside it, the segment's box split
along its width by the words' text lengths alone (no ink read).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import dogood
from dogood.page.word_boxes import _by_length, word_boxes


def iou(a, b) -> float:
    ix = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def lines_of(boxes) -> int:
    """How many lines of print a segment's words (FUNSD's boxes) are on: centres more than 0.6 of the median
    word height apart start a new line."""
    ys = sorted((b[1] + b[3]) / 2 for b in boxes)
    height = float(np.median([b[3] - b[1] for b in boxes]))
    return 1 + sum(1 for a, c in zip(ys, ys[1:]) if c - a > 0.6 * height)


def measure(docs, derive=word_boxes, by_lines=None) -> tuple[list[float], list[float], float]:
    """IoU of every word, of the words of multi-word segments, and CPU ms per page, of ``derive``; with
    ``by_lines`` (a dict), also the IoUs of multi-word segments' words by the segment's number of lines."""
    every, multi, cpu = [], [], 0.0
    for doc in docs:
        pixels = doc.image.to_array()
        start = time.process_time()
        for ent in doc.entities:
            ids = [i for i in ent.word_ids if doc.words[i].text.strip()]
            if not ids:
                continue
            boxes = [doc.words[i].box for i in ids]
            segment = (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes),
                       max(b[3] for b in boxes))
            got = derive(pixels, segment, [doc.words[i].text for i in ids])
            lines = min(3, lines_of(boxes)) if by_lines is not None and len(ids) > 1 else None
            for g, b in zip(got, boxes):
                every.append(iou(g, b))
                if len(ids) > 1:
                    multi.append(every[-1])
                if lines is not None:
                    by_lines.setdefault(lines, []).append(every[-1])
        cpu += time.process_time() - start
    return every, multi, 1000 * cpu / max(1, len(docs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="test")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    docs = list(dogood.read_documents("funsd", split=args.split, limit=args.limit))
    by_lines: dict[int, list[float]] = {}
    every, multi, ms = measure(docs, by_lines=by_lines)
    naive, naive_multi, _ = measure(docs, lambda pixels, box, texts: [box] if len(texts) == 1 else
                                    _by_length(box, texts))
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.1f}; FUNSD {args.split}, "
          f"{len(docs)} forms\n")
    print("| words | count | median IoU | mean IoU | IoU >= 0.5 | IoU >= 0.7 |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, values in (("all words with text", every), ("words of multi-word segments", multi),
                         ("all words, the box split by text length alone", naive),
                         ("words of multi-word segments, split by text length alone", naive_multi),
                         *((f"words of multi-word segments on {k}{' or more' if k == 3 else ''} line(s)",
                            by_lines[k]) for k in sorted(by_lines))):
        v = np.array(values)
        print(f"| {name} | {len(v)} | {np.median(v):.3f} | {v.mean():.3f} | {(v >= 0.5).mean():.1%} "
              f"| {(v >= 0.7).mean():.1%} |")
    print(f"\nCPU: {ms:.1f} ms a page (every segment of the page)")


if __name__ == "__main__":
    main()
