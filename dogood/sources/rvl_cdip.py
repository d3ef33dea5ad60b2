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
name; words come from Tesseract (:func:`dogood.page.ocr.ocr_words`, cached on
disk) unless ``ocr=False``.

RVL-CDIP is 38 GB and is never downloaded by dogood: a user downloads it from
https://adamharley.com/rvl-cdip/ and passes the folder with ``--source``.

Or the source reads Parquet shards of the Hub's RVL-CDIP (``aharley/rvl_cdip``: columns ``image``, a
``{bytes, path}`` struct, and ``label``, the class number) with ``parquet:`` (or a ``--source`` that is a
``.parquet`` file, a glob, a folder of them, or an fsspec URL such as
``hf://datasets/aharley/rvl_cdip/...``): see :mod:`dogood.sources.parquet_rows`. Ids are then
``<file stem>/<row>`` (``test-00000-of-00015/17``), counted from the files' footers; a page's document
is the one the folder gives for the same image bytes and label (same pixels, same OCR words).
"""

from __future__ import annotations

import functools
import glob
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

from dogood.core import fs
from dogood.core.document import Document, PageImage
from dogood.core.errors import DocumentError, DogoodError, SourceError
from dogood.core.paths import data_dir
from dogood.core.schema import RVL_CDIP_CLASSES
from dogood.sources.ids import IdTuple
from dogood.sources.parquet_rows import ParquetRows, is_url, looks_like_parquet

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
    parquet : Parquet shards to read instead of the folder: a file, a folder, a glob or an fsspec URL; the
        split's files are those named for it (``data/test-*.parquet``, ``test/*.parquet``).
    """

    root: str | Path | None = None
    split: str = "test"
    labels: str | Path | None = None
    ocr: bool = True
    lang: str = "eng"
    parquet: str | None = None
    kind: str = field(default="rvl_cdip", init=False)
    schema: str = field(default="rvl_cdip", init=False)

    def __post_init__(self):
        if self.parquet is None and self.labels is None and looks_like_parquet(self.root):
            self.parquet, self.root = str(self.root), None  # --source names Parquet shards
        if self.parquet is not None:
            if self.labels is not None:
                raise SourceError("RVL-CDIP: labels= applies to the folder layout; Parquet shards hold the labels")
            self.parquet = str(self.parquet)
            self.rows = ParquetRows(self.parquet, self.split, ("image", "label"))
            self.parquet_folder = None if is_url(self.parquet) else _local_folder(self.parquet)
            return
        self.parquet_folder = None
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
        """Document id -> :class:`LabelEntry`, parsed once per process (read-only); folder layout only."""
        if self.parquet is not None:
            raise SourceError(f"RVL-CDIP from Parquet shards ({self.parquet}) has no labels file")
        return read_labels(self.labels_path)

    def ids(self) -> Sequence[str]:
        """Document ids in the labels file's order (reads only the labels file), or the Parquet rows' ids (reads
        only the files' footers): the same sequence on every call, never a copy."""
        if self.parquet is not None:
            return self.rows.ids
        return label_ids(self.labels_path)

    def image_path(self, doc_id: str) -> Path:
        """The image file of a document: ``root/path``, else ``root/images/path``; inside the root either way
        (:func:`dogood.core.fs.confine`: a link out of it is a :class:`DocumentError`)."""
        entry = self._entry(doc_id)
        root = Path(self.root)
        try:
            direct = fs.confine(entry.path, root, "image path")
            if direct.exists():
                return direct
            under_images = fs.confine(entry.path, root / "images", "image path")
            if under_images.exists():
                return under_images
        except fs.FileRefused as exc:
            raise DocumentError(f"{exc.reason} (listed in {self.labels_path}, line {entry.line})", doc_id=doc_id,
                                path=str(root / entry.path)) from None
        raise DocumentError(
            f"image file not found (listed in {self.labels_path}, line {entry.line}; "
            f"also looked for {under_images})",
            doc_id=doc_id,
            path=str(direct),
        )

    # -- loading ---------------------------------------------------------------------
    def load(self, doc_id: str) -> Document:
        if self.parquet is not None:
            found = self.rows.ids.parse(doc_id)
            if found is None:
                raise DocumentError(f"not a row of the Parquet files at {self.parquet}", doc_id=doc_id)
            return self._parquet_document(doc_id, *found, self.rows.row(*found))
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
            from dogood.page.ocr import ocr_words

            words = ocr_words(image, lang=self.lang)
        return Document(
            id=doc_id, image=image, words=words, label=RVL_CDIP_CLASSES[entry.label], source=str(path)
        )

    def read_slice(self, start: int, stop: int) -> Iterator[Document]:
        """The documents at positions ``start..stop-1`` of :meth:`ids`, in order: from Parquet, one pass over
        each file's row groups."""
        if self.parquet is None:
            ids = self.ids()
            yield from (self.load(ids[i]) for i in range(max(0, start), min(stop, len(ids))))
            return
        for f, row, cells in self.rows.rows(start, stop):
            yield self._parquet_document(f"{self.rows.ids.stems[f]}/{row}", f, row, cells)

    def _parquet_document(self, doc_id: str, f: int, row: int, cells: dict[str, Any]) -> Document:
        where = f"{self.rows.files[f]}, row {row}"
        image_cell, label = cells.get("image"), cells.get("label")
        data = image_cell.get("bytes") if isinstance(image_cell, dict) else image_cell
        if not isinstance(data, (bytes, bytearray)):
            raise DocumentError(f"no image bytes in {where}", doc_id=doc_id)
        if isinstance(label, bool) or not isinstance(label, int) or not 0 <= label < len(RVL_CDIP_CLASSES):
            raise DocumentError(f"label {label!r} in {where} is not a class number 0-{len(RVL_CDIP_CLASSES) - 1}",
                                doc_id=doc_id)
        try:
            image = PageImage.from_bytes(data, name=where)
        except DocumentError as exc:
            raise DocumentError(exc.reason, doc_id=doc_id, path=where) from None
        words = ()
        if self.ocr:
            from dogood.page.ocr import ocr_words

            words = ocr_words(image, lang=self.lang)
        return Document(id=doc_id, image=image, words=words, label=RVL_CDIP_CLASSES[label], source=where)

    def fingerprint_files(self, ids: Iterable[str]) -> Iterator[Path]:
        """The local files :func:`dogood.pipeline.safety.source_fingerprint` hashes for ``ids``: the labels file and each
        image, or the Parquet files that hold them (none for a remote URL)."""
        if self.parquet is None:
            yield Path(self.labels_path)
            for doc_id in ids:
                try:
                    yield self.image_path(doc_id)
                except DogoodError:
                    yield Path(f"missing-{doc_id}")
            return
        if self.parquet_folder is None:
            return
        files = dict.fromkeys(found[0] for found in map(self.rows.ids.parse, ids) if found is not None)
        yield from (Path(self.rows.files[f]) for f in sorted(files))

    def ocr_pending(self, ids: Iterable[str]) -> int:
        """How many of ``ids`` Tesseract has still to read (their page is not in the OCR cache); 0 without OCR."""
        if not self.ocr:
            return 0
        if self.parquet is not None:
            return 0  # counting would read every row: the build reports the pages Tesseract read
        from dogood.page.ocr import ocr_cache_path

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
        where = ({"parquet": self.parquet, "parquet_files": len(self.rows.files)} if self.parquet is not None
                 else {"labels_file": str(self.labels_path)})
        info: dict[str, Any] = {
            "kind": "rvl_cdip",
            "split": self.split,
            "name": "RVL-CDIP",
            "url": RVL_CDIP_URL,
            **where,
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
            from dogood.page.ocr import tesseract_version

            try:
                version = tesseract_version()
            except SourceError:
                version = None
            info["ocr"] = {"engine": "tesseract", "version": version, "lang": self.lang}
        return info


def read_labels(path: str | Path) -> dict[str, LabelEntry]:
    """Parse a labels file of ``path label`` lines into document id -> :class:`LabelEntry`.

    Blank lines are skipped. A line without a path and an integer label, a
    label outside 0-15, a path that leaves the folder (absolute, ``..``) or a
    path listed twice raises :class:`SourceError` naming the file and line. Parsed files are kept in memory (keyed by path,
    size and modification time), so each process reads a file once.
    """
    path = Path(path)
    try:
        st = os.stat(path)
    except OSError as exc:
        raise SourceError(f"cannot read RVL-CDIP labels file {path} ({exc.strerror or exc})") from None
    return _read_labels_cached(str(path.resolve()), st.st_size, st.st_mtime_ns, str(path))


def label_ids(path: str | Path) -> IdTuple:
    """The document ids of a labels file, in its order: made once per process and file (as :func:`read_labels`)."""
    path = Path(path)
    st = os.stat(path)
    return _label_ids_cached(str(path.resolve()), st.st_size, st.st_mtime_ns, str(path))


@functools.lru_cache(maxsize=8)
def _label_ids_cached(resolved: str, size: int, mtime_ns: int, shown: str) -> IdTuple:
    return IdTuple(_read_labels_cached(resolved, size, mtime_ns, shown))


def _local_folder(location: str) -> Path | None:
    """The local folder Parquet shards are read from (checked against ``--out``)."""
    path = Path(location)
    while glob.has_magic(str(path)):
        path = path.parent
    return path if path.is_dir() else path.parent


@functools.lru_cache(maxsize=8)
def _read_labels_cached(resolved: str, size: int, mtime_ns: int, shown: str) -> dict[str, LabelEntry]:
    try:
        text = fs.read_text(resolved, what="labels file", encoding="utf-8-sig")
    except fs.FileRefused as exc:
        raise SourceError(f"cannot read RVL-CDIP labels file {shown} ({exc.reason})") from None
    except OSError as exc:
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
        try:
            fs.relative_name(rel, "image path", "the RVL-CDIP folder")
        except fs.FileRefused as exc:
            raise SourceError(f"{shown}, line {n}: {exc.reason}") from None
        doc_id = str(PurePosixPath(rel).with_suffix("")) if PurePosixPath(rel).suffix else rel
        if doc_id in entries:
            raise SourceError(
                f"{shown}, line {n}: {rel!r} repeats the document of line {entries[doc_id].line} (id {doc_id!r})"
            )
        entries[doc_id] = LabelEntry(rel, label, n)
    return entries
