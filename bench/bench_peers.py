"""Every recipe against the no-op pipeline, dogood against its peers (augraphy, TextAttack), and peak memory: one run.

    DOGOOD_DATA_DIR=../shared/data NLTK_DATA=../shared/data/nltk_data python bench/bench_peers.py [--quick]
        [--docs 50] [--ocr-docs 10] [--bert-model random-base|PATH] [--textattack-budget 30]
        [--memory-pages 1000 10000] [--memory-num-proc 1 2] [--skip PART ...] [--out bench/RESULTS.md]

Writes ``bench/RESULTS.md`` (the figures of this run, the machine, the date and
the versions) and prints progress. Parts:

``funsd_total``
    The acceptance check "all FUNSD recipes on the full FUNSD test split take
    under 5 minutes in all on 2 cores": ``funsd``, ``funsd-t`` (without
    ``bert_attack``, which needs BERT weights), ``funsd-l``, ``funsd-i`` and
    ``funsd-fa``, each built whole (every config, as ``dogood build``) with
    ``num_proc=2``, into a temporary folder, with cold result caches (OCR,
    move scores); the total of their wall times.
``recipes`` (a)
    Every config of every recipe in ``recipes/``, one at a time, on the same
    pre-loaded pages, beside an empty chain (the no-op pipeline: seeding,
    provenance and the output row, as every build does per document) on the
    same pages in the same run. FUNSD recipes run on the FUNSD test pages;
    RVL-CDIP recipes on synthetic RVL-CDIP-sized pages (``kind: synthetic``;
    only 3 real RVL-CDIP pages exist offline), whose generated words stand in
    for Tesseract's (``rvl_cdip`` sources would OCR every page); ``docvqa-t``
    on synthetic pages with 3 questions each (DocVQA is not offline). Configs
    whose chain re-reads pages with Tesseract (``reocr``) run on ``--ocr-docs``
    pages. A pass is: load the pages (not timed), then for each page apply the
    chain and make the output row (timed; images that a shift changed are
    encoded here). One warm-up page from another split first (models, tables,
    caches); then the median of passes repeated until they add up to 1 s (at
    most 15), except for configs with shifts that cache per-document results on
    disk (``reocr``, ``move``): one pass, with those caches empty. Reported: pages/s,
    words/s (words with text) and the ratio to the no-op.
``distortion`` (b)
    dogood's ``distort`` (funsd-i's ``distort`` config: folds, curves, curl,
    perspective through one backward map, word boxes re-projected) against
    augraphy's ``Geometric``, ``Folding`` and ``BookBinding`` on the same decoded
    FUNSD test pages, in pages/s; augraphy once without and once with the word
    boxes passed in (its ``bounding_boxes`` argument); each stops after the page
    that passes ``--distortion-budget`` seconds (BookBinding takes seconds a page).
``text`` (c)
    The four TextAttack word swaps of ``funsd-t`` (dogood's words/s from part
    (a)) against TextAttack's own ``Augmenter`` with the same transformation and
    ``pct_words_to_swap=0.1`` on the same pages' words, fed whole pages and one
    FUNSD entity at a time (``bench_text_shifts``'s ``augmenter_rate``, which
    stops after the text that passes the budget, in a child process killed after
    twice the budget: one page can take TextAttack minutes).
``memory`` (d)
    ``bench_memory.py``'s runs: peak memory of whole builds (no-op and merge, 1
    and 2 workers) on 1,000 and 10,000 synthetic pages, and the acceptance check
    (growth under 200 MB).

``--quick``: 10 pages, 3 OCR pages, 5 s TextAttack and distortion budgets, memory on 200 and 2,000
pages with 2 workers, FUNSD total on the first 10 test pages (not the acceptance figure).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_memory  # noqa: E402
import numpy as np  # noqa: E402
from bench_text_shifts import augmenter_rate, random_bert, textattack_transformations  # noqa: E402

from dogood.core.schema import document_to_row, iob_tags  # noqa: E402
from dogood.pipeline.build import build
from dogood.pipeline.recipe import list_recipes, load_recipe  # noqa: E402
from dogood.pipeline.worker import apply_chain  # noqa: E402
from dogood.shifts import make_shift  # noqa: E402
from dogood.sources import open_source  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
FUNSD_RECIPES = ("funsd", "funsd-t", "funsd-l", "funsd-i", "funsd-fa")
OCR_SHIFTS = {"reocr"}
UNCACHED_SHIFTS = {"reocr", "move"}  # shifts that cache per-document results on disk: one timed pass only
TEXTATTACK_SWAPS = ("embedding_swap", "homoglyph_swap", "number_swap", "char_deletion")
PARTS = ("funsd_total", "recipes", "distortion", "text", "memory")


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# -- environment -------------------------------------------------------------------------
def fresh_cache(base: Path, name: str) -> Path:
    """A new DOGOOD_CACHE: per-document result caches (OCR, move scores) empty; one-time builds
    (the counter-fitted vectors, the baseline model) linked from the user's cache when there."""
    cache = base / name
    cache.mkdir(parents=True)
    user = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dogood"
    for keep in ("embeddings", "models"):
        if (user / keep).is_dir():
            (cache / keep).symlink_to(user / keep, target_is_directory=True)
    os.environ["DOGOOD_CACHE"] = str(cache)
    return cache


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for dist in ("dogood", "numpy", "opencv-python-headless", "opencv-python", "pillow", "pyarrow", "datasets",
                 "augraphy", "numba", "textattack", "torch", "transformers", "psutil"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            pass
    try:
        out["tesseract"] = subprocess.run(["tesseract", "--version"], capture_output=True, text=True,
                                          timeout=30).stdout.splitlines()[0].split()[-1]
    except (OSError, IndexError, subprocess.SubprocessError):
        out["tesseract"] = "not installed"
    return out


def machine() -> dict[str, str]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        mem = f"{kb / 2**20:.0f} GiB"
    except (OSError, AttributeError):
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cpu": cpu, "cores": str(cores), "memory": mem, "os": platform.platform()}


def git_state() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "dogood", "bench", "recipes"],
                                cwd=REPO, capture_output=True, text=True).stdout
    except OSError:
        return "unknown"
    changed = [line[3:] for line in status.splitlines() if not line.startswith("??")]
    new = [line[3:] for line in status.splitlines() if line.startswith("??")]
    return head + (f"; changed: {', '.join(changed)}" if changed else "") + (f"; new: {', '.join(new)}" if new else "")


def loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


# -- sources -------------------------------------------------------------------------------
def source_for(recipe, args) -> tuple[dict, str, str]:
    """(source spec to time this recipe on, warm-up split, what the pages are) for a recipe."""
    kind = recipe.source.get("kind")
    if kind == "funsd":
        return {"kind": "funsd"}, "train", "FUNSD test"
    if kind == "docvqa":
        return {"kind": "synthetic", "pages": args.docs, "schema": "docvqa", "questions": 3}, "warmup", \
            "synthetic, 3 questions a page (DocVQA is not offline)"
    return {"kind": "synthetic", "pages": args.docs}, "warmup", "synthetic RVL-CDIP-sized (words generated, no OCR)"


def load_docs(spec: dict, split: str, n: int) -> list:
    source = open_source(spec, split)
    return [source.load(i) for i in source.ids()[:n]]


def text_words(doc) -> int:
    return len(iob_tags(doc)[0])


# -- (a) recipes ---------------------------------------------------------------------------
def time_chain(chain, name: str, schema: str, spec: dict, split: str, n: int, single: bool = False,
               min_seconds: float = 1.0, max_passes: int = 15) -> float:
    """Median seconds of passes (apply the chain, make the row) over ``n`` freshly loaded pages.

    Passes repeat until they add up to ``min_seconds`` (at most ``max_passes``; one when ``single``).
    """
    times: list[float] = []
    while not times or (not single and sum(times) < min_seconds and len(times) < max_passes):
        docs = load_docs(spec, split, n)
        start = time.perf_counter()
        for doc in docs:
            document_to_row(apply_chain(doc, chain, 0), schema)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run_recipes(args, skipped: list[str]) -> list[dict]:
    rows = []
    bert = args.bert_model
    for recipe in sorted(list_recipes(), key=lambda r: r.name):
        spec, warm_split, pages_note = source_for(recipe, args)
        source = open_source(spec, "test")
        schema = recipe.schema or source.schema
        n_all = min(args.docs, len(source.ids()))
        docs = load_docs(spec, "test", n_all)
        words_all = sum(text_words(d) for d in docs)
        warm = load_docs(spec, warm_split, 1)[0]
        document_to_row(apply_chain(warm, [], 0), schema)  # warm-up
        noop = time_chain([], "noop", schema, spec, "test", n_all)
        base = {"recipe": recipe.name, "pages_note": pages_note}
        rows.append({**base, "config": "(no-op)", "pages": n_all, "words": words_all, "seconds": noop,
                     "pages_per_s": n_all / noop, "words_per_s": words_all / noop, "vs_noop": 1.0})
        log(f"{recipe.name}: no-op {n_all / noop:.1f} pages/s on {n_all} pages ({pages_note})")
        noop_ocr = None
        for config, specs in recipe.configs.items():
            shifts = {s.get("shift") for s in specs}
            if "bert_attack" in shifts:
                if not bert:
                    skipped.append(f"`{recipe.name}` / `{config}`: needs BERT weights (none offline; "
                                   "`--bert-model random-base` times a random BERT-base)")
                    continue
                specs = [{**s, "model": bert} if s.get("shift") == "bert_attack" else s for s in specs]
            ocr = bool(shifts & OCR_SHIFTS)
            n = min(n_all, args.ocr_docs) if ocr else n_all
            words = sum(text_words(d) for d in docs[:n])
            try:
                chain = [make_shift(dict(s)) for s in specs]
                for s in chain:
                    s.prepare()
                document_to_row(apply_chain(warm, chain, 0), schema)  # warm-up, another split
                seconds = time_chain(chain, config, schema, spec, "test", n, single=bool(shifts & UNCACHED_SHIFTS))
            except Exception as exc:  # noqa: BLE001 - a config that cannot run here is reported, not fatal
                skipped.append(f"`{recipe.name}` / `{config}`: failed here ({type(exc).__name__}: {str(exc)[:200]})")
                log(f"  {config}: FAILED {type(exc).__name__}: {exc}")
                traceback.print_exc(limit=3)
                continue
            if ocr and n != n_all:
                if noop_ocr is None:
                    noop_ocr = time_chain([], "noop", schema, spec, "test", n)
                reference = n / noop_ocr
            else:
                reference = n_all / noop
            rate = n / seconds
            rows.append({**base, "config": config, "pages": n, "words": words, "seconds": seconds,
                         "pages_per_s": rate, "words_per_s": words / seconds, "vs_noop": rate / reference})
            log(f"  {config}: {rate:.2f} pages/s, {words / seconds:.0f} words/s ({rate / reference:.1%} of no-op)"
                f"{' [' + str(n) + ' pages]' if n != n_all else ''}")
    return rows


# -- FUNSD acceptance ----------------------------------------------------------------------
def run_funsd_total(args, skipped: list[str]) -> list[dict]:
    rows = []
    for name in FUNSD_RECIPES:
        recipe = load_recipe(name)
        configs = [c for c, specs in recipe.configs.items() if not any(s.get("shift") == "bert_attack" for s in specs)]
        with tempfile.TemporaryDirectory(prefix="dogood-bench-funsd-") as tmp:
            start = time.perf_counter()
            report = build(recipe, Path(tmp) / name, num_proc=2, configs=configs, limit=args.funsd_limit,
                           progress=False)
            seconds = time.perf_counter() - start
        docs = sum(report.documents.values())
        rows.append({"recipe": name, "configs": len(configs), "of": len(recipe.configs), "documents": docs,
                     "seconds": seconds, "rows_per_s": docs * len(configs) / seconds})
        log(f"FUNSD total: {name}: {len(configs)} configs x {docs} documents in {seconds:.1f} s")
    return rows


# -- (b) distortion ------------------------------------------------------------------------
def run_distortion(args) -> list[dict]:
    import augraphy

    from dogood.core.document import PageImage

    n = args.docs
    docs = load_docs({"kind": "funsd"}, "test", n)
    for d in docs:
        d.image.to_array()  # decode once: every contender starts from pixels
    rows = []

    def timed(fn, label, note):
        """Pages/s of ``fn`` over the pages, stopping after the page that passes the time budget."""
        fn(0)  # warm-up (numba compiles BookBinding's kernels, map caches)
        start = time.perf_counter()
        done = 0
        for k in range(len(docs)):
            fn(k)
            done += 1
            if time.perf_counter() - start > args.distortion_budget:
                break
        seconds = time.perf_counter() - start
        rows.append({"what": label, "pages": done, "seconds": seconds, "pages_per_s": done / seconds, "note": note})
        log(f"distortion: {label}: {done / seconds:.2f} pages/s ({done} pages)")

    distort = make_shift({"shift": "distort"})
    distort.prepare()
    timed(lambda k: distort(docs[k], k), "dogood `distort` (shift only)",
          "new pixels and every word box re-projected through the same map")
    timed(lambda k: document_to_row(distort(docs[k], k), "funsd"), "dogood `distort` + output row",
          "the above, plus the row: JPEG encoding of the new page, 0-1000 boxes")
    peers = {
        "Geometric": augraphy.Geometric(scale=(0.9, 1.1), rotate_range=(-5, 5), p=1),
        "Folding": augraphy.Folding(p=1),
        "BookBinding": augraphy.BookBinding(use_cache_images=0, p=1),
    }
    for name, aug in peers.items():
        def image_only(k, aug=aug):
            random.seed(k)
            np.random.seed(k)
            return aug(np.ascontiguousarray(docs[k].image.to_array()), force=True)

        def with_boxes(k, aug=aug):
            random.seed(k)
            np.random.seed(k)
            boxes = [list(w.box) for w in docs[k].words]
            return aug(np.ascontiguousarray(docs[k].image.to_array()), bounding_boxes=boxes, force=True)

        timed(image_only, f"augraphy `{name}`", "pixels only")
        timed(with_boxes, f"augraphy `{name}`, word boxes passed", "its `bounding_boxes` moved as augraphy moves them")
        if name == "Geometric":
            def encoded(k, aug=aug):
                out = image_only(k)
                return PageImage.from_array(out if out.ndim == 2 else out[..., ::-1].copy(),
                                            encoding="jpeg").encoded_bytes()

            timed(encoded, "augraphy `Geometric` + JPEG encoding", "for comparison with dogood's row")
    return rows


# -- (c) TextAttack ------------------------------------------------------------------------
class _Reporting:
    """An Augmenter that reports each text it finishes (words, time) on a queue, for :func:`bounded_rate`."""

    def __init__(self, augmenter, queue):
        self.augmenter, self.queue = augmenter, queue

    def augment(self, text: str):
        out = self.augmenter.augment(text)
        self.queue.put((len(text.split()), time.perf_counter()))
        return out


def bounded_rate(augmenter, texts: list[str], budget: float, hard: float) -> dict:
    """``augmenter_rate`` (bench_text_shifts) in a forked child that is killed after ``hard`` seconds.

    ``augmenter_rate`` checks its budget between texts only, and one page can take TextAttack minutes.
    The child reports every text it finishes, so a killed run still gives the rate over the texts done
    (after ``augmenter_rate``'s one-word warm-up); when none was done, ``bound`` is an upper bound: the
    first text's words over the seconds waited.
    """
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    progress, result = ctx.Queue(), ctx.Queue()
    child = ctx.Process(target=lambda: result.put(augmenter_rate(_Reporting(augmenter, progress), texts, budget)),
                        daemon=True)
    start = time.perf_counter()
    child.start()
    events: list[tuple[int, float]] = []
    killed = False
    while True:  # drain the reports while waiting: a child with unread queue items cannot exit
        try:
            while True:
                events.append(progress.get_nowait())
        except Exception:  # queue.Empty
            pass
        if not child.is_alive():
            break
        if time.perf_counter() - start > hard:
            child.terminate()
            killed = True
            break
        child.join(0.05)
    child.join()
    now = time.perf_counter()
    try:
        while True:
            events.append(progress.get(timeout=0.2))
    except Exception:  # queue.Empty
        pass
    if not killed:
        m = re.match(r"(\d+) \((\d+) docs\)", result.get(timeout=10))
        return {"words_per_s": float(m.group(1)), "done": int(m.group(2)), "killed": False}
    if len(events) < 2:  # only the warm-up finished, or not even that
        start = events[0][1] if events else now - hard
        return {"words_per_s": None, "done": 0, "killed": True, "waited": now - start,
                "bound": len(texts[0].split()) / (now - start)}
    words = sum(w for w, _ in events[1:])
    return {"words_per_s": words / (events[-1][1] - events[0][1]), "done": len(events) - 1, "killed": True}


def run_textattack(args, recipe_rows: list[dict]) -> list[dict]:
    from textattack.augmentation import Augmenter

    docs = load_docs({"kind": "funsd"}, "test", args.docs)
    pages = [" ".join(d.words[i].text for i in iob_tags(d)[0]) for d in docs]
    entities = [t for d in docs for e in d.entities
                if (t := " ".join(d.words[i].text for i in e.word_ids if d.words[i].text.strip()))]
    transformations = textattack_transformations()
    ours = {r["config"]: r for r in recipe_rows if r["recipe"] == "funsd-t"}
    rows = []
    hard = 2 * args.textattack_budget
    for name in TEXTATTACK_SWAPS:
        augmenter = Augmenter(transformation=transformations[name], pct_words_to_swap=0.1, transformations_per_example=1)
        row = {"config": name, "dogood_words_per_s": ours.get(name, {}).get("words_per_s")}
        for level, texts in (("page", pages), ("entity", entities)):
            row[level] = bounded_rate(augmenter, texts, args.textattack_budget, hard)
            r = row[level]
            shown = f"{r['words_per_s']:.0f}" if r["words_per_s"] is not None else f"< {r['bound']:.1f}"
            log(f"TextAttack Augmenter {name}, {level} texts: {shown} words/s over {r['done']} texts"
                f"{' (killed)' if r['killed'] else ''}")
        rows.append(row)
    return rows


# -- report --------------------------------------------------------------------------------
def fmt(v, digits=1):
    if v is None or (isinstance(v, float) and v != v):
        return "—"
    return f"{v:,.{digits}f}"


def write_report(path: Path, ctx: dict) -> None:
    a = ctx["args"]
    lines = [
        "# dogood benchmarks: recipes, peers, memory",
        "",
        f"Figures of one run of `python bench/bench_peers.py{' ' + ' '.join(ctx['argv']) if ctx['argv'] else ''}`, "
        f"{ctx['started']} to {ctx['finished']} ({ctx['wall'] / 60:.1f} min).",
        "",
        "## Machine and versions",
        "",
        f"- Machine: {ctx['machine']['cpu']}, {ctx['machine']['cores']} cores, {ctx['machine']['memory']} RAM; "
        f"{ctx['machine']['os']}",
        f"- Load average (1, 5, 15 min) at the start: {ctx['load_start']}; at the end: {ctx['load_end']}. "
        "The machine is shared: other jobs ran beside this one, so rates are lower bounds and vary between runs. "
        "At the start of each part: " + "; ".join(f"{p} {l}" for p, l in ctx["loads"]) + ".",
        f"- dogood at git {ctx['git']}",
        "- " + ", ".join(f"{k} {v}" for k, v in ctx["versions"].items()),
        "",
    ]
    if "funsd_total" in ctx:
        rows = ctx["funsd_total"]
        total = sum(r["seconds"] for r in rows)
        full = a.funsd_limit is None
        verdict = ("PASS" if total < 300 else "FAIL") if full else "not checked (--quick: first pages only)"
        lines += [
            "## All FUNSD recipes on FUNSD test, 2 workers (acceptance: under 5 minutes in all)",
            "",
            "Each recipe built whole, every config (as `dogood build RECIPE --num-proc 2`), into a temporary folder, "
            "with empty OCR and move-score caches.",
            "",
            "| recipe | configs | documents | seconds | rows/s |",
            "|---|---:|---:|---:|---:|",
        ]
        for r in rows:
            of = f" of {r['of']}" if r["configs"] != r["of"] else ""
            lines.append(f"| `{r['recipe']}` | {r['configs']}{of} | {r['documents']} | {r['seconds']:.1f} | "
                         f"{r['rows_per_s']:.1f} |")
        lines += ["", f"**Total: {total:.1f} s ({total / 60:.2f} min) — {verdict}.** "
                  "`funsd-t` leaves out `bert_attack` (no BERT weights offline).", ""]
    if "recipes" in ctx:
        lines += [
            "## (a) Every recipe against the no-op pipeline",
            "",
            "Per config, on pre-loaded pages: apply the chain and make the output row, one process. The no-op is the "
            "empty chain on the same pages in the same run. FUNSD recipes: FUNSD test. RVL-CDIP recipes: synthetic "
            "RVL-CDIP-sized pages (754 x 1000, ~200 generated words with exact boxes, instead of Tesseract's). "
            f"Configs with `reocr` (Tesseract on the new page) on {a.ocr_docs} pages, compared with the no-op on "
            "those pages.",
            "",
            "| recipe | config | pages | pages/s | words/s | vs no-op |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for r in ctx["recipes"]:
            config = "**no-op**" if r["config"] == "(no-op)" else f"`{r['config']}`"
            lines.append(f"| `{r['recipe']}` | {config} | {r['pages']} | {fmt(r['pages_per_s'], 2)} | "
                         f"{fmt(r['words_per_s'], 0)} | {r['vs_noop']:.1%} |")
        notes = sorted({(r["recipe"], r["pages_note"]) for r in ctx["recipes"]})
        lines += ["", "Pages: " + "; ".join(f"`{n}`: {p}" for n, p in notes) + ".", ""]
    if ctx.get("skipped"):
        lines += ["Not timed:", ""] + [f"- {s}" for s in ctx["skipped"]] + [""]
    if "distortion" in ctx:
        lines += [
            "## (b) Distortion: dogood `distort` vs augraphy",
            "",
            f"The same FUNSD test pages (up to {a.docs}; each contender stops after the page that passes "
            f"{a.distortion_budget:.0f} s), decoded before timing (grayscale). dogood's "
            "`distort` is funsd-i's `distort` config (folds, curves, curl, perspective; one backward map; every word "
            "box re-projected through it). augraphy settings: `Geometric(scale=(0.9, 1.1), rotate_range=(-5, 5))`, "
            "`Folding()`, `BookBinding(use_cache_images=0)` (defaults otherwise); seeds fixed per page.",
            "",
            "| what | pages | pages/s | ms/page | |",
            "|---|---:|---:|---:|---|",
        ]
        for r in ctx["distortion"]:
            lines.append(f"| {r['what']} | {r['pages']} | {r['pages_per_s']:.2f} | {1000 * r['seconds'] / r['pages']:.0f} | "
                         f"{r['note']} |")
        lines += [
            "",
            f"Word boxes: augraphy {ctx['versions'].get('augraphy', '?')} accepts `bounding_boxes` and moves them with "
            "the image (axis-aligned updates: shifted, rotated or offset per box), which for `Folding` and "
            "`BookBinding` does not follow the warp inside a box; without them augraphy's output carries no word "
            "boxes at all. dogood re-projects every box through the exact map it warped the pixels with.",
            "",
        ]
    if "text" in ctx:
        lines += [
            "## (c) Text attacks: dogood vs TextAttack's Augmenter",
            "",
            "Words/s on the same FUNSD test pages' words (words with text). dogood: the funsd-t config from (a), whole "
            "pages (10% of words; the output row included). TextAttack: `Augmenter(transformation, "
            "pct_words_to_swap=0.1, transformations_per_example=1)` with the same transformation, fed (1) each page's "
            "text, as dogood works, and (2) each FUNSD entity's text (a form field at a time: the same words in short "
            f"texts), through `bench_text_shifts.augmenter_rate`, which stops after the text that passes "
            f"{a.textattack_budget:.0f} s; a run is killed after {2 * a.textattack_budget:.0f} s (the Augmenter "
            "re-runs its transformation over the whole text for every word it swaps, so its cost grows faster than "
            "the square of the text's length: a whole page can take minutes).",
            "",
            "| attack | dogood words/s (pages) | TextAttack words/s, pages (pages done) | TextAttack words/s, "
            "entities (entities done) | dogood / TextAttack (pages) | dogood / TextAttack (entities) |",
            "|---|---:|---:|---:|---:|---:|",
        ]

        def cell(level):
            if level["words_per_s"] is None:
                return f"< {level['bound']:.1f} (first text unfinished after {level['waited']:.0f} s)"
            return f"{level['words_per_s']:,.0f} ({level['done']}{', then killed' if level['killed'] else ''})"

        def ratio(ours, level):
            theirs = level["words_per_s"] if level["words_per_s"] is not None else level.get("bound")
            if not ours or not theirs:
                return "—"
            return f"{'> ' if level['words_per_s'] is None else ''}{ours / theirs:,.0f}x"

        for r in ctx["text"]:
            lines.append(f"| `{r['config']}` | {fmt(r['dogood_words_per_s'], 0)} | {cell(r['page'])} | "
                         f"{cell(r['entity'])} | {ratio(r['dogood_words_per_s'], r['page'])} | "
                         f"{ratio(r['dogood_words_per_s'], r['entity'])} |")
        lines.append("")
    if "memory" in ctx:
        runs, growths = ctx["memory"]
        lines += [
            "## (d) Peak memory of whole builds (synthetic RVL-CDIP-sized pages)",
            "",
            "`bench/bench_memory.py`: each build in a fresh process, `source: {kind: synthetic, pages: N, size: "
            "[754, 1000], seed: 0}`, one config: `noop` (empty chain) or `merge` (λ1=10, λ2=5). Driver: its peak RSS "
            "(`VmHWM`; `getrusage(RUSAGE_SELF).ru_maxrss` would report this benchmark's own 1.4 GB peak, which Linux "
            "carries over `execve` into the child); largest worker: `getrusage(RUSAGE_CHILDREN).ru_maxrss`; tree RSS / PSS: psutil samples of the build process and all its "
            "workers, summed (RSS every 50 ms, an upper bound since forked workers share pages; PSS every 2 s).",
            "",
            bench_memory.markdown(runs, growths),
            "",
            f"**Acceptance (growth < {bench_memory.LIMIT_MB} MB from the fewest to the most pages): "
            f"{'PASS' if growths and all(g['pass'] for g in growths) else 'FAIL'}.**",
            "",
        ]
    lines += ["## Notes", ""] + [f"- {n}" for n in ctx["notes"]] + [""]
    path.write_text("\n".join(lines), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a shorter run (see the module docstring)")
    parser.add_argument("--docs", type=int, help="pages per recipe, distortion and TextAttack (default 50; quick 10)")
    parser.add_argument("--ocr-docs", type=int, help="pages for configs that run Tesseract (default 10; quick 3)")
    parser.add_argument("--bert-model", help="masked LM for bert_attack configs: a local folder, or 'random-base' "
                                             "(random BERT-base weights: the real cost per word); default: skip them")
    parser.add_argument("--textattack-budget", type=float,
                        help="seconds per Augmenter timing; a timing is killed after twice this (default 15; quick 5)")
    parser.add_argument("--distortion-budget", type=float,
                        help="seconds per distortion contender: it stops after the page that passes it (default 30; quick 5)")
    parser.add_argument("--memory-pages", type=int, nargs="+", help="default 1000 10000; quick 200 2000")
    parser.add_argument("--memory-num-proc", type=int, nargs="+",
                        help="default 1 2; quick 2")
    parser.add_argument("--skip", nargs="+", default=[], choices=PARTS, help="parts to leave out")
    parser.add_argument("--out", default=str(REPO / "bench" / "RESULTS.md"))
    args = parser.parse_args()
    q = args.quick
    args.docs = args.docs or (10 if q else 50)
    args.ocr_docs = args.ocr_docs or (3 if q else 10)
    args.textattack_budget = args.textattack_budget or (5.0 if q else 15.0)
    args.distortion_budget = args.distortion_budget or (5.0 if q else 30.0)
    args.memory_pages = args.memory_pages or ([200, 2000] if q else [1000, 10000])
    args.memory_num_proc = args.memory_num_proc or ([2] if q else [1, 2])
    args.funsd_limit = 10 if q else None
    os.environ.setdefault("TQDM_DISABLE", "1")

    wall = time.perf_counter()
    ctx = {"args": args, "argv": sys.argv[1:], "started": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
           "machine": machine(), "versions": versions(), "git": git_state(), "load_start": loadavg(), "skipped": [], "loads": [],
           "notes": []}
    tmp = Path(tempfile.mkdtemp(prefix="dogood-bench-peers-"))
    try:
        if args.bert_model == "random-base":
            data = Path(os.environ.get("DOGOOD_DATA_DIR", REPO.parent / "shared" / "data"))
            args.bert_model = random_bert(tmp / "bert", data / "glove" / "vocab.txt")
            ctx["notes"].append("`bert_attack` timed with a BERT-base-sized masked LM with random weights (the cost "
                                "per word of bert-base-uncased; its candidates are meaningless).")
        if "funsd_total" not in args.skip:
            ctx["loads"].append(("funsd_total", loadavg()))
            fresh_cache(tmp, "cache-funsd-total")
            ctx["funsd_total"] = run_funsd_total(args, ctx["skipped"])
        if "recipes" not in args.skip:
            ctx["loads"].append(("recipes", loadavg()))
            fresh_cache(tmp, "cache-recipes")
            ctx["recipes"] = run_recipes(args, ctx["skipped"])
        if "distortion" not in args.skip:
            ctx["loads"].append(("distortion", loadavg()))
            ctx["distortion"] = run_distortion(args)
        if "text" not in args.skip:
            ctx["loads"].append(("text", loadavg()))
            ctx["text"] = run_textattack(args, ctx.get("recipes", []))
        if "memory" not in args.skip:
            ctx["loads"].append(("memory", loadavg()))
            log(f"memory: {args.memory_pages} pages, {args.memory_num_proc} workers")
            ctx["memory"] = bench_memory.run(args.memory_pages, list(bench_memory.CHAINS), args.memory_num_proc, log=log)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ctx["wall"] = time.perf_counter() - wall
    ctx["finished"] = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    ctx["load_end"] = loadavg()
    ctx["notes"] += [
        "Rates are wall-clock on a machine shared with other jobs (see the load average above).",
        "`pages/s` in (a) and (b) leave out reading the pages; whole builds (with reading, workers and Parquet "
        "writing) are in the FUNSD total and in (d).",
    ]
    write_report(Path(args.out), ctx)
    log(f"wrote {args.out} ({ctx['wall'] / 60:.1f} min)")


if __name__ == "__main__":
    main()
