"""Shifts at training time: ``Compose``, ``OneOf`` and ``transform`` for ``Dataset.map``, ``with_transform`` and torch.

In the style of albumentations' and augraphy's pipelines::

    import dogood
    chain = dogood.Compose([
        dogood.OneOf([{"shift": "char_deletion", "fraction": 0.1}, {"shift": "homoglyph_swap", "fraction": 0.1}]),
        dogood.Step({"shift": "merge", "lambda_x": 10, "lambda_y": 5}, p=0.5),
        "funsd-i:distort_fold",            # a recipe's config: its whole chain
    ])
    t = dogood.transform(chain, seed=0, per_epoch=True)
    ds = ds.with_transform(t)              # rows in the nielsr/funsd-layoutlmv3 schema (or dogood's, or rvl_cdip's)
    for epoch in range(3):
        t.set_epoch(epoch)                 # other draws each epoch; the same for the same (seed, row id, epoch)
        for batch in DataLoader(ds, num_workers=2, ...): ...   # workers draw for the epoch set, persistent or not
    # the HF Trainer: Trainer(..., train_dataset=ds, callbacks=[t.trainer_callback()])

Steps are shift objects, recipe-style dicts (``{"shift": NAME, **params}``),
``"RECIPE:CONFIG"`` strings, :class:`Step` (a shift with a probability
``p``), :class:`Compose` and :class:`OneOf` (which take a ``p`` too), and
the recipe data :meth:`Node.to_recipe` writes (``{one_of: [...], p: 0.5}``,
``{step: {...}, p: 0.3}``), so a training chain can be saved and read back.

Draws are deterministic in (seed, row id, epoch). The shift at pre-order
position k of the chain draws from ``step_seed(seed, row id, k, its
content)``, as a build's chain does (:func:`dogood.core.seeds.step_seed`): a recipe
config's chain (``"RECIPE:CONFIG"``, :meth:`Compose.from_recipe`; severity
levels included) with the recipe's seed (:meth:`Transform.from_recipe`)
reproduces the built dataset's rows exactly, its JPEG-stored pages too with
``as_built=True``. Which steps run (``p``, ``OneOf``) is drawn
from a generator of its own, so skipping one step never changes another's
draws. With ``per_epoch=True`` the seed is hashed with the epoch
(:meth:`Transform.set_epoch`).
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import multiprocessing.context
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dogood.core import fs
from dogood.core.document import Document
from dogood.core.errors import DogoodError, RecipeError
from dogood.core.schema import FUNSD_NER_TAGS, RVL_CDIP_CLASSES
from dogood.core.seeds import derive_seed, step_seed
from dogood.shifts import Shift, make_shift
from dogood.sources.rows import doc_to_row, is_batch, row_to_doc


class Node:
    """A part of a chain: a :class:`Step`, :class:`Compose` or :class:`OneOf`."""

    p: float = 1.0

    def shifts(self) -> list[Shift]:
        """The shifts in pre-order (a shift's position here is what its seed is hashed with)."""
        raise NotImplementedError

    def choose(self, rng: np.random.Generator, start: int) -> list[int]:
        """The positions (from ``start``) of the shifts that run this time."""
        raise NotImplementedError

    def _runs(self, rng: np.random.Generator) -> bool:
        return self.p >= 1.0 or (self.p > 0.0 and rng.random() < self.p)

    def to_recipe(self) -> Any:
        """This part as recipe data (YAML- and JSON-safe), which :func:`as_node` (so :class:`Compose`,
        :func:`transform`) reads back into a part that draws the same: see :data:`NODE_KEYS`."""
        raise NotImplementedError


def _check_p(p: float, what: str) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise RecipeError(f"{what}: p must be a number in [0, 1], got {p!r}")
    return float(p)


class Step(Node):
    """One shift, run with probability ``p``. ``shift`` is a :class:`Shift` or a recipe-style dict."""

    def __init__(self, shift: Shift | dict[str, Any], p: float = 1.0):
        self.shift = shift if isinstance(shift, Shift) else make_shift(shift)
        self.p = _check_p(p, f"step {self.shift.name!r}")

    def shifts(self) -> list[Shift]:
        return [self.shift]

    def choose(self, rng, start):
        return [start] if self._runs(rng) else []

    def to_recipe(self) -> dict[str, Any]:
        """``{shift: NAME, **params}`` as a recipe step; ``{step: {...}, p: P}`` when it runs with ``p`` < 1, and
        ``draw_key`` when it draws what another step draws (a severity level's step: ``"funsd-c:distort@3"``)."""
        spec = shift_spec(self.shift)
        if self.p >= 1.0 and self.shift.draw_key is None:
            return spec
        out: dict[str, Any] = {"step": spec}
        if self.p < 1.0:
            out["p"] = self.p
        if self.shift.draw_key is not None:
            out["draw_key"] = self.shift.draw_key
        return out

    def __repr__(self) -> str:
        return f"Step({self.shift!r}, p={self.p})"


class Compose(Node):
    """Its steps in order, the whole run with probability ``p``."""

    def __init__(self, steps: Iterable[Any], p: float = 1.0):
        self.steps = [as_node(s) for s in steps]
        self.p = _check_p(p, "Compose")

    @classmethod
    def from_recipe(cls, recipe: str | os.PathLike | Mapping[str, Any], config: str, p: float = 1.0) -> Compose:
        """A recipe config's chain: a shipped recipe's name, a YAML path, or the mapping :meth:`to_recipe` gives.

        The steps are the build's own (:meth:`dogood.pipeline.recipe.Recipe.chain`): a severity config's steps
        (``distort@3``) draw what its config's steps draw, as in the built dataset. A config written by
        :meth:`to_recipe` with ``p`` or ``one_of`` (which a build does not take) is read as written."""
        data = _recipe_data(recipe)
        configs = data.get("configs") if isinstance(data, Mapping) else None
        if isinstance(configs, Mapping) and config in configs and _has_nodes(configs[config]):
            return cls(_chain_data(configs[config], f"recipe config {config!r}"), p=p)
        from dogood.pipeline.recipe import load_recipe, parse_recipe

        loaded = load_recipe(recipe) if data is None else parse_recipe(dict(data), _recipe_where(recipe))
        if config not in loaded.configs:
            raise RecipeError(f"recipe {loaded.name!r} has no config {config!r}; it has "
                              f"{', '.join(loaded.configs)}")
        return cls([Step(shift) for shift in loaded.chain(config)], p=p)

    def to_recipe(self, path: str | os.PathLike | None = None, *, config: str = "train", name: str = "training",
                  seed: int = 0, source: Mapping[str, Any] | None = None) -> Any:
        """The chain as recipe data: with no argument, the list of its steps (a recipe config's chain;
        :func:`as_node` reads it back); with ``path``, a whole recipe (``name``, ``seed``, ``source``, default
        ``{kind: funsd}``, and the chain as config ``config``) written there as YAML, which
        :meth:`from_recipe` reads back, and ``dogood build`` builds when every step is a plain shift (no ``p``,
        no :class:`OneOf`, no severity level's step, which a recipe says with ``severities:``). Returns what it
        wrote."""
        steps: list[Any] = []
        for step in self.steps:  # a part that always runs its steps in order is those steps (the same positions)
            data = step.to_recipe()
            steps += data if isinstance(data, list) else [data]
        chain: Any = steps if self.p >= 1.0 else {"compose": steps, "p": self.p}
        if path is None:
            return chain
        return write_recipe(path, chain if isinstance(chain, list) else [chain], config=config, name=name,
                            seed=seed, source=source)

    def shifts(self) -> list[Shift]:
        return [s for step in self.steps for s in step.shifts()]

    def choose(self, rng, start):
        if not self._runs(rng):
            return []
        chosen, at = [], start
        for step in self.steps:
            chosen += step.choose(rng, at)
            at += len(step.shifts())
        return chosen

    def __repr__(self) -> str:
        return f"Compose({self.steps!r}, p={self.p})"


class OneOf(Node):
    """One of its steps, drawn with ``weights`` (default: equal), the draw made with probability ``p``."""

    def __init__(self, steps: Iterable[Any], p: float = 1.0, weights: Sequence[float] | None = None):
        self.steps = [as_node(s) for s in steps]
        if not self.steps:
            raise RecipeError("OneOf needs at least one step")
        self.p = _check_p(p, "OneOf")
        w = np.ones(len(self.steps)) if weights is None else np.asarray(weights, dtype=float)
        if w.shape != (len(self.steps),) or not np.all(np.isfinite(w)) or (w < 0).any() or w.sum() <= 0:
            raise RecipeError(f"OneOf: weights must be {len(self.steps)} non-negative numbers, not all 0, got {weights!r}")
        self.weights = w / w.sum()
        self._given = None if weights is None else w.tolist()  # what to_recipe writes: read back, the same division

    def shifts(self) -> list[Shift]:
        return [s for step in self.steps for s in step.shifts()]

    def choose(self, rng, start):
        if not self._runs(rng):
            return []
        k = int(rng.choice(len(self.steps), p=self.weights))
        at = start + sum(len(step.shifts()) for step in self.steps[:k])
        return self.steps[k].choose(rng, at)

    def to_recipe(self) -> dict[str, Any]:
        """``{one_of: [...], weights: [...], p: P}`` (``weights`` and ``p`` only when not the defaults)."""
        out: dict[str, Any] = {"one_of": [step.to_recipe() for step in self.steps]}
        if self._given is not None:
            out["weights"] = self._given
        if self.p < 1.0:
            out["p"] = self.p
        return out

    def __repr__(self) -> str:
        return f"OneOf({self.steps!r}, p={self.p})"


def as_node(step: Any) -> Node:
    """A chain part from a shift, a recipe-style dict, ``"RECIPE:CONFIG"``, a list (a Compose) or a node."""
    if isinstance(step, Node):
        return step
    if isinstance(step, Mapping) and "shift" not in step:
        return _node_data(step)
    if isinstance(step, (Shift, Mapping)):
        return Step(step if isinstance(step, Shift) else dict(step))
    if isinstance(step, str):
        recipe, sep, config = step.rpartition(":")
        if not sep or not recipe or not config:
            raise RecipeError(f"a step given as a string is RECIPE:CONFIG (e.g. 'funsd-l:merge'), got {step!r}")
        return Compose.from_recipe(recipe, config)
    if isinstance(step, (list, tuple)):
        return Compose(step)
    raise RecipeError(f"a step is a shift, a dict {{shift: NAME, ...}}, 'RECIPE:CONFIG', a list, Step, Compose or "
                      f"OneOf; got {type(step).__name__}")


#: The keys of a chain part written as recipe data (:meth:`Node.to_recipe`) where a recipe's list of
#: ``{shift: NAME, ...}`` steps cannot say it: ``{step: {shift: ...}, p: P, draw_key: KEY}``,
#: ``{compose: [...], p: P}``, ``{one_of: [...], weights: [...], p: P}``.
NODE_KEYS = {"step": {"step", "p", "draw_key"}, "compose": {"compose", "p"}, "one_of": {"one_of", "weights", "p"}}


def shift_spec(shift: Shift) -> dict[str, Any]:
    """``{shift: NAME, **params}`` that :func:`dogood.shifts.make_shift` makes this shift back from: every declared
    parameter as given (a path as the path, not as records show it), so the step draws the same."""
    from dogood.shifts.base import _plain

    return {"shift": shift.name, **{name: _plain(getattr(shift, name)) for name in type(shift).Params.model_fields}}


def _node_data(data: Mapping[str, Any]) -> Node:
    """A chain part from its :data:`NODE_KEYS` form."""
    kinds = [k for k in NODE_KEYS if k in data]
    if len(kinds) != 1:
        raise RecipeError(f"a chain part written as a mapping is {{shift: NAME, ...}}, {{step: ...}}, {{compose: "
                          f"[...]}} or {{one_of: [...]}}, got keys {sorted(map(str, data))}")
    kind = kinds[0]
    extra = sorted(map(str, set(data) - NODE_KEYS[kind]))
    if extra:
        raise RecipeError(f"a {kind!r} chain part takes {', '.join(sorted(NODE_KEYS[kind]))}, not {', '.join(extra)}")
    p = data.get("p", 1.0)
    if kind == "step":
        spec = data["step"]
        if not isinstance(spec, Mapping) or "shift" not in spec:
            raise RecipeError(f"'step' must be a recipe step {{shift: NAME, ...}}, got {spec!r}")
        step = Step(dict(spec), p=p)
        key = data.get("draw_key")
        if key is not None:
            if not isinstance(key, str):
                raise RecipeError(f"'draw_key' must be text (a step's content, as to_recipe writes it), got {key!r}")
            step.shift.draw_key = key
        return step
    parts = data[kind]
    if not isinstance(parts, list):
        raise RecipeError(f"{kind!r} must be a list of steps, got {type(parts).__name__}")
    if kind == "compose":
        return Compose(parts, p=p)
    return OneOf(parts, p=p, weights=data.get("weights"))


def _has_nodes(chain: Any) -> bool:
    """Whether a recipe config's chain holds a part a build does not take (``p``, ``one_of``, ``compose``)."""
    return isinstance(chain, list) and any(isinstance(step, Mapping) and "shift" not in step for step in chain)


def _chain_data(chain: Any, where: str) -> list[Node]:
    if not isinstance(chain, list):
        raise RecipeError(f"{where}: a chain is a list of steps, got {type(chain).__name__}")
    return [as_node(step) for step in chain]


def _recipe_where(recipe: Any) -> str:
    return f"recipe {recipe}" if isinstance(recipe, (str, os.PathLike)) else "recipe"


def _recipe_data(recipe: Any) -> Mapping[str, Any] | None:
    """The recipe mapping given, or read from a YAML file (at most ``Limits.recipe_bytes``); ``None`` for a
    shipped recipe's name (:func:`dogood.pipeline.recipe.load_recipe` finds it)."""
    if isinstance(recipe, Mapping):
        return recipe
    path = Path(recipe)
    if not path.is_file():
        return None
    import yaml

    from dogood.pipeline.safety import load_yaml

    try:
        raw = fs.read_bytes(path, limit="recipe_bytes", what="recipe")
    except fs.FileRefused as exc:
        raise RecipeError(f"recipe {path}: {exc.reason}") from None
    except OSError as exc:
        raise RecipeError(f"recipe {path}: cannot read it ({exc.strerror or exc})") from None
    try:
        data = load_yaml(raw.decode("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise RecipeError(f"recipe {path}: not valid YAML ({exc})") from None
    if not isinstance(data, Mapping):
        raise RecipeError(f"recipe {path}: a recipe is a mapping (name, version, source, configs)")
    return data


def write_recipe(path: str | os.PathLike, chain: list[Any], *, config: str = "train", name: str = "training",
                 seed: int = 0, source: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Write a recipe holding ``chain`` (recipe data: :meth:`Node.to_recipe`) as config ``config``, as YAML at
    ``path`` (a new file renamed into place); return the recipe mapping."""
    import yaml

    from dogood.core.fs import check_name
    from dogood.core.paths import write_atomic

    check_name(name)
    check_name(config, "config name", config=True)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise RecipeError(f"seed must be an integer, got {seed!r}")
    data = {"name": name, "version": "1.0.0", "source": dict(source or {"kind": "funsd"}), "seed": int(seed),
            "configs": {config: json.loads(json.dumps(chain))}}
    write_atomic(path, "# written by dogood (Compose.to_recipe / Transform.to_recipe)\n"
                 + yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    return data


_warned_no_cache: list[str] = []  # the default fit cache folder that could not be written (warned once)


class SharedEpoch:
    """An epoch number that the processes this one starts read as it changes: DataLoader workers, persistent or
    forked anew each epoch, with the ``fork``, ``spawn`` or ``forkserver`` start method.

    The number lives in shared memory (:func:`multiprocessing.RawValue`): a forked worker maps the same memory,
    a spawned one is handed it as it starts (pickled while a process is being started); pickled at any other
    time (``Dataset.map``'s hashing, a copy sent over a queue) it is a new number holding the current value.
    ``copy.deepcopy`` keeps the same number (``datasets`` deep-copies a dataset with its transform)."""

    __slots__ = ("_value",)

    def __init__(self, epoch: int = 0):
        self._value = multiprocessing.RawValue("q", int(epoch))

    @property
    def value(self) -> int:
        return int(self._value.value)

    @value.setter
    def value(self, epoch: int) -> None:
        self._value.value = int(epoch)

    def __reduce__(self):
        if multiprocessing.context.get_spawning_popen() is not None:
            return _attached_epoch, (self._value,)  # a process being started: the same memory
        return SharedEpoch, (self.value,)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def _attached_epoch(value) -> SharedEpoch:
    epoch = SharedEpoch.__new__(SharedEpoch)
    epoch._value = value
    return epoch


class Transform:
    """A chain as a function of rows (or batches): see :func:`transform`. Picklable, for DataLoader workers."""

    def __init__(self, chain: Any, seed: int = 0, *, per_epoch: bool = False, box_level: str | None = None,
                 tag_names: Sequence[str] | None = None, class_names: Sequence[str] | None = None,
                 id_column: str = "id", ocr: bool = False, allow_local_paths: bool = False,
                 fit_cache_dir: str | os.PathLike | bool | None = None, as_built: bool = False):
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise RecipeError(f"seed must be an integer, got {seed!r}")
        if box_level not in (None, "segment", "word"):
            raise RecipeError(f"box_level must be segment, word or None (read from the rows), got {box_level!r}")
        if fit_cache_dir is True:
            fit_cache_dir = None
        self.chain = as_node(chain)
        self.seed = int(seed)
        self.per_epoch = per_epoch
        self._epoch = SharedEpoch(0)
        self.box_level = box_level
        self.tag_names = tuple(tag_names or FUNSD_NER_TAGS)
        self.class_names = tuple(class_names or RVL_CDIP_CLASSES)
        self.id_column = id_column
        self.ocr = ocr
        self.allow_local_paths = allow_local_paths
        self.fit_cache_dir = fit_cache_dir if fit_cache_dir in (None, False) else os.fspath(fit_cache_dir)
        self.as_built = bool(as_built)
        self._shifts = self.chain.shifts()
        self._keys = [s.seed_key() for s in self._shifts]
        self._prepared = False
        self._checked: set[tuple[str, bool]] = set()

    @classmethod
    def from_recipe(cls, recipe: str | os.PathLike | Mapping[str, Any], config: str, **options: Any) -> Transform:
        """A recipe config's chain with the recipe's seed (``seed=`` in ``options`` overrides it): the rows a
        build of that config writes (see :func:`transform`'s ``as_built``), or the chain
        :meth:`to_recipe` wrote."""
        data = _recipe_data(recipe)
        if data is not None:
            seed = data.get("seed", 0)
        else:
            from dogood.pipeline.recipe import load_recipe

            seed = load_recipe(recipe).seed
        return cls(Compose.from_recipe(recipe, config), **{"seed": seed, **options})

    def to_recipe(self, path: str | os.PathLike | None = None, *, config: str = "train", name: str = "training",
                  source: Mapping[str, Any] | None = None) -> Any:
        """The chain as recipe data (:meth:`Compose.to_recipe`); with ``path``, a recipe file with this transform's
        seed, which :meth:`from_recipe` reads back into a transform that draws the same."""
        chain = self.chain if isinstance(self.chain, Compose) else Compose([self.chain])
        return chain.to_recipe(path, config=config, name=name, seed=self.seed, source=source)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_prepared"] = False  # resources load once in each worker process
        return state

    @property
    def epoch(self) -> int:
        """The epoch the next rows are drawn for (:meth:`set_epoch`)."""
        return self._epoch.value

    @epoch.setter
    def epoch(self, epoch: int) -> None:
        self._epoch.value = int(epoch)

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose draws the next rows get (with ``per_epoch=True``; otherwise draws ignore it), here and
        in every DataLoader worker this process starts, persistent or not (:class:`SharedEpoch`). Call it before
        iterating the epoch's loader: a worker draws a row for the epoch set when it makes the row. Also loads the
        shifts' resources here (:meth:`prepare`), once, so that workers forked from this process start with them."""
        if isinstance(epoch, bool) or not isinstance(epoch, (int, np.integer)) or epoch < 0:
            raise RecipeError(f"epoch must be a whole number >= 0, got {epoch!r}")
        self.epoch = int(epoch)
        self.prepare()  # here, in the loop's process: workers forked from it start with the resources loaded

    def trainer_callback(self):
        """A ``transformers.TrainerCallback`` that sets this transform's epoch as the HF ``Trainer`` starts each
        epoch (``Trainer(..., callbacks=[t.trainer_callback()])``): the Trainer calls ``on_epoch_begin`` before it
        iterates the epoch's DataLoader, so its workers, persistent or not, draw for that epoch. Like
        :meth:`set_epoch`, it loads the shifts' resources in the Trainer's process first."""
        try:
            from transformers import TrainerCallback
        except ImportError:
            raise DogoodError("Transform.trainer_callback needs transformers: pip install 'dogood[hf]'") from None
        transform = self

        class SetEpoch(TrainerCallback):
            def on_epoch_begin(self, args, state, control, **kwargs):
                transform.set_epoch(int(state.epoch + 1e-6) if state.epoch else 0)  # whole at an epoch's start

        return SetEpoch()

    def prepare(self, rows: Any = None, *, num_proc: int = 1) -> int:
        """Load what the shifts need (lexicons, photos, models), once per process (also done at the first row).

        With ``rows`` (a ``datasets.Dataset``, a list of rows or any iterable of them) and a step that redraws
        words (``render: true``), also pay the first epoch ahead: fit every page's print now, into the disk
        fit cache (``fit_cache_dir``), with ``num_proc`` processes, so that the first epoch of training runs as
        fast as the later ones. Returns the number of pages fitted (read from the cache or fitted now)."""
        if not self._prepared:
            for shift in self._shifts:
                shift.prepare()
            if any(getattr(s, "render", False) for s in self._shifts):
                from dogood.page.render import warm

                warm()
            self._prepared = True
        if rows is None or not any(getattr(s, "render", False) for s in self._shifts):
            return 0
        if isinstance(num_proc, bool) or not isinstance(num_proc, int) or num_proc < 1:
            raise RecipeError(f"num_proc must be a whole number >= 1, got {num_proc!r}")
        n = len(rows) if hasattr(rows, "__len__") and hasattr(rows, "__getitem__") else None
        if num_proc == 1 or n is None or n < 2:
            return sum(self._fit_row(row) for row in rows)
        from concurrent.futures import ProcessPoolExecutor

        bounds = np.linspace(0, n, min(n, num_proc * 4) + 1).astype(int).tolist()
        with ProcessPoolExecutor(max_workers=num_proc) as pool:
            done = pool.map(_fit_rows, [(self, rows, a, b) for a, b in zip(bounds, bounds[1:]) if b > a])
            return sum(done)

    def _fit_row(self, row: Any) -> int:
        """Fit one row's page into the fit cache (:func:`dogood.page.render.fit_page`): 1 when it has words."""
        from dogood.page.render import fit_page

        if not isinstance(row, dict):
            row = dict(row)
        doc_id = self._row_id(row)
        doc, layout = row_to_doc(row, doc_id, tag_names=self.tag_names, class_names=self.class_names,
                                 box_level=self.box_level, allow_local_paths=self.allow_local_paths, ocr=self.ocr)
        self._check(layout, doc_id)
        if layout.box_level == "segment" and not layout.full:
            doc, _ = _with_word_boxes(doc)  # what a step that redraws words is given
        return int(fit_page(doc, self._fit_folder() or False))

    def _fit_folder(self) -> str | None:
        """Where the fits are kept on disk: ``fit_cache_dir``, else ``$DOGOOD_FIT_CACHE_DIR``, else
        ``<dogood's cache>/fits``; ``None`` (memory only) with ``fit_cache_dir=False`` or when the default folder
        cannot be written (one warning)."""
        if self.fit_cache_dir is False:
            return None
        if self.fit_cache_dir is not None:
            return self.fit_cache_dir
        from dogood.page.render import default_fit_folder

        try:
            folder = default_fit_folder()
            Path(folder).mkdir(parents=True, exist_ok=True)
            if os.access(folder, os.W_OK):
                return folder
        except OSError:
            folder = "dogood's cache"
        if not _warned_no_cache:
            _warned_no_cache.append(folder)
            warnings.warn(f"dogood: the fit cache folder {folder} cannot be written; fits are kept in memory only "
                          "(set DOGOOD_CACHE or fit_cache_dir=)", stacklevel=3)
        return None

    def apply(self, doc: Document, *, epoch: int | None = None) -> Document:
        """The shifted document (its provenance records each step run, with its seed)."""
        base = self._base(epoch)
        return self._run(doc, self._chosen(base, doc.id), base)

    def _base(self, epoch: int | None = None) -> int:
        if not self.per_epoch:
            return self.seed
        return derive_seed("epoch", self.seed, self.epoch if epoch is None else int(epoch))

    def _chosen(self, base: int, doc_id: str) -> list[int]:
        """The positions of the shifts that run on document ``doc_id`` (drawn from its id alone)."""
        if not self._shifts:
            return []
        return self.chain.choose(np.random.default_rng(derive_seed("choices", base, doc_id)), 0)

    def _run(self, doc: Document, chosen: list[int], base: int) -> Document:
        if not chosen:
            return doc
        self.prepare()
        if not any(getattr(self._shifts[k], "render", False) for k in chosen):
            out = self._steps(doc, chosen, base)
        else:
            from dogood.page.render import FIT_CACHE

            # pages come back every epoch: fit each page's print once, whole (the same output, less work), kept on
            # disk too so that workers forked anew each epoch and later runs find it
            with FIT_CACHE.whole_pages_kept(self._fit_folder() or False):
                out = self._steps(doc, chosen, base)
        return _as_stored(out, doc) if self.as_built else out

    def _steps(self, doc: Document, chosen: list[int], base: int) -> Document:
        for k in chosen:
            doc = self._shifts[k](doc, step_seed(base, doc.id, k, self._keys[k]))
        return doc

    def __call__(self, row: dict[str, Any]) -> dict[str, Any]:
        """A row (``Dataset.map``, a torch ``Dataset``) or a batch (``with_transform``, ``map(batched=True)``),
        shifted, in the same columns."""
        if not isinstance(row, dict):
            row = dict(row)  # datasets' LazyRow / LazyBatch
        if not is_batch(row):
            return self._row(row)
        n = len(next(iter(row.values()))) if row else 0
        out_rows = [self._row({k: v[i] for k, v in row.items()}) for i in range(n)]
        return {k: [r[k] for r in out_rows] for k in (out_rows[0] if out_rows else row)}

    def _row(self, row: dict[str, Any]) -> dict[str, Any]:
        """One row shifted; a row that no step runs on comes back as it came, read no further than its id."""
        if not self._shifts:
            return dict(row)
        doc_id = self._row_id(row)
        base = self._base()
        chosen = self._chosen(base, doc_id)
        if not chosen:
            return dict(row)
        doc, layout = row_to_doc(row, doc_id, tag_names=self.tag_names, class_names=self.class_names,
                                 box_level=self.box_level, allow_local_paths=self.allow_local_paths, ocr=self.ocr)
        self._check(layout, doc_id)
        if layout.box_level == "segment" and not layout.full and any(_needs_words(self._shifts[k]) for k in chosen):
            worded, segment_of = _with_word_boxes(doc)
            shifted = _with_segment_boxes(self._run(worded, chosen, base), segment_of)
        else:
            shifted = self._run(doc, chosen, base)
        return doc_to_row(shifted, layout, row, doc, tag_names=self.tag_names, class_names=self.class_names,
                          input_image=row.get("image"))

    def _row_id(self, row: dict[str, Any]) -> str:
        value = row.get(self.id_column)
        if value is not None and str(value):
            return str(value)
        # No id column (aharley/rvl_cdip): the image's content names the row, whatever its position.
        image = row.get("image")
        if isinstance(image, dict):
            data = image.get("bytes") or b""
        elif image is not None:
            data = np.asarray(image).tobytes()
        else:
            data = str(row.get("image_path", "")).encode("utf-8")
        return "sha256:" + hashlib.sha256(data).hexdigest()[:16]

    def _check(self, layout, doc_id: str) -> None:
        """Refuse, at the first row of each layout, a step that cannot act on rows laid out so."""
        key = (layout.box_level, layout.full)
        if key in self._checked:
            return
        for shift in self._shifts:
            if layout.box_level == "segment" and _needs_words(shift):
                continue  # each word's own box: the record's, or found from its segment's ink (_with_word_boxes)
            try:
                shift.check_box_level(layout.box_level)
            except ValueError as exc:
                raise DogoodError(f"{exc}; pass box_level='word' to transform() if the rows' boxes are "
                                  "word-level") from None
        self._checked.add(key)


def _needs_words(shift: Shift) -> bool:
    """Whether a step acts on each word's own box: it redraws the words it changes (``render``), or moves word
    boxes one by one (a shift without the segment convention: ``box_stretch``, ``center_shift``)."""
    return bool(getattr(shift, "render", False)) or "segment" not in shift.box_levels


def _with_word_boxes(doc: Document) -> tuple[Document, dict[tuple, tuple]]:
    """``doc`` (from segment-level rows: each word has its segment's box) with each word's own box found from its
    segment's ink (:func:`dogood.page.word_boxes.page_word_boxes`), and each found box's segment box."""
    from dogood.page.word_boxes import page_word_boxes

    boxes = [w.box for w in doc.words]
    found = page_word_boxes(doc.image.to_array(), boxes, [w.text for w in doc.words])
    segment_of: dict[tuple, tuple] = {}
    for new, old in zip(found, boxes):
        if segment_of.setdefault(new, old) != old:
            segment_of[new] = None  # two segments give a word this box: it is not taken back
    words = tuple(w.moved(b) for w, b in zip(doc.words, found))
    return doc.replace(words=words), segment_of


def _with_segment_boxes(doc: Document, segment_of: dict[tuple, tuple]) -> Document:
    """``doc`` with each word whose box is still the one found for it given its segment's box back, so the
    segment-level rows keep their segments' boxes where the chain moved no word; a moved word keeps its new box
    (its segment's box in the rows is then the union of its words': :func:`dogood.core.schema.token_boxes`)."""
    if not any(segment_of.get(w.box) for w in doc.words):
        return doc
    words = tuple(w.moved(segment_of[w.box]) if segment_of.get(w.box) else w for w in doc.words)
    return doc.replace(words=words)


def _fit_rows(task) -> int:
    """:meth:`Transform.prepare` in a pool process: fit rows ``a`` to ``b``."""
    t, rows, a, b = task
    t.prepare()
    return sum(t._fit_row(rows[i]) for i in range(a, b))


def _as_stored(doc: Document, before: Document) -> Document:
    """``doc`` with its page as a build stores it: new pixels a step stores as JPEG (``encoding: jpeg``), encoded
    and decoded again; other pages (PNG, or the source's bytes) are stored losslessly and stay as they are."""
    image = doc.image
    if image is before.image or not image.modified or image.encoding != "jpeg":
        return doc
    from dogood.core.document import PageImage

    return doc.replace(image=PageImage.from_bytes(image.encoded_bytes(), verify=False))


def transform(chain: Any, seed: int = 0, **options: Any) -> Transform:
    """A function that shifts rows with ``chain`` (a step, a list of steps, or a :class:`Compose`/:class:`OneOf`).

    Options: ``per_epoch`` (draws vary with :meth:`Transform.set_epoch`), ``box_level`` (the rows' ``bboxes``
    convention; default: read from the rows: ``segment`` when every multi-token entity's tokens share a box),
    ``tag_names`` / ``class_names`` (the names of integer ``ner_tags`` / ``label`` values; default FUNSD's and
    RVL-CDIP's), ``id_column`` (default ``id``; rows without one are named by their image's content),
    ``ocr`` (read words with Tesseract when a row has none), ``allow_local_paths`` (open a ``nielsr/funsd``
    row's ``image_path``), ``fit_cache_dir`` (the folder where steps that redraw words keep each page's font
    fit, shared by workers, by workers forked anew each epoch and by later runs: default
    ``$DOGOOD_FIT_CACHE_DIR``, else ``<dogood's cache>/fits``, bounded by ``$DOGOOD_FIT_CACHE_BYTES``;
    ``False``: memory only; :mod:`dogood.page.fit_store`), ``as_built`` (pages that a build stores as JPEG,
    ``encoding: jpeg``, come back encoded and decoded as the built rows hold them, byte for byte; default: the
    page before that encoding, which differs from the stored one by JPEG's loss at quality 95).
    """
    return Transform(chain, seed, **options)
