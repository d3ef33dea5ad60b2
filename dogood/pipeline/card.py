"""What a build writes beside its rows: preview images, photo credits, the card and ``dogood_build.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dogood import stats as card_stats
from dogood.pipeline.aggregate import BuildTotals
from dogood.pipeline.plan import BuildPlan
from dogood.pipeline.worker import apply_chain
from dogood.safety import BUILD_MARKER
from dogood.schema import FUNSD_LABELS
from dogood.version import __version__
from dogood.writer import ATTRIBUTION, attribution_file, parquet_sizes, render_card


def write_card(plan: BuildPlan, work: Path, totals: BuildTotals, source_sha256: dict[str, str | None]) -> None:
    """Write ``previews/``, the photo credits, ``README.md`` and ``dogood_build.json`` into ``work``.

    ``source_sha256``: per split, the fingerprint of the files read (``push`` checks a build's reuse with it).
    """
    skipped_ids = {(s["split"], s["id"]) for s in totals.skipped}
    previews = write_previews(work, plan.chains, plan.sources, plan.ids, plan.seed, skipped_ids)
    credits = card_stats.credits(plan.chains, totals.stats)
    if credits:
        (work / ATTRIBUTION).write_text(attribution_file(credits), encoding="utf-8")
    facts = {
        "recipe": plan.recipe, "schema": plan.schema, "box_level": plan.box_level, "shared_draws": plan.shared_draws,
        "seed": plan.seed, "limit": plan.limit, "chain_params": plan.chain_params(), "credits": credits,
        "source": plan.source_info, "splits_info": totals.splits_info, "stats": totals.stats,
        "skipped": totals.skipped, "dogood_version": __version__, "notes": plan.notes, "previews": previews,
        **({"copies": plan.copies} if plan.copies != 1 else {}),  # absent: one row per document, as before copies
        # absent without severities, as before them
        **({"levels": {c: list(plan.recipe.levels[c]) for c in plan.chains if c in plan.recipe.levels}}
           if any(c in plan.recipe.levels for c in plan.chains) else {}),
    }
    if plan.labels is not None and plan.labels != FUNSD_LABELS:  # FUNSD's need no word: its builds stay as they were
        facts["labels"] = list(plan.labels)
    card = render_card(**facts, load_path=load_path(plan.out), download_sizes=parquet_sizes(work))
    (work / "README.md").write_text(card, encoding="utf-8")
    record = build_record(plan, facts, source_sha256)
    (work / "dogood_build.json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")


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
