"""Region detections made elsewhere, read from COCO *results* files: the model of ``dogood eval --task layout``.

A results file is a JSON list of ``{"image_id": int, "category_id": int, "bbox": [x, y, w, h], "score": number}``
(pycocotools' ``loadRes`` format, what detectron2, MMDetection and the COCO API write), with the image and category
ids of ``dogood export --format coco`` of the same config and split: images 1..n in the dataset's document order,
categories 1..n in the order of its entity labels. ``path`` is one file, or a folder holding ``<config>.json`` (or
``<name>.json``, ``/`` as ``_``) per dataset.

Every entry is checked before anything is scored, and a bad one is refused with the file and the entry named: a
file that is not such a list, an id that is not an integer (``"1"``, ``1.0``, ``true``), a box that is not four
finite numbers or has a negative size, a score that is not a finite number, an image id outside the dataset. The
category ids are checked against the dataset's categories by the layout task. Files above :data:`MAX_BYTES` are
refused before they are read.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dogood.core import fs
from dogood.core.document import Document
from dogood.core.errors import ModelError
from dogood.models.predictions import Prediction

#: The largest results file read (bytes): some 4 million detections.
MAX_BYTES = 512 * 1024 * 1024


def read_json(path: Path, limit: int = MAX_BYTES) -> Any:
    """A JSON results file named by a user, through the one bounded reader (:func:`dogood.core.fs.read_json`: a
    regular file of at most ``limit`` bytes, not nested too deep), its faults as a :class:`ModelError`."""
    try:
        return fs.read_json(path, max_bytes=limit, what="results file")
    except fs.FileRefused as exc:
        raise ModelError(str(exc)) from None
    except OSError as exc:
        raise ModelError(f"{path}: cannot read it ({exc.strerror or exc})") from None


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def parse_results(data: Any, where: str) -> list[tuple[int, int, tuple[float, float, float, float], float]]:
    """A results list as ``(image_id, category_id, (x0, y0, x1, y1), score)`` entries, each checked (see the module
    docstring); ``where`` names the file in errors."""
    if isinstance(data, dict) and "annotations" in data:
        raise ModelError(f"{where}: a COCO annotation file (images, annotations, categories), not a results list "
                         "[{image_id, category_id, bbox, score}]; pass the detector's results")
    if not isinstance(data, list):
        raise ModelError(f"{where}: expected a list of {{image_id, category_id, bbox, score}} (COCO results), "
                         f"not a JSON {type(data).__name__}")
    out = []
    for k, r in enumerate(data):
        at = f"{where}: entry {k}"
        if not isinstance(r, dict):
            raise ModelError(f"{at}: not an object {{image_id, category_id, bbox, score}}")
        missing = [key for key in ("image_id", "category_id", "bbox", "score") if key not in r]
        if missing:
            raise ModelError(f"{at}: no {', '.join(missing)}")
        for key in ("image_id", "category_id"):
            if not _integer(r[key]):
                raise ModelError(f"{at}: {key} must be an integer, not {r[key]!r:.40}")
        box = r["bbox"]
        if not isinstance(box, list) or len(box) != 4 or not all(_number(v) for v in box):
            raise ModelError(f"{at}: bbox must be [x, y, width, height], four finite numbers, not {box!r:.60}")
        x, y, w, h = (float(v) for v in box)
        if w < 0 or h < 0:
            raise ModelError(f"{at}: bbox {box} has a negative width or height")
        if not _number(r["score"]):
            raise ModelError(f"{at}: score must be a finite number, not {r['score']!r:.40}")
        out.append((r["image_id"], r["category_id"], (x, y, x + w, y + h), float(r["score"])))
    return out


class CocoResults:
    """Region detections from COCO results files (see the module docstring), as a ``layout`` model."""

    task = "layout"

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if not self.path.exists():
            raise ModelError(f"predictions file or folder {self.path} does not exist")
        self.name = self.path.stem if self.path.is_file() else self.path.name
        self._read: dict[Path, dict[str, Prediction]] = {}

    def file_for(self, dataset: Any) -> Path:
        """The results file of ``dataset`` (an :class:`~dogood.eval.datasets.EvalDataset` or its name)."""
        if self.path.is_file():
            return self.path
        config = getattr(dataset, "config", None)
        name = str(getattr(dataset, "name", dataset))
        names = [n for n in (config, name.replace("/", "_")) if n]
        for n in names:
            if (self.path / f"{n}.json").is_file():
                return self.path / f"{n}.json"
        raise ModelError(f"no predictions for dataset {name!r}: expected {self.path / (names[0] + '.json')}")

    def predict(self, docs: Sequence[Document], dataset: Any = None) -> dict[str, Prediction]:
        """The regions of ``docs``, from ``dataset``'s file (its document order gives the image ids); a page with
        no region gets an empty prediction."""
        if dataset is None or not hasattr(dataset, "source"):
            raise ModelError(f"{self.path}: COCO results are read per dataset (image ids are its document order)")
        path = self.file_for(dataset)
        if path not in self._read:
            ids = list(dataset.source.ids())
            by_doc: dict[str, list] = {}
            for image_id, category, box, score in parse_results(read_json(path), str(path)):
                if not 1 <= image_id <= len(ids):
                    raise ModelError(f"{path}: image_id {image_id} is not one of dataset {dataset.name!r}'s pages "
                                     f"(1..{len(ids)}, in its document order, as dogood export --format coco)")
                by_doc.setdefault(ids[image_id - 1], []).append((category, box, score))
            self._read[path] = {i: Prediction(i, regions=tuple(r)) for i, r in by_doc.items()}
        found = self._read[path]
        return {d.id: found.get(d.id) or Prediction(d.id, regions=()) for d in docs}

    def __repr__(self) -> str:
        return f"CocoResults({self.path})"
