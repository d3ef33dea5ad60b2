"""What a build writes beside its rows: preview images, photo credits, the card and ``dogood_build.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import dogood
from dogood.pipeline.aggregate import BuildTotals
from dogood.pipeline.plan import BuildPlan
from dogood.pipeline.worker import apply_chain
from dogood.safety import BUILD_MARKER
from dogood.writer import ATTRIBUTION, attribution_file, render_card


def write_card(plan: BuildPlan, work: Path, totals: BuildTotals, source_sha256: dict[str, str | None]) -> None:
    """Write ``previews/``, the photo credits, ``README.md`` and ``dogood_build.json`` into ``work``.

    ``source_sha256``: per split, the fingerprint of the files read (``push`` checks a build's reuse with it).
    """
    skipped_ids = {(s["split"], s["id"]) for s in totals.skipped}
    previews = write_previews(work, plan.chains, plan.sources, plan.ids, plan.seed, skipped_ids)
    credits = photo_credits(plan.chains, totals.stats)
    if credits:
        (work / ATTRIBUTION).write_text(attribution_file(credits), encoding="utf-8")
    facts = {
        "recipe": plan.recipe, "schema": plan.schema, "box_level": plan.box_level, "shared_draws": plan.shared_draws,
        "seed": plan.seed, "limit": plan.limit, "chain_params": plan.chain_params(), "credits": credits,
        "source": plan.source_info, "splits_info": totals.splits_info, "stats": totals.stats,
        "skipped": totals.skipped, "dogood_version": dogood.__version__, "notes": plan.notes, "previews": previews,
    }
    card = render_card(**facts, load_path=load_path(plan.out))
    (work / "README.md").write_text(card, encoding="utf-8")
    record = build_record(plan, facts, source_sha256)
    (work / "dogood_build.json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def build_record(plan: BuildPlan, facts: dict[str, Any], source_sha256: dict[str, str | None]) -> dict[str, Any]:
    """``dogood_build.json``: the card's facts, the recipe's chains and the fingerprints of the source read."""
    recipe = plan.recipe
    record = {k: v for k, v in facts.items() if k not in ("recipe", "splits_info")}
    return {**BUILD_MARKER, **record, "recipe": recipe.name, "version": recipe.version,
            "description": recipe.description, "splits": facts["splits_info"], "source_sha256": source_sha256,
            "chains": plan.recipe_chains()}


def load_path(out: Path) -> str:
    """How the card's load example names the folder: by its name, never by a local path (so a card does not
    depend on where the folder was built, and no absolute path reaches it)."""
    return out.name


def photo_credits(chains, stats) -> list[dict[str, Any]]:
    """Credits of the third-party material the build used (the COCO photos), from each shift's tallies, by id."""
    found: dict[str, dict[str, Any]] = {}
    for config, chain in chains.items():
        for shift in chain:
            for credit in shift.credits(_shift_tallies(shift.name, stats[config])):
                found.setdefault(str(credit["id"]), credit)
    return [found[k] for k in sorted(found, key=lambda k: (len(k), k))]


def _shift_tallies(shift_name: str, by_split: dict[str, dict[str, Any]]) -> dict[str, dict[str, int]]:
    """One shift's tallies (field -> value -> count) summed over the splits of a config."""
    tallies: dict[str, dict[str, int]] = {}
    for s in by_split.values():
        for key, values in (s.get("tallies") or {}).items():
            name, _, field_ = key.partition(": ")
            if name == shift_name:
                merged = tallies.setdefault(field_, {})
                for value, n in values.items():
                    merged[value] = merged.get(value, 0) + n
    return tallies


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
