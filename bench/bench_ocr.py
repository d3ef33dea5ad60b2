"""OCR pages/s: Tesseract through pytesseract (the binary, one process per page) vs in-process (tesserocr), one run.

    DOGOOD_DATA_DIR=../shared/data python bench/bench_ocr.py [--rvl-repeat 3] [--funsd 50]

Pages: the shared RVL-CDIP TIFFs (read ``--rvl-repeat`` times each) and the
FUNSD test forms, no OCR cache (``dogood.page.ocr``'s two engines called directly,
as ``ocr_records(cache=False)`` does). Each page is read by both engines in
turn, the order alternating page by page, so load on a shared machine falls on
both alike; each read starts from the encoded page (decoding timed, as in a
build). Both run one Tesseract thread (``OMP_THREAD_LIMIT=1``). The in-process
engine's start (loading the model, once per worker process) is timed apart,
before the pages.

Reported per page set and engine: pages per wall second, pages per CPU second
(this process and its children: what a core does, steadier on a busy machine),
the ratios in-process / pytesseract, and how many pages gave identical records
(words, boxes, confidences, block/par/line/word numbers).
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

from dogood.core.document import PageImage
from dogood.page import ocr


def cpu_seconds() -> float:
    """CPU seconds of this process and its finished children (the tesseract binaries)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def read(engine: str, data: bytes, args) -> tuple[list, float, float]:
    image = PageImage.from_bytes(data)  # fresh: each read decodes, as in a build
    cpu0, wall0 = cpu_seconds(), time.perf_counter()
    if engine == "pytesseract":
        records = ocr._run_pytesseract(image, lang="eng", config="")
    else:
        records = ocr._run_tesserocr(image, lang="eng", args=args)
    return records, time.perf_counter() - wall0, cpu_seconds() - cpu0


def bench(name: str, pages: list[bytes], args) -> dict:
    totals = {e: {"wall": 0.0, "cpu": 0.0} for e in ("pytesseract", "tesserocr")}
    identical = 0
    for k, data in enumerate(pages):
        order = ("pytesseract", "tesserocr") if k % 2 == 0 else ("tesserocr", "pytesseract")
        records = {}
        for engine in order:
            records[engine], wall, cpu = read(engine, data, args)
            totals[engine]["wall"] += wall
            totals[engine]["cpu"] += cpu
        identical += records["pytesseract"] == records["tesserocr"]
    n = len(pages)
    py, tr = totals["pytesseract"], totals["tesserocr"]
    row = {
        "set": name, "pages": n, "identical": identical,
        "py_wall": n / py["wall"], "tr_wall": n / tr["wall"], "py_cpu": n / py["cpu"], "tr_cpu": n / tr["cpu"],
    }
    row["ratio_wall"], row["ratio_cpu"] = row["tr_wall"] / row["py_wall"], row["tr_cpu"] / row["py_cpu"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = Path(os.environ.get("DOGOOD_DATA_DIR", Path(__file__).resolve().parents[2] / "shared/data"))
    parser.add_argument("--rvl", default=str(root / "rvl_cdip/images"), help="folder of RVL-CDIP TIFFs")
    parser.add_argument("--funsd", default=str(root / "funsd/dataset/testing_data/images"), help="FUNSD test images")
    parser.add_argument("--rvl-repeat", type=int, default=3, help="reads of each RVL-CDIP page per engine")
    parser.add_argument("--funsd-pages", type=int, default=50)
    opts = parser.parse_args()

    if ocr.ocr_engine() != "tesserocr":
        raise SystemExit(f"the in-process engine is not available here: {ocr.ocr_engine()}")
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # the binary's, as dogood.page.ocr gives it
    args = ocr._engine_args("")
    rvl = [p.read_bytes() for p in sorted(Path(opts.rvl).glob("*.tif"))] * opts.rvl_repeat
    funsd = [p.read_bytes() for p in sorted(Path(opts.funsd).glob("*.png"))[: opts.funsd_pages]]

    start = time.perf_counter()
    ocr._engine("eng", args)
    print(f"in-process engine start (once per worker process): {time.perf_counter() - start:.2f} s wall")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    rows = [bench(f"RVL-CDIP ({len(rvl) // opts.rvl_repeat} pages x {opts.rvl_repeat})", rvl, args),
            bench(f"FUNSD test ({len(funsd)} forms)", funsd, args)]
    print(f"load average after: {os.getloadavg()[0]:.2f}\n")
    print("| pages | identical | pytesseract pages/s (wall / CPU) | tesserocr pages/s (wall / CPU) "
          "| ratio wall | ratio CPU |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['set']} | {r['identical']}/{r['pages']} | {r['py_wall']:.2f} / {r['py_cpu']:.2f} "
              f"| {r['tr_wall']:.2f} / {r['tr_cpu']:.2f} | {r['ratio_wall']:.2f}x | {r['ratio_cpu']:.2f}x |")


if __name__ == "__main__":
    main()
