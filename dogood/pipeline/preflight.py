"""Before a build: which configs of a recipe can run on this machine, which cannot and why, and how long it takes.

``dogood plan RECIPE`` reads the recipe, finds the source data without downloading it, asks every step of every
config what it needs (:meth:`dogood.shifts.base.Shift.requirements`: optional packages, NLTK data, Tesseract, COCO
photos, word vectors, models) and checks each on this machine, without loading a model or reading a page. Each
config gets a verdict: ``ready``; ``network`` (it runs, after a download that needs the network); ``cannot`` (what
is missing, and the command that installs it). A config ``dogood build`` would refuse before running is ``cannot``
here too, for the same reason, from the same checks (:func:`dogood.pipeline.plan.resolve_labels`,
:func:`~dogood.pipeline.plan.check_chain_labels`, the box-level checks), so ``plan`` and ``build`` agree on what
can run. The estimate multiplies the pages by the CPU figures of
:mod:`dogood.pipeline.cpu_costs` (dogood's benchmarks) and divides by the worker processes.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dogood.core.errors import DogoodError
from dogood.core.extras import have, install_line
from dogood.core.paths import cache_dir, data_dir
from dogood.pipeline.cpu_costs import (
    ONCE_MS,
    SHIFT_MS,
    config_fixed_seconds,
    config_ms,
    read_ms,
    start_seconds,
    wall_seconds,
)
from dogood.pipeline.recipe import Recipe

READY, NETWORK, CANNOT = "ready", "network", "cannot"
_RANK = {READY: 0, NETWORK: 1, CANNOT: 2}


@dataclass
class ConfigPlan:
    """One config's verdict, the reasons, and its estimated wall seconds (``None``: a step has no CPU figure)."""

    config: str
    verdict: str = READY
    reasons: list[str] = field(default_factory=list)
    seconds: float | None = 0.0

    def flag(self, verdict: str, reason: str) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)
        if _RANK[verdict] > _RANK[self.verdict]:
            self.verdict = verdict


@dataclass
class RecipePlan:
    """What :func:`plan_recipe` found: the source, documents per split, and each config's plan."""

    recipe: Recipe
    source: str
    source_verdict: str
    documents: dict[str, int | None]
    num_proc: int
    copies: int
    configs: list[ConfigPlan]
    read_seconds: float | None
    #: loading done once before the first page (TextAttack, word vectors, a scorer), seconds
    once_seconds: float = 0.0
    pages: int | None = None  # the pages estimated for (the source's, or ``--pages``)
    ray: bool = False  # ``num_proc`` Ray CPUs rather than local processes

    def total_seconds(self) -> float | None:
        """The estimated wall time of the configs that can run and have an estimate (``None``: pages unknown)."""
        runnable = [c for c in self.configs if c.verdict != CANNOT and c.seconds is not None]
        if self.read_seconds is None:
            return None
        return self.read_seconds + self.once_seconds + sum(c.seconds for c in runnable)

    def lines(self) -> list[str]:
        docs = ", ".join(f"{n if n is not None else '?'} {split}" for split, n in self.documents.items())
        copies = f" x {self.copies} copies" if self.copies > 1 else ""
        where = _workers(self.num_proc, self.ray)
        planned = f" (estimated for {self.pages:,} pages)" if self.pages is not None and self.pages != sum(
            n for n in self.documents.values() if n is not None) else ""
        head = [f"{self.recipe.name} v{self.recipe.version}: {self.source}; {docs} documents{copies}{planned}; "
                f"{where}", ""]
        width = max([len(c.config) for c in self.configs] + [6])
        rows = [f"  {'config'.ljust(width)}  {'verdict':8}  {'estimate':>9}  why"]
        for c in self.configs:
            rows.append(f"  {c.config.ljust(width)}  {c.verdict:8}  {_duration(c.seconds):>9}  "
                        + ("; ".join(c.reasons) or "-"))
        counts = {v: sum(c.verdict == v for c in self.configs) for v in (READY, NETWORK, CANNOT)}
        total = self.total_seconds()
        runnable = [c for c in self.configs if c.verdict != CANNOT]
        unknown = [c.config for c in runnable if c.seconds is None]
        tail = ["", f"{counts[READY]} of {len(self.configs)} configs ready, {counts[NETWORK]} need the network "
                    f"(a download), {counts[CANNOT]} cannot run here.",
                f"Estimated time for the {len(runnable) - len(unknown)} that can run"
                + (f" (not counting {', '.join(unknown)}: no CPU figure)" if unknown else "")
                + f": {_duration(total)} on {_workers(self.num_proc, self.ray, worker=False)} (reading the "
                f"source {_duration(self.read_seconds)}, loading once {_duration(self.once_seconds)}), from "
                "dogood's per-page CPU figures (bench/RESULTS.md, 2 shared AMD EPYC cores; "
                "dogood.pipeline.cpu_costs)."]
        return head + rows + tail


def _workers(n: int, ray: bool, worker: bool = True) -> str:
    if ray:
        return f"{n} Ray CPU{'s' if n > 1 else ''}"
    return f"{n}{' worker' if worker else ''} process{'es' if n > 1 else ''}"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def plan_recipe(recipe: Recipe, *, source_path: str | Path | None = None, configs: list[str] | None = None,
                splits: list[str] | None = None, limit: int | None = None, num_proc: int = 1,
                copies: int | None = None, pages: int | None = None, ray: bool = False) -> RecipePlan:
    """Each config of ``recipe`` (or of ``configs``) with a verdict for this machine and an estimated time:
    for the source's pages, or ``pages`` (e.g. all of RVL-CDIP where a sample is here), on ``num_proc`` processes
    (``ray``: Ray CPUs)."""
    names = configs or list(recipe.configs)
    splits = splits or recipe.splits
    copies = copies or recipe.copies
    kind = recipe.source.get("kind", "?")
    source, source_verdict, documents, source_reasons, opened = _source(recipe, splits, source_path)
    refusals = _build_refusals(recipe, opened)
    if pages is None:
        pages = None if any(n is None for n in documents.values()) else sum(
            min(n, limit) if limit else n for n in documents.values())
    plans = []
    once: dict[str, float] = {}
    for name in names:
        plan = ConfigPlan(name)
        for reason in source_reasons:
            plan.flag(source_verdict, reason)
        try:
            chain = recipe.chain(name)
            refusals(name, chain)
        except DogoodError as exc:
            plan.flag(CANNOT, str(exc))
            plan.seconds = None
            plans.append(plan)
            continue
        for shift in chain:
            for need in shift.requirements():
                verdict, reason = check(need, shift)
                if verdict != READY or reason:
                    plan.flag(verdict, reason)
            if shift.name in ONCE_MS:
                once[shift.name] = ONCE_MS[shift.name][0]
                if shift.name == "embedding_swap" and any((cache_dir() / "embeddings").glob("*.npz")):
                    once[shift.name] = ONCE_MS["homoglyph_swap"][0]  # the word vectors are cached: TextAttack only
            if shift.name not in SHIFT_MS:
                plan.flag(plan.verdict, f"no CPU figure for {shift.name}: no estimate")
        ms = config_ms(chain, copies, severity=name in recipe.levels, unknown=None)  # shift, row and measures
        plan.seconds = (None if ms is None or pages is None
                        else wall_seconds(ms, pages, num_proc, ray) + config_fixed_seconds(num_proc))
        plans.append(plan)
    read_seconds = None if pages is None else wall_seconds(read_ms(kind), pages, num_proc, ray)
    once_seconds = max(once.values(), default=0.0) / 1000 if "embedding_swap" in once else sum(once.values()) / 1000
    once_seconds += start_seconds(ray)  # a Ray build's actors start
    return RecipePlan(recipe, source, source_verdict, documents, num_proc, copies, plans, read_seconds, once_seconds,
                      pages=pages, ray=ray)


def _build_refusals(recipe: Recipe, sources: dict[str, Any]):
    """``check(config, chain)``: raise what :func:`dogood.pipeline.plan.plan_build` would raise for this config
    before anything runs (the data's labels against the recipe's and the shifts' needs, the box convention
    against the schema and the shifts), by the same functions; nothing to check when the source was not opened
    (not on this machine: its verdict says so)."""
    from dogood.core.schema import DEFAULT_BOX_LEVEL, check_box_level
    from dogood.pipeline.plan import check_chain_labels, resolve_labels

    if not sources:
        return lambda name, chain: None
    schema = recipe.schema or next(iter(sources.values())).schema
    box_level = recipe.box_level or DEFAULT_BOX_LEVEL[schema]
    try:
        check_box_level(box_level, schema)
        labels = resolve_labels(recipe, sources, schema)
        problem = None
    except ValueError as exc:
        problem, labels = f"recipe {recipe.name!r}: {exc}", None
    except DogoodError as exc:
        problem, labels = str(exc), None

    def check(name: str, chain: list) -> None:
        if problem is not None:
            raise DogoodError(problem)
        for shift in chain:
            try:
                shift.check_box_level(box_level)
            except ValueError as exc:
                raise DogoodError(f"recipe {recipe.name!r}, config {name!r}: {exc}") from None
        check_chain_labels(recipe.name, {name: chain}, labels)

    return check


def _source(recipe: Recipe, splits: list[str], source_path
            ) -> tuple[str, str, dict[str, int | None], list[str], dict[str, Any]]:
    """Where the source is, its verdict, documents per split, the reasons, and the sources opened (none when
    the data is not on this machine), without downloading anything."""
    from dogood.sources import open_source

    kind = recipe.source.get("kind")
    documents: dict[str, int | None] = {split: None for split in splits}
    reasons: list[str] = []
    reads_funsd = kind == "funsd" or (kind == "funsd_mix" and recipe.source.get("library", "text") == "text")
    if reads_funsd and source_path is None and "path" not in recipe.source and "root" not in recipe.source:
        local = [p for p in ((data_dir() / "funsd" / "dataset") if data_dir() else None,
                             cache_dir() / "funsd" / "dataset") if p is not None and p.is_dir()]
        if not local:
            return ("FUNSD (not on this machine)", NETWORK, documents,
                    ["FUNSD is downloaded first (16 MB from guillaumejaume.github.io), or pass --source"], {})
    if kind == "hf" and source_path is None:
        name = str(recipe.source.get("name", ""))
        if name and not Path(name).expanduser().exists() and not name.lower().startswith("file:"):
            return (f"Hub dataset {name}", NETWORK, documents, [f"reads the Hub dataset {name}"], {})
    if kind == "rvl_cdip" and shutil.which("tesseract") is None:
        reasons.append("RVL-CDIP's words come from Tesseract, which is not installed: apt-get install tesseract-ocr")
    opened = {}
    for split in splits:
        try:
            opened[split] = open_source(recipe.source, split, source_path)
            documents[split] = len(opened[split].ids())
        except (DogoodError, OSError) as exc:
            return f"{kind} source", CANNOT, documents, [f"source, split {split}: {exc}"], {}
    name = {"funsd": "FUNSD", "rvl_cdip": "RVL-CDIP", "docvqa": "DocVQA", "synthetic": "synthetic pages",
            "hf": "a Hugging Face dataset", "funsd_mix": "Do-GOOD's synthetic FUNSD-L pages"}.get(kind, str(kind))
    return f"{name}, found on this machine", CANNOT if reasons else READY, documents, reasons, opened


def check(need: str, shift: Any) -> tuple[str, str]:
    """``(verdict, reason)`` for one declared requirement of ``shift`` (see ``Shift.requires``); ``reason`` is
    ``""`` when all is well and nothing needs saying."""
    what, _, arg = need.partition(":")
    if what == "module":
        module, _, extra = arg.partition("[")
        if have(module):
            return READY, ""
        return CANNOT, f"{shift.name} needs {module}: {install_line(extra.rstrip(']') or None)}"
    if what == "nltk":
        from dogood.language.lexicons import require

        try:
            require(shift.name, arg)
        except DogoodError as exc:
            return CANNOT, str(exc).split("; searched")[0]
        return READY, ""
    if what == "pos":
        from dogood.language.pos_tagger import tagger

        try:
            tagger()
        except DogoodError as exc:
            return CANNOT, f"{shift.name}: {exc}"
        return READY, ""
    if what == "tesseract":
        if shutil.which("tesseract"):
            return READY, ""
        return CANNOT, f"{shift.name} runs Tesseract, which is not installed: apt-get install tesseract-ocr"
    if what == "glove":
        from dogood.language.embeddings import GLOVE_VECTORS

        root = data_dir()
        if root is not None and (root / GLOVE_VECTORS).is_file():
            return READY, ""
        return CANNOT, (f"{shift.name} needs the GloVe vectors ({GLOVE_VECTORS}) in the data folder: set "
                        "DOGOOD_DATA_DIR, or embedding: paragramcf (TextAttack's download)")
    if what == "coco":
        return _coco(shift)
    if what == "model":
        return _hub_model(shift.name, str(getattr(shift, arg)))
    if what == "scorer":
        return _scorer(shift.name, str(getattr(shift, arg)))
    return READY, ""


def _coco(shift: Any) -> tuple[str, str]:
    annotations = getattr(shift, "annotations", None)
    if annotations:
        missing = [a for a in ([annotations] if isinstance(annotations, str) else annotations)
                   if not Path(a).expanduser().is_file() and not (data_dir() and (data_dir() / "coco" / a).is_file())]
        if missing:
            return CANNOT, f"{shift.name}: COCO annotations not found: {', '.join(missing)}"
    root = data_dir() / "coco" if data_dir() is not None else None
    if root is not None and root.is_dir() and (annotations or any(root.glob("instances_*.json"))
                                               or any(root.glob("panoptic_*.json"))
                                               or any((root / "annotations").glob("*.json"))):
        if any((root / d).is_dir() for d in ("train2017", "val2017")):
            return READY, ""
        return NETWORK, f"{shift.name} fetches the COCO photos it draws (from their coco_url)"
    if (cache_dir() / "coco" / "annotations_trainval2017").is_dir():
        return NETWORK, f"{shift.name} fetches the COCO photos it draws (from their coco_url)"
    return NETWORK, f"{shift.name} downloads COCO's annotations (241 MB) and the photos it draws"


def _hub_model(who: str, name: str) -> tuple[str, str]:
    if Path(name).expanduser().exists():
        return READY, ""
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = isinstance(try_to_load_from_cache(name, "config.json"), str)
    except Exception:
        cached = False
    if cached:
        return READY, ""
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        return CANNOT, (f"{who}: the model {name!r} is not on this machine and HF_HUB_OFFLINE is set: pass a local "
                        f"path with --set {who}.model=/path, or leave the config out")
    return NETWORK, f"{who} downloads the model {name!r} from the Hugging Face Hub"


def _scorer(who: str, spec: str) -> tuple[str, str]:
    if spec != "baseline":
        return _hub_model(who, spec)
    from dogood.models.base import default_baseline_path

    if default_baseline_path().is_file():
        return READY, ""
    local = data_dir() is not None and (data_dir() / "funsd" / "dataset" / "training_data").is_dir()
    if local or (cache_dir() / "funsd" / "dataset" / "training_data").is_dir():
        return READY, f"{who} trains the CRF baseline on FUNSD train first (once, seconds)"
    return NETWORK, f"{who} trains the CRF baseline on FUNSD train, which is downloaded first"


def recipe_needs(recipe: Recipe) -> dict[str, list[str]]:
    """What a recipe's configs need beyond the plain install, from the shifts' declarations: ``extras`` (dogood
    extras), ``programs`` (Tesseract), ``data`` (COCO photos, GloVe vectors, a masked LM, the CRF scorer)."""
    extras: list[str] = []
    programs: list[str] = []
    data: list[str] = []

    def add(target: list[str], item: str) -> None:
        if item not in target:
            target.append(item)

    if recipe.source.get("kind") == "rvl_cdip":
        add(programs, "Tesseract (source words)")
    for config in recipe.configs:
        for shift in recipe.chain(config):
            for need in shift.requirements():
                what, _, arg = need.partition(":")
                if what == "module":
                    add(extras, arg.partition("[")[2].rstrip("]"))
                elif what == "pos":
                    add(extras, "pos")
                elif what == "nltk":
                    add(data, f"NLTK {arg}")
                elif what == "tesseract":
                    add(programs, "Tesseract (reocr)")
                elif what == "coco":
                    add(data, "COCO photos")
                elif what == "glove":
                    add(data, "GloVe vectors")
                elif what == "model":
                    add(data, f"masked LM ({getattr(shift, arg)})")
                elif what == "scorer":
                    add(data, "FUNSD train (CRF scorer)")
    return {"extras": extras, "programs": programs, "data": data}


#: The README's recipe table sits between these two lines (``dogood list --markdown`` prints it).
RECIPE_TABLE_START = "<!-- recipe-table:start -->"
RECIPE_TABLE_END = "<!-- recipe-table:end -->"


def recipes_table_markdown(detail: bool = False) -> str:
    """One row per shipped recipe: configs, source, the extra to install (``pip install "dogood[EXTRA]"``), and with
    ``detail`` the programs and data its configs need and its description."""
    from dogood.pipeline.recipe import list_recipes

    head = ["recipe", "configs", "source", "extra"] + (["programs", "data", "what"] if detail else [])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for recipe in sorted(list_recipes(), key=lambda r: r.name):
        needs = recipe_needs(recipe)
        extra = ", ".join(f"`{e}`" for e in needs["extras"]) or "none"
        cells = [f"`{recipe.name}`", str(len(recipe.configs)), str(recipe.source.get("kind")), extra]
        if detail:
            about = " ".join(recipe.description.split()).replace("|", "\\|")
            cells += [", ".join(needs["programs"]) or "–", ", ".join(needs["data"]) or "–", about]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def readme_with_recipe_table(text: str) -> str:
    """``text`` (the README) with the generated recipe table between its markers; ``ValueError`` without them."""
    start, end = text.find(RECIPE_TABLE_START), text.find(RECIPE_TABLE_END)
    if start < 0 or end < start:
        raise ValueError(f"the README has no {RECIPE_TABLE_START} ... {RECIPE_TABLE_END} markers")
    return text[: start + len(RECIPE_TABLE_START)] + "\n" + recipes_table_markdown() + text[end:]
