"""Plan a build: check the arguments, open the sources, make and prepare the chains, list the documents.

Everything that can be refused is refused here, before a lock is taken or a file written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from dogood.core.errors import DocumentError, DogoodError, RecipeError
from dogood.core.schema import DEFAULT_BOX_LEVEL, FUNSD_LABELS, check_box_level, label_order, ner_tag_names
from dogood.core.seeds import shared_prefixes
from dogood.pipeline.recipe import Recipe, auto_shard_size
from dogood.pipeline.safety import check_name, check_out, portable, source_fingerprint
from dogood.pipeline.worker import WorkerSpec
from dogood.sources import Source, open_source
from dogood.sources.ids import first_ids, ids_sha256
from dogood.version import __version__


@dataclass
class BuildPlan:
    """What a build writes: the recipe's configs, chains and sources, resolved and checked."""

    recipe: Recipe
    out: Path
    seed: int
    configs: list[str]
    chains: dict[str, list]
    sources: dict[str, Source]
    ids: dict[str, Sequence[str]]  # split -> the document ids to build, in order (lazy views: never copied)
    schema: str
    box_level: str
    limit: int | None
    on_error: str
    notes: dict[str, list[str]]  # config -> its shifts' lines for the card
    shared_draws: dict[str, dict[str, int]]  # :func:`dogood.core.seeds.shared_prefixes`
    labels: tuple[str, ...] | None = None  # FUNSD-style: the entity labels that name ``ner_tags``
    quads: bool = False  # write each word's quad (``quads: true``, ``--quads``)

    def shard_size(self, split: str) -> int:
        """Documents per shard of ``split`` (:func:`dogood.pipeline.recipe.auto_shard_size`)."""
        return auto_shard_size(len(self.ids[split]), self.recipe.shard_size)

    @property
    def copies(self) -> int:
        """Rows per source document and config (the recipe's ``copies``, or ``--copies``)."""
        return self.recipe.copies

    def worker_spec(self, num_proc: int = 1, documents: int | None = None, preview: bool = False,
                    timeline: bool = False) -> WorkerSpec:
        """What the workers run. ``num_proc`` and ``documents`` (to process) choose the config groups of the pool's
        units (:func:`dogood.pipeline.pool.config_groups`); ``preview``: the workers draw the card's previews from
        the first document; ``timeline``: they record :mod:`dogood.pipeline.timeline` spans."""
        from dogood.pipeline.cpu_costs import config_ms, read_ms
        from dogood.pipeline.pool import config_groups

        groups = () if documents is None else config_groups(
            {c: config_ms(chain, self.copies, severity=c in self.recipe.levels) for c, chain in self.chains.items()},
            documents, num_proc, read_ms(self.recipe.source.get("kind")))
        first = next(iter(self.ids.items()), None)
        shown = (first[0], first[1][0]) if preview and first is not None and len(first[1]) else None
        return WorkerSpec(self.sources, self.chains, self.seed, self.schema, self.box_level, copies=self.copies,
                          labels=self.labels, measured=frozenset(c for c in self.chains if c in self.recipe.levels),
                          quads=self.quads, groups=groups, preview=shown, timeline=timeline)

    def chain_params(self) -> dict[str, list[dict[str, Any]]]:
        """config -> each step's shift name and parameters, as the card and the record show them."""
        return {name: [{"shift": shift.name, "params": shift.params()} for shift in chain]
                for name, chain in self.chains.items()}

    def recipe_chains(self) -> dict[str, list]:
        """config -> its chain as the recipe writes it (a path-valued parameter as its last part and content hash:
        :meth:`dogood.pipeline.recipe.Recipe.recorded_chain`)."""
        return {c: self.recipe.recorded_chain(c) for c in self.configs}

    @cached_property
    def source_info(self) -> dict[str, Any]:
        """The first split's source as the card describes it, no local path (described once: FUNSD hashes files)."""
        return portable(next(iter(self.sources.values())).describe())

    def key(self) -> dict[str, Any]:
        """Everything the rows depend on: a work folder left by a build of another key is not resumed."""
        recipe, splits = self.recipe, self.recipe.splits
        return {
            "recipe": recipe.name, "version": recipe.version, "seed": self.seed, "schema": self.schema,
            "box_level": self.box_level, "limit": self.limit, "on_error": self.on_error,
            "shard_size": {split: self.shard_size(split) for split in splits}, "splits": list(splits),
            "chains": self.recipe_chains(), "source": self.source_info, "dogood_version": __version__,
            "labels": self.labels,
            "ids": {split: ids_sha256(self.ids[split]) for split in splits},  # streamed, one id at a time
            "content": {split: source_fingerprint(self.sources[split], self.ids[split]) for split in splits},
            **({"copies": self.copies} if self.copies != 1 else {}),
            **({"quads": True} if self.quads else {}),
        }


def plan_build(recipe: Recipe, out: str | Path, *, source_path: str | Path | None, seed: int | None,
               num_proc: int, limit: int | None, on_error: str, configs: list[str] | None, overwrite: bool,
               box_level: str | None, splits: list[str] | None = None, copies: int | None = None,
               quads: bool | None = None) -> BuildPlan:
    """Check the arguments and the recipe against the sources; make and prepare the chains (see :func:`build`)."""
    out = Path(out)
    recipe = recipe.with_build_options(splits=splits, copies=copies)
    check_arguments(on_error, limit, num_proc)
    check_name(recipe.name)
    seed = recipe.seed if seed is None else int(seed)
    names = list(recipe.configs) if not configs else list(dict.fromkeys(configs))  # a repeated --config once
    chains = {name: recipe.chain(name) for name in names}
    sources = {split: open_source(recipe.source, split, source_path) for split in recipe.splits}
    check_out(out, sources.values(), overwrite=overwrite)  # before anything is written
    schema = recipe.schema or next(iter(sources.values())).schema
    box_level = resolve_box_level(recipe, chains, schema, box_level)
    labels = resolve_labels(recipe, sources, schema)
    check_chain_labels(recipe.name, chains, labels)
    prepare_chains(recipe.name, chains)
    notes = {name: [line for shift in chain for line in shift.card_notes(schema=schema)]
             for name, chain in chains.items()}
    shared = shared_prefixes({name: [shift.seed_key() for shift in chain] for name, chain in chains.items()})
    ids = {split: first_ids(src.ids(), limit) for split, src in sources.items()}  # views: --limit copies nothing
    return BuildPlan(recipe=recipe, out=out, seed=seed, configs=names, chains=chains, sources=sources, ids=ids,
                     schema=schema, box_level=box_level, limit=limit, on_error=on_error, notes=notes,
                     shared_draws=shared, labels=labels, quads=recipe.quads if quads is None else bool(quads))


def resolve_labels(recipe: Recipe, sources: dict[str, Source], schema: str) -> tuple[str, ...] | None:
    """FUNSD-style data's entity labels, which name ``ner_tags`` (:func:`dogood.core.schema.ner_tag_names`): the
    recipe's ``labels:``, else the sources' (declared, or found in their annotations; several splits' found
    labels are merged by :func:`dogood.core.schema.label_order`). ``None`` for other schemas."""
    if schema != "funsd":
        if recipe.labels is not None:
            raise RecipeError(f"recipe {recipe.name!r}: labels: applies to FUNSD-style data, not {schema}-style")
        return None
    found = {split: tuple(src.entity_labels()) if hasattr(src, "entity_labels") else FUNSD_LABELS
             for split, src in sources.items()}
    if recipe.labels is not None:
        for split, labels in found.items():
            extra = [label for label in labels if label not in recipe.labels]
            if extra:
                raise RecipeError(f"recipe {recipe.name!r}: the {split!r} split has entity label(s) "
                                  f"{', '.join(extra)}, which the recipe's labels ({', '.join(recipe.labels)}) lack")
        labels = tuple(recipe.labels)
    elif len(set(found.values())) == 1:
        labels = next(iter(found.values()))
    else:
        labels = label_order({label for split_labels in found.values() for label in split_labels})
    try:
        ner_tag_names(labels)
    except ValueError as exc:
        raise RecipeError(f"recipe {recipe.name!r}: {exc}") from None
    return labels


def check_chain_labels(recipe: str, chains: dict[str, list], labels: tuple[str, ...] | None) -> None:
    """Refuse, before anything runs, a config whose shifts need entity labels the data lacks (a shift's
    ``needs_labels``, e.g. ``move`` needs FUNSD's question and answer), naming the config."""
    if labels is None:
        return
    for name, chain in chains.items():
        for shift in chain:
            missing = [label for label in shift.needs_labels() if label not in labels]
            if missing:
                raise RecipeError(f"recipe {recipe}, config {name!r}: shift {shift.name!r} needs entity label(s) "
                                  f"{', '.join(missing)}, which this data lacks (its labels: {', '.join(labels)})")


def check_arguments(on_error: str, limit: int | None, num_proc: int) -> None:
    """``on_error``, ``--limit`` and ``--num-proc`` have values a build can use."""
    if on_error not in ("raise", "skip"):
        raise RecipeError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise DogoodError(f"--limit must be a whole number of at least 1, got {limit!r}")
    if isinstance(num_proc, bool) or not isinstance(num_proc, int) or num_proc < 1:
        raise DogoodError(f"--num-proc must be a whole number of at least 1, got {num_proc!r}")


def resolve_box_level(recipe: Recipe, chains: dict[str, list], schema: str, box_level: str | None) -> str:
    """The ``bboxes`` convention: ``box_level``, else the recipe's, else the schema's; checked against every shift."""
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
    return box_level


def prepare_chains(recipe: str, chains: dict[str, list]) -> None:
    """Load what each shift of the configs being built needs, once, before any worker starts (only those configs:
    a config left out needs nothing). A missing resource names the recipe, config and shift."""
    for name, chain in chains.items():
        for shift in chain:
            try:
                shift.prepare()
            except DocumentError:
                raise
            except DogoodError as exc:
                advice = ""
                if getattr(exc, "model", None) is not None:  # HubUnreachable: a parameter names a Hub model id
                    param = next((k for k, v in shift.params().items() if v == exc.model), "model")
                    advice = (f"; pass a local path with --set {name}.{param}=/path, or leave the config out with "
                              f"--exclude-config {name}")
                what = f"recipe {recipe}, config {name!r}, shift {shift.name!r}: {exc}{advice}"
                raise (type(exc)(what, model=exc.model) if advice else type(exc)(what)) from None
