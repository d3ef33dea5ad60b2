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

Steps are shift objects, recipe-style dicts (``{"shift": NAME, **params}``),
``"RECIPE:CONFIG"`` strings, :class:`Step` (a shift with a probability
``p``), :class:`Compose` and :class:`OneOf` (which take a ``p`` too).

Draws are deterministic in (seed, row id, epoch). The shift at pre-order
position k of the chain draws from ``step_seed(seed, row id, k, its
content)``, as a build's chain does (:func:`dogood.core.seeds.step_seed`): a plain
``Compose`` of a recipe config's shifts with the recipe's seed reproduces the
built dataset's rows exactly. Which steps run (``p``, ``OneOf``) is drawn
from a generator of its own, so skipping one step never changes another's
draws. With ``per_epoch=True`` the seed is hashed with the epoch
(:meth:`Transform.set_epoch`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from dogood.core.document import Document
from dogood.core.errors import DocumentError, DogoodError, RecipeError
from dogood.sources.rows import doc_to_row, is_batch, row_to_doc
from dogood.core.schema import FUNSD_NER_TAGS, RVL_CDIP_CLASSES
from dogood.core.seeds import derive_seed, step_seed
from dogood.shifts import Shift, make_shift


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

    def __repr__(self) -> str:
        return f"Step({self.shift!r}, p={self.p})"


class Compose(Node):
    """Its steps in order, the whole run with probability ``p``."""

    def __init__(self, steps: Iterable[Any], p: float = 1.0):
        self.steps = [as_node(s) for s in steps]
        self.p = _check_p(p, "Compose")

    @classmethod
    def from_recipe(cls, recipe: str, config: str, p: float = 1.0) -> Compose:
        """A recipe config's chain (a shipped recipe's name or a YAML path)."""
        from dogood.pipeline.recipe import load_recipe

        loaded = load_recipe(recipe)
        if config not in loaded.configs:
            raise RecipeError(f"recipe {loaded.name!r} has no config {config!r}; it has "
                              f"{', '.join(loaded.configs)}")
        return cls(list(loaded.configs[config]), p=p)

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

    def shifts(self) -> list[Shift]:
        return [s for step in self.steps for s in step.shifts()]

    def choose(self, rng, start):
        if not self._runs(rng):
            return []
        k = int(rng.choice(len(self.steps), p=self.weights))
        at = start + sum(len(step.shifts()) for step in self.steps[:k])
        return self.steps[k].choose(rng, at)

    def __repr__(self) -> str:
        return f"OneOf({self.steps!r}, p={self.p})"


def as_node(step: Any) -> Node:
    """A chain part from a shift, a recipe-style dict, ``"RECIPE:CONFIG"``, a list (a Compose) or a node."""
    if isinstance(step, Node):
        return step
    if isinstance(step, (Shift, dict)):
        return Step(step)
    if isinstance(step, str):
        recipe, sep, config = step.rpartition(":")
        if not sep or not recipe or not config:
            raise RecipeError(f"a step given as a string is RECIPE:CONFIG (e.g. 'funsd-l:merge'), got {step!r}")
        return Compose.from_recipe(recipe, config)
    if isinstance(step, (list, tuple)):
        return Compose(step)
    raise RecipeError(f"a step is a shift, a dict {{shift: NAME, ...}}, 'RECIPE:CONFIG', a list, Step, Compose or "
                      f"OneOf; got {type(step).__name__}")


class Transform:
    """A chain as a function of rows (or batches): see :func:`transform`. Picklable, for DataLoader workers."""

    def __init__(self, chain: Any, seed: int = 0, *, per_epoch: bool = False, box_level: str | None = None,
                 tag_names: Sequence[str] | None = None, class_names: Sequence[str] | None = None,
                 id_column: str = "id", ocr: bool = False, allow_local_paths: bool = False,
                 fit_cache_dir: str | os.PathLike | None = None):
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise RecipeError(f"seed must be an integer, got {seed!r}")
        if box_level not in (None, "segment", "word"):
            raise RecipeError(f"box_level must be segment, word or None (read from the rows), got {box_level!r}")
        self.chain = as_node(chain)
        self.seed = int(seed)
        self.per_epoch = per_epoch
        self.epoch = 0
        self.box_level = box_level
        self.tag_names = tuple(tag_names or FUNSD_NER_TAGS)
        self.class_names = tuple(class_names or RVL_CDIP_CLASSES)
        self.id_column = id_column
        self.ocr = ocr
        self.allow_local_paths = allow_local_paths
        self.fit_cache_dir = None if fit_cache_dir is None else os.fspath(fit_cache_dir)
        self._shifts = self.chain.shifts()
        self._keys = [s.seed_key() for s in self._shifts]
        self._prepared = False
        self._checked: set[tuple[str, bool]] = set()

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_prepared"] = False  # resources load once in each worker process
        return state

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose draws the next rows get (with ``per_epoch=True``; otherwise draws ignore it)."""
        self.epoch = int(epoch)

    def prepare(self) -> None:
        """Load what the shifts need (lexicons, photos, models), once per process; also done at the first row."""
        if not self._prepared:
            for shift in self._shifts:
                shift.prepare()
            self._prepared = True

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
            return self._steps(doc, chosen, base)
        from dogood.page.render import FIT_CACHE

        # pages come back every epoch: fit each page's print once, whole (the same output, less work)
        with FIT_CACHE.whole_pages_kept(self.fit_cache_dir):
            return self._steps(doc, chosen, base)

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
            try:
                shift.check_box_level(layout.box_level)
            except ValueError as exc:
                raise DogoodError(f"{exc}; pass box_level='word' to transform() if the rows' boxes are "
                                  "word-level") from None
            if layout.box_level == "segment" and not layout.full and getattr(shift, "render", False):
                raise DocumentError(f"step {shift.name!r} redraws the words it changes and needs each word's own "
                                    "box, which segment-level rows (as nielsr/funsd-layoutlmv3) do not hold: every "
                                    "word has its segment's box; set render=False (the tokens change, the pixels "
                                    "do not) or use word-level rows (nielsr/funsd, or dogood's)", doc_id=doc_id)
        self._checked.add(key)


def transform(chain: Any, seed: int = 0, **options: Any) -> Transform:
    """A function that shifts rows with ``chain`` (a step, a list of steps, or a :class:`Compose`/:class:`OneOf`).

    Options: ``per_epoch`` (draws vary with :meth:`Transform.set_epoch`), ``box_level`` (the rows' ``bboxes``
    convention; default: read from the rows: ``segment`` when every multi-token entity's tokens share a box),
    ``tag_names`` / ``class_names`` (the names of integer ``ner_tags`` / ``label`` values; default FUNSD's and
    RVL-CDIP's), ``id_column`` (default ``id``; rows without one are named by their image's content),
    ``ocr`` (read words with Tesseract when a row has none), ``allow_local_paths`` (open a ``nielsr/funsd``
    row's ``image_path``), ``fit_cache_dir`` (a folder where steps that redraw words keep each page's font fit,
    shared by workers and later runs; :class:`dogood.page.render.FitCache`: default ``$DOGOOD_FIT_CACHE_DIR``,
    else memory only).
    """
    return Transform(chain, seed, **options)
