"""Output schemas as Hugging Face ``Features``, and documents to rows and back.

Three schemas, named after the datasets whose training code they fit. Their
top-level columns are exactly what that code reads; everything else sits in
one struct column, ``dogood``, a name no Hub FUNSD, RVL-CDIP or DocVQA loader
uses, so code written for those datasets runs unchanged or fails loudly
(``KeyError``) and never silently reads dogood's fields.

``funsd`` (token classification, as the Hub's FUNSD loaders):
    ``id``, ``tokens``, ``bboxes`` (0-1000, in a named box convention, see
    below), ``ner_tags`` (ClassLabel, the 7 IOB names in the Hub's order),
    ``image`` (decodes to RGB, as the loaders give it).
``rvl_cdip`` (document classification, as ``aharley/rvl_cdip``):
    ``id``, ``image`` (decodes to mode ``L``, as the Hub's RVL-CDIP TIFFs do),
    ``label`` (ClassLabel, the 16 classes), ``tokens`` and ``bboxes``
    (0-1000, the OCR words).
``docvqa`` (question answering, one row per page):
    ``id``, ``image`` (RGB), ``tokens`` and ``bboxes`` (the OCR words),
    ``questions`` (``question_id``, ``question``, ``answers``). DocVQA's own
    files have a row per question; a page's image is stored once here.

``dogood`` (every schema): ``width``, ``height``, ``words`` (every word's
text, blank ones included), ``word_boxes`` (absolute pixel boxes),
``entities`` (id, label, word ids, links), ``provenance`` (shift, JSON
parameters, seed, skip reason, counts). From it :func:`row_to_document`
rebuilds the exact record; rows of dogood < 0.2, which kept these as
top-level columns, are read too.

``tokens`` leaves out words whose text is empty or blank, as the Hub's FUNSD
loaders do (FUNSD test has 266 of 8,973); ``ner_tags`` are IOB tags of the
remaining words of each entity (``other`` entities are all ``O``).

Box conventions (``box_level``), :func:`token_boxes`:

``segment`` (default for ``funsd``)
    every token gets its entity's box: the union of the 0-1000 boxes of the
    entity's non-blank words, exactly as microsoft/unilm's LayoutLMv3 FUNSD
    loader computes it (``get_line_bbox``; the data of ``nielsr/funsd-layoutlmv3``
    and the LayoutLMv3 tutorials). Do-GOOD's Table 2 models all use this
    cell-level layout. A word in no entity keeps its own box.
``word`` (default for ``rvl_cdip`` and ``docvqa``)
    every token gets its own box, as ``nielsr/funsd`` and the LayoutLMv2
    loader in unilm's layoutlmft.

Segment boxes are derived when a row is written, from the shifted words, so
every shift's boxes carry through.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np

from dogood.core.boxes import normalize_boxes
from dogood.core.document import Document, Entity, PageImage, QAPair, ShiftRecord, Word, standard_pixels

if TYPE_CHECKING:  # pragma: no cover
    from datasets import Features

#: FUNSD's entity labels, in the order its IOB tags take (``other`` is ``O``).
FUNSD_LABELS = ("header", "question", "answer", "other")
FUNSD_NER_TAGS = ("O", "B-HEADER", "I-HEADER", "B-QUESTION", "I-QUESTION", "B-ANSWER", "I-ANSWER")
RVL_CDIP_CLASSES = (
    "letter",
    "form",
    "email",
    "handwritten",
    "advertisement",
    "scientific report",
    "scientific publication",
    "specification",
    "file folder",
    "news article",
    "budget",
    "invoice",
    "presentation",
    "questionnaire",
    "resume",
    "memo",
)
SCHEMAS = ("funsd", "rvl_cdip", "docvqa")
#: Conventions of the ``bboxes`` column (module docstring).
BOX_LEVELS = ("segment", "word")
#: The convention each schema uses unless a recipe or ``--box-level`` says otherwise.
DEFAULT_BOX_LEVEL = {"funsd": "segment", "rvl_cdip": "word", "docvqa": "word"}
#: The mode ``image`` decodes to: what the Hub's loaders of each dataset give.
IMAGE_MODES = {"funsd": "RGB", "rvl_cdip": "L", "docvqa": "RGB"}
#: The struct column that holds the full record.
FULL_COLUMN = "dogood"
#: The column of word quads, written only when asked (``quads: true``, ``dogood build --quads``): per token (as
#: ``bboxes``), the word's four corners ``[x0, y0, x1, y1, x2, y2, x3, y3]`` in absolute pixels (pixel edges;
#: top-left, top-right, bottom-right, bottom-left of the word as written), where geometric shifts put them
#: (:mod:`dogood.page.quads`); an upright word's are its box's corners. The record (``dogood``) then holds every
#: word's, as ``word_quads``.
QUADS_COLUMN = "quads"
#: Its fields (top-level columns in rows written by dogood < 0.2).
FULL_FIELDS = ("width", "height", "words", "word_boxes", "entities", "provenance")


def _full_features() -> dict:
    """The ``dogood`` struct column's features (``datasets`` is imported here, when a schema is asked for, so that
    reading a recipe or ``dogood list`` does not load it)."""
    from datasets import List, Value

    return {
        "width": Value("int32"),
        "height": Value("int32"),
        "words": List(Value("string")),
        "word_boxes": List(List(Value("int32"))),
        "entities": List(
            {
                "id": Value("int32"),
                "label": Value("string"),
                "word_ids": List(Value("int32")),
                "links": List(List(Value("int32"))),
            }
        ),
        "provenance": List(
            {
                "shift": Value("string"),
                "params": Value("string"),
                "seed": Value("int64"),
                "skipped": Value("string"),
                "counts": Value("string"),
            }
        ),
    }


def ner_tag_names(labels: tuple[str, ...] | list[str] | None = None) -> tuple[str, ...]:
    """The ``ner_tags`` names of FUNSD-style data with entity ``labels`` (default :data:`FUNSD_LABELS`):
    ``O``, then ``B-X`` and ``I-X`` for each label but ``other`` (which is ``O``), ``X`` the label upper-cased.

    FUNSD's labels give exactly :data:`FUNSD_NER_TAGS`. Raises ``ValueError`` when two labels make the same tag.
    """
    names = ["O"]
    for label in FUNSD_LABELS if labels is None else labels:
        if label != "other":
            names += [f"B-{label.upper()}", f"I-{label.upper()}"]
    if len(set(names)) != len(names):
        raise ValueError(f"entity labels {list(labels)} make the same IOB tag twice (tags are upper-cased)")
    return tuple(names)


def label_order(found) -> tuple[str, ...]:
    """The entity labels of FUNSD-style data found in its annotations, in tag order: :data:`FUNSD_LABELS` when
    they are all FUNSD's (so FUNSD keeps its tags whatever subset a split has), else sorted."""
    found = set(found)
    return FUNSD_LABELS if found <= set(FUNSD_LABELS) else tuple(sorted(found))


def features_for(schema: str, labels: tuple[str, ...] | list[str] | None = None, quads: bool = False) -> Features:
    """The ``datasets.Features`` of an output schema (``funsd``, ``rvl_cdip`` or ``docvqa``).

    ``labels``: the entity labels of FUNSD-style data (default FUNSD's), which name ``ner_tags``
    (:func:`ner_tag_names`). ``quads``: add the ``quads`` column and the record's ``word_quads``
    (:data:`QUADS_COLUMN`).
    """
    if schema not in SCHEMAS:
        raise ValueError(f"unknown schema {schema!r}; expected one of {', '.join(SCHEMAS)}")
    from datasets import ClassLabel, Features, Image, List, Value

    image = Image(mode=IMAGE_MODES[schema])
    tokens = {"tokens": List(Value("string")), "bboxes": List(List(Value("int64")))}
    if schema == "funsd":
        columns = {"id": Value("string"), **tokens, "ner_tags": List(ClassLabel(names=list(ner_tag_names(labels)))),
                   "image": image}
    elif schema == "rvl_cdip":
        columns = {"id": Value("string"), "image": image, "label": ClassLabel(names=list(RVL_CDIP_CLASSES)), **tokens}
    else:
        columns = {"id": Value("string"), "image": image, **tokens,
                   "questions": List({"question_id": Value("string"), "question": Value("string"),
                                      "answers": List(Value("string"))})}
    if quads:
        columns[QUADS_COLUMN] = List(List(Value("float32")))
        return Features({**columns, FULL_COLUMN: {**_full_features(), "word_quads": List(List(Value("float32")))}})
    return Features({**columns, FULL_COLUMN: _full_features()})


def check_box_level(box_level: str, schema: str) -> None:
    """Raise ``ValueError`` when ``box_level`` is unknown or cannot apply to ``schema``."""
    if box_level not in BOX_LEVELS:
        raise ValueError(f"box_level must be one of {', '.join(BOX_LEVELS)}, got {box_level!r}")
    if box_level == "segment" and schema != "funsd":
        raise ValueError(f"box_level segment needs entities, which {schema}-style data does not have "
                         "(its words come from OCR); use box_level word")


def token_index(doc: Document) -> list[int]:
    """Indices of the token words: those with non-blank text, in order."""
    return [i for i, w in enumerate(doc.words) if w.text.strip()]


def iob_tags(doc: Document) -> tuple[list[int], list[str]]:
    """Indices of the token words (non-blank text) and their IOB tags.

    Words in an ``other`` entity or in no entity are ``O``; the first token of
    a header/question/answer entity is ``B-``, the rest ``I-``.
    """
    words = doc.words
    tags: list[str | None] = [None] * len(words)
    for ent in doc.entities:
        if ent.label == "other":
            begin = inside = "O"
        else:
            begin, inside = "B-" + ent.label.upper(), "I-" + ent.label.upper()
        first = True
        for wid in ent.word_ids:
            if not words[wid].text.strip():
                continue
            tags[wid] = begin if first else inside
            first = False
    index = token_index(doc)
    return index, [tags[i] or "O" for i in index]


def token_boxes(doc: Document, box_level: str, index: list[int] | None = None) -> list[tuple[int, int, int, int]]:
    """The pixel box of each token word (``index``, default :func:`token_index`) under ``box_level``.

    ``word``: the word's own box. ``segment``: the union of the boxes of its
    entity's non-blank words (its own box when it is in no entity).
    Normalising to 0-1000 (:func:`dogood.core.boxes.normalize_box`, monotone)
    commutes with the union, so the normalised segment box equals unilm's
    union of normalised word boxes exactly.
    """
    if index is None:
        index = token_index(doc)
    if box_level == "word":
        return [doc.words[i].box for i in index]
    if box_level != "segment":
        raise ValueError(f"box_level must be one of {', '.join(BOX_LEVELS)}, got {box_level!r}")
    segment: dict[int, tuple[int, int, int, int]] = {}
    for ent in doc.entities:
        ids = [i for i in ent.word_ids if doc.words[i].text.strip()]
        if ids:
            box = (min(doc.words[i].box[0] for i in ids), min(doc.words[i].box[1] for i in ids),
                   max(doc.words[i].box[2] for i in ids), max(doc.words[i].box[3] for i in ids))
            segment.update((i, box) for i in ids)
    return [segment.get(i, doc.words[i].box) for i in index]


def _image_cell(doc: Document) -> dict[str, Any]:
    ext = (doc.image.format or "png").lower() if not doc.image.modified else doc.image.encoding
    ext = {"jpeg": "jpg", "tiff": "tif"}.get(ext, ext)
    return {"bytes": doc.image.encoded_bytes(), "path": f"{doc.id.replace('/', '_')}.{ext}"}


def _full_fidelity(doc: Document, quads: bool = False) -> dict[str, Any]:
    extra = {"word_quads": _quad_lists(doc.words)} if quads else {}
    return {
        "width": doc.width,
        "height": doc.height,
        "words": [w.text for w in doc.words],
        "word_boxes": [list(w.box) for w in doc.words],
        "entities": [
            {"id": e.id, "label": e.label, "word_ids": list(e.word_ids), "links": [list(p) for p in e.links]}
            for e in doc.entities
        ],
        "provenance": [
            {"shift": r.shift, "params": r.params_json(), "seed": r.seed, "skipped": r.skipped, "counts": r.counts_json()}
            for r in doc.provenance
        ],
        **extra,
    }


def _quad_lists(words) -> list[list[float]]:
    """Each word's quad (its box's corners when it has none) as a list of 8 numbers."""
    return [list(w.quad) if w.quad is not None else [float(v) for v in w.corners().reshape(-1)] for w in words]


def document_to_row(doc: Document, schema: str, box_level: str | None = None,
                    labels: tuple[str, ...] | list[str] | None = None, quads: bool = False, *,
                    image: bool = True) -> dict[str, Any]:
    """One output row (Arrow-ready: ClassLabels as ints, image as embedded bytes).

    ``box_level`` is the convention of ``bboxes`` (default :data:`DEFAULT_BOX_LEVEL` of the schema);
    ``labels`` the entity labels of FUNSD-style data (default FUNSD's, :func:`ner_tag_names`); ``quads``: add
    the :data:`QUADS_COLUMN` column (and ``word_quads`` in the record); ``image=False`` leaves the ``image``
    column out (and new pixels unencoded).
    """
    if schema not in SCHEMAS:
        raise ValueError(f"unknown schema {schema!r}")
    box_level = box_level or DEFAULT_BOX_LEVEL[schema]
    w, h = doc.width, doc.height
    if schema == "funsd":
        index, tags = iob_tags(doc)
        names = FUNSD_NER_TAGS if labels is None else ner_tag_names(labels)
        position = {name: k for k, name in enumerate(names)}
        try:
            tag_ids = [position[t] for t in tags]
        except KeyError:
            bad = sorted(set(tags) - set(names))
            known = ", ".join(l for l in (FUNSD_LABELS if labels is None else labels))
            raise ValueError(f"document {doc.id!r}: entity labels outside the dataset's ({known}): tags "
                             f"{', '.join(bad)}") from None
    else:
        index = token_index(doc)
    tokens = {
        "tokens": [doc.words[i].text for i in index],
        "bboxes": normalize_boxes(token_boxes(doc, box_level, index), w, h),
    }
    full = {FULL_COLUMN: _full_fidelity(doc, quads)}
    if quads:
        words = _quad_lists(doc.words[i] for i in index)
        full = {QUADS_COLUMN: words, **full}
    cell = {"image": _image_cell(doc)} if image else {}
    if schema == "funsd":
        return {"id": doc.id, **tokens, "ner_tags": tag_ids, **cell, **full}
    if schema == "rvl_cdip":
        if doc.label not in RVL_CDIP_CLASSES:
            raise ValueError(f"document {doc.id!r}: label {doc.label!r} is not an RVL-CDIP class")
        return {"id": doc.id, **cell, "label": RVL_CDIP_CLASSES.index(doc.label), **tokens, **full}
    questions = [{"question_id": q.id, "question": q.question, "answers": list(q.answers)} for q in doc.qa]
    return {"id": doc.id, **cell, **tokens, "questions": questions, **full}


def has_full_record(columns) -> bool:
    """Whether rows with these columns carry the full record (the ``dogood`` struct, or dogood < 0.2's columns)."""
    columns = set(columns)
    return FULL_COLUMN in columns or all(c in columns for c in ("words", "word_boxes", "entities", "provenance"))


def row_to_document(row: dict[str, Any], schema: str) -> Document:
    """Rebuild the exact :class:`Document` from a row with the full record (:func:`has_full_record`).

    ``row["image"]`` may be the stored ``{"bytes", "path"}`` cell or a decoded
    PIL image (as ``datasets`` returns by default).
    """
    full = row[FULL_COLUMN] if FULL_COLUMN in row else row  # dogood < 0.2: top-level columns
    image = _page_image(row["image"], row.get("id"))
    quads = full.get("word_quads") if hasattr(full, "get") else None
    if quads is not None and len(quads) == len(full["words"]):
        words = tuple(Word(t, tuple(b), q) for t, b, q in zip(full["words"], full["word_boxes"], quads))
    else:
        words = tuple(Word(t, tuple(b)) for t, b in zip(full["words"], full["word_boxes"]))
    entities = tuple(
        Entity(e["id"], e["label"], tuple(e["word_ids"]), tuple(tuple(p) for p in e["links"]))
        for e in full.get("entities") or ()
    )
    provenance = tuple(
        ShiftRecord(p["shift"], json.loads(p["params"]), p["seed"], p.get("skipped"), *ShiftRecord.counts_from_json(p.get("counts")))
        for p in full.get("provenance") or ()
    )
    label = None
    if schema == "rvl_cdip":
        label = row["label"] if isinstance(row["label"], str) else RVL_CDIP_CLASSES[row["label"]]
    qa = tuple(QAPair(q["question"], tuple(q["answers"]), q["question_id"]) for q in row.get("questions") or ())
    return Document(id=row["id"], image=image, words=words, entities=entities, label=label, qa=qa, provenance=provenance)


def _page_image(cell: Any, doc_id: str | None) -> PageImage:
    """The stored ``{"bytes", "path"}`` cell as-is, or a decoded PIL image / array as pixels."""
    if isinstance(cell, PageImage):
        return cell
    if isinstance(cell, dict):
        return PageImage.from_bytes(cell["bytes"], name=cell.get("path") or doc_id, verify=False)
    if isinstance(cell, np.ndarray):
        return PageImage.from_array(cell)
    return PageImage.from_array(standard_pixels(cell))
