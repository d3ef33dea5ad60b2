"""Recipes: one YAML file per published dataset, one config per Hub config.

```yaml
name: funsd-l
version: 1.0.0
description: FUNSD with layout shifts (Do-GOOD FUNSD-L).
source: {kind: funsd}
splits: [test]
seed: 0
configs:
  merge:
    - {shift: merge, lambda_x: 10, lambda_y: 5}
```

``combinations`` expands configs that chain other configs, as the
form-attack paper's Figure 3 does (91 pairs and 364 triples of its 14
transformations)::

    combinations:
      of: [value_text_augment, global_shuffle, key_drop]   # configs above
      sizes: [2, 3]

adds ``value_text_augment-global_shuffle``, ..., and
``value_text_augment-global_shuffle-key_drop``: each chain is the named
configs' chains in the order of ``of``. A list of such mappings is allowed.

``severities: [1, 2, 3, 4, 5]`` (or a subset) sweeps severity levels, in the
ImageNet-C tradition (:mod:`dogood.shifts.levels`): every config (combinations
included) whose chain has a shift with levels (:attr:`Shift.severities`)
becomes ``<config>@1`` ... ``<config>@5``, whose steps with levels take the
level's parameter values over the config's; the other configs stay as they
are. The card gives each level's parameters and measured effect.

Files are read with YAML's safe subset only (:func:`dogood.pipeline.safety.load_yaml`:
no aliases, no duplicate keys); a recipe expands to at most
:data:`MAX_CONFIGS` configs. The name names the output folder: letters,
digits, ``-``, ``_`` and ``.``, not starting with ``.``; a config name may also hold ``@``
(``merge@3``). ``split: test`` may stand for
``splits: [test]``. A config's chain may be empty (the unshifted data, for
the in-distribution baseline). ``schema`` (``funsd``, ``rvl_cdip`` or
``docvqa``) defaults to the source's. ``box_level`` (``segment`` or ``word``)
is the convention of the ``bboxes`` column (:mod:`dogood.core.schema`); it
defaults to the schema's (``segment`` for FUNSD-style data, as the LayoutLMv3
FUNSD loader; ``word`` otherwise). ``quads: true`` (``dogood build --quads``)
adds a ``quads`` column: each token's four corners after the geometric shifts
(:data:`dogood.core.schema.QUADS_COLUMN`, ``docs/quads.md``); off by default.

``copies: k`` (default 1; ``dogood build --copies K``) writes k rows per source
document and config, each shifted with its own draws, for training-time
augmentation: copy ``j`` has the id ``<document id>#<j>`` and copy 0 draws
exactly what a one-copy build draws (:func:`dogood.core.seeds.step_seed`). With the
default 1, ids and draws are those of a build without ``copies``. The number
is one per recipe, not per config, so every config of a build has as many rows.

The seed of the k-th step of a chain on a document is hashed from the recipe
seed, the document id, k and the step's content (shift and parameters), never
from the config's name (:mod:`dogood.core.seeds`): output depends neither on
document order nor on worker count, and configs whose chains share a prefix
share its draws.
"""

from __future__ import annotations

import fnmatch
import importlib.resources
import itertools
import json
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from dogood.core import fs
from dogood.core.errors import RecipeError
from dogood.core.fs import CONFIG_NAME, NAME, recorded_value
from dogood.core.schema import BOX_LEVELS, SCHEMAS
from dogood.pipeline.safety import load_yaml
from dogood.shifts import SHIFTS, Shift, make_shift
from dogood.shifts.base import recorded_step
from dogood.shifts.levels import check_levels, expand_severities
from dogood.sources import SOURCE_KINDS

_VERSION = re.compile(r"\A\d+\.\d+\.\d+\Z")
_CONFIG_NAME = CONFIG_NAME
#: The most configs a recipe may have, ``combinations`` included.
MAX_CONFIGS = 1000
#: The most copies of each document a build may write (``copies:``, ``--copies``).
MAX_COPIES = 1000


@dataclass
class Recipe:
    name: str
    version: str
    source: dict[str, Any]
    splits: list[str]
    seed: int
    configs: dict[str, list[dict[str, Any]]]
    description: str = ""
    schema: str | None = None
    box_level: str | None = None
    #: documents per Parquet shard; ``None``: chosen from each split's size (:func:`auto_shard_size`)
    shard_size: int | None = None
    #: rows per source document and config (``copies:``); each copy shifted with its own draws
    copies: int = 1
    #: FUNSD-style entity labels, in order (``None``: the source's, else those found in the data)
    labels: list[str] | None = None
    #: write each word's quad after the geometric shifts (``quads: true``; the ``quads`` column)
    quads: bool = False
    path: Path | None = field(default=None, compare=False)
    #: ``CONFIG.PARAM=VALUE`` overrides this recipe was built with (``--set``); the card lists them.
    overrides: tuple[str, ...] = ()
    #: the severity levels swept (``severities:``), and each swept config's ``(config, level)`` (``merge@3``:
    #: ``("merge", 3)``)
    severities: list[int] | None = None
    levels: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: each severity config's unswept chain (``merge@3``: ``merge``'s steps), whose draws its levels share
    level_bases: dict[str, list[dict[str, Any]]] = field(default_factory=dict, compare=False)

    def recorded_chain(self, config: str) -> list[Any]:
        """A config's chain as the recipe writes it, as records show it: each shift's path-valued parameters
        (:attr:`~dogood.shifts.base.Shift.path_params`) as their last part and content hash, every other value
        as written (:func:`dogood.shifts.base.recorded_step`)."""
        return [recorded_step(spec) for spec in self.configs[config]]

    def chain(self, config: str) -> list[Shift]:
        """The shifts of a config, instantiated in order. A severity config's steps draw what its config's own
        steps draw (:attr:`Shift.draw_key`), so its levels differ in magnitude only."""
        if config not in self.configs:
            raise RecipeError(f"recipe {self.name!r} has no config {config!r}; it has {', '.join(self.configs)}")
        shifts = [make_shift(dict(spec)) for spec in self.configs[config]]
        base = self.level_bases.get(config)
        if base is not None:
            for shift, spec in zip(shifts, base):
                shift.draw_key = make_shift(dict(spec)).step_key()
        return shifts

    def summary(self) -> str:
        """One short line for ``dogood list``: name, version, source, how many configs, what it is."""
        kinds = self.source.get("kind", "?")
        about = " ".join(self.description.split())
        about = about if len(about) <= 90 else about[:89].rsplit(" ", 1)[0] + "…"
        line = f"{self.name} v{self.version} [{kinds}: {', '.join(self.splits)}] {len(self.configs)} config(s)"
        return f"{line}: {about}" if about else line

    def config_lines(self) -> list[str]:
        """``dogood list RECIPE``: each config with its chain, one line each."""
        def step(spec: dict[str, Any]) -> str:
            args = ", ".join(f"{k}={v}" for k, v in spec.items() if k != "shift")
            return f"{spec['shift']}({args})"
        width = max((len(c) for c in self.configs), default=0)
        return [f"{c.ljust(width)}  {' -> '.join(step(s) for s in chain) or '(no shift: the source as it is)'}"
                for c, chain in self.configs.items()]

    def with_overrides(self, items: list[str]) -> Recipe:
        """This recipe with ``CONFIG.PARAM=VALUE`` overrides applied (``--set``): ``CONFIG`` is a name or a glob,
        ``VALUE`` is read as YAML (``0.2``, ``true``, ``[a, b]``), and every step of the matching configs whose
        shift takes ``PARAM`` gets it. An override that no step takes is an error naming it."""
        from dogood.pipeline.safety import load_yaml
        from dogood.shifts.params import accepted_names

        configs = {name: [dict(step) for step in chain] for name, chain in self.configs.items()}
        bases = {name: [dict(step) for step in chain] for name, chain in self.level_bases.items()}
        for item in items:
            target, eq, text = item.partition("=")
            pattern, dot, param = target.rpartition(".")
            if not eq or not dot or not pattern or not param:
                raise RecipeError(f"--set {item!r}: expected CONFIG.PARAM=VALUE, e.g. bert_attack.model=/models/bert")
            names = fnmatch.filter(configs, pattern)
            if not names:
                raise RecipeError(f"--set {item!r}: recipe {self.name!r} has no config matching {pattern!r}; "
                                  f"it has {', '.join(configs)}")
            try:
                value = load_yaml(text) if text.strip() else ""
            except yaml.YAMLError as exc:
                raise RecipeError(f"--set {item!r}: the value is not valid YAML ({exc})") from None
            hits = [step for name in names for step in configs[name]
                    if step.get("shift") in SHIFTS and param in accepted_names(SHIFTS[step["shift"]].Params)]
            if not hits:
                raise RecipeError(f"--set {item!r}: no shift of config(s) {', '.join(names)} takes a parameter "
                                  f"{param!r} (see `dogood describe SHIFT`)")
            for step in hits:
                step[param] = value
            for name in names:  # a level's draws follow the override of a parameter its level does not set
                for k, step in enumerate(bases.get(name, ())):
                    swept = {key for values in getattr(SHIFTS.get(step.get("shift")), "severities", {}).values()
                             for key in values}
                    if step.get("shift") in SHIFTS and param in accepted_names(SHIFTS[step["shift"]].Params) \
                            and param not in swept:
                        step[param] = value
        def names_a_path(item: str) -> bool:  # whether a shift the override reaches reads PARAM as a path
            target = item.partition("=")[0]
            pattern, _, param = target.rpartition(".")
            return any(param in getattr(SHIFTS.get(step.get("shift")), "path_params", ())
                       for name in fnmatch.filter(configs, pattern) for step in configs[name])

        return replace(self, configs=configs, level_bases=bases,
                       overrides=self.overrides + tuple(recorded_override(item, path=names_a_path(item))
                                                        for item in items))

    def with_build_options(self, *, splits: list[str] | None = None, copies: int | None = None) -> Recipe:
        """This recipe with other splits (``--split``: names or comma lists, in the order given) and/or another
        number of copies (``--copies``); ``None`` keeps the recipe's."""
        changes: dict[str, Any] = {}
        if splits:
            names = list(dict.fromkeys(p.strip() for value in splits for p in str(value).split(",") if p.strip()))
            bad = [n for n in names if not NAME.match(n)]
            if not names or bad:
                raise RecipeError(f"--split {', '.join(bad) or splits!r}: a split is a name (letters, digits, '-', "
                                  "'_', '.'), e.g. train or test")
            changes["splits"] = names
        if copies is not None:
            changes["copies"] = check_copies(copies)
        return replace(self, **changes) if changes else self

    def select_configs(self, include: list[str] | None = None, exclude: list[str] | None = None) -> list[str]:
        """The configs named by ``include`` (names, globs such as ``ms_*``, or comma lists of them; default:
        all), less those named by ``exclude``, in the recipe's order. A name or glob that matches no config is
        an error naming it and the configs there are."""
        def matching(patterns: list[str]) -> set[str]:
            found: set[str] = set()
            for pattern in (p.strip() for value in patterns for p in value.split(",")):
                if not pattern:
                    continue
                hits = set(fnmatch.filter(self.configs, pattern))
                if not hits:
                    raise RecipeError(f"recipe {self.name!r} has no config matching {pattern!r}; "
                                      f"it has {', '.join(self.configs)}")
                found |= hits
            return found
        chosen = matching(include) if include else set(self.configs)
        chosen -= matching(exclude or [])
        if not chosen:
            raise RecipeError(f"recipe {self.name!r}: --exclude-config leaves no config to build")
        return [c for c in self.configs if c in chosen]


def recorded_override(item: str, *, path: bool = True) -> str:
    """``CONFIG.PARAM=VALUE`` as the card and ``dogood_build.json`` list it: when ``PARAM`` names a file or folder
    (``path``: a shift's :attr:`~dogood.shifts.base.Shift.path_params`), a path in ``VALUE`` as its last part and
    content hash (:func:`dogood.core.fs.recorded_value`), never a folder of this machine; any other value as
    written (text is never read as a path)."""
    if not path:
        return item
    target, eq, text = item.partition("=")
    try:
        value = load_yaml(text) if text.strip() else ""
    except yaml.YAMLError:
        return item
    shown = recorded_value(value)
    if shown == value:
        return item
    return f"{target}{eq}{shown if isinstance(shown, str) else json.dumps(shown)}"


def parse_recipe(data: Any, path: Path | None = None) -> Recipe:
    """Validate a recipe mapping (as loaded from YAML) and build the :class:`Recipe`."""
    where = f"recipe {path}" if path else "recipe"
    if not isinstance(data, dict):
        raise RecipeError(f"{where}: expected a mapping at the top level")
    missing = [k for k in ("name", "version", "source", "configs") if k not in data]
    if missing:
        raise RecipeError(f"{where}: missing {', '.join(missing)}")
    known = {"name", "version", "description", "source", "split", "splits", "seed", "configs", "schema", "shard_size",
             "combinations", "box_level", "copies", "labels", "severities", "quads"}
    unknown = sorted(k if isinstance(k, str) else repr(k) for k in set(data) - known)  # a key may be 1 or null
    if unknown:
        raise RecipeError(f"{where}: unknown key(s) {', '.join(unknown)}")
    name = data["name"]
    if not isinstance(name, str) or not NAME.match(name):
        raise RecipeError(f"{where}: name {name!r} must be letters, digits, '-', '_' or '.', not starting with '.' "
                          "(it names the output folder)")
    version = str(data["version"])
    if not _VERSION.match(version):
        raise RecipeError(f"{where}: version must look like 1.0.0, got {version!r}")
    source = data["source"]
    if not isinstance(source, dict) or "kind" not in source:
        raise RecipeError(f"{where}: source must be a mapping with a 'kind', e.g. {{kind: funsd}}")
    if source["kind"] not in SOURCE_KINDS:  # a list or a mapping too: never a lookup that raises TypeError
        raise RecipeError(f"{where}: unknown source kind {source['kind']!r}; expected one of {', '.join(SOURCE_KINDS)}")
    odd = [k for k in source if not isinstance(k, str)]
    if odd:
        raise RecipeError(f"{where}: source option {odd[0]!r} is not a name (source options are words such as "
                          "root or split)")
    splits = data.get("splits", data.get("split", source.get("split", source.get("splits", "test"))))
    splits = [splits] if isinstance(splits, str) else splits
    if not isinstance(splits, list) or not splits or not all(isinstance(s, str) and NAME.match(s) for s in splits):
        raise RecipeError(f"{where}: splits must be a split name or a list of names (letters, digits, '-', '_', "
                          f"'.'), got {splits!r}")
    if len(set(splits)) != len(splits):
        raise RecipeError(f"{where}: split {next(s for s in splits if splits.count(s) > 1)!r} is listed twice")
    configs = data["configs"]
    if not isinstance(configs, dict) or not configs:
        raise RecipeError(f"{where}: configs must be a non-empty mapping of name -> chain of shifts")
    clean: dict[str, list[dict[str, Any]]] = {}
    for name, chain in configs.items():
        name = str(name)
        if not _CONFIG_NAME.match(name):
            raise RecipeError(f"{where}: config name {name!r} must be letters, digits, '-', '_', '.' or '@'")
        chain = [] if chain is None else chain
        if not isinstance(chain, list):
            raise RecipeError(f"{where}: config {name!r} must be a list of shifts")
        for spec in chain:
            try:
                if isinstance(spec, dict) and any(not isinstance(k, str) for k in spec):
                    raise RecipeError(f"shift parameter {next(k for k in spec if not isinstance(k, str))!r} is not "
                                      "a name")
                make_shift(dict(spec) if isinstance(spec, dict) else spec)
            except RecipeError as exc:
                raise RecipeError(f"{where}, config {name!r}: {exc}") from None
        clean[name] = [dict(spec) for spec in chain]
    if len(clean) > MAX_CONFIGS:
        raise RecipeError(f"{where}: {len(clean)} configs; a recipe may have at most {MAX_CONFIGS}")
    clean.update(expand_combinations(data.get("combinations"), clean, where))
    severities, levels, level_bases = None, {}, {}
    if data.get("severities") is not None:
        severities = check_levels(data["severities"], where)
        unswept = clean
        clean, levels = expand_severities(severities, clean, where)
        level_bases = {config: unswept[base] for config, (base, _) in levels.items()}
        if not levels:
            raise RecipeError(f"{where}: severities: no config has a shift with severity levels (see `dogood "
                              "describe SHIFT`)")
        if len(clean) > MAX_CONFIGS:
            raise RecipeError(f"{where}: severities make {len(clean)} configs; a recipe may have at most "
                              f"{MAX_CONFIGS}")
    schema = data.get("schema")
    if schema is not None and schema not in SCHEMAS:
        raise RecipeError(f"{where}: schema must be one of {', '.join(SCHEMAS)}")
    box_level = data.get("box_level")
    if box_level is not None and box_level not in BOX_LEVELS:
        raise RecipeError(f"{where}: box_level must be one of {', '.join(BOX_LEVELS)}, got {box_level!r}")
    seed = data.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise RecipeError(f"{where}: seed must be an integer")
    shard_size = data.get("shard_size")
    if shard_size is not None and (not isinstance(shard_size, int) or isinstance(shard_size, bool) or shard_size < 1):
        raise RecipeError(f"{where}: shard_size must be a positive integer")
    copies = data.get("copies", 1)
    try:
        check_copies(copies)
    except RecipeError as exc:
        raise RecipeError(f"{where}: {exc}") from None
    labels = check_labels(data.get("labels"), where)
    description = data.get("description")
    if description is not None and not isinstance(description, str):
        raise RecipeError(f"{where}: description must be text, got {type(description).__name__}")
    quads = data.get("quads", False)
    if not isinstance(quads, bool):
        raise RecipeError(f"{where}: quads must be true or false, got {quads!r}")
    return Recipe(
        name=str(data["name"]),
        version=version,
        description=(description or "").strip(),
        source={k: v for k, v in source.items() if k not in ("split", "splits")},
        splits=splits,
        seed=seed,
        configs=clean,
        schema=schema,
        box_level=box_level,
        shard_size=shard_size,
        copies=copies,
        labels=labels,
        quads=quads,
        path=path,
        severities=severities,
        levels=levels,
        level_bases=level_bases,
    )


def check_copies(copies: Any) -> int:
    """``copies`` as a whole number from 1 to :data:`MAX_COPIES`, else a :class:`RecipeError` saying so."""
    if isinstance(copies, bool) or not isinstance(copies, int) or not 1 <= copies <= MAX_COPIES:
        raise RecipeError(f"copies must be a whole number from 1 to {MAX_COPIES}, got {copies!r}")
    return copies
#: Documents per shard when a recipe sets no ``shard_size``: at most this many ...
MAX_SHARD_SIZE = 500
#: ... at least this many ...
MIN_SHARD_SIZE = 5
#: ... and about this many shards per split in between, so that an interrupted build of a small split keeps
#: most of its work (FUNSD test, 50 forms: 10 shards of 5).
TARGET_SHARDS = 10


def auto_shard_size(num_documents: int, shard_size: int | None = None) -> int:
    """Documents per shard of a split of ``num_documents``: ``shard_size`` when a recipe sets it, else about
    :data:`TARGET_SHARDS` shards of :data:`MIN_SHARD_SIZE` to :data:`MAX_SHARD_SIZE` documents."""
    if shard_size is not None:
        return shard_size
    return min(MAX_SHARD_SIZE, max(MIN_SHARD_SIZE, -(-num_documents // TARGET_SHARDS)))


def check_labels(labels: Any, where: str) -> list[str] | None:
    """A ``labels:`` list (FUNSD-style entity labels, ``other`` meaning outside any entity): distinct, non-empty
    names that make IOB tags (no space, not ``O``)."""
    if labels is None:
        return None
    if isinstance(labels, str) or not isinstance(labels, (list, tuple)) or not labels:
        raise RecipeError(f"{where}: labels must be a non-empty list of entity label names, got {labels!r}")
    out = []
    for label in labels:
        if not isinstance(label, str) or not label.strip() or label != label.strip() or " " in label or label == "O":
            raise RecipeError(f"{where}: label {label!r} is not a usable entity label name (a word without "
                              "spaces, not 'O')")
        if label in out:
            raise RecipeError(f"{where}: label {label!r} is listed twice")
        out.append(label)
    return out


def expand_combinations(spec: Any, configs: dict[str, list[dict[str, Any]]], where: str = "recipe") -> dict[str, list[dict[str, Any]]]:
    """The configs a recipe's ``combinations`` entry adds: every ``size``-subset of ``of``, chained in ``of`` order."""
    if spec is None:
        return {}
    entries = spec if isinstance(spec, list) else [spec]
    out: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        if not isinstance(entry, dict) or set(entry) - {"of", "sizes"} or "of" not in entry:
            raise RecipeError(f"{where}: combinations must be a mapping {{of: [config, ...], sizes: [2, 3]}} (or a list of them)")
        if not isinstance(entry["of"], list):
            raise RecipeError(f"{where}: combinations `of` must be a list of config names")
        names = [str(n) for n in entry["of"]]
        missing = [n for n in names if n not in configs]
        if missing or len(set(names)) != len(names):
            raise RecipeError(f"{where}: combinations name configs that are not defined above, or twice: "
                              f"{', '.join(missing) or names}")
        sizes = entry.get("sizes", [2])
        sizes = [sizes] if isinstance(sizes, int) else sizes
        if not isinstance(sizes, list) or not all(isinstance(k, int) and not isinstance(k, bool)
                                                  and 2 <= k <= len(names) for k in sizes):
            raise RecipeError(f"{where}: combination sizes must be integers from 2 to {len(names)}, got {sizes}")
        count = len(configs) + len(out) + sum(math.comb(len(names), k) for k in set(sizes))
        if count > MAX_CONFIGS:
            raise RecipeError(f"{where}: combinations would make {count} configs; a recipe may have at most "
                              f"{MAX_CONFIGS} (split it into several recipes)")
        for k in sizes:
            for group in itertools.combinations(names, k):
                name = "-".join(group)
                if name in configs or name in out:
                    raise RecipeError(f"{where}: combination {name!r} is already a config")
                out[name] = [dict(step) for n in group for step in configs[n]]
    return out


def load_recipe(name_or_path: str | Path) -> Recipe:
    """Load a recipe by file path, or by name from the recipe folders (:func:`recipe_dirs`).

    A regular file at the path is read; else a recipe name is looked up in the folders; else what is at the path
    (a folder, a FIFO, a link to nothing) is an error naming it. A name not found lists the names there are, from
    the file names (no other recipe is parsed, so a broken one cannot be blamed)."""
    path = Path(name_or_path)
    text = str(name_or_path)
    if path.is_file():
        return read_recipe(path)
    if NAME.match(text) and not text.endswith((".yaml", ".yml")):
        for d in recipe_dirs():
            candidate = d / f"{text}.yaml"
            if candidate.exists() or candidate.is_symlink():
                return read_recipe(candidate)
    if path.exists() or path.is_symlink():
        return read_recipe(path)
    names = ", ".join(recipe_names()) or "none"
    raise RecipeError(f"no recipe file or name {text!r}; known recipes: {names}")


def read_recipe(path: Path) -> Recipe:
    """Parse the recipe file at ``path``, read through :func:`dogood.core.fs.read_text` (a regular file of at most
    ``Limits.recipe_bytes``); every failure a :class:`RecipeError` naming the file."""
    try:
        text = fs.read_bytes(path, limit="recipe_bytes", what="recipe").decode("utf-8")
        data = load_yaml(text)
    except FileNotFoundError:
        raise RecipeError(f"recipe {path}: not found (a link to nothing?)") from None
    except fs.FileRefused as exc:
        raise RecipeError(f"recipe {path}: {exc.reason}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise RecipeError(f"recipe {path}: not valid YAML ({exc})") from None
    except OSError as exc:
        raise RecipeError(f"recipe {path}: cannot read it ({exc.strerror or exc})") from None
    return parse_recipe(data, path)


def recipe_dirs() -> list[Path]:
    """Where recipes are looked up by name: the ones shipped with dogood first, then ``./recipes``.

    A recipe in ``./recipes`` adds a name; it never replaces a shipped recipe
    (pass its path to build a changed copy), so where a command runs does not
    change what a shipped name means.
    """
    checkout = Path(__file__).resolve().parents[2]  # dogood imported from a source checkout: its own recipes first
    dirs = [checkout / "recipes"] if (checkout / "pyproject.toml").is_file() else []
    try:  # an installed wheel; a namespace package's files() is no folder, hence the guard
        shipped = importlib.resources.files("dogood.recipes")
        if isinstance(shipped, Path):
            dirs.append(shipped)
    except (ModuleNotFoundError, TypeError):
        pass
    dirs.append(Path.cwd() / "recipes")
    unique: list[Path] = []
    for d in dirs:
        if d.is_dir() and d.resolve() not in [u.resolve() for u in unique]:
            unique.append(d)
    return unique


def recipe_files() -> list[Path]:
    """The recipe files of :func:`recipe_dirs` (``*.yaml``), regular files only: a folder, a FIFO or a link to
    nothing named like a recipe is passed over (``dogood list`` says so, :func:`skipped_recipe_files`)."""
    return [p for d in recipe_dirs() for p in sorted(d.glob("*.yaml")) if p.is_file()]


def skipped_recipe_files() -> list[Path]:
    """What :func:`recipe_files` passes over: ``*.yaml`` entries of the recipe folders that are no regular file."""
    return [p for d in recipe_dirs() for p in sorted(d.glob("*.yaml")) if not p.is_file()]


def recipe_names() -> list[str]:
    """The names recipes can be loaded by, from their file names, first found wins (nothing is parsed)."""
    return list(dict.fromkeys(p.stem for p in recipe_files()))


def list_recipes() -> list[Recipe]:
    """Every recipe in :func:`recipe_dirs`, first found wins for a name; each file is read as itself (never
    looked up by name again: a broken file names itself, not another recipe)."""
    seen: dict[str, Recipe] = {}
    for path in recipe_files():
        recipe = read_recipe(path)
        seen.setdefault(recipe.name, recipe)
    return list(seen.values())
