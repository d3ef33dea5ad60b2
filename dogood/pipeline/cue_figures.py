"""A build's cue figures: each config's declared cue tests (:mod:`dogood.measures.cues`), run on its own pages.

After the shards are written, for every config whose chain declares cue tests
(:meth:`dogood.shifts.base.Shift.declared_cues`), the first :data:`CUE_PAGES`
rows of its first split with rows are read back from the build's own Parquet
files, each paired with its source page (read again from the source), and
each cue test gives its cross-validated AUROC. The card shows them
(:func:`cue_rows`) and ``dogood_build.json`` keeps them under ``cues``. Read
in the main process in row order, so the figures do not depend on the number
of workers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dogood.core.document import Document
from dogood.core.schema import row_to_document
from dogood.measures.cues import CUES, CueFigure

#: Pages each config's cue tests read (its first rows, in source order): enough to cross-validate by page.
CUE_PAGES = 100

#: An AUROC above this is a cue the card flags (a classifier tells the two kinds of sample apart).
CUE_FLAG = 0.6


def config_cues(chain) -> list[str]:
    """The cue tests a chain's steps declare, in :data:`dogood.measures.cues.CUES` order."""
    declared = set()
    for step in chain:
        declared |= set(step.declared_cues())
    return [name for name in CUES if name in declared]


def measure_cues(plan, work: Path, skipped: list[dict[str, str]] | None = None,
                 pages: int = CUE_PAGES) -> dict[str, dict[str, dict[str, Any] | None]]:
    """``{config: {cue: figure or None}}`` (:meth:`dogood.measures.cues.CueFigure.as_dict`) for the configs of
    ``plan`` (:class:`dogood.pipeline.plan.BuildPlan`) whose chains declare cue tests, from the rows written in
    ``work``; ``None`` where too few pages had samples."""
    skipped_ids = {(s["split"], s["id"]) for s in skipped or ()}
    originals: dict[tuple[str, str], Document] = {}
    out: dict[str, dict[str, dict[str, Any] | None]] = {}
    for config, chain in plan.chains.items():
        names = config_cues(chain)
        if not names:
            continue
        pairs = []
        for split in plan.recipe.splits:
            for row in _rows(work, config, split, pages - len(pairs)):
                doc_id = str(row["id"]).rsplit("#", 1)[0] if plan.copies > 1 else str(row["id"])
                if (split, doc_id) in skipped_ids:
                    continue
                key = (split, doc_id)
                if key not in originals:
                    originals[key] = plan.sources[split].load(doc_id)
                pairs.append((originals[key], row_to_document(row, plan.schema)))
            if pairs:
                break
        out[config] = {name: as_record(CUES[name].measure(pairs) if pairs else None, len(pairs)) for name in names}
    return out


def as_record(figure: CueFigure | float | None, pages: int) -> dict[str, Any] | None:
    """A cue function's result as the record keeps it: a :class:`~dogood.measures.cues.CueFigure`'s own
    (:meth:`~dogood.measures.cues.CueFigure.as_dict`), or a bare AUROC (a number) with no interval."""
    if figure is None:
        return None
    if isinstance(figure, CueFigure):
        return figure.as_dict()
    return {"auroc": round(float(figure), 4), "low": None, "high": None, "pages": pages, "samples": None}


def _rows(work: Path, config: str, split: str, limit: int):
    """The first ``limit`` rows of ``config``'s ``split`` in ``work`` (its shards in order), as dicts."""
    import pyarrow.parquet as pq

    if limit <= 0:
        return
    for path in sorted((Path(work) / "data" / config).glob(f"{split}-*.parquet")):
        with pq.ParquetFile(path) as shard:
            for batch in shard.iter_batches(batch_size=16):
                for row in batch.to_pylist():
                    yield row
                    limit -= 1
                    if limit <= 0:
                        return


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
