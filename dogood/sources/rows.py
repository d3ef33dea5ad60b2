"""One dataset row, in dogood's schema or a plain Hub schema, to a :class:`Document` and back.

What :func:`dogood.transform` uses to take rows as training code has them and
return them in the same shape. Recognised from the columns:

- dogood's own rows (the ``dogood`` struct column): the exact record;
- FUNSD-style Hub rows: ``nielsr/funsd-layoutlmv3`` (``id``, ``tokens``,
  ``bboxes`` 0-1000 at segment level, ``ner_tags``, ``image``) and
  ``nielsr/funsd`` (``words`` instead of ``tokens``, word-level boxes, and
  ``image_path`` instead of ``image``: that file is opened only with
  ``allow_local_paths=True``);
- RVL-CDIP-style Hub rows: ``aharley/rvl_cdip`` (``image``, ``label``),
  optionally with ``tokens``/``words`` and ``bboxes``.

A row comes back with the columns it came with, the shifted values in them
(``image`` a PIL image in the input's mode, ``bboxes`` 0-1000 in the input's
box convention, ``ner_tags`` and ``label`` as integers or names as they
came), and every other column untouched. A ``nielsr/funsd`` row gains an
``image`` column: a shifted page cannot be written back to ``image_path``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

from dogood.core import fs
from dogood.core.boxes import Box, normalize_boxes
from dogood.core.document import (
    DEEP_MODES,
    PAGE_MODES,
    Document,
    Entity,
    PageImage,
    Word,
    as_page_image,
    pixel_scale,
    standard_pixels,
)
from dogood.core.errors import DocumentError
from dogood.core.schema import (
    FULL_COLUMN,
    FUNSD_NER_TAGS,
    RVL_CDIP_CLASSES,
    document_to_row,
    iob_tags,
    row_to_document,
    token_boxes,
    token_index,
)

#: Columns whose value is a list in a batch (``Dataset.with_transform``, ``map(batched=True)``) and a scalar in a row.
_SCALAR_COLUMNS = ("image", "image_path", "label", "id")


def pixel_box(box: Sequence[int], width: int, height: int) -> Box:
    """The smallest pixel box that :func:`dogood.core.boxes.normalize_box` maps back to the 0-1000 ``box``.

    ``ceil(x * size / 1000)`` is the first pixel whose ``int(1000 * p / size)`` reaches ``x``, so a box
    normalised from pixels on a page of this size comes back to the same 0-1000 values: an unshifted word
    keeps its ``bboxes`` exactly (``denormalize_box`` rounds, which can land one unit lower on pages
    narrower than 1000 pixels). Values out of 0-1000 are clamped (the row readers refuse them first:
    :func:`check_normalized`).
    """
    sizes = (width, height, width, height)
    return tuple(min(s, math.ceil(min(1000, max(0, int(v))) * s / 1000)) for v, s in zip(box, sizes))  # type: ignore[return-value]


def check_normalized(boxes: Sequence[Sequence[float]], doc_id: str, where: str | None = None):
    """Refuse a row whose ``bboxes`` leave 0-1000 (a :class:`DocumentError` naming the row, the token and the
    box): such a box cannot be placed on the page, and clamping it (``[405, 1035, 513, 1077]`` to
    ``[405, 1000, 513, 1000]``, a box of no height) would change the data without a word. ``boxes`` are four
    numbers each (checked before). Returns them as an ``n x 4`` integer array when they are integers (for
    :func:`pixel_boxes`, which then converts nothing again), else ``None``."""
    if not len(boxes):
        return None
    try:
        arr = np.asarray(boxes)
    except (ValueError, TypeError, OverflowError):
        arr = None
    if arr is not None and arr.dtype.kind in "iuf" and arr.ndim == 2 and arr.shape[1] == 4:
        if arr.min() >= 0 and arr.max() <= 1000:
            return arr if arr.dtype.kind in "iu" else None
        i = int(np.flatnonzero(((arr < 0) | (arr > 1000)).any(axis=1))[0])
    else:
        bad = next((k for k, b in enumerate(boxes) if any(not 0 <= float(v) <= 1000 for v in b)), None)
        if bad is None:
            return None
        i = bad
    box = boxes[i].tolist() if isinstance(boxes[i], np.ndarray) else list(boxes[i])
    raise DocumentError(f"bboxes[{i}] {box} is outside 0-1000 (normalised boxes lie on the page: 0 <= x, y <= "
                        "1000); dogood refuses it rather than clamp it", doc_id=doc_id, path=where)


def pixel_boxes(boxes: Sequence[Sequence[int]], width: int, height: int) -> list[Box]:
    """:func:`pixel_box` of each box, equal value for value: at once with NumPy when they are integers in an
    ``n x 4`` table (``x * size`` is exact in float64 and the division rounds as Python's does)."""
    try:
        arr = np.asarray(boxes) if len(boxes) else np.zeros((0, 4), np.int64)
    except (ValueError, TypeError):  # ragged
        arr = None
    if arr is None or arr.dtype.kind not in "iu" or arr.ndim != 2 or arr.shape[1] != 4:
        return [pixel_box(b, width, height) for b in boxes]
    sizes = np.array([width, height, width, height], dtype=np.int64)
    pixels = np.minimum(sizes, np.ceil(np.clip(arr.astype(np.int64), 0, 1000) * sizes / 1000)).astype(np.int64)
    return [tuple(b) for b in pixels.tolist()]


def is_batch(row: dict[str, Any]) -> bool:
    """Whether ``row`` is a batch (each column a list of values) rather than one row."""
    for column in _SCALAR_COLUMNS:
        if column in row:
            return isinstance(row[column], (list, tuple))
    if "tokens" in row or "words" in row:
        value = row.get("tokens", row.get("words"))
        return bool(value) and isinstance(value[0], (list, tuple))
    raise DocumentError(f"cannot read a row with columns {sorted(row)}: expected dogood's, FUNSD-style "
                        "(tokens or words, bboxes, ner_tags, image) or RVL-CDIP-style (image, label) columns")


@dataclass
class RowLayout:
    """How a row was laid out, so the shifted document goes back into the same shape."""

    schema: str  # funsd, rvl_cdip or docvqa
    full: bool  # dogood's full record
    text_column: str | None  # tokens, words, or None
    box_level: str  # segment or word
    tags_as_names: bool
    label_as_name: bool
    image_mode: str | None  # the input PIL mode, or None for a numpy array / encoded cell
    image_was: str  # "pil", "array", "cell", or "path"
    image_scale: float | None = None  # white in an I;16, I or F input page (:func:`dogood.core.document.pixel_scale`)
    image_ndim: int = 0  # an input array's dimensions (2 or 3), 0 for other inputs


def row_schema(row: dict[str, Any]) -> str:
    if "questions" in row:
        return "docvqa"
    if "ner_tags" in row:
        return "funsd"
    if "label" in row:
        return "rvl_cdip"
    raise DocumentError(f"cannot tell the schema of a row with columns {sorted(row)}: expected FUNSD-style "
                        "(tokens or words, bboxes, ner_tags, image) or RVL-CDIP-style (image, label)")


def row_to_doc(row: dict[str, Any], doc_id: str, *, tag_names: Sequence[str] = FUNSD_NER_TAGS,
               class_names: Sequence[str] = RVL_CDIP_CLASSES, box_level: str | None = None,
               allow_local_paths: bool = False, ocr: bool = False) -> tuple[Document, RowLayout]:
    """A row's :class:`Document` and its :class:`RowLayout`; ``box_level`` ``None`` reads the convention from the row.

    Every malformed field (a box that is not four numbers, a token that is not text, a ``dogood`` column that
    is not a record) is a :class:`DocumentError` naming the row."""
    try:
        return _row_to_doc(row, doc_id, tag_names=tag_names, class_names=class_names, box_level=box_level,
                           allow_local_paths=allow_local_paths, ocr=ocr)
    except DocumentError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, OverflowError, AttributeError) as exc:
        raise DocumentError(f"malformed row ({type(exc).__name__}: {exc})", doc_id=doc_id) from None


def _row_to_doc(row: dict[str, Any], doc_id: str, *, tag_names: Sequence[str], class_names: Sequence[str],
                box_level: str | None, allow_local_paths: bool, ocr: bool) -> tuple[Document, RowLayout]:
    schema = row_schema(row)
    text_column = "tokens" if "tokens" in row else ("words" if "words" in row else None)
    image, image_was, mode, scale, ndim = _image(row, doc_id, allow_local_paths)
    tags = row.get("ner_tags") or []
    tags_as_names = any(isinstance(t, str) for t in tags)
    label = row.get("label")
    label_as_name = isinstance(label, str)
    if FULL_COLUMN in row and row[FULL_COLUMN]:
        doc = row_to_document({**row, "id": doc_id, "image": image,
                               "label": _class_name(label, class_names, doc_id) if schema == "rvl_cdip" else None},
                              schema)
        level = box_level or _full_record_box_level(doc, row)
        return doc, RowLayout(schema, True, text_column, level, tags_as_names, label_as_name, mode, image_was, scale,
                              ndim)
    if schema == "docvqa":
        raise DocumentError("a DocVQA-style row can be read only with dogood's full record (the dogood column)",
                            doc_id=doc_id)
    w, h = image.width, image.height
    texts = _list(row.get(text_column), text_column, doc_id) if text_column else []
    boxes = _list(row.get("bboxes"), "bboxes", doc_id)
    bad = next((i for i, t in enumerate(texts) if not isinstance(t, str)), None)
    if bad is not None:
        raise DocumentError(f"{text_column}[{bad}] must be text, got {texts[bad]!r}", doc_id=doc_id)
    if not _int_boxes(boxes):  # (boxes of four plain integers, as rows have them, need no check one by one)
        boxes = [_box(b, i, doc_id) for i, b in enumerate(boxes)]
    table = check_normalized(boxes, doc_id)  # the boxes as one integer array, reused below
    try:
        fs.check_words(texts, what=text_column or "tokens")
    except fs.FileRefused as exc:
        raise DocumentError(exc.reason, doc_id=doc_id) from None
    if schema == "funsd":
        if not len(texts) == len(boxes) == len(tags):
            raise DocumentError(f"{text_column or 'tokens'}, bboxes and ner_tags differ in length "
                                f"({len(texts)}, {len(boxes)}, {len(tags)})", doc_id=doc_id)
        names = _tag_names(tags, tag_names, doc_id)
        words = tuple(map(Word, texts, pixel_boxes(boxes if table is None else table, w, h)))
        entities = entities_from_iob(names, doc_id)
        doc = _record(doc_id, image, words, entities)
        level = box_level or _hub_box_level(boxes, entities)
        return doc, RowLayout(schema, False, text_column, level, tags_as_names, False, mode, image_was, scale, ndim)
    if texts and len(texts) != len(boxes):
        raise DocumentError(f"{text_column} and bboxes differ in length ({len(texts)}, {len(boxes)})", doc_id=doc_id)
    words = tuple(Word(str(t), b) for t, b in zip(texts, pixel_boxes(boxes if table is None else table, w, h)))
    if not words and ocr:
        from dogood.page.ocr import ocr_words

        words = ocr_words(image, cache=False)
    doc = Document(doc_id, image, words, label=_class_name(label, class_names, doc_id))
    return doc, RowLayout(schema, False, text_column, box_level or "word", False, label_as_name, mode, image_was,
                          scale, ndim)


def _record(doc_id: str, image: PageImage, words: tuple[Word, ...], entities: tuple[Entity, ...]) -> Document:
    """``Document(doc_id, image, words, entities)`` for parts read from a row: the entities, made from IOB tags
    of the words (:func:`entities_from_iob`), are valid by construction and the boxes lie inside the page
    (:func:`check_normalized` refused any outside 0-1000), so only what a row can get wrong is checked, at once (a non-empty id,
    a positive page size, valid UTF-8, no box of negative size); when one of these fails, the
    :class:`Document` is built as usual and raises its own error."""
    sizes = np.array([w.box for w in words], dtype=np.int64).reshape(-1, 4)
    try:
        "".join([doc_id, *(w.text for w in words)]).encode("utf-8")
        valid = (isinstance(doc_id, str) and bool(doc_id) and image.width > 0 and image.height > 0
                 and not ((sizes[:, 2] < sizes[:, 0]) | (sizes[:, 3] < sizes[:, 1]) | (sizes[:, :2] < 0).any(axis=1)
                          | (sizes[:, 2] > image.width) | (sizes[:, 3] > image.height)).any())
    except (UnicodeEncodeError, TypeError):
        valid = False
    if not valid:
        return Document(doc_id, image, words, entities)
    return Document.from_checked_parts(doc_id, image, words, entities)


def _list(value: Any, column: str, doc_id: str) -> list:
    """A list column's values (``None``: empty); anything but a list or tuple is a :class:`DocumentError`."""
    if value is None:
        return []
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise DocumentError(f"{column} must be a list, got {type(value).__name__}", doc_id=doc_id)
    return list(value)


_INT = frozenset({int})
_SEQUENCE = frozenset({list, tuple})
_FOUR = frozenset({4})


def _int_boxes(boxes: list) -> bool:
    """Whether every box is a list or tuple of four plain ``int`` values within int64 (what :func:`_box` would
    accept unchanged, and no coordinate so large that ``float`` overflows), tested a column at a time."""
    if not boxes:
        return True
    if not (set(map(type, boxes)) <= _SEQUENCE and set(map(len, boxes)) <= _FOUR):
        return False
    values = [v for b in boxes for v in b]
    return set(map(type, values)) <= _INT and -2**63 <= min(values) and max(values) < 2**63


def _box(box: Any, i: int, doc_id: str) -> list[float]:
    """A 0-1000 box: four finite numbers (a :class:`DocumentError` naming the row and the token otherwise)."""
    if isinstance(box, np.ndarray):
        box = box.tolist()
    if (not isinstance(box, (list, tuple)) or len(box) != 4
            or not all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
                       for v in box)
            or not all(math.isfinite(float(v)) for v in box)):
        raise DocumentError(f"bboxes[{i}] must be four finite numbers (0-1000), got {box!r}", doc_id=doc_id)
    return list(box)


def doc_to_row(doc: Document, layout: RowLayout, row: dict[str, Any], original: Document, *,
               tag_names: Sequence[str] = FUNSD_NER_TAGS, class_names: Sequence[str] = RVL_CDIP_CLASSES,
               input_image: Any = None) -> dict[str, Any]:
    """``row`` with the shifted ``doc``'s values in its columns (see the module docstring)."""
    out = dict(row)
    if doc.image is original.image and input_image is not None:
        out["image"] = input_image  # pixels untouched: the caller's own object
    else:
        out["image"] = _image_out(doc, layout)
    if layout.full:
        written = document_to_row(doc, layout.schema, layout.box_level, labels_of(tag_names), image=False)
        for column in ("tokens", "bboxes", "ner_tags", "questions", FULL_COLUMN):
            if column in written:
                out[column] = written[column]
        if layout.text_column == "words":
            out["words"] = out.pop("tokens")
    else:
        if layout.schema == "funsd":
            index, tags = iob_tags(doc)
        else:
            index = token_index(doc) if layout.text_column else []
        if layout.text_column:
            w, h = doc.width, doc.height
            out[layout.text_column] = [doc.words[i].text for i in index]
            out["bboxes"] = normalize_boxes(token_boxes(doc, layout.box_level, index), w, h)
        if layout.schema == "funsd":
            unknown = sorted(set(tags) - set(tag_names))
            if unknown:
                raise DocumentError(f"the shifted entities have tags {unknown} outside the row's {list(tag_names)}",
                                    doc_id=doc.id)
            if layout.tags_as_names:
                out["ner_tags"] = tags
            else:
                number = {name: i for i, name in reversed(list(enumerate(tag_names)))}  # the first of equal names
                out["ner_tags"] = [number[t] for t in tags]
    if layout.schema == "rvl_cdip" and "label" in row:  # an unlabelled row (label None) stays unlabelled
        out["label"] = (None if doc.label is None else doc.label if layout.label_as_name
                        else list(class_names).index(doc.label))
    return out


def labels_of(tag_names: Sequence[str]) -> tuple[str, ...] | None:
    """The entity labels whose IOB tags are ``tag_names`` (``None`` for FUNSD's own)."""
    if tuple(tag_names) == FUNSD_NER_TAGS:
        return None
    return tuple(dict.fromkeys(t[2:].lower() for t in tag_names if t[:2] in ("B-", "I-")))


def entities_from_iob(tags: Sequence[str], doc_id: str, where: str | None = None,
                      names: Sequence[str] | None = None) -> tuple[Entity, ...]:
    """Entities from IOB tags: ``B-X`` opens one, ``I-X`` continues it, ``O`` is an ``other`` entity per word.

    A tag must be one of ``names`` (the dataset's), or ``O``, ``B-X`` or ``I-X`` when it declares none."""
    entities: list[Entity] = []
    current: list[int] = []
    label = None
    read: dict[str, tuple[bool, str | None]] = {}  # tag -> (opens an entity, its label; None for O), once per tag
    for i, tag in enumerate(tags):
        seen = read.get(tag) if type(tag) is str else None
        if seen is None:
            known = tag in names if names else (tag == "O" or (tag[:2] in ("B-", "I-") and len(tag) > 2))
            if not isinstance(tag, str) or not known:
                raise DocumentError(f"unknown tag {tag!r} at token {i}", doc_id=doc_id, path=where)
            seen = (tag.startswith("B-"), None if tag == "O" else tag[2:].lower())
            if type(tag) is str:
                read[tag] = seen
        opens, name = seen
        if name is None:
            if current:
                entities.append(Entity(len(entities), label, tuple(current)))
            entities.append(Entity(len(entities), "other", (i,)))
            current, label = [], None
        elif opens or label != name:
            if current:
                entities.append(Entity(len(entities), label, tuple(current)))
            current, label = [i], name
        else:
            current.append(i)
    if current:
        entities.append(Entity(len(entities), label, tuple(current)))
    return tuple(entities)


def _tag_names(tags: list, names: Sequence[str], doc_id: str) -> list[str]:
    """:func:`_tag_name` of each tag: at once when all are integers in range or all are known names."""
    kinds = set(map(type, tags))
    if not tags:
        return []
    if kinds <= _INT and min(tags) >= 0 and max(tags) < len(names):
        return [names[t] for t in tags]
    if kinds == {str} and set(tags) <= set(names):
        return list(tags)
    return [_tag_name(t, names, doc_id) for t in tags]


def _tag_name(tag: Any, names: Sequence[str], doc_id: str) -> str:
    if isinstance(tag, str):
        if tag not in names:
            raise DocumentError(f"unknown tag {tag!r}; the row's tags are {list(names)}", doc_id=doc_id)
        return tag
    if isinstance(tag, (int, np.integer)) and not isinstance(tag, bool) and 0 <= tag < len(names):
        return names[int(tag)]
    raise DocumentError(f"ner_tags must be tag names or integers below {len(names)}, got {tag!r}", doc_id=doc_id)


def _class_name(label: Any, names: Sequence[str], doc_id: str) -> str | None:
    if label is None:
        return None
    if isinstance(label, str) and label in names:
        return label
    if isinstance(label, (int, np.integer)) and not isinstance(label, bool) and 0 <= label < len(names):
        return names[int(label)]
    raise DocumentError(f"label must be one of the {len(names)} classes or its index, got {label!r}", doc_id=doc_id)


def _image(row: dict[str, Any], doc_id: str, allow_local_paths: bool):
    """``(page, how it came, PIL mode, white value of a deep mode, array dimensions)``: a PIL image in mode L or
    RGB is wrapped as it is (:meth:`PageImage.from_pil`, pixels taken only if a shift reads them), and an RGB page,
    PIL or array, whose channels are equal is read as the grayscale page it is."""
    if "image" in row and row["image"] is not None:
        cell = row["image"]
        if isinstance(cell, dict):  # datasets' undecoded {"bytes", "path"}
            data = cell.get("bytes")
            if not data or not isinstance(data, (bytes, bytearray)):
                raise DocumentError("the image cell holds no bytes", doc_id=doc_id)
            return PageImage.from_bytes(bytes(data), name=doc_id), "cell", None, None, 0
        if isinstance(cell, Image.Image):
            mode = cell.mode
            if mode not in PAGE_MODES:
                raise DocumentError(f"the PIL image has mode {mode!r}, which dogood cannot give back at its own "
                                    f"scale; convert it to one of {', '.join(PAGE_MODES)}", doc_id=doc_id)
            if mode in DEEP_MODES:
                try:
                    cell.load()
                    scale = pixel_scale(cell)
                    page = PageImage.from_array(standard_pixels(cell, scale))
                except (OSError, ValueError) as exc:
                    raise DocumentError(f"cannot read the {mode} PIL image ({exc})", doc_id=doc_id) from None
                return page, "pil", mode, scale, 0
            if mode in ("L", "RGB"):
                try:
                    cell.load()
                except (OSError, ValueError) as exc:
                    raise DocumentError(f"cannot read the PIL image ({exc})", doc_id=doc_id) from None
                return PageImage.from_pil(cell), "pil", mode, None, 0
            return as_page_image(cell, doc_id=doc_id), "pil", mode, None, 0
        ndim = getattr(cell, "ndim", 0)
        if (isinstance(cell, np.ndarray) and cell.dtype == np.uint8 and ndim == 3 and cell.shape[2] == 3
                and np.array_equal(cell[:, :, 0], cell[:, :, 1]) and np.array_equal(cell[:, :, 0], cell[:, :, 2])):
            cell = cell[:, :, 0]
        return as_page_image(cell, doc_id=doc_id), "array", None, None, ndim
    path = row.get("image_path")
    if path:
        if not isinstance(path, str):
            raise DocumentError(f"image_path must be a file name, got {type(path).__name__}", doc_id=doc_id)
        if not allow_local_paths:
            raise DocumentError(f"the row has no image, only a local file name ({str(path)!r}); dogood opens files "
                                "a row names only with allow_local_paths=True", doc_id=doc_id)
        return PageImage.from_file(path), "path", "RGB", None, 0
    raise DocumentError("the row has no image (an 'image' column, or 'image_path' with allow_local_paths=True)",
                        doc_id=doc_id)


def _image_out(doc: Document, layout: RowLayout):
    if layout.image_was == "array":
        pixels = np.asarray(doc.image.to_array())
        if pixels.ndim == 2 and layout.image_ndim == 3:  # a grayscale-read RGB page goes back in three channels
            pixels = np.repeat(pixels[:, :, None], 3, axis=2)
        return pixels
    if layout.image_was == "cell":
        return {"bytes": doc.image.encoded_bytes(), "path": None}
    pil = doc.image.to_pil()
    mode = layout.image_mode or ("RGB" if layout.schema != "rvl_cdip" else "L")
    if mode in DEEP_MODES:
        return _deep_image(pil, mode, layout.image_scale or pixel_scale_default(mode))
    if pil.mode == "L" and mode == "RGB":  # the grey band three times: convert("RGB")'s pixels, in a third the time
        return Image.merge("RGB", (pil, pil, pil))
    return pil if pil.mode == mode else pil.convert(mode)


def pixel_scale_default(mode: str) -> float:
    return 65535.0 if mode.startswith("I;16") else 255.0


def _deep_image(pil: Image.Image, mode: str, scale: float) -> Image.Image:
    """An 8-bit page back in an ``I;16``, ``I`` or ``F`` mode at the input's value scale (white = ``scale``)."""
    values = np.asarray(pil.convert("L"), dtype=np.float64) * (scale / 255.0)
    if mode == "F":
        return Image.fromarray(values.astype(np.float32), "F")
    if mode == "I":
        return Image.fromarray(np.rint(values).astype(np.int32), "I")
    words = np.clip(np.rint(values), 0, 65535)
    order = ">u2" if mode == "I;16B" else "<u2" if mode in ("I;16", "I;16L") else "=u2"
    return Image.frombytes(mode, pil.size, words.astype(order).tobytes())


def _hub_box_level(boxes: Sequence[Sequence[int]], entities: Sequence[Entity]) -> str:
    """``segment`` when every multi-token entity's tokens share one box (``nielsr/funsd-layoutlmv3``), else ``word``."""
    multi = [e for e in entities if len(e.word_ids) > 1]
    if multi and all(all(list(boxes[i]) == list(boxes[e.word_ids[0]]) for i in e.word_ids) for e in multi):
        return "segment"
    return "word"


def _full_record_box_level(doc: Document, row: dict[str, Any]) -> str:
    """The convention the row's ``bboxes`` were written in: the one whose boxes equal them (``segment`` on a tie)."""
    index = token_index(doc)
    given = [list(b) for b in row.get("bboxes") or []]
    for level in ("segment", "word"):
        if level == "segment" and not doc.entities:
            continue
        if normalize_boxes(token_boxes(doc, level, index), doc.width, doc.height) == given:
            return level
    return "word" if not doc.entities else "segment"
