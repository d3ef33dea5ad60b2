"""A Hugging Face dataset as a source: a dogood output, a Hub dataset or Parquet files.

``name`` is a folder (a dataset built by dogood or any Hub-layout folder), a
Parquet file or glob, or a Hub dataset id (read through ``datasets`` and its
cache). Two schemas are recognised from the columns:

- FUNSD-style: ``tokens``, ``bboxes`` (0-1000), ``ner_tags`` (IOB), ``image``.
- RVL-CDIP-style: ``image``, ``label`` (the 16 classes), optionally ``words``
  and ``bboxes``; without words, Tesseract reads them (``ocr=True``).

With ``streaming=True`` nothing is downloaded up front, so a Ray actor on a node without
the data reads it from where it lives (the Hub, any ``fsspec`` URL). Only
Parquet datasets stream (dogood outputs, Hub datasets stored as Parquet):
``datasets`` resolves the data files and ``pyarrow`` reads them through
``fsspec`` with range requests. The ids are the ``id`` column read alone
(one column chunk per row group), or positions ``0..n-1`` counted from the
files' footers when there is no ``id`` column; :meth:`HFDatasetSource.read_slice`
reads a contiguous range row group by row group, and :meth:`~HFDatasetSource.load`
keeps the last row group it read, so documents read in order fetch each row
group once. (``datasets``' own streaming iterator is not used for reading: it
can only skip rows by reading them, so the last slice of a split would read
the whole split.)

When the dogood full record is present (the ``dogood`` struct column, or the
top-level ``words``, ``word_boxes``, ``entities`` and ``provenance`` columns
of dogood < 0.2) the exact record is rebuilt.
Otherwise what the columns allow is rebuilt, and what they lost stays lost:
pixel boxes come from the 0-1000 boxes and the image size (to within
1/1000 of the page: the smallest pixel box that normalises back to the same
0-1000 values, :func:`dogood.sources.rows.pixel_box`), entities from the IOB tags (each ``O`` word becomes an
``other`` entity of its own), and there are no links. Segment-level boxes
(``nielsr/funsd-layoutlmv3``) become word boxes equal to their segment's, so
writing them again at either box level gives the same ``bboxes`` back.
"""

from __future__ import annotations

import glob
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dogood.core import fs
from dogood.core.document import Document, PageImage, Word
from dogood.core.errors import DocumentError, DogoodError, SourceError
from dogood.core.schema import (
    FULL_COLUMN,
    FUNSD_LABELS,
    RVL_CDIP_CLASSES,
    has_full_record,
    label_order,
    row_to_document,
)
from dogood.sources.ids import ArrowIds, PositionIds
from dogood.sources.parquet_rows import ParquetRows, is_url, url_fs
from dogood.sources.rows import check_normalized, entities_from_iob, pixel_box


@dataclass
class HFDatasetSource:
    """Documents from a Hugging Face dataset split.

    Parameters
    ----------
    name : folder, Parquet file/glob, or Hub dataset id.
    split : split name.
    config : the dataset config (for multi-config datasets such as dogood outputs).
    schema : ``"funsd"`` or ``"rvl_cdip"``; detected from the columns when ``None``.
    revision : Hub revision (tag, branch or commit), e.g. ``"v1.0.0"``.
    ocr : read words with Tesseract when an RVL-CDIP-style dataset has none.
    dataset : a ``datasets.Dataset`` already in memory; ``name`` then only names it.
    streaming : read the Parquet data files where they are (the Hub, a URL, a folder) a row group at a time
        instead of loading the split through ``datasets``' cache; the same documents either way.
    allow_local_paths : read an image cell that holds no bytes but a file path from that path on this
        machine. Off by default: a dataset must not make dogood open (and publish) local files it names,
        such as ``/etc/passwd``; such a row is then a :class:`DocumentError`.
    """

    name: str | Path | None = None
    split: str = "test"
    config: str | None = None
    schema: str | None = None
    revision: str | None = None
    ocr: bool = True
    dataset: Any = field(default=None, repr=False)
    allow_local_paths: bool = False
    streaming: bool = False
    kind: str = field(default="hf", init=False)

    def __post_init__(self):
        if self.name is None:
            raise SourceError("an 'hf' source needs a dataset: a folder, a Parquet file or a Hub dataset id (--source)")
        self.name = str(self.name)
        files = None
        if self.dataset is None and not self.streaming:
            files = _local_parquet(self.name, self.config, self.split, self.revision)
        self._in_place = self.streaming or files is not None
        if self._in_place:
            if self.dataset is not None:
                raise SourceError(f"{self.name}: streaming reads files, not a dataset already in memory")
            columns = self._open_streaming(files)
        else:
            self._ds = self.dataset if self.dataset is not None else _load(self.name, self.config, self.split,
                                                                           self.revision)
            if len(self._ds) == 0:
                raise SourceError(f"{self.name}: split {self.split!r} has no rows")
            columns = set(self._ds.column_names)
        if self.schema is None:
            if "ner_tags" in columns:
                self.schema = "funsd"
            elif "questions" in columns:
                self.schema = "docvqa"
            elif "label" in columns:
                self.schema = "rvl_cdip"
            else:
                raise SourceError(
                    f"{self.name}: cannot tell the schema from columns {sorted(columns)}; "
                    "expected FUNSD-style (tokens, bboxes, ner_tags, image) or RVL-CDIP-style (image, label)"
                )
        if "image" not in columns:
            raise SourceError(f"{self.name}: the dataset has no 'image' column")
        self._full = has_full_record(columns)
        if self._in_place:
            ids = self._streaming_ids("id" in columns)
            features = self._features
        else:
            from datasets import Image

            self._ds = self._ds.cast_column("image", Image(decode=False))
            ids = _id_strings(self._ds["id"], self.name) if "id" in columns else PositionIds(len(self._ds))
            features = self._ds.features
        self._ids = ids
        self._tag_names = _label_names(features.get("ner_tags"))
        self._class_names = _label_names(features.get("label"))

    # -- in place: Parquet files read where they are, a row group at a time (:class:`ParquetRows`) ---------------
    def _open_streaming(self, files: list[str] | None = None) -> set[str]:
        """Resolve the split's Parquet files (unless given) and read their footers; return the column names."""
        import datasets

        if files is None:
            files = _parquet_files(self.name, self.config, self.split, self.revision)
        self._rows = ParquetRows(self.name, self.split, None, files=files)
        if len(self._rows.ids) == 0:
            raise SourceError(f"{self.name}: split {self.split!r} has no rows")
        schema = self._rows.schema
        self._features = datasets.Features.from_arrow_schema(schema)
        return set(schema.names)

    def _streaming_ids(self, has_id: bool):
        """The ids, never one Python string per row: positions ``0..n-1`` (:class:`PositionIds`), or the ``id``
        column held as Arrow strings (:class:`ArrowIds`, only that column read)."""
        if not has_id:
            return PositionIds(len(self._rows.ids))
        return _id_strings(self._rows.column_arrow("id", max_value_bytes=fs.limits().id_bytes), self.name)

    def read_slice(self, start: int, stop: int) -> Iterator[Document]:
        """The documents at positions ``start..stop-1`` of :meth:`ids`, in order; a streaming source reads
        only the row groups that hold them, each once."""
        if not self._in_place:
            for position in range(max(0, start), min(stop, len(self._ids))):
                yield self._document(self._ds[position], self._ids[position])
            return
        for f, row, cells in self._rows.rows(start, stop):
            position = self._rows.ids.starts[f] + row
            yield self._document(dict(cells), self._ids[position])

    def ids(self) -> Sequence[str]:
        """The document ids, in row order: a lazy sequence (nothing stored per row), the same on every call."""
        return self._ids

    def entity_labels(self) -> tuple[str, ...]:
        """FUNSD-style data's entity labels, from the ``ner_tags`` names (``B-X`` -> ``x``, in their order, then
        ``other``); FUNSD's when the dataset declares no names."""
        if not self._tag_names:
            return FUNSD_LABELS
        labels = []
        for tag in self._tag_names:
            if tag[:2] in ("B-", "I-") and tag[2:].lower() not in labels:
                labels.append(tag[2:].lower())
        return label_order(labels) if set(labels) <= set(FUNSD_LABELS) else (*labels, "other")

    def load(self, doc_id: str) -> Document:
        position = self._ids.position(doc_id)
        if position is None:
            raise DocumentError("no such document in the dataset", doc_id=doc_id, path=self.name)
        row = dict(self._rows.row(*self._rows.ids.locate(position))) if self._in_place else self._ds[position]
        return self._document(row, doc_id)

    def _document(self, row: dict[str, Any], doc_id: str) -> Document:
        row["id"] = doc_id
        try:
            if self._full:
                _check_whole_ids(row, doc_id, self.name)
                return row_to_document(row, self.schema)
            return self._rebuild(row)
        except DocumentError:
            raise
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise DocumentError(f"malformed row ({exc!r})", doc_id=doc_id, path=self.name) from None

    def _rebuild(self, row: dict[str, Any]) -> Document:
        cell = row["image"]
        if not cell or not cell.get("bytes"):
            path = cell.get("path") if cell else None
            if not path:
                raise DocumentError("the row has no image bytes", doc_id=row["id"], path=self.name)
            if not self.allow_local_paths:
                raise DocumentError(f"the image cell holds no bytes but names a local file {str(path)!r}; dogood "
                                    "does not open files a dataset names unless the source sets "
                                    "allow_local_paths: true", doc_id=row["id"], path=self.name)
            if not Path(path).is_file():
                raise DocumentError(f"the row has no image bytes and its path {str(path)!r} is not a file",
                                    doc_id=row["id"], path=self.name)
            image = PageImage.from_file(path)
        else:
            image = PageImage.from_bytes(cell["bytes"], name=cell.get("path") or row["id"])
        w, h = image.width, image.height
        if self.schema == "docvqa":
            raise DocumentError("a DocVQA-style row can be read only from a dataset written by dogood (full-fidelity columns)",
                                doc_id=row["id"], path=self.name)
        if self.schema == "funsd":
            tokens, boxes, tags = row["tokens"], row["bboxes"], row["ner_tags"]
            if not len(tokens) == len(boxes) == len(tags):
                raise DocumentError(
                    f"tokens, bboxes and ner_tags differ in length ({len(tokens)}, {len(boxes)}, {len(tags)})",
                    doc_id=row["id"],
                    path=self.name,
                )
            _check_words(tokens, boxes, row["id"], self.name)
            words = tuple(Word(t, pixel_box(b, w, h)) for t, b in zip(tokens, boxes))
            bad = next((t for t in tags if isinstance(t, bool) or not isinstance(t, (int, str))), None)
            if bad is not None:
                raise DocumentError(f"ner_tags must be integers or tag names, got {bad!r}", doc_id=row["id"],
                                    path=self.name)
            if any(isinstance(t, int) for t in tags) and self._tag_names is None:
                raise DocumentError("integer ner_tags but the dataset declares no tag names", doc_id=row["id"],
                                    path=self.name)
            names = [self._tag_names[t] if isinstance(t, int) and 0 <= t < len(self._tag_names) else t for t in tags]
            return Document(row["id"], image, words, entities_from_iob(names, row["id"], self.name, self._tag_names),
                            source=self.name)
        label = row["label"]
        if isinstance(label, bool) or not isinstance(label, (int, str)):
            raise DocumentError(f"label must be an integer or a class name, got {label!r}", doc_id=row["id"],
                                path=self.name)
        if isinstance(label, int) and self._class_names and 0 <= label < len(self._class_names):
            label = self._class_names[label]
        if label not in RVL_CDIP_CLASSES:
            raise DocumentError(f"label {label!r} is not an RVL-CDIP class", doc_id=row["id"], path=self.name)
        texts = row.get("tokens", row.get("words"))  # tokens; dogood < 0.2 wrote words
        if texts is not None and row.get("bboxes") is not None:
            _check_words(texts, row["bboxes"], row["id"], self.name)
            words = tuple(Word(t, pixel_box(b, w, h)) for t, b in zip(texts, row["bboxes"]))
        elif self.ocr:
            from dogood.page.ocr import ocr_words

            words = ocr_words(image)
        else:
            words = ()
        return Document(row["id"], image, words, label=label, source=self.name)

    def box_convention(self) -> str:
        """The convention of the ``bboxes`` column (:data:`dogood.core.schema.BOX_LEVELS`), read off the first row:
        ``word`` for data without entities; with the full record, the convention whose boxes equal the row's;
        otherwise ``segment`` when every multi-token entity's tokens share one box."""
        from dogood.sources.rows import _full_record_box_level, _hub_box_level

        if self.schema != "funsd":
            return "word"
        first = self._ids[0]
        position = self._ids.position(first)
        row = dict(self._rows.row(*self._rows.ids.locate(position))) if self._in_place else self._ds[position]
        doc = self._document(dict(row), first)
        if self._full:
            return _full_record_box_level(doc, row)
        return _hub_box_level(list(row.get("bboxes") or []), doc.entities)

    def describe(self) -> dict[str, Any]:
        return {"kind": "hf", "split": self.split, "name": self.name, "config": self.config, "revision": self.revision}


def _local_parquet(name: str, config: str | None, split: str, revision: str | None) -> list[str] | None:
    """The split's Parquet files when ``name`` is local (a Parquet file, a glob of them, or a folder whose data
    files are Parquet: a dogood build, a Hub-layout folder), read in place: no copy into ``datasets``' cache
    (whose local entries are keyed by file names and times, so a file replaced with the same time would be
    served stale), and ``--limit`` reads only the row groups it needs. ``None`` for anything else."""
    files = sorted(glob.glob(name)) if glob.has_magic(name) else []
    if files and all(f.endswith(".parquet") and Path(f).is_file() for f in files):
        return files
    path = Path(name)
    if path.is_file() and name.endswith(".parquet"):
        return [name]
    if path.is_dir():
        try:
            return _parquet_files(name, config, split, revision)
        except SourceError as exc:
            if "reads Parquet datasets only" in str(exc):
                return None  # JSON, CSV...: read through datasets (its cache keyed by content: _load)
            raise
    return None


def _load(name: str, config: str | None, split: str, revision: str | None):
    import datasets

    options = {}
    if Path(name).exists() or glob.has_magic(name):  # local files not in Parquet: a cache of their own content
        options["cache_dir"] = str(_content_cache(name))
    try:
        files = sorted(glob.glob(name)) if any(ch in name for ch in "*?[") else []
        if name.endswith(".parquet") or (files and all(f.endswith(".parquet") for f in files)):
            return datasets.load_dataset("parquet", data_files={split: files or [name]}, split=split, **options)
        return datasets.load_dataset(name, config, split=split, revision=revision, **options)
    except (OSError, ValueError, datasets.exceptions.DatasetNotFoundError,
            datasets.exceptions.DatasetGenerationError) as exc:
        cause = exc.__cause__ if isinstance(exc, datasets.exceptions.DatasetGenerationError) and exc.__cause__ else exc
        first = (str(cause).splitlines() or [type(cause).__name__])[0]
        raise SourceError(f"cannot load Hugging Face dataset {name!r} (config {config!r}, split {split!r}): "
                          f"{first}") from None


def _content_cache(name: str) -> Path:
    """``<dogood cache>/hf-datasets/<sha256 of the files' names and bytes>``: ``datasets``' cache for local
    files, keyed by their content (``datasets`` keys local files by their times: a file replaced with the same
    time would be served from the old entry)."""
    import hashlib

    from dogood.core.fs import is_link, sha256_file
    from dogood.core.paths import cache_dir

    path = Path(name)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and not is_link(p) and ".cache" not in p.parts)
    elif path.is_file():
        files = [path]
    else:
        files = [Path(f) for f in sorted(glob.glob(name)) if Path(f).is_file()]
    digest = hashlib.sha256()
    for f in files:
        rel = f.relative_to(path).as_posix() if path.is_dir() else f.name
        digest.update(rel.encode("utf-8", "surrogateescape") + b"\0" + sha256_file(f).encode("ascii"))
    return cache_dir() / "hf-datasets" / digest.hexdigest()[:32]


def _parquet_files(name: str, config: str | None, split: str, revision: str | None) -> list[str]:
    """The split's Parquet data files (local paths or ``hf://`` URLs), as ``datasets`` resolves them."""
    import datasets

    files = sorted(glob.glob(name)) if any(ch in name for ch in "*?[") else []
    if name.endswith(".parquet") or (files and all(f.endswith(".parquet") for f in files)):
        return files or [name]
    if is_url(name) and not name.startswith("hf://"):
        url_fs(name)  # an unknown or uninstalled scheme, a malformed URL: a SourceError naming it
    try:
        builder = datasets.load_dataset_builder(name, config, revision=revision)
    except DogoodError:
        raise
    except Exception as exc:  # noqa: BLE001 - datasets and fsspec backends raise many types (ImportError...)
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise SourceError(f"cannot read Hugging Face dataset {name!r} (config {config!r}, split {split!r}): "
                          f"{first}") from None
    data_files = builder.config.data_files or {}
    if split not in data_files:
        raise SourceError(f"{name}: no split {split!r} (config {config!r}); it has {', '.join(data_files) or 'none'}")
    urls = [str(f) for f in data_files[split]]
    if builder.name != "parquet" or not all(u.endswith(".parquet") for u in urls):
        raise SourceError(f"{name}: streaming: true reads Parquet datasets only; this one is {builder.name!r}")
    return urls


def _id_strings(column, where: str) -> ArrowIds:
    """The ``id`` column (an Arrow array or a list) as :class:`ArrowIds`: a null id, or two equal ids, is a
    :class:`SourceError` naming the row (an id never silently becomes ``"None"``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not isinstance(column, (pa.Array, pa.ChunkedArray)):
        column = pa.array(list(column))
    if isinstance(column, pa.Array):
        column = pa.chunked_array([column])
    if column.null_count:
        row = pc.index(pc.is_null(column), True).as_py()
        raise SourceError(f"{where}: row {row} has no id (null in the 'id' column); every row needs its own id")
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        if not pa.types.is_integer(column.type):
            raise SourceError(f"{where}: the 'id' column holds {column.type}, not strings or integers")
        column = pc.cast(column, pa.string())
    if pc.count_distinct(column).as_py() != len(column):
        raise SourceError(f"{where}: the 'id' column has duplicate values")
    return ArrowIds(column)


def _check_words(texts: Sequence, boxes: Sequence, doc_id: str, where: str) -> None:
    """A row's words within the page limits (:func:`dogood.core.fs.check_words`) and its boxes four numbers in
    0-1000 (:func:`dogood.sources.rows.check_normalized`: refused, never clamped), naming the row."""
    try:
        fs.check_words(texts, what="tokens")
    except fs.FileRefused as exc:
        raise DocumentError(exc.reason, doc_id=doc_id, path=where) from None
    for i, box in enumerate(boxes):
        if (not isinstance(box, (list, tuple)) or len(box) != 4
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in box)):
            raise DocumentError(f"bboxes[{i}] must be four numbers (0-1000), got {box!r}", doc_id=doc_id, path=where)
    check_normalized(boxes, doc_id, where)


def _check_whole_ids(row: dict[str, Any], doc_id: str, where: str) -> None:
    """Entity ids, word ids and links of a full record are integers (never booleans or floats such as 1.5)."""
    full = row[FULL_COLUMN] if FULL_COLUMN in row else row
    for ent in (full or {}).get("entities") or ():
        values = [ent.get("id"), *(ent.get("word_ids") or ()), *(v for pair in ent.get("links") or () for v in pair)]
        bad = next((v for v in values if isinstance(v, bool) or not isinstance(v, int)), None)
        if bad is not None or "id" not in ent:
            raise DocumentError(f"entity ids, word ids and links must be integers, got {bad!r}", doc_id=doc_id,
                                path=where)


def _label_names(feature) -> list[str] | None:
    inner = getattr(feature, "feature", feature)
    return list(inner.names) if hasattr(inner, "names") else None
