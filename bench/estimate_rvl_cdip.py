"""What a full RVL-CDIP test build (40,000 pages) of I1 + I2 + T + L costs, from measured per-page figures.

    python bench/estimate_rvl_cdip.py measure [--pages 20] [--json per_page.json]
    python bench/estimate_rvl_cdip.py check   [--pages 2000] [--num-proc 2] [--json check.json]
    python bench/estimate_rvl_cdip.py report  per_page.json [check.json]

``measure`` times, in this one process and in CPU seconds (``time.process_time``,
which a loaded machine disturbs far less than wall time), each part of a page's
way through a build:

* ``read``: a synthetic RVL-CDIP-sized page (754 x 1000, 150-250 words) made and checked;
  and a real RVL-CDIP page read from its TIFF (the 3 shared pages and FUNSD's 50 test
  forms, which are RVL-CDIP pages of class ``form``), its OCR already cached;
* ``source OCR``: Tesseract reading a real page, cache off (what RVL-CDIP's source costs
  once per page: the OCR cache serves every later recipe);
* each config of ``rvl-cdip-i1``, ``-i2``, ``-t`` and ``-l``: its chain, the row and the
  statistics (``apply_chain``, ``document_to_row``, ``document_stats``, as a worker runs them);
* ``write``: the rows into Parquet (``ShardFile``), per row;
* ``fixed``: per recipe, planning (chains prepared: COCO photos listed, counter-fitted
  vectors built) and the card and previews, from a 4-page build minus its pages.

``bert_attack`` is left out: no BERT weights exist offline, and its cost is the masked
LM's (a GPU's matter). ``report`` turns the figures into wall-time estimates:
``fixed + pages x per-page / (cores x efficiency)``, the efficiency taken from
``check``, which runs the four recipes for real on synthetic pages with ``--num-proc``
workers and reports wall and CPU time (the build's and its workers'): the configs
without re-OCR on ``--pages`` pages (2,000), those with on ``--ocr-pages`` (200; at
about 1 s a page and config they would take hours on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

RECIPES = ("rvl-cdip-i1", "rvl-cdip-i2", "rvl-cdip-t", "rvl-cdip-l")
LEFT_OUT = {"bert_attack"}
SYNTHETIC = {"kind": "synthetic", "size": [754, 1000], "seed": 0}
DATA = Path(os.environ.get("DOGOOD_DATA_DIR", Path(__file__).resolve().parents[1].parent / "shared" / "data"))


def synthetic_recipe(name: str, pages: int):
    """The shipped recipe ``name`` on ``pages`` synthetic pages, ``bert_attack`` left out."""
    from dogood.pipeline.recipe import load_recipe, parse_recipe

    path = load_recipe(name).path
    import yaml

    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    data["source"] = {**SYNTHETIC, "pages": pages}
    data["configs"] = {c: chain for c, chain in data["configs"].items() if c not in LEFT_OUT}
    return parse_recipe(data)


def without_ocr_cache(tmp: str) -> None:
    """Point ``DOGOOD_CACHE`` at a folder that shares the current cache's entries except the OCR cache, so every
    page is read by Tesseract as on a first build (vectors and downloads stay one-time costs, as on a user's machine)."""
    from dogood.core.paths import cache_dir

    old, new = cache_dir(), Path(tmp) / "cache"
    new.mkdir()
    for entry in old.iterdir():
        if entry.name != "ocr":
            (new / entry.name).symlink_to(entry)
    os.environ["DOGOOD_CACHE"] = str(new)


def cpu_now() -> float:
    """CPU seconds of this process and its waited-for children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def real_pages() -> list[Path]:
    """Real RVL-CDIP pages: the 3 shared TIFFs and FUNSD's 50 test forms."""
    tiffs = sorted((DATA / "rvl_cdip" / "images").rglob("*.tif*"))
    forms = sorted((DATA / "funsd" / "dataset" / "testing_data" / "images").glob("*.png"))
    return tiffs + forms


def measure(pages: int) -> dict:
    from dogood.core.document import PageImage
    from dogood.core.schema import document_to_row
    from dogood.page.ocr import ocr_words
    from dogood.pipeline.build import build
    from dogood.pipeline.parquet_writer import ShardFile
    from dogood.pipeline.plan import plan_build
    from dogood.pipeline.stats import document_stats
    from dogood.pipeline.worker import apply_chain

    out: dict = {"pages": pages, "recipes": {}, "load_average": os.getloadavg()}
    scratch = tempfile.TemporaryDirectory()
    without_ocr_cache(scratch.name)
    recipe0 = synthetic_recipe(RECIPES[0], pages)
    from dogood.sources import open_source

    source = open_source(recipe0.source, "test")
    ids = list(source.ids())
    t0 = time.process_time()
    docs = []
    for doc_id in ids:
        doc = source.load(doc_id)
        doc.image.check_pixels()
        docs.append(doc)
    out["read_synthetic"] = (time.process_time() - t0) / len(docs)

    files = real_pages()
    t0 = time.process_time()
    images = [PageImage.from_file(p) for p in files]
    for image in images:
        image.check_pixels()
    out["read_real"] = (time.process_time() - t0) / len(images)
    t0, w0 = cpu_now(), time.perf_counter()
    words = [len(ocr_words(image, cache=False)) for image in images]
    out["ocr_source"] = (cpu_now() - t0) / len(images)
    out["ocr_source_wall"] = (time.perf_counter() - w0) / len(images)
    out["ocr_pages"], out["ocr_words"] = len(images), sum(words)

    with tempfile.TemporaryDirectory() as tmp:
        for name in RECIPES:
            recipe = synthetic_recipe(name, pages)
            t0 = cpu_now()
            plan = plan_build(recipe, Path(tmp) / name, source_path=None, seed=None, num_proc=1, limit=None,
                              on_error="raise", configs=None, overwrite=False, box_level=None)
            prepare = cpu_now() - t0
            configs = {}
            for config, chain in plan.chains.items():
                rows = []
                c0, w0 = cpu_now(), time.perf_counter()
                for doc in docs:
                    shifted = apply_chain(doc, chain, plan.seed)
                    if shifted.image is not doc.image:
                        shifted.image.check_pixels()
                    row = document_to_row(shifted, plan.schema, plan.box_level, plan.labels)
                    document_stats(doc, shifted, row, plan.schema, plan.labels)
                    rows.append(row)
                shift_cpu, shift_wall = (cpu_now() - c0) / len(docs), (time.perf_counter() - w0) / len(docs)
                t0 = time.process_time()
                f = ShardFile(Path(tmp) / name / f"{config}.parquet", plan.schema, plan.labels)
                for row in rows:
                    f.write(row)
                f.close()
                write = (time.process_time() - t0) / len(rows)
                configs[config] = {"shift": shift_cpu, "shift_wall": shift_wall, "write": write,
                                   "ocr": any(shift.name == "reocr" for shift in chain)}
                print(f"{name}:{config}: {1000 * shift_cpu:.1f} ms shift, {1000 * write:.1f} ms write", file=sys.stderr)
            # fixed costs: a 4-page build, minus its pages' share
            small = synthetic_recipe(name, 4)
            w0 = time.perf_counter()
            build(small, Path(tmp) / f"{name}-small", num_proc=1, progress=False)
            small_wall = time.perf_counter() - w0
            per_page = out["read_synthetic"] + sum(c["shift"] + c["write"] for c in configs.values())
            out["recipes"][name] = {"configs": configs, "prepare": prepare,
                                    "fixed": max(0.0, small_wall - 4 * per_page), "per_page": per_page}
    return out


def check(pages: int, ocr_pages: int, num_proc: int) -> dict:
    """Build each recipe for real: its configs without re-OCR on ``pages`` pages, those with on ``ocr_pages``."""
    from dogood.pipeline.build import build

    out = {"pages": pages, "ocr_pages": ocr_pages, "num_proc": num_proc, "builds": [],
           "load_average_start": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp:
        without_ocr_cache(tmp)
        for name in RECIPES:
            for ocr, n in ((False, pages), (True, ocr_pages)):
                recipe = synthetic_recipe(name, n)
                configs = [c for c, chain in recipe.configs.items()
                           if any(step.get("shift") == "reocr" for step in chain) == ocr]
                if not configs or n == 0:
                    continue
                c0, w0 = cpu_now(), time.perf_counter()
                report = build(recipe, Path(tmp) / f"{name}-{ocr}", num_proc=num_proc, progress=False,
                               configs=configs)
                run = {"recipe": name, "configs": configs, "pages": n, "wall": time.perf_counter() - w0,
                       "cpu": cpu_now() - c0, "documents": sum(report.documents.values())}
                out["builds"].append(run)
                print(json.dumps(run), file=sys.stderr)
    out["load_average_end"] = os.getloadavg()
    return out


def predict(per: dict, name: str, configs: list[str], pages: int, cores: int) -> float:
    """Predicted wall seconds of a build of ``configs`` of recipe ``name`` on synthetic pages, full efficiency."""
    r = per["recipes"][name]
    per_page = per["read_synthetic"] + sum(r["configs"][c]["shift"] + r["configs"][c]["write"] for c in configs)
    return r["fixed"] + r["prepare"] + pages * per_page / cores


def estimate(per: dict, pages: int, cores: int, efficiency: float, real: bool) -> dict[str, float]:
    """Wall seconds per recipe for ``pages`` pages on ``cores`` workers; ``real`` adds RVL-CDIP's read and OCR."""
    result = {}
    for i, (name, r) in enumerate(per["recipes"].items()):
        per_page = r["per_page"]
        if real:
            per_page += per["read_real"] - per["read_synthetic"] + (per["ocr_source"] if i == 0 else 0.0)
        result[name] = r["fixed"] + r["prepare"] + pages * per_page / (cores * efficiency)
    return result


def report(per: dict, chk: dict | None) -> str:
    lines = ["| part | CPU ms per page |", "|---|---:|",
             f"| read, synthetic page | {1000 * per['read_synthetic']:.1f} |",
             f"| read, real RVL-CDIP page (TIFF) | {1000 * per['read_real']:.1f} |",
             f"| source OCR, real page, cache off | {1000 * per['ocr_source']:.0f} |"]
    for name, r in per["recipes"].items():
        for config, c in r["configs"].items():
            lines.append(f"| `{name}` `{config}`: shift + row | {1000 * c['shift']:.1f} |")
        writes = sum(c["write"] for c in r["configs"].values())
        lines.append(f"| `{name}`: writing all its configs | {1000 * writes:.1f} |")
        lines.append(f"| `{name}`: one page, all configs | **{1000 * r['per_page']:.0f}** |")
    lines.append("")
    efficiency = 1.0
    if chk:
        k = chk["num_proc"]
        lines += [f"Check: real builds on synthetic pages, {k} workers (load average "
                  f"{chk['load_average_start'][0]:.1f} at the start, {chk['load_average_end'][0]:.1f} at the end).",
                  "", "| build | pages | predicted wall (s) | measured wall (s) | measured / predicted |",
                  "|---|---:|---:|---:|---:|"]
        total_p = total_m = 0.0
        for run in chk["builds"]:
            p = predict(per, run["recipe"], run["configs"], run["pages"], k)
            total_p, total_m = total_p + p, total_m + run["wall"]
            what = "configs with re-OCR" if any(per["recipes"][run["recipe"]]["configs"][c]["ocr"]
                                                for c in run["configs"]) else "configs without re-OCR"
            lines.append(f"| `{run['recipe']}`, {what} | {run['pages']} | {p:.0f} | {run['wall']:.0f} | "
                         f"{run['wall'] / p:.2f} |")
        lines.append(f"| all | | {total_p:.0f} | {total_m:.0f} | {total_m / total_p:.2f} |")
        efficiency = total_p / total_m
        lines += ["", f"Parallel efficiency from the check: {efficiency:.2f}.", ""]
    lines += ["| RVL-CDIP test, 40,000 pages | I1 | I2 | T | L | all four |", "|---|---:|---:|---:|---:|---:|"]
    for label, cores in (("2 cores", 2), ("1 node x 16 cores", 16), ("4 nodes x 16 cores", 64),
                         ("16 nodes x 16 cores", 256)):
        e = estimate(per, 40_000, cores, efficiency, real=True)
        cells = " | ".join(f"{e[n] / 3600:.1f} h" for n in RECIPES)
        lines.append(f"| {label} | {cells} | **{sum(e.values()) / 3600:.1f} h** |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--pages", type=int, default=20)
    m.add_argument("--json", type=Path)
    c = sub.add_parser("check")
    c.add_argument("--pages", type=int, default=2000)
    c.add_argument("--ocr-pages", type=int, default=200, help="pages for the configs that re-read with Tesseract")
    c.add_argument("--num-proc", type=int, default=2)
    c.add_argument("--json", type=Path)
    r = sub.add_parser("report")
    r.add_argument("per_page", type=Path)
    r.add_argument("check", type=Path, nargs="?")
    args = parser.parse_args(argv)
    if args.what == "report":
        chk = json.loads(args.check.read_text()) if args.check else None
        print(report(json.loads(args.per_page.read_text()), chk))
        return
    result = measure(args.pages) if args.what == "measure" else check(args.pages, args.ocr_pages, args.num_proc)
    text = json.dumps(result, indent=1)
    if args.json:
        args.json.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
