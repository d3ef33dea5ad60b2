"""A build's cue figures: each config's declared cue tests (:mod:`dogood.measures.cues`), run on its own pages.

After the shards are written, for every config whose chain declares cue tests
(:meth:`dogood.shifts.base.Shift.declared_cues`), the first :data:`CUE_PAGES`
rows of its first split with rows are read back from the build's own Parquet
files, each paired with its source page (read again from the source), and
each cue test gives its cross-validated AUROC. The card shows them
(:func:`cue_rows`) and ``dogood_build.json`` keeps them under ``cues``. A
test made of per-page samples (:class:`dogood.measures.cues.Cue`'s
``page_samples``) has its pages' samples drawn by ``num_proc`` worker
processes, a few pages a task (each a ``task`` of the build's timeline: the
build's parallel work), and only the classifier fitted in the main process;
the samples come back in row order, so the figures do not depend on the
number of workers.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from dogood.core.document import Document
from dogood.core.schema import row_to_document
from dogood.measures.cues import CUES, CueFigure
from dogood.pipeline import timeline

#: Pages each config's cue tests read (its first rows, in source order): enough to cross-validate by page.
CUE_PAGES = 100

#: Pages of one config a sampling task reads (tasks small enough to keep every worker busy to the end).
PAGES_PER_TASK = 5

#: An AUROC above this is a cue the card flags (a classifier tells the two kinds of sample apart).
CUE_FLAG = 0.6


def config_cues(chain) -> list[str]:
    """The cue tests a chain's steps declare, in :data:`dogood.measures.cues.CUES` order."""
    declared = set()
    for step in chain:
        declared |= set(step.declared_cues())
    return [name for name in CUES if name in declared]


def measure_cues(plan, work: Path, skipped: list[dict[str, str]] | None = None,
                 pages: int = CUE_PAGES, num_proc: int = 1) -> dict[str, dict[str, dict[str, Any] | None]]:
    """``{config: {cue: figure or None}}`` (:meth:`dogood.measures.cues.CueFigure.as_dict`) for the configs of
    ``plan`` (:class:`dogood.pipeline.plan.BuildPlan`) whose chains declare cue tests, from the rows written in
    ``work``; ``None`` where too few pages had samples. ``num_proc``: worker processes drawing the pages' samples
    (the figures are the same for any number)."""
    skipped_ids = {(s["split"], s["id"]) for s in skipped or ()}
    wanted: dict[str, list[str]] = {}
    picked: dict[str, list[tuple[str, str, int]]] = {}  # config -> its pages: (split, document id, row number)
    for config, chain in plan.chains.items():
        names = config_cues(chain)
        if names:
            wanted[config] = names
            picked[config] = _pick(plan, work, config, skipped_ids, pages)
    if not wanted:
        return {}
    tasks = [(config, [n for n in wanted[config] if CUES[n].page_samples is not None],
              picked[config][k:k + PAGES_PER_TASK], k)
             for config in wanted for k in range(0, len(picked[config]), PAGES_PER_TASK)]
    tasks = [t for t in tasks if t[1]]
    samples: dict[tuple[str, str], list] = {}  # (config, cue) -> [(page number, features, labels)]
    for config, done in _run(plan, work, tasks, num_proc):
        for name, page, x, y in done:
            samples.setdefault((config, name), []).append((page, x, y))
    out: dict[str, dict[str, dict[str, Any] | None]] = {}
    for config, names in wanted.items():
        out[config] = {}
        pairs = None
        for name in names:
            cue = CUES[name]
            if cue.page_samples is None:  # a test over whole pages only: here, in row order
                if pairs is None:
                    pairs = [_pair(plan, work, config, one) for one in picked[config]]
                figure = cue.measure(pairs) if pairs else None
            else:
                figure = _figure(cue, sorted(samples.get((config, name), []), key=lambda s: s[0]))
            out[config][name] = as_record(figure, len(picked[config]))
    return out


def _figure(cue, samples: list) -> CueFigure | float | None:
    kept = [(page, x, y) for page, x, y in samples if len(y)]
    if not kept:
        return None
    return cue.from_samples(np.concatenate([x for _, x, _ in kept]), np.concatenate([y for _, _, y in kept]),
                            np.concatenate([np.full(len(y), page) for page, _, y in kept]))


def _pick(plan, work: Path, config: str, skipped_ids: set, pages: int) -> list[tuple[str, str, int]]:
    """The pages a config's cue tests read: the first ``pages`` rows of its first split with rows (written
    documents only), as ``(split, document id, row number in the split's shards)``."""
    import pyarrow.parquet as pq

    for split in plan.recipe.splits:
        out: list[tuple[str, str, int]] = []
        row = 0
        for path in sorted((Path(work) / "data" / config).glob(f"{split}-*.parquet")):
            with pq.ParquetFile(path) as shard:
                for batch in shard.iter_batches(batch_size=256, columns=["id"]):
                    for value in batch.column(0).to_pylist():
                        doc_id = str(value).rsplit("#", 1)[0] if plan.copies > 1 else str(value)
                        if (split, doc_id) not in skipped_ids and len(out) < pages:
                            out.append((split, doc_id, row))
                        row += 1
            if len(out) >= pages:
                break
        if out:
            return out
    return []


def _pair(plan, work: Path, config: str, one: tuple[str, str, int], originals: dict | None = None
          ) -> tuple[Document, Document]:
    """A picked page (:func:`_pick`) as ``(original, shifted)``: the source's page and the build's row."""
    split, doc_id, row = one
    key = (split, doc_id)
    if originals is not None and key in originals:
        original = originals[key]
    else:
        original = plan.sources[split].load(doc_id)
        if originals is not None:
            originals[key] = original
    return original, row_to_document(_row(work, config, split, row), plan.schema)


def _row(work: Path, config: str, split: str, number: int) -> dict:
    """Row ``number`` of ``config``'s ``split`` in ``work`` (counted across its shards in order), as a dict."""
    import pyarrow.parquet as pq

    for path in sorted((Path(work) / "data" / config).glob(f"{split}-*.parquet")):
        with pq.ParquetFile(path) as shard:
            rows = shard.metadata.num_rows
            if number >= rows:
                number -= rows
                continue
            for g in range(shard.num_row_groups):
                in_group = shard.metadata.row_group(g).num_rows
                if number < in_group:
                    return shard.read_row_group(g).slice(number, 1).to_pylist()[0]
                number -= in_group
    raise IndexError(f"no row {number} of {config}/{split}")


#: The build a cue sampling task belongs to (set in the main process before its workers are forked).
_JOB: list = []


def _sample(task) -> tuple[str, list, dict]:
    """One task: the samples of a few pages of one config, each cue's, and the task's span."""
    plan, work = _JOB[0]
    config, names, picked, first = task
    start, cpu = time.time(), time.process_time()
    done = []
    originals: dict = {}
    for k, one in enumerate(picked):
        original, shifted = _pair(plan, work, config, one, originals)
        for name in names:
            x, y = CUES[name].page_samples(original, shifted)
            done.append((name, first + k, np.asarray(x, np.float64), np.asarray(y)))
    span = {"what": timeline.TASK, "start": start, "end": time.time(), "cpu": time.process_time() - cpu,
            "config": config, "step": "cues"}
    return config, done, span


def _run(plan, work: Path, tasks: list, num_proc: int):
    """``(config, samples)`` of every task, in any order; their spans added to the build's timeline as tasks."""
    if not tasks:
        return
    _JOB[:] = [(plan, work)]
    try:
        n = max(1, min(int(num_proc), len(tasks), os.cpu_count() or 1))
        if n > 1 and "fork" not in multiprocessing.get_all_start_methods():
            n = 1  # the tasks read the build's plan from this process's memory: without fork, here
        if n == 1:
            for task in tasks:
                config, done, span = _sample(task)
                timeline.extend([{"who": "worker-0", **span}])
                yield config, done
            return
        with multiprocessing.get_context("fork").Pool(n) as pool:
            for config, done, span in pool.imap_unordered(_sample, tasks):
                timeline.extend([{"who": "worker-cues", **span}])
                yield config, done
    finally:
        _JOB.clear()


def as_record(figure: CueFigure | float | None, pages: int) -> dict[str, Any] | None:
    """A cue function's result as the record keeps it: a :class:`~dogood.measures.cues.CueFigure`'s own
    (:meth:`~dogood.measures.cues.CueFigure.as_dict`), or a bare AUROC (a number) with no interval."""
    if figure is None:
        return None
    if isinstance(figure, CueFigure):
        return figure.as_dict()
    return {"auroc": round(float(figure), 4), "low": None, "high": None, "pages": pages, "samples": None}


def cue_rows(cues: dict[str, dict[str, dict[str, Any] | None]] | None) -> list[dict[str, str]]:
    """The card's cue table: per config and cue, the AUROC with its interval, the pages, and a flag above
    :data:`CUE_FLAG`."""
    rows = []
    for config, figures in (cues or {}).items():
        for name, f in figures.items():
            if f is None:
                rows.append({"config": config, "cue": name, "auroc": "–", "pages": "too few", "flag": ""})
                continue
            interval = f" [{f['low']:.2f}, {f['high']:.2f}]" if f.get("low") is not None else ""
            rows.append({"config": config, "cue": name, "auroc": f"{f['auroc']:.2f}{interval}",
                         "pages": str(f["pages"]), "flag": "**⚠**" if f["auroc"] > CUE_FLAG else ""})
    return rows


def cue_legend(cues: dict[str, dict[str, dict[str, Any] | None]] | None) -> list[dict[str, str]]:
    """What each cue test in ``cues`` tells apart (:attr:`dogood.measures.cues.Cue.what`)."""
    names = [name for name in CUES if any(name in figures for figures in (cues or {}).values())]
    return [{"name": name, "what": CUES[name].what} for name in names]
