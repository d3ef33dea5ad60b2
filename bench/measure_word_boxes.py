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


def measure(docs, derive=word_boxes) -> tuple[list[float], list[float], float]:
    """IoU of every word, of the words of multi-word segments, and CPU ms per page, of ``derive``."""
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
            for g, b in zip(got, boxes):
                every.append(iou(g, b))
                if len(ids) > 1:
                    multi.append(every[-1])
        cpu += time.process_time() - start
    return every, multi, 1000 * cpu / max(1, len(docs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="test")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    docs = list(dogood.read_documents("funsd", split=args.split, limit=args.limit))
    every, multi, ms = measure(docs)
    naive, naive_multi, _ = measure(docs, lambda pixels, box, texts: [box] if len(texts) == 1 else
                                    _by_length(box, texts))
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.1f}; FUNSD {args.split}, "
          f"{len(docs)} forms\n")
    print("| words | count | median IoU | mean IoU | IoU >= 0.5 | IoU >= 0.7 |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, values in (("all words with text", every), ("words of multi-word segments", multi),
                         ("all words, the box split by text length alone", naive),
                         ("words of multi-word segments, split by text length alone", naive_multi)):
        v = np.array(values)
        print(f"| {name} | {len(v)} | {np.median(v):.3f} | {v.mean():.3f} | {(v >= 0.5).mean():.1%} "
              f"| {(v >= 0.7).mean():.1%} |")
    print(f"\nCPU: {ms:.1f} ms a page (every segment of the page)")


if __name__ == "__main__":
    main()
