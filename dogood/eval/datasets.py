"""The datasets an evaluation reads: built folders, Hub ids, source kinds, ``datasets.Dataset`` objects."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dogood.core import fs
from dogood.core.errors import DogoodError, SourceError

#: The task each dataset schema / source kind asks of a model.
SCHEMA_TASKS = {"funsd": "token", "rvl_cdip": "document", "docvqa": "qa"}


SOURCE_KINDS = ("funsd", "rvl_cdip")


class EvalError(DogoodError):
    """A dataset cannot be evaluated as asked."""


@dataclass
class EvalDataset:
    """One dataset to score: a name for the report, where its documents come from, and its task."""

    name: str
    source: Any
    task: str
    split: str
    config: str | None = None
    location: str = ""
    #: The convention of its ``bboxes`` (``segment`` or ``word``); ``None`` for a source read by dogood's own
    #: loaders (``funsd``), which a model reads at its own convention.
    box_level: str | None = None


def resolve_datasets(spec: str, split: str = "test") -> list[EvalDataset]:
    """The datasets a command-line name stands for (see the module docstring).

    A dogood folder without ``:config`` gives one dataset per config that has
    ``split``; anything else gives one.
    """
    base, config = _split_config(spec)
    path = Path(base).expanduser()
    if not path.exists() and base in SOURCE_KINDS:
        from dogood.sources import open_source

        source = open_source({"kind": base}, split)
        return [EvalDataset(base, source, SCHEMA_TASKS[base], split, None, f"{base} source")]
    if path.is_dir() and not (path / "data").is_dir() and _funsd_layout(path):
        return [_funsd_folder(path, split)]
    if path.is_dir():
        configs = [config] if config else _folder_configs(path, split)
        if not configs:
            configs = [None]
        return [_hf_dataset(str(path), path.name, c, split) for c in configs]
    if path.exists() or base.startswith((".", "/", "~")):
        if not path.exists():
            raise EvalError(f"dataset {spec!r}: {path} does not exist{_near(path)}")
        return [_hf_dataset(str(path), path.stem, config, split)]
    if "/" in base and path.parent.is_dir() and str(path.parent) not in (".", ""):
        # "out/funsd-ll": a local folder's parent exists, so this names a folder that is not there, not a Hub id
        raise EvalError(f"dataset {spec!r}: no folder {path} (the folder {path.parent} exists; a Hub id would not "
                        f"name a local folder){_near(path)}")
    return [_hf_dataset(base, base, config, split)]


def _near(path: Path) -> str:
    """``"; did you mean X?"`` naming the entries of ``path``'s folder closest to its name, or nothing."""
    import difflib

    try:
        names = [p.name for p in path.parent.iterdir()] if path.parent.is_dir() else []
    except OSError:
        return ""
    close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(str(path.parent / c) for c in close)}?" if close else ""


def _funsd_layout(path: Path) -> bool:
    """A folder in FUNSD's official layout (``[dataset/]testing_data/annotations``, ``training_data/...``), or one
    split folder of it (``annotations/`` beside ``images/``)."""
    from dogood.sources.funsd import SPLIT_DIRS

    if (path / "annotations").is_dir() and (path / "images").is_dir():
        return True
    return any((base / d / "annotations").is_dir() for base in (path, path / "dataset") for d in SPLIT_DIRS.values())


def _funsd_folder(path: Path, split: str) -> EvalDataset:
    """A FUNSD-layout folder as a dataset: the split asked for, or the only split it holds (the location says which)."""
    from dogood.sources.funsd import SPLIT_DIRS, FunsdSource

    root, name = path, path.name
    if (path / "annotations").is_dir() and path.name in SPLIT_DIRS.values():
        root = path.parent  # one split folder of the official layout: read as that split
        name = f"{path.parent.name}/{path.name}"
        split = next(k for k, v in SPLIT_DIRS.items() if v == path.name)
    elif (path / "annotations").is_dir():
        raise EvalError(f"dataset {str(path)!r}: a folder of FUNSD annotations must sit in FUNSD's layout: put "
                        "annotations/ and images/ in testing_data/ (the test split) or training_data/")
    base = path / "dataset" if not any((path / d).is_dir() for d in SPLIT_DIRS.values()) else path
    if root is path:
        held = [k for k, d in SPLIT_DIRS.items() if (base / d / "annotations").is_dir()]
        if split not in held and len(held) == 1:
            split = held[0]  # a folder holding one split (a set of other forms): that split, said in the location
        root = base
    try:
        source = FunsdSource(root=root, split=split)
    except SourceError as exc:
        raise EvalError(f"dataset {str(path)!r}: {exc}") from None
    return EvalDataset(name, source, "token", split, None, f"FUNSD-layout folder {path.name} ({SPLIT_DIRS[split]})")


def _split_config(spec: str) -> tuple[str, str | None]:
    base, sep, config = spec.rpartition(":")
    if not sep or not base or "/" in config or Path(spec).exists():
        return spec, None
    return base, config


def _folder_configs(folder: Path, split: str) -> list[str]:
    data = folder / "data"
    if not data.is_dir():
        return []
    return sorted((d.name for d in data.iterdir() if d.is_dir() and any(d.glob(f"{split}-*.parquet"))),
                  key=natural_key)


def natural_key(name: str) -> list:
    """Sort key reading runs of digits as numbers: ``merge_x0_y5`` before ``merge_x0_y10`` (a sweep of a parameter
    in the order of its values)."""
    import re

    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name)]


def _hf_dataset(location: str, label: str, config: str | None, split: str) -> EvalDataset:
    from dogood.sources.hf_dataset import HFDatasetSource

    try:
        source = HFDatasetSource(name=location, split=split, config=config)
    except SourceError as exc:
        raise EvalError(f"dataset {location!r}: {exc}") from None
    name = f"{label}/{config}" if config else label
    return EvalDataset(name, source, SCHEMA_TASKS[source.schema], split, config, location,
                       built_box_level(location, source))


def build_record(location: str | Path | None) -> Any:
    """A dogood folder's ``dogood_build.json`` through the one bounded reader (:func:`dogood.core.fs.read_json`);
    ``None`` when ``location`` is no such folder or the file cannot be read (the caller then reads the data)."""
    if not location or not Path(location).is_dir():
        return None
    try:
        return fs.read_json(Path(location) / "dogood_build.json", what="dogood_build.json")
    except (OSError, fs.FileRefused):
        return None


def built_box_level(location: str, source) -> str | None:
    """The ``bboxes`` convention of a dataset: the ``box_level`` a dogood folder's ``dogood_build.json`` states,
    else read off its first row (:meth:`~dogood.sources.hf_dataset.HFDatasetSource.box_convention`)."""
    from dogood.core.schema import BOX_LEVELS

    if location and Path(location).is_dir():
        record = build_record(location)
        if isinstance(record, dict) and record.get("box_level") in BOX_LEVELS:
            return record["box_level"]
    try:
        return source.box_convention()
    except DogoodError:
        return None


def as_datasets(spec: Any, split: str = "test") -> list[EvalDataset]:
    """Whatever names a dataset, as :class:`EvalDataset` objects.

    ``spec`` is an :class:`EvalDataset`; a string or path as on the command
    line (a built folder, ``folder:config``, a Hub id, ``funsd`` /
    ``rvl_cdip``: see :func:`resolve_datasets`); or a ``datasets.Dataset``
    (``DatasetDict``: its ``split``) in dogood's schema or a plain Hub
    FUNSD / RVL-CDIP schema.
    """
    if isinstance(spec, EvalDataset):
        return [spec]
    if isinstance(spec, (str, Path)):
        return resolve_datasets(str(spec), split)
    try:
        import datasets
    except ImportError:  # pragma: no cover - datasets is a dependency
        datasets = None
    if datasets is not None and isinstance(spec, datasets.DatasetDict):
        if split not in spec:
            raise EvalError(f"the DatasetDict has no split {split!r} (it has {', '.join(spec) or 'none'})")
        spec = spec[split]
    if datasets is not None and isinstance(spec, datasets.Dataset):
        from dogood.sources.hf_dataset import HFDatasetSource

        label = (getattr(spec.info, "dataset_name", None) or getattr(spec.info, "config_name", None)
                 or f"dataset@{id(spec):x}")
        config = getattr(spec.info, "config_name", None)
        config = None if config in (None, "default") else config
        try:
            source = HFDatasetSource(name=label, split=split, config=config, dataset=spec)
        except SourceError as exc:
            raise EvalError(f"dataset {label!r}: {exc}") from None
        if source.schema not in SCHEMA_TASKS:
            raise EvalError(f"dataset {label!r}: {source.schema} datasets cannot be scored by dogood eval")
        name = f"{label}/{config}" if config and config != label else label
        return [EvalDataset(name, source, SCHEMA_TASKS[source.schema], split, config, "datasets.Dataset object",
                            built_box_level("", source))]
    raise EvalError(f"cannot read a dataset from a {type(spec).__name__}: give a folder, a Hub id, "
                    "'folder:config', a datasets.Dataset or an EvalDataset")


def is_one_dataset(spec: Any) -> bool:
    """Whether ``spec`` names one dataset (or one folder), rather than being a collection of them."""
    if isinstance(spec, (str, Path, EvalDataset)) or not isinstance(spec, Iterable):
        return True
    try:
        import datasets
    except ImportError:  # pragma: no cover
        return False
    return isinstance(spec, (datasets.Dataset, datasets.DatasetDict))


def measured_factors(dataset: EvalDataset) -> dict | None:
    """A dogood folder's config's measured factor counts for the evaluated split (its ``dogood_build.json``
    statistics, :mod:`dogood.measures.factors`); ``None`` for other datasets or builds before factors."""
    if not dataset.location or not Path(dataset.location).is_dir():
        return None
    try:
        record = build_record(dataset.location)
        stats = record["stats"][dataset.config or next(iter(record["stats"]))][dataset.split]
    except (KeyError, TypeError, StopIteration):
        return None
    factors = stats.get("factors") if isinstance(stats, dict) else None
    return factors if isinstance(factors, dict) and factors else None


def data_box_level(datasets: Iterable[EvalDataset]) -> str | None:
    """The one ``bboxes`` convention of ``datasets`` that state one (the first, when they differ: the model check
    names the others); ``None`` when none does."""
    return next((d.box_level for d in datasets if d.box_level), None)


def refuse_other_boxes(model: Any, datasets: Iterable[EvalDataset]) -> None:
    """Refuse datasets whose ``bboxes`` convention is not the one a model given boxes reads (its ``box_level``):
    its score on them would mix each dataset's own shift with a change of box convention. A dataset with no
    convention (a source kind read by dogood's loaders) is read at the model's."""
    if not getattr(model, "takes_boxes", False) or not getattr(model, "box_level", None):
        return
    level = model.box_level
    for d in datasets:
        if d.box_level and d.box_level != level:
            if level == "record":
                how = "it is the Move shift's scorer; train one at the data's with `dogood train-baseline --box-level " \
                      f"{d.box_level}`"
            else:
                how = (f"train the baseline at {d.box_level} level (`dogood train-baseline --box-level {d.box_level}`),"
                       f" or give a Hugging Face model fine-tuned on {d.box_level} boxes with `--box-level "
                       f"{d.box_level}`")
            raise EvalError(f"model {getattr(model, 'name', model)!r} reads {level} boxes, but dataset {d.name!r} has "
                            f"{d.box_level}-level bboxes: its score would mix the dataset's shift with a change of box "
                            f"convention; {how}")


def refuse_copies(id_set: EvalDataset, ood: EvalDataset, id_ids: set[str], ood_ids: set[str]) -> None:
    """Refuse an OOD set built with ``copies: k`` (ids ``DOC#j``) against an ID set of plain ids: pairing is one
    row per document, and k shifted copies of one document are not k documents (their intervals would be too
    narrow). Such sets are for training; build the test set without ``--copies``."""
    for d in (id_set, ood):
        k = built_copies(d)
        if k > 1:
            raise EvalError(f"dataset {d.name!r} was built with {k} copies of each document (ids DOC#0..DOC#{k - 1}): "
                            "dogood eval pairs one row per document; score a test set built without --copies")
    copies = {i for i in ood_ids - id_ids if i.rpartition("#")[0] in id_ids and i.rpartition("#")[2].isdigit()}
    if copies:
        example = min(copies)
        raise EvalError(f"OOD dataset {ood.name!r} holds several shifted copies of each document (ids such as "
                        f"{example!r}, from a build with --copies) and ID dataset {id_set.name!r} one row per "
                        "document: dogood eval pairs one row per document; score a test set built without --copies")


def built_copies(dataset: EvalDataset) -> int:
    """The ``copies`` a dogood folder's ``dogood_build.json`` states (1 when it states none or is no such folder)."""
    if not dataset.location or not Path(dataset.location).is_dir():
        return 1
    record = build_record(dataset.location)
    try:
        return int(record.get("copies", 1)) if isinstance(record, dict) else 1
    except (ValueError, TypeError):
        return 1


def read_documents(spec: Any, split: str = "test", *, source_path: str | Path | None = None,
                   limit: int | None = None) -> list:
    """The :class:`~dogood.core.document.Document` records a name stands for, in id order.

    ``spec`` is a source kind (``"funsd"``, ``"rvl_cdip"``, ``"docvqa"``, ``"synthetic"``; read from
    ``source_path`` or where dogood finds it), a built folder (all its configs, one after another; ``folder:config``
    for one), a Hub id, or a ``datasets.Dataset``. ``limit``: the first ``limit`` documents of each dataset.
    """
    from dogood.sources import SOURCE_KINDS as KINDS
    from dogood.sources import open_source

    if isinstance(spec, str) and spec in KINDS and spec != "hf" and not Path(spec).exists():
        sources = [open_source({"kind": spec}, split, source_path)]
    else:
        sources = [d.source for d in as_datasets(spec, split)]
    docs = []
    for source in sources:
        ids = list(source.ids())
        docs += [source.load(i) for i in (ids[:limit] if limit else ids)]
    return docs
