"""Models that score documents: one small protocol, a few kinds behind it.

A model takes documents and returns one :class:`~dogood.models.predictions.Prediction`
per document id:

- ``task == "token"``: ``tags`` (one IOB tag name per token word, i.e. the
  words with non-blank text, in order, as :func:`dogood.core.schema.iob_tags`) and
  ``confidences`` (one probability per token word);
- ``task == "document"``: ``label`` (a class name) and ``confidence``;
- ``task == "qa"``: ``answers`` (question id -> answer text).

Kinds:

- :class:`dogood.models.baseline.BaselineTagger`: dogood's own CRF over word
  text and layout, trained offline on FUNSD train (``dogood train-baseline``);
- :class:`dogood.models.doc_baseline.DocumentBaseline`: dogood's own page
  classifier (TF-IDF words + page thumbnail, logistic regressions), trained
  offline on an RVL-CDIP train split (``dogood train-baseline --task document``);
- :mod:`dogood.models.hf_model`: Hugging Face token / sequence / image
  classification models by name or path (LayoutLMv3, LiLT, BROS, DiT, ...);
- :class:`PredictionsFile`: predictions made elsewhere, read from JSONL;
- :class:`dogood.models.coco_results.CocoResults`: region detections made elsewhere, read from COCO results
  files (``task == "layout"``);
- :mod:`dogood.models.ocr_engine`: OCR engines (``tesseract``, ``rapidocr``) as
  models of the ``ocr`` task;
- :class:`dogood.models.pipeline_model.PipelineModel`: an OCR engine followed
  by a tagger (``pipeline:tesseract+baseline``).

The protocol, :class:`ModelError` and the default baseline paths live in
:mod:`dogood.models.base`, the model-zip reader in :mod:`dogood.models.model_zip`
and the Hugging Face loading helpers in :mod:`dogood.core.hub`: leaf
modules, which the submodules and the shifts import instead of this package.

:func:`load_model` turns what a user types (``baseline``, a file, a folder or
a Hub id) into one of them.
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from pathlib import Path

from dogood.core.document import Document
from dogood.models.base import Model, ModelError, default_baseline_path, default_document_baseline_path
from dogood.models.predictions import TASKS, Prediction, check_against, read_predictions

__all__ = ["Model", "ModelError", "PredictionsFile", "baseline_kind", "default_baseline_path",
           "default_document_baseline_path", "load_model"]


class PredictionsFile:
    """Predictions made elsewhere, read from a JSONL file (see :mod:`dogood.models.predictions`).

    ``path`` is one file, or a folder holding one ``<name>.jsonl`` per
    evaluated dataset; ``predict`` then reads the file named by ``dataset``.
    """

    def __init__(self, path: str | Path, task: str = "token"):
        if task not in TASKS:
            raise ValueError(f"task must be one of {', '.join(TASKS)}, got {task!r}")
        self.path = Path(path)
        if not self.path.exists():
            raise ModelError(f"predictions file or folder {self.path} does not exist")
        self.task = task
        self.name = self.path.stem if self.path.is_file() else self.path.name
        self._read: dict[Path, dict[str, Prediction]] = {}

    def file_for(self, dataset: str | None) -> Path:
        if self.path.is_file():
            return self.path
        if dataset is None:
            raise ModelError(f"{self.path} is a folder of predictions: name the dataset whose file to read")
        candidates = [self.path / f"{dataset}.jsonl", self.path / f"{dataset.replace('/', '__')}.jsonl"]
        for candidate in candidates:
            if candidate.is_file():
                return candidate
        raise ModelError(f"no predictions for dataset {dataset!r}: expected {candidates[-1]}")

    def predict(self, docs: Sequence[Document], dataset=None) -> dict[str, Prediction]:
        """The predictions of ``docs`` from the file of ``dataset`` (its name, or an
        :class:`~dogood.eval.datasets.EvalDataset`, whose ids every line must name)."""
        name = getattr(dataset, "name", dataset)
        path = self.file_for(name)
        if path not in self._read:
            preds = read_predictions(path, self.task)
            if hasattr(dataset, "source"):
                unknown = sorted(set(preds) - set(dataset.source.ids()))
                if unknown:
                    raise ModelError(f"{path}: predictions for document id(s) not in {name!r}: {', '.join(unknown[:5])}")
            self._read = {path: preds}
        preds = self._read[path]
        docs = list(docs)
        mine = {d.id: preds[d.id] for d in docs if d.id in preds}
        check_against(mine, docs, self.task, source=str(path))
        return mine


def load_model(spec: str | Path, task: str | None = None, **options) -> Model:
    """The model named by ``spec``.

    ``spec`` is ``"baseline"`` (the CRF baseline reading ``options["box_level"]`` boxes, default ``segment``, at
    :func:`default_baseline_path`, or for ``task == "document"`` the document baseline at
    :func:`default_document_baseline_path`), an OCR engine (``"tesseract"``, ``"rapidocr"``),
    ``"pipeline:ENGINE+TAGGER"``,
    a ``.dogood-model`` file, a ``.jsonl`` predictions file or a folder of
    them, with ``task="layout"`` a COCO results ``.json`` file or a folder of them
    (:class:`~dogood.models.coco_results.CocoResults`), a Hugging Face model folder, or a Hub model id.
    ``options`` go to Hugging Face models' loader (``labels``, ``device``, ``batch_size``...) and
    ``ocr_options`` to an OCR engine (:func:`~dogood.models.ocr_engine.load_engine`: ``{"psm": "11"}``); the
    other kinds take none and ignore them.
    """
    spec_str = str(spec)
    if spec_str.startswith("pipeline:"):
        return _load_pipeline(spec_str, options)
    from dogood.models.ocr_engine import ENGINES, load_engine

    if spec_str in ENGINES and not Path(spec_str).exists():
        return load_engine(spec_str, **(options.get("ocr_options") or {}))
    if task == "layout" and spec_str != "baseline":
        from dogood.models.coco_results import CocoResults

        return CocoResults(Path(spec_str).expanduser())
    if spec_str == "baseline":
        document = task == "document"
        level = options.get("box_level") or "segment"
        path = default_document_baseline_path() if document else default_baseline_path(level)
        if not path.is_file():
            how = ("`dogood train-baseline --task document`" if document else
                   f"`dogood train-baseline --box-level {level}`")
            raise ModelError(f"no baseline model at {path}: train one with {how} (or pass its path)")
        return _load_baseline(path)
    path = Path(spec_str).expanduser()
    if path.is_file() and _is_zip(path):
        return _load_baseline(path)
    if path.suffix == ".jsonl" or (path.is_dir() and any(path.glob("*.jsonl")) and not (path / "config.json").exists()):
        return PredictionsFile(path, task or "token")
    if path.is_dir() and (path / "config.json").is_file():
        return _load_hf(str(path), task, options)
    looks_local = spec_str.startswith((".", "/", "~")) or path.suffix in (".jsonl", ".dogood-model") or spec_str.count("/") > 1
    if looks_local or path.exists():
        raise ModelError(f"model {spec_str!r} does not exist (or is not a baseline file, a predictions file or a model folder)")
    return _load_hf(spec_str, task, options)


def _load_pipeline(spec: str, options: dict) -> Model:
    """``pipeline:ENGINE+TAGGER``: an OCR engine, then a token tagger named as ``--model`` names one."""
    from dogood.models.ocr_engine import ENGINES, load_engine
    from dogood.models.pipeline_model import PipelineModel

    engine, sep, tagger = spec[len("pipeline:"):].partition("+")
    if not sep or not tagger or engine not in ENGINES:
        raise ModelError(f"model {spec!r}: write pipeline:ENGINE+TAGGER, ENGINE one of {', '.join(ENGINES)} and "
                         "TAGGER a token model (e.g. pipeline:tesseract+baseline)")
    if tagger == "baseline":  # the engine reads words: the baseline trained on word boxes
        options = {**options, "box_level": options.get("box_level") or "word"}
    return PipelineModel(load_engine(engine, **(options.get("ocr_options") or {})),
                         load_model(tagger, task="token", **{k: v for k, v in options.items() if k != "ocr_options"}))


def _load_hf(name: str, task: str | None, options: dict) -> Model:
    """A Hugging Face model: its architecture decides its task; ``task`` only fills in when it cannot."""
    from dogood.models.hf_model import load_hf_model

    options = {k: v for k, v in options.items() if k != "ocr_options"}
    try:
        return load_hf_model(name, **options)
    except ModelError as exc:
        if task is None or "cannot tell its task" not in str(exc):
            raise
        return load_hf_model(name, task=task, **options)


def _is_zip(path: Path) -> bool:
    """Whether ``path`` is a zip file (read through the one reader: a regular file only)."""
    from dogood.core import fs
    from dogood.models.model_zip import MAX_FILE_BYTES

    try:
        with fs.open_file(path, max_bytes=MAX_FILE_BYTES, what="model file") as fh:
            return zipfile.is_zipfile(fh)
    except (fs.FileRefused, OSError):
        return True  # the loader names what is wrong with it (too large, unreadable)


def baseline_kind(path: Path) -> str | None:
    """``"document"`` for a document baseline file, ``"token"`` for anything else that may be the CRF baseline,
    ``None`` when ``path`` is not a readable zip with a ``meta.json`` naming a dogood format."""
    from dogood.core import fs
    from dogood.models.model_zip import MAX_MEMBERS

    try:
        with fs.open_zip(path, what="model file", max_members=MAX_MEMBERS) as zf:
            if "meta.json" not in zf.namelist() or zf.getinfo("meta.json").file_size > 1 << 20:
                return None  # no meta, or one that expands beyond any model's (a zip bomb): the loader says so
            meta = fs.parse_json(fs.read_member(zf, "meta.json", where=path), where=path, what="meta.json")
    except (fs.FileRefused, OSError):  # a damaged file: the loaders say what is wrong with it
        return None
    if not isinstance(meta, dict):
        return None
    from dogood.models.doc_baseline import FORMAT_NAME

    if meta.get("format") == FORMAT_NAME or meta.get("kind") == "document":
        return "document"
    return "token" if meta.get("format") == "dogood-crf-baseline" else None


def _load_baseline(path: Path) -> Model:
    if baseline_kind(path) == "document":
        from dogood.models.doc_baseline import DocumentBaseline

        return DocumentBaseline.load(path)
    from dogood.models.baseline import BaselineTagger

    return BaselineTagger.load(path)
