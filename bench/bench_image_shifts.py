"""Throughput of the image shifts (I1 natural background, I2 distortion) against the no-op build, in one run.

    python bench/bench_image_shifts.py [--source ../shared/data/funsd/dataset] [--repeat 3] [--num-proc 1]
                                       [--configs natural distort] [--json out.json]

Each build reads the FUNSD test forms (50 RVL-CDIP pages), applies the config's chain
and writes Parquet plus the card, exactly as ``dogood build``. The no-op build
(recipe ``funsd``, config ``original``) reads and writes only: its images are copied
as encoded bytes, never decoded. A second reference, ``reencode``, decodes each page
and encodes the same pixels as JPEG: the floor of any shift that changes pixels. Reported: pages per second (median of the repeats)
and each build's throughput as a fraction of the no-op's. Then, per page and without
I/O, where an image shift's time goes: decoding the page, the shift itself, and
encoding the new page (JPEG by default, PNG for comparison).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

from dogood.core.document import PageImage
from dogood.core.seeds import derive_seed
from dogood.pipeline.build import build
from dogood.pipeline.recipe import load_recipe
from dogood.shifts import Shift, make_shift
from dogood.sources.funsd import FunsdSource


class Reencode(Shift):
    """Bench reference only: decode the page and encode the same pixels again (the floor of any pixel shift)."""

    name = "bench_reencode"
    family = "image"

    def __init__(self, encoding: str = "jpeg"):
        self.encoding = encoding

    def apply(self, doc, rng):
        return doc.replace(image=PageImage.from_array(doc.image.to_array(), encoding=self.encoding))


def time_build(recipe_name: str, config: str, source: str, num_proc: int, repeat: int) -> tuple[float, int]:
    recipe = load_recipe(recipe_name)
    chain = [{"shift": "bench_reencode"}] if config == "reencode" else recipe.configs[config]
    recipe.configs = {config: chain}
    times = []
    docs = 0
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            report = build(recipe, Path(tmp) / "out", source_path=source, num_proc=num_proc, progress=False)
            times.append(time.perf_counter() - start)
            docs = sum(report.documents.values())
    return statistics.median(times), docs


def stage_times(chain: list[dict], source: str, limit: int) -> dict[str, float]:
    """Median milliseconds per page of decode, shift and encode for the first ``limit`` pages."""
    src = FunsdSource(root=source, split="test")
    shifts = [make_shift(dict(spec)) for spec in chain]
    for s in shifts:
        s.prepare()
    decode, apply, jpeg, png = [], [], [], []
    for i, doc_id in enumerate(src.ids()[:limit]):
        doc = src.load(doc_id)
        t0 = time.perf_counter()
        doc.image.to_array()  # decode (cached on the page)
        t1 = time.perf_counter()
        out = doc
        for k, s in enumerate(shifts):
            out = s(out, derive_seed(0, k))
        t2 = time.perf_counter()
        array = out.image.to_array()
        PageImage.from_array(array, encoding="jpeg").encoded_bytes()
        t3 = time.perf_counter()
        PageImage.from_array(array, encoding="png").encoded_bytes()
        t4 = time.perf_counter()
        decode.append(t1 - t0)
        apply.append(t2 - t1)
        jpeg.append(t3 - t2)
        png.append(t4 - t3)
    ms = lambda xs: round(1000 * statistics.median(xs), 2)  # noqa: E731
    return {"decode_ms": ms(decode), "shift_ms": ms(apply), "encode_jpeg_ms": ms(jpeg), "encode_png_ms": ms(png)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", default=str(Path(__file__).resolve().parents[2] / "shared/data/funsd/dataset"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--num-proc", type=int, default=1)
    parser.add_argument("--configs", nargs="+", default=["natural", "natural_page", "distort"],
                        help="funsd-i configs to time (distort_reocr adds Tesseract: slow)")
    parser.add_argument("--stage-pages", type=int, default=20, help="pages for the per-stage breakdown")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()

    results = {"machine": f"{platform.machine()} {platform.processor() or ''}".strip(), "python": sys.version.split()[0],
               "num_proc": args.num_proc, "builds": [], "stages": {}}
    # warm up: the COCO pool, the OCR of nothing, the page cache of the OS
    time_build("funsd", "original", args.source, args.num_proc, 1)
    print(f"{'recipe':<8} {'config':<14} {'pages':>5} {'median s':>9} {'pages/s':>8} {'vs no-op':>9}")
    baseline = None
    for recipe, config in [("funsd", "original"), ("funsd", "reencode")] + [("funsd-i", c) for c in args.configs]:
        med, docs = time_build(recipe, config, args.source, args.num_proc, args.repeat)
        rate = docs / med
        baseline = baseline or rate
        results["builds"].append({"recipe": recipe, "config": config, "pages": docs, "median_s": round(med, 3),
                                  "pages_per_s": round(rate, 1), "vs_noop": round(rate / baseline, 3)})
        print(f"{recipe:<8} {config:<14} {docs:>5} {med:>9.3f} {rate:>8.1f} {rate / baseline:>8.0%}")
    recipe = load_recipe("funsd-i")
    print(f"\nper page, no I/O (median of {args.stage_pages} pages), ms:")
    print(f"{'config':<14} {'decode':>7} {'shift':>7} {'jpeg':>7} {'png':>7}")
    for config in args.configs:
        st = stage_times(recipe.configs[config], args.source, args.stage_pages)
        results["stages"][config] = st
        print(f"{config:<14} {st['decode_ms']:>7} {st['shift_ms']:>7} {st['encode_jpeg_ms']:>7} {st['encode_png_ms']:>7}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
