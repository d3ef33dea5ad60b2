"""Output schemas as Hugging Face ``Features``, and documents to rows and back.

Two schemas, named after the datasets whose training scripts they fit:

``funsd`` (token classification, as the Hub's FUNSD loaders):
    ``id``, ``tokens``, ``bboxes`` (0-1000), ``ner_tags`` (ClassLabel, the
    7 IOB names in the Hub's order), ``image`` (embedded bytes), plus the
    full-fidelity columns below.
``rvl_cdip`` (document classification):
    ``id``, ``image``, ``label`` (ClassLabel, the 16 RVL-CDIP classes),
    ``words`` and ``bboxes`` (0-1000), plus the full-fidelity columns.
``docvqa`` (extractive question answering, one row per page):
    ``id``, ``image``, ``words`` and ``bboxes`` (0-1000, the OCR words),
    ``questions`` (``question_id``, ``question``, ``answers``), plus the
    full-fidelity columns. DocVQA's own files have a row per question; a
    page with several questions is one row here, so a page's image is
    stored once (``dataset.map`` with ``batched=True`` explodes it).

Full-fidelity columns, in both: ``width``, ``height``, ``words`` (every word's
text, empty ones included), ``word_boxes`` (absolute pixel boxes),
``entities`` (id, label, word ids, links), ``provenance`` (shift, JSON
parameters, seed, skip reason). From them :func:`row_to_document` rebuilds the
exact record.

``tokens`` leaves out words whose text is empty or blank, as the Hub's FUNSD
loaders do (FUNSD test has 266 of 8,973); ``ner_tags`` are IOB tags of the
remaining words of each entity (``other`` entities are all ``O``).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from datasets import ClassLabel, Features, Image, List, Value

from dogood.boxes import normalize_box
from dogood.document import Document, Entity, PageImage, QAPair, ShiftRecord, Word, standard_pixels

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

_FULL_FIDELITY = {
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


def features_for(schema: str) -> Features:
    """The ``datasets.Features`` of an output schema (``funsd``, ``rvl_cdip`` or ``docvqa``)."""
    if schema == "funsd":
        return Features(
            {
                "id": Value("string"),
                "tokens": List(Value("string")),
                "bboxes": List(List(Value("int64"))),
                "ner_tags": List(ClassLabel(names=list(FUNSD_NER_TAGS))),
                "image": Image(),
                **_FULL_FIDELITY,
            }
        )
    if schema == "rvl_cdip":
        return Features(
            {
                "id": Value("string"),
                "image": Image(),
                "label": ClassLabel(names=list(RVL_CDIP_CLASSES)),
                "bboxes": List(List(Value("int64"))),
                **_FULL_FIDELITY,
            }
        )
    if schema == "docvqa":
        return Features(
            {
                "id": Value("string"),
                "image": Image(),
                "bboxes": List(List(Value("int64"))),
                "questions": List({"question_id": Value("string"), "question": Value("string"), "answers": List(Value("string"))}),
                **_FULL_FIDELITY,
            }
        )
    raise ValueError(f"unknown schema {schema!r}; expected one of {', '.join(SCHEMAS)}")


def iob_tags(doc: Document) -> tuple[list[int], list[str]]:
    """Indices of the token words (non-blank text) and their IOB tags.

    Words in an ``other`` entity or in no entity are ``O``; the first token of
    a header/question/answer entity is ``B-``, the rest ``I-``.
    """
    tags: list[str | None] = [None] * len(doc.words)
    for ent in doc.entities:
        first = True
        for wid in ent.word_ids:
            if not doc.words[wid].text.strip():
                continue
            if ent.label == "other":
                tags[wid] = "O"
            else:
                tags[wid] = ("B-" if first else "I-") + ent.label.upper()
            first = False
    index = [i for i, w in enumerate(doc.words) if w.text.strip()]
    return index, [tags[i] or "O" for i in index]


def _image_cell(doc: Document) -> dict[str, Any]:
    ext = (doc.image.format or "png").lower() if not doc.image.modified else doc.image.encoding
    ext = {"jpeg": "jpg", "tiff": "tif"}.get(ext, ext)
    return {"bytes": doc.image.encoded_bytes(), "path": f"{doc.id.replace('/', '_')}.{ext}"}


def _full_fidelity(doc: Document) -> dict[str, Any]:
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
    }


def document_to_row(doc: Document, schema: str) -> dict[str, Any]:
    """One output row (Arrow-ready: ClassLabels as ints, image as embedded bytes)."""
    w, h = doc.width, doc.height
    if schema == "funsd":
        index, tags = iob_tags(doc)
        try:
            tag_ids = [FUNSD_NER_TAGS.index(t) for t in tags]
        except ValueError:
            bad = sorted(set(tags) - set(FUNSD_NER_TAGS))
            raise ValueError(f"document {doc.id!r}: entity labels outside FUNSD's ({bad})") from None
        return {
            "id": doc.id,
            "tokens": [doc.words[i].text for i in index],
            "bboxes": [normalize_box(doc.words[i].box, w, h) for i in index],
            "ner_tags": tag_ids,
            "image": _image_cell(doc),
            **_full_fidelity(doc),
        }
    if schema == "rvl_cdip":
        if doc.label not in RVL_CDIP_CLASSES:
            raise ValueError(f"document {doc.id!r}: label {doc.label!r} is not an RVL-CDIP class")
        return {
            "id": doc.id,
            "image": _image_cell(doc),
            "label": RVL_CDIP_CLASSES.index(doc.label),
            "bboxes": [normalize_box(word.box, w, h) for word in doc.words],
            **_full_fidelity(doc),
        }
    if schema == "docvqa":
        return {
            "id": doc.id,
            "image": _image_cell(doc),
            "bboxes": [normalize_box(word.box, w, h) for word in doc.words],
            "questions": [{"question_id": q.id, "question": q.question, "answers": list(q.answers)} for q in doc.qa],
            **_full_fidelity(doc),
        }
    raise ValueError(f"unknown schema {schema!r}")


def row_to_document(row: dict[str, Any], schema: str) -> Document:
    """Rebuild the exact :class:`Document` from a row with the full-fidelity columns.

    ``row["image"]`` may be the stored ``{"bytes", "path"}`` cell or a decoded
    PIL image (as ``datasets`` returns by default).
    """
    image = _page_image(row["image"], row.get("id"))
    words = tuple(Word(t, tuple(b)) for t, b in zip(row["words"], row["word_boxes"]))
    entities = tuple(
        Entity(e["id"], e["label"], tuple(e["word_ids"]), tuple(tuple(p) for p in e["links"]))
        for e in row.get("entities") or ()
    )
    provenance = tuple(
        ShiftRecord(p["shift"], json.loads(p["params"]), p["seed"], p.get("skipped"), json.loads(p.get("counts") or "{}"))
        for p in row.get("provenance") or ()
    )
    label = None
    if schema == "rvl_cdip":
        label = row["label"] if isinstance(row["label"], str) else RVL_CDIP_CLASSES[row["label"]]
    qa = tuple(QAPair(q["question"], tuple(q["answers"]), q["question_id"]) for q in row.get("questions") or ())
    return Document(id=row["id"], image=image, words=words, entities=entities, label=label, qa=qa, provenance=provenance)


def _page_image(cell: Any, doc_id: str | None) -> PageImage:
    """The stored ``{"bytes", "path"}`` cell as-is, or a decoded PIL image / array as pixels."""
    if isinstance(cell, dict):
        return PageImage.from_bytes(cell["bytes"], name=cell.get("path") or doc_id, verify=False)
    if isinstance(cell, np.ndarray):
        return PageImage.from_array(cell)
    return PageImage.from_array(standard_pixels(cell))
