"""What measuring the box factors on the ``bboxes`` column (issue 39, ``measures.factors.column_factors``) adds to
a build's per-document statistics: ``document_stats`` with ``box_level`` (the column measured) against without, in
one run, on FUNSD test pages through one shift.

    python bench/bench_column_factors.py --docs 20 --shift merge --repeat 3

``merge`` is a layout shift (no pixel measure runs), so it is the statistics' cheapest case and the ratio's worst.
"""

from __future__ import annotations

import argparse
import os
import time


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--docs", type=int, default=20)
    p.add_argument("--shift", default="merge")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()

    import dogood
    from dogood.core.schema import document_to_row
    from dogood.measures.factors import SourcePage
    from dogood.pipeline.stats import document_stats
    from dogood.sources.funsd import FunsdSource

    source = FunsdSource(split="test")
    shift = dogood.make_shift(args.shift)
    pages = []
    for doc_id in source.ids()[: args.docs]:
        doc = source.load(doc_id)
        shifted = shift(doc, seed=0)
        pages.append((doc, shifted, document_to_row(shifted, "funsd", "segment", image=False)))

    def run(level):
        start = time.perf_counter()
        for doc, shifted, row in pages:
            document_stats(doc, shifted, row, "funsd", source_page=SourcePage(doc), box_level=level)
        return time.perf_counter() - start

    run(None), run("segment")  # warm up
    times = {None: [], "segment": []}
    for _ in range(args.repeat):
        for level in times:
            times[level].append(run(level))
    without, with_column = min(times[None]), min(times["segment"])
    # the column's own steps, the pairing given (it is the factor measures' own): the source row's boxes, the measure
    from dogood.measures.factors import Comparison, column_factors
    from dogood.pipeline.stats import column_boxes

    compared = [(Comparison(doc, shifted), doc, row) for doc, shifted, row in pages]
    for c, _, _ in compared:
        c.pairing  # noqa: B018 (computed once, outside the timing)
    own = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        for c, doc, row in compared:
            column_factors(c, *column_boxes(doc, row, "segment"))
        own.append(time.perf_counter() - start)
    print(f"{args.shift}, {len(pages)} pages: without the column {1000 * without / len(pages):.2f} ms/page, with it "
          f"{1000 * with_column / len(pages):.2f} ms/page, ratio {with_column / without:.2f}x; the column's own "
          f"steps {1000 * min(own) / len(pages):.3f} ms/page (load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
