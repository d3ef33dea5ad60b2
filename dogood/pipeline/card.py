"""The data card and what a build writes beside its rows: the README card, preview images, photo credits, ``dogood_build.json``."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from datasets.info import DatasetInfo, DatasetInfosDict
from datasets.splits import SplitDict, SplitInfo
from huggingface_hub import DatasetCard, DatasetCardData
from jinja2 import Environment, StrictUndefined

from dogood.core import fs
from dogood.core.schema import FUNSD_LABELS, features_for
from dogood.pipeline import stats as card_stats
from dogood.pipeline.aggregate import BuildTotals
from dogood.pipeline.cue_figures import cue_legend, cue_rows, measure_cues
from dogood.pipeline.parquet_writer import parquet_sizes
from dogood.pipeline.plan import BuildPlan
from dogood.pipeline.safety import BUILD_MARKER, read_build_info
from dogood.pipeline.worker import apply_chain, preview_jpeg
from dogood.sources import DRAWN_KINDS
from dogood.version import __version__


def card_template_path() -> Path:
    """The card template: shipped in ``data_cards/`` (package ``dogood.data_cards``)."""
    import importlib.resources

    checkout = Path(__file__).resolve().parents[2] / "data_cards" / "dataset_card.md"  # a source checkout's own
    if (checkout.parents[1] / "pyproject.toml").is_file() and checkout.is_file():
        return checkout
    try:
        path = Path(str(importlib.resources.files("dogood.data_cards") / "dataset_card.md"))
        if path.is_file():
            return path
    except ModuleNotFoundError:
        pass
    return Path(__file__).resolve().parents[2] / "data_cards" / "dataset_card.md"


def render_card(
    *,
    recipe,
    schema: str,
    source: dict[str, Any],
    splits_info: dict[str, dict[str, dict[str, Any]]],
    stats: dict[str, dict[str, dict[str, Any]]],
    skipped: list[dict[str, str]],
    dogood_version: str,
    notes: dict[str, list[str]] | None = None,
    previews: dict[str, str] | None = None,
    repo_id: str | None = None,
    results: list[dict[str, Any]] | None = None,
    box_level: str | None = None,
    shared_draws: dict[str, dict[str, int]] | None = None,
    seed: int | None = None,
    limit: int | None = None,
    chain_params: dict[str, list[dict[str, Any]]] | None = None,
    credits: list[dict[str, Any]] | None = None,
    load_path: str | None = None,
    download_sizes: dict[str, int] | None = None,
    copies: int = 1,
    labels: list[str] | None = None,
    levels: dict[str, list] | None = None,
    quads: bool = False,
    cues: dict[str, dict[str, Any]] | None = None,
) -> str:
    """The dataset card (README.md) of a built folder.

    ``download_sizes[config]``: the bytes of the config's Parquet files (:func:`parquet_sizes`), written as
    ``download_size`` as the Hub's own cards do. ``datasets`` caches a local folder under a hash of the card's
    YAML alone, so this is what makes ``load_dataset`` read a rebuilt folder again rather than serve the
    previous build's rows from its cache.

    ``splits_info[config][split]`` has ``num_examples``, ``num_bytes`` and
    ``num_shards``; ``stats[config][split]`` the per-config statistics;
    ``notes[config]`` lines the config's shifts add (:meth:`Shift.card_notes`);
    ``previews[config]`` the path of its preview image in the folder;
    ``repo_id`` the Hub repository it is published to (the load example uses it
    and the version tag); ``results`` ``dogood eval`` reports (``report.json``)
    shown as a results table; ``box_level`` the convention of ``bboxes``
    (default: the schema's); ``shared_draws[config]`` the configs it shares
    its first steps' random draws with (:func:`dogood.core.seeds.shared_prefixes`);
    ``seed`` the seed the build used (default: the recipe's); ``limit`` the
    ``--limit`` of a partial build; ``chain_params[config]`` each step's shift
    and full parameters (default: the recipe's chain); ``credits`` the
    third-party material used (:func:`dogood.pipeline.stats.credits`);
    ``load_path`` the folder's name in the load example when there is no repo; ``copies`` the rows
    written per source document and config (``copies: k``);
    ``labels`` the entity labels of FUNSD-style data that are not FUNSD's (they name ``ner_tags``);
    ``levels[config]`` a severity config's ``[config it sweeps, level]`` (the recipe's ``severities:``);
    ``cues[config][cue]`` the build's cue figures (:mod:`dogood.pipeline.cue_figures`).

    Every statement in the card is a fact of the build: values come from the
    build's record (``dogood_build.json``), never from what the recipe asked.
    """
    from dogood.core.papers import CITATIONS
    from dogood.core.schema import DEFAULT_BOX_LEVEL
    from dogood.pipeline.stats import finish, from_record
    from dogood.shifts import SHIFTS
    from dogood.shifts.describe import cited_keys, inspired_lines, shift_classes

    box_level = box_level or DEFAULT_BOX_LEVEL[schema]
    seed = recipe.seed if seed is None else seed
    credits = credits or []
    features = features_for(schema, labels, quads)
    most = max((i.get("num_examples", 0) for by in splits_info.values() for i in by.values()), default=0)
    sources = [source.get("hub_source") or f"extended|other-{source.get('kind', 'unknown')}"]
    sources += sorted({c["source_dataset"] for c in credits if c.get("source_dataset")})
    card_data = DatasetCardData(
        pretty_name=recipe.name,
        license="other",
        license_name=source.get("license_name", "source-terms"),
        **({"license_link": source["license_link"]} if source.get("license_link") else {}),
        language=["en"],
        size_categories=[size_category(most)],
        task_categories={"funsd": ["token-classification"], "docvqa": ["document-question-answering"]}.get(
            schema, ["image-classification"]),
        tags=["document-ai", "out-of-distribution", "do-good", "dogood"],
        source_datasets=sources,
        configs=[
            {
                "config_name": config,
                "data_files": [{"split": split, "path": f"data/{config}/{split}-*.parquet"} for split in by_split],
                **({"default": True} if k == 0 else {}),
            }
            for k, (config, by_split) in enumerate(splits_info.items())
        ],
    )
    infos = {}
    for config, by_split in splits_info.items():
        split_dict = SplitDict()
        for split, info in by_split.items():
            split_dict.add(SplitInfo(name=split, num_examples=info["num_examples"], num_bytes=info["num_bytes"]))
        infos[config] = DatasetInfo(features=features, splits=split_dict, config_name=config, version=recipe.version,
                                    download_size=(download_sizes or {}).get(config),
                                    dataset_size=sum(i["num_bytes"] for i in by_split.values()))
    DatasetInfosDict(infos).to_dataset_card_data(card_data)
    chains = {config: recipe.configs[config] for config in splits_info}
    stats = {config: {split: finish(from_record(s)) for split, s in by_split.items()} for config, by_split in stats.items()}
    used = shift_classes(spec.get("shift", "") for chain in chains.values() for spec in chain)
    steps = {config: _steps(config, chains, chain_params) for config in chains}
    box_notes = {
        config: [(spec["shift"], SHIFTS[spec["shift"]].box_levels.get(box_level, ""))
                 for spec in chain if spec.get("shift") in SHIFTS and SHIFTS[spec["shift"]].family in ("layout", "image")]
        for config, chain in chains.items()
    }
    template = _compiled_template(fs.read_text(card_template_path(), what="card template"))
    body = template.render(
        card_data=card_data.to_yaml(),
        recipe=recipe,
        schema=schema,
        source=source,
        drawn_source=isinstance(source, dict) and source.get("kind") in DRAWN_KINDS,
        chains=chains,
        stats=stats,
        skipped=skipped,
        dogood_version=dogood_version,
        notes=notes or {},
        previews=previews or {},
        repo_id=repo_id,
        results=[_result_table(r, set(chains)) for r in results or []],
        papers=[CITATIONS[key].markdown() for key in cited_keys(used)],
        inspired=inspired_lines(used),
        glossary=_parameter_glossary(used),
        licences=_licences(credits),
        box_level=box_level,
        box_notes=box_notes,
        seed=seed,
        limit=limit,
        copies=copies,
        steps=steps,
        words_line={config: _words_line(shift_classes(s.get("shift", "") for s in chain), schema)
                    for config, chain in chains.items()},
        count_help=_count_help(stats),
        shown={config: {split: _shown(s) for split, s in by_split.items()} for config, by_split in stats.items()},
        credits=credits,
        attribution=ATTRIBUTION,
        load_path=load_path or "PATH",
        labels=labels,
        tag_names=list(features["ner_tags"].feature.names) if schema == "funsd" else [],
        shared_draws={c: {o: n for o, n in (shared_draws or {}).get(c, {}).items() if o in chains} for c in chains},
        severity_rows=_severity_rows(chains, stats, levels or {}),
        factors=_factor_context(chains, chain_params, stats, box_level),
        quads=quads,
        cue_rows=cue_rows(cues), cue_legend=cue_legend(cues),
    )
    return str(DatasetCard(body))


@functools.lru_cache(maxsize=4)
def _compiled_template(text: str):
    """The card template compiled (once per text: compiling takes longer than rendering)."""
    return Environment(undefined=StrictUndefined, keep_trailing_newline=True).from_string(text)


def render_card_from_build(folder: str | Path, *, repo_id: str | None = None,
                           results: list[dict[str, Any]] | None = None) -> str:
    """Render a built folder's card again from its ``dogood_build.json`` (e.g. with the Hub repo it is pushed to)."""
    from types import SimpleNamespace

    build = read_build_info(folder)
    chains = build["chains"]
    splits = list(next(iter(build["splits"].values()))) if build["splits"] else []
    recipe = SimpleNamespace(name=build["recipe"], version=build["version"], description=build.get("description", ""),
                             seed=build["seed"], splits=splits, configs=chains, overrides=build.get("overrides", []))
    return render_card(recipe=recipe, schema=build["schema"], source=build["source"], splits_info=build["splits"],
                       stats=build["stats"], skipped=build["skipped"], dogood_version=build["dogood_version"],
                       notes=build.get("notes"), previews=build.get("previews"), repo_id=repo_id, results=results,
                       box_level=build.get("box_level"), shared_draws=build.get("shared_draws"), seed=build["seed"],
                       limit=build.get("limit"), chain_params=build.get("chain_params"), credits=build.get("credits"),
                       load_path=Path(folder).name, download_sizes=parquet_sizes(folder),
                       copies=build.get("copies", 1), labels=build.get("labels"), levels=build.get("levels"),
                       quads=build.get("quads", False), cues=build.get("cues"))


ATTRIBUTION = "ATTRIBUTION.md"


def attribution_file(credits: list[dict[str, Any]]) -> str:
    """``ATTRIBUTION.md``: one line per credited item (photo, its page, its licence), ShareAlike ones marked."""
    lines = ["# Attribution", "",
             "Third-party material in this dataset, each under its own licence. Pages made from a ShareAlike",
             "photo are derivatives of it and must be shared under that photo's licence.", "",
             "| item | source | licence | ShareAlike |", "|---|---|---|---|"]
    for c in credits:
        lines.append(f"| {c['title']} | {c['url']} | [{c['license']}]({c['license_url']}) | "
                     f"{'yes' if c.get('share_alike') else 'no'} |")
    return "\n".join(lines) + "\n"


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` tag for ``n`` rows."""
    for limit, tag in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
                       (10_000_000, "1M<n<10M")):
        if n < limit:
            return tag
    return "10M<n<100M"


def _steps(config: str, chains, chain_params) -> list[tuple[str, list[tuple[str, Any]]]]:
    """A config's steps as (shift, parameters sorted by name): the full parameters when the build recorded them."""
    if chain_params and config in chain_params:
        return [(step["shift"], sorted(step["params"].items())) for step in chain_params[config]]
    return [(spec["shift"], sorted((k, v) for k, v in spec.items() if k != "shift")) for spec in chains[config]]


def _words_line(shifts: list[type], schema: str) -> str:
    """Where a config's words come from: kept from the source, or re-read from the shifted page (``reads_words``)."""
    readers = [cls.name for cls in shifts if cls.reads_words]
    if readers:
        return f"Words: re-read from the shifted page by {', '.join(f'`{n}`' for n in readers)} (see its note)."
    origin = "Tesseract on the source page" if schema in ("rvl_cdip",) else "the source"
    return f"Words: from {origin}; no OCR is run on the shifted page."


def _count_help(stats) -> dict[str, str]:
    """What each count and tally the card shows means (``shift: name`` -> the shift's ``counts_help`` or
    ``tallies_help``), in the order of those keys."""
    from dogood.shifts import SHIFTS

    out = {}
    for by_split in stats.values():
        for s in by_split.values():
            for name, done in s["shifts"].items():
                cls = SHIFTS.get(name)
                if cls is None:
                    continue
                for count in done["counts"]:
                    out[f"{name}: {count}"] = cls.counts_help.get(count, "")
                for tally in done["tallies"]:
                    out[f"{name}: {tally}"] = cls.tallies_help.get(tally) or cls.counts_help.get(tally, "")
    return {key: meaning for key, meaning in sorted(out.items()) if meaning}


def _shown(s: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A config's and split's shift counts and tallies as the card lists them, keyed ``shift: name``."""
    return {
        "counts": {f"{name}: {count}": n for name, done in s["shifts"].items() for count, n in done["counts"].items()},
        "tallies": {f"{name}: {tally}": values for name, done in s["shifts"].items()
                    for tally, values in done["tallies"].items()},
    }


def _severity_rows(chains, stats, levels: dict[str, list]) -> list[dict[str, Any]]:
    """The card's table of severity levels: per severity config and split, the level's parameters and the measured
    effects (:func:`dogood.measures.effects.measured`)."""
    from dogood.measures.effects import measured
    from dogood.shifts import SHIFTS

    rows = []
    for config, chain in chains.items():
        if config not in levels:
            continue
        base, level = levels[config]
        params = "; ".join(f"`{step['shift']}` " + ", ".join(f"`{k}={step.get(k, v)}`" for k, v in
                                                              SHIFTS[step["shift"]].severities[level].items())
                           for step in chain if step.get("shift") in SHIFTS and SHIFTS[step["shift"]].severities
                           and level in SHIFTS[step["shift"]].severities)
        for split, s in stats.get(config, {}).items():
            m = measured(s)
            rows.append({
                "base": base, "level": level, "params": params, "split": split,
                "text_changed": "–" if m["text_changed"] is None else f"{100 * m['text_changed']:.1f}%",
                "box_shift": "–" if m["box_shift"] is None else f"{m['box_shift']:.4f}",
                "ink_contrast": "–" if m["ink_contrast"] is None else
                f"{m['source_contrast']:.1f} → {m['ink_contrast']:.1f} ({_signed(-m['contrast_lost'])})",
                **{k: "–" if m[k] is None else f"{100 * m[k]:.1f}%" for k in ("words_dropped", "words_reordered")},
                "quality": "–" if m["ssim"] is None else f"{m['ssim']:.3f} / {m['ms_ssim']:.3f}",
                "aligned_quality": ("–" if m["aligned_ssim"] is None else
                                    f"{m['aligned_ssim']:.3f} / {m['aligned_ms_ssim']:.3f}"),
            })
    return rows


def _factor_context(chains, chain_params, stats, box_level: str | None = None) -> dict[str, Any]:
    """The card's factor table (:mod:`dogood.pipeline.factor_table`): its heads, rows of cell texts, and the
    undeclared changes; empty rows for a build recorded before factors were measured. Box factors measured on the
    ``bboxes`` column say so in the legend, at the build's ``box_level``."""
    from dogood.measures.factors import FACTORS, TOLERANCE, UNITS
    from dogood.pipeline.factor_table import cell_text, factor_rows, warnings

    steps = {config: (chain_params or {}).get(config, chains[config]) for config in chains}
    rows = factor_rows(steps, stats)
    # a factor nothing could be measured on anywhere (reading order without entities) gets no column
    shown = [k for k, name in enumerate(FACTORS) if any(r["cells"][k]["share"] is not None for r in rows)]
    return {
        "heads": [FACTORS[k].replace("_", " ") for k in shown],
        "rows": [{"config": r["config"], "cells": [cell_text(r["cells"][k]) for k in shown]} for r in rows],
        "warnings": warnings(rows),
        "legend": [{"name": FACTORS[k], "what": _factor_help(FACTORS[k], rows, k, box_level), "unit": UNITS[FACTORS[k]],
                    "tolerance": f"{100 * TOLERANCE[FACTORS[k]]:g}%"} for k in shown],
    }


def _factor_help(name: str, rows: list[dict[str, Any]], k: int, box_level: str | None) -> str:
    """A factor's legend text; a box factor measured on the ``bboxes`` column says which share comes first."""
    from dogood.measures.factors import FACTOR_HELP

    if not any("column" in r["cells"][k] for r in rows):
        return FACTOR_HELP[name]
    return (f"{FACTOR_HELP[name]}, first in the `bboxes` column as built ({box_level or 'its'} level: the boxes a "
            "model reading that column is given, over its paired tokens, on the 0-1000 grid), then in brackets on "
            "the record's own word boxes (the `dogood` column)")


def _signed(value: float) -> str:
    """``+1.5``, ``−23.4`` (a typographic minus, as the card's other figures), ``0.0``."""
    text = f"{abs(value):.1f}"
    return text if text == "0.0" else ("+" if value > 0 else "−") + text


def _parameter_glossary(shifts: list[type]) -> dict[str, list[dict[str, str]]]:
    """Per shift used, its declared parameters that have a description (:meth:`Shift.describe`)."""
    glossary = {cls.name: [row for row in cls.describe() if row["description"]] for cls in shifts}
    return {name: rows for name, rows in glossary.items() if rows}


def _licences(credits: list[dict[str, Any]]) -> dict[str, int]:
    """Credited items per licence."""
    out: dict[str, int] = {}
    for c in credits:
        out[c["license"]] = out.get(c["license"], 0) + 1
    return dict(sorted(out.items()))


def _result_table(report: dict[str, Any], configs: set[str] | None = None) -> dict[str, Any]:
    """One ``dogood eval`` report as rows for the card: dataset, split, score and change from ID, in percent as the
    report prints them (a config whose measured changes the model does not see says so beside its name).

    With ``configs``, OOD rows of configs this dataset does not publish (``name/config``) are left out. Reports of
    dogood versions before one scale (fractions, ``drop`` positive for a loss) are read as they meant.
    """
    metric = report.get("metric", "score")
    percent = report.get("scale") == "percent"  # as dogood.eval.formats.report_row reads it (pipeline imports no eval)
    rows = []
    for d in report.get("datasets", []):
        if configs is not None and d.get("role") == "ood" and str(d.get("dataset", "")).rpartition("/")[2] not in configs:
            continue
        value, change, note = d.get("value"), d.get("change") if percent else d.get("drop"), d.get("note")
        if not percent:
            value = None if value is None else 100.0 * value
            change = None if change is None else -100.0 * change
        rows.append({
            "dataset": d.get("dataset") if not note else f"{d.get('dataset')} (changes only what the model does not see)",
            "role": d.get("role"), "split": d.get("split"),
            "value": None if value is None else round(value, 2),
            "change": None if change is None else round(change, 2) + 0.0,
        })
    return {"model": report.get("model", "model"), "metric": metric, "rows": rows, "box_level": report.get("box_level")}


def write_card(plan: BuildPlan, work: Path, totals: BuildTotals, source_sha256: dict[str, str | None],
               previews: dict[str, bytes] | None = None, num_proc: int = 1) -> None:
    """Write ``previews/``, the photo credits, ``README.md`` and ``dogood_build.json`` into ``work``.

    ``source_sha256``: per split, the fingerprint of the files read (``push`` checks a build's reuse with it).
    ``previews``: those the workers drew (:func:`write_previews`). ``num_proc``: processes drawing the cue
    tests' samples (:func:`~dogood.pipeline.cue_figures.measure_cues`).
    """
    skipped_ids = {(s["split"], s["id"]) for s in totals.skipped}
    previews = write_previews(work, plan.chains, plan.sources, plan.ids, plan.seed, skipped_ids, previews)
    credits = card_stats.credits(plan.chains, totals.stats)
    if credits:
        (work / ATTRIBUTION).write_text(attribution_file(credits), encoding="utf-8")
    facts = {
        "recipe": plan.recipe, "schema": plan.schema, "box_level": plan.box_level, "shared_draws": plan.shared_draws,
        "seed": plan.seed, "limit": plan.limit, "chain_params": plan.chain_params(), "credits": credits,
        "source": plan.source_info, "splits_info": totals.splits_info, "stats": totals.stats,
        "skipped": totals.skipped, "dogood_version": __version__, "notes": plan.notes, "previews": previews,
        **({"copies": plan.copies} if plan.copies != 1 else {}),  # absent: one row per document, as before copies
        **({"quads": True} if plan.quads else {}),  # absent: no quads column, as before quads
        # absent without severities, as before them
        **({"levels": {c: list(plan.recipe.levels[c]) for c in plan.chains if c in plan.recipe.levels}}
           if any(c in plan.recipe.levels for c in plan.chains) else {}),
    }
    if plan.labels is not None and plan.labels != FUNSD_LABELS:  # FUNSD's need no word: its builds stay as they were
        facts["labels"] = list(plan.labels)
    cues = measure_cues(plan, work, totals.skipped, num_proc=num_proc)
    if cues:  # absent where no config declares a cue test, as before cue tests
        facts["cues"] = cues
    card = render_card(**facts, load_path=load_path(plan.out), download_sizes=parquet_sizes(work))
    (work / "README.md").write_text(card, encoding="utf-8")
    record = build_record(plan, facts, source_sha256)
    record["sha256"] = file_checksums(work, totals.checksums)
    (work / "dogood_build.json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def file_checksums(work: Path, shards: dict[str, str]) -> dict[str, str]:
    """Relative path -> sha256 of every file of the dataset but its card and record (the shards' from their
    records, kept when they were written; previews and credits hashed now): push checks a build against it."""
    from dogood.core.fs import sha256_file

    out = dict(shards)
    for path in sorted(p for p in work.rglob("*") if p.is_file()):
        rel = path.relative_to(work).as_posix()
        if rel not in out and not rel.startswith(("data/", ".")) and rel not in ("README.md", "dogood_build.json"):
            out[rel] = sha256_file(path)
    return dict(sorted(out.items()))


def build_record(plan: BuildPlan, facts: dict[str, Any], source_sha256: dict[str, str | None]) -> dict[str, Any]:
    """``dogood_build.json``: the card's facts, the recipe's chains and the fingerprints of the source read."""
    recipe = plan.recipe
    record = {k: v for k, v in facts.items() if k not in ("recipe", "splits_info")}
    return {**BUILD_MARKER, **record, "recipe": recipe.name, "version": recipe.version,
            "description": recipe.description, "overrides": list(recipe.overrides), "splits": facts["splits_info"], "source_sha256": source_sha256,
            "chains": plan.recipe_chains()}


def load_path(out: Path) -> str:
    """How the card's load example names the folder: by its name, never by a local path (so a card does not
    depend on where the folder was built, and no absolute path reaches it)."""
    return out.name


def write_previews(folder: Path, chains, sources, ids, seed: int, skipped: set,
                   drawn: dict[str, bytes] | None = None) -> dict[str, str]:
    """For each config, ``previews/<config>.jpg``: the first document of the first split, original beside shifted.

    ``drawn``: the previews the workers drew of the split's first document
    (:func:`dogood.pipeline.worker.preview_jpeg`, from the rows' own shifted pages); a config without one (that
    document skipped, or its shard finished by an earlier run) is drawn here from the same seeds, so the previews
    do not depend on the number of workers. Returns config -> path relative to ``folder``.
    """
    split = next(iter(sources))
    first = next((i for i in ids[split] if (split, i) not in skipped), None)
    if first is None:
        return {}
    drawn = dict(drawn or {}) if len(ids[split]) and first == ids[split][0] else {}
    original = None
    (folder / "previews").mkdir(exist_ok=True)
    out = {}
    for config, chain in chains.items():
        if config not in drawn:
            if original is None:
                original = sources[split].load(first)
            drawn[config] = preview_jpeg(original, apply_chain(original, chain, seed), config)
        rel = f"previews/{config}.jpg"
        (folder / rel).write_bytes(drawn[config])
        out[config] = rel
    return out
