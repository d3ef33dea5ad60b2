"""Sum the finished shards' records into each config's and split's totals, as the card and the record show them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dogood.pipeline import stats as card_stats
from dogood.pipeline.parquet_writer import shard_path
from dogood.pipeline.plan import BuildPlan
from dogood.pipeline.shards import BuildError, ShardRecord, drop_empty_shard, num_shards


@dataclass
class BuildTotals:
    """What a build wrote: per split, per config."""

    documents: dict[str, int] = field(default_factory=dict)  # split -> documents written
    skipped: list[dict[str, str]] = field(default_factory=list)
    stats: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # config -> split -> statistics
    splits_info: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)  # config -> split -> sizes
    checksums: dict[str, str] = field(default_factory=dict)  # shard file (relative path) -> sha256 at write time


def aggregate(plan: BuildPlan, work: Path, records: list[ShardRecord]) -> BuildTotals:
    """Sum ``records`` in split and shard order; drop the shard files that have no row.

    Raises :class:`~dogood.pipeline.shards.BuildError` when a split has no row to write.
    """
    splits = plan.recipe.splits
    records = sorted(records, key=lambda t: (splits.index(t[0]), t[1]))
    totals = BuildTotals(stats={c: {s: {} for s in splits} for c in plan.configs})
    files = {c: {s: {} for s in splits} for c in plan.configs}
    for split, k, record in records:
        totals.documents[split] = totals.documents.get(split, 0) + record["documents"]
        totals.skipped.extend(record["skipped"])
        for config in plan.configs:
            card_stats.add(totals.stats[config][split], card_stats.from_record(record["stats"][config]))
            _add_files(files[config][split], record["files"][config])
            count = num_shards(len(plan.ids[split]), plan.shard_size(split))
            if record["files"][config]["num_rows"] == 0:
                drop_empty_shard(work, config, split, k, count)
            else:
                rel = shard_path(work, config, split, k, count).relative_to(work).as_posix()
                totals.checksums[rel] = record["files"][config]["sha256"]
    _check_every_split_has_rows(plan, files)
    for by_split in totals.stats.values():
        for split_stats in by_split.values():
            card_stats.finish(split_stats)
    totals.splits_info = {config: {split: _sizes(files[config][split]) for split in splits} for config in plan.configs}
    return totals


def _add_files(info: dict[str, int], shard: dict[str, int]) -> None:
    """Add one shard file's row and byte counts to a split's; count the shard when it has rows."""
    for name in ("num_rows", "num_bytes"):
        info[name] = info.get(name, 0) + shard[name]
    info["num_shards"] = info.get("num_shards", 0) + (shard["num_rows"] != 0)


def _check_every_split_has_rows(plan: BuildPlan, files: dict[str, dict[str, dict[str, int]]]) -> None:
    for by_split in files.values():
        for split, info in by_split.items():
            if not info.get("num_shards"):
                ids = plan.ids[split]
                why = f"all {len(ids)} were skipped" if ids else "the source lists none"
                raise BuildError(f"split {split!r} has no document to write ({why}); nothing was written")


def _sizes(info: dict[str, int]) -> dict[str, int]:
    return {"num_examples": info.get("num_rows", 0), "num_bytes": info.get("num_bytes", 0),
            "num_shards": info.get("num_shards", 0)}
