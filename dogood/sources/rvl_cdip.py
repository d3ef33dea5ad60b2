"""RVL-CDIP in its official layout (Harley et al. 2015).

A root folder holds the page images (``images/...``, TIFF) and label files of
``path label`` lines, one page a line, where ``label`` is the class number
0-15 (:data:`RVL_CDIP_CLASSES` gives the names in the official order). The
official release has ``labels/train.txt``, ``labels/val.txt`` and
``labels/test.txt`` whose paths are relative to ``images/``
(``imagesa/a/a/a/aaa06d00/aaa06d00.tif 11``); a single ``labels.txt`` at the
root, or any file passed as ``labels=``, may list paths relative to the root
(``images/80035521.tif 15``). A path is looked up under the root first, then
under ``root/images``.

The document id is the path as the labels file writes it, without its
extension (``images/80035521``; ``imagesa/a/a/a/aaa06d00/aaa06d00`` in the
official files): stable, unique within a labels file (duplicates are an
error) and known without touching the images. ``Document.label`` is the class
name; words come from Tesseract (:func:`dogood.ocr.ocr_words`, cached on
disk) unless ``ocr=False``.

RVL-CDIP is 38 GB and is never downloaded by dogood: a user downloads it from
https://adamharley.com/rvl-cdip/ and passes the folder with ``--source``.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

from dogood.document import Document, PageImage
from dogood.schema import RVL_CDIP_CLASSES
from dogood.errors import DocumentError, SourceError
from dogood.paths import data_dir

RVL_CDIP_URL = "https://adamharley.com/rvl-cdip/"
RVL_CDIP_SPLITS = ("train", "val", "test")
_SPLIT_ALIASES = {"validation": "val", "dev": "val"}


class LabelEntry(NamedTuple):
    """One line of a labels file: the path as written, the class number and the 1-based line number."""

    path: str
    label: int
    line: int


def _looks_like_rvl_cdip(path: Path) -> bool:
    return path.is_dir() and ((path / "labels").is_dir() or (path / "labels.txt").is_file())


def find_rvl_cdip_root(path: str | Path | None = None, *, need_labels: bool = True) -> Path:
    """The RVL-CDIP root: ``path`` (or its ``rvl-cdip`` subfolder), else ``$DOGOOD_DATA_DIR/rvl_cdip``.

    With ``need_labels=False`` (an explicit labels file was given) any
    existing folder is accepted as the root the labels' paths start from.
    Raises :class:`SourceError` explaining how to get the data otherwise.
    """
    if path is not None:
        path = Path(path)
        for candidate in (path, path / "rvl-cdip", path / "rvl_cdip"):
            if _looks_like_rvl_cdip(candidate):
                return candidate
        if not need_labels and path.is_dir():
            return path
        if not path.is_dir():
            raise SourceError(f"RVL-CDIP folder {path} does not exist")
        raise SourceError(
            f"{path} is not an RVL-CDIP folder: expected labels/{{train,val,test}}.txt (the official layout) "
            "or a labels.txt of 'path label' lines next to the images"
        )
    shared = data_dir()
    if shared is not None and _looks_like_rvl_cdip(shared / "rvl_cdip"):
        return shared / "rvl_cdip"
    raise SourceError(
        "RVL-CDIP is not downloaded automatically (about 38 GB). Download the images (rvl-cdip.tar.gz) and "
        f"the label files from {RVL_CDIP_URL}, extract them into one folder (images/ and labels/) and pass "
        "that folder with --source (or set DOGOOD_DATA_DIR to a folder that contains rvl_cdip/)"
    )


@dataclass
class RvlCdipSource:
    """Pages of one RVL-CDIP split as classified documents.

    Parameters
    ----------
    root : the RVL-CDIP folder; ``$DOGOOD_DATA_DIR/rvl_cdip`` when ``None``.
    split : ``"train"``, ``"val"`` (alias ``"validation"``) or ``"test"``: selects
        ``labels/<split>.txt``, else the root's ``labels.txt`` (which is used for
        whatever split is asked). Free-form when ``labels`` is given.
    labels : a labels file to use instead, relative to ``root`` or absolute.
    ocr : fill the words with Tesseract OCR (cached per image).
    lang : Tesseract language(s) for the OCR.
    """

    root: str | Path | None = None
    split: str = "test"
    labels: str | Path | None = None
    ocr: bool = True
    lang: str = "eng"
    kind: str = field(default="rvl_cdip", init=False)
    schema: str = field(default="rvl_cdip", init=False)

    def __post_init__(self):
        self.root = find_rvl_cdip_root(self.root, need_labels=self.labels is None)
        self.labels_path = self._find_labels()

    def _find_labels(self) -> Path:
        root = Path(self.root)
        if self.labels is not None:
            path = Path(self.labels)
            path = path if path.is_absolute() else root / path
            if not path.is_file():
                raise SourceError(f"RVL-CDIP labels file {path} not found")
            return path
        split = _SPLIT_ALIASES.get(self.split, self.split)
        if split not in RVL_CDIP_SPLITS:
            raise SourceError(f"RVL-CDIP has splits {list(RVL_CDIP_SPLITS)}, not {self.split!r}")
        for path in (root / "labels" / f"{split}.txt", root / "labels.txt"):
            if path.is_file():
                return path
        raise SourceError(f"{root}: no labels/{split}.txt and no labels.txt: cannot list the {self.split!r} split")

    # -- listing -------------------------------------------------------------------
    def entries(self) -> dict[str, LabelEntry]:
        """Document id -> :class:`LabelEntry`, parsed once per process (read-only)."""
        return read_labels(self.labels_path)

    def ids(self) -> list[str]:
        """Document ids in the labels file's order (reads only the labels file)."""
        return list(self.entries())

    def image_path(self, doc_id: str) -> Path:
        """The image file of a document: ``root/path``, else ``root/images/path``."""
        entry = self._entry(doc_id)
        root = Path(self.root)
        direct = root / entry.path
        if direct.is_file():
            return direct
        under_images = root / "images" / entry.path
        if under_images.is_file():
            return under_images
        raise DocumentError(
            f"image file not found (listed in {self.labels_path}, line {entry.line}; "
            f"also looked for {under_images})",
            doc_id=doc_id,
            path=str(direct),
        )

    # -- loading ---------------------------------------------------------------------
    def load(self, doc_id: str) -> Document:
        entry = self._entry(doc_id)
        path = self.image_path(doc_id)
        try:
            image = PageImage.from_file(path)
        except DocumentError as exc:
            raise DocumentError(
                f"{exc.reason} (listed in {self.labels_path}, line {entry.line})", doc_id=doc_id, path=str(path)
            ) from None
        words = ()
        if self.ocr:
            from dogood.ocr import ocr_words

            words = ocr_words(image, lang=self.lang)
        return Document(
            id=doc_id, image=image, words=words, label=RVL_CDIP_CLASSES[entry.label], source=str(path)
        )

    def ocr_pending(self, ids: list[str]) -> int:
        """How many of ``ids`` Tesseract has still to read (their page is not in the OCR cache); 0 without OCR."""
        if not self.ocr:
            return 0
        from dogood.ocr import ocr_cache_path

        pending = 0
        for doc_id in ids:
            try:
                path = ocr_cache_path(PageImage.from_file(self.image_path(doc_id), verify=False), lang=self.lang)
            except (DocumentError, SourceError):
                continue  # reported when the document is loaded
            pending += path is not None and not path.is_file()
        return pending

    def _entry(self, doc_id: str) -> LabelEntry:
        try:
            return self.entries()[doc_id]
        except KeyError:
            raise DocumentError(f"not listed in {self.labels_path}", doc_id=doc_id) from None

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "kind": "rvl_cdip",
            "split": self.split,
            "name": "RVL-CDIP",
            "url": RVL_CDIP_URL,
            "labels_file": str(self.labels_path),
            "classes": list(RVL_CDIP_CLASSES),
            "citation": (
                "Harley, Ufkes, Derpanis. Evaluation of Deep Convolutional Nets for Document Image "
                "Classification and Retrieval. ICDAR 2015."
            ),
            "license_name": "rvl-cdip-iit-cdip-terms",
            "license_link": "https://www.industrydocuments.ucsf.edu/help/copyright/",
            "license": (
                "RVL-CDIP / IIT-CDIP terms: a subset of IIT-CDIP (Lewis et al. 2006), from the Legacy Tobacco "
                "Document Library (https://www.industrydocuments.ucsf.edu/help/copyright/)"
            ),
        }
        if self.ocr:
            from dogood.ocr import tesseract_version

            try:
                version = tesseract_version()
            except SourceError:
                version = None
            info["ocr"] = {"engine": "tesseract", "version": version, "lang": self.lang}
        return info


def read_labels(path: str | Path) -> dict[str, LabelEntry]:
    """Parse a labels file of ``path label`` lines into document id -> :class:`LabelEntry`.

    Blank lines are skipped. A line without a path and an integer label, a
    label outside 0-15 or a path listed twice raises :class:`SourceError`
    naming the file and line. Parsed files are kept in memory (keyed by path,
    size and modification time), so each process reads a file once.
    """
    path = Path(path)
    try:
        st = os.stat(path)
    except OSError as exc:
        raise SourceError(f"cannot read RVL-CDIP labels file {path} ({exc.strerror or exc})") from None
    return _read_labels_cached(str(path.resolve()), st.st_size, st.st_mtime_ns, str(path))


@functools.lru_cache(maxsize=8)
def _read_labels_cached(resolved: str, size: int, mtime_ns: int, shown: str) -> dict[str, LabelEntry]:
    try:
        with open(resolved, encoding="utf-8-sig") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"cannot read RVL-CDIP labels file {shown} ({exc})") from None
    entries: dict[str, LabelEntry] = {}
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        parts = line.rsplit(maxsplit=1)
        if len(parts) != 2:
            raise SourceError(f"{shown}, line {n}: expected 'path label', got {raw!r}")
        rel, label_text = parts
        try:
            label = int(label_text)
        except ValueError:
            raise SourceError(f"{shown}, line {n}: label {label_text!r} is not an integer (in {raw!r})") from None
        if not 0 <= label < len(RVL_CDIP_CLASSES):
            raise SourceError(
                f"{shown}, line {n}: label {label} is outside 0-{len(RVL_CDIP_CLASSES) - 1} (in {raw!r})"
            )
        rel = rel.strip().replace("\\", "/")
        doc_id = str(PurePosixPath(rel).with_suffix("")) if PurePosixPath(rel).suffix else rel
        if doc_id in entries:
            raise SourceError(
                f"{shown}, line {n}: {rel!r} repeats the document of line {entries[doc_id].line} (id {doc_id!r})"
            )
        entries[doc_id] = LabelEntry(rel, label, n)
    return entries
