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

The JSON is untrusted input, read through :mod:`dogood.core.fs`: at most ``Limits.coco_bytes`` and nested at
most ``Limits.json_depth``; at most ``Limits.coco_images`` images, ``coco_annotations`` regions,
``coco_categories`` categories and ``page_words`` regions on a page. An image's ``file_name`` is a relative name
inside the image folder: an absolute name, a ``..`` part or a link out of the folder is refused (so no file
outside it is read, put into rows or published, and no local path becomes a document id), as are category ids
that are not whole numbers, two categories of one id, and regions whose ``category_id`` no category has.

Where the files are: ``annotations`` (a path, relative to ``root`` or absolute; default: the first of
``<split>.json``, ``COCO/<split>.json`` (DocLayNet), ``annotations/instances_<split>2017.json`` (M6Doc),
``annotations/<split>.json``, ``<split>/annotations.json`` (``dogood export --format coco``) that exists)
and ``images`` (a folder; default: the first of ``<split>/``, ``<split>/images/``, ``PNG/`` (DocLayNet),
``<split>2017/`` (M6Doc), ``images/``, the annotation file's folder, ``root`` that holds the first image).
Written here: pycocotools indexes the JSON (used for reading it) but makes no document records.
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dogood.core import fs
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
        images, annotations, categories = read_coco(self._json)
        self._category = _categories(categories, self._json)
        self._labels = tuple(self._category.values())
        self._images: dict[str, dict] = {}
        by_image: dict[Any, list[dict]] = {}
        for k, ann in enumerate(annotations):
            if not isinstance(ann, dict):
                raise SourceError(f"{self._json}: annotations[{k}] is not an object")
            category = ann.get("category_id")
            if not _whole(category) or category not in self._category:
                raise SourceError(f"{self._json}: annotations[{k}] (id {_short(ann.get('id'))}) has category_id "
                                  f"{_short(category)}, which no category has (ids: "
                                  f"{', '.join(map(str, list(self._category)[:20]))})")
            key = ann.get("image_id")
            by_image.setdefault(key if _whole(key) or isinstance(key, str) else repr(key), []).append(ann)
        for k, image in enumerate(images):
            if not isinstance(image, dict) or not (_whole(image.get("id")) or isinstance(image.get("id"), str)) \
                    or not isinstance(image.get("file_name"), str):
                raise SourceError(f"{self._json}: images[{k}] is not an object with an id and a file_name")
            name = image["file_name"]
            try:
                fs.relative_name(name, "image file_name", "the image folder")  # links: checked when read
            except fs.FileRefused as exc:
                raise SourceError(f"{self._json}: images[{k}] (id {_short(image['id'])}): {exc.reason}") from None
            doc_id = os.path.splitext(name)[0].replace("/", "_").replace("\\", "_")
            if doc_id in self._images:
                raise SourceError(f"{self._json}: two images make the document id {doc_id!r}")
            regions = by_image.get(image["id"], [])
            try:
                fs.check_count(len(regions), "page_words", "regions on a page")
            except fs.FileRefused as exc:
                raise SourceError(f"{self._json}: images[{k}] ({_short(name)}): {exc.reason}") from None
            self._images[doc_id] = {"image": image, "regions": regions}
        self._image_dir = self._find_images()

    def _find_annotations(self) -> Path:
        if self.annotations is not None:
            path = self.root / self.annotations
            if not path.exists():
                raise SourceError(f"coco_layout: annotation file {path} not found")
            return path
        for pattern in _ANNOTATIONS:  # the first that exists: a FIFO or a folder there is refused when read
            path = self.root / pattern.format(split=self.split)
            if path.exists():
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
                if place.is_dir() and (place / first["image"]["file_name"]).is_file():
                    return place
        return places[-1]

    def entity_labels(self) -> tuple[str, ...]:
        """The categories' names, in the order of their ids."""
        return self._labels

    def ids(self) -> list[str]:
        return list(self._images)

    def image_path(self, doc_id: str) -> Path:
        """The page's image: its ``file_name`` inside the image folder (:func:`dogood.core.fs.confine`: a link
        out of the folder is a :class:`DocumentError`)."""
        name = self._images[doc_id]["image"]["file_name"]
        try:
            return fs.confine(name, self._image_dir, "image file_name")
        except fs.FileRefused as exc:
            raise DocumentError(exc.reason, doc_id=doc_id, path=str(self._json)) from None

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
        """A sha256 over the annotation file and the images this split reads (an image refused by the one reader
        counts as missing: loading its document reports it)."""
        digest = hashlib.sha256(fs.read_bytes(self._json, limit="coco_bytes", what="COCO annotation file"))
        for doc_id in self.ids():
            try:
                data = fs.read_bytes(self.image_path(doc_id), limit="image_bytes", what="image file")
            except (OSError, fs.FileRefused, DocumentError):
                data = b""
            digest.update(doc_id.encode("utf-8") + b"\0" + hashlib.sha256(data).hexdigest().encode("ascii") + b"\n")
        return digest.hexdigest()

    def describe(self) -> dict[str, Any]:
        return {"kind": "coco_layout", "split": self.split, "name": "a COCO-format layout folder",
                "content_sha256": self.content_sha256(), "categories": list(self._labels),
                "license": "the terms of the folder's owner", "license_name": "coco-layout-folder"}


def read_coco(path: Path) -> tuple[list, list, list]:
    """``(images, annotations, categories)`` of a COCO annotation file, read through the one reader and checked
    for shape and counts (:class:`dogood.core.fs.Limits`); every failure a :class:`SourceError` naming the
    file."""
    try:
        data = fs.read_json(path, limit="coco_bytes", what="COCO annotation file")
    except FileNotFoundError:
        raise SourceError(f"coco_layout: annotation file {path} not found") from None
    except fs.FileRefused as exc:
        raise SourceError(str(exc)) from None
    except OSError as exc:
        raise SourceError(f"{path}: cannot read the COCO annotation file ({exc.strerror or exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("images"), list) \
            or not isinstance(data.get("categories"), list) or not isinstance(data.get("annotations", []), list):
        raise SourceError(f"{path}: not a COCO annotation file: an object with the lists images, categories and "
                          "annotations")
    images, annotations, categories = data["images"], data.get("annotations", []), data["categories"]
    try:
        fs.check_count(len(images), "coco_images", "images")
        fs.check_count(len(annotations), "coco_annotations", "annotations")
        fs.check_count(len(categories), "coco_categories", "categories")
    except fs.FileRefused as exc:
        raise SourceError(f"{path}: {exc.reason}") from None
    return images, annotations, categories


def _categories(categories: list, path: Path) -> dict[int, str]:
    """Category id -> name, in the order of the ids: ids whole numbers, each once; names labels (no spaces, not
    ``O``, at most ``Limits.word_chars`` characters), each once."""
    seen: dict[int, str] = {}
    for k, c in enumerate(categories):
        if not isinstance(c, dict) or not _whole(c.get("id")) or not isinstance(c.get("name"), str):
            raise SourceError(f"{path}: categories[{k}] is not an object with a whole-number id and a name "
                              f"(got {_short(c)})")
        if c["id"] in seen:
            raise SourceError(f"{path}: categories {seen[c['id']]!r} and {c['name']!r} share the id {c['id']}; each "
                              "category needs its own")
        seen[c["id"]] = c["name"]
    names = [seen[i] for i in sorted(seen)]
    if len(set(names)) != len(names):
        raise SourceError(f"{path}: two categories share a name ({', '.join(names)})")
    bad = [n for n in names if not n or any(ch.isspace() for ch in n) or n == "O"]
    if bad:
        raise SourceError(f"{path}: category names are labels: no spaces, not 'O' ({', '.join(map(repr, bad))})")
    try:
        fs.check_words(names, what="categories")
    except fs.FileRefused as exc:
        raise SourceError(f"{path}: category {exc.reason}") from None
    return {i: seen[i] for i in sorted(seen)}


def _whole(value: Any) -> bool:
    """A JSON whole number (never a boolean, a float or a string of digits)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


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
        except (KeyError, TypeError, ValueError, OverflowError) as exc:
            raise DocumentError(f"region {k} (annotation id {ann.get('id')!r}) is malformed ({exc})",
                                doc_id=doc_id, path=source) from None
        words.append(Word(label, box))
        entities.append(Entity(len(entities), label, (len(words) - 1,)))
    return Document(id=doc_id, image=image, words=tuple(words), entities=tuple(entities), source=source)
