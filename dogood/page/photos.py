"""The pool of MSCOCO photos that natural-background shifts draw from.

Do-GOOD's RVL-CDIP-I1 (section 3.1) pastes a document's text onto a natural
photo. :func:`coco_photos` builds the pool of candidate photos from COCO
annotation files (instances or panoptic, read through pycocotools), filtered
by licence, size and object category; :meth:`CocoPool.choose` draws one with a
seeded generator and :meth:`CocoPool.load` returns its RGB pixels.

Pixels are looked up in ``root/<split>/<file_name>``, then ``root/<file_name>``,
then the cache (``cache_dir()/coco/<split>/<file_name>``). A photo found in
none of them is downloaded alone from its ``coco_url`` into the cache, so a
user never downloads all of COCO. Without a local annotation file, COCO's
``annotations_trainval2017.zip`` is downloaded once (checksummed) and
``instances_val2017.json`` (5,000 photos) is used.

Every photo keeps its own Flickr licence. The default licence filter leaves
out the NoDerivs licences (3 and 6), because pasting text on a photo makes a
derivative image, and photos with no licence information.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import json
import os
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePosixPath
from urllib.parse import urlparse

import cv2
import numpy as np
from PIL import Image, UnidentifiedImageError

from dogood.core import downloads as _download
from dogood.core import fs
from dogood.core.document import standard_pixels
from dogood.core.errors import DocumentError, SourceError
from dogood.core.paths import cache_dir, data_dir
from dogood.core.progress import one_time_step

__all__ = [
    "ANNOTATIONS_SHA256",
    "ANNOTATIONS_URL",
    "COCO_LICENSES",
    "DEFAULT_ANNOTATION",
    "DEFAULT_LICENSES",
    "SURFACE_CATEGORIES",
    "CocoPhoto",
    "CocoPool",
    "Surface",
    "coco_photos",
]

#: COCO 2017 train/val annotations (241 MB). The sha256 is the one published in
#: tensorflow_datasets' ``url_checksums/coco.txt`` (252,907,541 bytes); ParlAI's
#: COCO download and Julia's DataDeps list the same value.
ANNOTATIONS_URL = "http://images.cocodataset.org/annotations/annotations_trainval2017.zip"
ANNOTATIONS_SHA256 = "113a836d90195ee1f884e704da6304dfaaecff1f023f49b6ca93c4aaae470268"
#: The member of that zip used when no annotation file is given.
DEFAULT_ANNOTATION = "annotations/instances_val2017.json"

#: COCO's licence table (``licenses`` in every COCO 2017 annotation file): id -> (name, url).
COCO_LICENSES: dict[int, tuple[str, str]] = {
    1: ("Attribution-NonCommercial-ShareAlike License", "http://creativecommons.org/licenses/by-nc-sa/2.0/"),
    2: ("Attribution-NonCommercial License", "http://creativecommons.org/licenses/by-nc/2.0/"),
    3: ("Attribution-NonCommercial-NoDerivs License", "http://creativecommons.org/licenses/by-nc-nd/2.0/"),
    4: ("Attribution License", "http://creativecommons.org/licenses/by/2.0/"),
    5: ("Attribution-ShareAlike License", "http://creativecommons.org/licenses/by-sa/2.0/"),
    6: ("Attribution-NoDerivs License", "http://creativecommons.org/licenses/by-nd/2.0/"),
    7: ("No known copyright restrictions", "http://flickr.com/commons/usage/"),
    8: ("United States Government Work", "http://www.usa.gov/copyright.shtml"),
}
#: Licences that allow derivative images: every CC licence but the NoDerivs ones (3, 6), and 7.
DEFAULT_LICENSES = (1, 2, 4, 5, 7)

_LOADED_PHOTOS = 8  # decoded photos kept per pool


@dataclass(frozen=True)
class CocoPhoto:
    """One COCO photo: where it comes from, its size and its licence.

    Attributes
    ----------
    id : COCO image id.
    file_name : file name in its split folder, e.g. ``000000397133.jpg``.
    split : folder the photo lives in (``train2017``, ``val2017``...), from ``coco_url``.
    width, height : size in pixels, as annotated.
    license_id, license_name, license_url : the photo's Flickr licence.
    coco_url, flickr_url : where the photo can be downloaded and its Flickr page.
    """

    id: int
    file_name: str
    split: str
    width: int
    height: int
    license_id: int
    license_name: str
    license_url: str
    coco_url: str
    flickr_url: str


@dataclass(frozen=True)
class Surface:
    """Where a page may lie in a COCO photo: the box ``(x, y, width, height)``, in the photo's annotated pixels, of
    its largest annotated segment of a surface category (``category``: a table, a bed, a floor...)."""

    x: float
    y: float
    width: float
    height: float
    category: str


#: COCO categories a page may lie on (instances' things, panoptic's stuff): tables, desks (COCO has no desk class:
#: they are ``table-merged``), counters, beds and bedding, floors, rugs.
SURFACE_CATEGORIES = ("dining table", "table-merged", "counter", "bed", "blanket", "towel", "floor-wood",
                      "floor-other-merged", "rug-merged", "carpet")

#: A surface segment counts when it covers this share of its photo at least, and this share of its own box
#: (panoptic segments come without a mask: their box stands for them, so it must be mostly surface).
MIN_SURFACE_AREA = 0.1
MIN_SURFACE_FILL = 0.45
#: A page lies on a rectangle of a surface at least this many of the photo's pixels wide and tall.
MIN_SURFACE_SIDE = 160


class CocoPool:
    """A licence- and size-filtered set of COCO photos, sorted by image id.

    Build it with :func:`coco_photos`. ``choose`` depends only on the pool's
    contents and the generator; ``load`` returns read-only ``HxWx3`` RGB
    ``uint8`` pixels and keeps the last few decoded photos.
    """

    def __init__(self, photos: Iterable[CocoPhoto], *, root: Path | None, min_size: int, info: dict,
                 surfaces: dict[int, Surface] | None = None):
        self.photos: tuple[CocoPhoto, ...] = tuple(sorted(photos, key=lambda p: p.id))
        #: Per photo id, the surface a page may lie on (pools built with ``surfaces``): :class:`Surface`.
        self.surfaces: dict[int, Surface] = dict(surfaces or {})
        self.root = root
        self.min_size = int(min_size)
        self._info = info
        self._by_id = {p.id: p for p in self.photos}
        self._loaded: OrderedDict[int, np.ndarray] = OrderedDict()
        self._size_table: np.ndarray | None = None
        self._lock = threading.Lock()

    # -- the pool as a sequence ----------------------------------------------
    def __len__(self) -> int:
        return len(self.photos)

    def __iter__(self) -> Iterator[CocoPhoto]:
        return iter(self.photos)

    def __getitem__(self, index: int) -> CocoPhoto:
        return self.photos[index]

    def __contains__(self, photo) -> bool:
        return isinstance(photo, CocoPhoto) and self._by_id.get(photo.id) == photo

    def __repr__(self) -> str:
        return f"CocoPool({len(self)} photos)"

    def get(self, image_id: int) -> CocoPhoto:
        """The photo with COCO image id ``image_id`` (``KeyError`` if not in the pool)."""
        return self._by_id[int(image_id)]

    def choose(self, rng: np.random.Generator) -> CocoPhoto:
        """One photo, drawn uniformly with a single ``rng.integers`` call."""
        return self.photos[int(rng.integers(len(self.photos)))]

    def choose_fitting(self, rng: np.random.Generator, width: int, height: int, max_upscale: float) -> CocoPhoto:
        """One photo drawn uniformly (a single ``rng.integers`` call) among those that cover a ``width x height``
        page scaled by at most ``max_upscale``, or among all when none does (COCO's photos are at most 640
        pixels: a 1000-pixel page needs a photo scaled twice)."""
        sizes = self._sizes()
        fits = np.flatnonzero(np.maximum(width / sizes[:, 0], height / sizes[:, 1]) <= max_upscale + 1e-9)
        if not len(fits):
            return self.choose(rng)
        return self.photos[int(fits[int(rng.integers(len(fits)))])]

    def _sizes(self) -> np.ndarray:
        """``(n, 2)`` float widths and heights of the photos, in pool order (computed once)."""
        if self._size_table is None:
            self._size_table = np.array([(p.width, p.height) for p in self.photos], np.float64).reshape(-1, 2)
        return self._size_table

    # -- pixels ----------------------------------------------------------------
    def path(self, photo: CocoPhoto) -> Path:
        """Local file of ``photo``: under ``root``, else in the cache, else downloaded into the cache.

        Raises
        ------
        SourceError
            The photo is nowhere on disk and cannot be downloaded.
        """
        candidates = []
        if self.root is not None:
            if photo.split:
                candidates.append(self.root / photo.split / photo.file_name)
            candidates.append(self.root / photo.file_name)
        cached = _cached_photo_path(photo)
        candidates.append(cached)
        for candidate in candidates:
            if candidate.is_file():
                return candidate
        if not photo.coco_url:
            raise SourceError(
                f"COCO photo {photo.id} ({photo.file_name}) is not on disk (looked in "
                f"{', '.join(map(str, candidates))}) and has no coco_url to download it from"
            )
        return _download.download(photo.coco_url, cached, None)

    def load(self, photo: CocoPhoto) -> np.ndarray:
        """Decoded pixels of ``photo``: read-only ``HxWx3`` RGB ``uint8`` of the annotated size.

        Grayscale, CMYK, palette, alpha and 16-bit images are converted to 8-bit RGB.

        Raises
        ------
        DocumentError
            The file is corrupt or truncated, smaller than ``min_size``, or not
            of the annotated size; the message names the file. A corrupt file
            in the cache is removed so that the next call downloads it again.
        """
        with self._lock:
            pixels = self._loaded.get(photo.id)
            if pixels is not None:
                self._loaded.move_to_end(photo.id)
                return pixels
        path = self.path(photo)
        pixels = _decode(path, photo, self.min_size, downloaded=path == _cached_photo_path(photo))
        with self._lock:
            self._loaded[photo.id] = pixels
            while len(self._loaded) > _LOADED_PHOTOS:
                self._loaded.popitem(last=False)
        return pixels

    def load_reduced(self, photo: CocoPhoto, reduce: int = 2) -> np.ndarray:
        """Decoded pixels of ``photo`` at about ``1/reduce`` of its size (``reduce`` 1, 2, 4 or 8: JPEG's DCT
        scaling, several times faster than a full decode; another format decodes whole), RGB ``uint8``, not
        cached; for a photo seen smaller than its size. Errors as :meth:`load`."""
        if reduce not in (1, 2, 4, 8):
            raise ValueError(f"reduce must be 1, 2, 4 or 8, got {reduce}")
        path = self.path(photo)
        return _decode(path, photo, self.min_size, downloaded=path == _cached_photo_path(photo), reduce=reduce)

    # -- data card ---------------------------------------------------------------
    def describe(self) -> dict:
        """What the pool is made of, for a data card.

        Returns
        -------
        dict
            ``source``; ``files`` (name, kind, sha256, images of each
            annotation file); ``photos``; the filters (``license_filter``,
            ``min_size``, ``categories``); ``licenses`` (licence name ->
            photos); ``license_counts`` (id, name, url, photos);
            ``unique_images`` and ``dropped`` (photos removed by each filter);
            ``download`` (url, sha256) when the annotation zip was downloaded.
        """
        counts = Counter(p.license_id for p in self.photos)
        names = {p.license_id: (p.license_name, p.license_url) for p in self.photos}
        out = json.loads(json.dumps(self._info))  # a deep copy
        out["photos"] = len(self.photos)
        out["licenses"] = {names[lid][0]: counts[lid] for lid in sorted(counts)}
        out["license_counts"] = [
            {"id": lid, "name": names[lid][0], "url": names[lid][1], "photos": counts[lid]} for lid in sorted(counts)
        ]
        return out

    # -- pickling: ship the records, not the lock or decoded pixels -----------------
    def __getstate__(self):
        return {"photos": self.photos, "root": self.root, "min_size": self.min_size, "info": self._info,
                "surfaces": self.surfaces}

    def __setstate__(self, state):
        self.__init__(state["photos"], root=state["root"], min_size=state["min_size"], info=state["info"],
                      surfaces=state.get("surfaces"))


def coco_photos(
    root: str | os.PathLike | None = None,
    annotations: str | os.PathLike | Iterable[str | os.PathLike] | None = None,
    licenses: Iterable[int] | None = DEFAULT_LICENSES,
    min_size: int = 256,
    categories: Iterable[str] | None = None,
    surfaces: Iterable[str] | None = None,
) -> CocoPool:
    """The pool of COCO photos to draw backgrounds from (cached per process).

    Parameters
    ----------
    root : folder with the photos (``train2017/``, ``val2017/``...) and, unless
        ``annotations`` is given, the annotation files. Default:
        ``$DOGOOD_DATA_DIR/coco`` when present, else none (photos come from the
        cache or are downloaded one by one).
    annotations : one or more COCO instances or panoptic json files; relative
        paths are tried as given, then under ``root``. Default: every
        ``instances_*.json`` and ``panoptic_*.json`` in ``root`` or
        ``root/annotations``; if there are none, ``instances_val2017.json`` from
        COCO's annotation zip, downloaded once into the cache.
    licenses : COCO licence ids to keep (default: all but the NoDerivs ones, 3
        and 6); ``None`` keeps any licence. Photos without licence information
        are always left out.
    min_size : smallest shorter side, in pixels, from the annotated size.
    categories : object or stuff category names (e.g. ``["dog", "person"]``);
        keeps photos with at least one of them. ``None`` keeps all.
    surfaces : surface category names (:data:`SURFACE_CATEGORIES`: what a page
        may lie on); keeps the photos with a segment of one of them covering
        :data:`MIN_SURFACE_AREA` of the photo and :data:`MIN_SURFACE_FILL` of its
        box, and records the largest such box (:attr:`CocoPool.surfaces`). Names
        the files do not know are ignored, and this filter may leave the pool
        empty (the caller decides what a page then lies on).

    Returns
    -------
    CocoPool
        Sorted by image id. A photo listed in several files appears once, with
        the record of the first file.

    Raises
    ------
    SourceError
        An annotation file is missing or malformed, a category name is unknown,
        or a filter leaves no photo (the message names the filter).
    """
    if min_size is None or int(min_size) < 0:
        raise ValueError(f"min_size must be a non-negative number of pixels, got {min_size!r}")
    root_path = _root(root)
    files = _annotation_files(root_path, annotations)
    keys = tuple((str(f), *_stamp(f)) for f in files)
    lic = None if licenses is None else tuple(sorted({int(x) for x in licenses}))
    if isinstance(categories, str):
        categories = [categories]
    cats = None if categories is None else tuple(sorted({str(c) for c in categories}))
    if isinstance(surfaces, str):
        surfaces = [surfaces]
    places = None if surfaces is None else tuple(sorted({str(c) for c in surfaces}))
    return _build_pool(None if root_path is None else str(root_path), keys, lic, int(min_size), cats, places)


def clear_cache() -> None:
    """Forget the pools built by :func:`coco_photos` in this process."""
    _build_pool.cache_clear()


coco_photos.cache_clear = clear_cache  # type: ignore[attr-defined]


# -- building the pool -------------------------------------------------------------


def _root(root) -> Path | None:
    if root is not None:
        path = Path(root).expanduser()
        if not path.is_dir():
            raise SourceError(f"COCO root folder not found: {path}")
        return path.resolve()
    shared = data_dir()
    if shared is not None and (shared / "coco").is_dir():
        return (shared / "coco").resolve()
    return None


def _annotation_files(root: Path | None, annotations) -> list[Path]:
    if annotations is None:
        found: list[Path] = []
        if root is not None:
            for folder in (root, root / "annotations"):
                for pattern in ("instances_*.json", "panoptic_*.json"):
                    found.extend(sorted(folder.glob(pattern)))
        return [f.resolve() for f in found] if found else [_downloaded_annotations()]
    if isinstance(annotations, (str, os.PathLike)):
        annotations = [annotations]
    files = []
    for item in annotations:
        path = Path(item).expanduser()
        if not path.exists() and not path.is_absolute() and root is not None and (root / path).exists():
            path = root / path
        if not path.is_file():
            raise SourceError(f"COCO annotation file not found: {path}")
        files.append(path.resolve())
    if not files:
        raise SourceError("no COCO annotation file given (annotations is empty)")
    return files


def _downloaded_annotations() -> Path:
    """``instances_val2017.json`` from COCO's annotation zip, downloaded and extracted once."""
    folder = cache_dir() / "coco"
    extracted = folder / "annotations_trainval2017"
    target = extracted / DEFAULT_ANNOTATION
    if not target.is_file():
        with one_time_step(f"downloading COCO's annotations ({ANNOTATIONS_URL}, 241 MB) and extracting "
                           f"{DEFAULT_ANNOTATION}", cached_in=extracted):
            archive = _download.download(ANNOTATIONS_URL, folder / "annotations_trainval2017.zip", ANNOTATIONS_SHA256)
            _download.extract_zip(archive, extracted)
        if not target.is_file():
            raise SourceError(f"{archive}: has no member {DEFAULT_ANNOTATION}")
        archive.unlink(missing_ok=True)  # checked and extracted; 241 MB not worth keeping
    return target.resolve()


def _stamp(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_mtime_ns, st.st_size


@lru_cache(maxsize=16)
def _build_pool(root: str | None, files: tuple, licenses, min_size: int, categories, surfaces=None) -> CocoPool:
    indexes = [(Path(f[0]), *_read_annotations(Path(f[0]))) for f in files]

    # Every photo once, first file wins; each filter's drops are counted.
    records: dict[int, CocoPhoto | None] = {}
    for path, _kind, coco in indexes:
        table = _license_table(coco.dataset)
        for img in coco.dataset.get("images", []):
            if img["id"] not in records:
                records[img["id"]] = _photo(img, table, path)
    photos = [p for p in records.values() if p is not None]
    stages = [("no_license", "check for licence information", len(photos))]
    if licenses is not None:
        photos = [p for p in photos if p.license_id in licenses]
        stages.append(("license", f"licence filter (licenses={list(licenses)})", len(photos)))
    photos = [p for p in photos if min(p.width, p.height) >= min_size]
    stages.append(("min_size", f"size filter (min_size={min_size})", len(photos)))
    if categories is not None:
        wanted = _category_images(indexes, categories)
        photos = [p for p in photos if p.id in wanted]
        stages.append(("categories", f"category filter (categories={list(categories)})", len(photos)))

    if not records:
        raise SourceError(f"no COCO photo: the annotation files list no images ({', '.join(f[0] for f in files)})")
    regions: dict[int, Surface] = {}
    if surfaces is not None:
        regions = _surface_regions(indexes, surfaces, {p.id for p in photos})
        photos = [p for p in photos if p.id in regions]
    dropped, before = {}, len(records)
    for key, name, count in stages:
        if count == 0:
            names = ", ".join(p.name for p, _, _ in indexes)
            raise SourceError(f"no COCO photo left after the {name}: {before} photos before it (from {names})")
        dropped[key], before = before - count, count

    info = {
        "source": "MSCOCO 2017 (https://cocodataset.org), each photo under its own Flickr licence",
        "files": [
            {
                "name": path.name,
                "kind": kind,
                "sha256": _download.sha256_file(path),
                "images": len(coco.dataset.get("images", [])),
            }
            for path, kind, coco in indexes
        ],
        "license_filter": None if licenses is None else list(licenses),
        "min_size": min_size,
        "categories": None if categories is None else list(categories),
        "unique_images": len(records),
        "dropped": dropped,
    }
    if surfaces is not None:  # absent otherwise: the pools of builds before surfaces describe themselves as before
        info["surfaces"] = list(surfaces)
        info["dropped"]["surfaces"] = before - len(photos)
    if any(path.is_relative_to(cache_dir() / "coco" / "annotations_trainval2017") for path, _, _ in indexes):
        info["download"] = {"url": ANNOTATIONS_URL, "sha256": ANNOTATIONS_SHA256}
    return CocoPool(photos, root=None if root is None else Path(root), min_size=min_size, info=info,
                    surfaces=regions)


def _read_annotations(path: Path):
    """``(kind, COCO)`` for an instances or panoptic file; panoptic segments become annotations."""
    from pycocotools.coco import COCO

    try:
        data = fs.read_json(path, limit="coco_bytes", what="COCO annotation file")
    except FileNotFoundError:
        raise SourceError(f"COCO annotation file not found: {path}") from None
    except fs.FileRefused as exc:
        raise SourceError(f"{path}: not a readable COCO annotation file ({exc.reason})") from None
    except OSError as exc:
        raise SourceError(f"{path}: not a readable COCO annotation file ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("images"), list):
        raise SourceError(f"{path}: not a COCO annotation file (no 'images' list)")
    for i, img in enumerate(data["images"]):
        if not isinstance(img, dict) or not all(k in img for k in ("id", "file_name", "width", "height")):
            raise SourceError(f"{path}: images[{i}] lacks one of id, file_name, width, height")
    anns = data.get("annotations")
    if anns is not None and not isinstance(anns, list):
        raise SourceError(f"{path}: 'annotations' is not a list")
    kind = "instances"
    if anns and isinstance(anns[0], dict) and "segments_info" in anns[0]:
        kind = "panoptic"
        data = dict(data, annotations=_panoptic_annotations(anns, path))
    coco = COCO()
    coco.dataset = data
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # pycocotools prints progress
            coco.createIndex()
    except (KeyError, TypeError) as exc:
        raise SourceError(f"{path}: malformed COCO {kind} annotations (missing or bad field {exc})") from None
    return kind, coco


def _panoptic_annotations(anns: list, path: Path) -> list[dict]:
    """One instances-style annotation per panoptic segment, with fresh ids (segment ids repeat across images)."""
    out = []
    for i, ann in enumerate(anns):
        try:
            for seg in ann["segments_info"]:
                out.append(
                    {
                        "id": len(out) + 1,
                        "segment_id": seg.get("id"),
                        "image_id": ann["image_id"],
                        "category_id": seg["category_id"],
                        "bbox": seg.get("bbox"),
                        "area": seg.get("area"),
                        "iscrowd": seg.get("iscrowd", 0),
                    }
                )
        except (KeyError, TypeError) as exc:
            raise SourceError(f"{path}: panoptic annotations[{i}] is malformed (missing or bad field {exc})") from None
    return out


def _safe_name(name: str) -> bool:
    return bool(name) and PurePosixPath(name).name == name and "\\" not in name and name not in (".", "..")


def _license_table(dataset: dict) -> dict[int, tuple[str, str]]:
    """Licence id -> (name, url) from a file's ``licenses``, falling back on COCO's table."""
    table = dict(COCO_LICENSES)
    for lic in dataset.get("licenses") or []:
        if isinstance(lic, dict) and isinstance(lic.get("id"), int):
            table[lic["id"]] = (str(lic.get("name", "")), str(lic.get("url", "")))
    return table


def _photo(img: dict, table: dict[int, tuple[str, str]], path: Path) -> CocoPhoto | None:
    """The record of one ``images`` entry, or ``None`` when it has no usable licence."""
    license_id = img.get("license")
    if license_id is None or isinstance(license_id, bool):
        return None
    try:
        license_id = int(license_id)
    except (TypeError, ValueError):
        return None
    if license_id not in table:
        return None
    name, url = table[license_id]
    file_name = str(img["file_name"])
    coco_url = str(img.get("coco_url") or "")
    split = PurePosixPath(urlparse(coco_url).path).parent.name if coco_url else ""
    if not _safe_name(file_name) or (split and not _safe_name(split)):
        raise SourceError(f"{path}: image {img['id']} has an unsafe file name or url ({file_name!r}, {coco_url!r})")
    try:
        width, height = int(img["width"]), int(img["height"])
    except (TypeError, ValueError):
        raise SourceError(f"{path}: image {img['id']} has a bad width/height") from None
    return CocoPhoto(
        id=int(img["id"]),
        file_name=file_name,
        split=split,
        width=width,
        height=height,
        license_id=license_id,
        license_name=str(name),
        license_url=str(url),
        coco_url=coco_url,
        flickr_url=str(img.get("flickr_url") or ""),
    )


def _surface_regions(indexes, names: tuple[str, ...], keep: set[int]) -> dict[int, Surface]:
    """Per photo id in ``keep``, where a page may lie (the first file's record): the largest rectangle, on a grid of
    :data:`SURFACE_CELL` pixels, inside a segment of a category in ``names`` (its polygon, or its box for panoptic
    segments, which come without one) and clear of every other object's box (plates on a table, people on a floor),
    :data:`MIN_SURFACE_SIDE` pixels wide and tall at least; only segments covering :data:`MIN_SURFACE_AREA` of the
    photo and :data:`MIN_SURFACE_FILL` of their box count."""
    out: dict[int, Surface] = {}
    for _path, _kind, coco in indexes:
        cats = {c["id"]: c for c in coco.dataset.get("categories", [])}
        wanted = {i for i, c in cats.items() if c.get("name") in names}
        if not wanted:
            continue
        sizes = {img["id"]: (img["width"], img["height"]) for img in coco.dataset.get("images", [])}
        by_image: dict[int, list[dict]] = {}
        for ann in coco.dataset.get("annotations") or ():
            if isinstance(ann, dict) and ann.get("image_id") in keep and ann.get("image_id") not in out:
                by_image.setdefault(ann["image_id"], []).append(ann)
        for image_id, anns in by_image.items():
            if not any(a.get("category_id") in wanted for a in anns):
                continue
            try:
                place = _free_surface(anns, sizes[image_id], wanted, cats)
            except (KeyError, TypeError, ValueError, IndexError):
                continue  # a malformed annotation: the photo is not a surface
            if place is not None:
                out[image_id] = place
    return out


#: The grid (photo pixels) on which a surface's free rectangle is found.
SURFACE_CELL = 16


def _free_surface(anns: list[dict], size, wanted: set[int], cats: dict) -> Surface | None:
    """The largest clear rectangle of one photo's surfaces (:func:`_surface_regions`), or ``None``."""
    width, height = (int(v) for v in size)
    cols, rows = -(-width // SURFACE_CELL), -(-height // SURFACE_CELL)
    best = None
    for ann in anns:
        if ann.get("category_id") not in wanted:
            continue
        x, y, w, h = (float(v) for v in ann["bbox"])
        area = float(ann["area"])
        if area < MIN_SURFACE_AREA * width * height or area < MIN_SURFACE_FILL * w * h:
            continue
        free = np.zeros((rows, cols), np.uint8)
        polygons = ann.get("segmentation")
        if isinstance(polygons, list) and polygons:  # instances: the segment's own outline
            for poly in polygons:
                points = np.asarray(poly, np.float64).reshape(-1, 2) / SURFACE_CELL
                cv2.fillPoly(free, [np.round(points).astype(np.int32)], 1)
            free = cv2.erode(free, np.ones((3, 3), np.uint8))  # cells wholly inside
        else:  # panoptic: the box
            free[int(np.ceil(y / SURFACE_CELL)) : int((y + h) // SURFACE_CELL),
                 int(np.ceil(x / SURFACE_CELL)) : int((x + w) // SURFACE_CELL)] = 1
        for other in anns:
            category = cats.get(other.get("category_id"), {})
            if other is ann or other.get("category_id") in wanted or category.get("isthing", 1) == 0:
                continue  # stuff (a wall, the sky) has no box worth keeping clear of
            ox, oy, ow, oh = (float(v) for v in other["bbox"])
            free[int(oy // SURFACE_CELL) : int(np.ceil((oy + oh) / SURFACE_CELL)),
                 int(ox // SURFACE_CELL) : int(np.ceil((ox + ow) / SURFACE_CELL))] = 0
        r0, c0, r1, c1 = _largest_rectangle(free)
        side = MIN_SURFACE_SIDE / SURFACE_CELL
        if r1 - r0 >= side and c1 - c0 >= side and (best is None or (r1 - r0) * (c1 - c0) > best[0]):
            best = ((r1 - r0) * (c1 - c0), Surface(c0 * SURFACE_CELL, r0 * SURFACE_CELL,
                                                   min((c1 - c0) * SURFACE_CELL, width - c0 * SURFACE_CELL),
                                                   min((r1 - r0) * SURFACE_CELL, height - r0 * SURFACE_CELL),
                                                   cats[ann["category_id"]]["name"]))
    return None if best is None else best[1]


def _largest_rectangle(grid: np.ndarray) -> tuple[int, int, int, int]:
    """``(row0, col0, row1, col1)`` (ends exclusive) of the largest all-ones rectangle of a 0/1 grid (the
    histogram-and-stack method, one pass per row); all zeros for an empty grid."""
    rows, cols = grid.shape
    heights = np.zeros(cols + 1, np.int64)
    best = (0, 0, 0, 0, 0)
    for r in range(rows):
        heights[:cols] = np.where(grid[r] > 0, heights[:cols] + 1, 0)
        stack: list[int] = []
        for c in range(cols + 1):
            start = c
            while stack and heights[stack[-1]] >= heights[c]:
                top = stack.pop()
                start = stack[-1] + 1 if stack else 0
                area = heights[top] * (c - start)
                if area > best[0]:
                    best = (int(area), r - int(heights[top]) + 1, start, r + 1, c)
            stack.append(c)
    return best[1:]


def _category_images(indexes, names: tuple[str, ...]) -> set[int]:
    """Ids of the images that contain any of ``names`` in any annotation file."""
    known = set()
    for _path, _kind, coco in indexes:
        known.update(c["name"] for c in coco.dataset.get("categories", []))
    unknown = [n for n in names if n not in known]
    if unknown:
        hints = []
        for n in unknown:
            close = difflib.get_close_matches(n, sorted(known), n=3)
            if close:
                hints.append(f"{n!r} (did you mean {', '.join(map(repr, close))}?)")
            else:
                hints.append(repr(n))
        sample = ", ".join(repr(n) for n in sorted(known)[:8])
        raise SourceError(
            f"unknown COCO categories: {', '.join(hints)}; the annotation files know {len(known)} names, "
            f"e.g. {sample}"
        )
    wanted: set[int] = set()
    for _path, _kind, coco in indexes:
        for cat_id in coco.getCatIds(catNms=list(names)):
            wanted.update(coco.getImgIds(catIds=[cat_id]))  # one at a time: getImgIds intersects
    return wanted


# -- pixels ------------------------------------------------------------------------


def _cached_photo_path(photo: CocoPhoto) -> Path:
    folder = cache_dir() / "coco"
    return folder / photo.split / photo.file_name if photo.split else folder / photo.file_name


def _decode(path: Path, photo: CocoPhoto, min_size: int, *, downloaded: bool, reduce: int = 1) -> np.ndarray:
    doc_id = f"coco-{photo.id}"
    try:
        with fs.open_file(path, limit="image_bytes", what="COCO photo") as fh, Image.open(fh) as im:
            if reduce > 1:  # JPEG's DCT scaling: decodes at 1/2, 1/4 or 1/8 of the size, several times faster
                im.draft("RGB", (-(-im.width // reduce), -(-im.height // reduce)))
            im.load()  # a truncated file raises here
            pixels = standard_pixels(im)
    except FileNotFoundError:
        raise DocumentError("COCO photo not found", doc_id=doc_id, path=str(path)) from None
    except fs.FileRefused as exc:
        raise DocumentError(exc.reason, doc_id=doc_id, path=str(path)) from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        note = ""
        if downloaded:
            path.unlink(missing_ok=True)
            note = "; removed from the cache, the next load downloads it again"
        raise DocumentError(f"cannot decode COCO photo ({exc}){note}", doc_id=doc_id, path=str(path)) from None
    if pixels.ndim == 2:
        pixels = cv2.cvtColor(pixels, cv2.COLOR_GRAY2RGB)
    height, width = pixels.shape[:2]
    if min(photo.width, photo.height) < min_size or (reduce == 1 and min(width, height) < min_size):
        raise DocumentError(
            f"COCO photo is {width}x{height}, smaller than min_size={min_size}", doc_id=doc_id, path=str(path)
        )
    drafted = (-(-photo.width // reduce), -(-photo.height // reduce))
    if (width, height) != (photo.width, photo.height) and (reduce == 1 or (width, height) != drafted):
        raise DocumentError(
            f"COCO photo is {width}x{height} but annotated as {photo.width}x{photo.height}",
            doc_id=doc_id,
            path=str(path),
        )
    pixels = np.ascontiguousarray(pixels, dtype=np.uint8)
    pixels.flags.writeable = False
    return pixels


def photo_credits(pool: CocoPool, photo_ids) -> list[dict]:
    """The data card's credits for the photos ``photo_ids`` of ``pool``: COCO id, Flickr page, licence, and
    whether it is ShareAlike (the form of :meth:`dogood.shifts.base.Shift.credits`)."""
    out = []
    for photo_id in photo_ids:
        photo = pool.get(int(photo_id))
        out.append({"id": photo.id, "title": f"[COCO {photo.id}](https://cocodataset.org/#explore?id={photo.id})",
                    "url": photo.flickr_url or photo.coco_url,
                    "license": photo.license_name, "license_url": photo.license_url,
                    "share_alike": "ShareAlike" in photo.license_name,
                    "source_dataset": "extended|other-coco-2017"})
    return out
