"""Build a recipe: source -> shift chains -> Parquet shards and card, atomically.

Each document is read once and every config's chain is applied to it; rows
are written in source order, so the output is byte-identical for any
``num_proc``. The dataset is assembled in a hidden ``.<name>.partial-*``
folder next to ``out`` and renamed into place only when complete: an
interrupted build never leaves a folder that looks like a finished dataset.

What the user owns is never lost (:mod:`dogood.safety`): a build holds a lock on
``out`` for its whole run, refuses an ``out`` that overlaps the source or that
no dogood build wrote, keeps an old build until the new one is in place (and
puts it back after a crash between the renames), keys resumes on the content
of the source files, and decodes every page before writing its row.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import shutil
import sys
import threading
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

import dogood
from dogood.document import Document
from dogood.errors import DogoodError, RecipeError
from dogood.paths import write_atomic
from dogood.recipe import Recipe
from dogood.safety import (BUILD_MARKER, OutputError, check_name, check_out, commit, is_dogood_build, output_lock,
                           portable, recover, source_fingerprint)
from dogood.schema import DEFAULT_BOX_LEVEL, FUNSD_NER_TAGS, RVL_CDIP_CLASSES, check_box_level, document_to_row
from dogood.seeds import shared_prefixes, step_seed
from dogood.sources import Source, open_source
from dogood.writer import ATTRIBUTION, ShardFile, attribution_file, render_card, shard_path


class BuildError(DogoodError):
    """A document failed and ``on_error`` was ``raise``."""


@dataclass
class BuildReport:
    out: Path
    documents: dict[str, int] = field(default_factory=dict)  # split -> documents written
    skipped: list[dict[str, str]] = field(default_factory=list)
    configs: list[str] = field(default_factory=list)
    reused_shards: int = 0  # shards a killed build had finished, kept by this one


def apply_chain(doc: Document, chain, recipe_seed: int) -> Document:
    """Apply a chain of shifts to one document, step k seeded by :func:`dogood.seeds.step_seed`.

    The seeds depend on the recipe seed, the document id and each step's
    position and content, not on the config's name, so configs whose chains
    share a prefix draw the same numbers for it.
    """
    doc_id = doc.id
    for k, shift in enumerate(chain):
        doc = shift(doc, step_seed(recipe_seed, doc_id, k, shift.step_key()))
    return doc


def document_stats(original: Document, shifted: Document, row: dict[str, Any], schema: str) -> dict[str, Any]:
    """Per-document counts that the card sums: words, tokens, changes, labels, skips."""
    box_changed, text_changed, removed = _word_changes(original.words, shifted.words)
    if schema == "funsd":
        labels = Counter(FUNSD_NER_TAGS[t] for t in row["ner_tags"])
        tokens = len(row["tokens"])
    elif schema == "rvl_cdip":
        labels = Counter([RVL_CDIP_CLASSES[row["label"]]])
        tokens = len(row["tokens"])
    else:
        labels = Counter({"questions": len(shifted.qa)})
        tokens = len(row["tokens"])
    skips = Counter(f"{r.shift}: {r.skipped}" for r in shifted.provenance if r.skipped)
    shift_counts: Counter[str] = Counter()
    for r in shifted.provenance:
        for key, n in r.counts.items():
            shift_counts[f"{r.shift}: {key}"] += n
        for name, values in r.tallies.items():  # a tally as its ``name=value`` keys, as split_tallies reads them
            for value, n in values.items():
                shift_counts[f"{r.shift}: {name}={value}"] += n
    return {
        "documents": 1,
        "words": len(shifted.words),
        "tokens": tokens,
        "source_words": len(original.words),
        "box_changed": box_changed,
        "text_changed": text_changed,
        "words_removed": removed,
        "labels": labels,
        "skips": skips,
        "shift_counts": shift_counts,
    }


def split_tallies(shift_counts: dict[str, int]) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """Plain counts, and tallies of per-document values: a count key ``name=value`` (e.g.
    ``natural_background: photo=397133``) becomes ``tallies["natural_background: photo"]["397133"]``."""
    plain: dict[str, int] = {}
    tallies: dict[str, dict[str, int]] = {}
    for key, n in sorted(shift_counts.items()):
        name, eq, value = key.partition("=")
        if eq:
            tallies.setdefault(name, {})[value] = n
        else:
            plain[key] = n
    return plain, tallies


def _word_changes(before, after) -> tuple[int, int, int]:
    """(output words with a new box, output words with new text, source words with no counterpart).

    Lists of equal length are compared position by position (nothing is
    removed). When a shift added or removed words (``reocr`` reads a page
    anew), the texts are aligned with ``difflib``: an output word in a
    replaced or inserted run has new text, a source word in a replaced or
    deleted run beyond the output's side is removed, and aligned words count
    a changed box. So the first two never exceed the output's word count.
    """
    if len(before) == len(after):
        return (sum(a.box != b.box for a, b in zip(before, after)),
                sum(a.text != b.text for a, b in zip(before, after)), 0)
    import difflib

    matcher = difflib.SequenceMatcher(None, [w.text for w in before], [w.text for w in after], autojunk=False)
    boxes = texts = removed = 0
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            boxes += sum(before[i].box != after[j].box for i, j in zip(range(i1, i2), range(j1, j2)))
        else:
            texts += j2 - j1
            removed += max(0, (i2 - i1) - (j2 - j1))
    return boxes, texts, removed


def _add_stats(total: dict[str, Any], one: dict[str, Any]) -> None:
    for key, value in one.items():
        if isinstance(value, Counter):
            total.setdefault(key, Counter()).update(value)
        else:
            total[key] = total.get(key, 0) + value


# -- worker side ------------------------------------------------------------------
@dataclass
class WorkerSpec:
    """What every worker (a pool process or a Ray actor) needs: sources, chains, seed, schema, box convention."""

    sources: dict[str, Source]
    chains: dict[str, list]
    seed: int
    schema: str
    box_level: str


_WORKER: dict[str, WorkerSpec] = {}


def _init_worker(spec: WorkerSpec) -> None:
    _WORKER["spec"] = spec


def _process(task: tuple[str, int, str]) -> tuple[str, int, str, dict | None, tuple | None]:
    split, index, doc_id = task
    w = _WORKER["spec"]
    try:
        doc = w.sources[split].load(doc_id)
        doc.image.check_pixels()  # decoded once: undecodable pixel data is never written
        results = {}
        for config, chain in w.chains.items():
            shifted = apply_chain(doc, chain, w.seed)
            if shifted.image is not doc.image:
                shifted.image.check_pixels()
            row = document_to_row(shifted, w.schema, w.box_level)
            results[config] = (row, document_stats(doc, shifted, row, w.schema))
        return split, index, doc_id, results, None
    except DogoodError as exc:
        return split, index, doc_id, None, (str(exc), None)
    except Exception as exc:  # a bug or an unexpected library error: keep the traceback
        return split, index, doc_id, None, (f"{type(exc).__name__}: {exc}", traceback.format_exc())


# -- driver ------------------------------------------------------------------------
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
) -> BuildReport:
    """Build ``recipe`` into the dataset folder ``out``.

    Parameters
    ----------
    source_path : where the source data is (overrides the recipe and the defaults).
    seed : overrides the recipe's seed.
    num_proc : worker processes; the output does not depend on it.
    limit : build only the first ``limit`` documents of each split (by sorted id).
    on_error : ``"raise"`` stops at the first bad document with an error naming it;
        ``"skip"`` leaves it out and lists it in the card and ``dogood_build.json``.
    configs : build only these configs (default: all).
    overwrite : replace an existing ``out``, if a dogood build wrote it (:func:`dogood.safety.check_out`).
    wait : when another build holds ``out``'s lock, wait for it rather than stop.
    ray : run the documents on Ray Data (:func:`dogood.distributed.run_ray`) with
        ``num_proc`` actors: ``"local"`` starts Ray on this machine, ``"auto"`` or
        ``"ray://host:port"`` joins a cluster. The output is byte-identical to a local build.
    box_level : the convention of the ``bboxes`` column, ``"segment"`` or ``"word"``
        (:mod:`dogood.schema`); overrides the recipe's, which defaults to the schema's.
    """
    if on_error not in ("raise", "skip"):
        raise RecipeError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    out = Path(out)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise DogoodError(f"--limit must be a whole number of at least 1, got {limit!r}")
    if isinstance(num_proc, bool) or not isinstance(num_proc, int) or num_proc < 1:
        raise DogoodError(f"--num-proc must be a whole number of at least 1, got {num_proc!r}")
    check_name(recipe.name)
    seed = recipe.seed if seed is None else int(seed)
    names = list(recipe.configs) if not configs else list(dict.fromkeys(configs))  # a repeated --config once
    chains = {name: recipe.chain(name) for name in names}
    sources = {split: open_source(recipe.source, split, source_path) for split in recipe.splits}
    check_out(out, sources.values(), overwrite=overwrite)  # before anything is written
    schema = recipe.schema or next(iter(sources.values())).schema
    box_level = box_level or recipe.box_level or DEFAULT_BOX_LEVEL[schema]
    try:
        check_box_level(box_level, schema)
    except ValueError as exc:
        raise RecipeError(f"recipe {recipe.name!r}: {exc}") from None
    for name, chain in chains.items():
        for shift in chain:
            try:
                shift.check_box_level(box_level)
            except ValueError as exc:
                raise RecipeError(f"recipe {recipe.name!r}, config {name!r}: {exc}") from None
    for chain in chains.values():
        for shift in chain:
            shift.prepare()  # models and tables load once, here, before any worker starts
    notes = {name: [line for shift in chain for line in shift.card_notes(schema=schema)] for name, chain in chains.items()}
    shared = shared_prefixes({name: [shift.step_key() for shift in chain] for name, chain in chains.items()})
    ids = {split: src.ids()[:limit] if limit is not None else src.ids() for split, src in sources.items()}
    with output_lock(out, wait=wait):
        recover(out)  # an earlier replacement a crash cut short: its old build goes back first
        check_out(out, sources.values(), overwrite=overwrite)
        return _build_locked(recipe, out, sources, ids, names, chains, seed, schema, box_level, limit, on_error,
                             num_proc, progress, ray, notes, shared)


def _build_locked(recipe, out, sources, ids, names, chains, seed, schema, box_level, limit, on_error, num_proc,
                  progress, ray, notes, shared) -> BuildReport:
    """The build proper, with ``out``'s lock held."""
    chain_params = {name: [{"shift": shift.name, "params": shift.params()} for shift in chain]
                    for name, chain in chains.items()}
    source_info = portable(next(iter(sources.values())).describe())
    key = {
        "recipe": recipe.name, "version": recipe.version, "seed": seed, "schema": schema, "box_level": box_level,
        "limit": limit,
        "on_error": on_error, "shard_size": recipe.shard_size, "splits": list(recipe.splits),
        "chains": {c: recipe.configs[c] for c in names}, "source": source_info, "dogood_version": dogood.__version__,
        "ids": {split: hashlib.sha256("\n".join(ids[split]).encode("utf-8", "surrogateescape")).hexdigest()
                for split in recipe.splits},
        "content": {split: source_fingerprint(sources[split], ids[split]) for split in recipe.splits},
    }
    tmp = _work_folder(out, key)
    report = BuildReport(out=out, configs=names)
    shard_size = recipe.shard_size
    shards = []  # (split, k, num_shards, tasks) of the shards still to write
    done_states = []
    for split in recipe.splits:
        n = len(ids[split])
        num_shards = max(1, -(-n // shard_size))
        for k in range(num_shards):
            state = _read_state(tmp, split, k, names, num_shards)
            if state is not None:
                done_states.append((split, k, state))
                continue
            shards.append((split, k, num_shards,
                           [(split, i, ids[split][i]) for i in range(k * shard_size, min((k + 1) * shard_size, n))]))
    report.reused_shards = len(done_states)
    total = sum(len(t) for *_, t in shards)
    bar = tqdm(total=total, desc=f"build {recipe.name}", unit="doc", disable=not progress, file=sys.stderr)
    pending = [t for *_, tasks in shards for t in tasks]
    spec = WorkerSpec(sources, chains, seed, schema, box_level)
    if ray is not None and pending:
        from dogood.distributed import run_ray

        results_iter = run_ray(pending, spec, num_workers=min(num_proc, len(pending)),
                               address=None if ray == "local" else ray)
    else:
        results_iter = _run(pending, spec, num_proc)
    try:
        for split, k, num_shards, tasks in shards:
            files = {c: ShardFile(shard_path(tmp, c, split, k, num_shards), schema) for c in names}
            shard_stats: dict[str, dict[str, Any]] = {c: {} for c in names}
            skipped, documents = [], 0
            for _ in tasks:
                _split, index, doc_id, results, error = next(results_iter)
                bar.update(1)
                if error is not None:
                    message, trace = error
                    if on_error == "raise":
                        detail = f"\n{trace}" if trace else ""
                        raise BuildError(f"{split} document {doc_id!r} failed: {message}{detail}")
                    skipped.append({"id": doc_id, "split": split, "reason": message})
                    continue
                for config, (row, doc_stats) in results.items():
                    files[config].write(row)
                    _add_stats(shard_stats[config], doc_stats)
                documents += 1
            for f in files.values():
                f.close()
            state = {"documents": documents, "skipped": skipped, "stats": shard_stats,
                     "files": {c: {"num_rows": f.num_rows, "num_bytes": f.num_bytes} for c, f in files.items()}}
            _write_state(tmp, split, k, state)
            done_states.append((split, k, json.loads(json.dumps(state))))
        bar.close()
    except BaseException:
        results_iter.close()  # stop the workers; finished shards stay in the work folder for a re-run
        raise
    try:
        done_states.sort(key=lambda t: (recipe.splits.index(t[0]), t[1]))
        stats: dict[str, dict[str, dict[str, Any]]] = {c: {s: {} for s in recipe.splits} for c in names}
        files_info: dict[str, dict[str, dict[str, int]]] = {c: {s: {} for s in recipe.splits} for c in names}
        for split, k, state in done_states:
            report.documents[split] = report.documents.get(split, 0) + state["documents"]
            report.skipped.extend(state["skipped"])
            for config in names:
                _add_stats(stats[config][split], _as_counters(state["stats"][config]))
                info = files_info[config][split]
                for field_, n in state["files"][config].items():
                    info[field_] = info.get(field_, 0) + n
                info.setdefault("num_shards", 0)
                if state["files"][config]["num_rows"] == 0:
                    # every document of the shard was skipped: `datasets` cannot load an empty Parquet file
                    shard_path(tmp, config, split, k, -(-len(ids[split]) // shard_size) or 1).unlink(missing_ok=True)
                else:
                    info["num_shards"] += 1
        for config in names:
            for split in recipe.splits:
                if not files_info[config][split].get("num_shards"):
                    why = f"all {len(ids[split])} were skipped" if ids[split] else "the source lists none"
                    raise BuildError(f"split {split!r} has no document to write ({why}); nothing was written")
        for by_split in stats.values():
            for split, s in by_split.items():
                for key_ in ("documents", "words", "source_words", "tokens", "box_changed", "text_changed",
                             "words_removed"):
                    s.setdefault(key_, 0)
                s["labels"] = dict(sorted(s.get("labels", Counter()).items()))
                s["skips"] = dict(sorted(s.get("skips", Counter()).items()))
                s["shift_counts"], s["tallies"] = split_tallies(s.get("shift_counts", Counter()))
        splits_info = {
            config: {
                split: {
                    "num_examples": files_info[config][split].get("num_rows", 0),
                    "num_bytes": files_info[config][split].get("num_bytes", 0),
                    "num_shards": files_info[config][split].get("num_shards", 0),
                }
                for split in recipe.splits
            }
            for config in names
        }
        skipped_ids = {(s["split"], s["id"]) for s in report.skipped}
        previews = write_previews(tmp, chains, sources, ids, seed, skipped_ids)
        credits = photo_credits(chains, stats)
        if credits:
            (tmp / ATTRIBUTION).write_text(attribution_file(credits), encoding="utf-8")
        card = render_card(
            recipe=recipe,
            schema=schema,
            box_level=box_level,
            shared_draws=shared,
            seed=seed,
            limit=limit,
            chain_params=chain_params,
            credits=credits,
            load_path=_load_path(out),
            source=source_info,
            splits_info=splits_info,
            stats=stats,
            skipped=report.skipped,
            dogood_version=dogood.__version__,
            notes=notes,
            previews=previews,
        )
        (tmp / "README.md").write_text(card, encoding="utf-8")
        manifest = {
            **BUILD_MARKER,
            "recipe": recipe.name,
            "version": recipe.version,
            "description": recipe.description,
            "notes": notes,
            "previews": previews,
            "credits": credits,
            "chain_params": chain_params,
            "seed": seed,
            "schema": schema,
            "box_level": box_level,
            "shared_draws": shared,
            "source": source_info,
            "splits": splits_info,
            "limit": limit,
            "source_sha256": key["content"],  # per split: the files read, for push's reuse check
            "chains": {c: recipe.configs[c] for c in names},
            "stats": stats,
            "skipped": report.skipped,
            "dogood_version": dogood.__version__,
        }
        (tmp / "dogood_build.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        shutil.rmtree(tmp / _STATE, ignore_errors=True)
        (tmp / _KEY).unlink(missing_ok=True)
        commit(tmp, out)
    finally:
        if tmp.exists() and not (tmp / _KEY).exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return report


def photo_credits(chains, stats) -> list[dict[str, Any]]:
    """Credits of the third-party material the build used (the COCO photos), from each shift's tallies, by id."""
    found: dict[str, dict[str, Any]] = {}
    for config, chain in chains.items():
        for shift in chain:
            tallies = {}
            for s in stats[config].values():
                for key, values in (s.get("tallies") or {}).items():
                    name, _, field_ = key.partition(": ")
                    if name == shift.name:
                        merged = tallies.setdefault(field_, {})
                        for value, n in values.items():
                            merged[value] = merged.get(value, 0) + n
            for credit in shift.credits(tallies):
                found.setdefault(str(credit["id"]), credit)
    return [found[k] for k in sorted(found, key=lambda k: (len(k), k))]


def _load_path(out: Path) -> str:
    """How the card's load example names the folder: by its name, never by a local path (so a card does not
    depend on where the folder was built, and no absolute path reaches it)."""
    return out.name


# -- resumable work folder ---------------------------------------------------------------
_KEY = ".dogood-build-key.json"
_STATE = ".shards"


def _work_folder(out: Path, key: dict[str, Any]) -> Path:
    """``.<out>.partial`` beside ``out``: reused when it was left by a build of the same key, else made anew.

    The key (recipe, version, seed, chains, source, document ids, dogood version...)
    decides whether the shards a killed build finished can be kept.
    """
    work = out.with_name(f".{out.name}.partial")
    text = json.dumps(key, sort_keys=True, default=str)
    if work.exists() or work.is_symlink():
        ours = (work / _KEY).is_file() or (work / _STATE).is_dir() or is_dogood_build(work)
        if work.is_symlink() or not work.is_dir() or (not ours and any(work.iterdir())):
            raise OutputError(f"{work} is in the way of the build's work folder and was not left by a dogood "
                              "build; move it away")
        try:
            same = (work / _KEY).read_text(encoding="utf-8") == text
        except OSError:
            same = False
        if not same:
            shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    if not (work / _KEY).exists():
        write_atomic(work / _KEY, text)
    return work


def _state_path(work: Path, split: str, k: int) -> Path:
    return work / _STATE / f"{split}-{k:05d}.json"


def _read_state(work: Path, split: str, k: int, configs: list[str], num_shards: int) -> dict[str, Any] | None:
    """A finished shard's record, when it and all its Parquet files are there; else ``None`` (write it again)."""
    try:
        state = json.loads(_state_path(work, split, k).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(state, dict):
        return None
    if not all(shard_path(work, c, split, k, num_shards).is_file() for c in configs):
        return None
    if set(state.get("stats", {})) != set(configs):
        return None
    return state


def _write_state(work: Path, split: str, k: int, state: dict[str, Any]) -> None:
    path = _state_path(work, split, k)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(state, sort_keys=True, default=_jsonable))


def _jsonable(value):
    if isinstance(value, Counter):
        return dict(value)
    raise TypeError(f"cannot store {type(value).__name__} in a shard record")


def _as_counters(stats: dict[str, Any]) -> dict[str, Any]:
    """A shard record's statistics with the per-name tallies as Counters again (for :func:`_add_stats`)."""
    return {k: Counter(v) if isinstance(v, dict) else v for k, v in stats.items()}



def write_previews(folder: Path, chains, sources, ids, seed: int, skipped: set) -> dict[str, str]:
    """For each config, ``previews/<config>.jpg``: the first document of the first split, original beside shifted.

    Made in this process from the same seeds as the rows, so they do not depend on the number of workers.
    Returns config -> path relative to ``folder``.
    """
    from dogood.preview import render_preview

    split = next(iter(sources))
    first = next((i for i in ids[split] if (split, i) not in skipped), None)
    if first is None:
        return {}
    original = sources[split].load(first)
    (folder / "previews").mkdir(exist_ok=True)
    out = {}
    for config, chain in chains.items():
        shifted = apply_chain(original, chain, seed)
        image = render_preview(original, shifted, max_height=800, title_right=config)
        rel = f"previews/{config}.jpg"
        image.convert("RGB").save(folder / rel, format="JPEG", quality=85)
        out[config] = rel
    return out


def _run(tasks, spec: WorkerSpec, num_proc: int):
    """Yield processed documents in task order, in this process or a pool."""
    num_proc = min(num_proc, len(tasks))  # no more workers than documents
    if num_proc <= 1:
        _init_worker(spec)
        try:
            yield from map(_process, tasks)
        finally:
            _WORKER.clear()
        return
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    chunk = max(1, min(8, len(tasks) // (num_proc * 8) or 1))
    # Backpressure: Pool.imap hands out every task at once, and finished rows (image bytes
    # and all) pile up in the driver when it writes slower than the workers shift. At most
    # `window` tasks are in flight; the pool's feeder thread waits for the driver.
    window = num_proc * chunk * 4
    free = threading.Semaphore(window)
    stop = threading.Event()

    def feed():
        for task in tasks:
            while not free.acquire(timeout=0.1):
                if stop.is_set():
                    return
            yield task

    with ctx.Pool(num_proc, initializer=_init_worker, initargs=(spec,)) as pool:
        try:
            for result in pool.imap(_process, feed(), chunksize=chunk):
                free.release()
                yield result
        finally:
            stop.set()  # before the pool terminates: its feeder thread must not wait on the window
