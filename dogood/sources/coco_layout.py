"""Document layout analysis data in COCO format (PubLayNet, DocLayNet, M6Doc) as documents.

A COCO folder holds page images and one annotation JSON per split: ``images`` (``id``, ``file_name``,
``width``, ``height``), ``annotations`` (``image_id``, ``category_id``, ``bbox: [x, y, w, h]`` in pixels,
optional ``segmentation``) and ``categories`` (``id``, ``name``). Each page becomes a :class:`Document` whose
*entities are the layout regions*: region ``k`` is one word, the box of the region (``bbox`` rounded outwards
to whole pixels and clipped to the page) with the category name as its text, and one entity over that word
labelled with the category. So every image shift (boxes carried through warps, turns and captures) and layout
shift applies to the regions as to words, and the output rows carry them in dogood's FUNSD-style schema
(``docs/layout-analysis.md``): ``dogood.entities[k].label`` is the category, the box of its one word
(``dogood.word_boxes``) the region in pixels; ``dogood export --format coco`` writes them back as COCO.

The entity labels are the categories' names in the order of their ids (``labels`` of the build, which name
``ner_tags``). Segmentation polygons are not read (a region is its box); ``iscrowd`` regions are kept as
regions. Document ids are the images' ``file_name`` without extension (``/`` as ``_``).

Where the files are: ``annotations`` (a path, relative to ``root`` or absolute; default: the first of
``<split>.json``, ``COCO/<split>.json`` (DocLayNet), ``annotations/instances_<split>2017.json`` (M6Doc),
``annotations/<split>.json``, ``<split>/annotations.json`` (``dogood export --format coco``) that exists)
and ``images`` (a folder; default: the first of ``<split>/``, ``<split>/images/``, ``PNG/`` (DocLayNet),
``<split>2017/`` (M6Doc), ``images/``, the annotation file's folder, ``root`` that holds the first image).
Written here: pycocotools indexes the JSON (used for reading it) but makes no document records.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dogood.core.document import Document, Entity, PageImage, Word
from dogood.core.errors import DocumentError, SourceError

_ANNOTATIONS = ("{split}.json", "COCO/{split}.json", "annotations/instances_{split}2017.json",
                "annotations/{split}.json", "{split}/annotations.json")
_IMAGES = ("{split}", "{split}/images", "PNG", "{split}2017", "images")


@dataclass
class CocoLayoutSource:
    """The pages of one split of a COCO-format layout folder, their regions as labelled entities.

    Parameters
    ----------
    root : the folder.
    split : the split's name (``train``, ``val``, ``test``; any name its annotation file has).
    annotations : the annotation JSON (relative to ``root``), when not at one of the usual places.
    images : the image folder (relative to ``root``), when not at one of the usual places.
    """

    root: str | Path | None = None
    split: str = "test"
    annotations: str | None = None
    images: str | None = None
    kind: str = field(default="coco_layout", init=False)
    schema: str = field(default="funsd", init=False)

    def __post_init__(self):
        if self.root is None:
            raise SourceError("the coco_layout source needs a folder: source: {kind: coco_layout, root: DIR} "
                              "or --source DIR")
        self.root = Path(self.root)
        if not self.root.is_dir():
            raise SourceError(f"coco_layout: {self.root} is not a folder")
        self._json = self._find_annotations()
        try:
            data = json.loads(self._json.read_text(encoding="utf-8"))
            images, annotations, categories = data["images"], data.get("annotations", []), data["categories"]
            cats = sorted(((int(c["id"]), str(c["name"])) for c in categories), key=lambda c: c[0])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SourceError(f"{self._json}: not a COCO annotation file with images and categories ({exc})") from None
        ids = [i for i, _ in cats]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:  # a dict of them would keep the last name: the regions of the others relabelled without a word
            raise SourceError(f"{self._json}: category id {twice[0]} is given twice "
                              f"({', '.join(repr(n) for i, n in cats if i == twice[0])}); each id names one category")
        names = [n for _, n in cats]
        if len(set(names)) != len(names):
            raise SourceError(f"{self._json}: two categories share a name ({', '.join(names)})")
        bad = [n for n in names if not n or any(ch.isspace() for ch in n) or n == "O"]
        if bad:
            raise SourceError(f"{self._json}: category names are labels: no spaces, not 'O' ({', '.join(map(repr, bad))})")
        self._category = dict(cats)
        self._labels = tuple(names)
        self._images: dict[str, dict] = {}
        by_image: dict[Any, list[dict]] = {}
        for ann in annotations:
            by_image.setdefault(ann.get("image_id"), []).append(ann)
        for image in images:
            name = str(image["file_name"])
            doc_id = os.path.splitext(name)[0].replace("/", "_").replace("\\", "_")
            if doc_id in self._images:
                raise SourceError(f"{self._json}: two images make the document id {doc_id!r}")
            self._images[doc_id] = {"image": image, "regions": by_image.get(image["id"], [])}
        self._image_dir = self._find_images()

    def _find_annotations(self) -> Path:
        if self.annotations is not None:
            path = self.root / self.annotations
            if not path.is_file():
                raise SourceError(f"coco_layout: annotation file {path} not found")
            return path
        for pattern in _ANNOTATIONS:
            path = self.root / pattern.format(split=self.split)
            if path.is_file():
                return path
        tried = ", ".join(p.format(split=self.split) for p in _ANNOTATIONS)
        raise SourceError(f"coco_layout: no annotation file for split {self.split!r} in {self.root} (tried {tried}; "
                          "name it with annotations: FILE)")

    def _find_images(self) -> Path:
        if self.images is not None:
            return self.root / self.images
        first = next(iter(self._images.values()), None)
        places = [self.root / p.format(split=self.split) for p in _IMAGES] + [self._json.parent, self.root]
        if first is not None:
            for place in places:
                if (place / first["image"]["file_name"]).is_file():
                    return place
        return places[-1]

    def entity_labels(self) -> tuple[str, ...]:
        """The categories' names, in the order of their ids."""
        return self._labels

    def ids(self) -> list[str]:
        return list(self._images)

    def image_path(self, doc_id: str) -> Path:
        return self._image_dir / self._images[doc_id]["image"]["file_name"]

    def load(self, doc_id: str) -> Document:
        entry = self._images.get(doc_id)
        if entry is None:
            raise DocumentError("no such image in the annotation file", doc_id=doc_id, path=str(self._json))
        try:
            image = PageImage.from_file(self.image_path(doc_id))
        except DocumentError as exc:
            raise DocumentError(exc.reason, doc_id=doc_id, path=exc.path) from None
        return regions_document(doc_id, image, entry["regions"], self._category, source=str(self._json))

    def content_sha256(self) -> str:
        """A sha256 over the annotation file and the images this split reads."""
        digest = hashlib.sha256(self._json.read_bytes())
        for doc_id in self.ids():
            try:
                data = self.image_path(doc_id).read_bytes()
            except OSError:
                data = b""
            digest.update(doc_id.encode("utf-8") + b"\0" + hashlib.sha256(data).hexdigest().encode("ascii") + b"\n")
        return digest.hexdigest()

    def describe(self) -> dict[str, Any]:
        return {"kind": "coco_layout", "split": self.split, "name": "a COCO-format layout folder",
                "content_sha256": self.content_sha256(), "categories": list(self._labels),
                "license": "the terms of the folder's owner", "license_name": "coco-layout-folder"}


def region_box(bbox, width: int, height: int) -> tuple[int, int, int, int]:
    """A COCO ``[x, y, w, h]`` as a pixel box ``(x0, y0, x1, y1)``: rounded outwards, clipped to the page."""
    x, y, w, h = (float(v) for v in bbox)
    if not all(math.isfinite(v) for v in (x, y, w, h)) or w < 0 or h < 0:
        raise ValueError(f"bbox {list(bbox)} is not [x, y, w, h] with w, h >= 0")
    x0, y0 = min(max(math.floor(x + 1e-6), 0), width), min(max(math.floor(y + 1e-6), 0), height)
    x1, y1 = min(max(math.ceil(x + w - 1e-6), x0), width), min(max(math.ceil(y + h - 1e-6), y0), height)
    return x0, y0, x1, y1


def regions_document(doc_id: str, image: PageImage, regions: list[dict], categories: dict[int, str], *,
                     source: str | None = None) -> Document:
    """A page and its COCO regions as a :class:`Document`: one word and one entity per region."""
    words, entities = [], []
    for k, ann in enumerate(regions):
        try:
            label = categories[int(ann["category_id"])]
            box = region_box(ann["bbox"], image.width, image.height)
        except (KeyError, TypeError, ValueError) as exc:
            raise DocumentError(f"region {k} (annotation id {ann.get('id')!r}) is malformed ({exc})",
                                doc_id=doc_id, path=source) from None
        words.append(Word(label, box))
        entities.append(Entity(len(entities), label, (len(words) - 1,)))
    return Document(id=doc_id, image=image, words=tuple(words), entities=tuple(entities), source=source)
