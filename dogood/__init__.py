"""dogood: turn document-AI datasets into out-of-distribution benchmark datasets (Do-GOOD, He et al. 2023).

The flow is one way: a source yields :class:`Document` records, a recipe's chain of shifts changes them (seeded per
document), a writer stores them as a Hugging Face dataset, and :func:`evaluate` scores a model ID against OOD. The
same shifts run at training time on rows (:func:`transform`, :class:`Compose`, :class:`OneOf`).

The public API, all importable from ``dogood`` (the heavy parts are imported on first use, so ``import dogood``
loads only the record)::

    import dogood
    recipe = dogood.load_recipe("funsd-l")                 # a shipped name, a YAML path or a dict
    dogood.build(recipe, "out/funsd-l", configs=["merge"])   # a Hugging Face dataset folder
    shift = dogood.make_shift("merge", lambda_x=10)          # or dogood.SHIFTS["merge"](lambda_x=10)
    report = dogood.evaluate("baseline", "out/funsd", "out/funsd-l")

- building: :func:`build`, :func:`load_recipe`, :func:`list_recipes`, :class:`Recipe`, :class:`BuildReport`;
- shifts: :data:`SHIFTS` (recipe key -> class), :func:`make_shift`, :class:`Shift`, :class:`Outcome`,
  :class:`SkipDocument`;
- the record: :class:`Document`, :class:`Word`, :class:`Entity`, :class:`QAPair`, :class:`PageImage`,
  :class:`ShiftRecord`; :func:`read_documents` (a source, a built folder or a Hub id as records);
- training time: :class:`Compose`, :class:`OneOf`, :class:`Step`, :class:`Transform`, :func:`transform`;
- scoring: :func:`evaluate`, :func:`compare`, :func:`load_model`, :func:`train_baseline`, :class:`EvalReport`,
  :class:`Prediction`.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dogood.core.aliases import install as _install_aliases
from dogood.core.document import Document, Entity, PageImage, QAPair, ShiftRecord, Word  # noqa: F401 (the public API: __all__)
from dogood.version import __version__  # noqa: F401 (the public API: __all__)

_install_aliases()  # dogood.errors, dogood.schema, ...: the old paths of moved modules, with a DeprecationWarning

if TYPE_CHECKING:  # pragma: no cover
    from dogood.eval.report import EvalReport
    from dogood.pipeline.build import BuildReport
    from dogood.pipeline.recipe import Recipe
    from dogood.shifts.base import Shift

#: Names imported on first use: ``name -> module`` (loading them imports shifts, pyarrow, datasets...).
_LAZY = {
    "Compose": "dogood.augment", "OneOf": "dogood.augment", "Step": "dogood.augment",
    "Transform": "dogood.augment", "transform": "dogood.augment",
    "SHIFTS": "dogood.shifts.base", "Shift": "dogood.shifts.base", "Outcome": "dogood.shifts.base",
    "SkipDocument": "dogood.shifts.base",
    "Recipe": "dogood.pipeline.recipe", "list_recipes": "dogood.pipeline.recipe",
    "BuildReport": "dogood.pipeline.build",
    "EvalReport": "dogood.eval.report", "compare": "dogood.eval.compare",
    "read_documents": "dogood.eval.datasets",
    "load_model": "dogood.models", "Prediction": "dogood.models.predictions",
    "train_baseline": "dogood.models.baseline",
}

__all__ = sorted([*_LAZY, "Document", "Entity", "PageImage", "QAPair", "ShiftRecord", "Word", "__version__",
                  "build", "evaluate", "load_recipe", "make_shift"])


def __getattr__(name: str) -> Any:
    """``dogood.SHIFTS``, ``dogood.Compose``, ...: imported on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dogood' has no attribute {name!r}")
    if name == "SHIFTS":
        importlib.import_module("dogood.shifts")  # every shipped shift registers itself
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def load_recipe(recipe: str | Path | dict | Recipe) -> Recipe:
    """A recipe: a shipped name (``"funsd-l"``; ``dogood list`` shows them), a YAML file, a mapping in the YAML's
    shape (``{"name": ..., "version": ..., "source": {"kind": "funsd"}, "configs": {...}}``) or a :class:`Recipe`
    (returned as it is). Raises :class:`dogood.core.errors.RecipeError` naming what is wrong."""
    from dogood.pipeline.recipe import Recipe, parse_recipe
    from dogood.pipeline.recipe import load_recipe as load

    if isinstance(recipe, Recipe):
        return recipe
    if isinstance(recipe, dict):
        return parse_recipe(recipe)
    return load(recipe)


def make_shift(shift: str | dict, /, **params: Any) -> Shift:
    """A shift by its recipe key and parameters (``make_shift("merge", lambda_x=20)``), or from a recipe entry
    (``make_shift({"shift": "merge", "lambda_x": 20})``). Parameters are checked against the shift's declaration
    (``dogood describe NAME`` lists them; :data:`SHIFTS` maps each key to its class)."""
    import dogood.shifts  # noqa: F401  (registers the shipped shifts)
    from dogood.shifts.base import make_shift as make

    spec = dict(shift) if isinstance(shift, dict) else {"shift": shift}
    return make({**spec, **params})


def build(recipe: str | Path | dict | Recipe, out: str | Path, *, source_path: str | Path | None = None,
          configs: list[str] | None = None, splits: list[str] | None = None, seed: int | None = None,
          limit: int | None = None, num_proc: int = 1, copies: int | None = None, box_level: str | None = None,
          on_error: str = "raise", overwrite: bool = False, wait: bool = False, ray: str | None = None,
          progress: bool = True) -> BuildReport:
    """Build ``recipe`` (anything :func:`load_recipe` takes) into the dataset folder ``out``; what ``dogood build``
    does. The folder loads with ``datasets.load_dataset(out, config)``.

    Parameters
    ----------
    source_path : where the source data is (default: ``$DOGOOD_DATA_DIR``, the cache, or a download).
    configs : only these configs (names; default all).
    splits : these splits (e.g. ``["train"]``) instead of the recipe's.
    seed : instead of the recipe's seed.
    limit : only the first ``limit`` documents of each split (by sorted id).
    num_proc : worker processes; the output is byte-identical for any number.
    copies : shifted rows per document and config, each with its own draws (training data).
    box_level : ``"segment"`` or ``"word"``: the convention of the ``bboxes`` column.
    on_error : ``"raise"`` stops at a bad document, naming it; ``"skip"`` leaves it out and lists it in the card.
    overwrite : replace ``out`` if a dogood build wrote it (never any other folder).
    wait : queue behind another build of the same ``out`` instead of stopping.
    ray : run the shards on Ray (``"local"``, ``"auto"`` or ``"ray://host:port"``); same bytes.
    progress : print the progress bar and the one-time steps' lines on stderr.

    Returns
    -------
    BuildReport
        Documents written per split, skipped documents, configs.
    """
    from dogood.pipeline.build import build as run

    return run(load_recipe(recipe), out, source_path=source_path, seed=seed, num_proc=num_proc, limit=limit,
               on_error=on_error, configs=configs, overwrite=overwrite, progress=progress, ray=ray,
               box_level=box_level, wait=wait, splits=splits, copies=copies)


def evaluate(model: Any, id_dataset: Any, ood_datasets: Any = (), **options: Any) -> EvalReport:
    """Score ``model`` on the in-distribution set and every OOD set, paired by document; what ``dogood eval`` does.

    ``model`` is a model object or what :func:`load_model` takes (``"baseline"``, a model file or folder, a Hub id,
    a predictions file). The datasets are built folders (all their configs), ``"folder:config"``, Hub ids,
    ``"funsd"``, ``datasets.Dataset`` objects, or lists of them. ``options`` are
    :func:`dogood.eval.run.evaluate`'s: ``split``, ``limit``, ``resamples`` (bootstrap, default 1000), ``seed``,
    ``task`` (``"ocr"``, ``"layout"``), ``kieval``, ``reference``, ``ablate``, ... Every score is in percent, every
    change negative when the OOD set scores worse. The :class:`EvalReport` writes Markdown, CSV, JSON and plots
    (``report.write(folder)``); :func:`compare` takes the same models, datasets and options.
    """
    from dogood.eval.run import evaluate as run

    return run(model, id_dataset, ood_datasets, **options)
