"""Build a recipe: source -> shift chains -> Parquet shards and card, atomically.

Each document is read once and every config's chain is applied to it; rows
are written in source order, so the output is byte-identical for any
``num_proc``. The dataset is assembled in a hidden ``.<name>.partial``
folder next to ``out`` and renamed into place only when complete: an
interrupted build never leaves a folder that looks like a finished dataset.

What the user owns is never lost (:mod:`dogood.pipeline.safety`): a build holds a lock on
``out`` for its whole run, refuses an ``out`` that overlaps the source or that
no dogood build wrote, keeps an old build until the new one is in place (and
puts it back after a crash between the renames), keys resumes on the content
of the source files, and decodes every page before writing its row.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tqdm.auto import tqdm

from dogood.core.fs import fsync_file, fsync_folder, is_link
from dogood.core.progress import say, silenced
from dogood.page.ocr import ocr_cache_folder, report_tesseract_runs
from dogood.pipeline import timeline
from dogood.pipeline.aggregate import aggregate
from dogood.pipeline.card import write_card
from dogood.pipeline.factor_table import factor_rows
from dogood.pipeline.factor_table import warnings as factor_warnings
from dogood.pipeline.plan import BuildPlan, plan_build
from dogood.pipeline.pool import run_pool
from dogood.pipeline.recipe import Recipe
from dogood.pipeline.safety import check_nothing_local, check_out, commit, output_lock, recover
from dogood.pipeline.shards import (
    BuildError,
    Shard,
    ShardRecord,
    ShardTasks,
    is_resumable,
    list_shards,
    seal_work_folder,
    work_folder,
    write_shards,
)

__all__ = ["BuildError", "BuildReport", "build"]


@dataclass
class BuildReport:
    out: Path
    documents: dict[str, int] = field(default_factory=dict)  # split -> documents written
    skipped: list[dict[str, str]] = field(default_factory=list)
    configs: list[str] = field(default_factory=list)
    copies: int = 1  # rows per document and config
    reused_shards: int = 0  # shards a killed build had finished, kept by this one
    warnings: list[str] = field(default_factory=list)  # undeclared changes (:mod:`dogood.pipeline.factor_table`)


def build(
    recipe: Recipe,
    out: str | Path,
    *,
    source_path: str | Path | None = None,
    seed: int | None = None,
    num_proc: int = 1,
    limit: int | None = None,
    on_error: str = "raise",
    configs: list[str] | None = None,
    overwrite: bool = False,
    progress: bool = True,
    ray: str | None = None,
    box_level: str | None = None,
    wait: bool = False,
    splits: list[str] | None = None,
    copies: int | None = None,
    quads: bool | None = None,
) -> BuildReport:
    """Build ``recipe`` into the dataset folder ``out``.

    Parameters
    ----------
    source_path : where the source data is (overrides the recipe and the defaults).
    seed : overrides the recipe's seed.
    num_proc : processes, this one included (it shifts pages between its writes); the output does not depend on it.
    limit : build only the first ``limit`` documents of each split (by sorted id).
    on_error : ``"raise"`` stops at the first bad document with an error naming it;
        ``"skip"`` leaves it out and lists it in the card and ``dogood_build.json``.
    configs : build only these configs (default: all).
    overwrite : replace an existing ``out``, if a dogood build wrote it (:func:`dogood.pipeline.safety.check_out`).
    wait : when another build holds ``out``'s lock, wait for it rather than stop.
    ray : run the shards on Ray (:func:`dogood.pipeline.ray_data.write_shards_on_ray`) with
        ``num_proc`` actors, each reading, shifting and writing whole shards (no shared disk needed):
        ``"local"`` starts Ray on this machine, ``"auto"`` or ``"ray://host:port"`` joins a cluster.
        The output is byte-identical to a local build.
    box_level : the convention of the ``bboxes`` column, ``"segment"`` or ``"word"``
        (:mod:`dogood.core.schema`); overrides the recipe's, which defaults to the schema's.
    splits : build these splits (e.g. ``["train"]``) instead of the recipe's.
    copies : rows per source document and config, each shifted with its own draws (overrides the recipe's
        ``copies``, default 1); copy ``j`` has the id ``<document id>#<j>``, copy 0 draws what a one-copy build does.
    quads : write each word's four corners after the geometric shifts (the ``quads`` column,
        :data:`dogood.core.schema.QUADS_COLUMN`); overrides the recipe's ``quads`` (default off).
    """
    with silenced(not progress), timeline.span("plan"):  # the one-time steps' lines, the resume line
        plan = plan_build(recipe, out, source_path=source_path, seed=seed, num_proc=num_proc, limit=limit,
                          on_error=on_error, configs=configs, overwrite=overwrite, box_level=box_level,
                          splits=splits, copies=copies, quads=quads)
    with silenced(not progress):
        with output_lock(plan.out, wait=wait):
            recover(plan.out)  # an earlier replacement a crash cut short: its old build goes back first
            check_out(plan.out, plan.sources.values(), overwrite=overwrite)
            return _build_locked(plan, num_proc=num_proc, ray=ray, progress=progress)


def _build_locked(plan: BuildPlan, *, num_proc: int, ray: str | None, progress: bool) -> BuildReport:
    """Run the plan with ``out``'s lock held: write the shards, sum them, write the card, commit."""
    with timeline.span("key"):
        key = plan.key()
        left = plan.out.with_name(f".{plan.out.name}.partial")
        left_before = left.exists() and not left.is_symlink()
        work = work_folder(plan.out, key)
        done, todo = list_shards(plan, work)
    if left_before:
        say_resumed(work, done, len(done) + len(todo))
    report = BuildReport(out=plan.out, configs=plan.configs, copies=plan.copies, reused_shards=len(done))
    previews: dict[str, bytes] = {}
    done += _run_shards(plan, work, todo, num_proc=num_proc, ray=ray, progress=progress, previews=previews)
    try:
        with timeline.span("aggregate"):
            totals = aggregate(plan, work, done)
            report.documents, report.skipped = totals.documents, totals.skipped
            report.warnings = factor_warnings(factor_rows(plan.chains, totals.stats))
        for line in report.warnings:
            print(f"dogood: warning: {line}", file=sys.stderr, flush=True)
        with timeline.span("card"):
            write_card(plan, work, totals, source_sha256=key["content"], previews=previews,
                       num_proc=1 if ray else num_proc)  # a Ray driver is not forked
            card_files = [p.name for p in work.iterdir() if p.is_file() and p.suffix in (".md", ".json")
                          and not p.name.startswith(".")]
            check_nothing_local(work, f"the card of {plan.recipe.name}", names=sorted(card_files), parquet=False)
        with timeline.span("commit"):
            seal_work_folder(work)
            sync_for_commit(work, totals.checksums)  # every file and folder on disk before the rename
            commit(work, plan.out)
    finally:
        if work.exists() and not is_resumable(work):
            shutil.rmtree(work, ignore_errors=True)
    return report


def _run_shards(plan: BuildPlan, work: Path, shards: list[Shard], *, num_proc: int, ray: str | None,
                progress: bool, previews: dict[str, bytes] | None = None) -> list[ShardRecord]:
    """Process the shards' documents and write their rows; the finished shards stay for a re-run if stopped.
    ``previews`` gathers the card's previews the workers drew (:func:`dogood.pipeline.card.write_previews`)."""
    if ray is not None and shards:
        return _run_shards_on_ray(plan, work, shards, num_proc=num_proc, ray=ray, progress=progress,
                                  previews=previews)
    tasks = ShardTasks(shards)  # made as the workers take them
    say_ocr_pending(plan, shards)
    bar = tqdm(total=len(tasks), desc=f"build {plan.recipe.name}", unit="doc", disable=not progress, file=sys.stderr)
    spec = plan.worker_spec(min(num_proc, len(tasks)), len(tasks), preview=previews is not None,
                            timeline=timeline.is_recording())
    results = run_pool(tasks, spec, num_proc)
    ocr = [0, 0.0]
    try:
        written = write_shards(plan, work, shards, results, bar, ocr, previews)
    finally:
        results.close()  # stops the workers, at once when a document stopped the build
        bar.close()
        report_tesseract_runs(ocr[0], ocr[1])
    return written


def _run_shards_on_ray(plan: BuildPlan, work: Path, shards: list[Shard], *, num_proc: int, ray: str,
                       progress: bool, previews: dict[str, bytes] | None = None) -> list[ShardRecord]:
    """:func:`_run_shards` on Ray: the actors read, shift and write whole shards
    (:func:`dogood.pipeline.ray_data.write_shards_on_ray`)."""
    from dogood.pipeline.ray_data import write_shards_on_ray

    total = sum(len(shard) for shard in shards)
    bar = tqdm(total=total, desc=f"build {plan.recipe.name}", unit="doc", disable=not progress, file=sys.stderr)
    ocr = [0, 0.0]
    try:
        return write_shards_on_ray(plan, work, shards, bar, ocr, num_workers=num_proc,
                                   address=None if ray == "local" else ray, previews=previews)
    finally:
        bar.close()
        report_tesseract_runs(ocr[0], ocr[1])


def sync_for_commit(work: Path, shard_files: dict[str, str]) -> None:
    """:func:`dogood.core.fs.sync_tree` of the finished work folder, less the shard files (``shard_files``: relative
    path -> sha256), which were synced when they were closed, the syncs run on threads (each waits on the disk):
    the card, previews and records, and every folder, are on disk before the rename that publishes them."""
    from concurrent.futures import ThreadPoolExecutor

    files, folders = [], []
    for root, dirs, names in os.walk(work, followlinks=False):
        folders.append(root)
        for name in names:
            path = Path(root) / name
            if path.relative_to(work).as_posix() not in shard_files and not is_link(path):
                files.append(path)

    def sync_file(path: Path) -> None:
        try:
            fsync_file(path)
        except OSError:
            pass

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(sync_file, files))
        list(pool.map(fsync_folder, folders))


def say_resumed(work: Path, done: list[ShardRecord], total: int) -> None:
    """The resume line, when a work folder was left by an earlier build: what it kept, or that nothing was usable
    (a build of another recipe, source, seed or dogood version, or one stopped before its first shard)."""
    if not done:
        say(f"nothing to resume in {work} (no finished shard of this build); starting afresh")
        return
    documents = sum(record["documents"] + len(record["skipped"]) for _, _, record in done)
    say(f"resumed {len(done)} of {total} shards ({documents} documents) from {work}")


def say_ocr_pending(plan: BuildPlan, shards: list[Shard]) -> None:
    """Before the documents run: how many pages of sources that OCR (RVL-CDIP) are not yet in the OCR cache."""
    pending = total = 0
    for split in dict.fromkeys(shard.split for shard in shards):
        count = getattr(plan.sources[split], "ocr_pending", None)
        if count is not None:
            ours = [shard for shard in shards if shard.split == split]
            pending += count(doc_id for shard in ours for _split, _index, doc_id in shard.tasks)
            total += sum(map(len, ours))
    if pending:
        say(f"OCR: {pending} of {total} pages are not in the OCR cache; Tesseract reads them during the build "
            f"(once; cached in {ocr_cache_folder()})")

